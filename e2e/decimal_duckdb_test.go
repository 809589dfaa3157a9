package e2e

import (
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDecimalSumsDuckDB: sum and avg of a 3-decimal CSV column per group,
// through the aggregate tool, are the doubles nearest to DuckDB's exact
// DECIMAL sums (and those sums over the counts); the data is chosen so that
// adding doubles misses for some groups (the test would catch the float
// sum).
func TestDecimalSumsDuckDB(t *testing.T) {
	root := t.TempDir()
	r := rand.New(rand.NewPCG(7, 17))
	var b strings.Builder
	b.WriteString("k,x\n")
	naive := map[int64]float64{}
	for range 20_000 {
		k := r.Int64N(40)
		txt := strconv.FormatFloat(float64(r.Int64N(200_000)-50_000)/1000, 'f', 3, 64)
		v, _ := strconv.ParseFloat(txt, 64)
		naive[k] += v
		fmt.Fprintf(&b, "%d,%s\n", k, txt)
	}
	file := filepath.Join(root, "t.csv")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	specPath := writeSpec(t, map[string]any{
		"tables":  map[string]any{"t": map[string]any{"csv": file, "columns": [][2]string{{"k", "BIGINT"}, {"x", "DECIMAL(18,3)"}}}},
		"queries": []string{"SELECT k, sum(x), count(x) FROM t GROUP BY k"},
	})
	var duck struct {
		DuckDB string        `json:"duckdb"`
		Rows   [][][]*string `json:"rows"`
	}
	if out := duckdbScript(t, "joins.js", specPath); json.Unmarshal(out, &duck) != nil || len(duck.Rows) != 1 {
		t.Fatalf("joins.js output: %s", out)
	}
	c := startStdio(t, "--data", root)
	var res struct {
		Data []struct {
			K   int64       `json:"k"`
			Sum json.Number `json:"sum_x"`
			Avg json.Number `json:"avg_x"`
		} `json:"data"`
	}
	call(t, c, "aggregate", map[string]any{"dataset": "t", "group_by": []string{"k"},
		"aggs": []map[string]any{{"col": "x", "fn": "sum"}, {"col": "x", "fn": "avg"}}, "confirm": true}, &res)
	got := map[int64][2]string{}
	for _, row := range res.Data {
		got[row.K] = [2]string{row.Sum.String(), row.Avg.String()}
	}
	if len(got) != len(duck.Rows[0]) {
		t.Fatalf("%d groups, DuckDB %d", len(got), len(duck.Rows[0]))
	}
	floatMisses := 0
	for _, row := range duck.Rows[0] {
		k, _ := strconv.ParseInt(*row[0], 10, 64)
		sum, ok := new(big.Rat).SetString(*row[1])
		n, _ := strconv.ParseInt(*row[2], 10, 64)
		if !ok {
			t.Fatalf("DuckDB sum %q", *row[1])
		}
		wantSum, _ := sum.Float64()
		wantAvg, _ := new(big.Rat).Quo(sum, new(big.Rat).SetInt64(n)).Float64()
		for i, want := range []float64{wantSum, wantAvg} {
			g, err := strconv.ParseFloat(got[k][i], 64)
			if err != nil || g != want {
				t.Errorf("group %d %s: Quarry %s, want %v (DuckDB sum %s, count %d)", k, []string{"sum", "avg"}[i], got[k][i], want, *row[1], n)
			}
		}
		if naive[k] != wantSum {
			floatMisses++
		}
	}
	if floatMisses == 0 {
		t.Fatal("no group where adding doubles misses: the data does not test exactness")
	}
	t.Logf("%d groups agree with DuckDB %s's DECIMAL sums (adding doubles misses %d)", len(got), duck.DuckDB, floatMisses)
}
