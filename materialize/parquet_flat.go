package materialize

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// The flat path of the Parquet writer.
//
// When every column of a result is a number, a date, a time, a timestamp, a
// duration, a string or binary value, or a dictionary of strings or binary
// values (the layouts of nearly every query result), the file is written by
// this path instead of parquet-go's row writer: each column chunk is encoded
// straight from the Arrow buffers, with no parquet.Value per cell.
//
//   - numbers: a dictionary page and RLE_DICTIONARY codes when the chunk's
//     values repeat (see numDict), else DELTA_BINARY_PACKED for INT64 and
//     PLAIN for the others, built from the Arrow value buffer (nulls
//     compacted away), statistics computed in the same pass;
//   - definition levels: one RLE run when a page has no nulls;
//   - strings and binary values: PLAIN byte arrays (invalid UTF-8 of strings
//     replaced, as on the row path);
//   - dictionary arrays: a dictionary page holding the entries the row group
//     uses (in order of first use) and RLE_DICTIONARY pages of the Arrow
//     codes renumbered through an array (nothing is hashed unless the row
//     group's batches carry different dictionaries; then each entry used is
//     hashed once per batch dictionary); min and max compare entries, once
//     per page for each entry a page uses. A dictionary far larger than the
//     row group is written as PLAIN byte arrays (see dictPlainFactor).
//
// Pages hold flatPageRows rows (fewer for long byte arrays); V1 data pages
// (levels and values compressed together). The file has what the row path
// writes: the same schema elements (taken from a file parquet-go writes for
// the schema with no rows, so both paths agree on types), column-chunk
// statistics, a page index (column index with every page's bounds and null
// count, offset index) and row groups of ParquetRowGroupRows rows encoded in
// parallel. Other column types (booleans, decimals, float16, fixed-size
// binary, views, nested values, null columns, extension types) send the whole
// file through the row path.

const (
	// flatPageRows is the most rows of one data page.
	flatPageRows = 32 * 1024
	// flatPageBytes ends a byte-array page early once its values reach it.
	flatPageBytes = 1 << 20
	// flatIndexBytes is the longest byte-array bound kept in the column
	// index (parquet-go's default); longer ones are truncated.
	flatIndexBytes = 16
)

// flatKind is how a flat column is encoded.
type flatKind uint8

const (
	flatFixed flatKind = iota + 1 // numbers: PLAIN
	flatBytes                     // strings, binary: PLAIN byte arrays
	flatDict                      // dictionary of strings or binary: RLE_DICTIONARY
)

// flatColumn is the flat encoding of one column.
type flatColumn struct {
	kind flatKind
	phys format.Type
	utf8 bool // repair invalid UTF-8 (strings; not raw JSON texts)
}

// flatColumnOf returns the flat encoding of field f; ok is false when the
// field needs the row path.
func flatColumnOf(f arrow.Field) (flatColumn, bool) {
	if isRawJSON(f) {
		switch f.Type.(type) {
		case *arrow.StringType, *arrow.LargeStringType:
			return flatColumn{kind: flatBytes, phys: format.ByteArray}, true
		}
		return flatColumn{}, false
	}
	switch t := f.Type.(type) {
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type,
		*arrow.Date32Type, *arrow.Time32Type:
		return flatColumn{kind: flatFixed, phys: format.Int32}, true
	case *arrow.Int64Type, *arrow.Uint64Type, *arrow.Time64Type, *arrow.TimestampType, *arrow.DurationType:
		return flatColumn{kind: flatFixed, phys: format.Int64}, true
	case *arrow.Float32Type:
		return flatColumn{kind: flatFixed, phys: format.Float}, true
	case *arrow.Float64Type:
		return flatColumn{kind: flatFixed, phys: format.Double}, true
	case *arrow.StringType, *arrow.LargeStringType:
		return flatColumn{kind: flatBytes, phys: format.ByteArray, utf8: true}, true
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		return flatColumn{kind: flatBytes, phys: format.ByteArray}, true
	case *arrow.DictionaryType:
		if !arrow.IsInteger(t.IndexType.ID()) {
			return flatColumn{}, false
		}
		switch t.ValueType.(type) {
		case *arrow.StringType, *arrow.LargeStringType:
			return flatColumn{kind: flatDict, phys: format.ByteArray, utf8: true}, true
		case *arrow.BinaryType, *arrow.LargeBinaryType:
			return flatColumn{kind: flatDict, phys: format.ByteArray}, true
		}
	}
	return flatColumn{}, false
}

// flatFile writes a Parquet file whose columns are all flat. encode may run
// on several goroutines at once; commit and close run on the writer's.
type flatFile struct {
	w     io.Writer
	cols  []flatColumn
	paths [][]string
	codec compress.Codec
	meta  format.FileMetaData // schema, column orders, version, creator; row groups as committed

	offset  int64
	started bool
	indexes [][]format.ColumnIndex // per row group, per column
	offsets [][]format.OffsetIndex
}

// newFlatFile returns the flat writer of schema, or nil when a column needs
// the row path. pschema is the Parquet schema the row path would write;
// opts its writer options (codec, creator).
func newFlatFile(w io.Writer, schema *arrow.Schema, pschema *parquet.Schema, codec compress.Codec, opts ...parquet.WriterOption) (*flatFile, error) {
	cols := make([]flatColumn, schema.NumFields())
	for i, f := range schema.Fields() {
		c, ok := flatColumnOf(f)
		if !ok {
			return nil, nil
		}
		cols[i] = c
	}
	// The schema elements, column orders and creator parquet-go writes for
	// this schema: those of an empty file.
	var buf bytes.Buffer
	pw := parquet.NewGenericWriter[any](&buf, append([]parquet.WriterOption{pschema}, opts...)...)
	if err := pw.Close(); err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	meta := *pf.Metadata()
	if len(meta.Schema) != len(cols)+1 {
		return nil, nil
	}
	paths := make([][]string, len(cols))
	for i, c := range cols {
		el := meta.Schema[i+1]
		if !el.Type.Valid || el.Type.V != c.phys || el.NumChildren.V != 0 {
			return nil, nil // not the leaf the flat path writes: keep the row path
		}
		paths[i] = []string{el.Name}
	}
	meta.RowGroups = nil
	meta.NumRows = 0
	return &flatFile{w: w, cols: cols, paths: paths, codec: codec, meta: meta}, nil
}

