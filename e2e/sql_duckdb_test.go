package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// sqlCase is one query of testdata/sql_corpus.txt.
type sqlCase struct {
	sql     string
	ordered bool
	// exact compares numbers bit for bit (two renderings of the same
	// float64 values); otherwise within a relative 1e-9 (sameCell).
	exact bool
}

func readSQLCorpus(t *testing.T) []sqlCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sql_corpus.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []sqlCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, ordered := strings.CutPrefix(line, "ordered: ")
		out = append(out, sqlCase{sql: q, ordered: ordered})
	}
	return out
}

// copyDemo copies demo CSVs (dataset id -> file under demodata/files)
// into a fresh data root and returns it.
func copyDemo(t *testing.T, ids ...string) (string, map[string]string) {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{}
	for _, id := range ids {
		b, err := os.ReadFile(filepath.Join("..", "demodata", "files", id+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, id+".csv")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files[id] = dst
	}
	return root, files
}

// TestSQLAgainstDuckDB runs the SQL corpus through advanced_query (a real
// MCP client over stdio) and through DuckDB over the same CSVs: the same
// rows, in order where the query fixes it.
func TestSQLAgainstDuckDB(t *testing.T) {
	cases := readSQLCorpus(t)
	root, files := copyDemo(t, "weather/daily", "weather/stations", "sales/orders")
	compareSQLWithDuckDB(t, corpusServer(t, "--data", root), files, cases, func(i int) string { return cases[i].sql })
}

// corpusServer starts `quarry serve` over stdio with args and inline
// limits high enough for every corpus answer to come back inline.
func corpusServer(t *testing.T, args ...string) *client.Client {
	t.Helper()
	return startStdio(t, append(args, "--max-rows", "100000", "--max-bytes", "100000000", "--max-cells", "10000000")...)
}

// compareSQLWithDuckDB runs cases through DuckDB (interop/duckdb/sqlcorpus.js,
// tables: view name -> CSV file) and through advanced_query on c (a real
// MCP client, corpusServer), and compares the rows; name labels case i in
// messages. It returns DuckDB's rows.
func compareSQLWithDuckDB(t *testing.T, c *client.Client, tables map[string]string, cases []sqlCase, name func(i int) string) [][][]*string {
	t.Helper()
	queries := make([]string, len(cases))
	for i, c := range cases {
		queries[i] = c.sql
	}
	var duck struct {
		DuckDB  string `json:"duckdb"`
		Results []struct {
			Rows  [][]*string `json:"rows"`
			Error string      `json:"error"`
		} `json:"results"`
	}
	out := duckdbScript(t, "sqlcorpus.js", writeSpec(t, map[string]any{"tables": tables, "queries": queries}))
	if err := json.Unmarshal(out, &duck); err != nil || len(duck.Results) != len(cases) {
		t.Fatalf("sqlcorpus.js output (%v): %s", err, out)
	}
	wants := make([][][]*string, len(cases))
	for i, tc := range cases {
		want := duck.Results[i]
		wants[i] = want.Rows
		if want.Error != "" {
			t.Errorf("DuckDB refused %s: %s", name(i), want.Error)
			continue
		}
		res := callRaw(t, c, "advanced_query", map[string]any{"sql": tc.sql})
		if res.IsError {
			t.Errorf("%s: %s", name(i), text(res))
			continue
		}
		compareSQLRows(t, sqlCase{sql: name(i), ordered: tc.ordered}, toolRows(t, res), want.Rows)
	}
	return wants
}

// toolRows reads the inline rows of an advanced_query result, as text.
func toolRows(t *testing.T, res *mcp.CallToolResult) [][]*string {
	t.Helper()
	var r struct {
		Data []json.RawMessage `json:"data"`
	}
	// The text content keeps the record keys in column order (the
	// structured content is decoded into maps).
	if err := json.Unmarshal([]byte(text(res)), &r); err != nil {
		t.Fatalf("%v: %s", err, text(res))
	}
	got := make([][]*string, len(r.Data))
	for k, raw := range r.Data {
		got[k] = rowValues(t, raw)
	}
	return got
}

// rowValues reads one result record's values in column order, as text.
func rowValues(t *testing.T, raw json.RawMessage) []*string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var out []*string
	for dec.More() {
		if _, err := dec.Token(); err != nil { // key
			t.Fatal(err)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if v == nil {
			out = append(out, nil)
			continue
		}
		s := fmt.Sprint(v)
		out = append(out, &s)
	}
	return out
}

// sameCell compares two values as text, numbers within a relative 1e-9.
func sameCell(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if *a == *b {
		return true
	}
	x, err1 := strconv.ParseFloat(*a, 64)
	y, err2 := strconv.ParseFloat(*b, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	// Relative 1e-9; sums that cancel to about zero agree within 1e-12.
	return x == y || math.Abs(x-y) <= max(1e-9*math.Max(math.Abs(x), math.Abs(y)), 1e-12)
}

// sameCellExact compares two values as text, numbers by their float64
// value (so "1e-07" and "1e-7", or "5" and "5.0", are one value) and
// RFC 3339 timestamps by their instant (".5Z" and ".500000Z" are one).
func sameCellExact(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if *a == *b {
		return true
	}
	if x, err1 := strconv.ParseFloat(*a, 64); err1 == nil {
		y, err2 := strconv.ParseFloat(*b, 64)
		return err2 == nil && (x == y || math.IsNaN(x) && math.IsNaN(y))
	}
	x, err1 := time.Parse(time.RFC3339Nano, *a)
	y, err2 := time.Parse(time.RFC3339Nano, *b)
	return err1 == nil && err2 == nil && x.Equal(y)
}

// rowKey is a row's sort key for comparing rows as multisets: numbers
// rounded to 9 significant digits, or kept whole when exact.
func rowKey(r []*string, exact bool) string {
	digits := 9
	if exact {
		digits = -1
	}
	parts := make([]string, len(r))
	for i, v := range r {
		if v == nil {
			parts[i] = "\x00null"
			continue
		}
		if f, err := strconv.ParseFloat(*v, 64); err == nil {
			parts[i] = strconv.FormatFloat(f, 'g', digits, 64)
			continue
		}
		parts[i] = *v
	}
	return strings.Join(parts, "\x01")
}

func compareSQLRows(t *testing.T, tc sqlCase, got, want [][]*string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, DuckDB %d", tc.sql, len(got), len(want))
		return
	}
	if !tc.ordered {
		sortRows := func(rows [][]*string) {
			slices.SortStableFunc(rows, func(a, b []*string) int { return strings.Compare(rowKey(a, tc.exact), rowKey(b, tc.exact)) })
		}
		got, want = slices.Clone(got), slices.Clone(want)
		sortRows(got)
		sortRows(want)
	}
	same := sameCell
	if tc.exact {
		same = sameCellExact
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			t.Errorf("%s: row %d has %d columns, DuckDB %d", tc.sql, i, len(got[i]), len(want[i]))
			return
		}
		for k := range got[i] {
			if !same(got[i][k], want[i][k]) {
				t.Errorf("%s: row %d column %d: %s, DuckDB %s", tc.sql, i, k, deref(got[i][k]), deref(want[i][k]))
				return
			}
		}
	}
}
