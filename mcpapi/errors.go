package mcpapi

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
)

// errorResult turns err into a model-facing tool error: isError=true and a
// text item holding the JSON {error, code, hint, diagnostics}. Internal
// errors are logged with their cause and shown without it.
func errorResult(ctx context.Context, err error) *mcp.CallToolResult {
	e := qerr.As(err)
	log := obs.Logger(ctx)
	if errors.Is(e, qerr.ErrInternal) {
		log.Error("tool failed", "code", e.Code, "err", err)
		e = &qerr.Error{Message: "internal error; the server log has details (request " + obs.RequestID(ctx) + ")", Code: qerr.CodeInternal,
			Hint: "retry once; if it persists, report it with the request id"}
	} else {
		log.Info("tool error", "code", e.Code, "err", e.Message)
	}
	b, mErr := json.Marshal(e)
	if mErr != nil {
		b = []byte(`{"error":"internal error","code":"internal"}`)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(b))}, IsError: true}
}

// structuredResult returns v as structuredContent plus its JSON as text,
// for clients that only read text content.
func structuredResult(v any) (*mcp.CallToolResult, error) {
	var b []byte
	var err error
	if a, ok := v.(jsonAppender); ok {
		b, err = a.AppendJSON(nil)
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return nil, err
	}
	return mcp.NewToolResultStructured(json.RawMessage(b), string(b)), nil
}

// jsonAppender is implemented by results that carry large pre-encoded JSON
// (query rows, slices) and can write themselves without json.Marshal
// re-scanning those bytes.
type jsonAppender interface {
	AppendJSON(dst []byte) ([]byte, error)
}
