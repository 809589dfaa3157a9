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

// TestHugeNumbers: a tools/call whose arguments hold a number float64
// cannot hold is answered with a structured tool error naming it; every
// other message is left to mcp-go.
func TestHugeNumbers(t *testing.T) {
	cases := []struct {
		msg, field, num string // field "" = not answered
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"query_data","arguments":{"dataset":"d","filters":[{"col":"x","op":"lt","value":1e400}]}}}`, "filters[0].value", "1e400"},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"query_data","arguments":{"limit":-2E+308,"b":[1,{"c":1e309}]}}}`, "b[1].c", "1e309"},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"query_data","arguments":{"a":1.7e308,"b":1e-400,"c":9223372036854775808}}}`, "", ""},
		{`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"arguments":{"a":1e400}}}`, "", ""},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"q","arguments":{"a":1e400}}}`, "", ""},
		{`not json`, "", ""},
	}
	for _, c := range cases {
		b := hugeNumberResponse([]byte(c.msg))
		if c.field == "" {
			if b != nil {
				t.Errorf("%s: answered %s", c.msg, b)
			}
			continue
		}
		var resp struct {
			ID     json.RawMessage    `json:"id"`
			Result mcp.CallToolResult `json:"result"`
		}
		if err := json.Unmarshal(b, &resp); err != nil || !resp.Result.IsError || len(resp.Result.Content) != 1 {
			t.Fatalf("%s: response %s (%v)", c.msg, b, err)
		}
		var env map[string]json.RawMessage
		_ = json.Unmarshal([]byte(c.msg), &env)
		if string(resp.ID) != string(env["id"]) {
			t.Errorf("id %s, want %s", resp.ID, env["id"])
		}
		var e qerr.Error
		if err := json.Unmarshal([]byte(resp.Result.Content[0].(mcp.TextContent).Text), &e); err != nil {
			t.Fatal(err)
		}
		if e.Code != qerr.CodeInvalidArgument || e.Diagnostics["field"] != c.field || !strings.Contains(e.Message, c.num) || e.Hint == "" {
			t.Errorf("%s: error %+v, want field %s naming %s", c.msg, e, c.field, c.num)
		}
	}
}
