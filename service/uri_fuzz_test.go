package service

import (
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
)

// FuzzResourceURIs: the parsers of Quarry's resource URIs and cursors
// (per-dataset resources, the URI templates quarry://datasets/{id}/{kind};
// result pages quarry://results/{handle}/pages/{n}; get_catalog cursors)
// never panic, and what they accept round-trips through the functions that
// make them; a refused cursor is an invalid_argument error.
func FuzzResourceURIs(f *testing.F) {
	for _, s := range []string{
		DatasetURI("sales/orders", ResourceSchema), DatasetURI("a b%/c", ResourceSummary),
		"quarry://datasets//schema", "quarry://datasets/%zz/catalog", "quarry://datasets/x/other",
		ResultPageURI("h_abc", 0), ResultPageURI("h", 12), "quarry://results/h/pages/01", "quarry://results/a/b/pages/1",
		"quarry://results/h/pages/-1", "quarry://results//pages/1",
		catalogCursor("weather/daily"), "YWZ0ZXI6", "after:x", "!!",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if id, kind, ok := ParseDatasetURI(s); ok {
			if id == "" || (kind != ResourceSchema && kind != ResourceCatalog && kind != ResourceSummary) {
				t.Fatalf("ParseDatasetURI(%q) = %q, %q", s, id, kind)
			}
			if id2, kind2, ok := ParseDatasetURI(DatasetURI(id, kind)); !ok || id2 != id || kind2 != kind {
				t.Fatalf("DatasetURI(%q, %q) parses as %q, %q, %v", id, kind, id2, kind2, ok)
			}
		}
		if handle, n, ok := ParseResultPageURI(s); ok {
			if got := ResultPageURI(handle, n); got != s {
				t.Fatalf("ParseResultPageURI(%q) = %q, %d: made back as %q", s, handle, n, got)
			}
		}
		id, err := parseCatalogCursor(s)
		if err != nil {
			if qerr.Code(err) != qerr.CodeInvalidArgument {
				t.Fatalf("parseCatalogCursor(%q): %v, want invalid_argument", s, err)
			}
			return
		}
		if s != "" {
			if back, err := parseCatalogCursor(catalogCursor(id)); err != nil || back != id {
				t.Fatalf("cursor of %q parses as %q, %v", id, back, err)
			}
		}
	})
}
