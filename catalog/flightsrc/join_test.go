package flightsrc_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/catalog/flightsrc"
	"github.com/quarrydb/quarry/planner"
	"github.com/quarrydb/quarry/service"
)

// The second table of the join tests: the same rows in SQLite and as a
// local file (a null region, a repeated one, one no sale has).
const (
	regionsDDL   = `CREATE TABLE regions (region varchar(20), code int, label text)`
	regionsRows  = `INSERT INTO regions VALUES ('north', 1, 'N'), ('south', 2, 'S'), ('east', 3, NULL), (NULL, 4, 'none'), ('far', 5, 'F'), ('north', 6, 'N2')`
	regionsJSONL = `{"region":"north","code":1,"label":"N"}
{"region":"south","code":2,"label":"S"}
{"region":"east","code":3,"label":null}
{"region":null,"code":4,"label":"none"}
{"region":"far","code":5,"label":"F"}
{"region":"north","code":6,"label":"N2"}
`
)

// joinQueries join sales ({S}) and regions ({R}); each is pushed to the
// remote as one statement when both are tables of it.
var joinQueries = []string{
	`SELECT r.label, count(*) AS n, sum(s.qty) AS q FROM {S} s JOIN {R} r ON s.region = r.region GROUP BY r.label ORDER BY r.label`,
	`SELECT s.id, r.code FROM {S} s LEFT JOIN {R} r ON s.region = r.region WHERE s.id < 40 ORDER BY s.id, r.code`,
	`SELECT r.region, count(s.id) AS n FROM {R} r LEFT JOIN {S} s ON r.region = s.region GROUP BY r.region ORDER BY r.region`,
	`SELECT r.code, count(*) AS n, max(s.id) AS hi FROM {S} s FULL JOIN {R} r ON s.region = r.region GROUP BY r.code ORDER BY r.code`,
	`SELECT r.code, count(s.id) AS n FROM {S} s RIGHT JOIN {R} r ON s.region = r.region WHERE r.code > 1 GROUP BY r.code ORDER BY r.code`,
	`SELECT count(*) AS n FROM {S} WHERE region IN (SELECT region FROM {R} WHERE code > 1)`,
	`SELECT count(*) AS n, sum(qty) AS q FROM {S} s WHERE NOT EXISTS (SELECT 1 FROM {R} r WHERE r.region = s.region)`,
	`SELECT s.id, r.label FROM {S} s JOIN {R} r ON s.region = r.region ORDER BY s.id DESC, r.code LIMIT 5`,
	`SELECT r.code, count(s.id) AS n, min(s.id) AS lo FROM {S} s RIGHT JOIN {R} r ON s.region = r.region AND s.id < 8 AND s.qty <> r.code WHERE r.code > 1 GROUP BY r.code ORDER BY r.code`,
	`SELECT count(*) AS n FROM {S} s WHERE EXISTS (SELECT 1 FROM {R} r WHERE r.region = s.region AND r.code > s.qty)`,
}

// localJoins join sales and regions with a condition the generator does
// not print (a residual with arithmetic): the join runs locally.
var localJoins = []string{
	`SELECT r.code, s.id FROM {S} s RIGHT JOIN {R} r ON s.region = r.region AND s.qty > r.code * 10 + 5 WHERE r.code > 1 AND s.id < 30 ORDER BY r.code, s.id`,
}

