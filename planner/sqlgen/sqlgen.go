// Package sqlgen is the one SQL generator: it prints a logical plan (a
// subtree of the planner's nodes over one remote table, or joining
// tables of one remote) as a single SELECT statement in a remote's
// dialect. It is what Quarry sends to an Arrow
// Flight SQL remote (catalog/flightsrc); nothing else produces SQL for a
// remote, so no text from a request ever reaches one except through the
// values of typed, validated plan nodes printed here.
//
// Supported, from the bottom up: a Scan (its columns and pushed filters),
// Filters over it, one Aggregate (plain group keys; count, count
// distinct, sum, min, max, avg — printed as a float sum over the count — without per-aggregate
// filters), Filters over the Aggregate (HAVING, printed on the aggregate
// calls), Projects that pick columns, and a Limit on top, with a Sort
// right under it (a top-N: ORDER BY with the engine's null placement
// spelled out, on keys the remote orders as the engine does), Computes
// among the Projects on top that only rename columns. In place of the
// Scan, a Join of two such subtrees (GenerateTables names each Scan's
// table): inner, left, right, full and cross joins of the inputs as
// derived tables, semi and anti joins as [NOT] EXISTS, a null-aware anti
// join as NOT IN, on keys the remote compares as the engine does, with a
// residual condition only when it prints exactly (residual.go); the
// join's output columns keep the plan's names (alias.col), so no two
// collide. Predicates are printed only when the remote evaluates them
// exactly as the engine does (Printable); anything else is an
// ErrUnsupported error and stays local. Round trip: the SQL of a plan,
// parsed by sqlfront and optimized, plans back to the same tree
// (sqlgen_test.go); the SQL of a join, planned by sqlfront, gives the
// plan's rows and columns (joins_test.go).
package sqlgen

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// ErrUnsupported: the plan (or a predicate) has no SQL this generator
// prints; the caller evaluates it locally.
var ErrUnsupported = errors.New("sqlgen: not expressible in remote SQL")

// Dialect is how a remote spells SQL: identifier quoting and string
// escaping. Names are the config's `dialect` values.
type Dialect struct {
	Name string
	// quote opens and closes identifiers.
	quote byte
	// backslash: backslashes in string literals are escapes (MySQL).
	backslash bool
	// CaseInsensitiveStrings: string comparisons may ignore case (MySQL's
	// default collations), so only eq and in are printed on strings (a
	// remote returning more rows is filtered again by the engine; one
	// returning fewer would lose rows).
	CaseInsensitiveStrings bool
	// noNullsOrder: no NULLS FIRST/LAST in ORDER BY (MySQL); null
	// placement is spelled with a leading `x IS NULL` key instead.
	noNullsOrder bool
	// double is the type name of a float64 in CAST.
	double string
}

// Dialects known by name: PostgreSQL-like (DuckDB, DataFusion, GizmoSQL,
// SQLite, Quarry itself: "double-quoted" identifiers, standard strings)
// and MySQL-like (Doris, StarRocks: `backquoted` identifiers, backslash
// escapes in strings).
var (
	Postgres = Dialect{Name: "postgres", quote: '"', double: "DOUBLE PRECISION"}
	MySQL    = Dialect{Name: "mysql", quote: '`', backslash: true, CaseInsensitiveStrings: true, noNullsOrder: true, double: "DOUBLE"}
)

// DialectNamed returns the dialect called name ("" is Postgres).
func DialectNamed(name string) (Dialect, error) {
	switch strings.ToLower(name) {
	case "", "postgres", "postgresql", "ansi":
		return Postgres, nil
	case "mysql":
		return MySQL, nil
	}
	return Dialect{}, fmt.Errorf("unknown SQL dialect %q (postgres or mysql)", name)
}

// Ident quotes one identifier (a quote inside is doubled).
func (d Dialect) Ident(name string) string {
	q := string(d.quote)
	return q + strings.ReplaceAll(name, q, q+q) + q
}

// Table is a remote table: its schema (may be empty) and name.
type Table struct {
	Schema, Name string
}

// From is the table as a FROM item.
func (d Dialect) From(t Table) string {
	if t.Schema == "" {
		return d.Ident(t.Name)
	}
	return d.Ident(t.Schema) + "." + d.Ident(t.Name)
}

// Tables names the remote table a Scan of dataset reads: an error
// wrapping ErrUnsupported when the remote has none.
type Tables func(dataset string) (Table, error)

