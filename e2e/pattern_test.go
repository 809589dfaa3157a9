package e2e

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Programs of the hand-made Armenian budget data: each value with the
// number of rows it gets per year. The spellings are deliberate: case,
// the ligature և against եւ, an emphasis mark, a Latin n for ո, the
// genitive գիտության, and գիտություն inside the longer word
// մասնագիտություն.
const (
	pScience       = "Գիտություն"
	pScienceGen    = "Գիտության զարգացման ծրագիր"
	pProfessions   = "Մասնագիտությունների զարգացում"
	pSciEduLig     = "ԳԻՏՈՒԹՅՈՒՆ և ԿՐԹՈՒԹՅՈՒՆ"
	pSciEduEw      = "Գիտություն եւ կրթություն"
	pSciEmphasis   = "Գիտությու՛ն՝ նորարարություն"
	pSciLatinN     = "Կիրառական գիտnւթյուն" // Latin n for ո
	pNaturalSci    = "Բնական գիտությունների ֆակուլտետ"
	pVocational    = "Մասնագիտական կրթություն"
	pHealth        = "Առողջապահություն"
	pHigherEdu     = "Բարձրագույն կրթություն"
	pGeneralEdu    = "Հանրակրթություն"
	pYouth         = "Սպորտ եւ երիտասարդություն"
	pConferences   = "Գիտաժողովներ"
	budgetDataset  = "budget/programs_2024"
	budget2023     = "budget/programs_2023"
	budgetRowsEach = 40
)

var budgetPrograms = []string{pScience, pScienceGen, pProfessions, pSciEduLig, pSciEduEw, pSciEmphasis, pSciLatinN,
	pNaturalSci, pVocational, pHealth, pHigherEdu, pGeneralEdu, pYouth, pConferences}

var ministries = []string{"ԿԳՄՍ նախարարություն", "Առողջապահության նախարարություն", "Էկոնոմիկայի նախարարություն"}

// writeBudget writes one year's CSV: program i gets budgetRowsEach + i
// rows (560+ rows in all), with a ministry and an amount.
func writeBudget(t *testing.T, root, name string, year int) {
	t.Helper()
	dir := filepath.Join(root, "budget")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, name+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"year", "ministry", "program", "amount"})
	row := 0
	for i, p := range budgetPrograms {
		for j := 0; j < budgetRowsEach+i; j++ {
			_ = w.Write([]string{fmt.Sprint(year), ministries[(i+j)%len(ministries)], p, fmt.Sprint(1000 + row*7%991)})
			row++
		}
	}
	w.Flush()
	if err := cmp.Or(w.Error(), f.Close()); err != nil {
		t.Fatal(err)
	}
}

type patternCandidate struct {
	Value    string           `json:"value"`
	Count    int64            `json:"count"`
	Why      string           `json:"why"`
	Datasets map[string]int64 `json:"datasets"`
}

type patternOut struct {
	Status     string `json:"status"`
	Candidates *struct {
		Include []patternCandidate `json:"include"`
		Exclude []patternCandidate `json:"exclude"`
	} `json:"candidates"`
	Question string `json:"question"`
	NextCall *struct {
		Tool      string         `json:"tool"`
		Arguments map[string]any `json:"arguments"`
	} `json:"next_call"`
	FilterToken string `json:"filter_token"`
	Filter      *struct {
		Col   string   `json:"col"`
		Op    string   `json:"op"`
		Value []string `json:"value"`
	} `json:"filter"`
	Diagnostics struct {
		DistinctScanned int64    `json:"distinct_scanned"`
		MatchedRows     int64    `json:"matched_rows"`
		Matched         int64    `json:"matched"`
		Datasets        []string `json:"datasets"`
	} `json:"diagnostics"`
}

