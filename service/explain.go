package service

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/quarrydb/quarry/engine"
)

// ExplainAnalyze is the explain mode of query_data and aggregate that runs
// the query and returns per-operator statistics.
const ExplainAnalyze = "analyze"

// Analysis is the answer of explain "analyze": the operators the engine
// ran, root first (each one's inputs follow it, one level deeper).
type Analysis struct {
	// Operators are the operators, pre-order.
	Operators []OperatorStats `json:"operators"`
	// PeakBytes is the most memory the query held at once (its memory budget).
	PeakBytes int64 `json:"peak_bytes" jsonschema:"Most query memory (Arrow buffers plus operator state) held at once."`
	// TimeMs is the wall time of the whole run, delivery excluded.
	TimeMs float64 `json:"time_ms" jsonschema:"Wall time of the run in milliseconds (the sum of the operators' times)."`
}

// OperatorStats is one operator's numbers.
type OperatorStats struct {
	// Depth is the operator's level: its inputs are the following
	// operators one level deeper.
	Depth int `json:"depth" jsonschema:"0 for the root; an operator's inputs follow it with depth + 1."`
	// Op is the physical operator (fused steps joined by +).
	Op string `json:"op" jsonschema:"The physical operator, e.g. scan, filter, filter+count, hash aggregate, top-k sort, limit."`
	// Node is the plan nodes it runs (as in estimate_query's plan).
	Node string `json:"node" jsonschema:"The plan nodes it runs, as estimate_query prints them (long ones cut)."`
	// RowsIn is the rows its inputs produced; for a scan, the rows it
	// read (filters pushed into it included).
	RowsIn int64 `json:"rows_in" jsonschema:"Rows its inputs produced; for a scan, the rows read from the source (including those dropped by filters applied while reading)."`
	// ZonesSkipped and RowsSkipped (scans) are the zones skipped unread.
	ZonesSkipped int64 `json:"zones_skipped,omitempty" jsonschema:"Scans: blocks of cached rows or Parquet row groups skipped unread because no row could match the filters (zone maps)."`
	RowsSkipped  int64 `json:"rows_skipped,omitempty" jsonschema:"Scans: rows of the skipped zones (rows_in + rows_skipped is the dataset's rows for a full scan)."`
	// RowsOut is the rows it produced.
	RowsOut int64 `json:"rows_out"`
	// Batches is the batches it produced.
	Batches int64 `json:"batches"`
	// TimeMs is the wall time in the operator itself, inputs excluded.
	TimeMs float64 `json:"time_ms" jsonschema:"Milliseconds spent in this operator itself (its inputs excluded)."`
	// PeakBytes is the most query memory held while it or its inputs ran.
	PeakBytes int64 `json:"peak_bytes" jsonschema:"Most query memory held at once while this operator or its inputs ran."`
}

// maxNodeText cuts long plan node descriptions (scans of wide datasets) in
// an analysis.
const maxNodeText = 160

// analysisOf turns the engine's operator tree into the tool's answer.
func analysisOf(root *engine.Operator) *Analysis {
	a := &Analysis{Operators: []OperatorStats{}}
	var total time.Duration
	root.Walk(func(o *engine.Operator, depth int) {
		st := o.Stats
		if st == nil {
			st = &engine.OpStats{}
		}
		a.Operators = append(a.Operators, OperatorStats{Depth: depth, Op: o.Name, Node: cut(nodeText(o), maxNodeText),
			RowsIn: st.RowsIn, RowsOut: st.RowsOut, Batches: st.Batches, TimeMs: ms(st.Time), PeakBytes: st.PeakBytes,
			ZonesSkipped: st.ZonesSkipped, RowsSkipped: st.RowsSkipped})
		total += st.Time
		a.PeakBytes = max(a.PeakBytes, st.PeakBytes)
	})
	a.TimeMs = ms(total)
	return a
}

// nodeText is the descriptions of o's plan nodes, joined with " | ".
func nodeText(o *engine.Operator) string {
	parts := make([]string, len(o.Nodes))
	for i, n := range o.Nodes {
		parts[i] = n.Describe()
	}
	return strings.Join(parts, " | ")
}

// cut shortens s to at most n bytes (on a rune boundary), marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// statsText is the statistics of the operator tree, one line per operator
// (for the debug log).
func statsText(root *engine.Operator) string {
	var b strings.Builder
	root.Walk(func(o *engine.Operator, depth int) {
		if st := o.Stats; st != nil {
			fmt.Fprintf(&b, "%s%s: rows_in=%d rows_out=%d batches=%d time=%s peak_bytes=%d zones_skipped=%d rows_skipped=%d\n",
				strings.Repeat("  ", depth), o.Name, st.RowsIn, st.RowsOut, st.Batches, st.Time, st.PeakBytes, st.ZonesSkipped, st.RowsSkipped)
		}
	})
	return b.String()
}

// appendAnalyze adds q's analysis to the JSON object obj (a delivered
// result's encoding), when there is one.
func (q *QueryResponse) appendAnalyze(obj []byte) ([]byte, error) {
	if q.Analyze == nil {
		return obj, nil
	}
	a, err := json.Marshal(q.Analyze)
	if err != nil {
		return nil, err
	}
	if len(obj) == 0 || obj[len(obj)-1] != '}' {
		return nil, fmt.Errorf("service: result JSON is not an object")
	}
	obj = append(obj[:len(obj)-1], `,"analyze":`...)
	obj = append(obj, a...)
	return append(obj, '}'), nil
}
