package materialize

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"

	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/qerr"
)

// Spilling.
//
// A result larger than the spill thresholds (Config.SpillRows,
// Config.SpillBytes) is streamed, while it is collected, into a Parquet file
// of the artifact store (WriteParquet's format: row groups of
// ParquetRowGroupRows rows with a page index), and its batches are released:
// the Table behind the result handle then holds an open file, not the rows.
// Slice reads a row range back by locating the row groups that hold it (from
// the row group sizes), seeking each to the first row needed with the page
// index (parquet-go's SeekToRow) and reading just the rows needed, so the
// cost of a page does not depend on where it lies in the result.
//
// Rows read back have the original Arrow types, except: dictionary columns
// come back as their value type, string_view and binary_view as utf8 and
// binary, date64 truncated to the day (as written), and nested or exotic
// columns (lists, structs, maps, unions, ...) as utf8 columns holding their
// JSON text, marked with the rawJSONKey field metadata so that the JSON
// encoder, the CSV writer and the Parquet writer emit exactly what they
// would have for the original values. Result.Columns keeps reporting the
// original types.

// spill is a Table's rows in a Parquet file.
type spill struct {
	store  *artifacts.Store
	art    artifacts.Artifact
	f      artifacts.File
	pf     *parquet.File
	schema *arrow.Schema // the decoded schema of what read returns
	dec    []decoder     // per column
	starts []int64       // starts[g]: first row of row group g; starts[len] = rows
	mem    memory.Allocator

	published atomic.Bool     // the artifact was handed out as a file result: keep it
	hold      *artifacts.Hold // until published or deleted: the next server deletes the file should this one die
	closeOnce sync.Once
}

// decoder appends a non-null Parquet value to a builder of the decoded type.
type decoder func(b array.Builder, v parquet.Value)

// spillWriter streams batches into a spill file.
type spillWriter struct {
	w      *artifacts.Writer
	pw     *parquetWriter
	schema *arrow.Schema
}

// startSpill starts owner's spill file compressed with codec: the codec of
// Parquet artifacts, since the spill file of a whole result is handed out
// as its Parquet file.
func startSpill(store *artifacts.Store, schema *arrow.Schema, owner string, codec ParquetCodec) (*spillWriter, error) {
	c, err := codec.codec()
	if err != nil {
		return nil, err
	}
	w, err := store.Create(FormatParquet, owner)
	if err != nil {
		return nil, err
	}
	pw, err := newParquetWriterCodec(w, schema, c)
	if err != nil {
		w.Abort()
		return nil, err
	}
	return &spillWriter{w: w, pw: pw, schema: schema}, nil
}

func (sw *spillWriter) write(ctx context.Context, b arrow.RecordBatch) error {
	return sw.pw.write(ctx, b)
}

func (sw *spillWriter) abort() {
	sw.pw.abort()
	sw.w.Abort()
}

// finish closes the Parquet file, commits the artifact and opens it for
// reading; it returns a Table of rows rows backed by the file.
func (sw *spillWriter) finish(store *artifacts.Store, rows int64) (*Table, error) {
	if err := sw.pw.close(); err != nil {
		sw.w.Abort()
		return nil, err
	}
	art, hold, err := sw.w.CommitHeld()
	if err != nil {
		return nil, err
	}
	sp, err := openSpill(store, art, sw.schema)
	if err != nil {
		_ = store.Delete(art.URI)
		hold.Release()
		return nil, err
	}
	sp.hold = hold
	if n := sp.starts[len(sp.starts)-1]; n != rows {
		sp.close()
		return nil, qerr.Internal(fmt.Errorf("spill file has %d rows, wrote %d", n, rows), "cannot spill the result to disk")
	}
	t := &Table{schema: sw.schema, rows: rows, starts: []int64{0}, spill: sp}
	t.refs.Store(1)
	return t, nil
}

// openSpill opens a committed spill artifact whose rows have schema.
func openSpill(store *artifacts.Store, art artifacts.Artifact, schema *arrow.Schema) (*spill, error) {
	f, err := store.Reader(art)
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, art.Size, parquet.SkipBloomFilters(true))
	if err != nil {
		f.Close()
		return nil, qerr.Internal(err, "cannot open the spill file")
	}
	sp := &spill{store: store, art: art, f: f, pf: pf, mem: memory.DefaultAllocator}
	fields := make([]arrow.Field, schema.NumFields())
	sp.dec = make([]decoder, len(fields))
	for i, fd := range schema.Fields() {
		fields[i], sp.dec[i] = decodedField(fd)
	}
	md := schema.Metadata()
	sp.schema = arrow.NewSchema(fields, &md)
	if n := len(pf.Root().Columns()); n != len(fields) {
		sp.close()
		return nil, qerr.Internal(fmt.Errorf("spill file has %d columns, want %d", n, len(fields)), "cannot open the spill file")
	}
	sp.starts = []int64{0}
	for _, rg := range pf.RowGroups() {
		sp.starts = append(sp.starts, sp.starts[len(sp.starts)-1]+rg.NumRows())
	}
	return sp, nil
}

