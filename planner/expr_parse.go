package planner

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
)

// The boolean, comparison, string and conditional levels of the expression
// grammar (ParseExpr), and the printing of the calls they produce:
//
//	expr    = and { OR and }
//	and     = not { AND not }
//	not     = NOT not | cmp
//	cmp     = concat [ ("=" | "!=" | "<>" | "<" | "<=" | ">" | ">=") concat
//	                 | IS [NOT] NULL
//	                 | [NOT] (LIKE | ILIKE) concat
//	                 | [NOT] IN "(" expr { "," expr } ")"
//	                 | [NOT] BETWEEN concat AND concat ]
//	concat  = sum { "||" sum }
//	sum     = term { ("+" | "-") term }
//	term    = unary { ("*" | "/" | "%") unary }
//	unary   = ("-" | "+") unary | primary
//	primary = number | string | NULL | TRUE | FALSE
//	        | DATE string | TIMESTAMP string | INTERVAL string
//	        | CASE [expr] WHEN expr THEN expr { WHEN expr THEN expr } [ELSE expr] END
//	        | (CAST | TRY_CAST) "(" expr AS type ")"
//	        | position "(" concat IN concat ")"
//	        | CURRENT_DATE | name | func "(" [ expr { "," expr } ] ")" | "(" expr ")"
//	string  = "'" { any char, '' for a quote } "'"

// Printing precedences (higher binds tighter).
const (
	precOr = 1 + iota
	precAnd
	precNot
	precCmp
	precConcat
	precSum
	precTerm
	precPrimary = 9
)

// keywords are the reserved words of the expression syntax: a column with
// one of these names is double-quoted inside expressions.
var keywords = map[string]bool{
	"and": true, "or": true, "not": true, "is": true, "null": true, "true": true, "false": true,
	"like": true, "ilike": true, "in": true, "between": true, "case": true, "when": true, "then": true,
	"else": true, "end": true, "as": true, "cast": true, "try_cast": true,
}

var cmpOps = map[string]string{"=": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

func callPrec(fn string) int {
	switch fn {
	case "or":
		return precOr
	case "and":
		return precAnd
	case "not":
		return precNot
	case "=", "!=", "<", "<=", ">", ">=", "is_null", "is_not_null", "like", "ilike", "in", "between":
		return precCmp
	case "||":
		return precConcat
	}
	return precPrimary
}

// lexQuoted reads a quoted token starting at s[i] == q with doubled quotes
// for the quote itself: its text, the offset after it, and false when unterminated.
func lexQuoted(s string, i int, q byte) (string, int, bool) {
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				b.WriteByte(q)
				j++
				continue
			}
			return b.String(), j + 1, true
		}
		b.WriteByte(s[j])
	}
	return "", len(s), false
}

// quoteString prints a string literal.
// QuoteString is s as a string literal of the expression language.
func QuoteString(s string) string { return quoteString(s) }

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (p *parser) isKeyword(w string) bool {
	t := p.peek()
	return t.kind == tokIdent && strings.EqualFold(t.text, w)
}

// expr parses the OR level (the whole grammar).
func (p *parser) expr(depth int) (Expr, error) {
	if depth > maxExprDepth {
		return nil, &ExprError{Pos: p.peek().off, Msg: "expression nested too deeply"}
	}
	return p.binaryLevel(depth, "or", p.and)
}

func (p *parser) and(depth int) (Expr, error) { return p.binaryLevel(depth, "and", p.not) }

// binaryLevel parses next { KEYWORD next } into left-associative calls of kw.
func (p *parser) binaryLevel(depth int, kw string, next func(int) (Expr, error)) (Expr, error) {
	l, err := next(depth)
	if err != nil {
		return nil, err
	}
	for p.isKeyword(kw) {
		p.pos++
		r, err := next(depth)
		if err != nil {
			return nil, err
		}
		l = &Call{Fn: kw, Args: []Expr{l, r}}
	}
	return l, nil
}