// Generate prints plan n, whose Scans all read table, as one SELECT in
// dialect d. A node or predicate it cannot print is an error wrapping
// ErrUnsupported.
func Generate(n planner.Node, table Table, d Dialect) (string, error) {
	first := planner.ScanOf(n)
	return GenerateTables(n, func(dataset string) (Table, error) {
		if first == nil || dataset != first.Dataset {
			return Table{}, unsupported("dataset %q is not the table's", dataset)
		}
		return table, nil
	}, d)
}

// GenerateTables prints plan n as one SELECT in dialect d, its Scans
// reading the tables tables names: joins of them become joins of
// derived tables (see join).
func GenerateTables(n planner.Node, tables Tables, d Dialect) (string, error) {
	return d.block(n, tables)
}

// clauses are the parts of one SELECT block, from its top node down to
// its Scan or Join.
type clauses struct {
	limit         *planner.Limit
	sort          *planner.Sort
	agg           *planner.Aggregate
	preds, having []planner.Predicate
	scan          *planner.Scan
	join          *planner.Join
	// renames are the columns of Computes that name another column
	// (new name -> old), allowed among the Projects on top.
	renames map[string]string
}

// clausesOf walks down n in SQL block order: a Limit (with a Sort right
// under it, but for Projects: a top-N), then Filters over an Aggregate
// (HAVING), the Aggregate, Filters (WHERE), the Scan or Join; Projects
// anywhere only pick columns by name (the select list is the plan's
// output schema). A Sort without a Limit right above it is left to the
// engine: order alone saves no bytes.
func clausesOf(n planner.Node) (*clauses, error) {
	c := &clauses{renames: map[string]string{}}
	cur, underLimit, top := n, false, true
	for {
		switch x := cur.(type) {
		case *planner.Limit:
			if c.limit != nil || c.agg != nil || len(c.preds) > 0 {
				return nil, unsupported("%s", x.Describe())
			}
			c.limit, cur, underLimit, top = x, x.Input, true, false
		case *planner.Project:
			cur = x.Input
		case *planner.Compute:
			if !top {
				return nil, unsupported("%s", x.Describe())
			}
			for _, e := range x.Exprs {
				ref, ok := e.Expr.(*planner.ColRef)
				if !ok {
					return nil, unsupported("%s", x.Describe())
				}
				c.renames[e.Name] = ref.Name
			}
			cur = x.Input
		case *planner.Sort:
			if !underLimit {
				return nil, unsupported("%s without a limit", x.Describe())
			}
			c.sort, cur, underLimit = x, x.Input, false
		case *planner.Aggregate:
			if c.agg != nil {
				return nil, unsupported("%s", x.Describe())
			}
			c.agg, cur, underLimit, top = x, x.Input, false, false
			c.having, c.preds = c.preds, nil
		case *planner.Filter:
			c.preds = append(c.preds, x.Preds...)
			cur, underLimit, top = x.Input, false, false
		case *planner.Scan:
			c.scan = x
			return c, nil
		case *planner.Join:
			c.join = x
			return c, nil
		default:
			return nil, unsupported("%s", cur.Describe())
		}
	}
}

// block prints n as one SELECT block over a table or a join.
func (d Dialect) block(n planner.Node, tables Tables) (string, error) {
	c, err := clausesOf(n)
	if err != nil {
		return "", err
	}
	var from string
	var fromSchema *arrow.Schema
	if c.scan != nil {
		if c.scan.Pushed != nil {
			return "", unsupported("%s", c.scan.Describe())
		}
		t, err := tables(c.scan.Dataset)
		if err != nil {
			return "", err
		}
		from, fromSchema = d.From(t), c.scan.Out
		c.preds = append(append([]planner.Predicate(nil), c.scan.Filters...), c.preds...)
	} else {
		s, err := d.join(c.join, tables)
		if err != nil {
			return "", err
		}
		from, fromSchema = "("+s+") AS "+d.Ident("j"), c.join.Schema()
	}
	// expr is the SQL of a column of the aggregate's output (a group key
	// or an aggregate call); nil without an aggregate.
	var expr func(string) string
	if c.agg != nil {
		calls := make(map[string]string, len(c.agg.GroupBy)+len(c.agg.Aggs))
		for _, k := range c.agg.GroupBy {
			calls[k] = d.Ident(k)
		}
		for _, a := range c.agg.Aggs {
			s, err := d.aggregate(a)
			if err != nil {
				return "", err
			}
			calls[a.Name] = s
		}
		expr = func(name string) string { return calls[name] }
	}
	items, err := d.selectList(n.Schema(), c, fromSchema, expr)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(strings.Join(items, ", "))
	b.WriteString(" FROM ")
	b.WriteString(from)
	if err := d.conjunction(&b, " WHERE ", c.preds, fromSchema, nil); err != nil {
		return "", err
	}
	if c.agg != nil && len(c.agg.GroupBy) > 0 {
		keys := make([]string, len(c.agg.GroupBy))
		for i, k := range c.agg.GroupBy {
			keys[i] = d.Ident(k)
		}
		b.WriteString(" GROUP BY ")
		b.WriteString(strings.Join(keys, ", "))
	}
	if err := d.conjunction(&b, " HAVING ", c.having, schemaOf(c.agg), expr); err != nil {
		return "", err
	}
	if c.sort != nil {
		s, err := d.orderBy(c.sort, n.Schema(), expr)
		if err != nil {
			return "", err
		}
		b.WriteString(" ORDER BY ")
		b.WriteString(s)
	}
	writeLimit(&b, c.limit)
	return b.String(), nil
}

