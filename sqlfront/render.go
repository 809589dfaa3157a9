package sqlfront

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// renderer prints SQL expressions in the planner's expression language.
// Column references resolve in scope; hook, when set, sees every node
// first and may replace it (aggregate and window calls, group keys).
type renderer struct {
	c     *compiler
	scope *scope
	hook  func(n *pg.Node) (text string, ok bool, err error)
	// sub, when set, lowers a scalar subquery to the column it joins in.
	sub func(sl *pg.SubLink) (string, error)
}

// quote is planner.QuoteIdent.
func quote(name string) string { return planner.QuoteIdent(name) }

// quoteStr is a SQL string literal.
func quoteStr(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// funcAliases maps PostgreSQL/DuckDB spellings to registry names.
var funcAliases = map[string]string{
	"btrim": "trim", "substring": "substr", "char_length": "length", "character_length": "length",
	"pow": "power", "ceiling": "ceil", "log": "log10", "dayofweek": "day_of_week", "dayofyear": "day_of_year",
	"isodow": "day_of_week", "strpos": "strpos", "instr": "strpos", "regexp_like": "regexp_matches",
	"datediff": "date_diff", "datetrunc": "date_trunc", "ifnull": "coalesce", "nvl": "coalesce",
	"dayofmonth": "day", "weekofyear": "week", "to_char": "strftime",
}

// extractFields maps EXTRACT/date_part fields to registry functions.
var extractFields = map[string]string{
	"year": "year", "quarter": "quarter", "month": "month", "week": "week", "day": "day", "dow": "day_of_week",
	"isodow": "day_of_week", "doy": "day_of_year", "hour": "hour", "minute": "minute", "second": "second", "epoch": "epoch",
}

func (r *renderer) errAt(loc int32, code, format string, args ...any) *qerr.Error {
	return sqlErr(r.c.sql, loc, code, format, args...)
}

// list renders nodes joined with ", ".
func (r *renderer) list(ns []*pg.Node) (string, error) {
	parts := make([]string, len(ns))
	for i, n := range ns {
		s, err := r.expr(n)
		if err != nil {
			return "", err
		}
		parts[i] = s
	}
	return strings.Join(parts, ", "), nil
}

// expr renders one expression node.
func (r *renderer) expr(n *pg.Node) (string, error) {
	if n == nil {
		return "", qerr.Internal(nil, "sqlfront: nil expression")
	}
	if r.hook != nil {
		if s, ok, err := r.hook(n); err != nil || ok {
			return s, err
		}
	}
	switch x := n.Node.(type) {
	case *pg.Node_ColumnRef:
		name, _, err := r.scope.column(r.c, x.ColumnRef)
		if err != nil {
			return "", err
		}
		return quote(name), nil
	case *pg.Node_AConst:
		return r.c.constText(x.AConst)
	case *pg.Node_ParamRef:
		v, err := r.c.param(x.ParamRef)
		if err != nil {
			return "", err
		}
		return literalText(v), nil
	case *pg.Node_TypeCast:
		return r.typeCast(x.TypeCast)
	case *pg.Node_AExpr:
		return r.aExpr(x.AExpr)
	case *pg.Node_BoolExpr:
		return r.boolExpr(x.BoolExpr)
	case *pg.Node_NullTest:
		s, err := r.expr(x.NullTest.Arg)
		if err != nil {
			return "", err
		}
		if x.NullTest.Nulltesttype == pg.NullTestType_IS_NOT_NULL {
			return "(" + s + " IS NOT NULL)", nil
		}
		return "(" + s + " IS NULL)", nil
	case *pg.Node_BooleanTest:
		s, err := r.expr(x.BooleanTest.Arg)
		if err != nil {
			return "", err
		}
		switch x.BooleanTest.Booltesttype {
		case pg.BoolTestType_IS_TRUE:
			return "coalesce(" + s + ", false)", nil
		case pg.BoolTestType_IS_NOT_TRUE:
			return "(NOT coalesce(" + s + ", false))", nil
		case pg.BoolTestType_IS_FALSE:
			return "coalesce(NOT " + s + ", false)", nil
		case pg.BoolTestType_IS_NOT_FALSE:
			return "(NOT coalesce(NOT " + s + ", false))", nil
		case pg.BoolTestType_IS_UNKNOWN:
			return "(" + s + " IS NULL)", nil
		default:
			return "(" + s + " IS NOT NULL)", nil
		}
	case *pg.Node_CaseExpr:
		return r.caseExpr(x.CaseExpr)
	case *pg.Node_CoalesceExpr:
		args, err := r.list(x.CoalesceExpr.Args)
		return "coalesce(" + args + ")", err
	case *pg.Node_MinMaxExpr:
		args, err := r.list(x.MinMaxExpr.Args)
		fn := "greatest"
		if x.MinMaxExpr.Op == pg.MinMaxOp_IS_LEAST {
			fn = "least"
		}
		return fn + "(" + args + ")", err
	case *pg.Node_SqlvalueFunction:
		switch x.SqlvalueFunction.Op {
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
			return "current_date()", nil
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP:
			return "now()", nil
		}
		return "", r.errAt(x.SqlvalueFunction.Location, qerr.CodeUnsupportedSQL, "this SQL value function is not supported").
			WithHint("current_date and now() are")
	case *pg.Node_FuncCall:
		return r.funcCall(x.FuncCall)
	case *pg.Node_SubLink:
		if t := x.SubLink.SubLinkType; r.sub != nil && (t == pg.SubLinkType_EXPR_SUBLINK || t == pg.SubLinkType_EXISTS_SUBLINK || t == pg.SubLinkType_ANY_SUBLINK) {
			return r.sub(x.SubLink)
		}
		return "", r.errAt(x.SubLink.Location, qerr.CodeUnsupportedSQL, "subqueries in expressions are not supported here").
			WithHint("x IN (SELECT col FROM ...) works as a top-level WHERE condition; otherwise join the subquery in FROM")
	}
	return "", r.errAt(nodeLoc(n), qerr.CodeUnsupportedSQL, "expression %s is not supported", nodeName(n))
}

// nodeName is the syntax-tree type of n, for messages.
func nodeName(n *pg.Node) string {
	m := n.ProtoReflect()
	f := m.WhichOneof(m.Descriptor().Oneofs().Get(0))
	if f == nil {
		return "(empty)"
	}
	return string(f.Message().Name())
}

// nodeLoc is where n starts in the text, or -1.
func nodeLoc(n *pg.Node) int32 {
	if n == nil || n.Node == nil {
		return -1
	}
	return startLoc(n.ProtoReflect(), -1)
}

// constText renders a literal.
func (c *compiler) constText(a *pg.A_Const) (string, error) {
	v, err := c.constValue(a)
	if err != nil {
		return "", err
	}
	return literalText(v), nil
}

// constValue is a literal as a Go value: int64, json.Number (other
// numbers), string, bool or nil.
func (c *compiler) constValue(a *pg.A_Const) (any, error) {
	if a.Isnull {
		return nil, nil
	}
	switch v := a.Val.(type) {
	case *pg.A_Const_Ival:
		return int64(v.Ival.Ival), nil
	case *pg.A_Const_Fval:
		s := v.Fval.Fval
		if strings.HasPrefix(s, ".") {
			s = "0" + s
		}
		return json.Number(s), nil
	case *pg.A_Const_Sval:
		return v.Sval.Sval, nil
	case *pg.A_Const_Boolval:
		return v.Boolval.Boolval, nil
	}
	return nil, sqlErr(c.sql, a.Location, qerr.CodeUnsupportedSQL, "this literal is not supported").WithHint("use numbers, 'strings', true/false or NULL")
}

// literalText prints a Go value as an expression literal.
func literalText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return quoteStr(x)
	case bool:
		return strconv.FormatBool(x)
	case int64:
		if x < 0 {
			return "(" + strconv.FormatInt(x, 10) + ")"
		}
		return strconv.FormatInt(x, 10)
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEN") {
			s += ".0"
		}
		if x < 0 {
			return "(" + s + ")"
		}
		return s
	case json.Number:
		if strings.HasPrefix(string(x), "-") {
			return "(" + string(x) + ")"
		}
		return string(x)
	}
	return fmt.Sprint(v)
}

