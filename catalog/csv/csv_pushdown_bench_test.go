package csv_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/planner"
)

// BenchmarkCSVPushdown runs selective filters cold (straight from the
// file, no column cache) over the sales-like bench file (benchFile), with
// the filters pushed into the CSV reader (push: tested on the tokenized
// cells, rejected rows never parsed) and without (nopush: every row of the
// read columns parsed, then filtered by the engine). rows/op is the rows
// the query returns (or aggregates).
//
//	go test ./catalog -run '^$' -bench CSVPushdown
func BenchmarkCSVPushdown(b *testing.B) {
	root, size := benchFile(b)
	c, err := catalog.New(context.Background(), catalog.Options{Formats: []catalog.Format{csv.NewFormat()}, Root: root, Logger: cattest.Quiet})
	if err != nil || len(c.Datasets()) != 1 {
		b.Fatal(err)
	}
	ds := c.Datasets()[0]
	pd := ds.Source.(planner.FilterPushdowner)
	f := func(col string, op planner.Op, v string) planner.FilterSpec {
		return planner.FilterSpec{Col: col, Op: op, Value: json.RawMessage(v)}
	}
	aggs := []planner.AggSpec{{Col: "qty", Fn: planner.AggSum}, {Col: "price", Fn: planner.AggAvg}, {Col: "*", Fn: planner.AggCount}}
	for _, q := range []struct {
		name string
		spec planner.Spec
	}{
		// 2 % of the rows by id, three columns aggregated.
		{"id-range-agg", planner.Spec{Filters: []planner.FilterSpec{f("id", planner.OpRange, `{"min":3000100000,"max":3000119999}`)}, Aggs: aggs}},
		// Every column of the rows of one category and quantity (~0.2 %).
		{"category-qty-rows", planner.Spec{Filters: []planner.FilterSpec{f("category", planner.OpEq, `"home & kitchen"`), f("qty", planner.OpEq, `7`)}}},
		// Every column of the rows with a price above 195 (~3 %).
		{"price-rows", planner.Spec{Filters: []planner.FilterSpec{f("price", planner.OpGt, `195`)}}},
	} {
		plan, err := planner.Build(q.spec, planner.Input{Dataset: ds.ID, Schema: ds.Schema, RowCount: ds.RowCount, RowCountExact: true})
		if err != nil {
			b.Fatal(err)
		}
		want := int64(-1)
		for _, m := range []struct {
			name string
			pd   planner.FilterPushdowner
		}{{"nopush", nil}, {"push", pd}} {
			b.Run(q.name+"/"+m.name, func(b *testing.B) {
				p, err := planner.Optimize(plan, planner.OptimizeOptions{Pushdown: m.pd})
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(size)
				var rows int64
				for b.Loop() {
					rows = benchRun(b, p, ds)
				}
				if want >= 0 && rows != want {
					b.Fatalf("%d rows, want %d", rows, want)
				}
				want = rows
				b.ReportMetric(float64(rows), "rows/op")
			})
		}
	}
}

// benchRun runs p over ds and returns the rows it produced (for an
// aggregate: its count(*)).
func benchRun(b *testing.B, p planner.Node, ds *catalog.Dataset) int64 {
	rr, err := engine.Execute(context.Background(), p, ds.Source, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer rr.Release()
	var n int64
	for rr.Next() {
		rec := rr.RecordBatch()
		n += rec.NumRows()
		if rec.Schema().Field(int(rec.NumCols())-1).Name == "count_all" {
			n = rec.Column(int(rec.NumCols()) - 1).(interface{ Value(int) int64 }).Value(0)
		}
	}
	if err := rr.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}
