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
		name:        "distinct_values",
		title:       "Distinct values of a column",
		description: "Distinct values of a column with counts, most frequent first: copy them verbatim into filters.",
		call:        svc.DistinctValues,
		argsAsIn:    "query_data",
		ownArgs:     []string{"dataset", "column", "limit", "min_count"},
	})
}

// NewGetServerInfoTool builds get_server_info.
func NewGetServerInfoTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.ServerInfoRequest, *service.ServerInfo]{
		name:        "get_server_info",
		title:       "Server limits and features",
		description: "Server version, protocols, capabilities, limits in force, data root and features.",
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
