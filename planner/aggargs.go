package planner

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
)

// The second argument (AggSpec.Arg) and the per-aggregate filter
// (AggSpec.Filter) of an aggregate: validated from the registry's
// declaration (funcs.AggDecl.Arg), resolved like the aggregate's input.

// ArgColumn returns the column the aggregate's second argument names, or ""
// when it has none or takes a text literal.
func (e AggExpr) ArgColumn() string {
	if d, ok := e.Fn.Lookup(); ok && d.Arg != nil && d.Arg.Input != nil {
		return e.Arg
	}
	return ""
}

// inputColumns lists the columns of e's input beyond Col: its column
// argument and the columns its filter reads.
func (e AggExpr) inputColumns() []string {
	out := predsColumns(e.Filter)
	if c := e.ArgColumn(); c != "" {
		out = append(out, c)
	}
	return out
}

// resolveExtra sets ArgIndex and the filter's indices against s.
func (e *AggExpr) resolveExtra(s *arrow.Schema) (err error) {
	e.ArgIndex = -1
	if c := e.ArgColumn(); c != "" {
		if e.ArgIndex, err = colIndex(s, c); err != nil {
			return err
		}
	}
	return resolvePreds(s, e.Filter)
}

func (e AggExpr) describeArg() string {
	d, ok := e.Fn.Lookup()
	if !ok || d.Arg == nil {
		return ""
	}
	if d.Arg.Input != nil {
		return ", " + quoteIdent(e.Arg)
	}
	return ", " + quoteLiteral(e.Arg)
}

func (e AggExpr) describeFilter() string {
	if len(e.Filter) == 0 {
		return ""
	}
	return " FILTER (WHERE " + describePreds(e.Filter) + ")"
}

// quoteLiteral renders a text literal in SQL's single quotes.
func quoteLiteral(s string) string {
	out := []byte{'\''}
	for i := range len(s) {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}

// aggExtras validates a's arg and filter against decl and sets e.Arg and
// e.Filter. A column arg is bound like the aggregate's input (a column or
// an expression, added to exprs) and, under null_policy drop, joins
// needNonNull. It returns the arg's default-name suffix ("_x" for a column).
func (b *builder) aggExtras(s *arrow.Schema, decl *funcs.AggDecl, a AggSpec, field string, e *AggExpr, exprs *[]NamedExpr, needNonNull *[]string) (string, error) {
	for j, f := range a.Filter {
		fld := fmt.Sprintf("%s.filter[%d]", field, j)
		if f.Expr != "" {
			// computed before aggregating, as a hidden boolean column
			hidden := hiddenName(s, fmt.Sprintf("__agg_filter_%d", len(*exprs)))
			for slices.ContainsFunc(*exprs, func(x NamedExpr) bool { return x.Name == hidden }) {
				hidden = "_" + hidden
			}
			p, ne, err := b.exprPredicate(s, f, fld, hidden)
			if err != nil {
				return "", err
			}
			if ne != nil {
				*exprs = append(*exprs, *ne)
			}
			e.Filter = append(e.Filter, p)
			continue
		}
		p, err := b.filterAt(fld, f)
		if err != nil {
			return "", err
		}
		e.Filter = append(e.Filter, p)
	}
	ad := decl.Arg
	switch {
	case ad == nil && a.Arg != nil:
		takers := funcs.AggNamesWhere(func(d *funcs.AggDecl) bool { return d.Arg != nil })
		return "", qerr.Invalid(qerr.CodeInvalidAggregate, "%s: %s takes no arg", field, a.Fn).
			With("field", field+".arg").WithHint("drop arg; only %s take one", funcs.JoinWords(takers, "and"))
	case ad == nil:
		return "", nil
	case a.Arg == nil && ad.Default != nil:
		e.Arg = *ad.Default
		return "", nil
	case a.Arg == nil:
		return "", qerr.Invalid(qerr.CodeInvalidAggregate, "%s: %s needs arg (%s: %s)", field, a.Fn, ad.Name, ad.Doc).
			With("field", field+".arg").WithHint(`pass it, e.g. {"col": "y", "fn": %q, "arg": "x"}`, a.Fn)
	case ad.Input == nil:
		e.Arg = *a.Arg
		return "", nil
	}
	name, ne, err := b.item(s, *a.Arg, field+".arg", qerr.CodeInvalidAggregate, false)
	if err != nil {
		return "", err
	}
	var typ arrow.DataType
	if ne != nil {
		typ = ne.Expr.Type()
		if !slices.ContainsFunc(*exprs, func(x NamedExpr) bool { return x.Name == name }) {
			*exprs = append(*exprs, *ne)
		}
	} else {
		typ = s.Field(s.FieldIndices(name)[0]).Type
	}
	if !ad.Input.Accepts(typ) {
		return "", qerr.Invalid(qerr.CodeInvalidAggregate, "%s: %s's arg (%s) must be a %s column; %q is %s", field, a.Fn, ad.Name, ad.Input.Doc, *a.Arg, typeName(typ)).
			With("field", field+".arg").WithHint("%s: %s", ad.Name, ad.Doc)
	}
	if !slices.Contains(*needNonNull, name) {
		*needNonNull = append(*needNonNull, name)
	}
	e.Arg = name
	return "_" + name, nil
}
