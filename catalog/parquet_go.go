package catalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// The parquet-go read path. Flat columns (a top-level leaf, not repeated,
// at most one definition level) whose stored Arrow type (pqarrow's
// mapping of the Parquet schema, read once by Open: the one type mapping)
// is one of those pqgoDecoder knows are decoded by parquet-go and copied
// straight into Arrow buffers: typed page values placed by the definition
// levels, dictionary pages of string columns read as dictionaries kept as
// Arrow dictionaries (the codes as written, one dictionary per row group),
// other dictionary pages gathered. Measured 2.6-3.2x faster than pqarrow's
// record reader (docs/BENCHMARKS.md, "Parquet readers"). A scan that
// needs any other column (nested, INT96, fixed-length byte arrays, times)
// reads through pqarrow as before.
//
// Each column chunk is read into memory with one read and its page headers
// are checked before parquet-go decodes it (parquetGoChunk): page sizes
// within the chunk, at most parquetGoMaxPageBytes uncompressed and
// parquetGoMaxPageValues values (parquet-go allocates by the headers'
// claims), snappy's length prefix agreeing with the header, and, for a
// column read as a dictionary, every data page dictionary-encoded. A row
// group with a chunk that fails these checks is read by pqarrow instead
// (the same batches' types), so a file parquet-go would not read safely is
// still read, and pqarrow decides whether it is corrupt. Batches never
// span two row groups; the columns of a batch are decoded in parallel
// (pqgoReader.each), as pqarrow decodes them.

// parquetGoEnabled turns the parquet-go path on (tests compare both).
var parquetGoEnabled = true

const (
	// parquetGoMaxPageBytes is the largest uncompressed page parquet-go
	// decodes (larger: the row group is read by pqarrow).
	parquetGoMaxPageBytes = 256 << 20
	// parquetGoMaxPageValues is the most values a page parquet-go
	// decodes may claim.
	parquetGoMaxPageValues = 1 << 24
)

// pqgoOut accumulates one column of one batch.
type pqgoOut interface {
	// add appends k rows taken from page p starting at value vpos; def
	// is the rows' definition levels (nil: no nulls), nv the values
	// among them.
	add(p parquet.Page, vpos, nv int, def []byte) error
	finish() arrow.Array
	release()
}

// pqgoDecoder returns the constructor of the Arrow array builder for a
// Parquet column of physical kind k stored (by pqarrow's mapping) as dt,
// or nil when the parquet-go path does not read it.
func pqgoDecoder(k parquet.Kind, dt arrow.DataType) func(mem memory.Allocator, n int, dict arrow.Array) pqgoOut {
	switch k {
	case parquet.Boolean:
		if dt.ID() == arrow.BOOL {
			return func(mem memory.Allocator, n int, _ arrow.Array) pqgoOut { return newBoolOut(mem, n) }
		}
	case parquet.Int32:
		v := (*pqValues).Int32
		switch dt.ID() {
		case arrow.INT32, arrow.DATE32:
			return fixedDecoder[int32, int32](dt, v, nil)
		case arrow.INT8:
			return fixedDecoder(dt, v, func(x int32) int8 { return int8(x) })
		case arrow.INT16:
			return fixedDecoder(dt, v, func(x int32) int16 { return int16(x) })
		case arrow.UINT8:
			return fixedDecoder(dt, v, func(x int32) uint8 { return uint8(x) })
		case arrow.UINT16:
			return fixedDecoder(dt, v, func(x int32) uint16 { return uint16(x) })
		case arrow.UINT32:
			return fixedDecoder(dt, v, func(x int32) uint32 { return uint32(x) })
		case arrow.DECIMAL128:
			return fixedDecoder(dt, v, func(x int32) decimal128.Num { return decimal128.FromI64(int64(x)) })
		}
	case parquet.Int64:
		v := (*pqValues).Int64
		switch dt.ID() {
		case arrow.INT64, arrow.TIMESTAMP:
			return fixedDecoder[int64, int64](dt, v, nil)
		case arrow.UINT64:
			return fixedDecoder(dt, v, func(x int64) uint64 { return uint64(x) })
		case arrow.DECIMAL128:
			return fixedDecoder(dt, v, decimal128.FromI64)
		}
	case parquet.Float:
		if dt.ID() == arrow.FLOAT32 {
			return fixedDecoder[float32, float32](dt, (*pqValues).Float, nil)
		}
	case parquet.Double:
		if dt.ID() == arrow.FLOAT64 {
			return fixedDecoder[float64, float64](dt, (*pqValues).Double, nil)
		}
	case parquet.ByteArray:
		switch {
		case dt.ID() == arrow.STRING || dt.ID() == arrow.BINARY:
			return func(mem memory.Allocator, n int, _ arrow.Array) pqgoOut { return newBytesOut(mem, dt, n) }
		case arrow.TypeEqual(dt, parquetDictType):
			return func(mem memory.Allocator, n int, dict arrow.Array) pqgoOut { return newDictOut(mem, n, dict) }
		}
	}
	return nil
}

