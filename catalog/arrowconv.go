package catalog

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Typed binary formats (Parquet, Arrow IPC) carry Arrow types of their own;
// the engine computes on a smaller set. exposedType maps a file's type to
// the type the dataset exposes, converting nothing it need not and losing
// nothing: integers of every width, float32/64, bool, string, date32 and
// timestamps are kept as they are; what the engine does not compute on is
// widened or kept as text (with a note saying so).

// exposedType returns the dataset type for a column stored as dt, and a
// note (empty when the column is kept as stored).
func exposedType(dt arrow.DataType) (arrow.DataType, string) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL, arrow.STRING, arrow.DATE32, arrow.TIMESTAMP:
		return dt, ""
	case arrow.LARGE_STRING, arrow.STRING_VIEW:
		return arrow.BinaryTypes.String, ""
	case arrow.DATE64:
		return arrow.FixedWidthTypes.Date32, ""
	case arrow.FLOAT16:
		return arrow.PrimitiveTypes.Float32, ""
	case arrow.DICTIONARY:
		vt, note := exposedType(dt.(*arrow.DictionaryType).ValueType)
		return vt, note
	case arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		if p := dt.(arrow.DecimalType).GetPrecision(); p <= 15 {
			return arrow.PrimitiveTypes.Float64, dt.String() + " read as float64 (every value of at most 15 digits prints back as stored)"
		}
		return arrow.BinaryTypes.String, dt.String() + " has more digits than a float64 keeps; kept as text so nothing is lost"
	case arrow.NULL:
		return arrow.BinaryTypes.String, "the column holds only nulls"
	case arrow.STRUCT, arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW,
		arrow.SPARSE_UNION, arrow.DENSE_UNION, arrow.RUN_END_ENCODED, arrow.EXTENSION:
		return arrow.BinaryTypes.String, "nested " + dt.String() + " values as JSON text"
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY, arrow.BINARY_VIEW:
		return arrow.BinaryTypes.String, dt.String() + " values as base64 text"
	}
	return arrow.BinaryTypes.String, dt.String() + " values as text"
}

// exposedSchema maps every field of sc with exposedType; notes holds the
// fields' notes by name (nil when none).
func exposedSchema(sc *arrow.Schema) (*arrow.Schema, map[string]ColumnNote) {
	fields := make([]arrow.Field, sc.NumFields())
	var notes map[string]ColumnNote
	for i, f := range sc.Fields() {
		t, note := exposedType(f.Type)
		fields[i] = arrow.Field{Name: f.Name, Type: t, Nullable: true}
		if note != "" {
			if notes == nil {
				notes = map[string]ColumnNote{}
			}
			notes[f.Name] = ColumnNote{Hint: note}
		}
	}
	return arrow.NewSchema(fields, nil), notes
}

// exposeArray returns arr as type to (exposedType of arr's type): arr
// itself (retained) when the types agree, otherwise a new array built
// value by value from arr's text form (Arrow's ValueStr, which every
// builder parses back exactly: JSON for nested values, base64 for
// binary, the shortest exact decimal for floats).
func exposeArray(mem memory.Allocator, arr arrow.Array, to arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(arr.DataType(), to) {
		arr.Retain()
		return arr, nil
	}
	b := array.NewBuilder(mem, to)
	defer b.Release()
	b.Reserve(arr.Len())
	for i := range arr.Len() {
		if arr.IsNull(i) {
			b.AppendNull()
			continue
		}
		s := arr.ValueStr(i)
		if sb, ok := b.(*array.StringBuilder); ok {
			sb.Append(s)
			continue
		}
		if err := b.AppendValueFromString(s); err != nil {
			return nil, fmt.Errorf("cannot convert %s value %q to %s: %w", arr.DataType(), s, to, err)
		}
	}
	return b.NewArray(), nil
}

// typedScan is what a typed format's Scan starts from: the projection of
// the exposed schema to opts.Columns (indices and output schema), the
// allocator and the batch size (defaults filled in).
type typedScan struct {
	proj  []int
	out   *arrow.Schema
	alloc memory.Allocator
	batch int
}

// newTypedScan checks ctx and projects schema (dataset id) for opts.
func newTypedScan(ctx context.Context, id string, schema *arrow.Schema, opts ScanOptions) (typedScan, error) {
	if err := ctx.Err(); err != nil {
		return typedScan{}, err
	}
	proj, err := Projection(id, schema, opts.Columns)
	if err != nil {
		return typedScan{}, err
	}
	fields := make([]arrow.Field, len(proj))
	for i, j := range proj {
		fields[i] = schema.Field(j)
	}
	ts := typedScan{proj: proj, out: arrow.NewSchema(fields, nil), alloc: opts.Alloc, batch: opts.BatchSize}
	if ts.alloc == nil {
		ts.alloc = memory.DefaultAllocator
	}
	if ts.batch <= 0 {
		ts.batch = DefaultBatchSize
	}
	return ts, nil
}

