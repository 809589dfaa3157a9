package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
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

// TestFlightSQLCorpus runs the SQL differential corpus through arrow-go's
// database/sql Flight SQL driver against `serve --flightsql-addr` and
// through the sql tool (advanced_query over MCP) of the same server: the
// same rows, in order where the query fixes it.
func TestFlightSQLCorpus(t *testing.T) {
	cases := readSQLCorpus(t)
	root, _ := copyDemo(t, "weather/daily", "weather/stations", "sales/orders")
	faddr := freeAddr(t)
	c, _ := startHTTP(t, "--data", root, "--flightsql-addr", faddr, "--max-rows", "100000", "--max-bytes", "100000000", "--max-cells", "10000000",
		"--rate-limit", "0") // the limits apply to Flight SQL too: TestFlightSQLLimits
	db := openFlightSQL(t, faddr, "")
	for _, tc := range cases {
		res := callRaw(t, c, "advanced_query", map[string]any{"sql": tc.sql})
		if res.IsError {
			t.Errorf("sql tool: %s: %s", tc.sql, text(res))
			continue
		}
		want := toolRows(t, res)
		got, err := flightRows(db, tc.sql)
		if err != nil {
			t.Errorf("flight sql: %s: %v", tc.sql, err)
			continue
		}
		compareSQLRows(t, sqlCase{sql: "Flight SQL vs the sql tool: " + tc.sql, ordered: tc.ordered}, got, want)
	}
	// Parameters through the driver (prepared statement, $n bound from Go values).
	got, err := flightRows(db, `SELECT count(*) FROM "sales/orders" WHERE region = $1 AND qty >= $2`, "Lori", int64(5))
	if err != nil {
		t.Fatal(err)
	}
	res := callRaw(t, c, "advanced_query", map[string]any{"sql": `SELECT count(*) FROM "sales/orders" WHERE region = $1 AND qty >= $2`, "params": []any{"Lori", 5}})
	compareSQLRows(t, sqlCase{sql: "parameters"}, got, toolRows(t, res))
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
