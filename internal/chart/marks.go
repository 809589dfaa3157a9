package chart

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// boxes draws box plots from five numbers each (the engine computes them;
// gonum's BoxPlot wants the raw values). Whiskers span min to max.
type boxes struct {
	pos   []float64
	five  []FiveNum
	width vg.Length
	color color.RGBA
}

// Plot implements plot.Plotter.
func (b *boxes) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	line := draw.LineStyle{Color: inkColor, Width: vg.Points(1)}
	for i, f := range b.five {
		x := trX(b.pos[i])
		lo, q1, med, q3, hi := trY(f.Min), trY(f.Q1), trY(f.Median), trY(f.Q3), trY(f.Max)
		half := b.width / 2
		box := vg.Rectangle{Min: vg.Point{X: x - half, Y: q1}, Max: vg.Point{X: x + half, Y: q3}}
		c.SetColor(withAlpha(b.color, 0.45))
		c.Fill(box.Path())
		c.StrokeLines(line, []vg.Point{{X: x, Y: lo}, {X: x, Y: q1}}, []vg.Point{{X: x, Y: q3}, {X: x, Y: hi}},
			[]vg.Point{{X: x - half/2, Y: lo}, {X: x + half/2, Y: lo}}, []vg.Point{{X: x - half/2, Y: hi}, {X: x + half/2, Y: hi}})
		c.StrokeLines(line, []vg.Point{box.Min, {X: box.Max.X, Y: box.Min.Y}, box.Max, {X: box.Min.X, Y: box.Max.Y}, box.Min})
		c.StrokeLines(draw.LineStyle{Color: inkColor, Width: vg.Points(2)}, []vg.Point{{X: x - half, Y: med}, {X: x + half, Y: med}})
	}
}

// DataRange implements plot.DataRanger.
func (b *boxes) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i, f := range b.five {
		xmin, xmax = math.Min(xmin, b.pos[i]-0.5), math.Max(xmax, b.pos[i]+0.5)
		ymin, ymax = math.Min(ymin, f.Min), math.Max(ymax, f.Max)
	}
	return
}

// legend is the series legend: a title and a colour swatch per series,
// drawn in the strip right of the data.
type legend struct {
	title string
	names []string
}

// maxLegendEntries is the most series a legend lists; the rest are counted.
const maxLegendEntries = 24

func (l *legend) entries() []string {
	if len(l.names) <= maxLegendEntries {
		return l.names
	}
	return append(l.names[:maxLegendEntries-1:maxLegendEntries-1], fmt.Sprintf("… %d more", len(l.names)-maxLegendEntries+1))
}

func (l *legend) width(k vg.Length) vg.Length {
	st, sw := textStyle(tickSize+1, k), textStyle(labelSize, k)
	w := sw.Width(l.title)
	for _, n := range l.entries() {
		w = max(w, swatch*k+vg.Points(4)+st.Width(n))
	}
	return w + vg.Points(4)
}

const swatch = vg.Length(10)

func (l *legend) draw(k vg.Length, c draw.Canvas) {
	st, ts := textStyle(tickSize+1, k), textStyle(labelSize, k)
	sw := swatch * k
	ts.YAlign, st.YAlign = draw.YTop, draw.YCenter
	y := c.Max.Y
	if l.title != "" {
		c.FillText(ts, vg.Point{X: c.Min.X, Y: y}, l.title)
		y -= ts.Rectangle(l.title).Size().Y + vg.Points(4)
	}
	for i, n := range l.entries() {
		row := y - sw/2
		if i < maxLegendEntries-1 || len(l.names) <= maxLegendEntries {
			c.SetColor(seriesColor(i))
			c.Fill(vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: row - sw/2}, Max: vg.Point{X: c.Min.X + sw, Y: row + sw/2}}.Path())
		}
		c.FillText(st, vg.Point{X: c.Min.X + sw + vg.Points(4), Y: row}, n)
		y -= sw + vg.Points(5)
	}
}

// colourBar is a heatmap's scale: the viridis ramp with its lowest,
// middle and highest values.
type colourBar struct {
	title  string
	lo, hi float64
}

func (b *colourBar) labels() []string {
	out := make([]string, 3)
	for i, v := range []float64{b.hi, (b.lo + b.hi) / 2, b.lo} {
		out[i] = Thousands(strconv.FormatFloat(v, 'f', -1, 64))
		if len(out[i]) > 10 {
			out[i] = Thousands(strconv.FormatFloat(v, 'g', 4, 64))
		}
	}
	return out
}

func (b *colourBar) width(k vg.Length) vg.Length {
	st, ts := textStyle(tickSize, k), textStyle(labelSize, k)
	w := ts.Width(b.title)
	for _, l := range b.labels() {
		w = max(w, swatch*1.5*k+vg.Points(4)+st.Width(l))
	}
	return w + vg.Points(4)
}

func (b *colourBar) draw(k vg.Length, c draw.Canvas) {
	st, ts := textStyle(tickSize, k), textStyle(labelSize, k)
	ts.YAlign, st.YAlign = draw.YTop, draw.YCenter
	top := c.Max.Y
	if b.title != "" {
		c.FillText(ts, vg.Point{X: c.Min.X, Y: top}, b.title)
		top -= ts.Rectangle(b.title).Size().Y + vg.Points(8)
	}
	h := min(top-c.Min.Y, vg.Points(160)*k)
	cols := viridisPalette(32).Colors()
	step := h / vg.Length(len(cols))
	for i, col := range cols {
		y0 := top - h + step*vg.Length(i)
		c.SetColor(col)
		c.Fill(vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: y0}, Max: vg.Point{X: c.Min.X + swatch*1.5*k, Y: y0 + step + 0.2}}.Path())
	}
	for i, l := range b.labels() {
		c.FillText(st, vg.Point{X: c.Min.X + swatch*1.5*k + vg.Points(4), Y: top - h*vg.Length(i)/2}, l)
	}
}
