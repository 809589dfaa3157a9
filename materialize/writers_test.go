package materialize

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// allTypesTable has one column per type WriteParquet maps natively, plus
// nested columns (JSON), with nulls in every column.
func allTypesTable(t testing.TB, mem memory.Allocator) *Table {
	t.Helper()
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	db := array.NewDictionaryBuilder(mem, dictType).(*array.BinaryDictionaryBuilder)
	defer db.Release()
	_ = db.AppendString("red")
	db.AppendNull()
	_ = db.AppendString("blue")
	_ = db.AppendString("red")
	_ = db.AppendString("green")
	dict := db.NewArray()
	// int16 indices: the column cache's dictionary type
	dict16Type := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	db16 := array.NewDictionaryBuilder(mem, dict16Type).(*array.BinaryDictionaryBuilder)
	defer db16.Release()
	_ = db16.AppendString("east")
	_ = db16.AppendString("west")
	db16.AppendNull()
	_ = db16.AppendString("west")
	_ = db16.AppendString("naïve")
	dict16 := db16.NewArray()

	fb := array.NewFloat64Builder(mem)
	defer fb.Release()
	fb.AppendValues([]float64{math.NaN(), math.Inf(-1), math.Copysign(0, -1)}, nil)
	fb.Append(1.5)
	fb.AppendNull()
	f64 := fb.NewArray()

	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	sb.AppendValues([]string{"héllo, \"world\"\nline2", "", "bad\xff", "Բարեւ 🎉"}, nil)
	sb.AppendNull()
	str := sb.NewArray()

	decb := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 20, Scale: 2})
	defer decb.Release()
	decb.Append(decimal128.FromI64(12345))
	decb.Append(decimal128.FromI64(-1))
	decb.AppendNull()
	decb.Append(decimal128.FromBigInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(19), nil)))
	decb.Append(decimal128.FromI64(0))
	dec := decb.NewArray()

	names := []string{"b", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "s", "ls", "bin",
		"d32", "d64", "ts_s_utc", "ts_ms", "ts_us_ny", "ts_ns", "t32", "t64", "dict", "dict16", "dec", "list", "struct", "dur", "empty"}
	cols := []arrow.Array{
		fromJSON(t, mem, arrow.FixedWidthTypes.Boolean, `[true, false, null, true, false]`),
		fromJSON(t, mem, arrow.PrimitiveTypes.Int8, `[-128, 127, null, 0, 1]`),
		fromJSON(t, mem, arrow.PrimitiveTypes.Int16, `[-32768, 32767, null, 0, 1]`),
		fromJSON(t, mem, arrow.PrimitiveTypes.Int32, `[-2147483648, 2147483647, null, 0, 1]`),
		fromJSON(t, mem, arrow.PrimitiveTypes.Int64, `[-9223372036854775808, 9223372036854775807, null, 0, 1]`),
		fromJSON(t, mem, arrow.PrimitiveTypes.Uint8, `[255, 0, null, 1, 2]`),
		fromJSON(t, mem, arrow.PrimitiveTypes.Uint16, `[65535, 0, null, 1, 2]`),
		fromJSON(t, mem, arrow.PrimitiveTypes.Uint32, `[4294967295, 0, null, 1, 2]`),
		fromJSON(t, mem, arrow.PrimitiveTypes.Uint64, `[18446744073709551615, 0, null, 1, 2]`),
		fromJSON(t, mem, arrow.PrimitiveTypes.Float32, `[0.1, -1e30, null, 0, 3.5]`),
		f64,
		str,
		fromJSON(t, mem, arrow.BinaryTypes.LargeString, `["a", null, "c", "d", "e"]`),
		fromJSON(t, mem, arrow.BinaryTypes.Binary, `["AAEC/w==", "", null, "YQ==", "Yg=="]`),
		fromJSON(t, mem, arrow.FixedWidthTypes.Date32, `[19787, -1, null, 0, 1]`),
		fromJSON(t, mem, arrow.FixedWidthTypes.Date64, `[1709596800000, -86400000, null, 0, 86400000]`),
		fromJSON(t, mem, arrow.FixedWidthTypes.Timestamp_s, `[1709618828, -1, null, 0, 1]`),
		fromJSON(t, mem, &arrow.TimestampType{Unit: arrow.Millisecond}, `[1709618828123, -500, null, 0, 1]`),
		fromJSON(t, mem, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"}, `[1709618828123456, -1, null, 0, 1]`),
		fromJSON(t, mem, &arrow.TimestampType{Unit: arrow.Nanosecond}, `[1709618828123456789, -1, null, 0, 1]`),
		fromJSON(t, mem, arrow.FixedWidthTypes.Time32s, `[86399, 0, null, 1, 2]`),
		fromJSON(t, mem, arrow.FixedWidthTypes.Time64ns, `[86399999999999, 0, null, 1, 2]`),
		dict,
		dict16,
		dec,
		fromJSON(t, mem, arrow.ListOf(arrow.PrimitiveTypes.Int64), `[[1, null], null, [], [9007199254740993], [2]]`),
		fromJSON(t, mem, arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}), `[{"x": "a"}, null, {"x": null}, {"x": "b"}, {"x": "c"}]`),
		fromJSON(t, mem, arrow.FixedWidthTypes.Duration_ms, `[1500, null, -1, 0, 1]`),
		array.NewNull(5),
	}
	return tableOf(t, names, cols...)
}

