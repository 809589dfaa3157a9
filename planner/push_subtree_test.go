package planner

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// aggPusher runs subtrees that hold an aggregate.
type aggPusher struct{ offered []string }

func (p *aggPusher) PushesPlan(n Node) bool {
	p.offered = append(p.offered, n.Describe())
	_, ok := n.(*Aggregate)
	return ok
}

func TestPushSubtree(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String}, {Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	n, err := Build(Spec{GroupBy: GroupKeys{"k"}, Aggs: []AggSpec{{Col: "v", Fn: AggSum}}, OrderBy: []OrderSpec{{Col: "k"}}},
		Input{Dataset: "remote/r/t", Schema: sc, RowCount: 10, RowCountExact: true})
	if err != nil {
		t.Fatal(err)
	}
	if n, err = Optimize(n, OptimizeOptions{}); err != nil {
		t.Fatal(err)
	}
	p := &aggPusher{}
	got, err := PushSubtree(n, only("remote/r/t", p))
	if err != nil {
		t.Fatal(err)
	}
	s := String(got)
	if !strings.Contains(s, "Sort: k") || !strings.Contains(s, "Scan: remote/r/t pushed=[Aggregate:") || strings.Count(s, "\n") != 2 {
		t.Errorf("pushed plan:\n%s", s)
	}
	if !strings.HasPrefix(p.offered[0], "Sort") {
		t.Errorf("the largest subtree is not offered first: %q", p.offered)
	}
	if before := String(n); strings.Contains(before, "pushed") {
		t.Errorf("the input plan changed:\n%s", before)
	}
	// Another dataset, or a pusher that refuses: unchanged.
	if same, _ := PushSubtree(n, only("other", p)); same != n {
		t.Error("pushed into another dataset")
	}
}

// only is the pusher of one dataset.
func only(dataset string, p SubtreePusher) func(string) SubtreePusher {
	return func(d string) SubtreePusher {
		if d == dataset {
			return p
		}
		return nil
	}
}

// allPusher runs every subtree offered.
type allPusher struct{}

func (allPusher) PushesPlan(Node) bool { return true }

// TestPushSubtreeTopN: a pushed top-N keeps its Sort over the new Scan
// (the remote picks the rows, the engine orders them); a pushed plain
// limit does not get one.
func TestPushSubtreeTopN(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String}, {Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	in := Input{Dataset: "remote/r/t", Schema: sc, RowCount: 10, RowCountExact: true}
	three := int64(3)
	for _, c := range []struct {
		spec Spec
		want []string
	}{
		{Spec{OrderBy: []OrderSpec{{Col: "v", Desc: true}}, Limit: &three}, []string{"Sort: v desc", "Scan: remote/r/t pushed=[Limit"}},
		{Spec{GroupBy: GroupKeys{"k"}, Aggs: []AggSpec{{Col: "v", Fn: AggSum}}, Limit: &three}, []string{"Scan: remote/r/t pushed=[Limit"}},
	} {
		n, err := Build(c.spec, in)
		if err != nil {
			t.Fatal(err)
		}
		if n, err = Optimize(n, OptimizeOptions{}); err != nil {
			t.Fatal(err)
		}
		checkPushed(t, n, c.want)
	}
	// A rename on top (SELECT k, v AS w ... ORDER BY v DESC LIMIT 3): the
	// Sort kept over the Scan orders by the new name.
	n, err := Build(Spec{OrderBy: []OrderSpec{{Col: "v", Desc: true}}, Limit: &three}, in)
	if err != nil {
		t.Fatal(err)
	}
	if n, err = Optimize(n, OptimizeOptions{}); err != nil {
		t.Fatal(err)
	}
	c := &Compute{Input: n, Exprs: []NamedExpr{{Name: "w", Expr: &ColRef{Name: "v", Index: 1, Typ: arrow.PrimitiveTypes.Int64}}}}
	out := arrow.NewSchema([]arrow.Field{c.Schema().Field(0), c.Schema().Field(2)}, nil)
	top := &Project{Input: c, Columns: []string{"k", "w"}, Indices: []int{0, 2}, Out: out}
	checkPushed(t, top, []string{"Sort: w desc", "Scan: remote/r/t pushed=[Project: k, w <- Compute: v AS w <- Limit"})
}