// castType maps a SQL type name to the planner's CAST type name.
func (r *renderer) castType(tn *pg.TypeName) (string, error) {
	var parts []string
	for _, n := range tn.Names {
		parts = append(parts, n.GetString_().GetSval())
	}
	name := parts[len(parts)-1]
	switch name {
	case "int2", "int4", "int8", "smallint", "integer", "bigint", "hugeint", "ubigint", "uinteger":
		name = "bigint"
	case "float4", "float8", "numeric", "decimal", "float", "double", "real":
		name = "double"
	case "bpchar", "text", "varchar", "string", "char":
		name = "varchar"
	case "bool", "boolean":
		name = "boolean"
	case "timestamptz":
		name = "timestamp"
	}
	if len(tn.ArrayBounds) > 0 {
		return "", r.errAt(tn.Location, qerr.CodeUnsupportedSQL, "array types are not supported")
	}
	if _, ok := funcs.ParseCastType(name); !ok && name != "interval" {
		return "", r.errAt(tn.Location, qerr.CodeUnsupportedSQL, "cannot cast to type %s", strings.Join(parts, ".")).
			WithHint("CAST targets: bigint, double, varchar, boolean, date, timestamp")
	}
	return name, nil
}

func (r *renderer) typeCast(tc *pg.TypeCast) (string, error) {
	typ, err := r.castType(tc.TypeName)
	if err != nil {
		return "", err
	}
	if typ == "interval" {
		if s := tc.Arg.GetAConst().GetSval(); s != nil {
			return "INTERVAL " + quoteStr(s.Sval), nil
		}
		return "", r.errAt(tc.Location, qerr.CodeUnsupportedSQL, "only INTERVAL 'literal' is supported").WithHint("write INTERVAL '7 days'")
	}
	arg, err := r.expr(tc.Arg)
	if err != nil {
		return "", err
	}
	return "CAST(" + arg + " AS " + typ + ")", nil
}

