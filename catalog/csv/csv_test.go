package csv_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
	"github.com/quarrydb/quarry/internal/qerr"
)

func TestCSVInference(t *testing.T) {
	const tsZ = "timestamp[ms, tz=UTC]"
	const ts = "timestamp[ms]"
	tests := []struct {
		name  string
		file  string // relative path; decides format/compression
		data  string
		names []string
		types []string
		rows  int64
		vals  [][]any                       // optional: expected column values
		notes map[string]catalog.ColumnNote // optional: expected column notes
	}{
		{
			name: "ints and nulls", file: "a.csv",
			data:  "x,y\n1,-2\n,3\n4,\n",
			names: []string{"x", "y"}, types: []string{"int64", "int64"}, rows: 3,
			vals: [][]any{{int64(1), nil, int64(4)}, {int64(-2), int64(3), nil}},
		},
		{
			name: "a leading plus keeps ints as text", file: "a.csv",
			data:  "x,y\n1,-2\n,+3\n4,\n",
			types: []string{"int64", "utf8"}, rows: 3,
			vals: [][]any{{int64(1), nil, int64(4)}, {"-2", "+3", nil}},
		},
		{
			name: "int widens to float", file: "a.csv",
			data:  "x,y\n1,1.5\n2.5,2\n1e3,NaN\n",
			types: []string{"float64", "float64"}, rows: 3,
			vals: [][]any{{1.0, 2.5, 1000.0}, {1.5, 2.0, nil}}, // NaN checked below
		},
		{
			name: "mixed becomes string", file: "a.csv",
			data:  "x,y,z\n1,true,2024-01-01\nabc,1,2024-01-01T00:00:00\n",
			types: []string{"utf8", "utf8", "utf8"}, rows: 2,
			vals: [][]any{{"1", "abc"}, {"true", "1"}, {"2024-01-01", "2024-01-01T00:00:00"}},
		},
		{
			name: "bool any case", file: "a.csv",
			data:  "b\ntrue\nFALSE\n\nTrue\ntRuE\n",
			types: []string{"bool"}, rows: 4, // the blank line is skipped, not a null
			vals: [][]any{{true, false, true, true}},
		},
		{
			name: "bool with null", file: "a.csv",
			data:  "k,b\n1,true\n2,\n3,false\n",
			types: []string{"int64", "bool"}, rows: 3,
			vals: [][]any{{int64(1), int64(2), int64(3)}, {true, nil, false}},
		},
		{
			name: "date32", file: "a.csv",
			data:  "d\n2024-02-29\n\n1999-12-31\n",
			types: []string{"date32"}, rows: 2,
			vals: [][]any{{"2024-02-29", "1999-12-31"}},
		},
		{
			name: "invalid date is a string", file: "a.csv",
			data:  "d\n2023-02-29\n",
			types: []string{"utf8"}, rows: 1,
		},
		{
			name: "timestamps with zone", file: "a.csv",
			data:  "t\n2024-01-02T03:04:05Z\n2024-01-02T03:04:05.123+04:00\n2024-01-02 03:04:05.5-01:30\n\"\"\n",
			types: []string{tsZ}, rows: 4,
			vals: [][]any{{"2024-01-02T03:04:05.000", "2024-01-01T23:04:05.123", "2024-01-02T04:34:05.500", nil}},
		},
		{
			name: "timestamps without zone", file: "a.csv",
			data:  "t,u\n2024-01-02T03:04:05,1\n2024-01-02 03:04:05.123456789,2\n",
			types: []string{ts, "int64"}, rows: 2,
			vals: [][]any{{"2024-01-02T03:04:05.000", "2024-01-02T03:04:05.123"}, {int64(1), int64(2)}},
		},
		{
			name: "zoned and naive mixed is a string", file: "a.csv",
			data:  "t\n2024-01-02T03:04:05Z\n2024-01-02T03:04:05\n",
			types: []string{"utf8"}, rows: 2,
		},
		{
			name: "all null column is a string", file: "a.csv",
			data:  "a,b\n1,\n2,\n",
			types: []string{"int64", "utf8"}, rows: 2,
			vals: [][]any{{int64(1), int64(2)}, {nil, nil}},
		},
		{
			name: "only empty cell is null", file: "a.csv",
			data:  "a,b\nNA,1\nnull,2\n,3\n",
			types: []string{"utf8", "int64"}, rows: 3,
			vals: [][]any{{"NA", "null", nil}, {int64(1), int64(2), int64(3)}},
		},
		{
			name: "header only", file: "a.csv",
			data:  "a,b\n",
			types: []string{"utf8", "utf8"}, rows: 0,
			vals: [][]any{nil, nil},
		},
		{
			name: "BOM is stripped", file: "a.csv",
			data:  "\ufeffid,name\n1,Երևան\n",
			names: []string{"id", "name"}, types: []string{"int64", "utf8"}, rows: 1,
			vals: [][]any{{int64(1)}, {"Երևան"}},
		},
		{
			name: "RFC 4180 quoting", file: "a.csv",
			data:  "id,note\n1,\"a, b\"\n2,\"say \"\"hi\"\"\"\n3,\"line1\nline2\"\r\n4,plain\n",
			types: []string{"int64", "utf8"}, rows: 4,
			vals: [][]any{{int64(1), int64(2), int64(3), int64(4)}, {"a, b", `say "hi"`, "line1\nline2", "plain"}},
		},
		{
			name: "semicolon sniffed", file: "a.csv",
			data:  "a;b;c\n1,5;2;x\n3,5;4;y\n",
			types: []string{"utf8", "int64", "utf8"}, rows: 2,
			vals: [][]any{{"1,5", "3,5"}, {int64(2), int64(4)}, {"x", "y"}},
		},
		{
			name: "pipe sniffed", file: "a.csv",
			data:  "a|b\n1|2\n3|4\n",
			types: []string{"int64", "int64"}, rows: 2,
		},
		{
			name: "tab sniffed in .csv", file: "a.csv",
			data:  "a\tb\n1,0\t2\n",
			types: []string{"utf8", "int64"}, rows: 1,
		},
		{
			name: "tsv defaults to tab", file: "a.tsv",
			data:  "a\tb,c\n1\tx,y\n",
			names: []string{"a", "b,c"}, types: []string{"int64", "utf8"}, rows: 1,
		},
		{
			name: "single column", file: "a.csv",
			data:  "only\n1\n2\n",
			types: []string{"int64"}, rows: 2,
		},
		{
			name: "gzip csv", file: "sub/a.csv.gz",
			data:  "a,b\n1,x\n2,y\n",
			types: []string{"int64", "utf8"}, rows: 2,
			vals: [][]any{{int64(1), int64(2)}, {"x", "y"}},
		},
		{
			name: "gzip tsv", file: "a.tsv.gz",
			data:  "a\tb\n1\t2024-05-05\n",
			types: []string{"int64", "date32"}, rows: 1,
		},
		{
			name: "duplicate and empty headers", file: "a.csv",
			data:  "name,,name, name ,name_2,\n1,2,3,4,5,6\n",
			names: []string{"name", "column_2", "name_3", "name_4", "name_2", "column_6"},
			types: []string{"int64", "int64", "int64", "int64", "int64", "int64"}, rows: 1,
			vals: [][]any{{int64(1)}, {int64(2)}, {int64(3)}, {int64(4)}, {int64(5)}, {int64(6)}},
		},
		{
			name: "int64 overflow stays text", file: "a.csv",
			data:  "a,b\n1,1\n99999999999999999999,100000000000000000000\n",
			types: []string{"utf8", "utf8"}, rows: 2,
			vals: [][]any{{"1", "99999999999999999999"}, {"1", "100000000000000000000"}},
		},
		{
			name: "codes with leading zeros stay text", file: "a.csv",
			data:  "zip,fips,n,f,g\n00501,01001,0,01.5,0.5\n10001,36061,-0,2.5,1e3\n99950,02013,7,3,.25\n",
			types: []string{"utf8", "utf8", "utf8", "utf8", "float64"}, rows: 3,
			notes: map[string]catalog.ColumnNote{
				"zip":  {Hint: `looks numeric, but values like "00501" have leading zeros; kept as text so nothing is lost`},
				"fips": {Hint: `looks numeric, but values like "01001" have leading zeros; kept as text so nothing is lost`},
				"n":    {Hint: `looks numeric, but values like "-0" are not integers (as an integer it prints as 0); kept as text so nothing is lost`},
				"f":    {Hint: `looks numeric, but values like "01.5" have leading zeros; kept as text so nothing is lost`},
			},
			vals: [][]any{{"00501", "10001", "99950"}, {"01001", "36061", "02013"}, {"0", "-0", "7"}, {"01.5", "2.5", "3"}, {0.5, 1000.0, 0.25}},
		},
		{
			name: "float digits beyond float64 stay text", file: "a.csv",
			data:  "a,b,c\n0.1000000000000000000000000000000001,1.50,12345678901234567\n0.2,2,12345678901234568\n",
			types: []string{"utf8", "float64", "int64"}, rows: 2,
			vals: [][]any{{"0.1000000000000000000000000000000001", "0.2"}, {1.5, 2.0}, {int64(12345678901234567), int64(12345678901234568)}},
		},
		{
			name: "exponents in an integer column stay text", file: "a.csv",
			data:  "a,b,c\n1,12345678901234567,1E5\n1e3,1.5,2E5\n",
			types: []string{"utf8", "utf8", "utf8"}, rows: 2,
			vals: [][]any{{"1", "1e3"}, {"12345678901234567", "1.5"}, {"1E5", "2E5"}},
			notes: map[string]catalog.ColumnNote{
				"a": {Hint: `looks numeric, but values like "1e3" use exponent notation in a column without decimals; kept as text so nothing is lost`},
				"b": {Hint: `looks numeric, but integers like "12345678901234567" have more digits than a float64 keeps while values like "1.5" are not integers; kept as text so nothing is lost`},
				"c": {Hint: `looks numeric, but values like "1E5" use exponent notation in a column without decimals; kept as text so nothing is lost`},
			},
		},
		{
			name: "dates and timestamps in common layouts", file: "a.csv",
			data: "a,b,c,d,e,f,g,h\n" +
				"2015/01/31,2015/01/01 01:00:00,01/31/2015,31/01/2015,Jan 1 2000,1 January 2000,2000-Jan-01,12/31/1999 23:59\n" +
				"2015/2/1,2015/01/01 01:00:00.5,02/01/2015,01/02/2015,\"February 29, 2000\",01-Feb-2000,2000-feb-29,01/01/2000 0:00:01\n",
			types: []string{"date32", ts, "date32", "date32", "date32", "date32", "date32", ts}, rows: 2,
			notes: map[string]catalog.ColumnNote{
				"a": {Format: "YYYY/MM/DD"}, "b": {Format: "YYYY/MM/DD HH:MM[:SS[.f]]"}, "c": {Format: "MM/DD/YYYY"}, "d": {Format: "DD/MM/YYYY"},
				"e": {Format: "Mon D YYYY"}, "f": {Format: "D Mon YYYY"}, "g": {Format: "YYYY-Mon-DD"}, "h": {Format: "MM/DD/YYYY HH:MM[:SS[.f]]"},
			},
			vals: [][]any{{"2015-01-31", "2015-02-01"}, {"2015-01-01T01:00:00.000", "2015-01-01T01:00:00.500"},
				{"2015-01-31", "2015-02-01"}, {"2015-01-31", "2015-02-01"}, {"2000-01-01", "2000-02-29"},
				{"2000-01-01", "2000-02-01"}, {"2000-01-01", "2000-02-29"}, {"1999-12-31T23:59:00.000", "2000-01-01T00:00:01.000"}},
		},
		{
			name: "ambiguous day-month and broken dates stay text", file: "a.csv",
			data:  "a,b\n01/02/2015,2015/01/31\n03/04/2015,N/A\n",
			types: []string{"utf8", "utf8"}, rows: 2,
			notes: map[string]catalog.ColumnNote{
				"a": {Hint: `looks like dates, but every value (like "01/02/2015") reads both as month/day and as day/month; kept as text so nothing is misread`},
				"b": {Warning: `looks like dates (YYYY/MM/DD) but did not parse in full: row 2 holds "N/A"; kept as text`},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cattest.WriteFile(t, root, tc.file, tc.data)
			c := cattest.NewCatalog(t, root)
			if d := c.Diagnostics(); len(d) != 0 {
				t.Fatalf("diagnostics: %v", d)
			}
			all := c.Datasets()
			if len(all) != 1 {
				t.Fatalf("datasets %v", cattest.IDs(c))
			}
			ds := all[0]
			if got := cattest.TypeNames(ds.Schema); !reflect.DeepEqual(got, tc.types) {
				t.Errorf("types %v, want %v", got, tc.types)
			}
			if tc.names != nil {
				if got := cattest.FieldNames(ds.Schema); !reflect.DeepEqual(got, tc.names) {
					t.Errorf("names %q, want %q", got, tc.names)
				}
			}
			for _, f := range ds.Schema.Fields() {
				if !f.Nullable {
					t.Errorf("field %s not nullable", f.Name)
				}
			}
			if ds.RowCount != tc.rows || !ds.RowCountExact {
				t.Errorf("rows %d (exact %v), want %d exact", ds.RowCount, ds.RowCountExact, tc.rows)
			}
			if ds.Kind != catalog.KindCSV {
				t.Errorf("kind %q", ds.Kind)
			}
			if tc.notes != nil && !reflect.DeepEqual(ds.ColumnNotes, tc.notes) {
				t.Errorf("notes %q, want %q", ds.ColumnNotes, tc.notes)
			}
			schema, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{})
			if !schema.Equal(ds.Schema) {
				t.Errorf("scan schema %v, want %v", schema, ds.Schema)
			}
			for i, col := range cols {
				if int64(len(col)) != tc.rows {
					t.Errorf("column %d: %d values, want %d", i, len(col), tc.rows)
				}
			}
			if tc.vals != nil && tc.name != "int widens to float" {
				if !reflect.DeepEqual(cols, tc.vals) {
					t.Errorf("values\n got %#v\nwant %#v", cols, tc.vals)
				}
			}
		})
	}
}

