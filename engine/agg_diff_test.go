package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/planner"
)

// Tests of the aggregate's hash tables, value numbering, selection and
// grouped aggregates over batches whose dictionaries differ.

func TestU64Map(t *testing.T) {
	tests := []struct {
		name string
		keys func(i int) uint64
		n    int
	}{
		{"small ints", func(i int) uint64 { return uint64(i) }, 5000},
		{"float exponents", func(i int) uint64 { return math.Float64bits(float64(i)) }, 5000},
		{"high bits", func(i int) uint64 { return uint64(i) << 40 }, 3000},
		{"all ones and zero", func(i int) uint64 { return []uint64{^uint64(0), 0, 1, ^uint64(0) - 1}[i] }, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &acct{b: &budget{}}
			m := newU64Map(a)
			for round := range 2 {
				for i := range tt.n {
					v, added := m.getOrAdd(tt.keys(i), int32(m.n))
					if added != (round == 0) || v != int32(i) {
						t.Fatalf("round %d key %d: got (%d, %v), want (%d, %v)", round, i, v, added, i, round == 0)
					}
				}
			}
			if m.n != tt.n || a.n != m.bytes() {
				t.Fatalf("n = %d (want %d), charged %d (table %d)", m.n, tt.n, a.n, m.bytes())
			}
		})
	}
}

func TestU64Set(t *testing.T) {
	a := &acct{b: &budget{}}
	s := newU64Set(a)
	want := map[uint64]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		k := uint64(r.IntN(3000))
		switch r.IntN(10) {
		case 0:
			k = emptyKey
		case 1:
			k <<= 35
		}
		if got := s.add(k); got != !want[k] {
			t.Fatalf("add(%#x) = %v, want %v", k, got, !want[k])
		}
		want[k] = true
	}
	if a.n != int64(len(s.keys))*8 {
		t.Fatalf("charged %d, table %d", a.n, len(s.keys)*8)
	}
}

func TestSelectKth(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	special := []float64{math.Inf(-1), math.Inf(1), 0, math.Copysign(0, -1), 1, -1, 2.5}
	gens := map[string]func(n int) []float64{
		"random": func(n int) []float64 {
			vs := make([]float64, n)
			for i := range vs {
				vs[i] = r.NormFloat64()
			}
			return vs
		},
		"few distinct": func(n int) []float64 {
			vs := make([]float64, n)
			for i := range vs {
				vs[i] = special[r.IntN(len(special))]
			}
			return vs
		},
		"constant": func(n int) []float64 {
			vs := make([]float64, n)
			for i := range vs {
				vs[i] = 7
			}
			return vs
		},
		"sorted": func(n int) []float64 {
			vs := make([]float64, n)
			for i := range vs {
				vs[i] = float64(i)
			}
			return vs
		},
		"reversed": func(n int) []float64 {
			vs := make([]float64, n)
			for i := range vs {
				vs[i] = float64(n - i)
			}
			return vs
		},
		"organ pipe": func(n int) []float64 {
			vs := make([]float64, n)
			for i := range vs {
				vs[i] = float64(min(i, n-i))
			}
			return vs
		},
	}
	for name, gen := range gens {
		t.Run(name, func(t *testing.T) {
			for _, n := range []int{1, 2, 3, 16, 17, 18, 100, 1000, 5000} {
				for range 5 {
					vs := gen(n)
					sorted := slices.Clone(vs)
					slices.Sort(sorted)
					k := r.IntN(n)
					got := selectKth(vs, k)
					if got != sorted[k] {
						t.Fatalf("n %d k %d: got %v, want %v", n, k, got, sorted[k])
					}
					for i, v := range vs {
						if (i < k && v > got) || (i > k && v < got) {
							t.Fatalf("n %d k %d: vs[%d] = %v is on the wrong side of %v", n, k, i, v, got)
						}
					}
				}
			}
		})
	}
}

