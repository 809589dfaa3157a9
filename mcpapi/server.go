package mcpapi

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/service"
)

// Options configures NewServer.
type Options struct {
	// Name is the server name announced at initialize; "" => "quarry".
	Name string
	// Version is the server version announced at initialize; "" => "dev".
	Version string
	// Logger receives request logs; nil => slog.Default(). Must write to stderr
	// (or a file), never stdout.
	Logger *slog.Logger
}

// Instructions is what the server tells clients at initialize: how to use Quarry well.
const Instructions = `Quarry answers questions about tabular data files (CSV, HDF5) under one data root.
Typical flow: get_catalog -> get_schema (exact column names and value formats) -> estimate_query (size, plan) -> query_data.
Prefer aggregates (group_by + aggs), filters and limits to pulling raw rows. Results larger than the inline caps come back
as a paged result handle (query_next_page) or, with output_format=parquet|csv, as a file resource (resources/read);
total_rows is always exact and truncation is always flagged. Errors are JSON {error, code, hint}: follow the hint.`

// NewServer builds the MCP server with every tool and resource registered.
func NewServer(svc *service.Service, opts Options) *server.MCPServer {
	if opts.Name == "" {
		opts.Name = "quarry"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := server.NewMCPServer(opts.Name, opts.Version,
		server.WithTitle("Quarry"),
		server.WithDescription("Arrow-native query engine over CSV and HDF5 files"),
		server.WithInstructions(Instructions),
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, false),
		// Input is validated by bindStrict and the planner instead of
		// server.WithInputSchemaValidation: mcp-go's validator runs before
		// middleware and answers in plain text, which would hide the stable
		// error codes (invalid_filter, unsupported_format, ...) models rely on.
		server.WithOutputSchemaValidation(),
		server.WithToolHandlerMiddleware(toolMiddleware(opts.Logger)),
		server.WithResourceHandlerMiddleware(resourceMiddleware(opts.Logger)),
	)
	for _, c := range Tools {
		s.AddTool(c(svc))
	}
	addResources(s, svc)
	addH5Resources(s, svc)
	return s
}

// toolMiddleware gives every tool call a request id and logger, logs its
// outcome and duration, and turns a panic into an internal tool error.
func toolMiddleware(base *slog.Logger) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
			ctx = withRequest(ctx, base, req.Header.Get("X-Request-Id"))
			log := obs.Logger(ctx).With("tool", req.Params.Name)
			start := time.Now()
			defer func() {
				if r := recover(); r != nil {
					log.Error("panic in tool handler", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
					res, err = errorResult(ctx, qerr.Internal(fmt.Errorf("panic: %v", r), "panic")), nil
				}
				code := ""
				if res != nil && res.IsError {
					code = "error"
				}
				log.Info("tool call", "duration_ms", time.Since(start).Milliseconds(), "is_error", res != nil && res.IsError, "outcome", code)
			}()
			return next(ctx, req)
		}
	}
}

func resourceMiddleware(base *slog.Logger) server.ResourceHandlerMiddleware {
	return func(next server.ResourceHandlerFunc) server.ResourceHandlerFunc {
		return func(ctx context.Context, req mcp.ReadResourceRequest) (out []mcp.ResourceContents, err error) {
			ctx = withRequest(ctx, base, "")
			log := obs.Logger(ctx).With("resource", req.Params.URI)
			start := time.Now()
			defer func() {
				if r := recover(); r != nil {
					log.Error("panic in resource handler", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
					out, err = nil, fmt.Errorf("internal error (request %s)", obs.RequestID(ctx))
				}
				log.Info("resource read", "duration_ms", time.Since(start).Milliseconds(), "error", err)
			}()
			return next(ctx, req)
		}
	}
}

func withRequest(ctx context.Context, base *slog.Logger, id string) context.Context {
	if obs.RequestID(ctx) != "" {
		return ctx
	}
	if id == "" || len(id) > 128 {
		id = obs.NewRequestID()
	}
	return obs.WithRequest(ctx, base, id)
}

// addResources registers the catalog card and the templates for schema
// cards and artifacts.
func addResources(s *server.MCPServer, svc *service.Service) {
	read := func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		b, mime, err := svc.ReadResource(ctx, req.Params.URI)
		if err != nil {
			e := qerr.As(err)
			msg := e.Code + ": " + e.Message
			if e.Hint != "" {
				msg += " (" + e.Hint + ")"
			}
			return nil, fmt.Errorf("%s", msg)
		}
		if strings.HasPrefix(mime, "text/") || mime == "application/json" {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: mime, Text: string(b)}}, nil
		}
		return []mcp.ResourceContents{mcp.BlobResourceContents{URI: req.Params.URI, MIMEType: mime, Blob: base64.StdEncoding.EncodeToString(b)}}, nil
	}
	s.AddResource(mcp.NewResource("quarry://catalog", "catalog",
		mcp.WithResourceDescription("Every dataset under the data root: id, kind, path, rows, columns, size, modification time."),
		mcp.WithMIMEType("application/json")), read)
	s.AddResourceTemplate(mcp.NewResourceTemplate("quarry://datasets/{dataset}/schema", "dataset-schema",
		mcp.WithTemplateDescription("Schema card of one dataset (dataset id percent-encoded, / as %2F): columns, types, shape, sample rows."),
		mcp.WithTemplateMIMEType("application/json")), read)
	s.AddResourceTemplate(mcp.NewResourceTemplate("quarry://artifacts/{artifact}", "artifact",
		mcp.WithTemplateDescription("A result file written by query_data or query_next_page (Parquet or CSV). Expires after the artifact TTL.")), read)
}
