//go:build unix

package catalog_test

import (
	"path/filepath"
	"reflect"
	"syscall"
	"testing"

	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// A FIFO named like a CSV file must be skipped, not opened (opening a FIFO
// blocks until a writer appears).
func TestFIFOIsSkipped(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.csv"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	cattest.WriteFile(t, root, "ok.csv", "a\n1\n")
	c := cattest.NewCatalog(t, root)
	if got := cattest.IDs(c); !reflect.DeepEqual(got, []string{"ok"}) {
		t.Fatalf("ids %v", got)
	}
	if d := c.Diagnostics(); len(d) != 1 || d[0].Path != "pipe.csv" {
		t.Errorf("diagnostics %v", d)
	}
}
