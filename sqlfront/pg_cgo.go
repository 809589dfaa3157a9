//go:build cgo

package sqlfront

import (
	"errors"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"
)

// Available reports whether this binary parses SQL: pg_query (PostgreSQL's
// parser in C) needs cgo, so a cgo-free build has no advanced_query.
const Available = true

// pgParse is PostgreSQL's parser (pg_query, cgo).
func pgParse(sql string) (*pg.ParseResult, error) { return pg.Parse(sql) }

// cursorPos is a parser error's 1-based character position; 0 if unknown.
func cursorPos(err error) int {
	var pe *parser.Error
	if errors.As(err, &pe) {
		return pe.Cursorpos
	}
	return 0
}
