package service

import (
	"context"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
)

// tableRows is the chunk in which a collected result is read back.
const tableRows = 64 << 10

// tableSource serves a collected result (a materialize.Table, in memory
// or spilled) as a catalog.Source, so a chart's query runs over a result
// handle, a SQL result or the output of a spec that aggregates.
type tableSource struct{ t *materialize.Table }

// Scan implements catalog.Source: the table's rows, projected to
// opts.Columns (filters are left to the engine).
func (s tableSource) Scan(ctx context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	schema := s.t.ScanSchema()
	var idx []int
	var fields []arrow.Field
	for _, c := range opts.Columns {
		is := schema.FieldIndices(c)
		if len(is) == 0 {
			return nil, qerr.Internal(nil, "result source: no column %q", c)
		}
		idx, fields = append(idx, is[0]), append(fields, schema.Field(is[0]))
	}
	rr := s.t.Reader(ctx, tableRows)
	if len(opts.Columns) == 0 {
		return rr, nil
	}
	out := arrow.NewSchema(fields, nil)
	return &mapReader{RecordReader: rr, schema: out, fn: func(b arrow.RecordBatch) arrow.RecordBatch {
		cols := make([]arrow.Array, len(idx))
		for i, j := range idx {
			cols[i] = b.Column(j)
		}
		return array.NewRecordBatch(out, cols, b.NumRows())
	}}, nil
}

// isTemporal reports whether t is drawn on a time axis.
func isTemporal(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return true
	}
	return false
}

// isInteger reports whether t holds whole numbers (histogram bins of
// integers are whole numbers wide).
func isInteger(t arrow.DataType) bool {
	return isNumber(t) && t.ID() != arrow.FLOAT32 && t.ID() != arrow.FLOAT64
}

// isPlotNumber reports whether t is drawn as a number (decimals too).
func isPlotNumber(t arrow.DataType) bool {
	return isNumber(t) || t.ID() == arrow.DECIMAL128 || t.ID() == arrow.DECIMAL256 || t.ID() == arrow.FLOAT16
}

// numAt is value i of a as a float64 (dates and timestamps as Unix
// seconds); false for nulls, NaN and types that are not numbers.
func numAt(a arrow.Array, i int) (float64, bool) {
	if a.IsNull(i) {
		return 0, false
	}
	var v float64
	switch x := a.(type) {
	case *array.Int8:
		v = float64(x.Value(i))
	case *array.Int16:
		v = float64(x.Value(i))
	case *array.Int32:
		v = float64(x.Value(i))
	case *array.Int64:
		v = float64(x.Value(i))
	case *array.Uint8:
		v = float64(x.Value(i))
	case *array.Uint16:
		v = float64(x.Value(i))
	case *array.Uint32:
		v = float64(x.Value(i))
	case *array.Uint64:
		v = float64(x.Value(i))
	case *array.Float32:
		v = float64(x.Value(i))
	case *array.Float64:
		v = x.Value(i)
	case *array.Date32:
		v = float64(x.Value(i)) * 86400
	case *array.Date64:
		v = float64(x.Value(i)) / 1000
	case *array.Timestamp:
		unit := x.DataType().(*arrow.TimestampType).Unit
		v = float64(x.Value(i)) / float64(time1s(unit))
	case *array.Decimal128, *array.Decimal256, *array.Float16:
		f, err := strconv.ParseFloat(a.ValueStr(i), 64)
		if err != nil {
			return 0, false
		}
		v = f
	default:
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// time1s is the number of units in a second.
func time1s(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1
	case arrow.Millisecond:
		return 1e3
	case arrow.Microsecond:
		return 1e6
	}
	return 1e9
}

// intAt is a count column's value i (0 for null).
func intAt(a arrow.Array, i int) int64 {
	v, _ := numAt(a, i)
	return int64(v)
}

// strAt is value i of a as text (a category): "null" for nulls.
func strAt(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "null"
	}
	return a.ValueStr(i)
}