// selectList prints the columns of out: with an aggregate (expr not
// nil) its calls and group keys, otherwise columns of the FROM item
// (fromSchema); a column a Compute on top renamed is printed AS its new
// name.
func (d Dialect) selectList(out *arrow.Schema, c *clauses, fromSchema *arrow.Schema, expr func(string) string) ([]string, error) {
	text := expr
	if text == nil {
		text = func(name string) string {
			if len(fromSchema.FieldIndices(name)) == 0 {
				return ""
			}
			return d.Ident(name)
		}
	}
	if len(c.renames) > 0 {
		// A clause naming a column that is also a new name of the
		// select list may read the select list's (ORDER BY, and
		// some dialects' WHERE, GROUP BY and HAVING).
		used := referenced(c.preds, c.having, c.agg, c.sort)
		for name := range c.renames {
			if used[name] {
				return nil, unsupported("column %q renamed over another of its name", name)
			}
		}
	}
	items := make([]string, 0, out.NumFields())
	for _, f := range out.Fields() {
		src := f.Name
		for i := 0; i <= len(c.renames); i++ { // a chain of renames, no cycle
			old, ok := c.renames[src]
			if !ok {
				break
			}
			src = old
		}
		t := text(src)
		if t == "" {
			return nil, unsupported("column %q is not read from the table", f.Name)
		}
		if expr != nil && t != d.Ident(f.Name) || src != f.Name {
			t += " AS " + d.Ident(f.Name)
		}
		items = append(items, t)
	}
	if len(items) == 0 {
		return nil, unsupported("a plan without columns")
	}
	return items, nil
}

// writeLimit writes the LIMIT and OFFSET of limit (nothing for nil).
func writeLimit(b *strings.Builder, limit *planner.Limit) {
	if limit == nil {
		return
	}
	if limit.Count >= 0 {
		b.WriteString(" LIMIT ")
		b.WriteString(strconv.FormatInt(limit.Count, 10))
	} else if limit.Offset > 0 {
		b.WriteString(" LIMIT ")
		b.WriteString(strconv.FormatInt(math.MaxInt64, 10))
	}
	if limit.Offset > 0 {
		b.WriteString(" OFFSET ")
		b.WriteString(strconv.FormatInt(limit.Offset, 10))
	}
}

// referenced are the column names the clauses of a block name.
func referenced(preds, having []planner.Predicate, agg *planner.Aggregate, sort *planner.Sort) map[string]bool {
	used := map[string]bool{}
	var add func([]planner.Predicate)
	add = func(ps []planner.Predicate) {
		for _, p := range ps {
			used[p.Col] = true
			add(p.Any)
		}
	}
	add(preds)
	add(having)
	if agg != nil {
		for _, k := range agg.GroupBy {
			used[k] = true
		}
		for _, a := range agg.Aggs {
			used[a.Col] = true
		}
	}
	if sort != nil {
		for _, k := range sort.Keys {
			used[k.Col] = true
		}
	}
	return used
}

// joinKinds are the join types printed as a join of derived tables.
var joinKinds = map[planner.JoinType]string{
	planner.JoinInner: "INNER JOIN", planner.JoinLeft: "LEFT OUTER JOIN", planner.JoinRight: "RIGHT OUTER JOIN",
	planner.JoinFull: "FULL OUTER JOIN", planner.JoinCross: "CROSS JOIN",
}

