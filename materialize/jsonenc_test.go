package materialize

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/quarrydb/quarry/internal/jsonx"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var (
	tsInstant = time.Date(2024, 3, 5, 6, 7, 8, 123456789, time.UTC)
	preEpoch  = time.Date(1969, 12, 31, 23, 59, 59, 500_000_000, time.UTC)
)

func tsArray(mem memory.Allocator, unit arrow.TimeUnit, tz string, vals ...any) arrow.Array {
	b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: unit, TimeZone: tz})
	defer b.Release()
	for _, v := range vals {
		switch v := v.(type) {
		case nil:
			b.AppendNull()
		case time.Time:
			var n int64
			switch unit {
			case arrow.Second:
				n = v.Unix()
			case arrow.Millisecond:
				n = v.UnixMilli()
			case arrow.Microsecond:
				n = v.UnixMicro()
			default:
				n = v.UnixNano()
			}
			b.Append(arrow.Timestamp(n))
		}
	}
	return b.NewArray()
}

func days(y int, m time.Month, d int) int64 {
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// TestJSONEdgeValues is the golden table of the JSON mapping.
func TestJSONEdgeValues(t *testing.T) {
	type tc struct {
		name  string
		build func(mem memory.Allocator) arrow.Array
		want  []string // JSON of each element
	}
	cases := []tc{
		{"int64", func(mem memory.Allocator) arrow.Array {
			return fromJSON(t, mem, arrow.PrimitiveTypes.Int64, `[9223372036854775807, -9223372036854775808, 9007199254740992, 9007199254740993, -9007199254740993, 0, null]`)
		}, []string{`"9223372036854775807"`, `"-9223372036854775808"`, `9007199254740992`, `"9007199254740993"`, `"-9007199254740993"`, `0`, `null`}},
		{"uint64", func(mem memory.Allocator) arrow.Array {
			return fromJSON(t, mem, arrow.PrimitiveTypes.Uint64, `[18446744073709551615, 9007199254740992, 1, null]`)
		}, []string{`"18446744073709551615"`, `9007199254740992`, `1`, `null`}},
		{"int8", func(mem memory.Allocator) arrow.Array {
			return fromJSON(t, mem, arrow.PrimitiveTypes.Int8, `[-128, 127, null]`)
		}, []string{`-128`, `127`, `null`}},
		{"int16/32 uint8/16/32", func(mem memory.Allocator) arrow.Array {
			return fromJSON(t, mem, arrow.PrimitiveTypes.Uint32, `[4294967295, 0]`)
		}, []string{`4294967295`, `0`}},
		{"float64", func(mem memory.Allocator) arrow.Array {
			b := array.NewFloat64Builder(mem)
			defer b.Release()
			b.AppendValues([]float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0.1, 1e21, 1e-7, 123456789, math.MaxFloat64, 5e-324}, nil)
			b.AppendNull()
			return b.NewArray()
		}, []string{`"NaN"`, `"Infinity"`, `"-Infinity"`, `-0`, `0.1`, `1e+21`, `1e-7`, `123456789`, `1.7976931348623157e+308`, `5e-324`, `null`}},
		{"float32", func(mem memory.Allocator) arrow.Array {
			b := array.NewFloat32Builder(mem)
			defer b.Release()
			b.AppendValues([]float32{0.1, float32(math.NaN()), float32(math.Inf(-1)), 3.4028235e38}, nil)
			return b.NewArray()
		}, []string{`0.1`, `"NaN"`, `"-Infinity"`, `3.4028235e+38`}},
		{"float16", func(mem memory.Allocator) arrow.Array {
			b := array.NewFloat16Builder(mem)
			defer b.Release()
			b.Append(float16.New(1.5))
			b.AppendNull()
			return b.NewArray()
		}, []string{`1.5`, `null`}},
		{"bool", func(mem memory.Allocator) arrow.Array {
			return fromJSON(t, mem, arrow.FixedWidthTypes.Boolean, `[true, false, null]`)
		}, []string{`true`, `false`, `null`}},
		{"string", func(mem memory.Allocator) arrow.Array {
			b := array.NewStringBuilder(mem)
			defer b.Release()
			b.AppendValues([]string{
				"plain", "", "quote\" back\\slash", "tab\tnl\ncr\r", "\x00\x01\x1f\x7f", "héllo 🎉 Բարեւ ✓",
				"bad\xffutf8\xc3", "\u2028\u2029", "</script>&",
			}, nil)
			b.AppendNull()
			return b.NewArray()
		}, []string{`"plain"`, `""`, `"quote\" back\\slash"`, `"tab\tnl\ncr\r"`, `"\u0000\u0001\u001f` + "\x7f" + `"`, `"héllo 🎉 Բարեւ ✓"`,
			`"bad` + "\uFFFD" + `utf8` + "\uFFFD" + `"`, `"\u2028\u2029"`, `"</script>&"`, `null`}},
		{"large_string", func(mem memory.Allocator) arrow.Array {
			return fromJSON(t, mem, arrow.BinaryTypes.LargeString, `["Ա", null]`)
		}, []string{`"Ա"`, `null`}},
		{"string_view", func(mem memory.Allocator) arrow.Array {
			return fromJSON(t, mem, arrow.BinaryTypes.StringView, `["a long enough string to not be inlined", "x"]`)
		}, []string{`"a long enough string to not be inlined"`, `"x"`}},
		{"binary", func(mem memory.Allocator) arrow.Array {
			b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
			defer b.Release()
			b.AppendValues([][]byte{{0, 1, 2, 0xff}, {}}, nil)
			b.AppendNull()
			return b.NewArray()
		}, []string{`"AAEC/w=="`, `""`, `null`}},
		{"date32", func(mem memory.Allocator) arrow.Array {
			b := array.NewDate32Builder(mem)
			defer b.Release()
			for _, d := range []int64{days(2024, 3, 5), -1, 0, days(1, 1, 1), days(2000, 2, 29), days(9999, 12, 31)} {
				b.Append(arrow.Date32(d))
			}
			b.AppendNull()
			return b.NewArray()
		}, []string{`"2024-03-05"`, `"1969-12-31"`, `"1970-01-01"`, `"0001-01-01"`, `"2000-02-29"`, `"9999-12-31"`, `null`}},
		{"date64", func(mem memory.Allocator) arrow.Array {
			b := array.NewDate64Builder(mem)
			defer b.Release()
			b.Append(arrow.Date64(days(2024, 3, 5) * 86_400_000))
			b.Append(arrow.Date64(-1))
			return b.NewArray()
		}, []string{`"2024-03-05"`, `"1969-12-31"`}},
		{"timestamp s utc", func(mem memory.Allocator) arrow.Array {
			return tsArray(mem, arrow.Second, "UTC", tsInstant, nil)
		}, []string{`"2024-03-05T06:07:08Z"`, `null`}},
		{"timestamp ms utc", func(mem memory.Allocator) arrow.Array {
			return tsArray(mem, arrow.Millisecond, "UTC", tsInstant, preEpoch)
		}, []string{`"2024-03-05T06:07:08.123Z"`, `"1969-12-31T23:59:59.500Z"`}},
		{"timestamp us utc", func(mem memory.Allocator) arrow.Array {
			return tsArray(mem, arrow.Microsecond, "Etc/UTC", tsInstant)
		}, []string{`"2024-03-05T06:07:08.123456Z"`}},
		{"timestamp ns utc", func(mem memory.Allocator) arrow.Array {
			return tsArray(mem, arrow.Nanosecond, "utc", tsInstant, preEpoch)
		}, []string{`"2024-03-05T06:07:08.123456789Z"`, `"1969-12-31T23:59:59.500000000Z"`}},
		{"timestamp s naive", func(mem memory.Allocator) arrow.Array {
			return tsArray(mem, arrow.Second, "", tsInstant)
		}, []string{`"2024-03-05T06:07:08"`}},
		{"timestamp ms naive", func(mem memory.Allocator) arrow.Array {
			return tsArray(mem, arrow.Millisecond, "", tsInstant, preEpoch)
		}, []string{`"2024-03-05T06:07:08.123"`, `"1969-12-31T23:59:59.500"`}},
		{"timestamp us naive", func(mem memory.Allocator) arrow.Array {
			return tsArray(mem, arrow.Microsecond, "", tsInstant)
		}, []string{`"2024-03-05T06:07:08.123456"`}},
		{"timestamp ns naive", func(mem memory.Allocator) arrow.Array {
			return tsArray(mem, arrow.Nanosecond, "", tsInstant, nil)
		}, []string{`"2024-03-05T06:07:08.123456789"`, `null`}},
		{"timestamp ms new york", func(mem memory.Allocator) arrow.Array {
			return tsArray(mem, arrow.Millisecond, "America/New_York", tsInstant, time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC))
		}, []string{`"2024-03-05T01:07:08.123-05:00"`, `"2024-07-01T08:00:00.000-04:00"`}},
		{"timestamp s offset", func(mem memory.Allocator) arrow.Array {
			return tsArray(mem, arrow.Second, "+05:30", tsInstant)
		}, []string{`"2024-03-05T11:37:08+05:30"`}},
		{"time32", func(mem memory.Allocator) arrow.Array {
			b := array.NewTime32Builder(mem, arrow.FixedWidthTypes.Time32ms.(*arrow.Time32Type))
			defer b.Release()
			b.Append(arrow.Time32((13*3600+4*60+5)*1000 + 6))
			b.AppendNull()
			return b.NewArray()
		}, []string{`"13:04:05.006"`, `null`}},
		{"time32 s", func(mem memory.Allocator) arrow.Array {
			b := array.NewTime32Builder(mem, arrow.FixedWidthTypes.Time32s.(*arrow.Time32Type))
			defer b.Release()
			b.Append(arrow.Time32(86399))
			return b.NewArray()
		}, []string{`"23:59:59"`}},
		{"time64 ns", func(mem memory.Allocator) arrow.Array {
			b := array.NewTime64Builder(mem, arrow.FixedWidthTypes.Time64ns.(*arrow.Time64Type))
			defer b.Release()
			b.Append(arrow.Time64(1))
			return b.NewArray()
		}, []string{`"00:00:00.000000001"`}},
		{"decimal128", func(mem memory.Allocator) arrow.Array {
			b := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 4})
			defer b.Release()
			b.Append(decimal128.FromI64(1234500))
			b.Append(decimal128.FromI64(-5))
			b.Append(decimal128.FromBigInt(new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil), big.NewInt(1))))
			b.AppendNull()
			return b.NewArray()
		}, []string{`"123.4500"`, `"-0.0005"`, `"9999999999999999999999999999999999.9999"`, `null`}},
		{"dictionary", func(mem memory.Allocator) arrow.Array {
			dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
			b := array.NewDictionaryBuilder(mem, dt).(*array.BinaryDictionaryBuilder)
			defer b.Release()
			_ = b.AppendString("red")
			_ = b.AppendString("blue")
			b.AppendNull()
			_ = b.AppendString("red")
			return b.NewArray()
		}, []string{`"red"`, `"blue"`, `null`, `"red"`}},
		{"list", func(mem memory.Allocator) arrow.Array {
			return fromJSON(t, mem, arrow.ListOf(arrow.PrimitiveTypes.Int64), `[[1, null, 3], null, [], [9007199254740993]]`)
		}, []string{`[1,null,3]`, `null`, `[]`, `["9007199254740993"]`}},
		{"fixed_size_list", func(mem memory.Allocator) arrow.Array {
			return fromJSON(t, mem, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64), `[[1.5, 2], null, [null, 3]]`)
		}, []string{`[1.5,2]`, `null`, `[null,3]`}},
		{"struct", func(mem memory.Allocator) arrow.Array {
			dt := arrow.StructOf(
				arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
				arrow.Field{Name: "b\"q", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
				arrow.Field{Name: "c", Type: arrow.StructOf(arrow.Field{Name: "d", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}), Nullable: true},
			)
			return fromJSON(t, mem, dt, `[{"a": 1, "b\"q": ["x", null], "c": {"d": true}}, null, {"a": null, "b\"q": null, "c": null}]`)
		}, []string{`{"a":1,"b\"q":["x",null],"c":{"d":true}}`, `null`, `{"a":null,"b\"q":null,"c":null}`}},
		{"map string keys", func(mem memory.Allocator) arrow.Array {
			return fromJSON(t, mem, arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), `[[{"key": "x", "value": 1}, {"key": "y", "value": null}], null, []]`)
		}, []string{`{"x":1,"y":null}`, `null`, `{}`}},
		{"map int keys", func(mem memory.Allocator) arrow.Array {
			return fromJSON(t, mem, arrow.MapOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String), `[[{"key": 1, "value": "a"}]]`)
		}, []string{`[{"key":1,"value":"a"}]`}},
		{"null type", func(mem memory.Allocator) arrow.Array {
			return array.NewNull(2)
		}, []string{`null`, `null`}},
		{"duration", func(mem memory.Allocator) arrow.Array {
			return fromJSON(t, mem, arrow.FixedWidthTypes.Duration_ms, `[1500, null]`)
		}, []string{`1500`, `null`}},
		{"interval fallback", func(mem memory.Allocator) arrow.Array {
			b := array.NewMonthIntervalBuilder(mem)
			defer b.Release()
			b.Append(arrow.MonthInterval(3))
			b.AppendNull()
			return b.NewArray()
		}, []string{`{"months":3}`, `null`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			alloc := newAlloc(t)
			arr := tc.build(alloc)
			n := arr.Len()
			tbl := tableOf(t, []string{"v"}, arr)
			defer tbl.Release()
			got, err := Preview(tbl, n)
			if err != nil {
				t.Fatal(err)
			}
			recs := make([]string, len(tc.want))
			for i, w := range tc.want {
				recs[i] = `{"v":` + w + `}`
			}
			want := "[" + strings.Join(recs, ",") + "]"
			if string(got) != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			if !json.Valid(got) {
				t.Errorf("invalid JSON: %s", got)
			}
		})
	}
}

