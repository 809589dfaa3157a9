package mcpapi

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/service"
)

// NewReadDatasetSliceTool builds read_dataset_slice.
func NewReadDatasetSliceTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.SliceRequest, *service.SliceResponse]{
		name:        "read_dataset_slice",
		title:       "Read a slice of an HDF5 array",
		description: "NumPy-style slice of an HDF5 array (see browse_hdf5): shape, dtype, nested-list data, or a handle/file for big slices.",
		call:        svc.ReadSlice,
		extra:       func(r *service.SliceResponse) []mcp.Content { return resultLinks(r.Result) },
	})
}
