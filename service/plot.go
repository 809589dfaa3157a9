package service

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/chart"
	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/planner"
)

// PlotRequest is the input of plot: what to draw from (a dataset, a result
// handle or a SQL statement), the query knobs applied first, the chart and
// the image.
type PlotRequest struct {
	// Dataset is the dataset id (one of Dataset, ResultHandle, SQL).
	Dataset string `json:"dataset,omitempty" jsonschema:"Dataset id (or result_handle or sql)."`
	// ResultHandle draws a query_data result.
	ResultHandle string `json:"result_handle,omitempty" jsonschema:"Draw a query result."`
	// SQL draws the result of one advanced_query statement.
	SQL string `json:"sql,omitempty" jsonschema:"Draw one SELECT."`
	// Params are the values of $1, $2, ... of SQL.
	Params []any `json:"params,omitempty" jsonschema:"$1, $2, ... of sql."`
	// Spec is the query applied before charting (knobs of query_data).
	Spec planner.Spec `json:"spec,omitempty" jsonschema:"query_data knobs, applied first."`
	// Chart says what to draw.
	Chart ChartSpec `json:"chart" jsonschema:"What to draw."`
	// Width and Height are the image size in pixels.
	Width int `json:"width,omitempty" jsonschema:"Pixels, 200..2000 (800)."`
	// Height is the image height in pixels.
	Height int `json:"height,omitempty" jsonschema:"Pixels, 200..2000 (500)."`
	// Format is png (default), svg or vega-lite.
	Format string `json:"format,omitempty" jsonschema:"enum=png,enum=svg,enum=vega-lite" jsonschema_description:"png (default), svg or vega-lite (spec with data)."`
	// Output is inline (default) or file (an artifact resource).
	Output string `json:"output,omitempty" jsonschema:"enum=inline,enum=file" jsonschema_description:"file: a resource_link instead."`
}

// ChartSpec is the chart part of a plot request.
type ChartSpec struct {
	// Kind is the chart kind.
	Kind string `json:"kind" jsonschema:"enum=bar,enum=line,enum=area,enum=scatter,enum=histogram,enum=box,enum=heatmap"`
	// X is the x column (categories for bar, box and heatmap).
	X string `json:"x,omitempty" jsonschema:"x column (not for box)."`
	// Y is the measure (bar, line, area: aggregated per x; omitted: count).
	Y string `json:"y,omitempty" jsonschema:"Measure (omit: count); box values; heatmap rows."`
	// Color splits series (heatmap: the cell value).
	Color string `json:"color,omitempty" jsonschema:"Series column; heatmap: cell value."`
	// Facet draws one panel per value.
	Facet string `json:"facet,omitempty" jsonschema:"One panel per value (≤ 12)."`
	// Agg aggregates y per x for bar, line, area and heatmap.
	Agg string `json:"agg,omitempty" jsonschema:"sum, avg, count, min, max, median of y per x."`
	// Bins is the histogram's number of bins.
	Bins int `json:"bins,omitempty" jsonschema:"histogram bins, 1..200 (20)."`
	// LogX and LogY use log scales.
	LogX bool `json:"log_x,omitempty" jsonschema:"line, scatter."`
	// LogY uses a logarithmic y axis.
	LogY bool `json:"log_y,omitempty" jsonschema:"line, scatter, histogram."`
	// Title replaces the generated title.
	Title string `json:"title,omitempty"`
}

