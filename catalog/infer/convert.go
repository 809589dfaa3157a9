package infer

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ConvertColumn turns a string column into the kind's Arrow type.
func ConvertColumn(mem memory.Allocator, in *array.String, k Kind) (arrow.Array, error) {
	switch dt := k.ArrowType(); {
	case k == KindBool:
		b := array.NewBooleanBuilder(mem)
		return ConvertEach(in, b, func(s string) bool {
			v, ok := ParseBool(s)
			b.UnsafeAppend(v)
			return ok
		}, "a bool")
	case dt.ID() == arrow.TIMESTAMP:
		b := array.NewTimestampBuilder(mem, dt.(*arrow.TimestampType))
		return ConvertEach(in, b, func(s string) bool {
			var ms int64
			ok := false
			if k == KindTSZoned || k == KindTSNaive {
				var zoned bool
				ms, zoned, ok = ParseTimestamp(s)
				ok = ok && zoned == (k == KindTSZoned)
			} else {
				ms, ok = ParseTSKind(k, s)
			}
			b.UnsafeAppend(arrow.Timestamp(ms))
			return ok
		}, "a "+dt.String()+" timestamp")
	case dt.ID() == arrow.DATE32 && k != KindDate:
		b := array.NewDate32Builder(mem)
		return ConvertEach(in, b, func(s string) bool {
			d, ok := ParseDateKind(k, s)
			b.UnsafeAppend(arrow.Date32(d))
			return ok
		}, "a "+k.layout()+" date")
	}
	return nil, fmt.Errorf("no conversion for column kind %d", k)
}

// ConvertEach builds b from the cells of in: nulls stay null, every other
// cell goes through add, which appends it and reports whether it parsed.
// It consumes b.
func ConvertEach(in *array.String, b array.Builder, add func(string) bool, what string) (arrow.Array, error) {
	defer b.Release()
	b.Reserve(in.Len())
	for i := range in.Len() {
		if in.IsNull(i) {
			b.AppendNull()
		} else if !add(in.Value(i)) {
			return nil, fmt.Errorf("value %q is not %s", in.Value(i), what)
		}
	}
	return b.NewArray(), nil
}

// IntsToFloats converts an int64 array of KindInt values to float64
// (float64(v) is exact for them, and what strconv.ParseFloat gives for
// their text).
func IntsToFloats(mem memory.Allocator, a *array.Int64) arrow.Array {
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	b.Reserve(a.Len())
	for i := range a.Len() {
		if a.IsNull(i) {
			b.UnsafeAppendBoolToBitmap(false)
		} else {
			b.UnsafeAppend(float64(a.Value(i)))
		}
	}
	return b.NewArray()
}
