package sqlgen_test

import (
	"errors"
	"testing"

	"github.com/quarrydb/quarry/planner"
	"github.com/quarrydb/quarry/planner/sqlgen"
)

// TestClauses: top-N (ORDER BY + LIMIT), HAVING and avg, in both
// dialects, and the round trip through sqlfront where the SQL says the
// same as the plan (avg prints as sum / count: its plan differs).
func TestClauses(t *testing.T) {
	for _, c := range []struct {
		name, spec, pg, my string
		roundTrip          bool
	}{
		{"top-n", `{"columns":["id","region"],"filters":[{"col":"qty","op":"gt","value":1}],"order_by":[{"col":"id","desc":true}],"limit":3}`,
			`SELECT "id", "region" FROM "t" WHERE "qty" > 1 ORDER BY "id" DESC NULLS LAST LIMIT 3`,
			"SELECT `id`, `region` FROM `t` WHERE `qty` > 1 ORDER BY `id` IS NULL, `id` DESC LIMIT 3", true},
		{"top-n nulls first, offset", `{"columns":["day"],"order_by":[{"col":"day","nulls_first":true},{"col":"ok"}],"limit":2,"offset":4}`,
			`SELECT "day" FROM "t" ORDER BY "day" NULLS FIRST, "ok" NULLS LAST LIMIT 2 OFFSET 4`,
			"SELECT `day` FROM `t` ORDER BY `day` IS NULL DESC, `day`, `ok` IS NULL, `ok` LIMIT 2 OFFSET 4", true},
		{"having", `{"group_by":["qty"],"aggs":[{"col":"*","fn":"count"},{"col":"id","fn":"max"}],"having":[{"col":"count_all","op":"gte","value":5},{"col":"max_id","op":"lt","value":100}]}`,
			`SELECT "qty", count(*) AS "count_all", max("id") AS "max_id" FROM "t" GROUP BY "qty" HAVING count(*) >= 5 AND max("id") < 100`,
			"SELECT `qty`, count(*) AS `count_all`, max(`id`) AS `max_id` FROM `t` GROUP BY `qty` HAVING count(*) >= 5 AND max(`id`) < 100", true},
		{"aggregate top-n", `{"group_by":["qty"],"aggs":[{"col":"*","fn":"count"}],"order_by":[{"col":"count_all","desc":true},{"col":"qty"}],"limit":5}`,
			`SELECT "qty", count(*) AS "count_all" FROM "t" GROUP BY "qty" ORDER BY "count_all" DESC NULLS LAST, "qty" NULLS LAST LIMIT 5`,
			"SELECT `qty`, count(*) AS `count_all` FROM `t` GROUP BY `qty` ORDER BY count(*) IS NULL, count(*) DESC, `qty` IS NULL, `qty` LIMIT 5", true},
		{"count distinct", `{"group_by":["ok"],"aggs":[{"col":"region","fn":"count_distinct"}]}`,
			`SELECT "ok", count(DISTINCT "region") AS "count_distinct_region" FROM "t" GROUP BY "ok"`,
			"SELECT `ok`, count(DISTINCT `region`) AS `count_distinct_region` FROM `t` GROUP BY `ok`", true},
		{"avg", `{"group_by":["region"],"aggs":[{"col":"qty","fn":"avg"},{"col":"price","fn":"sum"}],"having":[{"col":"avg_qty","op":"gt","value":2.5}]}`,
			`SELECT "region", CAST(sum("qty") AS DOUBLE PRECISION) / count("qty") AS "avg_qty", sum("price") AS "sum_price" FROM "t" GROUP BY "region" HAVING CAST(sum("qty") AS DOUBLE PRECISION) / count("qty") > 2.5`,
			"SELECT `region`, CAST(sum(`qty`) AS DOUBLE) / count(`qty`) AS `avg_qty`, sum(`price`) AS `sum_price` FROM `t` GROUP BY `region` HAVING CAST(sum(`qty`) AS DOUBLE) / count(`qty`) > 2.5", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := plan(t, c.spec)
			for _, d := range []struct {
				d    sqlgen.Dialect
				want string
			}{{sqlgen.Postgres, c.pg}, {sqlgen.MySQL, c.my}} {
				got, err := sqlgen.Generate(p, sqlgen.Table{Name: "t"}, d.d)
				if err != nil {
					t.Fatalf("%s: %v\n%s", d.d.Name, err, planner.String(p))
				}
				if got != d.want {
					t.Errorf("%s:\n got %s\nwant %s", d.d.Name, got, d.want)
				}
			}
			if !c.roundTrip {
				return
			}
			if a, b := canonical(t, p), canonical(t, reparse(t, c.pg)); a != b {
				t.Errorf("round trip changed the plan:\n%s\n-- back from %s --\n%s", a, c.pg, b)
			}
		})
	}
}

// TestClausesNotPushed: sort keys the remote may order otherwise (floats:
// NaN; strings where collations ignore case), a sort without a limit and
// HAVING filters the dialect does not print stay local.
func TestClausesNotPushed(t *testing.T) {
	for _, c := range []struct {
		spec string
		d    sqlgen.Dialect
	}{
		{`{"columns":["price"],"order_by":[{"col":"price","desc":true}],"limit":3}`, sqlgen.Postgres},
		{`{"columns":["region"],"order_by":[{"col":"region"}],"limit":3}`, sqlgen.MySQL},
		{`{"columns":["id"],"order_by":[{"col":"id"}]}`, sqlgen.Postgres},
		{`{"group_by":["region"],"aggs":[{"col":"*","fn":"count"}],"having":[{"col":"region","op":"contains","value":"x"}]}`, sqlgen.Postgres},
		{`{"group_by":["qty"],"aggs":[{"col":"region","fn":"max"}],"having":[{"col":"max_region","op":"gt","value":"m"}]}`, sqlgen.MySQL},
	} {
		p := plan(t, c.spec)
		if sql, err := sqlgen.Generate(p, sqlgen.Table{Name: "t"}, c.d); !errors.Is(err, sqlgen.ErrUnsupported) {
			t.Errorf("%s (%s): want ErrUnsupported, got %q, %v\n%s", c.spec, c.d.Name, sql, err, planner.String(p))
		}
	}
}
