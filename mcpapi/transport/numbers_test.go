package transport

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/qerr"
)

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