// binOps are the SQL binary operators the planner language spells the same.
var binOps = map[string]string{"=": "=", "<>": "!=", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
	"+": "+", "-": "-", "*": "*", "/": "/", "%": "%", "||": "||"}

func (r *renderer) aExpr(a *pg.A_Expr) (string, error) {
	op := ""
	if len(a.Name) > 0 {
		op = a.Name[len(a.Name)-1].GetString_().GetSval()
	}
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if a.Lexpr == nil {
			x, err := r.expr(a.Rexpr)
			if err != nil {
				return "", err
			}
			switch op {
			case "-":
				return "(-" + x + ")", nil
			case "+":
				return x, nil
			}
			return "", r.errAt(a.Location, qerr.CodeUnsupportedSQL, "prefix operator %s is not supported", op)
		}
		l, rt, err := r.operands(a)
		if err != nil {
			return "", err
		}
		if o, ok := binOps[op]; ok {
			return "(" + l + " " + o + " " + rt + ")", nil
		}
		switch op {
		case "~~":
			return "(" + l + " LIKE " + rt + ")", nil
		case "!~~":
			return "(NOT (" + l + " LIKE " + rt + "))", nil
		case "~~*":
			return "(" + l + " ILIKE " + rt + ")", nil
		case "!~~*":
			return "(NOT (" + l + " ILIKE " + rt + "))", nil
		case "~":
			return "regexp_matches(" + l + ", " + rt + ")", nil
		case "!~":
			return "(NOT regexp_matches(" + l + ", " + rt + "))", nil
		case "^":
			return "power(" + l + ", " + rt + ")", nil
		}
		return "", r.errAt(a.Location, qerr.CodeUnsupportedSQL, "operator %s is not supported", op).
			WithHint("operators: + - * / %% || = <> < <= > >= LIKE ILIKE ~ (regex)")
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		kw := "LIKE"
		if a.Kind == pg.A_Expr_Kind_AEXPR_ILIKE {
			kw = "ILIKE"
		}
		if a.Rexpr.GetFuncCall() != nil {
			return "", r.errAt(a.Location, qerr.CodeUnsupportedSQL, "LIKE ... ESCAPE is not supported").WithHint("drop ESCAPE; \\ is not special")
		}
		l, rt, err := r.operands(a)
		if err != nil {
			return "", err
		}
		s := "(" + l + " " + kw + " " + rt + ")"
		if strings.HasPrefix(op, "!") {
			s = "(NOT " + s + ")"
		}
		return s, nil
	case pg.A_Expr_Kind_AEXPR_IN:
		l, err := r.expr(a.Lexpr)
		if err != nil {
			return "", err
		}
		lst := a.Rexpr.GetList()
		if lst == nil {
			return "", r.errAt(a.Location, qerr.CodeUnsupportedSQL, "IN needs a list of values here").
				WithHint("x IN (SELECT ...) works as a top-level WHERE condition")
		}
		items, err := r.list(lst.Items)
		if err != nil {
			return "", err
		}
		s := "(" + l + " IN (" + items + "))"
		if op == "<>" {
			s = "(NOT " + s + ")"
		}
		return s, nil
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		l, err := r.expr(a.Lexpr)
		if err != nil {
			return "", err
		}
		b := a.Rexpr.GetList()
		lo, err := r.expr(b.Items[0])
		if err != nil {
			return "", err
		}
		hi, err := r.expr(b.Items[1])
		if err != nil {
			return "", err
		}
		s := "(" + l + " BETWEEN " + lo + " AND " + hi + ")"
		if a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			s = "(NOT " + s + ")"
		}
		return s, nil
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		l, rt, err := r.operands(a)
		if err != nil {
			return "", err
		}
		if a.Kind == pg.A_Expr_Kind_AEXPR_DISTINCT {
			return fmt.Sprintf("(CASE WHEN %[1]s IS NULL THEN %[2]s IS NOT NULL WHEN %[2]s IS NULL THEN true ELSE %[1]s != %[2]s END)", l, rt), nil
		}
		return fmt.Sprintf("(CASE WHEN %[1]s IS NULL THEN %[2]s IS NULL WHEN %[2]s IS NULL THEN false ELSE %[1]s = %[2]s END)", l, rt), nil
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		l, rt, err := r.operands(a)
		if err != nil {
			return "", err
		}
		return "nullif(" + l + ", " + rt + ")", nil
	}
	what := map[pg.A_Expr_Kind]string{pg.A_Expr_Kind_AEXPR_OP_ANY: "ANY (...)", pg.A_Expr_Kind_AEXPR_OP_ALL: "ALL (...)",
		pg.A_Expr_Kind_AEXPR_SIMILAR: "SIMILAR TO", pg.A_Expr_Kind_AEXPR_BETWEEN_SYM: "BETWEEN SYMMETRIC",
		pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM: "NOT BETWEEN SYMMETRIC"}[a.Kind]
	return "", r.errAt(a.Location, qerr.CodeUnsupportedSQL, "%s is not supported", what).
		WithHint("use IN (...), LIKE/ILIKE, regexp_matches or BETWEEN")
}