type pqExpect struct {
	kind    parquet.Kind
	logical string // LogicalType().String(), "" for none
}

func TestParquetRoundTrip(t *testing.T) {
	alloc := newAlloc(t)
	tbl := allTypesTable(t, alloc)
	defer tbl.Release()
	batches := sliceBatches(t, tbl, 0, tbl.NumRows())
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	var buf bytes.Buffer
	if err := WriteParquet(context.Background(), &buf, tbl.Schema(), batches); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if pf.NumRows() != 5 {
		t.Fatalf("rows %d", pf.NumRows())
	}

	expect := map[string]pqExpect{
		"b":        {parquet.Boolean, ""},
		"i8":       {parquet.Int32, "INT(8,true)"},
		"i16":      {parquet.Int32, "INT(16,true)"},
		"i32":      {parquet.Int32, "INT(32,true)"},
		"i64":      {parquet.Int64, "INT(64,true)"},
		"u8":       {parquet.Int32, "INT(8,false)"},
		"u16":      {parquet.Int32, "INT(16,false)"},
		"u32":      {parquet.Int32, "INT(32,false)"},
		"u64":      {parquet.Int64, "INT(64,false)"},
		"f32":      {parquet.Float, ""},
		"f64":      {parquet.Double, ""},
		"s":        {parquet.ByteArray, "STRING"},
		"ls":       {parquet.ByteArray, "STRING"},
		"bin":      {parquet.ByteArray, ""},
		"d32":      {parquet.Int32, "DATE"},
		"d64":      {parquet.Int32, "DATE"},
		"ts_s_utc": {parquet.Int64, "TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS)"},
		"ts_ms":    {parquet.Int64, "TIMESTAMP(isAdjustedToUTC=false,unit=MILLIS)"},
		"ts_us_ny": {parquet.Int64, "TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)"},
		"ts_ns":    {parquet.Int64, "TIMESTAMP(isAdjustedToUTC=false,unit=NANOS)"},
		"t32":      {parquet.Int32, "TIME(isAdjustedToUTC=false,unit=MILLIS)"},
		"t64":      {parquet.Int64, "TIME(isAdjustedToUTC=false,unit=NANOS)"},
		"dict":     {parquet.ByteArray, "STRING"},
		"dict16":   {parquet.ByteArray, "STRING"},
		"dec":      {parquet.FixedLenByteArray, "DECIMAL(20,2)"},
		"list":     {parquet.ByteArray, "JSON"},
		"struct":   {parquet.ByteArray, "JSON"},
		"dur":      {parquet.Int64, "INT(64,true)"},
	}
	fields := pf.Schema().Fields()
	names := ColumnNames(tbl.Schema())
	if len(fields) != len(names) {
		t.Fatalf("%d parquet columns, want %d", len(fields), len(names))
	}
	for i, f := range fields {
		if f.Name() != names[i] {
			t.Errorf("column %d is %q, want %q (order must follow the Arrow schema)", i, f.Name(), names[i])
		}
		if !f.Optional() {
			t.Errorf("%s is not optional", f.Name())
		}
		e, ok := expect[f.Name()]
		if !ok {
			continue
		}
		if k := f.Type().Kind(); k != e.kind {
			t.Errorf("%s: kind %v, want %v", f.Name(), k, e.kind)
		}
		lt := ""
		if l := f.Type().LogicalType(); l != nil {
			lt = l.String()
		}
		if lt != e.logical {
			t.Errorf("%s: logical type %q, want %q", f.Name(), lt, e.logical)
		}
	}

	// Compression and statistics.
	md := pf.Metadata()
	if len(md.RowGroups) != 1 {
		t.Fatalf("%d row groups", len(md.RowGroups))
	}
	for _, cc := range md.RowGroups[0].Columns {
		if cc.MetaData.Codec != format.Snappy { // the default
			t.Errorf("%v: codec %v", cc.MetaData.PathInSchema, cc.MetaData.Codec)
		}
	}
	i64 := md.RowGroups[0].Columns[4].MetaData.Statistics
	if i64.NullCount != 1 || int64(binary.LittleEndian.Uint64(i64.MinValue)) != math.MinInt64 || int64(binary.LittleEndian.Uint64(i64.MaxValue)) != math.MaxInt64 {
		t.Errorf("i64 statistics %+v", i64)
	}

	// Values.
	r := parquet.NewReader(pf)
	defer r.Close()
	rows := make([]parquet.Row, 10)
	n, _ := r.ReadRows(rows)
	if n != 5 {
		t.Fatalf("read %d rows", n)
	}
	col := func(name string) int {
		for i, n := range names {
			if n == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	type check struct {
		name string
		want []any // nil = null
	}
	checks := []check{
		{"b", []any{true, false, nil, true, false}},
		{"i8", []any{int32(-128), int32(127), nil, int32(0), int32(1)}},
		{"i16", []any{int32(-32768), int32(32767), nil, int32(0), int32(1)}},
		{"i32", []any{int32(math.MinInt32), int32(math.MaxInt32), nil, int32(0), int32(1)}},
		{"i64", []any{int64(math.MinInt64), int64(math.MaxInt64), nil, int64(0), int64(1)}},
		{"u8", []any{int32(255), int32(0), nil, int32(1), int32(2)}},
		{"u16", []any{int32(65535), int32(0), nil, int32(1), int32(2)}},
		{"u32", []any{int32(-1), int32(0), nil, int32(1), int32(2)}}, // UINT_32 bits
		{"u64", []any{int64(-1), int64(0), nil, int64(1), int64(2)}},
		{"f32", []any{float32(0.1), float32(-1e30), nil, float32(0), float32(3.5)}},
		{"f64", []any{math.NaN(), math.Inf(-1), math.Copysign(0, -1), 1.5, nil}},
		{"s", []any{"héllo, \"world\"\nline2", "", "bad\uFFFD", "Բարեւ 🎉", nil}},
		{"ls", []any{"a", nil, "c", "d", "e"}},
		{"bin", []any{"\x00\x01\x02\xff", "", nil, "a", "b"}},
		{"d32", []any{int32(19787), int32(-1), nil, int32(0), int32(1)}},
		{"d64", []any{int32(19787), int32(-1), nil, int32(0), int32(1)}},
		{"ts_s_utc", []any{int64(1709618828000), int64(-1000), nil, int64(0), int64(1000)}},
		{"ts_ms", []any{int64(1709618828123), int64(-500), nil, int64(0), int64(1)}},
		{"ts_us_ny", []any{int64(1709618828123456), int64(-1), nil, int64(0), int64(1)}},
		{"ts_ns", []any{int64(1709618828123456789), int64(-1), nil, int64(0), int64(1)}},
		{"t32", []any{int32(86399000), int32(0), nil, int32(1000), int32(2000)}},
		{"t64", []any{int64(86399999999999), int64(0), nil, int64(1), int64(2)}},
		{"dict", []any{"red", nil, "blue", "red", "green"}},
		{"dict16", []any{"east", "west", nil, "west", "naïve"}},
		{"dec", []any{decBytes(12345), decBytes(-1), nil, decBytesBig(new(big.Int).Exp(big.NewInt(10), big.NewInt(19), nil)), decBytes(0)}},
		{"list", []any{`[1,null]`, nil, `[]`, `["9007199254740993"]`, `[2]`}},
		{"struct", []any{`{"x":"a"}`, nil, `{"x":null}`, `{"x":"b"}`, `{"x":"c"}`}},
		{"dur", []any{int64(1500), nil, int64(-1), int64(0), int64(1)}},
		{"empty", []any{nil, nil, nil, nil, nil}},
	}
	for _, c := range checks {
		ci := col(c.name)
		for ri, want := range c.want {
			v := rows[ri][ci]
			if v.Column() != ci {
				t.Errorf("%s row %d: value of column %d", c.name, ri, v.Column())
			}
			if want == nil {
				if !v.IsNull() {
					t.Errorf("%s row %d: %v, want null", c.name, ri, v)
				}
				continue
			}
			if v.IsNull() {
				t.Errorf("%s row %d: null, want %v", c.name, ri, want)
				continue
			}
			var got any
			switch want.(type) {
			case bool:
				got = v.Boolean()
			case int32:
				got = v.Int32()
			case int64:
				got = v.Int64()
			case float32:
				got = v.Float()
			case float64:
				got = v.Double()
				if math.IsNaN(want.(float64)) && math.IsNaN(got.(float64)) {
					continue
				}
				if math.Signbit(want.(float64)) != math.Signbit(got.(float64)) {
					t.Errorf("%s row %d: sign of %v", c.name, ri, got)
				}
			case string:
				got = string(v.ByteArray())
			}
			if got != want {
				t.Errorf("%s row %d: %#v, want %#v", c.name, ri, got, want)
			}
		}
	}
}

func decBytes(v int64) string { return decBytesBig(big.NewInt(v)) }

func decBytesBig(v *big.Int) string {
	n := decimal128.FromBigInt(v)
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(n.HighBits()))
	binary.BigEndian.PutUint64(b[8:], n.LowBits())
	return string(b[:])
}

// TestParquetRowGroups writes more than one row group's worth of rows in
// odd-sized batches and reads every id back in order.
func TestParquetRowGroups(t *testing.T) {
	alloc := newAlloc(t)
	rows := ParquetRowGroupRows*2 + 1234
	tbl := idTable(t, alloc, rows, 50_001)
	defer tbl.Release()
	batches := sliceBatches(t, tbl, 0, tbl.NumRows())
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	var buf bytes.Buffer
	if err := WriteParquet(context.Background(), &buf, tbl.Schema(), batches); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata()
	if len(md.RowGroups) != 3 || md.RowGroups[0].NumRows != ParquetRowGroupRows || md.RowGroups[2].NumRows != 1234 {
		t.Fatalf("row groups: %d", len(md.RowGroups))
	}
	r := parquet.NewReader(pf)
	defer r.Close()
	buf2 := make([]parquet.Row, 1000)
	next := int64(0)
	for {
		n, err := r.ReadRows(buf2)
		for _, row := range buf2[:n] {
			if row[0].Int64() != next {
				t.Fatalf("row %d has id %d", next, row[0].Int64())
			}
			if next%7 == 3 {
				if !row[1].IsNull() || !row[2].IsNull() {
					t.Fatalf("row %d: nulls lost", next)
				}
			} else if string(row[1].ByteArray()) != "row-"+itoa(next) || row[2].Double() != float64(next)/2 {
				t.Fatalf("row %d: %v", next, row)
			}
			next++
		}
		if err != nil {
			break
		}
	}
	if next != int64(rows) {
		t.Fatalf("read %d rows, want %d", next, rows)
	}
}

func itoa(v int64) string { return big.NewInt(v).String() }

// TestParquetEmpty writes a zero-row file.
func TestParquetEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteParquet(context.Background(), &buf, idSchema, nil); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if pf.NumRows() != 0 || len(pf.Schema().Fields()) != 3 {
		t.Fatalf("rows %d fields %d", pf.NumRows(), len(pf.Schema().Fields()))
	}
}

