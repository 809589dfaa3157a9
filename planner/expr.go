package planner

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/funcs"
)

// Expr is a node of an expression tree: ColRef, Const, Neg, Binary, Cast
// or Call. Expression trees are pure data, typed by BindExpr.
//
// Typing: inside an expression every integer column widens to int64, every
// float column to float64 and a dictionary-encoded string column decodes to
// its string type; boolean, string, date32 and timestamp columns keep their
// type (funcs.ExprType). +, -, * and % of two int64 operands are int64
// (overflow is a runtime error); / is always float64; any float64 operand
// makes the result float64. Function and operator calls are typed by the
// registry (funcs.ScalarDecl: argument classes with implicit casts, result
// type). A bare column reference keeps the column's type (it may be of any
// type: "price AS p" renames a column).
type Expr interface {
	// Type is the result type (see above), or a bare column's type.
	Type() arrow.DataType
	// String is the normalized text of the expression (the default output
	// name of an expression column).
	String() string
	isExpr()
}

// ColRef references an input column by name; Index is its position in the
// input schema of the node holding the expression (kept current by Resolve).
type ColRef struct {
	Name  string
	Index int
	Typ   arrow.DataType
}

// Const is a literal or a folded constant, or the null constant (Null;
// e.g. a folded division by zero, or the literal NULL, typed arrow.Null
// until an argument class or BindExpr gives it a type). Typ is int64, date32
// or a timestamp (Int holds the value), float64 (Float), a string (Str) or
// boolean (Bool).
type Const struct {
	Typ   arrow.DataType
	Int   int64
	Float float64
	Null  bool
	Str   string
	Bool  bool
	// Interval: the string is an INTERVAL literal (printed as one).
	Interval bool
}

// Cast converts X to type To: CAST(x AS type), TRY_CAST (Try: null when a
// value does not convert) or an implicit cast inserted by BindExpr for an
// argument class (Implicit: printed as X alone).
type Cast struct {
	X        Expr
	To       arrow.DataType
	Try      bool
	Implicit bool
}

// Neg is unary minus.
type Neg struct {
	X   Expr
	Typ arrow.DataType
}

// Binary is L Op R with Op one of '+', '-', '*', '/', '%'. Fn, set by
// BindExpr when an operand is a date, a timestamp or an interval literal, is
// the registered operator computing it (funcs.OpAddInterval, ...): the node
// then evaluates as the call Fn(L, R) (see Binary.Call).
type Binary struct {
	Op   byte
	L, R Expr
	Typ  arrow.DataType
	Fn   string
}

// Call is the call a temporal Binary (Fn set) evaluates as; nil for
// arithmetic on numbers.
func (b *Binary) Call() *Call {
	if b.Fn == "" {
		return nil
	}
	return &Call{Fn: b.Fn, Args: []Expr{b.L, b.R}, Typ: b.Typ}
}

// Call is a call of a registered scalar function (funcs.LookupScalar):
// abs(x), round(x, digits) with digits an integer literal in [-18, 18],
// lower(s), ..., or an operator or special form the parser turns into a
// call of its registered meaning: "=" ... ">=", "and", "or", "not",
// "is_null", "is_not_null", "like", "ilike", "in", "between", "case", "||".
type Call struct {
	Fn   string
	Args []Expr
	Typ  arrow.DataType
}

// MaxExprLen is the longest accepted expression text, in bytes.
const MaxExprLen = 1000

const maxExprDepth = 64

func (*ColRef) isExpr() {}
func (*Const) isExpr()  {}
func (*Neg) isExpr()    {}
func (*Binary) isExpr() {}
func (*Call) isExpr()   {}
func (*Cast) isExpr()   {}

// Type implements Expr.
func (c *Cast) Type() arrow.DataType { return c.To }

// Type implements Expr.
func (c *ColRef) Type() arrow.DataType { return c.Typ }

// Type implements Expr.
func (c *Const) Type() arrow.DataType { return c.Typ }

// Type implements Expr.
func (n *Neg) Type() arrow.DataType { return n.Typ }

// Type implements Expr.
func (b *Binary) Type() arrow.DataType { return b.Typ }

// Type implements Expr.
func (c *Call) Type() arrow.DataType { return c.Typ }

