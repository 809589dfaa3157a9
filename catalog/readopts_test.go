package catalog_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// latin1 encodes s (runes below 256) as ISO-8859-1.
func latin1(s string) string {
	var b []byte
	for _, r := range s {
		if r > 255 {
			panic("not latin-1")
		}
		b = append(b, byte(r))
	}
	return string(b)
}

func utf16LE(s string) string {
	b := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

func TestReadOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		file  string // under the root
		data  string
		card  string // <file>.schema.json; "" for none
		types string // want, space separated
		cols  string // want: the columns' values, fmt %v
		attrs string // want: substrings of Attributes["read_options"]
	}{
		{name: "latin-1 decimal comma semicolon", file: "a.csv",
			data:  latin1("Stadt;Fläche;Einwohner\nKöln;405,02;1.084.831\nMünchen;310,7;1.512.491\n"),
			card:  `{"read": {"encoding": "latin-1", "decimal_comma": true, "thousands_separator": "."}}`,
			types: "utf8 float64 int64", cols: "[[Köln München] [405.02 310.7] [1084831 1512491]]",
			attrs: "decimal_comma:true delimiter:; encoding:latin-1"},
		{name: "windows-1252", file: "b.csv", data: "name,price\n\x93quoted\x94,\x80 5\n",
			card:  `{"read": {"encoding": "windows-1252"}}`,
			types: "utf8 utf8", cols: "[[“quoted”] [€ 5]]"},
		{name: "utf-16 sniffed from its BOM", file: "c.csv", data: utf16LE("id,city\n1,Zürich\n2,Genève\n"),
			types: "int64 utf8", cols: "[[1 2] [Zürich Genève]]", attrs: "encoding:utf-16 sniffed:[delimiter encoding header]"},
		{name: "headerless sniffed", file: "d.csv", data: "1,2.5,2015-01-31\n2,3.5,2015-02-01\n",
			types: "int64 float64 date32", cols: "[[1 2] [2.5 3.5] [2015-01-31 2015-02-01]]", attrs: "header:false"},
		{name: "numeric header kept when a column is text", file: "e.csv", data: "region,2019,2020\nA,1,2\n",
			types: "utf8 int64 int64", cols: "[[A] [1] [2]]"},
		{name: "header false, skip rows, comment, nulls", file: "f.tsv",
			data:  "Report 2024\ngenerated\n# a comment\nx\t1\n# another\ny\tNA\n",
			card:  `{"read": {"header": false, "skip_rows": 2, "comment": "#", "null_values": ["NA"]}}`,
			types: "utf8 int64", cols: "[[x y] [1 <nil>]]"},
		{name: "header row 3", file: "g.csv", data: "title\n\na,b\n1,x\n",
			card:  `{"read": {"header": 3}}`,
			types: "int64 utf8", cols: "[[1] [x]]", attrs: "header:3"},
		{name: "quote and escape", file: "h.csv", data: "a|b\n'it\\'s|x'|2\n",
			card:  `{"read": {"delimiter": "|", "quote": "'", "escape": "\\"}}`,
			types: "utf8 int64", cols: "[[it's|x] [2]]"},
		{name: "no quoting", file: "i.csv", data: "a,b\n5\" screen,1\n",
			card:  `{"read": {"quote": ""}}`,
			types: "utf8 int64", cols: "[[5\" screen] [1]]"},
		{name: "date and timestamp formats", file: "j.csv", data: "d,t,n\n31.01.2015,31.01.2015 10:30,1.5\n01.02.2015,01.02.2015 08:00,2\n",
			card:  `{"read": {"date_format": "%d.%m.%Y", "timestamp_format": "%d.%m.%Y %H:%M"}}`,
			types: "date32 timestamp[ms] float64", cols: "[[2015-01-31 2015-02-01] [2015-01-31T10:30:00.000 2015-02-01T08:00:00.000] [1.5 2]]"},
		{name: "month names and fractions", file: "n.csv", data: "ts\n05-jan-2015 10:30:00.250\n28-FEB-2015 23:59:59\n",
			card:  `{"read": {"timestamp_format": "%d-%b-%Y %H:%M:%S.%f"}}`,
			types: "timestamp[ms]", cols: "[[2015-01-05T10:30:00.250 2015-02-28T23:59:59.000]]"},
		{name: "decimal comma keeps dotted numbers as text", file: "k.csv", data: "v\n1,5\n1.5\n",
			card:  `{"read": {"decimal_comma": true, "delimiter": ";"}}`,
			types: "utf8", cols: "[[1,5 1.5]]"},
		{name: "type overrides", file: "l.csv", data: "zip,ts,n,flag,d\n1001,1420070400,7,true,Jan 5 2015\n2001,1420074000,8,false,Feb 1 2015\n",
			card: `{"columns": [{"name": "zip", "type": "string"}, {"name": "ts", "type": "timestamp[ms, UTC]", "format": "epoch_s"},
				{"name": "n", "type": "int16"}, {"name": "flag", "type": "string"}, {"name": "d", "type": "date"}]}`,
			types: "utf8 timestamp[ms, tz=UTC] int16 utf8 date32", cols: "[[1001 2001] [2015-01-01T00:00:00.000 2015-01-01T01:00:00.000] [7 8] [true false] [2015-01-05 2015-02-01]]"},
		{name: "matching types change nothing", file: "m.csv", data: "a,b\n1,x\n",
			card:  `{"columns": [{"name": "a", "type": "int64"}, {"name": "b", "type": "string"}]}`,
			types: "int64 utf8", cols: "[[1] [x]]", attrs: "sniffed:[delimiter header]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cattest.WriteRaw(t, root, tc.file, tc.data)
			if tc.card != "" {
				cattest.WriteRaw(t, root, tc.file+".schema.json", tc.card)
			}
			c := cattest.NewCatalog(t, root)
			id := strings.TrimSuffix(strings.TrimSuffix(tc.file, ".csv"), ".tsv")
			ds := cattest.Lookup(t, c, id)
			if got := strings.Join(cattest.TypeNames(ds.Schema), " "); got != tc.types {
				t.Fatalf("types %q, want %q", got, tc.types)
			}
			_, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{BatchSize: 1})
			if got := fmt.Sprint(cols); got != tc.cols {
				t.Fatalf("values %s, want %s", got, tc.cols)
			}
			ro := fmt.Sprint(ds.Attributes["read_options"])
			for _, want := range strings.Fields(tc.attrs) {
				if !strings.Contains(ro, want) {
					t.Fatalf("read_options %s lacks %q", ro, want)
				}
			}
			if d := c.Diagnostics(); len(d) > 0 {
				t.Fatalf("diagnostics: %v", d)
			}
		})
	}
}

