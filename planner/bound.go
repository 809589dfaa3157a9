package planner

import (
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
)

// Result bounds: what a plan can be proven to produce at most, before it
// runs, from the catalog's exact row counts and the plan's structure
// alone. Unlike the row estimates of estimate_rows.go (guesses that pick a
// join's build side), a bound is never below the truth: the service skips
// the confirmation preflight of a query whose bound is under both
// confirmation thresholds (docs/RELIABILITY.md), so an under-estimate
// would let a query over the thresholds run unconfirmed. Every rule below
// is therefore a proof, and anything no rule covers is Unbounded.
//
// The walk computes, per node, a bound on its rows and per output column
// a bound on its distinct values (null counted as one value), the row
// source it is a function of, a value range (integers and dates, from
// filters), and the most characters of its strings. The rules:
//
//   - Scan: its exact row count (a row count that is not exact bounds
//     nothing). Each column is a function of the scan's row.
//   - Filter, Project, Sort, Window and Compute keep their input's rows.
//     A filter narrows the columns it tests: = v leaves one value (two
//     for floats: -0 and +0), IN a list as many as the list, comparisons
//     and ranges of integers and dates an interval; none of them passes
//     nulls. A computed column is a deterministic function of its
//     arguments (every registered scalar is: now() is the query's start
//     time), so it has at most the product of their distinct values and
//     stays a function of their row source when they share one;
//     year(d) of a date in an interval has the interval's years;
//     substr(s, i, n) and left(s, n) have at most n characters.
//   - Limit n: at most n rows.
//   - Aggregate: one row without keys; with keys at most the input's rows
//     and at most the number of distinct key tuples: keys that are
//     functions of one row source take at most that source's rows
//     together (TPC-H Q16's part columns), the groups multiply. Its
//     outputs are functions of the group (a new row source), so an
//     aggregate output grouped on again (TPC-H Q13) has at most the
//     inner aggregate's rows. Distinct, Deduplicate and TopNPerGroup
//     likewise.
//   - Join: at most the product of its inputs; when one side is unique on
//     its join keys (an aggregate's keys, a distinct input, one row),
//     each row of the other side matches at most once, so the pairs are
//     at most the other side's rows. Outer joins add the unmatched rows
//     and a null to every column of the side they pad. Semi and anti
//     joins keep at most the left rows.
//   - SetOp: union at most the sum, intersect and except at most the left.
//   - Values: its rows.
//
// Bytes are rows × the widest JSON record (materialize's encoding):
// numbers, dates, times and booleans have a fixed widest form; a string
// of at most n characters takes at most 2 + 6n bytes (a control
// character is escaped as \u00XX); with a per-cell character cap (the
// inline encoder's MaxCellChars) every string, binary and nested cell is
// at most the cap's characters plus the truncation marker.

// Unbounded is the bound of a quantity no rule proves finite.
const Unbounded int64 = math.MaxInt64

// Bound is a proven upper bound on the result of a plan: its rows and the
// bytes of its inline JSON encoding (an array of records). A field is
// Unbounded when no bound is proven.
type Bound struct {
	Rows  int64
	Bytes int64
}

// BoundOptions are the encoding parameters the byte bound assumes.
type BoundOptions struct {
	// MaxCellChars is the most characters of one cell value in the JSON
	// the bytes are measured on (longer strings, binary and nested values
	// are cut and end with "…[truncated N chars]"); 0: values are not cut,
	// so only strings of a proven length are bounded.
	MaxCellChars int64
	// Stats, when set, returns what the source of a dataset knows about
	// one of its columns without reading it (ColumnStatser); ok false:
	// nothing.
	Stats func(dataset, column string) (st ColumnStats, ok bool)
}

// ColumnStats are facts a source knows about a column of its whole
// dataset without reading it (the column cache's dictionaries and zone
// maps). They must hold for every row: a bound built on them is a proof.
type ColumnStats struct {
	// Distinct, when > 0, is at least the number of distinct non-null
	// values.
	Distinct int64
	// Ranged: every non-null value lies in Min..Max (integers; days for
	// dates, the unit for timestamps).
	Ranged   bool
	Min, Max int64
	// MaxChars, when > 0, is at least the characters of the longest
	// string value.
	MaxChars int64
}

// ColumnStatser is a source that knows ColumnStats of its columns.
type ColumnStatser interface {
	ColumnStats(column string) (ColumnStats, bool)
}