// pqgoCol is one column of a parquet-go scan: the decoder and the
// position in the current row group's pages.
type pqgoCol struct {
	leaf    int  // leaf column index (parquet-go's and the footer's)
	isDict  bool // read as an Arrow dictionary
	dt      arrow.DataType
	strs    bool // plain strings or binary: late-materialized under filters
	newOut  func(mem memory.Allocator, n int, dict arrow.Array) pqgoOut
	pages   *parquet.FilePages
	page    parquet.Page
	def     []byte // the page's definition levels; nil: no nulls
	rows    int    // rows in the page
	pos     int    // rows of the page consumed
	vpos    int    // values of the page consumed
	dictArr arrow.Array
}

// pqgoReader reads the row groups rgs of a file through parquet-go,
// columns cols (the inner schema's fields, file order), falling back to
// pqarrow (fr, leaves) for the row groups parquetGoChunk refuses.
type pqgoReader struct {
	ctx    context.Context
	mem    memory.Allocator
	schema *arrow.Schema
	fh     *os.File
	pf     *parquet.File
	fr     *pqarrow.FileReader
	leaves []int
	cols   []*pqgoCol
	rgs    []int
	batch  int
	// the row group being read: its index in rgs, rows left, or the
	// pqarrow reader standing in for it.
	at       int
	left     int64
	fallback pqarrow.RecordReader
	// tests are the pushed filters (parquet_filter.go) by column; stats
	// count the rows they drop (as read).
	tests []slotTest
	stats *ScanStats
	// par reads the row groups after the first ahead on workers
	// (parquet_parallel.go); fallbackMu (nil: one reader) serializes the
	// readers' uses of fr.
	par        *pqgoParallel
	fallbackMu *sync.Mutex
}

// slotTest is a pushed predicate on column slot of a pqgoReader.
type slotTest struct {
	slot int
	test rowTest
}

// parquetGoGroups and parquetGoFallbacks count the row groups the
// parquet-go path read and those it left to pqarrow (tests read them).
var parquetGoGroups, parquetGoFallbacks atomic.Int64

// newParquetGoReader returns the parquet-go reader of the fields (sorted
// indices into stored, the file's Arrow schema with dictionary fields)
// of row groups rgs (nil: all), or nil when some field is not one it
// reads or parquet-go does not open the file.
func newParquetGoReader(ctx context.Context, fh *os.File, fr *pqarrow.FileReader, stored *arrow.Schema,
	fields, rgs []int, mem memory.Allocator, batch int, tests []slotTest, stats *ScanStats) (r *pqgoReader) {
	if !parquetGoEnabled || len(fields) == 0 {
		return nil
	}
	defer func() {
		if recover() != nil { // a footer parquet-go cannot take: pqarrow reads it
			r = nil
		}
	}()
	st, err := fh.Stat()
	if err != nil {
		return nil
	}
	pf, err := openParquetGo(fh, st.Size())
	if err != nil || len(pf.RowGroups()) != fr.ParquetReader().NumRowGroups() {
		return nil
	}
	top := pf.Root().Columns()
	cols := make([]*pqgoCol, len(fields))
	for i, j := range fields {
		if j >= len(fr.Manifest.Fields) || j >= len(top) || !fr.Manifest.Fields[j].IsLeaf() {
			return nil
		}
		c := top[j]
		leaf := fr.Manifest.Fields[j].ColIndex
		if !c.Leaf() || c.Index() != leaf || c.Name() != stored.Field(j).Name || c.MaxRepetitionLevel() != 0 || c.MaxDefinitionLevel() > 1 {
			return nil
		}
		dt := stored.Field(j).Type
		newOut := pqgoDecoder(c.Type().Kind(), dt)
		if newOut == nil {
			return nil
		}
		cols[i] = &pqgoCol{leaf: leaf, isDict: dt.ID() == arrow.DICTIONARY, newOut: newOut, dt: dt,
			strs: dt.ID() == arrow.STRING || dt.ID() == arrow.BINARY}
	}
	if rgs == nil {
		rgs = identity(len(pf.RowGroups()))
	}
	sf := make([]arrow.Field, len(fields))
	for i, j := range fields {
		sf[i] = stored.Field(j)
	}
	schema := arrow.NewSchema(sf, nil)
	return &pqgoReader{ctx: ctx, mem: mem, fh: fh, pf: pf, fr: fr, leaves: fieldLeaves(fr.Manifest, fields),
		cols: cols, rgs: rgs, batch: batch, at: -1, schema: schema, tests: tests, stats: stats}
}

