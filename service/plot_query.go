package service

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/internal/chart"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// plotter computes one chart's marks with the engine: the chart's query
// (grouped aggregates, bins, five-number summaries, or the projected rows
// of a scatter) runs over the plot input, and its streamed output becomes
// a chart.Frame, capped and with every row left out counted.
type plotter struct {
	s     *Service
	base  plotBase
	pre   planner.Spec // filters and joins the chart's query applies
	c     ChartSpec
	kind  chart.Kind
	frame *chart.Frame
	xTime bool
	// yLabel and valueLabel name the y axis and the heatmap's value.
	yLabel, valueLabel string
	dropped            map[string]int64
	dropOrder          []string
}

// Output names of the chart queries' aggregates (not valid user column
// names clash: they only name outputs of the chart's own query).
const (
	plotN   = "__plot_n"
	plotV   = "__plot_v"
	plotNV  = "__plot_nv"
	plotBin = "__plot_bin"
)

// drop counts rows left out of the drawing, by reason.
func (p *plotter) drop(n int64, reason string) {
	if n <= 0 {
		return
	}
	if p.dropped == nil {
		p.dropped = map[string]int64{}
	}
	if _, ok := p.dropped[reason]; !ok {
		p.dropOrder = append(p.dropOrder, reason)
	}
	p.dropped[reason] += n
}

// compute runs the chart's query and fills p.frame and the summary.
func (p *plotter) compute(ctx context.Context) (*PlotResponse, error) {
	p.frame = &chart.Frame{}
	out := &PlotResponse{Kind: p.c.Kind, X: p.c.X, Color: p.c.Color, Facet: p.c.Facet}
	var err error
	switch p.kind {
	case chart.Scatter:
		err = p.scatter(ctx, out)
	case chart.Histogram:
		err = p.histogram(ctx, out)
	case chart.Box:
		err = p.boxes(ctx, out)
	default:
		err = p.grouped(ctx, out)
	}
	if err != nil {
		return nil, err
	}
	out.Y = p.yLabel
	out.RowsUsed = out.RowsInput
	for _, r := range p.dropOrder {
		out.Dropped = append(out.Dropped, DroppedRows{Rows: p.dropped[r], Reason: r})
		out.RowsUsed -= p.dropped[r]
	}
	out.Marks = p.frame.Len()
	if out.Marks == 0 {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "nothing to draw: %d rows in, none left to plot", out.RowsInput).
			With("dropped", out.Dropped).WithHint("check the filters with estimate_query or distinct_values, and that x and y hold values")
	}
	if len(p.frame.Group) > 0 {
		if n := distinct(p.frame.Group); n > len(chart.OkabeIto) {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%d series: colours repeat after %d; filter color to fewer values or use facet", n, len(chart.OkabeIto)))
		}
	}
	return out, nil
}

func distinct(vs []string) int {
	m := map[string]bool{}
	for _, v := range vs {
		m[v] = true
	}
	return len(m)
}

// stream runs spec over the plot input and calls fn for every output row
// with the batch's columns named by cols.
func (p *plotter) stream(ctx context.Context, spec planner.Spec, cols []string, fn func(c []arrow.Array, i int) error) error {
	q, err := p.base.prepare(ctx, spec)
	if err != nil {
		return err
	}
	return q.stream(ctx, 0, nil, func(ctx context.Context, rr array.RecordReader) error {
		idx := make([]int, len(cols))
		for k, name := range cols {
			is := rr.Schema().FieldIndices(name)
			if len(is) == 0 {
				return qerr.Internal(nil, "plot: the chart query has no output column %q", name)
			}
			idx[k] = is[0]
			if k == 0 && isTemporal(rr.Schema().Field(is[0]).Type) {
				p.xTime = true
			}
		}
		cs := make([]arrow.Array, len(cols))
		for rr.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			b := rr.RecordBatch()
			for k, j := range idx {
				cs[k] = b.Column(j)
			}
			for i := range int(b.NumRows()) {
				if err := fn(cs, i); err != nil {
					return err
				}
			}
		}
		return rr.Err()
	})
}