// String implements Expr.
func (c *ColRef) String() string { return quoteIdent(c.Name) }

// String implements Expr.
func (c *Const) String() string {
	switch {
	case c.Null:
		return "null"
	case c.Typ != nil && c.Typ.ID() == arrow.FLOAT64:
		return formatFloatLit(c.Float)
	case c.Typ != nil && funcs.IsString(c.Typ) && c.Interval:
		return "INTERVAL " + quoteString(c.Str)
	case c.Typ != nil && funcs.IsString(c.Typ):
		return quoteString(c.Str)
	case c.Typ != nil && c.Typ.ID() == arrow.BOOL:
		return strconv.FormatBool(c.Bool)
	case c.Typ != nil && (c.Typ.ID() == arrow.DATE32 || c.Typ.ID() == arrow.TIMESTAMP):
		return "CAST(" + quoteString(c.value().Format()) + " AS " + castTypeName(c.Typ) + ")"
	}
	return strconv.FormatInt(c.Int, 10)
}

// String implements Expr.
func (n *Neg) String() string {
	s := n.X.String()
	switch {
	case exprPrec(n.X) < precPrimary:
		s = "(" + s + ")"
	case strings.HasPrefix(s, "-"):
		return "- " + s // -(-x) prints as "- -x"
	}
	return "-" + s
}

// String implements Expr.
func (b *Binary) String() string {
	p := exprPrec(b)
	l, r := b.L.String(), b.R.String()
	if exprPrec(b.L) < p {
		l = "(" + l + ")"
	}
	if exprPrec(b.R) <= p {
		r = "(" + r + ")"
	}
	return l + " " + string(b.Op) + " " + r
}

// String implements Expr.
func (c *Call) String() string {
	if s, ok := c.operatorString(); ok {
		return s
	}
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = a.String()
	}
	return c.Fn + "(" + strings.Join(parts, ", ") + ")"
}

func exprPrec(e Expr) int {
	switch x := e.(type) {
	case *Binary:
		if x.Op == '+' || x.Op == '-' {
			return precSum
		}
		return precTerm
	case *Call:
		return callPrec(x.Fn)
	case *Cast:
		if x.Implicit {
			return exprPrec(x.X)
		}
	}
	return precPrimary // a negative constant prints like a unary minus
}

// formatFloatLit prints a float so that it re-parses as a float.
func formatFloatLit(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEIN") {
		s += ".0"
	}
	return s
}

