package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// joinData writes flights.csv, airports.csv and carriers.csv (with null
// keys, duplicate keys, keys with no match on either side) into a new data
// root and returns it.
func joinData(t *testing.T, r *rand.Rand, flights int) string {
	t.Helper()
	root := t.TempDir()
	codes := []string{"SFO", "LAX", "JFK", "BOS", "SEA", "ORD", "DEN", "XXX"}
	var f strings.Builder
	f.WriteString("id,origin,dest_code,delay,carrier\n")
	for i := range flights {
		origin := codes[r.IntN(len(codes))]
		if r.IntN(12) == 0 {
			origin = ""
		}
		dest := fmt.Sprint(r.IntN(9))
		if r.IntN(12) == 0 {
			dest = ""
		}
		fmt.Fprintf(&f, "%d,%s,%s,%d,%d\n", i, origin, dest, r.IntN(100)-10, r.IntN(4))
	}
	airports := "iata,state,code\nSFO,CA,1\nLAX,CA,2\nJFK,NY,3\nBOS,MA,4\nSEA,WA,5\nORD,IL,6\nSEA,WA2,7\n,NV,8\nMIA,FL,10\n"
	carriers := "cid,name\n0,Blue\n1,Red\n2,Green\n"
	for name, body := range map[string]string{"flights.csv": f.String(), "airports.csv": airports, "carriers.csv": carriers} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// rowsOf decodes a query_data/aggregate result's rows into text cells in
// the order of cols (JSON null as nil).
func rowsOf(t *testing.T, data json.RawMessage, cols []string) [][]*string {
	t.Helper()
	var objs []map[string]json.RawMessage
	if err := json.Unmarshal(data, &objs); err != nil {
		t.Fatalf("decoding rows: %v\n%s", err, data)
	}
	out := make([][]*string, len(objs))
	for i, o := range objs {
		out[i] = make([]*string, len(cols))
		for c, name := range cols {
			raw, ok := o[name]
			if !ok {
				t.Fatalf("row %d has no column %q: %s", i, name, data)
			}
			if string(raw) == "null" {
				continue
			}
			var s string
			if json.Unmarshal(raw, &s) != nil {
				s = string(raw)
			}
			out[i][c] = &s
		}
	}
	return sortText(out)
}

func sortText(rows [][]*string) [][]*string {
	slices.SortFunc(rows, func(a, b []*string) int {
		x, _ := json.Marshal(a)
		y, _ := json.Marshal(b)
		return strings.Compare(string(x), string(y))
	})
	return rows
}

type joinResult struct {
	Data      json.RawMessage `json:"data"`
	Status    string          `json:"status"`
	Truncated bool            `json:"truncated"`
}

// TestJoinFlights answers "departures per state" in one aggregate call and
// checks the join knob's errors, over MCP (stdio).
func TestJoinFlights(t *testing.T) {
	root := joinData(t, rand.New(rand.NewPCG(1, 2)), 200)
	c := startStdio(t, "--data", root)

	var q joinResult
	call(t, c, "aggregate", map[string]any{
		"dataset":  "flights",
		"join":     []any{map[string]any{"dataset": "airports", "on": []any{map[string]any{"left": "origin", "right": "iata"}}}},
		"group_by": []string{"airports.state"},
		"aggs":     []any{map[string]any{"col": "*", "fn": "count", "as": "departures"}},
		"order_by": []any{map[string]any{"col": "departures", "desc": true}},
	}, &q)
	got := rowsOf(t, q.Data, []string{"airports.state", "departures"})
	// The reference: count flights per origin, then per state (SEA is two airport rows: both states count).
	flights, _ := os.ReadFile(filepath.Join(root, "flights.csv"))
	perOrigin := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(flights)), "\n")[1:] {
		perOrigin[strings.Split(line, ",")[1]]++
	}
	want := map[string]int{"CA": perOrigin["SFO"] + perOrigin["LAX"], "NY": perOrigin["JFK"], "MA": perOrigin["BOS"],
		"WA": perOrigin["SEA"], "WA2": perOrigin["SEA"], "IL": perOrigin["ORD"]}
	if len(got) != len(want) {
		t.Fatalf("departures per state: %d states, want %d: %s", len(got), len(want), q.Data)
	}
	for _, row := range got {
		if fmt.Sprint(want[*row[0]]) != *row[1] {
			t.Errorf("state %s: %s departures, want %d", *row[0], *row[1], want[*row[0]])
		}
	}

	// estimate_query shows the join in the plan.
	var est struct {
		Plan        string `json:"plan"`
		RowEstimate int64  `json:"row_estimate"`
	}
	call(t, c, "estimate_query", map[string]any{"dataset": "flights",
		"join": []any{map[string]any{"dataset": "airports", "as": "a", "type": "left", "on": []any{map[string]any{"left": "origin", "right": "iata"}}}}}, &est)
	if !strings.Contains(est.Plan, "Join: left airports AS a ON origin = a.iata") || est.RowEstimate < 200 {
		t.Errorf("estimate: %+v", est)
	}

	for _, tc := range []struct {
		name  string
		join  map[string]any
		code  string
		field string
		hint  string
	}{
		{"unknown dataset", map[string]any{"dataset": "airport", "on": []any{map[string]any{"left": "origin", "right": "iata"}}},
			"dataset_not_found", "join[0].dataset", ""},
		{"unknown key", map[string]any{"dataset": "airports", "on": []any{map[string]any{"left": "origin", "right": "iat"}}},
			"invalid_column", "join[0].on[0].right", "iata"},
		{"string vs int", map[string]any{"dataset": "airports", "on": []any{map[string]any{"left": "origin", "right": "code"}}},
			"invalid_argument", "join[0].on[0]", "string column never equals an integer"},
		{"no on", map[string]any{"dataset": "airports"}, "invalid_argument", "join[0].on", "cross"},
	} {
		e := callErr(t, c, "query_data", map[string]any{"dataset": "flights", "join": []any{tc.join}})
		if e.Code != tc.code || e.Diagnostics["field"] != tc.field || !strings.Contains(e.Hint+fmt.Sprint(e.Diagnostics["suggestions"]), tc.hint) {
			t.Errorf("%s: %+v", tc.name, e)
		}
		if tc.name == "unknown dataset" && !strings.Contains(fmt.Sprint(e.Diagnostics["suggestions"]), "airports") {
			t.Errorf("unknown dataset: no did-you-mean airports: %+v", e)
		}
	}
}

