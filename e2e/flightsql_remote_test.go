package e2e

import (
	"fmt"
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
	conf := fmt.Sprintf("[[flightsql]]\nname = %q\nuri = %q\ntoken_file = %q\n", "b", "grpc://"+faddr, tokenFile)
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
	c := corpusServer(t, "--data", t.TempDir(), "--config", cfg)
	compareSQLWithDuckDB(t, c, tables, remote, func(i int) string { return "remote: " + remote[i].sql })

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
