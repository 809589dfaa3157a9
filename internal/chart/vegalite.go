package chart

import (
	"encoding/json"
	"math"
	"strings"
	"time"
)

// VegaLiteSchema is the $schema of the specifications VegaLite writes.
const VegaLiteSchema = "https://vega.github.io/schema/vega-lite/v5.json"

// Fields names the data fields of a Vega-Lite specification: the column
// names the chart was made from ("" for a part the chart does not have).
type Fields struct {
	X, Y, Color, Facet string
}

// VegaLite returns the chart as a Vega-Lite v5 specification with the
// frame's rows as inline data (data.values), for clients that render
// Vega-Lite themselves. Histograms carry bin_start/bin_end, box plots
// their five numbers (min, q1, median, q3, max) drawn as layered marks.
func VegaLite(s Spec, f *Frame, names Fields) (json.RawMessage, error) {
	n := f.Len()
	if err := checkFrame(s, f, n); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, ErrEmpty
	}
	fx, fy := orDefault(names.X, "x"), orDefault(names.Y, "y")
	fc, ff := orDefault(names.Color, "color"), orDefault(names.Facet, "facet")
	values := make([]map[string]any, n)
	for i := range values {
		r := map[string]any{}
		switch s.Kind {
		case Bar:
			r[fx], r[fy] = f.XCat[i], num(f.Y[i])
		case Line, Area, Scatter:
			r[fx], r[fy] = xValue(s, f.XNum[i]), num(f.Y[i])
		case Histogram:
			r["bin_start"], r["bin_end"], r[fy] = num(f.XNum[i]), num(f.XEnd[i]), num(f.Y[i])
		case Box:
			b := f.Box[i]
			r[fx], r["min"], r["q1"], r["median"], r["q3"], r["max"] = f.XCat[i], num(b.Min), num(b.Q1), num(b.Median), num(b.Q3), num(b.Max)
		case Heatmap:
			r[fx], r[fy], r[fc] = f.XCat[i], f.YCat[i], num(f.Y[i])
		}
		if len(f.Group) == n && s.Kind != Heatmap {
			r[fc] = f.Group[i]
		}
		if len(f.Facet) == n {
			r[ff] = f.Facet[i]
		}
		values[i] = r
	}
	spec := map[string]any{
		"$schema": VegaLiteSchema,
		"width":   s.Width, "height": s.Height,
		"data": map[string]any{"values": values},
	}
	if s.Title != "" {
		spec["title"] = s.Title
	}
	enc, layer := vlEncoding(s, f, fx, fy, fc, n)
	if layer != nil {
		spec["layer"] = layer
	} else {
		spec["mark"] = vlMark(s.Kind)
	}
	spec["encoding"] = enc
	if len(f.Facet) == n {
		// A faceted chart: the facet operator around the chart.
		inner := map[string]any{"encoding": enc, "width": s.Width / 3, "height": s.Height / 3}
		if layer != nil {
			inner["layer"] = layer
		} else {
			inner["mark"] = vlMark(s.Kind)
		}
		delete(spec, "encoding")
		delete(spec, "layer")
		delete(spec, "mark")
		delete(spec, "width")
		delete(spec, "height")
		spec["facet"] = map[string]any{"field": vlField(ff), "type": "nominal", "title": s.ColorLabelOr(ff)}
		spec["columns"] = 3
		spec["spec"] = inner
	}
	return json.Marshal(spec)
}

// ColorLabelOr is the legend title, or def when the spec has none.
func (s Spec) ColorLabelOr(def string) string {
	if s.ColorLabel != "" {
		return s.ColorLabel
	}
	return def
}

func vlMark(k Kind) any {
	switch k {
	case Bar, Histogram:
		return "bar"
	case Line:
		return "line"
	case Area:
		return map[string]any{"type": "area", "opacity": 0.5, "line": true}
	case Scatter:
		return map[string]any{"type": "point", "filled": true, "opacity": 0.75}
	case Heatmap:
		return "rect"
	}
	return "point"
}