// A value that does not parse under an override makes the file a
// diagnostic naming the row and the column; fixing the card brings the
// dataset back at the next scan.
func TestReadOverrideProblems(t *testing.T) {
	root := t.TempDir()
	cattest.WriteRaw(t, root, "p.csv", "id,amount\n1,10\n2,x1\n")
	card := cattest.WriteRaw(t, root, "p.csv.schema.json", `{"columns": [{"name": "amount", "type": "int32"}]}`)
	c := cattest.NewCatalog(t, root)
	if _, err := c.Lookup("p"); err == nil {
		t.Fatal("dataset listed despite a value that does not parse")
	}
	var found bool
	for _, d := range c.Diagnostics() {
		if d.Path == "p.csv" && catalog.IsCardReadProblem(d) && strings.Contains(d.Reason, `row 2, column "amount": "x1" does not parse as int32`) {
			found = true
		}
	}
	if !found {
		t.Fatalf("diagnostics %v", c.Diagnostics())
	}
	cattest.WriteRaw(t, root, "p.csv.schema.json", `{"columns": [{"name": "amount", "type": "string"}]}`)
	touch(t, card, 2e9)
	if err := c.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	ds := cattest.Lookup(t, c, "p")
	if got := strings.Join(cattest.TypeNames(ds.Schema), " "); got != "int64 utf8" {
		t.Fatalf("types %s", got)
	}
}