// sortedQuantile is the documented quantile on sorted values (numpy's
// "linear" method with the infinity rules), written independently of
// quantileSelect.
func sortedQuantile(vs []float64, q float64) float64 {
	pos := q * float64(len(vs)-1)
	lo := int(math.Floor(pos))
	if lo >= len(vs)-1 {
		return vs[len(vs)-1]
	}
	a, b, frac := vs[lo], vs[lo+1], pos-float64(lo)
	switch {
	case frac == 0 || a == b:
		return a
	case math.IsInf(a, -1) && math.IsInf(b, 1):
		return math.NaN()
	case math.IsInf(a, -1):
		return a
	case math.IsInf(b, 1):
		return b
	}
	return a + (b-a)*frac
}

func TestQuantileSelect(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pool := []float64{math.Inf(-1), math.Inf(1), 0, math.Copysign(0, -1), 1, -1, 2.5, 1e300, -3}
	for _, q := range []float64{0, 0.1, 0.25, 0.5, 0.75, 0.9, 1, 1.0 / 3} {
		for _, n := range []int{1, 2, 3, 4, 7, 20, 33, 200} {
			for range 20 {
				vs := make([]float64, n)
				for i := range vs {
					if r.IntN(3) == 0 {
						vs[i] = pool[r.IntN(len(pool))]
					} else {
						vs[i] = float64(r.IntN(50)) / 4
					}
				}
				sorted := slices.Clone(vs)
				slices.Sort(sorted)
				want := sortedQuantile(sorted, q)
				got := quantileSelect(slices.Clone(vs), q)
				if !(got == want || (math.IsNaN(got) && math.IsNaN(want))) {
					t.Fatalf("q %v values %v: got %v, want %v", q, vs, got, want)
				}
			}
		}
	}
}

// aggDiffTypes are the column types of the grouped-aggregate differential
// test: dictionary strings with int32, int16 and int8 indices, plain
// strings and fixed-width types with nulls, NaN, ±Inf and ±0.
var aggDiffTypes = []arrow.DataType{tDict, tDict8, tDict16, tStr, tLStr, tInt64, tInt8, tF64, tF32, tBool, tDate}

// dictBatchCol encodes vals (strings or nil) as a dictionary array of type
// dt with a dictionary of its own: the used strings in random order, plus
// unused entries (many, sometimes far more than the rows).
func dictBatchCol(r *rand.Rand, mem memory.Allocator, dt *arrow.DictionaryType, vals []any) arrow.Array {
	var dict []any
	seen := map[string]int{}
	for _, v := range vals {
		if s, ok := v.(string); ok {
			if _, dup := seen[s]; !dup {
				seen[s] = -1
				dict = append(dict, s)
			}
		}
	}
	extra := r.IntN(4)
	if maxCode(dt) > 6000 && r.IntN(5) == 0 {
		extra = 5000 + r.IntN(100) // larger than 2*rows+4096: resolved per row
	}
	for i := range extra {
		dict = append(dict, fmt.Sprintf("unused-%d", i))
	}
	if int64(len(dict)) > maxCode(dt) {
		dict = dict[:maxCode(dt)+1]
	}
	r.Shuffle(len(dict), func(i, j int) { dict[i], dict[j] = dict[j], dict[i] })
	for i, d := range dict {
		if _, ok := seen[d.(string)]; ok {
			seen[d.(string)] = i
		}
	}
	codes := make([]any, len(vals))
	for i, v := range vals {
		if s, ok := v.(string); ok {
			codes[i] = seen[s]
		}
	}
	return dictArray(mem, dt, codes, dict)
}

// aggDiffSource cuts the data into batches of random sizes; dictionary
// columns get a different dictionary in every batch.
func aggDiffSource(r *rand.Rand, mem memory.Allocator, data []tcol) *memSource {
	schema := schemaOf(data)
	n := len(data[0].vals)
	var batches []arrow.RecordBatch
	for lo := 0; lo < n; {
		hi := min(n, lo+1+r.IntN(300))
		arrs := make([]arrow.Array, len(data))
		for c, col := range data {
			part := col.vals[lo:hi]
			if dt, ok := col.typ.(*arrow.DictionaryType); ok {
				arrs[c] = dictBatchCol(r, mem, dt, part)
				continue
			}
			b := array.NewBuilder(mem, col.typ)
			for _, v := range part {
				appendValue(b, v)
			}
			arrs[c] = b.NewArray()
			b.Release()
		}
		batches = append(batches, array.NewRecordBatch(schema, arrs, int64(hi-lo)))
		for _, a := range arrs {
			a.Release()
		}
		lo = hi
	}
	return &memSource{schema: schema, batches: batches, noCopy: true}
}

