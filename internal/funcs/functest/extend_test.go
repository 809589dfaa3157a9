// Package functest extends the function registry from a test and runs the
// new functions end to end: tool schema, planner, engine and the docs
// generator. It is its own test binary so that the extra registrations do
// not show up in the snapshots and docs of the other packages.
package functest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/funcs"
)

// The test-only registrations: one scalar function and one aggregate, each
// declared in one place.
func init() {
	funcs.RegisterScalar(funcs.ScalarDecl{
		Name: "cube", MinArgs: 1, MaxArgs: 1, Signature: "cube(x)", Doc: "x * x * x (test-only)",
		Int: func(dst, src []int64, valid []bool, _ int64) bool {
			for i, v := range src {
				if valid != nil && !valid[i] {
					continue
				}
				sq, ok := funcs.MulInt(v, v)
				if !ok {
					return false
				}
				if dst[i], ok = funcs.MulInt(sq, v); !ok {
					return false
				}
			}
			return true
		},
		Float: func(dst, src []float64, _ int64) {
			for i, v := range src {
				dst[i] = v * v * v
			}
		},
	})
	funcs.RegisterAgg(funcs.AggDecl{
		Fn: "sum_sq", Input: funcs.NumericInput, ResultDoc: "float64",
		Result: func(arrow.DataType) arrow.DataType { return arrow.PrimitiveTypes.Float64 },
		Doc:    "sum of the squares of the non-null values (test-only); no values: null",
		Kernel: func(arrow.DataType, float64) (funcs.AggState, error) { return &sumSq{}, nil },
	})
}

// sumSq is the state of sum_sq: per group, the sum of squares and whether
// any value was seen.
type sumSq struct {
	sums []float64
	seen []bool
}

func (s *sumSq) Grow(n int) {
	for len(s.sums) < n {
		s.sums, s.seen = append(s.sums, 0), append(s.seen, false)
	}
}

func (s *sumSq) Update(col arrow.Array, gids []int32) error {
	var at func(i int) float64
	switch c := col.(type) {
	case *array.Int64:
		at = func(i int) float64 { return float64(c.Value(i)) }
	case *array.Float64:
		at = c.Value
	default:
		return fmt.Errorf("sum_sq: unexpected input %s", col.DataType())
	}
	for i, g := range gids {
		if col.IsNull(i) {
			continue
		}
		v := at(i)
		s.sums[g] += v * v
		s.seen[g] = true
	}
	return nil
}

func (s *sumSq) Build(mem memory.Allocator, lo, hi int) arrow.Array {
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	b.AppendValues(s.sums[lo:hi], s.seen[lo:hi])
	return b.NewArray()
}

func (s *sumSq) GroupBytes() int64 { return 9 }

const csv = "g,x,f,s\na,1,0.5,p\na,2,,q\nb,3,1.5,r\nb,,2.5,s\nb,-4,-1,t\n"

func session(t *testing.T) (*client.Client, context.Context) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(ctx, app.Config{Data: dir, ArtifactDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	c, err := client.NewInProcessClient(a.MCP)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c, ctx
}

// call runs a tool and returns its structured answer and whether it is an error.
func call(t *testing.T, c *client.Client, ctx context.Context, tool, args string) (map[string]any, bool) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, m
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &out); err != nil {
		t.Fatalf("%s: %v: %s", tool, err, res.Content[0].(mcp.TextContent).Text)
	}
	return out, res.IsError
}

// enumOf finds the enum of the property named prop anywhere in a schema.
func enumOf(n any, prop string) []string {
	switch x := n.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			if p, ok := props[prop].(map[string]any); ok {
				if e, ok := p["enum"].([]any); ok {
					var out []string
					for _, v := range e {
						out = append(out, v.(string))
					}
					return out
				}
			}
		}
		for _, v := range x {
			if e := enumOf(v, prop); e != nil {
				return e
			}
		}
	case []any:
		for _, v := range x {
			if e := enumOf(v, prop); e != nil {
				return e
			}
		}
	}
	return nil
}