// sets returns the include and exclude values of an answer, sorted: the
// candidates of needs_confirmation, the token's values of confirmed.
func (p patternOut) sets() (inc, exc []string) {
	if p.Filter != nil {
		inc = slices.Clone(p.Filter.Value)
	}
	if p.Candidates != nil {
		for _, c := range p.Candidates.Include {
			inc = append(inc, c.Value)
		}
		for _, c := range p.Candidates.Exclude {
			exc = append(exc, c.Value)
		}
	}
	sort.Strings(inc)
	sort.Strings(exc)
	return inc, exc
}

func sorted(v ...string) []string {
	out := slices.Clone(v)
	sort.Strings(out)
	return out
}

func budgetRoot(t *testing.T) string {
	root := t.TempDir()
	writeBudget(t, root, "programs_2024", 2024)
	writeBudget(t, root, "programs_2023", 2023)
	return root
}

// TestPatternFilterModes: per mode, the exact include and exclude sets of
// the acceptance cases (գիտություն in մասնագիտություն excluded in strict
// and balanced, included in permissive; և and եւ match each other).
func TestPatternFilterModes(t *testing.T) {
	c := startStdio(t, "--data", budgetRoot(t))
	tests := []struct {
		mode     string
		patterns []string
		inc, exc []string
	}{
		{"strict", []string{"գիտություն"}, sorted(pScience, pSciEduLig, pSciEduEw, pSciEmphasis, pSciLatinN),
			sorted(pScienceGen, pProfessions, pNaturalSci)},
		{"balanced", []string{"գիտություն"}, sorted(pScience, pScienceGen, pSciEduLig, pSciEduEw, pSciEmphasis, pSciLatinN, pNaturalSci),
			sorted(pProfessions)},
		{"permissive", []string{"գիտություն"}, sorted(pScience, pProfessions, pSciEduLig, pSciEduEw, pSciEmphasis, pSciLatinN, pNaturalSci), nil},
		{"strict", []string{"գիտություն և կրթություն"}, sorted(pSciEduLig, pSciEduEw), nil},
		{"balanced", []string{"Գիտություն եւ կրթություն"}, sorted(pSciEduLig, pSciEduEw), nil},
		{"permissive", []string{"ԳԻՏՈՒԹՅՈՒՆ ԵՎ"}, nil, nil}, // եվ is not եւ
		{"permissive", []string{"գիտություն և"}, sorted(pSciEduLig, pSciEduEw), nil},
		{"balanced", []string{"կրթություն"}, sorted(pSciEduLig, pSciEduEw, pVocational, pHigherEdu), sorted(pGeneralEdu)},
	}
	for _, tc := range tests {
		var out patternOut
		call(t, c, "pattern_filter", map[string]any{"dataset": budgetDataset, "field": "program", "patterns": tc.patterns, "mode": tc.mode}, &out)
		inc, exc := out.sets()
		if !slices.Equal(inc, tc.inc) || !slices.Equal(exc, tc.exc) {
			t.Errorf("%s %q: include %q exclude %q, want %q and %q (status %s)", tc.mode, tc.patterns, inc, exc, tc.inc, tc.exc, out.Status)
		}
		if out.Diagnostics.DistinctScanned != int64(len(budgetPrograms)) {
			t.Errorf("%s %q: distinct_scanned %d", tc.mode, tc.patterns, out.Diagnostics.DistinctScanned)
		}
	}
}

