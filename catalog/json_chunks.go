package catalog

import (
	"bytes"
	"cmp"
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog/internal/chunk"
)

// Newline-delimited JSON on every core. A record is an object and a JSON
// string holds no raw newline (a control character), so in a file whose
// records hold no newline between their tokens every newline ends a
// record or lies between records: the file is cut into chunks just after
// a newline (catalog/internal/chunk, the chunk reader CSV uses, with this
// boundary), each chunk's records are tokenized by their own jsonRecords
// on a worker, and the results come back in file order.
//
// Opening infers each chunk's columns on a worker and merges them in file
// order (jsonInference.merge: the traces are merged as CSV's are, so the
// kinds and notes are those of one pass). Anything the chunks do not take
// is left to the one-pass reader, which gives the exact error: an array of
// objects, a chunk that does not parse on its own (a record cut by a
// newline inside it, a syntax error), a record longer than the record
// limit, too many keys, a failed type-override check. A file whose
// records hold a newline is opened in chunks when no chunk cut one, but is
// scanned in one pass (jsonSource.chunked).
//
// A scan cuts chunks of about one batch and builds each chunk's batches
// (converted to the exposed types) on a worker. An error inside a chunk
// (the file changed since it was opened) comes after the chunk's batches
// before it; its record number is counted from the chunk's start on the
// worker, so the chunk is parsed again with the records before it
// counted (jsonChunkOut.retry) to report the error as a one-pass scan
// does.

// jsonBoundary is NDJSON's record boundary: just past the last newline.
func jsonBoundary(b []byte) int { return bytes.LastIndexByte(b, '\n') + 1 }

// jsonInferChunkBytes is the chunk size of the opening pass: small enough
// to spread a few MB over the cores, big enough that merging columns
// costs nothing.
const jsonInferChunkBytes = 1 << 20

// openJSONChunks opens file for reading in chunks cut after newlines.
func openJSONChunks(file FileInfo, gz bool, size int, lim Limits) (*chunk.Reader, error) {
	lim = lim.WithDefaults()
	return OpenChunks(file, gz, chunk.Config{Size: size, Boundary: jsonBoundary, What: "JSON",
		TooLong: limitError("a JSON record is longer than %s (the limit)", sizeString(int64(lim.MaxRecordBytes)))}, lim)
}

// errJSONSerial: the chunk is left to the one-pass reader.
var errJSONSerial = errors.New("json: not chunked")

// jsonLines reports whether f is objects one after another (not an array).
func jsonLines(f FileInfo, gz bool, lim Limits) error {
	recs, closer, err := openJSON(f, gz, lim)
	if err != nil {
		return err
	}
	closer.Close()
	if recs.array {
		return errJSONSerial
	}
	return nil
}

// inferChunked infers f's columns in chunks on every core, and with keep
// not nil builds them (json_keep.go); any error leaves the file to
// inferSerial.
func (jf jsonFormat) inferChunked(ctx context.Context, f FileInfo, gz bool, keep memory.Allocator) (*jsonInference, error) {
	if err := jsonLines(f, gz, jf.lim); err != nil {
		return nil, err
	}
	size := jsonInferChunkBytes
	if keep != nil {
		size = jsonKeepChunkBytes
	}
	cr, err := openJSONChunks(f, gz, cmp.Or(jf.chunkBytes, size), jf.lim)
	if err != nil {
		return nil, err
	}
	workers := cmp.Or(jf.workers, chunk.Workers(f.Size))
	scratch := make([]*jsonRecords, workers)
	keeps := make([]jsonKeepScratch, workers)
	p := chunk.Start(cr, workers, func(w int, ch *chunk.Chunk) (*jsonInference, error) {
		scratch[w] = chunkRecords(scratch[w], ch.Data, ch.Start, 0, jf.lim)
		return inferJSONChunk(scratch[w], f.Read, jf.lim, keep, &keeps[w])
	}, (*jsonInference).release)
	defer p.Close()
	in := newJSONInference(f.Read, jf.lim)
	in.keep = keep
	for {
		if err := ctx.Err(); err != nil {
			in.release()
			return nil, err
		}
		next, ok, err := p.Next()
		if err != nil {
			in.release()
			return nil, err
		}
		if !ok {
			return in, nil
		}
		err = in.merge(next)
		in.multiline = in.multiline || next.multiline
		next.release()
		if err != nil {
			in.release()
			return nil, err
		}
	}
}

