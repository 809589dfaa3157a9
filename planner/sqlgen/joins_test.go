package sqlgen_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/testutil/plantest"
	"github.com/quarrydb/quarry/planner"
	"github.com/quarrydb/quarry/planner/sqlgen"
	"github.com/quarrydb/quarry/sqlfront"
)

// The second table of the join tests: remote/r/u, table "u".
const dimDataset = "remote/r/u"

var dimSchema = arrow.NewSchema([]arrow.Field{
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "id", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// twoTables resolves t and u (by table name or dataset id).
type twoTables struct{}

func (twoTables) Input(_ context.Context, name string) (planner.Input, error) {
	switch name {
	case "t", dataset:
		return input(), nil
	case "u", dimDataset:
		return planner.Input{Dataset: dimDataset, Schema: dimSchema, RowCount: 8, RowCountExact: true}, nil
	}
	return planner.Input{}, qerr.NotFound(qerr.CodeDatasetNotFound, "no table %q", name)
}

// remoteTables names the tables of the two datasets.
func remoteTables(ds string) (sqlgen.Table, error) {
	switch ds {
	case dataset:
		return sqlgen.Table{Name: "t"}, nil
	case dimDataset:
		return sqlgen.Table{Name: "u"}, nil
	}
	return sqlgen.Table{}, sqlgen.ErrUnsupported
}

// joinPusher runs the subtrees with a join that d prints, as a remote
// source of both tables does.
type joinPusher struct{ d sqlgen.Dialect }

func (p joinPusher) PushesPlan(n planner.Node) bool {
	if !hasJoin(n) {
		return false
	}
	_, err := sqlgen.GenerateTables(n, remoteTables, p.d)
	return err == nil
}

func hasJoin(n planner.Node) bool {
	found := false
	planner.Inspect(n, func(x planner.Node, _ int) bool {
		_, j := x.(*planner.Join)
		found = found || j
		return !found
	})
	return found
}

// compile plans sql over t and u (optimized with opts).
func compile(t *testing.T, sql string, opts planner.OptimizeOptions) planner.Node {
	t.Helper()
	st, err := sqlfront.Parse(sql)
	if err != nil {
		t.Fatalf("our parser refuses %s: %v", sql, err)
	}
	c, err := st.Compile(context.Background(), twoTables{}, nil)
	if err != nil {
		t.Fatalf("compile %s: %v", sql, err)
	}
	if opts.Sources == nil {
		return c.Plan
	}
	n, err := planner.Optimize(c.Plan, opts)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// pushed is a subtree PushSubtree handed to the remote and its SQL.
type pushed struct {
	plan planner.Node
	sql  string
}

// pushedJoins plans sql as the service does for two tables of one remote
// (filters in the scans, then PushSubtree) and returns each pushed
// subtree (they all hold a join) with its SQL.
func pushedJoins(t *testing.T, sql string, d sqlgen.Dialect) []pushed {
	t.Helper()
	both := planner.SourceOptions{Pushdown: pushdown{}}
	n := compile(t, sql, planner.OptimizeOptions{Sources: map[string]planner.SourceOptions{dataset: both, dimDataset: both}})
	got, err := planner.PushSubtree(n, func(string) planner.SubtreePusher { return joinPusher{d} })
	if err != nil {
		t.Fatal(err)
	}
	var out []pushed
	planner.Inspect(got, func(x planner.Node, _ int) bool {
		if s, ok := x.(*planner.Scan); ok && s.Pushed != nil {
			q, err := sqlgen.GenerateTables(s.Pushed, remoteTables, d)
			if err != nil {
				t.Fatalf("a pushed plan does not print: %v", err)
			}
			out = append(out, pushed{s.Pushed, q})
		}
		return true
	})
	return out
}

// memSource serves one in-memory batch, projected to the scan's columns.
type memSource struct{ rec arrow.RecordBatch }

func (m memSource) Scan(_ context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	sc := m.rec.Schema()
	cols := opts.Columns
	if cols == nil {
		for _, f := range sc.Fields() {
			cols = append(cols, f.Name)
		}
	}
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		j := sc.FieldIndices(c)[0]
		fields[i], arrs[i] = sc.Field(j), m.rec.Column(j)
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, m.rec.NumRows())
	defer rec.Release()
	return array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
}

// joinData: keys with nulls, duplicates and keys of one side only.
func joinData(t *testing.T, mem memory.Allocator) (main, dim arrow.RecordBatch) {
	t.Helper()
	read := func(sc *arrow.Schema, js string) arrow.RecordBatch {
		rec, _, err := array.RecordFromJSON(mem, sc, strings.NewReader(js))
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	main = read(schema, `[
		{"id": 1, "region": "north", "qty": 5, "price": 1.5, "ok": true, "Odd \"name\"": "a"},
		{"id": 1, "region": "south", "qty": 2, "price": 2.5, "ok": false},
		{"id": 2, "region": "north", "qty": 7, "price": 3.0},
		{"id": 3, "region": null, "qty": 1, "price": null, "ok": true},
		{"id": null, "region": "east", "qty": 9},
		{"id": 5, "region": "west", "qty": null, "price": 4.25},
		{"id": 6, "region": "north", "qty": 4, "ok": false},
		{"id": 7, "region": "south", "qty": 8, "price": 0.5}
	]`)
	dim = read(dimSchema, `[
		{"region": "north", "id": 1, "name": "one"},
		{"region": "north", "id": 2, "name": "two"},
		{"region": "south", "id": 2, "name": "two bis"},
		{"region": null, "id": 3, "name": null},
		{"region": "west", "id": null, "name": "nobody"},
		{"region": "far", "id": 9, "name": "nine"},
		{"region": "south", "id": 7, "name": "x"}
	]`)
	return main, dim
}

// run executes plan (unoptimized) over the test data: its rows, sorted.
func run(t *testing.T, plan planner.Node, main, dim arrow.RecordBatch) []string {
	t.Helper()
	srcs := map[string]catalog.Source{dataset: memSource{main}, dimDataset: memSource{dim}}
	first := planner.ScanOf(plan)
	rows, _ := plantest.Run(t, plan, srcs[first.Dataset], planner.OptimizeOptions{}, engine.Options{Sources: srcs})
	lines := strings.Split(strings.TrimSuffix(rows, "\n"), "\n")
	slices.Sort(lines)
	return lines
}

// TestJoins: joins of the two tables are pushed as one statement, and
// the round trip: that statement, planned by our own SQL front-end, gives
// the rows the query gives (over data with null, repeated and one-sided
// keys) under the same column names and types.
func TestJoins(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	main, dim := joinData(t, mem)
	defer main.Release()
	defer dim.Release()
	for _, c := range []struct {
		name, sql string
		// want, when set, is the pushed statement.
		want string
	}{
		{"inner", `SELECT t.id, u.name FROM t JOIN u ON t.id = u.id WHERE t.qty > 3`,
			`SELECT "id", "u.name" AS "name" FROM (SELECT "l"."id", "l"."qty", "r"."id" AS "u.id", "r"."name" AS "u.name" FROM (SELECT "id", "qty" FROM "t" WHERE "qty" > 3) AS "l" INNER JOIN (SELECT "id", "name" FROM "u") AS "r" ON "l"."id" = "r"."id") AS "j"`},
		{"aggregate", `SELECT u.region, count(*), sum(t.qty) FROM t JOIN u USING (id) GROUP BY u.region`,
			`SELECT "u.region" AS "region", count(*) AS "count_all", sum("qty") AS "sum_qty" FROM (SELECT "l"."id", "l"."qty", "r"."region" AS "u.region", "r"."id" AS "u.id" FROM (SELECT "id", "qty" FROM "t") AS "l" INNER JOIN (SELECT "region", "id" FROM "u") AS "r" ON "l"."id" = "r"."id") AS "j" GROUP BY "u.region"`},
		{"left", `SELECT u.id, count(t.day), count(*) FROM u LEFT JOIN t ON u.id = t.id GROUP BY u.id`, ""},
		{"right", `SELECT t.id, t.qty, u.name FROM t RIGHT JOIN u ON t.id = u.id`, ""},
		{"full", `SELECT t.region, u.region FROM t FULL JOIN u ON t.region = u.region`, ""},
		{"two keys", `SELECT t.qty, u.name FROM t JOIN u ON t.id = u.id AND t.region = u.region`, ""},
		{"semi", `SELECT id, qty FROM t WHERE id IN (SELECT id FROM u WHERE name <> 'x')`,
			`SELECT "id", "qty" FROM (SELECT "l"."id", "l"."qty" FROM (SELECT "id", "qty" FROM "t") AS "l" WHERE EXISTS (SELECT 1 FROM (SELECT "id" FROM "u" WHERE "name" <> 'x') AS "r" WHERE "l"."id" = "r"."id")) AS "j"`},
		{"anti", `SELECT id, region FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.id = t.id)`, ""},
		{"not in", `SELECT id FROM t WHERE id NOT IN (SELECT id FROM u WHERE id IS NOT NULL)`, ""},
		{"not in null", `SELECT id FROM t WHERE id NOT IN (SELECT id FROM u)`, ""},
		{"cross aggregate", `SELECT count(*) FROM u a CROSS JOIN u b`, ""},
		{"three tables", `SELECT a.name, count(*) FROM t JOIN u a ON t.id = a.id JOIN u b ON t.region = b.region GROUP BY a.name`, ""},
		{"self join names", `SELECT a.id, b.id, a.name FROM u a JOIN u b ON a.region = b.region WHERE b.id > 1`, ""},
		{"top-n", `SELECT t.id, u.name FROM t JOIN u ON t.id = u.id ORDER BY t.id DESC, u.name LIMIT 3`, ""},
		{"left residual", `SELECT u.id, count(t.day), sum(t.qty) FROM u LEFT JOIN t ON u.id = t.id AND t.qty > u.id GROUP BY u.id`, ""},
		{"left residual strings", `SELECT t.id, u.name FROM t LEFT JOIN u ON t.region = u.region AND t.id <> u.id`, ""},
		{"inequality only", `SELECT t.id, u.id FROM t LEFT JOIN u ON t.qty < u.id`,
			`SELECT "id", "u.id" AS "id_1" FROM (SELECT "l"."id", "l"."qty", "r"."id" AS "u.id" FROM (SELECT "id", "qty" FROM "t") AS "l" LEFT OUTER JOIN (SELECT "id" FROM "u") AS "r" ON ("l"."qty" < "r"."id")) AS "j"`},
		{"anti residual", `SELECT id, region FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.id = t.id AND u.region <> t.region)`, ""},
		{"full residual logic", `SELECT t.id, u.id FROM t FULL JOIN u ON t.id = u.id AND (t.ok OR u.name IS NULL OR NOT t.day IS NULL)`, ""},
		{"having", `SELECT u.name, max(t.qty) AS m FROM t LEFT JOIN u ON t.id = u.id GROUP BY u.name HAVING count(*) > 1`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps := pushedJoins(t, c.sql, sqlgen.Postgres)
			if len(ps) != 1 {
				t.Fatalf("want one pushed join, got %d", len(ps))
			}
			p := ps[0]
			t.Log(p.sql)
			if c.want != "" && p.sql != c.want {
				t.Errorf("SQL\n got %s\nwant %s", p.sql, c.want)
			}
			back := compile(t, p.sql, planner.OptimizeOptions{})
			if a, b := p.plan.Schema(), back.Schema(); !sameColumns(a, b) {
				t.Errorf("columns of the statement %v, of the plan %v", b, a)
			}
			if want, got := run(t, p.plan, main, dim), run(t, back, main, dim); !slices.Equal(want, got) {
				t.Errorf("rows of %s:\n%q\nof the plan it prints:\n%q\n%s", p.sql, got, want, planner.String(p.plan))
			}
		})
	}
}

// sameColumns reports whether a and b have the same column names and
// types (nullability aside).
func sameColumns(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.Fields() {
		if a.Field(i).Name != b.Field(i).Name || !arrow.TypeEqual(a.Field(i).Type, b.Field(i).Type) {
			return false
		}
	}
	return true
}

// TestJoinsNotPushed: joins whose SQL would not say exactly what the
// engine does stay local: residual conditions with arithmetic, floats or
// functions, float keys (NaN, -0), string keys or comparisons where the
// dialect's collations may ignore case.
func TestJoinsNotPushed(t *testing.T) {
	for _, c := range []struct {
		sql string
		d   sqlgen.Dialect
	}{
		{`SELECT t.id, u.name FROM t LEFT JOIN u ON t.id = u.id AND t.qty > u.id + 1`, sqlgen.Postgres},
		{`SELECT t.id, u.name FROM t LEFT JOIN u ON t.id = u.id AND t.price > u.id`, sqlgen.Postgres},
		{`SELECT t.id, u.name FROM t LEFT JOIN u ON t.id = u.id AND lower(t.region) = u.region`, sqlgen.Postgres},
		{`SELECT t.id, u.name FROM t LEFT JOIN u ON t.id = u.id AND t.region < u.region`, sqlgen.MySQL},
		{`SELECT a.id FROM t a JOIN t b ON a.price = b.price`, sqlgen.Postgres},
		{`SELECT t.id FROM t JOIN u ON t.region = u.region`, sqlgen.MySQL},
	} {
		if ps := pushedJoins(t, c.sql, c.d); len(ps) > 0 {
			t.Errorf("%s (%s): pushed %s", c.sql, c.d.Name, ps[0].sql)
		}
	}
	// The same join on integer keys is pushed in the mysql dialect.
	ps := pushedJoins(t, `SELECT t.id FROM t JOIN u ON t.id = u.id`, sqlgen.MySQL)
	want := "SELECT `id` FROM (SELECT `l`.`id`, `r`.`id` AS `u.id` FROM (SELECT `id` FROM `t`) AS `l` INNER JOIN (SELECT `id` FROM `u`) AS `r` ON `l`.`id` = `r`.`id`) AS `j`"
	if len(ps) != 1 || ps[0].sql != want {
		t.Errorf("mysql: got %v, want %s", ps, want)
	}
}
