package chart

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// side is what is drawn in the strip right of the panels: a legend or a
// colour bar.
type side interface {
	width(scale vg.Length) vg.Length
	draw(scale vg.Length, c draw.Canvas)
}

// panels are the plots of a chart (one per facet) and its side strip.
type panels struct {
	plots []*plot.Plot
	side  side
}

// levels returns the distinct values of vs in order of first appearance
// and the index of each row's value.
func levels(vs []string) ([]string, []int) {
	idx := make([]int, len(vs))
	at := map[string]int{}
	var out []string
	for i, v := range vs {
		j, ok := at[v]
		if !ok {
			j = len(out)
			at[v] = j
			out = append(out, v)
		}
		idx[i] = j
	}
	return out, idx
}

// layout is what every panel's builder needs to know.
type layout struct {
	s      Spec
	f      *Frame
	rows   []int    // the rows of this panel
	groups []string // series names ("" alone when there are none)
	group  []int    // series index per row
	cats   []string // x categories (bar, box, heatmap), shared by panels
	cat    []int    // category index per row
	ycats  []string // heatmap y categories
	ycat   []int
	slot   vg.Length // the width of one x category, estimated
}

// buildPanels makes one plot per facet value and the legend.
func buildPanels(s Spec, f *Frame) (panels, error) {
	n := f.Len()
	if err := checkFrame(s, f, n); err != nil {
		return panels{}, err
	}
	facets, facet := []string{""}, make([]int, n)
	if len(f.Facet) == n && n > 0 {
		facets, facet = levels(f.Facet)
	}
	if len(facets) > MaxFacets {
		return panels{}, fmt.Errorf("chart: %d facets, at most %d", len(facets), MaxFacets)
	}
	base := layout{s: s, f: f, groups: []string{""}, group: make([]int, n)}
	if len(f.Group) == n && n > 0 {
		base.groups, base.group = levels(f.Group)
	}
	if len(f.XCat) == n {
		base.cats, base.cat = levels(f.XCat)
	}
	if len(f.YCat) == n {
		base.ycats, base.ycat = levels(f.YCat)
	}
	cols := int(math.Ceil(math.Sqrt(float64(len(facets)))))
	base.slot = vg.Length(s.Width) * vg.Inch / dpi * 0.72 / vg.Length(cols) / vg.Length(max(len(base.cats), 1))

	var out panels
	for fi, name := range facets {
		l := base
		for i := range n {
			if facet[i] == fi {
				l.rows = append(l.rows, i)
			}
		}
		p := newPlot(s)
		if len(facets) > 1 {
			p.Title.Text = name
		}
		if err := addKind(p, &l); err != nil {
			return panels{}, err
		}
		out.plots = append(out.plots, p)
	}
	shareAxes(s, out.plots)
	switch {
	case s.Kind == Heatmap:
		lo, hi := valueRange(f.Y)
		out.side = &colourBar{title: s.ColorLabel, lo: lo, hi: hi}
	case len(base.groups) > 1:
		out.side = &legend{title: s.ColorLabel, names: base.groups}
	}
	return out, nil
}

// checkFrame checks that the columns the kind needs have n rows.
func checkFrame(s Spec, f *Frame, n int) error {
	need := map[Kind][]int{
		Bar: {len(f.XCat), len(f.Y)}, Line: {len(f.XNum), len(f.Y)}, Area: {len(f.XNum), len(f.Y)},
		Scatter: {len(f.XNum), len(f.Y)}, Histogram: {len(f.XNum), len(f.XEnd), len(f.Y)},
		Box: {len(f.XCat), len(f.Box)}, Heatmap: {len(f.XCat), len(f.YCat), len(f.Y)},
	}
	cols, ok := need[s.Kind]
	if !ok {
		return fmt.Errorf("chart: unknown kind %q", s.Kind)
	}
	for _, c := range cols {
		if c != n {
			return fmt.Errorf("chart: %s needs every column it draws to have %d rows", s.Kind, n)
		}
	}
	return nil
}

// addKind adds the plotters of the chart's kind for the panel's rows.
func addKind(p *plot.Plot, l *layout) error {
	switch l.s.Kind {
	case Bar:
		return addBars(p, l)
	case Line, Area, Scatter:
		return addXY(p, l)
	case Histogram:
		return addHistogram(p, l)
	case Box:
		return addBoxes(p, l)
	case Heatmap:
		return addHeatmap(p, l)
	}
	return fmt.Errorf("chart: unknown kind %q", l.s.Kind)
}

// nominalX labels the x axis with the categories, slanted when they would
// not fit side by side.
func nominalX(p *plot.Plot, l *layout) {
	p.NominalX(l.cats...)
	longest := 0
	for _, c := range l.cats {
		longest = max(longest, len([]rune(c)))
	}
	if vg.Length(longest)*tickSize*fontScale(l.s)*0.55 > l.slot {
		p.X.Tick.Label.Rotation = math.Pi / 4
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	}
}

