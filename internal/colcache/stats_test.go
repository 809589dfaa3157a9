package colcache

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// TestColumnStats: a cached dictionary column reports its distinct values
// and its longest value; an integer column reports its true minimum and maximum
// once its zones exist (after a zone-filtered scan), and nothing before;
// a plain string column reports nothing.
func TestColumnStats(t *testing.T) {
	c, ds, mem := openZoneDataset(t, rand.New(rand.NewPCG(3, 5)), 5_000)
	src := c.Wrap(ds).(*Source)
	read := func(col string) (distinct map[string]bool, lo, hi int64) {
		rr, err := src.Scan(context.Background(), catalog.ScanOptions{Columns: []string{col}, Alloc: mem})
		if err != nil {
			t.Fatal(err)
		}
		defer rr.Release()
		distinct, lo, hi = map[string]bool{}, math.MaxInt64, math.MinInt64
		for rr.Next() {
			a := rr.RecordBatch().Column(0)
			for i := range a.Len() {
				if a.IsNull(i) {
					continue
				}
				distinct[a.ValueStr(i)] = true
				if v, ok := a.(*array.Int64); ok {
					lo, hi = min(lo, v.Value(i)), max(hi, v.Value(i))
				}
			}
		}
		return distinct, lo, hi
	}
	if st, ok := src.ColumnStats("d"); !ok || st.Ranged {
		t.Fatalf("dictionary column: %+v %v", st, ok)
	} else {
		values, _, _ := read("d")
		longest := 0
		for v := range values {
			longest = max(longest, utf8.RuneCountInString(v))
		}
		if st.Distinct != int64(len(values)) || st.MaxChars != int64(longest) {
			t.Fatalf("dictionary column: %d distinct, %d characters at most reported; %d present, the longest %d", st.Distinct, st.MaxChars, len(values), longest)
		}
	}
	if st, ok := src.ColumnStats("s"); ok {
		t.Fatalf("plain string column: %+v", st)
	}
	if st, ok := src.ColumnStats("id"); ok {
		t.Fatalf("integer column before its zones exist: %+v", st)
	}
	spec := planner.Spec{Filters: []planner.FilterSpec{{Col: "id", Op: planner.OpGt, Value: []byte("10")}}}
	runSpecWith(t, spec, src.PlanSchema(), src, planner.OptimizeOptions{Zones: src})
	_, lo, hi := read("id")
	if st, ok := src.ColumnStats("id"); !ok || !st.Ranged || st.Min != lo || st.Max != hi || st.Distinct != 0 {
		t.Fatalf("integer column after a zone-filtered scan: %+v %v, want %d..%d", st, ok, lo, hi)
	}
	if st, ok := src.ColumnStats("nope"); ok {
		t.Fatalf("unknown column: %+v", st)
	}
	c.Purge()
	mem.AssertSize(t, 0)
}
