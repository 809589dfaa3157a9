package mcpapi

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/service"
)

// NewReadDatasetSliceTool builds read_dataset_slice.
func NewReadDatasetSliceTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.SliceRequest, *service.SliceResponse]{
		name:  "read_dataset_slice",
		title: "Read a slice of an HDF5 array",
		description: "Read an exact NumPy-style selection of an N-dimensional HDF5 dataset. `uri` is an h5:// URI " +
			"(h5://<file>?path=<dataset>; find datasets, shapes and dtypes with browse_hdf5). " +
			"`slice_str` like '1000:1010', '0:512, 0:512', '-1, :, 3', '...' or '::10' (integer indexes drop a dimension; steps must be positive). " +
			"Returns {shape, dtype, data} with data as nested lists when the selection fits the inline caps; a larger selection, or any with " +
			"output_format csv/parquet, is delivered flattened (index columns i0..iN and value) as a paged result handle (json) or a file, " +
			"never silently cut. Errors: invalid_slice (hint has the shape), not_a_dataset, dangling_link, unsupported_type, unsupported_filter.",
		call:  svc.ReadSlice,
		extra: func(r *service.SliceResponse) []mcp.Content { return resultLinks(r.Result) },
	})
}
