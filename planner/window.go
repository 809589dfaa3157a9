package planner

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
)

// WindowFn is a window function (declared in the function registry): a
// window-only function or an aggregate declared Window (funcs.WindowAggNames).
type WindowFn = funcs.WindowFn

// WindowSpec is one element of Spec.Windows: a window function computed for
// every row over the rows of its partition (and, for frame-aware functions,
// its frame), added as a column named As.
type WindowSpec struct {
	// Fn is a window function or an aggregate function.
	Fn WindowFn `json:"fn"`
	// Col is the input column (lag, lead, first_value, last_value,
	// nth_value and aggregates; "*" with count).
	Col string `json:"col,omitempty" jsonschema:"Input column: required for lag, lead, first_value, last_value, nth_value and aggregates (* with count); omitted for ranking functions."`
	// Args are integer arguments: [offset] for lag/lead, [n] for ntile and nth_value.
	Args []int64 `json:"args,omitempty" jsonschema:"Integer arguments: [offset] for lag/lead (default 1), [n] for ntile and nth_value."`
	// Q is the quantile of fn quantile.
	Q *float64 `json:"q,omitempty" jsonschema:"quantile only: the quantile in [0, 1]."`
	// Arg is the second argument of an aggregate that takes one (AggSpec.Arg).
	Arg *string `json:"arg,omitempty" jsonschema:"Second argument of an aggregate that takes one, as in aggs: corr, covar_*, regr_*: the x column; arg_min/arg_max: the column compared; string_agg: the separator."`
	// Default is the value of lag/lead where the offset row is outside the partition.
	Default json.RawMessage `json:"default,omitempty" jsonschema:"lag/lead only: the value where the offset row is outside the partition (default null), of the column's type."`
	// PartitionBy are the partition columns; none means one partition.
	PartitionBy []string `json:"partition_by,omitempty" jsonschema:"Columns whose distinct values form the partitions (omit for one partition over all rows)."`
	// OrderBy orders the rows within a partition (nulls last).
	OrderBy []OrderSpec `json:"order_by,omitempty" jsonschema:"Order of the rows within each partition (nulls last); required by ranking functions, lag and lead."`
	// Frame is the frame of frame-aware functions; nil is the SQL default.
	Frame *FrameSpec `json:"frame,omitempty" jsonschema:"Frame of aggregates and first/last/nth_value. Default: with order_by, range from unbounded preceding to current row (ties included); without, the whole partition."`
	// As names the output column (default fn_col, or fn without col).
	As string `json:"as,omitempty" jsonschema:"Output column name; default fn_col (fn for ranking functions)."`
}

// FrameSpec is a window frame: {type: rows|range, start, end}. Bounds are
// "unbounded preceding", "N preceding", "current row", "N following",
// "unbounded following" (underscores work as spaces, case ignored).
type FrameSpec struct {
	// Type is rows (default) or range (peers: rows with equal order_by values).
	Type string `json:"type,omitempty" jsonschema:"rows (default): physical row offsets; or range: value offsets on the one order_by column (current row includes its ties)."`
	// Start and End are frame bounds.
	Start string `json:"start" jsonschema:"Frame start: unbounded preceding, N preceding, current row or N following."`
	End   string `json:"end,omitempty" jsonschema:"Frame end (default current row): N preceding, current row, N following or unbounded following."`
}

// TopNPerGroupSpec is the top_n_per_group knob.
type TopNPerGroupSpec struct {
	// N rows are kept per group.
	N int64 `json:"n" jsonschema:"Rows to keep per group (0 or more)."`
	// By ranks the rows within a group (nulls last; ties keep input order).
	By []OrderSpec `json:"by" jsonschema:"Order that ranks the rows of a group, e.g. [{\"col\": \"v3\", \"desc\": true}] for the largest v3 (nulls last; ties keep the earlier row)."`
	// PartitionBy are the group columns when the query has no group_by.
	PartitionBy []string `json:"partition_by,omitempty" jsonschema:"Group columns; defaults to group_by (then aggs must be empty: the kept rows are returned, not aggregated)."`
}

// BoundKind is the kind of a frame bound.
type BoundKind int

// Frame bound kinds, in order.
const (
	UnboundedPreceding BoundKind = iota
	Preceding
	CurrentRow
	Following
	UnboundedFollowing
)

