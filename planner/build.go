package planner

import (
	"time"

	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
)

// Input describes the dataset a spec is planned against.
type Input struct {
	// Dataset is the dataset id (printed in the plan).
	Dataset string
	// Schema is the dataset's full Arrow schema.
	Schema *arrow.Schema
	// RowCount and RowCountExact come from the catalog and feed estimates.
	RowCount      int64
	RowCountExact bool
	// Joins are the datasets of Spec.Join, one per element in order (their
	// own Joins are ignored).
	Joins []Input
	// Node, when set, is the plan the spec reads instead of a Scan of
	// Dataset (a subquery of the SQL front-end); Schema is its schema.
	Node Node
}

// UnsupportedMetaKey is the Arrow field metadata key that marks a column
// whose source type Quarry cannot query (e.g. an HDF5 opaque type). Such
// columns are listed in schemas but rejected by every knob that uses them,
// and left out of the default projection.
const UnsupportedMetaKey = "quarry.unsupported"

// Build validates spec against in.Schema and returns the logical plan.
//
// Plan shape (bottom-up): Scan (all columns) → [Filter] → then either
//
//   - [Compute] (expression group keys and aggregate inputs) → [Filter]
//     (null_policy drop) → Aggregate → [Filter] (having), or
//   - [Compute] (expression columns) → [Filter] (null_policy drop),
//
// followed by [Filter] → [Window] → [TopNPerGroup] (windows and
// top_n_per_group; see windowing) → [Compute] → [Deduplicate] → [Sort]
// (when it needs columns the projection drops) → [Project] →
// [Deduplicate] → [Distinct] → [Sort] → [Limit].
// Build does not optimize; call Optimize on the result.
//
// Errors are *qerr.Error values with codes invalid_column (with
// suggestions), invalid_filter, invalid_aggregate and invalid_argument; each
// names the offending field in its "field" diagnostic.
func Build(spec Spec, in Input) (Node, error) {
	if in.Schema == nil {
		return nil, qerr.Internal(nil, "planner: dataset %q has no schema", in.Dataset)
	}
	b := &builder{in: in}
	if err := checkKnobs(spec); err != nil {
		return nil, err
	}
	node := in.source()
	if len(spec.Join) > 0 || len(in.Joins) > 0 {
		var err error
		if node, err = b.joins(node, spec.Join, in.Joins); err != nil {
			return nil, err
		}
		b.in.Schema = node.Schema() // filters see the joined columns
	}

	preds := make([]Predicate, 0, len(spec.Filters))
	for i, f := range spec.Filters {
		if f.Expr != "" {
			continue // see exprFilters
		}
		p, err := b.filter(i, f)
		if err != nil {
			return nil, err
		}
		preds = append(preds, p)
	}
	node, preds, err := b.exprFilters(node, preds, spec.Filters, "filters")
	if err != nil {
		return nil, err
	}

	if spec.TopNPerGroup != nil && len(spec.Aggs) > 0 {
		return nil, windowErr("top_n_per_group", "top_n_per_group keeps rows, it cannot be combined with aggs").
			WithHint("drop aggs (group_by then names the groups), or rank aggregated rows with a rank window and a filter in a second step")
	}
	if len(spec.Aggs) > 0 || (len(spec.GroupBy) > 0 && spec.TopNPerGroup == nil) {
		node, err = b.aggregate(node, preds, spec)
	} else {
		if spec.TopN != nil {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "top_n needs an aggregate query (group_by and/or aggs)").
				With("field", "top_n").WithHint("to keep the first N rows of a plain query use limit (with order_by)")
		}
		node, err = b.finish(node, spec, preds, spec.NullPolicy == NullDrop, spec.OrderBy)
	}
	if err != nil {
		return nil, err
	}

	count, offset := int64(-1), int64(0)
	if spec.Limit != nil {
		count = *spec.Limit
	}
	if spec.Offset != nil {
		offset = *spec.Offset
	}
	if spec.TopN != nil {
		// offset/limit apply within the top N groups.
		if rest := max(0, *spec.TopN-offset); count < 0 || count > rest {
			count = rest
		}
	}
	if count >= 0 || offset > 0 {
		node = &Limit{Input: node, Count: count, Offset: offset}
	}
	return node, nil
}

