// Package sqlgen is the one SQL generator: it prints a logical plan (a
// subtree of the planner's nodes over one remote table) as a single SELECT
// statement in a remote's dialect. It is what Quarry sends to an Arrow
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
// spelled out, on keys the remote orders as the engine does). Predicates are printed only when the remote evaluates them
// exactly as the engine does (Printable); anything else is an
// ErrUnsupported error and stays local. Round trip: the SQL of a plan,
// parsed by sqlfront and optimized, plans back to the same tree
// (sqlgen_test.go).
package sqlgen

import (
	"errors"
	"fmt"
	"math"
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

// Generate prints plan n, whose one Scan reads table, as one SELECT in
// dialect d. A node or predicate it cannot print is an error wrapping
// ErrUnsupported.
func Generate(n planner.Node, table Table, d Dialect) (string, error) {
	var (
		limit  *planner.Limit
		sort   *planner.Sort
		agg    *planner.Aggregate
		preds  []planner.Predicate
		having []planner.Predicate
		scan   *planner.Scan
	)
	// Walk down in SQL block order: a Limit (with a Sort right under it,
	// but for Projects: a top-N), then Filters over an Aggregate
	// (HAVING), the Aggregate, Filters (WHERE), the Scan; Projects
	// anywhere only pick columns by name (the select list is the plan's
	// output schema). A Sort without a Limit right above it is left to
	// the engine: order alone saves no bytes.
	cur, underLimit := n, false
	for {
		switch x := cur.(type) {
		case *planner.Limit:
			if limit != nil || agg != nil || len(preds) > 0 {
				return "", unsupported("%s", x.Describe())
			}
			limit, cur, underLimit = x, x.Input, true
			continue
		case *planner.Project:
			cur = x.Input
			continue
		case *planner.Sort:
			if !underLimit {
				return "", unsupported("%s without a limit", x.Describe())
			}
			sort, cur, underLimit = x, x.Input, false
			continue
		case *planner.Aggregate:
			if agg != nil {
				return "", unsupported("%s", x.Describe())
			}
			agg, cur, underLimit = x, x.Input, false
			having, preds = preds, nil
			continue
		case *planner.Filter:
			preds = append(preds, x.Preds...)
			cur, underLimit = x.Input, false
			continue
		case *planner.Scan:
			scan = x
		default:
			return "", unsupported("%s", cur.Describe())
		}
		break
	}
	preds = append(append([]planner.Predicate(nil), scan.Filters...), preds...)

	var b strings.Builder
	b.WriteString("SELECT ")
	var items []string
	// expr is the SQL of a column of the aggregate's output (a group key
	// or an aggregate call); nil without an aggregate.
	var expr func(string) string
	if agg != nil {
		calls := make(map[string]string, len(agg.GroupBy)+len(agg.Aggs))
		for _, k := range agg.GroupBy {
			items = append(items, d.Ident(k))
			calls[k] = d.Ident(k)
		}
		for _, a := range agg.Aggs {
			s, err := d.aggregate(a)
			if err != nil {
				return "", err
			}
			items = append(items, s+" AS "+d.Ident(a.Name))
			calls[a.Name] = s
		}
		items = pick(items, n.Schema(), agg.Out)
		expr = func(name string) string { return calls[name] }
	} else {
		for _, f := range n.Schema().Fields() {
			if len(scan.Out.FieldIndices(f.Name)) == 0 {
				return "", unsupported("column %q is not read from the table", f.Name)
			}
			items = append(items, d.Ident(f.Name))
		}
	}
	if len(items) == 0 {
		return "", unsupported("a plan without columns")
	}
	b.WriteString(strings.Join(items, ", "))
	b.WriteString(" FROM ")
	b.WriteString(d.From(table))
	if err := d.conjunction(&b, " WHERE ", preds, scan.Out, nil); err != nil {
		return "", err
	}
	if agg != nil && len(agg.GroupBy) > 0 {
		keys := make([]string, len(agg.GroupBy))
		for i, k := range agg.GroupBy {
			keys[i] = d.Ident(k)
		}
		b.WriteString(" GROUP BY ")
		b.WriteString(strings.Join(keys, ", "))
	}
	if err := d.conjunction(&b, " HAVING ", having, schemaOf(agg), expr); err != nil {
		return "", err
	}
	if sort != nil {
		s, err := d.orderBy(sort, n.Schema(), expr)
		if err != nil {
			return "", err
		}
		b.WriteString(" ORDER BY ")
		b.WriteString(s)
	}
	if limit != nil {
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
	return b.String(), nil
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

// pick returns the items (one per field of from) for the fields of out,
// in out's order (nil when one is missing).
func pick(items []string, out, from *arrow.Schema) []string {
	got := make([]string, 0, out.NumFields())
	for _, f := range out.Fields() {
		ix := from.FieldIndices(f.Name)
		if len(ix) == 0 {
			return nil
		}
		got = append(got, items[ix[0]])
	}
	return got
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