// flatRowGroup is one encoded row group, not yet in the file.
type flatRowGroup struct {
	rows   int64
	chunks []flatChunk
}

// flatChunk is one encoded column chunk; offsets are relative to its start.
type flatChunk struct {
	data    []byte
	dictLen int64 // bytes of the dictionary page at the start (0: none)
	meta    format.ColumnMetaData
	index   format.ColumnIndex
	pages   []format.PageLocation
}

// encode encodes batches (the rows of one row group) column by column,
// checking ctx between pages.
func (f *flatFile) encode(ctx context.Context, batches []arrow.RecordBatch) (*flatRowGroup, error) {
	rg := &flatRowGroup{chunks: make([]flatChunk, len(f.cols))}
	for _, b := range batches {
		rg.rows += b.NumRows()
	}
	arrs := make([]arrow.Array, len(batches))
	var cw chunkWriter
	cw.codec = f.codec
	for c, col := range f.cols {
		for i, b := range batches {
			arrs[i] = b.Column(c)
		}
		cw.reset(ctx, col.phys, f.paths[c])
		var err error
		switch col.kind {
		case flatFixed:
			err = encodeFixedColumn(&cw, arrs)
		case flatBytes:
			err = encodeBytesColumn(&cw, arrs, col.utf8)
		case flatDict:
			err = encodeDictColumn(&cw, arrs, col.utf8)
		}
		if err != nil {
			return nil, err
		}
		rg.chunks[c] = cw.finish(rg.rows)
	}
	return rg, nil
}

// write writes p to the file, counting the offset.
func (f *flatFile) write(p []byte) error {
	if !f.started {
		f.started = true
		if err := f.write([]byte("PAR1")); err != nil {
			return err
		}
	}
	n, err := f.w.Write(p)
	f.offset += int64(n)
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}

// commit appends an encoded row group to the file.
func (f *flatFile) commit(rg *flatRowGroup) error {
	if !f.started {
		if err := f.write(nil); err != nil {
			return err
		}
	}
	group := format.RowGroup{NumRows: rg.rows, FileOffset: f.offset, Ordinal: int16(len(f.meta.RowGroups)),
		Columns: make([]format.ColumnChunk, len(rg.chunks))}
	indexes := make([]format.ColumnIndex, len(rg.chunks))
	offsets := make([]format.OffsetIndex, len(rg.chunks))
	for i := range rg.chunks {
		ch := &rg.chunks[i]
		start := f.offset
		if err := f.write(ch.data); err != nil {
			return err
		}
		ch.data = nil
		md := ch.meta
		md.DataPageOffset = start + ch.dictLen
		if ch.dictLen > 0 {
			md.DictionaryPageOffset = start
		}
		for j := range ch.pages {
			ch.pages[j].Offset += start
		}
		group.Columns[i] = format.ColumnChunk{FileOffset: start, MetaData: md}
		group.TotalByteSize += md.TotalUncompressedSize
		group.TotalCompressedSize += md.TotalCompressedSize
		indexes[i] = ch.index
		offsets[i] = format.OffsetIndex{PageLocations: ch.pages}
	}
	f.meta.RowGroups = append(f.meta.RowGroups, group)
	f.meta.NumRows += rg.rows
	f.indexes = append(f.indexes, indexes)
	f.offsets = append(f.offsets, offsets)
	return nil
}

// close writes the page index and the footer.
func (f *flatFile) close() error {
	if !f.started {
		if err := f.write(nil); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	enc := thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&buf))
	for g, indexes := range f.indexes {
		for c := range indexes {
			cc := &f.meta.RowGroups[g].Columns[c]
			cc.ColumnIndexOffset = f.offset + int64(buf.Len())
			if err := enc.Encode(&indexes[c]); err != nil {
				return fmt.Errorf("parquet: %w", err)
			}
			cc.ColumnIndexLength = int32(f.offset + int64(buf.Len()) - cc.ColumnIndexOffset)
		}
	}
	for g, offsets := range f.offsets {
		for c := range offsets {
			cc := &f.meta.RowGroups[g].Columns[c]
			cc.OffsetIndexOffset = f.offset + int64(buf.Len())
			if err := enc.Encode(&offsets[c]); err != nil {
				return fmt.Errorf("parquet: %w", err)
			}
			cc.OffsetIndexLength = int32(f.offset + int64(buf.Len()) - cc.OffsetIndexOffset)
		}
	}
	footer := buf.Len()
	if err := enc.Encode(&f.meta); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(buf.Len()-footer)))
	buf.WriteString("PAR1")
	return f.write(buf.Bytes())
}

// chunkWriter accumulates the pages of one column chunk.
type chunkWriter struct {
	ctx   context.Context
	codec compress.Codec
	phys  format.Type
	path  []string

	out      []byte // the data pages
	raw      []byte // scratch: a page before compression
	comp     []byte // scratch: a compressed page
	levels   []byte // scratch: encoded definition levels
	hdr      bytes.Buffer
	enc      *thrift.Encoder
	rows     int64 // rows in the pages written
	nulls    int64
	uncomp   int64 // uncompressed bytes, headers included
	pages    []format.PageLocation
	index    format.ColumnIndex
	encoding format.Encoding // of the data pages
	dict     []byte          // the dictionary page (header included), if any
	dictN    int

	min, max []byte // chunk bounds (nil: none)
}

func (cw *chunkWriter) reset(ctx context.Context, phys format.Type, path []string) {
	if cw.enc == nil {
		cw.enc = thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&cw.hdr))
	}
	cw.ctx, cw.phys, cw.path = ctx, phys, path
	cw.out, cw.rows, cw.nulls, cw.uncomp = nil, 0, 0, 0
	cw.pages, cw.index = nil, format.ColumnIndex{}
	cw.encoding, cw.dict, cw.dictN = format.Plain, nil, 0
	cw.min, cw.max = nil, nil
}

