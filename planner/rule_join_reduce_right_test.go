package planner_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// reduceRightInput is sales/orders (3000 rows) joined to ref/stores (2000
// rows: sid, rid), then ref/regions (4 rows), then more (the inputs of the
// spec's joins, in order).
func reduceRightInput(more ...planner.Input) planner.Input {
	in := joinInput(1)
	stores := planner.Input{Dataset: "ref/stores", RowCount: 2000, RowCountExact: true,
		Schema: arrow.NewSchema([]arrow.Field{
			{Name: "sid", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "rid", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		}, nil)}
	in.Joins = append([]planner.Input{stores}, append(in.Joins, more...)...)
	return in
}

// TestRuleJoinReduceRight: a join that removes rows acts on the right
// input of the earlier inner join providing its keys: a semi join moves
// there, an inner join with a filtered right input adds a semi join with a
// copy of it there; otherwise the plan is left alone.
func TestRuleJoinReduceRight(t *testing.T) {
	rule := rulesNamed("push_join_filters", "join_reduce_right")
	stores := `{"dataset":"ref/stores","as":"s","on":[{"left":"order_id","right":"sid"}]}`
	cases := []struct {
		name, spec string
		want       []string // nil: the plan push_join_filters alone gives
	}{
		{"semi join moves into the stores it filters",
			`{"join":[` + stores + `,{"dataset":"ref/regions","as":"r","type":"semi","on":[{"left":"s.rid","right":"rid"}]}],"columns":["order_id","s.rid"]}`,
			[]string{
				"Project: order_id, s.rid",
				"  Join: inner ref/stores AS s ON order_id = s.sid",
				"    Scan: sales/orders",
				"    Join: semi ref/regions AS r ON rid = r.rid",
				"      Scan: ref/stores",
				"      Scan: ref/regions"}},
		{"filtered dimension: a copy reduces the stores",
			`{"join":[` + stores + `,{"dataset":"ref/regions","as":"r","on":[{"left":"s.rid","right":"rid"}]}],
			  "filters":[{"col":"r.manager","op":"eq","value":"kim"}],"columns":["order_id","r.name"]}`,
			[]string{
				"Project: order_id, r.name",
				"  Join: inner ref/regions AS r ON s.rid = r.rid",
				"    Join: inner ref/stores AS s ON order_id = s.sid",
				"      Scan: sales/orders",
				"      Join: semi ref/regions AS __rj ON rid = __rj.rid",
				"        Scan: ref/stores",
				"        Project: rid",
				"          Filter: manager = 'kim'",
				"            Scan: ref/regions",
				"    Filter: manager = 'kim'",
				"      Scan: ref/regions"}},
		// nothing to reduce with
		{"unfiltered dimension",
			`{"join":[` + stores + `,{"dataset":"ref/regions","as":"r","on":[{"left":"s.rid","right":"rid"}]}],"columns":["order_id","r.name"]}`, nil},
		// a left join keeps the orders whose store the semi join would remove
		{"earlier left join",
			`{"join":[{"dataset":"ref/stores","as":"s","type":"left","on":[{"left":"order_id","right":"sid"}]},
			  {"dataset":"ref/regions","as":"r","type":"semi","on":[{"left":"s.rid","right":"rid"}]}],"columns":["order_id"]}`, nil},
		// the key is the base's: join_filtering_first's case
		{"key of the first input",
			`{"join":[` + stores + `,{"dataset":"ref/regions","as":"r","type":"semi","on":[{"left":"qty","right":"rid"}]}],"columns":["order_id"]}`, nil},
		// the condition reads the base's columns
		{"residual",
			`{"join":[` + stores + `,{"dataset":"ref/regions","as":"r","type":"semi","on":[{"left":"s.rid","right":"rid"}],"where":"r.big > qty"}],"columns":["order_id"]}`, nil},
		// a right join ends the chain: the stores are not below it
		{"right join",
			`{"join":[` + stores + `,{"dataset":"ref/regions","as":"r","type":"right","on":[{"left":"s.rid","right":"rid"}]}],
			  "filters":[{"col":"r.manager","op":"eq","value":"kim"}],"columns":["order_id","r.name"]}`, nil},
	}
	in := reduceRightInput()
	for _, c := range cases {
		got := applyRuleOn(t, in, c.spec, rule, planner.OptimizeOptions{})
		if c.want == nil {
			if before := applyRuleOn(t, in, c.spec, rulesNamed("push_join_filters"), planner.OptimizeOptions{}); got != before {
				t.Errorf("%s: rewritten:\n%s", c.name, got)
			}
			continue
		}
		if w := strings.Join(c.want, "\n"); got != w {
			t.Errorf("%s: got:\n%s\nwant:\n%s", c.name, got, w)
		}
	}
	// Stores the size of a fact table get no copy (the semi join moves still).
	big := reduceRightInput()
	big.Joins[0].RowCount = 3_000_000
	for _, c := range cases[:2] {
		got := applyRuleOn(t, big, c.spec, rule, planner.OptimizeOptions{})
		before := applyRuleOn(t, big, c.spec, rulesNamed("push_join_filters"), planner.OptimizeOptions{})
		if copied := strings.Contains(got, "__rj"); copied || (got == before) == strings.Contains(c.name, "semi join moves") {
			t.Errorf("%s, 3M stores: got:\n%s", c.name, got)
		}
	}
}

// TestRuleJoinReduceRightCascades: the later joins go first, so a filtered
// dimension reduces the dimension joined before it, whose reduced copy
// reduces the input joined before that (TPC-H Q5's region → nation →
// supplier); a second run adds nothing.
func TestRuleJoinReduceRightCascades(t *testing.T) {
	in := reduceRightInput(planner.Input{Dataset: "ref/areas", RowCount: 3, RowCountExact: true,
		Schema: arrow.NewSchema([]arrow.Field{
			{Name: "aid", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
			{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
		}, nil)})
	js := `{"join":[{"dataset":"ref/stores","as":"s","on":[{"left":"order_id","right":"sid"}]},
		{"dataset":"ref/regions","as":"r","on":[{"left":"s.rid","right":"rid"}]},
		{"dataset":"ref/areas","as":"a","on":[{"left":"r.big","right":"aid"}]}],
		"filters":[{"col":"a.label","op":"eq","value":"north"}],"columns":["order_id","r.name"]}`
	once := rulesNamed("push_join_filters", "join_reduce_right")
	got := applyRuleOn(t, in, js, once, planner.OptimizeOptions{})
	wantPlan(t, got,
		"Project: order_id, r.name",
		"  Join: inner ref/areas AS a ON r.big = a.aid",
		"    Join: inner ref/regions AS r ON s.rid = r.rid",
		"      Join: inner ref/stores AS s ON order_id = s.sid",
		"        Scan: sales/orders",
		"        Join: semi ref/regions AS __rj ON rid = __rj.rid",
		"          Scan: ref/stores",
		"          Project: rid",
		"            Join: semi ref/areas AS __rj ON big = __rj.aid",
		"              Scan: ref/regions",
		"              Project: aid",
		"                Filter: label = 'north'",
		"                  Scan: ref/areas",
		"      Join: semi ref/areas AS __rj ON big = __rj.aid",
		"        Scan: ref/regions",
		"        Project: aid",
		"          Filter: label = 'north'",
		"            Scan: ref/areas",
		"    Filter: label = 'north'",
		"      Scan: ref/areas")
	twice := func(n planner.Node, o planner.OptimizeOptions) (planner.Node, error) {
		n, err := once(n, o)
		if err != nil {
			return nil, err
		}
		return planner.JoinReduceRight(n, o)
	}
	if again := applyRuleOn(t, in, js, twice, planner.OptimizeOptions{}); again != got {
		t.Errorf("a second run changed the plan:\n%s", again)
	}
}