// checkPushed pushes n's subtrees over remote/r/t (every one offered is
// taken) and checks the lines of the plan start with want's.
func checkPushed(t *testing.T, n Node, want []string) {
	t.Helper()
	got, err := PushSubtree(n, only("remote/r/t", allPusher{}))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(String(got)), "\n")
	if len(lines) != len(want) {
		t.Fatalf("pushed plan:\n%s", String(got))
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d of\n%s\nwant %q", i, String(got), w)
		}
	}
	if s, ok := got.(*Sort); ok {
		for _, k := range s.Keys {
			if f := s.Input.Schema().Field(k.Index); f.Name != k.Col {
				t.Errorf("sort key %s at %d, which is %s", k.Col, k.Index, f.Name)
			}
		}
	}
}

// remotePusher runs the subtrees whose scans all read datasets of one
// remote (ids under its prefix), as a Flight SQL remote's source does.
type remotePusher struct {
	prefix  string
	offered []string
}

func (p *remotePusher) PushesPlan(n Node) bool {
	p.offered = append(p.offered, n.Describe())
	ok := true
	Inspect(n, func(x Node, _ int) bool {
		if s, is := x.(*Scan); is {
			ok = ok && strings.HasPrefix(s.Dataset, p.prefix)
		}
		return ok
	})
	return ok
}

// TestPushSubtreeJoin: a join of two tables of one remote, with the
// aggregate and filter over it, becomes one pushed Scan of the first
// table's dataset; a join with a table of another remote or a local one
// is not pushed as a join (each side's own subtree still may be).
func TestPushSubtreeJoin(t *testing.T) {
	orders := arrow.NewSchema([]arrow.Field{{Name: "cust", Type: arrow.PrimitiveTypes.Int64}, {Name: "qty", Type: arrow.PrimitiveTypes.Int64}}, nil)
	custs := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "region", Type: arrow.BinaryTypes.String}}, nil)
	spec := Spec{
		Filters: []FilterSpec{{Col: "qty", Op: OpGt, Value: []byte("3")}},
		GroupBy: GroupKeys{"c.region"}, Aggs: []AggSpec{{Col: "qty", Fn: AggSum}},
	}
	pushers := func(d string) SubtreePusher {
		for _, prefix := range []string{"remote/r/", "remote/s/"} {
			if strings.HasPrefix(d, prefix) {
				return &remotePusher{prefix: prefix}
			}
		}
		return nil // a local file
	}
	for _, c := range []struct {
		name, right string
		want        []string
	}{
		{"one remote", "remote/r/custs", []string{"Scan: remote/r/orders pushed=[Aggregate: sum(qty) AS sum_qty BY c.region <- Join: inner remote/r/custs AS c ON cust = c.id <- Filter: qty > 3 <- Scan: remote/r/orders <- Scan: remote/r/custs]"}},
		{"two remotes", "remote/s/custs", []string{"Aggregate:", "  Join: inner remote/s/custs", "    Scan: remote/r/orders", "    Scan: remote/s/custs"}},
		{"remote and local", "sales/custs", []string{"Aggregate:", "  Join: inner sales/custs", "    Scan: remote/r/orders", "    Scan: sales/custs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := spec
			s.Join = []JoinSpec{{Dataset: c.right, As: "c", On: []JoinOn{{Left: "cust", Right: "id"}}}}
			n, err := Build(s, Input{Dataset: "remote/r/orders", Schema: orders, RowCount: 100, RowCountExact: true,
				Joins: []Input{{Dataset: c.right, Schema: custs, RowCount: 10, RowCountExact: true}}})
			if err != nil {
				t.Fatal(err)
			}
			if n, err = Optimize(n, OptimizeOptions{}); err != nil {
				t.Fatal(err)
			}
			got, err := PushSubtree(n, pushers)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(String(got)), "\n")
			if len(lines) != len(c.want) {
				t.Fatalf("pushed plan:\n%s", String(got))
			}
			for i, w := range c.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("line %d of\n%s\nwant %q", i, String(got), w)
				}
			}
			if c.name == "one remote" {
				sc := got.(*Scan)
				if !arrow.TypeEqual(sc.Out.Field(0).Type, arrow.BinaryTypes.String) || sc.Out.Field(0).Name != "c.region" || sc.RowCount != 100 {
					t.Errorf("pushed scan: out %v, rows %d", sc.Out, sc.RowCount)
				}
			}
		})
	}
}
