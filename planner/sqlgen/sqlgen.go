// Package sqlgen is the one SQL generator: it prints a logical plan (a
// subtree of the planner's nodes over one remote table) as a single SELECT
// statement in a remote's dialect. It is what Quarry sends to an Arrow
// Flight SQL remote (catalog/flightsrc); nothing else produces SQL for a
// remote, so no text from a request ever reaches one except through the
// values of typed, validated plan nodes printed here.
//
// Supported, from the bottom up: a Scan (its columns and pushed filters),
// Filters over it, one Aggregate (plain group keys; count, sum, min, max,
// avg without per-aggregate filters), Projects that pick columns, and a
// Limit on top. Predicates are printed only when the remote evaluates them
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
}

// Dialects known by name: PostgreSQL-like (DuckDB, DataFusion, GizmoSQL,
// SQLite, Quarry itself: "double-quoted" identifiers, standard strings)
// and MySQL-like (Doris, StarRocks: `backquoted` identifiers, backslash
// escapes in strings).
var (
	Postgres = Dialect{Name: "postgres", quote: '"'}
	MySQL    = Dialect{Name: "mysql", quote: '`', backslash: true, CaseInsensitiveStrings: true}
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
		limit *planner.Limit
		agg   *planner.Aggregate
		preds []planner.Predicate
		scan  *planner.Scan
	)
	// Walk down in SQL block order: a Limit, then an Aggregate, Filters,
	// the Scan; Projects anywhere only pick columns by name (the select
	// list is the plan's output schema).
	cur := n
	for {
		switch x := cur.(type) {
		case *planner.Limit:
			if limit != nil || agg != nil || len(preds) > 0 {
				return "", unsupported("%s", x.Describe())
			}
			limit, cur = x, x.Input
			continue
		case *planner.Project:
			cur = x.Input
			continue
		case *planner.Aggregate:
			if agg != nil || len(preds) > 0 {
				return "", unsupported("%s", x.Describe())
			}
			agg, cur = x, x.Input
			continue
		case *planner.Filter:
			preds = append(preds, x.Preds...)
			cur = x.Input
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
	if agg != nil {
		for _, k := range agg.GroupBy {
			items = append(items, d.Ident(k))
		}
		for _, a := range agg.Aggs {
			s, err := d.aggregate(a)
			if err != nil {
				return "", err
			}
			items = append(items, s+" AS "+d.Ident(a.Name))
		}
		items = pick(items, n.Schema(), agg.Out)
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
	if len(preds) > 0 {
		parts := make([]string, len(preds))
		for i, p := range preds {
			s, err := d.predicateIn(p, scan.Out)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		b.WriteString(" WHERE ")
		b.WriteString(strings.Join(parts, " AND "))
	}
	if agg != nil && len(agg.GroupBy) > 0 {
		keys := make([]string, len(agg.GroupBy))
		for i, k := range agg.GroupBy {
			keys[i] = d.Ident(k)
		}
		b.WriteString(" GROUP BY ")
		b.WriteString(strings.Join(keys, ", "))
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
	case planner.AggSum, planner.AggMin, planner.AggMax, planner.AggAvg:
		return string(a.Fn) + "(" + d.Ident(a.Col) + ")", nil
	}
	return "", unsupported("aggregate %s", a.Fn)
}

// Printable reports whether predicate p over a column of type t prints as
// SQL that a remote evaluates as the engine does: comparisons, in/not_in,
// range and null tests on integer, float64, string, boolean and date
// columns (not case-insensitive ones), and OR groups of those.
func (d Dialect) Printable(p planner.Predicate, schema *arrow.Schema) bool {
	_, err := d.predicateIn(p, schema)
	return err == nil
}

// predicateIn prints p; schema must hold p's column with a printable type.
func (d Dialect) predicateIn(p planner.Predicate, schema *arrow.Schema) (string, error) {
	if p.CaseInsensitive {
		return "", unsupported("case-insensitive %s", p.Op)
	}
	if p.Op == planner.OpAny {
		if len(p.Any) == 0 {
			return "", unsupported("an empty OR group")
		}
		parts := make([]string, len(p.Any))
		for i, m := range p.Any {
			s, err := d.predicateIn(m, schema)
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
