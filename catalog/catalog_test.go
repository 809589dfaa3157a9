package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/safeopen"
)

func TestNewInvalidRoot(t *testing.T) {
	dir := t.TempDir()
	file := cattest.WriteFile(t, dir, "f.csv", "a\n1\n")
	tests := []struct{ name, root string }{
		{"empty", ""},
		{"missing", filepath.Join(dir, "nope")},
		{"a file", file},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := catalog.New(context.Background(), catalog.Options{Formats: []catalog.Format{csv.NewFormat()}, Root: tc.root, Logger: cattest.Quiet})
			cattest.AssertCode(t, err, qerr.ErrInvalidArgument, qerr.CodeInvalidArgument)
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		if runtime.GOOS == "windows" || os.Geteuid() == 0 {
			t.Skip("permissions are not enforced here")
		}
		locked := filepath.Join(dir, "locked")
		if err := os.Mkdir(locked, 0o000); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o755)
		_, err := catalog.New(context.Background(), catalog.Options{Formats: []catalog.Format{csv.NewFormat()}, Root: locked, Logger: cattest.Quiet})
		cattest.AssertCode(t, err, qerr.ErrInvalidArgument, qerr.CodeInvalidArgument)
	})
}

func TestRootIsResolved(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	cattest.WriteFile(t, real, "a.csv", "a\n1\n")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	c := cattest.NewCatalog(t, link)
	want, _ := filepath.EvalSymlinks(real)
	if c.Root() != want {
		t.Errorf("Root() = %q, want %q", c.Root(), want)
	}
	if ds := cattest.Lookup(t, c, "a"); ds.AbsPath != filepath.Join(want, "a.csv") || ds.Path != "a.csv" {
		t.Errorf("paths %q %q", ds.AbsPath, ds.Path)
	}
}

func TestIDsAndCollisions(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{
		"weather/seattle.csv",
		"a.csv", "a.tsv", // collide on "a"
		"b.csv", "b.h5", // collide across formats
		"c.csv.gz",
		"d.TSV.GZ",
		"nested/deep/e.tsv",
		"dots.v2.csv",
		"Upper.CSV",
		"readme.txt", "data.json", "noext", // not claimed by any format
		".hidden.csv", ".git/config.csv", "sub/.cache/x.csv", // hidden
	} {
		if strings.HasSuffix(f, ".h5") {
			cattest.WriteRaw(t, root, f, "not really hdf5")
			continue
		}
		if strings.Contains(strings.ToLower(f), ".tsv") {
			cattest.WriteFile(t, root, f, "a\tb\n1\t2\n")
			continue
		}
		cattest.WriteFile(t, root, f, "a,b\n1,2\n")
	}
	before := listTree(t, root)
	c := cattest.NewCatalog(t, root, csv.NewFormat(), fakeFormat{ext: ".h5"})
	defer func() {
		if err := c.Refresh(context.Background()); err != nil {
			t.Error(err)
		}
		for _, ds := range c.Datasets() {
			if ds.Kind == catalog.KindCSV {
				cattest.ScanAll(t, ds, catalog.ScanOptions{})
			}
		}
		if after := listTree(t, root); !reflect.DeepEqual(before, after) {
			t.Errorf("the catalog changed the root:\n%v\n%v", before, after)
		}
	}()
	want := []string{"Upper", "a.csv", "a.tsv", "b.csv", "b.h5", "c", "d", "dots.v2", "nested/deep/e", "weather/seattle"}
	if got := cattest.IDs(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("ids\n got %v\nwant %v", got, want)
	}
	if d := c.Diagnostics(); len(d) != 0 {
		t.Errorf("diagnostics %v", d)
	}
	ds := cattest.Lookup(t, c, "nested/deep/e")
	if ds.Path != "nested/deep/e.tsv" || !filepath.IsAbs(ds.AbsPath) || ds.SizeBytes == 0 || ds.ModTime.IsZero() {
		t.Errorf("dataset %+v", ds)
	}
	if ds.Attributes["delimiter"] != "\t" {
		t.Errorf("attributes %v", ds.Attributes)
	}
}

