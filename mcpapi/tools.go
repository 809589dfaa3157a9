package mcpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"path"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/service"
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
	NewDistinctValuesTool,
	NewAggregateTool,
	NewAdvancedQueryTool,
	NewGetServerInfoTool,
	NewPatternFilterTool,
	NewBrowseHDF5Tool,
	NewReadResultTool,
	NewExportTool,
}

// toolSpec describes one tool for newTool.
type toolSpec[In, Out any] struct {
	name, title, description string
	call                     func(ctx context.Context, in In) (Out, error)
	// extra adds content items after the JSON text (e.g. resource links).
	extra func(out Out) []mcp.Content
	// notices returns what the user should see as notifications/message
	// (skipped files, truncations), filtered by the client's log level.
	notices func(out Out) []notice
	// outSchema, when set, rewrites the output schema generated from Out.
	outSchema func(json.RawMessage) json.RawMessage
	// confirmable marks tools whose Out is *service.QueryResponse: a
	// needs_confirmation answer becomes a form elicitation when the client
	// supports it, and an elicitation answer is applied on the retry.
	confirmable bool
}

// newTool builds a read-only tool whose input and output schemas come from
// In and Out, and a handler that binds arguments, calls spec.call and wraps
// the answer (or the structured error).
func newTool[In, Out any](spec toolSpec[In, Out]) (mcp.Tool, server.ToolHandlerFunc) {
	out := schemaFor[Out]()
	if spec.outSchema != nil {
		out = spec.outSchema(out)
	}
	t := mcp.NewTool(spec.name,
		mcp.WithToolTitle(spec.title),
		mcp.WithDescription(spec.description),
		mcp.WithRawInputSchema(schemaFor[In]()),
		mcp.WithRawOutputSchema(out),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	)
	t.InputSchema = mcp.ToolInputSchema{} // the raw schema is the only one
	check := newOutputCheck(spec.name, out)
	t.Annotations.Title = spec.title
	h := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rec := recordFrom(ctx)
		fail := func(err error) (*mcp.CallToolResult, error) {
			rec.fail(err)
			return errorResult(ctx, err), nil
		}
		args := exactArguments(req)
		answered := false
		if spec.confirmable {
			var err error
			if args, answered, err = applyConfirmation(ctx, req, args); err != nil {
				return fail(err)
			}
		}
		var in In
		if err := bindStrict(args, &in); err != nil {
			return fail(err)
		}
		ctx = withProgress(ctx, req)
		out, err := spec.call(ctx, in)
		if err != nil {
			return fail(err)
		}
		addDownloadURL(ctx, out)
		if spec.confirmable {
			if qr, ok := any(out).(*service.QueryResponse); ok && qr.Status == service.StatusNeedsConfirmation {
				rec.status = qr.Status
				if !answered && clientSupportsElicitation(ctx) {
					rec.status = "elicitation_sent"
					return elicitation(spec.name, in, qr), nil
				}
			}
		}
		res, err := structuredResult(out)
		if err != nil {
			return fail(qerr.Internal(err, "encoding %s result", spec.name))
		}
		env, _ := res.StructuredContent.(json.RawMessage)
		if e, ok := any(out).(enveloper); ok {
			if env, err = e.Envelope(); err != nil {
				return fail(qerr.Internal(err, "encoding %s result", spec.name))
			}
		}
		if err := check.validate(env); err != nil {
			return fail(qerr.Internal(err, "%s produced a result that does not match its output schema", spec.name))
		}
		if spec.extra != nil {
			res.Content = append(res.Content, spec.extra(out)...)
		}
		rec.observe(out)
		if spec.notices != nil {
			sendNotices(ctx, spec.name, spec.notices(out))
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
			"path, exact row count, column count, file size, last modification time, and the description and tags of its schema card. Start here. " +
			"Filter with `query` (substring of id or path), `kinds` and `tags` (e.g. {\"year\": \"2024\"}). `diagnostics` lists files that " +
			"could not be read and schema-card problems.",
		call:    svc.Catalog,
		notices: catalogNotices,
	})
}

// NewGetSchemaTool builds get_schema.
func NewGetSchemaTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.SchemaRequest, *service.SchemaResponse]{
		name:  "get_schema",
		title: "Describe a dataset",
		description: "Columns (name, type, nullable, and role, description and unit from the schema card; the layout a date column was " +
			"read with, and a hint when a numeric- or date-looking column is kept as text), shape [rows, columns] and up to " +
			"5 sample rows of one dataset. Call it before filtering so column names and value formats are exact (dates as YYYY-MM-DD, " +
			"timestamps as ISO-8601); use distinct_values to get valid filter values.",
		call: svc.Schema,
	})
}

// NewEstimateQueryTool builds estimate_query.
func NewEstimateQueryTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.EstimateQueryRequest, *service.EstimateResponse]{
		name:  "estimate_query",
		title: "Estimate a query",
		description: "Plan a query without returning its data: estimated rows and JSON bytes, whether the estimate is exact or sampled, a " +
			"5-row preview, warnings (e.g. too big to return inline, or above the confirmation threshold), suggested caps, the optimized " +
			"plan and the physical plan (the operators the engine runs, fused steps included). Same knobs as query_data: columns, filters [{col, op, value}] (ANDed; ops such as eq, neq, lt, gte, in (list), range " +
			"({min, max}, inclusive), contains, is_null — the input schema lists them all; {any: [...]} for OR), group_by, aggs [{col, fn, arg?, filter?, as?}] " +
			"(count accepts col \"*\"), distinct, order_by [{col, desc?}], limit, offset. Use it before a query that may be large. " +
			"Or pass sql (an advanced_query statement, no dataset) to size and plan a SQL query.",
		call:    svc.EstimateQuery,
		notices: estimateNotices,
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
		call:    svc.NextPage,
		extra:   resultLinks,
		notices: resultNotices,
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
