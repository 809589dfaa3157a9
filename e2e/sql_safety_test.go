package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// sqlAttacks is the injection and escape corpus: each statement is refused
// with its code.
func sqlAttacks() []struct{ sql, code string } {
	type c = struct{ sql, code string }
	var out []c
	forbidden := []string{
		`DROP TABLE "weather/stations"`, `DELETE FROM "weather/stations"`, `INSERT INTO "weather/stations" VALUES (1)`,
		`UPDATE "weather/stations" SET name = 'x'`, `CREATE TABLE t AS SELECT * FROM "weather/stations"`, `CREATE VIEW v AS SELECT 1`,
		`COPY "weather/stations" TO '/tmp/out.csv'`, `COPY t FROM '/etc/passwd'`, `COPY (SELECT 1) TO PROGRAM 'id'`,
		`ATTACH 'evil.db' AS e`, `ATTACH DATABASE '/tmp/x.sqlite' AS x`, `DETACH e`, `INSTALL httpfs`, `LOAD httpfs`, `LOAD 'libevil.so'`,
		`PRAGMA database_list`, `PRAGMA enable_profiling`, `SET search_path TO public`, `SET memory_limit = '100GB'`, `RESET ALL`,
		`CALL pg_sleep(10)`, `ALTER TABLE t ADD COLUMN c int`, `TRUNCATE "weather/stations"`, `GRANT ALL ON t TO public`,
		`VACUUM`, `CHECKPOINT`, `EXPORT DATABASE '/tmp/dump'`, `IMPORT DATABASE '/tmp/dump'`, `BEGIN`, `COMMIT`,
		`PREPARE p AS SELECT 1`, `EXECUTE p`, `DO $$ BEGIN PERFORM 1; END $$`, `LISTEN ch`, `NOTIFY ch`, `LOCK TABLE t`,
		`USE other`, `SUMMARIZE "weather/stations"`, `DESCRIBE "weather/stations"`, `SHOW TABLES`,
		`SELECT * FROM "weather/stations"; DROP TABLE x`, `SELECT 1 FROM "weather/stations";DELETE FROM t`,
		"SELECT * FROM \"weather/stations\" -- harmless\n; COPY t TO '/tmp/x'",
		`SELECT * FROM "weather/stations" /* ; */ ; INSERT INTO t VALUES (1)`, `/* hi */ DROP TABLE t`, `-- c` + "\nDELETE FROM t",
		`SELECT * FROM read_csv('/etc/passwd')`, `SELECT * FROM read_csv_auto('/etc/passwd')`, `SELECT * FROM read_parquet('s3://bucket/x')`,
		`SELECT * FROM read_json('http://evil/x')`, `SELECT * FROM glob('/*')`, `SELECT * FROM generate_series(1, 10)`,
		`SELECT * FROM "weather/stations" s JOIN read_csv('/etc/shadow') x ON true`, `SELECT pg_read_file('/etc/passwd') FROM "weather/stations"`,
		`SELECT pg_ls_dir('/') FROM "weather/stations"`, `SELECT lo_import('/etc/passwd') FROM "weather/stations"`,
		`SELECT current_setting('data_directory') FROM "weather/stations"`, `SELECT set_config('a', 'b', false) FROM "weather/stations"`,
		`SELECT dblink('host=evil', 'select 1') FROM "weather/stations"`, `SELECT pg_sleep(100) FROM "weather/stations"`,
		`SELECT * FROM pg_catalog.pg_tables`, `SELECT * FROM information_schema.tables`, `SELECT * FROM pg_settings`,
		`SELECT * FROM pg_shadow`, `SELECT * FROM sqlite_master`, `SELECT * FROM duckdb_settings`,
		`SELECT name INTO stolen FROM "weather/stations"`, `SELECT * FROM "weather/stations" FOR UPDATE`,
		`WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d`, `WITH i AS (INSERT INTO t VALUES (1) RETURNING 1) SELECT * FROM i`,
		`EXPLAIN DELETE FROM t`, `EXPLAIN ANALYZE COPY t TO '/tmp/x'`, `SELECT * FROM "weather/stations" x, read_csv('/etc/passwd') y`,
		`SELECT (SELECT pg_read_file('/etc/passwd')) FROM "weather/stations"`, `SELECT * FROM (SELECT * FROM read_csv('/etc/hosts')) t`,
		`SELECT * FROM "weather/stations" WHERE station_id IN (SELECT * FROM read_csv('/etc/passwd'))`,
		`SELECT READ_CSV('/etc/passwd') FROM "weather/stations"`, `SELECT "read_csv"('/etc/passwd') FROM "weather/stations"`,
		`SELECT main.read_csv('/etc/passwd') FROM "weather/stations"`,
	}
	for _, s := range forbidden {
		out = append(out, c{s, "forbidden_sql"})
	}
	notFound := []string{
		`SELECT * FROM "../etc/passwd"`, `SELECT * FROM "/etc/passwd"`, `SELECT * FROM "weather/../../etc/passwd"`,
		`SELECT * FROM "weather/stations/../../../etc/shadow"`, `SELECT * FROM "weather／stations"`,
		"SELECT * FROM \"weather/stations\u200b\"", "SELECT * FROM \"weather/ѕtations\"", `SELECT * FROM "~/.ssh/id_rsa"`,
		`SELECT * FROM "file:///etc/passwd"`, `SELECT * FROM "http://evil/x.csv"`, `SELECT * FROM "weather\stations"`,
	}
	for _, s := range notFound {
		out = append(out, c{s, "dataset_not_found"})
	}
	unsupported := []string{
		`SELECT station_id FROM "weather/stations" WHERE station_id IN (` + strings.Repeat("'x', ", 5000) + `'y')`,
		`SELECT station_id FROM "weather/stations" WHERE ` + strings.Repeat("(", 500) + "true" + strings.Repeat(")", 500),
		`SELECT ` + strings.Repeat("1 + ", 20000) + `1 FROM "weather/stations"`,
		`SELECT station_id FROM "weather/stations" WHERE ` + strings.Repeat("NOT ", 300) + "true",
		`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r`,
		`SELECT * FROM "weather/stations" TABLESAMPLE SYSTEM (10)`,
		`SELECT DISTINCT ON (country) name FROM "weather/stations"`,
	}
	for _, s := range unsupported {
		out = append(out, c{s, "unsupported_sql"})
	}
	invalid := []string{
		`SELECT name FROM "weather/stations" WHERE regexp_matches(name, '(a)\1')`, `SELEC * FROM "weather/stations"`,
		`SELECT * FROM "weather/stations" WHERE name = 'unterminated`, `SELECT nosuch FROM "weather/stations"`,
		`SELECT station_id FROM "weather/stations" WHERE station_id = $3`,
	}
	for _, s := range invalid {
		out = append(out, c{s, ""}) // some refusal with a structured code
	}
	return out
}

