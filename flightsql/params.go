package flightsql

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// paramValues turns row 0 of a parameter batch into the values of $1,
// $2, ... (column order): integers, floats, decimals, strings, booleans
// and nulls as the SQL front-end takes them; dates and timestamps as
// ISO text (the dialect compares them with temporal columns); anything
// else is refused.
func paramValues(rec arrow.RecordBatch) ([]any, error) {
	out := make([]any, rec.NumCols())
	for i, col := range rec.Columns() {
		v, err := paramValue(col, 0)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "invalid_argument: parameter $%d (%s): %v", i+1, col.DataType(), err)
		}
		out[i] = v
	}
	return out, nil
}

type errParamType struct{}

func (errParamType) Error() string {
	return "unsupported parameter type; bind integers, floats, decimals, strings, booleans, dates, timestamps or null"
}

func paramValue(col arrow.Array, i int) (any, error) {
	if col.IsNull(i) {
		return nil, nil
	}
	switch a := col.(type) {
	case *array.Int8:
		return int64(a.Value(i)), nil
	case *array.Int16:
		return int64(a.Value(i)), nil
	case *array.Int32:
		return int64(a.Value(i)), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Uint8:
		return int64(a.Value(i)), nil
	case *array.Uint16:
		return int64(a.Value(i)), nil
	case *array.Uint32:
		return int64(a.Value(i)), nil
	case *array.Uint64:
		if v := a.Value(i); v <= math.MaxInt64 {
			return int64(v), nil
		}
		return json.Number(strconv.FormatUint(a.Value(i), 10)), nil
	case *array.Float32:
		return float64(a.Value(i)), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.String, *array.LargeString, *array.StringView, *array.Boolean,
		*array.Decimal128, *array.Decimal256, *array.Date32, *array.Date64, *array.Timestamp:
		return textParam(col, i)
	case *array.Dictionary:
		return paramValue(a.Dictionary(), a.GetValueIndex(i))
	}
	return nil, errParamType{}
}

// textParam is a value given by its text form (ValueStr): strings as
// they are, booleans as bool, decimals as exact numbers, temporal values
// as ISO text.
func textParam(col arrow.Array, i int) (any, error) {
	s := col.ValueStr(i)
	switch col.DataType().ID() {
	case arrow.BOOL:
		return s == "true", nil
	case arrow.DECIMAL128, arrow.DECIMAL256:
		return json.Number(s), nil
	case arrow.TIMESTAMP:
		// ValueStr prints "2024-01-02 03:04:05Z"-like text; keep it ISO.
		ts := col.(*array.Timestamp)
		unit := ts.DataType().(*arrow.TimestampType).Unit
		return ts.Value(i).ToTime(unit).UTC().Format("2006-01-02T15:04:05.999999999Z"), nil
	}
	return s, nil
}