// TestDuckDBJoins compares random joins (every type, string and integer
// keys, one or two keys, filters on joined columns, aggregates over them)
// with DuckDB's answers to the same SQL.
func TestDuckDBJoins(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 13))
	root := joinData(t, r, 60) // every result fits the inline cap (200 rows)
	types := []string{"inner", "left", "right", "full", "semi", "anti", "cross"}
	sqlType := map[string]string{"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN", "semi": "SEMI JOIN", "anti": "ANTI JOIN", "cross": "CROSS JOIN"}
	var queries []joinQuery
	var sqls []string
	for range 80 {
		typ := types[r.IntN(len(types))]
		alias := "a"
		if r.IntN(2) == 0 {
			alias = "airports"
		}
		join := map[string]any{"dataset": "airports", "type": typ}
		if alias == "a" {
			join["as"] = "a"
		}
		on, cond := []any{}, []string{}
		if typ == "cross" {
			join["dataset"], alias = "carriers", "carriers"
			delete(join, "as")
		} else {
			if r.IntN(3) != 0 {
				on, cond = append(on, map[string]any{"left": "origin", "right": "iata"}), append(cond, "f.origin = "+alias+".iata")
			}
			if len(on) == 0 || r.IntN(3) == 0 {
				on, cond = append(on, map[string]any{"left": "dest_code", "right": "code"}), append(cond, "f.dest_code = "+alias+".code")
			}
			join["on"] = on
		}
		from := fmt.Sprintf("flights f %s %s %s", sqlType[typ], join["dataset"], alias)
		if len(cond) > 0 {
			from += " ON " + strings.Join(cond, " AND ")
		}
		keepsRight := typ != "semi" && typ != "anti"
		rightCol := "state"
		if typ == "cross" {
			rightCol = "name"
		}
		var filters []any
		where := ""
		if keepsRight && r.IntN(3) == 0 {
			filters = append(filters, map[string]any{"col": alias + "." + rightCol, "op": "is_not_null"})
			where = " WHERE " + alias + "." + rightCol + " IS NOT NULL"
		} else if r.IntN(3) == 0 {
			filters = append(filters, map[string]any{"col": "delay", "op": "gt", "value": 20})
			where = " WHERE f.delay > 20"
		}
		args := map[string]any{"dataset": "flights", "join": []any{join}}
		if filters != nil {
			args["filters"] = filters
		}
		if r.IntN(2) == 0 {
			key := "origin"
			if keepsRight {
				key = alias + "." + rightCol
			}
			args["group_by"] = []string{key}
			args["aggs"] = []any{map[string]any{"col": "*", "fn": "count", "as": "n"}, map[string]any{"col": "delay", "fn": "sum", "as": "d"}}
			queries = append(queries, joinQuery{"aggregate", args, []string{key, "n", "d"}})
			sqlKey := "f.origin"
			if keepsRight {
				sqlKey = alias + "." + rightCol
			}
			sqls = append(sqls, fmt.Sprintf("SELECT %s, count(*), sum(f.delay) FROM %s%s GROUP BY %s", sqlKey, from, where, sqlKey))
			continue
		}
		cols := []string{"id", "origin", "delay"}
		sel := "f.id, f.origin, f.delay"
		if keepsRight {
			cols = append(cols, alias+"."+rightCol)
			sel += ", " + alias + "." + rightCol
		}
		args["columns"] = cols
		queries = append(queries, joinQuery{"query_data", args, cols})
		sqls = append(sqls, fmt.Sprintf("SELECT %s FROM %s%s", sel, from, where))
	}
	compareJoins(t, root, queries, sqls)
}

