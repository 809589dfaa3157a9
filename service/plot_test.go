package service

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/chart"
	"github.com/quarrydb/quarry/internal/chart/charttest"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/planner"
)

// plotRoot writes the plot tests' data: 400 days of two cities with a
// temperature (null every 50th row) and an order quantity, and 6,000
// points for sampling.
func plotRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("day,city,temp,qty\n")
	for i := range 400 {
		temp := fmt.Sprint(float64(i%40) - 5.5)
		if i%50 == 0 {
			temp = ""
		}
		fmt.Fprintf(&b, "2024-%02d-%02d,%s,%s,%d\n", 1+(i/2)%12, 1+(i/24)%28, []string{"Yerevan", "Gyumri"}[i%2], temp, i%7)
	}
	if err := os.WriteFile(filepath.Join(root, "days.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	b.WriteString("x,y\n")
	for i := range 6000 {
		fmt.Fprintf(&b, "%d,%d\n", i, (i*37)%1000)
	}
	if err := os.WriteFile(filepath.Join(root, "points.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// vegaValues draws req as Vega-Lite and returns its inline data.
func vegaValues(t *testing.T, s *Service, req PlotRequest) (*PlotResponse, []map[string]any) {
	t.Helper()
	req.Format = plotVegaLite
	out, err := s.Plot(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Schema string `json:"$schema"`
		Data   struct {
			Values []map[string]any `json:"values"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out.VegaLite, &spec); err != nil || !strings.Contains(spec.Schema, "vega-lite/v5") {
		t.Fatalf("not a Vega-Lite v5 spec (%v): %.300s", err, out.VegaLite)
	}
	return out, spec.Data.Values
}

func TestPlotKindsPNG(t *testing.T) {
	s, alloc := newTestService(t, plotRoot(t), 0, nil)
	// Two kinds only: drawing every kind is tested in internal/chart and
	// e2e (and is slow under -race).
	cases := []PlotRequest{
		{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "city", Y: "qty"}},
		{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "qty", Facet: "city"}, Width: 2000, Height: 200},
	}
	for _, req := range cases {
		t.Run(req.Chart.Kind, func(t *testing.T) {
			out, err := s.Plot(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			w, h := 800, 500 // the defaults
			if req.Width != 0 {
				w, h = req.Width, req.Height
			}
			charttest.CheckPNG(t, out.Image, w, h)
			if out.MIMEType != "image/png" || out.SizeBytes != int64(len(out.Image)) || out.Marks == 0 || out.RowsUsed > out.RowsInput {
				t.Fatalf("summary: %+v", out)
			}
			if dir := os.Getenv("PLOT_PNG_DIR"); dir != "" {
				_ = os.WriteFile(filepath.Join(dir, req.Chart.Kind+fmt.Sprint(req.Width)+".png"), out.Image, 0o644)
			}
		})
	}
	waitFreed(t, alloc)
}

// TestPlotNumbers checks the marks the engine computes, read from the
// Vega-Lite inline data, and the summary's counts.
func TestPlotNumbers(t *testing.T) {
	s, alloc := newTestService(t, plotRoot(t), 0, nil)
	t.Run("bar sums per city, largest first", func(t *testing.T) {
		out, vs := vegaValues(t, s, PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "city", Y: "qty"}})
		// qty = i%7 summed over even and odd i < 400.
		var even, odd float64
		for i := range 400 {
			if i%2 == 0 {
				even += float64(i % 7)
			} else {
				odd += float64(i % 7)
			}
		}
		want := []map[string]any{{"city": "Yerevan", "qty": even}, {"city": "Gyumri", "qty": odd}}
		if even < odd {
			want[0], want[1] = want[1], want[0]
		}
		if fmt.Sprint(vs) != fmt.Sprint(want) || out.RowsInput != 400 || out.RowsUsed != 400 || out.Y != "sum of qty" {
			t.Fatalf("got %v %+v, want %v", vs, out, want)
		}
	})
	t.Run("histogram bins and null x dropped", func(t *testing.T) {
		out, vs := vegaValues(t, s, PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "histogram", X: "temp", Bins: 9}})
		var total float64
		for _, v := range vs {
			total += v["count"].(float64)
			if v["bin_end"].(float64)-v["bin_start"].(float64) != out.BinWidth {
				t.Fatalf("bin %v is not %v wide", v, out.BinWidth)
			}
		}
		// temp runs -5.5 .. 33.5: 39 / 9 → width 5, from -10.
		if out.BinWidth != 5 || out.Bins != 9 || vs[0]["bin_start"] != -10.0 || total != 392 || out.RowsInput != 400 || out.RowsUsed != 392 ||
			len(out.Dropped) != 1 || out.Dropped[0] != (DroppedRows{Rows: 8, Reason: "temp is null"}) {
			t.Fatalf("%+v %v", out, vs)
		}
	})
	t.Run("scatter samples and says so", func(t *testing.T) {
		out, vs := vegaValues(t, s, PlotRequest{Dataset: "points", Chart: ChartSpec{Kind: "scatter", X: "x", Y: "y"}})
		again, _ := vegaValues(t, s, PlotRequest{Dataset: "points", Chart: ChartSpec{Kind: "scatter", X: "x", Y: "y"}})
		if len(vs) != maxScatterPoints || out.RowsInput != 6000 || out.RowsUsed != maxScatterPoints || !strings.Contains(out.Sampling, "5,000 of 6,000") ||
			string(out.VegaLite) != string(again.VegaLite) {
			t.Fatalf("%+v (%d points)", out, len(vs))
		}
	})
	t.Run("box five numbers", func(t *testing.T) {
		_, vs := vegaValues(t, s, PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "box", Y: "qty"}})
		if len(vs) != 1 || vs[0]["min"] != 0.0 || vs[0]["max"] != 6.0 || vs[0]["median"] != 3.0 {
			t.Fatalf("%v", vs)
		}
	})
	t.Run("line over dates keeps x order, one row per mark", func(t *testing.T) {
		out, vs := vegaValues(t, s, PlotRequest{Dataset: "days", Spec: planner.Spec{Filters: []planner.FilterSpec{{Col: "city", Op: planner.OpEq, Value: json.RawMessage(`"Gyumri"`)}}},
			Chart: ChartSpec{Kind: "line", X: "day", Y: "qty", Agg: "max"}})
		if vs[0]["day"] != "2024-01-01" || out.RowsInput != 200 || len(vs) == 0 {
			t.Fatalf("%+v %v", out, vs[:3])
		}
		for i := 1; i < len(vs); i++ {
			if vs[i]["day"].(string) <= vs[i-1]["day"].(string) {
				t.Fatalf("not in x order at %d: %v", i, vs[i-1:i+1])
			}
		}
	})
	t.Run("spec that aggregates runs first", func(t *testing.T) {
		out, vs := vegaValues(t, s, PlotRequest{Dataset: "days",
			Spec:  planner.Spec{GroupBy: planner.GroupKeys{"city"}, Aggs: []planner.AggSpec{{Col: "*", Fn: planner.AggCount, As: "n"}}},
			Chart: ChartSpec{Kind: "bar", X: "city", Y: "n"}})
		if len(vs) != 2 || vs[0]["n"] != 200.0 || out.Y != "n" || out.Aggregation != "" {
			t.Fatalf("%+v %v", out, vs)
		}
	})
	waitFreed(t, alloc)
}

func TestPlotInputs(t *testing.T) {
	s, alloc := newTestService(t, plotRoot(t), 0, nil)
	ctx := context.Background()
	t.Run("sql", func(t *testing.T) {
		out, vs := vegaValues(t, s, PlotRequest{SQL: `SELECT city, sum(qty) AS units FROM days GROUP BY city`, Chart: ChartSpec{Kind: "bar", X: "city", Y: "units"}})
		if len(vs) != 2 || out.RowsInput != 2 || strings.Contains(out.Title, "·") {
			t.Fatalf("%+v %v", out, vs)
		}
	})
	waitFreed(t, alloc)
	t.Run("result handle", func(t *testing.T) {
		qr, err := s.Query(ctx, QueryRequest{EstimateRequest: EstimateRequest{Dataset: "points"}, DeliveryOptions: DeliveryOptions{MaxRows: 10}})
		if err != nil || qr.ResultHandle == "" {
			t.Fatalf("%v %+v", err, qr)
		}
		held := alloc.CurrentAlloc() // the handle's table
		out, vs := vegaValues(t, s, PlotRequest{ResultHandle: qr.ResultHandle, Chart: ChartSpec{Kind: "histogram", X: "y", Bins: 10},
			Spec: planner.Spec{Filters: []planner.FilterSpec{{Col: "x", Op: planner.OpLt, Value: json.RawMessage(`1000`)}}}})
		if got := alloc.CurrentAlloc(); got != held {
			t.Fatalf("plotting a handle left %d bytes allocated, want the handle's %d", got, held)
		}
		if out.RowsInput != 1000 || len(vs) != 10 {
			t.Fatalf("%+v %v", out, vs)
		}
		if _, err := s.Plot(ctx, PlotRequest{ResultHandle: "h_nope", Chart: ChartSpec{Kind: "bar", X: "x"}}); qerr.Code(err) != qerr.CodeHandleExpired {
			t.Fatalf("unknown handle: %v", err)
		}
	})
	t.Run("file output", func(t *testing.T) {
		out, err := s.Plot(ctx, PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "city"}, Format: plotSVG, Output: plotFile})
		if err != nil || !strings.HasSuffix(out.ResourceURI, ".svg") || out.Image != nil {
			t.Fatalf("%v %+v", err, out)
		}
		b, mime, err := s.ReadResource(ctx, out.ResourceURI)
		if err != nil || mime != "image/svg+xml" || !strings.Contains(string(b), "<svg") || int64(len(b)) != out.SizeBytes {
			t.Fatalf("%v %s %.100s", err, mime, b)
		}
	})
}

func TestPlotErrors(t *testing.T) {
	s, _ := newTestService(t, plotRoot(t), 0, nil)
	cases := []struct {
		name string
		req  PlotRequest
		code string
		in   string
	}{
		{"unknown column, did you mean", PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "cty"}}, qerr.CodeInvalidArgument, `did you mean "city"`},
		{"no source", PlotRequest{Chart: ChartSpec{Kind: "bar", X: "city"}}, qerr.CodeInvalidArgument, "exactly one"},
		{"two sources", PlotRequest{Dataset: "days", SQL: "SELECT 1", Chart: ChartSpec{Kind: "bar", X: "city"}}, qerr.CodeInvalidArgument, "exactly one"},
		{"unknown kind", PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "pie", X: "city"}}, qerr.CodeInvalidArgument, "kind"},
		{"scatter needs y", PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "scatter", X: "temp"}}, qerr.CodeInvalidArgument, "chart.y is required"},
		{"too wide", PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "city"}, Width: 5000}, qerr.CodeInvalidArgument, "200..2000"},
		{"too small", PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "city"}, Height: 20}, qerr.CodeInvalidArgument, "200..2000"},
		{"bins on a bar", PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "city", Bins: 5}}, qerr.CodeInvalidArgument, "bins"},
		{"too many bins", PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "histogram", X: "temp", Bins: 500}}, qerr.CodeInvalidArgument, "1..200"},
		{"histogram of text", PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "histogram", X: "city"}}, qerr.CodeInvalidArgument, "numeric x"},
		{"format", PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "city"}, Format: "gif"}, qerr.CodeUnsupportedFormat, "gif"},
		{"nothing left", PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "city"},
			Spec: planner.Spec{Filters: []planner.FilterSpec{{Col: "qty", Op: planner.OpGt, Value: json.RawMessage(`100`)}}}}, qerr.CodeInvalidArgument, "nothing to draw"},
		{"agg without measure", PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "city", Agg: "sum"}}, qerr.CodeInvalidArgument, "needs a measure"},
		{"log of a bar", PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "city", LogY: true}}, qerr.CodeInvalidArgument, "log_y"},
		{"unknown dataset", PlotRequest{Dataset: "dayz", Chart: ChartSpec{Kind: "bar", X: "city"}}, qerr.CodeDatasetNotFound, "dayz"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Plot(context.Background(), c.req)
			if qerr.Code(err) != c.code || !strings.Contains(qerr.As(err).Error()+qerr.As(err).Hint, c.in) {
				t.Fatalf("err = %v (code %s, hint %q), want code %s containing %q", err, qerr.Code(err), qerr.As(err).Hint, c.code, c.in)
			}
		})
	}
}

// TestPlotDownscale: a PNG over the byte cap is drawn smaller, with a
// warning; an SVG over it is refused with oversize_result.
func TestPlotDownscale(t *testing.T) {
	s, _ := newTestService(t, plotRoot(t), 0, nil)
	old := plotByteCap
	plotByteCap = 9_000
	defer func() { plotByteCap = old }()
	out, err := s.Plot(context.Background(), PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "qty"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Width >= 800 || len(out.Image) > plotByteCap || len(out.Warnings) == 0 || !strings.Contains(out.Warnings[len(out.Warnings)-1], "drawn at") {
		t.Fatalf("%d bytes, %dx%d, %v", len(out.Image), out.Width, out.Height, out.Warnings)
	}
	charttest.CheckPNG(t, out.Image, out.Width, out.Height)
	few := planner.Spec{Filters: []planner.FilterSpec{{Col: "x", Op: planner.OpLt, Value: json.RawMessage(`2000`)}}}
	_, err = s.Plot(context.Background(), PlotRequest{Dataset: "points", Spec: few, Chart: ChartSpec{Kind: "scatter", X: "x", Y: "y"}, Format: plotSVG})
	if qerr.Code(err) != qerr.CodeOversizeResult {
		t.Fatalf("svg over the cap: %v", err)
	}
}

// TestPlotSpilledHandle draws a result handle whose rows were spilled to
// a Parquet file: the chart's query reads them back chunk by chunk.
func TestPlotSpilledHandle(t *testing.T) {
	s, _ := newTestService(t, plotRoot(t), 0, func(c *Config) {
		reg := handles.New[*materialize.Table](handles.Options{})
		t.Cleanup(reg.Close)
		c.Materializer = materialize.New(materialize.Config{Artifacts: c.Artifacts, Handles: reg, SpillRows: 1000})
	})
	ctx := context.Background()
	qr, err := s.Query(ctx, QueryRequest{EstimateRequest: EstimateRequest{Dataset: "points"}, DeliveryOptions: DeliveryOptions{MaxRows: 10}})
	if err != nil || qr.ResultHandle == "" {
		t.Fatalf("%v %+v", err, qr)
	}
	out, vs := vegaValues(t, s, PlotRequest{ResultHandle: qr.ResultHandle, Chart: ChartSpec{Kind: "bar", X: "y", Agg: "count", Y: "x"},
		Spec: planner.Spec{Filters: []planner.FilterSpec{{Col: "y", Op: planner.OpLt, Value: json.RawMessage(`3`)}}}})
	// y = i*37 % 1000 for i < 6000: 0, 1 and 2 occur 6 times each.
	if out.RowsInput != 18 || len(vs) != 3 || vs[0]["x"] != 6.0 {
		t.Fatalf("%+v %v", out, vs)
	}
}

// TestPlotDateBars: dates on a bar chart's x are category labels in date
// order (not a time axis over category indices).
func TestPlotDateBars(t *testing.T) {
	s, _ := newTestService(t, plotRoot(t), 0, nil)
	out, vs := vegaValues(t, s, PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "day"}})
	if vs[0]["day"] != "2024-01-01" || out.Marks > maxBars || len(out.Dropped) != 1 || !strings.Contains(out.Dropped[0].Reason, "in x order") {
		t.Fatalf("%+v %v", out, vs[:2])
	}
	var spec struct {
		Encoding struct {
			X struct {
				Type string `json:"type"`
			} `json:"x"`
		} `json:"encoding"`
	}
	if err := json.Unmarshal(out.VegaLite, &spec); err != nil || spec.Encoding.X.Type != "nominal" {
		t.Fatalf("x encoding %v %s", err, out.VegaLite)
	}
	png, err := s.Plot(context.Background(), PlotRequest{Dataset: "days", Chart: ChartSpec{Kind: "bar", X: "day"}, Width: 400, Height: 300})
	if err != nil {
		t.Fatal(err)
	}
	charttest.CheckPNG(t, png.Image, 400, 300)
	for kind, want := range map[chart.Kind]bool{chart.Bar: false, chart.Box: false, chart.Line: true, chart.Scatter: true} {
		p := &plotter{kind: kind, xTime: true}
		if got := p.chartSpec(PlotRequest{Width: 800, Height: 500}).XTime; got != want {
			t.Errorf("%s over dates: time axis %v, want %v", kind, got, want)
		}
	}
}