// spec is the chart's query: the filters and joins of pre plus the rest.
func (p *plotter) spec(s planner.Spec) planner.Spec {
	s.Filters, s.Join, s.NullPolicy = p.pre.Filters, p.pre.Join, p.pre.NullPolicy
	return s
}

// keys are the group keys after x: color (not for heatmaps) and facet.
func (p *plotter) extraKeys() []string {
	var ks []string
	if p.c.Color != "" && p.kind != chart.Heatmap {
		ks = append(ks, p.c.Color)
	}
	if p.c.Facet != "" {
		ks = append(ks, p.c.Facet)
	}
	return ks
}

// capper keeps the first max distinct values of a key and counts the rest.
type capper struct {
	max  int
	seen map[string]bool
}

func (c *capper) keep(v string) bool {
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if c.seen[v] {
		return true
	}
	if len(c.seen) >= c.max {
		return false
	}
	c.seen[v] = true
	return true
}

// group reads the color and facet values of row i (columns from k on)
// into the frame; false when the facet is beyond the panel cap.
func (p *plotter) group(c []arrow.Array, i, k int, facets *capper) (color, facet string, ok bool) {
	if p.c.Color != "" && p.kind != chart.Heatmap {
		color = strAt(c[k], i)
		k++
	}
	if p.c.Facet != "" {
		facet = strAt(c[k], i)
		if !facets.keep(facet) {
			return "", "", false
		}
	}
	return color, facet, true
}

func (p *plotter) appendGroup(color, facet string) {
	if p.c.Color != "" && p.kind != chart.Heatmap {
		p.frame.Group = append(p.frame.Group, color)
	}
	if p.c.Facet != "" {
		p.frame.Facet = append(p.frame.Facet, facet)
	}
}

var facetReason = fmt.Sprintf("in facets beyond the first %d", chart.MaxFacets)