func TestCSVNaN(t *testing.T) {
	root := t.TempDir()
	cattest.WriteFile(t, root, "a.csv", "x\n1\nNaN\ninf\n")
	ds := cattest.Lookup(t, cattest.NewCatalog(t, root), "a")
	_, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{})
	if got := cattest.TypeNames(ds.Schema); got[0] != "float64" {
		t.Fatalf("type %v", got)
	}
	v := cols[0]
	if v[0] != 1.0 || v[1].(float64) == v[1].(float64) || v[2].(float64) < 1e308 {
		t.Errorf("values %v", v)
	}
}

func TestCSVBadFiles(t *testing.T) {
	tests := []struct{ name, file, data string }{
		{"ragged rows", "ragged.csv", "a,b\n1,2\n3\n"},
		{"too many fields", "wide.csv", "a,b\n1,2,3\n"},
		{"invalid utf8 cell", "latin1.csv", "a,b\n1,caf\xe9\n"},
		{"invalid utf8 header", "latin1h.csv", "caf\xe9,b\n1,2\n"},
		{"binary garbage", "garbage.csv", "\x00\x01\x02\xff\xfe,\x00\n\x89PNG\r\n\x1a\n"},
		{"empty file", "empty.csv", ""},
		{"blank file", "blank.csv", "\n\n  \n"},
		{"bare quote", "quote.csv", "a,b\n1,x\"y\n"},
		{"unterminated quote", "open.csv", "a,b\n1,\"abc\n"},
		{"not gzip", "fake.csv.gz", ""}, // written raw below
	}
	root := t.TempDir()
	for _, tc := range tests {
		if strings.HasSuffix(tc.file, ".gz") {
			cattest.WriteRaw(t, root, tc.file, "a,b\n1,2\n") // plain text, not gzip
			continue
		}
		cattest.WriteFile(t, root, tc.file, tc.data)
	}
	cattest.WriteFile(t, root, "good.csv", "a\n1\n")

	c := cattest.NewCatalog(t, root)
	if got, want := cattest.IDs(c), []string{"good"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}
	diags := map[string]catalog.Diagnostic{}
	for _, d := range c.Diagnostics() {
		diags[d.Path] = d
	}
	for _, tc := range tests {
		d, ok := diags[tc.file]
		if !ok {
			t.Errorf("%s: no diagnostic for %s (have %v)", tc.name, tc.file, c.Diagnostics())
			continue
		}
		if d.Level != "error" || d.Reason == "" {
			t.Errorf("%s: diagnostic %+v", tc.name, d)
		}
	}
	if t.Failed() {
		return
	}
	for _, d := range c.Diagnostics() {
		t.Logf("%s: %s", d.Path, d.Reason)
	}
}

