package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestChainCap(t *testing.T) {
	var sum int64
	for k := range uint32(40) {
		if got := chainCap(k); got != sum {
			t.Fatalf("chainCap(%d) = %d, want %d", k, got, sum)
		}
		sum += int64(blockVals(k))
	}
	if blockBytes(0) != blockMinBytes || blockBytes(blockMaxShift) != blockBytes(blockMaxShift+5) {
		t.Fatal("block sizes: want 32 bytes first and a fixed size from blockMaxShift on")
	}
}

// edge is how many values the growing blocks of a chain hold; full is the
// capacity of every later block.
var edge, full = int(chainCap(blockMaxShift)), blockVals(blockMaxShift)

// Values pushed to interleaved chains come back from take exactly (as a
// multiset), every mapped byte is charged while held, and the regions go
// away as their blocks are taken.
func TestBlockStoreTake(t *testing.T) {
	type test struct {
		name    string
		sizes   []int // values per chain
		compact bool  // values with two decimals (compact blocks), else random doubles
	}
	var tests []test
	for _, compact := range []bool{false, true} {
		sfx := map[bool]string{false: "", true: " compact"}[compact]
		tests = append(tests, []test{
			{"empty" + sfx, nil, compact},
			{"no values" + sfx, []int{0, 0}, compact},
			{"one block" + sfx, []int{1, 3, 6}, compact},
			{"block edges" + sfx, []int{4, 11, 12, 2*edge - 1, edge, edge + 1, 2 * (edge + full), 2*(edge+full) + 1}, compact},
			{"large" + sfx, []int{50000, 0, 7, 130000}, compact},
			{"many small" + sfx, slices.Repeat([]int{1, 2, 5, 9}, 5000), compact},
		}...)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(tt.sizes))))
			b := &budget{}
			a := &acct{b: b}
			s := newBlockStore(a)
			chains := make([]valueChain, len(tt.sizes))
			want := make([][]float64, len(tt.sizes))
			// push in random interleaving
			var order []int
			for g, n := range tt.sizes {
				order = append(order, slices.Repeat([]int{g}, n)...)
			}
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for _, g := range order {
				x := r.NormFloat64()
				if tt.compact {
					x = float64(r.IntN(200001)-100000) / 100
				}
				if err := s.add(&chains[g], x); err != nil {
					t.Fatal(err)
				}
				want[g] = append(want[g], x)
			}
			var most int64
			for g := range chains {
				if got := s.count(&chains[g]); got != int64(tt.sizes[g]) {
					t.Fatalf("chain %d: count %d, want %d", g, got, tt.sizes[g])
				}
				most = max(most, s.scratchNeed(&chains[g]))
			}
			if b.live.Load() != s.mapped || a.n != s.mapped {
				t.Fatalf("charged %d (acct %d), mapped %d", b.live.Load(), a.n, s.mapped)
			}
			if err := s.seal(most); err != nil {
				t.Fatal(err)
			}
			prev := s.mapped
			for g := range chains {
				vals, done := s.take(&chains[g])
				got := slices.Clone(vals)
				done()
				slices.Sort(got)
				slices.Sort(want[g])
				if !slices.Equal(got, want[g]) {
					t.Fatalf("chain %d: %d values back, want %d (or different values)", g, len(got), len(want[g]))
				}
				if s.mapped > prev {
					t.Fatalf("chain %d: mapped grew from %d to %d while taking", g, prev, s.mapped)
				}
				prev = s.mapped
			}
			if s.mapped != int64(len(s.scratch)) {
				t.Fatalf("after taking every chain %d bytes mapped, want only the scratch buffer's %d", s.mapped, len(s.scratch))
			}
			s.free()
			if s.mapped != 0 || b.live.Load() != 0 || a.n != 0 {
				t.Fatalf("after free: mapped %d, budget %d, acct %d", s.mapped, b.live.Load(), a.n)
			}
		})
	}
}

// groupedValuesSource is a source of (g int64, v <typ>) rows: groups of the
// given sizes, rows shuffled, with nulls and NaNs sprinkled in.
func groupedValuesSource(r *rand.Rand, mem memory.Allocator, sizes []int, typ arrow.DataType) ([]tcol, [][]any) {
	var g, v []any
	for grp, n := range sizes {
		for range n {
			g = append(g, int64(grp))
			var x any
			switch p := r.IntN(100); {
			case p < 3:
				x = nil
			case p < 5 && typ.ID() == arrow.FLOAT64:
				x = math.NaN()
			case typ.ID() == arrow.FLOAT64:
				x = float64(r.IntN(5000)) / 8 // ties
			default:
				x = int64(r.IntN(1<<20) - 1<<19)
			}
			v = append(v, x)
		}
	}
	perm := r.Perm(len(g))
	gs, vs := make([]any, len(g)), make([]any, len(g))
	rows := make([][]any, len(g))
	for i, j := range perm {
		gs[i], vs[i] = g[j], v[j]
		rows[i] = []any{g[j], v[j]}
	}
	return []tcol{{"g", tInt64, gs}, {"v", typ, vs}}, rows
}

