package e2e

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/demodata"
)

// aggShapeRoot is a data root with the demo weather/daily.csv and a
// generated airports/airports.csv (state counts straddling 100), and the
// airports per state it holds.
func aggShapeRoot(t *testing.T) (root string, perState map[string]int) {
	t.Helper()
	root = t.TempDir()
	daily, err := fs.ReadFile(demodata.Files(), "weather/daily.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"weather", "airports"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "weather", "daily.csv"), daily, 0o644); err != nil {
		t.Fatal(err)
	}
	counts := []struct {
		state string
		n     int
	}{{"TX", 290}, {"CA", 150}, {"AK", 101}, {"NY", 100}, {"FL", 99}, {"OR", 40}, {"", 7}}
	var b strings.Builder
	b.WriteString("ident,name,state,elevation_ft\n")
	perState = map[string]int{}
	id := 0
	for round := 0; ; round++ { // interleave the states, as a real file would
		wrote := false
		for _, c := range counts {
			if round < c.n {
				id++
				fmt.Fprintf(&b, "A%05d,Airport %d,%s,%d\n", id, id, c.state, (id*37)%5000)
				perState[c.state]++
				wrote = true
			}
		}
		if !wrote {
			break
		}
	}
	if err := os.WriteFile(filepath.Join(root, "airports", "airports.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, perState
}

// docExamples returns the tool calls docs/QUERY.md marks with
// "<!-- example: TOOL -->" before a json block, in document order.
func docExamples(t *testing.T) []struct {
	tool string
	args map[string]any
} {
	t.Helper()
	doc, err := os.ReadFile("../docs/QUERY.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- example: (\\w+) -->\n```json\n(.*?)\n```")
	var out []struct {
		tool string
		args map[string]any
	}
	for _, m := range re.FindAllStringSubmatch(string(doc), -1) {
		var args map[string]any
		if err := json.Unmarshal([]byte(m[2]), &args); err != nil {
			t.Fatalf("docs/QUERY.md example is not JSON: %v\n%s", err, m[2])
		}
		out = append(out, struct {
			tool string
			args map[string]any
		}{m[1], args})
	}
	return out
}

// dailyRecords reads weather/daily.csv (station_id, date, tmin_c, tmax_c,
// precip_mm, snow), the header first.
func dailyRecords(t *testing.T) [][]string {
	t.Helper()
	f, err := demodata.Files().Open("weather/daily.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || !slices.Equal(recs[0], []string{"station_id", "date", "tmin_c", "tmax_c", "precip_mm", "snow"}) {
		t.Fatalf("daily.csv: %v %v", err, recs[:1])
	}
	return recs
}

// dailyRows reads weather/daily.csv into station, tmin, tmax per row.
func dailyRows(t *testing.T) (stations []string, tmin, tmax []float64) {
	t.Helper()
	recs := dailyRecords(t)
	col := func(name string) int { return slices.Index(recs[0], name) }
	for _, r := range recs[1:] {
		lo, err1 := strconv.ParseFloat(r[col("tmin_c")], 64)
		hi, err2 := strconv.ParseFloat(r[col("tmax_c")], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("daily.csv row %v", r)
		}
		stations, tmin, tmax = append(stations, r[col("station_id")]), append(tmin, lo), append(tmax, hi)
	}
	return stations, tmin, tmax
}

// The examples of docs/QUERY.md's "Grouping by expressions, having" run
// through the real server and MCP client and give what a row-at-a-time
// computation over the same CSV files gives.
func TestQueryDocAggregateExamples(t *testing.T) {
	root, perState := aggShapeRoot(t)
	c := startStdio(t, "--data", root)
	stations, tmin, tmax := dailyRows(t)

	// Temperature histogram.
	hist := map[float64]int{}
	for _, v := range tmax {
		hist[math.Floor(v/5)*5]++
	}
	var wantHist []string
	for _, k := range slices.Sorted(func(yield func(float64) bool) {
		for k := range hist {
			if !yield(k) {
				return
			}
		}
	}) {
		wantHist = append(wantHist, fmt.Sprintf("bucket=%v days=%d", k, hist[k]))
	}
	// States with more than 100 airports, most first.
	var big []string
	for s, n := range perState {
		if n > 100 {
			big = append(big, s)
		}
	}
	slices.SortFunc(big, func(a, b string) int { return perState[b] - perState[a] })
	var wantStates []string
	for _, s := range big {
		wantStates = append(wantStates, fmt.Sprintf("count_all=%d state=%s", perState[s], s))
	}
	// Widest range among stations with >= 30 days.
	type st struct {
		days     int
		max, min float64
	}
	per := map[string]*st{}
	for i, s := range stations {
		x := per[s]
		if x == nil {
			x = &st{max: math.Inf(-1), min: math.Inf(1)}
			per[s] = x
		}
		x.days++
		x.max, x.min = max(x.max, tmax[i]), min(x.min, tmin[i])
	}
	type rng struct {
		name  string
		days  int
		width float64
	}
	var rs []rng
	for s, x := range per {
		if x.days >= 30 {
			rs = append(rs, rng{s, x.days, x.max - x.min})
		}
	}
	slices.SortFunc(rs, func(a, b rng) int { return -cmpFloat(a.width, b.width) })
	if len(rs) < 4 || rs[2].width == rs[3].width {
		t.Fatalf("the data does not make the third example decisive: %v", rs)
	}
	var wantRange []string
	for _, r := range rs[:3] {
		wantRange = append(wantRange, fmt.Sprintf("days=%d range_c=%.4f station=%s", r.days, r.width, r.name))
	}

	// Average daily range above 8.15 degrees (a having expression).
	sums := map[string][3]float64{}
	for i, s := range stations {
		x := sums[s]
		sums[s] = [3]float64{x[0] + tmax[i], x[1] + tmin[i], x[2] + 1}
	}
	var wantAvg []string
	for _, s := range slices.Sorted(maps.Keys(sums)) {
		if x := sums[s]; (x[0]-x[1])/x[2] > 8.15 {
			wantAvg = append(wantAvg, fmt.Sprintf("avg_range=%v station_id=%s", math.Round((x[0]-x[1])/x[2]*100)/100, s))
		}
	}
	if len(wantAvg) < 2 || len(wantAvg) > len(sums)/2 {
		t.Fatalf("the data does not make the fourth example decisive: %v", wantAvg)
	}

	// Rank and share of precipitation per country (windows on aggregate).
	precip := map[string]float64{}
	var countries []string // first-seen order: the window sums the groups in it
	for _, r := range dailyRecords(t)[1:] {
		p, err := strconv.ParseFloat(r[4], 64)
		if err != nil {
			continue // an empty precip_mm: null, skipped by sum
		}
		if _, ok := precip[r[0][:2]]; !ok {
			countries = append(countries, r[0][:2])
		}
		precip[r[0][:2]] += p
	}
	total := 0.0
	for _, c := range countries {
		total += precip[c]
	}
	slices.SortStableFunc(countries, func(a, b string) int { return -cmpFloat(precip[a], precip[b]) })
	var wantShare []string
	for i, c := range countries[:3] {
		wantShare = append(wantShare, fmt.Sprintf("country=%s rank=%d share=%v", c, i+1, math.Round(precip[c]/total*1e4)/1e4))
	}

	exs := docExamples(t)
	want := [][]string{wantHist, wantStates, wantRange, wantAvg, wantShare}
	if len(exs) != len(want) {
		t.Fatalf("docs/QUERY.md has %d marked examples, the test knows %d", len(exs), len(want))
	}
	for i, ex := range exs {
		var out struct {
			Data []map[string]any `json:"data"`
		}
		call(t, c, ex.tool, ex.args, &out)
		var got []string
		for _, row := range out.Data {
			got = append(got, rowText(row))
		}
		if !slices.Equal(got, want[i]) {
			t.Errorf("example %d (%s %v):\ngot  %q\nwant %q", i, ex.tool, ex.args, got, want[i])
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// rowText prints a result row as sorted key=value pairs (floats with four
// decimals unless whole).
func rowText(row map[string]any) string {
	keys := make([]string, 0, len(row))
	for k := range row {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := row[k]
		if f, ok := v.(float64); ok && k == "range_c" {
			v = strconv.FormatFloat(f, 'f', 4, 64)
		}
		parts[i] = fmt.Sprintf("%s=%v", k, v)
	}
	return strings.Join(parts, " ")
}

// having and expression keys through the MCP client: the plan shape
// estimate_query shows, the object form validated by the input schema, and
// the structured errors.
func TestHavingAndExpressionKeys(t *testing.T) {
	root, _ := aggShapeRoot(t)
	c := startStdio(t, "--data", root)

	var est struct {
		Plan string `json:"plan"`
	}
	call(t, c, "estimate_query", map[string]any{"dataset": "airports/airports",
		"group_by": []any{map[string]any{"expr": "floor(elevation_ft / 1000) * 1000", "as": "band"}, "state"},
		"aggs":     []any{map[string]any{"col": "*", "fn": "count"}},
		"having":   []any{map[string]any{"any": []any{map[string]any{"col": "count_all", "op": "gte", "value": 20}, map[string]any{"col": "state", "op": "eq", "value": "FL"}}}},
		"columns":  []any{"state", "band", "count_all * 2 AS twice"},
		"order_by": []any{map[string]any{"col": "twice", "desc": true}}, "limit": 5}, &est)
	order := []string{"Limit", "Sort", "Project", "Compute: count_all * 2", "Filter: (count_all >= 20 OR state = 'FL')", "Aggregate", "Compute: floor(elevation_ft / 1000) * 1000 AS band", "Scan"}
	at := 0
	for _, want := range order {
		i := strings.Index(est.Plan[at:], want)
		if i < 0 {
			t.Fatalf("plan lacks %q after offset %d (evaluation order %v):\n%s", want, at, order, est.Plan)
		}
		at += i
	}

	e := callErr(t, c, "aggregate", map[string]any{"dataset": "airports/airports", "group_by": []any{"state"},
		"aggs": []any{map[string]any{"col": "*", "fn": "count"}}, "having": []any{map[string]any{"col": "count", "op": "gt", "value": 100}}})
	if e.Code != "invalid_column" || e.Diagnostics["field"] != "having[0].col" || !strings.Contains(e.Hint, `"count_all"`) {
		t.Fatalf("unknown having column: %+v", e)
	}
	e = callErr(t, c, "aggregate", map[string]any{"dataset": "airports/airports", "group_by": []any{"state"},
		"aggs": []any{map[string]any{"col": "*", "fn": "count"}}, "having": []any{map[string]any{"col": "elevation_ft", "op": "gt", "value": 100}}})
	if e.Code != "invalid_column" || !strings.Contains(e.Hint, "group keys and aggregate output names") {
		t.Fatalf("having on an input column: %+v", e)
	}
	for _, bad := range []any{7, map[string]any{"as": "x"}, map[string]any{"expr": "state", "name": "x"}} {
		e = callErr(t, c, "aggregate", map[string]any{"dataset": "airports/airports", "group_by": []any{bad},
			"aggs": []any{map[string]any{"col": "*", "fn": "count"}}})
		if e.Code != "invalid_argument" {
			t.Fatalf("group_by %v: %+v", bad, e)
		}
	}
	e = callErr(t, c, "aggregate", map[string]any{"dataset": "airports/airports", "group_by": []any{"floor(elevaton_ft / 1000)"},
		"aggs": []any{map[string]any{"col": "*", "fn": "count"}}})
	if e.Code != "invalid_column" || e.Diagnostics["field"] != "group_by[0]" || !strings.Contains(e.Hint, "elevation_ft") {
		t.Fatalf("unknown column in a group_by expression: %+v", e)
	}
}
