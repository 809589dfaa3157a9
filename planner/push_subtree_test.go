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
	got, err := PushSubtree(n, "remote/r/t", p)
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
	if same, _ := PushSubtree(n, "other", p); same != n {
		t.Error("pushed into another dataset")
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
		got, err := PushSubtree(n, "remote/r/t", allPusher{})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(String(got)), "\n")
		if len(lines) != len(c.want) {
			t.Fatalf("pushed plan:\n%s", String(got))
		}
		for i, w := range c.want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d of\n%s\nwant %q", i, String(got), w)
			}
		}
	}
}