// close closes the file and, unless the artifact was handed out, deletes it.
func (sp *spill) close() {
	sp.closeOnce.Do(func() {
		_ = sp.f.Close()
		if !sp.published.Load() {
			_ = sp.store.Delete(sp.art.URI)
		}
		sp.hold.Release()
	})
}

// publish keeps the spill file after the table is released (it was handed
// out, or other replicas read it): it lives until the artifact TTL.
func (sp *spill) publish() {
	sp.published.Store(true)
	sp.hold.Release()
}

// readChunk is the number of rows read from parquet-go at a time.
const readChunk = 1024

// read returns rows [offset, offset+n) as an in-memory Table of the decoded
// schema: one batch per row group touched.
func (sp *spill) read(ctx context.Context, offset, n int64) (*Table, error) {
	var batches []arrow.RecordBatch
	fail := func(err error) (*Table, error) {
		for _, b := range batches {
			b.Release()
		}
		if ctx.Err() != nil {
			return nil, qerr.As(ctx.Err())
		}
		var qe *qerr.Error
		if errors.As(err, &qe) {
			return nil, err
		}
		return nil, qerr.Internal(err, "cannot read the spilled result")
	}
	end := offset + n
	groups := sp.pf.RowGroups()
	g := sort.Search(len(groups), func(i int) bool { return sp.starts[i+1] > offset })
	rowBuf := make([]parquet.Row, readChunk)
	for ; offset < end && g < len(groups); g++ {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		take := min(end, sp.starts[g+1]) - offset
		b, err := sp.readGroup(groups[g], offset-sp.starts[g], take, rowBuf)
		if err != nil {
			return fail(err)
		}
		batches = append(batches, b)
		offset += take
	}
	t := newTable(sp.schema, batches)
	return t, nil
}

// readGroup reads take rows of row group rg starting at its row local.
func (sp *spill) readGroup(rg parquet.RowGroup, local, take int64, rowBuf []parquet.Row) (arrow.RecordBatch, error) {
	rows := rg.Rows()
	defer rows.Close()
	if err := rows.SeekToRow(local); err != nil {
		return nil, err
	}
	builders := make([]array.Builder, len(sp.dec))
	for i, f := range sp.schema.Fields() {
		builders[i] = array.NewBuilder(sp.mem, f.Type)
		builders[i].Reserve(int(take))
	}
	defer func() {
		for _, b := range builders {
			b.Release()
		}
	}()
	for got := int64(0); got < take; {
		k, err := rows.ReadRows(rowBuf[:min(int64(len(rowBuf)), take-got)])
		for _, row := range rowBuf[:k] {
			for _, v := range row {
				c := v.Column()
				if c < 0 || c >= len(builders) {
					return nil, fmt.Errorf("spill file: value of column %d", c)
				}
				if v.IsNull() {
					builders[c].AppendNull()
				} else {
					sp.dec[c](builders[c], v)
				}
			}
		}
		got += int64(k)
		if err != nil {
			if err == io.EOF && got == take {
				break
			}
			if err == io.EOF {
				return nil, fmt.Errorf("spill file: row group ended after %d of %d rows", got, take)
			}
			return nil, err
		}
		if k == 0 {
			return nil, fmt.Errorf("spill file: no progress reading rows")
		}
	}
	cols := make([]arrow.Array, len(builders))
	for i, b := range builders {
		cols[i] = b.NewArray()
		if int64(cols[i].Len()) != take {
			releaseAll(cols[:i+1])
			return nil, fmt.Errorf("spill file: column %d has %d of %d rows", i, cols[i].Len(), take)
		}
	}
	rec := array.NewRecordBatch(sp.schema, cols, take)
	releaseAll(cols)
	return rec, nil
}

