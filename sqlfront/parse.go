package sqlfront

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Limits of the front-end. They bound the work a statement can ask for
// before anything runs.
const (
	// MaxSQLLen is the longest accepted statement, in bytes.
	MaxSQLLen = 64 << 10
	// MaxNesting is the deepest accepted nesting of parentheses and
	// syntax-tree nodes (expressions, subqueries).
	MaxNesting = 200
	// MaxInList is the longest accepted IN (...) list.
	MaxInList = 1000
	// maxParenDepth bounds parentheses before the parser runs.
	maxParenDepth = 100
)

// Statement is a parsed, checked SQL statement.
type Statement struct {
	sql string
	sel *pg.SelectStmt
	// Explain is "" for a query, "plan" for an EXPLAIN prefix and "analyze"
	// for EXPLAIN ANALYZE.
	Explain string
}

// sqlErr builds an error about the SQL text at byte offset loc (-1: none).
func sqlErr(sql string, loc int32, code, format string, args ...any) *qerr.Error {
	cat := qerr.ErrInvalidArgument
	if code == qerr.CodeUnsupportedSQL {
		cat = qerr.ErrUnsupported
	}
	e := qerr.New(cat, code, format, args...)
	if loc >= 0 && int(loc) <= len(sql) {
		line, col := position(sql, int(loc))
		e.Message += fmt.Sprintf(" (line %d, column %d)", line, col)
		e.With("line", line).With("col", col).With("fragment", fragment(sql, int(loc)))
	}
	return e
}

// position is the 1-based line and column (in characters) of byte offset off.
func position(sql string, off int) (line, col int) {
	line = 1 + strings.Count(sql[:off], "\n")
	start := strings.LastIndexByte(sql[:off], '\n') + 1
	return line, 1 + utf8.RuneCountInString(sql[start:off])
}

// fragment is the text at byte offset off, up to the end of its line (at
// most 40 characters).
func fragment(sql string, off int) string {
	s := sql[off:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40]) + "…"
	}
	return strings.TrimSpace(s)
}

// Parse parses and checks one statement: SELECT (with WITH), optionally
// prefixed by EXPLAIN or EXPLAIN ANALYZE. Errors: invalid_argument (syntax,
// with position), forbidden_sql, unsupported_sql.
func Parse(sql string) (*Statement, error) {
	if len(sql) > MaxSQLLen {
		return nil, qerr.Invalid(qerr.CodeUnsupportedSQL, "the statement is %d bytes; at most %d are accepted", len(sql), MaxSQLLen).
			With("limit", MaxSQLLen).WithHint("shorten the statement: long IN lists belong in a dataset joined to the query")
	}
	if strings.TrimSpace(sql) == "" {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "sql is empty").With("field", "sql").
			WithHint(`pass one SELECT statement, e.g. SELECT * FROM "weather/stations" LIMIT 10`)
	}
	if err := parenDepth(sql); err != nil {
		return nil, err
	}
	tree, err := pgParse(sql)
	if err != nil {
		return nil, syntaxErr(sql, err)
	}
	if len(tree.Stmts) != 1 {
		loc := int32(-1)
		if len(tree.Stmts) > 1 {
			loc = tree.Stmts[1].StmtLocation
		}
		return nil, sqlErr(sql, loc, qerr.CodeForbiddenSQL, "exactly one statement is accepted, got %d", len(tree.Stmts)).
			WithHint("send one SELECT per call; stacked statements are refused")
	}
	raw := tree.Stmts[0]
	st := &Statement{sql: sql}
	node := raw.Stmt
	if ex := node.GetExplainStmt(); ex != nil {
		st.Explain = "plan"
		for _, o := range ex.Options {
			d := o.GetDefElem()
			if d == nil {
				continue
			}
			switch strings.ToLower(d.Defname) {
			case "analyze":
				st.Explain = "analyze"
			case "verbose", "costs", "format":
			default:
				return nil, sqlErr(sql, d.Location, qerr.CodeUnsupportedSQL, "EXPLAIN option %s is not supported", d.Defname).
					WithHint("use EXPLAIN or EXPLAIN ANALYZE")
			}
		}
		node = ex.Query
	}
	sel := node.GetSelectStmt()
	if sel == nil {
		return nil, sqlErr(sql, raw.StmtLocation, qerr.CodeForbiddenSQL, "only SELECT queries are accepted, not %s", stmtKind(node)).
			WithHint("advanced_query is read-only: it runs one SELECT (WITH ... SELECT) over catalog datasets")
	}
	st.sel = sel
	if err := check(sql, sel.ProtoReflect(), 0, -1); err != nil {
		return nil, err
	}
	return st, nil
}

