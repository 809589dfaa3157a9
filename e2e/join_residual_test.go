package e2e

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestDuckDBJoinResiduals compares random joins with a where condition
// (join[].where: every join type, with equality keys and without — pure
// inequality joins — conditions with NULLs, OR, LIKE and arithmetic over
// both sides) with DuckDB's answers to the same SQL (the condition in ON).
func TestDuckDBJoinResiduals(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 14))
	root := joinData(t, r, 20) // keyless joins: at most 20 x 9 pairs, under the inline cap
	types := []string{"inner", "left", "right", "full", "semi", "anti"}
	sqlType := map[string]string{"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN", "semi": "SEMI JOIN", "anti": "ANTI JOIN"}
	conds := [][2]string{ // Quarry where, DuckDB SQL
		{"delay > a.code * 5", "f.delay > a.code * 5"},
		{"dest_code < a.code", "f.dest_code < a.code"},
		{"origin <> a.iata OR a.state LIKE 'C%'", "(f.origin <> a.iata OR a.state LIKE 'C%')"},
		{"carrier + a.code >= 4 AND delay IS NOT NULL", "(f.carrier + a.code >= 4 AND f.delay IS NOT NULL)"},
		{"coalesce(dest_code, 0) = a.code OR a.iata IS NULL", "(coalesce(f.dest_code, 0) = a.code OR a.iata IS NULL)"},
	}
	var queries []joinQuery
	var sqls []string
	for range 60 {
		typ := types[r.IntN(len(types))]
		cond := conds[r.IntN(len(conds))]
		join := map[string]any{"dataset": "airports", "as": "a", "type": typ, "where": cond[0]}
		on := []string{cond[1]}
		if r.IntN(3) != 0 {
			join["on"] = []any{map[string]any{"left": "origin", "right": "iata"}}
			on = append([]string{"f.origin = a.iata"}, on...)
		}
		from := fmt.Sprintf("flights f %s airports a ON %s", sqlType[typ], strings.Join(on, " AND "))
		keepsRight := typ != "semi" && typ != "anti"
		args := map[string]any{"dataset": "flights", "join": []any{join}}
		if r.IntN(3) == 0 {
			key := "origin"
			if keepsRight {
				key = "a.state"
			}
			args["group_by"] = []string{key}
			args["aggs"] = []any{map[string]any{"col": "*", "fn": "count", "as": "n"}, map[string]any{"col": "delay", "fn": "sum", "as": "d"}}
			queries = append(queries, joinQuery{"aggregate", args, []string{key, "n", "d"}})
			sqlKey := strings.Replace(key, "origin", "f.origin", 1)
			sqls = append(sqls, fmt.Sprintf("SELECT %s, count(*), sum(f.delay) FROM %s GROUP BY %s", sqlKey, from, sqlKey))
			continue
		}
		cols := []string{"id", "origin", "delay"}
		sel := "f.id, f.origin, f.delay"
		if keepsRight {
			cols = append(cols, "a.state", "a.code")
			sel += ", a.state, a.code"
		}
		args["columns"] = cols
		queries = append(queries, joinQuery{"query_data", args, cols})
		sqls = append(sqls, fmt.Sprintf("SELECT %s FROM %s", sel, from))
	}
	compareJoins(t, root, queries, sqls)
}