func TestCSVRoundTrip(t *testing.T) {
	alloc := newAlloc(t)
	tbl := allTypesTable(t, alloc)
	defer tbl.Release()
	batches := sliceBatches(t, tbl, 0, tbl.NumRows())
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	var buf bytes.Buffer
	if err := WriteCSV(context.Background(), &buf, tbl.Schema(), batches); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(buf.String(), "\r\n") {
		t.Errorf("records do not end with CRLF")
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	names := ColumnNames(tbl.Schema())
	if strings.Join(recs[0], ",") != strings.Join(names, ",") {
		t.Errorf("header %q", recs[0])
	}
	if len(recs) != 6 {
		t.Fatalf("%d records", len(recs))
	}
	want := map[string][]string{
		"b":        {"true", "false", "", "true", "false"},
		"i64":      {"-9223372036854775808", "9223372036854775807", "", "0", "1"},
		"u64":      {"18446744073709551615", "0", "", "1", "2"},
		"f32":      {"0.1", "-1e+30", "", "0", "3.5"},
		"f64":      {"NaN", "-Infinity", "-0", "1.5", ""},
		"s":        {"héllo, \"world\"\nline2", "", "bad\uFFFD", "Բարեւ 🎉", ""},
		"bin":      {"AAEC/w==", "", "", "YQ==", "Yg=="},
		"d32":      {"2024-03-05", "1969-12-31", "", "1970-01-01", "1970-01-02"},
		"ts_s_utc": {"2024-03-05T06:07:08Z", "1969-12-31T23:59:59Z", "", "1970-01-01T00:00:00Z", "1970-01-01T00:00:01Z"},
		"ts_ms":    {"2024-03-05T06:07:08.123", "1969-12-31T23:59:59.500", "", "1970-01-01T00:00:00.000", "1970-01-01T00:00:00.001"},
		"ts_us_ny": {"2024-03-05T01:07:08.123456-05:00", "1969-12-31T18:59:59.999999-05:00", "", "1969-12-31T19:00:00.000000-05:00", "1969-12-31T19:00:00.000001-05:00"},
		"t32":      {"23:59:59", "00:00:00", "", "00:00:01", "00:00:02"},
		"dict":     {"red", "", "blue", "red", "green"},
		"dict16":   {"east", "west", "", "west", "naïve"},
		"dec":      {"123.45", "-0.01", "", "100000000000000000.00", "0.00"},
		"list":     {"[1,null]", "", "[]", `["9007199254740993"]`, "[2]"},
		"struct":   {`{"x":"a"}`, "", `{"x":null}`, `{"x":"b"}`, `{"x":"c"}`},
		"dur":      {"1500", "", "-1", "0", "1"},
		"empty":    {"", "", "", "", ""},
	}
	for c, name := range names {
		w, ok := want[name]
		if !ok {
			continue
		}
		for r := range 5 {
			if got := recs[r+1][c]; got != w[r] {
				t.Errorf("%s row %d: %q, want %q", name, r, got, w[r])
			}
		}
	}
}

func TestCSVNullsAndEmpty(t *testing.T) {
	alloc := newAlloc(t)
	tbl := tableOf(t, []string{"s"}, fromJSON(t, alloc, arrow.BinaryTypes.String, `["a", null, "", "x,y"]`))
	defer tbl.Release()
	var buf bytes.Buffer
	bs := sliceBatches(t, tbl, 0, 4)
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	if err := WriteCSV(context.Background(), &buf, tbl.Schema(), bs); err != nil {
		t.Fatal(err)
	}
	// One column: a null must not become a blank line (readers skip those).
	if want := "s\r\na\r\n\"\"\r\n\"\"\r\n\"x,y\"\r\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != 5 {
		t.Fatalf("%v %v", recs, err)
	}

	tbl2 := tableOf(t, []string{"a", "b"},
		fromJSON(t, alloc, arrow.BinaryTypes.String, `[null, ""]`),
		fromJSON(t, alloc, arrow.PrimitiveTypes.Int32, `[1, null]`))
	defer tbl2.Release()
	bs2 := sliceBatches(t, tbl2, 0, 2)
	defer func() {
		for _, b := range bs2 {
			b.Release()
		}
	}()
	buf.Reset()
	if err := WriteCSV(context.Background(), &buf, tbl2.Schema(), bs2); err != nil {
		t.Fatal(err)
	}
	if want := "a,b\r\n,1\r\n\"\",\r\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

// TestRandomTablesWriters writes random tables as Parquet and CSV and reads
// them back: the row counts and the CSV cells (against the JSON encoder's
// text) must match.
func TestRandomTablesWriters(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for iter := range 25 {
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		tbl := randomTable(t, alloc, r, 1+r.IntN(200))
		bs := sliceBatches(t, tbl, 0, tbl.NumRows())
		var pq, cs bytes.Buffer
		if err := WriteParquet(context.Background(), &pq, tbl.Schema(), bs); err != nil {
			t.Fatalf("iter %d: %v (schema %s)", iter, err, tbl.Schema())
		}
		if err := WriteCSV(context.Background(), &cs, tbl.Schema(), bs); err != nil {
			t.Fatal(err)
		}
		pf, err := parquet.OpenFile(bytes.NewReader(pq.Bytes()), int64(pq.Len()))
		if err != nil || pf.NumRows() != tbl.NumRows() {
			t.Fatalf("iter %d: parquet %v rows %d", iter, err, pf.NumRows())
		}
		recs, err := csv.NewReader(&cs).ReadAll()
		if err != nil || int64(len(recs)) != tbl.NumRows()+1 {
			t.Fatalf("iter %d: csv %v, %d records", iter, err, len(recs))
		}
		data, _, _ := EncodeRecords(context.Background(), tbl, 0, tbl.NumRows(), 0)
		var js []map[string]json.RawMessage
		if err := json.Unmarshal(data, &js); err != nil {
			t.Fatal(err)
		}
		names := ColumnNames(tbl.Schema())
		for ri, rec := range recs[1:] {
			for ci, cell := range rec {
				raw := js[ri][names[ci]]
				var want string
				switch {
				case string(raw) == "null":
					want = ""
				case raw[0] == '"':
					_ = json.Unmarshal(raw, &want)
				default:
					want = string(raw)
				}
				if cell != want && !(len(rec) == 1 && string(raw) == "null") {
					// Integers beyond 2^53 are JSON strings but plain CSV numbers: same text.
					t.Fatalf("iter %d row %d col %s: csv %q, json %s", iter, ri, names[ci], cell, raw)
				}
			}
		}
		for _, b := range bs {
			b.Release()
		}
		tbl.Release()
		alloc.AssertSize(t, 0)
	}
}

// TestParquetMoreTypes covers the less common type mappings.
func TestParquetMoreTypes(t *testing.T) {
	alloc := newAlloc(t)
	f16 := array.NewFloat16Builder(alloc)
	defer f16.Release()
	f16.AppendValues([]float16.Num{float16.New(1.5), float16.New(-2)}, []bool{true, false})
	fsb := array.NewFixedSizeBinaryBuilder(alloc, &arrow.FixedSizeBinaryType{ByteWidth: 3})
	defer fsb.Release()
	fsb.AppendValues([][]byte{[]byte("abc"), []byte("xyz")}, nil)
	d32 := array.NewDecimal32Builder(alloc, &arrow.Decimal32Type{Precision: 5, Scale: 2})
	defer d32.Release()
	d32.AppendValues([]decimal.Decimal32{12345, -1}, nil)
	d64s := array.NewDecimal64Builder(alloc, &arrow.Decimal64Type{Precision: 8, Scale: 1})
	defer d64s.Release()
	d64s.AppendValues([]decimal.Decimal64{99, -7}, nil)
	d64 := array.NewDecimal64Builder(alloc, &arrow.Decimal64Type{Precision: 18, Scale: 3})
	defer d64.Release()
	d64.AppendValues([]decimal.Decimal64{1 << 40, -5}, nil)
	d256 := array.NewDecimal256Builder(alloc, &arrow.Decimal256Type{Precision: 50, Scale: 0})
	defer d256.Release()
	d256.AppendValues([]decimal256.Num{decimal256.FromI64(-2), decimal256.FromI64(1)}, nil)

	tbl := tableOf(t, []string{"f16", "fsb", "d32", "d64s", "d64", "d256", "sv", "bv", "t64us"},
		f16.NewArray(), fsb.NewArray(), d32.NewArray(), d64s.NewArray(), d64.NewArray(), d256.NewArray(),
		fromJSON(t, alloc, arrow.BinaryTypes.StringView, `["a string that is long enough", "s"]`),
		fromJSON(t, alloc, arrow.BinaryTypes.BinaryView, `["YWJj", null]`),
		fromJSON(t, alloc, arrow.FixedWidthTypes.Time64us, `[1, 86399999999]`),
	)
	defer tbl.Release()
	bs := sliceBatches(t, tbl, 0, 2)
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	var buf bytes.Buffer
	if err := WriteParquet(context.Background(), &buf, tbl.Schema(), bs); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	want := []pqExpect{
		{parquet.Float, ""}, {parquet.FixedLenByteArray, ""}, {parquet.Int32, "DECIMAL(5,2)"},
		{parquet.Int32, "DECIMAL(8,1)"}, {parquet.Int64, "DECIMAL(18,3)"}, {parquet.FixedLenByteArray, "DECIMAL(50,0)"},
		{parquet.ByteArray, "STRING"}, {parquet.ByteArray, ""}, {parquet.Int64, "TIME(isAdjustedToUTC=false,unit=MICROS)"},
	}
	for i, f := range pf.Schema().Fields() {
		lt := ""
		if l := f.Type().LogicalType(); l != nil {
			lt = l.String()
		}
		if f.Type().Kind() != want[i].kind || lt != want[i].logical {
			t.Errorf("%s: %v %q, want %v %q", f.Name(), f.Type().Kind(), lt, want[i].kind, want[i].logical)
		}
	}
	r := parquet.NewReader(pf)
	defer r.Close()
	rows := make([]parquet.Row, 2)
	if n, _ := r.ReadRows(rows); n != 2 {
		t.Fatalf("read %d", n)
	}
	row := rows[0]
	m256 := make([]byte, 32)
	for i := range m256 {
		m256[i] = 0xff
	}
	m256[31] = 0xfe
	if row[0].Float() != 1.5 || !rows[1][0].IsNull() || string(row[1].ByteArray()) != "abc" || row[2].Int32() != 12345 ||
		row[3].Int32() != 99 || row[4].Int64() != 1<<40 || !bytes.Equal(row[5].ByteArray(), m256) ||
		string(row[6].ByteArray()) != "a string that is long enough" || string(row[7].ByteArray()) != "abc" || !rows[1][7].IsNull() ||
		rows[1][8].Int64() != 86399999999 {
		t.Errorf("values: %v / %v", rows[0], rows[1])
	}
}
