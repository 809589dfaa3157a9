package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
)

// JoinType is the kind of a join (JoinSpec.Type).
type JoinType string

// Join types. Inner, left, right and full keep SQL semantics (a null key
// never matches); semi keeps the left rows with at least one match (once
// each), anti the left rows with none (a null left key has none); cross
// pairs every left row with every right row and takes no keys.
const (
	JoinInner JoinType = "inner"
	JoinLeft  JoinType = "left"
	JoinRight JoinType = "right"
	JoinFull  JoinType = "full"
	JoinSemi  JoinType = "semi"
	JoinAnti  JoinType = "anti"
	JoinCross JoinType = "cross"
)

// JoinTypes lists every join type, in documentation order.
var JoinTypes = []JoinType{JoinInner, JoinLeft, JoinRight, JoinFull, JoinSemi, JoinAnti, JoinCross}

// KeepsRight reports whether the join's output has the right side's columns
// (every type but semi and anti).
func (t JoinType) KeepsRight() bool { return t != JoinSemi && t != JoinAnti }

// JoinSpec is one element of Spec.Join: join another dataset to the rows
// so far (the query's dataset and the datasets joined before it).
type JoinSpec struct {
	// Dataset is the joined dataset's id.
	Dataset string `json:"dataset" jsonschema:"Id of the dataset to join (from get_catalog)."`
	// On are the equality conditions, ANDed.
	On []JoinOn `json:"on,omitempty" jsonschema:"Equality conditions, all of which must hold: left is a column of the rows so far (the query's dataset, or alias.col of an earlier join), right a column of the joined dataset. Required unless type is cross."`
	// Type is the join type; empty means inner.
	Type JoinType `json:"type,omitempty" jsonschema:"enum=inner,enum=left,enum=right,enum=full,enum=semi,enum=anti,enum=cross" jsonschema_description:"inner (default), left, right, full (outer joins fill the missing side with nulls), semi (keep the left rows that have a match), anti (keep the left rows that have none), or cross (every pair; needs no on, and confirmation when large)."`
	// Columns are the joined dataset's columns to add (nil = all).
	Columns []string `json:"columns,omitempty" jsonschema:"Columns of the joined dataset to add (default all); they are named alias.col."`
	// As is the alias; default the last path element of the dataset id.
	As string `json:"as,omitempty" jsonschema:"Alias naming the joined columns (alias.col); default the last path element of the dataset id."`
	// Where is an extra join condition (see Join.Residual).
	Where string `json:"where,omitempty" jsonschema:"Extra join condition: a boolean expression over the columns of the rows so far and of the joined dataset (alias.col); e.g. ts BETWEEN r.lo AND r.hi. A pair of rows matches when the on keys are equal and where is true; in outer/semi/anti joins a row whose only matches fail it counts as unmatched. With where the on list may be empty (a pure inequality join: every pair is tested as in a cross join)."`
	// NullAware makes an anti join on one key follow SQL's NOT IN (see
	// Join.NullAware); set by the SQL front-end, not a knob.
	NullAware bool `json:"-"`
}

// JoinOn is one equality condition of a join.
type JoinOn struct {
	// Left is a column of the rows so far.
	Left string `json:"left" jsonschema:"Column of the rows so far (the query's dataset, or alias.col of an earlier join)."`
	// Right is a column of the joined dataset (bare, or alias.col).
	Right string `json:"right" jsonschema:"Column of the joined dataset (its own name, or alias.col)."`
}

// Join joins two inputs on equal keys (hash join in the engine). Output:
// every column of Left, then (unless Type is semi or anti) the columns of
// Right listed in RightCols, named Alias + "." + name. Left columns become
// nullable in right and full joins, right columns in left and full joins.
// Row order is unspecified.
type Join struct {
	Left, Right Node
	Type        JoinType
	// Dataset and Alias name the right side.
	Dataset, Alias string
	// LeftKeys/RightKeys are the key column names in Left/Right's schema;
	// LeftIdx/RightIdx their positions. Empty for a cross join.
	LeftKeys, RightKeys []string
	LeftIdx, RightIdx   []int
	// RightCols are the right columns the output keeps (in the right
	// schema's names); a column projection pushdown removed from Right is
	// left out.
	RightCols []string
	// Residual, when set, is a boolean condition a pair of rows with equal
	// keys must also satisfy to match, bound over PairSchema (see
	// SetResidual). Nil: equal keys suffice.
	Residual Expr
	// NullAware (anti joins on one key, no residual) is SQL's x NOT IN
	// (SELECT y ...): when Right has no rows every left row is kept;
	// otherwise a null y anywhere in Right keeps no row, and a left row
	// with a null x is not kept.
	NullAware bool
}

