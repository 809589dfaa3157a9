package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestReadOptionsLatin1Card: the acceptance check of issue #12 over MCP —
// a decimal-comma, semicolon-separated CSV in Latin-1 with a schema card
// saying so reads correctly (names and text transcoded, numbers parsed,
// a code column kept as text by a type override), and get_schema shows
// the options in effect and the card that set them. A file without a
// card shows what was sniffed.
func TestReadOptionsLatin1Card(t *testing.T) {
	dir := t.TempDir()
	// "Gemeinde;Fläche km²;Einwohner;Kennziffer" in ISO-8859-1.
	data := "Gemeinde;Fl\xe4che km\xb2;Einwohner;Kennziffer\n" +
		"K\xf6ln;405,02;1.084.831;05315000\n" +
		"M\xfcnchen;310,7;1.512.491;09162000\n" +
		"D\xfcren;85,02;93.440;5358008\n"
	if err := os.WriteFile(filepath.Join(dir, "gemeinden.csv"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	card := `{"read": {"encoding": "latin-1", "decimal_comma": true, "thousands_separator": "."},
		"columns": [{"name": "Kennziffer", "type": "string", "role": "id"}]}`
	if err := os.WriteFile(filepath.Join(dir, "gemeinden.csv.schema.json"), []byte(card), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain.csv"), []byte("a|b\n1|x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startStdio(t, "--data", dir)

	var schema struct {
		Columns []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"columns"`
		ReadOptions map[string]any `json:"read_options"`
	}
	call(t, c, "get_schema", map[string]any{"dataset": "gemeinden"}, &schema)
	got := fmt.Sprint(schema.Columns)
	if want := "[{Gemeinde string} {Fläche km² float64} {Einwohner int64} {Kennziffer string}]"; got != want {
		t.Fatalf("columns %s, want %s", got, want)
	}
	ro := schema.ReadOptions
	if ro["delimiter"] != ";" || ro["encoding"] != "latin-1" || ro["decimal_comma"] != true || ro["thousands_separator"] != "." ||
		!reflect.DeepEqual(ro["from_cards"], []any{"gemeinden.csv.schema.json"}) {
		t.Fatalf("read_options %v", ro)
	}

	var q queryResult
	call(t, c, "query_data", map[string]any{"dataset": "gemeinden",
		"filters":  []map[string]any{{"col": "Fläche km²", "op": "gt", "value": 100}},
		"order_by": []map[string]any{{"col": "Einwohner", "desc": true}}}, &q)
	want := []map[string]any{
		{"Gemeinde": "München", "Fläche km²": 310.7, "Einwohner": float64(1512491), "Kennziffer": "09162000"},
		{"Gemeinde": "Köln", "Fläche km²": 405.02, "Einwohner": float64(1084831), "Kennziffer": "05315000"},
	}
	if !reflect.DeepEqual(q.Data, want) {
		t.Fatalf("rows %v, want %v", q.Data, want)
	}

	call(t, c, "get_schema", map[string]any{"dataset": "plain"}, &schema)
	if ro := schema.ReadOptions; ro["delimiter"] != "|" || ro["header"] != true || !reflect.DeepEqual(ro["sniffed"], []any{"delimiter", "header"}) {
		t.Fatalf("plain read_options %v", ro)
	}
}