// ResultBound returns a proven upper bound on the rows and inline JSON
// bytes plan n produces (see the rules above).
func ResultBound(n Node, o BoundOptions) Bound {
	b := &bounder{srcRows: []int64{Unbounded}, stats: o.Stats}
	r := b.node(n)
	return Bound{Rows: r.rows, Bytes: jsonBound(r, n.Schema(), o)}
}

// bcol is what is proven about one column.
type bcol struct {
	ndv     int64 // distinct values, null counted as one
	src     int   // the row source the column is a function of (0: none)
	nonNull bool  // no value is null
	ranged  bool  // lo..hi holds every non-null value (integers; days for dates)
	lo, hi  int64
	chars   int64 // most characters of a string value
}

// brel is what is proven about a node's output.
type brel struct {
	rows int64
	cols []bcol
	// uniq are column sets on which no two rows are equal.
	uniq [][]int
}

// bounder walks a plan; srcRows[i] bounds the distinct rows of row source i.
type bounder struct {
	srcRows []int64
	stats   func(dataset, column string) (ColumnStats, bool)
}

func (b *bounder) newSrc(rows int64) int {
	b.srcRows = append(b.srcRows, rows)
	return len(b.srcRows) - 1
}

// unknown is a relation of rows rows of schema s with nothing proven about
// its columns but what their types say.
func (b *bounder) unknown(s *arrow.Schema, rows int64) brel {
	r := brel{rows: rows, cols: make([]bcol, s.NumFields())}
	for i, f := range s.Fields() {
		r.cols[i] = bcol{ndv: typeNDV(f.Type, rows), chars: Unbounded}
	}
	return r
}

func (b *bounder) node(n Node) brel {
	switch x := n.(type) {
	case *Scan:
		return b.scan(x)
	case *Filter:
		r := b.node(x.Input)
		r.cols = slices.Clone(r.cols)
		for _, p := range x.Preds {
			narrow(r.cols, x.Input.Schema(), p)
		}
		return r
	case *Project:
		return project(b.node(x.Input), x.Indices)
	case *Compute:
		r := b.node(x.Input)
		r.cols = slices.Clone(r.cols)
		for _, e := range x.Exprs {
			if ref, ok := e.Expr.(*ColRef); ok {
				r.uniq = renamedUniq(r.uniq, ref.Index, len(r.cols))
			}
			r.cols = append(r.cols, b.expr(e.Expr, r))
		}
		return r
	case *Sort:
		return b.node(x.Input)
	case *Limit:
		r := b.node(x.Input)
		if x.Count >= 0 {
			r.rows = min(r.rows, x.Count)
		}
		return r
	case *Window:
		r := b.node(x.Input)
		r.cols = slices.Clone(r.cols)
		for _, e := range x.Exprs {
			r.cols = append(r.cols, bcol{ndv: typeNDV(e.Type, satAdd(r.rows, 1)), chars: Unbounded})
		}
		return r
	case *Aggregate:
		return b.aggregate(x)
	case *Distinct:
		r := b.node(x.Input)
		return b.grouped(r, allCols(len(r.cols)))
	case *Deduplicate:
		r := b.node(x.Input)
		keys := x.Indices
		if len(keys) == 0 {
			keys = allCols(len(r.cols))
		}
		return b.grouped(r, keys)
	case *TopNPerGroup:
		r := b.node(x.Input)
		r.rows = min(r.rows, satMul(max(x.N, 0), b.tuples(r.cols, x.PartIdx)))
		return r
	case *Join:
		return b.join(x)
	case *SetOp:
		return b.setOp(x)
	case *Values:
		return b.values(x)
	}
	return b.unknown(n.Schema(), Unbounded)
}

func (b *bounder) scan(s *Scan) brel {
	if s.Pushed != nil {
		return b.node(s.Pushed)
	}
	rows := Unbounded
	if s.RowCountExact && s.RowCount >= 0 {
		rows = s.RowCount
	}
	r := b.unknown(s.Out, rows)
	src := b.newSrc(rows)
	for i, f := range s.Out.Fields() {
		r.cols[i].src = src
		if b.stats == nil {
			continue
		}
		if st, ok := b.stats(s.Dataset, f.Name); ok {
			applyStats(&r.cols[i], st)
		}
	}
	for _, p := range s.Filters {
		narrow(r.cols, s.Out, p)
	}
	return r
}

