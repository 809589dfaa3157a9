package engine

import "github.com/apache/arrow-go/v18/arrow"

// The per-type state constructors of the built-in aggregates that
// newAggState dispatches to. id is the input's type (arrow.STRING for
// dictionary-encoded strings), dt the input type, out the output type of
// the type-keeping functions; each returns nil for an unsupported type.

// newFirstLastState is first's (or, with last, last's) state.
func newFirstLastState(id arrow.Type, dt, out arrow.DataType, last bool, a *acct) aggState {
	switch id {
	case arrow.INT8, arrow.UINT8:
		return &firstLast[uint8]{dt: dt, last: last}
	case arrow.INT16, arrow.UINT16:
		return &firstLast[uint16]{dt: dt, last: last}
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		return &firstLast[uint32]{dt: dt, last: last}
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP:
		return &firstLast[uint64]{dt: dt, last: last}
	case arrow.BOOL:
		return &firstLastBool{last: last}
	case arrow.STRING, arrow.LARGE_STRING:
		return &firstLastStr{dt: out, last: last, acct: a}
	}
	return nil
}

// newSumState is sum's state and its output type: int64 for integers
// (col names the column in overflow errors), float64 for floats.
func newSumState(id arrow.Type, col string) (aggState, arrow.DataType) {
	var s aggState
	switch id {
	case arrow.INT8:
		s = &sumInt[int8]{col: col}
	case arrow.INT16:
		s = &sumInt[int16]{col: col}
	case arrow.INT32:
		s = &sumInt[int32]{col: col}
	case arrow.INT64:
		s = &sumInt[int64]{col: col}
	case arrow.UINT8:
		s = &sumInt[uint8]{col: col}
	case arrow.UINT16:
		s = &sumInt[uint16]{col: col}
	case arrow.UINT32:
		s = &sumInt[uint32]{col: col}
	case arrow.UINT64:
		s = &sumInt[uint64]{col: col}
	case arrow.FLOAT32, arrow.FLOAT64:
		return &decSum{}, arrow.PrimitiveTypes.Float64 // exact while decimal (agg_decimal.go, agg_decimal32.go)
	default:
		return nil, nil
	}
	return s, arrow.PrimitiveTypes.Int64
}

// newAvgState is avg's state (float64 output).
func newAvgState(id arrow.Type) aggState {
	switch id {
	case arrow.INT8:
		return &avgState[int8]{}
	case arrow.INT16:
		return &avgState[int16]{}
	case arrow.INT32:
		return &avgState[int32]{}
	case arrow.INT64:
		return &avgState[int64]{}
	case arrow.UINT8:
		return &avgState[uint8]{}
	case arrow.UINT16:
		return &avgState[uint16]{}
	case arrow.UINT32:
		return &avgState[uint32]{}
	case arrow.UINT64:
		return &avgState[uint64]{}
	case arrow.FLOAT32, arrow.FLOAT64:
		return &decSum{avg: true} // exact while decimal (agg_decimal.go, agg_decimal32.go)
	}
	return nil
}

// newMinMaxState is min's (or, with isMax, max's) state.
func newMinMaxState(id arrow.Type, dt, out arrow.DataType, isMax bool, a *acct) aggState {
	switch id {
	case arrow.INT8:
		return &minMax[int8]{dt: dt, max: isMax}
	case arrow.INT16:
		return &minMax[int16]{dt: dt, max: isMax}
	case arrow.INT32:
		return &minMax[int32]{dt: dt, max: isMax}
	case arrow.INT64:
		return &minMax[int64]{dt: dt, max: isMax}
	case arrow.UINT8:
		return &minMax[uint8]{dt: dt, max: isMax}
	case arrow.UINT16:
		return &minMax[uint16]{dt: dt, max: isMax}
	case arrow.UINT32:
		return &minMax[uint32]{dt: dt, max: isMax}
	case arrow.UINT64:
		return &minMax[uint64]{dt: dt, max: isMax}
	case arrow.FLOAT32:
		return &minMax[float32]{dt: dt, max: isMax}
	case arrow.FLOAT64:
		return &minMax[float64]{dt: dt, max: isMax}
	case arrow.DATE32:
		return &minMax[arrow.Date32]{dt: dt, max: isMax}
	case arrow.TIMESTAMP:
		return &minMax[arrow.Timestamp]{dt: dt, max: isMax}
	case arrow.BOOL:
		return &minMaxBool{max: isMax}
	case arrow.STRING, arrow.LARGE_STRING:
		return &minMaxStr{dt: out, max: isMax, acct: a}
	}
	return nil
}