// Grouped aggregates over batches with differing dictionaries, against the
// reference evaluator (refAgg): one to three keys of every type, every
// aggregate function, nulls in keys and values.
func TestAggregateDiffBatches(t *testing.T) {
	for iter := range uint64(300) {
		r := rand.New(rand.NewPCG(77, iter))
		ncols := 2 + r.IntN(4)
		nrows := r.IntN(2000)
		if iter%10 == 0 {
			nrows = r.IntN(3) // empty and tiny inputs
		}
		var data []tcol
		for c := range ncols {
			dt := aggDiffTypes[r.IntN(len(aggDiffTypes))]
			vs := make([]any, nrows)
			for i := range vs {
				vs[i] = randValue(r, dt)
			}
			data = append(data, tcol{name: fmt.Sprintf("c%d", c), typ: dt, vals: vs})
		}
		scan := &planner.Scan{Dataset: "t", Out: schemaOf(data)}
		checkAggRef(t, r, data, randAgg(r, scan), fmt.Sprintf("iter %d", iter))
	}
}

// Keys of three columns go through two levels of pairs, four and more
// through packed value ids: both give the groups in first-seen order, with
// null and NaN keys as values and -0 equal to +0.
func TestGroupKeyWidths(t *testing.T) {
	cols := []tcol{
		{"a", tDict, vals("x", "y", nil, "x", "y", nil, "x", "x")},
		{"b", tInt64, vals(int64(1), int64(1), nil, int64(1), int64(2), nil, int64(1), int64(1))},
		{"c", tF64, vals(0.0, math.NaN(), 1.0, math.Copysign(0, -1), math.NaN(), 1.0, 0.0, 0.0)},
		{"d", tStr, vals("p", "p", "p", "p", "p", "p", "q", "p")},
		{"e", tBool, vals(true, true, nil, true, false, nil, true, true)},
	}
	tests := []struct {
		keys []string
		want [][]any
	}{
		{[]string{"a"}, [][]any{{"x", int64(4)}, {"y", int64(2)}, {nil, int64(2)}}},
		{[]string{"a", "b"}, [][]any{{"x", int64(1), int64(4)}, {"y", int64(1), int64(1)}, {nil, nil, int64(2)}, {"y", int64(2), int64(1)}}},
		{[]string{"a", "b", "c"}, [][]any{{"x", int64(1), 0.0, int64(4)}, {"y", int64(1), math.NaN(), int64(1)}, {nil, nil, 1.0, int64(2)}, {"y", int64(2), math.NaN(), int64(1)}}},
		{[]string{"a", "b", "c", "d"}, [][]any{{"x", int64(1), 0.0, "p", int64(3)}, {"y", int64(1), math.NaN(), "p", int64(1)}, {nil, nil, 1.0, "p", int64(2)}, {"y", int64(2), math.NaN(), "p", int64(1)}, {"x", int64(1), 0.0, "q", int64(1)}}},
		{[]string{"a", "b", "c", "d", "e"}, [][]any{{"x", int64(1), 0.0, "p", true, int64(3)}, {"y", int64(1), math.NaN(), "p", true, int64(1)}, {nil, nil, 1.0, "p", nil, int64(2)}, {"y", int64(2), math.NaN(), "p", false, int64(1)}, {"x", int64(1), 0.0, "q", true, int64(1)}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(len(tt.keys)), func(t *testing.T) {
			for _, bs := range []int{1, 3, 100} {
				alloc := newAlloc()
				src := newSource(alloc, cols)
				got, err := run(t, aggOf(scanOf(src.schema), tt.keys, "count:*"), src, Options{Alloc: alloc, BatchSize: bs})
				src.release()
				alloc.AssertSize(t, 0)
				if err != nil {
					t.Fatal(err)
				}
				if !rowsEq(got, tt.want) {
					t.Fatalf("batch size %d: got\n%swant\n%s", bs, fmtRows(got), fmtRows(tt.want))
				}
			}
		})
	}
}

// median, quantile and count_distinct on groups with no values, only
// nulls, only NaN, a single value, infinities and q at 0 and 1.
func TestQuantileDistinctEdgeGroups(t *testing.T) {
	inf := math.Inf(1)
	cols := []tcol{
		{"g", tDict, vals("null", "nan", "one", "inf", "inf", "inf", "nan", "mix", "mix", "mix", "mix", "null")},
		{"v", tF64, vals(nil, math.NaN(), 2.5, -inf, inf, 1.0, math.NaN(), math.Copysign(0, -1), 0.0, math.NaN(), 4.0, nil)},
		{"s", tDict, vals(nil, "a", "b", "a", "a", nil, "b", "a", "b", "c", "a", nil)},
	}
	want := [][]any{
		// g, median, q0, q1, quantile 0.25, count_distinct v, count_distinct s
		{"null", nil, nil, nil, nil, int64(0), int64(0)},
		{"nan", math.NaN(), math.NaN(), math.NaN(), math.NaN(), int64(1), int64(2)},
		{"one", 2.5, 2.5, 2.5, 2.5, int64(1), int64(1)},
		{"inf", 1.0, -inf, inf, -inf, int64(3), int64(1)},
		{"mix", 0.0, 0.0, 4.0, 0.0, int64(3), int64(3)},
	}
	for _, bs := range []int{1, 2, 5, 100} {
		alloc := newAlloc()
		src := newSource(alloc, cols)
		plan := aggOf(scanOf(src.schema), []string{"g"}, "median:v", "quantile:v:0", "quantile:v:1", "quantile:v:0.25", "count_distinct:v", "count_distinct:s")
		got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: bs})
		src.release()
		alloc.AssertSize(t, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !rowsEq(got, want) {
			t.Fatalf("batch size %d: got\n%swant\n%s", bs, fmtRows(got), fmtRows(want))
		}
	}
}