// parenDepth refuses text nested deeper than maxParenDepth parentheses
// (outside string literals), before the parser recurses into it.
func parenDepth(sql string) error {
	depth, quote := 0, byte(0)
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			if depth++; depth > maxParenDepth {
				return sqlErr(sql, int32(i), qerr.CodeUnsupportedSQL, "the statement nests more than %d parentheses", maxParenDepth).
					With("limit", maxParenDepth).WithHint("flatten the expression (CASE instead of nested IFs, IN instead of nested ORs)")
			}
		case c == ')':
			depth--
		}
	}
	return nil
}

// syntaxErr turns a parser error into invalid_argument with its position
// (the parser reports a 1-based character position).
func syntaxErr(sql string, err error) error {
	var loc int32 = -1
	if qe := (*qerr.Error)(nil); errors.As(err, &qe) {
		return qe // not a parser error: SQL left out of this build
	}
	if pos := cursorPos(err); pos > 0 {
		loc = int32(len(sql))
		if r := []rune(sql); pos-1 < len(r) {
			loc = int32(len(string(r[:pos-1])))
		}
	}
	e := sqlErr(sql, loc, qerr.CodeInvalidArgument, "SQL syntax error: %s", err.Error())
	low := strings.ToLower(sql)
	if w := firstWord(sql); slices.Contains(otherStatements, w) {
		if w == "explain" || w == "analyze" {
			w = "EXPLAIN of a statement that is not a query"
		}
		// Statements of other dialects (ATTACH, INSTALL, PRAGMA, ...) fail
		// to parse as PostgreSQL: they are refused as what they are.
		return sqlErr(sql, 0, qerr.CodeForbiddenSQL, "only SELECT queries are accepted, not %s", strings.ToUpper(w)).
			WithHint("advanced_query is read-only: it runs one SELECT (WITH ... SELECT) over catalog datasets")
	}
	switch {
	case strings.Contains(low, "try_cast"):
		return e.WithHint("TRY_CAST is not PostgreSQL syntax; use CAST(x AS type) or x::type")
	case strings.Contains(low, "qualify"):
		return sqlErr(sql, loc, qerr.CodeUnsupportedSQL, "QUALIFY is not supported (it is not PostgreSQL)").
			WithHint("wrap the query in a subquery and filter the window column with WHERE: SELECT * FROM (SELECT ..., rank() OVER (...) AS r FROM t) s WHERE r <= 3")
	}
	return e.WithHint("advanced_query speaks PostgreSQL-flavoured SELECT; double-quote dataset ids with a slash: FROM \"weather/stations\"")
}

// stmtKind names a statement node for messages ("INSERT", "COPY", ...).
func stmtKind(n *pg.Node) string {
	if n == nil || n.Node == nil {
		return "an empty statement"
	}
	name := string(n.ProtoReflect().WhichOneof(n.ProtoReflect().Descriptor().Oneofs().Get(0)).Message().Name())
	name = strings.TrimSuffix(name, "Stmt")
	return strings.ToUpper(name)
}

// forbiddenFuncs are function names (or prefixes, ending in _) that reach
// files, URLs, the network or server state; they are refused wherever
// they appear, before binding.
var forbiddenFuncs = []string{"read_", "pg_", "lo_", "glob", "dblink", "http", "file", "sniff_csv", "parquet_", "duckdb_",
	"current_setting", "set_config", "copy", "load", "install", "query", "query_table", "sqlite_", "postgres_", "iceberg_", "delta_", "json_execute"}

// unsupportedMsgs are syntax-tree message types the dialect does not
// support yet, with the hint to give.
var unsupportedMsgs = map[protoreflect.Name]string{
	"RangeTableSample":      "TABLESAMPLE is not supported; use LIMIT, or estimate_query for the size",
	"RowExpr":               "row constructors are not supported",
	"A_ArrayExpr":           "arrays are not supported",
	"A_Indirection":         "subscripts and field selection are not supported",
	"CollateClause":         "COLLATE is not supported",
	"XmlExpr":               "XML functions are not supported",
	"XmlSerialize":          "XML functions are not supported",
	"JsonObjectConstructor": "SQL/JSON constructors are not supported",
	"JsonArrayConstructor":  "SQL/JSON constructors are not supported",
	"JsonIsPredicate":       "SQL/JSON predicates are not supported",
	"RangeTableFunc":        "XMLTABLE is not supported",
	"RangeTableFuncCol":     "XMLTABLE is not supported",
	"MultiAssignRef":        "multiple assignment is not supported",
	"MergeSupportFunc":      "MERGE is not supported",
}

