package catalog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/qerr"
)

// KindArrow is the kind of datasets read from Arrow IPC (Feather v2) files.
const KindArrow Kind = "arrow"

// arrowFormat implements Format for Arrow IPC files.
type arrowFormat struct{ lim Limits }

// NewArrowFormat returns the Format for Arrow IPC files in the
// random-access ("file") format: ".arrow", ".feather" (Feather v2 is this
// format) and ".ipc", any case. Each file is one dataset whose id is the
// path without extension.
//
// Nothing in a file is trusted: before arrow-go's ipc reader sees it,
// checkArrowFile (arrowipc_check.go) validates the footer, the schema and
// the metadata of every dictionary and record batch against the file size
// and lim (MaxMetadataBytes for the footer and each message, MaxColumns
// for the fields, nested ones included, the compression ratio and
// MaxDecompressedBytes for compressed bodies); the reader then allocates
// through a capped allocator that refuses more than the pre-pass allowed,
// and every loaded batch is checked against its buffers (checkIPCData)
// before its values are read. A file that fails any of this is a
// diagnostic when cataloged and an error naming the dataset when scanned;
// it never panics the server. Files are read with ReadAt, not mapped:
// batches stay valid after the file is closed.
//
// Opening reads the footer and the metadata of every batch (not the
// bodies, except dictionaries): the exact row count is the sum of the
// batches' lengths. Column types are mapped as for Parquet (exposedType);
// dictionary columns are decoded; union, view and run-end encoded columns
// are not supported (a diagnostic).
func NewArrowFormat(lim Limits) Format { return arrowFormat{lim: lim.WithDefaults()} }

// Kind implements Format.
func (arrowFormat) Kind() Kind { return KindArrow }

// Match implements Format.
func (arrowFormat) Match(name string) bool {
	return hasExt(name, ".arrow") || hasExt(name, ".feather") || hasExt(name, ".ipc") || hasExt(name, ".arrows")
}

// errIPCAlloc is the panic of a capped allocator asked for too much.
var errIPCAlloc = errors.New("the Arrow reader asked for more memory than the file's checked sizes allow")

// cappedAllocator refuses (panics with errIPCAlloc) allocations that
// would bring its outstanding bytes beyond limit. It remembers its live
// allocations by call (begin): arrow-go's reader does not release what it
// allocated when it fails half-way through a batch, so abort frees what
// the failed call left behind (nothing else holds it).
type cappedAllocator struct {
	mem   memory.Allocator
	limit int64
	mu    sync.Mutex
	used  int64
	gen   int
	live  map[*byte]ipcAlloc
	// aborted: abort freed buffers that arrow-go's objects (a stream
	// reader's current batch and dictionaries) still point to; their
	// later Free is ignored (no allocation is made after an abort).
	aborted bool
}

// ipcAlloc is one live allocation and the call that made it.
type ipcAlloc struct {
	gen int
	b   []byte
}

func newCappedAllocator(mem memory.Allocator, limit int64) *cappedAllocator {
	return &cappedAllocator{mem: mem, limit: limit, live: map[*byte]ipcAlloc{}}
}

// begin starts a call: what it allocates is what abort frees.
func (a *cappedAllocator) begin() {
	a.mu.Lock()
	a.gen++
	a.mu.Unlock()
}

// abort frees what the current call allocated and did not free.
func (a *cappedAllocator) abort() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.aborted = true
	for k, v := range a.live {
		if v.gen == a.gen {
			delete(a.live, k)
			a.used -= int64(len(v.b))
			a.mem.Free(v.b)
		}
	}
}

func (a *cappedAllocator) reserve(n int64) {
	if a.used+n > a.limit {
		panic(errIPCAlloc)
	}
	a.used += n
}

func (a *cappedAllocator) track(b []byte) []byte {
	if len(b) > 0 {
		a.live[&b[0]] = ipcAlloc{gen: a.gen, b: b}
	}
	return b
}

func (a *cappedAllocator) untrack(b []byte) {
	if len(b) > 0 {
		delete(a.live, &b[0])
	}
	a.used -= int64(len(b))
}

func (a *cappedAllocator) Allocate(size int) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reserve(int64(size))
	return a.track(a.mem.Allocate(size))
}

