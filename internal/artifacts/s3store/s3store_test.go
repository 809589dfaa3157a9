package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/artifacts/s3store"
	"github.com/quarrydb/quarry/internal/artifacts/s3store/s3rvertest"
)

func open(t *testing.T, endpoint, url string) *s3store.Store {
	t.Helper()
	st, err := s3store.Open(s3store.Options{URL: url, Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func names(t *testing.T, st *s3store.Store) []string {
	t.Helper()
	var out []string
	if err := st.List(context.Background(), func(o artifacts.ObjectInfo) error {
		out = append(out, o.Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct{ in, bucket, prefix, err string }{
		{"s3://b", "b", "", ""},
		{"s3://b/", "b", "", ""},
		{"s3://b/quarry/arts/", "b", "quarry/arts/", ""},
		{"s3://b/a/../c", "", "", "clean path"},
		{"s3://b/a//c", "", "", "clean path"},
		{"http://b/x", "", "", "not an object store URL"},
		{"s3:///x", "", "", "not an object store URL"},
		{"s3://u:p@b/x", "", "", "not an object store URL"},
		{"s3://b/x?y=1", "", "", "not an object store URL"},
	} {
		b, p, err := s3store.ParseURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || b != tc.bucket || p != tc.prefix {
			t.Errorf("%s: %q %q %v, want %q %q", tc.in, b, p, err, tc.bucket, tc.prefix)
		}
	}
}

// TestStore: the Remote's operations against a real S3-compatible server:
// owners (any text, empty too) and creation times round-trip through the
// object metadata, ranged reads return exact bytes (short at the end),
// listing sees only the prefix, deletion is idempotent.
func TestStore(t *testing.T) {
	srv := s3rvertest.Start(t)
	s3rvertest.SetEnv(t)
	ctx := context.Background()
	st := open(t, srv.Endpoint, "s3://"+s3rvertest.Bucket+"/team/arts")
	other := open(t, srv.Endpoint, "s3://"+s3rvertest.Bucket+"/other")
	if err := st.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if st.Location() != "s3://quarry/team/arts" {
		t.Errorf("location %q", st.Location())
	}
	data := bytes.Repeat([]byte("0123456789"), 300_001) // 3 MB
	created := time.Date(2026, 11, 27, 10, 0, 0, 123456789, time.UTC)
	for _, owner := range []string{"", "alice", "名前 with spaces/and=signs"} {
		name := "a_" + strings.Repeat("b", 26) + ".csv"
		if err := st.Put(ctx, name, bytes.NewReader(data), int64(len(data)), artifacts.ObjectInfo{Owner: owner, Created: created}); err != nil {
			t.Fatal(err)
		}
		o, err := st.Stat(ctx, name)
		if err != nil || o.Owner != owner || !o.Created.Equal(created) || o.Size != int64(len(data)) {
			t.Fatalf("stat %+v %v, want owner %q created %v size %d", o, err, owner, created, len(data))
		}
	}
	name := "a_" + strings.Repeat("b", 26) + ".csv"
	for _, r := range []struct{ off, n, want int64 }{{0, 10, 10}, {1_000_003, 70_000, 70_000}, {int64(len(data)) - 5, 20, 5}} {
		p := make([]byte, r.n)
		n, err := st.ReadAt(ctx, name, p, r.off)
		if int64(n) != r.want || (r.want < r.n) != errors.Is(err, io.EOF) || (r.want == r.n && err != nil) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", r.off, r.n, n, err)
		}
		if !bytes.Equal(p[:n], data[r.off:r.off+r.want]) {
			t.Fatalf("ReadAt(%d, %d): wrong bytes", r.off, r.n)
		}
	}
	if got := names(t, st); len(got) != 1 || got[0] != name {
		t.Fatalf("list %v", got)
	}
	if got := names(t, other); len(got) != 0 {
		t.Fatalf("other prefix lists %v", got)
	}
	if _, err := other.Stat(ctx, name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat in another prefix: %v", err)
	}
	if _, err := st.ReadAt(ctx, "a_"+strings.Repeat("c", 26)+".csv", make([]byte, 4), 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read of a missing object: %v", err)
	}
	for range 2 {
		if err := st.Delete(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Stat(ctx, name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat after delete: %v", err)
	}
}

// failingReader gives n bytes, then fails.
type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errors.New("the writer died")
	}
	k := min(len(p), r.n)
	clear(p[:k])
	r.n -= k
	return k, nil
}

// TestFailedPutLeavesNothing: an upload that fails midway, in one PUT or
// in a multipart upload after whole parts went up, leaves no object, not
// even a partial one.
func TestFailedPutLeavesNothing(t *testing.T) {
	srv := s3rvertest.Start(t)
	s3rvertest.SetEnv(t)
	st := open(t, srv.Endpoint, "s3://"+s3rvertest.Bucket+"/p")
	for _, tc := range []struct {
		name       string
		size, sent int
		id         string
	}{
		{"single put", 1 << 20, 300 << 10, "d"},
		{"multipart", 40 << 20, 17 << 20, "e"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "a_" + strings.Repeat(tc.id, 26) + ".parquet"
			err := st.Put(context.Background(), name, &failingReader{n: tc.sent}, int64(tc.size), artifacts.ObjectInfo{Owner: "x", Created: time.Now()})
			if err == nil {
				t.Fatal("the upload succeeded")
			}
			if _, err := st.Stat(context.Background(), name); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("stat after a failed upload: %v", err)
			}
			if got := names(t, st); len(got) != 0 {
				t.Fatalf("objects after a failed upload: %v", got)
			}
		})
	}
}

// TestUnreachable: a store nobody listens on fails every call promptly.
func TestUnreachable(t *testing.T) {
	s3rvertest.SetEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	st := open(t, "http://"+addr, "s3://b/p")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := st.Check(ctx); err == nil {
		t.Fatal("check of an unreachable store succeeded")
	}
	if err := st.Put(ctx, "a_"+strings.Repeat("f", 26)+".csv", strings.NewReader("x"), 1, artifacts.ObjectInfo{}); err == nil {
		t.Fatal("put to an unreachable store succeeded")
	}
	if ctx.Err() != nil {
		t.Fatal("the calls took 20 s")
	}
}