// grouped computes bar, line, area and heatmap charts: one aggregate of
// the measure per x (and y, colour, facet).
func (p *plotter) grouped(ctx context.Context, out *PlotResponse) error {
	measure := p.c.Y
	if p.kind == chart.Heatmap {
		measure = p.c.Color
	}
	fn := planner.AggFn(p.c.Agg)
	switch {
	case fn == "" && measure == "":
		fn = planner.AggCount
	case fn == "" && (p.kind == chart.Line || p.kind == chart.Area):
		fn = planner.AggAvg
	case fn == "":
		fn = planner.AggSum
	}
	keys := []string{p.c.X}
	if p.kind == chart.Heatmap {
		keys = append(keys, p.c.Y)
	}
	keys = append(keys, p.extraKeys()...)
	aggs := []planner.AggSpec{{Col: "*", Fn: planner.AggCount, As: plotN}}
	if measure != "" {
		aggs = append(aggs, planner.AggSpec{Col: measure, Fn: fn, As: plotV}, planner.AggSpec{Col: measure, Fn: planner.AggCount, As: plotNV})
	} else if fn != planner.AggCount {
		return qerr.Invalid(qerr.CodeInvalidArgument, "chart.agg %s needs a measure", fn).With("field", "chart.agg").
			WithHint("name the column to aggregate in chart.%s, or omit agg for a count of rows", map[bool]string{true: "color", false: "y"}[p.kind == chart.Heatmap])
	}
	ordered := p.numericX()
	order := []planner.OrderSpec{{Col: p.c.X}}
	switch {
	case p.kind == chart.Heatmap:
		order = append(order, planner.OrderSpec{Col: p.c.Y})
	case p.kind == chart.Bar && !ordered && measure != "":
		order = []planner.OrderSpec{{Col: plotV, Desc: true}, {Col: p.c.X}}
	case p.kind == chart.Bar && !ordered:
		order = []planner.OrderSpec{{Col: plotN, Desc: true}, {Col: p.c.X}}
	}
	cols := append(keys, plotN)
	if measure != "" {
		cols = append(cols, plotV, plotNV)
	}
	xs, ys, facets := &capper{max: maxBars}, &capper{max: maxHeatRows}, &capper{max: chart.MaxFacets}
	var maxN int64
	xReason := fmt.Sprintf("beyond the first %d x values (%s)", maxBars, map[bool]string{true: "in x order", false: "largest first"}[ordered])
	err := p.stream(ctx, p.spec(planner.Spec{GroupBy: keys, Aggs: aggs, OrderBy: order}), cols, func(c []arrow.Array, i int) error {
		nc := len(keys)
		n := intAt(c[nc], i)
		out.RowsInput += n
		maxN = max(maxN, n)
		v := float64(n)
		if measure != "" {
			nv := intAt(c[nc+2], i)
			p.drop(n-nv, measure+" is null")
			if n = nv; n == 0 {
				return nil
			}
			var ok bool
			if v, ok = numAt(c[nc+1], i); !ok {
				p.drop(n, "the aggregate is null or NaN")
				return nil
			}
		}
		if c[0].IsNull(i) {
			p.drop(n, p.c.X+" is null")
			return nil
		}
		k := 1
		var ycat string
		if p.kind == chart.Heatmap {
			if c[1].IsNull(i) {
				p.drop(n, p.c.Y+" is null")
				return nil
			}
			if ycat, k = strAt(c[1], i), 2; !ys.keep(ycat) {
				p.drop(n, fmt.Sprintf("beyond the first %d y values", maxHeatRows))
				return nil
			}
		}
		color, facet, ok := p.group(c, i, k, facets)
		if !ok {
			p.drop(n, facetReason)
			return nil
		}
		if p.kind == chart.Line || p.kind == chart.Area {
			x, ok := numAt(c[0], i)
			switch {
			case !ok:
				p.drop(n, p.c.X+" is NaN")
			case p.c.LogX && x <= 0, p.c.LogY && v <= 0:
				p.drop(n, "not positive on a log axis")
			case len(p.frame.XNum) >= maxLinePoints:
				p.drop(n, fmt.Sprintf("beyond the first %d points in x order (bin x, e.g. group_by month(date), for a longer series)", maxLinePoints))
			default:
				p.frame.XNum, p.frame.Y = append(p.frame.XNum, x), append(p.frame.Y, v)
				p.appendGroup(color, facet)
			}
			return nil
		}
		x := strAt(c[0], i)
		if !xs.keep(x) {
			p.drop(n, xReason)
			return nil
		}
		p.frame.XCat, p.frame.Y = append(p.frame.XCat, x), append(p.frame.Y, v)
		if p.kind == chart.Heatmap {
			p.frame.YCat = append(p.frame.YCat, ycat)
		}
		p.appendGroup(color, facet)
		return nil
	})
	if err != nil {
		return err
	}
	value := "count of rows"
	if measure != "" {
		value = fmt.Sprintf("%s of %s", fn, p.label(measure))
		if maxN <= 1 { // one row per mark: the aggregate is the value itself
			value = p.label(measure)
		}
	}
	if maxN > 1 || measure == "" {
		out.Aggregation = fmt.Sprintf("%s per %s", aggText(fn, measure), strings.Join(keys, ", "))
	}
	p.yLabel, p.valueLabel = value, value
	if p.kind == chart.Heatmap {
		p.yLabel = p.label(p.c.Y)
	}
	return nil
}

func aggText(fn planner.AggFn, col string) string {
	if col == "" {
		return "count(*)"
	}
	return fmt.Sprintf("%s(%s)", fn, col)
}

// numericX reports whether x is a number, date or timestamp column of the
// plot input (then bars keep x order); unknown (joins) counts as not.
func (p *plotter) numericX() bool {
	if p.base.schema == nil {
		return false
	}
	is := p.base.schema.FieldIndices(p.c.X)
	if len(is) == 0 {
		return false
	}
	t := p.base.schema.Field(is[0]).Type
	return isTemporal(t) || isPlotNumber(t)
}