// joinQuery is one knob call of a join differential.
type joinQuery struct {
	tool string
	args map[string]any
	cols []string
}

// compareJoins runs queries over the joinData root through MCP and sqls
// (the same questions) through DuckDB, and compares the rows as multisets.
func compareJoins(t *testing.T, root string, queries []joinQuery, sqls []string) {
	t.Helper()
	specPath := writeSpec(t, map[string]any{
		"tables": map[string]any{
			"flights":  map[string]any{"csv": filepath.Join(root, "flights.csv"), "columns": [][2]string{{"id", "BIGINT"}, {"origin", "VARCHAR"}, {"dest_code", "BIGINT"}, {"delay", "BIGINT"}, {"carrier", "BIGINT"}}},
			"airports": map[string]any{"csv": filepath.Join(root, "airports.csv"), "columns": [][2]string{{"iata", "VARCHAR"}, {"state", "VARCHAR"}, {"code", "BIGINT"}}},
			"carriers": map[string]any{"csv": filepath.Join(root, "carriers.csv"), "columns": [][2]string{{"cid", "BIGINT"}, {"name", "VARCHAR"}}},
		},
		"queries": sqls,
	})
	var duck struct {
		DuckDB string        `json:"duckdb"`
		Rows   [][][]*string `json:"rows"`
	}
	if out := duckdbScript(t, "joins.js", specPath); json.Unmarshal(out, &duck) != nil || len(duck.Rows) != len(sqls) {
		t.Fatalf("joins.js output: %s", out)
	}
	c := startStdio(t, "--data", root)
	for i, q := range queries {
		var res joinResult
		call(t, c, q.tool, q.args, &res)
		if res.Truncated || res.Status != "" {
			t.Fatalf("%s %v: truncated or not run (status %q): narrow the test data", q.tool, q.args, res.Status)
		}
		got, want := rowsOf(t, res.Data, q.cols), sortText(duck.Rows[i])
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			a, _ := json.Marshal(q.args)
			t.Errorf("%s %s\nSQL: %s\nQuarry: %s\nDuckDB: %s", q.tool, a, sqls[i], g, w)
		}
	}
	t.Logf("%d random joins agree with DuckDB %s", len(queries), duck.DuckDB)
}