// quoteIdent returns name as is when it lexes as an identifier, else
// double-quoted with inner quotes doubled.
func quoteIdent(name string) string {
	if lw := strings.ToLower(name); isIdent(name) && !keywords[lw] && lw != "current_date" {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool {
	return r == '_' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isIdent(s string) bool {
	for i, r := range s {
		if i == 0 && !isIdentStart(r) || i > 0 && !isIdentPart(r) {
			return false
		}
	}
	return s != ""
}

// LooksLikeExpr reports whether s (which is not a column name) should be
// parsed as an expression: it holds an operator, a parenthesis, a quote,
// an " AS " alias or a keyword of the expression syntax (IS, NOT, AND, ...).
func LooksLikeExpr(s string) bool {
	if strings.ContainsAny(s, `+-*/%()"'=<>!|`) {
		return true
	}
	f := strings.Fields(s)
	if len(f) >= 3 && strings.EqualFold(f[len(f)-2], "as") {
		return true
	}
	for _, w := range f {
		if lw := strings.ToLower(w); keywords[lw] && lw != "as" {
			return true
		}
	}
	return false
}

// ExprError is a parse error: Pos is the byte offset in the text.
type ExprError struct {
	Pos int
	Msg string
}

// Error implements error.
func (e *ExprError) Error() string { return fmt.Sprintf("at offset %d: %s", e.Pos, e.Msg) }

// ParseExpr parses an expression with an optional trailing "AS name"
// (alias, "" when absent). Column references are returned unbound (Index
// -1, Typ nil); BindExpr types them.
//
// Grammar:
//
//	full    = expr [ "AS" name ]
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/") unary }
//	unary   = ("-" | "+") unary | primary
//	primary = number | name | func "(" expr { "," expr } ")" | "(" expr ")"
//	name    = identifier | '"' { any char, "" for a quote } '"'
//
// Identifiers start with a letter or _ and continue with letters, digits, _
// and '.'. Numbers are decimal: 12, 1.5, .5, 1e-3 (int64 when they have no
// fraction or exponent).
func ParseExpr(text string) (e Expr, alias string, err error) {
	if len(text) > MaxExprLen {
		return nil, "", &ExprError{Pos: MaxExprLen, Msg: fmt.Sprintf("expression longer than %d characters", MaxExprLen)}
	}
	p := &parser{src: text}
	if err := p.lex(); err != nil {
		return nil, "", err
	}
	if e, err = p.expr(0); err != nil {
		return nil, "", err
	}
	if t := p.peek(); t.kind == tokIdent && strings.EqualFold(t.text, "as") {
		p.pos++
		n := p.peek()
		if n.kind != tokIdent && n.kind != tokQuoted {
			return nil, "", &ExprError{Pos: n.off, Msg: "expected a name after AS"}
		}
		p.pos++
		alias = n.text
		if alias == "" {
			return nil, "", &ExprError{Pos: n.off, Msg: "the name after AS is empty"}
		}
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, "", &ExprError{Pos: t.off, Msg: fmt.Sprintf("unexpected %s", t.describe())}
	}
	return e, alias, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokNum
	tokIdent
	tokQuoted
	tokOp     // + - * / % ( ) , || = != <> < <= > >=
	tokString // 'text' ('' for a quote)
)

type token struct {
	kind tokKind
	text string
	off  int
}

func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of expression"
	case tokQuoted:
		return strconv.Quote(t.text)
	case tokString:
		return quoteString(t.text)
	}
	return "'" + t.text + "'"
}

type parser struct {
	src  string
	toks []token
	pos  int
}

func (p *parser) lex() error {
	s := p.src
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			i += w
		case strings.HasPrefix(s[i:], "||") || strings.HasPrefix(s[i:], "!=") || strings.HasPrefix(s[i:], "<>") ||
			strings.HasPrefix(s[i:], "<=") || strings.HasPrefix(s[i:], ">="):
			p.toks = append(p.toks, token{tokOp, s[i : i+2], i})
			i += 2
		case strings.ContainsRune("+-*/%(),=<>", r):
			p.toks = append(p.toks, token{tokOp, string(r), i})
			i++
		case r == '\'':
			text, j, ok := lexQuoted(s, i, '\'')
			if !ok {
				return &ExprError{Pos: i, Msg: "unterminated string literal (close it with ', write '' for a quote)"}
			}
			p.toks = append(p.toks, token{tokString, text, i})
			i = j
		case r >= '0' && r <= '9' || r == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < len(s) && s[k] >= '0' && s[k] <= '9' {
					for k < len(s) && s[k] >= '0' && s[k] <= '9' {
						k++
					}
					j = k
				}
			}
			if j < len(s) {
				if r2, _ := utf8.DecodeRuneInString(s[j:]); isIdentPart(r2) {
					return &ExprError{Pos: i, Msg: fmt.Sprintf("malformed number %q", s[i:j+1])}
				}
			}
			p.toks = append(p.toks, token{tokNum, s[i:j], i})
			i = j
		case isIdentStart(r):
			j := i + w
			for j < len(s) {
				r2, w2 := utf8.DecodeRuneInString(s[j:])
				if !isIdentPart(r2) {
					break
				}
				j += w2
			}
			p.toks = append(p.toks, token{tokIdent, s[i:j], i})
			i = j
		case r == '"':
			text, j, ok := lexQuoted(s, i, '"')
			if !ok {
				return &ExprError{Pos: i, Msg: "unterminated quoted column name"}
			}
			p.toks = append(p.toks, token{tokQuoted, text, i})
			i = j
		default:
			return &ExprError{Pos: i, Msg: fmt.Sprintf("unexpected character %q", r)}
		}
	}
	p.toks = append(p.toks, token{tokEOF, "", len(s)})
	return nil
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) isOp(op string) bool {
	t := p.toks[p.pos]
	return t.kind == tokOp && t.text == op
}

