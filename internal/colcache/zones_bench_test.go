package colcache

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/planner"
)

// zoneBenchCSV is QUARRY_BENCH_CSV (the peer harness's sales.csv, whose id
// column is sorted), or a generated 5M-row file with a sorted id column.
func zoneBenchCSV(b *testing.B) string {
	if p := os.Getenv("QUARRY_BENCH_CSV"); p != "" {
		return p
	}
	path := filepath.Join(b.TempDir(), "sales.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "id,region,qty,price")
	for i := range 5_000_000 {
		fmt.Fprintf(w, "%d,%s,%d,%d.%02d\n", 3_000_000_000+i, []string{"north", "south", "east", "west"}[i%4], 1+i%9, i%100, i%97)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkZoneMaps runs selective range filters (100,000 and 10,000 of
// 5M rows: 2 % and 0.2 %) on the sorted id column with aggregates, warm
// (every column cached when the catalog opened the file), with zone maps
// (skip) and without (noskip). It reports the share of zones skipped.
//
//	QUARRY_BENCH_CSV=/path/to/sales.csv go test -run '^$' -bench ZoneMaps ./internal/colcache
func BenchmarkZoneMaps(b *testing.B) {
	path := zoneBenchCSV(b)
	c := New(Options{Budget: 4 << 30})
	defer c.Purge()
	cat, err := catalog.New(context.Background(), catalog.Options{Root: filepath.Dir(path), Logger: slog.New(slog.DiscardHandler),
		Formats: []catalog.Format{csv.NewFormatWith(csv.Options{Keeper: c})}})
	if err != nil {
		b.Fatal(err)
	}
	ds, err := cat.Lookup("sales")
	if err != nil {
		b.Fatal(err)
	}
	src, ok := c.Wrap(ds).(*Source)
	if !ok || !src.Cached(nil) {
		b.Fatalf("not cached: %+v", c.Stats())
	}
	for _, rows := range []int64{100_000, 10_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) { benchZoneRange(b, c, ds, src, rows) })
	}
}

// benchZoneRange runs the range filter over the first rows ids from
// 3,002,000,000 with and without zone maps.
func benchZoneRange(b *testing.B, c *Cache, ds *catalog.Dataset, src *Source, rows int64) {
	rng := fmt.Sprintf(`{"min":3002000000,"max":%d}`, 3_002_000_000+rows-1)
	spec := planner.Spec{
		Filters: []planner.FilterSpec{{Col: "id", Op: planner.OpRange, Value: json.RawMessage(rng)}},
		Aggs:    []planner.AggSpec{{Col: "qty", Fn: planner.AggSum}, {Col: "price", Fn: planner.AggAvg}, {Col: "*", Fn: planner.AggCount}},
	}
	plan, err := planner.Build(spec, planner.Input{Dataset: ds.ID, Schema: src.PlanSchema(), RowCount: ds.RowCount, RowCountExact: true})
	if err != nil {
		b.Fatal(err)
	}
	var want string
	for _, m := range []struct {
		name  string
		zones planner.ZoneFilterer
	}{{"noskip", nil}, {"skip", src}} {
		b.Run(m.name, func(b *testing.B) {
			p, err := planner.Optimize(plan, planner.OptimizeOptions{Zones: m.zones})
			if err != nil {
				b.Fatal(err)
			}
			run := func() string {
				rr, err := engine.Execute(context.Background(), p, src, engine.Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer rr.Release()
				out := ""
				for rr.Next() {
					rec := rr.RecordBatch()
					for i := range int(rec.NumCols()) {
						out += rec.Column(i).ValueStr(0) + " "
					}
				}
				if err := rr.Err(); err != nil {
					b.Fatal(err)
				}
				return out
			}
			got := run() // computes the zones once
			if want == "" {
				want = got
			} else if got != want {
				b.Fatalf("%s: %s, want %s", m.name, got, want)
			}
			before := c.Stats()
			for b.Loop() {
				run()
			}
			after := c.Stats()
			if checked := after.ZoneChecked - before.ZoneChecked; checked > 0 {
				b.ReportMetric(100*float64(after.ZoneSkipped-before.ZoneSkipped)/float64(checked), "%skipped")
				b.ReportMetric(float64(checked)/float64(b.N), "zones/op")
			}
		})
	}
}