// FrameBound is one frame bound; N is the offset of Preceding/Following.
type FrameBound struct {
	Kind BoundKind
	N    int64
}

// Frame is a resolved window frame. Range frames count peers (rows with
// equal order keys) as one position: their bounds are unbounded or current row.
type Frame struct {
	Range      bool
	Start, End FrameBound
}

// WindowExpr is one resolved window function.
type WindowExpr struct {
	Fn WindowFn
	// Q is the parameter of an aggregate that takes one.
	Q float64
	// Col is the input column ("*" for count(*), "" for none); Index its input position (-1 for none).
	Col   string
	Index int
	// Arg is the integer argument (offset, buckets, n); 0 when unused.
	Arg int64
	// ArgCol is the column of an aggregate's second argument (corr's x,
	// arg_max's by), ArgIndex its input position (-1: none); ArgText is a
	// text argument (string_agg's separator).
	ArgCol   string
	ArgIndex int
	ArgText  string
	// Default is the lag/lead value outside the partition (nil: null), of type Type.
	Default *Literal
	// PartitionBy are the partition columns; PartIdx their input positions.
	PartitionBy []string
	PartIdx     []int
	// OrderBy orders each partition (nulls last; ties keep input order).
	OrderBy []SortKey
	// Frame is the frame of frame-aware functions.
	Frame Frame
	// Name and Type describe the output column.
	Name string
	Type arrow.DataType
}

// Window appends one column per window expression to its input's columns;
// rows pass through unchanged and in input order.
type Window struct {
	Input Node
	Exprs []WindowExpr
}

// TopNPerGroup keeps, per distinct value of the PartitionBy columns, the
// first N rows in Keys order (ties keep input order, like row_number).
// Output: the kept rows with every input column, group by group in the
// order the groups first appear in the input, each group's rows in rank
// order.
type TopNPerGroup struct {
	Input       Node
	N           int64
	PartitionBy []string
	PartIdx     []int
	Keys        []SortKey
}