// join prints j as a SELECT of its output columns (named as the plan
// names them: the left's as they are, the kept right ones alias.col)
// over its inputs as derived tables "l" and "r", each printed by block:
// inner, outer and cross joins ON the key equalities (a null key
// matches nothing, as in the engine); semi and anti joins as [NOT]
// EXISTS of a match (a null left key has none); a null-aware anti join
// as NOT IN. Keys must compare in the remote as in the engine (joinKey);
// a residual condition is ANDed to the key equalities (in ON, or in the
// EXISTS), as the engine tests it on the pairs with equal keys, when
// residual prints it (otherwise the join stays local).
func (d Dialect) join(j *planner.Join, tables Tables) (string, error) {
	ls, rs := j.Left.Schema(), j.Right.Schema()
	if len(j.LeftIdx) != len(j.LeftKeys) || len(j.RightIdx) != len(j.RightKeys) || len(j.LeftKeys) != len(j.RightKeys) {
		return "", unsupported("%s (unresolved keys)", j.Describe())
	}
	l, r := d.Ident("l"), d.Ident("r")
	on := make([]string, len(j.LeftKeys))
	for i := range j.LeftKeys {
		if !d.joinKey(ls.Field(j.LeftIdx[i]).Type) || !d.joinKey(rs.Field(j.RightIdx[i]).Type) {
			return "", unsupported("join key %q (of this type)", j.LeftKeys[i])
		}
		on[i] = l + "." + d.Ident(j.LeftKeys[i]) + " = " + r + "." + d.Ident(j.RightKeys[i])
	}
	if j.Residual != nil {
		if j.Type == planner.JoinCross || j.NullAware {
			return "", unsupported("%s", j.Describe())
		}
		cond, err := d.residual(j.Residual, j)
		if err != nil {
			return "", err
		}
		on = append(on, cond)
	}
	if (j.Type == planner.JoinCross) != (len(on) == 0) {
		return "", unsupported("%s", j.Describe())
	}
	left, err := d.block(j.Left, tables)
	if err != nil {
		return "", err
	}
	right, err := d.block(j.Right, tables)
	if err != nil {
		return "", err
	}
	items := make([]string, 0, ls.NumFields()+len(j.RightCols))
	for _, f := range ls.Fields() {
		items = append(items, l+"."+d.Ident(f.Name))
	}
	if len(items) == 0 {
		return "", unsupported("a join without left columns")
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	if !j.Type.KeepsRight() {
		b.WriteString(strings.Join(items, ", "))
		b.WriteString(" FROM (" + left + ") AS " + l + " WHERE ")
		switch {
		case j.NullAware && len(on) == 1:
			b.WriteString(l + "." + d.Ident(j.LeftKeys[0]) + " NOT IN (SELECT " + r + "." + d.Ident(j.RightKeys[0]) + " AS " + d.Ident("k") + " FROM (" + right + ") AS " + r + ")")
		case j.NullAware:
			return "", unsupported("%s", j.Describe())
		default:
			if j.Type == planner.JoinAnti {
				b.WriteString("NOT ")
			}
			b.WriteString("EXISTS (SELECT 1 FROM (" + right + ") AS " + r + " WHERE " + strings.Join(on, " AND ") + ")")
		}
		return b.String(), nil
	}
	kw, ok := joinKinds[j.Type]
	if !ok {
		return "", unsupported("%s", j.Describe())
	}
	for _, f := range rs.Fields() {
		if slices.Contains(j.RightCols, f.Name) {
			items = append(items, r+"."+d.Ident(f.Name)+" AS "+d.Ident(planner.JoinedName(j.Alias, f.Name)))
		}
	}
	b.WriteString(strings.Join(items, ", "))
	b.WriteString(" FROM (" + left + ") AS " + l + " " + kw + " (" + right + ") AS " + r)
	if len(on) > 0 {
		b.WriteString(" ON " + strings.Join(on, " AND "))
	}
	return b.String(), nil
}

// joinKey reports whether the remote compares join keys of type t as
// the engine does: integers, dates, booleans and (unless the dialect's
// strings may ignore case) strings by their bytes — not floats (NaN,
// -0) nor timestamps (time zones and units differ among remotes).
func (d Dialect) joinKey(t arrow.DataType) bool {
	return d.orderable(t)
}

// schemaOf is agg's output schema (nil without an aggregate).
func schemaOf(agg *planner.Aggregate) *arrow.Schema {
	if agg == nil {
		return nil
	}
	return agg.Out
}

// conjunction writes kw and preds joined by AND (nothing when there are
// none); col prints a column (nil: its quoted name).
func (d Dialect) conjunction(b *strings.Builder, kw string, preds []planner.Predicate, schema *arrow.Schema, col func(string) string) error {
	if len(preds) == 0 {
		return nil
	}
	parts := make([]string, len(preds))
	for i, p := range preds {
		s, err := d.predicateIn(p, schema, col)
		if err != nil {
			return err
		}
		parts[i] = s
	}
	b.WriteString(kw)
	b.WriteString(strings.Join(parts, " AND "))
	return nil
}

// orderBy prints the keys of a pushed top-N sort with the engine's null
// placement spelled out (nulls last unless NullsFirst, in both
// directions). Only keys the remote orders as the engine does are
// printed: integers, dates, booleans and (unless the dialect's strings
// may ignore case) strings in byte order — not floats, whose NaN the
// engine puts after every number in both directions. A key that is a
// column of the select list (out) is printed by its name, another by
// expr (the aggregate call it names) or its column name.
func (d Dialect) orderBy(s *planner.Sort, out *arrow.Schema, expr func(string) string) (string, error) {
	in := s.Input.Schema()
	keys := make([]string, 0, len(s.Keys))
	for _, k := range s.Keys {
		if k.Index < 0 || k.Index >= in.NumFields() || !d.orderable(in.Field(k.Index).Type) {
			return "", unsupported("ORDER BY %q (of this type)", k.Col)
		}
		text := d.Ident(k.Col)
		if expr != nil && (d.noNullsOrder || len(out.FieldIndices(k.Col)) == 0) {
			if text = expr(k.Col); text == "" {
				return "", unsupported("ORDER BY %q", k.Col)
			}
		}
		dir := ""
		if k.Desc {
			dir = " DESC"
		}
		switch {
		case d.noNullsOrder && k.NullsFirst:
			keys = append(keys, text+" IS NULL DESC", text+dir)
		case d.noNullsOrder:
			keys = append(keys, text+" IS NULL", text+dir)
		case k.NullsFirst:
			keys = append(keys, text+dir+" NULLS FIRST")
		default:
			keys = append(keys, text+dir+" NULLS LAST")
		}
	}
	return strings.Join(keys, ", "), nil
}

// orderable reports whether the remote sorts a key of type t as the
// engine does.
func (d Dialect) orderable(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.DATE32, arrow.BOOL:
		return true
	case arrow.STRING, arrow.LARGE_STRING:
		return !d.CaseInsensitiveStrings
	}
	return false
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// aggregate prints one aggregate call.
func (d Dialect) aggregate(a planner.AggExpr) (string, error) {
	if len(a.Filter) > 0 || a.Arg != "" {
		return "", unsupported("aggregate %s with a filter or a second argument", a.Fn)
	}
	switch a.Fn {
	case planner.AggCount:
		if a.Col == "*" {
			return "count(*)", nil
		}
		return "count(" + d.Ident(a.Col) + ")", nil
	case planner.AggCountDistinct:
		return "count(DISTINCT " + d.Ident(a.Col) + ")", nil
	case planner.AggSum, planner.AggMin, planner.AggMax:
		return string(a.Fn) + "(" + d.Ident(a.Col) + ")", nil
	case planner.AggAvg:
		// The engine's avg divides a float64 sum by the count; remotes'
		// own avg may round its result to a decimal scale (MySQL: 4
		// digits more than the input's) or keep a numeric. The sum is
		// null exactly when the count is 0, so no division by zero.
		return "CAST(sum(" + d.Ident(a.Col) + ") AS " + d.double + ") / count(" + d.Ident(a.Col) + ")", nil
	}
	return "", unsupported("aggregate %s", a.Fn)
}

// Printable reports whether predicate p over a column of type t prints as
// SQL that a remote evaluates as the engine does: comparisons, in/not_in,
// range and null tests on integer, float64, string, boolean and date
// columns (not case-insensitive ones), and OR groups of those.
func (d Dialect) Printable(p planner.Predicate, schema *arrow.Schema) bool {
	_, err := d.predicateIn(p, schema, nil)
	return err == nil
}

// predicateIn prints p; schema must hold p's column with a printable
// type. colText prints the column (nil: its quoted name).
func (d Dialect) predicateIn(p planner.Predicate, schema *arrow.Schema, colText func(string) string) (string, error) {
	if p.CaseInsensitive {
		return "", unsupported("case-insensitive %s", p.Op)
	}
	if p.Op == planner.OpAny {
		if len(p.Any) == 0 {
			return "", unsupported("an empty OR group")
		}
		parts := make([]string, len(p.Any))
		for i, m := range p.Any {
			s, err := d.predicateIn(m, schema, colText)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "(" + strings.Join(parts, " OR ") + ")", nil
	}
	ix := schema.FieldIndices(p.Col)
	if len(ix) == 0 || !columnType(schema.Field(ix[0]).Type) {
		return "", unsupported("a filter on column %q (of this type)", p.Col)
	}
	if d.CaseInsensitiveStrings && isString(schema.Field(ix[0]).Type) {
		switch p.Op {
		case planner.OpEq, planner.OpIn, planner.OpIsNull, planner.OpIsNotNull:
		default:
			return "", unsupported("%s on a string column in the %s dialect (case-insensitive collations)", p.Op, d.Name)
		}
	}
	col := d.Ident(p.Col)
	if colText != nil {
		if col = colText(p.Col); col == "" {
			return "", unsupported("a filter on column %q", p.Col)
		}
	}
	lit := func(l *planner.Literal) (string, error) {
		if l == nil {
			return "", unsupported("a missing value")
		}
		return d.literal(*l)
	}
	switch p.Op {
	case planner.OpIsNull:
		return col + " IS NULL", nil
	case planner.OpIsNotNull:
		return col + " IS NOT NULL", nil
	case planner.OpEq, planner.OpNeq, planner.OpLt, planner.OpLte, planner.OpGt, planner.OpGte:
		v, err := lit(p.Value)
		if err != nil {
			return "", err
		}
		return col + " " + cmpOps[p.Op] + " " + v, nil
	case planner.OpIn, planner.OpNotIn:
		if len(p.Values) == 0 {
			return "", unsupported("an empty list")
		}
		vs := make([]string, len(p.Values))
		for i := range p.Values {
			v, err := lit(&p.Values[i])
			if err != nil {
				return "", err
			}
			vs[i] = v
		}
		kw := " IN ("
		if p.Op == planner.OpNotIn {
			kw = " NOT IN ("
		}
		return col + kw + strings.Join(vs, ", ") + ")", nil
	case planner.OpRange:
		if p.Min != nil && p.Max != nil {
			lo, err := lit(p.Min)
			if err != nil {
				return "", err
			}
			hi, err := lit(p.Max)
			if err != nil {
				return "", err
			}
			return col + " BETWEEN " + lo + " AND " + hi, nil
		}
		var parts []string
		if p.Min != nil {
			v, err := lit(p.Min)
			if err != nil {
				return "", err
			}
			parts = append(parts, col+" >= "+v)
		}
		if p.Max != nil {
			v, err := lit(p.Max)
			if err != nil {
				return "", err
			}
			parts = append(parts, col+" <= "+v)
		}
		if len(parts) == 0 {
			return "", unsupported("an open range")
		}
		return "(" + strings.Join(parts, " AND ") + ")", nil
	}
	return "", unsupported("filter op %s", p.Op)
}

var cmpOps = map[planner.Op]string{
	planner.OpEq: "=", planner.OpNeq: "<>", planner.OpLt: "<", planner.OpLte: "<=", planner.OpGt: ">", planner.OpGte: ">=",
}

// columnType reports whether filters on a column of type t are pushed:
// float32 (compared as float64 remotely), decimals, timestamps and nested
// types are not.
func columnType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING, arrow.BOOL, arrow.DATE32:
		return true
	case arrow.DICTIONARY:
		return columnType(t.(*arrow.DictionaryType).ValueType)
	}
	return false
}

// isString reports whether t holds text.
func isString(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING:
		return true
	case arrow.DICTIONARY:
		return isString(t.(*arrow.DictionaryType).ValueType)
	}
	return false
}

// literal prints one typed value.
func (d Dialect) literal(l planner.Literal) (string, error) {
	switch v := l.Value.(type) {
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "", unsupported("a non-finite number")
		}
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s, nil
	case string:
		if strings.ContainsRune(v, 0) {
			return "", unsupported("a string with a NUL byte")
		}
		if d.backslash {
			v = strings.ReplaceAll(v, `\`, `\\`)
		}
		return "'" + strings.ReplaceAll(v, "'", "''") + "'", nil
	case bool:
		if v {
			return "TRUE", nil
		}
		return "FALSE", nil
	case int32:
		if l.Type != nil && l.Type.ID() == arrow.DATE32 {
			return "DATE '" + time.Unix(int64(v)*86400, 0).UTC().Format("2006-01-02") + "'", nil
		}
	}
	return "", unsupported("a %T value", l.Value)
}
