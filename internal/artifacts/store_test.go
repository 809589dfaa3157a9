package artifacts

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/testutil/fakeclock"
)

func newClock() *fakeclock.Clock { return fakeclock.New(time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)) }

func open(t *testing.T, o Options) *Store {
	t.Helper()
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func commit(t *testing.T, s *Store, ext string, content []byte) Artifact {
	t.Helper()
	w, err := s.Create(ext, "")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if _, err := w.Write(content); err != nil {
		t.Fatal(err)
	}
	a, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func isGone(err error) bool {
	return errors.Is(err, qerr.ErrExpired) && qerr.Code(err) == qerr.CodeResourceNotFound
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func TestRoundTrip(t *testing.T) {
	c := newClock()
	dir := filepath.Join(t.TempDir(), "a", "b")
	s := open(t, Options{Dir: dir, Now: c.Now})
	if fi, err := os.Stat(s.Dir()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode: %v %v", fi, err)
	}
	for _, ext := range []string{"parquet", "csv", "arrow", "json"} {
		t.Run(ext, func(t *testing.T) {
			content := []byte("hello " + ext)
			a := commit(t, s, ext, content)
			if !validID(a.ID) || a.Ext != ext || a.URI != URIPrefix+a.ID+"."+ext ||
				a.Path != filepath.Join(s.Dir(), a.ID+"."+ext) || a.MIME != MIMEFor(ext) ||
				a.Size != int64(len(content)) || !a.Created.Equal(c.Now()) {
				t.Fatalf("bad artifact %+v", a)
			}
			got, err := s.Get(a.URI, "")
			if err != nil || got != a {
				t.Fatalf("Get: %+v %v", got, err)
			}
			b, got, err := s.ReadAll(a.URI, "", 1<<20)
			if err != nil || got != a || !bytes.Equal(b, content) {
				t.Fatalf("ReadAll: %q %+v %v", b, got, err)
			}
			if fi, err := os.Stat(a.Path); err != nil || fi.Mode().Perm()&0o077 != 0 {
				t.Fatalf("file mode: %v %v", fi, err)
			}
		})
	}
	if n := len(s.List()); n != 4 {
		t.Fatalf("List = %d", n)
	}
	// Wrong extension for a real id is just unknown.
	a := s.List()[0]
	other := "json"
	if a.Ext == "json" {
		other = "csv"
	}
	if _, err := s.Get(URIPrefix+a.ID+"."+other, ""); !isGone(err) {
		t.Fatalf("wrong ext: %v", err)
	}
}

func TestMIMEFor(t *testing.T) {
	for ext, want := range map[string]string{
		"parquet": "application/vnd.apache.parquet",
		"csv":     "text/csv",
		"arrow":   "application/vnd.apache.arrow.file",
		"json":    "application/json",
		"exe":     "application/octet-stream",
		"":        "application/octet-stream",
	} {
		if got := MIMEFor(ext); got != want {
			t.Errorf("MIMEFor(%q) = %q, want %q", ext, got, want)
		}
	}
}

func TestCreateUnsupported(t *testing.T) {
	s := open(t, Options{Dir: t.TempDir()})
	for _, ext := range []string{"", "txt", "CSV", ".csv", "csv/../x", "parquet.gz"} {
		w, err := s.Create(ext, "")
		if w != nil || !errors.Is(err, qerr.ErrUnsupported) || qerr.Code(err) != qerr.CodeUnsupportedFormat {
			t.Errorf("Create(%q) = %v, %v", ext, w, err)
		}
	}
	if ents, _ := os.ReadDir(s.Dir()); len(ents) != 0 {
		t.Fatalf("files left: %v", ents)
	}
}

func TestWriterLifecycle(t *testing.T) {
	s := open(t, Options{Dir: t.TempDir()})
	w, _ := s.Create("csv", "")
	w.Write([]byte("x"))
	w.Abort()
	w.Abort()
	if ents, _ := os.ReadDir(s.Dir()); len(ents) != 0 {
		t.Fatalf("Abort left %v", ents)
	}
	if _, err := w.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}
	w, _ = s.Create("csv", "")
	a, err := w.Commit() // empty artifact is fine
	if err != nil || a.Size != 0 {
		t.Fatal(a, err)
	}
	w.Abort() // no-op after Commit
	if !exists(a.Path) {
		t.Fatal("Abort after Commit removed the artifact")
	}
	if _, err := w.Commit(); err == nil {
		t.Fatal("second Commit succeeded")
	}
	if _, err := w.Write([]byte("y")); err == nil {
		t.Fatal("Write after Commit succeeded")
	}
}

// TestAtomicity: a reader listing the directory while writers write never
// sees a non-temp file that is not complete.
func TestAtomicity(t *testing.T) {
	s := open(t, Options{Dir: t.TempDir()})
	const size, chunk = 256 << 10, 4 << 10
	want := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	stop := make(chan struct{})
	var readerErr error
	var checked int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ents, err := os.ReadDir(s.Dir())
			if err != nil {
				readerErr = err
				return
			}
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), tempPrefix) {
					continue
				}
				b, err := os.ReadFile(filepath.Join(s.Dir(), e.Name()))
				if err != nil {
					readerErr = err
					return
				}
				if !bytes.Equal(b, want) {
					readerErr = fmt.Errorf("%s: saw %d of %d bytes", e.Name(), len(b), len(want))
					return
				}
				checked++
			}
		}
	}()
	var ww sync.WaitGroup
	for g := 0; g < 4; g++ {
		ww.Add(1)
		go func() {
			defer ww.Done()
			for i := 0; i < 5; i++ {
				w, err := s.Create("arrow", "")
				if err != nil {
					t.Error(err)
					return
				}
				for off := 0; off < len(want); off += chunk {
					w.Write(want[off : off+chunk])
				}
				if _, err := w.Commit(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	ww.Wait()
	close(stop)
	wg.Wait()
	if readerErr != nil {
		t.Fatal(readerErr)
	}
	if len(s.List()) != 20 {
		t.Fatalf("List = %d", len(s.List()))
	}
	t.Logf("reader checked %d files", checked)
}

func TestCrashRecoveryAndRestart(t *testing.T) {
	c := newClock()
	dir := t.TempDir()
	s := open(t, Options{Dir: dir, Now: c.Now, TTL: time.Hour})
	old := commit(t, s, "csv", []byte("old"))
	c.Advance(40 * time.Minute)
	young := commit(t, s, "json", []byte("young"))
	inflight, _ := s.Create("csv", "")
	inflight.Write([]byte("partial"))
	s.Close()

	// Simulate a crash: the in-flight writer dies (its descriptor, and so
	// its lock, goes away), temp files are left behind (one stale, one
	// recent but unlocked, one held by a live writer of another process),
	// and foreign files.
	inflight.f.Close()
	stale := filepath.Join(dir, ".tmp-crashed")
	fresh := filepath.Join(dir, ".tmp-other-process")
	live := filepath.Join(dir, ".tmp-live-writer")
	for _, p := range []string{stale, fresh, live, filepath.Join(dir, "README"), filepath.Join(dir, "a_x.csv")} {
		os.WriteFile(p, []byte("junk"), 0o600)
	}
	lf, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := lockTemp(lf); err != nil {
		t.Fatal(err)
	}
	c.Advance(30 * time.Minute) // old is 70m old: expired; young 30m
	os.Chtimes(stale, c.Now().Add(-StaleTempAge), c.Now().Add(-StaleTempAge))
	os.Chtimes(fresh, c.Now().Add(-StaleTempAge+time.Second), c.Now().Add(-StaleTempAge+time.Second))
	os.Chtimes(live, c.Now().Add(-24*time.Hour), c.Now().Add(-24*time.Hour))
	os.Chtimes(inflight.f.Name(), c.Now().Add(-time.Hour), c.Now().Add(-time.Hour))
	s2 := open(t, Options{Dir: dir, Now: c.Now, TTL: time.Hour})
	if !exists(live) {
		t.Fatal("removed the temp file of a live (locked) writer")
	}
	if locksSupported && exists(fresh) {
		t.Fatal("unlocked temp file of a dead writer not removed")
	}
	if !locksSupported && !exists(fresh) {
		t.Fatal("recent temp file removed without locks")
	}
	if exists(stale) || exists(inflight.f.Name()) {
		t.Fatal("stale temp files not removed")
	}
	if !exists(filepath.Join(dir, "README")) || !exists(filepath.Join(dir, "a_x.csv")) {
		t.Fatal("removed a file that is not a stale temp or an artifact")
	}
	if exists(old.Path) {
		t.Fatal("expired artifact not removed at Open")
	}
	if _, err := s2.Get(old.URI, ""); !isGone(err) {
		t.Fatalf("expired artifact served: %v", err)
	}
	b, a, err := s2.ReadAll(young.URI, "", -1)
	if err != nil || string(b) != "young" || a.Size != young.Size || !a.Created.Equal(young.Created) {
		t.Fatalf("restart lost artifact: %q %+v %v", b, a, err)
	}
	if l := s2.List(); len(l) != 1 || l[0].ID != young.ID {
		t.Fatalf("List = %+v", l)
	}
	// The adopted artifact counts against the quota and expires on time.
	if s2.used != young.Size {
		t.Fatalf("used = %d", s2.used)
	}
}

func TestTTLSweep(t *testing.T) {
	c := newClock()
	s := open(t, Options{Dir: t.TempDir(), Now: c.Now, TTL: time.Hour, SweepInterval: 2 * time.Millisecond})
	a := commit(t, s, "csv", []byte("a"))
	c.Advance(30 * time.Minute)
	b := commit(t, s, "csv", []byte("b"))
	w, _ := s.Create("csv", "") // in-flight writer's temp must survive sweeps
	w.Write([]byte("c"))
	os.Chtimes(w.f.Name(), c.Now().Add(-24*time.Hour), c.Now().Add(-24*time.Hour))
	c.Advance(30 * time.Minute) // a exactly TTL old
	deadline := time.Now().Add(5 * time.Second)
	for exists(a.Path) {
		if time.Now().After(deadline) {
			t.Fatal("sweeper did not remove the expired artifact")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if _, err := s.Get(a.URI, ""); !isGone(err) {
		t.Fatal(err)
	}
	if _, err := s.Get(b.URI, ""); err != nil || !exists(b.Path) {
		t.Fatalf("young artifact swept: %v", err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatalf("in-flight writer's temp swept: %v", err)
	}
	if l := s.List(); len(l) != 2 || l[0].ID != b.ID {
		t.Fatalf("List = %+v", l)
	}
}

func TestExpiredBeforeSweep(t *testing.T) {
	c := newClock()
	s := open(t, Options{Dir: t.TempDir(), Now: c.Now, TTL: time.Minute, SweepInterval: time.Hour})
	a := commit(t, s, "json", []byte("{}"))
	c.Advance(time.Minute - 1)
	if _, err := s.Get(a.URI, ""); err != nil {
		t.Fatal(err)
	}
	c.Advance(1)
	if len(s.List()) != 0 {
		t.Fatal("List shows an expired artifact")
	}
	if _, _, err := s.ReadAll(a.URI, "", -1); !isGone(err) {
		t.Fatalf("expired artifact served: %v", err)
	}
	if exists(a.Path) {
		t.Fatal("expired artifact not deleted on access")
	}
	var qe *qerr.Error
	_, err := s.Get(a.URI, "")
	if !errors.As(err, &qe) || !strings.Contains(qe.Hint, "re-run the query") {
		t.Fatalf("hint: %v", err)
	}
}

func TestDeletedBehindOurBack(t *testing.T) {
	s := open(t, Options{Dir: t.TempDir()})
	a := commit(t, s, "csv", []byte("x"))
	os.Remove(a.Path)
	if _, err := s.Get(a.URI, ""); !isGone(err) {
		t.Fatal(err)
	}
	if s.used != 0 {
		t.Fatalf("used = %d", s.used)
	}
}

func TestQuota(t *testing.T) {
	tests := []struct {
		name    string
		quota   int64
		sizes   []int
		touch   []int // Get these before the last commit: must not matter (oldest = created first)
		evicted []int
	}{
		{"fits", 100, []int{40, 40, 20}, nil, nil},
		{"evict oldest", 100, []int{40, 40, 40}, nil, []int{0}},
		{"evict two", 100, []int{40, 40, 10, 90}, nil, []int{0, 1}},
		{"evict all", 100, []int{40, 40, 20, 95}, nil, []int{0, 1, 2}},
		{"oldest by creation not access", 100, []int{40, 40, 40}, []int{0}, []int{0}},
		{"exactly the quota", 100, []int{30, 100}, nil, []int{0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			s := open(t, Options{Dir: t.TempDir(), Quota: tc.quota, Now: c.Now})
			var arts []Artifact
			for i, n := range tc.sizes {
				if i == len(tc.sizes)-1 {
					for _, j := range tc.touch {
						s.Get(arts[j].URI, "")
					}
				}
				arts = append(arts, commit(t, s, "csv", bytes.Repeat([]byte("x"), n)))
				c.Advance(time.Second)
			}
			var got []int
			var used int64
			for i, a := range arts {
				_, err := s.Get(a.URI, "")
				if err != nil {
					if !isGone(err) || exists(a.Path) {
						t.Fatalf("%d: %v", i, err)
					}
					got = append(got, i)
				} else {
					used += a.Size
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.evicted) {
				t.Fatalf("evicted %v, want %v", got, tc.evicted)
			}
			if s.used != used || used > tc.quota {
				t.Fatalf("used = %d, on disk %d, quota %d", s.used, used, tc.quota)
			}
		})
	}
}

func TestOversizeCommit(t *testing.T) {
	s := open(t, Options{Dir: t.TempDir(), Quota: 100})
	keep := commit(t, s, "csv", make([]byte, 60))
	w, _ := s.Create("parquet", "")
	w.Write(make([]byte, 101))
	_, err := w.Commit()
	if !errors.Is(err, qerr.ErrLimitExceeded) || qerr.Code(err) != qerr.CodeResourceExhausted {
		t.Fatalf("err = %v", err)
	}
	if qerr.As(err).Hint == "" {
		t.Fatal("no hint")
	}
	if ents, _ := os.ReadDir(s.Dir()); len(ents) != 1 {
		t.Fatalf("dir = %v, want only the kept artifact", ents)
	}
	if _, err := s.Get(keep.URI, ""); err != nil {
		t.Fatalf("oversize commit evicted others: %v", err)
	}
	w.Abort()
}

func TestReadAllLimit(t *testing.T) {
	s := open(t, Options{Dir: t.TempDir()})
	a := commit(t, s, "json", []byte("0123456789"))
	tests := []struct {
		limit int64
		ok    bool
	}{{10, true}, {11, true}, {-1, true}, {9, false}, {0, false}}
	for _, tc := range tests {
		b, _, err := s.ReadAll(a.URI, "", tc.limit)
		if tc.ok {
			if err != nil || string(b) != "0123456789" {
				t.Errorf("limit %d: %q %v", tc.limit, b, err)
			}
			continue
		}
		if !errors.Is(err, qerr.ErrLimitExceeded) || qerr.Code(err) != qerr.CodeOversizeResult {
			t.Errorf("limit %d: %v", tc.limit, err)
			continue
		}
		if h := qerr.As(err).Hint; h != "narrow the query, or use file_path when the server exposes file paths" {
			t.Errorf("hint = %q", h)
		}
	}
	if _, _, err := s.ReadAll("quarry://artifacts/../x", "", 10); !errors.Is(err, qerr.ErrInvalidArgument) {
		t.Fatal(err)
	}
}

func TestDataRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "data")
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.Symlink(root, filepath.Join(base, "rootlink"))
	os.Symlink(filepath.Join(root, "sub"), filepath.Join(base, "sublink"))
	os.MkdirAll(filepath.Join(base, "real"), 0o755)
	os.Symlink(filepath.Join(base, "real"), filepath.Join(base, "realroot"))
	tests := []struct {
		name, dir, root string
		refuse          bool
	}{
		{"inside", filepath.Join(root, "artifacts"), root, true},
		{"is root", root, root, true},
		{"nested not existing", filepath.Join(root, "x", "y", "z"), root, true},
		{"via symlink to root", filepath.Join(base, "rootlink", "artifacts"), root, true},
		{"via symlink to subdir", filepath.Join(base, "sublink"), root, true},
		{"dotdot after symlink", filepath.Join(base, "sublink") + "/../escaped", root, true},
		{"dotdot in missing tail", filepath.Join(root, "sub") + "/missing/../../x", root, true},
		{"dotdot out of root", filepath.Join(root, "sub") + "/../../out2", root, false},
		{"dotdot after symlink out", filepath.Join(base, "sublink") + "/../../out3", root, false},
		{"root is a symlink", filepath.Join(base, "real", "artifacts"), filepath.Join(base, "realroot"), true},
		{"relative root", filepath.Join(root, "artifacts"), "rel", false},
		{"sibling with prefix name", filepath.Join(base, "data2"), root, false},
		{"parent of root", base, root, false},
		{"outside", filepath.Join(base, "out"), root, false},
		{"no root", filepath.Join(root, "ok"), "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := listTree(t, root)
			s, err := Open(Options{Dir: tc.dir, DataRoot: tc.root})
			if !tc.refuse {
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
				return
			}
			if err == nil {
				s.Close()
				t.Fatalf("opened %s inside the data root", s.Dir())
			}
			if !errors.Is(err, qerr.ErrPermission) || qerr.Code(err) != qerr.CodeInvalidArgument {
				t.Fatalf("err = %v", err)
			}
			if after := listTree(t, root); after != before {
				t.Fatalf("wrote into the data root:\n%s\nvs\n%s", before, after)
			}
		})
	}
}

func listTree(t *testing.T, dir string) string {
	var sb strings.Builder
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error {
		sb.WriteString(p + "\n")
		return nil
	})
	return sb.String()
}

func TestDefaultDir(t *testing.T) {
	cache, tmp := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	t.Setenv("TMPDIR", tmp)
	ucd, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache dir:", err)
	}
	s := open(t, Options{})
	want, _ := filepath.EvalSymlinks(filepath.Join(ucd, "quarry", "artifacts"))
	if s.Dir() != want {
		t.Fatalf("Dir = %q, want %q", s.Dir(), want)
	}
	// The cache dir is inside the data root: fall back to the temp dir.
	s2 := open(t, Options{DataRoot: cache})
	want, _ = filepath.EvalSymlinks(filepath.Join(tmp, "quarry", "artifacts"))
	if s2.Dir() != want {
		t.Fatalf("Dir = %q, want %q", s2.Dir(), want)
	}
	// Both inside: refused.
	if _, err := Open(Options{DataRoot: "/"}); !errors.Is(err, qerr.ErrPermission) {
		t.Fatalf("err = %v", err)
	}
}

func TestConcurrent(t *testing.T) {
	c := newClock()
	s := open(t, Options{Dir: t.TempDir(), Quota: 4096, TTL: time.Second, Now: c.Now, SweepInterval: time.Millisecond})
	var mu sync.Mutex
	var uris []string
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 60; i++ {
				switch i % 4 {
				case 0, 1:
					w, err := s.Create("csv", "")
					if err != nil {
						t.Error(err)
						return
					}
					w.Write(bytes.Repeat([]byte{'a' + byte(g)}, 100+i*10))
					if i%8 == 1 {
						w.Abort()
						continue
					}
					a, err := w.Commit()
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					uris = append(uris, a.URI)
					mu.Unlock()
				case 2:
					mu.Lock()
					u := ""
					if len(uris) > 0 {
						u = uris[len(uris)/2]
					}
					mu.Unlock()
					if u == "" {
						continue
					}
					b, a, err := s.ReadAll(u, "", -1)
					if err == nil && int64(len(b)) != a.Size {
						t.Errorf("read %d of %d bytes", len(b), a.Size)
					} else if err != nil && !isGone(err) {
						t.Error(err)
					}
				case 3:
					s.List()
					c.Advance(10 * time.Millisecond)
				}
			}
		}(g)
	}
	wg.Wait()
	s.mu.Lock()
	used := s.used
	s.mu.Unlock()
	if used > 4096 {
		t.Fatalf("used %d over quota", used)
	}
	var onDisk int64
	ents, _ := os.ReadDir(s.Dir())
	for _, e := range ents {
		fi, _ := e.Info()
		if strings.HasPrefix(e.Name(), tempPrefix) {
			t.Errorf("temp file left: %s", e.Name())
		}
		onDisk += fi.Size()
	}
	if onDisk != used {
		t.Fatalf("on disk %d, accounted %d", onDisk, used)
	}
}

func TestDelete(t *testing.T) {
	s := open(t, Options{Dir: t.TempDir()})
	a := commit(t, s, "parquet", []byte("spill"))
	b := commit(t, s, "csv", []byte("keep"))
	if err := s.Delete(a.URI); err != nil {
		t.Fatal(err)
	}
	if exists(a.Path) {
		t.Fatal("file not removed")
	}
	if _, err := s.Get(a.URI, ""); !isGone(err) {
		t.Fatalf("deleted artifact served: %v", err)
	}
	if err := s.Delete(a.URI); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if err := s.Delete("quarry://artifacts/../../etc/passwd"); qerr.Code(err) != qerr.CodeInvalidArgument {
		t.Fatalf("malformed URI: %v", err)
	}
	if s.used != b.Size || len(s.List()) != 1 {
		t.Fatalf("used %d, list %v", s.used, s.List())
	}
}
