package materialize

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Parquet output settings.
const (
	// ParquetRowGroupRows is the number of rows per Parquet row group.
	ParquetRowGroupRows = 128 * 1024
	// parquetChunkRows is how many rows of one column are converted and
	// handed to parquet-go at a time.
	parquetChunkRows = 4096
)

// WriteParquet writes batches (all of schema's fields) to w as one Parquet
// file with the default options (zstd); see WriteParquetWith.
func WriteParquet(ctx context.Context, w io.Writer, schema *arrow.Schema, batches []arrow.RecordBatch) error {
	return WriteParquetWith(ctx, w, schema, batches, ParquetOptions{})
}

// WriteParquetWith writes batches (all of schema's fields) to w as one
// Parquet file: pages compressed with opts.Codec (zstd by default), row
// groups of ParquetRowGroupRows rows, column-chunk statistics and a page
// index (every page's min, max and null count), column names from
// ColumnNames(schema) in schema order, every column OPTIONAL (nullable).
// Types:
//
//	bool                      BOOLEAN
//	int8/16/32, uint8/16/32   INT32 with INT(bits, signed) logical type
//	int64, uint64             INT64 with INT(64, signed) logical type
//	float16, float32          FLOAT
//	float64                   DOUBLE
//	string, large_string,     BYTE_ARRAY, STRING logical type (invalid UTF-8
//	string_view               bytes replaced by U+FFFD)
//	binary, large_binary,     BYTE_ARRAY
//	binary_view
//	fixed_size_binary(n)      FIXED_LEN_BYTE_ARRAY(n)
//	date32, date64            INT32 DATE (date64 truncated to the day)
//	timestamp(unit, tz)       INT64 TIMESTAMP(unit, isAdjustedToUTC = tz != "");
//	                          seconds are written as milliseconds
//	time32(s|ms)              INT32 TIME(MILLIS, not adjusted to UTC)
//	time64(us|ns)             INT64 TIME(MICROS|NANOS, not adjusted to UTC)
//	duration                  INT64 INT(64) count of the type's unit
//	decimal32/64              INT32/INT64 DECIMAL(precision, scale)
//	decimal128/256            FIXED_LEN_BYTE_ARRAY(16/32) DECIMAL(precision, scale)
//	dictionary                the value type, decoded
//	null                      INT32, all null (no logical type)
//	anything else             BYTE_ARRAY with the JSON logical type, holding
//	(list, struct, map, ...)  the value's JSON encoding (see RecordEncoder)
//
// When every column has one of the flat types (numbers, dates, times,
// timestamps, durations, strings, binary values, dictionaries of strings or
// binary values) the column chunks are encoded straight from the Arrow
// buffers (see parquet_flat.go: dictionary pages, numeric dictionaries,
// DELTA_BINARY_PACKED); otherwise the values go through parquet-go's column
// writers, column by column from the Arrow arrays (no reflection, no per-row
// Go structs; dictionary entries are converted once per batch), PLAIN. Row
// groups are encoded in parallel and written in order. The context is
// checked between chunks (pages on the flat path).
func WriteParquetWith(ctx context.Context, w io.Writer, schema *arrow.Schema, batches []arrow.RecordBatch, opts ParquetOptions) error {
	codec, err := opts.Codec.codec()
	if err != nil {
		return err
	}
	pw, err := newParquetWriterCodec(w, schema, codec)
	if err != nil {
		return err
	}
	for _, b := range batches {
		if err := pw.write(ctx, b); err != nil {
			pw.abort()
			return err
		}
	}
	return pw.close()
}

// parquetWriter writes record batches to one Parquet file as they come (see
// WriteParquetWith for the format). Rows are grouped into row groups of
// ParquetRowGroupRows rows; each full row group is encoded and compressed
// on its own goroutine (parquet-go's ConcurrentRowGroupWriter, up to
// GOMAXPROCS at a time, at most 4) and the row groups are committed to the
// file in order. The writer retains (zero-copy) the Arrow rows of the row
// groups not yet encoded.
type parquetWriter struct {
	pw      *parquet.GenericWriter[any] // the row path (nil on the flat path)
	flat    *flatFile                   // the flat path (see parquet_flat.go), nil on the row path
	names   []string
	cols    []parquetColumn
	pending []arrow.RecordBatch // rows of the row group being gathered
	rows    int                 // rows in pending
	jobs    []*rowGroupJob      // dispatched row groups, in file order
	limit   int                 // most row groups in flight
	ctx     context.Context     // of the first write; stops the encoders
	cancel  context.CancelFunc
}

