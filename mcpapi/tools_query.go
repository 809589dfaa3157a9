package mcpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/service"
)

// NewQueryDataTool builds query_data.
func NewQueryDataTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.QueryRequest, *service.QueryResponse]{
		name:        "query_data",
		title:       "Query a dataset",
		description: "Query a dataset: small results inline (method direct); big ones as a handle with the first page (query_next_page) or a file (output_format; rows via read_result); never silently cut. needs_confirmation: ask the user, retry with the option's args. Examples: prompt query_examples.",
		call:        svc.Query,
		extra:       queryLinks,
		notices:     queryNotices,
		outSchema:   confirmableSchema,
		confirmable: true,
	})
}

// NewAggregateTool builds aggregate.
func NewAggregateTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.AggregateRequest, *service.QueryResponse]{
		name:        "aggregate",
		title:       "Group and summarize",
		description: "Grouped summary: group_by keys ([] for totals) and aggs; top_n keeps the biggest groups. Other arguments as in query_data.",
		call:        svc.Aggregate,
		argsAsIn:    "query_data",
		ownArgs:     []string{"dataset", "top_n"},
		extra:       queryLinks,
		notices:     queryNotices,
		outSchema:   confirmableSchema,
		confirmable: true,
	})
}

// confirmableSchema rewrites a QueryResponse output schema so both shapes
// validate: the result fields are required unless status is
// needs_confirmation, which requires estimate, options and hint.
func confirmableSchema(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		panic("mcpapi: confirmable schema: " + err.Error())
	}
	req, _ := m["required"].([]any)
	delete(m, "required")
	m["anyOf"] = []any{
		map[string]any{"required": req, "not": map[string]any{"required": []any{"status"}}},
		map[string]any{
			"required":   []any{"status", "estimate", "options", "hint"},
			"properties": map[string]any{"status": map[string]any{"const": service.StatusNeedsConfirmation}},
		},
	}
	out, err := json.Marshal(m)
	if err != nil {
		panic("mcpapi: confirmable schema: " + err.Error())
	}
	return out
}

func queryLinks(r *service.QueryResponse) []mcp.Content {
	if r == nil {
		return nil
	}
	return resultLinks(r.Result)
}

// confirmInputID keys the confirmation elicitation among a request's input
// requests (multi round-trip) and its answer among the input responses.
const confirmInputID = "quarry_confirm"

// clientSupportsElicitation reports whether the client of this request
// declared form elicitation: per request (protocol 2026-07-28 and later)
// or at initialize (earlier revisions).
func clientSupportsElicitation(ctx context.Context) bool {
	var caps *mcp.ClientCapabilities
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		caps = info.ClientCapabilities
	} else if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		c := s.GetClientCapabilities()
		caps = &c
	}
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	// {} (2025-06-18) means form; since 2025-11-25 form must be listed when url is.
	return caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
}

// choiceTitles are the form labels of the confirmation choices.
var choiceTitles = map[string]string{
	service.ChoiceParquet:   "Deliver everything as a Parquet file",
	service.ChoiceFirstPage: "First page only",
	service.ChoiceCancel:    "Cancel",
}

// elicitation turns a needs_confirmation answer into an input_required
// tool result asking the user (form elicitation). mcp-go delivers it as a
// multi round-trip request to clients on protocol 2026-07-28 or later and
// as a server-initiated elicitation/create (re-invoking the handler with
// the answer) to earlier clients. The options' args travel in the request
// state, so the retry knows what each choice means.
func elicitation(tool string, in any, qr *service.QueryResponse) *mcp.CallToolResult {
	var choices, names []string
	args := map[string]map[string]any{}
	for _, o := range qr.Options {
		choices = append(choices, o.Choice)
		names = append(names, choiceTitles[o.Choice]+": "+o.Description)
		args[o.Choice] = o.Args
	}
	state, _ := json.Marshal(args)
	dataset := ""
	if b, err := json.Marshal(in); err == nil {
		var m struct {
			Dataset string `json:"dataset"`
		}
		_ = json.Unmarshal(b, &m)
		dataset = m.Dataset
	}
	e := qr.Estimate
	msg := fmt.Sprintf("%s on %q would return about %s rows (about %s as JSON, %s estimate), above this server's confirmation threshold. How should Quarry deliver it?",
		tool, dataset, groupDigits(e.RowEstimate), humanBytes(e.ByteEstimate), e.EstimateKind)
	params := mcp.ElicitationParams{
		Message: msg,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"choice": map[string]any{
					"type": "string", "title": "Delivery", "description": "What to do with this large result",
					"enum": choices, "enumNames": names, "default": service.ChoiceParquet,
				},
			},
			"required": []string{"choice"},
		},
	}
	return server.NewInputRequestBuilder(base64.RawURLEncoding.EncodeToString(state)).Elicit(confirmInputID, params).ToolResult()
}

// confirmArgs are the arguments a confirmation choice may add.
var confirmArgs = []string{"confirm", "output_format", "limit"}

// applyConfirmation merges the user's elicitation answer, if the request
// carries one, into the tool arguments args (exactArguments). It returns
// the arguments to bind and whether an answer was applied; a declined or
// cancelled confirmation is a cancelled error.
func applyConfirmation(ctx context.Context, req mcp.CallToolRequest, args any) (any, bool, error) {
	ans := server.ElicitationResponse(req.Params.InputResponses, confirmInputID)
	if ans == nil {
		return args, false, nil
	}
	rec := recordFrom(ctx)
	choice := ""
	if c, ok := ans.Content.(map[string]any); ok {
		choice, _ = c["choice"].(string)
	}
	rec.status = "elicitation_" + string(ans.Action)
	if ans.Action != mcp.ElicitationResponseActionAccept || choice == "" || choice == service.ChoiceCancel {
		return nil, true, qerr.New(qerr.ErrInvalidArgument, qerr.CodeCancelled, "the user chose not to run this query").
			WithHint("narrow it (filters, fewer columns, an aggregate or a limit), or ask the user how to proceed")
	}
	var options map[string]map[string]any
	raw, err := base64.RawURLEncoding.DecodeString(req.Params.RequestState)
	if err == nil {
		err = json.Unmarshal(raw, &options)
	}
	extra, ok := options[choice]
	if err != nil || !ok {
		return nil, true, qerr.Invalid(qerr.CodeInvalidArgument, "unknown confirmation choice %q", choice).
			WithHint("call the tool again with confirm: true, or narrow the query")
	}
	m, _ := args.(map[string]any)
	merged := maps.Clone(m)
	if merged == nil {
		merged = map[string]any{}
	}
	for k, v := range extra {
		if slices.Contains(confirmArgs, k) {
			merged[k] = v
		}
	}
	rec.status = "confirmed_" + choice
	return merged, true, nil
}

// groupDigits writes n with thousands separators.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && c != '-' && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// humanBytes formats n as B, KiB, MiB, ...
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
