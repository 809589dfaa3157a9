package planner_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// group_by entries: column names, expressions with and without AS, and the
// object form, which binds to the same string form.
func TestGroupByExpressions(t *testing.T) {
	cases := []struct {
		name, spec string
		want       string // output schema fields: name:type, ...
	}{
		{"column", `{"group_by":["region"],"aggs":[{"col":"*","fn":"count"}]}`, "region:utf8, count_all:int64"},
		{"expression named", `{"group_by":["floor(price/5)*5 AS bucket"],"aggs":[{"col":"*","fn":"count"}]}`, "bucket:float64, count_all:int64"},
		{"expression default name", `{"group_by":["floor(price/5)*5"],"aggs":[{"col":"*","fn":"count"}]}`, "floor(price / 5) * 5:float64, count_all:int64"},
		{"object form named", `{"group_by":[{"expr":"qty * 2","as":"q2"}, "region"],"aggs":[{"col":"price","fn":"sum"}]}`, "q2:int64, region:utf8, sum_price:float64"},
		{"object without as", `{"group_by":[{"expr":"qty * 2"}],"aggs":[{"col":"*","fn":"count"}]}`, "qty * 2:int64, count_all:int64"},
		{"object renames a column", `{"group_by":[{"expr":"region","as":"area"}],"aggs":[{"col":"*","fn":"count"}]}`, "area:utf8, count_all:int64"},
		{"key shared with an aggregate input", `{"group_by":["qty * 2"],"aggs":[{"col":"qty * 2","fn":"sum"}]}`, "qty * 2:int64, sum_qty * 2:int64"},
		{"null_policy drop on an expression key", `{"group_by":["qty * 2 AS q"],"aggs":[{"col":"*","fn":"count"}],"null_policy":"drop"}`, "q:int64, count_all:int64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := planner.Build(spec(t, c.spec), testInput())
			if c.want == "" {
				if err == nil {
					t.Fatalf("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range n.Schema().Fields() {
				got = append(got, f.Name+":"+f.Type.String())
			}
			if g := strings.Join(got, ", "); g != c.want {
				t.Fatalf("schema %s, want %s\n%s", g, c.want, planner.String(n))
			}
		})
	}
}

func TestGroupKeysJSON(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  string
	}{
		{`["a", "b * 2 AS c"]`, []string{"a", "b * 2 AS c"}, ""},
		{`[{"expr": "year(d)", "as": "year"}]`, []string{"year(d) AS year"}, ""},
		{`[{"expr": "unit price", "as": "p"}]`, []string{`"unit price" AS p`}, ""},
		{`[{"expr": "x", "as": "my key"}]`, []string{`x AS "my key"`}, ""},
		{`[{"expr": "x"}]`, []string{"x"}, ""},
		{`null`, nil, ""},
		{`[]`, []string{}, ""},
		{`[1]`, nil, "group_by[0]: want a string"},
		{`[{"as": "x"}]`, nil, "group_by[0]: expr is required"},
		{`[{"expr": "x", "name": "y"}]`, nil, `unknown field "name"`},
		{`"a"`, nil, "want a list"},
	}
	for _, c := range cases {
		var g planner.GroupKeys
		err := json.Unmarshal([]byte(c.in), &g)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(g, c.want) || (c.want == nil) != (g == nil) {
			t.Errorf("%s: got %q (%v), want %q", c.in, g, err, c.want)
		}
	}
	// The object form means the same as its string form.
	a, errA := planner.Build(spec(t, `{"group_by":[{"expr":"floor(price/5)*5","as":"bucket"}],"aggs":[{"col":"*","fn":"count"}]}`), testInput())
	b, errB := planner.Build(spec(t, `{"group_by":["floor(price/5)*5 AS bucket"],"aggs":[{"col":"*","fn":"count"}]}`), testInput())
	if errA != nil || errB != nil || planner.String(a) != planner.String(b) {
		t.Fatalf("object and string forms differ: %v %v\n%s\n%s", errA, errB, planner.String(a), planner.String(b))
	}
}

