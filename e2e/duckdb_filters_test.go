package e2e

import (
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
)

// TestDuckDBFilters compares Quarry's filters on an int64 column with
// DuckDB's on random predicates (every comparison op, in, not_in, range)
// whose operands sit at the int64 bounds (±2^63±k), around 2^53, beyond
// the int64 and uint64 ranges, or carry a fraction, sent over stdio as
// JSON numbers or as strings. DuckDB compares BIGINT with HUGEINT and
// DECIMAL literals exactly, as Quarry must (docs/QUERY.md).
func TestDuckDBFilters(t *testing.T) {
	root := t.TempDir()
	csv := "id,v\n1,9007199254740992\n2,9007199254740993\n3,9007199254740991\n4,9223372036854775807\n5,9223372036854775806\n" +
		"6,-9223372036854775808\n7,-9223372036854775807\n8,0\n9,5\n10,-3\n11,\n12,1\n13,-1\n"
	csvPath := filepath.Join(root, "nums.csv")
	if err := os.WriteFile(csvPath, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	var bases []*big.Int
	for _, s := range []string{"0", "1", "-1", "5", "-3", "9007199254740991", "9007199254740992", "9007199254740993", "9007199254740994",
		"9223372036854775806", "9223372036854775807", "9223372036854775808", "9223372036854775809", "9223372036854775813",
		"-9223372036854775807", "-9223372036854775808", "-9223372036854775809", "-9223372036854775813",
		"18446744073709551615", "18446744073709551616", "18446744073709551621", "-18446744073709551616"} {
		b, _ := new(big.Int).SetString(s, 10)
		bases = append(bases, b)
	}
	r := rand.New(rand.NewPCG(2026, 11))
	// operand returns an operand's text: a base, maybe moved by one, maybe with a fraction.
	operand := func(fraction bool) string {
		b := new(big.Int).Add(bases[r.IntN(len(bases))], big.NewInt(int64(r.IntN(3)-1)))
		if fraction && r.IntN(3) == 0 {
			return b.String() + []string{".5", ".25", ".999"}[r.IntN(3)]
		}
		return b.String()
	}
	// jsonValue sends an operand as a JSON number or a string.
	jsonValue := func(s string) string {
		if r.IntN(3) == 0 {
			return strconv.Quote(s)
		}
		return s
	}
	sqlOp := map[string]string{"eq": "=", "neq": "<>", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
	ops := []string{"eq", "neq", "lt", "lte", "gt", "gte", "in", "not_in", "range"}
	var wheres, filters []string
	for range 300 {
		op := ops[r.IntN(len(ops))]
		var where, value string
		switch op {
		case "in", "not_in":
			// Integers only: DuckDB gives a list mixing HUGEINT and DECIMAL a float type.
			var sqls, vals []string
			for range 1 + r.IntN(4) {
				s := operand(false)
				sqls, vals = append(sqls, s), append(vals, jsonValue(s))
			}
			where = fmt.Sprintf("v %s (%s)", map[string]string{"in": "IN", "not_in": "NOT IN"}[op], strings.Join(sqls, ", "))
			value = "[" + strings.Join(vals, ",") + "]"
		case "range":
			lo, hi := operand(true), operand(true)
			switch r.IntN(3) {
			case 0:
				where, value = "v >= "+lo, `{"min":`+jsonValue(lo)+`}`
			case 1:
				where, value = "v <= "+hi, `{"max":`+jsonValue(hi)+`}`
			default:
				where, value = "v >= "+lo+" AND v <= "+hi, `{"min":`+jsonValue(lo)+`,"max":`+jsonValue(hi)+`}`
			}
		default:
			s := operand(true)
			where, value = "v "+sqlOp[op]+" "+s, jsonValue(s)
		}
		wheres = append(wheres, where)
		filters = append(filters, `{"col":"v","op":"`+op+`","value":`+value+`}`)
	}

	specPath := writeSpec(t, map[string]any{"csv": csvPath, "columns": map[string]string{"id": "BIGINT", "v": "BIGINT"}, "where": wheres})
	var duck struct {
		DuckDB string     `json:"duckdb"`
		IDs    [][]string `json:"ids"`
	}
	if out := duckdbScript(t, "filters.js", specPath); json.Unmarshal(out, &duck) != nil || len(duck.IDs) != len(wheres) {
		t.Fatalf("filters.js output: %s", out)
	}

	// With the column cache (the default) the filters run in the engine;
	// without it they are pushed into the CSV reader (catalog
	// csv_pushdown.go) where it takes them.
	for _, extra := range [][]string{nil, {"--cache-memory", "0"}} {
		c := startStdio(t, append([]string{"--data", root}, extra...)...)
		agree := 0
		for i, f := range filters {
			got, ok := queryIDs(t, c, "nums", f)
			if !ok {
				continue
			}
			if !slices.Equal(got, duck.IDs[i]) {
				t.Errorf("%v filter %s: Quarry ids %v, DuckDB (%s) ids %v", extra, f, got, wheres[i], duck.IDs[i])
				continue
			}
			agree++
		}
		t.Logf("%v: %d of %d random filters agree with DuckDB %s", extra, agree, len(filters), duck.DuckDB)
	}
}

// queryIDs runs query_data over dataset with the one filter element filter
// (JSON) and returns the "id" column of the result, in id order, as
// decimal text; false (after reporting the error) for a tool error.
func queryIDs(t *testing.T, c *client.Client, dataset, filter string) ([]string, bool) {
	t.Helper()
	args := json.RawMessage(`{"dataset":` + strconv.Quote(dataset) + `,"columns":["id"],"order_by":[{"col":"id"}],"filters":[` + filter + `]}`)
	res := callRaw(t, c, "query_data", args)
	if res.IsError {
		t.Errorf("%s: %s", filter, text(res))
		return nil, false
	}
	b, _ := json.Marshal(res.StructuredContent)
	var q struct {
		Data []struct {
			ID int64 `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, row := range q.Data {
		got = append(got, strconv.FormatInt(row.ID, 10))
	}
	return got, true
}