// applyStats narrows c by what its source knows of it.
func applyStats(c *bcol, st ColumnStats) {
	if st.Distinct > 0 {
		c.ndv = min(c.ndv, satAdd(st.Distinct, 1)) // and null
	}
	if st.MaxChars > 0 {
		c.chars = min(c.chars, st.MaxChars)
	}
	if st.Ranged && st.Min <= st.Max {
		c.ranged, c.lo, c.hi = true, st.Min, st.Max
		if span := uint64(st.Max) - uint64(st.Min); span < uint64(math.MaxInt64)-1 {
			c.ndv = min(c.ndv, int64(span)+2) // and null
		}
	}
}

// grouped is r reduced to one row per distinct tuple of the key columns,
// each row's columns passing through (Distinct, Deduplicate).
func (b *bounder) grouped(r brel, keys []int) brel {
	r.rows = min(r.rows, b.tuples(r.cols, keys))
	r.uniq = append(slices.Clone(r.uniq), slices.Clone(keys))
	return r
}

// tuples bounds the distinct tuples of columns idx of cols: the columns
// that are functions of one row source take at most its rows together;
// the rest, and the groups, multiply.
func (b *bounder) tuples(cols []bcol, idx []int) int64 {
	bySrc := map[int]int64{}
	n := int64(1)
	for _, i := range idx {
		c := cols[i]
		if c.src == 0 {
			n = satMul(n, c.ndv)
			continue
		}
		p, ok := bySrc[c.src]
		if !ok {
			p = 1
		}
		bySrc[c.src] = satMul(p, c.ndv)
	}
	for src, p := range bySrc {
		n = satMul(n, min(p, b.srcRows[src]))
	}
	return n
}

func (b *bounder) aggregate(a *Aggregate) brel {
	in := b.node(a.Input)
	rows := int64(1)
	if len(a.GroupIdx) > 0 {
		rows = min(in.rows, b.tuples(in.cols, a.GroupIdx))
	}
	src := b.newSrc(rows)
	out := brel{rows: rows, cols: make([]bcol, 0, len(a.GroupIdx)+len(a.Aggs)), uniq: [][]int{allCols(len(a.GroupIdx))}}
	for _, i := range a.GroupIdx {
		c := in.cols[i]
		c.ndv, c.src = min(c.ndv, rows), src
		out.cols = append(out.cols, c)
	}
	for _, e := range a.Aggs {
		c := bcol{ndv: typeNDV(e.Type, rows), src: src, chars: Unbounded}
		if e.Index >= 0 && e.Index < len(in.cols) && keepsValues(e.Fn) {
			c.chars = in.cols[e.Index].chars
		}
		out.cols = append(out.cols, c)
	}
	return out
}

// keepsValues reports whether aggregate fn returns one of its input
// values (so a string output is no longer than the longest input).
func keepsValues(fn AggFn) bool {
	switch fn {
	case AggMin, AggMax, AggFirst, AggLast:
		return true
	}
	return false
}

func (b *bounder) join(j *Join) brel {
	l, r := b.node(j.Left), b.node(j.Right)
	if !j.Type.KeepsRight() {
		return l // semi, anti: left rows, at most once each
	}
	// The right columns in the right schema's order, those RightCols keeps
	// (as Join.Schema).
	out := brel{cols: slices.Clone(l.cols)}
	for i, f := range j.Right.Schema().Fields() {
		if slices.Contains(j.RightCols, f.Name) {
			out.cols = append(out.cols, r.cols[i])
		}
	}
	lUniq, rUniq := l.rows <= 1, r.rows <= 1
	if j.Type != JoinCross {
		lUniq = lUniq || covers(l.uniq, j.LeftIdx)
		rUniq = rUniq || covers(r.uniq, j.RightIdx)
	}
	pairs := satMul(l.rows, r.rows)
	if rUniq {
		pairs = min(pairs, l.rows)
		if j.Type == JoinInner || j.Type == JoinLeft {
			out.uniq = l.uniq // each left row once
		}
	}
	if lUniq {
		pairs = min(pairs, r.rows)
	}
	// An outer join adds its padded side's unmatched rows to the pairs;
	// when each row of that side has at most one match, it has exactly
	// one output row.
	out.rows = pairs
	nl := len(l.cols)
	if j.Type == JoinLeft || j.Type == JoinFull {
		out.rows = satAdd(out.rows, l.rows)
		if j.Type == JoinLeft && rUniq {
			out.rows = l.rows
		}
		b.padNulls(out.cols[nl:])
	}
	if j.Type == JoinRight || j.Type == JoinFull {
		out.rows = satAdd(out.rows, r.rows)
		if j.Type == JoinRight && lUniq {
			out.rows = r.rows
		}
		b.padNulls(out.cols[:nl])
	}
	return out
}

