package e2e

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/chart/charttest"
)

// plotSummary is the part of plot's structured result the tests read.
type plotSummary struct {
	Kind        string          `json:"kind"`
	Format      string          `json:"format"`
	MIMEType    string          `json:"mime_type"`
	Width       int             `json:"width"`
	Height      int             `json:"height"`
	SizeBytes   int64           `json:"size_bytes"`
	RowsInput   int64           `json:"rows_input"`
	RowsUsed    int64           `json:"rows_used"`
	Marks       int             `json:"marks"`
	Bins        int             `json:"bins"`
	ResourceURI string          `json:"resource_uri"`
	VegaLite    json.RawMessage `json:"vega_lite"`
	Dropped     []struct {
		Rows   int64  `json:"rows"`
		Reason string `json:"reason"`
	} `json:"dropped"`
}

// imageOf returns the one image content item of a plot result, decoded.
func imageOf(t *testing.T, res *mcp.CallToolResult, mime string) []byte {
	t.Helper()
	var imgs []mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(mcp.ImageContent); ok {
			imgs = append(imgs, ic)
		}
	}
	if len(imgs) != 1 || imgs[0].MIMEType != mime {
		t.Fatalf("want one %s image content item, got %d: %+v", mime, len(imgs), res.Content)
	}
	b, err := base64.StdEncoding.DecodeString(imgs[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPlotStdio(t *testing.T) { runPlot(t, startStdio(t)) }

func TestPlotHTTP(t *testing.T) {
	c, _ := startHTTP(t)
	var s plotSummary
	res := call(t, c, "plot", map[string]any{"dataset": "weather/daily", "chart": map[string]any{"kind": "histogram", "x": "tmax_c"}, "width": 500, "height": 300}, &s)
	charttest.CheckPNG(t, imageOf(t, res, "image/png"), 500, 300)
	if s.RowsInput != 3680 || s.Bins == 0 {
		t.Fatalf("%+v", s)
	}
}

func runPlot(t *testing.T, c *client.Client) {
	t.Run("png image content for every kind", func(t *testing.T) {
		for _, chart := range []map[string]any{
			{"kind": "bar", "x": "category", "y": "qty", "color": "region"},
			{"kind": "line", "x": "ordered_at", "y": "unit_price"},
			{"kind": "area", "x": "ordered_at"},
			{"kind": "scatter", "x": "qty", "y": "unit_price", "facet": "category"},
			{"kind": "histogram", "x": "unit_price", "bins": 15},
			{"kind": "box", "x": "category", "y": "unit_price"},
			{"kind": "heatmap", "x": "category", "y": "region"},
		} {
			var s plotSummary
			res := call(t, c, "plot", map[string]any{"dataset": "sales/orders", "chart": chart, "width": 640, "height": 400}, &s)
			charttest.CheckPNG(t, imageOf(t, res, "image/png"), 640, 400)
			if s.Kind != chart["kind"] || s.Format != "png" || s.RowsInput != 1500 || s.Marks == 0 || s.RowsUsed > s.RowsInput {
				t.Fatalf("%v: %+v", chart, s)
			}
			if !strings.Contains(text(res), `"rows_used"`) {
				t.Fatalf("the summary is not in the text content: %s", text(res))
			}
		}
	})
	t.Run("svg image content", func(t *testing.T) {
		res := call(t, c, "plot", map[string]any{"dataset": "weather/stations", "chart": map[string]any{"kind": "bar", "x": "country"}, "format": "svg"}, nil)
		if b := imageOf(t, res, "image/svg+xml"); !strings.Contains(string(b), "<svg") {
			t.Fatalf("not an SVG: %.200s", b)
		}
	})
	t.Run("file output is a resource link to a PNG artifact", func(t *testing.T) {
		var s plotSummary
		res := call(t, c, "plot", map[string]any{"dataset": "weather/daily", "chart": map[string]any{"kind": "box", "y": "tmax_c"}, "output": "file"}, &s)
		var link *mcp.ResourceLink
		for _, ct := range res.Content {
			if l, ok := ct.(mcp.ResourceLink); ok {
				link = &l
			}
		}
		if link == nil || link.URI != s.ResourceURI || link.MIMEType != "image/png" {
			t.Fatalf("link %+v, summary %+v", link, s)
		}
		charttest.CheckPNG(t, readArtifact(t, c, s.ResourceURI, "image/png"), 800, 500)
	})
	t.Run("vega-lite spec, no image", func(t *testing.T) {
		var s plotSummary
		res := call(t, c, "plot", map[string]any{"dataset": "sales/orders", "chart": map[string]any{"kind": "bar", "x": "region"}, "format": "vega-lite"}, &s)
		var spec struct {
			Schema string `json:"$schema"`
			Data   struct {
				Values []map[string]any `json:"values"`
			} `json:"data"`
		}
		if err := json.Unmarshal(s.VegaLite, &spec); err != nil || !strings.Contains(spec.Schema, "vega-lite/v5") || len(spec.Data.Values) != s.Marks {
			t.Fatalf("%v %+v", err, s)
		}
		var total float64
		for _, v := range spec.Data.Values {
			total += v["count"].(float64)
		}
		if total != 1500 {
			t.Fatalf("bar counts add up to %v, want 1500", total)
		}
		for _, ct := range res.Content {
			if _, ok := ct.(mcp.ImageContent); ok {
				t.Fatal("vega-lite output carries an image")
			}
		}
	})
	t.Run("a result handle", func(t *testing.T) {
		var q struct {
			ResultHandle string `json:"result_handle"`
		}
		call(t, c, "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"id", "value"}, "max_rows": 5}, &q)
		var s plotSummary
		res := call(t, c, "plot", map[string]any{"result_handle": q.ResultHandle, "chart": map[string]any{"kind": "scatter", "x": "id", "y": "value"}}, &s)
		charttest.CheckPNG(t, imageOf(t, res, "image/png"), 800, 500)
		if s.RowsInput != 100000 || s.Marks != 5000 {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("errors are structured", func(t *testing.T) {
		e := callErr(t, c, "plot", map[string]any{"dataset": "sales/orders", "chart": map[string]any{"kind": "bar", "x": "regoin"}})
		if e.Code != "invalid_argument" || !strings.Contains(e.Hint, `"region"`) {
			t.Fatalf("%+v", e)
		}
		e = callErr(t, c, "plot", map[string]any{"dataset": "sales/orders", "chart": map[string]any{"kind": "bar", "x": "region"}, "width": 9000})
		if e.Code != "invalid_argument" || !strings.Contains(e.Error, "200..2000") {
			t.Fatalf("%+v", e)
		}
		e = callErr(t, c, "plot", map[string]any{"dataset": "sales/orders", "chart": map[string]any{"kind": "pie", "x": "region"}})
		if e.Code != "invalid_argument" {
			t.Fatalf("%+v", e)
		}
	})
}

// TestPlotMCPSDK runs interop/mcp-sdk/plot.mjs: the official TypeScript
// SDK client calls plot and decodes the PNG image content itself.
func TestPlotMCPSDK(t *testing.T) {
	out := nodeScript(t, "mcp-sdk", "node_modules/@modelcontextprotocol/sdk/package.json", "plot.mjs", "--bin", binary)
	if !strings.Contains(string(out), "interop: OK") {
		t.Fatalf("plot.mjs:\n%s", out)
	}
	t.Logf("plot.mjs:\n%s", out)
}
