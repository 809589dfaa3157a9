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
	NewPlotTool,
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
	// argsAsIn names the tool (query_data) whose input schema describes
	// the arguments this one shares with it: they are listed as {} (any
	// JSON), except those in ownArgs (sameArgsAs).
	argsAsIn string
	ownArgs  []string
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
		mcp.WithRawInputSchema(sameArgsAs(schemaFor[In](), spec.ownArgs, spec.argsAsIn)),
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
		name:        "get_catalog",
		title:       "List datasets",
		description: "Datasets under the data root (id, kind, rows, columns, size, tags). Start here. Paged (next_cursor); query filters.",
		call:        svc.Catalog,
		notices:     catalogNotices,
	})
}

// NewGetSchemaTool builds get_schema.
func NewGetSchemaTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.SchemaRequest, *service.SchemaResponse]{
		name:        "get_schema",
		title:       "Describe a dataset",
		description: "Columns of a dataset (type, nullable, role, unit, description, date layout, hints) and 5 sample rows. Call it before filtering.",
		call:        svc.Schema,
	})
}

// NewEstimateQueryTool builds estimate_query.
func NewEstimateQueryTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.EstimateQueryRequest, *service.EstimateResponse]{
		name:        "estimate_query",
		title:       "Estimate a query",
		description: "Plan and size a query without delivering it: estimated rows and bytes, preview, warnings, suggested caps, plans. Arguments of query_data, or sql.",
		call:        svc.EstimateQuery,
		notices:     estimateNotices,
		argsAsIn:    "query_data",
		ownArgs:     []string{"dataset", "sql", "params"},
	})
}

// NewQueryNextPageTool builds query_next_page.
func NewQueryNextPageTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.NextPageRequest, *materialize.Result]{
		name:        "query_next_page",
		title:       "Next page of a result",
		description: "Next page of a result handle: pass result_handle and page_info.page_token (has_more false on the last page). handle_expired: run the query again.",
		call:        svc.NextPage,
		extra:       resultLinks,
		notices:     resultNotices,
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