func (p *parser) not(depth int) (Expr, error) {
	if p.isKeyword("not") {
		if depth > maxExprDepth {
			return nil, &ExprError{Pos: p.peek().off, Msg: "expression nested too deeply"}
		}
		p.pos++
		x, err := p.not(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Call{Fn: "not", Args: []Expr{x}}, nil
	}
	return p.cmp(depth)
}

func (p *parser) cmp(depth int) (Expr, error) {
	l, err := p.concat(depth)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind == tokOp && cmpOps[t.text] != "" {
		p.pos++
		r, err := p.concat(depth)
		if err != nil {
			return nil, err
		}
		return &Call{Fn: cmpOps[t.text], Args: []Expr{l, r}}, nil
	}
	if p.isKeyword("is") {
		p.pos++
		fn := "is_null"
		if p.isKeyword("not") {
			p.pos++
			fn = "is_not_null"
		}
		if !p.isKeyword("null") {
			return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected NULL after IS, got %s", p.peek().describe())}
		}
		p.pos++
		return &Call{Fn: fn, Args: []Expr{l}}, nil
	}
	negate := false
	if p.isKeyword("not") {
		negate = true
		p.pos++
	}
	var out Expr
	switch {
	case p.isKeyword("like") || p.isKeyword("ilike"):
		fn := strings.ToLower(p.peek().text)
		p.pos++
		r, err := p.concat(depth)
		if err != nil {
			return nil, err
		}
		out = &Call{Fn: fn, Args: []Expr{l, r}}
	case p.isKeyword("in"):
		p.pos++
		if !p.isOp("(") {
			return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected '(' after IN, got %s", p.peek().describe())}
		}
		p.pos++
		args, err := p.list(depth)
		if err != nil {
			return nil, err
		}
		out = &Call{Fn: "in", Args: append([]Expr{l}, args...)}
	case p.isKeyword("between"):
		p.pos++
		lo, err := p.concat(depth)
		if err != nil {
			return nil, err
		}
		if !p.isKeyword("and") {
			return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected AND in BETWEEN, got %s", p.peek().describe())}
		}
		p.pos++
		hi, err := p.concat(depth)
		if err != nil {
			return nil, err
		}
		out = &Call{Fn: "between", Args: []Expr{l, lo, hi}}
	default:
		if negate {
			return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected LIKE, ILIKE, IN or BETWEEN after NOT, got %s", p.peek().describe())}
		}
		return l, nil
	}
	if negate {
		out = &Call{Fn: "not", Args: []Expr{out}}
	}
	return out, nil
}

// list parses expr { "," expr } ")" (after the opening parenthesis).
func (p *parser) list(depth int) ([]Expr, error) {
	var out []Expr
	for {
		a, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
		if p.isOp(",") {
			p.pos++
			continue
		}
		if !p.isOp(")") {
			return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected ',' or ')', got %s", p.peek().describe())}
		}
		p.pos++
		return out, nil
	}
}

func (p *parser) concat(depth int) (Expr, error) {
	l, err := p.sum(depth)
	if err != nil {
		return nil, err
	}
	for p.isOp("||") {
		p.pos++
		r, err := p.sum(depth)
		if err != nil {
			return nil, err
		}
		l = &Call{Fn: "||", Args: []Expr{l, r}}
	}
	return l, nil
}

// keywordPrimary parses the primaries that start with a keyword; ok false
// when t is not one (t is then a column or function name).
func (p *parser) keywordPrimary(t token, depth int) (Expr, bool, error) {
	w := strings.ToLower(t.text)
	next := p.toks[p.pos+1]
	switch {
	case w == "null":
		p.pos++
		return &Const{Typ: arrow.Null, Null: true}, true, nil
	case w == "true" || w == "false":
		p.pos++
		return &Const{Typ: arrow.FixedWidthTypes.Boolean, Bool: w == "true"}, true, nil
	case (w == "date" || w == "timestamp") && next.kind == tokString:
		p.pos += 2
		to, _ := funcs.ParseCastType(w)
		return &Cast{X: &Const{Typ: arrow.BinaryTypes.String, Str: next.text}, To: to}, true, nil
	case w == "interval" && next.kind == tokString:
		if _, err := funcs.ParseInterval(next.text); err != nil {
			return nil, true, &ExprError{Pos: next.off, Msg: err.Error()}
		}
		p.pos += 2
		return &Const{Typ: arrow.BinaryTypes.String, Str: next.text, Interval: true}, true, nil
	case w == "current_date" && !(next.kind == tokOp && next.text == "("):
		p.pos++
		return &Call{Fn: "current_date"}, true, nil
	case (w == "cast" || w == "try_cast") && next.kind == tokOp && next.text == "(":
		e, err := p.cast(w == "try_cast", depth)
		return e, true, err
	case w == "case":
		e, err := p.caseExpr(depth)
		return e, true, err
	case w == "not":
		return nil, true, &ExprError{Pos: t.off, Msg: "NOT needs parentheses here, e.g. -(NOT a) is not valid; write NOT (…) at the start of a condition"}
	case keywords[w]:
		return nil, true, &ExprError{Pos: t.off, Msg: fmt.Sprintf("unexpected keyword %s (double-quote a column named %q)", strings.ToUpper(w), t.text)}
	}
	return nil, false, nil
}

func (p *parser) cast(try bool, depth int) (Expr, error) {
	p.pos += 2 // CAST (
	x, err := p.expr(depth + 1)
	if err != nil {
		return nil, err
	}
	if !p.isKeyword("as") {
		return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected AS in CAST, got %s", p.peek().describe())}
	}
	p.pos++
	t := p.peek()
	to, ok := funcs.ParseCastType(t.text)
	if t.kind != tokIdent || !ok {
		return nil, &ExprError{Pos: t.off, Msg: fmt.Sprintf("unknown type %s (types: %s)", t.describe(), funcs.CastTypeNames)}
	}
	p.pos++
	if !p.isOp(")") {
		return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected ')', got %s", p.peek().describe())}
	}
	p.pos++
	return &Cast{X: x, To: to, Try: try}, nil
}

func (p *parser) caseExpr(depth int) (Expr, error) {
	p.pos++ // CASE
	var subject Expr
	if !p.isKeyword("when") {
		s, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		subject = s
	}
	c := &Call{Fn: "case"}
	for p.isKeyword("when") {
		p.pos++
		cond, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if subject != nil {
			cond = &Call{Fn: "=", Args: []Expr{CloneExpr(subject), cond}}
		}
		if !p.isKeyword("then") {
			return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected THEN, got %s", p.peek().describe())}
		}
		p.pos++
		v, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		c.Args = append(c.Args, cond, v)
	}
	if len(c.Args) == 0 {
		return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected WHEN, got %s", p.peek().describe())}
	}
	if p.isKeyword("else") {
		p.pos++
		e, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		c.Args = append(c.Args, e)
	}
	if !p.isKeyword("end") {
		return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected END, got %s", p.peek().describe())}
	}
	p.pos++
	return c, nil
}

// position parses position(t IN s), the SQL form of strpos(s, t).
func (p *parser) position(name token, depth int) (Expr, error) {
	p.pos++ // (
	t, err := p.concat(depth + 1)
	if err != nil {
		return nil, err
	}
	if !p.isKeyword("in") {
		return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected IN in position(substring IN string), got %s", p.peek().describe())}
	}
	p.pos++
	s, err := p.concat(depth + 1)
	if err != nil {
		return nil, err
	}
	if !p.isOp(")") {
		return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected ')', got %s", p.peek().describe())}
	}
	p.pos++
	return &Call{Fn: "strpos", Args: []Expr{s, t}}, nil
}

// String implements Expr.
func (c *Cast) String() string {
	if c.Implicit {
		return c.X.String()
	}
	kw := "CAST"
	if c.Try {
		kw = "TRY_CAST"
	}
	return kw + "(" + c.X.String() + " AS " + castTypeName(c.To) + ")"
}

// castTypeName is the CAST name of an expression type.
func castTypeName(t arrow.DataType) string {
	switch t.ID() {
	case arrow.INT64:
		return "bigint"
	case arrow.FLOAT64:
		return "double"
	case arrow.STRING, arrow.LARGE_STRING:
		return "varchar"
	case arrow.BOOL:
		return "boolean"
	case arrow.DATE32:
		return "date"
	case arrow.TIMESTAMP:
		return "timestamp"
	}
	return t.String()
}

// operatorString prints the calls of operators and special forms; false
// for a plain function call.
func (c *Call) operatorString() (string, bool) {
	p := callPrec(c.Fn)
	wrap := func(e Expr, minPrec int) string {
		if exprPrec(e) < minPrec {
			return "(" + e.String() + ")"
		}
		return e.String()
	}
	switch c.Fn {
	case "or", "and", "=", "!=", "<", "<=", ">", ">=", "||":
		op := strings.ToUpper(c.Fn)
		lp, rp := p, p+1
		if p == precCmp {
			lp = precConcat
		}
		return wrap(c.Args[0], lp) + " " + op + " " + wrap(c.Args[1], rp), true
	case "not":
		return "NOT " + wrap(c.Args[0], precNot), true
	case "is_null":
		return wrap(c.Args[0], precConcat) + " IS NULL", true
	case "is_not_null":
		return wrap(c.Args[0], precConcat) + " IS NOT NULL", true
	case "like", "ilike":
		return wrap(c.Args[0], precConcat) + " " + strings.ToUpper(c.Fn) + " " + wrap(c.Args[1], precConcat), true
	case "between":
		return wrap(c.Args[0], precConcat) + " BETWEEN " + wrap(c.Args[1], precConcat) + " AND " + wrap(c.Args[2], precConcat), true
	case "in":
		parts := make([]string, len(c.Args)-1)
		for i, a := range c.Args[1:] {
			parts[i] = a.String()
		}
		return wrap(c.Args[0], precConcat) + " IN (" + strings.Join(parts, ", ") + ")", true
	case "case":
		var b strings.Builder
		b.WriteString("CASE")
		k := 0
		for ; k+1 < len(c.Args); k += 2 {
			b.WriteString(" WHEN " + c.Args[k].String() + " THEN " + c.Args[k+1].String())
		}
		if k < len(c.Args) {
			b.WriteString(" ELSE " + c.Args[k].String())
		}
		b.WriteString(" END")
		return b.String(), true
	case "current_date":
		if len(c.Args) == 0 {
			return "current_date", true
		}
	}
	return "", false
}

// value is the constant as a funcs.Value.
func (c *Const) value() *funcs.Value {
	return &funcs.Value{Type: c.Typ, Null: c.Null, Int: c.Int, Float: c.Float, Str: c.Str, Bool: c.Bool}
}

// constOf is the Const of a funcs.Value.
func constOf(v *funcs.Value) *Const {
	return &Const{Typ: v.Type, Null: v.Null, Int: v.Int, Float: v.Float, Str: v.Str, Bool: v.Bool}
}