// TestSQLInjectionCorpus: every attempt of the corpus is refused with its
// code, and the server keeps answering (a good query after every tenth
// attempt and at the end); serve --sql=false removes advanced_query.
func TestSQLInjectionCorpus(t *testing.T) {
	c := startStdio(t)
	good := func() {
		t.Helper()
		var r queryResult
		call(t, c, "advanced_query", map[string]any{"sql": `SELECT count(*) AS n FROM "weather/stations" WHERE country = $1`, "params": []any{"Armenia"}}, &r)
		if len(r.Data) != 1 || r.Data[0]["n"] == nil {
			t.Fatalf("good query: %+v", r)
		}
	}
	attacks := sqlAttacks()
	if len(attacks) < 100 {
		t.Fatalf("the corpus has %d attempts, want at least 100", len(attacks))
	}
	for i, a := range attacks {
		res := callRaw(t, c, "advanced_query", map[string]any{"sql": a.sql})
		var e struct {
			Code string `json:"code"`
			Hint string `json:"hint"`
		}
		if !res.IsError || json.Unmarshal([]byte(text(res)), &e) != nil || e.Code == "" || e.Hint == "" {
			t.Errorf("%.80q: not refused with a structured error: %s", a.sql, text(res))
		} else if a.code != "" && e.Code != a.code {
			t.Errorf("%.80q: code %s, want %s (%s)", a.sql, e.Code, a.code, text(res))
		}
		if i%10 == 9 {
			good()
		}
	}
	good()

	// The same statements through estimate_query {sql} are refused alike.
	res := callRaw(t, c, "estimate_query", map[string]any{"sql": `COPY "weather/stations" TO '/tmp/x'`})
	if !res.IsError || !strings.Contains(text(res), "forbidden_sql") {
		t.Errorf("estimate_query sql: %s", text(res))
	}

	off := startStdio(t, strings.Join([]string{"--sql", "false"}, "="))
	tools, err := off.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "advanced_query" {
			t.Fatal("--sql=false still lists advanced_query")
		}
	}
}