// PlotResponse is the output of plot: what was drawn, from how many rows,
// and what was left out. The image travels beside it (Image).
type PlotResponse struct {
	// Kind is the chart kind.
	Kind string `json:"kind"`
	// Title is the chart title.
	Title string `json:"title"`
	// X, Y, Color and Facet are the columns drawn.
	X string `json:"x,omitempty"`
	// Y is the measure as drawn (e.g. "sum of qty").
	Y string `json:"y,omitempty"`
	// Color is the series column.
	Color string `json:"color,omitempty"`
	// Facet is the panel column.
	Facet string `json:"facet,omitempty"`
	// Format is png, svg or vega-lite; MIMEType its media type.
	Format string `json:"format"`
	// MIMEType is the media type of the image (or spec).
	MIMEType string `json:"mime_type"`
	// Width and Height are the image size in pixels.
	Width int `json:"width"`
	// Height in pixels.
	Height int `json:"height"`
	// SizeBytes is the size of the image (or spec).
	SizeBytes int64 `json:"size_bytes"`
	// RowsInput counts the rows the chart was computed from.
	RowsInput int64 `json:"rows_input" jsonschema:"Rows the chart was computed from (after the spec's filters and aggregation)."`
	// RowsUsed counts the rows the drawing represents.
	RowsUsed int64 `json:"rows_used" jsonschema:"Rows the drawing represents (rows_input minus dropped rows)."`
	// Marks counts what was drawn: bars, points, bins, boxes or cells.
	Marks int `json:"marks" jsonschema:"Bars, points, bins, boxes or cells drawn."`
	// Aggregation says how rows became marks.
	Aggregation string `json:"aggregation,omitempty" jsonschema:"How rows became marks, e.g. avg(tmax_c) per date (computed by the engine)."`
	// Bins and BinWidth describe a histogram.
	Bins int `json:"bins,omitempty"`
	// BinWidth is the width of a histogram bin.
	BinWidth float64 `json:"bin_width,omitempty"`
	// Sampling says how points were sampled ("" when every row is drawn).
	Sampling string `json:"sampling,omitempty" jsonschema:"How a scatter's points were sampled; absent when every row is drawn."`
	// Dropped are the rows left out and why.
	Dropped []DroppedRows `json:"dropped,omitempty" jsonschema:"Rows left out of the drawing, with the reason."`
	// ResourceURI is the artifact (output file).
	ResourceURI string `json:"resource_uri,omitempty" jsonschema:"output file: the chart artifact; read it with resources/read."`
	// VegaLite is the Vega-Lite v5 specification (format vega-lite).
	VegaLite json.RawMessage `json:"vega_lite,omitempty" jsonschema:"format vega-lite: the Vega-Lite v5 spec with inline data."`
	// Warnings are caveats (downscaled image, truncated legend, ...).
	Warnings []string `json:"warnings,omitempty"`
	// Image is the PNG or SVG (inline output); not part of the JSON.
	Image []byte `json:"-"`
}

// DroppedRows is a count of rows left out of a chart and the reason.
type DroppedRows struct {
	// Rows is how many.
	Rows int64 `json:"rows"`
	// Reason is why.
	Reason string `json:"reason"`
}

// Plot limits.
const (
	// MaxPlotBytes caps the image (or Vega-Lite spec) of one chart.
	MaxPlotBytes = 1 << 20
	// maxBars is the most x categories of bar, box and heatmap charts.
	maxBars = 60
	// maxHeatRows is the most distinct y values of a heatmap.
	maxHeatRows = 60
	// maxLinePoints is the most points of line and area charts.
	maxLinePoints = 5000
	// maxScatterPoints is the size of a scatter's sample.
	maxScatterPoints = 5000
	// defaultBins and maxBins are the histogram's bin counts.
	defaultBins, maxBins = 20, 200
	// Plot formats and outputs.
	plotPNG, plotSVG, plotVegaLite = "png", "svg", "vega-lite"
	plotInline, plotFile           = "inline", "file"
)

// plotByteCap is MaxPlotBytes (tests lower it).
var plotByteCap = MaxPlotBytes

