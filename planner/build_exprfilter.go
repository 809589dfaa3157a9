package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
)

// exprFilters applies the expression filters ({"expr": "..."}) among
// filters (field names them in errors) over input. The other predicates
// (preds, on input's columns) run first, so that rows they drop are never
// evaluated: Filter(preds) → Compute (one hidden boolean column per
// expression) → Filter (each is true) → Project (input's columns). It
// returns the new node and the predicates still to apply (none when it
// applied them). A bare boolean column is a plain predicate (= true).
func (b *builder) exprFilters(input Node, preds []Predicate, filters []FilterSpec, field string) (Node, []Predicate, error) {
	s := input.Schema()
	var exprs []NamedExpr
	var tests []Predicate
	for i, f := range filters {
		if f.Expr == "" {
			continue
		}
		p, ne, err := b.exprPredicate(s, f, fmt.Sprintf("%s[%d]", field, i), hiddenName(s, fmt.Sprintf("__filter_%d", i)))
		if err != nil {
			return nil, nil, err
		}
		if ne == nil { // a boolean column: a plain predicate
			preds = append(preds, p)
			continue
		}
		p.Index = s.NumFields() + len(tests)
		exprs = append(exprs, *ne)
		tests = append(tests, p)
	}
	if len(exprs) == 0 {
		return input, preds, nil
	}
	node := input
	if len(preds) > 0 {
		node = &Filter{Input: node, Preds: preds}
	}
	node = &Compute{Input: node, Exprs: exprs}
	node = &Filter{Input: node, Preds: tests}
	p := &Project{Input: node, Out: s}
	for i, f := range s.Fields() {
		p.Columns = append(p.Columns, f.Name)
		p.Indices = append(p.Indices, i)
	}
	return p, nil, nil
}

// exprPredicate validates the expression filter f ({"expr": ...}) at fld
// over s. A bare boolean column gives a predicate on it (= true) and a nil
// expression; any other boolean expression gives the expression to compute
// as the column hidden and a predicate on that column (= true; its Index is
// for the caller to set).
func (b *builder) exprPredicate(s *arrow.Schema, f FilterSpec, fld, hidden string) (Predicate, *NamedExpr, error) {
	if f.Col != "" || f.Op != "" || len(f.Value) > 0 || f.CaseInsensitive || f.Any != nil {
		return Predicate{}, nil, qerr.Invalid(qerr.CodeInvalidFilter, "%s: an expr filter takes no col, op, value, case_insensitive or any", fld).
			With("field", fld).WithHint(`write the whole condition in expr, e.g. {"expr": "qty > 2 AND lower(city) = 'paris'"}`)
	}
	name, ne, err := b.item(s, f.Expr, fld+".expr", qerr.CodeInvalidFilter, false)
	if err != nil {
		return Predicate{}, nil, err
	}
	truth := &Literal{Type: arrow.FixedWidthTypes.Boolean, Value: true}
	if ne == nil { // a column name
		idx := s.FieldIndices(name)[0]
		if t := s.Field(idx).Type; t.ID() != arrow.BOOL {
			return Predicate{}, nil, qerr.Invalid(qerr.CodeInvalidFilter, "%s: column %q has type %s; an expr filter must be a boolean", fld, name, typeName(t)).
				With("field", fld+".expr").WithHint(`compare it, e.g. {"expr": "%s > 0"}`, quoteIdent(name))
		}
		return Predicate{Col: name, Index: idx, Op: OpEq, Value: truth}, nil, nil
	}
	if t := ne.Expr.Type(); t.ID() != arrow.BOOL {
		return Predicate{}, nil, qerr.Invalid(qerr.CodeInvalidFilter, "%s: expression %q is a %s; an expr filter must be a boolean (a comparison, LIKE, IN, IS NULL, ...)", fld, f.Expr, typeName(t)).
			With("field", fld+".expr").WithHint(`compare it, e.g. {"expr": "%s > 0"}`, ne.Expr.String())
	}
	return Predicate{Col: hidden, Index: -1, Op: OpEq, Value: truth}, &NamedExpr{Name: hidden, Expr: ne.Expr}, nil
}

// hiddenName returns name, underscored until no column of s has it.
func hiddenName(s *arrow.Schema, name string) string {
	for len(s.FieldIndices(name)) > 0 {
		name = "_" + name
	}
	return name
}

// exprHint summarizes the expression syntax for parse-error hints.
func exprHint() string {
	return "Expressions combine columns and literals ('text', 12, 1.5, true, null) with + - * / % ||, comparisons (= != < <= > >=), " +
		"AND/OR/NOT, IS NULL, LIKE, IN (...), BETWEEN, CASE WHEN ... THEN ... ELSE ... END, CAST(x AS type) and functions (" +
		strings.Join(funcs.ScalarNames(), ", ") + "); double-quote column names that are not identifiers or are keywords"
}

// pinClock replaces the calls of now() and current_date in e by the
// query's clock (read once per Build), so every row and every expression of
// a query sees the same instant.
func (b *builder) pinClock(e Expr) Expr {
	c, ok := e.(*Call)
	if !ok {
		switch x := e.(type) {
		case *Neg:
			x.X = b.pinClock(x.X)
		case *Binary:
			x.L, x.R = b.pinClock(x.L), b.pinClock(x.R)
		case *Cast:
			x.X = b.pinClock(x.X)
		}
		return e
	}
	if b.now.IsZero() {
		b.now = time.Now()
	}
	switch c.Fn {
	case "now":
		return &Const{Typ: c.Typ, Int: b.now.UnixMicro()}
	case "current_date":
		return &Const{Typ: c.Typ, Int: funcs.DaysOf(b.now.UTC())}
	}
	for i, a := range c.Args {
		c.Args[i] = b.pinClock(a)
	}
	return c
}
