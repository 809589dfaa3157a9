package funcs_test

import (
	"flag"
	"os"
	"testing"

	"github.com/quarrydb/quarry/internal/funcs"
)

var update = flag.Bool("update", false, "rewrite the generated function tables in docs/QUERY.md")

// docs/QUERY.md's function tables are what the registry declares.
func TestQueryDocTables(t *testing.T) {
	const path = "../../docs/QUERY.md"
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := funcs.ReplaceDocSections(string(old))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != string(old) {
		t.Errorf("docs/QUERY.md's generated function tables differ from the registry; run go test ./internal/funcs -update and review the diff")
	}
}