// scatter reads the x, y (colour, facet) of every row and keeps a uniform
// sample of maxScatterPoints (reservoir sampling with a fixed seed).
func (p *plotter) scatter(ctx context.Context, out *PlotResponse) error {
	cols := append([]string{p.c.X, p.c.Y}, p.extraKeys()...)
	facets := &capper{max: chart.MaxFacets}
	type point struct {
		x, y         float64
		color, facet string
	}
	var sample []point
	var seen int64
	rng := rand.New(rand.NewPCG(1, 2))
	err := p.stream(ctx, p.spec(planner.Spec{Columns: cols}), cols, func(c []arrow.Array, i int) error {
		out.RowsInput++
		x, okx := numAt(c[0], i)
		y, oky := numAt(c[1], i)
		switch {
		case !okx || !oky:
			p.drop(1, "x or y is null or NaN")
			return nil
		case p.c.LogX && x <= 0, p.c.LogY && y <= 0:
			p.drop(1, "not positive on a log axis")
			return nil
		}
		color, facet, ok := p.group(c, i, 2, facets)
		if !ok {
			p.drop(1, facetReason)
			return nil
		}
		seen++
		pt := point{x, y, color, facet}
		if len(sample) < maxScatterPoints {
			sample = append(sample, pt)
		} else if j := rng.Int64N(seen); j < maxScatterPoints {
			sample[j] = pt
		}
		return nil
	})
	if err != nil {
		return err
	}
	if seen > int64(len(sample)) {
		p.drop(seen-int64(len(sample)), "not in the random sample")
		out.Sampling = fmt.Sprintf("uniform random sample of %s of %s points (reservoir sampling, fixed seed: the same call draws the same points)",
			groupDigits(int64(len(sample))), groupDigits(seen))
	}
	for _, pt := range sample {
		p.frame.XNum, p.frame.Y = append(p.frame.XNum, pt.x), append(p.frame.Y, pt.y)
		p.appendGroup(pt.color, pt.facet)
	}
	p.yLabel = p.label(p.c.Y)
	return nil
}

