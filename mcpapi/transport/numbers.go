package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/qerr"
)

// CheckArgumentNumbers returns an invalid_argument error naming the first
// number in the tool arguments args that float64 cannot hold (1e400):
// mcp-go decodes every tools/call request's arguments with float64 numbers
// as well as keeping them raw, and refuses the whole request with a
// JSON-RPC parse error when one overflows. Callers answer such calls with
// this error as a tool result instead. Nil when there is none or args is
// not JSON.
func CheckArgumentNumbers(args json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	path, num, ok := hugeNumber(v, "")
	if !ok {
		return nil
	}
	return qerr.Invalid(qerr.CodeInvalidArgument, "argument %s: the JSON number %s overflows float64 (magnitude above about 1.8e308), which tool arguments are decoded with", path, num).
		With("field", path).
		WithHint("pass a smaller number; filter values may also be given as a string (%q), which compares exactly", num)
}

// hugeNumber finds, in sorted key order, a json.Number in v that
// overflows float64, and its path ("filters[0].value").
func hugeNumber(v any, path string) (string, string, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(x.String(), 64)
		if errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
			return path, x.String(), true
		}
	case []any:
		for i, e := range x {
			if p, n, ok := hugeNumber(e, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, n, true
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if p, n, ok := hugeNumber(x[k], p); ok {
				return p, n, true
			}
		}
	}
	return "", "", false
}

// hugeNumberResponse answers a tools/call request whose arguments hold a
// number float64 cannot hold (CheckArgumentNumbers) with that error as a
// tool result, echoing the request's id; nil for any other message.
func hugeNumberResponse(msg []byte) []byte {
	var env struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &env) != nil || env.Method != string(mcp.MethodToolsCall) || len(env.ID) == 0 || !validID(env.ID) {
		return nil
	}
	err := CheckArgumentNumbers(env.Params.Arguments)
	if err == nil {
		return nil
	}
	e, _ := json.Marshal(qerr.As(err))
	result, mErr := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(e))}, IsError: true})
	if mErr != nil {
		return nil
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	_ = json.Compact(&b, env.ID)
	b.WriteString(`,"result":`)
	b.Write(result)
	b.WriteString("}\n")
	return b.Bytes()
}
