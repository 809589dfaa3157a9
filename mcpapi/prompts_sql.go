package mcpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/service"
)

// PromptSQL is the SQL reference prompt (listed with advanced_query).
const PromptSQL = "sql_reference"

// addSQLPrompt registers sql_reference: the dialect, the registry's
// functions and worked advanced_query examples over the live catalog.
func addSQLPrompt(s *server.MCPServer, svc *service.Service) {
	s.AddPrompt(mcp.NewPrompt(PromptSQL,
		mcp.WithPromptTitle("SQL reference"),
		mcp.WithPromptDescription("The advanced_query SQL dialect, its functions and 10 worked queries over this catalog."),
		mcp.WithArgument("dataset", mcp.ArgumentDescription("Build the examples on this dataset (default: one picked from the catalog)."))),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			exs, err := svc.SQLExamples(ctx, req.Params.Arguments["dataset"])
			if err != nil {
				return nil, promptErr(err)
			}
			return promptResult("SQL reference", RenderSQLReference(exs)), nil
		})
}

// RenderSQLReference writes the sql_reference prompt text: the dialect,
// then each example's SQL (and params) under its title.
func RenderSQLReference(exs []service.Example) string {
	var b strings.Builder
	b.WriteString(service.SQLDialect())
	b.WriteString("\n## Worked examples (advanced_query {sql, params?})\n")
	for i, ex := range exs {
		fmt.Fprintf(&b, "\n%d. %s\n   %s\n", i+1, ex.Title, ex.Args["sql"])
		if p, ok := ex.Args["params"]; ok {
			j, _ := json.Marshal(p)
			fmt.Fprintf(&b, "   params: %s\n", j)
		}
	}
	return b.String()
}