// renamedUniq adds to uniq, for each set holding column from, the set
// with column to (a copy of it) in its place.
func renamedUniq(uniq [][]int, from, to int) [][]int {
	out := uniq
	for _, u := range uniq {
		if i := slices.Index(u, from); i >= 0 {
			c := slices.Clone(u)
			c[i] = to
			out = append(slices.Clip(out), c)
		}
	}
	return out
}

// covers reports whether some unique column set is within keys.
func covers(uniq [][]int, keys []int) bool {
	for _, u := range uniq {
		in := true
		for _, c := range u {
			in = in && slices.Contains(keys, c)
		}
		if in {
			return true
		}
	}
	return false
}

// padNulls marks cols as padded with nulls by an outer join: one more
// value each, and each row source one more row (the all-null row).
func (b *bounder) padNulls(cols []bcol) {
	moved := map[int]int{}
	for i := range cols {
		c := &cols[i]
		c.ndv, c.nonNull = satAdd(c.ndv, 1), false
		if c.src == 0 {
			continue
		}
		to, ok := moved[c.src]
		if !ok {
			to = b.newSrc(satAdd(b.srcRows[c.src], 1))
			moved[c.src] = to
		}
		c.src = to
	}
}

func (b *bounder) setOp(s *SetOp) brel {
	l, r := b.node(s.Left), b.node(s.Right)
	if s.Kind != SetUnion {
		// Intersect and except keep left rows: at most the left's rows.
		if !s.All {
			l.uniq = append(slices.Clone(l.uniq), allCols(len(l.cols)))
		}
		return l
	}
	out := brel{rows: satAdd(l.rows, r.rows), cols: make([]bcol, len(l.cols))}
	for i := range out.cols {
		out.cols[i] = bcol{ndv: satAdd(l.cols[i].ndv, r.cols[i].ndv), chars: max(l.cols[i].chars, r.cols[i].chars)}
	}
	if !s.All {
		out.uniq = [][]int{allCols(len(out.cols))}
	}
	return out
}

func (b *bounder) values(v *Values) brel {
	rows := int64(len(v.Rows))
	r := b.unknown(v.Out, rows)
	src := b.newSrc(rows)
	for i := range r.cols {
		r.cols[i].src = src
		r.cols[i].chars = 0
		for _, row := range v.Rows {
			if i < len(row) && row[i] != nil {
				r.cols[i].chars = max(r.cols[i].chars, int64(utf8.RuneCountInString(row[i].Str)))
			}
		}
	}
	return r
}

// project is r with columns idx, in that order.
func project(r brel, idx []int) brel {
	out := brel{rows: r.rows, cols: make([]bcol, len(idx))}
	pos := map[int]int{}
	for i, j := range idx {
		out.cols[i] = r.cols[j]
		pos[j] = i
	}
	for _, u := range r.uniq {
		m := make([]int, 0, len(u))
		for _, c := range u {
			if p, ok := pos[c]; ok {
				m = append(m, p)
			}
		}
		if len(m) == len(u) {
			out.uniq = append(out.uniq, m)
		}
	}
	return out
}

// narrow applies what predicate p proves about its column (by name in
// schema s, the columns of cols) to cols.
func narrow(cols []bcol, s *arrow.Schema, p Predicate) {
	idx := s.FieldIndices(p.Col)
	if p.Op == OpAny || len(idx) != 1 || idx[0] >= len(cols) {
		return
	}
	c := &cols[idx[0]]
	switch p.Op {
	case OpIsNull:
		c.ndv = min(c.ndv, 1)
		return
	case OpEq, OpIn:
		vals := p.Values
		if p.Op == OpEq && p.Value != nil {
			vals = []Literal{*p.Value}
		}
		c.nonNull = true
		if p.CaseInsensitive || len(vals) == 0 {
			return
		}
		per := int64(1)
		if isFloat(vals[0].Type) {
			per = 2 // -0 equals +0
		}
		c.ndv = min(c.ndv, satMul(per, int64(len(vals))))
		chars := int64(0)
		for _, v := range vals {
			s, ok := v.Value.(string)
			if !ok {
				chars = Unbounded
				break
			}
			chars = max(chars, int64(utf8.RuneCountInString(s)))
		}
		c.chars = min(c.chars, chars)
	case OpLt, OpLte, OpGt, OpGte, OpRange:
		c.nonNull = true
		narrowRange(c, p)
	}
}

