package mcpapi

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/service"
)

// AdvancedQueryName is the SQL tool's name (serve --sql=false leaves it out).
const AdvancedQueryName = "advanced_query"

// NewAdvancedQueryTool builds advanced_query.
func NewAdvancedQueryTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.SQLRequest, *service.QueryResponse]{
		name:  AdvancedQueryName,
		title: "Query with SQL",
		description: "Run one read-only SQL SELECT over catalog datasets (PostgreSQL flavour, see docs/SQL.md). Prefer query_data and aggregate " +
			"for simple lookups and summaries; use SQL for joins of several datasets, window functions (rank, lag, running totals), " +
			"CTEs (WITH), subqueries in FROM, x IN (SELECT ...), HAVING and CASE-heavy reports. Tables are dataset ids: FROM \"weather/stations\" " +
			"(or the bare last name when unique). $1, $2 take params. Only SELECT: anything else, table functions and system catalogs are " +
			"refused (forbidden_sql); constructs not supported yet are unsupported_sql (UNION/INTERSECT/EXCEPT, VALUES, NULLS FIRST, " +
			"correlated subqueries); errors carry line and column. Output, delivery and confirmation are exactly those of query_data. " +
			"EXPLAIN ANALYZE prefix (or explain: analyze) adds per-operator statistics; estimate_query {sql} shows the plan and size.",
		call:        svc.SQL,
		extra:       queryLinks,
		notices:     queryNotices,
		outSchema:   confirmableSchema,
		confirmable: true,
	})
}