// check walks the syntax tree below a SELECT: statements, table
// functions, system catalogs, locking and INTO are forbidden_sql;
// unsupported constructs, over-long IN lists and over-deep nesting are
// unsupported_sql. loc is the nearest enclosing location.
func check(sql string, m protoreflect.Message, depth int, loc int32) error {
	if depth > MaxNesting {
		return sqlErr(sql, loc, qerr.CodeUnsupportedSQL, "the statement nests deeper than %d levels", MaxNesting).
			With("limit", MaxNesting).WithHint("flatten the expression or the subqueries")
	}
	d := m.Descriptor()
	if f := d.Fields().ByName("location"); f != nil {
		if l := int32(m.Get(f).Int()); l >= 0 {
			loc = l
		}
	}
	name := d.Name()
	switch {
	case strings.HasSuffix(string(name), "Stmt") && name != "SelectStmt" || name == "CreateTableAsStmt":
		return sqlErr(sql, loc, qerr.CodeForbiddenSQL, "%s is not allowed inside a query", strings.ToUpper(strings.TrimSuffix(string(name), "Stmt"))).
			WithHint("advanced_query is read-only: only SELECT over catalog datasets")
	case name == "IntoClause":
		return sqlErr(sql, loc, qerr.CodeForbiddenSQL, "SELECT INTO writes a table and is not allowed").WithHint("drop INTO; results come back to you (or as a file with output_format)")
	case name == "LockingClause":
		return sqlErr(sql, loc, qerr.CodeForbiddenSQL, "FOR UPDATE/SHARE locking is not allowed").WithHint("drop the FOR ... clause")
	case name == "RangeFunction":
		return sqlErr(sql, startLoc(m, loc), qerr.CodeForbiddenSQL, "table functions are not allowed in FROM (files, URLs and generated tables are out of reach)").
			WithHint("FROM takes catalog dataset ids only, e.g. FROM \"weather/stations\"; get_catalog lists them")
	case name == "RangeVar":
		if err := checkRangeVar(sql, m.Interface().(*pg.RangeVar)); err != nil {
			return err
		}
	case name == "FuncCall":
		if err := checkFunc(sql, m.Interface().(*pg.FuncCall)); err != nil {
			return err
		}
	case name == "A_Expr":
		x := m.Interface().(*pg.A_Expr)
		if x.Kind == pg.A_Expr_Kind_AEXPR_IN {
			if l := x.Rexpr.GetList(); l != nil && len(l.Items) > MaxInList {
				return sqlErr(sql, startLoc(m, loc), qerr.CodeUnsupportedSQL, "an IN list has %d items; at most %d are accepted", len(l.Items), MaxInList).
					With("limit", MaxInList).WithHint("put the values in a dataset and join it, or use a range condition")
			}
		}
	case name == "WithClause":
		if m.Interface().(*pg.WithClause).Recursive {
			return sqlErr(sql, loc, qerr.CodeUnsupportedSQL, "WITH RECURSIVE is not supported").WithHint("use non-recursive CTEs")
		}
	case name == "ParamRef":
		if n := m.Interface().(*pg.ParamRef).Number; n < 1 || n > 100 {
			return sqlErr(sql, loc, qerr.CodeInvalidArgument, "parameter $%d is out of range ($1 to $100)", n)
		}
	}
	if msg, ok := unsupportedMsgs[name]; ok {
		return sqlErr(sql, loc, qerr.CodeUnsupportedSQL, "%s", msg).WithHint("docs/SQL.md lists the supported dialect")
	}
	var err error
	m.Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case f.IsList() && f.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = check(sql, l.Get(i).Message(), depth+1, loc)
			}
		case f.Message() != nil && !f.IsMap():
			err = check(sql, v.Message(), depth+1, loc)
		}
		return err == nil
	})
	return err
}