// JoinedName is the output name of right column col under alias.
func JoinedName(alias, col string) string { return alias + "." + col }

// Schema implements Node.
func (j *Join) Schema() *arrow.Schema {
	l := j.Left.Schema()
	fields := slices.Clone(l.Fields())
	if !j.Type.KeepsRight() {
		return arrow.NewSchema(fields, nil)
	}
	if j.Type == JoinRight || j.Type == JoinFull {
		for i := range fields {
			fields[i].Nullable = true
		}
	}
	r := j.Right.Schema()
	for _, f := range r.Fields() {
		if !slices.Contains(j.RightCols, f.Name) {
			continue
		}
		f.Name = JoinedName(j.Alias, f.Name)
		if j.Type == JoinLeft || j.Type == JoinFull {
			f.Nullable = true
		}
		fields = append(fields, f)
	}
	return arrow.NewSchema(fields, nil)
}

// Children implements Node: the left then the right input.
func (j *Join) Children() []Node { return []Node{j.Left, j.Right} }

// WithChildren implements Node.
func (j *Join) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(j, 2, children); err != nil {
		return nil, err
	}
	c := *j
	c.Left, c.Right = children[0], children[1]
	c.LeftKeys, c.RightKeys = slices.Clone(j.LeftKeys), slices.Clone(j.RightKeys)
	c.LeftIdx, c.RightIdx = slices.Clone(j.LeftIdx), slices.Clone(j.RightIdx)
	c.RightCols = slices.Clone(j.RightCols)
	if j.Residual != nil {
		c.Residual = CloneExpr(j.Residual)
	}
	return &c, nil
}

// Describe implements Node.
func (j *Join) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Join: %s %s AS %s", j.Type, j.Dataset, j.Alias)
	if j.NullAware {
		b.WriteString(" null-aware")
	}
	if len(j.LeftKeys) > 0 {
		conds := make([]string, len(j.LeftKeys))
		for i := range j.LeftKeys {
			conds[i] = fmt.Sprintf("%s = %s", quoteIdent(j.LeftKeys[i]), quoteIdent(JoinedName(j.Alias, j.RightKeys[i])))
		}
		fmt.Fprintf(&b, " ON %s", strings.Join(conds, " AND "))
	}
	if j.Residual != nil {
		fmt.Fprintf(&b, " WHERE %s", j.Residual.String())
	}
	return b.String()
}

// InputColumns implements ColumnUser: the left columns the consumer reads
// plus the left keys; the kept right columns the consumer reads plus the
// right keys.
func (j *Join) InputColumns(out ColumnSet) []ColumnSet {
	left := ColumnSet{All: out.All}
	right := ColumnSet{}
	prefix := j.Alias + "."
	ls := j.Left.Schema()
	for _, n := range out.Names {
		if len(ls.FieldIndices(n)) > 0 {
			left = left.With(n)
		}
		if c, ok := strings.CutPrefix(n, prefix); ok && j.Type.KeepsRight() && slices.Contains(j.RightCols, c) {
			right = right.With(c)
		}
	}
	if out.All && j.Type.KeepsRight() {
		right = right.With(j.RightCols...)
	}
	left, right = j.residualColumns(left, right)
	return []ColumnSet{left.With(j.LeftKeys...), right.With(j.RightKeys...)}
}