// Plot draws a chart (the plot tool): the rows come from the same query
// path as query_data (the spec runs first), are aggregated, binned or
// sampled by the engine into a few thousand marks, and drawn by
// internal/chart.
func (s *Service) Plot(ctx context.Context, req PlotRequest) (*PlotResponse, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	start := time.Now()
	if err := checkPlot(&req); err != nil {
		return nil, err
	}
	var out *PlotResponse
	var err error
	switch {
	case req.Dataset != "":
		out, err = onDataset(ctx, s, req.Dataset, func(d *catalog.Dataset) (*PlotResponse, error) {
			return s.plotOn(ctx, s.datasetBase(d, req.Spec), req)
		})
	case req.ResultHandle != "":
		var t *materialize.Table
		if t, err = s.cfg.Materializer.HandleTable(req.ResultHandle, obs.Principal(ctx)); err != nil {
			return nil, err
		}
		defer t.Release()
		out, err = s.plotOn(ctx, s.tableBase(t, "result"), req)
	default:
		var q *preparedQuery
		if q, _, _, err = s.prepareSQL(ctx, req.SQL, req.Params); err != nil {
			return nil, err
		}
		var t *materialize.Table
		if t, err = q.run(ctx, 0); err != nil {
			return nil, err
		}
		defer t.Release()
		out, err = s.plotOn(ctx, s.tableBase(t, "sql"), req)
	}
	if err != nil {
		return nil, err
	}
	obs.Logger(ctx).Info("plot", "kind", out.Kind, "format", out.Format, "output", req.Output, "rows_input", out.RowsInput,
		"rows_used", out.RowsUsed, "marks", out.Marks, "bytes", out.SizeBytes, "duration_ms", time.Since(start).Milliseconds())
	return out, nil
}

// checkPlot validates a request and fills its defaults.
func checkPlot(req *PlotRequest) error {
	n := 0
	for _, v := range []string{req.Dataset, req.ResultHandle, req.SQL} {
		if strings.TrimSpace(v) != "" {
			n++
		}
	}
	if n != 1 {
		return qerr.Invalid(qerr.CodeInvalidArgument, "give exactly one of dataset, result_handle and sql (got %d)", n).
			WithHint("dataset draws a catalog dataset, result_handle a query_data result, sql one SELECT")
	}
	c := &req.Chart
	kind := chart.Kind(c.Kind)
	if !slices.Contains(chart.Kinds, kind) {
		return qerr.Invalid(qerr.CodeInvalidArgument, "unknown chart kind %q", c.Kind).With("field", "chart.kind").
			WithHint("chart.kind is one of bar, line, area, scatter, histogram, box, heatmap")
	}
	need := func(field, why string) error {
		return qerr.Invalid(qerr.CodeInvalidArgument, "chart.%s is required for a %s chart", field, kind).With("field", "chart."+field).WithHint("%s", why)
	}
	if c.X == "" && kind != chart.Box {
		return need("x", "name the column on the x axis")
	}
	if c.Y == "" && (kind == chart.Scatter || kind == chart.Box || kind == chart.Heatmap) {
		return need("y", "name the column on the y axis")
	}
	refusals := []struct {
		cond       bool
		field, why string
	}{
		{c.Color != "" && kind == chart.Box, "color", "box draws one box per x category; facet splits boxes into panels"},
		{c.Bins != 0 && kind != chart.Histogram, "bins", "bins is for histograms"},
		{c.Agg != "" && !slices.Contains([]chart.Kind{chart.Bar, chart.Line, chart.Area, chart.Heatmap}, kind), "agg", "agg aggregates y per x in bar, line, area and heatmap charts"},
		{c.LogX && kind != chart.Line && kind != chart.Scatter, "log_x", "log_x is for line and scatter charts (for a histogram of logs, bin an expression such as ln(x) AS log_x in spec.columns)"},
		{c.LogY && kind != chart.Line && kind != chart.Scatter && kind != chart.Histogram, "log_y", "log_y is for line, scatter and histogram charts"},
		{c.Y != "" && kind == chart.Histogram, "y", "a histogram counts the rows per bin of x"},
	}
	for _, r := range refusals {
		if r.cond {
			return qerr.Invalid(qerr.CodeInvalidArgument, "chart.%s does not apply to a %s chart", r.field, kind).With("field", "chart."+r.field).WithHint("%s", r.why)
		}
	}
	if kind == chart.Histogram && (c.Bins < 0 || c.Bins > maxBins) {
		return qerr.Invalid(qerr.CodeInvalidArgument, "chart.bins %d is outside 1..%d", c.Bins, maxBins).With("field", "chart.bins").
			WithHint("omit bins for %d, or pass 1..%d", defaultBins, maxBins)
	}
	for _, d := range []struct {
		name string
		v    *int
		def  int
	}{{"width", &req.Width, chart.DefaultWidth}, {"height", &req.Height, chart.DefaultHeight}} {
		if *d.v == 0 {
			*d.v = d.def
		}
		if *d.v < chart.MinSize || *d.v > chart.MaxSize {
			return qerr.Invalid(qerr.CodeInvalidArgument, "%s %d is outside %d..%d pixels", d.name, *d.v, chart.MinSize, chart.MaxSize).
				With("field", d.name).WithHint("omit %s for %d, or pass %d..%d", d.name, d.def, chart.MinSize, chart.MaxSize)
		}
	}
	if req.Format == "" {
		req.Format = plotPNG
	}
	if req.Output == "" {
		req.Output = plotInline
	}
	if !slices.Contains([]string{plotPNG, plotSVG, plotVegaLite}, req.Format) {
		return qerr.Invalid(qerr.CodeUnsupportedFormat, "unknown format %q", req.Format).With("field", "format").WithHint("format is png, svg or vega-lite")
	}
	if req.Output != plotInline && req.Output != plotFile {
		return qerr.Invalid(qerr.CodeInvalidArgument, "unknown output %q", req.Output).With("field", "output").WithHint("output is inline or file")
	}
	return nil
}

