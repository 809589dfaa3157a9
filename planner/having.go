package planner

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
)

// groupKey resolves group_by entry text against the aggregate's input
// schema s, like a columns entry (a known column name wins; otherwise an
// expression, named by its AS alias or its normalized text). ne is nil for
// a column; typ is the key's input type.
func (b *builder) groupKey(s *arrow.Schema, text, field string) (name string, ne *NamedExpr, typ arrow.DataType, err error) {
	name, ne, err = b.item(s, text, field, qerr.CodeInvalidArgument, true)
	if err != nil {
		return "", nil, nil, err
	}
	if ne != nil {
		return name, ne, ne.Expr.Type(), nil
	}
	return name, nil, s.Field(s.FieldIndices(name)[0]).Type, nil
}

// checkHaving rejects having outside aggregate queries.
func checkHaving(spec Spec) error {
	if len(spec.Having) > 0 && len(spec.GroupBy) == 0 && len(spec.Aggs) == 0 {
		return qerr.Invalid(qerr.CodeInvalidArgument, "having needs an aggregate query (group_by and/or aggs)").
			With("field", "having").WithHint("to filter rows of a plain query use filters")
	}
	return nil
}

// having puts a Filter of the having predicates over agg (whose output has
// the group keys and the aggregate outputs); no predicates, no node. The
// predicates take the filter language of filters, resolved against the
// aggregate's output: an unknown name gets suggestions among those outputs.
// Expression filters ({"expr": "sum_x / count_all > 3"}) are computed over
// the aggregated rows after the other predicates, as in filters.
func (b *builder) having(agg *Aggregate, having []FilterSpec) (Node, error) {
	if len(having) == 0 {
		return agg, nil
	}
	hb := *b
	hb.in.Schema = agg.Out
	outs := hb.names(agg.Out)
	preds := make([]Predicate, 0, len(having))
	for i, f := range having {
		if f.Expr != "" {
			continue // exprFilters below
		}
		field := fmt.Sprintf("having[%d]", i)
		if err := havingColumns(outs, field, f); err != nil {
			return nil, err
		}
		p, err := hb.filterAt(field, f)
		if err != nil {
			return nil, err
		}
		preds = append(preds, p)
	}
	node, rest, err := hb.exprFilters(agg, preds, having, "having")
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		node = &Filter{Input: node, Preds: rest}
	}
	return node, nil
}

// havingColumns checks that every column f names is an output of the
// aggregate (outs), answering invalid_column with suggestions among them.
func havingColumns(outs []string, field string, f FilterSpec) error {
	check := func(col, field string) error {
		if col == "" || slices.Contains(outs, col) {
			return nil // a missing col is reported by filter
		}
		sugg := qerr.Suggest(col, outs, 3)
		e := qerr.Invalid(qerr.CodeInvalidColumn, "unknown column %q in %s: having filters the aggregated rows", col, field).
			With("field", field).With("column", col).With("suggestions", sugg).With("valid_columns", outs)
		if len(sugg) > 0 {
			return e.WithHint("did you mean %s? having takes group keys and aggregate output names: %s", quoteList(sugg), truncList(outs, 20))
		}
		return e.WithHint("having takes group keys and aggregate output names (count_all, sum_qty, or as): %s; filter input rows with filters", truncList(outs, 20))
	}
	if err := check(f.Col, field+".col"); err != nil {
		return err
	}
	for j, c := range f.Any {
		if err := check(c.Col, fmt.Sprintf("%s.any[%d].col", field, j)); err != nil {
			return err
		}
	}
	return nil
}
