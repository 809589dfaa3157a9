package engine

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Date and timestamp arithmetic (+/- INTERVAL, date ± days, date - date)
// through a built and optimized plan, on a time-zoned millisecond column,
// with nulls, in batches of one row and of many.
func TestTemporalArithmetic(t *testing.T) {
	tsMs := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"}
	day := func(s string) int32 { d, _ := time.Parse("2006-01-02", s); return int32(d.Unix() / 86400) }
	ms := func(s string) int64 { d, _ := time.Parse(time.RFC3339, s); return d.UnixMilli() }
	data := []tcol{
		{name: "d", typ: tDate, vals: vals(day("2024-01-31"), day("2023-03-31"), nil)},
		{name: "ts", typ: tsMs, vals: vals(ms("2024-03-30T12:00:00+01:00"), nil, ms("2024-10-27T01:30:00+02:00"))},
		{name: "n", typ: tInt64, vals: vals(int64(2), int64(-1), int64(5))},
	}
	spec := planner.Spec{Columns: []string{
		"d + INTERVAL '1 month' AS m", "INTERVAL '1 year' + d AS y", "d - 1 AS prev", "n + d AS plus_n",
		"d - DATE '2023-01-01' AS days", "ts + INTERVAL '1 day' AS next_day", "ts - INTERVAL '90 minutes' AS earlier",
	}}
	want := [][]any{
		{ms("2024-02-29T00:00:00Z") * 1000, ms("2025-01-31T00:00:00Z") * 1000, day("2024-01-30"), day("2024-02-02"), int64(395),
			// across the spring DST change: the same wall clock time the next day (23 hours later)
			ms("2024-03-31T12:00:00+02:00"), ms("2024-03-30T10:30:00+01:00")},
		{ms("2023-04-30T00:00:00Z") * 1000, ms("2024-03-31T00:00:00Z") * 1000, day("2023-03-30"), day("2023-03-30"), int64(89), nil, nil},
		{nil, nil, nil, nil, nil, ms("2024-10-28T01:30:00+01:00"), ms("2024-10-27T00:00:00+02:00")},
	}
	plan, err := planner.Build(spec, planner.Input{Dataset: "t", Schema: schemaOf(data)})
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.Schema().Field(0).Type.String(); got != "timestamp[us, tz=UTC]" {
		t.Errorf("d + INTERVAL is %s, want timestamp[us, tz=UTC]", got)
	}
	if got := plan.Schema().Field(5).Type; !arrow.TypeEqual(got, tsMs) {
		t.Errorf("ts + INTERVAL is %s, want %s", got, tsMs)
	}
	opt, err := planner.Optimize(plan, planner.OptimizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, bs := range []int{1, 100} {
		alloc := newAlloc()
		src := newSource(alloc, data)
		got, err := run(t, opt, src, Options{Alloc: alloc, BatchSize: bs})
		src.release()
		alloc.AssertSize(t, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !rowsEq(got, want) {
			t.Errorf("bs=%d:\n got %s\nwant %s", bs, fmtRows(got), fmtRows(want))
		}
	}
	// A date out of range fails the query with invalid_argument.
	big := []tcol{{name: "d", typ: tDate, vals: vals(day("2024-01-01"))}, {name: "n", typ: tInt64, vals: vals(int64(1) << 40)}}
	plan, err = planner.Build(planner.Spec{Columns: []string{"d + n AS x"}}, planner.Input{Dataset: "t", Schema: schemaOf(big)})
	if err != nil {
		t.Fatal(err)
	}
	alloc := newAlloc()
	src := newSource(alloc, big)
	_, err = run(t, plan, src, Options{Alloc: alloc})
	src.release()
	alloc.AssertSize(t, 0)
	if qerr.Code(err) != qerr.CodeInvalidArgument {
		t.Errorf("date overflow: %v, want invalid_argument", err)
	}
}
