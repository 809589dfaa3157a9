package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/zstd"

	"github.com/quarrydb/quarry/internal/testutil/arrowfile"
)

// formatRows is the table every typed-format test writes with its own
// writer: codes with leading zeros, integers, floats, nulls, booleans,
// dates, a low-cardinality group column.
const formatRows = 150

func formatRow(i int) (id int64, code string, x float64, ok bool, day string, grp string, note *string) {
	id = int64(i)
	code = fmt.Sprintf("%05d", i*7)
	x = float64(i)/8 - 3.5
	ok = i%3 == 0
	day = arrow.Date32(18000 + i).ToTime().Format("2006-01-02")
	grp = []string{"north", "south", "east"}[i%3]
	if i%4 != 0 {
		s := fmt.Sprintf("note %d", i)
		note = &s
	}
	return
}

// formatRecord is formatRows as an Arrow record.
func formatRecord(t *testing.T, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "code", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "grp", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := range formatRows {
		id, code, x, ok, _, grp, note := formatRow(i)
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(code)
		b.Field(2).(*array.Float64Builder).Append(x)
		b.Field(3).(*array.BooleanBuilder).Append(ok)
		b.Field(4).(*array.Date32Builder).Append(arrow.Date32(18000 + i))
		b.Field(5).(*array.StringBuilder).Append(grp)
		if note == nil {
			b.Field(6).AppendNull()
		} else {
			b.Field(6).(*array.StringBuilder).Append(*note)
		}
	}
	return b.NewRecordBatch()
}

// checkFormatDataset queries dataset id (written from formatRow) over MCP:
// get_catalog (kind, exact row count), get_schema (types), query_data
// with columns, a filter and an order, and a group-by aggregate; every
// value is compared with formatRow.
func checkFormatDataset(t *testing.T, dir, id, kind string) {
	t.Helper()
	c := startStdio(t, "--data", dir, "--artifact-dir", t.TempDir())
	var cat catalogResult
	call(t, c, "get_catalog", map[string]any{"kinds": []string{kind}}, &cat)
	if len(cat.Datasets) != 1 || cat.Datasets[0].ID != id || cat.Datasets[0].Kind != kind ||
		cat.Datasets[0].RowCount != formatRows || !cat.Datasets[0].RowCountExact || cat.Datasets[0].ColumnCount != 7 {
		t.Fatalf("catalog: %+v", cat.Datasets)
	}
	var sch schemaResult
	call(t, c, "get_schema", map[string]any{"dataset": id}, &sch)
	types := map[string]string{}
	for _, col := range sch.Columns {
		types[col.Name] = col.Type
	}
	want := map[string]string{"id": "int64", "code": "string", "x": "float64", "ok": "bool", "day": "date", "grp": "string", "note": "string"}
	if fmt.Sprint(types) != fmt.Sprint(want) {
		t.Fatalf("types %v, want %v", types, want)
	}

	var q queryResult
	call(t, c, "query_data", map[string]any{
		"dataset": id, "columns": []string{"note", "id", "code", "x", "ok", "day"},
		"filters":  []map[string]any{{"col": "id", "op": "gte", "value": 100}, {"col": "grp", "op": "in", "value": []string{"north", "east"}}},
		"order_by": []map[string]any{{"col": "id", "desc": true}},
	}, &q)
	var wantIDs []int
	for i := formatRows - 1; i >= 100; i-- {
		if i%3 != 1 {
			wantIDs = append(wantIDs, i)
		}
	}
	if q.Method != "direct" || len(q.Data) != len(wantIDs) {
		t.Fatalf("query: method %s, %d rows, want %d", q.Method, len(q.Data), len(wantIDs))
	}
	for k, row := range q.Data {
		i := wantIDs[k]
		id, code, x, ok, day, _, note := formatRow(i)
		var wantNote any
		if note != nil {
			wantNote = *note
		}
		if row["id"] != float64(id) || row["code"] != code || row["x"] != x || row["ok"] != ok || row["day"] != day || row["note"] != wantNote {
			t.Fatalf("row %d: %v, want id %d code %s x %v ok %v day %s note %v", k, row, id, code, x, ok, day, wantNote)
		}
	}

	var agg queryResult
	call(t, c, "query_data", map[string]any{
		"dataset": id, "group_by": []string{"grp"},
		"aggs":     []map[string]any{{"col": "*", "fn": "count"}, {"col": "x", "fn": "sum"}, {"col": "note", "fn": "count"}},
		"order_by": []map[string]any{{"col": "grp"}},
	}, &agg)
	sums, counts, notes := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for i := range formatRows {
		_, _, x, _, _, grp, note := formatRow(i)
		sums[grp] += x
		counts[grp]++
		if note != nil {
			notes[grp]++
		}
	}
	if len(agg.Data) != 3 {
		t.Fatalf("aggregate: %+v", agg.Data)
	}
	for _, row := range agg.Data {
		g, _ := row["grp"].(string)
		if row["count_all"] != counts[g] || math.Abs(row["sum_x"].(float64)-sums[g]) > 1e-9 || row["count_note"] != notes[g] {
			t.Fatalf("aggregate row %v: want count %v sum %v notes %v", row, counts[g], sums[g], notes[g])
		}
	}
}