// plotBase is what a chart is computed from: a dataset, or a collected
// result (a result handle's, a SQL statement's, or the spec's when it
// aggregates). prepare plans a spec over it.
type plotBase struct {
	name    string
	source  string        // the dataset id shown in titles ("" for results)
	schema  *arrow.Schema // nil when not known before planning (joins)
	card    *catalog.Card
	prepare func(ctx context.Context, spec planner.Spec) (*preparedQuery, error)
}

// datasetBase is dataset d as a plot input.
func (s *Service) datasetBase(d *catalog.Dataset, spec planner.Spec) plotBase {
	b := plotBase{name: d.ID, source: d.ID, card: d.Card, prepare: func(ctx context.Context, spec planner.Spec) (*preparedQuery, error) {
		return s.prepare(ctx, d, spec)
	}}
	if len(spec.Join) == 0 {
		b.schema = colcache.PlanSchema(s.cfg.Cache.Wrap(d), d)
	}
	return b
}

// tableBase is a collected result as a plot input.
func (s *Service) tableBase(t *materialize.Table, name string) plotBase {
	in := planner.Input{Dataset: name, Schema: t.ScanSchema(), RowCount: t.NumRows(), RowCountExact: true}
	return plotBase{name: name, schema: in.Schema, prepare: func(ctx context.Context, spec planner.Spec) (*preparedQuery, error) {
		return s.prepareOn(ctx, in, tableSource{t}, nil, spec)
	}}
}

// filtersOnly reports whether spec only filters (and joins) rows: then
// the chart's own query takes its filters and runs in one pass;
// otherwise the spec runs first and the chart is computed from its result.
func filtersOnly(spec planner.Spec) bool {
	rest := spec
	rest.Filters, rest.Join, rest.NullPolicy = nil, nil, ""
	b, _ := json.Marshal(rest)
	return string(b) == "{}"
}

// plotOn runs the spec (when it does more than filter), the chart's query
// and draws.
func (s *Service) plotOn(ctx context.Context, base plotBase, req PlotRequest) (*PlotResponse, error) {
	pre := planner.Spec{Filters: req.Spec.Filters, Join: req.Spec.Join, NullPolicy: req.Spec.NullPolicy}
	if !filtersOnly(req.Spec) {
		q, err := base.prepare(ctx, req.Spec)
		if err != nil {
			return nil, err
		}
		t, err := q.run(ctx, 0)
		if err != nil {
			return nil, err
		}
		defer t.Release()
		card, source := base.card, base.source
		base = s.tableBase(t, base.name)
		base.card, base.source = card, source
		pre = planner.Spec{}
	}
	if err := checkChartColumns(base.schema, req.Chart); err != nil {
		return nil, err
	}
	p := &plotter{s: s, base: base, pre: pre, c: req.Chart, kind: chart.Kind(req.Chart.Kind)}
	out, err := p.compute(ctx)
	if err != nil {
		return nil, err
	}
	return s.drawPlot(ctx, p, req, out)
}

