package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

func hasDiag(diags []catalog.Diagnostic, path, substr string) bool {
	for _, d := range diags {
		if d.Path == path && strings.Contains(d.Reason, substr) {
			return true
		}
	}
	return false
}

func TestCardsMerge(t *testing.T) {
	root := t.TempDir()
	cattest.WriteFile(t, root, "budget/2024/expenses.csv", "ministry,program,allocated,actual\nHealth,P1,10,9\n")
	cattest.WriteFile(t, root, "budget/2023/expenses.csv", "ministry,allocated\nHealth,10\n")
	cattest.WriteRaw(t, root, "_overall.json", `{"tags": {"domain": "public"}}`)
	cattest.WriteRaw(t, root, "budget/_overall.json", `{"description": "budgets", "tags": {"domain": "budget", "source_type": "expenses"},
		"columns": [{"name": "allocated", "role": "allocated", "unit": "AMD"}, {"name": "not_here", "role": "x"}]}`)
	cattest.WriteRaw(t, root, "budget/2024/_overall.json", `{"tags": {"year": 2024, "final": true}}`)
	cattest.WriteRaw(t, root, "budget/2024/expenses.schema.json", `{"description": "Stem card", "columns": [{"name": "actual", "role": "actual", "description": "stem"}]}`)
	cattest.WriteRaw(t, root, "budget/2024/expenses.csv.schema.json", `{"description": "Expenses by program, 2024",
		"columns": [{"name": "actual", "type": "int64", "description": "spent", "unit": "AMD"}, {"name": "ministry", "role": "dimension"}]}`)
	c := cattest.NewCatalog(t, root)

	d := cattest.Lookup(t, c, "budget/2024/expenses")
	if d.Card == nil {
		t.Fatal("no card")
	}
	if d.Description != "Expenses by program, 2024" || d.Card.Description != d.Description {
		t.Fatalf("description %q", d.Description)
	}
	want := map[string]string{"domain": "budget", "source_type": "expenses", "year": "2024", "final": "true"}
	if len(d.Card.Tags) != len(want) {
		t.Fatalf("tags %v", d.Card.Tags)
	}
	for k, v := range want {
		if d.Card.Tags[k] != v {
			t.Fatalf("tag %s = %q, want %q (all: %v)", k, d.Card.Tags[k], v, d.Card.Tags)
		}
	}
	if got := d.Card.Column("allocated"); got.Role != "allocated" || got.Unit != "AMD" || got.Type != "int64" {
		t.Fatalf("allocated: %+v", got)
	}
	// The stem card gives the role, the full-name card overrides the description.
	if got := d.Card.Column("actual"); got.Role != "actual" || got.Description != "spent" || got.Unit != "AMD" {
		t.Fatalf("actual: %+v", got)
	}
	if got := d.Card.Column("ministry"); got.Role != "dimension" {
		t.Fatalf("ministry: %+v", got)
	}
	if _, ok := d.Card.Columns["not_here"]; ok {
		t.Fatal("a folder card entry for a missing column was applied")
	}
	if len(d.Card.Sources) != 5 || d.Card.Sources[0] != "_overall.json" || d.Card.Sources[4] != "budget/2024/expenses.csv.schema.json" {
		t.Fatalf("sources %v", d.Card.Sources)
	}

	old := cattest.Lookup(t, c, "budget/2023/expenses")
	if old.Card == nil || old.Card.Tags["domain"] != "budget" || old.Card.Tags["year"] != "" || old.Description != "" {
		t.Fatalf("2023 card: %+v", old.Card)
	}
	// Sidecars are never datasets.
	for _, ds := range c.Datasets() {
		if strings.Contains(ds.Path, ".json") {
			t.Fatalf("sidecar listed as a dataset: %s", ds.Path)
		}
	}
	if len(c.Datasets()) != 2 {
		t.Fatalf("%d datasets", len(c.Datasets()))
	}
	if diags := c.Diagnostics(); len(diags) != 0 {
		t.Fatalf("unexpected diagnostics: %+v", diags)
	}

	// Unchanged files and cards keep the same *Dataset across scans.
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if again := cattest.Lookup(t, c, "budget/2024/expenses"); again != d {
		t.Fatal("refresh without changes re-created the carded dataset")
	}
}

