package funcs

import "strings"

// Op is a filter operator, e.g. OpEq. Spec filters bind it from the tool
// arguments' "op"; Lookup validates it against the registry.
type Op string

// The built-in filter operators (declared in builtinOps).
const (
	OpEq         Op = "eq"
	OpNeq        Op = "neq"
	OpLt         Op = "lt"
	OpLte        Op = "lte"
	OpGt         Op = "gt"
	OpGte        Op = "gte"
	OpIn         Op = "in"
	OpNotIn      Op = "not_in"
	OpRange      Op = "range"
	OpContains   Op = "contains"
	OpStartsWith Op = "starts_with"
	OpEndsWith   Op = "ends_with"
	OpRegex      Op = "regex"
	OpIsNull     Op = "is_null"
	OpIsNotNull  Op = "is_not_null"
	// OpAny is the op of a planner predicate that is an OR group. It is not
	// a registered operator and never appears in a Spec.
	OpAny Op = "any"
)

// MaxPatternLen is the longest accepted regex pattern (OperandPattern), in bytes.
const MaxPatternLen = 1000

// Operand is the kind of value an operator takes.
type Operand int

// Operand kinds.
const (
	// OperandNone: no value (is_null, is_not_null).
	OperandNone Operand = iota
	// OperandScalar: one value of the column's type.
	OperandScalar
	// OperandPattern: one RE2 pattern string.
	OperandPattern
	// OperandList: a non-empty list of values of the column's type.
	OperandList
	// OperandRange: {min, max}, inclusive, either may be omitted.
	OperandRange
)

// OpDecl declares one filter operator.
type OpDecl struct {
	Op Op
	// Operand is the kind of value the operator takes.
	Operand Operand
	// StringOnly: the column must be a string column (IsString).
	StringOnly bool
	// Ordered: the operator orders values, so it is not defined on booleans.
	Ordered bool
	// CaseInsensitive: the operator accepts case_insensitive (on string columns).
	CaseInsensitive bool
	// SQL is the operator's infix form in a printed plan ("=", "STARTS WITH");
	// empty for operators printed specially (in, not_in, range, is_null, is_not_null).
	SQL string
	// NoValueHint is the hint when a value-taking operator gets none; empty
	// for the generic "pass value: a <type>".
	NoValueHint string
	// Doc is the one-line description; Nulls the null/NaN semantics.
	Doc, Nulls string
}

// Null/NaN semantics shared by several declarations.
const (
	nullsNaNFails   = "null: no match; NaN: no match"
	nullsNaNMatches = "null: no match; NaN: matches"
	nullsString     = "null: no match"
)

var builtinOps = []*OpDecl{
	{Op: OpEq, Operand: OperandScalar, CaseInsensitive: true, SQL: "=", NoValueHint: "to match missing values use op is_null",
		Doc: "equal (`-0` equals `+0`)", Nulls: nullsNaNFails},
	{Op: OpNeq, Operand: OperandScalar, CaseInsensitive: true, SQL: "!=", NoValueHint: "to match present values use op is_not_null",
		Doc: "not equal", Nulls: nullsNaNMatches},
	{Op: OpLt, Operand: OperandScalar, Ordered: true, SQL: "<", Doc: "less than (not on booleans)", Nulls: nullsNaNFails},
	{Op: OpLte, Operand: OperandScalar, Ordered: true, SQL: "<=", Doc: "less than or equal (not on booleans)", Nulls: nullsNaNFails},
	{Op: OpGt, Operand: OperandScalar, Ordered: true, SQL: ">", Doc: "greater than (not on booleans)", Nulls: nullsNaNFails},
	{Op: OpGte, Operand: OperandScalar, Ordered: true, SQL: ">=", Doc: "greater than or equal (not on booleans)", Nulls: nullsNaNFails},
	{Op: OpIn, Operand: OperandList, CaseInsensitive: true, Doc: "member of the list", Nulls: nullsNaNFails},
	{Op: OpNotIn, Operand: OperandList, CaseInsensitive: true, Doc: "not a member of the list", Nulls: nullsNaNMatches},
	{Op: OpRange, Operand: OperandRange, Ordered: true, Doc: "`a ≤ x ≤ b` (not on booleans)", Nulls: nullsNaNFails},
	{Op: OpContains, Operand: OperandScalar, StringOnly: true, CaseInsensitive: true, SQL: "CONTAINS",
		Doc: "substring (strings only)", Nulls: nullsString},
	{Op: OpStartsWith, Operand: OperandScalar, StringOnly: true, CaseInsensitive: true, SQL: "STARTS WITH",
		Doc: "prefix (strings only)", Nulls: nullsString},
	{Op: OpEndsWith, Operand: OperandScalar, StringOnly: true, CaseInsensitive: true, SQL: "ENDS WITH",
		Doc: "suffix (strings only)", Nulls: nullsString},
	{Op: OpRegex, Operand: OperandPattern, StringOnly: true, CaseInsensitive: true, SQL: "MATCHES",
		NoValueHint: `pass value: an RE2 pattern string, e.g. "^A.*z$"`,
		Doc:         "[Go RE2](https://pkg.go.dev/regexp/syntax) match anywhere in the value (anchor with `^`/`$`); no backreferences or lookaround; compiled once per query; an invalid pattern is `invalid_filter` (strings only)",
		Nulls:       nullsString},
	{Op: OpIsNull, Operand: OperandNone, Doc: "null", Nulls: "null: matches; NaN: no match (NaN is not null)"},
	{Op: OpIsNotNull, Operand: OperandNone, Doc: "not null", Nulls: nullsNaNMatches},
}

var ops = newTable("filter operator", func(d *OpDecl) Op { return d.Op })

func init() {
	for _, d := range builtinOps {
		ops.add(d)
	}
}

// Lookup returns the declaration of o; false for an unknown operator.
func (o Op) Lookup() (*OpDecl, bool) { return ops.lookup(o) }

// Ops returns the declarations of every filter operator, in documentation order.
func Ops() []*OpDecl { return ops.decls }

// OpNames returns the names of every filter operator, in documentation order.
func OpNames() []string { return ops.names(nil) }

// OpNamesWhere returns the names of the filter operators for which keep
// holds, in documentation order.
func OpNamesWhere(keep func(*OpDecl) bool) []string { return ops.names(keep) }

// EnumValues implements the schema generator's enum hook: the valid values
// of an "op" argument.
func (Op) EnumValues() []string { return OpNames() }

// JoinWords joins names as "a, b and c" (conj "and") or "a, b or c".
func JoinWords(names []string, conj string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}