// TestSQLiteRemoteJoin: joins of two tables of one remote (arrow-go's
// SQLite example server) run there as one generated statement with the
// join, and answer as the same join of local files does; a join of a
// remote table with a local one is not sent as a join, and answers the
// same.
func TestSQLiteRemoteJoin(t *testing.T) {
	rows := genRows(600)
	lite := startLite(t, rows, regionsDDL, regionsRows)
	root := t.TempDir()
	writeJSONL(t, root, rows)
	if err := os.WriteFile(filepath.Join(root, "regions.jsonl"), []byte(regionsJSONL), 0o644); err != nil {
		t.Fatal(err)
	}
	a := openApp(t, root, flightsrc.Config{Name: "lite", URI: "grpc://" + lite.addr})
	for _, q := range joinQueries {
		local := rowsOf(t, a, strings.NewReplacer("{S}", "sales", "{R}", "regions").Replace(q))
		lite.sent()
		remote := rowsOf(t, a, strings.NewReplacer("{S}", `"remote/lite/sales"`, "{R}", `"remote/lite/regions"`).Replace(q))
		sameRows(t, q, remote, local)
		sent := lite.sent()
		if len(sent) != 1 || !strings.Contains(sent[0], " JOIN ") && !strings.Contains(sent[0], "EXISTS") {
			t.Errorf("%s: sent %q, want one statement with the join", q, sent)
		}
		mixed := rowsOf(t, a, strings.NewReplacer("{S}", `"remote/lite/sales"`, "{R}", "regions").Replace(q))
		sameRows(t, q+" (remote x local)", mixed, local)
		for _, s := range lite.sent() {
			if strings.Contains(s, "JOIN") || strings.Contains(s, "regions") {
				t.Errorf("%s: a join with a local table sent %q", q, s)
			}
		}
	}
	for _, q := range localJoins {
		local := rowsOf(t, a, strings.NewReplacer("{S}", "sales", "{R}", "regions").Replace(q))
		lite.sent()
		remote := rowsOf(t, a, strings.NewReplacer("{S}", `"remote/lite/sales"`, "{R}", `"remote/lite/regions"`).Replace(q))
		sameRows(t, q, remote, local)
		if sent := lite.sent(); len(sent) != 2 || strings.Contains(sent[0]+sent[1], "JOIN") {
			t.Errorf("%s: sent %q, want a statement per table", q, sent)
		}
	}
	// The statement of docs/SCALE_OUT.md's example.
	lite.sent()
	rowsOf(t, a, `SELECT r.label, count(*) AS n FROM "remote/lite/sales" s JOIN "remote/lite/regions" r ON s.region = r.region GROUP BY r.label`)
	want := `SELECT "r.label" AS "label", count(*) AS "n" FROM (SELECT "l"."region", "r"."region" AS "r.region", "r"."label" AS "r.label" FROM (SELECT "region" FROM "sales") AS "l" INNER JOIN (SELECT "region", "label" FROM "regions") AS "r" ON "l"."region" = "r"."region") AS "j" GROUP BY "r.label"`
	if sent := lite.sent(); len(sent) != 1 || sent[0] != want {
		t.Errorf("sent %q, want %q", sent, want)
	}
	// estimate_query shows the statement with the join.
	est, err := a.Service.EstimateQuery(context.Background(), service.EstimateQueryRequest{
		SQL: strings.NewReplacer("{S}", `"remote/lite/sales"`, "{R}", `"remote/lite/regions"`).Replace(joinQueries[0])})
	if err != nil {
		t.Fatal(err)
	}
	if want := `INNER JOIN (SELECT "region", "label" FROM "regions") AS "r"`; !strings.Contains(est.PhysicalPlan, want) {
		t.Errorf("physical plan:\n%s\nwant %s", est.PhysicalPlan, want)
	}
	// The knob tools' joins (query_data's join) are pushed the same way.
	est, err = a.Service.EstimateQuery(context.Background(), service.EstimateQueryRequest{Dataset: "remote/lite/sales", Spec: planner.Spec{
		Join:    []planner.JoinSpec{{Dataset: "remote/lite/regions", As: "r", Type: planner.JoinLeft, On: []planner.JoinOn{{Left: "region", Right: "region"}}}},
		GroupBy: planner.GroupKeys{"r.label"}, Aggs: []planner.AggSpec{{Col: "*", Fn: planner.AggCount}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `LEFT OUTER JOIN (SELECT "region", "label" FROM "regions") AS "r"`; !strings.Contains(est.PhysicalPlan, want) {
		t.Errorf("knob join, physical plan:\n%s\nwant %s", est.PhysicalPlan, want)
	}
}
