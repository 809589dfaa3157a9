package sqlgen_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
	"github.com/quarrydb/quarry/planner/sqlgen"
	"github.com/quarrydb/quarry/sqlfront"
)

const dataset = "remote/r/t"

var schema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "weight", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "Odd \"name\"", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// pushdown takes what the Postgres dialect prints, as a remote source does.
type pushdown struct{}

func (pushdown) HandlesFilter(p planner.Predicate) bool { return sqlgen.Postgres.Printable(p, schema) }

func input() planner.Input {
	return planner.Input{Dataset: dataset, Schema: schema, RowCount: 1000, RowCountExact: true}
}

// plan builds and optimizes a knob query (JSON spec) as the service does
// for a remote dataset.
func plan(t *testing.T, spec string) planner.Node {
	t.Helper()
	var s planner.Spec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		t.Fatal(err)
	}
	n, err := planner.Build(s, input())
	if err != nil {
		t.Fatal(err)
	}
	n, err = planner.Optimize(n, planner.OptimizeOptions{Pushdown: pushdown{}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

type oneTable struct{}

func (oneTable) Input(_ context.Context, name string) (planner.Input, error) {
	if name == "t" {
		return input(), nil
	}
	return planner.Input{}, qerr.NotFound(qerr.CodeDatasetNotFound, "no table %q", name)
}

// reparse plans sql with our own SQL front-end, optimized the same way.
func reparse(t *testing.T, sql string) planner.Node {
	t.Helper()
	st, err := sqlfront.Parse(sql)
	if err != nil {
		t.Fatalf("our parser refuses the generated SQL %s: %v", sql, err)
	}
	c, err := st.Compile(context.Background(), oneTable{}, nil)
	if err != nil {
		t.Fatalf("compile %s: %v", sql, err)
	}
	n, err := planner.Optimize(c.Plan, planner.OptimizeOptions{Pushdown: pushdown{}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// canonical prints plan n with the conjuncts of every filter list sorted
// (AND is commutative; the SQL front-end orders them its own way).
func canonical(t *testing.T, n planner.Node) string {
	t.Helper()
	sorted := func(ps []planner.Predicate) []planner.Predicate {
		out := append([]planner.Predicate(nil), ps...)
		sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
		return out
	}
	out, _, err := planner.Transform(n, func(n planner.Node) (planner.Node, bool, error) {
		switch x := n.(type) {
		case *planner.Scan:
			c := *x
			c.Filters = sorted(x.Filters)
			return &c, true, nil
		case *planner.Filter:
			c := *x
			c.Preds = sorted(x.Preds)
			return &c, true, nil
		}
		return n, false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return planner.String(out)
}

var cases = []struct {
	name, spec, sql string
	// back, when set, is the plan the SQL front-end makes of sql (an
	// equivalent one: it lowers NOT IN to an expression, as SQL's
	// null semantics ask in general).
	back string
}{
	{"all", `{}`, `SELECT "id", "region", "qty", "price", "day", "ok", "weight", "Odd ""name""" FROM "t"`, ""},
	{"projection", `{"columns":["region","id"]}`, `SELECT "region", "id" FROM "t"`, ""},
	{"limit", `{"columns":["id"],"limit":5}`, `SELECT "id" FROM "t" LIMIT 5`, ""},
	{"limit offset", `{"columns":["id"],"limit":5,"offset":10}`, `SELECT "id" FROM "t" LIMIT 5 OFFSET 10`, ""},
	{"comparisons", `{"columns":["id"],"filters":[{"col":"qty","op":"gte","value":3},{"col":"price","op":"lt","value":2.5},{"col":"region","op":"neq","value":"it's"}]}`,
		`SELECT "id" FROM "t" WHERE "qty" >= 3 AND "price" < 2.5 AND "region" <> 'it''s'`, ""},
	{"in and nulls", `{"columns":["id","region"],"filters":[{"col":"region","op":"in","value":["a","b"]},{"col":"id","op":"not_in","value":[1,2]},{"col":"day","op":"is_not_null"}],"limit":3}`,
		`SELECT "id", "region" FROM "t" WHERE "region" IN ('a', 'b') AND "id" NOT IN (1, 2) AND "day" IS NOT NULL LIMIT 3`,
		"Compute: NOT id IN (1, 2) AS __filter_1"},
	{"range date bool", `{"columns":["id"],"filters":[{"col":"day","op":"range","value":{"min":"2024-01-01","max":"2024-12-31"}},{"col":"ok","op":"eq","value":true}]}`,
		`SELECT "id" FROM "t" WHERE "day" BETWEEN DATE '2024-01-01' AND DATE '2024-12-31' AND "ok" = TRUE`, ""},
	{"or group", `{"columns":["id"],"filters":[{"any":[{"col":"qty","op":"lt","value":1},{"col":"region","op":"is_null"}]}]}`,
		`SELECT "id" FROM "t" WHERE ("qty" < 1 OR "region" IS NULL)`, ""},
	{"whole float", `{"columns":["id"],"filters":[{"col":"price","op":"eq","value":2}]}`, `SELECT "id" FROM "t" WHERE "price" = 2.0`, ""},
	{"quoted column", `{"columns":["Odd \"name\""],"filters":[{"col":"Odd \"name\"","op":"eq","value":"x"}]}`,
		`SELECT "Odd ""name""" FROM "t" WHERE "Odd ""name""" = 'x'`, ""},
}

// TestGenerate: the SQL of each plan, and the round trip: that SQL,
// parsed by sqlfront and optimized, is the same plan.
func TestGenerate(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := plan(t, c.spec)
			got, err := sqlgen.Generate(p, sqlgen.Table{Name: "t"}, sqlgen.Postgres)
			if err != nil {
				t.Fatalf("%v\n%s", err, planner.String(p))
			}
			if got != c.sql {
				t.Errorf("SQL\n got %s\nwant %s", got, c.sql)
			}
			back := reparse(t, got)
			a, b := canonical(t, p), canonical(t, back)
			if c.back != "" {
				if !strings.Contains(b, c.back) {
					t.Errorf("round trip of %s:\n%s\nwant a plan with %q", got, b, c.back)
				}
				return
			}
			if a != b {
				t.Errorf("round trip changed the plan:\n%s\n-- back from %s --\n%s", a, got, b)
			}
		})
	}
}

// TestNotPushed: filters the dialect does not print exactly stay local
// (the optimizer keeps them above the scan) and the generator refuses a
// plan with them rather than printing something else.
func TestNotPushed(t *testing.T) {
	for _, spec := range []string{
		`{"filters":[{"col":"region","op":"eq","value":"a","case_insensitive":true}]}`,
		`{"filters":[{"col":"region","op":"contains","value":"a"}]}`,
		`{"filters":[{"col":"region","op":"regex","value":"^a"}]}`,
		`{"filters":[{"col":"weight","op":"gt","value":1.5}]}`,
		`{"filters":[{"any":[{"col":"qty","op":"lt","value":1},{"col":"region","op":"starts_with","value":"x"}]}]}`,
		`{"columns":["region"],"order_by":[{"col":"region"}]}`,
		`{"columns":["price"],"order_by":[{"col":"price"}],"limit":3}`,
		`{"group_by":["region"],"aggs":[{"col":"qty","fn":"median"}]}`,
	} {
		p := plan(t, spec)
		sql, err := sqlgen.Generate(p, sqlgen.Table{Name: "t"}, sqlgen.Postgres)
		if !errors.Is(err, sqlgen.ErrUnsupported) {
			t.Errorf("%s: want ErrUnsupported, got %q, %v", spec, sql, err)
		}
	}
	nan := planner.Predicate{Col: "price", Op: planner.OpEq, Value: &planner.Literal{Type: arrow.PrimitiveTypes.Float64, Value: math.NaN()}}
	if sqlgen.Postgres.Printable(nan, schema) {
		t.Error("NaN literal printable")
	}
	str := func(op planner.Op) planner.Predicate {
		return planner.Predicate{Col: "region", Op: op, Value: &planner.Literal{Type: arrow.BinaryTypes.String, Value: "a"}}
	}
	if !sqlgen.MySQL.Printable(str(planner.OpEq), schema) || sqlgen.MySQL.Printable(str(planner.OpNeq), schema) || sqlgen.MySQL.Printable(str(planner.OpLt), schema) {
		t.Error("mysql: only eq/in on strings (case-insensitive collations)")
	}
	if !sqlgen.Postgres.Printable(str(planner.OpNeq), schema) {
		t.Error("postgres: neq on strings not printable")
	}
}

// TestAggregate: count(*) (the catalog's row count) and a grouped
// aggregate, in both dialects.
func TestAggregate(t *testing.T) {
	p := plan(t, `{"group_by":["region"],"aggs":[{"col":"*","fn":"count"},{"col":"qty","fn":"sum"}],"filters":[{"col":"id","op":"gt","value":0}]}`)
	for _, c := range []struct {
		d    sqlgen.Dialect
		want string
	}{
		{sqlgen.Postgres, `SELECT "region", count(*) AS "count_all", sum("qty") AS "sum_qty" FROM "s"."t" WHERE "id" > 0 GROUP BY "region"`},
		{sqlgen.MySQL, "SELECT `region`, count(*) AS `count_all`, sum(`qty`) AS `sum_qty` FROM `s`.`t` WHERE `id` > 0 GROUP BY `region`"},
	} {
		got, err := sqlgen.Generate(p, sqlgen.Table{Schema: "s", Name: "t"}, c.d)
		if err != nil {
			t.Fatalf("%v\n%s", err, planner.String(p))
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.d.Name, got, c.want)
		}
	}
	// Round trip of the aggregate (what a remote runs when it is pushed).
	sql, err := sqlgen.Generate(p, sqlgen.Table{Name: "t"}, sqlgen.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := canonical(t, p), canonical(t, reparse(t, sql)); a != b {
		t.Errorf("round trip changed the plan:\n%s\n-- back from %s --\n%s", a, sql, b)
	}
	lit := planner.Predicate{Col: "region", Op: planner.OpEq, Value: &planner.Literal{Type: arrow.BinaryTypes.String, Value: `a\'b`}}
	sc := arrow.NewSchema([]arrow.Field{{Name: "region", Type: arrow.BinaryTypes.String}}, nil)
	out := arrow.NewSchema([]arrow.Field{{Name: "region", Type: arrow.BinaryTypes.String}}, nil)
	s := &planner.Scan{Dataset: dataset, Out: out, Columns: []string{"region"}, Filters: []planner.Predicate{lit}}
	_ = sc
	got, err := sqlgen.Generate(s, sqlgen.Table{Name: "t"}, sqlgen.MySQL)
	if want := "SELECT `region` FROM `t` WHERE `region` = 'a\\\\''b'"; err != nil || got != want {
		t.Errorf("mysql escapes: got %s, %v; want %s", got, err, want)
	}
}

func TestDialectNamed(t *testing.T) {
	for name, want := range map[string]string{"": "postgres", "PostgreSQL": "postgres", "mysql": "mysql"} {
		d, err := sqlgen.DialectNamed(name)
		if err != nil || d.Name != want {
			t.Errorf("%q: %v %v", name, d.Name, err)
		}
	}
	if _, err := sqlgen.DialectNamed("oracle"); err == nil {
		t.Error("oracle accepted")
	}
}