// ResolveIndices implements IndexResolver.
func (j *Join) ResolveIndices() error {
	var err error
	if j.LeftIdx, err = resolveNames(j.Left.Schema(), j.LeftKeys, j.LeftIdx); err != nil {
		return err
	}
	if j.RightIdx, err = resolveNames(j.Right.Schema(), j.RightKeys, j.RightIdx); err != nil {
		return err
	}
	return j.resolveResidual()
}

// JoinAlias is the default alias of a joined dataset: the last path
// element of its id, with characters other than letters, digits and _
// replaced by _.
func JoinAlias(dataset string) string {
	a := dataset
	if i := strings.LastIndexAny(a, "/:"); i >= 0 {
		a = a[i+1:]
	}
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, a)
}

// joins builds the Join nodes of spec.Join on top of node (the Scan of
// the query's dataset), left-deep in spec order.
func (b *builder) joins(node Node, specs []JoinSpec, ins []Input) (Node, error) {
	if len(specs) != len(ins) {
		return nil, qerr.Internal(nil, "planner: %d joins but %d joined inputs", len(specs), len(ins))
	}
	aliases := map[string]string{}
	for i, js := range specs {
		field := fmt.Sprintf("join[%d]", i)
		in := ins[i]
		if in.Schema == nil {
			return nil, qerr.Internal(nil, "planner: joined dataset %q has no schema", in.Dataset)
		}
		typ := js.Type
		if typ == "" {
			typ = JoinInner
		}
		if !slices.Contains(JoinTypes, typ) {
			names := make([]string, len(JoinTypes))
			for k, t := range JoinTypes {
				names[k] = string(t)
			}
			e := qerr.Invalid(qerr.CodeInvalidArgument, "%s: unknown join type %q", field, js.Type).
				With("field", field+".type").With("valid_values", names)
			if sugg := suggestName(string(js.Type), names); len(sugg) > 0 {
				e.With("suggestions", sugg)
			}
			return nil, e.WithHint("type is one of %s", strings.Join(names, ", "))
		}
		alias := js.As
		if alias == "" {
			alias = JoinAlias(in.Dataset)
		}
		if alias == "" || strings.ContainsAny(alias, ".\"") {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "%s: alias %q is not usable", field, alias).
				With("field", field+".as").WithHint("pass as: a short name without dots or quotes, e.g. \"a\"")
		}
		if prev, ok := aliases[alias]; ok {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "%s: alias %q is already used by %s", field, alias, prev).
				With("field", field+".as").WithHint("give this join another alias with as")
		}
		aliases[alias] = field
		right := in.source()
		j := &Join{Left: node, Right: right, Type: typ, Dataset: in.Dataset, Alias: alias}
		if err := b.joinKeys(j, js, field); err != nil {
			return nil, err
		}
		if err := b.joinColumns(j, js, field); err != nil {
			return nil, err
		}
		if err := b.joinWhere(j, js, field); err != nil {
			return nil, err
		}
		if js.NullAware {
			if typ != JoinAnti || len(j.LeftKeys) != 1 || j.Residual != nil {
				return nil, qerr.Internal(nil, "planner: %s: a null-aware join is an anti join on one key without where", field)
			}
			j.NullAware = true
		}
		if err := j.ResolveIndices(); err != nil {
			return nil, err
		}
		node = j
	}
	return node, nil
}

