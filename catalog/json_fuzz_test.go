package catalog_test

import (
	"testing"

	"github.com/quarrydb/quarry/catalog"
)

// FuzzJSON checks that no file makes the JSON format panic, and that a
// file it catalogs scans back in the cataloged schema and row count
// (inference and reading agree), leaking nothing. Corpus:
// testdata/fuzz/FuzzJSON.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{
		`{"a": 1, "b": "x"}` + "\n" + `{"a": 2.5, "c": [1, {"d": null}]}`,
		`[{"id": "00501", "t": "2015/01/01 01:00:00", "n": {"x": -0}}, {"id": "1", "t": null}]`,
		`{"a": 12345678901234567890, "b": true, "c": "Jan 1 2000"} {"a": 1e3, "b": false, "c": "February 29, 2000"}`,
		"\ufeff[]",
		`{"a": {"b": {"c": "2015-01-31T10:00:00Z"}}, "a.b.c": "dup"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzOpenAndScan(t, "f.jsonl", data, false, catalog.NewJSONFormat(catalog.Limits{MaxRecordBytes: 1 << 16}))
	})
}
