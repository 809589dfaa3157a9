package catalog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// Arrow IPC streams (".arrows", or any Arrow file without the ARROW1
// magic bytes): the schema message, then dictionary and record batch
// messages, optionally closed by an end-of-stream marker; there is no
// footer. checkArrowStream walks every message's prefix and metadata
// (never a body, except the size prefixes of compressed buffers) with
// the checks of the file format (checkFBSchema, checkIPCMessage), so the
// exact row count is known without reading the bodies; a query reads the
// stream from the start with arrow-go's ipc.Reader through the same
// capped allocator.

// ipcReader reads the record batches of an Arrow file or stream in order.
type ipcReader interface {
	Schema() *arrow.Schema
	// batch returns record batch i (i = 0, 1, 2, … in turn); the caller
	// releases it.
	batch(i int) (arrow.RecordBatch, error)
	Close()
}

// ipcFile reads the file format (random access through the footer).
type ipcFile struct{ *ipc.FileReader }

func (f ipcFile) batch(i int) (arrow.RecordBatch, error) { return f.RecordBatchAt(i) }
func (f ipcFile) Close()                                 { f.FileReader.Close() }

func openIPCFile(fh *os.File, opts []ipc.Option, batches int) (ipcReader, error) {
	fr, err := ipc.NewFileReader(fh, opts...)
	if err != nil {
		return nil, fmt.Errorf("not a readable Arrow file: %v", err)
	}
	if fr.NumRecords() != batches {
		fr.Close()
		return nil, ipcErrorf("the reader sees %d batches, the footer %d", fr.NumRecords(), batches)
	}
	return ipcFile{fr}, nil
}

// ipcStream reads the stream format, batch after batch.
type ipcStream struct{ r *ipc.Reader }

func (s ipcStream) Schema() *arrow.Schema { return s.r.Schema() }
func (s ipcStream) Close()                { s.r.Release() }

func (s ipcStream) batch(i int) (arrow.RecordBatch, error) {
	if !s.r.Next() {
		if err := s.r.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the stream ends before record batch %d", i)
	}
	rec := s.r.RecordBatch()
	rec.Retain()
	return rec, nil
}

func openIPCStream(fh *os.File, opts []ipc.Option) (ipcReader, error) {
	r, err := ipc.NewReaderFromMessageReader(ipc.NewMessageReader(io.NewSectionReader(fh, 0, 1<<62), opts...), opts...)
	if err != nil {
		return nil, fmt.Errorf("not a readable Arrow stream: %v", err)
	}
	return ipcStream{r}, nil
}

// startsWithMagic reports whether the file starts with ARROW1 (the file
// format).
func startsWithMagic(r io.ReaderAt) bool {
	var head [6]byte
	_, err := r.ReadAt(head[:], 0)
	return err == nil && bytes.Equal(head[:], arrowMagic)
}

// ipcContinuation opens every message of a stream since Arrow 0.15.
const ipcContinuation = 0xFFFFFFFF

// checkArrowStream validates the Arrow IPC stream of size bytes read
// through r: every message's framing against the file size, its metadata
// as the file format's, the first one a schema and every later one a
// dictionary or record batch.
func checkArrowStream(r io.ReaderAt, size int64, lim Limits) (ipcLayout, error) {
	lay := ipcLayout{stream: true}
	var head [8]byte
	if size < 8 {
		return lay, ipcErrorf("the file is too short for an Arrow stream")
	}
	if _, err := r.ReadAt(head[:4], 0); err == nil && bytes.HasPrefix(head[:4], feather1Magic) {
		return lay, ipcErrorf("Feather v1 files are not supported; re-save it as Feather v2 (Arrow IPC)")
	}
	schema := false
	for off := int64(0); off < size; {
		n := min(8, size-off)
		if n < 4 {
			return lay, ipcErrorf("the stream ends inside a message prefix at byte %d", off)
		}
		if _, err := r.ReadAt(head[:n], off); err != nil {
			return lay, fmt.Errorf("cannot read the stream: %w", err)
		}
		prefix, meta := int64(4), int64(binary.LittleEndian.Uint32(head[:4]))
		if meta == ipcContinuation {
			if n < 8 {
				return lay, ipcErrorf("the stream ends inside a message prefix at byte %d", off)
			}
			prefix, meta = 8, int64(binary.LittleEndian.Uint32(head[4:8]))
		}
		if meta == 0 { // end of stream
			break
		}
		switch {
		case meta > int64(lim.MaxMetadataBytes):
			return lay, limitError("an Arrow message's metadata is %s, more than the limit of %s", sizeString(meta), sizeString(int64(lim.MaxMetadataBytes)))
		case meta > size-off-prefix:
			return lay, ipcErrorf("a message at byte %d claims %d bytes of metadata, the file holds %d more", off, meta, size-off-prefix)
		}
		fb := make([]byte, meta)
		if _, err := r.ReadAt(fb, off+prefix); err != nil {
			return lay, fmt.Errorf("cannot read a message: %w", err)
		}
		ht, body, err := streamMessageHead(fb)
		if err != nil {
			return lay, fmt.Errorf("message at byte %d: %w", off, err)
		}
		bodyOff := off + prefix + meta
		if body < 0 || body > size-bodyOff {
			return lay, ipcErrorf("a message at byte %d claims a body of %d bytes, the file holds %d more", off, body, size-bodyOff)
		}
		switch {
		case !schema && ht != 1:
			return lay, ipcErrorf("the stream does not start with a schema")
		case !schema:
			if err := checkStreamSchema(fb, lim); err != nil {
				return lay, err
			}
			schema = true
		case ht == 2 || ht == 3:
			if err := checkIPCMessage(r, fb, bodyOff, body, ht == 2, lim, &lay); err != nil {
				return lay, fmt.Errorf("message at byte %d: %w", off, err)
			}
		default:
			return lay, ipcErrorf("a message of type %d inside the stream", ht)
		}
		lay.metadata += meta
		off = bodyOff + body
	}
	if !schema {
		return lay, ipcErrorf("the stream has no schema")
	}
	return lay, nil
}

// streamMessageHead returns the header type and body length of a message.
func streamMessageHead(fb []byte) (uint8, int64, error) {
	v := &fbVerifier{b: fb, budget: 64}
	msg, err := v.root()
	if err != nil {
		return 0, 0, err
	}
	if err := msg.scalars(0, 2, 1, 1, 3, 8); err != nil {
		return 0, 0, err
	}
	return msg.u8(1), msg.i64(3), nil
}

// checkStreamSchema checks a Schema message.
func checkStreamSchema(fb []byte, lim Limits) error {
	v := &fbVerifier{b: fb, budget: 4*lim.MaxColumns + 1024}
	msg, err := v.root()
	if err != nil {
		return err
	}
	if err := msg.keyValues(4); err != nil {
		return err
	}
	sc, ok, err := msg.table(2)
	if err != nil {
		return err
	}
	if !ok {
		return errors.Join(errIPC, errors.New("the schema message has no schema"))
	}
	return checkFBSchema(sc, lim)
}
