package mcpapi

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/service"
)

// FuzzBindArguments: tool arguments as a client sends them (raw JSON)
// bound into query_data's request never panic, and every refusal is an
// invalid_argument error naming what was wrong.
func FuzzBindArguments(f *testing.F) {
	for _, s := range []string{
		`{"dataset":"d","limit":9223372036854775807,"offset":null}`,
		`{"dataset":"d","limit":9223372036854775808}`,
		`{"dataset":"d","filters":[{"col":"x","op":"eq","value":9007199254740993}]}`,
		`{"dataset":1}`,
		`{"datset":"d"}`,
		`{"dataset":"d","columns":"x"}`,
		`[1,2]`,
		`null`,
		`{"dataset":"d","group_by":["a"],"aggs":[{"col":"*","fn":"count"}],"order_by":[{"col":"a","desc":"yes"}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var req mcp.CallToolRequest
		req.Params.RawArguments = json.RawMessage(raw)
		var in service.QueryRequest
		err := bindStrict(exactArguments(req), &in)
		if err == nil {
			return
		}
		if e := qerr.As(err); e == nil || e.Code != qerr.CodeInvalidArgument || e.Message == "" {
			t.Fatalf("binding %s: %v is not an invalid_argument error", raw, err)
		}
	})
}
