//go:build !cgo

package sqlfront

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Available reports whether this binary parses SQL: false in a cgo-free
// build (pg_query is C), where Parse fails with NotBuilt's error.
const Available = false

// NotBuilt is Parse's error in a cgo-free build: unsupported, code
// not_in_build, diagnostics.feature "sql".
func NotBuilt() error {
	return qerr.Unsupported(qerr.CodeNotInBuild, "this quarry was built without cgo: SQL (advanced_query) is not available").
		With("feature", "sql").
		WithHint("use query_data / aggregate (the same plans without SQL), or a quarry built with cgo")
}

func pgParse(string) (*pg.ParseResult, error) { return nil, NotBuilt() }

func cursorPos(error) int { return 0 }
