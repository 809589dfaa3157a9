package artifacts_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/artifacts/s3store"
	"github.com/quarrydb/quarry/internal/artifacts/s3store/s3rvertest"
	"github.com/quarrydb/quarry/internal/qerr"
)

// fakeNow is a settable clock.
type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeNow) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeNow) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// replica opens a Store with its own directory over the object store r.
func replica(t *testing.T, r artifacts.Remote, o artifacts.Options) *artifacts.Store {
	t.Helper()
	o.Dir, o.Remote = t.TempDir(), r
	s, err := artifacts.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func write(t *testing.T, s *artifacts.Store, owner string, data []byte) artifacts.Artifact {
	t.Helper()
	w, err := s.Create("csv", owner)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	a, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func objectExists(t *testing.T, r *s3store.Store, a artifacts.Artifact) bool {
	t.Helper()
	_, err := r.Stat(context.Background(), a.ID+"."+a.Ext)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func s3remote(t *testing.T, srv *s3rvertest.Server, prefix string) *s3store.Store {
	t.Helper()
	r, err := s3store.Open(s3store.Options{URL: "s3://" + s3rvertest.Bucket + "/" + prefix, Endpoint: srv.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRemoteShared: two replicas with their own directories share
// artifacts through a real S3-compatible server: the owner binding holds
// on both, whole, ranged and seekable reads on the replica that did not
// write the artifact return its bytes without a local copy, GetLocal
// makes one, and a deletion on one replica is seen by the other.
func TestRemoteShared(t *testing.T) {
	srv := s3rvertest.Start(t)
	s3rvertest.SetEnv(t)
	r := s3remote(t, srv, "shared")
	a, b := replica(t, r, artifacts.Options{}), replica(t, r, artifacts.Options{})
	data := bytes.Repeat([]byte("row,value\n"), 250_000) // 2.5 MB: several blocks
	art := write(t, a, "alice", data)

	got, err := b.Get(art.URI, "alice")
	if err != nil || got.Path != "" || got.Size != int64(len(data)) || !got.Created.Equal(art.Created) {
		t.Fatalf("Get on the other replica: %+v, %v", got, err)
	}
	for _, p := range []string{"bob", ""} {
		if _, err := b.Get(art.URI, p); qerr.Code(err) != qerr.CodeResourceNotFound {
			t.Fatalf("principal %q got %v, want resource_not_found", p, err)
		}
	}
	all, _, err := b.ReadAll(art.URI, "alice", -1)
	if err != nil || !bytes.Equal(all, data) {
		t.Fatalf("ReadAll: %d bytes, %v", len(all), err)
	}
	if _, _, err := b.ReadAll(art.URI, "alice", 1000); qerr.Code(err) != qerr.CodeOversizeResult {
		t.Fatalf("ReadAll over the limit: %v", err)
	}
	for _, rg := range []struct{ off, n int64 }{{0, 17}, {1_048_570, 20}, {2_000_000, 1_500_000}, {int64(len(data)) + 5, 10}} {
		part, _, err := b.ReadRange(art.URI, "alice", rg.off, rg.n)
		end := min(rg.off+rg.n, int64(len(data)))
		if err != nil || !bytes.Equal(part, data[min(rg.off, end):end]) {
			t.Fatalf("ReadRange(%d, %d): %d bytes, %v", rg.off, rg.n, len(part), err)
		}
	}
	f, _, err := b.Open(art.URI, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(1_000_000, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(rest, data[1_000_000:]) || f.Close() != nil {
		t.Fatalf("seek and read: %d bytes, %v", len(rest), err)
	}

	local, err := b.GetLocal(art.URI, "alice")
	if err != nil || local.Path == "" {
		t.Fatalf("GetLocal: %+v, %v", local, err)
	}
	if again, err := b.Get(art.URI, "alice"); err != nil || again.Path != local.Path {
		t.Fatalf("Get after GetLocal: %+v, %v", again, err)
	}
	if _, err := b.GetLocal(art.URI, "bob"); qerr.Code(err) != qerr.CodeResourceNotFound {
		t.Fatalf("GetLocal of another principal: %v", err)
	}

	if err := b.Delete(art.URI); err != nil {
		t.Fatal(err)
	}
	if objectExists(t, r, art) {
		t.Fatal("the object outlived Delete")
	}
	fresh := replica(t, r, artifacts.Options{})
	if _, err := fresh.Get(art.URI, "alice"); qerr.Code(err) != qerr.CodeResourceNotFound {
		t.Fatalf("deleted artifact on a third replica: %v", err)
	}
}

// TestRemoteExpiryAndQuota: expired artifacts are refused at once and
// their objects deleted by the sweeper; the quota bounds the bytes under
// the prefix, written by any replica, oldest deleted first.
func TestRemoteExpiryAndQuota(t *testing.T) {
	srv := s3rvertest.Start(t)
	s3rvertest.SetEnv(t)

	t.Run("expiry", func(t *testing.T) {
		r := s3remote(t, srv, "ttl")
		clk := &fakeNow{t: time.Now()}
		o := artifacts.Options{TTL: time.Hour, Now: clk.Now, SweepInterval: 20 * time.Millisecond}
		a, b := replica(t, r, o), replica(t, r, o)
		art := write(t, a, "", []byte("x,y\n1,2\n"))
		if _, err := b.Get(art.URI, ""); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Hour + time.Minute)
		if _, err := b.Get(art.URI, ""); qerr.Code(err) != qerr.CodeResourceNotFound {
			t.Fatalf("expired artifact on the other replica: %v", err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for objectExists(t, r, art) {
			if time.Now().After(deadline) {
				t.Fatal("the sweeper left the expired object")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("quota", func(t *testing.T) {
		r := s3remote(t, srv, "quota")
		o := artifacts.Options{Quota: 2500}
		a, b := replica(t, r, o), replica(t, r, o)
		chunk := bytes.Repeat([]byte("z"), 1000)
		first := write(t, a, "", chunk)
		time.Sleep(1100 * time.Millisecond) // upload times order the objects (1 s resolution)
		second := write(t, b, "", chunk)
		if !objectExists(t, r, first) || !objectExists(t, r, second) {
			t.Fatal("objects missing under the quota")
		}
		time.Sleep(1100 * time.Millisecond)
		third := write(t, b, "", chunk)
		if objectExists(t, r, first) || !objectExists(t, r, second) || !objectExists(t, r, third) {
			t.Fatalf("over the quota: want the oldest (another replica's) deleted: %v %v %v",
				objectExists(t, r, first), objectExists(t, r, second), objectExists(t, r, third))
		}
		w, err := a.Create("csv", "")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		if _, err := w.Write(bytes.Repeat([]byte("z"), 3000)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(); qerr.Code(err) != qerr.CodeResourceExhausted {
			t.Fatalf("an artifact over the whole quota: %v", err)
		}
	})
}

// TestRemoteUnreachable: a store that cannot be reached is refused at
// Open, and once it goes away a Commit fails with a structured error
// (resource_exhausted, reason store_unreachable) and leaves nothing
// behind locally; reads of other replicas' artifacts fail the same way.
func TestRemoteUnreachable(t *testing.T) {
	srv := s3rvertest.Start(t)
	s3rvertest.SetEnv(t)
	r := s3remote(t, srv, "gone")
	a := replica(t, r, artifacts.Options{})
	art := write(t, a, "", []byte("a\n1\n"))
	b := replica(t, r, artifacts.Options{})
	srv.Stop()

	check := func(what string, err error) {
		t.Helper()
		var qe *qerr.Error
		if !errors.As(err, &qe) || qe.Code != qerr.CodeResourceExhausted || qe.Diagnostics["reason"] != "store_unreachable" || qe.Hint == "" {
			t.Fatalf("%s: %#v, want resource_exhausted with reason store_unreachable", what, err)
		}
	}
	w, err := a.Create("csv", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("b\n2\n")); err != nil {
		t.Fatal(err)
	}
	_, err = w.Commit()
	check("commit", err)
	if n := len(a.List()); n != 1 {
		t.Fatalf("%d local artifacts after a failed commit, want only the first", n)
	}
	_, err = b.Get(art.URI, "")
	check("get on another replica", err)
	check("readiness", a.Writable())

	_, err = artifacts.Open(artifacts.Options{Dir: t.TempDir(), Remote: r})
	check("open", err)
}
