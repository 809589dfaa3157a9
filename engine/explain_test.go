package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// unopenable is a source whose Scan fails: Explain must not open it.
type unopenable struct{}

func (unopenable) Scan(context.Context, catalog.ScanOptions) (array.RecordReader, error) {
	return nil, errors.New("explain opened the source")
}

// explainData is 1,000 rows: x 0..999, g a dictionary string a/b/c/d by x % 4.
func explainData() []tcol {
	xs, gs := make([]any, 1000), make([]any, 1000)
	for i := range xs {
		xs[i], gs[i] = int64(i), string(rune('a'+i%4))
	}
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	return []tcol{{"x", arrow.PrimitiveTypes.Int64, xs}, {"g", dict, gs}}
}

// TestExplainAndProfile: Explain describes the operators Execute builds
// (fusions as one operator, with all their plan nodes; dictionary
// kernels noted) without opening the source, and a profiled execution
// (100-row batches) reports the rows each operator really returned, with
// rows in equal to the inputs' rows out (a scan's: the rows the source read).
func TestExplainAndProfile(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	src := newSource(alloc, explainData())
	defer src.release()
	scan := scanOf(src.schema)
	isB := func() planner.Predicate { return pred(scan.Out, "g", planner.OpEq, "b") }
	cases := []struct {
		name  string
		plan  planner.Node
		ops   []string // operator names, pre-order
		nodes []int    // plan nodes per operator
		rows  []int64  // rows out per operator
	}{
		{"filter+count", aggOf(filterOf(scan, isB()), nil, "count:*"),
			[]string{"filter+count", "scan"}, []int{2, 1}, []int64{1, 1000}},
		{"count", aggOf(scan, nil, "count:*"), []string{"count", "scan"}, []int{1, 1}, []int64{1, 1000}},
		{"filter+project", projectOf(filterOf(scan, isB()), "x"),
			[]string{"filter+project", "scan"}, []int{2, 1}, []int64{250, 1000}},
		{"filter+top-k", limitOf(sortOf(filterOf(scan, isB()), "-x"), 0, 3),
			[]string{"limit", "filter+top-k sort", "scan"}, []int{1, 2, 1}, []int64{3, 3, 1000}},
		{"sort", limitOf(sortOf(filterOf(scan, isB()), "-x"), 0, 500),
			[]string{"limit", "top-k sort", "filter", "scan"}, []int{1, 1, 1, 1}, []int64{250, 250, 250, 1000}},
		{"aggregate", sortOf(aggOf(filterOf(scan, pred(scan.Out, "x", planner.OpLt, int64(500))), []string{"g"}, "sum:x"), "g"),
			[]string{"sort", "hash aggregate", "filter", "scan"}, []int{1, 1, 1, 1}, []int64{4, 4, 500, 1000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := Explain(tc.plan, unopenable{}, Options{BatchSize: 100})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			var nodes []int
			ex.Walk(func(o *Operator, _ int) {
				names, nodes = append(names, o.Name), append(nodes, len(o.Nodes))
				if o.Stats != nil {
					t.Errorf("%s: Explain has stats", o.Name)
				}
			})
			if !slices.Equal(names, tc.ops) || !slices.Equal(nodes, tc.nodes) {
				t.Fatalf("operators %v with %v nodes, want %v with %v\n%s", names, nodes, tc.ops, tc.nodes, ex)
			}
			if strings.Contains(tc.name, "filter") && !strings.Contains(ex.String(), "dictionary kernel on g") {
				t.Errorf("no dictionary kernel noted:\n%s", ex)
			}
			prof := &Profile{}
			r, err := Execute(context.Background(), tc.plan, src, Options{Alloc: alloc, BatchSize: 100, Profile: prof})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := drain(t, r); err != nil {
				t.Fatal(err)
			}
			root := prof.Root()
			var rows []int64
			root.Walk(func(o *Operator, _ int) {
				rows = append(rows, o.Stats.RowsOut)
				var in int64
				for _, c := range o.Inputs {
					in += c.Stats.RowsOut
				}
				if len(o.Inputs) == 0 { // a scan: the rows the source read
					in = 1000
				}
				if o.Stats.RowsIn != in || o.Stats.PeakBytes <= 0 || o.Stats.Time < 0 {
					t.Errorf("%s: stats %+v, inputs returned %d rows", o.Name, o.Stats, in)
				}
			})
			if !slices.Equal(rows, tc.rows) {
				t.Errorf("rows out %v, want %v", rows, tc.rows)
			}
			if root.String() != ex.String() {
				t.Errorf("profiled tree\n%s differs from Explain's\n%s", root, ex)
			}
		})
	}
}

// BenchmarkProfileOverhead runs a filtered group-by over 1M rows (64Ki-row
// batches) plain and with a Profile: what explain analyze costs.
func BenchmarkProfileOverhead(b *testing.B) {
	alloc := newAlloc()
	const n = 1 << 20
	xs, gs := make([]any, n), make([]any, n)
	for i := range xs {
		xs[i], gs[i] = int64(i), int64(i%64)
	}
	src := newSource(alloc, []tcol{{"x", arrow.PrimitiveTypes.Int64, xs}, {"g", arrow.PrimitiveTypes.Int64, gs}})
	defer src.release()
	src.noCopy = true
	scan := scanOf(src.schema)
	plan := aggOf(filterOf(scan, pred(scan.Out, "x", planner.OpGte, int64(n/4))), []string{"g"}, "sum:x", "count:*")
	for _, profiled := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "profiled"}[profiled], func(b *testing.B) {
			for b.Loop() {
				opts := Options{Alloc: alloc}
				if profiled {
					opts.Profile = &Profile{}
				}
				r, err := Execute(context.Background(), plan, src, opts)
				if err != nil {
					b.Fatal(err)
				}
				for r.Next() {
				}
				if err := r.Err(); err != nil {
					b.Fatal(err)
				}
				r.Release()
			}
		})
	}
}
