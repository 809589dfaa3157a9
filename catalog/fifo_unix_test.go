//go:build unix

package catalog_test

import (
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
)

// A FIFO named like a CSV file must be skipped, not opened (opening a FIFO
// blocks until a writer appears).
func TestFIFOIsSkipped(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.csv"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	writeFile(t, root, "ok.csv", "a\n1\n")
	c := newCatalog(t, root)
	if got := ids(c); !reflect.DeepEqual(got, []string{"ok"}) {
		t.Fatalf("ids %v", got)
	}
	if d := c.Diagnostics(); len(d) != 1 || d[0].Path != "pipe.csv" {
		t.Errorf("diagnostics %v", d)
	}
}