// rowGroupJob is one row group being encoded.
type rowGroupJob struct {
	rg   *parquet.ConcurrentRowGroupWriter // row path
	flat *flatRowGroup                     // flat path, once encoded
	done chan struct{}
	err  error
}

// MaxParquetColumns is the most columns a Parquet file written by Quarry
// holds (parquet-go's column index limit; every Arrow field is one Parquet
// column). Wider results are refused before anything is written.
const MaxParquetColumns = parquet.MaxColumnIndex

// checkParquetColumns refuses a schema too wide for a Parquet file with
// qerr.CodeUnsupportedFormat.
func checkParquetColumns(schema *arrow.Schema) error {
	if n := schema.NumFields(); n > MaxParquetColumns {
		return qerr.Unsupported(qerr.CodeUnsupportedFormat,
			"the result has %d columns; a Parquet file holds at most %d", n, MaxParquetColumns).
			With("columns", n).With("max_columns", MaxParquetColumns).
			WithHint("select fewer columns (columns argument), or use output_format csv")
	}
	return nil
}

// newParquetWriterCodec returns a writer compressing its pages with codec,
// or checkParquetColumns's error.
func newParquetWriterCodec(w io.Writer, schema *arrow.Schema, codec compress.Codec) (*parquetWriter, error) {
	return newParquetWriterPath(w, schema, codec, false)
}

// newParquetWriterPath is newParquetWriterCodec; rowPath forces the row
// path (tests compare both).
func newParquetWriterPath(w io.Writer, schema *arrow.Schema, codec compress.Codec, rowPath bool) (*parquetWriter, error) {
	if err := checkParquetColumns(schema); err != nil {
		return nil, err
	}
	names := ColumnNames(schema)
	p := &parquetWriter{names: names, cols: make([]parquetColumn, len(names)), limit: min(max(runtime.GOMAXPROCS(0), 1), 4)}
	group := &orderedGroup{fields: make([]parquet.Field, len(names))}
	for i, f := range schema.Fields() {
		if isRawJSON(f) {
			p.cols[i] = rawJSONColumn()
		} else {
			p.cols[i] = parquetColumnOf(f.Type)
		}
		group.fields[i] = &namedField{Node: parquet.Optional(p.cols[i].node), name: names[i], index: i}
	}
	pschema := parquet.NewSchema("quarry", group)
	opts := []parquet.WriterOption{
		parquet.Compression(codec),
		// Page statistics live in the page index (the column index has
		// every page's min, max and null count); repeating them in the
		// data page headers would compute every page's bounds twice, a
		// tenth of the write time for string columns.
		parquet.DataPageStatistics(false),
		parquet.CreatedBy("quarry", "", ""),
	}
	if !rowPath && len(names) > 0 {
		flat, err := newFlatFile(w, schema, pschema, codec, opts...)
		if err != nil {
			return nil, err
		}
		if flat != nil {
			p.flat = flat
			return p, nil
		}
	}
	p.pw = parquet.NewGenericWriter[any](w, append([]parquet.WriterOption{pschema}, opts...)...)
	return p, nil
}