func TestScanProjection(t *testing.T) {
	root := t.TempDir()
	cattest.WriteFile(t, root, "t.csv", "id,ok,when,name,score\n1,true,2024-01-01T00:00:00Z,a,1.5\n2,false,,b,\n3,,2024-01-01T00:00:01.250Z,,3\n")
	ds := cattest.Lookup(t, cattest.NewCatalog(t, root), "t")
	schema, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{Columns: []string{"score", "when", "id", "ok"}, BatchSize: 2})
	if got, want := cattest.FieldNames(schema), []string{"score", "when", "id", "ok"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	if got, want := cattest.TypeNames(schema), []string{"float64", "timestamp[ms, tz=UTC]", "int64", "bool"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("types %v, want %v", got, want)
	}
	want := [][]any{
		{1.5, nil, 3.0},
		{"2024-01-01T00:00:00.000", nil, "2024-01-01T00:00:01.250"},
		{int64(1), int64(2), int64(3)},
		{true, false, nil},
	}
	if !reflect.DeepEqual(cols, want) {
		t.Fatalf("values\n got %#v\nwant %#v", cols, want)
	}

	// Only a column that would need conversion, with one-row batches.
	_, cols = cattest.ScanAll(t, ds, catalog.ScanOptions{Columns: []string{"ok"}, BatchSize: 1})
	if !reflect.DeepEqual(cols, [][]any{{true, false, nil}}) {
		t.Fatalf("ok column %v", cols)
	}

	for _, bad := range [][]string{{"nope"}, {"ID"}, {"id", "id"}} {
		_, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Columns: bad})
		cattest.AssertCode(t, err, qerr.ErrInvalidArgument, qerr.CodeInvalidColumn)
	}
	_, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Columns: []string{"scroe"}})
	var qe *qerr.Error
	if errors.As(err, &qe) {
		if s, _ := qe.Diagnostics["suggestions"].([]string); len(s) == 0 || s[0] != "score" {
			t.Errorf("suggestions %v", qe.Diagnostics["suggestions"])
		}
	}
}

