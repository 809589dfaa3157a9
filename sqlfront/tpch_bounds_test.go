package sqlfront

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/testutil/golden"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/planner"
)

// TestTPCHBounds: the result bound (planner.ResultBound, with the inline
// encoder's default cell cap) of each TPC-H query of bench/tpch over the
// SF 1 schema, against testdata/tpch_bounds.golden (regenerate with go
// test ./sqlfront -run TestTPCHBounds -update). A query whose bound is
// under the serve defaults' confirmation thresholds (1,000,000 rows,
// 256 MiB) runs without the confirmation preflight; the golden says which.
func TestTPCHBounds(t *testing.T) {
	const confirmRows, confirmBytes = 1_000_000, 256 << 20
	files, _ := filepath.Glob("../bench/tpch/queries/q*.sql")
	if len(files) != 22 {
		t.Fatalf("found %d TPC-H queries, want 22", len(files))
	}
	var out strings.Builder
	for _, f := range files {
		p := tpchPlan(t, f)
		b := planner.ResultBound(p, planner.BoundOptions{MaxCellChars: materialize.DefaultMaxCellChars})
		verdict := "preflight"
		if b.Rows <= confirmRows && b.Bytes <= confirmBytes {
			verdict = "bounded"
		}
		fmt.Fprintf(&out, "%s rows=%s bytes=%s %s\n", strings.TrimSuffix(filepath.Base(f), ".sql"), boundText(b.Rows), boundText(b.Bytes), verdict)
	}
	golden.Check(t, filepath.Join("testdata", "tpch_bounds.golden"), out.String(), *update)
}

func boundText(n int64) string {
	if n == planner.Unbounded {
		return "unbounded"
	}
	return fmt.Sprint(n)
}