// write appends the rows of b (whose columns must match the schema). It
// retains what it keeps; the caller may release b afterwards.
func (p *parquetWriter) write(ctx context.Context, b arrow.RecordBatch) error {
	if p.ctx == nil {
		p.ctx, p.cancel = context.WithCancel(ctx)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	n := int(b.NumRows())
	for lo := 0; lo < n; {
		take := min(n-lo, ParquetRowGroupRows-p.rows)
		if lo == 0 && take == n {
			b.Retain()
			p.pending = append(p.pending, b)
		} else {
			p.pending = append(p.pending, b.NewSlice(int64(lo), int64(lo+take)))
		}
		p.rows += take
		lo += take
		if p.rows == ParquetRowGroupRows {
			if err := p.dispatch(); err != nil {
				return err
			}
		}
	}
	return nil
}

// dispatch starts encoding the gathered row group, first committing
// finished row groups so that at most limit are in flight.
func (p *parquetWriter) dispatch() error {
	batches := p.pending
	p.pending, p.rows = nil, 0
	for len(p.jobs) >= p.limit {
		if err := p.commitOldest(); err != nil {
			releaseBatches(batches)
			return err
		}
	}
	job := &rowGroupJob{done: make(chan struct{})}
	if p.flat == nil {
		job.rg = p.pw.BeginRowGroup()
	}
	p.jobs = append(p.jobs, job)
	go func() {
		defer close(job.done)
		defer releaseBatches(batches)
		if p.flat != nil {
			job.flat, job.err = p.flat.encode(p.ctx, batches)
			return
		}
		job.err = p.fill(job.rg, batches)
	}()
	return nil
}

// fill writes batches into one row group, column by column in chunks.
func (p *parquetWriter) fill(rg *parquet.ConcurrentRowGroupWriter, batches []arrow.RecordBatch) error {
	values := make([]parquet.Value, 0, parquetChunkRows)
	defer clear(values[:cap(values)]) // drop references to Arrow memory
	appenders := make([]valueAppender, len(p.cols))
	writers := rg.ColumnWriters()
	for _, b := range batches {
		for c := range p.cols {
			appenders[c] = p.cols[c].bind(b.Column(c), c)
		}
		n := int(b.NumRows())
		for lo := 0; lo < n; {
			if err := p.ctx.Err(); err != nil {
				return err
			}
			hi := min(n, lo+parquetChunkRows)
			for c, app := range appenders {
				values = app(values[:0], lo, hi)
				if _, err := writers[c].WriteRowValues(values); err != nil {
					return fmt.Errorf("parquet: column %q: %w", p.names[c], err)
				}
			}
			lo = hi
		}
	}
	return nil
}

// commitOldest waits for the first dispatched row group and appends it to
// the file.
func (p *parquetWriter) commitOldest() error {
	job := p.jobs[0]
	p.jobs = p.jobs[1:]
	<-job.done
	if job.err != nil {
		return job.err
	}
	if p.flat != nil {
		return p.flat.commit(job.flat)
	}
	if _, err := job.rg.Commit(); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}

// close encodes the last (partial) row group, commits every row group in
// order and writes the footer. After an error it waits for the encoders to
// stop, so no goroutine outlives the writer.
func (p *parquetWriter) close() (err error) {
	defer func() {
		if err != nil {
			p.abort()
		}
	}()
	if p.rows > 0 {
		if err := p.dispatch(); err != nil {
			return err
		}
	}
	for len(p.jobs) > 0 {
		if err := p.commitOldest(); err != nil {
			return err
		}
	}
	if p.cancel != nil {
		p.cancel()
	}
	if p.flat != nil {
		return p.flat.close()
	}
	if err := p.pw.Close(); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}

// abort stops and waits for the encoders and drops the gathered rows; the
// file is left incomplete.
func (p *parquetWriter) abort() {
	if p.cancel != nil {
		p.cancel()
	}
	for _, j := range p.jobs {
		<-j.done
	}
	p.jobs = nil
	releaseBatches(p.pending)
	p.pending, p.rows = nil, 0
}

func releaseBatches(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}

// valueAppender appends the parquet values (with levels) of rows [lo, hi).
type valueAppender func(dst []parquet.Value, lo, hi int) []parquet.Value

// parquetColumn maps one Arrow type to a Parquet leaf.
type parquetColumn struct {
	node parquet.Node
	// value returns, for an array of the type, the parquet value of its
	// element i (non-null) and an extra null test (nil: the validity bitmap
	// is enough).
	value func(arr arrow.Array) (func(i int) parquet.Value, func(i int) bool)
	// dict is the mapping of the value type of a dictionary type (nil for
	// other types): dictionary arrays convert their entries once.
	dict *parquetColumn
	// generic disables the specialised loops (tests compare both paths).
	generic bool
}

// bind returns the appender of arr's values for leaf column col.
func (pc parquetColumn) bind(arr arrow.Array, col int) valueAppender {
	if ext, ok := arr.(array.ExtensionArray); ok {
		arr = ext.Storage()
	}
	if !pc.generic {
		if d, ok := arr.(*array.Dictionary); ok && pc.dict != nil {
			if fast := dictionaryAppender(d, *pc.dict, col); fast != nil {
				return fast
			}
		} else if fast := fastAppender(arr, col); fast != nil {
			return fast
		}
	}
	value, isNull := pc.value(arr)
	hasNulls := arr.NullN() > 0
	return func(dst []parquet.Value, lo, hi int) []parquet.Value {
		for i := lo; i < hi; i++ {
			if (hasNulls && arr.IsNull(i)) || (isNull != nil && isNull(i)) {
				dst = append(dst, parquet.NullValue().Level(0, 0, col))
				continue
			}
			dst = append(dst, present(value(i), col))
		}
		return dst
	}
}

func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// simple builds a parquetColumn whose value function needs only the typed array.
func simple[A arrow.Array](node parquet.Node, f func(a A, i int) parquet.Value) parquetColumn {
	return parquetColumn{node: node, value: func(arr arrow.Array) (func(int) parquet.Value, func(int) bool) {
		a := arr.(A)
		return func(i int) parquet.Value { return f(a, i) }, nil
	}}
}

// parquetColumnOf returns the Parquet mapping of an Arrow type.
func parquetColumnOf(dt arrow.DataType) parquetColumn {
	if ext, ok := dt.(arrow.ExtensionType); ok {
		dt = ext.StorageType()
	}
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return simple(parquet.Leaf(parquet.BooleanType), func(a *array.Boolean, i int) parquet.Value { return parquet.BooleanValue(a.Value(i)) })
	case *arrow.Int8Type:
		return simple(parquet.Int(8), func(a *array.Int8, i int) parquet.Value { return parquet.Int32Value(int32(a.Value(i))) })
	case *arrow.Int16Type:
		return simple(parquet.Int(16), func(a *array.Int16, i int) parquet.Value { return parquet.Int32Value(int32(a.Value(i))) })
	case *arrow.Int32Type:
		return simple(parquet.Int(32), func(a *array.Int32, i int) parquet.Value { return parquet.Int32Value(a.Value(i)) })
	case *arrow.Int64Type:
		return simple(parquet.Int(64), func(a *array.Int64, i int) parquet.Value { return parquet.Int64Value(a.Value(i)) })
	case *arrow.Uint8Type:
		return simple(parquet.Uint(8), func(a *array.Uint8, i int) parquet.Value { return parquet.Int32Value(int32(a.Value(i))) })
	case *arrow.Uint16Type:
		return simple(parquet.Uint(16), func(a *array.Uint16, i int) parquet.Value { return parquet.Int32Value(int32(a.Value(i))) })
	case *arrow.Uint32Type:
		return simple(parquet.Uint(32), func(a *array.Uint32, i int) parquet.Value { return parquet.Int32Value(int32(a.Value(i))) })
	case *arrow.Uint64Type:
		return simple(parquet.Uint(64), func(a *array.Uint64, i int) parquet.Value { return parquet.Int64Value(int64(a.Value(i))) })
	case *arrow.Float16Type:
		return simple(parquet.Leaf(parquet.FloatType), func(a *array.Float16, i int) parquet.Value { return parquet.FloatValue(a.Value(i).Float32()) })
	case *arrow.Float32Type:
		return simple(parquet.Leaf(parquet.FloatType), func(a *array.Float32, i int) parquet.Value { return parquet.FloatValue(a.Value(i)) })
	case *arrow.Float64Type:
		return simple(parquet.Leaf(parquet.DoubleType), func(a *array.Float64, i int) parquet.Value { return parquet.DoubleValue(a.Value(i)) })
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return simple(parquet.String(), func(a array.StringLike, i int) parquet.Value {
			return parquet.ByteArrayValue(stringBytes(toValidUTF8(a.Value(i))))
		})
	case *arrow.BinaryType:
		return simple(parquet.Leaf(parquet.ByteArrayType), func(a *array.Binary, i int) parquet.Value { return parquet.ByteArrayValue(a.Value(i)) })
	case *arrow.LargeBinaryType:
		return simple(parquet.Leaf(parquet.ByteArrayType), func(a *array.LargeBinary, i int) parquet.Value { return parquet.ByteArrayValue(a.Value(i)) })
	case *arrow.BinaryViewType:
		return simple(parquet.Leaf(parquet.ByteArrayType), func(a *array.BinaryView, i int) parquet.Value { return parquet.ByteArrayValue(a.Value(i)) })
	case *arrow.FixedSizeBinaryType:
		return simple(parquet.Leaf(parquet.FixedLenByteArrayType(t.ByteWidth)), func(a *array.FixedSizeBinary, i int) parquet.Value {
			return parquet.FixedLenByteArrayValue(a.Value(i))
		})
	case *arrow.Date32Type:
		return simple(parquet.Date(), func(a *array.Date32, i int) parquet.Value { return parquet.Int32Value(int32(a.Value(i))) })
	case *arrow.Date64Type:
		return simple(parquet.Date(), func(a *array.Date64, i int) parquet.Value {
			return parquet.Int32Value(int32(floorDiv(int64(a.Value(i)), 86_400_000)))
		})
	case *arrow.TimestampType:
		unit, scale := parquetTimeUnit(t.Unit)
		return simple(parquet.TimestampAdjusted(unit, t.TimeZone != ""), func(a *array.Timestamp, i int) parquet.Value {
			return parquet.Int64Value(int64(a.Value(i)) * scale)
		})
	case *arrow.Time32Type:
		scale := int32(1)
		if t.Unit == arrow.Second {
			scale = 1000
		}
		return simple(parquet.TimeAdjusted(parquet.Millisecond, false), func(a *array.Time32, i int) parquet.Value {
			return parquet.Int32Value(int32(a.Value(i)) * scale)
		})
	case *arrow.Time64Type:
		unit := parquet.Microsecond
		if t.Unit == arrow.Nanosecond {
			unit = parquet.Nanosecond
		}
		return simple(parquet.TimeAdjusted(unit, false), func(a *array.Time64, i int) parquet.Value { return parquet.Int64Value(int64(a.Value(i))) })
	case *arrow.DurationType:
		return simple(parquet.Int(64), func(a *array.Duration, i int) parquet.Value { return parquet.Int64Value(int64(a.Value(i))) })
	case *arrow.Decimal32Type:
		return simple(parquet.Decimal(int(t.Scale), int(t.Precision), parquet.Int32Type), func(a *array.Decimal32, i int) parquet.Value {
			return parquet.Int32Value(int32(a.Value(i)))
		})
	case *arrow.Decimal64Type:
		if t.Precision <= 9 { // values fit INT32, the physical type parquet wants for them
			return simple(parquet.Decimal(int(t.Scale), int(t.Precision), parquet.Int32Type), func(a *array.Decimal64, i int) parquet.Value {
				return parquet.Int32Value(int32(a.Value(i)))
			})
		}
		return simple(parquet.Decimal(int(t.Scale), int(t.Precision), parquet.Int64Type), func(a *array.Decimal64, i int) parquet.Value {
			return parquet.Int64Value(int64(a.Value(i)))
		})
	case *arrow.Decimal128Type:
		return simple(parquet.Decimal(int(t.Scale), int(t.Precision), parquet.FixedLenByteArrayType(16)), func(a *array.Decimal128, i int) parquet.Value {
			v := a.Value(i)
			var b [16]byte
			binary.BigEndian.PutUint64(b[0:], uint64(v.HighBits()))
			binary.BigEndian.PutUint64(b[8:], v.LowBits())
			return parquet.FixedLenByteArrayValue(b[:])
		})
	case *arrow.Decimal256Type:
		return simple(parquet.Decimal(int(t.Scale), int(t.Precision), parquet.FixedLenByteArrayType(32)), func(a *array.Decimal256, i int) parquet.Value {
			words := a.Value(i).Array() // little-endian words
			var b [32]byte
			for k := range 4 {
				binary.BigEndian.PutUint64(b[8*k:], words[3-k])
			}
			return parquet.FixedLenByteArrayValue(b[:])
		})
	case *arrow.DictionaryType:
		// Written like the value type (same node). On the row path the
		// pages are PLAIN: parquet-go's dictionary encoding (RLE_DICTIONARY)
		// re-hashes every value and measured ~15% slower to write with
		// snappy; the flat path (parquet_flat.go) writes dictionary pages
		// from the Arrow codes.
		inner := parquetColumnOf(t.ValueType)
		return parquetColumn{node: inner.node, dict: &inner, value: func(arr arrow.Array) (func(int) parquet.Value, func(int) bool) {
			d := arr.(*array.Dictionary)
			dict := d.Dictionary()
			value, innerNull := inner.value(dict)
			return func(i int) parquet.Value { return value(d.GetValueIndex(i)) },
				func(i int) bool {
					j := d.GetValueIndex(i)
					return dict.IsNull(j) || (innerNull != nil && innerNull(j))
				}
		}}
	case *arrow.NullType:
		// Plain INT32, every value null: the NULL (UNKNOWN) logical type as
		// parquet-go encodes it makes DuckDB's reader fail ("TProtocolException:
		// Invalid data"), see e2e/duckdb_interop_test.go.
		return parquetColumn{node: parquet.Leaf(parquet.Int32Type), value: func(arrow.Array) (func(int) parquet.Value, func(int) bool) {
			return func(int) parquet.Value { return parquet.NullValue() }, func(int) bool { return true }
		}}
	}
	// Nested and exotic types: the value's JSON text.
	return parquetColumn{node: parquet.JSON(), value: func(arr arrow.Array) (func(int) parquet.Value, func(int) bool) {
		enc := newNonNullEncoder(arr)
		var buf []byte
		return func(i int) parquet.Value {
			start := len(buf)
			buf = enc(buf, i)
			v := buf[start:len(buf):len(buf)]
			if len(buf) > 1<<20 { // values keep referencing the old backing array
				buf = nil
			}
			return parquet.ByteArrayValue(v)
		}, nil
	}}
}

