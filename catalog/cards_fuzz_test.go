package catalog_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/catalog"
)

// FuzzParseCardFile: schema cards are user files in the data root. Parsing
// never panics; an accepted card has named, unique columns and survives a
// round trip through JSON unchanged.
func FuzzParseCardFile(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"description":"daily weather","tags":{"source":"noaa","year":2024,"ok":true},"columns":[{"name":"t","description":"°C","role":"measure","unit":"degC"}]}`,
		`{"columns":[{"name":"a"},{"name":"a"}]}`,
		`{"columns":[{"name":" "}]}`,
		`{"tags":{"1bad":"x"}}`,
		`{"tags":{"k":[1,2]}}`,
		`{"unknown":1}`,
		`{"columns":[{"name":"a","role":"Bad Role"}]} {}`,
		`[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cf, err := catalog.ParseCardFile(b)
		if err != nil {
			if cf != nil {
				t.Fatalf("card and error: %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, c := range cf.Columns {
			if strings.TrimSpace(c.Name) == "" || seen[c.Name] {
				t.Fatalf("accepted a card with an empty or duplicate column %q", c.Name)
			}
			seen[c.Name] = true
		}
		again, err := json.Marshal(cf)
		if err != nil {
			t.Fatalf("marshal an accepted card: %v", err)
		}
		cf2, err := catalog.ParseCardFile(again)
		if err != nil {
			t.Fatalf("an accepted card does not parse again: %v\n%s", err, again)
		}
		if again2, _ := json.Marshal(cf2); string(again2) != string(again) {
			t.Fatalf("round trip changed the card:\n%s\n%s", again, again2)
		}
	})
}
