package planner

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
)

// windowAggArg resolves the second argument of an aggregate used as a
// window function (WindowSpec.Arg), by the rules of AggSpec.Arg: a column
// for corr, covar_*, regr_* and arg_min/arg_max (no expressions: window
// inputs are columns), a text for string_agg (with its default). agg is nil
// for a window-only function, which takes no arg.
func (b *builder) windowAggArg(s *arrow.Schema, field string, ws WindowSpec, agg *funcs.AggDecl, e *WindowExpr) error {
	var ad *funcs.AggArg
	if agg != nil {
		ad = agg.Arg
	}
	switch {
	case ad == nil && ws.Arg != nil:
		return windowErr(field+".arg", "%s takes no arg", ws.Fn).WithHint("drop arg (integer arguments of lag, lead, ntile and nth_value go in args)")
	case ad == nil:
		return nil
	case ws.Arg == nil && ad.Default != nil:
		e.ArgText = *ad.Default
		return nil
	case ws.Arg == nil:
		return windowErr(field+".arg", "%s needs arg (%s: %s)", ws.Fn, ad.Name, ad.Doc).WithHint(`pass it, e.g. {"fn": %q, "col": "y", "arg": "x"}`, ws.Fn)
	case ad.Input == nil:
		e.ArgText = *ws.Arg
		return nil
	}
	idx, err := b.column(s, *ws.Arg, field+".arg")
	if err != nil {
		return err
	}
	if err := b.queryable(s, idx, field+".arg"); err != nil {
		return err
	}
	if t := s.Field(idx).Type; !ad.Input.Accepts(t) {
		return windowErr(field+".arg", "%s's arg (%s) must be a %s column; %q is %s", ws.Fn, ad.Name, ad.Input.Doc, *ws.Arg, typeName(t)).
			WithHint("%s: %s", ad.Name, ad.Doc)
	}
	e.ArgCol, e.ArgIndex = *ws.Arg, idx
	return nil
}