// appendLevels appends the definition levels of a page (V1: length
// prefixed) of rows values, defs holding one level per row when the page
// has nulls (nil: no nulls).
func (cw *chunkWriter) appendLevels(dst []byte, rows int, defs []uint8) ([]byte, error) {
	if defs == nil {
		cw.levels = binary.AppendUvarint(cw.levels[:0], uint64(rows)<<1)
		cw.levels = append(cw.levels, 1)
	} else {
		var err error
		if cw.levels, err = (&rle.Encoding{BitWidth: 1}).EncodeLevels(cw.levels, defs); err != nil {
			return dst, err
		}
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(cw.levels)))
	return append(dst, cw.levels...), nil
}

// compress returns the compressed page. (Storing the pages of chunks that
// do not compress, such as random floats, uncompressed would save little:
// the codecs give up on incompressible input quickly; and parquet-go reads
// every row group of a column with the codec of the first.)
func (cw *chunkWriter) compress(page []byte) ([]byte, error) {
	if cw.codec.CompressionCodec() == format.Uncompressed {
		return page, nil
	}
	var err error
	cw.comp, err = cw.codec.Encode(cw.comp[:0], page)
	return cw.comp, err
}

// appendPage appends page header h and body (compressed) to dst.
func (cw *chunkWriter) appendPage(dst []byte, h *format.PageHeader, raw []byte) ([]byte, error) {
	body, err := cw.compress(raw)
	if err != nil {
		return dst, fmt.Errorf("parquet: column %q: %w", cw.path[0], err)
	}
	h.UncompressedPageSize = int32(len(raw))
	h.CompressedPageSize = int32(len(body))
	cw.hdr.Reset()
	if err := cw.enc.Encode(h); err != nil {
		return dst, fmt.Errorf("parquet: %w", err)
	}
	cw.uncomp += int64(cw.hdr.Len() + len(raw))
	dst = append(dst, cw.hdr.Bytes()...)
	return append(dst, body...), nil
}

// dataPage writes one data page of rows rows (nulls of them null): values
// are the encoded non-null values, defs the levels (nil: no nulls), min and
// max the page bounds (ignored for a page of nulls).
func (cw *chunkWriter) dataPage(rows, nulls int, defs []uint8, values []byte, min, max []byte) error {
	if err := cw.ctx.Err(); err != nil {
		return err
	}
	var err error
	if cw.raw, err = cw.appendLevels(cw.raw[:0], rows, defs); err != nil {
		return err
	}
	cw.raw = append(cw.raw, values...)
	h := format.PageHeader{Type: format.DataPage, DataPageHeader: thrift.New(format.DataPageHeader{
		NumValues: int32(rows), Encoding: cw.encoding,
		DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE,
	})}
	start := len(cw.out)
	if cw.out, err = cw.appendPage(cw.out, &h, cw.raw); err != nil {
		return err
	}
	cw.pages = append(cw.pages, format.PageLocation{Offset: int64(start), CompressedPageSize: int32(len(cw.out) - start), FirstRowIndex: cw.rows})
	allNull := rows == nulls
	cw.index.NullPages = append(cw.index.NullPages, allNull)
	cw.index.NullCounts = append(cw.index.NullCounts, int64(nulls))
	if allNull {
		cw.index.MinValues = append(cw.index.MinValues, []byte{})
		cw.index.MaxValues = append(cw.index.MaxValues, []byte{})
	} else {
		lo, hi := min, max
		if cw.phys == format.ByteArray {
			lo, hi = truncateMin(min), truncateMax(max)
		}
		cw.index.MinValues = append(cw.index.MinValues, bytes.Clone(lo))
		cw.index.MaxValues = append(cw.index.MaxValues, bytes.Clone(hi))
	}
	cw.rows += int64(rows)
	cw.nulls += int64(nulls)
	return nil
}

// dictionaryPage sets the chunk's dictionary page: n PLAIN values.
func (cw *chunkWriter) dictionaryPage(n int, values []byte) error {
	h := format.PageHeader{Type: format.DictionaryPage, DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{
		NumValues: int32(n), Encoding: format.Plain,
	})}
	var err error
	cw.dict, err = cw.appendPage(nil, &h, values)
	cw.dictN = n
	return err
}

// finish returns the chunk of rows rows.
func (cw *chunkWriter) finish(rows int64) flatChunk {
	data := cw.out
	encs := []format.Encoding{format.RLE} // definition levels
	if cw.encoding == format.Plain || cw.dict != nil {
		encs = append(encs, format.Plain)
	}
	if cw.encoding != format.Plain {
		encs = append(encs, cw.encoding)
	}
	stats := []format.PageEncodingStats{{PageType: format.DataPage, Encoding: cw.encoding, Count: int32(len(cw.pages))}}
	if cw.dict != nil {
		data = append(cw.dict, cw.out...)
		for i := range cw.pages {
			cw.pages[i].Offset += int64(len(cw.dict))
		}
		stats = append([]format.PageEncodingStats{{PageType: format.DictionaryPage, Encoding: format.Plain, Count: 1}}, stats...)
	}
	st := format.Statistics{NullCount: cw.nulls}
	if cw.min != nil { // whole values, as parquet-go writes them
		st.MinValue, st.MaxValue = bytes.Clone(cw.min), bytes.Clone(cw.max)
	}
	cw.index.BoundaryOrder = format.Unordered
	ch := flatChunk{
		data:    data,
		dictLen: int64(len(cw.dict)),
		meta: format.ColumnMetaData{
			Type: cw.phys, Encoding: encs, PathInSchema: cw.path, Codec: cw.codec.CompressionCodec(),
			NumValues: rows, TotalUncompressedSize: cw.uncomp, TotalCompressedSize: int64(len(data)),
			Statistics: st, EncodingStats: stats,
		},
		index: cw.index,
		pages: cw.pages,
	}
	return ch
}

