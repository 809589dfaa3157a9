package mcpapi

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/service"
)

// TestPatternFormBooleans: a client without a protocol revision that has
// multi-select arrays (here: no session at all) gets one boolean per
// candidate, includes defaulting to true, and its answer becomes
// confirmed {include, exclude} on the retry's arguments.
func TestPatternFormBooleans(t *testing.T) {
	out := &service.PatternFilterResponse{Status: service.PatternNeedsConfirmation, Question: "which?",
		Candidates: &service.PatternCandidates{
			Include: []service.PatternCandidate{{Value: "Գիտություն", Count: 1200}, {Value: "Գիտության ծրագիր", Count: 3}},
			Exclude: []service.PatternCandidate{{Value: "Մասնագիտություն", Count: 7}},
		}}
	res := patternForm(context.Background(), out)
	if res == nil || len(res.InputRequests) != 1 {
		t.Fatalf("form: %+v", res)
	}
	raw, _ := json.Marshal(res.InputRequests)
	var reqs map[string]struct {
		Params struct {
			Message         string `json:"message"`
			RequestedSchema struct {
				Properties map[string]struct {
					Type    string `json:"type"`
					Title   string `json:"title"`
					Default bool   `json:"default"`
				} `json:"properties"`
			} `json:"requestedSchema"`
		} `json:"params"`
	}
	if err := json.Unmarshal(raw, &reqs); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	props := reqs[patternInputID].Params.RequestedSchema.Properties
	if len(props) != 3 || props["v0"].Title != "Գիտություն (1,200 rows)" || !props["v0"].Default || !props["v1"].Default ||
		props["v2"].Default || props["v2"].Type != "boolean" || reqs[patternInputID].Params.Message != "which?" {
		t.Fatalf("schema: %s", raw)
	}
	req := mcp.CallToolRequest{}
	req.Params.Arguments = map[string]any{"dataset": "d", "field": "f", "patterns": []any{"գիտություն"}}
	req.Params.RequestState = res.RequestState
	accept := &mcp.ElicitationResult{}
	accept.Action = mcp.ElicitationResponseActionAccept
	accept.Content = map[string]any{"v0": true, "v1": false, "v2": true}
	retry, err := applyPatternChoice(context.Background(), req, accept)
	if err != nil {
		t.Fatal(err)
	}
	args := retry.Params.Arguments.(map[string]any)
	c := args["confirmed"].(map[string]any)
	if !slices.Equal(c["include"].([]string), []string{"Գիտություն", "Մասնագիտություն"}) ||
		!slices.Equal(c["exclude"].([]string), []string{"Գիտության ծրագիր"}) || args["dataset"] != "d" {
		t.Fatalf("retry arguments: %+v", args)
	}
	accept.Content = map[string]any{"v0": false, "v1": false, "v2": false}
	if _, err := applyPatternChoice(context.Background(), req, accept); qerr.Code(err) != qerr.CodeCancelled {
		t.Fatalf("nothing chosen: %v", err)
	}
}
