package mcpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/service"
)

// NewPatternFilterTool builds pattern_filter. A needs_confirmation answer
// becomes a form elicitation (the candidates as a multi-select, includes
// pre-selected, row counts in the labels) when the client supports it; the
// user's choice is applied as confirmed.include on the retry, which
// answers with the token directly.
func NewPatternFilterTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	tool, h := newTool(toolSpec[service.PatternFilterRequest, *service.PatternFilterResponse]{
		name:        "pattern_filter",
		title:       "Turn the user's words into a confirmed filter",
		description: "Match the user's words to a text field's values, language-aware: a filter_token for filters, or needs_confirmation (ask the user, retry with confirmed).",
		call:        svc.PatternFilter,
	})
	return tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if ans := server.ElicitationResponse(req.Params.InputResponses, patternInputID); ans != nil {
			retry, err := applyPatternChoice(ctx, req, ans)
			if err != nil {
				recordFrom(ctx).fail(err)
				return errorResult(ctx, err), nil
			}
			return h(ctx, retry)
		}
		res, err := h(ctx, req)
		if err != nil || res.IsError || !clientSupportsElicitation(ctx) {
			return res, err
		}
		raw, _ := res.StructuredContent.(json.RawMessage)
		var out service.PatternFilterResponse
		if json.Unmarshal(raw, &out) != nil || out.Status != service.PatternNeedsConfirmation || out.Candidates == nil {
			return res, nil
		}
		if form := patternForm(ctx, &out); form != nil {
			recordFrom(ctx).status = "elicitation_sent"
			return form, nil
		}
		return res, nil
	}
}

// patternInputID keys pattern_filter's elicitation among input requests.
const patternInputID = "quarry_pattern"

// maxFormValues is the most candidates one form lists; beyond it the
// needs_confirmation answer goes back to the model instead.
const maxFormValues = 100

// multiSelectSince is the first protocol revision with multi-select enum
// arrays in elicitation schemas; earlier clients get one boolean per value.
const multiSelectSince = mcp.ProtocolVersion20251125

// clientProtocol is the protocol revision of this request's client.
func clientProtocol(ctx context.Context) string {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ProtocolVersion
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithProtocolVersion); ok {
		return s.ProtocolVersion()
	}
	return ""
}

// patternForm builds the elicitation asking the user to pick the values
// of a needs_confirmation answer (nil when there are none or too many).
func patternForm(ctx context.Context, out *service.PatternFilterResponse) *mcp.CallToolResult {
	var values, labels, chosen []string
	for _, list := range [][]service.PatternCandidate{out.Candidates.Include, out.Candidates.Exclude} {
		for _, c := range list {
			values = append(values, c.Value)
			labels = append(labels, fmt.Sprintf("%s (%s rows)", c.Value, groupDigits(c.Count)))
		}
	}
	for _, c := range out.Candidates.Include {
		chosen = append(chosen, c.Value)
	}
	if len(values) == 0 || len(values) > maxFormValues {
		return nil
	}
	var props map[string]any
	multi := clientProtocol(ctx) >= multiSelectSince
	if multi {
		items := make([]any, len(values))
		for i := range values {
			items[i] = map[string]any{"const": values[i], "title": labels[i]}
		}
		props = map[string]any{"values": map[string]any{
			"type": "array", "title": "Values to include", "description": "The rows with these values are kept",
			"items": map[string]any{"anyOf": items}, "default": chosen,
		}}
	} else {
		props = map[string]any{}
		for i := range values {
			props[fmt.Sprintf("v%d", i)] = map[string]any{"type": "boolean", "title": labels[i], "default": i < len(chosen)}
		}
	}
	state, _ := json.Marshal(patternState{Values: values, Multi: multi})
	params := mcp.ElicitationParams{
		Message:         out.Question,
		RequestedSchema: map[string]any{"type": "object", "properties": props},
	}
	return server.NewInputRequestBuilder(base64.RawURLEncoding.EncodeToString(state)).Elicit(patternInputID, params).ToolResult()
}

// patternState travels with the elicitation: the values the form offered.
type patternState struct {
	Values []string `json:"values"`
	Multi  bool     `json:"multi"`
}

// applyPatternChoice turns the user's answer into the retry request: the
// original arguments plus confirmed {include: chosen, exclude: the rest}.
// Declining, cancelling or choosing nothing is a cancelled error.
func applyPatternChoice(ctx context.Context, req mcp.CallToolRequest, ans *mcp.ElicitationResult) (mcp.CallToolRequest, error) {
	rec := recordFrom(ctx)
	rec.status = "elicitation_" + string(ans.Action)
	cancelled := qerr.New(qerr.ErrInvalidArgument, qerr.CodeCancelled, "the user did not confirm any value").
		WithHint("ask the user which values they mean, or call pattern_filter with other words")
	if ans.Action != mcp.ElicitationResponseActionAccept {
		return req, cancelled
	}
	var st patternState
	raw, err := base64.RawURLEncoding.DecodeString(req.Params.RequestState)
	if err == nil {
		err = json.Unmarshal(raw, &st)
	}
	if err != nil {
		return req, qerr.Invalid(qerr.CodeInvalidArgument, "the confirmation state is malformed").
			WithHint("call pattern_filter again without the answer")
	}
	content, _ := ans.Content.(map[string]any)
	var include, exclude []string
	for i, v := range st.Values {
		picked := false
		if st.Multi {
			list, _ := content["values"].([]any)
			picked = slices.Contains(list, any(v))
		} else {
			picked, _ = content[fmt.Sprintf("v%d", i)].(bool)
		}
		if picked {
			include = append(include, v)
		} else {
			exclude = append(exclude, v)
		}
	}
	if len(include) == 0 {
		return req, cancelled
	}
	args, _ := exactArguments(req).(map[string]any)
	merged := maps.Clone(args)
	if merged == nil {
		merged = map[string]any{}
	}
	merged["confirmed"] = map[string]any{"include": include, "exclude": exclude}
	retry := req
	retry.Params.Arguments, retry.Params.RawArguments, retry.Params.InputResponses = merged, nil, nil
	rec.status = "confirmed_values"
	return retry, nil
}