// truncateMin returns a lower bound of b at most flatIndexBytes long.
func truncateMin(b []byte) []byte {
	if len(b) <= flatIndexBytes {
		return b
	}
	return b[:flatIndexBytes]
}

// truncateMax returns an upper bound of b at most flatIndexBytes long (b
// itself when no shorter bound exists).
func truncateMax(b []byte) []byte {
	if len(b) <= flatIndexBytes {
		return b
	}
	t := bytes.Clone(b[:flatIndexBytes])
	for i := len(t) - 1; i >= 0; i-- {
		if t[i] != 0xff {
			t[i]++
			return t[:i+1]
		}
	}
	return b
}

// pageNulls tracks the definition levels of the page being built: none
// until its first null.
type pageNulls struct {
	defs  []uint8 // nil until the page's first null
	rows  int
	nulls int
	on    bool // defs is being kept
}

func (p *pageNulls) present() {
	if p.on {
		p.defs = append(p.defs, 1)
	}
	p.rows++
}

func (p *pageNulls) null() {
	if !p.on {
		p.on = true
		p.defs = p.defs[:0]
		for range p.rows {
			p.defs = append(p.defs, 1)
		}
	}
	p.defs = append(p.defs, 0)
	p.rows++
	p.nulls++
}

// presentN records n non-null rows.
func (p *pageNulls) presentN(n int) {
	if p.on {
		for range n {
			p.defs = append(p.defs, 1)
		}
	}
	p.rows += n
}

// levels returns the page's levels (nil: no nulls).
func (p *pageNulls) levels() []uint8 {
	if !p.on {
		return nil
	}
	return p.defs
}

func (p *pageNulls) reset() { p.defs, p.rows, p.nulls, p.on = p.defs[:0], 0, 0, false }

// fixedSource are the Arrow value types of flat numeric columns.
type fixedSource interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// fixedPhys are the Go types of Parquet's numeric physical types.
type fixedPhys interface {
	int32 | int64 | float32 | float64
}

// encodeFixedColumn encodes a numeric column.
func encodeFixedColumn(cw *chunkWriter, arrs []arrow.Array) error {
	switch a := arrs[0].(type) {
	case *array.Int8:
		return encodeFixed(cw, arrs, (*array.Int8).Int8Values, int32(1))
	case *array.Int16:
		return encodeFixed(cw, arrs, (*array.Int16).Int16Values, int32(1))
	case *array.Int32:
		return encodeFixed(cw, arrs, (*array.Int32).Int32Values, int32(1))
	case *array.Uint8:
		return encodeFixed(cw, arrs, (*array.Uint8).Uint8Values, int32(1))
	case *array.Uint16:
		return encodeFixed(cw, arrs, (*array.Uint16).Uint16Values, int32(1))
	case *array.Uint32:
		return encodeFixed(cw, arrs, (*array.Uint32).Uint32Values, int32(1))
	case *array.Date32:
		return encodeFixed(cw, arrs, (*array.Date32).Date32Values, int32(1))
	case *array.Time32:
		scale := int32(1)
		if a.DataType().(*arrow.Time32Type).Unit == arrow.Second {
			scale = 1000
		}
		return encodeFixed(cw, arrs, (*array.Time32).Time32Values, scale)
	case *array.Int64:
		return encodeFixed(cw, arrs, (*array.Int64).Int64Values, int64(1))
	case *array.Uint64:
		return encodeFixed(cw, arrs, (*array.Uint64).Uint64Values, int64(1))
	case *array.Time64:
		return encodeFixed(cw, arrs, (*array.Time64).Time64Values, int64(1))
	case *array.Timestamp:
		_, scale := parquetTimeUnit(a.DataType().(*arrow.TimestampType).Unit)
		return encodeFixed(cw, arrs, (*array.Timestamp).TimestampValues, scale)
	case *array.Duration:
		return encodeFixed(cw, arrs, (*array.Duration).DurationValues, int64(1))
	case *array.Float32:
		return encodeFixed(cw, arrs, (*array.Float32).Float32Values, float32(1))
	case *array.Float64:
		return encodeFixed(cw, arrs, (*array.Float64).Float64Values, float64(1))
	}
	return fmt.Errorf("parquet: no flat encoding of %s", arrs[0].DataType())
}

// fixedBounds are the min and max of a set of numbers in their source
// order (unsigned types compare unsigned), NaN left out.
type fixedBounds[S fixedSource] struct {
	min, max S
	has      bool
	nan      bool // a NaN was seen
}

func (b *fixedBounds[S]) add(x S) {
	if x != x { // NaN
		b.nan = true
		return
	}
	if !b.has {
		b.min, b.max, b.has = x, x, true
		return
	}
	if x < b.min {
		b.min = x
	}
	if x > b.max {
		b.max = x
	}
}

func (b *fixedBounds[S]) merge(o fixedBounds[S]) {
	if o.has {
		b.add(o.min)
		b.add(o.max)
	}
	b.nan = b.nan || o.nan
}

// bytes returns the PLAIN encodings of the bounds converted to P (scaled):
// zero bounds of floats signed as the format asks (min -0, max +0), NaN
// when only NaN was seen.
func boundBytes[S fixedSource, P fixedPhys](b fixedBounds[S], scale P) (lo, hi []byte) {
	conv := func(x S, zeroSign float64) []byte {
		p := P(x) * scale
		if p == 0 && isFloat[P]() {
			p = P(math.Copysign(0, zeroSign))
		}
		return plainBytes(p)
	}
	if !b.has {
		nan := P(math.NaN())
		return plainBytes(nan), plainBytes(nan)
	}
	return conv(b.min, -1), conv(b.max, 1)
}

func isFloat[P fixedPhys]() bool {
	var one P = 1
	return one/2 != 0
}

// plainBytes is the PLAIN encoding of one number.
func plainBytes[P fixedPhys](p P) []byte {
	b := make([]byte, unsafe.Sizeof(p))
	switch unsafe.Sizeof(p) {
	case 4:
		binary.LittleEndian.PutUint32(b, *(*uint32)(unsafe.Pointer(&p)))
	default:
		binary.LittleEndian.PutUint64(b, *(*uint64)(unsafe.Pointer(&p)))
	}
	return b
}

