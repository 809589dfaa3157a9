package csv_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
	"github.com/quarrydb/quarry/planner"
)

// pushdownCSV writes a CSV of rows rows with int, float, string (quoted,
// escaped, with delimiters inside), date and bool columns, all with empty
// (null) cells.
func pushdownCSV(t *testing.T, r *rand.Rand, rows int) string {
	var b strings.Builder
	b.WriteString("id,x,s,d,ok\n")
	words := []string{"apple", "Apple", "banana", `"a,b"`, `"say ""hi"""`, "cherry", "zz", "é", "", `""`}
	for i := range rows {
		cell := func(s string) string {
			if r.IntN(12) == 0 {
				return ""
			}
			return s
		}
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s\n",
			cell(fmt.Sprint(r.IntN(2000)-1000)),
			cell(fmt.Sprintf("%.2f", r.Float64()*200-100)),
			cell(words[r.IntN(len(words))]),
			cell(fmt.Sprintf("2024-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28))),
			cell([]string{"true", "false"}[i%2]))
	}
	root := t.TempDir()
	cattest.WriteFile(t, root, "p.csv", b.String())
	return root
}

// randomPushFilter returns a random filter on the pushdown CSV's columns.
func randomPushFilter(r *rand.Rand) planner.FilterSpec {
	lits := map[string]func() string{
		"id": func() string { return fmt.Sprint(r.IntN(2400) - 1200) },
		"x":  func() string { return fmt.Sprintf("%.1f", r.Float64()*240-120) },
		"s": func() string {
			return `"` + []string{"apple", "Apple", "a,b", `say \"hi\"`, "b", "cherry", "zz", "é", "a"}[r.IntN(9)] + `"`
		},
		"d":  func() string { return fmt.Sprintf(`"2024-%02d-%02d"`, 1+r.IntN(12), 1+r.IntN(28)) },
		"ok": func() string { return []string{"true", "false"}[r.IntN(2)] },
	}
	cols := []string{"id", "x", "s", "d", "ok"}
	col := cols[r.IntN(len(cols))]
	ops := []planner.Op{planner.OpEq, planner.OpNeq, planner.OpLt, planner.OpLte, planner.OpGt, planner.OpGte,
		planner.OpRange, planner.OpIn, planner.OpNotIn, planner.OpIsNull, planner.OpIsNotNull}
	if col == "s" {
		ops = append(ops, planner.OpContains, planner.OpStartsWith, planner.OpEndsWith)
	}
	f := planner.FilterSpec{Col: col, Op: ops[r.IntN(len(ops))]}
	lit := lits[col]
	switch f.Op {
	case planner.OpIsNull, planner.OpIsNotNull:
	case planner.OpRange:
		lo, hi := "null", "null"
		if r.IntN(4) > 0 {
			lo = lit()
		}
		if r.IntN(4) > 0 {
			hi = lit()
		}
		f.Value = json.RawMessage(`{"min":` + lo + `,"max":` + hi + `}`)
	case planner.OpIn, planner.OpNotIn:
		var vs []string
		for range r.IntN(4) {
			vs = append(vs, lit())
		}
		f.Value = json.RawMessage("[" + strings.Join(vs, ",") + "]")
	default:
		f.Value = json.RawMessage(lit())
	}
	f.CaseInsensitive = col == "s" && r.IntN(5) == 0 && f.Op != planner.OpRange && f.Op != planner.OpLt &&
		f.Op != planner.OpLte && f.Op != planner.OpGt && f.Op != planner.OpGte
	return f
}

// TestCSVPushdownDifferential runs random filters (every op, OR groups,
// case-insensitive ops the reader does not take, nulls, quoted cells)
// over a CSV read by the fast reader with the filters pushed into it and
// without: the results must be identical, and a scan given the pushed
// filters must return exactly the matching rows.
func TestCSVPushdownDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 17))
	root := pushdownCSV(t, r, 3000)
	c := cattest.NewCatalog(t, root)
	ds := cattest.Lookup(t, c, "p")
	pd, ok := ds.Source.(planner.FilterPushdowner)
	if !ok {
		t.Fatal("the CSV source does not take filters")
	}
	in := planner.Input{Dataset: ds.ID, Schema: ds.Schema, RowCount: ds.RowCount, RowCountExact: true}
	specs, pushed := 0, 0
	for range 300 {
		var spec planner.Spec
		for range 1 + r.IntN(2) {
			f := randomPushFilter(r)
			if r.IntN(6) == 0 {
				g := randomPushFilter(r)
				f = planner.FilterSpec{Any: []planner.FilterCond{
					{Col: f.Col, Op: f.Op, Value: f.Value, CaseInsensitive: f.CaseInsensitive},
					{Col: g.Col, Op: g.Op, Value: g.Value, CaseInsensitive: g.CaseInsensitive}}}
			}
			spec.Filters = append(spec.Filters, f)
		}
		plan, err := planner.Build(spec, in)
		if err != nil {
			continue // a literal the column does not take
		}
		specs++
		want, _ := cattest.RunPlan(t, plan, ds, planner.OptimizeOptions{})
		got, scan := cattest.RunPlan(t, plan, ds, planner.OptimizeOptions{Pushdown: pd})
		if got != want {
			js, _ := json.Marshal(spec.Filters)
			t.Fatalf("filters %s: results differ with pushdown\n got %.300s\nwant %.300s", js, got, want)
		}
		if len(scan.Filters) == 0 {
			continue
		}
		pushed++
		// The reader itself drops the rows: scanned with only the pushed
		// filters, it returns the rows the engine keeps with them.
		only, _ := cattest.RunPlan(t, &planner.Filter{Input: scanCopy(scan, nil), Preds: scan.Filters}, ds, planner.OptimizeOptions{})
		_, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{Columns: scan.Columns, Filters: scan.Filters})
		if n := len(cols[0]); n != strings.Count(only, "\n") {
			t.Fatalf("pushed %s: the reader returned %d rows, the engine keeps %d", scan.Describe(), n, strings.Count(only, "\n"))
		}
	}
	t.Logf("%d specs, %d with filters pushed", specs, pushed)
	if specs < 200 || pushed < specs/2 {
		t.Fatalf("%d specs ran, %d with filters pushed", specs, pushed)
	}
}

// scanCopy is s with Filters set to filters.
func scanCopy(s *planner.Scan, filters []planner.Predicate) *planner.Scan {
	c := *s
	c.Filters = filters
	return &c
}
