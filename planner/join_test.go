package planner_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// joinInput is testInput with the dataset "ref/regions" joined (as often
// as the spec joins).
func joinInput(n int) planner.Input {
	in := testInput()
	for range n {
		in.Joins = append(in.Joins, planner.Input{Dataset: "ref/regions", RowCount: 4, RowCountExact: true,
			Schema: arrow.NewSchema([]arrow.Field{
				{Name: "name", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}, Nullable: true},
				{Name: "manager", Type: arrow.BinaryTypes.String, Nullable: true},
				{Name: "rid", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
				{Name: "big", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
			}, nil)})
	}
	return in
}

func TestJoinBuild(t *testing.T) {
	cases := []struct {
		name, spec string
		plan       []string // lines of planner.String after Optimize
		out        []string // output columns
	}{
		{"departures per region",
			`{"join":[{"dataset":"ref/regions","on":[{"left":"region","right":"name"}]}],"group_by":["regions.manager"],"aggs":[{"col":"*","fn":"count"}]}`,
			[]string{"Aggregate: count(*) AS count_all BY regions.manager", "Join: inner ref/regions AS regions ON region = regions.name",
				"Scan: sales/orders columns=[region]", "Scan: ref/regions columns=[name, manager]"},
			[]string{"regions.manager", "count_all"}},
		{"left join with alias, columns and a filter on a joined column",
			`{"join":[{"dataset":"ref/regions","as":"r","type":"left","columns":["manager"],"on":[{"left":"order_id","right":"r.rid"}]}],
			  "filters":[{"col":"r.manager","op":"eq","value":"ann"}],"columns":["order_id","r.manager"]}`,
			[]string{"Project: order_id, r.manager", "Filter: r.manager = 'ann'", "Join: left ref/regions AS r ON order_id = r.rid",
				"Scan: sales/orders columns=[order_id]", "Scan: ref/regions columns=[manager, rid]"},
			[]string{"order_id", "r.manager"}},
		{"semi join keeps the left columns",
			`{"join":[{"dataset":"ref/regions","type":"semi","on":[{"left":"region","right":"name"},{"left":"qty","right":"rid"}]}],"columns":["order_id"]}`,
			[]string{"Project: order_id", "Join: semi ref/regions AS regions ON region = regions.name AND qty = regions.rid",
				"Scan: sales/orders columns=[order_id, region, qty]", "Scan: ref/regions columns=[name, rid]"},
			[]string{"order_id"}},
		{"cross join",
			`{"join":[{"dataset":"ref/regions","type":"cross","columns":["manager"]}],"columns":["qty","regions.manager"]}`,
			[]string{"Project: qty, regions.manager", "Join: cross ref/regions AS regions",
				"Scan: sales/orders columns=[qty]", "Scan: ref/regions columns=[manager]"},
			[]string{"qty", "regions.manager"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := spec(t, tc.spec)
			plan, err := planner.Build(s, joinInput(len(s.Join)))
			if err != nil {
				t.Fatal(err)
			}
			if plan, err = planner.Optimize(plan, planner.OptimizeOptions{}); err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSpace(planner.String(plan)), "\n")
			for i := range got {
				got[i] = strings.TrimSpace(got[i])
			}
			if strings.Join(got, "\n") != strings.Join(tc.plan, "\n") {
				t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.plan, "\n"))
			}
			var names []string
			for _, f := range plan.Schema().Fields() {
				names = append(names, f.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.out, ",") {
				t.Errorf("output columns %v, want %v", names, tc.out)
			}
		})
	}
}

// TestJoinOuterNullable: outer joins make the null-filled side nullable.
func TestJoinOuterNullable(t *testing.T) {
	in := joinInput(1)
	in.Schema = arrow.NewSchema([]arrow.Field{{Name: "region", Type: arrow.BinaryTypes.String}}, nil)
	in.Joins[0].Schema = arrow.NewSchema([]arrow.Field{{Name: "name", Type: arrow.BinaryTypes.String}}, nil)
	for typ, want := range map[string][2]bool{"inner": {false, false}, "left": {false, true}, "right": {true, false}, "full": {true, true}} {
		plan, err := planner.Build(spec(t, `{"join":[{"dataset":"ref/regions","type":"`+typ+`","on":[{"left":"region","right":"name"}]}]}`), in)
		if err != nil {
			t.Fatal(err)
		}
		s := plan.Schema()
		if s.Field(0).Nullable != want[0] || s.Field(1).Nullable != want[1] {
			t.Errorf("%s join: nullable %v %v, want %v", typ, s.Field(0).Nullable, s.Field(1).Nullable, want)
		}
	}
}

