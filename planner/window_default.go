package planner

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// windowDefault coerces the default of lag/lead to the result type t (the
// column's type, dictionaries decoded): like a filter operand, but an
// integer must fit the column's type exactly and JSON null is no default.
func windowDefault(t arrow.DataType, raw json.RawMessage) (*Literal, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	lit, err := coerce(raw, t)
	if err != nil {
		return nil, err
	}
	if isInteger(t) {
		v, ok := lit.Value.(int64)
		lo, hi := intRange(t)
		if !ok || v < lo || (hi >= 0 && v > hi) {
			return nil, fmt.Errorf("default %s does not fit the column type %s", string(raw), typeName(t))
		}
	}
	if t.ID() == arrow.FLOAT32 {
		if f := lit.Value.(float64); math.Abs(f) > math.MaxFloat32 && !math.IsInf(f, 0) {
			return nil, fmt.Errorf("default %s does not fit the column type %s", string(raw), typeName(t))
		}
	}
	return &lit, nil
}

// intRange is the value range of an integer type (hi < 0: up to MaxInt64;
// uint64 values above that are not accepted as defaults).
func intRange(t arrow.DataType) (lo, hi int64) {
	switch t.ID() {
	case arrow.INT8:
		return math.MinInt8, math.MaxInt8
	case arrow.INT16:
		return math.MinInt16, math.MaxInt16
	case arrow.INT32:
		return math.MinInt32, math.MaxInt32
	case arrow.UINT8:
		return 0, math.MaxUint8
	case arrow.UINT16:
		return 0, math.MaxUint16
	case arrow.UINT32:
		return 0, math.MaxUint32
	case arrow.UINT64:
		return 0, -1
	}
	return math.MinInt64, -1
}