// listTree lists every path under root with its size and mtime.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %d", p, fi.Size(), fi.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDuplicateFinalIDs(t *testing.T) {
	root := t.TempDir()
	// x.h5 holds tables "x/t" and "x/u"; x/t.csv also wants "x/t".
	cattest.WriteRaw(t, root, "x.h5", "h5")
	cattest.WriteFile(t, root, "x/t.csv", "a\n1\n")
	c := cattest.NewCatalog(t, root, csv.NewFormat(), fakeFormat{ext: ".h5", suffixes: []string{"t", "u"}})
	if got, want := cattest.IDs(c), []string{"x/t", "x/u"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}
	// x.h5 sorts before x/t.csv, so it wins.
	if ds := cattest.Lookup(t, c, "x/t"); ds.Path != "x.h5" {
		t.Errorf("x/t from %s", ds.Path)
	}
	d := c.Diagnostics()
	if len(d) != 1 || d[0].Path != "x/t.csv" || d[0].Level != "warning" {
		t.Errorf("diagnostics %v", d)
	}
}

func TestFormatFailures(t *testing.T) {
	root := t.TempDir()
	cattest.WriteRaw(t, root, "p.boom", "x")
	cattest.WriteRaw(t, root, "e.bad", "x")
	cattest.WriteRaw(t, root, "n.none", "x")
	cattest.WriteFile(t, root, "ok.csv", "a\n1\n")
	c := cattest.NewCatalog(t, root, csv.NewFormat(),
		fakeFormat{ext: ".boom", panic: true},
		fakeFormat{ext: ".bad", err: qerr.Unsupported(qerr.CodeUnsupportedType, "unsupported thing")},
		fakeFormat{ext: ".none", none: true})
	if got := cattest.IDs(c); !reflect.DeepEqual(got, []string{"ok"}) {
		t.Fatalf("ids %v", got)
	}
	got := map[string]string{}
	for _, d := range c.Diagnostics() {
		got[d.Path] = d.Reason
	}
	if len(got) != 3 || got["e.bad"] != "unsupported thing" || got["p.boom"] == "" || got["n.none"] == "" {
		t.Errorf("diagnostics %v", c.Diagnostics())
	}
}

func TestSymlinksInScan(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	outside := filepath.Join(dir, "outside")
	cattest.WriteFile(t, outside, "secret.csv", "a\n1\n")
	cattest.WriteFile(t, root, "data/real.csv", "a\n1\n2\n")
	links := map[string]string{
		"alias.csv":       filepath.Join(root, "data", "real.csv"), // file inside: OK
		"rel.csv":         "data/real.csv",                         // relative target inside: OK
		"escape.csv":      filepath.Join(outside, "secret.csv"),    // file outside
		"escapedir":       outside,                                 // dir outside
		"broken.csv":      filepath.Join(root, "missing.csv"),      // dangling
		"data/loop":       "..",                                    // cycle back to root
		"data/self":       ".",                                     // cycle to itself
		"linkeddir":       filepath.Join(root, "data"),             // alias of a scanned dir
		"data/hidden.csv": filepath.Join(root, ".secret", "h.csv"), // hidden target, visible name
		"pool":            ".pool",                                 // dir symlink to a hidden dir
	}
	cattest.WriteFile(t, root, ".secret/h.csv", "a\n1\n")
	cattest.WriteFile(t, root, ".pool/p.csv", "a\n1\n")
	for name, target := range links {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.Symlink(target, p); err != nil {
			t.Skip("symlinks unsupported:", err)
		}
	}
	done := make(chan *catalog.Catalog)
	go func() { done <- cattest.NewCatalog(t, root) }()
	var c *catalog.Catalog
	select {
	case c = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("scan did not terminate")
	}
	for _, d := range c.Diagnostics() {
		t.Logf("%s: %s: %s", d.Path, d.Level, d.Reason)
	}
	want := []string{"alias", "data/hidden", "data/real", "pool/p", "rel"}
	if got := cattest.IDs(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("ids %v, want %v (diagnostics %v)", got, want, c.Diagnostics())
	}
	realRoot, _ := filepath.EvalSymlinks(root)
	if ds := cattest.Lookup(t, c, "alias"); ds.AbsPath != filepath.Join(realRoot, "data", "real.csv") || ds.Path != "alias.csv" || ds.RowCount != 2 {
		t.Errorf("alias dataset %+v", ds)
	}
	diags := map[string]bool{}
	for _, d := range c.Diagnostics() {
		diags[d.Path] = true
		if strings.Contains(d.Reason, dir) {
			t.Errorf("diagnostic leaks an absolute path: %+v", d)
		}
	}
	for _, p := range []string{"escape.csv", "escapedir", "broken.csv", "data/loop", "data/self", "linkeddir"} {
		if !diags[p] {
			t.Errorf("no diagnostic for %s: %v", p, c.Diagnostics())
		}
	}
}