// operands renders both sides of a binary A_Expr.
func (r *renderer) operands(a *pg.A_Expr) (l, rt string, err error) {
	if l, err = r.expr(a.Lexpr); err != nil {
		return "", "", err
	}
	rt, err = r.expr(a.Rexpr)
	return l, rt, err
}

func (r *renderer) boolExpr(b *pg.BoolExpr) (string, error) {
	parts := make([]string, len(b.Args))
	for i, a := range b.Args {
		s, err := r.expr(a)
		if err != nil {
			return "", err
		}
		parts[i] = s
	}
	switch b.Boolop {
	case pg.BoolExprType_AND_EXPR:
		return "(" + strings.Join(parts, " AND ") + ")", nil
	case pg.BoolExprType_OR_EXPR:
		return "(" + strings.Join(parts, " OR ") + ")", nil
	}
	return "(NOT " + parts[0] + ")", nil
}

func (r *renderer) caseExpr(c *pg.CaseExpr) (string, error) {
	var b strings.Builder
	b.WriteString("CASE")
	if c.Arg != nil {
		s, err := r.expr(c.Arg)
		if err != nil {
			return "", err
		}
		b.WriteString(" " + s)
	}
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		cond, err := r.expr(cw.Expr)
		if err != nil {
			return "", err
		}
		res, err := r.expr(cw.Result)
		if err != nil {
			return "", err
		}
		b.WriteString(" WHEN " + cond + " THEN " + res)
	}
	if c.Defresult != nil {
		s, err := r.expr(c.Defresult)
		if err != nil {
			return "", err
		}
		b.WriteString(" ELSE " + s)
	}
	b.WriteString(" END")
	return b.String(), nil
}

// scalarName is a function call's registry name (aliases applied); the
// pg_catalog prefix the parser adds to rewritten syntax is dropped.
func scalarName(fc *pg.FuncCall) string {
	name := strings.ToLower(funcName(fc))
	name = strings.TrimPrefix(name, "pg_catalog.")
	if a, ok := funcAliases[name]; ok {
		return a
	}
	return name
}

