package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

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
}

// UnsupportedMetaKey is the Arrow field metadata key that marks a column
// whose source type Quarry cannot query (e.g. an HDF5 opaque type). Such
// columns are listed in schemas but rejected by every knob that uses them,
// and left out of the default projection.
const UnsupportedMetaKey = "quarry.unsupported"

// Build validates spec against in.Schema and returns the logical plan.
//
// Plan shape (bottom-up): Scan (all columns) → Filter → then either
// Aggregate (group_by/aggs) → [Project] or [Sort] → Project, then Distinct,
// Sort (when it must follow the projection), Limit. Build does not
// optimize; call Optimize on the result.
//
// Errors are *qerr.Error values with codes invalid_column (with
// suggestions), invalid_filter, invalid_aggregate and invalid_argument.
func Build(spec Spec, in Input) (Node, error) {
	if in.Schema == nil {
		return nil, qerr.Internal(nil, "planner: dataset %q has no schema", in.Dataset)
	}
	b := &builder{in: in}
	var node Node = &Scan{Dataset: in.Dataset, Out: in.Schema, RowCount: in.RowCount, RowCountExact: in.RowCountExact}

	if len(spec.Filters) > 0 {
		preds := make([]Predicate, 0, len(spec.Filters))
		for i, f := range spec.Filters {
			p, err := b.predicate(i, f)
			if err != nil {
				return nil, err
			}
			preds = append(preds, p)
		}
		node = &Filter{Input: node, Preds: preds}
	}

	if spec.Limit != nil && *spec.Limit < 0 {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "limit must be >= 0, got %d", *spec.Limit).
			WithHint("omit limit for all rows, or pass a positive number").With("field", "limit")
	}
	if spec.Offset != nil && *spec.Offset < 0 {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "offset must be >= 0, got %d", *spec.Offset).
			WithHint("offset counts result rows to skip; use 0 or more").With("field", "offset")
	}

	var err error
	if len(spec.Aggs) > 0 || len(spec.GroupBy) > 0 {
		node, err = b.aggregate(node, spec)
	} else {
		node, err = b.projection(node, spec)
	}
	if err != nil {
		return nil, err
	}

	if spec.Limit != nil || (spec.Offset != nil && *spec.Offset > 0) {
		l := &Limit{Input: node, Count: -1}
		if spec.Limit != nil {
			l.Count = *spec.Limit
		}
		if spec.Offset != nil {
			l.Offset = *spec.Offset
		}
		node = l
	}
	return node, nil
}