func (a *cappedAllocator) Reallocate(size int, b []byte) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reserve(int64(size))
	a.untrack(b)
	return a.track(a.mem.Reallocate(size, b))
}

func (a *cappedAllocator) Free(b []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(b) > 0 && a.aborted {
		if _, ok := a.live[&b[0]]; !ok {
			return // freed by abort
		}
	}
	a.untrack(b)
	a.mem.Free(b)
}

// openArrow opens f (confined), validates it (the file format when it
// starts with ARROW1, the stream format otherwise: arrowipc_stream.go) and
// opens arrow-go's reader on it with an allocator capped to what the
// validation allows. The caller closes fh after the reader.
func openArrow(f FileInfo, lim Limits, mem memory.Allocator) (fh *os.File, fr ipcReader, capped *cappedAllocator, lay ipcLayout, err error) {
	fh, err = f.Open()
	if err != nil {
		return nil, nil, nil, lay, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = panicError("the Arrow file does not decode", p)
		}
		if err != nil {
			if fr != nil {
				fr.Close()
				fr = nil
			}
			if capped != nil {
				capped.abort()
				capped = nil
			}
			fh.Close()
		}
	}()
	st, err := fh.Stat()
	if err != nil {
		return nil, nil, nil, lay, err
	}
	stream := !startsWithMagic(fh)
	if stream {
		lay, err = checkArrowStream(fh, st.Size(), lim)
	} else {
		lay, err = checkArrowFile(fh, st.Size(), lim)
	}
	if err != nil {
		return nil, nil, nil, lay, err
	}
	lay.size = st.Size()
	capped = newCappedAllocator(mem, lay.bodies+lay.inflated+lay.metadata+1<<20)
	capped.begin()
	opts := ipcOptions(capped, lim, st.Size())
	if stream {
		fr, err = openIPCStream(fh, opts)
	} else {
		fr, err = openIPCFile(fh, opts, len(lay.batches))
	}
	if err != nil {
		return nil, nil, nil, lay, err
	}
	for _, fd := range fr.Schema().Fields() {
		if err := ipcSupported(fd.Type, 0); err != nil {
			return nil, nil, nil, lay, qerr.Unsupported(qerr.CodeUnsupportedFormat, "column %q: %v", fd.Name, err)
		}
	}
	return fh, fr, capped, lay, nil
}

// ipcOptions are the options of arrow-go's readers of a validated file
// of size bytes: the capped allocator and lim's metadata limit.
func ipcOptions(capped *cappedAllocator, lim Limits, size int64) []ipc.Option {
	return []ipc.Option{ipc.WithAllocator(capped), ipc.WithMetadataSizeLimit(int64(lim.MaxMetadataBytes)), ipc.WithBodySizeLimit(size)}
}

// panicError turns a recovered panic into an error: a capped allocation
// is a limit error, anything else what says what failed.
func panicError(what string, p any) error {
	if e, ok := p.(error); ok && errors.Is(e, errIPCAlloc) {
		return limitError("%v", e)
	}
	return fmt.Errorf("%s (%v)", what, p)
}