func checkKnobs(spec Spec) error {
	if spec.Limit != nil && *spec.Limit < 0 {
		return qerr.Invalid(qerr.CodeInvalidArgument, "limit must be >= 0, got %d", *spec.Limit).
			WithHint("omit limit for all rows, or pass a positive number").With("field", "limit")
	}
	if spec.Offset != nil && *spec.Offset < 0 {
		return qerr.Invalid(qerr.CodeInvalidArgument, "offset must be >= 0, got %d", *spec.Offset).
			WithHint("offset counts result rows to skip; use 0 or more").With("field", "offset")
	}
	if spec.TopN != nil && *spec.TopN < 0 {
		return qerr.Invalid(qerr.CodeInvalidArgument, "top_n must be >= 0, got %d", *spec.TopN).
			WithHint("top_n is the number of groups to keep").With("field", "top_n")
	}
	if err := checkHaving(spec); err != nil {
		return err
	}
	switch spec.NullPolicy {
	case "", NullKeep, NullDrop:
	default:
		e := qerr.Invalid(qerr.CodeInvalidArgument, "unknown null_policy %q", spec.NullPolicy).
			With("field", "null_policy").With("valid_values", []string{NullKeep, NullDrop})
		return e.WithHint("null_policy is %q (default) or %q (drop rows with a null in any selected column)", NullKeep, NullDrop)
	}
	return nil
}

type builder struct {
	in Input
	// now is the query's clock (now(), current_date), read once; see pinClock.
	now time.Time
}

func (b *builder) names(s *arrow.Schema) []string {
	out := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		out[i] = f.Name
	}
	return out
}

// column resolves name in schema s, or returns invalid_column with suggestions.
func (b *builder) column(s *arrow.Schema, name, field string) (int, error) {
	idx := s.FieldIndices(name)
	if len(idx) == 0 {
		names := b.names(s)
		sugg := qerr.Suggest(name, names, 3)
		e := qerr.Invalid(qerr.CodeInvalidColumn, "unknown column %q in %s", name, field).
			With("field", field).With("column", name).With("suggestions", sugg)
		if len(sugg) > 0 {
			e.WithHint("did you mean %s? Call get_schema for the exact column names", quoteList(sugg))
		} else {
			e.WithHint("valid columns: %s", truncList(names, 20))
		}
		return -1, e
	}
	return idx[0], nil
}

func (b *builder) queryable(s *arrow.Schema, idx int, field string) error {
	f := s.Field(idx)
	if t, ok := f.Metadata.GetValue(UnsupportedMetaKey); ok {
		return qerr.Unsupported(qerr.CodeUnsupportedType, "column %q has type %s, which Quarry cannot query", f.Name, t).
			With("field", field).With("column", f.Name).
			WithHint("leave this column out; it is listed for reference only")
	}
	return nil
}

// filter validates one element of spec.Filters: a predicate or an OR group.
func (b *builder) filter(i int, f FilterSpec) (Predicate, error) {
	return b.filterAt(fmt.Sprintf("filters[%d]", i), f)
}

// filterAt validates one filter (a predicate or an OR group) at field.
func (b *builder) filterAt(field string, f FilterSpec) (Predicate, error) {
	if f.Expr != "" {
		return Predicate{}, qerr.Invalid(qerr.CodeInvalidFilter, "%s: expr filters are accepted in filters and in an aggregate's filter, not here", field).
			With("field", field+".expr").WithHint(`use {"col": ..., "op": ..., "value": ...} on a group key or an aggregate output`)
	}
	if f.Any == nil {
		return b.predicate(field, FilterCond{Col: f.Col, Op: f.Op, Value: f.Value, CaseInsensitive: f.CaseInsensitive})
	}
	if len(f.Any) == 0 {
		return Predicate{}, qerr.Invalid(qerr.CodeInvalidFilter, "%s: any needs at least one filter", field).
			With("field", field+".any").WithHint(`pass {"any": [{"col": ..., "op": ..., "value": ...}, ...]}, or drop the group`)
	}
	if f.Col != "" || f.Op != "" || len(f.Value) > 0 || f.CaseInsensitive {
		return Predicate{}, qerr.Invalid(qerr.CodeInvalidFilter, "%s: an any group takes no col, op, value or case_insensitive of its own", field).
			With("field", field).WithHint("move the predicate into the any list, or make it a separate filter (ANDed)")
	}
	p := Predicate{Op: OpAny, Index: -1}
	for j, c := range f.Any {
		m, err := b.predicate(fmt.Sprintf("%s.any[%d]", field, j), c)
		if err != nil {
			return Predicate{}, err
		}
		p.Any = append(p.Any, m)
	}
	return p, nil
}