// joinKeys validates js.On into j's keys.
func (b *builder) joinKeys(j *Join, js JoinSpec, field string) error {
	ls, rs := j.Left.Schema(), j.Right.Schema()
	if j.Type == JoinCross {
		if len(js.On) > 0 {
			return qerr.Invalid(qerr.CodeInvalidArgument, "%s: a cross join takes no on conditions", field).
				With("field", field+".on").WithHint("drop on for a cross join, or use type inner (the default) to join on equal keys")
		}
		return nil
	}
	if len(js.On) == 0 && js.Where == "" {
		return qerr.Invalid(qerr.CodeInvalidArgument, "%s: on is required", field).With("field", field+".on").
			WithHint(`pass the key pairs, e.g. "on": [{"left": "origin", "right": "iata"}]; for every pair of rows use "type": "cross"`)
	}
	for k, on := range js.On {
		f := fmt.Sprintf("%s.on[%d]", field, k)
		li, err := b.column(ls, on.Left, f+".left")
		if err != nil {
			return err
		}
		if err := b.queryable(ls, li, f+".left"); err != nil {
			return err
		}
		rname := on.Right
		if c, ok := strings.CutPrefix(rname, j.Alias+"."); ok && len(rs.FieldIndices(rname)) == 0 {
			rname = c
		}
		ri, err := b.column(rs, rname, f+".right")
		if err != nil {
			return err
		}
		if err := b.queryable(rs, ri, f+".right"); err != nil {
			return err
		}
		lt, rt := ls.Field(li).Type, rs.Field(ri).Type
		if !JoinComparable(lt, rt) {
			e := qerr.Invalid(qerr.CodeInvalidArgument, "%s: cannot compare %q (%s) with %q (%s)", f, on.Left, typeName(lt), on.Right, typeName(rt)).
				With("field", f).With("left_type", typeName(lt)).With("right_type", typeName(rt))
			if (isString(lt) && isInteger(rt)) || (isInteger(lt) && isString(rt)) {
				return e.WithHint("join keys must have comparable types: a string column never equals an integer column; join on columns of the same kind (integers of any width compare with each other)")
			}
			return e.WithHint("join keys must have comparable types: integers of any width with each other (not uint64 with signed), floats with floats, strings with strings, dates and timestamps of the same unit with their own kind, booleans with booleans")
		}
		j.LeftKeys = append(j.LeftKeys, ls.Field(li).Name)
		j.RightKeys = append(j.RightKeys, rs.Field(ri).Name)
	}
	return nil
}

// joinColumns validates js.Columns into j.RightCols and checks that the
// output names are free.
func (b *builder) joinColumns(j *Join, js JoinSpec, field string) error {
	rs := j.Right.Schema()
	if !j.Type.KeepsRight() {
		if len(js.Columns) > 0 {
			return qerr.Invalid(qerr.CodeInvalidArgument, "%s: a %s join returns only the left columns; columns is not allowed", field, j.Type).
				With("field", field+".columns").WithHint("drop columns, or use an inner or left join to add columns of %s", js.Dataset)
		}
		return nil
	}
	if len(js.Columns) == 0 {
		j.RightCols = b.names(rs)
	}
	for k, c := range js.Columns {
		f := fmt.Sprintf("%s.columns[%d]", field, k)
		name := c
		if x, ok := strings.CutPrefix(c, j.Alias+"."); ok && len(rs.FieldIndices(c)) == 0 {
			name = x
		}
		idx, err := b.column(rs, name, f)
		if err != nil {
			return err
		}
		if err := b.queryable(rs, idx, f); err != nil {
			return err
		}
		if slices.Contains(j.RightCols, name) {
			return qerr.Invalid(qerr.CodeInvalidArgument, "%s: column %q is listed twice", f, c).With("field", f).
				WithHint("list each column once")
		}
		j.RightCols = append(j.RightCols, name)
	}
	ls := j.Left.Schema()
	for _, c := range j.RightCols {
		if out := JoinedName(j.Alias, c); len(ls.FieldIndices(out)) > 0 {
			return qerr.Invalid(qerr.CodeInvalidArgument, "%s: output column %q already exists", field, out).
				With("field", field+".as").WithHint("give the join another alias with as")
		}
	}
	return nil
}

// JoinComparable reports whether a join key of type a can be compared
// with one of type b: integers of any width (implicit widening; uint64
// only with uint64), floats with floats, strings (plain, large or
// dictionary-encoded) with strings, and otherwise equal types.
func JoinComparable(a, b arrow.DataType) bool {
	switch {
	case isString(a) || isString(b):
		return isString(a) && isString(b)
	case isInteger(a) && isInteger(b):
		return (a.ID() == arrow.UINT64) == (b.ID() == arrow.UINT64)
	case isFloat(a) && isFloat(b):
		return true
	}
	return arrow.TypeEqual(a, b) && (a.ID() == arrow.BOOL || a.ID() == arrow.DATE32 || a.ID() == arrow.DATE64 || a.ID() == arrow.TIMESTAMP)
}
