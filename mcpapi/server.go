package mcpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/attribute"

	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/tracing"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/service"
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
	// NoSQL leaves the advanced_query tool out (serve --sql=false).
	NoSQL bool
	// ConformanceFixtures adds the fixture tools, resources and prompts the
	// official MCP conformance suite calls (serve --conformance-fixtures;
	// conformance_fixtures.go).
	ConformanceFixtures bool
	// OnToolCall, when set, is told of every finished tool call (metrics).
	OnToolCall func(ToolCall)
}

// capabilities are the MCP features NewServer enables (get_server_info).
var capabilities = map[string]bool{
	"tools": true, "resources": true, "resources_list_changed": true, "prompts": true,
	"completions": true, "logging": true, "elicitation": true, "progress": true, "cancellation": true,
}

// NewServer builds the MCP server with every tool, resource, prompt and
// completion registered.
func NewServer(svc *service.Service, opts Options) *server.MCPServer {
	s, _ := NewServerWithSchemas(svc, opts)
	return s
}

// NewServerWithSchemas is NewServer that also returns what tools/list
// leaves out (listedTool): the output schema of every tool by name, for
// the console's Tools page, from the same build of the tools.
func NewServerWithSchemas(svc *service.Service, opts Options) (*server.MCPServer, map[string]json.RawMessage) {
	if opts.Name == "" {
		opts.Name = "quarry"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	meta := &serverMeta{name: opts.Name, version: opts.Version, capabilities: capabilities}
	comp := &completer{svc: svc}
	listed := &datasetResources{svc: svc}
	hooks := &server.Hooks{}
	watch := watchResources(hooks, svc)
	var s *server.MCPServer
	// Per-dataset schema resources and per-file h5:// resources follow the
	// catalog: re-synced before each resources/list (which, like get_catalog,
	// first waits a little for the background scan).
	hooks.AddBeforeListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest) {
		svc.WaitFirstScan(ctx)
		listed.sync(s)
	})
	names := map[string]bool{} // every tool's name, offered or not (filled below)
	offeredInstructions(hooks, &s, names)
	dropNullArguments(hooks)
	structuredValidationErrors(hooks)
	s = server.NewMCPServer(opts.Name, opts.Version, append([]server.ServerOption{
		server.WithTitle("Quarry"),
		server.WithDescription("Arrow-native query engine over CSV and HDF5 files"),
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(false),
		server.WithLogging(),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(comp),
		server.WithResourceCompletionProvider(comp),
		server.WithHooks(hooks),
		// mcp-go validates arguments against each tool's inputSchema before
		// any middleware runs and answers in plain text;
		// structuredValidationErrors (a hook above) turns those answers into
		// structured errors with stable codes.
		server.WithInputSchemaValidation(),
		// Every result is validated against its tool's outputSchema by
		// outputCheck (in newTool) rather than server.WithOutputSchemaValidation,
		// which decodes whole results into map[string]any — 31% of a
		// read_dataset_slice round trip (docs/BENCHMARKS.md) spent decoding
		// rows whose schema is "any JSON".
		server.WithToolHandlerMiddleware(toolMiddleware(opts.Logger, meta, opts.OnToolCall)),
		server.WithResourceHandlerMiddleware(resourceMiddleware(opts.Logger)),
		server.WithPromptHandlerMiddleware(promptMiddleware(opts.Logger)),
	}, conformanceOptions(opts.ConformanceFixtures)...)...)
	watch.s = s
	outSchemas := make(map[string]json.RawMessage, len(Tools))
	for _, c := range Tools {
		t, h := c(svc)
		names[t.Name] = true
		if len(t.RawOutputSchema) > 0 {
			outSchemas[t.Name] = t.RawOutputSchema
		}
		if (opts.NoSQL && t.Name == AdvancedQueryName) || (t.Name == ExportName && !svc.ExportEnabled()) {
			continue
		}
		s.AddTool(listedTool(t), h)
	}
	addResources(s, svc)
	listed.sync(s)
	addH5Resources(s, svc)
	addReachResources(s, svc)
	addPrompts(s, svc)
	if !opts.NoSQL {
		addSQLPrompt(s, svc)
	}
	if opts.ConformanceFixtures {
		addConformanceFixtures(s)
	}
	return s, outSchemas
}

// serverMeta is what get_server_info reports about the MCP layer; the tool
// middleware puts it in every call's context.
type serverMeta struct {
	name, version string
	capabilities  map[string]bool
}

type metaKey struct{}

func metaFrom(ctx context.Context) *serverMeta {
	if m, ok := ctx.Value(metaKey{}).(*serverMeta); ok {
		return m
	}
	return &serverMeta{name: "quarry", version: "dev", capabilities: capabilities}
}