// TestJSONStringMatchesEncodingJSON checks appendJSONString against
// encoding/json for valid UTF-8 (they must decode to the same string).
func TestJSONStringMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		s := randomString(r)
		enc := jsonx.AppendString(nil, s)
		if !json.Valid(enc) {
			t.Fatalf("invalid JSON for %q: %s", s, enc)
		}
		var back string
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatal(err)
		}
		// encoding/json replaces each invalid byte with U+FFFD; so do we.
		var ref string
		b, _ := json.Marshal(s)
		_ = json.Unmarshal(b, &ref)
		if back != ref || back != toValidUTF8(s) {
			t.Fatalf("%q: got %q, encoding/json %q", s, back, ref)
		}
	}
}

func randomString(r *rand.Rand) string {
	alphabet := []string{"a", "Z", " ", "\"", "\\", "\n", "\x00", "\x1f", "\x7f", "é", "🎉", "Ա", "\u2028", "\xff", "\xc3", "\xe2\x82", "<", "/"}
	var sb strings.Builder
	for range r.IntN(20) {
		sb.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return sb.String()
}

// TestEncodeRecordsBudget checks the incremental fit: the longest prefix
// under the byte cap, exact boundaries, and early stop.
func TestEncodeRecordsBudget(t *testing.T) {
	alloc := newAlloc(t)
	tbl := idTable(t, alloc, 1000, 64)
	defer tbl.Release()
	full, n, err := EncodeRecords(context.Background(), tbl, 0, 1000, 0)
	if err != nil || n != 1000 || !json.Valid(full) {
		t.Fatalf("full: %d %v", n, err)
	}
	for _, maxBytes := range []int64{1, 2, 30, 100, 1000, 4096, int64(len(full)) - 1, int64(len(full))} {
		data, n, err := EncodeRecords(context.Background(), tbl, 0, 1000, maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) > maxBytes && !(n == 0 && maxBytes < 2) {
			t.Errorf("maxBytes %d: %d bytes", maxBytes, len(data))
		}
		if !json.Valid(data) || int64(len(ids(t, data))) != n {
			t.Errorf("maxBytes %d: invalid page", maxBytes)
		}
		// One more row would not fit.
		if n < 1000 {
			more, m, _ := EncodeRecords(context.Background(), tbl, 0, n+1, 0)
			if m != n+1 || int64(len(more)) <= maxBytes {
				t.Errorf("maxBytes %d: %d rows, but %d rows take %d bytes", maxBytes, n, m, len(more))
			}
		}
	}
	// Offsets across batch boundaries.
	data, n, _ := EncodeRecords(context.Background(), tbl, 60, 10, 0)
	if got := ids(t, data); n != 10 || got[0] != 60 || got[9] != 69 {
		t.Errorf("offset page %v", got)
	}
	data, n, _ = EncodeRecords(context.Background(), tbl, 995, 10, 0)
	if n != 5 || len(ids(t, data)) != 5 {
		t.Errorf("tail page %d", n)
	}
	if data, n, _ := EncodeRecords(context.Background(), tbl, 1000, 10, 0); n != 0 || string(data) != "[]" {
		t.Errorf("past end: %s", data)
	}
}

// TestRandomTablesValidJSON is the fuzz-ish property: random tables of many
// types, with random nulls and slicing, always encode to valid JSON with the
// right number of records.
func TestRandomTablesValidJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for iter := range 60 {
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		tbl := randomTable(t, alloc, r, 1+r.IntN(80))
		off := int64(r.IntN(int(tbl.NumRows())))
		data, n, err := EncodeRecords(context.Background(), tbl, off, tbl.NumRows(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(data) {
			t.Fatalf("iter %d: invalid JSON: %s", iter, clipBytes(data))
		}
		var recs []map[string]json.RawMessage
		if err := json.Unmarshal(data, &recs); err != nil || int64(len(recs)) != n || n != tbl.NumRows()-off {
			t.Fatalf("iter %d: %d records, n %d, err %v", iter, len(recs), n, err)
		}
		for _, rec := range recs {
			if len(rec) != int(tbl.NumCols()) {
				t.Fatalf("iter %d: record has %d keys, want %d", iter, len(rec), tbl.NumCols())
			}
		}
		tbl.Release()
		alloc.AssertSize(t, 0)
	}
}

// randomTypes are the column types randomTable draws from.
var randomTypes = []arrow.DataType{
	arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32,
	arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32,
	arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String,
	arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary, arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64,
	arrow.FixedWidthTypes.Timestamp_s, arrow.FixedWidthTypes.Timestamp_ms, arrow.FixedWidthTypes.Timestamp_us,
	arrow.FixedWidthTypes.Timestamp_ns, &arrow.TimestampType{Unit: arrow.Microsecond},
	&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"},
	arrow.FixedWidthTypes.Time32s, arrow.FixedWidthTypes.Time64us, &arrow.Decimal128Type{Precision: 20, Scale: 3},
	arrow.ListOf(arrow.BinaryTypes.String), arrow.ListOf(arrow.PrimitiveTypes.Float64),
	arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true}),
	arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int16),
	&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String},
}