func (b *builder) predicate(field string, f FilterCond) (Predicate, error) {
	s := b.in.Schema
	if f.Col == "" {
		return Predicate{}, qerr.Invalid(qerr.CodeInvalidFilter, "%s: col is required", field).
			With("field", field+".col").WithHint(`name the column to filter, e.g. {"col": "region", "op": "eq", "value": "north"}, or use {"any": [...]} for an OR group`)
	}
	idx, err := b.column(s, f.Col, field+".col")
	if err != nil {
		return Predicate{}, err
	}
	if err := b.queryable(s, idx, field); err != nil {
		return Predicate{}, err
	}
	typ := s.Field(idx).Type
	p := Predicate{Col: f.Col, Index: idx, Op: f.Op, CaseInsensitive: f.CaseInsensitive}
	bad := func(format string, args ...any) *qerr.Error {
		return qerr.Invalid(qerr.CodeInvalidFilter, "%s (%s on column %q of type %s): %s", field, f.Op, f.Col, typeName(typ), fmt.Sprintf(format, args...)).
			With("field", field).With("column", f.Col).With("column_type", typeName(typ))
	}
	decl, ok := f.Op.Lookup()
	if !ok {
		validOps := funcs.OpNames()
		e := qerr.Invalid(qerr.CodeInvalidFilter, "%s: unknown filter op %q", field, f.Op).
			With("field", field+".op").With("valid_ops", validOps)
		if sugg := suggestName(string(f.Op), validOps); len(sugg) > 0 && f.Op != "" {
			return p, e.With("suggestions", sugg).WithHint("did you mean %s? valid ops: %s", quoteList(sugg), strings.Join(validOps, ", "))
		}
		return p, e.WithHint("valid ops: %s", strings.Join(validOps, ", "))
	}
	if f.CaseInsensitive {
		if !decl.CaseInsensitive {
			return p, bad("case_insensitive applies to %s only", funcs.JoinWords(funcs.OpNamesWhere(func(d *funcs.OpDecl) bool { return d.CaseInsensitive }), "and")).
				WithHint("drop case_insensitive, or use one of those ops")
		}
		if !isString(typ) {
			return p, bad("case_insensitive needs a string column").WithHint("drop case_insensitive for %s columns", typeName(typ))
		}
	}
	if decl.StringOnly && !isString(typ) {
		return p, bad("%s works on string columns only", f.Op).WithHint("use eq, in or range on %s columns", typeName(typ))
	}
	hasValue := len(f.Value) > 0 && string(f.Value) != "null"
	switch decl.Operand {
	case funcs.OperandNone:
		if hasValue {
			return p, bad("takes no value").WithHint("omit value for %s", f.Op)
		}
		return p, nil
	case funcs.OperandScalar, funcs.OperandPattern:
		if !hasValue {
			e := bad("needs a value")
			if decl.NoValueHint != "" {
				return p, e.WithHint("%s", decl.NoValueHint)
			}
			return p, e.WithHint("pass value: %s", valueHint(typ))
		}
		if decl.Ordered && typ.ID() == arrow.BOOL {
			return p, bad("ordering comparisons are not defined on booleans").WithHint("use eq or neq")
		}
		lit, err := coerce(f.Value, typ)
		if err != nil {
			return p, bad("%v", err).WithHint("pass value as %s", valueHint(typ))
		}
		if decl.Operand == funcs.OperandPattern {
			pat := lit.Value.(string)
			if len(pat) > MaxRegexLen {
				return p, bad("the pattern is %d characters long; the limit is %d", len(pat), MaxRegexLen).
					WithHint("shorten the pattern, or combine simpler filters (contains, starts_with, in)")
			}
			if f.CaseInsensitive {
				pat = "(?i)" + pat
			}
			if _, err := regexp.Compile(pat); err != nil {
				return p, bad("invalid regular expression: %v", err).
					WithHint("patterns use Go RE2 syntax (no backreferences or lookaround); escape literal characters like . ( [ with a backslash")
			}
		}
		p.Value = &lit
		return p, nil
	case funcs.OperandList:
		raws, err := splitArray(f.Value)
		if err != nil || len(raws) == 0 {
			return p, bad("%s needs a non-empty list of values", f.Op).WithHint(`pass value as a JSON list, e.g. ["a", "b"]`)
		}
		for j, r := range raws {
			lit, err := coerce(r, typ)
			if err != nil {
				return p, bad("value[%d]: %v", j, err).WithHint("every list item must be %s", valueHint(typ))
			}
			p.Values = append(p.Values, lit)
		}
		return p, nil
	case funcs.OperandRange:
		lo, hi, err := splitRange(f.Value)
		if err != nil {
			return p, bad("%v", err).WithHint(`pass value as {"min": ..., "max": ...} (inclusive; either may be omitted)`)
		}
		if decl.Ordered && typ.ID() == arrow.BOOL {
			return p, bad("range is not defined on booleans").WithHint("use eq")
		}
		if lo != nil {
			l, err := coerce(lo, typ)
			if err != nil {
				return p, bad("min: %v", err).WithHint("min must be %s", valueHint(typ))
			}
			p.Min = &l
		}
		if hi != nil {
			h, err := coerce(hi, typ)
			if err != nil {
				return p, bad("max: %v", err).WithHint("max must be %s", valueHint(typ))
			}
			p.Max = &h
		}
		return p, nil
	}
	return p, qerr.Internal(nil, "planner: op %q not handled", f.Op)
}

