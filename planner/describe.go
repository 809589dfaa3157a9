package planner

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Describe implements Node.
func (s *Scan) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Scan: %s", s.Dataset)
	if s.Columns != nil {
		fmt.Fprintf(&b, " columns=[%s]", strings.Join(s.Columns, ", "))
	}
	if len(s.Filters) > 0 {
		fmt.Fprintf(&b, " filters=[%s]", describePreds(s.Filters))
	}
	if len(s.ZoneFilters) > 0 {
		fmt.Fprintf(&b, " zone-filter=[%s]", describePreds(s.ZoneFilters))
	}
	if s.Pushed != nil {
		fmt.Fprintf(&b, " pushed=[%s]", describePushed(s.Pushed))
	}
	return b.String()
}

// Describe implements Node.
func (f *Filter) Describe() string { return "Filter: " + describePreds(f.Preds) }

// Describe implements Node.
func (p *Project) Describe() string { return "Project: " + strings.Join(p.Columns, ", ") }

// Describe implements Node.
func (a *Aggregate) Describe() string {
	parts := make([]string, len(a.Aggs))
	for i, e := range a.Aggs {
		col := e.Col
		if col != "*" {
			col = quoteIdent(col)
		}
		if e.Fn == AggQuantile {
			parts[i] = fmt.Sprintf("quantile(%s, %s) AS %s", col, strconv.FormatFloat(e.Q, 'g', -1, 64), e.Name)
			continue
		}
		parts[i] = fmt.Sprintf("%s(%s%s)%s AS %s", e.Fn, col, e.describeArg(), e.describeFilter(), e.Name)
	}
	s := "Aggregate: " + strings.Join(parts, ", ")
	if len(a.GroupBy) > 0 {
		s += " BY " + strings.Join(a.GroupBy, ", ")
	}
	return s
}

// Describe implements Node.
func (d *Distinct) Describe() string { return "Distinct" }

// Describe implements Node.
func (d *Deduplicate) Describe() string {
	if len(d.Columns) == 0 {
		return "Deduplicate: keep first"
	}
	return "Deduplicate: keep first BY " + strings.Join(d.Columns, ", ")
}

// Describe implements Node.
func (c *Compute) Describe() string {
	parts := make([]string, len(c.Exprs))
	for i, e := range c.Exprs {
		parts[i] = e.Expr.String() + " AS " + quoteIdent(e.Name)
	}
	return "Compute: " + strings.Join(parts, ", ")
}

// Describe implements Node.
func (s *Sort) Describe() string {
	parts := make([]string, len(s.Keys))
	for i, k := range s.Keys {
		dir := "asc"
		if k.Desc {
			dir = "desc"
		}
		parts[i] = k.Col + " " + dir
		if k.NullsFirst {
			parts[i] += " nulls first"
		}
	}
	return "Sort: " + strings.Join(parts, ", ") + " (nulls last)"
}

// Describe implements Node.
func (l *Limit) Describe() string {
	if l.Count < 0 {
		return fmt.Sprintf("Limit: offset=%d", l.Offset)
	}
	return fmt.Sprintf("Limit: offset=%d count=%d", l.Offset, l.Count)
}

// String prints the plan as an indented tree, one node per line, root first.
// The format is stable (golden-tested) and is what estimate_query returns as plan.
func String(n Node) string {
	var b strings.Builder
	Inspect(n, func(n Node, depth int) bool {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(n.Describe())
		b.WriteByte('\n')
		return true
	})
	return b.String()
}

func describePreds(ps []Predicate) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, " AND ")
}

// String renders the predicate in a SQL-like form, e.g. `price >= 10`;
// case-insensitive string ops are suffixed with " (ci)".
func (p Predicate) String() string {
	s := p.str()
	if p.CaseInsensitive {
		s += " (ci)"
	}
	return s
}

func (p Predicate) str() string {
	switch p.Op {
	case OpAny:
		parts := make([]string, len(p.Any))
		for i, m := range p.Any {
			parts[i] = m.String()
		}
		return "(" + strings.Join(parts, " OR ") + ")"
	case OpIsNull:
		return p.Col + " IS NULL"
	case OpIsNotNull:
		return p.Col + " IS NOT NULL"
	case OpIn, OpNotIn:
		vs := make([]string, len(p.Values))
		for i := range p.Values {
			vs[i] = p.Values[i].String()
		}
		if p.Op == OpNotIn {
			return p.Col + " NOT IN (" + strings.Join(vs, ", ") + ")"
		}
		return p.Col + " IN (" + strings.Join(vs, ", ") + ")"
	case OpRange:
		switch {
		case p.Min != nil && p.Max != nil:
			return fmt.Sprintf("%s BETWEEN %s AND %s", p.Col, p.Min, p.Max)
		case p.Min != nil:
			return fmt.Sprintf("%s >= %s", p.Col, p.Min)
		case p.Max != nil:
			return fmt.Sprintf("%s <= %s", p.Col, p.Max)
		}
		return p.Col + " IS ANY"
	}
	sym := string(p.Op)
	if d, ok := p.Op.Lookup(); ok && d.SQL != "" {
		sym = d.SQL
	}
	return fmt.Sprintf("%s %s %s", p.Col, sym, p.Value)
}

// String renders the literal as it would appear in SQL.
func (l *Literal) String() string {
	if l == nil {
		return "NULL"
	}
	switch v := l.Value.(type) {
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case int64:
		if ts, ok := l.Type.(*arrow.TimestampType); ok {
			return "'" + arrow.Timestamp(v).ToTime(ts.Unit).UTC().Format(time.RFC3339Nano) + "'"
		}
		return strconv.FormatInt(v, 10)
	case int32:
		if l.Type.ID() == arrow.DATE32 {
			return "'" + arrow.Date32(v).FormattedString() + "'"
		}
		return strconv.FormatInt(int64(v), 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(l.Value)
}