// TestParquetInput: a Parquet file written by arrow-go's pqarrow writer
// (several row groups, dictionary pages) is a dataset queried over MCP,
// and every value agrees with DuckDB's read_parquet of the same file.
func TestParquetInput(t *testing.T) {
	dir, _ := writeFormatRecord(t, "sales.parquet", func(rec, _, _ arrow.RecordBatch) []byte {
		return arrowfile.Parquet(t, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(64), parquet.WithDictionaryDefault(true)),
			pqarrow.DefaultWriterProps(), rec)
	})
	checkFormatDataset(t, dir, "sales", "parquet")
	compareWithDuckDB(t, filepath.Join(dir, "sales.parquet"), formatRows)
}

// compareWithDuckDB reads file with DuckDB (interop/duckdb/check.js) and
// checks every cell against formatRow.
func compareWithDuckDB(t *testing.T, file string, rows int) {
	t.Helper()
	out := duckdbCheck(t, file)
	if len(out.Rows) != rows {
		t.Fatalf("duckdb read %d rows, want %d", len(out.Rows), rows)
	}
	col := map[string]int{}
	for i, c := range out.Columns {
		col[c.Name] = i
	}
	for i, r := range out.Rows {
		id, code, x, ok, day, grp, note := formatRow(i)
		cell := func(name string) string {
			if v := r[col[name]]; v != nil {
				return *v
			}
			return "<null>"
		}
		gotX, err := strconv.ParseFloat(cell("x"), 64)
		wantNote := "<null>"
		if note != nil {
			wantNote = *note
		}
		if cell("id") != strconv.FormatInt(id, 10) || cell("code") != code || err != nil || gotX != x ||
			cell("ok") != strconv.FormatBool(ok) || cell("day") != day || cell("grp") != grp || cell("note") != wantNote {
			t.Fatalf("duckdb row %d: %v (columns %v)", i, r, out.Columns)
		}
	}
}

// formatJSONLines is formatRows as newline-delimited JSON written by
// encoding/json (keys sorted; a null note is left out: a missing key).
func formatJSONLines(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range formatRows {
		id, code, x, ok, day, grp, note := formatRow(i)
		row := map[string]any{"id": id, "code": code, "x": x, "ok": ok, "day": day, "grp": grp}
		if note != nil {
			row["note"] = *note
		}
		if err := enc.Encode(row); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestJSONInput: newline-delimited JSON (checked against DuckDB's
// read_json) and a zstd-compressed array of objects are datasets queried
// over MCP.
func TestJSONInput(t *testing.T) {
	lines := formatJSONLines(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(path, lines, 0o644); err != nil {
		t.Fatal(err)
	}
	checkFormatDataset(t, dir, "events", "json")
	compareWithDuckDB(t, path, formatRows)

	// The same rows as one array, zstd-compressed.
	arr := "[" + strings.ReplaceAll(strings.TrimSpace(string(lines)), "\n", ",\n") + "]"
	var zbuf bytes.Buffer
	zw, err := zstd.NewWriter(&zbuf)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write([]byte(arr))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir2, "events.json.zst"), zbuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	checkFormatDataset(t, dir2, "events", "json")
}