func (p *parser) sum(depth int) (Expr, error) {
	if depth > maxExprDepth {
		return nil, &ExprError{Pos: p.peek().off, Msg: "expression nested too deeply"}
	}
	l, err := p.term(depth)
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.peek().text[0]
		p.pos++
		r, err := p.term(depth)
		if err != nil {
			return nil, err
		}
		l = &Binary{Op: op, L: l, R: r}
	}
	return l, nil
}

func (p *parser) term(depth int) (Expr, error) {
	l, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("%") {
		op := p.peek().text[0]
		p.pos++
		r, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		l = &Binary{Op: op, L: l, R: r}
	}
	return l, nil
}

func (p *parser) unary(depth int) (Expr, error) {
	if depth > maxExprDepth {
		return nil, &ExprError{Pos: p.peek().off, Msg: "expression nested too deeply"}
	}
	if p.isOp("-") {
		p.pos++
		if t := p.peek(); t.kind == tokNum && t.text == "9223372036854775808" { // -2^63: an int64, its magnitude is not
			p.pos++
			return &Const{Typ: arrow.PrimitiveTypes.Int64, Int: math.MinInt64}, nil
		}
		x, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Neg{X: x}, nil
	}
	if p.isOp("+") {
		p.pos++
		return p.unary(depth + 1)
	}
	return p.primary(depth)
}

func (p *parser) primary(depth int) (Expr, error) {
	t := p.peek()
	switch t.kind {
	case tokNum:
		p.pos++
		return parseNumber(t)
	case tokQuoted:
		p.pos++
		if t.text == "" {
			return nil, &ExprError{Pos: t.off, Msg: "empty quoted column name"}
		}
		return &ColRef{Name: t.text, Index: -1}, nil
	case tokString:
		p.pos++
		return &Const{Typ: arrow.BinaryTypes.String, Str: t.text}, nil
	case tokIdent:
		if e, ok, err := p.keywordPrimary(t, depth); ok || err != nil {
			return e, err
		}
		p.pos++
		if p.isOp("(") {
			return p.call(t, depth)
		}
		return &ColRef{Name: t.text, Index: -1}, nil
	case tokOp:
		if t.text == "(" {
			p.pos++
			e, err := p.expr(depth + 1)
			if err != nil {
				return nil, err
			}
			if !p.isOp(")") {
				return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected ')', got %s", p.peek().describe())}
			}
			p.pos++
			return e, nil
		}
	}
	return nil, &ExprError{Pos: t.off, Msg: fmt.Sprintf("expected a value, a column or '(', got %s", t.describe())}
}

func (p *parser) call(name token, depth int) (Expr, error) {
	fn := strings.ToLower(name.text)
	decl, known := funcs.LookupFunction(fn)
	if fn == "position" {
		return p.position(name, depth)
	}
	if !known {
		return nil, &ExprError{Pos: name.off, Msg: fmt.Sprintf("unknown function %q (allowed: %s)", name.text, strings.Join(funcs.ScalarNames(), ", "))}
	}
	p.pos++ // (
	c := &Call{Fn: fn}
	for !(decl.MinArgs == 0 && p.isOp(")") && len(c.Args) == 0) {
		a, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		c.Args = append(c.Args, a)
		if p.isOp(",") {
			p.pos++
			continue
		}
		if !p.isOp(")") {
			return nil, &ExprError{Pos: p.peek().off, Msg: fmt.Sprintf("expected ',' or ')', got %s", p.peek().describe())}
		}
		break
	}
	p.pos++ // )
	if len(c.Args) < decl.MinArgs || decl.MaxArgs >= 0 && len(c.Args) > decl.MaxArgs {
		return nil, &ExprError{Pos: name.off, Msg: fmt.Sprintf("%s takes %s argument(s), got %d", fn, decl.Arity(), len(c.Args))}
	}
	if len(c.Args) == 2 && decl.Digits {
		d, ok := constDigits(c.Args[1])
		if !ok {
			return nil, &ExprError{Pos: name.off, Msg: fmt.Sprintf("%s's digits must be an integer literal between -%d and %d", fn, funcs.MaxDigits, funcs.MaxDigits)}
		}
		c.Args[1] = &Const{Typ: arrow.PrimitiveTypes.Int64, Int: d}
	}
	return c, nil
}

