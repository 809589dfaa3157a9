package mcpapi

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/service"
)

// readH5 answers resources/read of an h5:// URI (a file's root group, or
// any object with ?path=).
func readH5(svc *service.Service) server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
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
}

// h5FileResource is the listed resource of one HDF5 file (its root group);
// datasetResources keeps them in step with the catalog.
func h5FileResource(f service.H5File, read server.ResourceHandlerFunc) server.ServerResource {
	return server.ServerResource{
		Resource: mcp.NewResource(f.URI, "h5:"+f.Path,
			mcp.WithResourceDescription(fmt.Sprintf("HDF5 file %s (%d tables): root group attributes and members; follow members with ?path=/<name>.", f.Path, f.Datasets)),
			mcp.WithMIMEType("application/json")),
		Handler: read,
	}
}

// addH5Resources adds the template that reads any object of any HDF5 file
// under the root (the per-file resources are listed by datasetResources).
func addH5Resources(s *server.MCPServer, svc *service.Service) {
	s.AddResourceTemplate(mcp.NewResourceTemplate("h5://{+file}", "hdf5-object",
		mcp.WithTemplateDescription("Any object of an HDF5 file under the data root: h5://<file>?path=<internal path> (percent-encoded). "+
			"Groups list attributes and members; datasets give shape, maxshape, dtype, chunks, filters, fill value and attributes; links give their target without following it."),
		mcp.WithTemplateMIMEType("application/json")), server.ResourceTemplateHandlerFunc(readH5(svc)))
}
