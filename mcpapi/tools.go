package mcpapi

import (
	"context"
	"fmt"
	"path"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/service"
	"github.com/quarrydb/quarry/materialize"
)

// ToolConstructor builds one tool and its handler over a service.
type ToolConstructor func(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc)

// Tools is the tool registry, in listing order. Adding a tool is one
// constructor and one line here.
var Tools = []ToolConstructor{
	NewGetCatalogTool,
	NewGetSchemaTool,
	NewEstimateQueryTool,
	NewQueryDataTool,
	NewQueryNextPageTool,
	NewReadDatasetSliceTool,
}

// toolSpec describes one tool for newTool.
type toolSpec[In, Out any] struct {
	name, title, description string
	call                     func(ctx context.Context, in In) (Out, error)
	// extra adds content items after the JSON text (e.g. resource links).
	extra func(out Out) []mcp.Content
}

// newTool builds a read-only tool whose input and output schemas come from
// In and Out, and a handler that binds arguments, calls spec.call and wraps
// the answer (or the structured error).
func newTool[In, Out any](spec toolSpec[In, Out]) (mcp.Tool, server.ToolHandlerFunc) {
	t := mcp.NewTool(spec.name,
		mcp.WithToolTitle(spec.title),
		mcp.WithDescription(spec.description),
		mcp.WithRawInputSchema(schemaFor[In]()),
		mcp.WithRawOutputSchema(schemaFor[Out]()),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	)
	t.InputSchema = mcp.ToolInputSchema{} // the raw schema is the only one
	t.Annotations.Title = spec.title
	h := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		if err := bindStrict(req.Params.Arguments, &in); err != nil {
			return errorResult(ctx, err), nil
		}
		out, err := spec.call(ctx, in)
		if err != nil {
			return errorResult(ctx, err), nil
		}
		res, err := structuredResult(out)
		if err != nil {
			return errorResult(ctx, qerr.Internal(err, "encoding %s result", spec.name)), nil
		}
		if spec.extra != nil {
			res.Content = append(res.Content, spec.extra(out)...)
		}
		return res, nil
	}
	return t, h
}

// NewGetCatalogTool builds get_catalog.
func NewGetCatalogTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.CatalogRequest, *service.CatalogResponse]{
		name:  "get_catalog",
		title: "List datasets",
		description: "List the datasets Quarry can query under its data root: id (pass it as `dataset` to every other tool), kind (csv, hdf5), " +
			"path, exact row count, column count, file size and last modification time. Start here. Filter with `query` (substring of id or path) " +
			"and `kinds`. `diagnostics` lists files that could not be read and why.",
		call: svc.Catalog,
	})
}

// NewGetSchemaTool builds get_schema.
func NewGetSchemaTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.SchemaRequest, *service.SchemaResponse]{
		name:  "get_schema",
		title: "Describe a dataset",
		description: "Columns (name, type, nullable), shape [rows, columns] and up to 5 sample rows of one dataset. Call it before filtering so " +
			"column names and value formats are exact (dates as YYYY-MM-DD, timestamps as ISO-8601).",
		call: svc.Schema,
	})
}

// NewEstimateQueryTool builds estimate_query.
func NewEstimateQueryTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.EstimateRequest, *service.EstimateResponse]{
		name:  "estimate_query",
		title: "Estimate a query",
		description: "Plan a query without returning its data: estimated rows and JSON bytes, whether the estimate is exact or sampled, a " +
			"5-row preview, warnings (e.g. too big to return inline), suggested caps and the optimized plan. Same knobs as query_data: " +
			"columns, filters [{col, op, value}] (ANDed; ops eq, neq, lt, lte, gt, gte, in (list), range ({min, max}, inclusive), contains, " +
			"is_null, is_not_null), group_by, aggs [{col, fn: count|sum|avg|min|max, as?}] (count accepts col \"*\"), distinct, order_by " +
			"[{col, desc?}], limit, offset. Use it before a query that may be large.",
		call: svc.Estimate,
	})
}

// NewQueryDataTool builds query_data.
func NewQueryDataTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.QueryRequest, *materialize.Result]{
		name:  "query_data",
		title: "Query a dataset",
		description: "Run a query (knobs as in estimate_query) and get the rows as records. Results within the inline caps (default 200 rows, " +
			"64 KiB of JSON, 10,000 cells) come back directly (method=direct). Larger results never come back silently cut: with " +
			"output_format=json (default) you get method=handle with the first page, total_rows and page_info.page_token for " +
			"query_next_page; with output_format=parquet or csv you get method=file with a resource_uri (read it with resources/read), " +
			"a 10-row preview and the column types. Prefer aggregates, filters and limits over paging through raw rows.",
		call:  svc.Query,
		extra: resultLinks,
	})
}

// NewQueryNextPageTool builds query_next_page.
func NewQueryNextPageTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.NextPageRequest, *materialize.Result]{
		name:  "query_next_page",
		title: "Next page of a result",
		description: "Fetch the next page of a result handle from query_data: pass result_handle and page_info.page_token. Pages are " +
			"deterministic; page_info.has_more is false on the last page. format=csv or parquet returns that page as a file resource. " +
			"Handles expire after a while of inactivity (error handle_expired): then re-run the query.",
		call:  svc.NextPage,
		extra: resultLinks,
	})
}

// resultLinks adds a resource_link content item for file results, since
// clients handle links inconsistently the structured result has the URI too.
func resultLinks(r *materialize.Result) []mcp.Content {
	if r == nil || r.ResourceURI == "" {
		return nil
	}
	link := mcp.NewResourceLink(r.ResourceURI, path.Base(r.ResourceURI),
		fmt.Sprintf("%s file with %d rows", r.Format, r.RowCount), r.MIMEType)
	size := r.SizeBytes
	link.Size = &size
	return []mcp.Content{link}
}
