package engine

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// defaultRef is the row reference of a lag/lead row whose offset row is
// outside the partition when the function has a default value.
var defaultRef = rowRef{-2, 0}

// literalArray is a one-row array of type t holding lit (a window default,
// coerced by the planner to t: see planner.Literal).
func literalArray(mem memory.Allocator, t arrow.DataType, lit *planner.Literal) (arrow.Array, error) {
	b := array.NewBuilder(mem, t)
	defer b.Release()
	ok := true
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(lit.Value.(int64)))
	case *array.Int16Builder:
		b.Append(int16(lit.Value.(int64)))
	case *array.Int32Builder:
		b.Append(int32(lit.Value.(int64)))
	case *array.Int64Builder:
		b.Append(lit.Value.(int64))
	case *array.Uint8Builder:
		b.Append(uint8(lit.Value.(int64)))
	case *array.Uint16Builder:
		b.Append(uint16(lit.Value.(int64)))
	case *array.Uint32Builder:
		b.Append(uint32(lit.Value.(int64)))
	case *array.Uint64Builder:
		b.Append(uint64(lit.Value.(int64)))
	case *array.Float32Builder:
		b.Append(float32(lit.Value.(float64)))
	case *array.Float64Builder:
		b.Append(lit.Value.(float64))
	case *array.StringBuilder:
		b.Append(lit.Value.(string))
	case *array.LargeStringBuilder:
		b.Append(lit.Value.(string))
	case *array.BooleanBuilder:
		b.Append(lit.Value.(bool))
	case *array.Date32Builder:
		b.Append(arrow.Date32(lit.Value.(int32)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(lit.Value.(int64)))
	default:
		ok = false
	}
	if !ok {
		return nil, qerr.Internal(nil, "window default: no builder for %s", t)
	}
	return b.NewArray(), nil
}
