package planner_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// nodes lists the plan's nodes in pre-order.
func nodes(n planner.Node) []planner.Node {
	var out []planner.Node
	planner.Inspect(n, func(n planner.Node, _ int) bool {
		out = append(out, n)
		return true
	})
	return out
}

func buildPlan(t *testing.T, js string) planner.Node {
	t.Helper()
	sp := spec(t, js)
	n, err := planner.Build(sp, joinInput(len(sp.Join)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

const richSpec = `{"columns":["region","qty * 2 AS q2"],"filters":[{"col":"qty","op":"gt","value":1},{"any":[{"col":"paid","op":"eq","value":true},{"col":"day","op":"is_null"}]}],"deduplicate":true,"order_by":[{"col":"ordered_at"}],"limit":5}`

func TestTransformIdentity(t *testing.T) {
	n := buildPlan(t, richSpec)
	before := planner.String(n)
	calls := 0
	got, changed, err := planner.Transform(n, func(n planner.Node) (planner.Node, bool, error) {
		calls++
		return n, false, nil
	})
	if err != nil || changed || got != n {
		t.Fatalf("no-op Transform: changed=%v err=%v same=%v", changed, err, got == n)
	}
	if want := len(nodes(n)); calls != want {
		t.Fatalf("f called %d times for %d nodes", calls, want)
	}

	// Rewriting the Filter rebuilds its ancestors and shares its subtree.
	got, changed, err = planner.Transform(n, func(n planner.Node) (planner.Node, bool, error) {
		f, ok := n.(*planner.Filter)
		if !ok {
			return n, false, nil
		}
		c, err := f.WithChildren(f.Input)
		if err != nil {
			return nil, false, err
		}
		c.(*planner.Filter).Preds = c.(*planner.Filter).Preds[:1]
		return c, true, nil
	})
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	if planner.String(n) != before {
		t.Fatal("Transform modified its input")
	}
	if !strings.Contains(planner.String(got), "Filter: qty > 1\n") {
		t.Fatalf("rewrite lost:\n%s", planner.String(got))
	}
	old, cur := nodes(n), nodes(got)
	if len(old) != len(cur) {
		t.Fatalf("shape changed:\n%s", planner.String(got))
	}
	seenFilter := false
	for i := range old {
		_, isFilter := old[i].(*planner.Filter)
		seenFilter = seenFilter || isFilter
		if shared := old[i] == cur[i]; shared != (seenFilter && !isFilter) {
			t.Errorf("%s: shared=%v (only the Filter's subtree should be shared)", old[i].Describe(), shared)
		}
	}

	// Errors stop the walk.
	boom := errors.New("boom")
	if got, _, err := planner.Transform(n, func(n planner.Node) (planner.Node, bool, error) {
		if _, ok := n.(*planner.Scan); ok {
			return nil, false, boom
		}
		return n, false, nil
	}); !errors.Is(err, boom) || got != nil {
		t.Fatalf("got %v, %v", got, err)
	}
}

// TestRulesShareUnchangedPlans applies every rule to every golden spec's
// plan: a rule never modifies its input, and applied to its own output it
// changes nothing, so it returns the very same plan.
func TestRulesShareUnchangedPlans(t *testing.T) {
	files, _ := filepath.Glob("testdata/plans/*.json")
	if len(files) == 0 {
		t.Fatal("no plan specs")
	}
	opts := planner.OptimizeOptions{Pushdown: pushAll{}}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := buildPlan(t, string(raw))
		before := planner.String(n)
		for _, r := range planner.Rules {
			once, err := r.Apply(n, opts)
			if err != nil {
				t.Fatalf("%s %s: %v", f, r.Name, err)
			}
			twice, err := r.Apply(once, opts)
			if err != nil {
				t.Fatalf("%s %s: %v", f, r.Name, err)
			}
			if twice != once {
				t.Errorf("%s: %s changed its own output:\n%s---\n%s", f, r.Name, planner.String(once), planner.String(twice))
			}
			if planner.String(n) != before {
				t.Fatalf("%s: %s modified its input", f, r.Name)
			}
		}
	}
}

func TestWithChildrenArity(t *testing.T) {
	sch := testInput().Schema
	scan := &planner.Scan{Dataset: "d", Out: sch}
	unary := []planner.Node{
		&planner.Filter{Input: scan}, &planner.Project{Input: scan, Out: sch}, &planner.Aggregate{Input: scan, Out: sch},
		&planner.Distinct{Input: scan}, &planner.Deduplicate{Input: scan}, &planner.Compute{Input: scan},
		&planner.Sort{Input: scan}, &planner.Limit{Input: scan},
	}
	check := func(n planner.Node, children ...planner.Node) {
		t.Helper()
		got, err := n.WithChildren(children...)
		if got != nil || !errors.Is(err, planner.ErrChildren) || !errors.Is(err, qerr.ErrInternal) {
			t.Errorf("%T with %d children: %v, %v", n, len(children), got, err)
		}
	}
	check(scan, scan)
	for _, n := range unary {
		check(n)
		check(n, scan, scan)
		c, err := n.WithChildren(scan)
		if err != nil || c == n || len(c.Children()) != 1 || c.Children()[0] != scan {
			t.Errorf("%T: %v, %v", n, c, err)
		}
	}
	if c, err := scan.WithChildren(); err != nil || c == planner.Node(scan) {
		t.Errorf("scan: %v, %v", c, err)
	}
}

// TestWithChildrenCopies modifies every slice and expression of each
// node's WithChildren copy and checks the original does not change.
func TestWithChildrenCopies(t *testing.T) {
	pushed, err := planner.PushFilters(buildPlan(t, richSpec), planner.OptimizeOptions{Pushdown: pushAll{}})
	if err != nil {
		t.Fatal(err)
	}
	if pushed, err = planner.PushProjection(pushed, planner.OptimizeOptions{}); err != nil {
		t.Fatal(err)
	}
	plans := []planner.Node{pushed, buildPlan(t, `{"group_by":["region"],"aggs":[{"col":"qty * 2","fn":"sum"}],"order_by":[{"col":"region"}],"null_policy":"drop"}`)}
	kinds := map[string]bool{}
	for _, p := range plans {
		for _, n := range nodes(p) {
			before := n.Describe()
			c, err := n.WithChildren(n.Children()...)
			if err != nil {
				t.Fatal(err)
			}
			if !scribble(c) {
				continue
			}
			kinds[strings.SplitN(before, ":", 2)[0]] = true
			if c.Describe() == before {
				t.Errorf("scribble did not change %q", before)
			}
			if after := n.Describe(); after != before {
				t.Errorf("modifying the copy changed the original: %q -> %q", before, after)
			}
		}
	}
	for _, k := range []string{"Scan", "Filter", "Compute", "Project", "Aggregate", "Deduplicate", "Sort"} {
		if !kinds[k] {
			t.Errorf("no %s node tested", k)
		}
	}
}

// scribble overwrites the names in a node's own slices and expressions;
// false when the node has none.
func scribble(n planner.Node) bool {
	preds := func(ps []planner.Predicate) {
		for i := range ps {
			ps[i].Col = "zz"
			for j := range ps[i].Any {
				ps[i].Any[j].Col = "zz"
			}
		}
	}
	switch x := n.(type) {
	case *planner.Scan:
		if len(x.Filters) == 0 || len(x.Columns) == 0 {
			return false
		}
		preds(x.Filters)
		x.Columns[0] = "zz"
	case *planner.Filter:
		preds(x.Preds)
	case *planner.Project:
		x.Columns[0] = "zz"
	case *planner.Aggregate:
		x.GroupBy[0], x.Aggs[0].Col = "zz", "zz"
	case *planner.Deduplicate:
		x.Columns[0] = "zz"
	case *planner.Compute:
		planner.WalkExpr(x.Exprs[0].Expr, func(e planner.Expr) {
			if r, ok := e.(*planner.ColRef); ok {
				r.Name = "zz"
			}
		})
	case *planner.Sort:
		x.Keys[0].Col = "zz"
	default:
		return false
	}
	return true
}

func TestCloneAndInspect(t *testing.T) {
	n := buildPlan(t, richSpec)
	c := planner.Clone(n)
	if planner.String(c) != planner.String(n) {
		t.Fatal("clone prints differently")
	}
	for i, x := range nodes(c) {
		if x == nodes(n)[i] {
			t.Errorf("%s is shared by the clone", x.Describe())
		}
	}
	if planner.Clone(nil) != nil {
		t.Fatal("Clone(nil)")
	}
	// Inspect: pre-order with depths; false skips the children.
	var seen []string
	planner.Inspect(n, func(n planner.Node, depth int) bool {
		seen = append(seen, strings.Repeat(".", depth)+strings.SplitN(n.Describe(), ":", 2)[0])
		_, isSort := n.(*planner.Sort)
		return !isSort
	})
	if got := strings.Join(seen, " "); got != "Limit .Project ..Sort" {
		t.Fatalf("visited %s", got)
	}
	if s := planner.ScanOf(n); s == nil || s.Dataset != "sales/orders" {
		t.Fatalf("ScanOf = %v", s)
	}
	if planner.ScanOf(nil) != nil {
		t.Fatal("ScanOf(nil)")
	}
}

// markNode is a test-only node type: it passes rows through one to one
// and reads one input column (say, to tag rows). It is declared here
// alone; the optimizer, Clone, Resolve and the printer handle it without a
// change to the planner package.
type markNode struct {
	Input planner.Node
	Col   string
	Index int
}

func (m *markNode) Schema() *arrow.Schema    { return m.Input.Schema() }
func (m *markNode) Children() []planner.Node { return []planner.Node{m.Input} }
func (m *markNode) Describe() string         { return "Mark: " + m.Col }
func (m *markNode) WithChildren(c ...planner.Node) (planner.Node, error) {
	if err := planner.CheckChildren(m, 1, c); err != nil {
		return nil, err
	}
	x := *m
	x.Input = c[0]
	return &x, nil
}
func (m *markNode) InputColumns(out planner.ColumnSet) []planner.ColumnSet {
	return []planner.ColumnSet{out.With(m.Col)}
}
func (m *markNode) ResolveIndices() error {
	m.Index = m.Input.Schema().FieldIndices(m.Col)[0]
	return nil
}
func (m *markNode) PreservesRows() bool { return true }

// opaqueNode is a test-only node type that implements only Node: the
// optimizer must assume it reads every column and keeps no row order.
type opaqueNode struct{ Input planner.Node }

func (o *opaqueNode) Schema() *arrow.Schema    { return o.Input.Schema() }
func (o *opaqueNode) Children() []planner.Node { return []planner.Node{o.Input} }
func (o *opaqueNode) Describe() string         { return "Opaque" }
func (o *opaqueNode) WithChildren(c ...planner.Node) (planner.Node, error) {
	if err := planner.CheckChildren(o, 1, c); err != nil {
		return nil, err
	}
	return &opaqueNode{Input: c[0]}, nil
}

// insertAboveScan puts wrap(scan) in place of the plan's Scan.
func insertAboveScan(t *testing.T, n planner.Node, wrap func(planner.Node) planner.Node) planner.Node {
	t.Helper()
	out, changed, err := planner.Transform(n, func(n planner.Node) (planner.Node, bool, error) {
		if _, ok := n.(*planner.Scan); ok {
			return wrap(n), true, nil
		}
		return n, false, nil
	})
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	return out
}

func TestNewNodeTypeNeedsNoRuleChanges(t *testing.T) {
	n := buildPlan(t, `{"columns":["region"],"limit":3}`)
	marked := insertAboveScan(t, n, func(s planner.Node) planner.Node { return &markNode{Input: s, Col: "qty", Index: -1} })
	before := planner.String(marked)
	o, err := planner.Optimize(marked, planner.OptimizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if planner.String(marked) != before {
		t.Fatal("Optimize modified its input")
	}
	// The limit moves below the row-preserving mark; the scan reads the
	// mark's column too, and the mark's index follows the narrowed scan.
	wantPlan(t, strings.TrimSpace(planner.String(o)),
		"Project: region",
		"  Mark: qty",
		"    Limit: offset=0 count=3",
		"      Scan: sales/orders columns=[region, qty]")
	checkIndices(t, o)
	if m := o.Children()[0].(*markNode); m.Index != 1 {
		t.Fatalf("mark index %d, want 1", m.Index)
	}

	// A node that declares nothing blocks both pushdowns (safe defaults).
	opaque := insertAboveScan(t, n, func(s planner.Node) planner.Node { return &opaqueNode{Input: s} })
	if o, err = planner.Optimize(opaque, planner.OptimizeOptions{}); err != nil {
		t.Fatal(err)
	}
	wantPlan(t, strings.TrimSpace(planner.String(o)),
		"Project: region",
		"  Limit: offset=0 count=3",
		"    Opaque",
		"      Scan: sales/orders")
	checkIndices(t, o)
}
