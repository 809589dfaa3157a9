package service

import (
	"fmt"

	"github.com/quarrydb/quarry/catalog"
)

// SectionCharts heads the plot examples of the query_examples prompt.
const SectionCharts = "chart_examples"

// chartExamples are plot calls for dataset d, on the columns the query
// examples use: a bar chart of the measure per dimension, a histogram of
// the measure, a line over the first date column, a scatter of two
// numeric columns, a box plot per dimension, and a Vega-Lite spec.
func chartExamples(d *catalog.Dataset, prof map[string]ColumnProfile, dim, measure string) []Example {
	ex := func(title string, chart map[string]any, extra map[string]any) Example {
		args := map[string]any{"dataset": d.ID, "chart": chart}
		for k, v := range extra {
			args[k] = v
		}
		return Example{Section: SectionCharts, Title: title, Tool: "plot", Args: args}
	}
	var out []Example
	if measure == "" {
		return append(out, ex(fmt.Sprintf("Bar chart: rows per %s (the 60 largest; the PNG comes back as an image)", dim),
			map[string]any{"kind": "bar", "x": dim}, nil))
	}
	out = append(out, ex(fmt.Sprintf("Bar chart: sum of %s per %s, largest first (the PNG comes back as an image)", measure, dim),
		map[string]any{"kind": "bar", "x": dim, "y": measure}, nil))
	if _, _, ok := numRange(prof[measure]); ok {
		out = append(out, ex(fmt.Sprintf("Histogram of %s: 20 bins computed by the engine", measure),
			map[string]any{"kind": "histogram", "x": measure, "bins": 20}, nil))
	}
	if date, _ := dateColumn(d, prof); date != "" {
		out = append(out, ex(fmt.Sprintf("Line chart: average %s per %s", measure, date),
			map[string]any{"kind": "line", "x": date, "y": measure}, nil))
	}
	for _, f := range d.Schema.Fields() {
		if _, _, ok := numRange(prof[f.Name]); ok && f.Name != measure && isNumber(f.Type) {
			out = append(out, ex(fmt.Sprintf("Scatter of %s against %s (big inputs are sampled to 5,000 points, and the answer says so)", measure, f.Name),
				map[string]any{"kind": "scatter", "x": f.Name, "y": measure}, nil))
			break
		}
	}
	out = append(out, ex(fmt.Sprintf("Box plot of %s per %s, as SVG", measure, dim),
		map[string]any{"kind": "box", "x": dim, "y": measure}, map[string]any{"format": "svg"}))
	out = append(out, ex("The bar chart as a Vega-Lite v5 spec with inline data, for clients that render it",
		map[string]any{"kind": "bar", "x": dim, "y": measure, "agg": "avg"}, map[string]any{"format": "vega-lite"}))
	return out
}