// checkChartColumns checks that the chart's columns are in schema, with
// did-you-mean suggestions for the ones that are not.
func checkChartColumns(schema *arrow.Schema, c ChartSpec) error {
	if schema == nil {
		return nil
	}
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	for _, f := range []struct{ field, col string }{{"x", c.X}, {"y", c.Y}, {"color", c.Color}, {"facet", c.Facet}} {
		if f.col == "" || slices.Contains(names, f.col) {
			continue
		}
		e := qerr.Invalid(qerr.CodeInvalidArgument, "chart.%s: unknown column %q", f.field, f.col).With("field", "chart."+f.field)
		if sug := qerr.Suggest(f.col, names, 3); len(sug) > 0 {
			return e.With("suggestions", sug).WithHint("did you mean %q? chart columns name columns of the dataset, or the outputs of spec when it aggregates", sug[0])
		}
		return e.With("columns", names[:min(len(names), 50)]).WithHint("chart columns name columns of the dataset (get_schema), or the outputs of spec when it aggregates")
	}
	return nil
}

// drawPlot renders the computed chart in the requested format and
// delivers it inline or as an artifact.
func (s *Service) drawPlot(ctx context.Context, p *plotter, req PlotRequest, out *PlotResponse) (*PlotResponse, error) {
	spec := p.chartSpec(req)
	out.Title, out.Width, out.Height, out.Format = spec.Title, spec.Width, spec.Height, req.Format
	var (
		b   []byte
		err error
	)
	switch req.Format {
	case plotVegaLite:
		b, err = chart.VegaLite(spec, p.frame, chart.Fields{X: p.c.X, Y: p.yField(), Color: p.colorField(), Facet: p.c.Facet})
		out.MIMEType = "application/json"
	default:
		b, err = s.renderImage(spec, p.frame, chart.Format(req.Format), out)
		out.MIMEType = chart.Format(req.Format).MIME()
	}
	if err != nil {
		return nil, err
	}
	if len(b) > plotByteCap {
		return nil, qerr.Limit(qerr.CodeOversizeResult, "the chart is %d bytes, above the %d-byte cap", len(b), plotByteCap).
			WithHint("draw fewer marks (filters, fewer bins or categories), use format png, or a smaller width and height")
	}
	out.SizeBytes = int64(len(b))
	if req.Output == plotFile {
		ext := req.Format
		if ext == plotVegaLite {
			ext = "json"
		}
		w, err := s.cfg.Artifacts.Create(ext, obs.Principal(ctx))
		if err != nil {
			return nil, qerr.As(err)
		}
		defer w.Abort()
		if _, err := w.Write(b); err != nil {
			return nil, qerr.As(err)
		}
		art, err := w.Commit()
		if err != nil {
			return nil, qerr.As(err)
		}
		out.ResourceURI = art.URI
		return out, nil
	}
	if req.Format == plotVegaLite {
		out.VegaLite = b
	} else {
		out.Image = b
	}
	return out, nil
}

// renderImage draws PNG or SVG; a PNG over MaxPlotBytes is drawn again
// smaller (down to the minimum size), with a warning.
func (s *Service) renderImage(spec chart.Spec, f *chart.Frame, format chart.Format, out *PlotResponse) ([]byte, error) {
	w0, h0 := spec.Width, spec.Height
	for {
		b, err := chart.Render(spec, f, format)
		if err != nil {
			return nil, qerr.Internal(err, "drawing the chart")
		}
		if len(b) <= plotByteCap || format != chart.PNG || spec.Width == chart.MinSize || spec.Height == chart.MinSize {
			if spec.Width != w0 {
				out.Width, out.Height = spec.Width, spec.Height
				out.Warnings = append(out.Warnings, fmt.Sprintf("the %dx%d PNG was over %d bytes: drawn at %dx%d instead", w0, h0, plotByteCap, spec.Width, spec.Height))
			}
			return b, nil
		}
		spec.Width, spec.Height = max(spec.Width*3/4, chart.MinSize), max(spec.Height*3/4, chart.MinSize)
	}
}
