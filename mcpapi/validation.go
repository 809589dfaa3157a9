package mcpapi

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/qerr"
)

// validationPrefix starts the text of mcp-go's input-validation failures
// (server.WithInputSchemaValidation answers them before any middleware runs).
const validationPrefix = "input schema validation failed"

// leafLocation finds the JSON pointers in mcp-go's message, one per failed
// leaf: "/filters/0/op: value must be one of ...".
var leafLocation = regexp.MustCompile(`(/[^\s:]*|<root>): `)

// mcp-go prints each leaf's error kind with %+v; these turn the common
// kinds back into sentences.
var (
	kindGotWant    = regexp.MustCompile(`&\{Got:(\S*) Want:\[([^\]]*)\]\}`)
	kindProperties = regexp.MustCompile(`&\{Properties:\[([^\]]*)\]\}`)
)

// readable rewrites mcp-go's leaf messages: "/limit: &{Got:string
// Want:[null integer]}" becomes "limit: got string, want one of null,
// integer"; additional properties become "unknown argument(s) x".
func readable(msg string) string {
	msg = kindGotWant.ReplaceAllStringFunc(msg, func(m string) string {
		p := kindGotWant.FindStringSubmatch(m)
		return "got " + p[1] + ", want one of " + strings.Join(strings.Fields(p[2]), ", ")
	})
	msg = kindProperties.ReplaceAllStringFunc(msg, func(m string) string {
		p := kindProperties.FindStringSubmatch(m)
		return "unknown argument(s) " + strings.Join(strings.Fields(p[1]), ", ")
	})
	return strings.ReplaceAll(msg, "<root>", "arguments")
}

// structuredValidationErrors rewrites mcp-go's plain-text input-validation
// results into Quarry's structured error {error, code, hint, diagnostics}
// with a stable code, so a schema violation looks to the model like every
// other error: invalid_filter for a filter op, invalid_aggregate for an
// aggregate function, unsupported_format for an output format, and
// invalid_argument otherwise.
func structuredValidationErrors(h *server.Hooks) {
	h.AddAfterCallTool(func(ctx context.Context, _ any, req *mcp.CallToolRequest, result any) {
		res, ok := result.(*mcp.CallToolResult)
		if !ok || res == nil || !res.IsError || len(res.Content) != 1 {
			return
		}
		tc, ok := res.Content[0].(mcp.TextContent)
		if !ok || !strings.HasPrefix(tc.Text, validationPrefix) {
			return
		}
		msg := strings.TrimPrefix(strings.TrimPrefix(tc.Text, validationPrefix), ": ")
		var fields []string
		for _, m := range leafLocation.FindAllStringSubmatch(msg, -1) {
			f := m[1]
			if f == "<root>" {
				f = "/" // the arguments object itself (e.g. an unknown argument)
			}
			fields = append(fields, f)
		}
		code := qerr.CodeInvalidArgument
		if len(fields) > 0 {
			last := fields[0][strings.LastIndex(fields[0], "/")+1:]
			switch last {
			case "op":
				code = qerr.CodeInvalidFilter
			case "fn":
				code = qerr.CodeInvalidAggregate
			case "output_format", "format":
				code = qerr.CodeUnsupportedFormat
			}
		}
		e := qerr.Invalid(code, "arguments of %s do not match its input schema: %s", req.Params.Name, readable(msg)).
			WithHint("fix the named argument (see the tool's inputSchema in tools/list) and call again")
		if len(fields) > 0 {
			e.With("fields", fields)
		}
		b, err := json.Marshal(e)
		if err != nil {
			return
		}
		res.Content[0] = mcp.NewTextContent(string(b))
	})
}

// dropNullArguments treats a top-level argument given as JSON null as not
// given (models often send "limit": null for optional knobs), before
// mcp-go validates the arguments against the input schema.
func dropNullArguments(h *server.Hooks) {
	h.AddBeforeCallTool(func(_ context.Context, _ any, req *mcp.CallToolRequest) {
		args, ok := req.Params.Arguments.(map[string]any)
		if !ok {
			return
		}
		for k, v := range args {
			if v == nil {
				delete(args, k)
			}
		}
	})
}