func TestRegisteredFunctionsEndToEnd(t *testing.T) {
	c, ctx := session(t)

	// Tool schema: the aggregate is in the fn enum of aggregate and query_data.
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name != "aggregate" && tool.Name != "query_data" {
			continue
		}
		raw, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		var schema map[string]any
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		// The aggs items' fn (windows have an fn enum of their own, without
		// aggregates that are not declared Window, as sum_sq).
		// aggregate lists the arguments it shares with query_data as {} (the
		// tools/list byte budget, docs/TOOLS.md "Schemas"); windows are
		// listed as a compact signature, so an enum is checked where listed.
		props, _ := schema["inputSchema"].(map[string]any)["properties"].(map[string]any)
		fns := enumOf(props["aggs"], "fn")
		if (tool.Name == "query_data" || fns != nil) && (!slices.Contains(fns, "sum_sq") || !slices.Contains(fns, "count")) {
			t.Errorf("%s: aggs fn enum %v lacks sum_sq or count", tool.Name, fns)
		}
		if wins := enumOf(props["windows"], "fn"); wins != nil && (!slices.Contains(wins, "rank") || slices.Contains(wins, "sum_sq")) {
			t.Errorf("%s: windows fn enum %v: want rank and not sum_sq (not declared Window)", tool.Name, wins)
		}
	}

	// Planner and engine: the scalar function in columns (also folded as a
	// constant), the aggregate per group, the aggregate over an expression
	// of the new function.
	out, isErr := call(t, c, ctx, "aggregate", `{"dataset": "t", "group_by": ["g"],
		"aggs": [{"col": "x", "fn": "sum_sq"}, {"col": "cube(f)", "fn": "sum_sq", "as": "c"}, {"col": "s", "fn": "count"}],
		"order_by": [{"col": "g"}]}`)
	if isErr {
		t.Fatalf("aggregate failed: %v", out)
	}
	want := []map[string]any{
		{"g": "a", "sum_sq_x": 5.0, "c": 0.125 * 0.125, "count_s": 2.0},
		{"g": "b", "sum_sq_x": 25.0, "c": math.Pow(1.5, 6) + math.Pow(2.5, 6) + 1, "count_s": 3.0},
	}
	checkRows(t, out, want)

	out, isErr = call(t, c, ctx, "query_data", `{"dataset": "t", "columns": ["x", "cube(x) + cube(2) AS y", "cube(f) AS z"]}`)
	if isErr {
		t.Fatalf("query_data failed: %v", out)
	}
	checkRows(t, out, []map[string]any{
		{"x": 1.0, "y": 9.0, "z": 0.125},
		{"x": 2.0, "y": 16.0, "z": nil},
		{"x": 3.0, "y": 35.0, "z": 3.375},
		{"x": nil, "y": nil, "z": 15.625},
		{"x": -4.0, "y": -56.0, "z": -1.0},
	})

	// The planner types and rejects from the declarations.
	for _, tc := range []struct{ tool, args, code, text string }{
		{"aggregate", `{"dataset": "t", "group_by": [], "aggs": [{"col": "s", "fn": "sum_sq"}]}`, "invalid_aggregate", "sum_sq is not supported on values of type string"},
		{"query_data", `{"dataset": "t", "columns": ["cube(x, 2)"]}`, "invalid_argument", "cube takes 1 argument(s), got 2"},
		{"query_data", `{"dataset": "t", "columns": ["cube(s)"]}`, "invalid_argument", "cube needs numbers, got string"},
		{"query_data", `{"dataset": "t", "columns": ["x"], "filters": [{"col": "x", "op": "cube", "value": 1}]}`, "invalid_filter", ""},
		{"aggregate", `{"dataset": "t", "group_by": [], "aggs": [{"col": "x", "fn": "sum_sqr"}]}`, "invalid_aggregate", ""},
	} {
		out, isErr := call(t, c, ctx, tc.tool, tc.args)
		if !isErr || out["code"] != tc.code || !strings.Contains(fmt.Sprint(out["error"]), tc.text) {
			t.Errorf("%s %s: got %v (error %v), want code %s containing %q", tc.tool, tc.args, out, isErr, tc.code, tc.text)
		}
	}

	// Docs generator: both appear in the generated tables.
	doc, err := os.ReadFile("../../../docs/QUERY.md")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := funcs.ReplaceDocSections(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		"| `cube(x)` | x: number | type of x (int64 or float64) | x * x * x (test-only) |",
		"| `sum_sq` | number | float64 | sum of the squares of the non-null values (test-only); no values: null |",
	} {
		if !strings.Contains(gen, row) {
			t.Errorf("generated docs lack %q", row)
		}
		if strings.Contains(string(doc), row) {
			t.Errorf("the checked-in docs contain the test-only row %q", row)
		}
	}
}

func checkRows(t *testing.T, out map[string]any, want []map[string]any) {
	t.Helper()
	rows, _ := out["data"].([]any)
	if len(rows) != len(want) {
		t.Fatalf("got %d rows %v, want %d", len(rows), rows, len(want))
	}
	for i, r := range rows {
		got := r.(map[string]any)
		for k, w := range want[i] {
			g := got[k]
			if gf, ok := g.(float64); ok {
				if wf, ok := w.(float64); ok && math.Abs(gf-wf) <= 1e-9*math.Max(1, math.Abs(wf)) {
					continue
				}
			}
			if g != w {
				t.Errorf("row %d %s = %v, want %v (row %v)", i, k, g, w, got)
			}
		}
	}
}