func TestScanCancellation(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("id,v\n")
	for i := range 1000 {
		b.WriteString(strings.Repeat("x", i%7) + "1,2\n")
	}
	cattest.WriteFile(t, root, "big.csv", b.String())
	ds := cattest.Lookup(t, cattest.NewCatalog(t, root), "big")

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	rr, err := ds.Source.Scan(ctx, catalog.ScanOptions{BatchSize: 10, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if !rr.Next() {
		t.Fatalf("first batch: %v", rr.Err())
	}
	if n := rr.RecordBatch().NumRows(); n != 10 {
		t.Errorf("batch rows %d", n)
	}
	cancel()
	if rr.Next() {
		t.Fatal("Next after cancel returned true")
	}
	if !errors.Is(rr.Err(), context.Canceled) {
		t.Fatalf("Err %v, want context.Canceled", rr.Err())
	}
	if rr.Next() {
		t.Fatal("Next after error returned true")
	}

	// Scan with an already cancelled context fails up front.
	if _, err := ds.Source.Scan(ctx, catalog.ScanOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Scan(cancelled) = %v", err)
	}
}

func TestScanEarlyReleaseAndRetain(t *testing.T) {
	root := t.TempDir()
	cattest.WriteFile(t, root, "a.csv.gz", "a,b,c\n1,true,2024-01-01 10:00:00\n2,false,2024-01-01 10:00:01\n3,true,\n")
	ds := cattest.Lookup(t, cattest.NewCatalog(t, root), "a")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{BatchSize: 1, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	rr.Retain()
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	rec := rr.RecordBatch()
	rec.Retain()
	rr.Release()
	rr.Release() // released mid-stream, batch still held
	if rec.NumRows() != 1 || rec.NumCols() != 3 {
		t.Errorf("batch %v", rec)
	}
	rec.Release()
}

func TestScanFileChangedAfterOpen(t *testing.T) {
	root := t.TempDir()
	p := cattest.WriteFile(t, root, "a.csv", "a,b\n1,true\n2,false\n")
	ds := cattest.Lookup(t, cattest.NewCatalog(t, root), "a")

	// Same shape, but a value no longer fits the cataloged type: the scan
	// fails, and since the file is not what was cataloged, with
	// catalog.FileChangedError (not internal).
	cattest.WriteFile(t, root, "a.csv", "a,b\n1,true\nx,maybe\n")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	for rr.Next() {
	}
	cattest.AssertCode(t, rr.Err(), qerr.ErrNotFound, qerr.CodeDatasetNotFound) // changed under the scan
	rr.Release()
	mem.AssertSize(t, 0)

	// Only the bool column: converted by Quarry, fails the same way.
	rr, err = ds.Source.Scan(context.Background(), catalog.ScanOptions{Columns: []string{"b"}, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	for rr.Next() {
	}
	cattest.AssertCode(t, rr.Err(), qerr.ErrNotFound, qerr.CodeDatasetNotFound) // changed under the scan
	rr.Release()
	mem.AssertSize(t, 0)

	// Removed file.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	_, err = ds.Source.Scan(context.Background(), catalog.ScanOptions{})
	cattest.AssertCode(t, err, qerr.ErrNotFound, qerr.CodeDatasetNotFound)
}