// next returns the next batch (nil at the end) of a reader whose schema
// is the inner schema the caller gives funcReader; under pushed filters,
// a batch no row of which passed is not returned. Once the first row
// group is read, the rest are read ahead on workers (parquet_parallel.go)
// when there are enough of them.
func (r *pqgoReader) next() (arrow.RecordBatch, error) {
	for {
		var rec arrow.RecordBatch
		var err error
		if r.par != nil {
			rec, err = r.par.next(r.stats)
		} else {
			if r.readAhead() {
				continue
			}
			rec, err = r.next1()
		}
		if err != nil || rec == nil || rec.NumRows() > 0 || len(r.tests) == 0 {
			return rec, err
		}
		rec.Release()
	}
}

// next1 is the serial next, empty batches included.
func (r *pqgoReader) next1() (arrow.RecordBatch, error) {
	for {
		rec, dropped, err := r.groupBatch()
		if r.stats != nil {
			r.stats.RowsRead += dropped // the exposed reader counts the rest
		}
		if err != nil || rec != nil {
			return rec, err
		}
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		if r.at++; r.at >= len(r.rgs) {
			return nil, nil
		}
		if err := r.openRowGroup(r.rgs[r.at]); err != nil {
			return nil, err
		}
	}
}

// groupBatch returns the current row group's next batch (nil when the
// row group is done, or none is open) and the rows pushed filters
// dropped from it.
func (r *pqgoReader) groupBatch() (rec arrow.RecordBatch, dropped int64, err error) {
	var arrs []arrow.Array
	defer func() {
		if p := recover(); p != nil {
			releaseAll(arrs)
			rec, dropped, err = nil, 0, fmt.Errorf("decoder panic: %v", p)
		}
	}()
	if r.fallback != nil {
		return r.fallbackBatch()
	}
	if r.left == 0 {
		return nil, 0, nil
	}
	n := int(min(int64(r.batch), r.left))
	arrs = make([]arrow.Array, len(r.cols))
	rows := n
	if len(r.tests) > 0 {
		rows, err = r.readFiltered(n, arrs)
	} else {
		err = r.readCols(arrs, nil, func(i int, c *pqgoCol) (arrow.Array, error) { return c.read(r.mem, n, nil, 0) })
	}
	if err != nil {
		releaseAll(arrs)
		return nil, 0, err
	}
	r.left -= int64(n)
	rec = array.NewRecordBatch(r.schema, arrs, int64(rows))
	releaseAll(arrs)
	arrs = nil
	return rec, int64(n - rows), nil
}

// fallbackBatch returns the pqarrow reader's next batch (nil at the end
// of its row group, when it is released). Readers of one scan share the
// pqarrow file reader, so they take turns (fallbackMu).
func (r *pqgoReader) fallbackBatch() (arrow.RecordBatch, int64, error) {
	if r.fallbackMu != nil {
		r.fallbackMu.Lock()
		defer r.fallbackMu.Unlock()
	}
	if r.fallback.Next() {
		rec := r.fallback.RecordBatch()
		rec.Retain()
		return rec, 0, nil
	}
	err := r.fallback.Err()
	r.fallback.Release()
	r.fallback = nil
	r.left = 0
	return nil, 0, err
}

// readCols sets arrs[i] to read(i) for the columns which picks (nil:
// all), in parallel (each).
func (r *pqgoReader) readCols(arrs []arrow.Array, which func(i int) bool, read func(i int, c *pqgoCol) (arrow.Array, error)) error {
	errs := make([]error, len(r.cols))
	r.each(func(i int, c *pqgoCol) {
		if which == nil || which(i) {
			arrs[i], errs[i] = read(i, c)
		}
	})
	return errors.Join(errs...)
}

