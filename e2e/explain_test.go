package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

type analyzeOp struct {
	Depth     int     `json:"depth"`
	Op        string  `json:"op"`
	Node      string  `json:"node"`
	RowsIn    int64   `json:"rows_in"`
	RowsOut   int64   `json:"rows_out"`
	Batches   int64   `json:"batches"`
	TimeMs    float64 `json:"time_ms"`
	PeakBytes int64   `json:"peak_bytes"`
}

type analyzed struct {
	RowCount int64             `json:"row_count"`
	Data     []json.RawMessage `json:"data"`
	Analyze  *struct {
		Operators []analyzeOp `json:"operators"`
		PeakBytes int64       `json:"peak_bytes"`
		TimeMs    float64     `json:"time_ms"`
	} `json:"analyze"`
}

// TestExplainAnalyzeStdio drives bin/quarry over stdio with the mcp-go
// client: aggregate and query_data with explain "analyze" over a
// 200,000-row CSV return per-operator numbers that add up (the scan reads
// every row, the filter keeps the rows the data says, each operator's rows
// in are its input's rows out, the root's rows are the delivered ones),
// in structuredContent and in the text alike; estimate_query's
// physical_plan names the same operators; an unknown explain mode is an
// invalid_argument tool error.
func TestExplainAnalyzeStdio(t *testing.T) {
	dir := t.TempDir()
	const rows = 200_000
	writeBigCSV(t, filepath.Join(dir, "big.csv"), rows, 0)
	c := startStdio(t, "--data", dir)
	// price = (id % 1000) / 4 >= 100 keeps ids with id % 1000 >= 400: 60%.
	const kept = rows * 6 / 10
	filter := []map[string]any{{"col": "price", "op": "gte", "value": 100}}
	cases := []struct {
		tool string
		args map[string]any
		ops  []string
		out  []int64
	}{
		{"aggregate", map[string]any{"dataset": "big", "group_by": []string{"region"}, "aggs": []map[string]any{{"col": "*", "fn": "count"}},
			"filters": filter, "explain": "analyze"},
			[]string{"hash aggregate", "filter", "scan"}, []int64{5, kept, rows}},
		{"query_data", map[string]any{"dataset": "big", "aggs": []map[string]any{{"col": "*", "fn": "count"}},
			"filters": filter, "explain": "analyze"},
			[]string{"filter+count", "scan"}, []int64{1, rows}},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			var got analyzed
			res := call(t, c, tc.tool, tc.args, &got)
			var fromText analyzed
			if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil || fromText.Analyze == nil {
				t.Fatalf("text content has no analysis (%v): %.300s", err, text(res))
			}
			a := got.Analyze
			if a == nil || len(a.Operators) != len(tc.ops) || len(fromText.Analyze.Operators) != len(tc.ops) {
				t.Fatalf("analysis %+v, want operators %v", a, tc.ops)
			}
			var total int64
			for _, d := range got.Data {
				var r struct {
					N int64 `json:"count_all"`
				}
				_ = json.Unmarshal(d, &r)
				total += r.N
			}
			if total != kept {
				t.Fatalf("counted %d rows, want %d", total, kept)
			}
			ops := a.Operators
			if ops[0].RowsOut != got.RowCount || a.PeakBytes <= 0 || a.TimeMs <= 0 {
				t.Errorf("root %+v, delivered %d rows; peak %d, time %v", ops[0], got.RowCount, a.PeakBytes, a.TimeMs)
			}
			for i, o := range ops {
				if o.Op != tc.ops[i] || o.Depth != i || o.RowsOut != tc.out[i] || o.RowsOut > 0 && o.Batches == 0 {
					t.Errorf("operator %d: %+v, want %s at depth %d with %d rows out", i, o, tc.ops[i], i, tc.out[i])
				}
				if i+1 < len(ops) && o.RowsIn != ops[i+1].RowsOut {
					t.Errorf("%s: %d rows in, its input %s returned %d", o.Op, o.RowsIn, ops[i+1].Op, ops[i+1].RowsOut)
				}
			}
			est := map[string]any{}
			for k, v := range tc.args {
				if k != "explain" {
					est[k] = v
				}
			}
			var e struct {
				PhysicalPlan string `json:"physical_plan"`
			}
			call(t, c, "estimate_query", est, &e)
			lines := strings.Split(strings.TrimSpace(e.PhysicalPlan), "\n")
			for i, op := range tc.ops {
				if i >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i]), op+" ") {
					t.Fatalf("physical plan line %d is not %s:\n%s", i, op, e.PhysicalPlan)
				}
			}
		})
	}
	e := callErr(t, c, "query_data", map[string]any{"dataset": "big", "explain": "verbose"})
	if e.Code != "invalid_argument" || e.Hint == "" {
		t.Fatalf("explain verbose: %+v", e)
	}
}