func TestResolvePath(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	cattest.WriteFile(t, root, "a/b.csv", "x\n1\n")
	cattest.WriteFile(t, dir, "outside/s.csv", "x\n1\n")
	symlinks := true
	for name, target := range map[string]string{
		"in":       filepath.Join(root, "a"),
		"out":      filepath.Join(dir, "outside"),
		"outfile":  filepath.Join(dir, "outside", "s.csv"),
		"dangling": filepath.Join(dir, "outside", "nothing"),
		"relout":   "../outside",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			symlinks = false
		}
	}
	c := cattest.NewCatalog(t, root)
	real := c.Root()
	tests := []struct {
		in      string
		rel     string // expected rel; "" means an error is expected
		symlink bool
	}{
		{in: "a/b.csv", rel: "a/b.csv"},
		{in: "./a/../a/b.csv", rel: "a/b.csv"},
		{in: "a\\b.csv", rel: "a\\b.csv"}, // a backslash is a name character on Unix
		{in: "", rel: "."},
		{in: ".", rel: "."},
		{in: "a/new/file.csv", rel: "a/new/file.csv"}, // need not exist
		{in: filepath.Join(real, "a", "b.csv"), rel: "a/b.csv"},
		{in: filepath.Join(root, "a", "b.csv"), rel: "a/b.csv"},
		{in: "../x"},
		{in: ".."},
		{in: "a/../../x"},
		{in: "../root/a/b.csv"},
		{in: filepath.Join(dir, "outside", "s.csv")},
		{in: "/etc/passwd"},
		{in: dir},
		{in: "in/b.csv", rel: "a/b.csv", symlink: true},
		{in: "out/s.csv", symlink: true},
		{in: "out", symlink: true},
		{in: "outfile", symlink: true},
		{in: "dangling", symlink: true},
		{in: "dangling/deeper", symlink: true},
		{in: "relout/s.csv", symlink: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if runtime.GOOS == "windows" && strings.Contains(tc.in, "\\") {
				t.Skip()
			}
			if tc.symlink && !symlinks {
				t.Skip("symlinks unsupported")
			}
			abs, rel, err := c.ResolvePath(tc.in)
			if tc.rel == "" {
				cattest.AssertCode(t, err, qerr.ErrPermission, qerr.CodePathOutsideRoot)
				return
			}
			if err != nil {
				t.Fatalf("ResolvePath(%q): %v", tc.in, err)
			}
			if rel != tc.rel {
				t.Errorf("rel %q, want %q", rel, tc.rel)
			}
			if want := filepath.Join(real, filepath.FromSlash(tc.rel)); abs != want {
				t.Errorf("abs %q, want %q", abs, want)
			}
		})
	}
}

func TestRefreshReusesUnchanged(t *testing.T) {
	root := t.TempDir()
	cattest.WriteFile(t, root, "keep.csv", "a\n1\n")
	p := cattest.WriteFile(t, root, "change.csv", "a\n1\n")
	gone := cattest.WriteFile(t, root, "gone.csv", "a\n1\n")
	cattest.WriteFile(t, root, "bad.csv", "a,b\n1\n")
	cf := &countingFormat{Format: csv.NewFormat()}
	c := cattest.NewCatalog(t, root, cf)
	if n := cf.opens.Load(); n != 4 {
		t.Fatalf("opens after New = %d", n)
	}
	keep, change := cattest.Lookup(t, c, "keep"), cattest.Lookup(t, c, "change")

	// Nothing changed: nothing is re-opened (not even the bad file).
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := cf.opens.Load(); n != 4 {
		t.Fatalf("opens after no-op Refresh = %d", n)
	}
	if cattest.Lookup(t, c, "keep") != keep || cattest.Lookup(t, c, "change") != change {
		t.Fatal("unchanged datasets were rebuilt")
	}

	cattest.WriteFile(t, root, "change.csv", "a,b\n1,x\n2,y\n3,z\n")
	touch(t, p, time.Second)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	cattest.WriteFile(t, root, "new/added.csv", "z\n1\n")
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := cf.opens.Load(); n != 6 { // change.csv and new/added.csv
		t.Fatalf("opens after Refresh = %d, want 6", n)
	}
	if got, want := cattest.IDs(c), []string{"change", "keep", "new/added"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}
	if cattest.Lookup(t, c, "keep") != keep {
		t.Error("unchanged dataset was rebuilt")
	}
	if ds := cattest.Lookup(t, c, "change"); ds == change || ds.RowCount != 3 || ds.Schema.NumFields() != 2 {
		t.Errorf("changed dataset not re-read: rows %d", ds.RowCount)
	}
	if d := c.Diagnostics(); len(d) != 1 || d[0].Path != "bad.csv" {
		t.Errorf("diagnostics %v", d)
	}

	// A collision appearing later renames the old dataset (re-opened).
	cattest.WriteFile(t, root, "keep.tsv", "a\n1\n")
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := cattest.IDs(c), []string{"change", "keep.csv", "keep.tsv", "new/added"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ids %v, want %v", got, want)
	}
}