// item resolves one entry of columns (or an aggregate input, or an order_by
// key) against s: a column name (ne == nil), or an arithmetic expression
// (ne != nil, named by its alias or its normalized text). code is the error
// code of type errors; allowAlias permits a trailing AS name.
func (b *builder) item(s *arrow.Schema, text, field, code string, allowAlias bool) (name string, ne *NamedExpr, err error) {
	if idx := s.FieldIndices(text); len(idx) > 0 {
		return text, nil, b.queryable(s, idx[0], field)
	}
	if !LooksLikeExpr(text) {
		_, err := b.column(s, text, field)
		return "", nil, err
	}
	e, alias, perr := ParseExpr(text)
	if perr != nil {
		ee := qerr.Invalid(qerr.CodeInvalidArgument, "%s: cannot parse expression %q: %v", field, text, perr).
			With("field", field).With("expression", text)
		if sugg := qerr.Suggest(text, b.names(s), 3); len(sugg) > 0 {
			ee.With("suggestions", sugg)
			return "", nil, ee.WithHint("did you mean column %s? %s", quoteList(sugg), exprHint())
		}
		return "", nil, ee.WithHint("%s, e.g. \"qty * price AS revenue\"", exprHint())
	}
	if alias != "" && !allowAlias {
		return "", nil, qerr.Invalid(code, "%s: AS is not allowed here", field).With("field", field).
			WithHint("name an aggregate's output with its as field")
	}
	if err := BindExpr(e, s); err != nil {
		var uc *unknownColError
		if errors.As(err, &uc) {
			names := b.names(s)
			sugg := qerr.Suggest(uc.col, names, 3)
			for _, x := range qerr.Suggest(text, names, 3) {
				if !slices.Contains(sugg, x) {
					sugg = append(sugg, x)
				}
			}
			ee := qerr.Invalid(qerr.CodeInvalidColumn, "unknown column %q in expression %q (%s)", uc.col, text, field).
				With("field", field).With("column", uc.col).With("suggestions", sugg)
			if len(sugg) > 0 {
				return "", nil, ee.WithHint("did you mean %s? Double-quote column names that contain spaces or operators, e.g. \"unit-price\" * 2", quoteList(sugg))
			}
			return "", nil, ee.WithHint("valid columns: %s", truncList(names, 20))
		}
		return "", nil, qerr.Invalid(code, "%s: %v", field, err).With("field", field).
			WithHint("see the operators and functions in docs/QUERY.md (Expressions); CAST(x AS type) converts")
	}
	for _, c := range ExprColumns(e) {
		if err := b.queryable(s, s.FieldIndices(c)[0], field); err != nil {
			return "", nil, err
		}
	}
	if ref, ok := e.(*ColRef); ok && alias == "" {
		return ref.Name, nil, nil // a quoted column name
	}
	name = alias
	if name == "" {
		name = e.String()
	}
	if len(s.FieldIndices(name)) > 0 {
		return "", nil, qerr.Invalid(qerr.CodeInvalidArgument, "%s: the expression's output name %q is already a column", field, name).
			With("field", field).WithHint("give the expression another name with AS, e.g. \"%s AS %s_2\"", e.String(), strings.Trim(quoteIdent(name), `"`))
	}
	return name, &NamedExpr{Name: name, Expr: b.pinClock(e)}, nil
}