func TestJoinErrors(t *testing.T) {
	cases := []struct {
		name, spec, code, field, hint string
	}{
		{"unknown left key", `{"join":[{"dataset":"ref/regions","on":[{"left":"regon","right":"name"}]}]}`,
			qerr.CodeInvalidColumn, "join[0].on[0].left", `"region"`},
		{"unknown right key", `{"join":[{"dataset":"ref/regions","on":[{"left":"region","right":"nam"}]}]}`,
			qerr.CodeInvalidColumn, "join[0].on[0].right", `"name"`},
		{"string vs int", `{"join":[{"dataset":"ref/regions","on":[{"left":"qty","right":"name"}]}]}`,
			qerr.CodeInvalidArgument, "join[0].on[0]", "string column never equals an integer"},
		{"signed vs uint64", `{"join":[{"dataset":"ref/regions","on":[{"left":"qty","right":"big"}]}]}`,
			qerr.CodeInvalidArgument, "join[0].on[0]", "uint64"},
		{"float vs bool", `{"join":[{"dataset":"ref/regions","on":[{"left":"paid","right":"rid"}]}]}`,
			qerr.CodeInvalidArgument, "join[0].on[0]", "comparable"},
		{"unsupported key", `{"join":[{"dataset":"ref/regions","on":[{"left":"blob","right":"rid"}]}]}`,
			qerr.CodeUnsupportedType, "join[0].on[0].left", "leave this column out"},
		{"no on", `{"join":[{"dataset":"ref/regions"}]}`, qerr.CodeInvalidArgument, "join[0].on", "cross"},
		{"on with cross", `{"join":[{"dataset":"ref/regions","type":"cross","on":[{"left":"region","right":"name"}]}]}`,
			qerr.CodeInvalidArgument, "join[0].on", "drop on"},
		{"bad type", `{"join":[{"dataset":"ref/regions","type":"outer","on":[{"left":"region","right":"name"}]}]}`,
			qerr.CodeInvalidArgument, "join[0].type", "full"},
		{"columns with semi", `{"join":[{"dataset":"ref/regions","type":"semi","columns":["manager"],"on":[{"left":"region","right":"name"}]}]}`,
			qerr.CodeInvalidArgument, "join[0].columns", "drop columns"},
		{"unknown joined column", `{"join":[{"dataset":"ref/regions","columns":["manger"],"on":[{"left":"region","right":"name"}]}]}`,
			qerr.CodeInvalidColumn, "join[0].columns[0]", `"manager"`},
		{"alias twice", `{"join":[{"dataset":"ref/regions","on":[{"left":"region","right":"name"}]},{"dataset":"ref/regions","on":[{"left":"region","right":"name"}]}]}`,
			qerr.CodeInvalidArgument, "join[1].as", "another alias"},
		{"alias with a dot", `{"join":[{"dataset":"ref/regions","as":"a.b","on":[{"left":"region","right":"name"}]}]}`,
			qerr.CodeInvalidArgument, "join[0].as", "without dots"},
		{"joined column unknown in filters", `{"join":[{"dataset":"ref/regions","on":[{"left":"region","right":"name"}]}],"filters":[{"col":"regions.manger","op":"is_null"}]}`,
			qerr.CodeInvalidColumn, "filters[0].col", `"regions.manager"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := spec(t, tc.spec)
			_, err := planner.Build(s, joinInput(len(s.Join)))
			var qe *qerr.Error
			if !errors.As(err, &qe) {
				t.Fatalf("err = %v, want a qerr", err)
			}
			if qe.Code != tc.code || qe.Diagnostics["field"] != tc.field || !strings.Contains(qe.Hint, tc.hint) {
				t.Errorf("got code %s field %v hint %q (%s); want %s %s %q", qe.Code, qe.Diagnostics["field"], qe.Hint, qe.Message, tc.code, tc.field, tc.hint)
			}
		})
	}
	// The service must pass one input per join.
	if _, err := planner.Build(spec(t, `{"join":[{"dataset":"ref/regions","on":[{"left":"region","right":"name"}]}]}`), testInput()); qerr.Code(err) != qerr.CodeInternal {
		t.Errorf("missing join input: %v", err)
	}
}

func TestJoinAlias(t *testing.T) {
	for id, want := range map[string]string{"airports": "airports", "ref/us-airports": "us_airports", "physics/run.h5:/data/hits": "hits"} {
		if got := planner.JoinAlias(id); got != want {
			t.Errorf("JoinAlias(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestJoinChildren(t *testing.T) {
	s := spec(t, `{"join":[{"dataset":"ref/regions","on":[{"left":"region","right":"name"}]}]}`)
	plan, err := planner.Build(s, joinInput(1))
	if err != nil {
		t.Fatal(err)
	}
	j := plan.Children()[0].(*planner.Join) // under the Project leaving out blob
	if _, err := j.WithChildren(j.Left); qerr.Code(err) != qerr.CodeInternal {
		t.Errorf("WithChildren with one child: %v", err)
	}
	c := planner.Clone(j).(*planner.Join)
	c.LeftKeys[0] = "changed"
	if j.LeftKeys[0] != "region" {
		t.Errorf("Clone shares key slices")
	}
}