func TestLookup(t *testing.T) {
	root := t.TempDir()
	p := cattest.WriteFile(t, root, "weather/seattle.csv", "a\n1\n")
	cattest.WriteFile(t, root, "weather/yerevan.csv", "a\n1\n")
	cf := &countingFormat{Format: csv.NewFormat()}
	c := cattest.NewCatalog(t, root, cf)

	_, err := c.Lookup("weather/seatle")
	cattest.AssertCode(t, err, qerr.ErrNotFound, qerr.CodeDatasetNotFound)
	var qe *qerr.Error
	errors.As(err, &qe)
	if s, _ := qe.Diagnostics["suggestions"].([]string); len(s) == 0 || s[0] != "weather/seattle" {
		t.Errorf("suggestions %v", qe.Diagnostics["suggestions"])
	}
	if !strings.Contains(qe.Hint, "get_catalog") {
		t.Errorf("hint %q", qe.Hint)
	}

	old := cattest.Lookup(t, c, "weather/seattle")
	if cattest.Lookup(t, c, "weather/seattle") != old || cf.opens.Load() != 2 {
		t.Fatal("unchanged file re-opened by Lookup")
	}
	// Changed on disk, no Refresh: Lookup re-opens just that file.
	cattest.WriteFile(t, root, "weather/seattle.csv", "a\n1\n2\n")
	touch(t, p, 2*time.Second)
	ds := cattest.Lookup(t, c, "weather/seattle")
	if ds == old || ds.RowCount != 2 || cf.opens.Load() != 3 {
		t.Fatalf("changed file not re-opened: rows %d opens %d", ds.RowCount, cf.opens.Load())
	}
	if got := c.Datasets(); got[0] != ds {
		t.Error("Datasets does not show the re-opened dataset")
	}
	// A following Refresh reuses the re-opened dataset.
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if cattest.Lookup(t, c, "weather/seattle") != ds || cf.opens.Load() != 3 {
		t.Error("Refresh re-opened a file Lookup had already re-read")
	}

	// Changed into something unreadable.
	cattest.WriteFile(t, root, "weather/seattle.csv", "a,b\n1\n")
	touch(t, p, 4*time.Second)
	_, err = c.Lookup("weather/seattle")
	cattest.AssertCode(t, err, qerr.ErrNotFound, qerr.CodeDatasetNotFound)
	if d := c.Diagnostics(); len(d) != 1 || d[0].Path != "weather/seattle.csv" {
		t.Errorf("diagnostics %v", d)
	}

	// Deleted.
	if err := os.Remove(filepath.Join(root, "weather", "yerevan.csv")); err != nil {
		t.Fatal(err)
	}
	_, err = c.Lookup("weather/yerevan")
	cattest.AssertCode(t, err, qerr.ErrNotFound, qerr.CodeDatasetNotFound)
	if got := cattest.IDs(c); len(got) != 0 {
		t.Errorf("ids %v", got)
	}
}

