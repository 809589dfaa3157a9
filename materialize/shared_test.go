package materialize

import (
	"bytes"
	"context"
	"testing"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/shared"
	"github.com/quarrydb/quarry/internal/shared/redistest"
)

// replica is one of two Materializers sharing a Redis and a store directory.
type replica struct {
	m     *Materializer
	reg   *handles.Registry[*Table]
	store *artifacts.Store
}

func newReplica(t *testing.T, kv shared.KV, dir string) replica {
	t.Helper()
	store, err := artifacts.Open(artifacts.Options{Dir: dir, Shared: kv})
	if err != nil {
		t.Fatal(err)
	}
	reg := handles.New[*Table](handles.Options{Key: []byte("one key for both replicas")})
	reg.SetRemote(SharedHandles(kv, store, nil))
	t.Cleanup(func() { reg.Close(); _ = store.Close() })
	return replica{m: New(Config{Artifacts: store, Handles: reg, Hard: Caps{MaxRows: 100, PageRows: 700}, ShareHandles: true}), reg: reg, store: store}
}

func TestSharedHandles(t *testing.T) {
	kv, err := shared.OpenRedis(context.Background(), redistest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	alloc := newAlloc(t)
	dir := t.TempDir()
	a, b := newReplica(t, kv, dir), newReplica(t, kv, dir)

	tbl := idTable(t, alloc, 5000, 1000) // in memory: Deliver spills it to share it
	defer tbl.Release()
	first, err := a.m.Deliver(ctx(), tbl, Request{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Method != MethodHandle || first.PageInfo == nil || !first.PageInfo.HasMore {
		t.Fatalf("want a paged result, got %s", first.Method)
	}
	h, tok := first.ResultHandle, first.PageInfo.PageToken

	// The same page from either replica, the same bytes.
	pa, err := a.m.NextPage(ctx(), h, tok, "", "alice")
	if err != nil {
		t.Fatal(err)
	}
	pb, err := b.m.NextPage(ctx(), h, tok, "", "alice")
	if err != nil {
		t.Fatalf("page of a's handle on b: %v", err)
	}
	if !bytes.Equal(pa.Data, pb.Data) || pb.PageInfo.PageToken != pa.PageInfo.PageToken {
		t.Fatalf("pages differ between replicas")
	}
	if got := ids(t, pb.Data); got[0] != 700 || len(got) != 700 {
		t.Fatalf("second page ids %d.. (%d rows)", got[0], len(got))
	}
	// Another principal learns nothing, on either replica.
	for _, r := range []replica{a, b} {
		if _, err := r.m.NextPage(ctx(), h, tok, "", "bob"); qerr.Code(err) != qerr.CodeHandleExpired {
			t.Fatalf("bob paging alice's handle: %v", err)
		}
	}
	// A file result of a is read on b by its owner only.
	file, err := a.m.Deliver(ctx(), tbl, Request{Principal: "alice", Format: FormatParquet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.Get(file.ResourceURI, "bob"); qerr.Code(err) != qerr.CodeResourceNotFound {
		t.Fatalf("bob reading alice's artifact on b: %v", err)
	}
	if art, err := b.store.Get(file.ResourceURI, "alice"); err != nil || art.Size != file.SizeBytes {
		t.Fatalf("alice reading her artifact on b: %v %+v", err, art)
	}
	// The handle outlives a's copy: a drops it, b still pages it, then
	// Delete on b forgets it everywhere.
	a.reg.Close()
	if _, err := b.m.ReadPage(ctx(), h, 3, "alice"); err != nil {
		t.Fatalf("b after a closed: %v", err)
	}
	b.reg.Delete(h)
	c := newReplica(t, kv, dir)
	if _, err := c.m.NextPage(ctx(), h, tok, "", "alice"); qerr.Code(err) != qerr.CodeHandleExpired {
		t.Fatalf("deleted handle on a third replica: %v", err)
	}
}
