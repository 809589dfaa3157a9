package mcpapi

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/service"
)

// NewDistinctValuesTool builds distinct_values.
func NewDistinctValuesTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.DistinctRequest, *service.DistinctResponse]{
		name:  "distinct_values",
		title: "Distinct values of a column",
		description: "The distinct values of one column with their counts, most frequent first (ties by value), plus total_distinct, " +
			"null_count and truncated. Use it to build valid filters: copy values verbatim into eq/in filters instead of guessing spelling, " +
			"case or format. limit (default 50, max 1000), min_count, and filters (as in query_data) to count within a subset. Fast and " +
			"cached per file version.",
		call: svc.DistinctValues,
	})
}

// NewGetServerInfoTool builds get_server_info.
func NewGetServerInfoTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.ServerInfoRequest, *service.ServerInfo]{
		name:  "get_server_info",
		title: "Server limits and features",
		description: "Name, version, MCP protocol versions, capabilities, every hard limit in force (inline rows/bytes/cells, page size, " +
			"handle and file lifetimes, query timeout and memory, confirmation thresholds), the data root (shortened), the dataset count " +
			"and optional features. Call it when a limit matters for planning.",
		call: func(ctx context.Context, _ service.ServerInfoRequest) (*service.ServerInfo, error) {
			info := svc.ServerInfo(ctx)
			meta := metaFrom(ctx)
			info.Name, info.Version = meta.name, meta.version
			info.ProtocolVersions = append([]string(nil), mcp.ValidProtocolVersions...)
			info.Capabilities = meta.capabilities
			return info, nil
		},
	})
}