// asBytes views a slice of numbers as its PLAIN encoding (little-endian).
func asBytes[P fixedPhys](v []P) []byte {
	if len(v) == 0 {
		return nil
	}
	var p P
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(p)))
}

// Numeric dictionaries: a numeric column chunk whose values repeat (keys,
// codes, measures with few distinct values) is written as a dictionary page
// of its distinct values and RLE_DICTIONARY codes — a few bits a value
// instead of 4 or 8 bytes for the codec to compress. The values are hashed
// (their bit patterns, in a small open-addressing table); the attempt stops
// once a chunk has more than numDictMax distinct values, or more than half
// as many distinct values as values after each flatPageRows values.
const numDictMax = 1 << 16

// numDict is the dictionary of a numeric column chunk: bit patterns of the
// values (zero-extended to 64 bits) in order of first appearance.
type numDict struct {
	keys   []uint64 // open-addressing table
	slots  []int32  // code+1 of keys[i]; 0: empty
	shift  uint
	values []uint64 // the dictionary, by code
}

func newNumDict() *numDict {
	const bits = 10
	return &numDict{keys: make([]uint64, 1<<bits), slots: make([]int32, 1<<bits), shift: 64 - bits}
}

// code returns k's code, adding k to the dictionary when it is new.
func (d *numDict) code(k uint64) int32 {
	mask := uint64(len(d.keys) - 1)
	for h := (k * 0x9E3779B97F4A7C15) >> d.shift; ; h = (h + 1) & mask {
		c := d.slots[h]
		if c == 0 {
			code := int32(len(d.values))
			d.values = append(d.values, k)
			d.keys[h], d.slots[h] = k, code+1
			if 2*len(d.values) > len(d.keys) {
				d.grow()
			}
			return code
		}
		if d.keys[h] == k {
			return c - 1
		}
	}
}

func (d *numDict) grow() {
	keys, slots := d.keys, d.slots
	d.keys, d.slots, d.shift = make([]uint64, 2*len(keys)), make([]int32, 2*len(keys)), d.shift-1
	mask := uint64(len(d.keys) - 1)
	for i, c := range slots {
		if c == 0 {
			continue
		}
		h := (keys[i] * 0x9E3779B97F4A7C15) >> d.shift
		for d.slots[h] != 0 {
			h = (h + 1) & mask
		}
		d.keys[h], d.slots[h] = keys[i], c
	}
}

// bitsOf is the bit pattern of p zero-extended to 64 bits.
func bitsOf[P fixedPhys](p P) uint64 {
	var k uint64
	*(*P)(unsafe.Pointer(&k)) = p
	return k
}

// fixedCodes returns the dictionary and the codes of the non-null values of
// a numeric column chunk, or nil when the chunk should be written PLAIN.
func fixedCodes[A arrow.Array, S fixedSource, P fixedPhys](arrs []arrow.Array, values func(A) []S, scale P) (*numDict, []int32) {
	d := newNumDict()
	codes := make([]int32, 0, ParquetRowGroupRows)
	next := flatPageRows
	for _, arr := range arrs {
		src := values(arr.(A))
		m, _ := maskOf(arr)
		for i, x := range src {
			if m.null(i) {
				continue
			}
			codes = append(codes, d.code(bitsOf(P(x)*scale)))
			if len(d.values) > numDictMax {
				return nil, nil
			}
			if len(codes) == next {
				if 2*len(d.values) > len(codes) {
					return nil, nil
				}
				next += flatPageRows
			}
		}
	}
	if len(codes) >= numDictMinCheck && 2*len(d.values) > len(codes) {
		return nil, nil
	}
	return d, codes
}

// numDictMinCheck is the least values of a chunk whose distinct count is
// checked at its end (a short last row group of distinct keys is written
// PLAIN like the others).
const numDictMinCheck = 1024

