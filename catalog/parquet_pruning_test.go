package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
	"github.com/quarrydb/quarry/planner"
)

// randomParquetRecord is n rows of k (the row number), id (rising with
// noise, some nulls), x (clustered by position, some NaN, ±Inf and
// nulls), grp (a few names drifting with position, some nulls; stored
// with dictionary pages) and note (mostly distinct text), so row-group
// statistics are narrow enough to prune.
func randomParquetRecord(t testing.TB, mem memory.Allocator, rng *rand.Rand, n int) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "grp", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	names := []string{"east", "north", "northeast", "south", "west"}
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if rng.IntN(20) == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int64Builder).Append(int64(i*3 + rng.IntN(40) - 20))
		}
		switch r := rng.IntN(40); {
		case r == 0:
			b.Field(2).AppendNull()
		case r == 1:
			b.Field(2).(*array.Float64Builder).Append(math.NaN())
		case r == 2:
			b.Field(2).(*array.Float64Builder).Append(math.Inf(1 - 2*rng.IntN(2)))
		default:
			b.Field(2).(*array.Float64Builder).Append(float64(i/100) + rng.Float64())
		}
		if rng.IntN(15) == 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.StringBuilder).Append(names[(i/300+rng.IntN(2))%len(names)])
		}
		if rng.IntN(10) == 0 {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("note %d %x", i, rng.Uint32()))
		}
	}
	return b.NewRecordBatch()
}

// TestParquetPruningDifferential: random filters (ranges, comparisons,
// equality, in, null tests; on integers with nulls, floats with NaN, ±Inf
// and nulls, dictionary strings with nulls) give the same rows with
// row-group pruning as without, where the
// engine's filter alone decides: a pruned row group that held a matching
// row fails the test. Pruning must also happen, or the test proves
// nothing.
func TestParquetPruningDifferential(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(7, 3))
	pruned, specs := 0, 0
	for file := range 3 {
		rec := randomParquetRecord(t, mem, rng, 1500+rng.IntN(1500))
		n := int(rec.NumRows())
		ds, _ := parquetDataset(t, rec, int64(40+rng.IntN(300)), "t.parquet")
		rec.Release()
		plans := ds.Source.(catalog.PlanSchemaer).PlanSchema()
		zones := ds.Source.(planner.ZoneFilterer)
		for range 30 {
			var filters []planner.FilterSpec
			for range 1 + rng.IntN(2) {
				filters = append(filters, randomFilter(rng, n))
			}
			sp := planner.Spec{Columns: []string{"k", "id", "x", "grp"}, Filters: filters}
			plan, err := planner.Build(sp, planner.Input{Dataset: ds.ID, Schema: plans})
			if err != nil {
				t.Fatalf("file %d: %v", file, err)
			}
			specs++
			want, _ := cattest.RunPlan(t, plan, ds, planner.OptimizeOptions{})
			got, scan := cattest.RunPlan(t, plan, ds, planner.OptimizeOptions{Zones: zones})
			if got != want {
				js, _ := json.Marshal(filters)
				t.Fatalf("file %d, filters %s: rows differ with row-group pruning\n got %.300s\nwant %.300s", file, js, got, want)
			}
			if scan != nil && len(scan.ZoneFilters) > 0 {
				rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Columns: scan.Columns, ZoneFilters: scan.ZoneFilters, Alloc: mem})
				if err != nil {
					t.Fatal(err)
				}
				for rr.Next() {
				}
				if st, ok := catalog.StatsOf(rr); ok && st.ZonesSkipped > 0 {
					pruned++
				}
				rr.Release()
			}
		}
	}
	t.Logf("%d filter sets, %d pruned row groups", specs, pruned)
	if pruned < specs/5 {
		t.Fatalf("only %d of %d filter sets pruned a row group", pruned, specs)
	}
}

// randomFilter is a random filter on id, x or grp of a table of n rows
// (see randomParquetRecord).
func randomFilter(rng *rand.Rand, n int) planner.FilterSpec {
	raw := func(v any) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	ops := []planner.Op{planner.OpLt, planner.OpLte, planner.OpGt, planner.OpGte, planner.OpEq, planner.OpRange}
	switch rng.IntN(4) {
	case 0:
		op := ops[rng.IntN(len(ops))]
		v := rng.IntN(3*n+80) - 40
		if op == planner.OpRange {
			return planner.FilterSpec{Col: "id", Op: op, Value: raw(map[string]int{"min": v, "max": v + rng.IntN(300)})}
		}
		return planner.FilterSpec{Col: "id", Op: op, Value: raw(v)}
	case 1:
		op := ops[rng.IntN(len(ops))]
		v := float64(rng.IntN(n/100+3)) - 1 + float64(rng.IntN(4))/4
		if op == planner.OpRange {
			return planner.FilterSpec{Col: "x", Op: op, Value: raw(map[string]float64{"min": v, "max": v + float64(rng.IntN(3))})}
		}
		return planner.FilterSpec{Col: "x", Op: op, Value: raw(v)}
	case 2:
		names := []string{"east", "north", "northeast", "south", "west", "zzz", "a"}
		if rng.IntN(3) == 0 {
			return planner.FilterSpec{Col: "grp", Op: planner.OpIn, Value: raw([]string{names[rng.IntN(len(names))], names[rng.IntN(len(names))]})}
		}
		return planner.FilterSpec{Col: "grp", Op: []planner.Op{planner.OpEq, planner.OpLt, planner.OpGte}[rng.IntN(3)], Value: raw(names[rng.IntN(len(names))])}
	}
	col := []string{"id", "x", "grp"}[rng.IntN(3)]
	return planner.FilterSpec{Col: col, Op: []planner.Op{planner.OpIsNull, planner.OpIsNotNull}[rng.IntN(2)]}
}