// Id spaces that outgrow the direct tables mid-stream: count_distinct sets
// move from bits to the hash set, two-column keys from the direct table to
// the pair map, with the same results.
func TestAggregateLargeIDSpaces(t *testing.T) {
	const n = 30000
	a, b, k, s := make([]any, n), make([]any, n), make([]any, n), make([]any, n)
	for i := range n {
		a[i], b[i] = int64(i%1000), fmt.Sprintf("b%d", (i*7)%997)
		k[i], s[i] = int64(i), fmt.Sprintf("s%d", i%4001)
		if i%11 == 0 {
			k[i] = nil
		}
	}
	data := []tcol{{"a", tInt64, a}, {"b", tDict, b}, {"k", tInt64, k}, {"s", tDict, s}}
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{a[i], b[i], k[i], s[i]}
	}
	for _, keys := range [][]string{{"a"}, {"a", "b"}, {"b", "a", "s"}} {
		for _, bs := range []int{1000, 1 << 16} {
			t.Run(fmt.Sprint(keys, bs), func(t *testing.T) {
				alloc := newAlloc()
				src := newSource(alloc, data)
				plan := aggOf(scanOf(src.schema), keys, "count_distinct:k", "count_distinct:s", "count:*")
				want := refAgg(&refState{}, rows, plan)
				got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: bs})
				src.release()
				alloc.AssertSize(t, 0)
				if err != nil {
					t.Fatal(err)
				}
				if !rowsEq(got, want) {
					t.Fatalf("got %d rows, want %d; first got %v, want %v", len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
				}
			})
		}
	}
}

// The direct tables switch to hash tables as their shapes grow.
func TestDenseTablesGiveWay(t *testing.T) {
	a := &acct{b: &budget{}}
	d := &distinctBits{acct: a}
	if !d.fit(10, 100) || d.fit(5000, 5000) {
		t.Fatal("distinctBits: want small shapes to fit and 5000 x 5000 not")
	}
	d.release()
	p := newPairDense(a)
	if !p.fit(10, 30) || p.fit(1000, 997) || p.fit(1, 1) {
		t.Fatal("pairDense: want small shapes to fit, 1000 x 997 not, and the table to stay off")
	}
	if a.n != p.m.bytes() {
		t.Fatalf("charged %d bytes, want the map's %d", a.n, p.m.bytes())
	}
}
