//go:build unix

package catalog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
	"github.com/quarrydb/quarry/internal/qerr"
)

const secretCSV = "name,n\nSECRET,42\n"

// outsideDir holds a CSV the server user can read, outside the data root,
// with the same columns as the datasets (so following a link to it would
// parse and return SECRET).
func outsideDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"small.csv", "big.csv", "g.csv"} {
		cattest.WriteRaw(t, dir, name, secretCSV)
	}
	cattest.WriteFile(t, dir, "g.csv.gz", secretCSV)
	return dir
}

// bigCSV is over the 1 MiB above which plain CSV files are memory-mapped.
func bigCSV() string {
	return "name,n\n" + strings.Repeat("alice,1\n", 150_000)
}

// swaps replace root/rel by a way to reach target (outside the root).
var swaps = []struct {
	name string
	do   func(t *testing.T, root, rel, target string)
}{
	{"replaced by a symlink", func(t *testing.T, root, rel, target string) {
		p := filepath.Join(root, rel)
		must(t, os.Remove(p))
		must(t, os.Symlink(target, p))
	}},
	{"symlink renamed over it", func(t *testing.T, root, rel, target string) {
		tmp := filepath.Join(root, ".swap")
		must(t, os.Symlink(target, tmp))
		must(t, os.Rename(tmp, filepath.Join(root, rel)))
	}},
	{"folder above replaced by a symlink", func(t *testing.T, root, rel, target string) {
		dir := filepath.Join(root, filepath.Dir(rel))
		must(t, os.Rename(dir, dir+".old"))
		must(t, os.Symlink(filepath.Dir(target), dir))
	}},
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// readAll scans ds fully and returns its cells as text (or the error).
func readAll(ds *catalog.Dataset) (string, error) {
	rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{})
	if err != nil {
		return "", err
	}
	defer rr.Release()
	var b strings.Builder
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := range int(rec.NumCols()) {
			fmt.Fprint(&b, rec.Column(i))
		}
	}
	return b.String(), rr.Err()
}

// TestSwappedFileRefused: a data file replaced, after the scan, by a
// symlink to a file outside the root (or reached through a folder replaced
// by one) is never read: not by the Source the catalog handed out before,
// not by Lookup (which reports path_outside_root and lists the file in the
// diagnostics). Plain CSV on the read path (small) and the mmap path
// (>= 1 MiB), and gzip.
func TestSwappedFileRefused(t *testing.T) {
	files := []struct{ rel, content string }{
		{"d/small.csv", "name,n\nalice,1\nbob,2\n"},
		{"d/big.csv", bigCSV()},
		{"d/g.csv.gz", "name,n\nalice,1\n"},
	}
	for _, f := range files {
		for _, sw := range swaps {
			t.Run(f.rel+"/"+sw.name, func(t *testing.T) {
				root, out := t.TempDir(), outsideDir(t)
				cattest.WriteFile(t, root, f.rel, f.content)
				c := cattest.NewCatalog(t, root)
				id := strings.TrimSuffix(strings.TrimSuffix(f.rel, ".gz"), ".csv")
				ds := cattest.Lookup(t, c, id)
				if got, err := readAll(ds); err != nil || !strings.Contains(got, "alice") {
					t.Fatalf("before the swap: %q, %v", got, err)
				}

				sw.do(t, root, f.rel, filepath.Join(out, filepath.Base(f.rel)))

				got, err := readAll(ds)
				if strings.Contains(got, "SECRET") {
					t.Fatalf("the source read the outside file: %q", got)
				}
				cattest.AssertCode(t, err, qerr.ErrPermission, qerr.CodePathOutsideRoot)

				_, err = c.Lookup(id)
				cattest.AssertCode(t, err, qerr.ErrPermission, qerr.CodePathOutsideRoot)
				if strings.Contains(err.Error(), out) {
					t.Errorf("the error names the outside path: %v", err)
				}
				found := false
				for _, d := range c.Diagnostics() {
					found = found || d.Path == f.rel && d.Level == "error"
				}
				if !found {
					t.Errorf("no diagnostic for %s: %v", f.rel, c.Diagnostics())
				}
				if _, err := c.Lookup(id); err == nil {
					t.Fatal("the refused dataset came back")
				}

				// A rescan skips the link (it points outside) and never reads it.
				must(t, c.Refresh(context.Background()))
				for _, d := range c.Datasets() {
					if got, _ := readAll(d); strings.Contains(got, "SECRET") {
						t.Fatalf("after a rescan %s read the outside file", d.ID)
					}
				}
			})
		}
	}
}

// TestInRootSymlinks: symlinks that stay inside the root keep working, and
// one re-pointed after the scan is followed to its new target only while
// that stays inside the root.
func TestInRootSymlinks(t *testing.T) {
	root, out := t.TempDir(), outsideDir(t)
	cattest.WriteFile(t, root, "data/real.csv", "name,n\nalice,1\n")
	cattest.WriteFile(t, root, "data/other.csv", "name,n\ncarol,3\n")
	must(t, os.Symlink("data/real.csv", filepath.Join(root, "link.csv")))
	cattest.WriteFile(t, root, ".store/real2.csv", "name,n\nalice,1\n") // hidden: reached only through dirlink
	must(t, os.Symlink(".store", filepath.Join(root, "dirlink")))
	c := cattest.NewCatalog(t, root)
	for _, id := range []string{"link", "dirlink/real2", "data/real"} {
		if got, err := readAll(cattest.Lookup(t, c, id)); err != nil || !strings.Contains(got, "alice") {
			t.Fatalf("%s: %q, %v", id, got, err)
		}
	}

	// Re-pointed inside the root: the new target is read.
	relink := func(target string) {
		tmp := filepath.Join(root, ".relink")
		must(t, os.Symlink(target, tmp))
		must(t, os.Rename(tmp, filepath.Join(root, "link.csv")))
	}
	relink("data/other.csv")
	if got, err := readAll(cattest.Lookup(t, c, "link")); err != nil || !strings.Contains(got, "carol") {
		t.Fatalf("re-pointed inside: %q, %v", got, err)
	}

	// Re-pointed outside: refused.
	relink(filepath.Join(out, "small.csv"))
	_, err := c.Lookup("link")
	cattest.AssertCode(t, err, qerr.ErrPermission, qerr.CodePathOutsideRoot)
	if got, err := readAll(cattest.Lookup(t, c, "data/real")); err != nil || !strings.Contains(got, "alice") {
		t.Fatalf("the other datasets still work: %q, %v", got, err)
	}
}