func TestReadOptionsValidation(t *testing.T) {
	for _, tc := range []struct{ card, want string }{
		{`{"read": {"delimiter": ";;"}}`, "one character"},
		{`{"read": {"encoding": "ebcdic"}}`, "not supported"},
		{`{"read": {"header": -1}}`, "header must be"},
		{`{"read": {"thousands_separator": "x"}}`, "thousands_separator"},
		{`{"read": {"decimal_comma": true, "thousands_separator": ","}}`, "cannot be"},
		{`{"read": {"date_format": "%d.%m"}}`, "needs a year"},
		{`{"read": {"date_format": "%d.%m.%Y %H"}}`, "no time fields"},
		{`{"read": {"timestamp_format": "%Y-%m-%d"}}`, "needs an hour"},
		{`{"read": {"date_format": "%Y-%m-%dx"}}`, "only %-directives"},
		{`{"read": {"delimiter": "\""}}`, "must differ"},
		{`{"read": {"bogus": 1}}`, "unknown field"},
		{`{"columns": [{"name": "a", "type": "decimal"}]}`, "not known"},
		{`{"columns": [{"name": "a", "type": "timestamp[ms, Europe/Paris]"}]}`, "only time zone"},
		{`{"columns": [{"name": "a", "type": "int64", "format": "%Y"}]}`, "date and timestamp"},
		{`{"columns": [{"name": "a", "type": "date", "format": "epoch_s"}]}`, "timestamp columns"},
		{`{"columns": [{"name": "a", "format": "%Y-%m-%d"}]}`, "no type"},
	} {
		_, err := catalog.ParseCardFile([]byte(tc.card))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.card, err, tc.want)
		}
	}
	if _, err := catalog.ParseCardFile([]byte(`{"read": {"delimiter": "tab", "header": 2, "quote": "", "encoding": "CP1252", "date_format": "%b %e, %Y"}}`)); err != nil {
		t.Fatal(err)
	}
}

// Read options in a card of a non-CSV file are reported, not applied;
// differing types are applied to JSON and Excel files and reported for
// the typed formats (here Arrow).
func TestReadOptionsNonCSV(t *testing.T) {
	root := t.TempDir()
	cattest.WriteRaw(t, root, "j.jsonl", `{"a": 1}`+"\n")
	cattest.WriteRaw(t, root, "j.jsonl.schema.json", `{"read": {"delimiter": ";"}, "columns": [{"name": "a", "type": "string"}]}`)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := dictRecord(t, mem, 3)
	cattest.WriteRaw(t, root, "r.arrow", string(arrowBytes(t, nil, rec)))
	rec.Release()
	cattest.WriteRaw(t, root, "r.arrow.schema.json", `{"columns": [{"name": "n", "type": "string"}]}`)
	c := cattest.NewCatalog(t, root, catalog.NewJSONFormat(catalog.Limits{}), catalog.NewArrowFormat(catalog.Limits{}))
	if got := cattest.TypeNames(cattest.Lookup(t, c, "j").Schema); got[0] != "utf8" {
		t.Fatalf("JSON type %v, want the card's string", got)
	}
	if got := cattest.TypeNames(cattest.Lookup(t, c, "r").Schema); got[1] != "int64" {
		t.Fatalf("Arrow type %v, want the file's int64", got)
	}
	if !hasDiag(c.Diagnostics(), "j.jsonl.schema.json", "apply to CSV/TSV files only") {
		t.Errorf("no read options diagnostic in %v", c.Diagnostics())
	}
	if !hasDiag(c.Diagnostics(), "r.arrow.schema.json", "type overrides apply to CSV, JSON and Excel files") {
		t.Errorf("no type diagnostic in %v", c.Diagnostics())
	}
}
