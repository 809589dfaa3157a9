package mcpapi

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/service"
)

// addReachResources registers the ranged read of artifacts, for files
// bigger than one message.
func addReachResources(s *server.MCPServer, svc *service.Service) {
	s.AddResourceTemplate(mcp.NewResourceTemplate("quarry://artifacts/{artifact}{?offset,length}", "artifact-range",
		mcp.WithTemplateDescription("length bytes (at most the server's resource read limit) of a result file from byte offset, as a base64 blob: "+
			"how a file bigger than one message is read."),
		mcp.WithTemplateMIMEType(service.RangeMIME)), readResource(svc))
}
