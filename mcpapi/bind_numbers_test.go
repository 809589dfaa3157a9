package mcpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/service"
)

// TestExactArguments: tool arguments are bound from the raw JSON with
// numbers exact (mcp-go's float64 Arguments would round them), top-level
// nulls count as absent, and binding errors quote the number as sent.
func TestExactArguments(t *testing.T) {
	var req mcp.CallToolRequest
	raw := `{"dataset":"d","limit":9223372036854775807,"offset":null,"filters":[{"col":"x","op":"eq","value":9007199254740993}]}`
	if err := json.Unmarshal([]byte(`{"name":"query_data","arguments":`+raw+`}`), &req.Params); err != nil {
		t.Fatal(err)
	}
	var in service.QueryRequest
	if err := bindStrict(exactArguments(req), &in); err != nil {
		t.Fatal(err)
	}
	if in.Limit == nil || *in.Limit != 9223372036854775807 || in.Offset != nil {
		t.Fatalf("limit %v offset %v", in.Limit, in.Offset)
	}
	if v := string(in.Filters[0].Value); v != "9007199254740993" {
		t.Fatalf("filter value %s", v)
	}
	// Without raw JSON (in-process Go callers) the decoded arguments are used.
	req.Params.RawArguments = nil
	req.Params.Arguments = map[string]any{"dataset": "d"}
	if got, ok := exactArguments(req).(map[string]any); !ok || got["dataset"] != "d" {
		t.Fatalf("fallback: %v", got)
	}

	err := bindStrict(json.RawMessage(`{"dataset":"d","limit":9223372036854775808}`), &in)
	e := qerr.As(err)
	if e == nil || e.Code != qerr.CodeInvalidArgument || e.Diagnostics["field"] != "limit" ||
		!strings.Contains(e.Message, "got JSON number 9223372036854775808") || !strings.Contains(e.Message, "to 9223372036854775807") {
		t.Fatalf("limit 2^63: %v", err)
	}
}
