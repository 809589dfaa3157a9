package planner_test

import (
	"errors"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// The second argument and the filter of an aggregate are validated from
// the registry's declarations, with the offending field named.
func TestAggArgAndFilterErrors(t *testing.T) {
	cases := []struct {
		name, spec, code, field string
	}{
		{"arg on a one-argument function", `{"aggs":[{"col":"qty","fn":"sum","arg":"price"}]}`, qerr.CodeInvalidAggregate, "aggs[0].arg"},
		{"missing column arg", `{"aggs":[{"col":"qty","fn":"corr"}]}`, qerr.CodeInvalidAggregate, "aggs[0].arg"},
		{"unknown arg column", `{"aggs":[{"col":"qty","fn":"corr","arg":"prise"}]}`, qerr.CodeInvalidColumn, "aggs[0].arg"},
		{"string arg for corr", `{"aggs":[{"col":"qty","fn":"corr","arg":"region"}]}`, qerr.CodeInvalidAggregate, "aggs[0].arg"},
		{"unsupported arg column", `{"aggs":[{"col":"qty","fn":"arg_min","arg":"blob"}]}`, qerr.CodeUnsupportedType, "aggs[0].arg"},
		{"string_agg on numbers", `{"aggs":[{"col":"qty","fn":"string_agg"}]}`, qerr.CodeInvalidAggregate, "aggs[0]"},
		{"bool_and on numbers", `{"aggs":[{"col":"qty","fn":"bool_and"}]}`, qerr.CodeInvalidAggregate, "aggs[0]"},
		{"approx_quantile without q", `{"aggs":[{"col":"qty","fn":"approx_quantile"}]}`, qerr.CodeInvalidAggregate, "aggs[0].q"},
		{"filter unknown column", `{"aggs":[{"col":"qty","fn":"sum","filter":[{"col":"prise","op":"gt","value":1}]}]}`, qerr.CodeInvalidColumn, "aggs[0].filter[0].col"},
		{"filter bad operand", `{"aggs":[{"col":"qty","fn":"sum","filter":[{"col":"qty","op":"gt","value":"x"}]}]}`, qerr.CodeInvalidFilter, "aggs[0].filter[0]"},
		{"filter OR member", `{"aggs":[{"col":"*","fn":"count","filter":[{"any":[{"col":"paid","op":"lt","value":true}]}]}]}`, qerr.CodeInvalidFilter, "aggs[0].filter[0].any[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := planner.Build(spec(t, c.spec), testInput())
			if err == nil {
				t.Fatal("expected an error")
			}
			if got := qerr.Code(err); got != c.code {
				t.Errorf("code: got %q, want %q (%v)", got, c.code, err)
			}
			if !errors.Is(err, qerr.ErrInvalidArgument) && !errors.Is(err, qerr.ErrUnsupported) {
				t.Errorf("category of %v", err)
			}
			if qerr.As(err).Hint == "" {
				t.Errorf("no hint in %v", err)
			}
			if f, _ := qerr.As(err).Diagnostics["field"].(string); f != c.field {
				t.Errorf("field: got %q, want %q (%v)", f, c.field, err)
			}
		})
	}
}

// string_agg's separator defaults to the declared ","; a column arg names
// the default output fn_col_arg.
func TestAggArgDefaults(t *testing.T) {
	n, err := planner.Build(spec(t, `{"aggs":[{"col":"region","fn":"string_agg"},{"col":"price","fn":"regr_slope","arg":"qty"}]}`), testInput())
	if err != nil {
		t.Fatal(err)
	}
	var agg *planner.Aggregate
	for x := n; x != nil && agg == nil; {
		agg, _ = x.(*planner.Aggregate)
		if cs := x.Children(); len(cs) > 0 {
			x = cs[0]
		} else {
			x = nil
		}
	}
	if agg == nil || len(agg.Aggs) != 2 {
		t.Fatalf("no aggregate in\n%s", planner.String(n))
	}
	if a := agg.Aggs[0]; a.Arg != "," || a.Name != "string_agg_region" {
		t.Errorf("string_agg: arg %q, name %q", a.Arg, a.Name)
	}
	if a := agg.Aggs[1]; a.Arg != "qty" || a.Name != "regr_slope_price_qty" || a.ArgColumn() != "qty" ||
		a.ArgIndex < 0 || agg.Input.Schema().Field(a.ArgIndex).Name != "qty" {
		t.Errorf("regr_slope: arg %q (index %d), name %q", a.Arg, a.ArgIndex, a.Name)
	}
}
