package service

import (
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/qerr"
)

// The round option (DeliveryOptions.Round, docs/QUERY.md "Rounding"):
// float columns the query computed (aggregates, windows, expressions; any
// float column whose name is not a float column of the dataset read) are
// rounded to round significant digits, half to even on the decimal digits
// (strconv), before the result is delivered in any format. Columns read
// from the dataset are left as they are.

// maxRound is the most significant digits round takes (a float64 needs at
// most 17 to be printed exactly).
const maxRound = 17

// checkRound validates the round option (0: off).
func checkRound(n int) error {
	if n < 0 || n > maxRound {
		return qerr.Invalid(qerr.CodeInvalidArgument, "round must be from 1 to %d significant digits, got %d", maxRound, n).
			With("field", "round").WithHint("pass round: 4 for 75.79, or omit round for full precision")
	}
	return nil
}

// roundSig is x rounded to n significant digits.
func roundSig(x float64, n int) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	y, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'e', n-1, 64), 64)
	return y
}

// computedFloats are the indexes of the float columns of out that are not
// float columns of the input schema in (nil: no input, every float column
// is computed).
func computedFloats(out, in *arrow.Schema) []int {
	var idx []int
	for i, f := range out.Fields() {
		if !arrow.IsFloating(f.Type.ID()) {
			continue
		}
		if in != nil {
			if j := in.FieldIndices(f.Name); len(j) == 1 && arrow.IsFloating(in.Field(j[0]).Type.ID()) {
				continue
			}
		}
		idx = append(idx, i)
	}
	return idx
}

// roundReader rounds the columns cols of rr's batches to digits
// significant digits.
type roundReader struct {
	mem    memory.Allocator
	cols   []int
	digits int
}

// newRoundReader wraps rr (taking over its reference) when round is on and
// some column is computed; else it returns rr.
func newRoundReader(rr array.RecordReader, mem memory.Allocator, in *arrow.Schema, digits int) array.RecordReader {
	if digits == 0 {
		return rr
	}
	cols := computedFloats(rr.Schema(), in)
	if len(cols) == 0 {
		return rr
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	r := &roundReader{mem: mem, cols: cols, digits: digits}
	return &mapReader{RecordReader: rr, schema: rr.Schema(), fn: r.batch}
}

// batch is b with the computed float columns rounded.
func (r *roundReader) batch(b arrow.RecordBatch) arrow.RecordBatch {
	arrs := make([]arrow.Array, b.NumCols())
	copy(arrs, b.Columns())
	for _, c := range r.cols {
		arrs[c] = r.round(arrs[c])
		defer arrs[c].Release()
	}
	return array.NewRecordBatch(b.Schema(), arrs, b.NumRows())
}

// round is col with every value rounded (same type and nulls).
func (r *roundReader) round(col arrow.Array) arrow.Array {
	switch a := col.(type) {
	case *array.Float64:
		b := array.NewFloat64Builder(r.mem)
		defer b.Release()
		b.Reserve(a.Len())
		for i := range a.Len() {
			if a.IsNull(i) {
				b.AppendNull()
			} else {
				b.UnsafeAppend(roundSig(a.Value(i), r.digits))
			}
		}
		return b.NewArray()
	case *array.Float32:
		b := array.NewFloat32Builder(r.mem)
		defer b.Release()
		b.Reserve(a.Len())
		for i := range a.Len() {
			if a.IsNull(i) {
				b.AppendNull()
			} else {
				b.UnsafeAppend(float32(roundSig(float64(a.Value(i)), r.digits)))
			}
		}
		return b.NewArray()
	}
	col.Retain()
	return col
}