// readFiltered reads the next n rows of every column into arrs, keeping
// the rows that pass the pushed tests (it returns how many): the columns
// tested, but plain strings, are read first and tested; the plain string
// columns are read for the rows that passed only (bytesSelOut) and
// their tests applied to that; the other columns are read whole and cut.
func (r *pqgoReader) readFiltered(n int, arrs []arrow.Array) (int, error) {
	tested := make([]bool, len(r.cols))
	for _, t := range r.tests {
		tested[t.slot] = true
	}
	first := func(i int) bool { return tested[i] && !r.cols[i].strs }
	if err := r.readCols(arrs, first, func(_ int, c *pqgoCol) (arrow.Array, error) { return c.read(r.mem, n, nil, 0) }); err != nil {
		return 0, err
	}
	keep := make([]bool, n)
	for i := range keep {
		keep[i] = true
	}
	for _, t := range r.tests {
		if first(t.slot) {
			t.test(arrs[t.slot], keep)
		}
	}
	kept := 0
	for _, k := range keep {
		if k {
			kept++
		}
	}
	err := r.readCols(arrs, func(i int) bool { return !first(i) }, func(_ int, c *pqgoCol) (arrow.Array, error) {
		if c.strs {
			return c.read(r.mem, n, keep, kept)
		}
		return c.read(r.mem, n, nil, 0)
	})
	if err != nil {
		return 0, err
	}
	if kept < n {
		if err := cutArrays(r.mem, arrs, keep, func(i int) bool { return !r.cols[i].strs }); err != nil {
			return 0, err
		}
	}
	keep = keep[:kept]
	for i := range keep {
		keep[i] = true
	}
	cut := false
	for _, t := range r.tests {
		if !first(t.slot) {
			t.test(arrs[t.slot], keep)
			cut = true
		}
	}
	if !cut {
		return kept, nil
	}
	rows := 0
	for _, k := range keep {
		if k {
			rows++
		}
	}
	if rows < kept {
		if err := cutArrays(r.mem, arrs, keep, nil); err != nil {
			return 0, err
		}
	}
	return rows, nil
}

// cutArrays replaces the arrays of arrs which picks (nil: all) by their
// rows keep marks.
func cutArrays(mem memory.Allocator, arrs []arrow.Array, keep []bool, which func(i int) bool) error {
	kept := 0
	for _, k := range keep {
		if k {
			kept++
		}
	}
	for i, a := range arrs {
		if which != nil && !which(i) {
			continue
		}
		cut, err := cutArray(mem, a, keep, kept)
		if err != nil {
			return err
		}
		a.Release()
		arrs[i] = cut
	}
	return nil
}

// cutArray is the kept rows of a (an array the parquet-go path builds:
// fixed-width, dictionary, boolean, string or binary).
func cutArray(mem memory.Allocator, a arrow.Array, keep []bool, kept int) (arrow.Array, error) {
	switch a := a.(type) {
	case *array.String, *array.Binary:
		var b *array.BinaryBuilder
		var sb *array.StringBuilder
		value := func(i int) string { return a.(*array.Binary).ValueString(i) }
		if s, ok := a.(*array.String); ok {
			sb = array.NewStringBuilder(mem)
			b, value = sb.BinaryBuilder, s.Value
			defer sb.Release()
		} else {
			b = array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
			defer b.Release()
		}
		size := 0
		for i, k := range keep {
			if k && a.IsValid(i) {
				size += len(value(i))
			}
		}
		b.Reserve(kept)
		b.ReserveData(size)
		for i, k := range keep {
			switch {
			case !k:
			case a.IsNull(i):
				b.AppendNull()
			default:
				b.AppendString(value(i))
			}
		}
		if sb != nil {
			return sb.NewArray(), nil
		}
		return b.NewArray(), nil
	case *array.Boolean:
		b := array.NewBooleanBuilder(mem)
		defer b.Release()
		b.Reserve(kept)
		for i, k := range keep {
			switch {
			case !k:
			case a.IsNull(i):
				b.AppendNull()
			default:
				b.Append(a.Value(i))
			}
		}
		return b.NewArray(), nil
	}
	dt := a.DataType()
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.IndexType
	}
	fw, ok := dt.(arrow.FixedWidthDataType)
	if !ok || fw.BitWidth()%8 != 0 {
		return nil, fmt.Errorf("cannot cut a %s column", a.DataType())
	}
	return cutFixed(mem, a, keep, kept, fw.BitWidth()/8), nil
}