// histogram bins x in the engine: one aggregate for the range, then a
// count per bin (group by floor((x - lo) / width)).
func (p *plotter) histogram(ctx context.Context, out *PlotResponse) error {
	stats := p.spec(planner.Spec{Aggs: []planner.AggSpec{
		{Col: "*", Fn: planner.AggCount, As: plotN}, {Col: p.c.X, Fn: planner.AggCount, As: plotNV},
		{Col: p.c.X, Fn: planner.AggMin, As: "__plot_lo"}, {Col: p.c.X, Fn: planner.AggMax, As: "__plot_hi"},
	}})
	var total, nonNull int64
	var lo, hi float64
	var loType arrow.DataType
	err := p.stream(ctx, stats, []string{"__plot_lo", plotN, plotNV, "__plot_hi"}, func(c []arrow.Array, i int) error {
		total, nonNull, loType = intAt(c[1], i), intAt(c[2], i), c[0].DataType()
		lo, _ = numAt(c[0], i)
		hi, _ = numAt(c[3], i)
		return nil
	})
	if err != nil {
		return err
	}
	if loType != nil && !isPlotNumber(loType) {
		return qerr.Invalid(qerr.CodeInvalidArgument, "a histogram needs a numeric x; %s is %s", p.c.X, planner.TypeName(loType)).With("field", "chart.x").
			WithHint("for counts per date or category use kind bar or line with y omitted; to bin dates, group by an expression such as month(date) in spec")
	}
	p.xTime = false
	out.RowsInput = total
	p.drop(total-nonNull, p.c.X+" is null")
	if nonNull == 0 || math.IsNaN(lo) || math.IsNaN(hi) {
		return nil
	}
	bins := p.c.Bins
	if bins == 0 {
		bins = defaultBins
	}
	width := niceWidth((hi - lo) / float64(bins))
	if isInteger(loType) {
		width = niceWidth(math.Max(1, math.Ceil(width)))
	}
	start := math.Floor(lo/width) * width
	n := int(math.Floor((hi-start)/width)) + 1
	out.Bins, out.BinWidth = n, width
	key := fmt.Sprintf("floor((%s - (%s)) / %s) AS %s", planner.QuoteIdent(p.c.X), fmtNum(start), fmtNum(width), plotBin)
	keys := append([]string{key}, p.extraKeys()...)
	cols := append(append([]string{plotBin}, p.extraKeys()...), plotN)
	facets := &capper{max: chart.MaxFacets}
	spec := p.spec(planner.Spec{GroupBy: keys, Aggs: []planner.AggSpec{{Col: "*", Fn: planner.AggCount, As: plotN}}, OrderBy: []planner.OrderSpec{{Col: plotBin}}})
	err = p.stream(ctx, spec, cols, func(c []arrow.Array, i int) error {
		cnt := intAt(c[len(c)-1], i)
		b, ok := numAt(c[0], i)
		if !ok { // null x: counted above; NaN x has no bin
			if !c[0].IsNull(i) {
				p.drop(cnt, p.c.X+" is NaN")
			}
			return nil
		}
		color, facet, ok := p.group(c, i, 1, facets)
		if !ok {
			p.drop(cnt, facetReason)
			return nil
		}
		b = math.Min(math.Max(b, 0), float64(n-1))
		p.frame.XNum = append(p.frame.XNum, start+b*width)
		p.frame.XEnd = append(p.frame.XEnd, start+(b+1)*width)
		p.frame.Y = append(p.frame.Y, float64(cnt))
		p.appendGroup(color, facet)
		return nil
	})
	if err != nil {
		return err
	}
	out.Aggregation = fmt.Sprintf("count(*) per bin of %s (%d bins of width %s from %s)", p.c.X, n, fmtNum(width), fmtNum(start))
	p.yLabel = "count of rows"
	return nil
}

// boxes computes min, quartiles, median and max of y per x in the engine.
func (p *plotter) boxes(ctx context.Context, out *PlotResponse) error {
	var keys []string
	if p.c.X != "" {
		keys = append(keys, p.c.X)
	}
	if p.c.Facet != "" {
		keys = append(keys, p.c.Facet)
	}
	q1, q3 := 0.25, 0.75
	y := p.c.Y
	aggs := []planner.AggSpec{
		{Col: "*", Fn: planner.AggCount, As: plotN}, {Col: y, Fn: planner.AggCount, As: plotNV},
		{Col: y, Fn: planner.AggMin, As: "__plot_min"}, {Col: y, Fn: planner.AggQuantile, Q: &q1, As: "__plot_q1"},
		{Col: y, Fn: planner.AggMedian, As: "__plot_med"}, {Col: y, Fn: planner.AggQuantile, Q: &q3, As: "__plot_q3"},
		{Col: y, Fn: planner.AggMax, As: "__plot_max"},
	}
	spec := planner.Spec{GroupBy: keys, Aggs: aggs}
	for _, k := range keys {
		spec.OrderBy = append(spec.OrderBy, planner.OrderSpec{Col: k})
	}
	cols := append([]string{plotN, plotNV, "__plot_min", "__plot_q1", "__plot_med", "__plot_q3", "__plot_max"}, keys...)
	xs, facets := &capper{max: maxBars}, &capper{max: chart.MaxFacets}
	err := p.stream(ctx, p.spec(spec), cols, func(c []arrow.Array, i int) error {
		n, nv := intAt(c[0], i), intAt(c[1], i)
		out.RowsInput += n
		p.drop(n-nv, y+" is null")
		if nv == 0 {
			return nil
		}
		var f [5]float64
		for j := range f {
			v, ok := numAt(c[2+j], i)
			if !ok {
				p.drop(nv, y+" has NaN values")
				return nil
			}
			f[j] = v
		}
		x, k := "all rows", 7
		if p.c.X != "" {
			if c[k].IsNull(i) {
				p.drop(nv, p.c.X+" is null")
				return nil
			}
			x, k = strAt(c[k], i), k+1
			if !xs.keep(x) {
				p.drop(nv, fmt.Sprintf("beyond the first %d x values", maxBars))
				return nil
			}
		}
		_, facet, ok := p.group(c, i, k, facets)
		if !ok {
			p.drop(nv, facetReason)
			return nil
		}
		p.frame.XCat = append(p.frame.XCat, x)
		p.frame.Box = append(p.frame.Box, chart.FiveNum{Min: f[0], Q1: f[1], Median: f[2], Q3: f[3], Max: f[4]})
		p.appendGroup("", facet)
		return nil
	})
	if err != nil {
		return err
	}
	out.Aggregation = fmt.Sprintf("min, quartiles, median and max of %s", y)
	if len(keys) > 0 {
		out.Aggregation += " per " + strings.Join(keys, ", ")
	}
	out.Aggregation += " (whiskers at min and max)"
	p.yLabel = p.label(y)
	return nil
}

