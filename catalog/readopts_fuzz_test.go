package catalog_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
)

// FuzzCSVReadOptions: any file read under any valid schema card (read
// options, type overrides, encodings) is a dataset whose scan reads back
// its schema and row count, or a diagnostic; nothing panics or leaks.
func FuzzCSVReadOptions(f *testing.F) {
	for _, s := range [][2]string{
		{"Stadt;Fl\xe4che\nK\xf6ln;405,02\n", `{"read":{"encoding":"latin-1","decimal_comma":true,"thousands_separator":"."}}`},
		{"\xff\xfea\x00,\x00b\x00\n\x001\x00,\x002\x00\n\x00", `{}`},
		{"title\n# c\na|b\n'x\\'y'|1\n", `{"read":{"skip_rows":1,"comment":"#","delimiter":"|","quote":"'","escape":"\\"}}`},
		{"1,2\n3,NA\n", `{"read":{"header":false,"null_values":["NA"]}}`},
		{"d,t\n31.01.2015,31.01.2015 10:30\n", `{"read":{"date_format":"%d.%m.%Y","timestamp_format":"%d.%m.%Y %H:%M"}}`},
		{"z,e\n00501,1420070400\n", `{"columns":[{"name":"z","type":"int32"},{"name":"e","type":"timestamp[s]","format":"epoch_s"}]}`},
		{"a\n1 234,5\n", `{"read":{"decimal_comma":true,"thousands_separator":" ","header":2}}`},
		{"a,b\n\"x\ny\",2\r\n", `{"read":{"quote":""}}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, data, card []byte) {
		if _, err := catalog.ParseCardFile(card); err != nil {
			return // invalid cards are ignored (cards_fuzz_test.go)
		}
		root := t.TempDir()
		for name, b := range map[string][]byte{"f.csv": data, "f.csv.schema.json": card} {
			if err := os.WriteFile(filepath.Join(root, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		checkOpenAndScan(t, root, "f.csv", false, csv.NewFormat())
	})
}