func (b *builder) aggregate(input Node, preds []Predicate, spec Spec) (Node, error) {
	s := input.Schema()
	agg := &Aggregate{}
	var fields []arrow.Field
	var exprs []NamedExpr
	var needNonNull []string // null_policy drop: group keys and aggregate inputs
	seen := map[string]string{}
	addName := func(name, field string) error {
		if prev, ok := seen[name]; ok {
			return qerr.Invalid(qerr.CodeInvalidArgument, "output column %q is produced twice (%s and %s)", name, prev, field).
				With("field", field).WithHint("give one of them a different name with as")
		}
		seen[name] = field
		return nil
	}
	for i, g := range spec.GroupBy {
		field := fmt.Sprintf("group_by[%d]", i)
		name, ne, typ, err := b.groupKey(s, g, field)
		if err != nil {
			return nil, err
		}
		if err := addName(name, field); err != nil {
			return nil, err
		}
		if ne != nil {
			exprs = append(exprs, *ne)
		}
		agg.GroupBy = append(agg.GroupBy, name)
		fields = append(fields, arrow.Field{Name: name, Type: Decoded(typ), Nullable: true})
		needNonNull = append(needNonNull, name)
	}
	for i, a := range spec.Aggs {
		field := fmt.Sprintf("aggs[%d]", i)
		e := AggExpr{Fn: a.Fn, Col: a.Col, Index: -1}
		decl, ok := a.Fn.Lookup()
		if !ok {
			validAggs := funcs.AggNames()
			ee := qerr.Invalid(qerr.CodeInvalidAggregate, "%s: unknown aggregate function %q", field, a.Fn).
				With("field", field+".fn").With("valid_fns", validAggs)
			if sugg := suggestName(string(a.Fn), validAggs); len(sugg) > 0 && a.Fn != "" {
				return nil, ee.With("suggestions", sugg).WithHint("did you mean %s? valid functions: %s", quoteList(sugg), strings.Join(validAggs, ", "))
			}
			return nil, ee.WithHint("valid functions: %s", strings.Join(validAggs, ", "))
		}
		if decl.Param {
			if a.Q == nil {
				return nil, qerr.Invalid(qerr.CodeInvalidAggregate, "%s: %s needs q", field, a.Fn).
					With("field", field+".q").WithHint(`pass q in [0, 1], e.g. {"col": "price", "fn": %q, "q": 0.9}`, a.Fn)
			}
			if !(*a.Q >= 0 && *a.Q <= 1) {
				return nil, qerr.Invalid(qerr.CodeInvalidAggregate, "%s: q must be in [0, 1], got %v", field, *a.Q).
					With("field", field+".q").WithHint("q is a fraction: 0.5 is the median, 0.9 the 90th percentile")
			}
			e.Q = *a.Q
		} else if a.Q != nil {
			return nil, qerr.Invalid(qerr.CodeInvalidAggregate, "%s: q applies to %s only, not %s", field, funcs.JoinWords(funcs.AggNamesWhere(func(d *funcs.AggDecl) bool { return d.Param }), "and"), a.Fn).
				With("field", field+".q").WithHint("drop q, or use fn quantile")
		}
		var inType arrow.DataType
		if a.Col == "*" || a.Col == "" {
			if !decl.Star {
				return nil, qerr.Invalid(qerr.CodeInvalidAggregate, "%s: %s needs a column (only %s accepts *)", field, a.Fn, funcs.JoinWords(funcs.AggNamesWhere(func(d *funcs.AggDecl) bool { return d.Star }), "and")).
					With("field", field+".col").WithHint("name the column to %s", a.Fn)
			}
			e.Col = "*"
		} else {
			name, ne, err := b.item(s, a.Col, field+".col", qerr.CodeInvalidAggregate, false)
			if err != nil {
				return nil, err
			}
			e.Col = name
			if ne != nil {
				inType = ne.Expr.Type()
				if !slices.ContainsFunc(exprs, func(x NamedExpr) bool { return x.Name == name }) {
					exprs = append(exprs, *ne)
				}
			} else {
				inType = s.Field(s.FieldIndices(name)[0]).Type
			}
			if !slices.Contains(needNonNull, name) {
				needNonNull = append(needNonNull, name)
			}
		}
		if e.Col == "*" {
			e.Type = arrow.PrimitiveTypes.Int64
		} else {
			if !decl.Input.Accepts(inType) {
				msg, hint := fmt.Sprintf("%s is not supported on values of type %s", a.Fn, typeName(inType)), "use count on this column"
				if decl.Reject != nil {
					msg, hint = decl.Reject(a.Col, typeName(inType))
				}
				return nil, qerr.Invalid(qerr.CodeInvalidAggregate, "%s: %s", field, msg).With("field", field).WithHint("%s", hint)
			}
			e.Type = decl.Result(inType)
		}
		argSuffix, err := b.aggExtras(s, decl, a, field, &e, &exprs, &needNonNull)
		if err != nil {
			return nil, err
		}
		e.Name = a.As
		if e.Name == "" {
			switch {
			case e.Col == "*":
				e.Name = "count_all"
			case decl.Param:
				e.Name = string(a.Fn) + "_" + strconv.FormatFloat(e.Q, 'g', -1, 64) + "_" + e.Col
			default:
				e.Name = string(a.Fn) + "_" + e.Col + argSuffix
			}
		}
		if err := addName(e.Name, field); err != nil {
			return nil, err
		}
		agg.Aggs = append(agg.Aggs, e)
		fields = append(fields, arrow.Field{Name: e.Name, Type: e.Type, Nullable: true})
	}

	if spec.NullPolicy != NullDrop {
		needNonNull = nil
	}
	node := filterAndCompute(input, preds, exprs, needNonNull)
	agg.Input = node
	in := node.Schema()
	for _, g := range agg.GroupBy {
		agg.GroupIdx = append(agg.GroupIdx, in.FieldIndices(g)[0])
	}
	for i := range agg.Aggs {
		if agg.Aggs[i].Col != "*" {
			agg.Aggs[i].Index = in.FieldIndices(agg.Aggs[i].Col)[0]
		}
	}
	if err := Resolve(node); err != nil {
		return nil, err
	}
	agg.Out = arrow.NewSchema(fields, nil)

	order := spec.OrderBy
	if spec.TopN != nil && len(order) == 0 {
		if len(agg.Aggs) == 0 {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "top_n needs order_by or at least one aggregate to rank groups by").
				With("field", "top_n").WithHint("add order_by, or an aggregate such as {\"col\": \"*\", \"fn\": \"count\"}")
		}
		order = []OrderSpec{{Col: agg.Aggs[0].Name, Desc: true}}
	}
	groups, err := b.having(agg, spec.Having)
	if err != nil {
		return nil, err
	}
	return b.finish(groups, spec, nil, false, order)
}