// label is a column name with its unit from the schema card: "tmax_c (°C)".
func (p *plotter) label(col string) string {
	if u := p.base.card.Column(col).Unit; u != "" {
		return fmt.Sprintf("%s (%s)", col, u)
	}
	return col
}

// chartSpec is what internal/chart draws, with the default title.
func (p *plotter) chartSpec(req PlotRequest) chart.Spec {
	s := chart.Spec{Kind: p.kind, Title: p.c.Title, XLabel: p.label(p.c.X), YLabel: p.yLabel, ColorLabel: p.c.Color,
		LogX: p.c.LogX, LogY: p.c.LogY, Width: req.Width, Height: req.Height}
	// Dates are a time axis where x is continuous; bars, boxes and heatmaps
	// show them as category labels.
	s.XTime = p.xTime && (p.kind == chart.Line || p.kind == chart.Area || p.kind == chart.Scatter)
	if p.kind == chart.Heatmap {
		s.ColorLabel = p.valueLabel
	}
	if s.Title != "" {
		return s
	}
	switch p.kind {
	case chart.Scatter:
		s.Title = fmt.Sprintf("%s vs %s", p.c.Y, p.c.X)
	case chart.Histogram:
		s.Title = "Distribution of " + p.c.X
	case chart.Box:
		s.Title = "Distribution of " + p.c.Y
		if p.c.X != "" {
			s.Title += " by " + p.c.X
		}
	case chart.Heatmap:
		s.Title = fmt.Sprintf("%s by %s and %s", p.valueLabel, p.c.X, p.c.Y)
	default:
		s.Title = fmt.Sprintf("%s by %s", p.yLabel, p.c.X)
	}
	if p.c.Color != "" && p.kind != chart.Heatmap {
		s.Title += " and " + p.c.Color
	}
	if p.base.source != "" {
		s.Title += " · " + p.base.source
	}
	return s
}

// yField names the y values in a Vega-Lite spec.
func (p *plotter) yField() string {
	switch {
	case p.kind == chart.Histogram, p.c.Y == "" && p.kind != chart.Box:
		return "count"
	}
	return p.c.Y
}

// colorField names the colour values in a Vega-Lite spec.
func (p *plotter) colorField() string {
	if p.kind == chart.Heatmap {
		if p.c.Color == "" {
			return "count"
		}
	}
	return p.c.Color
}

// niceWidth rounds a bin width up to 1, 2, 2.5 or 5 times a power of ten.
func niceWidth(w float64) float64 {
	if !(w > 0) || math.IsInf(w, 0) {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(w)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*e >= w*(1-1e-9) {
			return m * e
		}
	}
	return 10 * e
}

// fmtNum writes v for an expression: plain decimal, no exponent.
func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
