// Package chart draws Quarry's charts: bar, line, area, scatter,
// histogram, box and heatmap charts of already aggregated data (a Frame),
// as PNG or SVG with gonum.org/v1/plot, and the same chart as a Vega-Lite
// v5 specification with inline data. It knows nothing about datasets,
// queries or MCP: the service aggregates (bins, quantiles, samples) and
// hands it a few hundred or thousand rows to draw.
//
// Defaults aim at readable charts without options: labels from column
// names (and units), a sans-serif font, thousands separators on numeric
// ticks, dates on time axes, the Okabe–Ito palette (colour-blind safe) for
// series and viridis for heatmaps, legends in a strip right of the data
// (never over it), and shared axes across facets.
package chart

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Kind is a chart kind.
type Kind string

// The chart kinds.
const (
	Bar       Kind = "bar"
	Line      Kind = "line"
	Area      Kind = "area"
	Scatter   Kind = "scatter"
	Histogram Kind = "histogram"
	Box       Kind = "box"
	Heatmap   Kind = "heatmap"
)

// Kinds lists the chart kinds in documentation order.
var Kinds = []Kind{Bar, Line, Area, Scatter, Histogram, Box, Heatmap}

// Format is an image format.
type Format string

// Image formats.
const (
	PNG Format = "png"
	SVG Format = "svg"
)

// MIME returns the media type of an image format.
func (f Format) MIME() string {
	if f == SVG {
		return "image/svg+xml"
	}
	return "image/png"
}

// Size limits, in pixels.
const (
	MinSize       = 200
	MaxSize       = 2000
	DefaultWidth  = 800
	DefaultHeight = 500
	// MaxFacets is the most panels a faceted chart draws.
	MaxFacets = 12
)

// dpi is the resolution of PNG output: a Spec's pixel sizes are drawn at
// 96 dots per inch (fonts are sized in points).
const dpi = 96

// Spec says what to draw and how to label it.
type Spec struct {
	Kind Kind
	// Title is drawn above the chart ("" draws none).
	Title string
	// XLabel and YLabel name the axes; ColorLabel titles the legend (or
	// the heatmap's colour bar).
	XLabel, YLabel, ColorLabel string
	// LogX and LogY use logarithmic axes (values must be positive).
	LogX, LogY bool
	// XTime says XNum holds Unix seconds (dates and timestamps).
	XTime bool
	// Width and Height are the image size in pixels.
	Width, Height int
}

// Frame is the data of one chart, one entry per drawn element (a bar, a
// point, a bin, a box, a cell). Which columns are set depends on the kind:
//
//	bar       XCat, Y
//	line/area XNum, Y
//	scatter   XNum, Y
//	histogram XNum (bin start), XEnd (bin end), Y (count)
//	box       XCat, Box
//	heatmap   XCat, YCat, Y (the cell value)
//
// Group (the colour series) is optional for every kind but box and
// heatmap; Facet (the panel) is optional for every kind.
type Frame struct {
	XNum  []float64
	XEnd  []float64
	XCat  []string
	YCat  []string
	Y     []float64
	Box   []FiveNum
	Group []string
	Facet []string
}

// FiveNum is one box of a box plot: whiskers at Min and Max, the box from
// Q1 to Q3 and a line at the median.
type FiveNum struct {
	Min, Q1, Median, Q3, Max float64
}

// Len is the number of rows of f.
func (f *Frame) Len() int {
	return max(len(f.XNum), len(f.XCat), len(f.Box))
}

// ErrEmpty is returned when a frame has nothing to draw.
var ErrEmpty = errors.New("chart: nothing to draw")

// Render draws the chart as PNG or SVG bytes.
func Render(s Spec, f *Frame, format Format) ([]byte, error) {
	if s.Width < MinSize || s.Width > MaxSize || s.Height < MinSize || s.Height > MaxSize {
		return nil, fmt.Errorf("chart: size %dx%d outside %d..%d", s.Width, s.Height, MinSize, MaxSize)
	}
	if f.Len() == 0 {
		return nil, ErrEmpty
	}
	w, h := vg.Length(s.Width)*vg.Inch/dpi, vg.Length(s.Height)*vg.Inch/dpi
	var buf bytes.Buffer
	switch format {
	case PNG:
		c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))
		if err := draws(s, f, draw.New(c)); err != nil {
			return nil, err
		}
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
			return nil, err
		}
	case SVG:
		c := vgsvg.NewWith(vgsvg.UseWH(w, h))
		if err := draws(s, f, draw.New(c)); err != nil {
			return nil, err
		}
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("chart: unknown format %q", format)
	}
	return buf.Bytes(), nil
}

// draws draws the whole chart on dc, recovering gonum/plot's panics
// (it panics on some degenerate inputs) as errors.
func draws(s Spec, f *Frame, dc draw.Canvas) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("chart: drawing failed: %v", r)
		}
	}()
	return drawChart(s, f, dc)
}

// drawChart lays the chart out: the title band on top, the legend (or
// colour bar) in a strip on the right, the panels in the rest.
func drawChart(s Spec, f *Frame, dc draw.Canvas) error {
	dc.SetColor(background)
	dc.Fill(dc.Rectangle.Path())
	pad := vg.Points(8)
	dc = draw.Crop(dc, pad, -pad, pad, -pad)
	if s.Title != "" {
		st := textStyle(titleSize, fontScale(s))
		st.XAlign, st.YAlign = draw.XCenter, draw.YTop
		dc.FillText(st, vg.Point{X: dc.Center().X, Y: dc.Max.Y}, s.Title)
		dc.Max.Y -= st.Rectangle(s.Title).Size().Y + vg.Points(6)
	}
	panels, err := buildPanels(s, f)
	if err != nil {
		return err
	}
	if side := panels.side; side != nil {
		sw := side.width(fontScale(s))
		if sw > (dc.Max.X-dc.Min.X)/3 {
			sw = (dc.Max.X - dc.Min.X) / 3
		}
		side.draw(fontScale(s), draw.Crop(dc, dc.Max.X-dc.Min.X-sw, 0, 0, 0))
		dc = draw.Crop(dc, 0, -sw-vg.Points(6), 0, 0)
	}
	if len(panels.plots) == 1 {
		panels.plots[0].Draw(dc)
		return nil
	}
	n := len(panels.plots)
	cols := int(math.Ceil(math.Sqrt(float64(n))))
	rows := (n + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i, p := range panels.plots {
		grid[i/cols][i%cols] = p
	}
	cs := plot.Align(grid, draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(6), PadY: vg.Points(6)}, dc)
	for i, p := range panels.plots {
		p.Draw(cs[i/cols][i%cols])
	}
	return nil
}