// filterAndCompute stacks, over input, a Filter of lower (predicates on
// input's columns), a Compute of exprs and, for null_policy drop, "is not
// null" on every column in nonNull: in the lower Filter when input has the
// column, in a Filter above the Compute when exprs compute it. Empty parts
// add no node.
func filterAndCompute(input Node, lower []Predicate, exprs []NamedExpr, nonNull []string) Node {
	s := input.Schema()
	lower = slices.Clip(lower)
	var upper []Predicate
	for _, c := range nonNull {
		if idx := s.FieldIndices(c); len(idx) > 0 {
			lower = append(lower, Predicate{Col: c, Index: idx[0], Op: OpIsNotNull})
		} else {
			upper = append(upper, Predicate{Col: c, Index: -1, Op: OpIsNotNull})
		}
	}
	node := input
	if len(lower) > 0 {
		node = &Filter{Input: node, Preds: lower}
	}
	if len(exprs) > 0 {
		node = &Compute{Input: node, Exprs: exprs}
	}
	if len(upper) > 0 {
		node = &Filter{Input: node, Preds: upper}
	}
	return node
}

// finish builds the part of the plan above the row source input (the Scan
// of a plain query, the Aggregate of an aggregate query): lower predicates,
// computed columns, the null_policy filter, deduplicate, sort, projection,
// distinct and the final sort (see Build).
func (b *builder) finish(input Node, spec Spec, lower []Predicate, nullDrop bool, order []OrderSpec) (Node, error) {
	var group []string
	if spec.TopNPerGroup != nil && len(spec.Aggs) == 0 {
		group = spec.GroupBy // a plain query: group_by names top_n_per_group's groups
	}
	input, lower, err := b.windowing(input, lower, spec, group)
	if err != nil {
		return nil, err
	}
	s := input.Schema()
	var outs []string
	var exprs []NamedExpr
	explicit := len(spec.Columns) > 0
	if explicit {
		for i, c := range spec.Columns {
			field := fmt.Sprintf("columns[%d]", i)
			name, ne, err := b.item(s, c, field, qerr.CodeInvalidArgument, true)
			if err != nil {
				return nil, err
			}
			if slices.Contains(outs, name) {
				return nil, qerr.Invalid(qerr.CodeInvalidArgument, "column %q is listed twice in columns", name).With("field", field).
					WithHint("list each column once (name expressions apart with AS)")
			}
			outs = append(outs, name)
			if ne != nil {
				exprs = append(exprs, *ne)
			}
		}
	} else {
		for _, f := range s.Fields() {
			if _, bad := f.Metadata.GetValue(UnsupportedMetaKey); !bad {
				outs = append(outs, f.Name)
			}
		}
	}

	keys := make([]string, len(order))
	sortBelow := false
	for i, o := range order {
		field := fmt.Sprintf("order_by[%d]", i)
		switch {
		case slices.Contains(outs, o.Col):
			keys[i] = o.Col
		case len(s.FieldIndices(o.Col)) > 0 || !LooksLikeExpr(o.Col):
			if _, err := b.orderColumn(s, outs, o.Col, field+".col"); err != nil {
				return nil, err
			}
			keys[i], sortBelow = o.Col, true
		default:
			name, ne, err := b.item(s, o.Col, field+".col", qerr.CodeInvalidArgument, false)
			if err != nil {
				return nil, err
			}
			keys[i] = name
			if !slices.Contains(outs, name) {
				sortBelow = true
				if ne != nil && !slices.ContainsFunc(exprs, func(x NamedExpr) bool { return x.Name == name }) {
					exprs = append(exprs, *ne)
				}
			}
		}
		if sortBelow && spec.Distinct {
			return nil, qerr.Invalid(qerr.CodeInvalidColumn, "%s names %q, which is not a selected column; with distinct, order_by can only use selected columns", field, o.Col).
				With("field", field+".col").With("column", o.Col).With("suggestions", qerr.Suggest(o.Col, outs, 3)).
				WithHint("add %q to columns, or drop distinct (deduplicate keeps the first row per selected values and can sort by other columns)", o.Col)
		}
	}

	var nonNull []string
	if nullDrop {
		nonNull = outs
	}
	node := filterAndCompute(input, lower, exprs, nonNull)
	if err := Resolve(node); err != nil {
		return nil, err
	}

	dedup := spec.Deduplicate && !spec.Distinct
	if sortBelow {
		if dedup {
			node = b.dedup(node, outs)
		}
		if node, err = b.sort(node, order, keys); err != nil {
			return nil, err
		}
	}
	if explicit || len(exprs) > 0 || len(outs) != input.Schema().NumFields() {
		if node, err = b.project(node, outs, "columns"); err != nil {
			return nil, err
		}
	}
	if dedup && !sortBelow {
		node = &Deduplicate{Input: node}
	}
	if spec.Distinct {
		node = &Distinct{Input: node}
	}
	if !sortBelow {
		return b.sort(node, order, keys)
	}
	return node, nil
}