// randomTable builds a table of random columns, split into random batches
// (some of them slices of a larger batch).
func randomTable(t testing.TB, mem memory.Allocator, r *rand.Rand, rows int) *Table {
	ncols := 1 + r.IntN(6)
	fields := make([]arrow.Field, ncols)
	for i := range fields {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d%s", i, randomString(r)), Type: randomTypes[r.IntN(len(randomTypes))], Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for range rows + 5 {
		for i, f := range fields {
			appendRandom(b.Field(i), f.Type, r)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var batches []arrow.RecordBatch
	for lo := int64(2); lo < int64(rows)+2; {
		hi := min(int64(rows)+2, lo+1+int64(r.IntN(30)))
		batches = append(batches, rec.NewSlice(lo, hi))
		lo = hi
	}
	tbl := NewTable(schema, batches)
	for _, s := range batches {
		s.Release()
	}
	return tbl
}

func appendRandom(b array.Builder, dt arrow.DataType, r *rand.Rand) {
	if r.IntN(5) == 0 {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(r.IntN(2) == 0)
	case *array.Int8Builder:
		b.Append(int8(r.Int32()))
	case *array.Int16Builder:
		b.Append(int16(r.Int32()))
	case *array.Int32Builder:
		b.Append(r.Int32())
	case *array.Int64Builder:
		b.Append(int64(r.Uint64()) >> r.IntN(64))
	case *array.Uint8Builder:
		b.Append(uint8(r.Uint32()))
	case *array.Uint16Builder:
		b.Append(uint16(r.Uint32()))
	case *array.Uint32Builder:
		b.Append(r.Uint32())
	case *array.Uint64Builder:
		b.Append(r.Uint64() >> r.IntN(64))
	case *array.Float32Builder:
		b.Append([]float32{float32(math.NaN()), float32(math.Inf(1)), 0, -1.5, r.Float32() * 1e30}[r.IntN(5)])
	case *array.Float64Builder:
		b.Append([]float64{math.NaN(), math.Inf(-1), math.Copysign(0, -1), r.NormFloat64(), r.Float64() * 1e300}[r.IntN(5)])
	case *array.StringBuilder:
		b.Append(randomString(r))
	case *array.LargeStringBuilder:
		b.Append(randomString(r))
	case *array.BinaryBuilder:
		b.Append([]byte(randomString(r)))
	case *array.Date32Builder:
		b.Append(arrow.Date32(r.Int32N(5_000_000) - 2_500_000))
	case *array.Date64Builder:
		b.Append(arrow.Date64(r.Int64N(1<<45) - 1<<44))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(r.Int64N(1<<50) - 1<<49))
	case *array.Time32Builder:
		b.Append(arrow.Time32(r.Int32N(86400)))
	case *array.Time64Builder:
		b.Append(arrow.Time64(r.Int64N(86_400_000_000)))
	case *array.Decimal128Builder:
		b.Append(decimal128.FromI64(r.Int64() - math.MaxInt64/2))
	case *array.ListBuilder:
		b.Append(true)
		for range r.IntN(4) {
			appendRandom(b.ValueBuilder(), dt.(*arrow.ListType).Elem(), r)
		}
	case *array.StructBuilder:
		b.Append(true)
		st := dt.(*arrow.StructType)
		for i := range b.NumField() {
			appendRandom(b.FieldBuilder(i), st.Field(i).Type, r)
		}
	case *array.MapBuilder:
		b.Append(true)
		for k := range r.IntN(3) {
			b.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprintf("k%d%s", k, randomString(r)))
			appendRandom(b.ItemBuilder(), arrow.PrimitiveTypes.Int16, r)
		}
	case *array.BinaryDictionaryBuilder:
		_ = b.AppendString([]string{"a", "b", "ccc", randomString(r)}[r.IntN(4)])
	default:
		panic(fmt.Sprintf("appendRandom: %T", b))
	}
}

