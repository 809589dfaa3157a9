package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// checkAggRef runs plan over data (cut into batches of random sizes,
// dictionaries differing per batch) and compares with the reference
// evaluator; the allocator must end empty.
func checkAggRef(t *testing.T, r *rand.Rand, data []tcol, plan *planner.Aggregate, label string) {
	t.Helper()
	rows := make([][]any, len(data[0].vals))
	for i := range rows {
		rows[i] = make([]any, len(data))
		for c := range data {
			rows[i][c] = data[c].vals[i]
		}
	}
	st := &refState{}
	want := refAgg(st, rows, plan)
	alloc := newAlloc()
	src := aggDiffSource(r, alloc, data)
	bs := []int{1 << 16, 1 + r.IntN(50)}[r.IntN(2)]
	got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: bs})
	src.release()
	alloc.AssertSize(t, 0)
	label = fmt.Sprintf("%s (batch size %d) plan:\n%s", label, bs, planner.String(plan))
	if st.err != "" {
		if err == nil {
			t.Fatalf("%s: no error, want %s", label, st.err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !rowsClose(got, want) {
		t.Fatalf("%s\ngot\n%swant\n%s", label, fmtRows(got), fmtRows(want))
	}
}

// Keys of four to seven columns of every type (packed keys), rows drawn
// from a small pool of tuples so that groups repeat, nulls anywhere.
func TestAggregateDiffManyKeys(t *testing.T) {
	for iter := range uint64(150) {
		r := rand.New(rand.NewPCG(91, iter))
		nkeys := 4 + r.IntN(4)
		nrows := r.IntN(1500)
		if iter%10 == 0 {
			nrows = r.IntN(3)
		}
		pool := make([][]any, 1+r.IntN(60))
		types := make([]arrow.DataType, nkeys+1)
		for c := range types {
			types[c] = aggDiffTypes[r.IntN(len(aggDiffTypes))]
		}
		types[nkeys] = []arrow.DataType{tInt64, tF64}[r.IntN(2)]
		for p := range pool {
			pool[p] = make([]any, nkeys+1)
			for c, dt := range types {
				pool[p][c] = randValue(r, dt)
			}
		}
		data := make([]tcol, nkeys+1)
		for c, dt := range types {
			data[c] = tcol{name: fmt.Sprintf("c%d", c), typ: dt, vals: make([]any, nrows)}
		}
		data[nkeys].name = "v"
		for i := range nrows {
			tuple := pool[r.IntN(len(pool))]
			for c := range data {
				v := tuple[c]
				if c == nkeys || r.IntN(40) == 0 { // fresh values now and then
					v = randValue(r, types[c])
				}
				data[c].vals[i] = v
			}
		}
		var keys []string
		for _, c := range r.Perm(nkeys) {
			keys = append(keys, data[c].name)
		}
		other := data[r.IntN(nkeys)].name
		plan := aggOf(scanOf(schemaOf(data)), keys, "count:*", "sum:v", "min:"+other, "count_distinct:"+other)
		checkAggRef(t, r, data, plan, fmt.Sprintf("iter %d", iter))
	}
}

// A null in every key position (and everywhere) is a group of its own, for
// dictionary and plain strings alike.
func TestPackedNullPositions(t *testing.T) {
	for _, strType := range []arrow.DataType{tDict, tStr, tDict16} {
		base := []any{"x", "y", int64(3), 2.5, true, int32(1)}
		types := []arrow.DataType{strType, tStr, tInt64, tF64, tBool, tDate}
		var tuples [][]any
		tuples = append(tuples, base)
		for p := range base {
			tu := append([]any(nil), base...)
			tu[p] = nil
			tuples = append(tuples, tu, tu, base)
		}
		tuples = append(tuples, make([]any, len(base)))
		data := make([]tcol, len(base))
		for c := range data {
			data[c] = tcol{name: fmt.Sprintf("k%d", c), typ: types[c]}
			for _, tu := range tuples {
				data[c].vals = append(data[c].vals, tu[c])
			}
		}
		var keys []string
		for _, c := range data {
			keys = append(keys, c.name)
		}
		r := rand.New(rand.NewPCG(5, 5))
		plan := aggOf(scanOf(schemaOf(data)), keys, "count:*")
		for range 4 {
			checkAggRef(t, r, data, plan, fmt.Sprint(strType))
		}
	}
}

// Fields widen mid-stream (ids of one column outgrowing their bits while
// groups exist) and keys spill into a second word (five columns of 70k
// distinct values: 5 x 18 bits).
func TestPackedRelayout(t *testing.T) {
	const n = 70_000
	cols := make([]tcol, 6)
	for c := range cols {
		cols[c] = tcol{name: fmt.Sprintf("k%d", c), typ: tInt64, vals: make([]any, n)}
	}
	cols[5] = tcol{name: "s", typ: tDict, vals: make([]any, n)}
	for i := range n {
		cols[0].vals[i] = int64(i)
		cols[1].vals[i] = int64((i * 7) % n)
		cols[2].vals[i] = int64(-i)
		cols[3].vals[i] = int64(i / 3) // repeats
		cols[4].vals[i] = int64((i * 13) % n)
		cols[5].vals[i] = fmt.Sprint(i % 5)
		if i%17 == 0 {
			cols[i%5].vals[i] = nil
		}
	}
	for _, keys := range [][]string{{"k3", "s", "k0", "k2"}, {"k0", "k1", "k2", "k3", "k4", "s"}} {
		t.Run(fmt.Sprint(len(keys)), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(keys))))
			plan := aggOf(scanOf(schemaOf(cols)), keys, "count:*", "sum:k3")
			checkAggRef(t, r, cols, plan, "relayout")
		})
	}
}

