package catalog_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// TestCardTypesJSONAndExcel: a schema card's column types apply to JSON
// and Excel datasets as to CSV: codes kept as strings, numbers narrowed,
// epochs and formatted dates typed; a value that does not parse under
// its override makes the file a diagnostic naming row and column (listed
// by schema-card check); an override equal to the inferred type changes
// nothing.
func TestCardTypesJSONAndExcel(t *testing.T) {
	card := `{"columns": [{"name": "zip", "type": "string"}, {"name": "n", "type": "int16"},
		{"name": "t", "type": "timestamp[s, UTC]", "format": "epoch_s"}, {"name": "d", "type": "date", "format": "%d.%m.%Y"},
		{"name": "x", "type": "float64"}]}`
	want := map[string][]any{
		"zip": {"501", "1001"},
		"n":   {"7", "-3"},
		"t":   {secs(1420070400), secs(1)}, // cattest.Values prints the raw value as milliseconds
		"d":   {"2015-01-31", "2000-02-01"},
		"x":   {1.5, 2.25},
	}
	types := []string{"utf8", "int16", "timestamp[s, tz=UTC]", "date32", "float64"}
	root := t.TempDir()
	cattest.WriteRaw(t, root, "a.jsonl", `{"zip": 501, "n": 7, "t": 1420070400, "d": "31.01.2015", "x": 1.5}`+"\n"+
		`{"zip": 1001, "n": -3, "t": 1, "d": "01.02.2000", "x": 2.25}`+"\n")
	cattest.WriteRaw(t, root, "a.jsonl.schema.json", card)
	cattest.WriteRaw(t, root, "b.xlsx", string(xlsxBytes(t, func(f *excelize.File) {
		rows := [][]any{{"zip", "n", "t", "d", "x"}, {501, 7, 1420070400, "31.01.2015", 1.5}, {1001, -3, 1, "01.02.2000", 2.25}}
		for i, r := range rows {
			for j, v := range r {
				cell, _ := excelize.CoordinatesToCellName(j+1, i+1)
				if err := f.SetCellValue("Sheet1", cell, v); err != nil {
					t.Fatal(err)
				}
			}
		}
	})))
	cattest.WriteRaw(t, root, "b.xlsx.schema.json", card)
	// Broken: a value the override cannot read.
	cattest.WriteRaw(t, root, "bad.jsonl", `{"n": 1}`+"\n"+`{"n": 1.5}`+"\n")
	cattest.WriteRaw(t, root, "bad.jsonl.schema.json", `{"columns": [{"name": "n", "type": "int64"}]}`)
	cattest.WriteRaw(t, root, "big.jsonl", `{"n": 1}`+"\n"+`{"n": 40000}`+"\n")
	cattest.WriteRaw(t, root, "big.jsonl.schema.json", `{"columns": [{"name": "n", "type": "int16"}]}`)
	c := cattest.NewCatalog(t, root, catalog.NewJSONFormat(catalog.Limits{}), catalog.NewXLSXFormat(catalog.Limits{}))
	for _, id := range []string{"a", "b/Sheet1"} {
		ds := cattest.Lookup(t, c, id)
		if got := cattest.TypeNames(ds.Schema); !reflect.DeepEqual(got, types) {
			t.Errorf("%s: types %v, want %v", id, got, types)
		}
		if ds.ColumnNotes["t"].Format != "epoch_s" || ds.ColumnNotes["d"].Format != "%d.%m.%Y" || ds.ColumnNotes["zip"].Hint != "" {
			t.Errorf("%s: notes %+v", id, ds.ColumnNotes)
		}
		schema, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{})
		for i, f := range schema.Fields() {
			if !reflect.DeepEqual(cols[i], want[f.Name]) {
				t.Errorf("%s.%s = %#v, want %#v", id, f.Name, cols[i], want[f.Name])
			}
		}
	}
	for path, msg := range map[string]string{
		"bad.jsonl": `row 2, column "n": "1.5" does not parse as int64`,
		"big.jsonl": `row 2, column "n": "40000" does not parse as int16`,
	} {
		found := false
		for _, d := range c.Diagnostics() {
			if d.Path == path && catalog.IsCardReadProblem(d) && strings.Contains(d.Reason, msg) && strings.Contains(d.Reason, path+".schema.json") {
				found = true
			}
		}
		if !found {
			t.Errorf("no diagnostic %q for %s in %v", msg, path, c.Diagnostics())
		}
	}
}

// secs is how cattest.Values shows the timestamp[s] value v.
func secs(v int64) string { return time.UnixMilli(v).UTC().Format("2006-01-02T15:04:05.000") }
