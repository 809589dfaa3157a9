package service

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// TestQueryUnion: query_data over several datasets returns the union of
// their rows with _dataset, the filters (a pattern_filter token included)
// run in each dataset, grouping and ordering run over the union, and the
// refusals name the dataset and the reason.
func TestQueryUnion(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "budget/2023/programs.csv", "program,amount,note\nScience grants,1,a\nSchools,3,b\nScience grants,2,c\n")
	writeFile(t, root, "budget/2024/programs.csv", "program,amount,ministry\nScience grants,7.5,x\nRoads,4,y\n")
	writeFile(t, root, "other/programs.csv", "program,amount\nScience grants,9\n")
	s, alloc := newTestService(t, root, 0, nil)
	ctx := context.Background()
	years := []string{"budget/2023/programs", "budget/2024/programs"}
	pf, err := s.PatternFilter(ctx, PatternFilterRequest{Field: "program", Patterns: []string{"science"}, Datasets: years,
		Confirmed: &PatternConfirmation{Include: []string{"Science grants"}}})
	if err != nil || pf.FilterToken == "" {
		t.Fatalf("pattern_filter: %+v %v", pf, err)
	}
	token := []planner.FilterSpec{{FilterToken: pf.FilterToken}}
	in := []planner.FilterSpec{{Col: "program", Op: "in", Value: json.RawMessage(`["Science grants"]`)}}
	order := []planner.OrderSpec{{Col: "_dataset"}, {Col: "amount"}}
	want := `[{"program":"Science grants","amount":1,"_dataset":"budget/2023/programs"},` +
		`{"program":"Science grants","amount":2,"_dataset":"budget/2023/programs"},` +
		`{"program":"Science grants","amount":7.5,"_dataset":"budget/2024/programs"}]`
	for name, filters := range map[string][]planner.FilterSpec{"token": token, "in": in} {
		req := QueryRequest{Datasets: years}
		req.Filters, req.OrderBy = filters, order
		res, err := s.Query(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := string(res.Result.Data); got != want {
			t.Fatalf("%s:\n got %s\nwant %s", name, got, want)
		}
	}

	// dataset plus datasets; grouping over the union by _dataset.
	req := QueryRequest{EstimateRequest: EstimateRequest{Dataset: years[0]}, Datasets: years[1:]}
	req.GroupBy = planner.GroupKeys{"_dataset"}
	req.Aggs = []planner.AggSpec{{Col: "*", Fn: "count"}, {Col: "amount", Fn: "sum"}}
	req.OrderBy = []planner.OrderSpec{{Col: "_dataset"}}
	res, err := s.Query(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Result.Data); got != `[{"_dataset":"budget/2023/programs","count_all":3,"sum_amount":6},{"_dataset":"budget/2024/programs","count_all":2,"sum_amount":11.5}]` {
		t.Fatalf("group by _dataset: %s", got)
	}

	for _, tc := range []struct {
		name     string
		req      QueryRequest
		code     string
		contains string
	}{
		{"column not shared", QueryRequest{Datasets: years, EstimateRequest: EstimateRequest{Spec: planner.Spec{Columns: []string{"note"}}}},
			qerr.CodeInvalidColumn, "not in budget/2024/programs"},
		{"token of other datasets", QueryRequest{Datasets: []string{years[0], "other/programs"}, EstimateRequest: EstimateRequest{Spec: planner.Spec{Filters: token}}},
			qerr.CodeInvalidFilterToken, "other/programs"},
		{"twice", QueryRequest{Datasets: []string{years[0], years[0]}}, qerr.CodeInvalidArgument, "twice"},
		{"unknown", QueryRequest{Datasets: []string{years[0], "budget/2025/programs"}}, qerr.CodeDatasetNotFound, ""},
	} {
		_, err := s.Query(ctx, tc.req)
		if qerr.Code(err) != tc.code {
			t.Fatalf("%s: got %v, want code %s", tc.name, err, tc.code)
		}
		var qe *qerr.Error
		if tc.contains != "" && (!errors.As(err, &qe) || !strings.Contains(qe.Error()+" "+qe.Hint, tc.contains)) {
			t.Fatalf("%s: %v (hint %q) does not mention %q", tc.name, err, qe.Hint, tc.contains)
		}
	}
	waitFreed(t, alloc)
}
