package chunk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime"
	"runtime/debug"
	"sync"
)

// Chunk sizes. A chunk is the unit of parallel work (and, for scans, of
// one or a few batches).
const (
	MinBytes = 64 << 10
	MaxBytes = 16 << 20
)

// ParallelMin is the input size below which a single worker is used.
const ParallelMin = 1 << 20

// Workers is the number of workers for an input of size bytes.
func Workers(size int64) int {
	if size < ParallelMin {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// BytesFor picks the chunk size that yields about batchRows rows given an
// average row size.
func BytesFor(batchRows int, rowBytes float64) int {
	if rowBytes <= 0 {
		rowBytes = 100
	}
	n := int(float64(batchRows) * rowBytes * 0.92)
	return min(max(n, MinBytes), MaxBytes)
}

// Config is what a Reader needs to know about the format.
type Config struct {
	// Size is the target chunk size.
	Size int
	// Boundary is the index after the last complete record of b (the
	// start of the next one), 0 when b holds none. Every chunk but the
	// last ends at such an index.
	Boundary func(b []byte) int
	// MaxRecord (0: none) bounds a record that does not fit a chunk: it
	// is buffered (the buffer doubled) only up to MaxRecord bytes, past
	// which reading fails with TooLong.
	MaxRecord int
	TooLong   error
	// What names the format in errors ("CSV").
	What string
}

// Chunk is a run of complete records.
type Chunk struct {
	Seq   int
	Data  []byte
	First bool    // the first chunk of the input
	Start int64   // offset of Data in the input (after a UTF-8 BOM)
	buf   *[]byte // read input: the pooled buffer Data lies in
	off   int     // mapped input: offset of Data in the mapping
}

// Reader produces chunks of complete records from an input.
type Reader struct {
	cfg     Config
	r       io.Reader
	closer  io.Closer
	closed  bool
	carry   []byte // start of an incomplete record left over from the previous read
	eof     bool
	seq     int
	emitted int64        // bytes handed out in chunks so far
	bomOK   bool         // BOM already checked
	mm      *mappedInput // non-nil: chunks are views of a memory map (mmap.go)
}

// NewReader reads chunks from r; Close closes closer (nil: nothing).
func NewReader(r io.Reader, closer io.Closer, cfg Config) *Reader {
	return &Reader{cfg: cfg, r: r, closer: closer}
}

// Mapped reports whether the chunks are views of a memory map.
func (c *Reader) Mapped() bool { return c.mm != nil }

// bufPools recycle chunk buffers across readers, by power-of-two size class.
var bufPools [48]sync.Pool

// Close releases the input (for mapped input: unmaps it, so no chunk may
// be in use any more). Idempotent.
func (c *Reader) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	var err error
	if c.mm != nil {
		err = c.mm.unmap()
	}
	if c.closer != nil {
		err = errors.Join(err, c.closer.Close())
	}
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

// Release returns a chunk's buffer for reuse, or for a mapped chunk drops
// its pages from the process (safe from any goroutine). The chunk's Data
// must not be used afterwards.
func (c *Reader) Release(ch *Chunk) {
	if ch.buf != nil {
		putBuf(ch.buf)
		ch.buf, ch.Data = nil, nil
	}
	if c.mm != nil && ch.Data != nil {
		c.mm.release(ch.off, len(ch.Data))
		ch.Data = nil
	}
}

// Next returns the next chunk, or io.EOF after the last.
func (c *Reader) Next() (*Chunk, error) {
	if c.mm != nil {
		return c.nextMapped()
	}
	if c.eof && len(c.carry) == 0 {
		return nil, io.EOF
	}
	want := max(c.cfg.Size, 2*len(c.carry))
	bp := getBuf(want)
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
		if b := c.cfg.Boundary(buf[:n]); b > 0 {
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

// maxRecordBytes bounds every record whatever the limits (CSV's field
// spans hold 31-bit offsets).
const maxRecordBytes = 1 << 30

// checkRecord fails a record of at least n bytes (one that does not fit
// the chunk read so far) beyond the record limit.
func (c *Reader) checkRecord(n int) error {
	if c.cfg.MaxRecord > 0 && n > c.cfg.MaxRecord {
		return c.cfg.TooLong
	}
	if n >= maxRecordBytes {
		return fmt.Errorf("a %s record is larger than 1 GiB", c.cfg.What)
	}
	return nil
}

func (c *Reader) emit(bp *[]byte, data []byte) *Chunk {
	c.bomOK = true // only the very start of the stream may hold a BOM
	ch := &Chunk{Seq: c.seq, Data: data, First: c.seq == 0, Start: c.emitted, buf: bp}
	if c.mm != nil {
		ch.off = c.mm.pos
	}
	c.seq++
	c.emitted += int64(len(data))
	return ch
}

// result of one chunk.
type result[R any] struct {
	val R
	err error
}

// Pipeline runs work over the chunks of a Reader on several goroutines
// and returns the results in order.
type Pipeline[R any] struct {
	cr      *Reader
	work    func(w int, ch *Chunk) (R, error)
	drop    func(R)
	done    chan struct{}
	order   chan chan result[R]
	wg      sync.WaitGroup
	stopped bool
}

// Start starts workers goroutines (GOMAXPROCS when <= 0) plus a reader.
// work gets the worker index (for per-worker scratch) and must not keep
// ch.Data after returning; drop releases a result that will not be
// consumed (after Close).
func Start[R any](cr *Reader, workers int, work func(w int, ch *Chunk) (R, error), drop func(R)) *Pipeline[R] {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	inflight := workers + 2
	p := &Pipeline[R]{
		cr:    cr,
		work:  work,
		drop:  drop,
		done:  make(chan struct{}),
		order: make(chan chan result[R], inflight),
	}
	type job struct {
		ch  *Chunk
		out chan result[R]
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
				var r result[R]
				select {
				case <-p.done:
					r.err = errStopped
				default:
					r.val, r.err = p.safeWork(w, j.ch)
				}
				cr.Release(j.ch)
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
			out := make(chan result[R], 1)
			if err != nil {
				out <- result[R]{err: err}
				select {
				case p.order <- out:
				case <-p.done:
				}
				return
			}
			select {
			case p.order <- out:
			case <-p.done:
				cr.Release(ch)
				return
			}
			select {
			case jobs <- job{ch, out}:
			case <-p.done:
				cr.Release(ch)
				out <- result[R]{err: errStopped}
				return
			}
		}
	})
	return p
}

var errStopped = errors.New("pipeline stopped")

func (p *Pipeline[R]) safeWork(w int, ch *Chunk) (r R, err error) {
	defer func() {
		if v := recover(); v != nil {
			if ferr := p.cr.faultError(v); ferr != nil {
				err = ferr
				return
			}
			err = fmt.Errorf("panic while parsing %s: %v", p.cr.cfg.What, v)
		}
	}()
	return p.work(w, ch)
}

// safeNext is Next with a fault on the memory map (the file shrank under
// it) turned into an error; other panics go on.
func (c *Reader) safeNext() (ch *Chunk, err error) {
	if c.mm == nil {
		return c.Next()
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
	return c.Next()
}

// Next returns the next result in input order; ok is false at the end.
func (p *Pipeline[R]) Next() (val R, ok bool, err error) {
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

// Close stops the pipeline, releases unconsumed results, waits for every
// goroutine and closes the input. Idempotent.
func (p *Pipeline[R]) Close() {
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