func addBars(p *plot.Plot, l *layout) error {
	nominalX(p, l)
	ng := len(l.groups)
	width := l.slot * 0.8 / vg.Length(ng)
	for g := range ng {
		vals := make(plotter.Values, len(l.cats))
		for _, i := range l.rows {
			if l.group[i] == g {
				vals[l.cat[i]] = l.f.Y[i]
			}
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return err
		}
		b.Color = seriesColor(g)
		if ng == 1 {
			b.Color = single
		}
		b.LineStyle.Width = 0
		b.Offset = (vg.Length(g) - vg.Length(ng-1)/2) * width
		p.Add(b)
	}
	p.Add(yGrid())
	return nil
}

// addXY adds lines, areas or points, one series per group.
func addXY(p *plot.Plot, l *layout) error {
	p.Add(plotter.NewGrid())
	for g := range l.groups {
		var xys plotter.XYs
		for _, i := range l.rows {
			if l.group[i] == g {
				xys = append(xys, plotter.XY{X: l.f.XNum[i], Y: l.f.Y[i]})
			}
		}
		if len(xys) == 0 {
			continue
		}
		c := seriesColor(g)
		if len(l.groups) == 1 {
			c = single
		}
		if l.s.Kind == Scatter {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: withAlpha(c, 0.75), Radius: vg.Points(2.2), Shape: draw.CircleGlyph{}}
			p.Add(sc)
			continue
		}
		sort.SliceStable(xys, func(a, b int) bool { return xys[a].X < xys[b].X })
		ln, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		ln.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1.8)}
		if l.s.Kind == Area {
			ln.FillColor = withAlpha(c, 0.35)
		}
		p.Add(ln)
	}
	if l.s.Kind == Area && !l.s.LogY {
		p.Y.Min = math.Min(p.Y.Min, 0)
	}
	return nil
}

func addHistogram(p *plot.Plot, l *layout) error {
	p.Add(yGrid())
	alpha := 0.9
	if len(l.groups) > 1 {
		alpha = 0.55
	}
	for g := range l.groups {
		h := &plotter.Histogram{LogY: l.s.LogY}
		for _, i := range l.rows {
			if l.group[i] == g {
				h.Bins = append(h.Bins, plotter.HistogramBin{Min: l.f.XNum[i], Max: l.f.XEnd[i], Weight: l.f.Y[i]})
				h.Width = l.f.XEnd[i] - l.f.XNum[i]
			}
		}
		if len(h.Bins) == 0 {
			continue
		}
		c := seriesColor(g)
		if len(l.groups) == 1 {
			c = single
		}
		h.FillColor = withAlpha(c, alpha)
		h.LineStyle = draw.LineStyle{Color: background, Width: vg.Points(0.5)}
		p.Add(h)
	}
	return nil
}

func addBoxes(p *plot.Plot, l *layout) error {
	nominalX(p, l)
	p.Add(yGrid())
	b := &boxes{width: l.slot * 0.5, color: single}
	for _, i := range l.rows {
		b.pos = append(b.pos, float64(l.cat[i]))
		b.five = append(b.five, l.f.Box[i])
	}
	p.Add(b)
	return nil
}

func addHeatmap(p *plot.Plot, l *layout) error {
	g := &heatGrid{cols: len(l.cats), rows: len(l.ycats), z: make([]float64, len(l.cats)*len(l.ycats))}
	for i := range g.z {
		g.z[i] = math.NaN()
	}
	for _, i := range l.rows {
		g.z[l.ycat[i]*g.cols+l.cat[i]] = l.f.Y[i]
	}
	h := plotter.NewHeatMap(g, viridisPalette(64))
	h.Min, h.Max = valueRange(l.f.Y)
	if h.Min == h.Max {
		h.Max = h.Min + 1
	}
	h.NaN = background
	p.Add(h)
	nominalX(p, l)
	p.NominalY(l.ycats...)
	return nil
}

// yGrid is horizontal grid lines only.
func yGrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = nil
	g.Horizontal.Color = gridColor
	return g
}

// valueRange is the smallest and largest finite value of vs.
func valueRange(vs []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if lo > hi {
		return 0, 1
	}
	return lo, hi
}

// shareAxes gives every panel the same axis ranges (facets compare at a
// glance) and picks the time ticks of a time axis for that range.
func shareAxes(s Spec, ps []*plot.Plot) {
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, p := range ps {
		xlo, xhi = math.Min(xlo, p.X.Min), math.Max(xhi, p.X.Max)
		ylo, yhi = math.Min(ylo, p.Y.Min), math.Max(yhi, p.Y.Max)
	}
	if s.Kind != Heatmap && !s.LogY && yhi > ylo {
		yhi += (yhi - ylo) * 0.04 // headroom: the tallest mark does not touch the frame
	}
	for _, p := range ps {
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xlo, xhi, ylo, yhi
		if s.XTime {
			p.X.Tick.Marker = timeTicks(xlo, xhi)
		}
		p.Y.Padding = 0
	}
}

// heatGrid is a plotter.GridXYZ over category indices.
type heatGrid struct {
	cols, rows int
	z          []float64
}

func (g *heatGrid) Dims() (c, r int)   { return g.cols, g.rows }
func (g *heatGrid) Z(c, r int) float64 { return g.z[r*g.cols+c] }
func (g *heatGrid) X(c int) float64    { return float64(c) }
func (g *heatGrid) Y(r int) float64    { return float64(r) }