type builder struct {
	in Input
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

func (b *builder) predicate(i int, f FilterSpec) (Predicate, error) {
	field := fmt.Sprintf("filters[%d]", i)
	s := b.in.Schema
	idx, err := b.column(s, f.Col, field+".col")
	if err != nil {
		return Predicate{}, err
	}
	if err := b.queryable(s, idx, field); err != nil {
		return Predicate{}, err
	}
	typ := s.Field(idx).Type
	p := Predicate{Col: f.Col, Index: idx, Op: f.Op}
	bad := func(format string, args ...any) *qerr.Error {
		return qerr.Invalid(qerr.CodeInvalidFilter, "%s (%s on column %q of type %s): %s", field, f.Op, f.Col, typeName(typ), fmt.Sprintf(format, args...)).
			With("field", field).With("column", f.Col).With("column_type", typeName(typ))
	}
	hasValue := len(f.Value) > 0 && string(f.Value) != "null"
	switch f.Op {
	case OpIsNull, OpIsNotNull:
		if hasValue {
			return p, bad("takes no value").WithHint("omit value for %s", f.Op)
		}
		return p, nil
	case OpEq, OpNeq, OpLt, OpLte, OpGt, OpGte, OpContains:
		if !hasValue {
			e := bad("needs a value")
			if f.Op == OpEq {
				return p, e.WithHint("to match missing values use op is_null")
			}
			if f.Op == OpNeq {
				return p, e.WithHint("to match present values use op is_not_null")
			}
			return p, e.WithHint("pass value: a %s", valueHint(typ))
		}
		if f.Op == OpContains && !isString(typ) {
			return p, bad("contains works on string columns only").WithHint("use eq or range on %s columns", typeName(typ))
		}
		if (f.Op != OpEq && f.Op != OpNeq) && typ.ID() == arrow.BOOL {
			return p, bad("ordering comparisons are not defined on booleans").WithHint("use eq or neq")
		}
		lit, err := coerce(f.Value, typ)
		if err != nil {
			return p, bad("%v", err).WithHint("pass value as a %s", valueHint(typ))
		}
		p.Value = &lit
		return p, nil
	case OpIn:
		raws, err := splitArray(f.Value)
		if err != nil || len(raws) == 0 {
			return p, bad("in needs a non-empty list of values").WithHint(`pass value as a JSON list, e.g. ["a", "b"]`)
		}
		for j, r := range raws {
			lit, err := coerce(r, typ)
			if err != nil {
				return p, bad("value[%d]: %v", j, err).WithHint("every list item must be a %s", valueHint(typ))
			}
			p.Values = append(p.Values, lit)
		}
		return p, nil
	case OpRange:
		lo, hi, err := splitRange(f.Value)
		if err != nil {
			return p, bad("%v", err).WithHint(`pass value as {"min": ..., "max": ...} (inclusive; either may be omitted)`)
		}
		if typ.ID() == arrow.BOOL {
			return p, bad("range is not defined on booleans").WithHint("use eq")
		}
		if lo != nil {
			l, err := coerce(lo, typ)
			if err != nil {
				return p, bad("min: %v", err).WithHint("min must be a %s", valueHint(typ))
			}
			p.Min = &l
		}
		if hi != nil {
			h, err := coerce(hi, typ)
			if err != nil {
				return p, bad("max: %v", err).WithHint("max must be a %s", valueHint(typ))
			}
			p.Max = &h
		}
		return p, nil
	}
	return p, qerr.Invalid(qerr.CodeInvalidFilter, "%s: unknown filter op %q", field, f.Op).
		With("field", field+".op").With("valid_ops", validOps).
		WithHint("valid ops: %s", strings.Join(validOps, ", "))
}

var validOps = []string{OpEq, OpNeq, OpLt, OpLte, OpGt, OpGte, OpIn, OpRange, OpContains, OpIsNull, OpIsNotNull}

var validAggs = []string{AggCount, AggSum, AggAvg, AggMin, AggMax}

func (b *builder) aggregate(input Node, spec Spec) (Node, error) {
	s := input.Schema()
	agg := &Aggregate{Input: input}
	var fields []arrow.Field
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
		idx, err := b.column(s, g, field)
		if err != nil {
			return nil, err
		}
		if err := b.queryable(s, idx, field); err != nil {
			return nil, err
		}
		if err := addName(g, field); err != nil {
			return nil, err
		}
		agg.GroupBy = append(agg.GroupBy, g)
		agg.GroupIdx = append(agg.GroupIdx, idx)
		fields = append(fields, arrow.Field{Name: g, Type: s.Field(idx).Type, Nullable: true})
	}
	for i, a := range spec.Aggs {
		field := fmt.Sprintf("aggs[%d]", i)
		e := AggExpr{Fn: a.Fn, Col: a.Col, Index: -1}
		if !slices.Contains(validAggs, a.Fn) {
			return nil, qerr.Invalid(qerr.CodeInvalidAggregate, "%s: unknown aggregate function %q", field, a.Fn).
				With("field", field+".fn").With("valid_fns", validAggs).WithHint("valid functions: %s", strings.Join(validAggs, ", "))
		}
		if a.Col == "*" || a.Col == "" {
			if a.Fn != AggCount {
				return nil, qerr.Invalid(qerr.CodeInvalidAggregate, "%s: %s needs a column (only count accepts *)", field, a.Fn).
					With("field", field+".col").WithHint("name the column to %s", a.Fn)
			}
			e.Col = "*"
		} else {
			idx, err := b.column(s, a.Col, field+".col")
			if err != nil {
				return nil, err
			}
			if err := b.queryable(s, idx, field); err != nil {
				return nil, err
			}
			e.Index = idx
		}
		var inType arrow.DataType
		if e.Index >= 0 {
			inType = s.Field(e.Index).Type
		}
		switch a.Fn {
		case AggCount:
			e.Type = arrow.PrimitiveTypes.Int64
		case AggSum, AggAvg:
			if !isNumeric(inType) {
				return nil, qerr.Invalid(qerr.CodeInvalidAggregate, "%s: %s needs a numeric column; %q is %s", field, a.Fn, a.Col, typeName(inType)).
					With("field", field).WithHint("use count, min or max on non-numeric columns")
			}
			if a.Fn == AggSum && isInteger(inType) {
				e.Type = arrow.PrimitiveTypes.Int64
			} else {
				e.Type = arrow.PrimitiveTypes.Float64
			}
		case AggMin, AggMax:
			e.Type = inType
		}
		e.Name = a.As
		if e.Name == "" {
			if e.Col == "*" {
				e.Name = "count_all"
			} else {
				e.Name = a.Fn + "_" + a.Col
			}
		}
		if err := addName(e.Name, field); err != nil {
			return nil, err
		}
		agg.Aggs = append(agg.Aggs, e)
		fields = append(fields, arrow.Field{Name: e.Name, Type: e.Type, Nullable: true})
	}
	agg.Out = arrow.NewSchema(fields, nil)
	var node Node = agg
	if len(spec.Columns) > 0 {
		p, err := b.project(node, spec.Columns, "columns")
		if err != nil {
			return nil, err
		}
		node = p
	}
	if spec.Distinct {
		node = &Distinct{Input: node}
	}
	return b.sort(node, spec.OrderBy)
}