// ipcSupported reports whether the loaded arrays of dt can be checked by
// checkIPCData (and so read).
func ipcSupported(dt arrow.DataType, depth int) error {
	if depth > ipcMaxDepth {
		return fmt.Errorf("types nest deeper than %d levels", ipcMaxDepth)
	}
	switch t := dt.(type) {
	case arrow.ExtensionType:
		return ipcSupported(t.StorageType(), depth+1)
	case *arrow.DictionaryType:
		if !arrow.IsInteger(t.IndexType.ID()) {
			return fmt.Errorf("dictionary index type %s is not an integer", t.IndexType)
		}
		return ipcSupported(t.ValueType, depth+1)
	case arrow.NestedType:
		switch t.ID() {
		case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP, arrow.STRUCT:
			for _, c := range t.Fields() {
				if err := ipcSupported(c.Type, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
	case arrow.FixedWidthDataType:
		return nil
	}
	switch dt.ID() {
	case arrow.NULL, arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY, arrow.STRING_VIEW, arrow.BINARY_VIEW:
		return nil
	}
	return fmt.Errorf("%s columns are not supported in Arrow files", dt)
}

// checkIPCData checks a loaded array against its buffers: lengths and
// null counts in range, every buffer long enough for the length, offsets
// non-decreasing and within the values, dictionary indices within the
// dictionary; recursively for children and dictionaries.
func checkIPCData(d arrow.ArrayData, depth int) error {
	if depth > ipcMaxDepth {
		return fmt.Errorf("arrays nest deeper than %d levels", ipcMaxDepth)
	}
	n, off := int64(d.Len()), int64(d.Offset())
	if n < 0 || off < 0 || d.NullN() < 0 || int64(d.NullN()) > n || n > 1<<48 {
		return fmt.Errorf("an array claims %d values (%d nulls) at offset %d", n, d.NullN(), off)
	}
	end := n + off
	bufs := d.Buffers()
	need := func(i int, bytes int64) error {
		if bytes == 0 {
			return nil
		}
		if i >= len(bufs) || bufs[i] == nil || int64(bufs[i].Len()) < bytes {
			return fmt.Errorf("a %s array of %d values has a buffer shorter than %d bytes", d.DataType(), n, bytes)
		}
		return nil
	}
	dt := d.DataType()
	if ext, ok := dt.(arrow.ExtensionType); ok {
		dt = ext.StorageType()
	}
	if dt.ID() != arrow.NULL && d.NullN() > 0 {
		if err := need(0, bitutil.BytesForBits(end)); err != nil {
			return err
		}
	}
	kids := d.Children()
	child := func(i int, min int64) error {
		if i >= len(kids) || kids[i] == nil {
			return fmt.Errorf("a %s array lacks its child arrays", dt)
		}
		if int64(kids[i].Len()) < min {
			return fmt.Errorf("a %s array of %d values has a child of %d", dt, n, kids[i].Len())
		}
		return checkIPCData(kids[i], depth+1)
	}
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		w := int64(t.IndexType.(arrow.FixedWidthDataType).BitWidth() / 8)
		if err := need(1, end*w); err != nil {
			return err
		}
		dict := d.Dictionary()
		if dict == nil {
			return errors.New("a dictionary column has no dictionary")
		}
		if err := checkIPCData(dict, depth+1); err != nil {
			return err
		}
		return checkIndices(d, bufs[1], w, int64(dict.Len()))
	case *arrow.StructType:
		for i := range t.Fields() {
			if err := child(i, end); err != nil {
				return err
			}
		}
		return nil
	case *arrow.FixedSizeListType:
		return child(0, end*int64(t.Len()))
	}
	switch dt.ID() {
	case arrow.NULL:
		return nil
	case arrow.STRING_VIEW, arrow.BINARY_VIEW:
		return checkViews(d, bufs)
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		last, err := checkOffsets(d, bufs, dt.Layout().Buffers[1].ByteWidth)
		if err != nil {
			return err
		}
		return need(2, last)
	case arrow.LIST, arrow.MAP, arrow.LARGE_LIST:
		last, err := checkOffsets(d, bufs, dt.Layout().Buffers[1].ByteWidth)
		if err != nil {
			return err
		}
		return child(0, last)
	}
	if fw, ok := dt.(arrow.FixedWidthDataType); ok {
		bits := int64(fw.BitWidth())
		if bits <= 0 || bits > 1<<16 {
			return fmt.Errorf("a %s array has an unsupported width", dt)
		}
		return need(1, bitutil.BytesForBits(end*bits))
	}
	return fmt.Errorf("%s arrays are not supported in Arrow files", dt)
}

// checkOffsets checks the offsets buffer (width 4 or 8 bytes) of d: long
// enough, starting at or above zero, non-decreasing. It returns the last
// offset (the values the array spans).
func checkOffsets(d arrow.ArrayData, bufs []*memory.Buffer, width int) (int64, error) {
	n, off := int64(d.Len()), int64(d.Offset())
	if n == 0 {
		return 0, nil
	}
	w := int64(width)
	if len(bufs) < 2 || bufs[1] == nil || int64(bufs[1].Len()) < (n+off+1)*w {
		return 0, fmt.Errorf("a %s array of %d values has a short offsets buffer", d.DataType(), n)
	}
	b := bufs[1].Bytes()
	at := func(i int64) int64 {
		if w == 4 {
			return int64(int32(binary.LittleEndian.Uint32(b[i*4:])))
		}
		return int64(binary.LittleEndian.Uint64(b[i*8:]))
	}
	prev := at(off)
	if prev < 0 {
		return 0, fmt.Errorf("a %s array has a negative offset", d.DataType())
	}
	for i := off + 1; i <= off+n; i++ {
		o := at(i)
		if o < prev {
			return 0, fmt.Errorf("a %s array has decreasing offsets", d.DataType())
		}
		prev = o
	}
	return prev, nil
}

// checkViews checks the views buffer (16 bytes a value) of a string or
// binary view array (how Polars writes strings): every non-null view's
// length is non-negative, and a value longer than the 12 bytes a view
// holds inline lies inside the data buffer the view names.
func checkViews(d arrow.ArrayData, bufs []*memory.Buffer) error {
	n, off := int64(d.Len()), int64(d.Offset())
	if n == 0 {
		return nil
	}
	if len(bufs) < 2 || bufs[1] == nil || int64(bufs[1].Len()) < (n+off)*16 {
		return fmt.Errorf("a %s array of %d values has a short views buffer", d.DataType(), n)
	}
	v := bufs[1].Bytes()
	var valid []byte
	if d.NullN() > 0 {
		valid = bufs[0].Bytes()
	}
	for i := off; i < off+n; i++ {
		if valid != nil && !bitutil.BitIsSet(valid, int(i)) {
			continue
		}
		w := v[i*16 : i*16+16]
		l := int64(int32(binary.LittleEndian.Uint32(w)))
		if l < 0 {
			return fmt.Errorf("a %s view has a negative length", d.DataType())
		}
		if l <= 12 {
			continue
		}
		b, o := int64(int32(binary.LittleEndian.Uint32(w[8:]))), int64(int32(binary.LittleEndian.Uint32(w[12:])))
		if b < 0 || b >= int64(len(bufs)-2) || bufs[2+b] == nil || o < 0 || o+l > int64(bufs[2+b].Len()) {
			return fmt.Errorf("a %s view points outside its data buffers", d.DataType())
		}
	}
	return nil
}

// checkIndices checks that every non-null index of the dictionary array d
// (w bytes each, in buf) is below size.
func checkIndices(d arrow.ArrayData, buf *memory.Buffer, w, size int64) error {
	b := buf.Bytes()
	signed := arrow.IsSignedInteger(d.DataType().(*arrow.DictionaryType).IndexType.ID())
	var valid []byte
	if d.NullN() > 0 {
		valid = d.Buffers()[0].Bytes()
	}
	for i := int64(d.Offset()); i < int64(d.Offset()+d.Len()); i++ {
		if valid != nil && !bitutil.BitIsSet(valid, int(i)) {
			continue
		}
		var v int64
		switch w {
		case 1:
			v = int64(b[i])
			if signed {
				v = int64(int8(b[i]))
			}
		case 2:
			u := binary.LittleEndian.Uint16(b[i*2:])
			v = int64(u)
			if signed {
				v = int64(int16(u))
			}
		case 4:
			u := binary.LittleEndian.Uint32(b[i*4:])
			v = int64(u)
			if signed {
				v = int64(int32(u))
			}
		default:
			v = int64(binary.LittleEndian.Uint64(b[i*8:]))
		}
		if v < 0 || v >= size {
			return fmt.Errorf("a dictionary index %d lies outside its dictionary of %d values", v, size)
		}
	}
	return nil
}

// Open implements Format.
func (af arrowFormat) Open(ctx context.Context, f FileInfo) ([]*Dataset, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fh, fr, _, lay, err := openArrow(f, af.lim, memory.DefaultAllocator)
	if err != nil {
		return nil, asFileError(err)
	}
	sc := fr.Schema()
	fr.Close()
	fh.Close()
	if sc.NumFields() == 0 {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "the Arrow file has no columns")
	}
	attrs := map[string]any{"record_batches": len(lay.batches)}
	if lay.stream {
		attrs["ipc_format"] = "stream"
	}
	if err := checkFieldNames(sc); err != nil {
		return nil, err
	}
	exposed, notes := exposedSchema(sc)
	ds := &Dataset{
		ID:            f.BaseID,
		Kind:          KindArrow,
		Path:          f.RelPath,
		AbsPath:       f.AbsPath,
		Schema:        exposed,
		RowCount:      lay.rows,
		RowCountExact: true,
		SizeBytes:     f.Size,
		ModTime:       f.ModTime,
		FileID:        f.FileID,
		Attributes:    attrs,
		ColumnNotes:   notes,
	}
	ds.Source = &arrowSource{id: f.BaseID, file: f, schema: exposed, stored: sc, rows: lay.rows, lim: af.lim}
	return []*Dataset{ds}, nil
}

// arrowSource streams one Arrow IPC file.
type arrowSource struct {
	id     string
	file   FileInfo
	schema *arrow.Schema // exposed
	stored *arrow.Schema // the file's schema when cataloged
	rows   int64
	lim    Limits
}

// Scan implements Source: the file is validated again, then read batch by
// batch (batches longer than opts.BatchSize are sliced); every batch is
// checked (checkIPCData) before it is converted to the exposed schema.
func (s *arrowSource) Scan(ctx context.Context, opts ScanOptions) (array.RecordReader, error) {
	ts, err := newTypedScan(ctx, s.id, s.schema, opts)
	if err != nil {
		return nil, err
	}
	out, alloc, batch := ts.out, ts.alloc, int64(ts.batch)
	if s.rows == 0 {
		return array.NewRecordReader(out, nil)
	}
	fh, fr, capped, lay, err := openArrow(s.file, s.lim, alloc)
	if err != nil {
		return nil, SourceOpenError(s.id, asFileError(err))
	}
	if !fr.Schema().Equal(s.stored) || lay.rows != s.rows {
		fr.Close()
		fh.Close()
		return nil, corruptFileError(s.id, fmt.Errorf("%w since it was cataloged", ErrFileChanged))
	}
	// A mapped scan (arrowipc_mmap.go) yields only the projected columns.
	rd, stored, pick := fr, s.stored, ts.proj
	if m := mapArrowScan(fh, lay, s.stored, ts.proj, capped, ipcOptions(capped, s.lim, lay.size)); m != nil {
		fr.Close()
		rd, stored, pick = m, m.schema, make([]int, len(ts.proj))
		for i := range pick {
			pick[i] = i
		}
	}
	var (
		cur  arrow.RecordBatch // the batch being sliced
		next int               // the next batch to read
		pos  int64             // the next row of cur
	)
	if !lay.stream { // random access: an offset skips whole leading batches unread
		next = skipBatches(lay.batches, opts)
	}
	release := func() {
		if cur != nil {
			cur.Release()
			cur = nil
		}
	}
	inner := newFuncReader(stored, func() (rec arrow.RecordBatch, err error) {
		defer func() {
			if p := recover(); p != nil {
				rec, err = nil, panicError("the Arrow file does not decode", p)
			}
			if err != nil {
				release()
				capped.abort()
			}
		}()
		for cur == nil || pos >= cur.NumRows() {
			release()
			if next >= len(lay.batches) {
				return nil, nil
			}
			capped.begin()
			if cur, err = rd.batch(next); err != nil {
				return nil, err
			}
			if cur.NumRows() != lay.batches[next] {
				return nil, ipcErrorf("record batch %d holds %d rows, its metadata says %d", next, cur.NumRows(), lay.batches[next])
			}
			for i, c := range cur.Columns() {
				if err := checkIPCData(c.Data(), 0); err != nil {
					return nil, ipcErrorf("record batch %d, column %q: %w", next, cur.Schema().Field(i).Name, err)
				}
			}
			next++
			pos = 0
		}
		hi := min(pos+batch, cur.NumRows())
		rec = cur.NewSlice(pos, hi)
		pos = hi
		return rec, nil
	})
	return newExposedReader(ctx, s.id, inner, out, pick, alloc, func() {
		release()
		rd.Close()
		fh.Close()
	}), nil
}

// skipBatches returns how many leading record batches (of the row counts
// batches) lie wholly within opts.SkipRows, an offset over an unfiltered
// scan (see skipRowGroups for Parquet), and counts their rows in
// opts.Skipped.
func skipBatches(batches []int64, opts ScanOptions) int {
	if opts.SkipRows <= 0 || opts.Skipped == nil || len(opts.ZoneFilters) > 0 || len(opts.Filters) > 0 {
		return 0
	}
	var skipped int64
	i := 0
	for ; i < len(batches) && skipped+batches[i] <= opts.SkipRows; i++ {
		skipped += batches[i]
	}
	opts.Skipped.Add(skipped)
	return i
}