// keepValues copies the values of src keep marks to dst, in order.
func keepValues[T any](dst, src []T, keep []bool) {
	j := 0
	for i, k := range keep {
		if k {
			dst[j] = src[i]
			j++
		}
	}
}

// cutFixed is cutArray for a fixed-width (or dictionary) array of width
// bytes per value.
func cutFixed(mem memory.Allocator, a arrow.Array, keep []bool, kept, width int) arrow.Array {
	d := a.Data()
	src := d.Buffers()[1].Bytes()[d.Offset()*width:]
	vb := memory.NewResizableBuffer(mem)
	vb.Resize(kept * width)
	dst := vb.Bytes()
	var nb *memory.Buffer
	var bits []byte
	if a.NullN() > 0 {
		nb = memory.NewResizableBuffer(mem)
		nb.Resize((kept + 7) / 8)
		bits = nb.Bytes()
		clear(bits)
	}
	switch width {
	case 8:
		keepValues(arrow.GetData[uint64](dst), arrow.GetData[uint64](src), keep)
	case 4:
		keepValues(arrow.GetData[uint32](dst), arrow.GetData[uint32](src), keep)
	default:
		for i, j := 0, 0; i < len(keep); i++ {
			if keep[i] {
				copy(dst[j*width:(j+1)*width], src[i*width:(i+1)*width])
				j++
			}
		}
	}
	nulls := 0
	if bits != nil {
		for i, j := 0, 0; i < len(keep); i++ {
			if !keep[i] {
				continue
			}
			if a.IsValid(i) {
				bitutil.SetBit(bits, j)
			} else {
				nulls++
			}
			j++
		}
	}
	var nd *array.Data
	if dict := d.Dictionary(); dict != nil {
		nd = array.NewDataWithDictionary(a.DataType(), kept, []*memory.Buffer{nb, vb}, nulls, 0, dict.(*array.Data))
	} else {
		nd = array.NewData(a.DataType(), kept, []*memory.Buffer{nb, vb}, nil, nulls, 0)
	}
	defer nd.Release()
	vb.Release()
	if nb != nil {
		nb.Release()
	}
	return array.MakeFromData(nd)
}

// each runs f for every column: on a goroutine each when there are
// several columns and more than one CPU (as pqarrow reads columns), so a
// scan decodes its columns in parallel.
func (r *pqgoReader) each(f func(i int, c *pqgoCol)) {
	if len(r.cols) == 1 || runtime.GOMAXPROCS(0) == 1 {
		for i, c := range r.cols {
			f(i, c)
		}
		return
	}
	var wg sync.WaitGroup
	for i, c := range r.cols {
		wg.Go(func() { f(i, c) })
	}
	wg.Wait()
}

// openRowGroup positions every column at the start of row group rg, or
// hands the row group to pqarrow when a chunk fails parquetGoChunk.
func (r *pqgoReader) openRowGroup(rg int) error {
	r.closeColumns()
	g := r.pf.RowGroups()[rg]
	meta := &r.pf.Metadata().RowGroups[rg]
	chunks := g.ColumnChunks()
	errs := make([]error, len(r.cols))
	r.each(func(i int, c *pqgoCol) { errs[i] = r.openChunk(c, chunks, meta) })
	ok := true
	for _, err := range errs {
		if errors.Is(err, errParquetGoRead) {
			return err
		}
		ok = ok && err == nil
	}
	if !ok {
		r.closeColumns()
		if r.fallbackMu != nil {
			r.fallbackMu.Lock()
			defer r.fallbackMu.Unlock()
		}
		rr, err := r.fr.GetRecordReader(r.ctx, r.leaves, []int{rg})
		if err != nil {
			return err
		}
		r.fallback = rr
		parquetGoFallbacks.Add(1)
		return nil
	}
	r.left = g.NumRows()
	parquetGoGroups.Add(1)
	return nil
}

