package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// Set operations over more distinct rows than a small memory budget holds
// spill (setop_spill.go) and still give the reference's rows exactly:
// spilling while the right input is counted, while the left input streams
// (intersect / except), and in either input of a union; with nulls, NaN,
// -0 and dictionary strings among the keys.
func TestSetOpSpill(t *testing.T) {
	rows := func(r *rand.Rand, n, distinct int, dict bool) []tcol {
		a, f, s := make([]any, n), make([]any, n), make([]any, n)
		for i := range n {
			k := r.IntN(distinct)
			a[i] = int64(k)
			switch k % 11 {
			case 0:
				f[i] = nil
			case 1:
				f[i] = math.NaN()
			case 2:
				f[i] = math.Copysign(0, float64(r.IntN(2)*2-1)) // -0 and +0 are one value
			default:
				f[i] = float64(k % 97)
			}
			if k%13 != 0 {
				s[i] = fmt.Sprintf("s%d", k%1500)
			}
		}
		st := arrow.DataType(arrow.BinaryTypes.String)
		if dict {
			st = dictI16
		}
		return []tcol{{"a", arrow.PrimitiveTypes.Int64, a}, {"f", arrow.PrimitiveTypes.Float64, f}, {"s", st, s}}
	}
	cases := []struct {
		name                string
		nl, dl, nr, dr      int
		dictLeft, dictRight bool
	}{
		{name: "big right input", nl: 3000, dl: 4000, nr: 20000, dr: 12000},
		{name: "big left input", nl: 20000, dl: 12000, nr: 3000, dr: 4000, dictLeft: true},
		{name: "both big", nl: 15000, dl: 9000, nr: 15000, dr: 9000, dictRight: true},
	}
	dir := t.TempDir()
	for ci, tc := range cases {
		for _, k := range setKinds {
			if k.kind == planner.SetUnion && k.all {
				continue // streams: nothing to spill
			}
			t.Run(fmt.Sprintf("%s/%v/all=%v", tc.name, k.kind, k.all), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(ci), 99))
				left, right := rows(r, tc.nl, tc.dl, tc.dictLeft), rows(r, tc.nr, tc.dr, tc.dictRight)
				want := refSetOp(k, tableRows(left, []bool{false, false, false}), tableRows(right, []bool{false, false, false}))
				mem := newAlloc()
				ls, rs := newSource(mem, left), newSource(mem, right)
				so, err := planner.NewSetOp(k.kind, k.all, &planner.Scan{Dataset: "l", Out: ls.schema}, &planner.Scan{Dataset: "r", Out: rs.schema})
				if err != nil {
					t.Fatal(err)
				}
				before := setopSpills.Load()
				got, err := run(t, so, ls, Options{Alloc: mem, BatchSize: 256, MemoryLimit: 384 << 10, SpillDir: dir,
					Sources: map[string]catalog.Source{"r": rs}})
				ls.release()
				rs.release()
				mem.AssertSize(t, 0)
				if err != nil {
					t.Fatal(err)
				}
				if setopSpills.Load() == before {
					t.Fatal("did not spill")
				}
				if !rowsEq(sortRows(got), sortRows(want)) {
					t.Fatalf("got %d rows, want %d", len(got), len(want))
				}
				if left, _ := os.ReadDir(dir); len(left) > 0 {
					t.Fatalf("spill files left: %v", left)
				}
			})
		}
	}
}