// narrowRange narrows c to the interval of an order predicate on an
// integer or date column.
func narrowRange(c *bcol, p Predicate) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if c.ranged {
		lo, hi = c.lo, c.hi
	}
	bound := func(l *Literal) (int64, bool) {
		if l == nil {
			return 0, false
		}
		switch v := l.Value.(type) {
		case int64:
			return v, true
		case int32:
			return int64(v), true
		}
		return 0, false
	}
	var ok bool
	var v int64
	switch p.Op {
	case OpLt:
		if v, ok = bound(p.Value); ok && v > math.MinInt64 {
			hi = min(hi, v-1)
		}
	case OpLte:
		if v, ok = bound(p.Value); ok {
			hi = min(hi, v)
		}
	case OpGt:
		if v, ok = bound(p.Value); ok && v < math.MaxInt64 {
			lo = max(lo, v+1)
		}
	case OpGte:
		if v, ok = bound(p.Value); ok {
			lo = max(lo, v)
		}
	case OpRange:
		if v, ok = bound(p.Min); ok {
			lo = max(lo, v)
		}
		if v, ok = bound(p.Max); ok {
			hi = min(hi, v)
		}
	}
	if lo == math.MinInt64 && hi == math.MaxInt64 {
		return
	}
	c.ranged, c.lo, c.hi = true, lo, hi
	if lo > hi {
		c.ndv = 0
	} else if span := uint64(hi) - uint64(lo); span < uint64(math.MaxInt64) {
		c.ndv = min(c.ndv, int64(span)+1)
	}
}

// expr bounds the column expression e computes over the rows of in.
func (b *bounder) expr(e Expr, in brel) bcol {
	switch x := e.(type) {
	case *ColRef:
		if x.Index >= 0 && x.Index < len(in.cols) {
			return in.cols[x.Index]
		}
	case *Const:
		c := bcol{ndv: 1, nonNull: !x.Null, chars: int64(utf8.RuneCountInString(x.Str))}
		if !x.Null && isIntegral(x.Typ) {
			c.ranged, c.lo, c.hi = true, x.Int, x.Int
		}
		return c
	}
	// A deterministic function of its arguments' values.
	var args []Expr
	switch x := e.(type) {
	case *Cast:
		args = []Expr{x.X}
	case *Neg:
		args = []Expr{x.X}
	case *Binary:
		args = []Expr{x.L, x.R}
	case *Call:
		args = x.Args
	default:
		return bcol{ndv: typeNDV(e.Type(), in.rows), chars: Unbounded}
	}
	argc := make([]bcol, len(args))
	ndv, src, first := int64(1), 0, true
	for i, a := range args {
		argc[i] = b.expr(a, in)
		ndv = satMul(ndv, argc[i].ndv)
		if _, ok := a.(*Const); ok {
			continue // a constant keeps the others' row source
		}
		switch {
		case first:
			src, first = argc[i].src, false
		case src != argc[i].src:
			src = 0 // functions of different rows
		}
	}
	if src != 0 {
		ndv = min(ndv, b.srcRows[src])
	}
	c := bcol{ndv: min(ndv, typeNDV(e.Type(), in.rows)), src: src, chars: Unbounded}
	if call, ok := e.(*Call); ok {
		callBound(&c, call, argc)
	}
	return c
}

// callBound tightens c, the result of call over arguments argc, by what
// the function is known to do.
func callBound(c *bcol, call *Call, argc []bcol) {
	switch call.Fn {
	case "substr", "left", "right":
		n := call.Args[len(call.Args)-1]
		if k, ok := n.(*Const); ok && !k.Null && isIntegral(k.Typ) && k.Int >= 0 && len(call.Args) >= 2 &&
			(call.Fn != "substr" || len(call.Args) == 3) {
			c.chars = k.Int
		}
		c.chars = min(c.chars, argc[0].chars)
	case "year":
		a := argc[0]
		if a.ranged && call.Args[0].Type().ID() == arrow.DATE32 && a.hi >= a.lo {
			ylo, yhi := dayYear(a.lo), dayYear(a.hi)
			n := yhi - ylo + 1
			if !a.nonNull {
				n++
			}
			c.ndv = min(c.ndv, n)
			c.ranged, c.lo, c.hi, c.nonNull = true, ylo, yhi, a.nonNull
		}
	case "lower", "upper", "trim", "ltrim", "rtrim":
		c.chars = argc[0].chars
	}
}

