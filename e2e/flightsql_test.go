package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/apache/arrow-go/v18/arrow/flight/flightsql/driver" // the "flightsql" database/sql driver
)

// openFlightSQL opens arrow-go's database/sql Flight SQL driver on addr
// (token "" sends none) and waits until the server answers.
func openFlightSQL(t *testing.T, addr, token string) *sql.DB {
	t.Helper()
	dsn := "flightsql://" + addr + "?timeout=60s"
	if token != "" {
		dsn += "&token=" + token
	}
	db, err := sql.Open("flightsql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		var one int64
		err := db.QueryRow("SELECT 1").Scan(&one)
		if err == nil && one == 1 {
			return db
		}
		if time.Now().After(deadline) {
			t.Fatalf("Flight SQL on %s never answered: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// flightRows runs q through the driver and returns its rows as text
// (nil for NULL), rendered as the sql tool's JSON renders them.
func flightRows(db *sql.DB, q string, args ...any) ([][]*string, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]*string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]*string, len(cols))
		for i, v := range vals {
			row[i] = flightCell(v)
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

func flightCell(v any) *string {
	var s string
	switch x := v.(type) {
	case nil:
		return nil
	case time.Time:
		x = x.UTC()
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			s = x.Format("2006-01-02")
		} else {
			s = x.Format(time.RFC3339Nano)
		}
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		s = strconv.FormatFloat(float64(x), 'g', -1, 32)
	default:
		s = fmt.Sprint(x)
	}
	return &s
}

// TestFlightSQLCorpus runs the SQL differential corpus through two
// independent Flight SQL clients against `serve --flightsql-addr` — arrow-go's
// database/sql driver, and arrow-rs's client (@lakehouse-rs/flight-sql-client,
// decoded by apache-arrow's JavaScript reader: interop/flightsql/corpus.mjs) —
// and through the sql tool (advanced_query over MCP) of the same server: the
// same rows, in order where the query fixes it, numbers to the last bit
// (the sql tool's answers are DuckDB's: TestSQLAgainstDuckDB). GetTables through the second client
// lists the catalog's datasets.
func TestFlightSQLCorpus(t *testing.T) {
	// The corpus's answers are strings, dates, doubles, booleans and
	// integers; this adds timestamps (a fraction, before 1970, whole
	// seconds), which each client renders its own way.
	cases := append(readSQLCorpus(t),
		sqlCase{sql: `SELECT CAST('2024-01-02 03:04:05.123456' AS TIMESTAMP) AS a, CAST('1969-12-31 23:59:59.000001' AS TIMESTAMP) AS b, CAST('2024-03-01 10:20:30' AS TIMESTAMP) AS c`})
	root, files := copyDemo(t, "weather/daily", "weather/stations", "sales/orders")
	faddr := freeAddr(t)
	c, _ := startHTTP(t, "--data", root, "--flightsql-addr", faddr, "--max-rows", "100000", "--max-bytes", "100000000", "--max-cells", "10000000",
		"--rate-limit", "0") // the limits apply to Flight SQL too: TestFlightSQLLimits
	db := openFlightSQL(t, faddr, "")
	wants := make([][][]*string, len(cases))
	for i, tc := range cases {
		res := callRaw(t, c, "advanced_query", map[string]any{"sql": tc.sql})
		if res.IsError {
			t.Errorf("sql tool: %s: %s", tc.sql, text(res))
			continue
		}
		wants[i] = toolRows(t, res)
		got, err := flightRows(db, tc.sql)
		if err != nil {
			t.Errorf("flight sql: %s: %v", tc.sql, err)
			continue
		}
		compareSQLRows(t, sqlCase{sql: "Flight SQL vs the sql tool: " + tc.sql, ordered: tc.ordered, exact: true}, got, wants[i])
	}
	// Parameters through the driver (prepared statement, $n bound from Go values).
	got, err := flightRows(db, `SELECT count(*) FROM "sales/orders" WHERE region = $1 AND qty >= $2`, "Lori", int64(5))
	if err != nil {
		t.Fatal(err)
	}
	res := callRaw(t, c, "advanced_query", map[string]any{"sql": `SELECT count(*) FROM "sales/orders" WHERE region = $1 AND qty >= $2`, "params": []any{"Lori", 5}})
	compareSQLRows(t, sqlCase{sql: "parameters", exact: true}, got, toolRows(t, res))

	queries := make([]string, len(cases))
	for i, tc := range cases {
		queries[i] = tc.sql
	}
	rs := flightSQLRust(t, faddr, "", queries)
	for i, tc := range cases {
		if r := rs.Results[i]; r.Error != "" {
			t.Errorf("arrow-rs client: %s: %s", tc.sql, r.Error)
		} else if wants[i] != nil {
			compareSQLRows(t, sqlCase{sql: "Flight SQL (arrow-rs client) vs the sql tool: " + tc.sql, ordered: tc.ordered, exact: true}, r.Rows, wants[i])
		}
	}
	ids := slices.Sorted(maps.Keys(files))
	if tables := rs.tableNames(t); !slices.Equal(tables, ids) {
		t.Errorf("GetTables through arrow-rs: %v, want %v", tables, ids)
	}
}

// rsAnswer is interop/flightsql/corpus.mjs's output: GetTables' table names
// (or its error) and each query's rows as text (or its error).
type rsAnswer struct {
	Client  string          `json:"client"`
	Tables  json.RawMessage `json:"tables"`
	Results []struct {
		Columns []string    `json:"columns"`
		Rows    [][]*string `json:"rows"`
		Error   string      `json:"error"`
	} `json:"results"`
}

// flightSQLRust runs queries through arrow-rs's Flight SQL client
// (interop/flightsql/corpus.mjs, its pinned npm tree installed once) against
// the plaintext facade on addr, with a bearer token unless token is "".
func flightSQLRust(t *testing.T, addr, token string, queries []string) rsAnswer {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	spec := writeSpec(t, map[string]any{"host": host, "port": p, "token": token, "queries": queries})
	out := nodeScript(t, "flightsql", "node_modules/@lakehouse-rs/flight-sql-client/package.json", "corpus.mjs", spec)
	var a rsAnswer
	if err := json.Unmarshal(out, &a); err != nil || len(a.Results) != len(queries) || a.Client == "" {
		t.Fatalf("corpus.mjs output (%v): %s", err, out)
	}
	return a
}

// tableNames returns the table names GetTables gave (failing t if it
// failed).
func (a rsAnswer) tableNames(t *testing.T) []string {
	t.Helper()
	var names []string
	if err := json.Unmarshal(a.Tables, &names); err != nil {
		t.Fatalf("GetTables through arrow-rs: %s", a.Tables)
	}
	return slices.Sorted(slices.Values(names))
}

// checkFlagFlightSQLAddr: --flightsql-addr (and QUARRY_FLIGHTSQL_ADDR)
// serves the catalog over Flight SQL; --print-config shows it; without it
// nothing listens.
func checkFlagFlightSQLAddr(t *testing.T) {
	addr := freeAddr(t)
	startStdio(t, "--data", flagData(t, 10), "--flightsql-addr", addr)
	db := openFlightSQL(t, addr, "")
	var n int64
	if err := db.QueryRow(`SELECT count(*) FROM big`).Scan(&n); err != nil || n != 10 {
		t.Fatalf("count over Flight SQL: %d, %v", n, err)
	}
	if _, err := db.Exec(`DELETE FROM big`); err == nil || !strings.Contains(err.Error(), "PermissionDenied") {
		t.Errorf("update not refused: %v", err)
	}

	envAddr := freeAddr(t)
	launchHTTP(t, []string{"QUARRY_FLIGHTSQL_ADDR=" + envAddr})
	openFlightSQL(t, envAddr, "")

	cmd := exec.Command(binary, "serve", "--print-config")
	cmd.Env = append(env(), "QUARRY_FLIGHTSQL_ADDR="+envAddr)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `flightsql-addr = "`+envAddr+`"`) {
		t.Errorf("--print-config: %v\n%s", err, out)
	}
}

// TestFlightSQLAuth: with tokens, the facade refuses calls without the
// bearer token and answers with it; off loopback it needs tokens.
func TestFlightSQLAuth(t *testing.T) {
	const token = "flight-e2e-token-0123456789abcdef"
	faddr := freeAddr(t)
	launchHTTP(t, []string{"QUARRY_AUTH_TOKENS=" + token}, "--flightsql-addr", faddr)
	openFlightSQL(t, faddr, token)
	// arrow-rs's client sends the token too; without it, it is refused.
	if a := flightSQLRust(t, faddr, token, []string{"SELECT 1"}); a.Results[0].Error != "" || len(a.Results[0].Rows) != 1 {
		t.Errorf("arrow-rs client with the token: %+v", a.Results[0])
	}
	if a := flightSQLRust(t, faddr, "", []string{"SELECT 1"}); a.Results[0].Error == "" {
		t.Errorf("arrow-rs client without a token was answered: %+v", a.Results[0])
	}
	db, err := sql.Open("flightsql", "flightsql://"+faddr+"?timeout=10s")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := flightRows(db, `SELECT 1`); err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
		t.Errorf("no token: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--flightsql-addr", "0.0.0.0:0")
	cmd.Env = append(env(), "QUARRY_AUTH_TOKENS=")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "refusing to serve Flight SQL on 0.0.0.0:0") {
		t.Errorf("non-loopback without tokens: %v\n%s", err, out)
	}
}
