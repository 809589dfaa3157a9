package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/planner"
)

// randMask returns a mask of n entries, each set with probability p.
func randMask(r *rand.Rand, n int, p float64) []bool {
	m := make([]bool, n)
	for i := range m {
		m[i] = r.Float64() < p
	}
	return m
}

func randBitmap(r *rand.Rand, nbits int) []byte {
	bm := make([]byte, (nbits+7)/8)
	for i := range bm {
		bm[i] = byte(r.IntN(256))
	}
	return bm
}

func TestMaskHelpers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 64, 100, 257} {
		for _, p := range []float64{0, 0.05, 0.5, 1} {
			for _, off := range []int{0, 1, 7, 8, 13} {
				name := fmt.Sprintf("n=%d/p=%v/off=%d", n, p, off)
				mask := randMask(r, n, p)
				var wantCount int
				var wantSel []int32
				for i, b := range mask {
					if b {
						wantCount++
						wantSel = append(wantSel, int32(i))
					}
				}
				if got := countTrue(mask); got != wantCount {
					t.Errorf("%s: countTrue = %d, want %d", name, got, wantCount)
				}
				if got := anyTrue(mask); got != (wantCount > 0) {
					t.Errorf("%s: anyTrue = %v", name, got)
				}
				if got := selectRows(mask, nil); !slices.Equal(got, wantSel) && len(got)+len(wantSel) > 0 {
					t.Errorf("%s: selectRows = %v, want %v", name, got, wantSel)
				}
				m := maskBytes(mask)
				for i := 0; i <= n; i += 1 + n/5 {
					want := n
					for j := i; j < n; j++ {
						if mask[j] {
							want = j
							break
						}
					}
					if got := nextSet(m, i); got != want {
						t.Errorf("%s: nextSet(%d) = %d, want %d", name, i, got, want)
					}
				}
				bm := randBitmap(r, off+n)
				for _, invert := range []bool{false, true} {
					got := slices.Clone(mask)
					andBitmap(got, bm, off, invert)
					valid := 0
					for i := range mask {
						bit := bm[(off+i)/8]>>((off+i)%8)&1 == 1
						if want := mask[i] && bit != invert; got[i] != want {
							t.Fatalf("%s: andBitmap(invert=%v)[%d] = %v, want %v", name, invert, i, got[i], want)
						}
						if mask[i] && bit {
							valid++
						}
					}
					if c := countTrueValid(mask, bm, off); c != valid {
						t.Errorf("%s: countTrueValid = %d, want %d", name, c, valid)
					}
				}
				fillTrue(mask)
				if countTrue(mask) != n {
					t.Errorf("%s: fillTrue left false entries", name)
				}
			}
		}
	}
}

// TestPlainStringKernels checks contains/starts_with/ends_with on plain
// string offsets (int32 and int64, sliced arrays, nulls, empty values,
// matches crossing value boundaries) against the strings package, for
// dense and sparse masks.
func TestPlainStringKernels(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "b", "ab", "ba", "", "aab", "x", "é"}
	needles := []string{"", "a", "b", "ab", "ba", "aba", "bab", "aab", "x", "é", "zz", "abab"}
	for iter := range 300 {
		n := r.IntN(200)
		vals := make([]any, n)
		for i := range vals {
			if r.IntN(10) == 0 {
				continue
			}
			var sb strings.Builder
			for range r.IntN(5) {
				sb.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			vals[i] = sb.String()
		}
		typ := tStr
		if iter%2 == 1 {
			typ = tLStr
		}
		b := makeBatch(alloc, []tcol{{"s", typ, vals}})
		lo := r.IntN(n/3 + 1)
		hi := n - r.IntN(n/3+1)
		hi = max(hi, lo)
		col := array.NewSlice(b.Column(0), int64(lo), int64(hi))
		for _, op := range []planner.Op{planner.OpContains, planner.OpStartsWith, planner.OpEndsWith} {
			for _, needle := range needles {
				p := planner.Predicate{Col: "s", Op: op, Value: &planner.Literal{Type: typ, Value: needle}}
				k := newPlainKernel(p)
				if k == nil {
					t.Fatalf("no plain kernel for %s", op)
				}
				for _, density := range []float64{1, 0.5, 0.05} {
					mask := randMask(r, hi-lo, density)
					want := slices.Clone(mask)
					for i := range want {
						s, _ := vals[lo+i].(string)
						if vals[lo+i] == nil {
							s = ""
						}
						switch op {
						case planner.OpContains:
							want[i] = want[i] && strings.Contains(s, needle)
						case planner.OpStartsWith:
							want[i] = want[i] && strings.HasPrefix(s, needle)
						default:
							want[i] = want[i] && strings.HasSuffix(s, needle)
						}
					}
					k.eval(col, mask)
					if !slices.Equal(mask, want) {
						t.Fatalf("iter %d %s %q density %v over %q: got %v want %v", iter, op, needle, density, vals[lo:hi], mask, want)
					}
				}
			}
		}
		col.Release()
		b.Release()
	}
}

