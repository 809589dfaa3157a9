package mcpapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/service"
)

// NewPlotTool builds plot.
func NewPlotTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	t, h := newTool(toolSpec[service.PlotRequest, *service.PlotResponse]{
		name:        "plot",
		title:       "Draw a chart",
		description: "Draw a chart (bar, line, area, scatter, histogram, box, heatmap) of a dataset, result_handle or sql: a PNG/SVG image and a summary; the engine aggregates or samples first.",
		call:        svc.Plot,
		extra:       plotContent,
	})
	t.RawInputSchema = compactSpec(t.RawInputSchema)
	return t, h
}

// compactSpec lists plot's spec argument as a plain object: its knobs are
// query_data's, already described by that tool's schema, and repeating
// them would more than double plot's share of tools/list. The arguments
// are still bound strictly (unknown knobs are refused by name) and
// validated by the planner. The shared definitions only the spec used go
// with it.
func compactSpec(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		panic("mcpapi: plot schema: " + err.Error())
	}
	props, _ := m["properties"].(map[string]any)
	spec, _ := props["spec"].(map[string]any)
	props["spec"] = map[string]any{"type": "object", "description": spec["description"]}
	if defs, ok := m["$defs"].(map[string]any); ok {
		delete(m, "$defs")
		pruneDefs(m, defs) // the filter types were the spec's
		if len(defs) > 0 {
			m["$defs"] = defs
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		panic("mcpapi: plot schema: " + err.Error())
	}
	return out
}

// plotContent is the image content item (inline PNG or SVG) or the
// resource link of a chart artifact.
func plotContent(r *service.PlotResponse) []mcp.Content {
	switch {
	case r == nil:
		return nil
	case r.ResourceURI != "":
		link := mcp.NewResourceLink(r.ResourceURI, path.Base(r.ResourceURI), fmt.Sprintf("%s chart (%s)", r.Kind, r.Format), r.MIMEType)
		size := r.SizeBytes
		link.Size = &size
		return []mcp.Content{link}
	case len(r.Image) > 0:
		return []mcp.Content{mcp.NewImageContent(base64.StdEncoding.EncodeToString(r.Image), r.MIMEType)}
	}
	return nil
}
