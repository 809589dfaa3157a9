// Package plantest runs query plans in tests and gives their rows as
// text, for tests of packages below the service that cannot share the
// catalog's or the engine's own test helpers. Only tests import it.
package plantest

import (
	"context"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/planner"
)

// Run optimizes plan with opts, executes it over src with eopts and
// returns the rows as text (a line per row, each cell as arrow's ValueStr
// followed by a tab) and the optimized plan. Any error fails t.
func Run(t testing.TB, plan planner.Node, src catalog.Source, opts planner.OptimizeOptions, eopts engine.Options) (string, planner.Node) {
	t.Helper()
	plan, err := planner.Optimize(plan, opts)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := engine.Execute(context.Background(), plan, src, eopts)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var sb strings.Builder
	for rr.Next() {
		rec := rr.RecordBatch()
		for r := range int(rec.NumRows()) {
			for c := range int(rec.NumCols()) {
				sb.WriteString(rec.Column(c).ValueStr(r))
				sb.WriteByte('\t')
			}
			sb.WriteByte('\n')
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	return sb.String(), plan
}