func TestCardsValidation(t *testing.T) {
	root := t.TempDir()
	cattest.WriteFile(t, root, "a.csv", "x,y\n1,2\n")
	cattest.WriteFile(t, root, "b.csv", "x\n1\n")
	cattest.WriteFile(t, root, "c.csv", "x\n1\n")
	cattest.WriteFile(t, root, "d.csv", "x\n1\n")
	cattest.WriteRaw(t, root, "a.csv.schema.json", `{"columns": [{"name": "x", "role": "measure"}, {"name": "zz", "role": "id"}, {"name": "y", "type": "string"}]}`)
	cattest.WriteRaw(t, root, "b.schema.json", `{"colums": []}`)
	cattest.WriteRaw(t, root, "c.schema.json", `{"columns": [{"name": "x", "role": "Not A Role"}]}`)
	cattest.WriteRaw(t, root, "d.schema.json", `not json`)
	cattest.WriteRaw(t, root, "orphan.schema.json", `{}`)
	cattest.WriteRaw(t, root, "sub/_overall.json", `{"tags": {"k": [1]}}`)
	cattest.WriteFile(t, root, "sub/e.csv", "x\n1\n")
	c := cattest.NewCatalog(t, root)

	diags := c.Diagnostics()
	for _, want := range []struct{ path, substr string }{
		{"a.csv.schema.json", `column "zz"`},
		{"b.schema.json", `unknown field "colums"`},
		{"c.schema.json", "lower-case identifier"},
		{"d.schema.json", "invalid schema card"},
		{"orphan.schema.json", "matches no data file"},
		{"sub/_overall.json", "strings, numbers or booleans"},
	} {
		if !hasDiag(diags, want.path, want.substr) {
			t.Errorf("no diagnostic %q for %s in %+v", want.substr, want.path, diags)
		}
	}
	// The valid parts of a.csv's card still apply; the bad cards do not.
	// The card's type of y overrides the inferred int64 (readopts_test.go).
	if got := cattest.Lookup(t, c, "a").Card.Column("x"); got.Role != "measure" {
		t.Fatalf("a.x: %+v", got)
	}
	if got := cattest.TypeNames(cattest.Lookup(t, c, "a").Schema); got[1] != "utf8" {
		t.Fatalf("a.y is %s, not the card's string", got[1])
	}
	for _, id := range []string{"b", "c", "d", "sub/e"} {
		if d := cattest.Lookup(t, c, id); d.Card != nil {
			t.Errorf("%s has a card from an invalid sidecar: %+v", id, d.Card)
		}
	}
	if len(c.Datasets()) != 5 {
		t.Fatalf("%d datasets", len(c.Datasets()))
	}

	// Fixing a card is picked up by the next scan, without touching the data.
	p := cattest.WriteRaw(t, root, "c.schema.json", `{"columns": [{"name": "x", "role": "id"}]}`)
	touch(t, p, time.Second)
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := cattest.Lookup(t, c, "c").Card.Column("x"); got.Role != "id" {
		t.Fatalf("c.x after fix: %+v", got)
	}
	if hasDiag(c.Diagnostics(), "c.schema.json", "") {
		t.Fatal("stale diagnostic after the fix")
	}
}

func TestCardsNeverWritten(t *testing.T) {
	root := t.TempDir()
	cattest.WriteFile(t, root, "a.csv", "x\n1\n")
	before := listFiles(t, root)
	c := cattest.NewCatalog(t, root)
	_ = catalog.StarterCard(cattest.Lookup(t, c, "a"))
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := listFiles(t, root); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Fatalf("catalog wrote into the root: %v -> %v", before, after)
	}
}

func listFiles(t *testing.T, root string) []string {
	var out []string
	err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		out = append(out, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStarterCardRoundTrip(t *testing.T) {
	root := t.TempDir()
	cattest.WriteFile(t, root, "w.csv", "day,temp,city\n2024-01-01,1.5,Yerevan\n")
	cattest.WriteRaw(t, root, "w.schema.json", `{"tags": {"src": "demo"}, "columns": [{"name": "temp", "role": "measure", "unit": "°C"}]}`)
	c := cattest.NewCatalog(t, root)
	cf := catalog.StarterCard(cattest.Lookup(t, c, "w"))
	if len(cf.Columns) != 3 || cf.Columns[0].Type != "date" || cf.Columns[1].Unit != "°C" || cf.Columns[2].Type != "string" || cf.Tags["src"] != "demo" {
		t.Fatalf("starter: %+v", cf)
	}
	if !catalog.IsCardFile("w.csv.schema.json") || !catalog.IsCardFile("_overall.json") || catalog.IsCardFile(".schema.json") || catalog.IsCardFile("w.csv") {
		t.Fatal("IsCardFile")
	}
}
