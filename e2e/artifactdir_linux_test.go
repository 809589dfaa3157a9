package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory (unmounted at
// the end of the test); it skips the test when it cannot (not root).
func mountTmpfs(t *testing.T, size int, flags uintptr) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", flags, "size="+strconv.Itoa(size)); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): needs root", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestArtifactDirFullOrReadOnly: with a read-only or full artifact
// directory, file results fail with resource_exhausted (not internal,
// nothing left half-written), /readyz reports not ready, and inline
// results keep working.
func TestArtifactDirFullOrReadOnly(t *testing.T) {
	arts := mountTmpfs(t, 2<<20, 0)
	p := launchHTTP(t, nil, "--data", flagData(t, 20_000), "--artifact-dir", arts)
	c := connectHTTP(t, p.base, nil, false)
	ready := func() int {
		t.Helper()
		code, err := httpGet(p.base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	fileQuery := map[string]any{"dataset": "big", "output_format": "csv"}
	inline := map[string]any{"dataset": "big", "limit": 3}
	if code := ready(); code != 200 {
		t.Fatalf("/readyz %d on a writable directory", code)
	}
	f := callPage(t, c, "query_data", fileQuery)
	if f.Method != "file" {
		t.Fatalf("want a file: %s", f.Method)
	}
	if err := os.Remove(filepath.Join(arts, filepath.Base(f.ResourceURI))); err != nil {
		t.Fatal(err)
	}
	files := func() []string {
		ents, _ := os.ReadDir(arts)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}

	for _, tc := range []struct {
		name    string
		make    func()
		undo    func()
		message string
	}{
		{"read-only", func() {
			if err := syscall.Mount("tmpfs", arts, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				t.Skipf("remount read-only: %v", err)
			}
		}, func() {
			if err := syscall.Mount("tmpfs", arts, "tmpfs", syscall.MS_REMOUNT, ""); err != nil {
				t.Fatal(err)
			}
		}, "not writable"},
		{"full", func() {
			if err := os.WriteFile(filepath.Join(arts, "filler"), make([]byte, 4<<20), 0o644); err == nil {
				t.Fatal("the tmpfs did not fill up")
			}
		}, func() {
			if err := os.Remove(filepath.Join(arts, "filler")); err != nil {
				t.Fatal(err)
			}
		}, "full"},
	} {
		tc.make()
		if code := ready(); code != 503 {
			t.Fatalf("%s: /readyz %d, want 503", tc.name, code)
		}
		e := callErr(t, c, "query_data", fileQuery)
		if e.Code != "resource_exhausted" || e.Hint == "" || !strings.Contains(e.Error, tc.message) {
			t.Fatalf("%s: file result: %+v", tc.name, e)
		}
		if got := files(); len(got) > 1 || (len(got) == 1 && got[0] != "filler") {
			t.Fatalf("%s: left behind %v", tc.name, got)
		}
		var q queryResult
		call(t, c, "query_data", inline, &q)
		if q.RowCount != 3 {
			t.Fatalf("%s: inline result %+v", tc.name, q)
		}
		tc.undo()
		if code := ready(); code != 200 {
			t.Fatalf("%s undone: /readyz %d", tc.name, code)
		}
	}
}
