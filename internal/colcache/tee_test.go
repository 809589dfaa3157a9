package colcache

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
)

// peakAlloc is a checked allocator that remembers the most it held.
type peakAlloc struct {
	*memory.CheckedAllocator
	peak atomic.Int64
}

func newPeakAlloc() *peakAlloc {
	return &peakAlloc{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator())}
}

func (a *peakAlloc) note() {
	n := int64(a.CurrentAlloc())
	for p := a.peak.Load(); n > p && !a.peak.CompareAndSwap(p, n); p = a.peak.Load() {
	}
}

func (a *peakAlloc) Allocate(n int) []byte {
	b := a.CheckedAllocator.Allocate(n)
	a.note()
	return b
}

func (a *peakAlloc) Reallocate(n int, b []byte) []byte {
	b = a.CheckedAllocator.Reallocate(n, b)
	a.note()
	return b
}

// TestOneFillingReadPerFile: while one cold read of a file fills the cache,
// a second concurrent read of it goes through with the caller's allocator
// (counted by the caller, released as it goes) instead of keeping a
// second copy in the cache's allocator; the filling read's bytes count as
// Filling until it inserts them, and the cache's allocator never holds
// more than the budget.
func TestOneFillingReadPerFile(t *testing.T) {
	ds, _ := fixture(t, "a", 70_000)
	cmem := newPeakAlloc()
	c := New(Options{Budget: 64 << 20, Alloc: cmem})
	first, err := c.Wrap(ds).Scan(context.Background(), catalog.ScanOptions{BatchSize: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := first.(*teeReader); !ok {
		t.Fatalf("first cold read is a %T, want the tee", first)
	}
	for range 7 {
		if !first.Next() {
			t.Fatal(first.Err())
		}
	}
	if st := c.Stats(); st.Filling == 0 || st.Columns != 0 {
		t.Fatalf("mid-way through the filling read: %+v", st)
	}
	qmem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	second, err := c.Wrap(ds).Scan(context.Background(), catalog.ScanOptions{BatchSize: 10_000, Alloc: qmem})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := second.(*teeReader); ok {
		t.Fatal("a second concurrent cold read of the file also fills the cache")
	}
	rows := 0
	for second.Next() {
		b := second.RecordBatch()
		rows += int(b.NumRows())
		// The batch's buffers are counted by the caller's allocator. (The
		// cache's allocator is not compared before and after: the filling
		// read's pipeline may still be reading ahead into it meanwhile.)
		if held, need := qmem.CurrentAlloc(), batchBytes(b); held < need {
			t.Fatalf("the read-through batch holds %d bytes, the caller's allocator only %d", need, held)
		}
	}
	if err := second.Err(); err != nil || rows != 70_000 {
		t.Fatalf("read through %d rows, err %v", rows, err)
	}
	second.Release()
	qmem.AssertSize(t, 0)
	for first.Next() {
	}
	if err := first.Err(); err != nil {
		t.Fatal(err)
	}
	first.Release()
	st := c.Stats()
	if st.Filling != 0 || st.Columns != 3 || int64(cmem.CurrentAlloc()) != st.Used {
		t.Fatalf("after the filling read: %+v, cache allocator holds %d", st, cmem.CurrentAlloc())
	}
	if p := cmem.peak.Load(); p > st.Budget {
		t.Fatalf("cache allocator peaked at %d > budget %d", p, st.Budget)
	}
	// The next cold read of the file may fill the cache again.
	c.Purge()
	third, err := c.Wrap(ds).Scan(context.Background(), catalog.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := third.(*teeReader); !ok {
		t.Fatalf("cold read after the filling one ended is a %T, want the tee", third)
	}
	third.Release() // abandoned: gives the file's tee back
	if !c.startTee(c.Wrap(ds).(*Source).key, 0) {
		t.Fatal("an abandoned filling read kept the file's tee")
	}
	c.endTee(c.Wrap(ds).(*Source).key, 0)
	c.Purge()
	cmem.AssertSize(t, 0)
}

// TestFillingReadMakesRoom: the bytes a read filling the cache holds count
// against the budget as it reads: cached columns of other files are
// evicted to make room while it reads (not only when it inserts), so the
// cache's allocator stays within the budget (but for the reader's working
// buffers); a read that cannot fit beside the filling reads does not fill
// the cache.
func TestFillingReadMakesRoom(t *testing.T) {
	a, _ := fixture(t, "a", 200_000)
	b, _ := fixture(t, "b", 200_000)
	probe := New(Options{Budget: 1 << 30})
	readAll(t, probe.Wrap(a), catalog.ScanOptions{})
	one := probe.Stats().Used
	probe.Purge()

	cmem := newPeakAlloc()
	c := New(Options{Budget: one + one/2, Alloc: cmem})
	readAll(t, c.Wrap(b), catalog.ScanOptions{BatchSize: 10_000})
	rr, err := c.Wrap(a).Scan(context.Background(), catalog.ScanOptions{BatchSize: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	for range 15 {
		if !rr.Next() {
			t.Fatal(rr.Err())
		}
	}
	if st := c.Stats(); st.Filling == 0 || st.Used+st.Filling > st.Budget {
		t.Fatalf("mid-way: %+v", st)
	}
	// Another file's read does not fit beside it: read through.
	small := c.Wrap(b)
	got, _ := readAll(t, small, catalog.ScanOptions{BatchSize: 10_000})
	if len(got) != 3 || len(got[0]) != 200_000 {
		t.Fatalf("read %d columns", len(got))
	}
	if c.Wrap(b).(*Source).Cached(nil) {
		t.Fatal("a read that could not fit beside the filling one was cached")
	}
	for rr.Next() {
	}
	rr.Release()
	st := c.Stats()
	t.Logf("one file %d bytes, budget %d, cache allocator peak %d", one, st.Budget, cmem.peak.Load())
	if !c.Wrap(a).(*Source).Cached(nil) || st.Filling != 0 || st.Used > st.Budget {
		t.Fatalf("after: %+v", st)
	}
	// Beyond what the cache counts, the allocator holds the reader's
	// buffers of the batch being parsed and, while a file is inserted, its
	// string columns re-encoded with shared dictionaries (dictshare.go):
	// within half a file here. Without making room as it reads, the peak
	// would be both files and that.
	if p := cmem.peak.Load(); p > st.Budget+one/2 {
		t.Fatalf("cache allocator peaked at %d > budget %d + half a file", p, st.Budget)
	}
	c.Purge()
	cmem.AssertSize(t, 0)
}

// TestFillingReadSkipsCachedColumns: a cold read of columns some of which
// are cached keeps only the others (the cached ones are not held twice
// while it reads), and inserts them beside the cached ones.
func TestFillingReadSkipsCachedColumns(t *testing.T) {
	ds, _ := fixture(t, "a", 70_000)
	cmem := newPeakAlloc()
	c := New(Options{Budget: 64 << 20, Alloc: cmem})
	readAll(t, c.Wrap(ds), catalog.ScanOptions{Columns: []string{"score"}})
	score := c.Stats().Used
	rr, err := c.Wrap(ds).Scan(context.Background(), catalog.ScanOptions{Columns: []string{"id", "score"}, BatchSize: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	for range 7 {
		if !rr.Next() {
			t.Fatal(rr.Err())
		}
	}
	// id and score are int64 and float64: the same bytes per row.
	if st := c.Stats(); st.Filling == 0 || st.Filling > score {
		t.Fatalf("filling %d bytes for 70%% of id, score cached in %d: %+v", st.Filling, score, st)
	}
	for rr.Next() {
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	rr.Release()
	st := c.Stats()
	if !c.Wrap(ds).(*Source).Cached([]string{"id", "score"}) || st.Columns != 2 || int64(cmem.CurrentAlloc()) != st.Used || st.Filling != 0 {
		t.Fatalf("after: %+v, allocator %d", st, cmem.CurrentAlloc())
	}
	got, _ := readAll(t, c.Wrap(ds), catalog.ScanOptions{Columns: []string{"id", "score"}})
	if len(got) != 2 || got[0][69_999] != "69999" || got[1][69_999] != "99.5" {
		t.Fatalf("cached read: %d columns, last row %v %v", len(got), got[0][69_999], got[1][69_999])
	}
	c.Purge()
	cmem.AssertSize(t, 0)
}

// batchBytes is the bytes of b's buffers (dictionaries included).
func batchBytes(b arrow.RecordBatch) int {
	n := 0
	var add func(d arrow.ArrayData)
	add = func(d arrow.ArrayData) {
		for _, buf := range d.Buffers() {
			if buf != nil {
				n += buf.Len()
			}
		}
		for _, c := range d.Children() {
			add(c)
		}
		if d.DataType().ID() == arrow.DICTIONARY {
			add(d.Dictionary())
		}
	}
	for _, c := range b.Columns() {
		add(c.Data())
	}
	return n
}