// encodeFixed encodes a numeric column whose arrays give their values with
// values, written as P(v)*scale: with a dictionary when its values repeat
// (see numDict), else PLAIN.
func encodeFixed[A arrow.Array, S fixedSource, P fixedPhys](cw *chunkWriter, arrs []arrow.Array, values func(A) []S, scale P) error {
	for _, arr := range arrs {
		if _, ok := maskOf(arr); !ok {
			return fmt.Errorf("parquet: %s array without a validity bitmap", arr.DataType())
		}
	}
	dict, codes := fixedCodes(arrs, values, scale)
	var (
		vals        []P
		pageCodes   []int32 // dictionary mode: the page's codes
		next        int     // dictionary mode: the next value's index in codes
		width       int
		scratch     []byte
		nulls       pageNulls
		page, chunk fixedBounds[S]
	)
	deltaMode := false
	if dict != nil {
		cw.encoding = format.RLEDictionary
		width = max(bits.Len(uint(max(len(dict.values)-1, 0))), 1)
	} else {
		vals = make([]P, 0, flatPageRows)
		if cw.phys == format.Int64 {
			deltaMode = true
			cw.encoding = format.DeltaBinaryPacked
		}
	}
	flush := func() error {
		if nulls.rows == 0 {
			return nil
		}
		lo, hi := boundBytes(page, scale)
		body := asBytes(vals)
		if dict != nil {
			var err error
			if scratch, err = (&rle.Encoding{BitWidth: width}).EncodeInt32(scratch, pageCodes); err != nil {
				return fmt.Errorf("parquet: %w", err)
			}
			body = append(append(make([]byte, 0, len(scratch)+1), byte(width)), scratch...)
			pageCodes = pageCodes[:0]
		} else if deltaMode {
			var err error
			if scratch, err = (&delta.BinaryPackedEncoding{}).EncodeInt64(scratch, *(*[]int64)(unsafe.Pointer(&vals))); err != nil {
				return fmt.Errorf("parquet: %w", err)
			}
			body = scratch
		}
		if err := cw.dataPage(nulls.rows, nulls.nulls, nulls.levels(), body, lo, hi); err != nil {
			return err
		}
		chunk.merge(page)
		page = fixedBounds[S]{}
		vals = vals[:0]
		nulls.reset()
		return nil
	}
	for _, arr := range arrs {
		src := values(arr.(A))
		m, _ := maskOf(arr)
		for lo := 0; lo < len(src); {
			hi := min(len(src), lo+flatPageRows-nulls.rows)
			if m.bits == nil {
				seg := src[lo:hi]
				switch {
				case dict != nil:
					pageCodes = codes[next-len(pageCodes) : next+len(seg)]
					next += len(seg)
				case scale == 1:
					for _, x := range seg {
						vals = append(vals, P(x))
					}
				default:
					for _, x := range seg {
						vals = append(vals, P(x)*scale)
					}
				}
				for _, x := range seg {
					page.add(x)
				}
				nulls.presentN(len(seg))
			} else {
				for i := lo; i < hi; i++ {
					if m.null(i) {
						nulls.null()
						continue
					}
					x := src[i]
					if dict != nil {
						pageCodes = codes[next-len(pageCodes) : next+1]
						next++
					} else {
						vals = append(vals, P(x)*scale)
					}
					page.add(x)
					nulls.present()
				}
			}
			lo = hi
			if nulls.rows == flatPageRows {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if chunk.has || chunk.nan {
		cw.min, cw.max = boundBytes(chunk, scale)
	}
	if dict != nil {
		plain := make([]P, len(dict.values))
		for i, k := range dict.values {
			plain[i] = *(*P)(unsafe.Pointer(&k))
		}
		return cw.dictionaryPage(len(plain), asBytes(plain))
	}
	return nil
}

// byteBounds are the min and max of byte strings.
type byteBounds struct {
	min, max []byte
	has      bool
}

func (b *byteBounds) add(v []byte) {
	if !b.has {
		b.min, b.max, b.has = v, v, true
		return
	}
	if bytes.Compare(v, b.min) < 0 {
		b.min = v
	} else if bytes.Compare(v, b.max) > 0 {
		b.max = v
	}
}

// byteSource is an offset-based byte array: value j is data[offs[j]-base :
// offs[j+1]-base].
type byteSource[O int32 | int64] struct {
	offs []O
	data []byte
}

func byteSourceOf[O int32 | int64](offs []O, data []byte) byteSource[O] {
	return byteSource[O]{offs: offs, data: data}
}

// encodeBytesColumn encodes a string or binary column as PLAIN byte arrays.
func encodeBytesColumn(cw *chunkWriter, arrs []arrow.Array, fixUTF8 bool) error {
	var st bytesState
	st.vals = make([]byte, 0, flatPageBytes+flatPageBytes/4)
	for _, arr := range arrs {
		m, ok := maskOf(arr)
		if !ok {
			return fmt.Errorf("parquet: %s array without a validity bitmap", arr.DataType())
		}
		var err error
		switch a := arr.(type) {
		case *array.String:
			err = addBytes(&st, cw, byteSourceOf(a.ValueOffsets(), a.ValueBytes()), m, fixUTF8)
		case *array.LargeString:
			err = addBytes(&st, cw, byteSourceOf(a.ValueOffsets(), a.ValueBytes()), m, fixUTF8)
		case *array.Binary:
			err = addBytes(&st, cw, byteSourceOf(a.ValueOffsets(), a.ValueBytes()), m, false)
		case *array.LargeBinary:
			err = addBytes(&st, cw, byteSourceOf(a.ValueOffsets(), a.ValueBytes()), m, false)
		default:
			err = fmt.Errorf("parquet: no flat encoding of %s", arr.DataType())
		}
		if err != nil {
			return err
		}
	}
	if err := st.flush(cw); err != nil {
		return err
	}
	if st.chunk.has {
		cw.min, cw.max = st.chunk.min, st.chunk.max
	}
	return nil
}

// bytesState is the page being built of a byte-array column.
type bytesState struct {
	vals        []byte
	nulls       pageNulls
	page, chunk byteBounds
}

func (st *bytesState) flush(cw *chunkWriter) error {
	if st.nulls.rows == 0 {
		return nil
	}
	if err := cw.dataPage(st.nulls.rows, st.nulls.nulls, st.nulls.levels(), st.vals, st.page.min, st.page.max); err != nil {
		return err
	}
	if st.page.has {
		st.chunk.add(st.page.min)
		st.chunk.add(st.page.max)
	}
	st.page = byteBounds{}
	st.vals = st.vals[:0]
	st.nulls.reset()
	return nil
}

// put appends one non-null value, flushing the page when it is full.
func (st *bytesState) put(cw *chunkWriter, b []byte) error {
	st.vals = binary.LittleEndian.AppendUint32(st.vals, uint32(len(b)))
	st.vals = append(st.vals, b...)
	st.page.add(b)
	st.nulls.present()
	if st.nulls.rows == flatPageRows || len(st.vals) >= flatPageBytes {
		return st.flush(cw)
	}
	return nil
}

// putNull appends a null, flushing the page when it is full.
func (st *bytesState) putNull(cw *chunkWriter) error {
	st.nulls.null()
	if st.nulls.rows == flatPageRows {
		return st.flush(cw)
	}
	return nil
}

// utf8Segment is how many values of a string array are checked for valid
// UTF-8 at once (see repairUTF8).
const utf8Segment = 4096

// addBytes appends the values of one array.
func addBytes[O int32 | int64](st *bytesState, cw *chunkWriter, src byteSource[O], m nullMask, fixUTF8 bool) error {
	n := len(src.offs) - 1
	base := src.offs[0]
	for lo := 0; lo < n; lo += utf8Segment {
		hi := min(n, lo+utf8Segment)
		end := int(src.offs[hi] - base)
		valid := !fixUTF8 || utf8Valid(src.data[src.offs[lo]-base:end])
		if bytesRuns && valid && m.bits == nil && (!fixUTF8 || runeStarts(src, lo, hi, end)) {
			if err := putRun(st, cw, src, lo, hi); err != nil {
				return err
			}
			continue
		}
		for j := lo; j < hi; j++ {
			var err error
			if m.null(j) {
				err = st.putNull(cw)
			} else {
				s, e := int(src.offs[j]-base), int(src.offs[j+1]-base)
				b := src.data[s:e:e]
				if fixUTF8 {
					b = repairUTF8(src.data, s, e, end, valid)
				}
				err = st.put(cw, b)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// bytesRuns turns putRun on (a variable so that a test can compare its
// output with put's, byte for byte).
var bytesRuns = true

// runeStarts reports whether every value lo..hi-1 of src starts a
// character (so that, in a range valid as a whole, none straddles a value
// boundary and every value is valid on its own; see repairUTF8).
func runeStarts[O int32 | int64](src byteSource[O], lo, hi, end int) bool {
	base := src.offs[0]
	for j := lo; j < hi; j++ {
		if s := int(src.offs[j] - base); s < end && !utf8.RuneStart(src.data[s]) {
			return false
		}
	}
	return true
}

// putRun appends values lo..hi-1 of src (none null, none to repair) as
// put does one at a time — same pages, same bounds — writing each page's
// share of them in one loop into room grown once.
func putRun[O int32 | int64](st *bytesState, cw *chunkWriter, src byteSource[O], lo, hi int) error {
	base := src.offs[0]
	for j := lo; j < hi; {
		// the values up to the one that fills the page (rows or bytes)
		room := flatPageRows - st.nulls.rows
		size := len(st.vals)
		k := j
		for k < hi && k-j < room && size < flatPageBytes {
			size += 4 + int(src.offs[k+1]-src.offs[k])
			k++
		}
		out := slices.Grow(st.vals, size-len(st.vals))[:size]
		at := len(st.vals)
		for v := j; v < k; v++ {
			b := src.data[src.offs[v]-base : src.offs[v+1]-base]
			binary.LittleEndian.PutUint32(out[at:], uint32(len(b)))
			at += 4 + copy(out[at+4:], b)
			st.page.add(b)
		}
		st.vals = out
		st.nulls.presentN(k - j)
		j = k
		if st.nulls.rows == flatPageRows || len(st.vals) >= flatPageBytes {
			if err := st.flush(cw); err != nil {
				return err
			}
		}
	}
	return nil
}

// addDictBytes appends the values of a dictionary array (codes idx,
// validity m, entries through entry) as byte arrays.
func addDictBytes[I dictIndex](st *bytesState, cw *chunkWriter, idx []I, m nullMask, entry func(int) ([]byte, bool), fixUTF8 bool) error {
	for i, k := range idx {
		var err error
		if m.null(i) {
			err = st.putNull(cw)
		} else if b, null := entry(int(k)); null {
			err = st.putNull(cw)
		} else {
			if fixUTF8 && !utf8Valid(b) {
				b = stringBytes(toValidUTF8(string(b)))
			}
			err = st.put(cw, b)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dictState is the dictionary and the page being built of a dictionary
// column chunk.
type dictState struct {
	fixUTF8 bool
	entries [][]byte         // the chunk's dictionary, in order of first use
	plain   []byte           // entries, PLAIN encoded
	seen    map[string]int32 // entry -> code, when the batches' dictionaries differ
	stamp   []int32          // stamp[code] == pageNo: code's entry is in page's bounds
	pageNo  int32
	codes   []int32 // the page's codes
	nulls   pageNulls
	page    byteBounds
	chunk   byteBounds
	scratch []byte
}

// assign returns the chunk code of entry (nil: a null entry, code -1).
func (d *dictState) assign(entry []byte, isNull bool) int32 {
	if isNull {
		return -1
	}
	if d.fixUTF8 && !utf8Valid(entry) {
		entry = stringBytes(toValidUTF8(string(entry)))
	}
	code := int32(len(d.entries))
	if d.seen != nil {
		if c, ok := d.seen[string(entry)]; ok {
			return c
		}
		d.seen[string(entry)] = code
	}
	d.entries = append(d.entries, entry)
	d.stamp = append(d.stamp, 0)
	d.plain = binary.LittleEndian.AppendUint32(d.plain, uint32(len(entry)))
	d.plain = append(d.plain, entry...)
	return code
}

func (d *dictState) flush(cw *chunkWriter) error {
	if d.nulls.rows == 0 {
		return nil
	}
	width := max(bits.Len(uint(len(d.entries))), 1)
	if len(d.entries) > 0 {
		width = max(bits.Len(uint(len(d.entries)-1)), 1)
	}
	var err error
	if d.scratch, err = (&rle.Encoding{BitWidth: width}).EncodeInt32(d.scratch, d.codes); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	vals := append(make([]byte, 0, len(d.scratch)+1), byte(width))
	vals = append(vals, d.scratch...)
	if err := cw.dataPage(d.nulls.rows, d.nulls.nulls, d.nulls.levels(), vals, d.page.min, d.page.max); err != nil {
		return err
	}
	if d.page.has {
		d.chunk.add(d.page.min)
		d.chunk.add(d.page.max)
	}
	d.page = byteBounds{}
	d.codes = d.codes[:0]
	d.nulls.reset()
	d.pageNo++
	return nil
}

// dictEntries returns the accessor of the entries of a dictionary (string
// or binary values): an entry's bytes and whether it is null.
func dictEntries(dict arrow.Array) func(k int) ([]byte, bool) {
	switch v := dict.(type) {
	case *array.String:
		return func(k int) ([]byte, bool) { return stringBytes(v.Value(k)), v.IsNull(k) }
	case *array.LargeString:
		return func(k int) ([]byte, bool) { return stringBytes(v.Value(k)), v.IsNull(k) }
	case *array.Binary:
		return func(k int) ([]byte, bool) { return v.Value(k), v.IsNull(k) }
	case *array.LargeBinary:
		return func(k int) ([]byte, bool) { return v.Value(k), v.IsNull(k) }
	}
	return nil
}

// withCodes calls f16 or f32 with the codes of da: int16 and int32
// indices as they are, the other widths converted to int32 in *buf (kept
// for the next call; a dictionary has fewer than 2^31 entries, and the
// codes under nulls are never read).
func withCodes(da *array.Dictionary, buf *[]int32, f16 func([]int16) error, f32 func([]int32) error) error {
	switch ix := da.Indices().(type) {
	case *array.Int16:
		return f16(ix.Int16Values())
	case *array.Int32:
		return f32(ix.Int32Values())
	}
	n := da.Len()
	b := slices.Grow((*buf)[:0], n)[:n]
	switch ix := da.Indices().(type) {
	case *array.Int8:
		widen(b, ix.Int8Values())
	case *array.Int64:
		widen(b, ix.Int64Values())
	case *array.Uint8:
		widen(b, ix.Uint8Values())
	case *array.Uint16:
		widen(b, ix.Uint16Values())
	case *array.Uint32:
		widen(b, ix.Uint32Values())
	case *array.Uint64:
		widen(b, ix.Uint64Values())
	default:
		return fmt.Errorf("parquet: no flat encoding of dictionary codes %s", da.Indices().DataType())
	}
	*buf = b
	return f32(b)
}

// widen converts codes to int32.
func widen[I dictIndex](dst []int32, src []I) {
	for i, c := range src {
		dst[i] = int32(c)
	}
}

// dictPlainFactor: a row group whose rows use a dictionary more than this
// many times their number of entries is written as plain byte arrays (the
// entries used are nearly all distinct, and renumbering them through an
// array as long as the dictionary would cost more than the rows).
const dictPlainFactor = 2

// encodeDictColumn encodes a column of dictionary arrays as a dictionary
// page of the entries used and RLE_DICTIONARY data pages; or, when a
// dictionary is much larger than the row group (see dictPlainFactor), as
// PLAIN byte arrays.
func encodeDictColumn(cw *chunkWriter, arrs []arrow.Array, fixUTF8 bool) error {
	rows, biggest := 0, 0
	for _, a := range arrs {
		da, ok := a.(*array.Dictionary)
		if !ok || dictEntries(da.Dictionary()) == nil {
			return fmt.Errorf("parquet: no flat encoding of %s", a.DataType())
		}
		if _, ok := maskOf(da); !ok {
			return fmt.Errorf("parquet: %s array without a validity bitmap", a.DataType())
		}
		rows += a.Len()
		biggest = max(biggest, da.Dictionary().Len())
	}
	if biggest > dictPlainFactor*rows+dictPrecomputeSlack {
		return encodeDictPlain(cw, arrs, fixUTF8)
	}
	d := &dictState{fixUTF8: fixUTF8, pageNo: 1, codes: make([]int32, 0, flatPageRows)}
	for _, a := range arrs[1:] {
		if a.Data().Dictionary() != arrs[0].Data().Dictionary() {
			d.seen = make(map[string]int32)
			break
		}
	}
	cw.encoding = format.RLEDictionary
	var (
		prev  arrow.ArrayData
		remap []int32 // per entry of the batch dictionary: 0 unassigned, -1 null, else code+1
		entry func(k int) ([]byte, bool)
		m     nullMask
	)
	var wide []int32
	visit := func(da *array.Dictionary) error {
		return withCodes(da, &wide,
			func(x []int16) error { return addCodes(d, cw, x, m, remap, entry) },
			func(x []int32) error { return addCodes(d, cw, x, m, remap, entry) })
	}
	for _, arr := range arrs {
		da := arr.(*array.Dictionary)
		m, _ = maskOf(da)
		if dd := da.Data().Dictionary(); dd != prev || remap == nil {
			prev = dd
			remap = make([]int32, da.Dictionary().Len())
			entry = dictEntries(da.Dictionary())
		}
		if err := visit(da); err != nil {
			return err
		}
	}
	if err := d.flush(cw); err != nil {
		return err
	}
	if d.chunk.has {
		cw.min, cw.max = d.chunk.min, d.chunk.max
	}
	return cw.dictionaryPage(len(d.entries), d.plain)
}

// encodeDictPlain encodes a column of dictionary arrays as PLAIN byte
// arrays.
func encodeDictPlain(cw *chunkWriter, arrs []arrow.Array, fixUTF8 bool) error {
	var st bytesState
	st.vals = make([]byte, 0, flatPageBytes+flatPageBytes/4)
	var (
		entry func(k int) ([]byte, bool)
		m     nullMask
	)
	var wide []int32
	visit := func(da *array.Dictionary) error {
		return withCodes(da, &wide,
			func(x []int16) error { return addDictBytes(&st, cw, x, m, entry, fixUTF8) },
			func(x []int32) error { return addDictBytes(&st, cw, x, m, entry, fixUTF8) })
	}
	for _, arr := range arrs {
		da := arr.(*array.Dictionary)
		m, _ = maskOf(da)
		entry = dictEntries(da.Dictionary())
		if err := visit(da); err != nil {
			return err
		}
	}
	if err := st.flush(cw); err != nil {
		return err
	}
	if st.chunk.has {
		cw.min, cw.max = st.chunk.min, st.chunk.max
	}
	return nil
}

// addCodes appends the rows of one dictionary array (codes idx, validity
// m), renumbering its codes through remap.
func addCodes[I dictIndex](d *dictState, cw *chunkWriter, idx []I, m nullMask, remap []int32, entry func(int) ([]byte, bool)) error {
	for lo := 0; lo < len(idx); {
		hi := min(len(idx), lo+flatPageRows-d.nulls.rows)
		for i := lo; i < hi; i++ {
			if m.null(i) {
				d.nulls.null()
				continue
			}
			k := idx[i]
			c := remap[k]
			if c == 0 {
				c = d.assign(entry(int(k))) + 1
				if c == 0 {
					c = -1
				}
				remap[k] = c
			}
			if c < 0 {
				d.nulls.null()
				continue
			}
			code := c - 1
			d.codes = append(d.codes, code)
			if d.stamp[code] != d.pageNo {
				d.stamp[code] = d.pageNo
				d.page.add(d.entries[code])
			}
			d.nulls.present()
		}
		lo = hi
		if d.nulls.rows == flatPageRows {
			if err := d.flush(cw); err != nil {
				return err
			}
		}
	}
	return nil
}