// constDigits accepts an integer literal, possibly negated.
func constDigits(e Expr) (int64, bool) {
	neg := false
	for {
		n, ok := e.(*Neg)
		if !ok {
			break
		}
		neg, e = !neg, n.X
	}
	c, ok := e.(*Const)
	if !ok || c.Null || c.Typ.ID() != arrow.INT64 {
		return 0, false
	}
	d := c.Int
	if neg {
		d = -d
	}
	return d, d >= -funcs.MaxDigits && d <= funcs.MaxDigits
}

func parseNumber(t token) (Expr, error) {
	if !strings.ContainsAny(t.text, ".eE") {
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, &ExprError{Pos: t.off, Msg: fmt.Sprintf("integer %s is outside the int64 range (write it as a float, e.g. %s.0)", t.text, t.text)}
		}
		return &Const{Typ: arrow.PrimitiveTypes.Int64, Int: n}, nil
	}
	f, err := strconv.ParseFloat(t.text, 64)
	if errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
		return nil, &ExprError{Pos: t.off, Msg: fmt.Sprintf("number %s is beyond the float64 range (about 1.8e308)", t.text)}
	}
	if err != nil {
		return nil, &ExprError{Pos: t.off, Msg: fmt.Sprintf("malformed number %q", t.text)}
	}
	return &Const{Typ: arrow.PrimitiveTypes.Float64, Float: f}, nil
}

// ExprColumns returns the distinct column names e references, in first-seen order.
func ExprColumns(e Expr) []string {
	var out []string
	WalkExpr(e, func(x Expr) {
		if c, ok := x.(*ColRef); ok {
			for _, o := range out {
				if o == c.Name {
					return
				}
			}
			out = append(out, c.Name)
		}
	})
	return out
}

// WalkExpr calls f on every node of e, parents before children.
func WalkExpr(e Expr, f func(Expr)) {
	f(e)
	switch x := e.(type) {
	case *Neg:
		WalkExpr(x.X, f)
	case *Binary:
		WalkExpr(x.L, f)
		WalkExpr(x.R, f)
	case *Call:
		for _, a := range x.Args {
			WalkExpr(a, f)
		}
	case *Cast:
		WalkExpr(x.X, f)
	}
}

// CloneExpr deep-copies an expression.
func CloneExpr(e Expr) Expr {
	switch x := e.(type) {
	case *ColRef:
		c := *x
		return &c
	case *Const:
		c := *x
		return &c
	case *Neg:
		return &Neg{X: CloneExpr(x.X), Typ: x.Typ}
	case *Binary:
		return &Binary{Op: x.Op, L: CloneExpr(x.L), R: CloneExpr(x.R), Typ: x.Typ, Fn: x.Fn}
	case *Call:
		c := &Call{Fn: x.Fn, Typ: x.Typ}
		for _, a := range x.Args {
			c.Args = append(c.Args, CloneExpr(a))
		}
		return c
	case *Cast:
		c := *x
		c.X = CloneExpr(x.X)
		return &c
	}
	return e
}

// exprTypeError reports a column that cannot take part in arithmetic.
type exprTypeError struct {
	col string
	typ arrow.DataType
}

func (e *exprTypeError) Error() string {
	return fmt.Sprintf("column %q has type %s, which expressions cannot compute on (they take numbers, strings, booleans, dates and timestamps)", e.col, typeName(e.typ))
}

// unknownColError reports an unknown column referenced by an expression.
type unknownColError struct{ col string }

func (e *unknownColError) Error() string { return fmt.Sprintf("unknown column %q", e.col) }

// BindExpr resolves the column references of e against s and types every
// node (see Expr), inserting the implicit casts the registry's argument
// classes ask for. Errors: *unknownColError, *exprTypeError, *argTypeError.
func BindExpr(e Expr, s *arrow.Schema) error {
	_, bare := e.(*ColRef)
	if err := bind(e, s, bare); err != nil {
		return err
	}
	if e.Type().ID() == arrow.NULL { // an expression of nothing but NULLs
		typeNull(e, arrow.PrimitiveTypes.Int64)
	}
	return nil
}