// orderColumn resolves an order_by key that is not an output column.
func (b *builder) orderColumn(s *arrow.Schema, outs []string, name, field string) (int, error) {
	idx := s.FieldIndices(name)
	if len(idx) == 0 {
		cands := slices.Clone(outs)
		for _, n := range b.names(s) {
			if !slices.Contains(cands, n) {
				cands = append(cands, n)
			}
		}
		sugg := qerr.Suggest(name, cands, 3)
		e := qerr.Invalid(qerr.CodeInvalidColumn, "unknown column %q in %s", name, field).
			With("field", field).With("column", name).With("suggestions", sugg)
		if len(sugg) > 0 {
			return -1, e.WithHint("did you mean %s? order_by takes output columns, aggregate output names or named expressions", quoteList(sugg))
		}
		return -1, e.WithHint("order_by takes one of: %s", truncList(cands, 20))
	}
	return idx[0], b.queryable(s, idx[0], field)
}

func (b *builder) dedup(input Node, cols []string) *Deduplicate {
	s := input.Schema()
	d := &Deduplicate{Input: input, Columns: slices.Clone(cols)}
	for _, c := range cols {
		d.Indices = append(d.Indices, s.FieldIndices(c)[0])
	}
	return d
}

func (b *builder) project(input Node, cols []string, field string) (*Project, error) {
	s := input.Schema()
	p := &Project{Input: input}
	fields := make([]arrow.Field, 0, len(cols))
	seen := map[string]bool{}
	for i, c := range cols {
		f := fmt.Sprintf("%s[%d]", field, i)
		idx, err := b.column(s, c, f)
		if err != nil {
			return nil, err
		}
		if seen[c] {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "column %q is listed twice in %s", c, field).With("field", f).
				WithHint("list each column once")
		}
		seen[c] = true
		if err := b.queryable(s, idx, f); err != nil {
			return nil, err
		}
		p.Columns = append(p.Columns, c)
		p.Indices = append(p.Indices, idx)
		fields = append(fields, s.Field(idx))
	}
	p.Out = arrow.NewSchema(fields, nil)
	return p, nil
}

