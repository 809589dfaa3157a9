package artifacts

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestHeldArtifactOrphaned: an artifact committed held (a result handle's
// spill file) is spared by stores opened over the directory, and by their
// sweeps, while its holder lives, and a released one for good; once the
// holder is gone without releasing it (its process died: the marker's lock
// went with its file descriptor), the next sweep and the next Open delete
// it with its marker and no longer count it. An artifact deleted, then
// released, leaves nothing behind.
func TestHeldArtifactOrphaned(t *testing.T) {
	if !locksSupported {
		t.Skip("no file locks on this system: held artifacts of a crashed process live until the TTL")
	}
	dir := t.TempDir()
	later := func() time.Time { return time.Now().Add(time.Minute) } // markers past OrphanTempAge
	s1 := open(t, Options{Dir: dir, Now: later})
	held := func(content string) (Artifact, *Hold) {
		t.Helper()
		w, err := s1.Create("parquet", "")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		if _, err := w.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
		a, h, err := w.CommitHeld()
		if err != nil {
			t.Fatal(err)
		}
		if !exists(h.path) || filepath.Base(h.path) != holdPrefix+a.ID {
			t.Fatalf("marker %s for %s", h.path, a.ID)
		}
		return a, h
	}
	a, h := held("held by a process that dies")
	kept, hk := held("handed out")
	hk.Release()
	if exists(hk.path) {
		t.Fatal("Release left the marker")
	}

	s2 := open(t, Options{Dir: dir, Now: later})
	s2.sweep()
	if l := s2.List(); len(l) != 2 || !exists(a.Path) {
		t.Fatalf("a store over the directory of a live holder: %+v", l)
	}

	_ = h.f.Close() // the holder dies: the lock is dropped, the marker stays
	s2.sweep()
	if exists(a.Path) || exists(h.path) {
		t.Fatalf("the orphaned artifact (%v) or its marker (%v) survived a sweep", exists(a.Path), exists(h.path))
	}
	if l := s2.List(); len(l) != 1 || l[0].ID != kept.ID || s2.used != kept.Size {
		t.Fatalf("after the sweep: %+v, %d bytes counted", l, s2.used)
	}

	b, hb := held("orphaned, found at start-up")
	_ = hb.f.Close()
	s3 := open(t, Options{Dir: dir, Now: later})
	if exists(b.Path) || exists(hb.path) {
		t.Fatal("the orphaned artifact or its marker survived Open")
	}
	if l := s3.List(); len(l) != 1 || l[0].ID != kept.ID || s3.used != kept.Size {
		t.Fatalf("after Open: %+v, %d bytes counted", l, s3.used)
	}

	c, hc := held("deleted unpublished")
	if err := s1.Delete(c.URI); err != nil {
		t.Fatal(err)
	}
	hc.Release()
	hc.Release() // idempotent
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != kept.ID+".parquet" {
		t.Fatalf("directory: %v, want only %s", ents, kept.ID)
	}
}

// TestHeldArtifactYoungMarker: a marker younger than OrphanTempAge is
// spared even when nobody holds it (the instant between its creation and
// its lock in another process).
func TestHeldArtifactYoungMarker(t *testing.T) {
	if !locksSupported {
		t.Skip("no file locks on this system")
	}
	dir := t.TempDir()
	s := open(t, Options{Dir: dir})
	w, err := s.Create("csv", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	a, h, err := w.CommitHeld()
	if err != nil {
		t.Fatal(err)
	}
	_ = h.f.Close()
	s.sweep()
	if time.Since(began) >= OrphanTempAge {
		t.Skip("the machine is too slow to check this within OrphanTempAge")
	}
	if !exists(a.Path) {
		t.Fatal("an artifact with a fresh marker was deleted")
	}
}
