package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// TestReplacedDuringOpen: a data file renamed over (an atomic replacement)
// between the stat that described it and the open — during a rescan, and
// during a lookup that re-reads a changed file — is cataloged in its newest
// version; the dataset is never missing (it was dataset_not_found until the
// next scan, seen in make soak). With the re-open turned off the rescan
// loses it: the gap this test guards.
func TestReplacedDuringOpen(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "r.csv")
	gen := func(body string) {
		t.Helper()
		if err := os.WriteFile(p+".new", []byte("x\n"+body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p+".new", p); err != nil {
			t.Fatal(err)
		}
	}
	gen("1")
	c, err := catalog.New(context.Background(), catalog.Options{Root: root, Formats: []catalog.Format{csv.NewFormat()}, Logger: cattest.Quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// replaceOnce renames body over the file the first time r.csv is
	// opened: after it was stat'ed, before the open.
	replaceOnce := func(body string) {
		done := false
		t.Cleanup(catalog.SetBeforeOpen(func(rel string) {
			if rel == "r.csv" && !done {
				done = true
				gen(body)
			}
		}))
	}
	listed := func() bool {
		return slices.ContainsFunc(c.Datasets(), func(d *catalog.Dataset) bool { return d.ID == "r" })
	}
	check := func(what string, size int64) {
		t.Helper()
		if !listed() {
			t.Fatalf("%s: the dataset is not listed", what)
		}
		d, err := c.Lookup("r")
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if d.SizeBytes != size {
			t.Fatalf("%s: cataloged a version of %d bytes, want the newest (%d)", what, d.SizeBytes, size)
		}
	}

	restore := catalog.SetMaxReopen(0)
	gen("22")
	replaceOnce("333")
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if listed() {
		t.Fatal("the replacement during the open did not happen: the test checks nothing")
	}
	restore()

	gen("22")
	replaceOnce("333")
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	check("rescan", int64(len("x\n333\n")))

	gen("4444")
	replaceOnce("55555")
	check("lookup of a changed file", int64(len("x\n55555\n")))
}
