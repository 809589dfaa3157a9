package engine

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// ---- test data ----

// tcol is one test column: values are Go values (nil = null): int64 for
// every integer type (uint64 also accepted for uint64), float64 for floats,
// string, bool, int32 for date32, int64 for timestamps.
type tcol struct {
	name string
	typ  arrow.DataType
	vals []any
}

func schemaOf(cols []tcol) *arrow.Schema {
	fs := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fs[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
	}
	return arrow.NewSchema(fs, nil)
}

func appendValue(b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(v.(int64)))
	case *array.Int16Builder:
		b.Append(int16(v.(int64)))
	case *array.Int32Builder:
		b.Append(int32(v.(int64)))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Uint8Builder:
		b.Append(uint8(v.(int64)))
	case *array.Uint16Builder:
		b.Append(uint16(v.(int64)))
	case *array.Uint32Builder:
		b.Append(uint32(v.(int64)))
	case *array.Uint64Builder:
		switch x := v.(type) {
		case uint64:
			b.Append(x)
		default:
			b.Append(uint64(x.(int64)))
		}
	case *array.Float32Builder:
		b.Append(float32(v.(float64)))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.LargeStringBuilder:
		b.Append(v.(string))
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.(int32)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(int64)))
	case *array.Decimal128Builder:
		panic("unused")
	default:
		panic(fmt.Sprintf("appendValue: builder %T", b))
	}
}

func makeBatch(mem memory.Allocator, cols []tcol) arrow.RecordBatch {
	schema := schemaOf(cols)
	arrs := make([]arrow.Array, len(cols))
	n := 0
	if len(cols) > 0 {
		n = len(cols[0].vals)
	}
	for i, c := range cols {
		typ := c.typ
		dt, isDict := typ.(*arrow.DictionaryType)
		if isDict {
			typ = dt.ValueType
		}
		b := array.NewBuilder(mem, typ)
		for _, v := range c.vals {
			appendValue(b, v)
		}
		arrs[i] = b.NewArray()
		b.Release()
		if isDict {
			enc, err := encodeDict(mem, arrs[i], dt)
			if err != nil {
				panic(err)
			}
			arrs[i].Release()
			arrs[i] = enc
		}
	}
	rec := array.NewRecordBatch(schema, arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// ---- in-memory source ----

// memSource serves record batches, re-cut to ScanOptions.BatchSize, projected
// to ScanOptions.Columns and copied with ScanOptions.Alloc.
type memSource struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
	served  atomic.Int64 // batches handed out
	open    atomic.Int64 // readers not yet released
	onBatch func(i int)  // called before serving batch i (0-based) of a scan
	noCopy  bool         // serve zero-copy slices instead of copies (benchmarks)
}

func newSource(mem memory.Allocator, cols []tcol) *memSource {
	b := makeBatch(mem, cols)
	return &memSource{schema: b.Schema(), batches: []arrow.RecordBatch{b}}
}

func (s *memSource) release() {
	for _, b := range s.batches {
		b.Release()
	}
	s.batches = nil
}

func (s *memSource) Scan(ctx context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	idx := make([]int, 0, s.schema.NumFields())
	fields := []arrow.Field{}
	if len(opts.Columns) == 0 {
		for i := range s.schema.Fields() {
			idx = append(idx, i)
		}
		fields = s.schema.Fields()
	} else {
		for _, c := range opts.Columns {
			is := s.schema.FieldIndices(c)
			if len(is) == 0 {
				return nil, fmt.Errorf("no column %q", c)
			}
			idx = append(idx, is[0])
			fields = append(fields, s.schema.Field(is[0]))
		}
	}
	bs := opts.BatchSize
	if bs <= 0 {
		bs = 65536
	}
	mem := opts.Alloc
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	r := &memReader{src: s, ctx: ctx, schema: arrow.NewSchema(fields, nil), idx: idx, bs: int64(bs), mem: mem}
	r.refs.Store(1)
	s.open.Add(1)
	return r, nil
}

type memReader struct {
	refs   atomic.Int64
	src    *memSource
	ctx    context.Context
	schema *arrow.Schema
	idx    []int
	bs     int64
	mem    memory.Allocator
	bi     int
	off    int64
	n      int
	cur    arrow.RecordBatch
	err    error
}

func (r *memReader) Retain()                        { r.refs.Add(1) }
func (r *memReader) Schema() *arrow.Schema          { return r.schema }
func (r *memReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *memReader) Record() arrow.RecordBatch      { return r.cur }
func (r *memReader) Err() error                     { return r.err }
func (r *memReader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.src.open.Add(-1)
	}
}