// Fields stay within 32 bits and never straddle words, even for ids near
// 2^31 (not cheap to reach with data: the layout is checked directly).
func TestPackedLayoutEdges(t *testing.T) {
	a := &acct{b: &budget{}}
	types := []arrow.DataType{tInt64, tInt64, tInt64, tInt64, tInt64}
	p := newPackedKeys(types, false, a)
	for c, n := range []int32{1<<31 - 1, 1 << 30, 3, 1<<16 + 1, 1 << 31 / 2} {
		p.vids[c].n = n
	}
	p.layout()
	if !p.fits() {
		t.Fatal("layout does not fit the ids")
	}
	for c, w := range p.width {
		if w > 32 || p.shift[c]+w > 64 {
			t.Fatalf("column %d: width %d at bit %d", c, w, p.shift[c])
		}
		k := make([]uint64, p.kw)
		id := uint64(p.vids[c].n - 1)
		k[p.word[c]] = id << p.shift[c]
		if got := p.id(k, c); uint64(got) != id {
			t.Fatalf("column %d: id %d reads back as %d", c, id, got)
		}
	}
	if p.kw != 2 { // widths 31, 31, 2, 17, 31: first fit gives 31+31 | 2+17+31
		t.Fatalf("%d words, want 2", p.kw)
	}
}

// The aggregate gives the same rows with its states on a worker goroutine
// as on one goroutine, errors included (a sum overflowing in a late batch).
func TestAggregatePipelinedSameAsSerial(t *testing.T) {
	defer func(f func() bool) { pipelined = f }(pipelined)
	for iter := range uint64(20) {
		r := rand.New(rand.NewPCG(3, iter))
		n := 3000 + r.IntN(3000)
		k, s, v := make([]any, n), make([]any, n), make([]any, n)
		for i := range n {
			k[i], s[i], v[i] = int64(r.IntN(50)), diffStrings[r.IntN(len(diffStrings))], int64(r.IntN(1000))
			if r.IntN(9) == 0 {
				k[i] = nil
			}
		}
		if iter%4 == 0 {
			v[n-1] = int64(math.MaxInt64) // overflows the sum of its group
		}
		data := []tcol{{"k", tInt64, k}, {"s", tDict, s}, {"v", tInt64, v}}
		keys := [][]string{nil, {"k"}, {"k", "s"}, {"s", "k", "v"}}[iter%4]
		plan := aggOf(scanOf(schemaOf(data)), keys, "sum:v", "count:*", "median:v", "count_distinct:s", "min:s")
		var out [2][][]any
		var errs [2]error
		for mode := range 2 {
			pipelined = func() bool { return mode == 1 }
			alloc := newAlloc()
			src := newSource(alloc, data)
			out[mode], errs[mode] = run(t, plan, src, Options{Alloc: alloc, BatchSize: 256 + r.IntN(1000)})
			src.release()
			alloc.AssertSize(t, 0)
		}
		if (errs[0] == nil) != (errs[1] == nil) || (errs[0] != nil && errs[0].Error() != errs[1].Error()) {
			t.Fatalf("iter %d: serial error %v, pipelined %v", iter, errs[0], errs[1])
		}
		if iter%4 == 0 && len(keys) == 0 && errs[0] == nil {
			t.Fatalf("iter %d: want the sum to overflow", iter)
		}
		if errs[0] == nil && !rowsEq(out[0], out[1]) {
			t.Fatalf("iter %d: serial\n%spipelined\n%s", iter, fmtRows(out[0]), fmtRows(out[1]))
		}
	}
}
