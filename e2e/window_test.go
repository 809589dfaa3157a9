package e2e

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"testing"
)

// The docs/QUERY.md window examples through a real MCP client, checked
// against answers computed here from the raw rows.
func TestWindowQueries(t *testing.T) {
	c := startStdio(t)
	rows := func(args map[string]any) []map[string]any {
		t.Helper()
		var r queryResult
		call(t, c, "query_data", args, &r)
		out := r.Data
		for r.PageInfo != nil && r.PageInfo.HasMore {
			args := map[string]any{"result_handle": r.ResultHandle, "page_token": r.PageInfo.PageToken}
			r = queryResult{}
			call(t, c, "query_next_page", args, &r)
			out = append(out, r.Data...)
		}
		return out
	}
	num := func(v any) float64 {
		f, ok := v.(float64)
		if !ok {
			t.Fatalf("not a number: %#v", v)
		}
		return f
	}

	// Rank within group.
	raw := rows(map[string]any{"dataset": "sales/orders", "columns": []string{"region", "product", "qty"}})
	sums := map[[2]string]float64{}
	for _, r := range raw {
		if r["qty"] != nil {
			sums[[2]string{fmt.Sprint(r["region"]), fmt.Sprint(r["product"])}] += num(r["qty"])
		}
	}
	got := rows(map[string]any{"dataset": "sales/orders",
		"group_by": []string{"region", "product"}, "aggs": []map[string]any{{"col": "qty", "fn": "sum", "as": "units"}},
		"windows":  []map[string]any{{"fn": "rank", "partition_by": []string{"region"}, "order_by": []map[string]any{{"col": "units", "desc": true}}, "as": "rank"}},
		"order_by": []map[string]any{{"col": "region"}, {"col": "rank"}}})
	if len(got) != len(sums) {
		t.Fatalf("rank within group: %d rows, want %d groups", len(got), len(sums))
	}
	for _, r := range got {
		k := [2]string{fmt.Sprint(r["region"]), fmt.Sprint(r["product"])}
		want := 1
		for other, u := range sums {
			if other[0] == k[0] && u > sums[k] {
				want++
			}
		}
		if r["units"] != nil && int(num(r["rank"])) != want {
			t.Fatalf("rank of %v = %v, want %d", k, r["rank"], want)
		}
	}

	// Share of total.
	got = rows(map[string]any{"dataset": "sales/orders",
		"group_by": []string{"region"}, "aggs": []map[string]any{{"col": "qty", "fn": "sum", "as": "units"}},
		"windows": []map[string]any{{"fn": "sum", "col": "units", "as": "all_units"}},
		"columns": []string{"region", "units", "units / all_units AS share"}})
	total := 0.0
	for _, r := range got {
		total += num(r["share"])
	}
	if math.Abs(total-1) > 1e-9 || len(got) < 2 {
		t.Fatalf("shares sum to %v over %d regions", total, len(got))
	}

	// Running total per station equals the station's sum at its last row;
	// day-over-day change through lag.
	daily := rows(map[string]any{"dataset": "weather/daily", "columns": []string{"station_id", "date", "precip_mm", "tmax_c"}})
	got = rows(map[string]any{"dataset": "weather/daily",
		"columns": []string{"station_id", "date", "precip_mm", "running", "tmax_c - prev AS change"},
		"windows": []map[string]any{
			{"fn": "sum", "col": "precip_mm", "partition_by": []string{"station_id"}, "order_by": []map[string]any{{"col": "date"}}, "frame": map[string]any{"start": "unbounded preceding"}, "as": "running"},
			{"fn": "lag", "col": "tmax_c", "partition_by": []string{"station_id"}, "order_by": []map[string]any{{"col": "date"}}, "as": "prev"},
		},
		"order_by": []map[string]any{{"col": "station_id"}, {"col": "date"}}})
	if len(got) != len(daily) {
		t.Fatalf("running total: %d rows, want %d", len(got), len(daily))
	}
	slices.SortStableFunc(daily, func(a, b map[string]any) int {
		return cmp.Or(cmp.Compare(fmt.Sprint(a["station_id"]), fmt.Sprint(b["station_id"])), cmp.Compare(fmt.Sprint(a["date"]), fmt.Sprint(b["date"])))
	})
	run, seen := 0.0, false // a sum over only nulls is null
	for i, r := range daily {
		first := i == 0 || daily[i-1]["station_id"] != r["station_id"]
		if first {
			run, seen = 0, false
		}
		if r["precip_mm"] != nil {
			run, seen = run+num(r["precip_mm"]), true
		}
		g := got[i]
		if g["station_id"] != r["station_id"] || g["date"] != r["date"] || (g["running"] != nil) != seen || (seen && math.Abs(num(g["running"])-run) > 1e-6) {
			t.Fatalf("row %d: got %v, want running %v for %v", i, g, run, r)
		}
		var want any
		if !first && r["tmax_c"] != nil && daily[i-1]["tmax_c"] != nil {
			want = num(r["tmax_c"]) - num(daily[i-1]["tmax_c"])
		}
		if g := got[i]["change"]; (g == nil) != (want == nil) || (g != nil && math.Abs(num(g)-want.(float64)) > 1e-9) {
			t.Fatalf("row %d: change %v, want %v", i, g, want)
		}
	}

	// Largest two unit prices per region.
	prices := rows(map[string]any{"dataset": "sales/orders", "columns": []string{"region", "unit_price"}})
	byRegion := map[string][]float64{}
	var order []string
	for _, r := range prices {
		k := fmt.Sprint(r["region"])
		if _, ok := byRegion[k]; !ok {
			order = append(order, k)
			byRegion[k] = nil
		}
		if r["unit_price"] != nil {
			byRegion[k] = append(byRegion[k], num(r["unit_price"]))
		}
	}
	got = rows(map[string]any{"dataset": "sales/orders", "group_by": []string{"region"}, "columns": []string{"region", "unit_price"},
		"filters":         []map[string]any{{"col": "unit_price", "op": "is_not_null"}},
		"top_n_per_group": map[string]any{"n": 2, "by": []map[string]any{{"col": "unit_price", "desc": true}}}})
	var want []string
	for _, k := range order {
		ps := byRegion[k]
		slices.SortFunc(ps, func(a, b float64) int { return cmp.Compare(b, a) })
		for _, p := range ps[:min(2, len(ps))] {
			want = append(want, fmt.Sprint(k, p))
		}
	}
	var have []string
	for _, r := range got {
		have = append(have, fmt.Sprint(r["region"], r["unit_price"]))
	}
	if !slices.Equal(have, want) {
		t.Fatalf("top 2 per region:\n got %v\nwant %v", have, want)
	}

	// A model-fixable mistake is a structured tool error.
	e := callErr(t, c, "query_data", map[string]any{"dataset": "sales/orders", "windows": []map[string]any{{"fn": "rank"}}})
	if e.Code != "invalid_argument" {
		t.Fatalf("rank without order_by: code %q", e.Code)
	}
}