func (r *memReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return false
	}
	for r.bi < len(r.src.batches) && r.off >= r.src.batches[r.bi].NumRows() {
		r.bi++
		r.off = 0
	}
	if r.bi >= len(r.src.batches) {
		return false
	}
	if r.src.onBatch != nil {
		r.src.onBatch(r.n)
	}
	b := r.src.batches[r.bi]
	hi := min(r.off+r.bs, b.NumRows())
	cols := make([]arrow.Array, len(r.idx))
	for i, c := range r.idx {
		sl := array.NewSlice(b.Column(c), r.off, hi)
		if r.src.noCopy {
			cols[i] = sl
			continue
		}
		cp, err := array.Concatenate([]arrow.Array{sl}, r.mem)
		sl.Release()
		if err != nil {
			panic(err)
		}
		cols[i] = cp
	}
	r.cur = array.NewRecordBatch(r.schema, cols, hi-r.off)
	for _, c := range cols {
		c.Release()
	}
	r.off = hi
	r.n++
	r.src.served.Add(1)
	return true
}

// ---- plan construction ----

func scanOf(schema *arrow.Schema) *planner.Scan {
	return &planner.Scan{Dataset: "t", Out: schema}
}

func colIndex(schema *arrow.Schema, name string) int {
	is := schema.FieldIndices(name)
	if len(is) == 0 {
		panic("no column " + name)
	}
	return is[0]
}

// lit builds a literal for a column of type dt from a test value.
func lit(dt arrow.DataType, v any) *planner.Literal {
	return &planner.Literal{Type: dt, Value: v}
}

func pred(schema *arrow.Schema, col string, op planner.Op, v ...any) planner.Predicate {
	i := colIndex(schema, col)
	dt := schema.Field(i).Type
	p := planner.Predicate{Col: col, Index: i, Op: op}
	switch op {
	case planner.OpIsNull, planner.OpIsNotNull:
	case planner.OpIn, planner.OpNotIn:
		for _, x := range v {
			p.Values = append(p.Values, *lit(dt, x))
		}
	case planner.OpRange:
		if v[0] != nil {
			p.Min = lit(dt, v[0])
		}
		if v[1] != nil {
			p.Max = lit(dt, v[1])
		}
	default:
		p.Value = lit(dt, v[0])
	}
	return p
}

func filterOf(in planner.Node, preds ...planner.Predicate) *planner.Filter {
	return &planner.Filter{Input: in, Preds: preds}
}

func projectOf(in planner.Node, cols ...string) *planner.Project {
	s := in.Schema()
	p := &planner.Project{Input: in, Columns: cols}
	var fs []arrow.Field
	for _, c := range cols {
		i := colIndex(s, c)
		p.Indices = append(p.Indices, i)
		fs = append(fs, s.Field(i))
	}
	p.Out = arrow.NewSchema(fs, nil)
	return p
}

// agg is "fn:col" (col "*" for count(*)), or "quantile:col:q".
func aggOf(in planner.Node, keys []string, aggs ...string) *planner.Aggregate {
	s := in.Schema()
	a := &planner.Aggregate{Input: in, GroupBy: keys}
	var fs []arrow.Field
	for _, k := range keys {
		i := colIndex(s, k)
		a.GroupIdx = append(a.GroupIdx, i)
		f := s.Field(i)
		f.Type = planner.Decoded(f.Type)
		fs = append(fs, f)
	}
	for _, spec := range aggs {
		fns, col, _ := strings.Cut(spec, ":")
		fn := planner.AggFn(fns)
		var q float64
		if c, qs, ok := strings.Cut(col, ":"); ok {
			col = c
			fmt.Sscan(qs, &q)
		}
		e := planner.AggExpr{Fn: fn, Col: col, Q: q, Index: -1, Name: fns + "_" + col}
		if fn == planner.AggQuantile {
			e.Name = fmt.Sprintf("quantile_%v_%s", q, col)
		}
		var in arrow.DataType
		if col != "*" {
			e.Index = colIndex(s, col)
			in = s.Field(e.Index).Type
		} else {
			e.Name = "count_all"
		}
		switch fn {
		case planner.AggCount:
			e.Type = arrow.PrimitiveTypes.Int64
		case planner.AggSum:
			if arrow.IsInteger(in.ID()) {
				e.Type = arrow.PrimitiveTypes.Int64
			} else {
				e.Type = arrow.PrimitiveTypes.Float64
			}
		case planner.AggAvg, planner.AggMedian, planner.AggQuantile, planner.AggStddev:
			e.Type = arrow.PrimitiveTypes.Float64
		case planner.AggCountDistinct:
			e.Type = arrow.PrimitiveTypes.Int64
		default:
			e.Type = planner.Decoded(in)
		}
		a.Aggs = append(a.Aggs, e)
		fs = append(fs, arrow.Field{Name: e.Name, Type: e.Type, Nullable: true})
	}
	a.Out = arrow.NewSchema(fs, nil)
	return a
}