// Schema implements Node: the input fields followed by one nullable field per window expression.
func (w *Window) Schema() *arrow.Schema {
	in := w.Input.Schema()
	fields := slices.Clone(in.Fields())
	for _, e := range w.Exprs {
		fields = append(fields, arrow.Field{Name: e.Name, Type: e.Type, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// Children implements Node.
func (w *Window) Children() []Node { return []Node{w.Input} }

// WithChildren implements Node.
func (w *Window) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(w, 1, children); err != nil {
		return nil, err
	}
	c := *w
	c.Input, c.Exprs = children[0], slices.Clone(w.Exprs)
	for i := range c.Exprs {
		c.Exprs[i].PartitionBy = slices.Clone(w.Exprs[i].PartitionBy)
		c.Exprs[i].PartIdx = slices.Clone(w.Exprs[i].PartIdx)
		c.Exprs[i].OrderBy = slices.Clone(w.Exprs[i].OrderBy)
	}
	return &c, nil
}

// Describe implements Node.
func (w *Window) Describe() string {
	parts := make([]string, len(w.Exprs))
	for i, e := range w.Exprs {
		parts[i] = e.String()
	}
	return "Window: " + strings.Join(parts, ", ")
}

// String renders the expression in SQL form.
func (e WindowExpr) String() string {
	var args []string
	switch {
	case e.Col == "*":
		args = append(args, "*")
	case e.Col != "":
		args = append(args, quoteIdent(e.Col))
	}
	if e.Arg != 0 || e.Default != nil {
		args = append(args, strconv.FormatInt(e.Arg, 10))
	}
	if e.Default != nil {
		args = append(args, e.Default.String())
	}
	if e.ArgCol != "" {
		args = append(args, quoteIdent(e.ArgCol))
	} else if d, ok := e.Fn.Agg(); ok && d.Arg != nil {
		args = append(args, quoteLiteral(e.ArgText))
	}
	if _, ok := e.Fn.Agg(); ok && e.Fn == WindowFn(AggQuantile) {
		args = append(args, strconv.FormatFloat(e.Q, 'g', -1, 64))
	}
	var over []string
	if len(e.PartitionBy) > 0 {
		over = append(over, "PARTITION BY "+strings.Join(e.PartitionBy, ", "))
	}
	if len(e.OrderBy) > 0 {
		keys := make([]string, len(e.OrderBy))
		for i, k := range e.OrderBy {
			keys[i] = k.Col
			if k.Desc {
				keys[i] += " DESC"
			}
		}
		over = append(over, "ORDER BY "+strings.Join(keys, ", "))
	}
	if e.framed() {
		over = append(over, e.Frame.String())
	}
	return fmt.Sprintf("%s(%s) OVER (%s) AS %s", e.Fn, strings.Join(args, ", "), strings.Join(over, " "), quoteIdent(e.Name))
}

// framed reports whether the function's result depends on the frame.
func (e WindowExpr) framed() bool {
	if d, ok := e.Fn.Lookup(); ok {
		return d.Frame
	}
	return true
}

// String renders the frame in SQL form.
func (f Frame) String() string {
	t := "ROWS"
	if f.Range {
		t = "RANGE"
	}
	return t + " BETWEEN " + f.Start.String() + " AND " + f.End.String()
}

// String renders the bound in SQL form.
func (b FrameBound) String() string {
	switch b.Kind {
	case UnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case Preceding:
		return strconv.FormatInt(b.N, 10) + " PRECEDING"
	case CurrentRow:
		return "CURRENT ROW"
	case Following:
		return strconv.FormatInt(b.N, 10) + " FOLLOWING"
	}
	return "UNBOUNDED FOLLOWING"
}

// InputColumns implements ColumnUser: what the consumer reads that is not
// computed here, plus every column the expressions read.
func (w *Window) InputColumns(out ColumnSet) []ColumnSet {
	need := ColumnSet{All: out.All}
	if !out.All {
		for _, n := range out.Names {
			if !slices.ContainsFunc(w.Exprs, func(e WindowExpr) bool { return e.Name == n }) {
				need = need.With(n)
			}
		}
	}
	for _, e := range w.Exprs {
		need = need.With(e.PartitionBy...)
		for _, k := range e.OrderBy {
			need = need.With(k.Col)
		}
		if e.Col != "" {
			need = need.With(e.Col)
		}
		if e.ArgCol != "" {
			need = need.With(e.ArgCol)
		}
	}
	return []ColumnSet{need}
}

// ResolveIndices implements IndexResolver.
func (w *Window) ResolveIndices() (err error) {
	s := w.Input.Schema()
	for i := range w.Exprs {
		e := &w.Exprs[i]
		if e.PartIdx, err = resolveNames(s, e.PartitionBy, e.PartIdx); err != nil {
			return err
		}
		for j := range e.OrderBy {
			if e.OrderBy[j].Index, err = colIndex(s, e.OrderBy[j].Col); err != nil {
				return err
			}
		}
		if e.Col != "" && e.Col != "*" {
			if e.Index, err = colIndex(s, e.Col); err != nil {
				return err
			}
		}
		if e.ArgCol != "" {
			if e.ArgIndex, err = colIndex(s, e.ArgCol); err != nil {
				return err
			}
		}
	}
	return nil
}

// Schema implements Node.
func (t *TopNPerGroup) Schema() *arrow.Schema { return t.Input.Schema() }

// Children implements Node.
func (t *TopNPerGroup) Children() []Node { return []Node{t.Input} }

// WithChildren implements Node.
func (t *TopNPerGroup) WithChildren(children ...Node) (Node, error) {
	if err := CheckChildren(t, 1, children); err != nil {
		return nil, err
	}
	c := *t
	c.Input, c.PartitionBy, c.PartIdx, c.Keys = children[0], slices.Clone(t.PartitionBy), slices.Clone(t.PartIdx), slices.Clone(t.Keys)
	return &c, nil
}

// Describe implements Node.
func (t *TopNPerGroup) Describe() string {
	keys := make([]string, len(t.Keys))
	for i, k := range t.Keys {
		keys[i] = k.Col
		if k.Desc {
			keys[i] += " desc"
		}
	}
	return fmt.Sprintf("TopNPerGroup: %d BY %s PER %s", t.N, strings.Join(keys, ", "), strings.Join(t.PartitionBy, ", "))
}

// InputColumns implements ColumnUser: what the consumer reads plus the group and rank keys.
func (t *TopNPerGroup) InputColumns(out ColumnSet) []ColumnSet {
	need := out.With(t.PartitionBy...)
	for _, k := range t.Keys {
		need = need.With(k.Col)
	}
	return []ColumnSet{need}
}

// ResolveIndices implements IndexResolver.
func (t *TopNPerGroup) ResolveIndices() (err error) {
	s := t.Input.Schema()
	if t.PartIdx, err = resolveNames(s, t.PartitionBy, t.PartIdx); err != nil {
		return err
	}
	for i := range t.Keys {
		if t.Keys[i].Index, err = colIndex(s, t.Keys[i].Col); err != nil {
			return err
		}
	}
	return nil
}

// ParseFrameBound parses one frame bound: "unbounded preceding", "N
// preceding", "current row", "N following" or "unbounded following" (case
// and extra spaces ignored; "_" works as a space).
func ParseFrameBound(s string) (FrameBound, error) {
	words := strings.Fields(strings.ToLower(strings.ReplaceAll(s, "_", " ")))
	if len(words) == 2 && words[0] == "current" && words[1] == "row" {
		return FrameBound{Kind: CurrentRow}, nil
	}
	if len(words) == 2 && (words[1] == "preceding" || words[1] == "following") {
		following := words[1] == "following"
		if words[0] == "unbounded" {
			if following {
				return FrameBound{Kind: UnboundedFollowing}, nil
			}
			return FrameBound{Kind: UnboundedPreceding}, nil
		}
		n, err := strconv.ParseInt(words[0], 10, 64)
		if err != nil || n < 0 {
			return FrameBound{}, fmt.Errorf("the offset %q is not a whole number >= 0", words[0])
		}
		if following {
			return FrameBound{Kind: Following, N: n}, nil
		}
		return FrameBound{Kind: Preceding, N: n}, nil
	}
	return FrameBound{}, fmt.Errorf("%q is not a frame bound", s)
}

// WindowDefaultName is the default output name of a window spec.
func WindowDefaultName(w WindowSpec) string {
	switch {
	case w.Col == "*":
		return string(w.Fn) + "_all"
	case w.Col == "":
		return string(w.Fn)
	}
	if d, ok := w.Fn.Agg(); ok && d.Arg != nil && d.Arg.Input != nil && w.Arg != nil {
		return string(w.Fn) + "_" + w.Col + "_" + *w.Arg // as aggs: corr_income_health
	}
	return string(w.Fn) + "_" + w.Col
}

func windowErr(field, format string, args ...any) *qerr.Error {
	return qerr.Invalid(qerr.CodeInvalidArgument, "%s: %s", field, fmt.Sprintf(format, args...)).With("field", field)
}

// windowing stacks, over input, the lower predicates (a Filter: windows see
// the filtered rows), the Window of spec.Windows and the TopNPerGroup of
// spec.TopNPerGroup (partitioned by group, the group_by columns when the
// query has no aggregates). Without either knob it returns input and lower
// unchanged.
func (b *builder) windowing(input Node, lower []Predicate, spec Spec, group []string) (Node, []Predicate, error) {
	if len(spec.Windows) == 0 && spec.TopNPerGroup == nil {
		return input, lower, nil
	}
	node := filterAndCompute(input, lower, nil, nil)
	if len(spec.Windows) > 0 {
		w := &Window{Input: node}
		s := node.Schema()
		names := b.names(s)
		for i, ws := range spec.Windows {
			e, err := b.window(s, fmt.Sprintf("windows[%d]", i), ws)
			if err != nil {
				return nil, nil, err
			}
			if slices.Contains(names, e.Name) {
				return nil, nil, windowErr(fmt.Sprintf("windows[%d].as", i), "output column %q already exists", e.Name).
					WithHint("give the window function another name with as")
			}
			names = append(names, e.Name)
			w.Exprs = append(w.Exprs, e)
		}
		node = w
	}
	if t := spec.TopNPerGroup; t != nil {
		n, err := b.topNPerGroup(node, *t, group)
		if err != nil {
			return nil, nil, err
		}
		node = n
	}
	return node, nil, nil
}

func (b *builder) topNPerGroup(input Node, t TopNPerGroupSpec, group []string) (Node, error) {
	const field = "top_n_per_group"
	s := input.Schema()
	if t.N < 0 {
		return nil, windowErr(field+".n", "n must be >= 0, got %d", t.N).WithHint("n is the number of rows to keep per group")
	}
	parts := t.PartitionBy
	switch {
	case len(parts) == 0:
		parts = group
	case len(group) > 0 && !slices.Equal(parts, group):
		return nil, windowErr(field+".partition_by", "partition_by %v differs from group_by %v", parts, group).
			WithHint("pass the groups once: group_by or top_n_per_group.partition_by")
	}
	if len(parts) == 0 {
		return nil, windowErr(field, "no groups: pass group_by or top_n_per_group.partition_by").
			WithHint(`e.g. "group_by": ["id6"], "top_n_per_group": {"n": 2, "by": [{"col": "v3", "desc": true}]}`)
	}
	if len(t.By) == 0 {
		return nil, windowErr(field+".by", "by is required: the order that ranks rows within a group").
			WithHint(`e.g. "by": [{"col": "v3", "desc": true}] keeps the largest v3`)
	}
	tn := &TopNPerGroup{Input: input, N: t.N}
	for i, p := range parts {
		f := fmt.Sprintf("%s.partition_by[%d]", field, i)
		idx, err := b.keyColumn(s, p, f)
		if err != nil {
			return nil, err
		}
		tn.PartitionBy, tn.PartIdx = append(tn.PartitionBy, p), append(tn.PartIdx, idx)
	}
	for i, o := range t.By {
		idx, err := b.keyColumn(s, o.Col, fmt.Sprintf("%s.by[%d].col", field, i))
		if err != nil {
			return nil, err
		}
		if err := windowNulls(o, fmt.Sprintf("%s.by[%d]", field, i)); err != nil {
			return nil, err
		}
		tn.Keys = append(tn.Keys, SortKey{Col: o.Col, Index: idx, Desc: o.Desc})
	}
	return tn, nil
}

// keyColumn resolves a partition or order key column of comparable type.
func (b *builder) keyColumn(s *arrow.Schema, name, field string) (int, error) {
	idx, err := b.column(s, name, field)
	if err != nil {
		return -1, err
	}
	if err := b.queryable(s, idx, field); err != nil {
		return -1, err
	}
	if t := s.Field(idx).Type; !funcs.Comparable(t) {
		return -1, windowErr(field, "column %q of type %s cannot be compared", name, typeName(t)).
			WithHint("partition and order by numeric, string, boolean, date or timestamp columns")
	}
	return idx, nil
}

// window resolves one window spec against s.
func (b *builder) window(s *arrow.Schema, field string, ws WindowSpec) (WindowExpr, error) {
	e := WindowExpr{Fn: ws.Fn, Col: ws.Col, Index: -1, ArgIndex: -1, Name: ws.As}
	if e.Name == "" {
		e.Name = WindowDefaultName(ws)
	}
	decl, isWin := ws.Fn.Lookup()
	agg, isAgg := ws.Fn.Agg()
	if isAgg && !agg.Window && !isWin {
		return e, windowErr(field+".fn", "%s is an aggregate but not a window function", ws.Fn).With("valid_fns", funcs.WindowNames()).
			WithHint("aggregates usable in windows: %s; compute %s per group with aggs and group_by instead", strings.Join(funcs.WindowAggNames(), ", "), ws.Fn)
	}
	if !isWin && !isAgg {
		valid := funcs.WindowNames()
		ee := windowErr(field+".fn", "unknown window function %q", ws.Fn).With("valid_fns", valid)
		if sugg := suggestName(string(ws.Fn), valid); len(sugg) > 0 && ws.Fn != "" {
			return e, ee.With("suggestions", sugg).WithHint("did you mean %s? valid functions: %s", quoteList(sugg), strings.Join(valid, ", "))
		}
		return e, ee.WithHint("valid functions: %s", strings.Join(valid, ", "))
	}
	for i, p := range ws.PartitionBy {
		idx, err := b.keyColumn(s, p, fmt.Sprintf("%s.partition_by[%d]", field, i))
		if err != nil {
			return e, err
		}
		e.PartitionBy, e.PartIdx = append(e.PartitionBy, p), append(e.PartIdx, idx)
	}
	for i, o := range ws.OrderBy {
		idx, err := b.keyColumn(s, o.Col, fmt.Sprintf("%s.order_by[%d].col", field, i))
		if err != nil {
			return e, err
		}
		if err := windowNulls(o, fmt.Sprintf("%s.order_by[%d]", field, i)); err != nil {
			return e, err
		}
		e.OrderBy = append(e.OrderBy, SortKey{Col: o.Col, Index: idx, Desc: o.Desc})
	}
	var inType arrow.DataType
	needCol := isAgg || decl.Col
	switch {
	case !needCol && ws.Col != "":
		return e, windowErr(field+".col", "%s takes no col", ws.Fn).WithHint("drop col; %s ranks rows by order_by", ws.Fn)
	case needCol && ws.Col == "":
		return e, windowErr(field+".col", "%s needs col", ws.Fn).WithHint("name the input column (count also takes *)")
	case ws.Col == "*":
		if !isAgg || !agg.Star {
			return e, windowErr(field+".col", "%s does not take *", ws.Fn).WithHint("name the input column (only count takes *)")
		}
	case needCol:
		idx, err := b.column(s, ws.Col, field+".col")
		if err != nil {
			return e, err
		}
		if err := b.queryable(s, idx, field+".col"); err != nil {
			return e, err
		}
		e.Index, inType = idx, s.Field(idx).Type
	}
	arg, err := windowArgs(field, ws, decl, isWin, &e)
	if err != nil {
		return e, err
	}
	if err := b.windowAggArg(s, field, ws, agg, &e); err != nil {
		return e, err
	}
	if len(ws.Default) > 0 {
		if arg != funcs.ArgOffset {
			return e, windowErr(field+".default", "default applies to lag and lead only").WithHint("drop default")
		}
		lit, err := windowDefault(Decoded(inType), ws.Default)
		if err != nil {
			return e, windowErr(field+".default", "%v", err).WithHint("pass a value of the column's type %s, e.g. 0 or \"2024-01-01\"", typeName(inType))
		}
		e.Default = lit
	}
	if isAgg && agg.Param {
		if ws.Q == nil || !(*ws.Q >= 0 && *ws.Q <= 1) {
			return e, windowErr(field+".q", "%s needs q in [0, 1]", ws.Fn).WithHint("q is a fraction: 0.5 is the median")
		}
		e.Q = *ws.Q
	} else if ws.Q != nil {
		return e, windowErr(field+".q", "q applies to quantile only").WithHint("drop q")
	}
	// Result type.
	switch {
	case isAgg && ws.Col == "*":
		e.Type = arrow.PrimitiveTypes.Int64
	case isAgg:
		if !agg.Input.Accepts(inType) {
			msg := fmt.Sprintf("%s is not supported on values of type %s", ws.Fn, typeName(inType))
			if agg.Reject != nil {
				msg, _ = agg.Reject(ws.Col, typeName(inType))
			}
			return e, windowErr(field, "%s", msg).WithHint("pick a column of a type %s accepts (%s)", ws.Fn, agg.Input.Doc)
		}
		e.Type = agg.Result(inType)
	case decl.Col:
		if !funcs.Comparable(inType) {
			return e, windowErr(field+".col", "%s cannot read column %q of type %s", ws.Fn, ws.Col, typeName(inType)).
				WithHint("use numeric, string, boolean, date or timestamp columns")
		}
		e.Type = Decoded(inType)
	case ws.Fn == funcs.WinPercentRank || ws.Fn == funcs.WinCumeDist:
		e.Type = arrow.PrimitiveTypes.Float64
	default:
		e.Type = arrow.PrimitiveTypes.Int64
	}
	if isWin && !decl.Frame && decl.Fn != funcs.WinRowNumber && len(e.OrderBy) == 0 && ws.Fn != funcs.WinNtile {
		return e, windowErr(field+".order_by", "%s needs order_by", ws.Fn).
			WithHint(`order the rows within each partition, e.g. "order_by": [{"col": "date"}]`)
	}
	// Frame.
	framed := !isWin || decl.Frame
	if ws.Frame != nil && !framed {
		return e, windowErr(field+".frame", "%s does not use a frame", ws.Fn).WithHint("drop frame")
	}
	e.Frame = Frame{Range: true, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: UnboundedFollowing}}
	if len(e.OrderBy) > 0 {
		e.Frame.End = FrameBound{Kind: CurrentRow}
	}
	if ws.Frame != nil {
		f, err := frame(field+".frame", *ws.Frame)
		if err != nil {
			return e, err
		}
		if f.Range && (f.Start.offset() || f.End.offset()) {
			if len(e.OrderBy) != 1 || !RangeOffsetType(s.Field(e.OrderBy[0].Index).Type) {
				return e, windowErr(field+".frame", "a range frame with N preceding/following needs exactly one order_by column of a number, date or timestamp type").
					WithHint("order by one numeric, date or timestamp column (N counts days for dates, the column's unit for timestamps), or use a rows frame")
			}
		}
		e.Frame = f
	}
	return e, nil
}

// windowArgs checks ws.Args against the window function's argument kind
// (offset, buckets, nth) and sets e.Arg; it returns the kind.
func windowArgs(field string, ws WindowSpec, decl *funcs.WindowDecl, isWin bool, e *WindowExpr) (funcs.WindowArg, error) {
	arg := funcs.ArgNone
	if isWin {
		arg = decl.Arg
	}
	switch {
	case arg == funcs.ArgNone && len(ws.Args) > 0:
		return arg, windowErr(field+".args", "%s takes no args", ws.Fn).WithHint("drop args")
	case len(ws.Args) > 1:
		return arg, windowErr(field+".args", "%s takes one integer argument, got %d", ws.Fn, len(ws.Args)).WithHint("pass args: [n]")
	case arg == funcs.ArgOffset:
		e.Arg = 1
		if len(ws.Args) == 1 {
			e.Arg = ws.Args[0]
		}
		if e.Arg < 0 {
			return arg, windowErr(field+".args", "the offset of %s must be >= 0, got %d", ws.Fn, e.Arg).WithHint("use lag for rows before and lead for rows after")
		}
	case arg == funcs.ArgBuckets || arg == funcs.ArgNth:
		if len(ws.Args) != 1 || ws.Args[0] < 1 {
			return arg, windowErr(field+".args", "%s needs args: [n] with n >= 1", ws.Fn).WithHint(`e.g. "args": [4]`)
		}
		e.Arg = ws.Args[0]
	}
	return arg, nil
}

// offset reports an N preceding / N following bound.
func (b FrameBound) offset() bool { return b.Kind == Preceding || b.Kind == Following }

// RangeOffsetType reports the order key types of range frames with
// offsets: numbers, dates (offset in days) and timestamps (in their unit).
func RangeOffsetType(t arrow.DataType) bool {
	return funcs.IsNumeric(t) || t.ID() == arrow.DATE32 || t.ID() == arrow.TIMESTAMP
}

func frame(field string, fs FrameSpec) (Frame, error) {
	var f Frame
	switch strings.ToLower(fs.Type) {
	case "", "rows":
	case "range":
		f.Range = true
	default:
		return f, windowErr(field+".type", "unknown frame type %q", fs.Type).With("valid_values", []string{"rows", "range"}).
			WithHint("type is rows (row offsets) or range (ties of the current row included)")
	}
	var err error
	if f.Start, err = ParseFrameBound(fs.Start); err != nil {
		return f, windowErr(field+".start", "%v", err).WithHint(`bounds are "unbounded preceding", "N preceding", "current row", "N following", "unbounded following"`)
	}
	f.End = FrameBound{Kind: CurrentRow}
	if fs.End != "" {
		if f.End, err = ParseFrameBound(fs.End); err != nil {
			return f, windowErr(field+".end", "%v", err).WithHint(`bounds are "unbounded preceding", "N preceding", "current row", "N following", "unbounded following"`)
		}
	}
	if f.Start.Kind == UnboundedFollowing || f.End.Kind == UnboundedPreceding {
		return f, windowErr(field, "a frame cannot start at unbounded following or end at unbounded preceding").
			WithHint(`e.g. {"start": "unbounded preceding", "end": "current row"}`)
	}
	return f, nil
}

// windowNulls refuses nulls_first in a window's or top_n_per_group's
// order: they sort nulls last in both directions.
func windowNulls(o OrderSpec, field string) error {
	if !o.NullsFirst {
		return nil
	}
	return windowErr(field+".nulls_first", "nulls_first is not supported here: window and top_n_per_group orders sort nulls last").
		WithHint("drop nulls_first; it applies to the query's order_by")
}
