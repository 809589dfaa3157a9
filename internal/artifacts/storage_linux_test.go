package artifacts

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
)

// tmpfs mounts a tmpfs of size bytes on a new directory (unmounted at the
// end of the test) and returns it. It skips the test when it cannot mount
// (not root, no CAP_SYS_ADMIN): root ignores permission bits, so a real
// full or read-only file system is the only way to create the condition.
func tmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size)); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): needs root", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// checkStorageErr asserts err is resource_exhausted for reason.
func checkStorageErr(t *testing.T, err error, reason string) {
	t.Helper()
	e := qerr.As(err)
	if err == nil || e.Code != qerr.CodeResourceExhausted || e.Diagnostics["reason"] != reason || e.Hint == "" {
		t.Fatalf("got %v (%+v), want resource_exhausted, reason %s", err, e, reason)
	}
}

// TestFullDirectory: a full artifact directory fails writes (and the
// writability probe) with resource_exhausted, leaving no file behind.
func TestFullDirectory(t *testing.T) {
	dir := tmpfs(t, 256<<10)
	s := open(t, Options{Dir: dir})
	if err := s.Writable(); err != nil {
		t.Fatalf("empty store: %v", err)
	}
	w, err := s.Create("csv", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Write(make([]byte, 512<<10))
	checkStorageErr(t, err, "no_space")
	w.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
	// Fill it from outside the store: the probe sees it.
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 512<<10), 0o644); err == nil {
		t.Fatal("the tmpfs is not full")
	}
	checkStorageErr(t, s.Writable(), "no_space")
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := s.Writable(); err != nil {
		t.Fatalf("after freeing space: %v", err)
	}
	commit(t, s, "csv", []byte("a\n1\n"))
}

// TestReadOnlyDirectory: a read-only artifact directory fails Create and
// the probe with resource_exhausted (not internal).
func TestReadOnlyDirectory(t *testing.T) {
	dir := tmpfs(t, 1<<20)
	s := open(t, Options{Dir: dir})
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
	_, err := s.Create("parquet", "")
	checkStorageErr(t, err, "not_writable")
	checkStorageErr(t, s.Writable(), "not_writable")
}
