package e2e

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// codesCSV holds what a careless inference loses: postal and FIPS codes
// with leading zeros, a leading "+", integers beyond int64, decimals with
// more digits than a float64 keeps; and dates in common non-ISO layouts.
const codesCSV = "zip,fips,signed,big,precise,when,day,mixed\n" +
	"00501,01001,+1,99999999999999999999,0.1000000000000000000000000000000001,2015/01/01 01:00:00,Jan 1 2000,2015-01-31\n" +
	"10001,36061,-2,1,0.5,2015/01/02 13:30:00,\"February 29, 2000\",2015-02-01\n" +
	"99950,02013,3,2,0.25,2015/12/31 23:59:59,Dec 31 1999,N/A\n"

// TestIngestKeepsValues: columns whose text would not survive a number type
// stay text with a hint in get_schema, and come back exactly as written
// through inline JSON, CSV and Parquet outputs; 2015/01/01 01:00:00 is a
// timestamp and a month-name column a date, with their layouts shown; a
// date-like column that does not parse in full carries a warning.
func TestIngestKeepsValues(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "codes.csv"), []byte(codesCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startStdio(t, "--data", dir, "--artifact-dir", t.TempDir())

	var schema struct {
		Columns []struct {
			Name    string `json:"name"`
			Type    string `json:"type"`
			Format  string `json:"format"`
			Hint    string `json:"hint"`
			Warning string `json:"warning"`
		} `json:"columns"`
	}
	call(t, c, "get_schema", map[string]any{"dataset": "codes"}, &schema)
	types := map[string]string{}
	for _, col := range schema.Columns {
		types[col.Name] = col.Type
		switch col.Name {
		case "zip", "fips":
			if !strings.Contains(col.Hint, "leading zeros") {
				t.Errorf("%s: hint %q", col.Name, col.Hint)
			}
		case "signed", "big", "precise":
			if !strings.Contains(col.Hint, "kept as text so nothing is lost") {
				t.Errorf("%s: hint %q", col.Name, col.Hint)
			}
		case "when":
			if col.Format != "YYYY/MM/DD HH:MM[:SS[.f]]" {
				t.Errorf("when: format %q", col.Format)
			}
		case "day":
			if col.Format != "Mon D YYYY" {
				t.Errorf("day: format %q", col.Format)
			}
		case "mixed":
			if !strings.Contains(col.Warning, `row 3 holds "N/A"`) {
				t.Errorf("mixed: warning %q", col.Warning)
			}
		}
	}
	wantTypes := map[string]string{"zip": "string", "fips": "string", "signed": "string", "big": "string", "precise": "string",
		"when": "timestamp[ms]", "day": "date", "mixed": "string"}
	if !reflect.DeepEqual(types, wantTypes) {
		t.Fatalf("types %v, want %v", types, wantTypes)
	}

	textCols := []string{"zip", "fips", "signed", "big", "precise"}
	var want [][]string
	recs, _ := csv.NewReader(strings.NewReader(codesCSV)).ReadAll()
	for _, rec := range recs[1:] {
		want = append(want, rec[:len(textCols)])
	}

	// Inline JSON.
	var inline queryResult
	call(t, c, "query_data", map[string]any{"dataset": "codes", "columns": textCols}, &inline)
	var got [][]string
	for _, row := range inline.Data {
		var r []string
		for _, col := range textCols {
			s, _ := row[col].(string)
			r = append(r, s)
		}
		got = append(got, r)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("json rows %q, want %q", got, want)
	}
	var dated queryResult
	call(t, c, "query_data", map[string]any{"dataset": "codes", "columns": []string{"when", "day"}}, &dated)
	if w, d := dated.Data[0]["when"], dated.Data[1]["day"]; !strings.HasPrefix(w.(string), "2015-01-01T01:00:00") || d != "2000-02-29" {
		t.Fatalf("dates: when %v, day %v", w, d)
	}

	// CSV and Parquet files (max_rows 1 forces a file).
	for _, format := range []string{"csv", "parquet"} {
		f := callPage(t, c, "query_data", map[string]any{"dataset": "codes", "columns": textCols, "output_format": format, "max_rows": 1})
		if f.Method != "file" {
			t.Fatalf("%s: method %q", format, f.Method)
		}
		mime := map[string]string{"csv": "text/csv", "parquet": "application/vnd.apache.parquet"}[format]
		b := readArtifact(t, c, f.ResourceURI, mime)
		got = nil
		if format == "csv" {
			recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
			if err != nil || len(recs) == 0 || !reflect.DeepEqual(recs[0], textCols) {
				t.Fatalf("csv artifact: %v %q", err, recs)
			}
			got = recs[1:]
		} else {
			pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			r := parquet.NewReader(pf)
			rows := make([]parquet.Row, 16)
			n, _ := r.ReadRows(rows)
			r.Close()
			for _, row := range rows[:n] {
				var rec []string
				for j := range textCols {
					rec = append(rec, string(row[j].ByteArray()))
				}
				got = append(got, rec)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s rows %q, want %q", format, got, want)
		}
	}
}