func (r *renderer) funcCall(fc *pg.FuncCall) (string, error) {
	name := scalarName(fc)
	if fc.Over != nil {
		return "", r.errAt(fc.Location, qerr.CodeUnsupportedSQL, "window function %s is not allowed here", name).
			WithHint("window functions go in the SELECT list or ORDER BY; to filter on one, wrap the query in a subquery")
	}
	if _, ok := aggName(fc); ok {
		return "", r.errAt(fc.Location, qerr.CodeInvalidArgument, "aggregate %s is not allowed here", name).
			WithHint("aggregates go in the SELECT list, HAVING or ORDER BY of a grouped query, not in WHERE, GROUP BY or JOIN ON")
	}
	if fc.AggDistinct || fc.AggStar || fc.AggFilter != nil || len(fc.AggOrder) > 0 || fc.AggWithinGroup {
		return "", r.errAt(fc.Location, qerr.CodeUnsupportedSQL, "%s is not an aggregate; DISTINCT, *, FILTER and ORDER BY apply to aggregates only", name)
	}
	if isFilterToken(fc) {
		return "", r.errAt(fc.Location, qerr.CodeUnsupportedSQL, "filter_token(...) stands alone as a condition of WHERE, joined to the others by AND").
			WithHint("WHERE filter_token($1) AND year = 2024, with params: [\"<token from pattern_filter>\"]")
	}
	switch name {
	case "extract", "date_part":
		if len(fc.Args) == 2 {
			var field string
			if s := fc.Args[0].GetAConst().GetSval(); s != nil {
				field = strings.ToLower(s.Sval)
			}
			if f, ok := extractFields[field]; ok {
				arg, err := r.expr(fc.Args[1])
				return f + "(" + arg + ")", err
			}
			return "", r.errAt(fc.Location, qerr.CodeUnsupportedSQL, "EXTRACT field %q is not supported", field).
				WithHint("fields: year, quarter, month, week, day, dow, doy, hour, minute, second, epoch")
		}
	case "position":
		if len(fc.Args) == 2 { // the parser gives position(a IN b) as position(b, a)
			s, err := r.expr(fc.Args[0])
			if err != nil {
				return "", err
			}
			sub, err := r.expr(fc.Args[1])
			return "strpos(" + s + ", " + sub + ")", err
		}
	case "mod":
		if len(fc.Args) == 2 {
			args, err := r.list(fc.Args)
			return "(" + strings.Replace(args, ", ", " % ", 1) + ")", err
		}
	}
	if _, ok := funcs.LookupFunction(name); !ok {
		return "", r.errAt(fc.Location, qerr.CodeInvalidArgument, "unknown function %s", name).
			With("suggestions", qerr.Suggest(name, append(funcs.ScalarNames(), funcs.AggNames()...), 3)).
			WithHint("functions: %s; aggregates: %s", strings.Join(funcs.ScalarNames(), ", "), strings.Join(funcs.AggNames(), ", "))
	}
	args, err := r.list(fc.Args)
	if err != nil {
		return "", err
	}
	return name + "(" + args + ")", nil
}

// aggAliases maps SQL aggregate spellings to registry aggregates.
var aggAliases = map[string]string{
	"mean": "avg", "variance": "var_samp", "var": "var_samp", "quantile_cont": "quantile", "every": "bool_and",
	"countif": "count_if", "argmin": "arg_min", "argmax": "arg_max", "min_by": "arg_min", "max_by": "arg_max",
	"stddev": "stddev_samp", "std": "stddev_samp", "group_concat": "string_agg", "any_value": "first",
}

// aggName reports whether fc calls an aggregate, and which (count(DISTINCT
// x) is count_distinct).
func aggName(fc *pg.FuncCall) (string, bool) {
	name := strings.ToLower(funcName(fc))
	if a, ok := aggAliases[name]; ok {
		if _, ok := funcs.AggFn(name).Lookup(); !ok {
			name = a
		}
	}
	if _, ok := funcs.AggFn(name).Lookup(); !ok {
		return "", false
	}
	if name == "count" && fc.AggDistinct {
		return "count_distinct", true
	}
	return name, true
}