// TestDictCodeKernel covers the code paths of dictionary predicates: no
// entry, one entry, several entries and out-of-range codes.
func TestDictCodeKernel(t *testing.T) {
	codes := []int32{0, 1, 2, 3, -1, 7, 1, 2}
	for _, tc := range []struct {
		name string
		ok   []bool
		want []bool
	}{
		{"none", []bool{false, false, false, false}, []bool{false, false, false, false, false, false, false, false}},
		{"one", []bool{false, true, false, false}, []bool{false, true, false, false, false, false, true, false}},
		{"two", []bool{true, false, true, false}, []bool{true, false, true, false, false, false, false, true}},
		{"all", []bool{true, true, true, true}, []bool{true, true, true, true, false, false, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &dictEntryCache{hit: -1}
			for i, b := range tc.ok {
				if b {
					c.hits++
					c.hit = int32(i)
				}
			}
			c.ok = append(slices.Clone(tc.ok), false)
			mask := []bool{true, true, true, true, true, true, true, true}
			andCodes(maskBytes(mask), codes, c)
			if !slices.Equal(mask, tc.want) {
				t.Fatalf("got %v want %v", mask, tc.want)
			}
		})
	}
}

// TestPredicateOrder: AND chains run cheap predicates first, keeping the
// relative order of equally cheap ones.
func TestPredicateOrder(t *testing.T) {
	schema := schemaOf([]tcol{{"i", tInt64, nil}, {"s", tStr, nil}, {"d", tDict, nil}})
	preds := []planner.Predicate{
		pred(schema, "s", "regex", "a"),
		pred(schema, "s", "contains", "a"),
		pred(schema, "d", "eq", "a"),
		pred(schema, "i", "gt", int64(1)),
		pred(schema, "s", "is_null"),
		pred(schema, "i", "lt", int64(9)),
	}
	got, err := compilePreds(preds, schema)
	if err != nil {
		t.Fatal(err)
	}
	var costs []int
	for _, p := range got {
		costs = append(costs, p.cost)
	}
	if want := []int{0, 1, 1, 2, 4, 6}; !slices.Equal(costs, want) {
		t.Fatalf("costs %v, want %v", costs, want)
	}
}

// TestFilterFastPathsDifferential runs the shapes with fast paths (count
// aggregates over filters, top-k over a projected filter, projected
// filters) on random data against the reference evaluator: more rows
// than the general suite (word-at-a-time loops), per-batch dictionaries,
// sliced arrays, all-null columns, OR groups and lone null tests.
func TestFilterFastPathsDifferential(t *testing.T) {
	for iter := range uint64(600) {
		filterFastCase(t, iter)
	}
}

