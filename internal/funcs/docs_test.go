package funcs_test

import (
	"flag"
	"os"
	"testing"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/testutil/golden"
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
	golden.Check(t, path, doc, *update) // the generated function tables differ from the registry's
}
