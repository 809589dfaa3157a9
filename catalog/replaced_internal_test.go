package catalog

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestReplacedDuringOpen: a data file renamed over (an atomic replacement)
// between the stat that described it and the open — during a rescan, and
// during a lookup that re-reads a changed file — is cataloged in its newest
// version; the dataset is never missing (it was dataset_not_found until the
// next scan, seen in make soak).
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
	c, err := New(context.Background(), Options{Root: root, Formats: []Format{NewCSVFormat()}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// replaceOnce renames body over the file the first time r.csv is
	// opened: after it was stat'ed, before the open.
	replaceOnce := func(body string) {
		t.Cleanup(func() { testHookBeforeOpen = nil })
		done := false
		testHookBeforeOpen = func(e *fileEntry) {
			if e.info.RelPath == "r.csv" && !done {
				done = true
				gen(body)
			}
		}
	}
	check := func(what string, size int64) {
		t.Helper()
		if _, err := c.Lookup("r"); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := c.snapshot().fileOf["r"].info.Size; got != size {
			t.Fatalf("%s: cataloged a version of %d bytes, want the newest (%d)", what, got, size)
		}
	}

	// Without following the replacement, the rescan loses the dataset:
	// the gap this test guards.
	defer func(n int) { maxReopen = n }(maxReopen)
	maxReopen = 0
	gen("22")
	replaceOnce("333")
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.snapshot().byID["r"]; ok {
		t.Fatal("the replacement during the open did not happen: the test checks nothing")
	}
	maxReopen = 8

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
