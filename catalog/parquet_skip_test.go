package catalog_test

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/planner"
)

// TestParquetSkipRows: an offset skips the whole leading row groups it
// covers, by the footer's row counts, and says how many rows it skipped;
// with filters nothing is skipped.
func TestParquetSkipRows(t *testing.T) {
	ds, _ := sampleParquet(t, 4, "t.parquet") // id 0..9; row groups of 4: [0-3] [4-7] [8-9]
	lit := &planner.Literal{Value: int64(0)}
	for _, tc := range []struct {
		skip, want int64
		zone       bool
	}{{0, 0, false}, {3, 0, false}, {4, 4, false}, {7, 4, false}, {8, 8, false}, {9, 8, false}, {10, 10, false}, {100, 10, false}, {9, 0, true}} {
		var skipped atomic.Int64
		opts := catalog.ScanOptions{Columns: []string{"id"}, SkipRows: tc.skip, Skipped: &skipped}
		if tc.zone {
			opts.ZoneFilters = []planner.Predicate{{Col: "id", Index: 0, Op: planner.OpGte, Value: lit}}
		}
		_, cols := cattest.ScanAll(t, ds, opts)
		if skipped.Load() != tc.want {
			t.Errorf("SkipRows %d (zone filter %v): skipped %d, want %d", tc.skip, tc.zone, skipped.Load(), tc.want)
		}
		var want []any
		for i := tc.want; i < 10; i++ {
			want = append(want, i)
		}
		var got []any
		if len(cols) > 0 {
			got = cols[0]
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("SkipRows %d: ids %v, want %v", tc.skip, got, want)
		}
	}
}

// TestParquetOffsetQuery: offsets and limits over a Parquet file give
// the same rows through the engine (which passes the offset to the scan)
// as the arithmetic says, at every boundary of the row groups, through
// the column cache too (which then reads the file without filling).
func TestParquetOffsetQuery(t *testing.T) {
	ds, mem := sampleParquet(t, 3, "t.parquet")
	cache := colcache.New(colcache.Options{Budget: 1 << 20})
	for _, src := range []catalog.Source{ds.Source, cache.Wrap(ds)} {
		for offset := int64(0); offset <= 11; offset++ {
			for _, limit := range []int64{1, 2, 4, 20} {
				sp := planner.Spec{Columns: []string{"id", "name"}, Offset: &offset, Limit: &limit}
				plan, err := planner.Build(sp, planner.Input{Dataset: ds.ID, Schema: colcache.PlanSchema(src, ds)})
				if err != nil {
					t.Fatal(err)
				}
				rr, err := engine.Execute(context.Background(), plan, src, engine.Options{Alloc: mem, BatchSize: 2})
				if err != nil {
					t.Fatal(err)
				}
				var got, want []any
				for rr.Next() {
					got = append(got, cattest.Values(rr.RecordBatch().Column(0))...)
				}
				if err := rr.Err(); err != nil {
					t.Fatal(err)
				}
				rr.Release()
				for i := offset; i < min(10, offset+limit); i++ {
					want = append(want, i)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%T offset %d limit %d: ids %v, want %v", src, offset, limit, got, want)
				}
			}
		}
	}
}

// TestParquetDictionaryStrings: a string column stored with dictionaries
// is planned and read as a dictionary (the codes as written) while the
// dataset's schema says string; values and a group-by agree with the
// decoded column.
func TestParquetDictionaryStrings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := dictRecord(t, mem, 10) // grp: north, south, east, north, null, ... (pqarrow writes dictionary pages)
	defer rec.Release()
	ds, _ := parquetDataset(t, rec, 4, "t.parquet")
	ps, ok := ds.Source.(catalog.PlanSchemaer)
	if !ok {
		t.Fatal("the Parquet source has no PlanSchema")
	}
	plan := ps.PlanSchema()
	if got := plan.Field(0).Type; got.ID() != arrow.DICTIONARY || ds.Schema.Field(0).Type.ID() != arrow.STRING {
		t.Fatalf("grp is %s in the plan schema, %s in the dataset's; want a dictionary and string", got, ds.Schema.Field(0).Type)
	}
	for i, f := range plan.Fields() {
		if i != 0 && !arrow.TypeEqual(f.Type, ds.Schema.Field(i).Type) {
			t.Errorf("column %s is %s in the plan schema, %s in the dataset's", f.Name, f.Type, ds.Schema.Field(i).Type)
		}
	}
	rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Columns: []string{"grp"}, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	var names []any
	for rr.Next() {
		c := rr.RecordBatch().Column(0)
		if _, ok := c.(*array.Dictionary); !ok {
			t.Fatalf("grp arrives as %s", c.DataType())
		}
		names = append(names, cattest.Values(c)...)
	}
	rr.Release()
	want := []any{"north", "south", "east", "north", nil, "east", "north", "south", "east", nil}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("names %v, want %v", names, want)
	}
	sp := planner.Spec{GroupBy: []string{"grp"}, Aggs: []planner.AggSpec{{Col: "*", Fn: planner.AggCount, As: "n"}}, OrderBy: []planner.OrderSpec{{Col: "grp"}}}
	p, err := planner.Build(sp, planner.Input{Dataset: ds.ID, Schema: plan})
	if err != nil {
		t.Fatal(err)
	}
	er, err := engine.Execute(context.Background(), p, ds.Source, engine.Options{Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	var groups, counts []any
	for er.Next() {
		groups = append(groups, cattest.Values(er.RecordBatch().Column(0))...)
		counts = append(counts, cattest.Values(er.RecordBatch().Column(1))...)
	}
	er.Release()
	if !reflect.DeepEqual(groups, []any{"east", "north", "south", nil}) || !reflect.DeepEqual(counts, []any{int64(3), int64(3), int64(2), int64(2)}) {
		t.Fatalf("groups %v counts %v", groups, counts)
	}
}
