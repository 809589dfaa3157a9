package mcpapi

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/service"
)

// The tools below make everything a model needs reachable without
// resources/read, which desktop clients do not let the model call.

// NewBrowseHDF5Tool builds browse_hdf5.
func NewBrowseHDF5Tool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.BrowseH5Request, *service.BrowseH5Response]{
		name:        "browse_hdf5",
		title:       "Browse an HDF5 file",
		description: "HDF5 structure: without file, the HDF5 files; with file and path, a group's members or a dataset's shape, dtype and attributes; then read_dataset_slice its uri.",
		call:        svc.BrowseHDF5,
	})
}

// NewReadResultTool builds read_result.
func NewReadResultTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.ReadResultRequest, *materialize.Result]{
		name:        "read_result",
		title:       "Read a result's rows",
		description: "Rows of a file result (resource_uri) or result handle, a page at a time (page or page_token).",
		call:        svc.ReadResult,
		extra:       resultLinks,
		notices:     resultNotices,
	})
}

// ExportName is the export tool's name: NewServer lists it only when the
// server has an export directory (serve --export-dir), as it would refuse
// every call otherwise.
const ExportName = "export"

// NewExportTool builds export. It writes files, so it is not read-only.
func NewExportTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	t, h := newTool(toolSpec[service.ExportRequest, *service.ExportResponse]{
		name:        ExportName,
		title:       "Save a result as a file",
		description: "Save a result (result_handle, resource_uri or query) as Parquet/CSV/Arrow at path in the export directory (serve --export-dir).",
		call:        svc.Export,
	})
	ro, destructive, idempotent := false, true, false
	t.Annotations.ReadOnlyHint, t.Annotations.DestructiveHint, t.Annotations.IdempotentHint = &ro, &destructive, &idempotent
	return t, h
}