// key is "col" or "-col" (descending).
func sortOf(in planner.Node, keys ...string) *planner.Sort {
	s := &planner.Sort{Input: in}
	for _, k := range keys {
		desc := strings.HasPrefix(k, "-")
		k = strings.TrimPrefix(k, "-")
		s.Keys = append(s.Keys, planner.SortKey{Col: k, Index: colIndex(in.Schema(), k), Desc: desc})
	}
	return s
}

func limitOf(in planner.Node, offset, count int64) *planner.Limit {
	return &planner.Limit{Input: in, Offset: offset, Count: count}
}

// ---- results ----

// cell converts one value to the test convention (see tcol); uint64 stays uint64.
func cell(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Uint8:
		return int64(a.Value(i))
	case *array.Uint16:
		return int64(a.Value(i))
	case *array.Uint32:
		return int64(a.Value(i))
	case *array.Uint64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Date32:
		return int32(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	case *array.Dictionary:
		return cell(a.Dictionary(), a.GetValueIndex(i))
	case *array.List: // rendered, so that cells stay comparable with ==
		start, end := a.ValueOffsets(i)
		items := make([]any, 0, end-start)
		for j := start; j < end; j++ {
			items = append(items, cell(a.ListValues(), int(j)))
		}
		return fmt.Sprint(items)
	}
	panic(fmt.Sprintf("cell: %T", arr))
}

// drain reads every batch of r (checking each against the reader's schema)
// and returns the rows and r.Err(). It releases r.
func drain(t testing.TB, r array.RecordReader) ([][]any, error) {
	t.Helper()
	defer r.Release()
	var rows [][]any
	for r.Next() {
		b := r.RecordBatch()
		if !b.Schema().Equal(r.Schema()) {
			t.Fatalf("batch schema %v != reader schema %v", b.Schema(), r.Schema())
		}
		if b.NumRows() == 0 {
			t.Fatalf("empty batch")
		}
		for i := range int(b.NumRows()) {
			row := make([]any, b.NumCols())
			for c := range row {
				row[c] = cell(b.Column(c), i)
			}
			rows = append(rows, row)
		}
	}
	return rows, r.Err()
}

// run executes plan over src and returns the rows and the first error.
func run(t testing.TB, plan planner.Node, src catalog.Source, opts Options) ([][]any, error) {
	t.Helper()
	r, err := Execute(context.Background(), plan, src, opts)
	if err != nil {
		return nil, err
	}
	return drain(t, r)
}

func cellEq(a, b any) bool {
	return cellWith(a, b, func(x, y float64) bool { return x == y })
}

// cellWith compares cells, floats by floatEq (NaN equals NaN).
func cellWith(a, b any, floatEq func(x, y float64) bool) bool {
	fa, oka := a.(float64)
	fb, okb := b.(float64)
	if oka && okb {
		if math.IsNaN(fa) || math.IsNaN(fb) {
			return math.IsNaN(fa) && math.IsNaN(fb)
		}
		return floatEq(fa, fb)
	}
	return a == b
}

func rowsEq(a, b [][]any) bool { return rowsWith(a, b, cellEq) }

// rowsWith compares rows cell by cell with same.
func rowsWith(a, b [][]any, same func(a, b any) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if !same(a[i][j], b[i][j]) {
				return false
			}
		}
	}
	return true
}

func fmtRows(rows [][]any) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintln(&b, r...)
	}
	return b.String()
}

func newAlloc() *memory.CheckedAllocator {
	return memory.NewCheckedAllocator(memory.NewGoAllocator())
}

// vals is a shorthand for []any.
func vals(v ...any) []any { return v }

// computeOf appends expression columns ("expr" or "expr AS name") to in.
func computeOf(in planner.Node, exprs ...string) *planner.Compute {
	c := &planner.Compute{Input: in}
	for _, text := range exprs {
		e, alias, err := planner.ParseExpr(text)
		if err != nil {
			panic(err)
		}
		if err := planner.BindExpr(e, in.Schema()); err != nil {
			panic(err)
		}
		if alias == "" {
			alias = e.String()
		}
		c.Exprs = append(c.Exprs, planner.NamedExpr{Name: alias, Expr: e})
	}
	return c
}