// openChunk reads and checks column c's chunk of a row group (its
// chunks and footer metadata) and opens its pages.
func (r *pqgoReader) openChunk(c *pqgoCol, chunks []parquet.ColumnChunk, meta *format.RowGroup) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("column chunk: %v", p)
		}
	}()
	if c.leaf >= len(chunks) || c.leaf >= len(meta.Columns) {
		return errors.New("no such column chunk")
	}
	fc, isFile := chunks[c.leaf].(*parquet.FileColumnChunk)
	cc := &meta.Columns[c.leaf]
	if !isFile || cc.FilePath != "" || len(cc.EncryptedColumnMetadata) > 0 {
		return errors.New("another file's or an encrypted column chunk") // pqarrow decides
	}
	mem, err := parquetGoChunk(r.fh, &cc.MetaData, c.isDict)
	if err != nil {
		return err
	}
	c.pages = fc.PagesFrom(mem)
	return nil
}

// closeColumns releases the columns' pages and dictionaries.
func (r *pqgoReader) closeColumns() {
	for _, c := range r.cols {
		c.close()
	}
}

// close releases everything (the caller closes the file).
func (r *pqgoReader) close() {
	if r.par != nil {
		r.par.close()
		r.par = nil
	}
	r.closeColumns()
	if r.fallback != nil {
		r.fallback.Release()
		r.fallback = nil
	}
}

func (c *pqgoCol) close() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	if c.pages != nil {
		c.pages.Close()
		c.pages = nil
	}
	if c.dictArr != nil {
		c.dictArr.Release()
		c.dictArr = nil
	}
	c.def, c.rows, c.pos, c.vpos = nil, 0, 0, 0
}

// nextPage moves to the column's next page.
func (c *pqgoCol) nextPage(mem memory.Allocator) error {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	p, err := c.pages.ReadPage()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("a column chunk holds fewer values than its row group has rows")
		}
		return err
	}
	c.page = p
	c.rows, c.pos, c.vpos = int(p.NumRows()), 0, 0
	c.def = p.DefinitionLevels()
	if len(c.def) != c.rows {
		c.def = nil
	}
	d := p.Dictionary()
	if c.isDict {
		if d == nil {
			return errors.New("a data page of a dictionary column is not dictionary-encoded")
		}
		if c.dictArr == nil {
			dd := d.Page().Data()
			v, off := dd.ByteArray()
			c.dictArr = byteArrayToStrings(mem, v, off)
		}
	}
	return nil
}

// read returns the column's next n rows of the row group; with keep (n
// entries, kept of them true; plain strings only) the rows keep marks.
func (c *pqgoCol) read(mem memory.Allocator, n int, keep []bool, kept int) (_ arrow.Array, err error) {
	var out pqgoOut
	defer func() {
		if p := recover(); p != nil { // a page whose values disagree with its levels
			if out != nil {
				out.release()
			}
			err = fmt.Errorf("decoder panic: %v", p)
		}
	}()
	if c.isDict && c.dictArr == nil && c.page == nil { // the dictionary comes with the first page
		if err := c.nextPage(mem); err != nil {
			return nil, err
		}
	}
	if keep != nil {
		out = &bytesSelOut{bytesOut: newBytesOut(mem, c.dt, kept), keep: keep}
	} else {
		out = c.newOut(mem, n, c.dictArr)
	}
	for done := 0; done < n; {
		if c.page == nil || c.pos == c.rows {
			if err := c.nextPage(mem); err != nil {
				out.release()
				return nil, err
			}
			continue
		}
		k := min(n-done, c.rows-c.pos)
		var def []byte
		nv := k
		if c.def != nil {
			def = c.def[c.pos : c.pos+k]
			nv = bytes.Count(def, one)
		}
		if err := out.add(c.page, c.vpos, nv, def); err != nil {
			out.release()
			return nil, err
		}
		c.pos += k
		c.vpos += nv
		done += k
	}
	return out.finish(), nil
}

var one = []byte{1}

// errParquetGoRead marks a failed read of the file itself (not a chunk
// parquet-go should leave to pqarrow).
var errParquetGoRead = errors.New("reading the Parquet file failed")