// TestPatternFilterLoop: needs_confirmation, then the confirmed call of
// next_call, then the token in query_data, aggregate, estimate_query and
// distinct_values gives exactly the rows of the equivalent in filter; a
// tampered or foreign-dataset token is refused.
func TestPatternFilterLoop(t *testing.T) {
	c := startStdio(t, "--data", budgetRoot(t))
	var ask patternOut
	call(t, c, "pattern_filter", map[string]any{"dataset": budgetDataset, "field": "program", "patterns": []string{"գիտություն"}}, &ask)
	if ask.Status != "needs_confirmation" || ask.NextCall == nil || ask.NextCall.Tool != "pattern_filter" || ask.Question == "" ||
		ask.FilterToken != "" || ask.Diagnostics.MatchedRows == 0 {
		t.Fatalf("first answer: %+v", ask)
	}
	if ex := ask.Candidates.Exclude; len(ex) != 1 || ex[0].Value != pProfessions || !strings.Contains(ex[0].Why, "մասնագիտությունների") {
		t.Fatalf("exclude candidates: %+v", ex)
	}
	var ok patternOut
	call(t, c, "pattern_filter", ask.NextCall.Arguments, &ok)
	if ok.Status != "confirmed" || ok.FilterToken == "" || ok.Filter == nil || ok.Filter.Op != "in" || ok.Diagnostics.Matched != ask.Diagnostics.MatchedRows {
		t.Fatalf("confirmed: %+v", ok)
	}
	values := make([]any, len(ok.Filter.Value))
	for i, v := range ok.Filter.Value {
		values[i] = v
	}
	token := []map[string]any{{"filter_token": ok.FilterToken}}
	in := []map[string]any{{"col": "program", "op": "in", "value": values}}
	same := func(tool string, args map[string]any) {
		t.Helper()
		withToken, withIn := map[string]any{"filters": token}, map[string]any{"filters": in}
		for k, v := range args {
			withToken[k], withIn[k] = v, v
		}
		a, b := text(call(t, c, tool, withToken, nil)), text(call(t, c, tool, withIn, nil))
		if a != b {
			t.Errorf("%s: token and in filter differ:\n%s\n%s", tool, a, b)
		}
	}
	same("aggregate", map[string]any{"dataset": budgetDataset, "group_by": []string{"program"},
		"aggs": []map[string]any{{"col": "*", "fn": "count"}, {"col": "amount", "fn": "sum"}}, "order_by": []map[string]any{{"col": "program"}}})
	same("query_data", map[string]any{"dataset": budgetDataset, "columns": []string{"program", "amount"}, "limit": 50,
		"order_by": []map[string]any{{"col": "amount"}, {"col": "program"}}})
	same("distinct_values", map[string]any{"dataset": budgetDataset, "column": "ministry"})
	// advanced_query: WHERE filter_token($1) against the same IN list.
	list := make([]string, len(ok.Filter.Value))
	for i, v := range ok.Filter.Value {
		list[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	sqlTok := fmt.Sprintf(`SELECT program, count(*) AS n, sum(amount) AS total FROM %q WHERE filter_token($1) GROUP BY program ORDER BY program`, budgetDataset)
	sqlIn := fmt.Sprintf(`SELECT program, count(*) AS n, sum(amount) AS total FROM %q WHERE program IN (%s) GROUP BY program ORDER BY program`, budgetDataset, strings.Join(list, ", "))
	a := text(call(t, c, "advanced_query", map[string]any{"sql": sqlTok, "params": []any{ok.FilterToken}}, nil))
	if b := text(call(t, c, "advanced_query", map[string]any{"sql": sqlIn}, nil)); a != b || !strings.Contains(a, pScience) {
		t.Errorf("advanced_query: token and IN list differ:\n%s\n%s", a, b)
	}
	if e := callErr(t, c, "advanced_query", map[string]any{"sql": fmt.Sprintf(`SELECT * FROM %q WHERE filter_token($1)`, budget2023),
		"params": []any{ok.FilterToken}}); e.Code != "invalid_filter_token" {
		t.Errorf("advanced_query on a foreign dataset: %+v", e)
	}
	var agg queryResult
	call(t, c, "aggregate", map[string]any{"dataset": budgetDataset, "filters": token, "group_by": []string{"year"},
		"aggs": []map[string]any{{"col": "*", "fn": "count"}}}, &agg)
	if len(agg.Data) != 1 || fmt.Sprint(agg.Data[0]["count_all"]) != fmt.Sprint(ok.Diagnostics.Matched) {
		t.Errorf("token count: %+v, want %d", agg.Data, ok.Diagnostics.Matched)
	}
	var est struct {
		Plan string `json:"plan"`
	}
	call(t, c, "estimate_query", map[string]any{"dataset": budgetDataset, "filters": token}, &est)
	if !strings.Contains(est.Plan, "program IN (") {
		t.Errorf("estimate plan does not show the token's filter: %s", est.Plan)
	}

	for name, args := range map[string]map[string]any{
		"foreign dataset": {"dataset": budget2023, "filters": token},
		"tampered":        {"dataset": budgetDataset, "filters": []map[string]any{{"filter_token": ok.FilterToken[:len(ok.FilterToken)-2] + "AA"}}},
		"garbage":         {"dataset": budgetDataset, "filters": []map[string]any{{"filter_token": "ft1.x.y"}}},
	} {
		if e := callErr(t, c, "query_data", args); e.Code != "invalid_filter_token" {
			t.Errorf("%s: %+v", name, e)
		}
	}
	if e := callErr(t, c, "pattern_filter", map[string]any{"dataset": budgetDataset, "field": "program",
		"confirmed": map[string]any{"include": []string{"no such program"}}}); e.Code != "invalid_argument" {
		t.Errorf("unknown confirmed value: %+v", e)
	}
	if e := callErr(t, c, "pattern_filter", map[string]any{"dataset": budgetDataset, "field": "amount", "patterns": []string{"1"}}); e.Code != "invalid_column" {
		t.Errorf("numeric field: %+v", e)
	}
}

// TestPatternFilterAcrossDatasets: the same field in two years, candidates
// with per-dataset counts, one token valid for both.
func TestPatternFilterAcrossDatasets(t *testing.T) {
	c := startStdio(t, "--data", budgetRoot(t))
	var ask patternOut
	call(t, c, "pattern_filter", map[string]any{"datasets": []string{budgetDataset, budget2023}, "field": "program",
		"patterns": []string{"գիտություն"}, "mode": "strict"}, &ask)
	if ask.Status != "needs_confirmation" || !slices.Equal(ask.Diagnostics.Datasets, []string{budgetDataset, budget2023}) ||
		ask.Diagnostics.DistinctScanned != 2*int64(len(budgetPrograms)) {
		t.Fatalf("across: %+v", ask)
	}
	for _, cand := range ask.Candidates.Include {
		if len(cand.Datasets) != 2 || cand.Datasets[budgetDataset]+cand.Datasets[budget2023] != cand.Count {
			t.Errorf("per-dataset counts: %+v", cand)
		}
	}
	var ok patternOut
	call(t, c, "pattern_filter", ask.NextCall.Arguments, &ok)
	var total int64
	for _, ds := range []string{budgetDataset, budget2023} {
		var agg queryResult
		call(t, c, "aggregate", map[string]any{"dataset": ds, "filters": []map[string]any{{"filter_token": ok.FilterToken}},
			"group_by": []string{"year"}, "aggs": []map[string]any{{"col": "*", "fn": "count"}}}, &agg)
		if len(agg.Data) != 1 {
			t.Fatalf("%s: %+v", ds, agg)
		}
		var n int64
		if _, err := fmt.Sscan(fmt.Sprint(agg.Data[0]["count_all"]), &n); err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if total != ok.Diagnostics.Matched || total == 0 {
		t.Errorf("rows over both years %d, token says %d", total, ok.Diagnostics.Matched)
	}
	// query_data over both years at once: the union of the matching rows
	// with _dataset, per-dataset counts equal to the per-dataset queries.
	var union queryResult
	call(t, c, "query_data", map[string]any{"dataset": budgetDataset, "datasets": []string{budget2023},
		"filters": []map[string]any{{"filter_token": ok.FilterToken}}, "group_by": []string{"_dataset"},
		"aggs": []map[string]any{{"col": "*", "fn": "count"}}, "order_by": []map[string]any{{"col": "_dataset"}}}, &union)
	var unionTotal int64
	for _, r := range union.Data {
		var n int64
		if _, err := fmt.Sscan(fmt.Sprint(r["count_all"]), &n); err != nil {
			t.Fatal(err)
		}
		unionTotal += n
	}
	if len(union.Data) != 2 || union.Data[0]["_dataset"] != budget2023 || unionTotal != total {
		t.Errorf("union over both years: %+v, want %d rows in 2 datasets", union.Data, total)
	}
}

// picker answers pattern_filter's form: accept with the default
// selection plus the values in add, or decline / cancel.
type picker struct {
	mu     sync.Mutex
	action mcp.ElicitationResponseAction
	add    []string
	asked  []mcp.ElicitationRequest
}

func (p *picker) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req)
	res := &mcp.ElicitationResult{}
	res.Action = p.action
	if p.action != mcp.ElicitationResponseActionAccept {
		return res, nil
	}
	props, _ := req.Params.RequestedSchema.(map[string]any)["properties"].(map[string]any)
	content := map[string]any{}
	if v, ok := props["values"].(map[string]any); ok { // multi-select
		picked := slices.Clone(v["default"].([]any))
		for _, a := range p.add {
			picked = append(picked, a)
		}
		content["values"] = picked
	} else { // one boolean per value
		for k, v := range props {
			f := v.(map[string]any)
			title, _ := f["title"].(string)
			content[k] = f["default"].(bool) || slices.ContainsFunc(p.add, func(a string) bool { return strings.HasPrefix(title, a+" (") })
		}
	}
	res.Content = content
	return res, nil
}

// TestPatternFilterElicitation: a client that declared elicitation gets
// one form (multi-select: both revisions the e2e client speaks have it;
// the boolean form of older revisions is tested in mcpapi);
// accepting yields the confirmed token directly, declining and cancelling
// are cancelled errors.
func TestPatternFilterElicitation(t *testing.T) {
	root := budgetRoot(t)
	for _, version := range []string{mcp.LATEST_PROTOCOL_VERSION, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		t.Run(version, func(t *testing.T) {
			p := &picker{action: mcp.ElicitationResponseActionAccept, add: []string{pProfessions}}
			s := startSession(t, []client.ClientOption{client.WithElicitationHandler(p), client.WithProtocolVersion(version)}, "--data", root)
			args := map[string]any{"dataset": budgetDataset, "field": "program", "patterns": []string{"գիտություն"}}
			var ok patternOut
			call(t, s.c, "pattern_filter", args, &ok)
			want := sorted(pScience, pScienceGen, pSciEduLig, pSciEduEw, pSciEmphasis, pSciLatinN, pNaturalSci, pProfessions)
			if inc, _ := ok.sets(); ok.Status != "confirmed" || ok.FilterToken == "" || !slices.Equal(inc, want) || len(p.asked) != 1 {
				t.Fatalf("accepted: %+v (asked %d)", ok, len(p.asked))
			}
			form, _ := json.Marshal(p.asked[0].Params.RequestedSchema)
			if !strings.Contains(string(form), `"anyOf"`) || !strings.Contains(string(form), pProfessions+" (") ||
				!strings.Contains(p.asked[0].Params.Message, "program") {
				t.Errorf("form: %s %q", form, p.asked[0].Params.Message)
			}
			for _, action := range []mcp.ElicitationResponseAction{mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionCancel} {
				p.mu.Lock()
				p.action = action
				p.mu.Unlock()
				if e := callErr(t, s.c, "pattern_filter", args); e.Code != "cancelled" {
					t.Errorf("%s: %+v", action, e)
				}
			}
		})
	}
}

// TestPatternFilterTypeScriptSDK runs interop/mcp-sdk/pattern.mjs: the
// official TypeScript SDK client goes through the needs_confirmation loop,
// the elicitation form (accepted, declined, cancelled) and the token in
// query_data, aggregate and advanced_query against the IN list.
func TestPatternFilterTypeScriptSDK(t *testing.T) {
	out := nodeScript(t, "mcp-sdk", "node_modules/@modelcontextprotocol/sdk/package.json", "pattern.mjs",
		"--bin", binary, "--data", budgetRoot(t), "--dataset", budgetDataset, "--extra", pProfessions)
	if !strings.Contains(string(out), "pattern: OK") {
		t.Fatalf("pattern.mjs:\n%s", out)
	}
	t.Logf("pattern.mjs:\n%s", out)
}
