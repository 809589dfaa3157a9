package chunk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"unsafe"
)

// Chunks of a memory-mapped file. For a plain regular file the chunk
// reader maps the whole file read-only and hands out chunks that are
// sub-slices of the mapping: no read() copy, no chunk buffers. Each window
// the reader is about to scan for record boundaries is prefaulted in one
// call, and a chunk's pages leave the process (madvise MADV_DONTNEED) as
// soon as its worker is done, so only the chunks in flight are resident.
// The chunk boundaries are exactly those of the read path (nextMapped
// replays Reader.Next's arithmetic), so both give the same batches.
//
// A file truncated while mapped makes the next access to a page past its
// new end fault (SIGBUS): the goroutines touching the mapping run with
// debug.SetPanicOnFault, and the pipeline turns the panic into an error
// wrapping ErrFileChanged. A file that grew or was rewritten is caught by
// comparing its size and modification time with those at open when the
// reader reaches the end.

// ErrFileChanged: the file changed while it was being read (catalog's
// ErrFileChanged is this error).
var ErrFileChanged = errors.New("the file changed while it was being read")

// Mapping switches (tests and benchmarks change them).
var (
	// mmapEnabled maps plain regular files where the OS allows it.
	mmapEnabled = true
	// mmapMinBytes is the size below which files are read, not mapped (a
	// single small read costs less than setting up a mapping).
	mmapMinBytes int64 = 1 << 20
	// mmapPrefault is how a window is brought in before it is scanned.
	mmapPrefault = PrefaultPopulate
)

// Mapping is the state of the mapping switches.
type Mapping struct {
	Enabled  bool
	MinBytes int64
	Prefault int
}

// SetMapping sets the mapping switches (tests and benchmarks) and returns
// what they were. Not safe while a reader is being opened.
func SetMapping(m Mapping) Mapping {
	old := Mapping{mmapEnabled, mmapMinBytes, mmapPrefault}
	mmapEnabled, mmapMinBytes, mmapPrefault = m.Enabled, m.MinBytes, m.Prefault
	return old
}

// Prefault modes. Measured on the 473 MB benchmark file (2 cores, Linux
// 6.18, ext4), the reader's share of a load: with the file in the page
// cache, populating costs about what faulting costs (fault-around maps
// 64 KiB per fault; 62-66 ms per pass either way, read() 77 ms); with
// the file not cached, one MADV_POPULATE_READ per window reads it in large
// requests (~180-220 ms) where faults read around each fault (160-580 ms).
// MADV_WILLNEED is worse than plain faults in both cases (70 ms cached,
// 420-670 ms not cached: its asynchronous read-ahead races the faults), so
// kernels without MADV_POPULATE_READ (before 5.14) just fault.
const (
	PrefaultNone     = iota // page faults as the scan goes
	PrefaultPopulate        // madvise(MADV_POPULATE_READ), plain faults where unsupported
	PrefaultWillNeed        // madvise(MADV_WILLNEED): measured for comparison only
)

// mappedInput is the state of a chunk reader over a memory map.
type mappedInput struct {
	f        *os.File
	st       os.FileInfo // at open
	data     []byte      // the mapping: the whole file
	pos      int         // start of the next chunk
	filled   int         // end of the bytes the reader has taken in so far
	prefault int
}

// Map returns a chunk reader over a read-only mapping of f (whose Stat is
// st), or nil when f is not worth or not able to be mapped (the caller
// reads it). Close closes f.
func Map(f *os.File, st os.FileInfo, cfg Config) *Reader {
	if !mmapEnabled || !st.Mode().IsRegular() || st.Size() < max(mmapMinBytes, 1) || int64(int(st.Size())) != st.Size() {
		return nil
	}
	data, err := mapFile(f, st.Size())
	if err != nil {
		return nil
	}
	mm := &mappedInput{f: f, st: st, data: data, prefault: mmapPrefault}
	return &Reader{cfg: cfg, closer: f, mm: mm}
}

