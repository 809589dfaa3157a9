package csv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/quarrydb/quarry/catalog"
)

// This file cuts a CSV stream into chunks of complete records and runs a
// function over them on several goroutines, delivering the results in
// file order. Reading (and gzip decompression, which is sequential) happens
// on one goroutine; the quote-parity scan that finds record boundaries runs
// at memory speed there (bytes.IndexByte), everything else in the workers.
//
// Plain regular files are not read at all where the OS allows it: their
// chunks are views of a read-only memory map (csv_mmap.go), so there is no
// copy and no chunk buffer; gzip input, pipes and small files are read
// into pooled buffers.

// Chunk sizes. A chunk is the unit of parallel work and of one batch.
const (
	minChunkBytes     = 64 << 10
	maxChunkBytes     = 16 << 20
	defaultChunkBytes = 1 << 20
)

// csvChunk is a run of complete records.
type csvChunk struct {
	seq   int
	data  []byte
	first bool    // holds the header record (the first chunk of the input)
	buf   *[]byte // read input: the pooled buffer data lies in
	off   int     // mapped input: offset of data in the mapping
}

// chunkReader produces chunks of complete records from an input stream.
type chunkReader struct {
	r      io.Reader
	closer io.Closer
	size   int    // target chunk size
	carry  []byte // start of an incomplete record left over from the previous read
	eof    bool
	seq    int
	bomOK  bool         // BOM already checked
	mm     *mappedInput // non-nil: chunks are views of a memory map (csv_mmap.go)
	// maxRecord is Limits.MaxRecordBytes: a record that does not fit a
	// chunk is only buffered (the buffer doubled) up to it.
	maxRecord int
}

// openChunks opens a CSV file (confined: FileInfo.Open; decompressed if
// gz, compress.go) for chunked reading; reading fails with a resource_exhausted
// error past lim.
func openChunks(file catalog.FileInfo, gz bool, size int, lim catalog.Limits) (*chunkReader, error) {
	lim = lim.WithDefaults()
	f, err := file.Open()
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil {
		// Small files: one buffer just big enough (reading hits EOF at once).
		limit := st.Size() + 1
		if gz {
			limit = 4*st.Size() + minChunkBytes
		}
		size = int(min(int64(size), max(limit, 4<<10)))
		if !gz {
			if cr := openMapped(f, st, size); cr != nil {
				cr.maxRecord = lim.MaxRecordBytes
				return cr, nil
			}
		}
	}
	cr := &chunkReader{r: f, closer: f, size: size, maxRecord: lim.MaxRecordBytes}
	if gz {
		zr, zc, err := catalog.Decompressing(file, f, lim)
		if err != nil {
			f.Close()
			return nil, err
		}
		cr.r = zr
		cr.closer = catalog.MultiCloser{zc, f}
	}
	return cr, nil
}

// bufPools recycle chunk buffers across readers, by power-of-two size class.
var bufPools [48]sync.Pool

// Close releases the input (for mapped input: unmaps it, so no chunk may
// be in use any more). Idempotent.
func (c *chunkReader) Close() error {
	if c.closer == nil {
		return nil
	}
	var err error
	if c.mm != nil {
		err = c.mm.unmap()
	}
	err = errors.Join(err, c.closer.Close())
	c.closer = nil
	return err
}

// getBuf returns a buffer of at least n bytes (its full capacity as length).
func getBuf(n int) *[]byte {
	class := bits.Len(uint(max(n, 4096) - 1))
	if v := bufPools[class].Get(); v != nil {
		b := v.(*[]byte)
		*b = (*b)[:cap(*b)]
		return b
	}
	b := make([]byte, 1<<class)
	return &b
}

// putBuf recycles a buffer from getBuf (safe from any goroutine).
func putBuf(b *[]byte) {
	if c := cap(*b); c >= 4096 && c&(c-1) == 0 {
		bufPools[bits.Len(uint(c-1))].Put(b)
	}
}

func (c *chunkReader) getBuf(n int) *[]byte { return getBuf(n) }

// putBuf returns a chunk's buffer for reuse, or for a mapped chunk drops
// its pages from the process (safe from any goroutine).
func (c *chunkReader) putBuf(ch *csvChunk) {
	if ch.buf != nil {
		putBuf(ch.buf)
		ch.buf, ch.data = nil, nil
	}
	if c.mm != nil && ch.data != nil {
		c.mm.release(ch.off, len(ch.data))
		ch.data = nil
	}
}

