package e2e

import (
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlightSQLRemoteCorpus re-runs the SQL differential corpus through
// the Flight SQL remote path: Quarry B serves the corpus's CSVs through
// its facade (`serve --flightsql-addr`, with a bearer token), Quarry A has
// B as the [[flightsql]] remote "b" of its config file (token from a
// file) and an empty data root, and every query, its tables renamed to
// A's remote/b/... ids, goes through A's advanced_query: what A's planner
// pushes runs on B as generated SQL, the rest on A over B's streamed
// batches. The rows equal DuckDB's over the same CSVs (views named by
// the remote ids), as the local run's do (TestSQLAgainstDuckDB).
func TestFlightSQLRemoteCorpus(t *testing.T) {
	const token = "flight-remote-e2e-token-0123456789"
	root, files := copyDemo(t, "weather/daily", "weather/stations", "sales/orders")
	faddr := freeAddr(t)
	launchHTTP(t, []string{"QUARRY_AUTH_TOKENS=" + token}, "--data", root, "--flightsql-addr", faddr,
		"--rate-limit", "0") // A calls B twice a query: the default 20 calls/s would pace the run
	openFlightSQL(t, faddr, token)

	dir := t.TempDir()
	tokenFile, cfg := filepath.Join(dir, "b.token"), filepath.Join(dir, "quarry.toml")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Remote c is B again under another name (another connection): a
	// join of b's table with c's is a join across remotes.
	var conf string
	for _, name := range []string{"b", "c"} {
		conf += fmt.Sprintf("[[flightsql]]\nname = %q\nuri = %q\ntoken_file = %q\n", name, "grpc://"+faddr, tokenFile)
	}
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}

	var renames []string
	tables := map[string]string{}
	for id, file := range files {
		renames = append(renames, `"`+id+`"`, `"remote/b/`+id+`"`)
		tables["remote/b/"+id] = file
	}
	rename := strings.NewReplacer(renames...)
	cases := readSQLCorpus(t)
	remote := make([]sqlCase, len(cases))
	for i, tc := range cases {
		remote[i] = sqlCase{sql: rename.Replace(tc.sql), ordered: tc.ordered}
	}
	// A's own data root holds a copy of the stations: remote x local joins.
	rootA, local := copyDemo(t, "weather/stations")
	tables["weather/stations"] = local["weather/stations"]
	tables["remote/c/weather/stations"] = files["weather/stations"]
	remote = append(remote, crossJoins...)
	c := corpusServer(t, "--data", rootA, "--config", cfg)
	compareSQLWithDuckDB(t, c, tables, remote, func(i int) string { return "remote: " + remote[i].sql })

	// Joins of two of b's tables are pushed to B as one statement (and
	// gave DuckDB's rows above); joins across remotes or with a local
	// table are not.
	for _, q := range pushedCorpusJoins {
		if plan := physicalPlan(t, c, rename.Replace(q)); !strings.Contains(remoteStatements(plan), " JOIN ") {
			t.Errorf("the join is not pushed to remote b: %s\n%s", q, plan)
		}
	}
	for _, tc := range crossJoins {
		if plan := physicalPlan(t, c, tc.sql); strings.Contains(remoteStatements(plan), "JOIN") {
			t.Errorf("a join across remotes or with a local table was pushed: %s\n%s", tc.sql, plan)
		}
	}

	// The answers came through B: A's plan reads remote b, with what it
	// pushes printed as the SQL it sends.
	var e struct {
		PhysicalPlan string `json:"physical_plan"`
	}
	call(t, c, "estimate_query", map[string]any{"sql": `SELECT region, count(*) FROM "remote/b/sales/orders" WHERE qty > 3 GROUP BY region`}, &e)
	if want := `remote b: SELECT "region", count(*)`; !strings.Contains(e.PhysicalPlan, want) {
		t.Errorf("the physical plan does not show the pushed statement %q:\n%s", want, e.PhysicalPlan)
	}
}

// pushedCorpusJoins are queries of the corpus (testdata/sql_corpus.txt)
// joining two tables that A pushes to B with their joins: equality keys
// and residual conditions the generator prints.
var pushedCorpusJoins = []string{
	`SELECT a.station_id, b.station_id FROM "weather/stations" a FULL JOIN "weather/stations" b ON a.country = b.country AND a.elevation_m < b.elevation_m`,
	`SELECT d.date, s.name FROM "weather/daily" d RIGHT JOIN "weather/stations" s ON d.station_id = s.station_id AND d.snow`,
	`SELECT s.name, d.date, d.tmax_c FROM "weather/daily" d JOIN "weather/stations" s ON d.station_id = s.station_id WHERE d.tmax_c > 35`,
	`SELECT s.country, count(*) FROM "weather/daily" d JOIN "weather/stations" s USING (station_id) GROUP BY s.country`,
	`SELECT s.station_id, count(d.date) FROM "weather/stations" s LEFT JOIN "weather/daily" d ON s.station_id = d.station_id GROUP BY s.station_id`,
	`SELECT count(*) FROM "weather/stations" a CROSS JOIN "weather/stations" b`,
	`SELECT d.station_id, s.name FROM "weather/daily" d JOIN "weather/stations" s ON d.station_id = s.station_id WHERE d.date = DATE '2024-05-01'`,
	`SELECT s.country, d.date, max(d.tmax_c) AS hi FROM "weather/stations" s JOIN "weather/daily" d ON s.station_id = d.station_id GROUP BY s.country, d.date HAVING max(d.tmax_c) > 30`,
}

// crossJoins join b's tables with c's (the same server under another
// remote name) or with A's local copy of the stations: not pushed as
// joins, and still DuckDB's answers.
var crossJoins = []sqlCase{
	{sql: `SELECT s.country, count(*) FROM "remote/b/weather/daily" d JOIN "remote/c/weather/stations" s ON d.station_id = s.station_id GROUP BY s.country`},
	{sql: `SELECT s.country, count(*), max(d.tmax_c) FROM "remote/b/weather/daily" d JOIN "weather/stations" s ON d.station_id = s.station_id WHERE d.snow GROUP BY s.country`},
	{sql: `SELECT s.name, count(d.date) FROM "weather/stations" s LEFT JOIN "remote/b/weather/daily" d ON s.station_id = d.station_id GROUP BY s.name`},
}

// physicalPlan is estimate_query's physical plan of sql on c.
func physicalPlan(t *testing.T, c *client.Client, sql string) string {
	t.Helper()
	var e struct {
		PhysicalPlan string `json:"physical_plan"`
	}
	call(t, c, "estimate_query", map[string]any{"sql": sql}, &e)
	return e.PhysicalPlan
}

// remoteStatements are the statements a physical plan sends to remotes
// (the text after "remote NAME: " on each line).
func remoteStatements(plan string) string {
	var out []string
	for _, line := range strings.Split(plan, "\n") {
		for _, r := range []string{"remote b: ", "remote c: "} {
			if _, sql, ok := strings.Cut(line, r); ok {
				out = append(out, sql)
			}
		}
	}
	return strings.Join(out, "\n")
}
