package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/materialize"
)

// duckdbOut is what interop/duckdb/check.js prints.
type duckdbOut struct {
	DuckDB  string `json:"duckdb"`
	Columns []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"columns"`
	Rows [][]*string `json:"rows"`
}

// duckdbCheck runs interop/duckdb/check.js on a Parquet file.
func duckdbCheck(t *testing.T, file string) duckdbOut {
	t.Helper()
	out := duckdbScript(t, "check.js", file)
	var res duckdbOut
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("check.js output: %v\n%s", err, out)
	}
	return res
}

// duckdbScript runs a script of interop/duckdb with args and returns its
// standard output (see nodeScript). The marker is the package added last
// to the lockfile, so an install older than the lockfile is redone.
func duckdbScript(t *testing.T, script string, args ...string) []byte {
	t.Helper()
	return nodeScript(t, "duckdb", "node_modules/exceljs/package.json", script, args...)
}

// duckCol is one column of the interop table: its Arrow values, the type
// DuckDB must report and the text DuckDB must print for each row ("" with
// null=true for SQL NULL), or a comparison for values whose text is not
// canonical (floats).
type duckCol struct {
	name     string
	arr      arrow.Array
	duckType string
	want     []*string
	same     func(got, want string) bool // nil: exact text
}

func s(v string) *string { return &v }

// floatSame compares DuckDB's float text with the expected value's bits.
func floatSame(bits int) func(got, want string) bool {
	parse := func(x string) (float64, bool) {
		switch strings.ToLower(x) {
		case "nan":
			return math.NaN(), true
		case "inf", "infinity":
			return math.Inf(1), true
		case "-inf", "-infinity":
			return math.Inf(-1), true
		}
		f, err := strconv.ParseFloat(x, bits)
		return f, err == nil
	}
	return func(got, want string) bool {
		g, ok1 := parse(got)
		w, ok2 := parse(want)
		if !ok1 || !ok2 {
			return false
		}
		if math.IsNaN(w) {
			return math.IsNaN(g)
		}
		if bits == 32 {
			return math.Float32bits(float32(g)) == math.Float32bits(float32(w))
		}
		return math.Float64bits(g) == math.Float64bits(w)
	}
}

// blobText is DuckDB's text of a BLOB: printable ASCII as is, other bytes
// as \xHH.
func blobText(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c >= 0x20 && c < 0x7f && c != '\\' {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, "\\x%02X", c)
		}
	}
	return sb.String()
}

// tsText is DuckDB's text of a timestamp: "YYYY-MM-DD HH:MM:SS[.fff]" with
// trailing zeros of the fraction dropped.
func tsText(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05.999999999")
}

func interopTable(t *testing.T, mem memory.Allocator) ([]duckCol, arrow.RecordBatch) {
	from := func(dt arrow.DataType, js string) arrow.Array {
		arr, _, err := array.FromJSON(mem, dt, strings.NewReader(js))
		if err != nil {
			t.Fatalf("%s %s: %v", dt, js, err)
		}
		return arr
	}
	ts := time.Date(2024, 3, 5, 6, 7, 8, 123456789, time.UTC)
	day := func(y int, m time.Month, d int) int64 { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400 }

	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	db := array.NewDictionaryBuilder(mem, dictType).(*array.BinaryDictionaryBuilder)
	defer db.Release()
	_ = db.AppendString("red")
	db.AppendNull()
	_ = db.AppendString("blue")
	_ = db.AppendString("red")

	fsb := array.NewFixedSizeBinaryBuilder(mem, &arrow.FixedSizeBinaryType{ByteWidth: 3})
	defer fsb.Release()
	fsb.AppendValues([][]byte{[]byte("abc"), {0, 1, 0xff}}, nil)
	fsb.AppendNull()
	fsb.Append([]byte("xyz"))

	f64 := array.NewFloat64Builder(mem)
	defer f64.Release()
	f64.AppendValues([]float64{0.1, math.Copysign(0, -1), 1e300, math.NaN(), 7}, nil)
	f64arr := f64.NewArray()
	f64s := array.NewSlice(f64arr, 0, 4) // a sliced array: 0.1, -0, 1e300, NaN
	f64arr.Release()
	f64inf := array.NewFloat64Builder(mem)
	defer f64inf.Release()
	f64inf.AppendValues([]float64{math.Inf(1), math.Inf(-1), 5e-324}, nil)
	f64inf.AppendNull()

	bigNeg, bigPos := int64(math.MinInt64), int64(math.MaxInt64)
	cols := []duckCol{
		{name: "flag", arr: from(arrow.FixedWidthTypes.Boolean, `[true, false, null, true]`), duckType: "BOOLEAN",
			want: []*string{s("true"), s("false"), nil, s("true")}},
		{name: "i8", arr: from(arrow.PrimitiveTypes.Int8, `[-128, 127, null, 0]`), duckType: "TINYINT",
			want: []*string{s("-128"), s("127"), nil, s("0")}},
		{name: "i16", arr: from(arrow.PrimitiveTypes.Int16, `[-32768, 32767, null, 1]`), duckType: "SMALLINT",
			want: []*string{s("-32768"), s("32767"), nil, s("1")}},
		{name: "i32", arr: from(arrow.PrimitiveTypes.Int32, `[-2147483648, 2147483647, null, 2]`), duckType: "INTEGER",
			want: []*string{s("-2147483648"), s("2147483647"), nil, s("2")}},
		{name: "big", arr: from(arrow.PrimitiveTypes.Int64, fmt.Sprintf(`[%d, %d, null, 9007199254740993]`, bigNeg, bigPos)), duckType: "BIGINT",
			want: []*string{s(strconv.FormatInt(bigNeg, 10)), s(strconv.FormatInt(bigPos, 10)), nil, s("9007199254740993")}},
		{name: "u8", arr: from(arrow.PrimitiveTypes.Uint8, `[255, 0, null, 1]`), duckType: "UTINYINT",
			want: []*string{s("255"), s("0"), nil, s("1")}},
		{name: "u16", arr: from(arrow.PrimitiveTypes.Uint16, `[65535, 0, null, 1]`), duckType: "USMALLINT",
			want: []*string{s("65535"), s("0"), nil, s("1")}},
		{name: "u32", arr: from(arrow.PrimitiveTypes.Uint32, `[4294967295, 0, null, 1]`), duckType: "UINTEGER",
			want: []*string{s("4294967295"), s("0"), nil, s("1")}},
		{name: "u64", arr: from(arrow.PrimitiveTypes.Uint64, `[18446744073709551615, 0, null, 9007199254740993]`), duckType: "UBIGINT",
			want: []*string{s("18446744073709551615"), s("0"), nil, s("9007199254740993")}},
		{name: "f32", arr: from(arrow.PrimitiveTypes.Float32, `[0.1, -1e30, null, 3.5]`), duckType: "FLOAT",
			want: []*string{s("0.1"), s("-1e30"), nil, s("3.5")}, same: floatSame(32)},
		{name: "f64", arr: f64s, duckType: "DOUBLE",
			want: []*string{s("0.1"), s("-0"), s("1e300"), s("nan")}, same: floatSame(64)},
		{name: "f64_inf", arr: f64inf.NewArray(), duckType: "DOUBLE",
			want: []*string{s("inf"), s("-inf"), s("5e-324"), nil}, same: floatSame(64)},
		{name: "text", arr: from(arrow.BinaryTypes.String, `["héllo, \"world\"\nline2", "", null, "Բարեւ 🎉 日本語"]`), duckType: "VARCHAR",
			want: []*string{s("héllo, \"world\"\nline2"), s(""), nil, s("Բարեւ 🎉 日本語")}},
		{name: "large_text", arr: from(arrow.BinaryTypes.LargeString, `["a", null, "ß", "z"]`), duckType: "VARCHAR",
			want: []*string{s("a"), nil, s("ß"), s("z")}},
		{name: "bin", arr: from(arrow.BinaryTypes.Binary, `["AAEC/w==", "", null, "YWJj"]`), duckType: "BLOB",
			want: []*string{s(blobText([]byte{0, 1, 2, 0xff})), s(""), nil, s("abc")}},
		{name: "fixed", arr: fsb.NewArray(), duckType: "BLOB",
			want: []*string{s("abc"), s(blobText([]byte{0, 1, 0xff})), nil, s("xyz")}},
		{name: "day", arr: from(arrow.FixedWidthTypes.Date32, fmt.Sprintf(`[%d, -1, null, %d]`, day(2024, 2, 29), day(1900, 1, 1))), duckType: "DATE",
			want: []*string{s("2024-02-29"), s("1969-12-31"), nil, s("1900-01-01")}},
		{name: "day64", arr: from(arrow.FixedWidthTypes.Date64, fmt.Sprintf(`[%d, null, 0, %d]`, day(2024, 3, 5)*86_400_000, day(2000, 1, 1)*86_400_000)), duckType: "DATE",
			want: []*string{s("2024-03-05"), nil, s("1970-01-01"), s("2000-01-01")}},
		{name: "ts_s_utc", arr: from(&arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, fmt.Sprintf(`[%d, -1, null, 0]`, ts.Unix())),
			duckType: "TIMESTAMP WITH TIME ZONE",
			want:     []*string{s("2024-03-05 06:07:08+00"), s("1969-12-31 23:59:59+00"), nil, s("1970-01-01 00:00:00+00")}},
		{name: "ts_ms_naive", arr: from(&arrow.TimestampType{Unit: arrow.Millisecond}, fmt.Sprintf(`[%d, -500, null, 1]`, ts.UnixMilli())),
			duckType: "TIMESTAMP",
			want:     []*string{s(tsText(ts.Truncate(time.Millisecond))), s("1969-12-31 23:59:59.5"), nil, s("1970-01-01 00:00:00.001")}},
		{name: "ts_us_ny", arr: from(&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"}, fmt.Sprintf(`[%d, null, 0, -1]`, ts.UnixMicro())),
			duckType: "TIMESTAMP WITH TIME ZONE",
			want:     []*string{s(tsText(ts.Truncate(time.Microsecond)) + "+00"), nil, s("1970-01-01 00:00:00+00"), s("1969-12-31 23:59:59.999999+00")}},
		{name: "ts_ns_naive", arr: from(&arrow.TimestampType{Unit: arrow.Nanosecond}, fmt.Sprintf(`[%d, null, 0, 1]`, ts.UnixNano())),
			duckType: "TIMESTAMP_NS",
			want:     []*string{s(tsText(ts)), nil, s("1970-01-01 00:00:00"), s("1970-01-01 00:00:00.000000001")}},
		{name: "t32", arr: from(arrow.FixedWidthTypes.Time32ms, `[86399999, 0, null, 1500]`), duckType: "TIME",
			want: []*string{s("23:59:59.999"), s("00:00:00"), nil, s("00:00:01.5")}},
		{name: "t64", arr: from(arrow.FixedWidthTypes.Time64us, `[86399999999, 1, null, 0]`), duckType: "TIME",
			want: []*string{s("23:59:59.999999"), s("00:00:00.000001"), nil, s("00:00:00")}},
		{name: "dur_ms", arr: from(arrow.FixedWidthTypes.Duration_ms, `[1500, null, -1, 0]`), duckType: "BIGINT",
			want: []*string{s("1500"), nil, s("-1"), s("0")}},
		{name: "price", arr: from(&arrow.Decimal128Type{Precision: 20, Scale: 2}, `["123.45", "-0.01", null, "99999999999999999.99"]`),
			duckType: "DECIMAL(20,2)", want: []*string{s("123.45"), s("-0.01"), nil, s("99999999999999999.99")}},
		{name: "color", arr: db.NewArray(), duckType: "VARCHAR", want: []*string{s("red"), nil, s("blue"), s("red")}},
		{name: "tags", arr: from(arrow.ListOf(arrow.PrimitiveTypes.Int64), `[[1, null], null, [], [9007199254740993]]`), duckType: "JSON",
			want: []*string{s("[1,null]"), nil, s("[]"), s(`["9007199254740993"]`)}},
		{name: "point", arr: from(arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			arrow.Field{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true}), `[{"x": 1.5, "label": "é"}, null, {"x": null, "label": null}, {"x": -2, "label": "q\""}]`),
			duckType: "JSON", want: []*string{s(`{"x":1.5,"label":"é"}`), nil, s(`{"x":null,"label":null}`), s(`{"x":-2,"label":"q\""}`)}},
		// An all-null (Arrow null type) column: INT32 without the NULL
		// logical type, which DuckDB cannot read as parquet-go writes it.
		{name: "nothing", arr: array.NewNull(4), duckType: "INTEGER", want: []*string{nil, nil, nil, nil}},
	}
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		if c.arr.Len() != 4 {
			t.Fatalf("column %s has %d rows", c.name, c.arr.Len())
		}
		fields[i] = arrow.Field{Name: c.name, Type: c.arr.DataType(), Nullable: true}
		arrs[i] = c.arr
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(schema, arrs, 4)
	for _, a := range arrs {
		a.Release()
	}
	return cols, rec
}

// TestDuckDBReadsQuarryParquet writes an artifact of every supported column
// type with Quarry's Parquet writer (through the artifact store, as a file
// result would be) and checks that DuckDB reads back the same types and
// values, nulls, Unicode, big int64s and timestamps with and without zone
// included. The "flat" case keeps only the columns of the writer's flat
// path (numbers, strings, binary, dates, times, timestamps, durations,
// dictionaries): a file of only those is encoded from the Arrow buffers
// (dictionary pages for dictionary columns), not through parquet-go's rows.
func TestDuckDBReadsQuarryParquet(t *testing.T) {
	for _, flat := range []bool{false, true} {
		t.Run(map[bool]string{false: "all", true: "flat"}[flat], func(t *testing.T) {
			cols, rec := interopTable(t, memory.DefaultAllocator)
			defer rec.Release()
			if flat {
				cols, rec = flatColumns(cols, rec)
				defer rec.Release()
			}
			store, err := artifacts.Open(artifacts.Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			w, err := store.Create("parquet", "")
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			if err := materialize.WriteParquet(context.Background(), w, rec.Schema(), []arrow.RecordBatch{rec}); err != nil {
				t.Fatal(err)
			}
			art, err := w.Commit()
			if err != nil {
				t.Fatal(err)
			}
			got := duckdbCheck(t, art.Path)
			t.Logf("DuckDB %s read %d columns", got.DuckDB, len(got.Columns))
			compareDuck(t, got, cols)
		})
	}
}

// flatColumns keeps the columns of rec written by the Parquet writer's flat
// path (returning a new batch).
func flatColumns(cols []duckCol, rec arrow.RecordBatch) ([]duckCol, arrow.RecordBatch) {
	var keep []duckCol
	var fields []arrow.Field
	var arrs []arrow.Array
	for i, c := range cols {
		switch rec.Column(i).DataType().ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
			arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY,
			arrow.DATE32, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION, arrow.DICTIONARY:
			keep = append(keep, c)
			fields = append(fields, rec.Schema().Field(i))
			arrs = append(arrs, rec.Column(i))
		}
	}
	return keep, array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, rec.NumRows())
}

func compareDuck(t *testing.T, got duckdbOut, cols []duckCol) {
	t.Helper()
	if len(got.Columns) != len(cols) {
		t.Fatalf("DuckDB sees %d columns, want %d: %+v", len(got.Columns), len(cols), got.Columns)
	}
	if len(got.Rows) != len(cols[0].want) {
		t.Fatalf("DuckDB sees %d rows, want %d", len(got.Rows), len(cols[0].want))
	}
	for i, c := range cols {
		gc := got.Columns[i]
		if gc.Name != c.name || gc.Type != c.duckType {
			t.Errorf("column %d: DuckDB has %s %s, want %s %s", i, gc.Name, gc.Type, c.name, c.duckType)
		}
		for r, want := range c.want {
			g := got.Rows[r][i]
			switch {
			case want == nil && g == nil:
			case want == nil || g == nil:
				t.Errorf("%s row %d: DuckDB %v, want %v", c.name, r, deref(g), deref(want))
			case c.same != nil && !c.same(*g, *want):
				t.Errorf("%s row %d: DuckDB %q, want %q", c.name, r, *g, *want)
			case c.same == nil && *g != *want:
				t.Errorf("%s row %d: DuckDB %q, want %q", c.name, r, *g, *want)
			}
		}
	}
}

func deref(p *string) string {
	if p == nil {
		return "NULL"
	}
	return strconv.Quote(*p)
}

// TestDuckDBReadsServedParquet goes through the built binary: a CSV of
// every type the CSV reader infers (int64 with big values, float64, text
// with Unicode, bool, date, timestamps with and without zone, nulls) is
// queried with output_format=parquet, the artifact read with resources/read
// and handed to DuckDB.
func TestDuckDBReadsServedParquet(t *testing.T) {
	dir := t.TempDir()
	csvText := "id,amount,name,ok,day,at_utc,at_local\n" +
		"9007199254740993,0.1,\"Zoë, \"\"the\"\" café\",true,2024-02-29,2024-03-05T06:07:08.123Z,2024-03-05 06:07:08.5\n" +
		"-9223372036854775808,-1e300,日本語 🎉,false,1969-12-31,1999-12-31T23:59:59+02:00,1970-01-01T00:00:00\n" +
		",,,,,,\n" +
		"42,3.5,plain,TRUE,2000-01-01,2000-01-01T00:00:00.001Z,2000-01-01T12:00:00.25\n"
	if err := os.WriteFile(filepath.Join(dir, "types.csv"), []byte(csvText), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startStdio(t, "--data", dir, "--artifact-dir", t.TempDir())
	p := callPage(t, c, "query_data", map[string]any{"dataset": "types", "output_format": "parquet", "max_rows": 1})
	if p.Method != "file" || p.RowCount != 4 {
		t.Fatalf("parquet result: %s %d rows", p.Method, p.RowCount)
	}
	blob := readArtifact(t, c, p.ResourceURI, "application/vnd.apache.parquet")
	file := filepath.Join(t.TempDir(), "types.parquet")
	if err := os.WriteFile(file, blob, 0o600); err != nil {
		t.Fatal(err)
	}
	got := duckdbCheck(t, file)
	cols := []duckCol{
		{name: "id", duckType: "BIGINT", want: []*string{s("9007199254740993"), s("-9223372036854775808"), nil, s("42")}},
		{name: "amount", duckType: "DOUBLE", want: []*string{s("0.1"), s("-1e300"), nil, s("3.5")}, same: floatSame(64)},
		{name: "name", duckType: "VARCHAR", want: []*string{s(`Zoë, "the" café`), s("日本語 🎉"), nil, s("plain")}},
		{name: "ok", duckType: "BOOLEAN", want: []*string{s("true"), s("false"), nil, s("true")}},
		{name: "day", duckType: "DATE", want: []*string{s("2024-02-29"), s("1969-12-31"), nil, s("2000-01-01")}},
		{name: "at_utc", duckType: "TIMESTAMP WITH TIME ZONE",
			want: []*string{s("2024-03-05 06:07:08.123+00"), s("1999-12-31 21:59:59+00"), nil, s("2000-01-01 00:00:00.001+00")}},
		{name: "at_local", duckType: "TIMESTAMP",
			want: []*string{s("2024-03-05 06:07:08.5"), s("1970-01-01 00:00:00"), nil, s("2000-01-01 12:00:00.25")}},
	}
	compareDuck(t, got, cols)
}

// writeSpec writes spec as JSON to a new temporary file (the input of the
// interop/duckdb scripts) and returns its path.
func writeSpec(t *testing.T, spec any) string {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
