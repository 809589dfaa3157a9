package e2e

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Files written by other tools (issue #12): one table, written by DuckDB
// (Parquet, CSV, NDJSON, JSON array), apache-arrow JS (Arrow IPC file and
// stream) and exceljs (xlsx) through interop/duckdb/writeforeign.js, then
// read by Quarry over MCP and compared value by value with the table.

// foreignCol is one column of the table: its cells as text ("\x00" is
// null), the DuckDB type they are cast to, the apache-arrow type and the
// exceljs cell kind ("" leaves the column out of that writer's file), and
// how a value read back compares with the text (kind).
type foreignCol struct {
	name, duck, arrow, xlsx string
	kind                    string // num, text, bool, date, ts, tstz, json
	cells                   []string
}

const nullCell = "\x00"

var foreignCols = []foreignCol{
	{"id", "BIGINT", "int64", "number", "num", []string{"1", "2", "3", "4", "5", "6", "7", "8"}},
	{"big", "BIGINT", "int64", "", "num", []string{"9223372036854775807", "-9223372036854775808", "9007199254740993", "0", nullCell, "42", "-1", "1234567890123"}},
	{"u64", "UBIGINT", "uint64", "", "num", []string{"18446744073709551615", "0", "1", nullCell, "9007199254740993", "42", "7", "100"}},
	{"code", "VARCHAR", "utf8", "text", "text", []string{"00501", "01001", "007", nullCell, "12345", "0", "00000", "99950"}},
	{"name", "VARCHAR", "utf8", "text", "text", []string{"Zürich", "東京", "emoji 😀", "comma, inside", `quote "x"`, "", nullCell, "line\nbreak"}},
	{"x", "DOUBLE", "float64", "number", "num", []string{"1.5", "-0.25", "1e+300", "3.141592653589793", nullCell, "0.1", "2.5e-08", "100"}},
	{"flag", "BOOLEAN", "bool", "bool", "bool", []string{"true", "false", nullCell, "true", "false", "true", "true", "false"}},
	{"day", "DATE", "date", "date", "date", []string{"2024-01-31", "1970-01-01", "2000-02-29", nullCell, "1900-03-01", "2038-01-19", "1969-12-31", "2099-12-31"}},
	{"ts", "TIMESTAMP", "timestamp_ms", "datetime", "ts", []string{"2024-01-31 10:00:00", "2024-01-31 10:00:00.123", "1999-12-31 23:59:59", nullCell, "1970-01-01 00:00:00", "2000-02-29 12:30:00", "1960-06-15 08:00:00.5", "2099-12-31 23:59:59.999"}},
	{"tstz", "TIMESTAMPTZ", "timestamp_ms_utc", "", "tstz", []string{"2024-01-31 10:00:00+01:00", "2024-06-30 23:30:00-05:00", "2000-01-01 00:00:00+00:00", nullCell, "1970-01-01 00:00:00.25+00:00", "2024-01-01 00:00:00+14:00", "2024-03-31 01:59:59-09:30", "2024-12-31 12:00:00+00:00"}},
	{"dec", "DECIMAL(10,2)", "", "", "num", []string{"12.34", "-0.50", "99999999.99", nullCell, "0.00", "1.00", "-12345678.90", "0.01"}},
	{"bigdec", "DECIMAL(38,10)", "", "", "num", []string{"12345678901234567890.1234567890", "-0.0000000001", nullCell, "1.5000000000", "0", "9999999999999999999999999999.9999999999", "-1", "0.1"}},
	{"tags", "INTEGER[]", "list_int32", "", "json", []string{"[1,2,3]", "[]", nullCell, "[null,4]", "[5]", "[6,7]", "[]", "[8]"}},
	{"rec", "STRUCT(a INTEGER, b VARCHAR)", "struct_a_b", "", "json", []string{`{"a":1,"b":"x"}`, `{"a":null,"b":"y z"}`, nullCell, `{"a":-3,"b":null}`, `{"a":4,"b":"ü"}`, `{"a":5,"b":""}`, `{"a":6,"b":"q"}`, `{"a":7,"b":"r"}`}},
	{"grp", "VARCHAR", "dict_utf8", "text", "text", []string{"north", "south", "east", "north", nullCell, "south", "north", "east"}},
	{"half", "BIGINT", "", "formula", "num", []string{"10", "20", "30", "40", "50", "60", "70", "80"}},
}

// foreignFile is one written file: its dataset id, kind, and the Quarry
// type of each column it holds (a column not listed is not in the file).
type foreignFile struct {
	id, kind string
	types    map[string]string
}

var foreignFiles = []foreignFile{
	{"duck_parquet", "parquet", map[string]string{
		"id": "int64", "big": "int64", "u64": "uint64", "code": "string", "name": "string", "x": "float64", "flag": "bool",
		"day": "date", "ts": "timestamp[us]", "tstz": "timestamp[us, UTC]", "dec": "float64", "bigdec": "string",
		"tags": "string", "rec": "string", "grp": "string", "half": "int64"}},
	{"duck_csv", "csv", map[string]string{
		"id": "int64", "big": "int64", "u64": "string", "code": "string", "name": "string", "x": "float64", "flag": "bool",
		"day": "date", "ts": "timestamp[ms]", "tstz": "timestamp[ms, UTC]", "dec": "float64", "bigdec": "string",
		"tags": "string", "rec": "string", "grp": "string", "half": "int64"}},
	{"duck_ndjson", "json", map[string]string{
		"id": "int64", "big": "int64", "u64": "string", "code": "string", "name": "string", "x": "float64", "flag": "bool",
		"day": "date", "ts": "timestamp[ms]", "tstz": "timestamp[ms, UTC]", "dec": "float64", "bigdec": "string",
		"tags": "string", "rec": "string", "rec.a": "int64", "rec.b": "string", "grp": "string", "half": "int64"}},
	{"duck_array", "json", nil}, // the same as duck_ndjson
	{"arrowjs_file", "arrow", map[string]string{
		"id": "int64", "big": "int64", "u64": "uint64", "code": "string", "name": "string", "x": "float64", "flag": "bool",
		"day": "date", "ts": "timestamp[ms]", "tstz": "timestamp[ms, UTC]", "tags": "string", "rec": "string", "grp": "string"}},
	{"arrowjs_stream", "arrow", nil}, // the same as arrowjs_file
	{"exceljs/data", "xlsx", map[string]string{
		"id": "int64", "code": "string", "name": "string", "x": "float64", "flag": "bool",
		"day": "date", "ts": "timestamp[ms]", "grp": "string", "half": "int64"}},
}

// writeForeignFiles writes the table with every writer into a new
// directory and returns it.
func writeForeignFiles(t *testing.T) string {
	t.Helper()
	type specCol struct {
		Name  string `json:"name"`
		Duck  string `json:"duck"`
		Arrow string `json:"arrow"`
		XLSX  string `json:"xlsx"`
	}
	var spec struct {
		Columns []specCol   `json:"columns"`
		Rows    [][]*string `json:"rows"`
	}
	for _, c := range foreignCols {
		spec.Columns = append(spec.Columns, specCol{c.name, c.duck, c.arrow, c.xlsx})
	}
	for i := range foreignCols[0].cells {
		row := make([]*string, len(foreignCols))
		for j, c := range foreignCols {
			if c.cells[i] != nullCell {
				row[j] = &c.cells[i]
			}
		}
		spec.Rows = append(spec.Rows, row)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	specFile := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(specFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := duckdbScript(t, "writeforeign.js", specFile, dir)
	t.Logf("writers: %s", strings.TrimSpace(string(out)))
	return dir
}

// TestForeignWriters reads files written by DuckDB, apache-arrow JS and
// exceljs over MCP: every file is a dataset with the exact row count,
// every column has the type listed in foreignFiles, and every value
// equals the table's (numbers exactly, as rationals; timestamps as the
// same instant or wall-clock time; nested values as the same JSON).
func TestForeignWriters(t *testing.T) {
	dir := writeForeignFiles(t)
	c := startStdio(t, "--data", dir, "--artifact-dir", t.TempDir())
	var cat scanCatalog
	call(t, c, "get_catalog", map[string]any{}, &cat)
	if len(cat.Diagnostics) > 0 {
		t.Errorf("diagnostics: %+v", cat.Diagnostics)
	}
	rows := len(foreignCols[0].cells)
	var types map[string]string
	for _, f := range foreignFiles {
		if f.types != nil {
			types = f.types
		}
		t.Run(strings.ReplaceAll(f.id, "/", "_"), func(t *testing.T) {
			var sch schemaResult
			call(t, c, "get_schema", map[string]any{"dataset": f.id}, &sch)
			got := map[string]string{}
			for _, col := range sch.Columns {
				got[col.Name] = col.Type
			}
			if !reflect.DeepEqual(got, types) {
				t.Errorf("types\n got %v\nwant %v", got, types)
			}
			var q queryResult
			call(t, c, "query_data", map[string]any{"dataset": f.id, "order_by": []map[string]any{{"col": "id"}}}, &q)
			if len(q.Data) != rows {
				t.Fatalf("%d rows, want %d", len(q.Data), rows)
			}
			for _, col := range foreignCols {
				for name := range types {
					if name != col.name && !strings.HasPrefix(name, col.name+".") {
						continue
					}
					for i, row := range q.Data {
						want, kind := col.cells[i], col.kind
						switch {
						case name != col.name: // a struct flattened by the JSON reader: its field
							want, kind = jsonField(t, want, strings.TrimPrefix(name, col.name+".")), "text"
						case f.kind == "json" && strings.HasPrefix(col.duck, "STRUCT"):
							// The record where the struct is null makes a column
							// of its own, null everywhere (docs/DATA_FORMATS.md).
							want = nullCell
						case want == "" && (f.kind == "csv" || f.kind == "xlsx"):
							// A quoted empty CSV cell and an empty-string Excel cell
							// are null (docs/DATA_FORMATS.md).
							want = nullCell
						}
						if err := foreignEqual(kind, f.kind, row[name], want); err != nil {
							t.Errorf("column %s, row %d: %v", name, i+1, err)
						}
					}
				}
			}
		})
	}
}

// jsonField is field of the JSON object text s as text (nullCell for a null
// object or field).
func jsonField(t *testing.T, s, field string) string {
	t.Helper()
	if s == nullCell {
		return nullCell
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	switch v := m[field].(type) {
	case nil:
		return nullCell
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// foreignEqual compares got (a decoded query_data value) with the cell
// text want, by kind.
func foreignEqual(kind, format string, got any, want string) error {
	if want == nullCell || got == nil {
		if want == nullCell && got == nil {
			return nil
		}
		return fmt.Errorf("got %#v, want %q", got, want)
	}
	var s string
	switch v := got.(type) {
	case string:
		s = v
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		s = strconv.FormatBool(v)
	default:
		return fmt.Errorf("got %#v (%T), want %q", got, got, want)
	}
	ok := false
	switch kind {
	case "num":
		g, okG := new(big.Rat).SetString(s)
		w, okW := new(big.Rat).SetString(want)
		ok = okG && okW && g.Cmp(w) == 0
	case "text", "bool", "date":
		ok = s == want
	case "ts":
		g, errG := time.Parse("2006-01-02T15:04:05.999999999", s)
		w, errW := time.Parse("2006-01-02 15:04:05.999999999", want)
		ok = errG == nil && errW == nil && g.Equal(w)
	case "tstz":
		g, errG := time.Parse(time.RFC3339Nano, s)
		w, errW := time.Parse("2006-01-02 15:04:05.999999999Z07:00", want)
		ok = errG == nil && errW == nil && g.Equal(w) && strings.HasSuffix(s, "Z")
	case "json":
		if format == "csv" {
			ok = s == duckNestedText(want)
			break
		}
		var g, w any
		ok = json.Unmarshal([]byte(s), &g) == nil && json.Unmarshal([]byte(want), &w) == nil && reflect.DeepEqual(g, w)
	}
	if !ok {
		return fmt.Errorf("got %q, want %q", s, want)
	}
	return nil
}

// duckNestedText is DuckDB's text for a list or struct written as JSON text
// (how DuckDB's CSV writer prints nested values: strings unquoted):
// [1, NULL], {'a': 1, 'b': x}.
func duckNestedText(s string) string {
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return "<not JSON>"
	}
	return duckValue(v, s)
}

func duckValue(v any, raw string) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = duckValue(e, "")
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		// Field order as written (a, b in this table).
		var parts []string
		for _, k := range []string{"a", "b"} {
			parts = append(parts, "'"+k+"': "+duckValue(x[k], ""))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case string:
		if x == "" {
			return "''"
		}
		return x
	default:
		return fmt.Sprint(x)
	}
}
