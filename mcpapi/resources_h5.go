package mcpapi

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/service"
)

// addH5Resources lists one resource per HDF5 file (its root group) and a
// template that reads any object of any HDF5 file under the root.
func addH5Resources(s *server.MCPServer, svc *service.Service) {
	read := func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		b, err := svc.BrowseH5(ctx, req.Params.URI)
		if err != nil {
			e := qerr.As(err)
			msg := e.Code + ": " + e.Message
			if e.Hint != "" {
				msg += " (" + e.Hint + ")"
			}
			return nil, fmt.Errorf("%s", msg)
		}
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}, nil
	}
	for _, f := range svc.H5Files() {
		s.AddResource(mcp.NewResource(f.URI, "h5:"+f.Path,
			mcp.WithResourceDescription(fmt.Sprintf("HDF5 file %s (%d tables): root group attributes and members; follow members with ?path=/<name>.", f.Path, f.Datasets)),
			mcp.WithMIMEType("application/json")), read)
	}
	s.AddResourceTemplate(mcp.NewResourceTemplate("h5://{+file}", "hdf5-object",
		mcp.WithTemplateDescription("Any object of an HDF5 file under the data root: h5://<file>?path=<internal path> (percent-encoded). "+
			"Groups list attributes and members; datasets give shape, maxshape, dtype, chunks, filters, fill value and attributes; links give their target without following it."),
		mcp.WithTemplateMIMEType("application/json")), read)
}