// dayYear is the calendar year of a day number since 1970-01-01.
func dayYear(days int64) int64 {
	return int64(time.Unix(0, 0).UTC().AddDate(0, 0, int(days)).Year())
}

// typeNDV bounds the distinct values (null included) of a column of type
// t over rows rows.
func typeNDV(t arrow.DataType, rows int64) int64 {
	switch t.ID() {
	case arrow.BOOL:
		return min(rows, 3)
	case arrow.INT8, arrow.UINT8:
		return min(rows, 257)
	case arrow.INT16, arrow.UINT16:
		return min(rows, 1<<16+1)
	case arrow.NULL:
		return min(rows, 1)
	}
	return rows
}

func isIntegral(t arrow.DataType) bool {
	if t == nil {
		return false
	}
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.DATE32:
		return true
	}
	return false
}

func allCols(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// jsonBound bounds the bytes of r's rows of schema s as a JSON array of
// records.
func jsonBound(r brel, s *arrow.Schema, o BoundOptions) int64 {
	if r.rows == Unbounded {
		return Unbounded
	}
	if r.rows == 0 {
		return 2 // []
	}
	width := int64(1) // '{' or ',' before each key, '}' after the last
	for i, f := range s.Fields() {
		chars := Unbounded
		if i < len(r.cols) {
			chars = r.cols[i].chars
		}
		width = satAdd(width, satAdd(jsonStringWidth(int64(len(f.Name)), 0)+2, cellWidth(f.Type, chars, o.MaxCellChars)))
	}
	// '[' ']', each record and the commas between them.
	return satAdd(2, satMul(r.rows, satAdd(width, 1)))
}

// markerWidth bounds the bytes of "…[truncated N chars]".
const markerWidth = int64(3 + len("[truncated ") + 19 + len(" chars]"))

// jsonStringWidth bounds a JSON string of n characters (6 bytes each: a
// control character escaped as \u00XX), cut at limit characters plus the
// marker when limit > 0.
func jsonStringWidth(n, limit int64) int64 {
	if limit > 0 && n > limit {
		return satAdd(2+markerWidth, satMul(limit, 6))
	}
	return satAdd(2, satMul(n, 6))
}

// cellWidth bounds one JSON cell of type t (null: 4 bytes), strings of
// at most chars characters, under a per-cell character cap limit.
func cellWidth(t arrow.DataType, chars, limit int64) int64 {
	w := int64(Unbounded)
	switch t.ID() {
	case arrow.NULL:
		w = 4
	case arrow.BOOL:
		w = 5 // false
	case arrow.INT8, arrow.UINT8, arrow.INT16, arrow.UINT16, arrow.INT32, arrow.UINT32:
		w = 11 // -2147483648
	case arrow.INT64, arrow.UINT64, arrow.DURATION:
		w = 22 // "-9223372036854775808" (quoted beyond 2^53)
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		w = 32 // -0.0000012345678901234567, -1.7976931348623157e+308, "-Infinity"
	case arrow.DATE32, arrow.DATE64:
		w = 32 // "-292278994-08-17": years with as many digits as needed
	case arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64:
		w = 64 // "-292277026596-12-04T15:30:07.999999999+hh:mm"
	case arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		d := t.(arrow.DecimalType) // quotes, sign, point, a leading 0, the zeros of a negative scale
		w = 2 + 2 + 1 + int64(d.GetPrecision()) + max(-int64(d.GetScale()), 0)
	case arrow.DICTIONARY:
		return cellWidth(t.(*arrow.DictionaryType).ValueType, chars, limit)
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		w = jsonStringWidth(chars, limit)
	default:
		if limit > 0 { // binary as base64, nested values as their JSON text: cut at limit characters
			w = jsonStringWidth(limit+1, limit)
		}
	}
	return max(w, 4)
}

// satAdd and satMul are + and * of non-negative bounds, Unbounded on
// overflow or with an Unbounded operand.
func satAdd(a, b int64) int64 {
	if a == Unbounded || b == Unbounded || a > Unbounded-b {
		return Unbounded
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a == Unbounded || b == Unbounded || a > Unbounded/b {
		return Unbounded
	}
	return a * b
}
