package chart

import (
	"image/color"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// OkabeIto is the colour-blind-safe qualitative palette of Okabe and Ito
// (2008), black last; series take its colours in order.
var OkabeIto = []color.RGBA{
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xF0, 0xE4, 0x42, 0xFF}, // yellow
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0x00, 0x00, 0x00, 0xFF}, // black
}

// OkabeItoHex are the same colours as CSS hex strings (Vega-Lite).
func OkabeItoHex() []string {
	out := make([]string, len(OkabeIto))
	for i, c := range OkabeIto {
		out[i] = hexColor(c)
	}
	return out
}

func hexColor(c color.RGBA) string {
	const digits = "0123456789abcdef"
	b := []byte{'#', 0, 0, 0, 0, 0, 0}
	for i, v := range []uint8{c.R, c.G, c.B} {
		b[1+2*i], b[2+2*i] = digits[v>>4], digits[v&15]
	}
	return string(b)
}

// seriesColor is the colour of series i (the palette repeats past 8).
func seriesColor(i int) color.RGBA { return OkabeIto[i%len(OkabeIto)] }

// single is the colour of a chart without series: Okabe–Ito blue.
var single = OkabeIto[4]

// withAlpha returns c with alpha a (premultiplied, as color.RGBA wants).
func withAlpha(c color.RGBA, a float64) color.RGBA {
	f := func(v uint8) uint8 { return uint8(math.Round(float64(v) * a)) }
	return color.RGBA{f(c.R), f(c.G), f(c.B), uint8(math.Round(255 * a))}
}

// viridis anchors (matplotlib's viridis at 0, 1/8, ..., 1): the
// perceptually uniform, colour-blind-safe sequential map of heatmaps.
var viridis = []color.RGBA{
	{0x44, 0x01, 0x54, 0xFF}, {0x47, 0x2d, 0x7b, 0xFF}, {0x3b, 0x52, 0x8b, 0xFF},
	{0x2c, 0x72, 0x8e, 0xFF}, {0x21, 0x91, 0x8c, 0xFF}, {0x28, 0xae, 0x80, 0xFF},
	{0x5e, 0xc9, 0x62, 0xFF}, {0xad, 0xdc, 0x30, 0xFF}, {0xfd, 0xe7, 0x25, 0xFF},
}

// viridisPalette is a palette.Palette of n colours interpolated along viridis.
type viridisPalette int

// Colors implements palette.Palette.
func (n viridisPalette) Colors() []color.Color {
	out := make([]color.Color, int(n))
	for i := range out {
		t := float64(i) / float64(max(int(n)-1, 1)) * float64(len(viridis)-1)
		j := min(int(t), len(viridis)-2)
		fr := t - float64(j)
		a, b := viridis[j], viridis[j+1]
		mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + (float64(y)-float64(x))*fr)) }
		out[i] = color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xFF}
	}
	return out
}

var (
	background = color.White
	gridColor  = color.Gray{Y: 0xE0}
	inkColor   = color.Gray{Y: 0x30}
)

// Font sizes in points.
const (
	titleSize = 13
	labelSize = 11
	tickSize  = 9
)

// sans is the chart font (Liberation Sans, shipped with gonum/plot).
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// fontScale grows the fonts with the image: 1 at 500 pixels on the short
// side, from 0.85 to 2.
func fontScale(s Spec) vg.Length {
	return vg.Length(min(max(float64(min(s.Width, s.Height))/500, 0.85), 2))
}

// textStyle is a plain-text style of the chart font at size points
// (times the font scale).
func textStyle(size, scale vg.Length) text.Style {
	return text.Style{Color: inkColor, Font: font.From(sans, size*scale), Handler: plot.DefaultTextHandler}
}

// restyle sets the chart font and ink of st, keeping its alignment and rotation.
func restyle(st *text.Style, size, scale vg.Length) {
	st.Font, st.Color = font.From(sans, size*scale), inkColor
}

// newPlot is a plot with the chart's fonts, colours and axis labels.
func newPlot(s Spec) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil // the chart background is drawn once, under every panel
	k := fontScale(s)
	restyle(&p.Title.TextStyle, labelSize, k)
	p.Title.Padding = vg.Points(4)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		restyle(&a.Label.TextStyle, labelSize, k)
		restyle(&a.Tick.Label, tickSize, k)
		a.Color, a.Tick.Color = inkColor, inkColor
		a.Tick.Marker = groupedTicks{plot.DefaultTicks{}}
	}
	p.X.Label.Text, p.Y.Label.Text = s.XLabel, s.YLabel
	p.X.Label.Padding, p.Y.Label.Padding = vg.Points(4), vg.Points(4)
	if s.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, groupedTicks{plot.LogTicks{Prec: -1}}
	}
	if s.LogY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, groupedTicks{plot.LogTicks{Prec: -1}}
	}
	return p
}

// groupedTicks writes thousands separators into the labels of another
// ticker (12,500 rather than 12500).
type groupedTicks struct{ plot.Ticker }

// Ticks implements plot.Ticker.
func (g groupedTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := g.Ticker.Ticks(lo, hi)
	for i := range ts {
		ts[i].Label = Thousands(trimZeros(ts[i].Label))
	}
	return ts
}

// trimZeros drops trailing zeros of a decimal fraction: "25.00" → "25",
// "0.50" → "0.5".
func trimZeros(label string) string {
	if !strings.Contains(label, ".") || strings.ContainsAny(label, "eE") {
		return label
	}
	return strings.TrimSuffix(strings.TrimRight(label, "0"), ".")
}

// Thousands inserts a comma every three digits of the integer part of a
// decimal number label ("-12345.5" → "-12,345.5"); labels in exponent
// form and other text are returned as they are.
func Thousands(label string) string {
	if label == "" || strings.ContainsAny(label, "eE") {
		return label
	}
	sign, rest := "", label
	if rest[0] == '-' || rest[0] == '+' {
		sign, rest = rest[:1], rest[1:]
	}
	intPart, frac, hasFrac := strings.Cut(rest, ".")
	for _, c := range intPart {
		if c < '0' || c > '9' {
			return label
		}
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return b.String()
}

// timeTicks labels a time axis (Unix seconds) with a layout fitting the
// span of the data: years, months, days or hours.
func timeTicks(lo, hi float64) plot.Ticker {
	span := time.Duration(hi-lo) * time.Second
	layout := "2006-01-02 15:04"
	switch {
	case span > 3*365*24*time.Hour:
		layout = "2006"
	case span > 90*24*time.Hour:
		layout = "2006-01"
	case span > 3*24*time.Hour:
		layout = "2006-01-02"
	}
	return plot.TimeTicks{Ticker: plot.DefaultTicks{}, Format: layout, Time: plot.UnixTimeIn(time.UTC)}
}