// rawJSONColumn writes a utf8 column of JSON texts (see rawJSONKey) as the
// JSON logical type, like the nested values it was read back from.
func rawJSONColumn() parquetColumn {
	return parquetColumn{node: parquet.JSON(), value: func(arr arrow.Array) (func(int) parquet.Value, func(int) bool) {
		a := arr.(array.StringLike)
		return func(i int) parquet.Value { return parquet.ByteArrayValue(stringBytes(a.Value(i))) }, nil
	}}
}

// parquetTimeUnit maps an Arrow timestamp unit to a Parquet one and the
// factor applied to values (Parquet has no seconds).
func parquetTimeUnit(u arrow.TimeUnit) (parquet.TimeUnit, int64) {
	switch u {
	case arrow.Second:
		return parquet.Millisecond, 1000
	case arrow.Millisecond:
		return parquet.Millisecond, 1
	case arrow.Microsecond:
		return parquet.Microsecond, 1
	}
	return parquet.Nanosecond, 1
}

// orderedGroup is a Parquet group node that keeps its fields in the given
// order (parquet.Group is a map and sorts its fields by name, which would
// reorder the result's columns).
type orderedGroup struct {
	fields []parquet.Field
}

func (g *orderedGroup) ID() int                     { return 0 }
func (g *orderedGroup) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g *orderedGroup) Optional() bool              { return false }
func (g *orderedGroup) Repeated() bool              { return false }
func (g *orderedGroup) Required() bool              { return true }
func (g *orderedGroup) Leaf() bool                  { return false }
func (g *orderedGroup) Fields() []parquet.Field     { return g.fields }
func (g *orderedGroup) Encoding() encoding.Encoding { return nil }
func (g *orderedGroup) Compression() compress.Codec { return nil }
func (g *orderedGroup) String() string {
	var sb strings.Builder
	sb.WriteString("group {")
	for i, f := range g.fields {
		if i > 0 {
			sb.WriteString("; ")
		}
		fmt.Fprintf(&sb, "%q: %s", f.Name(), f.String())
	}
	sb.WriteString("}")
	return sb.String()
}

// GoType returns a struct type with one exported field per column (the
// writer does not need it: values are written column by column).
func (g *orderedGroup) GoType() reflect.Type {
	fields := make([]reflect.StructField, len(g.fields))
	for i, f := range g.fields {
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: f.GoType()}
	}
	return reflect.StructOf(fields)
}

// namedField names a node inside an orderedGroup.
type namedField struct {
	parquet.Node
	name  string
	index int // position in the group (and field of orderedGroup.GoType)
}

func (f *namedField) Name() string { return f.name }

// Value implements parquet.Field for the struct layout of
// orderedGroup.GoType (unused by WriteParquet, which writes column by column).
func (f *namedField) Value(base reflect.Value) reflect.Value {
	if base.Kind() == reflect.Struct && f.index < base.NumField() {
		return base.Field(f.index)
	}
	return reflect.Value{}
}