// vlEncoding builds the encoding (and, for box plots, the layers).
func vlEncoding(s Spec, f *Frame, fx, fy, fc string, n int) (map[string]any, []any) {
	axis := func(field, typ, title string, log bool) map[string]any {
		e := map[string]any{"field": vlField(field), "type": typ, "title": title}
		if log {
			e["scale"] = map[string]any{"type": "log"}
		}
		if typ == "quantitative" {
			e["axis"] = map[string]any{"format": ",~r"}
		}
		return e
	}
	xtype := "quantitative"
	if s.XTime {
		xtype = "temporal"
	}
	enc := map[string]any{}
	var layer []any
	switch s.Kind {
	case Bar:
		x := axis(fx, "nominal", s.XLabel, false)
		x["sort"] = nil
		enc["x"], enc["y"] = x, axis(fy, "quantitative", s.YLabel, s.LogY)
	case Line, Area, Scatter:
		enc["x"], enc["y"] = axis(fx, xtype, s.XLabel, s.LogX), axis(fy, "quantitative", s.YLabel, s.LogY)
	case Histogram:
		x := axis("bin_start", "quantitative", s.XLabel, false)
		x["bin"] = map[string]any{"binned": true}
		enc["x"], enc["x2"] = x, map[string]any{"field": "bin_end"}
		enc["y"] = axis(fy, "quantitative", s.YLabel, s.LogY)
	case Box:
		x := axis(fx, "nominal", s.XLabel, false)
		x["sort"] = nil
		enc["x"] = x
		y := axis("q1", "quantitative", s.YLabel, s.LogY)
		layer = []any{
			map[string]any{"mark": "rule", "encoding": map[string]any{"y": axis("min", "quantitative", s.YLabel, s.LogY), "y2": map[string]any{"field": "max"}}},
			map[string]any{"mark": map[string]any{"type": "bar", "size": 24, "color": hexColor(single), "opacity": 0.6},
				"encoding": map[string]any{"y": y, "y2": map[string]any{"field": "q3"}}},
			map[string]any{"mark": map[string]any{"type": "tick", "size": 24, "color": "black", "thickness": 2},
				"encoding": map[string]any{"y": map[string]any{"field": "median", "type": "quantitative"}}},
		}
	case Heatmap:
		enc["x"], enc["y"] = axis(fx, "nominal", s.XLabel, false), axis(fy, "nominal", s.YLabel, false)
		enc["x"].(map[string]any)["sort"], enc["y"].(map[string]any)["sort"] = nil, nil
		enc["color"] = map[string]any{"field": vlField(fc), "type": "quantitative", "title": s.ColorLabelOr(fc), "scale": map[string]any{"scheme": "viridis"}}
	}
	if len(f.Group) == n && s.Kind != Heatmap && s.Kind != Box {
		enc["color"] = map[string]any{"field": vlField(fc), "type": "nominal", "title": s.ColorLabelOr(fc), "sort": nil,
			"scale": map[string]any{"range": OkabeItoHex()}}
		if s.Kind == Bar {
			enc["xOffset"] = map[string]any{"field": vlField(fc), "sort": nil}
		}
	} else if s.Kind != Heatmap && s.Kind != Box {
		enc["color"] = map[string]any{"value": hexColor(single)}
	}
	return enc, layer
}

// vlField escapes the characters Vega-Lite reads as nested access in a
// field name (dots and brackets).
func vlField(name string) string {
	return strings.NewReplacer(`\`, `\\`, ".", `\.`, "[", `\[`, "]", `\]`).Replace(name)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// num is v for JSON: NaN and infinities become null.
func num(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// xValue is an x value for JSON: a time axis's Unix seconds as RFC 3339.
func xValue(s Spec, v float64) any {
	if s.XTime && !math.IsNaN(v) {
		sec, frac := math.Modf(v)
		t := time.Unix(int64(sec), int64(frac*1e9)).UTC()
		if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
			return t.Format(time.DateOnly)
		}
		return t.Format(time.RFC3339Nano)
	}
	return num(v)
}