func filterFastCase(t *testing.T, iter uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(77, iter))
	data := randData(r)
	nrows := r.IntN(300)
	for c := range data {
		allNull := r.IntN(8) == 0
		vs := make([]any, nrows)
		for i := range vs {
			if !allNull {
				vs[i] = randValue(r, data[c].typ)
			}
		}
		data[c].vals = vs
	}
	schema := schemaOf(data)
	rows := make([][]any, nrows)
	for i := range rows {
		rows[i] = make([]any, len(data))
		for c := range data {
			rows[i][c] = data[c].vals[i]
		}
	}
	var preds []planner.Predicate
	switch r.IntN(4) {
	case 0: // a lone null test (answered from null counts under count(*))
		op := planner.OpIsNull
		if r.IntN(2) == 0 {
			op = planner.OpIsNotNull
		}
		c := r.IntN(len(data))
		preds = append(preds, planner.Predicate{Col: data[c].name, Index: c, Op: op})
	default:
		for range 1 + r.IntN(3) {
			preds = append(preds, randPred(r, schema))
		}
	}
	node := planner.Node(filterOf(scanOf(schema), preds...))
	want := refFilter(rows, preds)
	st := &refState{}
	switch r.IntN(3) {
	case 0: // count aggregates without keys
		var aggs []string
		for range 1 + r.IntN(3) {
			if r.IntN(2) == 0 {
				aggs = append(aggs, "count:*")
			} else {
				aggs = append(aggs, "count:"+data[r.IntN(len(data))].name)
			}
		}
		a := aggOf(node, nil, aggs...)
		fields := slices.Clone(a.Out.Fields())
		for i := range a.Aggs {
			a.Aggs[i].Name = fmt.Sprintf("a%d", i)
			fields[i].Name = a.Aggs[i].Name
		}
		a.Out = arrow.NewSchema(fields, nil)
		want = refAgg(st, want, a)
		node = a
	case 1: // projected filter, maybe under a top-k
		idx := r.Perm(len(data))[:1+r.IntN(len(data))]
		var names []string
		for _, i := range idx {
			names = append(names, data[i].name)
		}
		node = projectOf(node, names...)
		want = refProject(want, idx)
		if r.IntN(3) > 0 {
			s := &planner.Sort{Input: node}
			for _, i := range r.Perm(len(idx))[:1+r.IntN(min(2, len(idx)))] {
				s.Keys = append(s.Keys, planner.SortKey{Col: names[i], Index: i, Desc: r.IntN(2) == 0})
			}
			node = s
			want = refSort(want, s.Keys)
			off, cnt := int64(r.IntN(5)), int64(r.IntN(40))
			node = limitOf(node, off, cnt)
			want = refLimit(want, off, cnt)
		}
	default: // count over a projected filter
		idx := r.Perm(len(data))[:1+r.IntN(len(data))]
		var names []string
		for _, i := range idx {
			names = append(names, data[i].name)
		}
		node = projectOf(node, names...)
		want = refProject(want, idx)
		a := aggOf(node, nil, "count:*", "count:"+names[r.IntN(len(names))])
		want = refAgg(st, want, a)
		node = a
	}
	if want == nil {
		want = [][]any{}
	}
	alloc := newAlloc()
	src := &memSource{schema: schema, noCopy: r.IntN(2) == 0}
	for lo := 0; lo < nrows || lo == 0; {
		hi := min(nrows, lo+1+r.IntN(120))
		part := make([]tcol, len(data))
		for c := range data {
			part[c] = tcol{data[c].name, data[c].typ, data[c].vals[lo:hi]}
		}
		src.batches = append(src.batches, makeBatch(alloc, part))
		lo = hi
		if hi == nrows {
			break
		}
	}
	bs := []int{1, 7, 8, 9, 64, 100, 1000}[r.IntN(7)]
	got, err := run(t, node, src, Options{Alloc: alloc, BatchSize: bs})
	src.release()
	alloc.AssertSize(t, 0)
	if err != nil {
		t.Fatalf("iter %d: %v\nplan:\n%s", iter, err, planner.String(node))
	}
	if got == nil {
		got = [][]any{}
	}
	if !rowsClose(got, want) {
		t.Fatalf("iter %d (batch size %d): plan:\n%sgot\n%swant\n%s", iter, bs, planner.String(node), fmtRows(got), fmtRows(want))
	}
}