// next returns the next chunk, or io.EOF after the last.
func (c *chunkReader) next() (*csvChunk, error) {
	if c.mm != nil {
		return c.nextMapped()
	}
	if c.eof && len(c.carry) == 0 {
		return nil, io.EOF
	}
	want := max(c.size, 2*len(c.carry))
	bp := c.getBuf(want)
	buf := *bp
	n := copy(buf, c.carry)
	c.carry = c.carry[:0]
	for {
		if !c.eof && n < want {
			m, err := io.ReadFull(c.r, buf[n:want])
			n += m
			switch {
			case err == io.EOF || err == io.ErrUnexpectedEOF:
				c.eof = true
			case err != nil:
				putBuf(bp)
				return nil, err
			}
		}
		if !c.bomOK && (n >= 3 || c.eof) {
			c.bomOK = true
			if bytes.HasPrefix(buf[:n], utf8BOM) {
				copy(buf, buf[3:n])
				n -= 3
				continue
			}
		}
		if c.eof {
			if n == 0 {
				putBuf(bp)
				return nil, io.EOF
			}
			return c.emit(bp, buf[:n]), nil
		}
		if b := lastBoundary(buf[:n]); b > 0 {
			c.carry = append(c.carry, buf[b:n]...)
			return c.emit(bp, buf[:b]), nil
		}
		// One record longer than the buffer: grow it.
		if err := c.checkRecord(n); err != nil {
			putBuf(bp)
			return nil, err
		}
		want *= 2
		nbp := getBuf(want)
		copy(*nbp, buf[:n])
		putBuf(bp)
		bp, buf = nbp, *nbp
	}
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// checkRecord fails a record of at least n bytes (one that does not fit
// the chunk read so far) beyond the record limit.
func (c *chunkReader) checkRecord(n int) error {
	if c.maxRecord > 0 && n > c.maxRecord {
		return catalog.RecordTooLong(c.maxRecord)
	}
	if n >= spanQuoted/2 {
		return errors.New("a CSV record is larger than 1 GiB")
	}
	return nil
}

func (c *chunkReader) emit(bp *[]byte, data []byte) *csvChunk {
	c.bomOK = true // only the very start of the stream may hold a BOM
	ch := &csvChunk{seq: c.seq, data: data, first: c.seq == 0, buf: bp}
	if c.mm != nil {
		ch.off = c.mm.pos
	}
	c.seq++
	return ch
}

// chunkBytesFor picks the chunk size that yields about batchRows rows given
// an average row size.
func chunkBytesFor(batchRows int, rowBytes float64) int {
	if rowBytes <= 0 {
		rowBytes = 100
	}
	n := int(float64(batchRows) * rowBytes * 0.92)
	return min(max(n, minChunkBytes), maxChunkBytes)
}

// result of one chunk.
type chunkResult[R any] struct {
	val R
	err error
}

// pipeline runs work over the chunks of a chunkReader on several goroutines
// and returns the results in order.
type pipeline[R any] struct {
	cr      *chunkReader
	work    func(w int, ch *csvChunk) (R, error)
	drop    func(R)
	done    chan struct{}
	order   chan chan chunkResult[R]
	wg      sync.WaitGroup
	stopped bool
}

// startPipeline starts workers goroutines (at least 1) plus a reader.
// work gets the worker index (for per-worker scratch) and must not keep
// ch.data after returning; drop releases a result that will not be
// consumed (after close).
func startPipeline[R any](cr *chunkReader, workers int, work func(w int, ch *csvChunk) (R, error), drop func(R)) *pipeline[R] {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	inflight := workers + 2
	p := &pipeline[R]{
		cr:    cr,
		work:  work,
		drop:  drop,
		done:  make(chan struct{}),
		order: make(chan chan chunkResult[R], inflight),
	}
	type job struct {
		ch  *csvChunk
		out chan chunkResult[R]
	}
	jobs := make(chan job, workers)
	// Goroutines touching a memory map turn a fault (the file was
	// truncated under it) into a panic that becomes an error.
	mapped := cr.mm != nil
	for w := range workers {
		p.wg.Go(func() {
			if mapped {
				defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			}
			for j := range jobs {
				var r chunkResult[R]
				select {
				case <-p.done:
					r.err = errStopped
				default:
					r.val, r.err = p.safeWork(w, j.ch)
				}
				cr.putBuf(j.ch)
				j.out <- r
			}
		})
	}
	p.wg.Go(func() {
		defer close(jobs)
		defer close(p.order)
		if mapped {
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		}
		for {
			ch, err := cr.safeNext()
			if err == io.EOF {
				return
			}
			out := make(chan chunkResult[R], 1)
			if err != nil {
				out <- chunkResult[R]{err: err}
				select {
				case p.order <- out:
				case <-p.done:
				}
				return
			}
			select {
			case p.order <- out:
			case <-p.done:
				cr.putBuf(ch)
				return
			}
			select {
			case jobs <- job{ch, out}:
			case <-p.done:
				cr.putBuf(ch)
				out <- chunkResult[R]{err: errStopped}
				return
			}
		}
	})
	return p
}

var errStopped = errors.New("pipeline stopped")

func (p *pipeline[R]) safeWork(w int, ch *csvChunk) (r R, err error) {
	defer func() {
		if v := recover(); v != nil {
			if ferr := p.cr.faultError(v); ferr != nil {
				err = ferr
				return
			}
			err = fmt.Errorf("panic while parsing CSV: %v", v)
		}
	}()
	return p.work(w, ch)
}

// safeNext is next with a fault on the memory map (the file shrank under
// it) turned into an error; other panics go on.
func (c *chunkReader) safeNext() (ch *csvChunk, err error) {
	if c.mm == nil {
		return c.next()
	}
	defer func() {
		if v := recover(); v != nil {
			ferr := c.faultError(v)
			if ferr == nil {
				panic(v)
			}
			ch, err = nil, ferr
		}
	}()
	return c.next()
}

// next returns the next result in file order; ok is false at the end.
func (p *pipeline[R]) next() (val R, ok bool, err error) {
	out, more := <-p.order
	if !more {
		return val, false, nil
	}
	r := <-out
	if r.err != nil {
		return val, false, r.err
	}
	return r.val, true, nil
}

// close stops the pipeline, releases unconsumed results, waits for every
// goroutine and closes the input. Idempotent.
func (p *pipeline[R]) close() {
	if p.stopped {
		return
	}
	p.stopped = true
	close(p.done)
	for out := range p.order {
		r := <-out
		if r.err == nil && p.drop != nil {
			p.drop(r.val)
		}
	}
	p.wg.Wait()
	_ = p.cr.Close()
}
