package engine

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// TestDecimalWindowSums: sum and avg over running, sliding and whole
// partition frames of random decimal columns (float64 and float32, with
// nulls) equal the doubles nearest to the exact frame sums (math/big) of
// the texts the values were parsed from, bit for bit; a column with a value
// that is not decimal (1/3) keeps float sums, within 1e-9 of exact. Adding
// doubles misses many of the exact answers (counted: the test checks
// something).
func TestDecimalWindowSums(t *testing.T) {
	frames := []*planner.FrameSpec{
		{Start: "unbounded preceding"},
		{Start: "2 preceding", End: "1 following"},
		{Start: "1 following", End: "unbounded following"},
		nil, // the whole partition
	}
	checked, naiveMiss := 0, 0
	for trial := range uint64(40) {
		r := rand.New(rand.NewPCG(2026, trial))
		n := 1 + r.IntN(200)
		typ := []arrow.DataType{tF64, tF32}[trial%2]
		notDecimal := trial%10 == 9
		texts := make([]string, n)
		p, o, v := make([]any, n), make([]any, n), make([]any, n)
		perm := r.Perm(n) // distinct order keys: rows frames are then unambiguous
		for i := range n {
			p[i], o[i] = int64(r.IntN(4)), int64(perm[i])
			if r.IntN(6) == 0 {
				continue
			}
			d := r.IntN(4)
			mag := []int64{100, 100_000}[r.IntN(2)]
			texts[i] = strconv.FormatFloat(float64(r.Int64N(2*mag)-mag)/math.Pow10(d), 'f', d, 64)
			bits := 64
			if typ == tF32 {
				bits = 32
			}
			x, _ := strconv.ParseFloat(texts[i], bits)
			v[i] = x
		}
		if notDecimal {
			texts[0], v[0] = "", 1.0/3
			if typ == tF32 {
				v[0] = float64(float32(1.0 / 3))
			}
		}
		cols := []tcol{{name: "p", typ: tInt64, vals: p}, {name: "o", typ: tInt64, vals: o}, {name: "v", typ: typ, vals: v}}
		// The reference: each partition's rows in o order, with prefix sums
		// (exact, and counts) over them; pos is a row's place in its partition.
		parts := map[any][]int{}
		for i := range n {
			parts[p[i]] = append(parts[p[i]], i)
		}
		pos := make([]int, n)
		prefix, counts := map[any][]*big.Rat{}, map[any][]int64{}
		for key, part := range parts {
			slices.SortFunc(part, func(a, b int) int { return int(o[a].(int64) - o[b].(int64)) })
			ps, cs := []*big.Rat{new(big.Rat)}, []int64{0}
			for k, j := range part {
				pos[j] = k
				x, c := new(big.Rat), int64(0)
				switch {
				case v[j] == nil:
				case texts[j] == "":
					x.SetFloat64(v[j].(float64))
					c = 1
				default:
					x.SetString(texts[j])
					c = 1
				}
				ps, cs = append(ps, x.Add(x, ps[k])), append(cs, cs[k]+c)
			}
			prefix[key], counts[key] = ps, cs
		}
		for fi, fr := range frames {
			for _, fn := range []string{"sum", "avg"} {
				ws := planner.WindowSpec{Fn: planner.WindowFn(fn), Col: "v", PartitionBy: []string{"p"}, Frame: fr, As: "w"}
				if fr != nil {
					ws.OrderBy = []planner.OrderSpec{{Col: "o"}}
				}
				plan := buildPlan(t, planner.Spec{Windows: []planner.WindowSpec{ws}}, cols)
				alloc := newAlloc()
				src := newSource(alloc, cols)
				got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 1 + r.IntN(64)})
				src.release()
				alloc.AssertSize(t, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != n {
					t.Fatalf("trial %d: %d rows, want %d", trial, len(got), n)
				}
				for i, row := range got { // the output keeps input order: row i is row i
					part, k := parts[p[i]], pos[i]
					lo, hi := 0, len(part)
					switch fi {
					case 0:
						hi = k + 1
					case 1:
						lo, hi = max(k-2, 0), min(k+2, len(part))
					case 2:
						lo = min(k+1, len(part))
					}
					sum := new(big.Rat).Sub(prefix[p[i]][hi], prefix[p[i]][lo])
					cnt, naive := counts[p[i]][hi]-counts[p[i]][lo], 0.0
					for _, j := range part[lo:hi] {
						if v[j] != nil {
							naive += v[j].(float64)
						}
					}
					if cnt == 0 {
						if row[3] != nil {
							t.Fatalf("trial %d %s frame %d row %d: got %v for an empty frame", trial, fn, fi, i, row[3])
						}
						continue
					}
					if fn == "avg" {
						sum.Quo(sum, new(big.Rat).SetInt64(cnt))
						naive /= float64(cnt)
					}
					want, _ := sum.Float64()
					g, ok := row[3].(float64)
					switch {
					case !ok:
						t.Fatalf("trial %d %s frame %d row %d: got %v, want %v", trial, fn, fi, i, row[3], want)
					case notDecimal:
						if math.Abs(g-want) > 1e-9*max(1, math.Abs(want)) {
							t.Fatalf("trial %d (not decimal) %s frame %d row %d: got %v, want about %v", trial, fn, fi, i, g, want)
						}
					case g != want:
						t.Fatalf("trial %d (%s) %s frame %d row %d: got %v, want %v (exact %s)", trial, typ, fn, fi, i, g, want, sum.FloatString(12))
					default:
						checked++
						if naive != want {
							naiveMiss++
						}
					}
				}
			}
		}
	}
	if checked < 5_000 || naiveMiss < checked/20 {
		t.Fatalf("%d exact answers checked, %d of them missed by adding doubles", checked, naiveMiss)
	}
	t.Logf("%d exact answers checked, %d missed by adding doubles", checked, naiveMiss)
}