// decodedField returns the field spill reads return for f and the decoder of
// its values (the inverse of parquetColumnOf).
func decodedField(f arrow.Field) (arrow.Field, decoder) {
	dt := f.Type
	for {
		if ext, ok := dt.(arrow.ExtensionType); ok {
			dt = ext.StorageType()
			continue
		}
		if d, ok := dt.(*arrow.DictionaryType); ok {
			dt = d.ValueType
			continue
		}
		break
	}
	out := arrow.Field{Name: f.Name, Type: dt, Nullable: true, Metadata: f.Metadata}
	if isRawJSON(f) {
		out.Type = arrow.BinaryTypes.String
		return out, decodeBytes
	}
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.BooleanBuilder).Append(v.Boolean()) }
	case *arrow.Int8Type:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.Int8Builder).Append(int8(v.Int32())) }
	case *arrow.Int16Type:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.Int16Builder).Append(int16(v.Int32())) }
	case *arrow.Int32Type:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.Int32Builder).Append(v.Int32()) }
	case *arrow.Int64Type:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.Int64Builder).Append(v.Int64()) }
	case *arrow.Uint8Type:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.Uint8Builder).Append(uint8(v.Int32())) }
	case *arrow.Uint16Type:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.Uint16Builder).Append(uint16(v.Int32())) }
	case *arrow.Uint32Type:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.Uint32Builder).Append(uint32(v.Int32())) }
	case *arrow.Uint64Type:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.Uint64Builder).Append(uint64(v.Int64())) }
	case *arrow.Float16Type:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.Float16Builder).Append(float16.New(v.Float())) }
	case *arrow.Float32Type:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.Float32Builder).Append(v.Float()) }
	case *arrow.Float64Type:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.Float64Builder).Append(v.Double()) }
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		out.Type = arrow.BinaryTypes.String
		return out, decodeBytes
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType:
		out.Type = arrow.BinaryTypes.Binary
		return out, func(b array.Builder, v parquet.Value) { b.(*array.BinaryBuilder).Append(v.ByteArray()) }
	case *arrow.FixedSizeBinaryType:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.FixedSizeBinaryBuilder).Append(v.ByteArray()) }
	case *arrow.Date32Type:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.Date32Builder).Append(arrow.Date32(v.Int32())) }
	case *arrow.Date64Type:
		return out, func(b array.Builder, v parquet.Value) {
			b.(*array.Date64Builder).Append(arrow.Date64(int64(v.Int32()) * 86_400_000))
		}
	case *arrow.TimestampType:
		_, scale := parquetTimeUnit(t.Unit)
		return out, func(b array.Builder, v parquet.Value) {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(v.Int64() / scale))
		}
	case *arrow.Time32Type:
		scale := int32(1)
		if t.Unit == arrow.Second {
			scale = 1000
		}
		return out, func(b array.Builder, v parquet.Value) {
			b.(*array.Time32Builder).Append(arrow.Time32(v.Int32() / scale))
		}
	case *arrow.Time64Type:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.Time64Builder).Append(arrow.Time64(v.Int64())) }
	case *arrow.DurationType:
		return out, func(b array.Builder, v parquet.Value) { b.(*array.DurationBuilder).Append(arrow.Duration(v.Int64())) }
	case *arrow.Decimal32Type:
		return out, func(b array.Builder, v parquet.Value) {
			b.(*array.Decimal32Builder).Append(decimal.Decimal32(v.Int32()))
		}
	case *arrow.Decimal64Type:
		if t.Precision <= 9 {
			return out, func(b array.Builder, v parquet.Value) {
				b.(*array.Decimal64Builder).Append(decimal.Decimal64(v.Int32()))
			}
		}
		return out, func(b array.Builder, v parquet.Value) {
			b.(*array.Decimal64Builder).Append(decimal.Decimal64(v.Int64()))
		}
	case *arrow.Decimal128Type:
		return out, func(b array.Builder, v parquet.Value) {
			p := v.ByteArray()
			b.(*array.Decimal128Builder).Append(decimal128.New(int64(be64(p[0:8])), be64(p[8:16])))
		}
	case *arrow.Decimal256Type:
		return out, func(b array.Builder, v parquet.Value) {
			p := v.ByteArray()
			b.(*array.Decimal256Builder).Append(decimal256.New(be64(p[0:8]), be64(p[8:16]), be64(p[16:24]), be64(p[24:32])))
		}
	case *arrow.NullType:
		return out, func(b array.Builder, _ parquet.Value) { b.AppendNull() }
	}
	// Nested and exotic types were written as their JSON text.
	out.Type = arrow.BinaryTypes.String
	out.Metadata = arrow.MetadataFrom(map[string]string{rawJSONKey: "1"})
	return out, decodeBytes
}

func decodeBytes(b array.Builder, v parquet.Value) {
	b.(*array.StringBuilder).BinaryBuilder.Append(v.ByteArray())
}

func be64(p []byte) uint64 {
	return uint64(p[0])<<56 | uint64(p[1])<<48 | uint64(p[2])<<40 | uint64(p[3])<<32 |
		uint64(p[4])<<24 | uint64(p[5])<<16 | uint64(p[6])<<8 | uint64(p[7])
}
