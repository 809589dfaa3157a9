package colcache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
)

// countingSource counts the scans that reach the file.
type countingSource struct {
	inner catalog.Source
	scans atomic.Int64
	fail  atomic.Bool
}

func (s *countingSource) Scan(ctx context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	s.scans.Add(1)
	if s.fail.Load() {
		return nil, errors.New("inner source called")
	}
	return s.inner.Scan(ctx, opts)
}

// fixture writes a CSV of n rows and returns its dataset with a counting source.
func fixture(t *testing.T, name string, n int) (*catalog.Dataset, *countingSource) {
	t.Helper()
	root := t.TempDir()
	var sb strings.Builder
	sb.WriteString("id,name,score\n")
	for i := range n {
		fmt.Fprintf(&sb, "%d,name %d,%d.5\n", i, i%7, i%100)
	}
	if err := os.WriteFile(filepath.Join(root, name+".csv"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.New(context.Background(), catalog.Options{Formats: []catalog.Format{csv.NewFormat()}, Root: root, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := c.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	cp := *ds
	cs := &countingSource{inner: ds.Source}
	cp.Source = cs
	return &cp, cs
}

// readAll returns every column as strings and the batch sizes.
func readAll(t *testing.T, src catalog.Source, opts catalog.ScanOptions) ([][]string, []int64) {
	t.Helper()
	rr, err := src.Scan(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var cols [][]string
	var sizes []int64
	for rr.Next() {
		rec := rr.RecordBatch()
		if !rec.Schema().Equal(rr.Schema()) {
			t.Fatalf("batch schema %v, reader %v", rec.Schema(), rr.Schema())
		}
		sizes = append(sizes, rec.NumRows())
		for i := range int(rec.NumCols()) {
			if i >= len(cols) {
				cols = append(cols, nil)
			}
			a := rec.Column(i)
			for j := range a.Len() {
				cols[i] = append(cols[i], a.ValueStr(j))
			}
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	return cols, sizes
}

func TestHitAfterMiss(t *testing.T) {
	ds, cs := fixture(t, "a", 1000)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	c := New(Options{Budget: 1 << 20, Alloc: mem})
	src := c.Wrap(ds)
	query := memory.NewCheckedAllocator(memory.NewGoAllocator())
	want, _ := readAll(t, ds.Source, catalog.ScanOptions{Columns: []string{"score", "id"}})
	got, _ := readAll(t, src, catalog.ScanOptions{Columns: []string{"score", "id"}, Alloc: query})
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatal("first read differs")
	}
	if cs.scans.Load() != 2 {
		t.Fatalf("scans %d", cs.scans.Load())
	}
	if !src.(*Source).Cached([]string{"id"}) || src.(*Source).Cached(nil) {
		t.Fatal("Cached wrong")
	}
	cs.fail.Store(true)
	got, sizes := readAll(t, c.Wrap(ds), catalog.ScanOptions{Columns: []string{"id", "score"}, BatchSize: 300, Alloc: query})
	if len(got) != 2 || fmt.Sprint(got[0]) != fmt.Sprint(want[1]) || fmt.Sprint(got[1]) != fmt.Sprint(want[0]) {
		t.Fatal("cached read differs")
	}
	if fmt.Sprint(sizes) != "[300 300 300 100]" {
		t.Fatalf("batch sizes %v", sizes)
	}
	query.AssertSize(t, 0) // the query allocator is never used for cached data
	st := c.Stats()
	if st.Hits != 1 || st.Columns != 2 || st.Used <= 0 || st.Used != int64(mem.CurrentAlloc()) {
		t.Fatalf("stats %+v, allocated %d", st, mem.CurrentAlloc())
	}
	// A scan needing an uncached column goes to the file.
	cs.fail.Store(false)
	readAll(t, c.Wrap(ds), catalog.ScanOptions{})
	if cs.scans.Load() != 3 || c.Stats().Columns != 3 {
		t.Fatalf("scans %d stats %+v", cs.scans.Load(), c.Stats())
	}
	c.Purge()
	mem.AssertSize(t, 0)
}

func TestMisalignedChunks(t *testing.T) {
	ds, cs := fixture(t, "a", 1000)
	c := New(Options{Budget: 1 << 20})
	readAll(t, c.Wrap(ds), catalog.ScanOptions{Columns: []string{"id"}, BatchSize: 300})
	readAll(t, c.Wrap(ds), catalog.ScanOptions{Columns: []string{"name"}, BatchSize: 170})
	cs.fail.Store(true)
	got, sizes := readAll(t, c.Wrap(ds), catalog.ScanOptions{Columns: []string{"name", "id"}, BatchSize: 1000})
	var total int64
	for _, s := range sizes {
		total += s
		if s > 300 {
			t.Fatalf("batch of %d crosses a chunk end", s)
		}
	}
	if total != 1000 || got[1][999] != "999" || got[0][999] != "name 5" {
		t.Fatalf("sizes %v", sizes)
	}
	c.Purge()
}

func TestEvictionUnderBudget(t *testing.T) {
	a, _ := fixture(t, "a", 5000)
	b, _ := fixture(t, "b", 5000)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	probe := New(Options{Budget: 1 << 30})
	readAll(t, probe.Wrap(a), catalog.ScanOptions{})
	one := probe.Stats().Used
	probe.Purge()

	c := New(Options{Budget: one + one/2, Alloc: mem})
	readAll(t, c.Wrap(a), catalog.ScanOptions{})
	if c.Stats().Columns != 3 {
		t.Fatalf("stats %+v", c.Stats())
	}
	readAll(t, c.Wrap(b), catalog.ScanOptions{})
	st := c.Stats()
	if st.Used > st.Budget || st.Evictions == 0 || !c.Wrap(b).(*Source).Cached(nil) || c.Wrap(a).(*Source).Cached(nil) {
		t.Fatalf("stats %+v", st)
	}
	if int64(mem.CurrentAlloc()) != st.Used {
		t.Fatalf("allocated %d, accounted %d", mem.CurrentAlloc(), st.Used)
	}
	// A dataset bigger than the budget is read through, not cached.
	small := New(Options{Budget: one / 10, Alloc: mem})
	readAll(t, small.Wrap(a), catalog.ScanOptions{})
	if small.Stats().Used > small.Stats().Budget {
		t.Fatalf("stats %+v", small.Stats())
	}
	c.Purge()
	small.Purge()
	mem.AssertSize(t, 0)
}

func TestStaleFileNeverServed(t *testing.T) {
	ds, cs := fixture(t, "a", 100)
	c := New(Options{Budget: 1 << 20})
	readAll(t, c.Wrap(ds), catalog.ScanOptions{})
	if !c.Wrap(ds).(*Source).Cached(nil) {
		t.Fatal("not cached")
	}
	// Same size, new mtime.
	later := ds.ModTime.Add(time.Second)
	if err := os.Chtimes(ds.AbsPath, later, later); err != nil {
		t.Fatal(err)
	}
	if c.Wrap(ds).(*Source).Cached(nil) {
		t.Fatal("stale file reported cached")
	}
	before := cs.scans.Load()
	readAll(t, c.Wrap(ds), catalog.ScanOptions{})
	if cs.scans.Load() != before+1 {
		t.Fatal("stale scan not sent to the file")
	}
	if st := c.Stats(); st.Columns != 0 || st.Used != 0 {
		t.Fatalf("stale entries kept (and a stale read cached): %+v", st)
	}
	// The re-cataloged dataset (new mtime) is cached again.
	ds2 := *ds
	ds2.ModTime = later
	readAll(t, c.Wrap(&ds2), catalog.ScanOptions{})
	if !c.Wrap(&ds2).(*Source).Cached(nil) {
		t.Fatal("new version not cached")
	}
	c.Purge()
}

func TestPartialAndFailedReadsNotCached(t *testing.T) {
	ds, _ := fixture(t, "a", 1000)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	c := New(Options{Budget: 1 << 20, Alloc: mem})
	rr, err := c.Wrap(ds).Scan(context.Background(), catalog.ScanOptions{BatchSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	rr.Next()
	rr.Release() // abandoned mid-stream
	ctx, cancel := context.WithCancel(context.Background())
	rr, err = c.Wrap(ds).Scan(ctx, catalog.ScanOptions{BatchSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	rr.Next()
	cancel()
	for rr.Next() {
	}
	if rr.Err() == nil {
		t.Fatal("no error after cancel")
	}
	rr.Release()
	if st := c.Stats(); st.Columns != 0 {
		t.Fatalf("partial read cached: %+v", st)
	}
	mem.AssertSize(t, 0)
}

func TestRetainReleaseDiscipline(t *testing.T) {
	ds, _ := fixture(t, "a", 1000)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	c := New(Options{Budget: 1 << 20, Alloc: mem})
	readAll(t, c.Wrap(ds), catalog.ScanOptions{})
	// Hold a batch from a cached read across eviction (Purge).
	rr, err := c.Wrap(ds).Scan(context.Background(), catalog.ScanOptions{BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	rr.Retain()
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	rec := rr.RecordBatch()
	rec.Retain()
	rr.Release()
	c.Purge()
	if mem.CurrentAlloc() == 0 {
		t.Fatal("buffers freed while a reader holds them")
	}
	rr.Release()
	if rec.Column(0).(*array.Int64).Value(0) != 0 {
		t.Fatal("held batch corrupted")
	}
	rec.Release()
	mem.AssertSize(t, 0)
}

func TestConcurrentScans(t *testing.T) {
	ds, _ := fixture(t, "a", 3000)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	c := New(Options{Budget: 1 << 20, Alloc: mem})
	want, _ := readAll(t, ds.Source, catalog.ScanOptions{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 20 {
				cols := [][]string{nil, {"id"}, {"score", "name"}}[(w+i)%3]
				got, _ := readAll(t, c.Wrap(ds), catalog.ScanOptions{Columns: cols, BatchSize: 100 + w})
				if cols == nil && fmt.Sprint(got) != fmt.Sprint(want) {
					t.Error("concurrent read differs")
				}
				if i%7 == 0 {
					c.Purge()
				}
			}
		})
	}
	wg.Wait()
	c.Purge()
	mem.AssertSize(t, 0)
}

func TestDisabled(t *testing.T) {
	ds, _ := fixture(t, "a", 10)
	if src := New(Options{}).Wrap(ds); src != ds.Source {
		t.Fatal("disabled cache wrapped the source")
	}
	var nilCache *Cache
	if nilCache.Enabled() {
		t.Fatal("nil cache enabled")
	}
	if DefaultBudget() <= 0 {
		t.Fatal("no default budget")
	}
}

func TestSchemaOfCachedRead(t *testing.T) {
	ds, _ := fixture(t, "a", 10)
	c := New(Options{Budget: 1 << 20})
	readAll(t, c.Wrap(ds), catalog.ScanOptions{})
	rr, err := c.Wrap(ds).Scan(context.Background(), catalog.ScanOptions{Columns: []string{"name"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if !rr.Schema().Field(0).Equal(arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}) {
		t.Fatalf("schema %v", rr.Schema())
	}
}

func TestCachedAndPlanSchema(t *testing.T) {
	ds, _ := fixture(t, "a", 100)
	c := New(Options{Budget: 1 << 20})
	src := c.Wrap(ds).(*Source)
	if src.Cached([]string{"id"}) {
		t.Fatal("cached before any read")
	}
	readAll(t, c.Wrap(ds), catalog.ScanOptions{Columns: []string{"id"}})
	if !src.Cached([]string{"id"}) || src.Cached([]string{"name"}) || src.Cached([]string{"id", "name"}) || src.Cached(nil) {
		t.Fatal("Cached wrong")
	}
	if PlanSchema(ds.Source, ds) != ds.Schema || !PlanSchema(c.Wrap(ds), ds).Equal(ds.Schema) {
		t.Fatal("PlanSchema changed plain types")
	}
	var nilCache *Cache
	if nilCache.Wrap(ds) != ds.Source {
		t.Fatal("nil cache")
	}
}
