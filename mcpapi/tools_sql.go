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
		name:        AdvancedQueryName,
		title:       "Query with SQL",
		description: "One read-only PostgreSQL-flavoured SELECT (joins, CTEs, subqueries, windows, set ops) over dataset ids: FROM \"weather/stations\".",
		call:        svc.SQL,
		argsAsIn:    "query_data",
		ownArgs:     []string{"sql", "params"},
		extra:       queryLinks,
		notices:     queryNotices,
		outSchema:   confirmableSchema,
		confirmable: true,
	})
}