// projection handles the non-aggregate path. When order_by names columns the
// projection drops, the sort runs below the projection (SQL semantics); with
// distinct it must run above, so such keys are rejected.
func (b *builder) projection(input Node, spec Spec) (Node, error) {
	cols := spec.Columns
	explicit := len(cols) > 0
	if !explicit {
		for _, f := range input.Schema().Fields() {
			if _, bad := f.Metadata.GetValue(UnsupportedMetaKey); !bad {
				cols = append(cols, f.Name)
			}
		}
	}
	sortBelow := false
	for _, o := range spec.OrderBy {
		if !slices.Contains(cols, o.Col) {
			sortBelow = true
		}
	}
	node := input
	var err error
	if sortBelow && !spec.Distinct {
		if node, err = b.sort(node, spec.OrderBy); err != nil {
			return nil, err
		}
	}
	if explicit || len(cols) != input.Schema().NumFields() {
		if node, err = b.project(node, cols, "columns"); err != nil {
			return nil, err
		}
	}
	if spec.Distinct {
		node = &Distinct{Input: node}
	}
	if !sortBelow || spec.Distinct {
		return b.sort(node, spec.OrderBy)
	}
	return node, nil
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

func (b *builder) sort(input Node, order []OrderSpec) (Node, error) {
	if len(order) == 0 {
		return input, nil
	}
	s := input.Schema()
	st := &Sort{Input: input}
	for i, o := range order {
		field := fmt.Sprintf("order_by[%d]", i)
		idx, err := b.column(s, o.Col, field+".col")
		if err != nil {
			return nil, err
		}
		if err := b.queryable(s, idx, field); err != nil {
			return nil, err
		}
		st.Keys = append(st.Keys, SortKey{Col: o.Col, Index: idx, Desc: o.Desc})
	}
	return st, nil
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