// having filters the aggregated rows: the Filter sits on the Aggregate,
// below the post-aggregation columns, the sort and the limit.
func TestHavingPlacement(t *testing.T) {
	n, err := planner.Build(spec(t, `{"group_by":["region"],"aggs":[{"col":"*","fn":"count"},{"col":"qty","fn":"max"},{"col":"qty","fn":"min"}],
		"having":[{"col":"count_all","op":"gt","value":100}],"columns":["region","max_qty - min_qty AS spread"],
		"order_by":[{"col":"spread","desc":true}],"top_n":3}`), testInput())
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	planner.Inspect(n, func(x planner.Node, _ int) bool {
		kinds = append(kinds, strings.SplitN(x.Describe(), ":", 2)[0])
		return true
	})
	want := []string{"Limit", "Sort", "Project", "Compute", "Filter", "Aggregate", "Scan"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("plan nodes %v, want %v\n%s", kinds, want, planner.String(n))
	}
	if !strings.Contains(planner.String(n), "Filter: count_all > 100") {
		t.Fatalf("no having filter:\n%s", planner.String(n))
	}
}

func TestHavingErrors(t *testing.T) {
	cases := []struct {
		name, spec, code, field string
		sugg                    string
	}{
		{"unknown output", `{"group_by":["region"],"aggs":[{"col":"*","fn":"count"}],"having":[{"col":"count","op":"gt","value":1}]}`, qerr.CodeInvalidColumn, "having[0].col", "count_all"},
		{"input column not an output", `{"group_by":["region"],"aggs":[{"col":"qty","fn":"sum"}],"having":[{"col":"qty","op":"gt","value":1}]}`, qerr.CodeInvalidColumn, "having[0].col", "sum_qty"},
		{"unknown in any", `{"group_by":["region"],"aggs":[{"col":"*","fn":"count"}],"having":[{"any":[{"col":"region","op":"eq","value":"x"},{"col":"regoin","op":"eq","value":"y"}]}]}`, qerr.CodeInvalidColumn, "having[0].any[1].col", "region"},
		{"expression key name", `{"group_by":["qty * 2 AS q"],"aggs":[{"col":"*","fn":"count"}],"having":[{"col":"qq","op":"gt","value":1}]}`, qerr.CodeInvalidColumn, "having[0].col", "q"},
		{"bad value", `{"group_by":["region"],"aggs":[{"col":"*","fn":"count"}],"having":[{"col":"count_all","op":"gt","value":"many"}]}`, qerr.CodeInvalidFilter, "having[0]", ""},
		{"string op on a number", `{"group_by":["region"],"aggs":[{"col":"*","fn":"count"}],"having":[{"col":"count_all","op":"contains","value":"1"}]}`, qerr.CodeInvalidFilter, "having[0]", ""},
		{"missing col", `{"group_by":["region"],"aggs":[{"col":"*","fn":"count"}],"having":[{"op":"gt","value":1}]}`, qerr.CodeInvalidFilter, "having[0].col", ""},
		{"expr on an input column", `{"group_by":["region"],"aggs":[{"col":"qty","fn":"sum"}],"having":[{"expr":"qty / 2 > 1"}]}`, qerr.CodeInvalidColumn, "having[0].expr", "sum_qty"},
		{"expr not boolean", `{"group_by":["region"],"aggs":[{"col":"qty","fn":"sum"}],"having":[{"expr":"sum_qty / 2"}]}`, qerr.CodeInvalidFilter, "having[0].expr", ""},
		{"expr with col", `{"group_by":["region"],"aggs":[{"col":"qty","fn":"sum"}],"having":[{"expr":"sum_qty > 2","col":"region"}]}`, qerr.CodeInvalidFilter, "having[0]", ""},
		{"plain query", `{"columns":["qty"],"having":[{"col":"qty","op":"gt","value":1}]}`, qerr.CodeInvalidArgument, "having", ""},
		{"unknown group_by column in expression", `{"group_by":["floor(prce / 5)"],"aggs":[{"col":"*","fn":"count"}]}`, qerr.CodeInvalidColumn, "group_by[0]", "price"},
		{"unknown group_by column", `{"group_by":["regoin"],"aggs":[{"col":"*","fn":"count"}]}`, qerr.CodeInvalidColumn, "group_by[0]", "region"},
		{"unparsable group_by", `{"group_by":["floor(price"],"aggs":[{"col":"*","fn":"count"}]}`, qerr.CodeInvalidArgument, "group_by[0]", ""},
		{"key name twice", `{"group_by":["region", "qty * 2 AS region2", {"expr":"qty*2","as":"region2"}],"aggs":[{"col":"*","fn":"count"}]}`, qerr.CodeInvalidArgument, "group_by[2]", ""},
		{"key named like an input column", `{"group_by":["qty * 2 AS price"],"aggs":[{"col":"*","fn":"count"}]}`, qerr.CodeInvalidArgument, "group_by[0]", ""},
		{"key named like an aggregate", `{"group_by":["qty * 2 AS count_all"],"aggs":[{"col":"*","fn":"count"}]}`, qerr.CodeInvalidArgument, "aggs[0]", ""},
		{"string key in arithmetic", `{"group_by":["region * 2"],"aggs":[{"col":"*","fn":"count"}]}`, qerr.CodeInvalidArgument, "group_by[0]", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := planner.Build(spec(t, c.spec), testInput())
			if err == nil {
				t.Fatal("no error")
			}
			e := qerr.As(err)
			if e.Code != c.code || e.Diagnostics["field"] != c.field {
				t.Fatalf("code %s field %v, want %s %s: %v", e.Code, e.Diagnostics["field"], c.code, c.field, err)
			}
			if c.sugg != "" {
				got, _ := e.Diagnostics["suggestions"].([]string)
				if !slices.Contains(got, c.sugg) {
					t.Fatalf("suggestions %v, want %q among them: %v", got, c.sugg, err)
				}
			}
		})
	}
}

