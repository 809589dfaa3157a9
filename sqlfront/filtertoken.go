package sqlfront

import (
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// TokenResolver is implemented by catalogs that accept pattern_filter's
// filter tokens in SQL (`WHERE filter_token($1)`): FilterToken verifies a
// token and returns the datasets it was confirmed for and the filter it
// stands for (Col is the column's name in those datasets). Errors are
// *qerr.Error (invalid_filter_token).
type TokenResolver interface {
	FilterToken(token string) (datasets []string, f planner.FilterSpec, err error)
}

// isFilterToken reports whether fc calls filter_token.
func isFilterToken(fc *pg.FuncCall) bool {
	return strings.EqualFold(funcName(fc), "filter_token")
}

const tokenHint = `WHERE filter_token($1), or filter_token(alias.column, $1) to name the table, with params: ["<filter_token from pattern_filter>"]`

// tokenFilter lowers a WHERE conjunct filter_token(token) or
// filter_token(column, token) to the filter the token stands for, on the
// FROM table that reads a dataset the token was confirmed for.
func (b *block) tokenFilter(fc *pg.FuncCall) (planner.FilterSpec, error) {
	tr, ok := b.c.cat.(TokenResolver)
	if !ok {
		return planner.FilterSpec{}, b.c.errAt(fc.Location, qerr.CodeUnsupportedSQL, "filter_token is not available here")
	}
	if len(fc.Args) < 1 || len(fc.Args) > 2 || fc.Over != nil || fc.AggStar || fc.AggDistinct || fc.AggFilter != nil {
		return planner.FilterSpec{}, b.c.errAt(fc.Location, qerr.CodeInvalidArgument, "filter_token takes the token, optionally after the column it filters").
			WithHint(tokenHint)
	}
	token, err := b.tokenText(fc.Args[len(fc.Args)-1])
	if err != nil {
		return planner.FilterSpec{}, err
	}
	datasets, f, err := tr.FilterToken(token)
	if err != nil {
		return planner.FilterSpec{}, err
	}
	if len(fc.Args) == 2 {
		ref := fc.Args[0].GetColumnRef()
		if ref == nil {
			return planner.FilterSpec{}, b.c.errAt(fc.Location, qerr.CodeInvalidArgument, "the first argument of filter_token must be a column").
				WithHint(tokenHint)
		}
		internal, _, err := b.f.scope.column(b.c, ref)
		if err != nil {
			return planner.FilterSpec{}, err
		}
		for _, r := range b.f.scope.rels {
			for _, c := range r.cols {
				if c.internal == internal && c.name == f.Col && slices.Contains(datasets, r.dataset) {
					f.Col = internal
					return f, nil
				}
			}
		}
		return planner.FilterSpec{}, b.c.errAt(ref.Location, qerr.CodeInvalidFilterToken, "the filter token is for column %s of %s, not this column", f.Col, strings.Join(datasets, ", ")).
			WithHint("name column %s of a table reading %s", f.Col, strings.Join(datasets, ", "))
	}
	var found []string
	for _, r := range b.f.scope.rels {
		if !slices.Contains(datasets, r.dataset) {
			continue
		}
		for _, c := range r.cols {
			if c.name == f.Col {
				found = append(found, c.internal)
			}
		}
	}
	switch len(found) {
	case 1:
		f.Col = found[0]
		return f, nil
	case 0:
		return planner.FilterSpec{}, b.c.errAt(fc.Location, qerr.CodeInvalidFilterToken, "the filter token was confirmed for %s; no table of this FROM reads it", strings.Join(datasets, ", ")).
			WithHint("use the token in a query over one of those datasets, or call pattern_filter on this one")
	}
	return planner.FilterSpec{}, b.c.errAt(fc.Location, qerr.CodeInvalidArgument, "several tables of this FROM read %s: say which one the token filters", strings.Join(datasets, ", ")).
		WithHint("filter_token(alias.%s, $1)", f.Col)
}

// tokenText is the token argument: a string literal or a string parameter.
func (b *block) tokenText(n *pg.Node) (string, error) {
	if s := n.GetAConst().GetSval(); s != nil {
		return s.Sval, nil
	}
	if p := n.GetParamRef(); p != nil {
		v, err := b.c.param(p)
		if err != nil {
			return "", err
		}
		if s, ok := v.(string); ok {
			return s, nil
		}
		return "", b.c.errAt(p.Location, qerr.CodeInvalidArgument, "parameter $%d of filter_token must be the token string", p.Number).
			With("field", "params").WithHint(tokenHint)
	}
	return "", b.c.errAt(nodeLoc(n), qerr.CodeInvalidArgument, "filter_token takes the token as a string or a parameter").WithHint(tokenHint)
}