// checkRangeVar refuses system catalogs and schema- or
// database-qualified names.
func checkRangeVar(sql string, rv *pg.RangeVar) error {
	schema := strings.ToLower(rv.Schemaname)
	rel := strings.ToLower(rv.Relname)
	switch {
	case schema == "pg_catalog" || schema == "information_schema" || strings.HasPrefix(schema, "pg_") ||
		strings.HasPrefix(rel, "pg_") || rel == "information_schema" || strings.HasPrefix(rel, "sqlite_") || strings.HasPrefix(rel, "duckdb_"):
		return sqlErr(sql, rv.Location, qerr.CodeForbiddenSQL, "system catalogs are not accessible (%s)", qualified(rv)).
			WithHint("get_catalog and get_schema describe the datasets; SQL reads datasets only")
	case rv.Catalogname != "" || rv.Schemaname != "":
		return sqlErr(sql, rv.Location, qerr.CodeUnsupportedSQL, "qualified table name %s: tables are catalog dataset ids", qualified(rv)).
			WithHint("double-quote the dataset id as one name: FROM \"%s\"", strings.Trim(qualified(rv), `"`))
	case !rv.Inh:
		return sqlErr(sql, rv.Location, qerr.CodeUnsupportedSQL, "ONLY is not supported").WithHint("drop ONLY")
	}
	return nil
}

func qualified(rv *pg.RangeVar) string {
	parts := []string{}
	for _, p := range []string{rv.Catalogname, rv.Schemaname, rv.Relname} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

// checkFunc refuses the functions of forbiddenFuncs.
func checkFunc(sql string, fc *pg.FuncCall) error {
	name := strings.ToLower(funcName(fc))
	if strings.HasPrefix(name, "pg_catalog.") {
		return nil // the parser's own rewrites (extract, substring, ...)
	}
	for _, f := range forbiddenFuncs {
		if name == f || strings.HasSuffix(f, "_") && strings.HasPrefix(name, f) || strings.Contains(name, ".") {
			return sqlErr(sql, fc.Location, qerr.CodeForbiddenSQL, "function %s is not allowed (files, URLs, the network and server state are out of reach)", name).
				WithHint("SQL reads catalog datasets only; functions are those of the registry (see docs/QUERY.md)")
		}
	}
	return nil
}

// funcName is the dotted name of a function call.
func funcName(fc *pg.FuncCall) string {
	parts := make([]string, 0, len(fc.Funcname))
	for _, n := range fc.Funcname {
		parts = append(parts, n.GetString_().GetSval())
	}
	return strings.Join(parts, ".")
}

// startLoc is the smallest location in m's subtree (the start of an
// expression whose own location is its operator), or def when none.
func startLoc(m protoreflect.Message, def int32) int32 {
	best := int32(-1)
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		if f := m.Descriptor().Fields().ByName("location"); f != nil {
			if l := int32(m.Get(f).Int()); l >= 0 && (best < 0 || l < best) {
				best = l
			}
		}
		m.Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case f.IsList() && f.Message() != nil:
				for i := 0; i < v.List().Len(); i++ {
					visit(v.List().Get(i).Message())
				}
			case f.Message() != nil && !f.IsMap():
				visit(v.Message())
			}
			return true
		})
	}
	visit(m)
	if best < 0 {
		return def
	}
	return best
}

// otherStatements are the first keywords of statements (of PostgreSQL,
// DuckDB, SQLite, MySQL) that are not queries.
var otherStatements = []string{"attach", "detach", "install", "load", "pragma", "export", "import", "use", "checkpoint", "copy",
	"insert", "update", "delete", "drop", "create", "alter", "set", "call", "summarize", "describe", "show", "grant", "revoke",
	"vacuum", "truncate", "merge", "force", "reset", "begin", "commit", "rollback", "execute", "prepare", "deallocate",
	"analyze", "do", "listen", "notify", "lock", "comment", "replace", "upsert", "start", "end", "savepoint", "release"}

// firstWord is the statement's first keyword in lower case ("(" for a
// parenthesis), after blanks and comments.
func firstWord(sql string) string {
	s := sql
	for {
		s = strings.TrimLeft(s, " \t\r\n\f")
		switch {
		case strings.HasPrefix(s, "--"):
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				return ""
			}
			s = s[i:]
		case strings.HasPrefix(s, "/*"):
			i := strings.Index(s, "*/")
			if i < 0 {
				return ""
			}
			s = s[i+2:]
		default:
			if strings.HasPrefix(s, "(") {
				return "("
			}
			end := strings.IndexFunc(s, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') })
			if end < 0 {
				end = len(s)
			}
			w := strings.ToLower(s[:end])
			if w == "explain" || w == "analyze" || w == "verbose" {
				if next := firstWord(s[end:]); slices.Contains(otherStatements, next) && next != "analyze" || next == "" {
					return next
				}
			}
			return w
		}
	}
}