// nextMapped is next over a mapping. The reader's window [pos, filled)
// plays the part of the read path's buffer (its carry and what read()
// added), with the same sizes, so the chunks are the same.
func (c *Reader) nextMapped() (*Chunk, error) {
	m := c.mm
	if c.eof && m.filled == m.pos {
		return nil, c.mappedEOF()
	}
	n := m.filled - m.pos // the carry
	want := max(c.cfg.Size, 2*n)
	for {
		if !c.eof && n < want {
			// "Read" up to want bytes; a short read is the end of the input.
			end := m.pos + want
			if end > len(m.data) {
				end = len(m.data)
				c.eof = true
			}
			if err := m.bringIn(m.filled, end); err != nil {
				return nil, err
			}
			m.filled = end
			n = end - m.pos
		}
		if !c.bomOK && (n >= 3 || c.eof) {
			c.bomOK = true
			if bytes.HasPrefix(m.data[m.pos:m.filled], utf8BOM) {
				m.pos += 3
				n -= 3
				continue
			}
		}
		if c.eof {
			if n == 0 {
				return nil, c.mappedEOF()
			}
			return m.take(c, n), nil
		}
		if b := c.cfg.Boundary(m.data[m.pos:m.filled]); b > 0 {
			return m.take(c, b), nil
		}
		// One record longer than the window: widen it.
		if err := c.checkRecord(n); err != nil {
			return nil, err
		}
		want *= 2
	}
}

// take emits the next n bytes as a chunk.
func (m *mappedInput) take(c *Reader, n int) *Chunk {
	ch := c.emit(nil, m.data[m.pos:m.pos+n])
	m.pos += n
	return ch
}

// mappedEOF is io.EOF, or ErrFileChanged when the file is no longer the
// one that was mapped (the mapping does not see it grow).
func (c *Reader) mappedEOF() error {
	st, err := c.mm.f.Stat()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrFileChanged, err)
	}
	if st.Size() != c.mm.st.Size() || !st.ModTime().Equal(c.mm.st.ModTime()) {
		return fmt.Errorf("%w: size %d, now %d", ErrFileChanged, c.mm.st.Size(), st.Size())
	}
	return io.EOF
}

// bringIn prefaults [lo, hi) of the mapping before it is scanned. A range
// the file no longer covers is ErrFileChanged.
func (m *mappedInput) bringIn(lo, hi int) error {
	if m.prefault == PrefaultNone || hi <= lo {
		return nil
	}
	lo, hi = m.pageRange(lo, hi)
	err := adviseRange(m.data, lo, hi, m.prefault)
	if errors.Is(err, errAdviceUnsupported) {
		m.prefault = PrefaultNone // kernel before 5.14: faults do as well
		return nil
	}
	if errors.Is(err, errRangeGone) {
		return fmt.Errorf("%w: %w", ErrFileChanged, err)
	}
	return nil // advice only: the scan faults the pages in anyway
}

// release drops the pages of [off, off+n) from the process, pages shared
// with the neighbouring chunks included (a read-only private mapping of a
// file just faults them in again). Safe from any goroutine.
func (m *mappedInput) release(off, n int) {
	lo, hi := m.pageRange(off, off+n)
	_ = adviseRange(m.data, lo, hi, adviceDontNeed)
}

// pageRange widens [lo, hi) to whole pages of the mapping.
func (m *mappedInput) pageRange(lo, hi int) (int, int) {
	ps := pageSize
	return lo &^ (ps - 1), min((hi+ps-1)&^(ps-1), (len(m.data)+ps-1)&^(ps-1))
}

var pageSize = os.Getpagesize()

// unmap releases the mapping; no chunk may be in use any more.
func (m *mappedInput) unmap() error {
	if m.data == nil {
		return nil
	}
	err := unmapFile(m.data)
	m.data = nil
	return err
}

// faultError is the error for a recovered panic v when it is a memory
// fault inside c's mapping (the file shrank under it), else nil.
func (c *Reader) faultError(v any) error {
	if c.mm == nil || c.mm.data == nil {
		return nil
	}
	re, ok := v.(runtime.Error)
	if !ok {
		return nil
	}
	fa, ok := re.(interface{ Addr() uintptr })
	if !ok {
		return nil
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(c.mm.data)))
	_, end := c.mm.pageRange(0, len(c.mm.data))
	addr := fa.Addr()
	if addr < base || addr >= base+uintptr(end) {
		return nil
	}
	return &MapFault{Off: int64(addr - base)}
}

// MapFault is a memory fault on a mapped file: the page at Off is past
// the file's end now. It is ErrFileChanged.
type MapFault struct {
	Off int64
}

func (e *MapFault) Error() string {
	return fmt.Sprintf("%v: reading byte %d faulted (the file was truncated)", ErrFileChanged, e.Off)
}

func (e *MapFault) Unwrap() error { return ErrFileChanged }