// FuzzGroupKeys feeds arbitrary JSON to GroupKeys.UnmarshalJSON: it must not
// panic, and what it accepts must read back the same from its marshaled
// (string) form, and every string parse as the group_by text it stands for.
func FuzzGroupKeys(f *testing.F) {
	for _, s := range []string{`["a"]`, `[{"expr":"floor(x / 5) * 5","as":"b"}]`, `[{"expr":"unit price","as":"my \"key\""}]`, `null`, `[1]`, `[{}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		var g planner.GroupKeys
		if json.Unmarshal([]byte(js), &g) != nil {
			return
		}
		b, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		var back planner.GroupKeys
		if err := json.Unmarshal(b, &back); err != nil || !slices.Equal(g, back) {
			t.Fatalf("%s: %q round-trips to %q (%v)", js, g, back, err)
		}
	})
}

// An expression having ({"expr": ...}) is computed over the aggregated rows
// after the plain having predicates, then dropped: Aggregate → Filter (plain)
// → Compute (hidden boolean) → Filter → Project, all below the
// post-aggregation columns.
func TestHavingExpression(t *testing.T) {
	n, err := planner.Build(spec(t, `{"group_by":["region"],"aggs":[{"col":"qty","fn":"sum"},{"col":"*","fn":"count"}],
		"having":[{"expr":"sum_qty / count_all > 3 OR region LIKE 'n%'"},{"col":"count_all","op":"gte","value":2}],
		"columns":["region","sum_qty"]}`), testInput())
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	planner.Inspect(n, func(x planner.Node, _ int) bool {
		kinds = append(kinds, strings.SplitN(x.Describe(), ":", 2)[0])
		return true
	})
	want := []string{"Project", "Project", "Filter", "Compute", "Filter", "Aggregate", "Scan"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("plan nodes %v, want %v\n%s", kinds, want, planner.String(n))
	}
	text := planner.String(n)
	for _, w := range []string{"Filter: count_all >= 2", "sum_qty / count_all > 3 OR region LIKE 'n%'"} {
		if !strings.Contains(text, w) {
			t.Errorf("plan lacks %q:\n%s", w, text)
		}
	}
	if got := n.Schema().NumFields(); got != 2 {
		t.Errorf("output has %d columns, want 2:\n%s", got, text)
	}
}