func TestManySmallFiles(t *testing.T) {
	root := t.TempDir()
	for i := range 1000 {
		cattest.WriteFile(t, root, fmt.Sprintf("d%02d/f%04d.csv", i%25, i), fmt.Sprintf("id,v,when\n%d,%d.5,2024-01-01\n", i, i))
	}
	c, err := catalog.New(context.Background(), catalog.Options{Formats: []catalog.Format{csv.NewFormat()}, Root: root, Logger: cattest.Quiet, Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	all := c.Datasets()
	if len(all) != 1000 {
		t.Fatalf("%d datasets", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].ID >= all[i].ID {
			t.Fatalf("not sorted: %s, %s", all[i-1].ID, all[i].ID)
		}
	}
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestScanContextCancelled(t *testing.T) {
	root := t.TempDir()
	for i := range 50 {
		cattest.WriteFile(t, root, fmt.Sprintf("f%d.csv", i), "a\n1\n")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := catalog.New(ctx, catalog.Options{Formats: []catalog.Format{csv.NewFormat()}, Root: root, Logger: cattest.Quiet})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("New(cancelled) = %v", err)
	}
	c := cattest.NewCatalog(t, root)
	if err := c.Refresh(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Refresh(cancelled) = %v", err)
	}
	if len(c.Datasets()) != 50 {
		t.Error("a cancelled Refresh changed the snapshot")
	}
}

func TestRefreshRootRemoved(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "r")
	cattest.WriteFile(t, root, "a.csv", "a\n1\n")
	c := cattest.NewCatalog(t, root)
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	cattest.AssertCode(t, c.Refresh(context.Background()), qerr.ErrInvalidArgument, qerr.CodeInvalidArgument)
	if len(c.Datasets()) != 1 {
		t.Error("snapshot dropped")
	}
}

func TestConcurrentUse(t *testing.T) {
	root := t.TempDir()
	for i := range 20 {
		cattest.WriteFile(t, root, fmt.Sprintf("f%02d.csv", i), "a,b\n1,2\n")
	}
	c := cattest.NewCatalog(t, root)
	// replace rewrites a file atomically, so readers see whole files only.
	replace := func(id string, i int) error {
		p := filepath.Join(root, id+".csv")
		tmp := filepath.Join(root, ".tmp-"+id)
		if err := os.WriteFile(tmp, []byte(strings.Repeat("a,b\n", 1)+strings.Repeat("1,2\n", i+1)), 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, p)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				id := fmt.Sprintf("f%02d", (i+w)%20)
				switch i % 5 {
				case 0:
					if w == 0 {
						if err := replace(id, i); err != nil {
							t.Error(err)
						}
					}
				case 1:
					if err := c.Refresh(context.Background()); err != nil {
						t.Error(err)
					}
				case 2:
					_ = c.Diagnostics()
					if _, _, err := c.ResolvePath(id + ".csv"); err != nil {
						t.Error(err)
					}
				default:
					ds, err := c.Lookup(id)
					if err != nil {
						t.Error(err)
						continue
					}
					// A file replaced between Lookup and Scan is refused
					// (dataset_not_found, "call again"), never read as a
					// mix of versions: that is an allowed outcome here.
					rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{})
					if err != nil {
						if !errors.Is(err, safeopen.ErrReplaced) {
							t.Error(err)
						}
						continue
					}
					for rr.Next() {
					}
					if err := rr.Err(); err != nil && !errors.Is(err, safeopen.ErrReplaced) {
						t.Error(err)
					}
					rr.Release()
					_ = c.Datasets()
				}
			}
		})
	}
	wg.Wait()
	if d := c.Diagnostics(); len(d) != 0 {
		t.Errorf("diagnostics %v", d)
	}
}

// TestInvalidUTF8Names: a file or directory whose name is not valid UTF-8
// is skipped with a diagnostic naming it (bad bytes as \xNN), instead of
// being listed under an id with U+FFFD that no lookup finds.
func TestInvalidUTF8Names(t *testing.T) {
	root := t.TempDir()
	cattest.WriteFile(t, root, "ok.csv", "a\n1\n")
	if err := os.WriteFile(filepath.Join(root, "bad\xff.csv"), []byte("a\n1\n"), 0o644); err != nil {
		t.Skip("file system refuses non-UTF-8 names:", err)
	}
	cattest.WriteFile(t, root, "dir\xfe/inner.csv", "a\n1\n")
	c := cattest.NewCatalog(t, root)
	if got := cattest.IDs(c); !reflect.DeepEqual(got, []string{"ok"}) {
		t.Fatalf("ids %v", got)
	}
	got := map[string]bool{}
	for _, d := range c.Diagnostics() {
		if !utf8.ValidString(d.Path) || !strings.Contains(d.Reason, "UTF-8") {
			t.Errorf("diagnostic %+v", d)
		}
		got[d.Path] = true
	}
	if !got[`bad\xff.csv`] || !got[`dir\xfe`] || len(got) != 2 {
		t.Fatalf("diagnostics %v", c.Diagnostics())
	}
}
