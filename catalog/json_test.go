package catalog_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// TestJSONDatasets: both layouts, flattening, arrays as JSON text,
// missing keys, and the no-loss typing rules shared with CSV.
func TestJSONDatasets(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		rows          int64
		names, types  []string
		cols          [][]any
		notes         map[string]string // column -> part of its hint, warning or format
	}{
		{
			name: "lines.jsonl",
			content: `{"id": 1, "zip": "00501", "x": 1.5, "ok": true, "day": "2015-01-31", "p": {"lat": 1, "lon": {"deg": 2}}, "tags": ["a", {"b": null}]}` + "\n" +
				"\n" + `{"id": 2, "x": 2, "ok": false, "day": "2015-02-01", "extra": "late"}` + "\n" +
				`{"id": 12345678901234567, "zip": "10001", "x": null, "ok": null, "day": null, "p": {"lat": -0.5}}`,
			rows:  3,
			names: []string{"id", "zip", "x", "ok", "day", "p.lat", "p.lon.deg", "tags", "extra"},
			types: []string{"int64", "utf8", "float64", "bool", "date32", "float64", "int64", "utf8", "utf8"},
			cols: [][]any{{int64(1), int64(2), int64(12345678901234567)}, {"00501", nil, "10001"}, {1.5, 2.0, nil}, {true, false, nil},
				{"2015-01-31", "2015-02-01", nil}, {1.0, nil, -0.5}, {int64(2), nil, nil}, {`["a",{"b":null}]`, nil, nil}, {nil, "late", nil}},
			notes: map[string]string{"day": "YYYY-MM-DD", "tags": "JSON text"},
		},
		{
			name:    "array.json",
			content: "\ufeff[\n  {\"a\": 99999999999999999999, \"b\": \"2015/01/01 01:00:00\", \"c\": 1, \"d\": -0},\n  {\"a\": 1, \"b\": \"2015/01/02 13:30:00\", \"c\": \"x\", \"d\": 1}\n]\n",
			rows:    2,
			names:   []string{"a", "b", "c", "d"},
			types:   []string{"utf8", "timestamp[ms]", "utf8", "utf8"},
			cols:    [][]any{{"99999999999999999999", "1"}, {"2015-01-01T01:00:00.000", "2015-01-02T13:30:00.000"}, {"1", "x"}, {"-0", "1"}},
			notes:   map[string]string{"a": "kept as text", "b": "YYYY/MM/DD HH:MM", "c": "mixes JSON numbers and strings", "d": "kept as text"},
		},
		{
			name:    "dates.ndjson",
			content: `{"d": "2015-01-31", "n": "123"}` + "\n" + `{"d": "N/A", "n": "0042"}` + "\n",
			rows:    2,
			names:   []string{"d", "n"},
			types:   []string{"utf8", "utf8"},
			cols:    [][]any{{"2015-01-31", "N/A"}, {"123", "0042"}},
			notes:   map[string]string{"d": `row 2 holds "N/A"`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cattest.WriteFile(t, root, tc.name, tc.content)
			c := cattest.NewCatalog(t, root, catalog.NewJSONFormat(catalog.Limits{}))
			id := tc.name[:strings.IndexByte(tc.name, '.')]
			ds := cattest.Lookup(t, c, id)
			if ds.Kind != catalog.KindJSON || ds.RowCount != tc.rows || !ds.RowCountExact {
				t.Fatalf("kind %s rows %d", ds.Kind, ds.RowCount)
			}
			if got := cattest.FieldNames(ds.Schema); !reflect.DeepEqual(got, tc.names) {
				t.Fatalf("names %v, want %v", got, tc.names)
			}
			if got := cattest.TypeNames(ds.Schema); !reflect.DeepEqual(got, tc.types) {
				t.Fatalf("types %v, want %v", got, tc.types)
			}
			for col, part := range tc.notes {
				n := ds.ColumnNotes[col]
				if !strings.Contains(n.Hint+n.Warning+n.Format, part) {
					t.Errorf("%s: note %+v, want %q", col, n, part)
				}
			}
			_, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{BatchSize: 2})
			if !reflect.DeepEqual(cols, tc.cols) {
				t.Fatalf("values %v\nwant %v", cols, tc.cols)
			}
			// A projection in another order.
			last := tc.names[len(tc.names)-1]
			_, pc := cattest.ScanAll(t, ds, catalog.ScanOptions{Columns: []string{last, tc.names[0]}})
			if !reflect.DeepEqual(pc, [][]any{tc.cols[len(tc.cols)-1], tc.cols[0]}) {
				t.Fatalf("projected %v", pc)
			}
		})
	}
}

// TestJSONRejected: files that are not JSON records are diagnostics; the
// limits hold; schema cards are never JSON datasets.
func TestJSONRejected(t *testing.T) {
	for _, tc := range []struct {
		name, content, reason string
		lim                   catalog.Limits
	}{
		{"empty.jsonl", "  \n", "empty", catalog.Limits{}},
		{"scalar.json", "42", "does not start with an object", catalog.Limits{}},
		{"scalars.json", "[1, 2]", "record 1 is not an object", catalog.Limits{}},
		{"broken.jsonl", "{\"a\": 1}\n{\"a\": }\n", "invalid JSON in record 2", catalog.Limits{}},
		{"cut.json", "[{\"a\": 1}, {\"a\"", "record 2", catalog.Limits{}},
		{"trailing.json", "[{\"a\": 1}] x", "after the top-level array", catalog.Limits{}},
		{"nokeys.json", "[{}, {}]", "no keys", catalog.Limits{}},
		{"long.jsonl", "{\"a\": \"" + strings.Repeat("x", 200<<10) + "\"}\n", "longer than", catalog.Limits{MaxRecordBytes: 1 << 10}},
		{"wide.jsonl", "{\"a\": 1, \"b\": 2, \"c\": 3}\n", "more than 2 distinct keys", catalog.Limits{MaxColumns: 2}},
		{"key.jsonl", "{\"" + strings.Repeat("k", 50) + "\": 1}\n", "key longer than 10 bytes", catalog.Limits{MaxNameBytes: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cattest.WriteFile(t, root, tc.name, tc.content)
			cattest.WriteFile(t, root, "x.schema.json", `{"description": "a card"}`)
			c := cattest.NewCatalog(t, root, catalog.NewJSONFormat(tc.lim))
			var reasons []string
			for _, d := range c.Diagnostics() {
				if d.Path == tc.name {
					reasons = append(reasons, d.Reason)
				}
			}
			if len(c.Datasets()) != 0 || len(reasons) != 1 || !strings.Contains(reasons[0], tc.reason) {
				t.Fatalf("datasets %v, diagnostics %+v, want %q", cattest.IDs(c), c.Diagnostics(), tc.reason)
			}
		})
	}
}