// benchRecords is the benchmark data: 10k rows of mixed columns.
func benchTable(b *testing.B) *Table {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us},
	}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	for i := range 10_000 {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%10 == 0 {
			rb.Field(1).AppendNull()
		} else {
			rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("user \"%d\" café", i))
		}
		rb.Field(2).(*array.Float64Builder).Append(float64(i) * 1.25)
		rb.Field(3).(*array.BooleanBuilder).Append(i%2 == 0)
		rb.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(tsInstant.UnixMicro() + int64(i)*1_000_003))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	return NewTable(schema, []arrow.RecordBatch{rec})
}

// BenchmarkEncode compares the Arrow JSON encoder with encoding/json over
// []map[string]any holding the same records (the map building is outside the
// timed loop, so encoding/json is favoured).
func BenchmarkEncode(b *testing.B) {
	tbl := benchTable(b)
	defer tbl.Release()
	b.Run("arrow", func(b *testing.B) {
		var size int
		for b.Loop() {
			data, _, err := EncodeRecords(context.Background(), tbl, 0, tbl.NumRows(), 0)
			if err != nil {
				b.Fatal(err)
			}
			size = len(data)
		}
		b.SetBytes(int64(size))
	})
	b.Run("arrow-64KiB-fit", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := EncodeRecords(context.Background(), tbl, 0, tbl.NumRows(), 65536); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		recs := make([]map[string]any, tbl.NumRows())
		rec := tbl.batches[0]
		for i := range recs {
			m := map[string]any{}
			for c, f := range tbl.Schema().Fields() {
				col := rec.Column(c)
				if col.IsNull(i) {
					m[f.Name] = nil
					continue
				}
				switch a := col.(type) {
				case *array.Int64:
					m[f.Name] = a.Value(i)
				case *array.String:
					m[f.Name] = a.Value(i)
				case *array.Float64:
					m[f.Name] = a.Value(i)
				case *array.Boolean:
					m[f.Name] = a.Value(i)
				case *array.Timestamp:
					m[f.Name] = time.UnixMicro(int64(a.Value(i))).UTC().Format("2006-01-02T15:04:05.000000")
				}
			}
			recs[i] = m
		}
		var size int
		for b.Loop() {
			data, err := json.Marshal(recs)
			if err != nil {
				b.Fatal(err)
			}
			size = len(data)
		}
		b.SetBytes(int64(size))
	})
	// encoding/json over typed structs (no maps, no key sorting): the
	// fastest encoding/json can do with the same records.
	b.Run("encoding_json_structs", func(b *testing.B) {
		type rec struct {
			ID    int64    `json:"id"`
			Name  *string  `json:"name"`
			Score *float64 `json:"score"`
			OK    bool     `json:"ok"`
			TS    string   `json:"ts"`
		}
		batch := tbl.batches[0]
		recs := make([]rec, tbl.NumRows())
		for i := range recs {
			r := rec{ID: batch.Column(0).(*array.Int64).Value(i), OK: batch.Column(3).(*array.Boolean).Value(i),
				TS: time.UnixMicro(int64(batch.Column(4).(*array.Timestamp).Value(i))).UTC().Format("2006-01-02T15:04:05.000000")}
			if !batch.Column(1).IsNull(i) {
				v := batch.Column(1).(*array.String).Value(i)
				r.Name = &v
			}
			if !batch.Column(2).IsNull(i) {
				v := batch.Column(2).(*array.Float64).Value(i)
				r.Score = &v
			}
			recs[i] = r
		}
		var size int
		for b.Loop() {
			data, err := json.Marshal(recs)
			if err != nil {
				b.Fatal(err)
			}
			size = len(data)
		}
		b.SetBytes(int64(size))
	})
}

// FuzzJSONString: any bytes encode to valid JSON that decodes to the input
// with invalid bytes replaced (run with go test -fuzz FuzzJSONString).
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\", "\x00\x1f\x7f", "\xff\xfe", "é🎉Ա", "\u2028", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := jsonx.AppendString(nil, s)
		if !json.Valid(enc) {
			t.Fatalf("invalid JSON for %q: %s", s, enc)
		}
		var back string
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatal(err)
		}
		if back != toValidUTF8(s) {
			t.Fatalf("%q decoded to %q, want %q", s, back, toValidUTF8(s))
		}
	})
}