// median and quantiles over groups spanning many blocks (and a few rows),
// emitted in ranges of every size, against the reference evaluator.
func TestQuantileChains(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int
		typ   arrow.DataType
		bs    []int
	}{
		{"one large group", []int{30000}, tF64, []int{1 << 16}},
		{"block edges", []int{1, 3, 4, 11, edge, edge + 1, edge + full, edge + full + 1, 0, 2}, tF64, []int{1, 3, 1000}},
		{"ints", []int{20000, 5, 9000}, tInt64, []int{2, 4096}},
		{"many groups", slices.Repeat([]int{1, 30, 300}, 200), tF64, []int{7, 1 << 16}},
	}
	for i, tt := range tests {
		for _, bs := range tt.bs {
			t.Run(fmt.Sprintf("%s/%d", tt.name, bs), func(t *testing.T) {
				r := rand.New(rand.NewPCG(9, uint64(i)))
				alloc := newAlloc()
				defer alloc.AssertSize(t, 0)
				cols, rows := groupedValuesSource(r, alloc, tt.sizes, tt.typ)
				src := newSource(alloc, cols)
				defer src.release()
				plan := aggOf(scanOf(src.schema), []string{"g"}, "median:v", "quantile:v:0.1", "quantile:v:0.99", "count:v", "quantile:v:1")
				want := refAgg(&refState{}, rows, plan)
				rr, err := Execute(context.Background(), plan, src, Options{Alloc: alloc, BatchSize: bs})
				if err != nil {
					t.Fatal(err)
				}
				bud := rr.(*reader).budget
				before := offHeapBytes.Load()
				got, err := drain(t, rr)
				if err != nil {
					t.Fatal(err)
				}
				if !rowsEq(got, want) {
					t.Fatalf("got %d rows, want %d; first got %v, want %v", len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
				}
				if n := bud.live.Load(); n != 0 {
					t.Fatalf("%d bytes still charged after the query", n)
				}
				if n := offHeapBytes.Load() - before; n != 0 {
					t.Fatalf("%d bytes still mapped after the query", n)
				}
			})
		}
	}
}

// The collector's blocks are unmapped and uncharged however the query
// ends: drained, released after the first result batch, cancelled while
// consuming, or over its memory limit.
func TestQuantileMemoryReleased(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	cols, _ := groupedValuesSource(r, alloc, slices.Repeat([]int{700}, 60), tF64)
	src := newSource(alloc, cols)
	defer src.release()
	plan := aggOf(scanOf(src.schema), []string{"g"}, "median:v", "quantile:v:0.25")
	tests := []struct {
		name     string
		limit    int64
		batches  int // result batches to read (-1: all)
		cancelAt int // cancel before serving this input batch (0: never)
		wantErr  bool
	}{
		{"drained", 0, -1, 0, false},
		{"released after one batch", 0, 1, 0, false},
		{"cancelled while consuming", 0, -1, 1000, true},
		{"over the limit", 48 << 10, -1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			src.onBatch = func(i int) {
				if tt.cancelAt > 0 && i == tt.cancelAt {
					cancel()
				}
			}
			defer func() { src.onBatch = nil }()
			rr, err := Execute(ctx, plan, src, Options{Alloc: alloc, BatchSize: 16, MemoryLimit: tt.limit})
			if err != nil {
				t.Fatal(err)
			}
			bud := rr.(*reader).budget
			before := offHeapBytes.Load()
			n := 0
			for (tt.batches < 0 || n < tt.batches) && rr.Next() {
				n++
			}
			if err := rr.Err(); (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tt.wantErr)
			}
			if !tt.wantErr && tt.batches < 0 && n != 4 {
				t.Fatalf("read %d result batches, want 4", n)
			}
			rr.Release()
			if n := bud.live.Load(); n != 0 {
				t.Fatalf("%d bytes still charged", n)
			}
			if n := offHeapBytes.Load() - before; n != 0 {
				t.Fatalf("%d bytes still mapped", n)
			}
		})
	}
}

// A collector whose query is never closed gives its mappings back when it
// becomes unreachable (the cleanup registered by newCollector).
func TestCollectorCleanup(t *testing.T) {
	freed := make(chan int64, 1)
	old := freeUnclosed
	freeUnclosed = func(s *blockStore) {
		old(s)
		freed <- s.mapped
	}
	defer func() { freeUnclosed = old }()
	b := &budget{}
	c := newCollector(arrow.PrimitiveTypes.Float64, &acct{b: b})
	c.grow(1)
	bld := array.NewFloat64Builder(memory.DefaultAllocator)
	defer bld.Release()
	for i := range 10000 {
		bld.Append(float64(i))
	}
	arr := bld.NewArray()
	defer arr.Release()
	if err := c.update(arr, make([]int32, arr.Len())); err != nil {
		t.Fatal(err)
	}
	if c.store.mapped == 0 {
		t.Fatal("nothing mapped")
	}
	c = nil
	for range 100 {
		runtime.GC()
		select {
		case left := <-freed:
			if left != 0 {
				t.Fatalf("%d bytes still mapped after the cleanup", left)
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("the store was not freed after its collector became unreachable")
}