// exposedReader adapts a record reader of a typed file format: it
// projects each batch of inner to the columns at pick (indices into
// inner's schema, in output order), converts them to the exposed schema,
// checks ctx, turns a panic of the decoder into an error, and runs done
// (closing the file) once when released.
type exposedReader struct {
	ctx    context.Context
	id     string
	inner  array.RecordReader
	schema *arrow.Schema
	pick   []int
	mem    memory.Allocator
	done   func()
	// convert, when set, converts column j of a batch (the i-th output
	// column) instead of exposeArray.
	convert func(mem memory.Allocator, a arrow.Array, i int) (arrow.Array, error)
	cur     arrow.RecordBatch
	err     error
	refs    atomic.Int64
	// stats, when set, are the reader's ScanStats: the skipped zones
	// (set by the source) and the rows returned (counted here).
	stats *ScanStats
}

// ScanStats implements ScanStatser (ok false unless the source counts).
func (r *exposedReader) ScanStats() (ScanStats, bool) {
	if r.stats == nil {
		return ScanStats{}, false
	}
	return *r.stats, true
}

func newExposedReader(ctx context.Context, id string, inner array.RecordReader, schema *arrow.Schema, pick []int, mem memory.Allocator, done func()) *exposedReader {
	r := &exposedReader{ctx: ctx, id: id, inner: inner, schema: schema, pick: pick, mem: mem, done: done}
	r.refs.Store(1)
	return r
}

func (r *exposedReader) Retain() { r.refs.Add(1) }

func (r *exposedReader) Release() {
	if r.refs.Add(-1) == 0 {
		r.finish()
	}
}

func (r *exposedReader) finish() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.inner != nil {
		r.inner.Release()
		r.inner = nil
	}
	if r.done != nil {
		r.done()
		r.done = nil
	}
}

func (r *exposedReader) Schema() *arrow.Schema { return r.schema }

// RecordBatch implements array.RecordReader.
func (r *exposedReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record implements array.RecordReader (deprecated alias of RecordBatch).
func (r *exposedReader) Record() arrow.RecordBatch { return r.cur }

// Err implements array.RecordReader.
func (r *exposedReader) Err() error { return r.err }

func (r *exposedReader) fail(err error) {
	r.err = err
	r.finish()
}

// Next implements array.RecordReader.
func (r *exposedReader) Next() (ok bool) {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || r.inner == nil {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.fail(err)
		return false
	}
	var cols []arrow.Array
	defer func() {
		if p := recover(); p != nil {
			releaseAll(cols) // the columns converted before the panic
			r.fail(corruptFileError(r.id, fmt.Errorf("decoder panic: %v", p)))
			ok = false
		}
	}()
	if !r.inner.Next() {
		if err := r.inner.Err(); err != nil {
			r.fail(corruptFileError(r.id, err))
		} else {
			r.finish()
		}
		return false
	}
	in := r.inner.RecordBatch()
	cols = make([]arrow.Array, 0, len(r.pick))
	for i, j := range r.pick {
		var c arrow.Array
		var err error
		if r.convert != nil {
			c, err = r.convert(r.mem, in.Column(j), i)
		} else {
			c, err = exposeArray(r.mem, in.Column(j), r.schema.Field(i).Type)
		}
		if err != nil {
			releaseAll(cols)
			r.fail(corruptFileError(r.id, err))
			return false
		}
		cols = append(cols, c)
	}
	r.cur = array.NewRecordBatch(r.schema, cols, in.NumRows())
	releaseAll(cols)
	cols = nil
	if r.stats != nil {
		r.stats.RowsRead += in.NumRows()
	}
	return true
}

func releaseAll(cols []arrow.Array) {
	for _, c := range cols {
		if c != nil {
			c.Release()
		}
	}
}

// funcReader is an array.RecordReader whose batches come from next, which
// returns nil at the end.
type funcReader struct {
	schema *arrow.Schema
	next   func() (arrow.RecordBatch, error)
	cur    arrow.RecordBatch
	err    error
	refs   atomic.Int64
}

func newFuncReader(schema *arrow.Schema, next func() (arrow.RecordBatch, error)) *funcReader {
	r := &funcReader{schema: schema, next: next}
	r.refs.Store(1)
	return r
}

func (r *funcReader) Retain() { r.refs.Add(1) }

func (r *funcReader) Release() {
	if r.refs.Add(-1) == 0 && r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

func (r *funcReader) Schema() *arrow.Schema { return r.schema }

func (r *funcReader) RecordBatch() arrow.RecordBatch { return r.cur }

func (r *funcReader) Record() arrow.RecordBatch { return r.cur }

func (r *funcReader) Err() error { return r.err }

func (r *funcReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil {
		return false
	}
	r.cur, r.err = r.next()
	return r.cur != nil
}