// inferJSONChunk infers the columns of the records recs holds (one
// chunk), and with keep not nil builds them (with the worker's scratch
// ks).
func inferJSONChunk(recs *jsonRecords, spec *ReadSpec, lim Limits, keep memory.Allocator, ks *jsonKeepScratch) (*jsonInference, error) {
	in := newJSONInference(spec, lim)
	if keep != nil {
		in.keepChunk(keep, ks, recs)
	}
	for {
		more, err := recs.next()
		if err == nil && more && recs.recEnd-recs.recStart > lim.MaxRecordBytes {
			err = errJSONSerial // the one-pass reader decides on the limit
		}
		if err == nil && more {
			err = in.record(recs)
		}
		if err != nil {
			in.release()
			return nil, err
		}
		if !more {
			if keep != nil {
				in.buildKept(recs)
			}
			return in, nil
		}
		if !in.multiline && bytes.IndexByte(recs.buf[recs.recStart:recs.recEnd], '\n') >= 0 {
			in.multiline = true
		}
	}
}

// jsonChunkOut is one scanned chunk: its batches, then the error it ended
// with (nil: none). retry holds a copy of the chunk when err is not nil,
// start its input offset.
type jsonChunkOut struct {
	batches []arrow.RecordBatch
	rows    int64
	err     error
	retry   []byte
	start   int64
}

func (o *jsonChunkOut) release() {
	for _, b := range o.batches {
		if b != nil {
			b.Release()
		}
	}
	o.batches = nil
}

// jsonChunkScanner builds one worker's chunks.
type jsonChunkScanner struct {
	bt   *jsonBatcher
	recs *jsonRecords
}

// scan builds the batches of the records of data (at input offset start;
// base records before it), at most batch rows each.
func (sc *jsonChunkScanner) scan(data []byte, start, base int64, batch int, lim Limits) *jsonChunkOut {
	sc.recs = chunkRecords(sc.recs, data, start, base, lim)
	out := &jsonChunkOut{}
	for {
		n, err := sc.bt.fill(sc.recs, batch)
		if err != nil {
			sc.bt.discard()
			out.err = err
			return out
		}
		if n > 0 {
			b, err := sc.bt.batch(n)
			if err != nil {
				out.err = err
				return out
			}
			out.batches = append(out.batches, b)
			out.rows += int64(n)
		}
		if n < batch {
			return out
		}
	}
}

// scanChunked reads the projected columns of a chunked source on every
// core.
func (s *jsonSource) scanChunked(ctx context.Context, proj []int, schema *arrow.Schema, batch int, alloc memory.Allocator) (array.RecordReader, error) {
	rowBytes := 100.0
	if s.rows > 0 && s.file.Size > 0 {
		rowBytes = float64(s.file.Size) / float64(s.rows)
		if s.gz {
			rowBytes *= 4
		}
	}
	cr, err := openJSONChunks(s.file, s.gz, cmp.Or(s.chunkBytes, chunk.BytesFor(batch, rowBytes)), s.lim)
	if err != nil {
		return nil, SourceOpenError(s.id, err)
	}
	workers := cmp.Or(s.workers, chunk.Workers(s.file.Size))
	scanners := make([]*jsonChunkScanner, workers+1) // the last one re-parses a chunk that failed
	for w := range scanners {
		scanners[w] = &jsonChunkScanner{bt: s.newBatcher(proj, schema, alloc)}
	}
	p := chunk.Start(cr, workers, func(w int, ch *chunk.Chunk) (*jsonChunkOut, error) {
		out := scanners[w].scan(ch.Data, ch.Start, 0, batch, s.lim)
		if out.err != nil {
			out.retry, out.start = bytes.Clone(ch.Data), ch.Start
		}
		return out, nil
	}, (*jsonChunkOut).release)
	var pend *jsonChunkOut // the chunk being handed out
	var rows int64         // records of the chunks before pend
	next := func() (arrow.RecordBatch, error) {
		for {
			if pend != nil && len(pend.batches) > 0 {
				b := pend.batches[0]
				pend.batches = pend.batches[1:]
				return b, nil
			}
			if pend != nil && pend.err != nil {
				// Parse the chunk again with the records before it
				// counted: its error as a one-pass scan words it.
				again := scanners[workers].scan(pend.retry, pend.start, rows, batch, s.lim)
				again.release()
				err := again.err
				if err == nil { // cannot happen: the same bytes fail the same way
					err = pend.err
				}
				return nil, corruptFileError(s.id, err)
			}
			if pend != nil {
				rows += pend.rows
			}
			out, ok, err := p.Next()
			if err != nil {
				return nil, corruptFileError(s.id, err)
			}
			if !ok {
				return nil, nil
			}
			pend = out
		}
	}
	return s.exposed(ctx, schema, next, alloc, func() {
		p.Close()
		if pend != nil {
			pend.release()
		}
		for _, sc := range scanners {
			sc.bt.release()
		}
	}), nil
}