// parquetGoChunk reads a column chunk into memory and checks its page
// headers (see the comment at the top of the file); the result serves
// parquet-go's page reader.
func parquetGoChunk(fh io.ReaderAt, md *format.ColumnMetaData, dictOnly bool) (*chunkReaderAt, error) {
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	size := md.TotalCompressedSize
	if start < 4 || size <= 0 || size > 1<<31 {
		return nil, errors.New("chunk bounds")
	}
	buf := make([]byte, size)
	if n, err := fh.ReadAt(buf, start); n != len(buf) {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, errors.New("chunk beyond the end of the file")
		}
		return nil, fmt.Errorf("%w: %v", errParquetGoRead, err)
	}
	if err := checkParquetGoPages(buf, md, dictOnly); err != nil {
		return nil, err
	}
	return &chunkReaderAt{base: start, buf: buf}, nil
}

// checkParquetGoPages walks the page headers of a chunk's bytes.
func checkParquetGoPages(buf []byte, md *format.ColumnMetaData, dictOnly bool) error {
	var proto thrift.CompactProtocol
	var values int64
	dicts := 0
	for off := 0; values < md.NumValues; {
		if off >= len(buf) {
			return errors.New("the chunk ends before its values")
		}
		pr := proto.NewReaderFromBytes(buf[off:])
		var h format.PageHeader
		if err := thrift.NewDecoder(pr).Decode(&h); err != nil {
			return err
		}
		off += pr.BytesRead()
		cs, us := int(h.CompressedPageSize), int(h.UncompressedPageSize)
		if cs < 0 || us < 0 || cs > len(buf)-off || us > parquetGoMaxPageBytes {
			return errors.New("page size")
		}
		data := buf[off : off+cs]
		off += cs
		levels := 0
		switch {
		case h.Type == format.DictionaryPage && h.DictionaryPageHeader.Valid:
			if dicts++; dicts > 1 || values > 0 {
				return errors.New("a second dictionary page")
			}
			if n := h.DictionaryPageHeader.V.NumValues; n < 0 || int(n) > parquetGoMaxPageValues || int(n) > us {
				return errors.New("dictionary size")
			}
			continue // dictionary pages are plain: no length prefix checked
		case h.Type == format.DataPage && h.DataPageHeader.Valid:
			v := h.DataPageHeader.V
			if v.NumValues < 0 || int(v.NumValues) > parquetGoMaxPageValues || (dictOnly && !isDictEncoding(v.Encoding)) {
				return errors.New("data page")
			}
			values += int64(v.NumValues)
		case h.Type == format.DataPageV2 && h.DataPageHeaderV2.Valid:
			v := h.DataPageHeaderV2.V
			if v.NumValues < 0 || int(v.NumValues) > parquetGoMaxPageValues || (dictOnly && !isDictEncoding(v.Encoding)) ||
				v.DefinitionLevelsByteLength < 0 || v.RepetitionLevelsByteLength < 0 ||
				int(v.DefinitionLevelsByteLength)+int(v.RepetitionLevelsByteLength) > cs ||
				(v.IsCompressed.Valid && !v.IsCompressed.V) {
				return errors.New("data page v2")
			}
			values += int64(v.NumValues)
			levels = int(v.DefinitionLevelsByteLength) + int(v.RepetitionLevelsByteLength)
		default:
			return errors.New("page type")
		}
		if md.Codec == format.Snappy && cs > levels {
			n, k := binary.Uvarint(data[levels:])
			if k <= 0 || n > uint64(us) {
				return errors.New("snappy length")
			}
		}
	}
	if values != md.NumValues {
		return errors.New("value count")
	}
	return nil
}

func isDictEncoding(e format.Encoding) bool {
	//lint:ignore SA1019 older writers (parquet-mr 1.x, DuckDB's v1 pages) still write PLAIN_DICTIONARY data pages
	return e == format.RLEDictionary || e == format.PlainDictionary
}

// chunkReaderAt serves reads of the file range [base, base+len(buf)).
type chunkReaderAt struct {
	base int64
	buf  []byte
}

func (c *chunkReaderAt) ReadAt(p []byte, off int64) (int, error) {
	off -= c.base
	if off < 0 || off > int64(len(c.buf)) {
		return 0, errors.New("read outside the column chunk")
	}
	n := copy(p, c.buf[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// byteArrayToStrings is a string array of parquet-go's byte array values
// (off has one more entry than there are values).
func byteArrayToStrings(mem memory.Allocator, v []byte, off []uint32) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	n := len(off) - 1
	b.Reserve(n)
	b.ReserveData(len(v))
	for i := range n {
		b.BinaryBuilder.Append(v[off[i]:off[i+1]])
	}
	return b.NewArray()
}