// callRecord collects what the final "tool call" log line reports; the
// tool handler fills it in.
type callRecord struct {
	dataset   string
	code      string // error code; "" when the call succeeded
	status    string // needs_confirmation, elicitation_sent, confirmed_parquet, ...
	method    string
	rows      int64
	totalRows int64
	bytes     int64
	truncated bool
}

type recordKey struct{}

// recordFrom returns the call record in ctx (a throwaway one if none).
func recordFrom(ctx context.Context) *callRecord {
	if r, ok := ctx.Value(recordKey{}).(*callRecord); ok {
		return r
	}
	return &callRecord{}
}

func (r *callRecord) fail(err error) { r.code = qerr.Code(err) }

// observe records the delivery of a result, if out is one.
func (r *callRecord) observe(out any) {
	var res *materialize.Result
	switch x := out.(type) {
	case *materialize.Result:
		res = x
	case *service.QueryResponse:
		res = x.Result
	}
	if res == nil {
		return
	}
	r.method, r.rows, r.totalRows, r.truncated = res.Method, res.RowCount, res.TotalRows, res.Truncated
	r.bytes = int64(len(res.Data)) + res.SizeBytes
}

// argDataset returns the dataset argument of a tool call, for logs.
func argDataset(args any) string {
	if m, ok := args.(map[string]any); ok {
		if d, ok := m["dataset"].(string); ok && len(d) <= 256 {
			return d
		}
	}
	return ""
}

// toolMiddleware gives every tool call a request id and logger, logs its
// outcome and duration, and turns a panic into an internal tool error.
func toolMiddleware(base *slog.Logger, meta *serverMeta, onCall func(ToolCall)) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
			ctx = withRequest(ctx, base, req.Header.Get("X-Request-Id"))
			rec := &callRecord{dataset: argDataset(req.Params.Arguments)}
			ctx = context.WithValue(ctx, recordKey{}, rec)
			ctx = context.WithValue(ctx, metaKey{}, meta)
			log := obs.Logger(ctx).With("tool", req.Params.Name)
			ctx, span := tracing.Start(ctx, "tools/call "+req.Params.Name, attribute.String("mcp.method.name", "tools/call"),
				attribute.String("gen_ai.tool.name", req.Params.Name), attribute.String("quarry.request_id", obs.RequestID(ctx)))
			start := time.Now()
			defer func() {
				if r := recover(); r != nil {
					log.Error("panic in tool handler", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
					res, err = errorResult(ctx, qerr.Internal(fmt.Errorf("panic: %v", r), "panic")), nil
					rec.code = qerr.CodeInternal
				}
				outcome := "ok"
				switch {
				case rec.code != "":
					outcome = rec.code
				case res != nil && res.IsError:
					outcome = "error"
				case err != nil:
					outcome = "protocol_error"
				}
				attrs := []any{"dataset", rec.dataset, "outcome", outcome, "is_error", res != nil && res.IsError,
					"duration_ms", time.Since(start).Milliseconds()}
				if rec.status != "" {
					attrs = append(attrs, "status", rec.status)
				}
				if rec.method != "" {
					attrs = append(attrs, "method", rec.method, "rows", rec.rows, "total_rows", rec.totalRows,
						"bytes", rec.bytes, "truncated", rec.truncated)
				}
				log.Info("tool call", attrs...)
				endToolSpan(span, rec, outcome)
				if onCall != nil {
					onCall(ToolCall{Tool: req.Params.Name, Outcome: outcome, Duration: time.Since(start), Method: rec.method, Rows: rec.rows, Bytes: rec.bytes})
				}
			}()
			return next(ctx, req)
		}
	}
}

// promptMiddleware gives every prompts/get a request id and logs it.
func promptMiddleware(base *slog.Logger) server.PromptHandlerMiddleware {
	return func(next server.PromptHandlerFunc) server.PromptHandlerFunc {
		return func(ctx context.Context, req mcp.GetPromptRequest) (out *mcp.GetPromptResult, err error) {
			ctx = withRequest(ctx, base, "")
			log := obs.Logger(ctx).With("prompt", req.Params.Name)
			start := time.Now()
			defer func() {
				if r := recover(); r != nil {
					log.Error("panic in prompt handler", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
					out, err = nil, fmt.Errorf("internal error (request %s)", obs.RequestID(ctx))
				}
				log.Info("prompt get", "duration_ms", time.Since(start).Milliseconds(), "error", err)
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
	if !obs.ValidRequestID(id) {
		id = obs.NewRequestID()
	}
	return obs.WithRequest(ctx, base, id)
}
