package mcpapi_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/quarrydb/quarry/internal/testutil/golden"
	"github.com/quarrydb/quarry/mcpapi"
)

// update rewrites snapshots and generated docs: go test ./mcpapi -update
// (or UPDATE_SNAPSHOTS=1 go test ./mcpapi).
var update = flag.Bool("update", os.Getenv("UPDATE_SNAPSHOTS") == "1", "rewrite testdata snapshots and docs/TOOLS.md")

// TestToolSchemaSnapshots pins every tool's definition (name, title,
// description, annotations, input and output schema). A change to a tool's
// contract shows up as a diff of testdata/tools/<name>.json.
func TestToolSchemaSnapshots(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range mcpapi.Tools {
		tool, handler := c(nil)
		if handler == nil {
			t.Fatalf("%s has no handler", tool.Name)
		}
		if seen[tool.Name] {
			t.Fatalf("tool %s registered twice", tool.Name)
		}
		seen[tool.Name] = true
		got, err := json.MarshalIndent(tool, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		golden.Check(t, filepath.Join("testdata", "tools", tool.Name+".json"), got, *update)
		a := tool.Annotations
		if tool.Name == "export" { // writes files into --export-dir (and may replace one with overwrite)
			if a.ReadOnlyHint == nil || *a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
				t.Errorf("export: annotations must say it writes: %+v", a)
			}
		} else if a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint ||
			a.IdempotentHint == nil || !*a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations must be readOnly, non-destructive, idempotent, closed-world: %+v", tool.Name, a)
		}
		if tool.Title == "" || tool.Description == "" || len(tool.RawInputSchema) == 0 || len(tool.RawOutputSchema) == 0 {
			t.Errorf("%s lacks a title, description or schema", tool.Name)
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "tools", "*.json"))
	for _, f := range files {
		name := filepath.Base(f[:len(f)-len(".json")])
		if !seen[name] {
			t.Errorf("stale snapshot %s: no such tool (delete it)", f)
		}
	}
}