// sort builds a Sort on the resolved key names (keys[i] is order[i]'s column).
func (b *builder) sort(input Node, order []OrderSpec, keys []string) (Node, error) {
	if len(order) == 0 {
		return input, nil
	}
	s := input.Schema()
	st := &Sort{Input: input}
	for i, o := range order {
		field := fmt.Sprintf("order_by[%d]", i)
		idx, err := b.column(s, keys[i], field+".col")
		if err != nil {
			return nil, err
		}
		if err := b.queryable(s, idx, field); err != nil {
			return nil, err
		}
		st.Keys = append(st.Keys, SortKey{Col: keys[i], Index: idx, Desc: o.Desc, NullsFirst: o.NullsFirst})
	}
	return st, nil
}

// suggestName is qerr.Suggest re-ranked by plain edit distance, so that
// "not-in" suggests not_in before in (qerr ranks substrings first).
func suggestName(name string, cands []string) []string {
	sugg := qerr.Suggest(name, cands, 5)
	slices.SortStableFunc(sugg, func(a, b string) int {
		return qerr.EditDistance(strings.ToLower(name), a) - qerr.EditDistance(strings.ToLower(name), b)
	})
	return sugg[:min(3, len(sugg))]
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, " or ")
}

func truncList(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:n], ", ") + fmt.Sprintf(", … (%d more)", len(xs)-n)
}
