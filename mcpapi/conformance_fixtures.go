package mcpapi

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The conformance fixtures (serve --conformance-fixtures) are the tools,
// resources and prompts the official MCP conformance suite
// (@modelcontextprotocol/conformance, run by e2e/conformance_suite_test.go)
// calls by fixed names. They are registered on Quarry's own server — same
// transports, HTTP guards, middleware, hooks and input validation as the
// data tools — so the suite measures Quarry's MCP surface, not a toy server.
// They touch no data and are off by default.

// conformanceOptions are the server options the fixtures need on top of
// Quarry's: list-changed notifications for tools and prompts (the suite's
// test_trigger_*_change tools change the lists).
func conformanceOptions(on bool) []server.ServerOption {
	if !on {
		return nil
	}
	return []server.ServerOption{server.WithToolCapabilities(true), server.WithPromptCapabilities(true)}
}

// Fixture payloads, as the suite expects them.
const (
	fixtureImage = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	fixtureAudio = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
	// WatchedResourceURI is the resource the suite subscribes to.
	WatchedResourceURI = "test://watched-resource"
)

// fixtureJSONSchema is json_schema_2020_12_tool's input schema: 2020-12
// keywords the server must pass through unchanged (SEP-1613, SEP-2106).
const fixtureJSONSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},
"phone":{"type":"string"},"email":{"type":"string"}},
"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},
"additionalProperties":false}`

// fixtureHeaderSchema is test_custom_headers' input schema: parameters
// mirrored into Mcp-Param-* headers (SEP-2243), which the transport checks.
const fixtureHeaderSchema = `{"type":"object","properties":{
"region":{"type":"string","description":"Plain ASCII string value","x-mcp-header":"Region"},
"priority":{"type":"integer","description":"Integer value","x-mcp-header":"Priority"},
"verbose":{"type":"boolean","description":"Boolean value","x-mcp-header":"Verbose"},
"query":{"type":"string","description":"No header"}},"required":["region","priority","query"]}`

// fixtures holds the state of one server's fixtures: the key that signs
// request states and a counter for the list-changed triggers.
type fixtures struct {
	s       *server.MCPServer
	key     []byte
	changes atomic.Int64
}

// addConformanceFixtures registers every fixture on s.
func addConformanceFixtures(s *server.MCPServer) {
	f := &fixtures{s: s, key: make([]byte, 32)}
	_, _ = rand.Read(f.key)
	s.EnableSampling()
	f.addContentTools()
	f.addNotifyingTools()
	f.addClientRequestTools()
	f.addInputRequiredTools()
	f.addResources()
	f.addPrompts()
}

func text(s string) mcp.Content { return mcp.NewTextContent(s) }

func contentResult(c ...mcp.Content) *mcp.CallToolResult { return &mcp.CallToolResult{Content: c} }

func (f *fixtures) tool(name, desc string, h server.ToolHandlerFunc, opts ...mcp.ToolOption) {
	f.s.AddTool(mcp.NewTool(name, append([]mcp.ToolOption{mcp.WithDescription(desc)}, opts...)...), h)
}

func (f *fixtures) addContentTools() {
	constant := func(r *mcp.CallToolResult) server.ToolHandlerFunc {
		return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return r, nil }
	}
	f.tool("test_simple_text", "Returns simple text", constant(contentResult(text("This is a simple text response for testing."))))
	f.tool("test_image_content", "Returns an image", constant(contentResult(mcp.NewImageContent(fixtureImage, "image/png"))))
	f.tool("test_audio_content", "Returns audio", constant(contentResult(mcp.NewAudioContent(fixtureAudio, "audio/wav"))))
	f.tool("test_embedded_resource", "Returns an embedded resource", constant(contentResult(mcp.NewEmbeddedResource(mcp.TextResourceContents{
		URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}))))
	f.tool("test_multiple_content_types", "Returns text, image and resource", constant(contentResult(
		text("Multiple content types test:"), mcp.NewImageContent(fixtureImage, "image/png"),
		mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json",
			Text: `{"test":"data","value":123}`}))))
	f.tool("test_error_handling", "Always fails", constant(mcp.NewToolResultError("This tool intentionally returns an error for testing")))
	f.s.AddTool(mcp.NewToolWithRawSchema("json_schema_2020_12_tool", "Tool with a JSON Schema 2020-12 input schema",
		json.RawMessage(fixtureJSONSchema)), constant(contentResult(text("ok"))))
	f.s.AddTool(mcp.NewToolWithRawSchema("test_custom_headers", "Tool whose parameters travel in Mcp-Param headers",
		json.RawMessage(fixtureHeaderSchema)), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return contentResult(text(fmt.Sprintf("region=%v priority=%v", req.GetArguments()["region"], req.GetArguments()["priority"]))), nil
	})
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// settle gives mcp-go's notification forwarder time to write the last
// notification before the response: without an event store it can take a
// notification off its queue and then drop it when the response wins the
// race (mark3labs/mcp-go#969, open). Quarry's own tools are exposed to the
// same loss of a final notice until that lands (docs/RELIABILITY.md).
func settle(ctx context.Context) { _ = sleep(ctx, 20*time.Millisecond) }

func (f *fixtures) addNotifyingTools() {
	logging := func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				if err := sleep(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			// Respects the level the client set (or, from 2026-07-28 on,
			// sends nothing to a request that declared none).
			_ = f.s.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelInfo, "conformance", m))
		}
		settle(ctx)
		return contentResult(text("Tool with logging executed successfully")), nil
	}
	f.tool("test_tool_with_logging", "Sends three log messages", logging)
	f.tool("test_logging_tool", "Sends log messages at the requested level", logging)
	f.tool("test_tool_with_progress", "Reports progress", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var token mcp.ProgressToken
		if req.Params.Meta != nil {
			token = req.Params.Meta.ProgressToken
		}
		for i, p := range []int{0, 50, 100} {
			if i > 0 {
				if err := sleep(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			if token != nil {
				_ = f.s.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress),
					map[string]any{"progressToken": token, "progress": p, "total": 100, "message": fmt.Sprintf("Completed step %d of 100", p)})
			}
		}
		settle(ctx)
		return contentResult(text(fmt.Sprint(token))), nil
	})
	// The list-changed triggers add a tool or prompt under a fresh name, so
	// mcp-go sends notifications/{tools,prompts}/list_changed.
	f.tool("test_trigger_tool_change", "Changes the tool list", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := f.changes.Add(1)
		f.s.AddTool(mcp.NewTool(fmt.Sprintf("test_dynamic_tool_%d", n), mcp.WithDescription("Added by test_trigger_tool_change")),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return contentResult(text("dynamic")), nil
			})
		return contentResult(text("tool list changed")), nil
	})
	f.tool("test_trigger_prompt_change", "Changes the prompt list", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := f.changes.Add(1)
		f.s.AddPrompt(mcp.NewPrompt(fmt.Sprintf("test_dynamic_prompt_%d", n), mcp.WithPromptDescription("Added by test_trigger_prompt_change")),
			func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return mcp.NewGetPromptResult("dynamic", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, text("dynamic"))}), nil
			})
		return contentResult(text("prompt list changed")), nil
	})
}

// elicitResult formats an elicitation answer as the suite expects.
func elicitResult(prefix string, r *mcp.ElicitationResult) *mcp.CallToolResult {
	content, _ := json.Marshal(r.Content)
	if r.Content == nil {
		content = []byte("{}")
	}
	return contentResult(text(fmt.Sprintf("%s: action=%s, content=%s", prefix, r.Action, content)))
}

// addClientRequestTools adds the tools that ask the client for sampling or
// elicitation by a server-initiated request (protocol 2025-11-25).
func (f *fixtures) addClientRequestTools() {
	f.tool("test_sampling", "Asks the client's LLM", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		//lint:ignore SA1019 the suite's 2025-11-25 sampling scenario asks for a server-initiated sampling request
		res, err := f.s.RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: mcp.CreateMessageParams{
			Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: text(req.GetString("prompt", ""))}},
			MaxTokens: 100,
		}})
		if err != nil {
			return mcp.NewToolResultError("sampling failed: " + err.Error()), nil
		}
		answer := "No response"
		if c, ok := res.Content.(mcp.TextContent); ok {
			answer = c.Text
		}
		return contentResult(text("LLM response: " + answer)), nil
	}, mcp.WithString("prompt", mcp.Required(), mcp.Description("The prompt to send to the LLM")))
	elicit := func(prefix, message string, schema map[string]any) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if message == "" {
				message = req.GetString("message", "")
			}
			res, err := f.s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
				Message: message, RequestedSchema: schema}})
			if err != nil {
				return mcp.NewToolResultError("elicitation failed: " + err.Error()), nil
			}
			return elicitResult(prefix, res), nil
		}
	}
	obj := func(props map[string]any, required ...string) map[string]any {
		m := map[string]any{"type": "object", "properties": props}
		if required != nil {
			m["required"] = required
		}
		return m
	}
	f.tool("test_elicitation", "Asks the user", elicit("User response", "", obj(map[string]any{
		"username": map[string]any{"type": "string", "description": "User's response"},
		"email":    map[string]any{"type": "string", "description": "User's email address"},
	}, "username", "email")), mcp.WithString("message", mcp.Required(), mcp.Description("The message to show the user")))
	f.tool("test_elicitation_sep1034_defaults", "Asks with defaults", elicit("Elicitation completed",
		"Please review and update the form fields with defaults", obj(map[string]any{
			"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
			"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
			"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
			"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
			"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
		})))
	titled := func(prefix string) []any {
		return []any{map[string]any{"const": "value1", "title": "First " + prefix}, map[string]any{"const": "value2", "title": "Second " + prefix},
			map[string]any{"const": "value3", "title": "Third " + prefix}}
	}
	opts := []string{"option1", "option2", "option3"}
	f.tool("test_elicitation_sep1330_enums", "Asks with enums", elicit("Elicitation completed",
		"Please select options from the enum fields", obj(map[string]any{
			"untitledSingle": map[string]any{"type": "string", "description": "Select one option", "enum": opts},
			"titledSingle":   map[string]any{"type": "string", "description": "Select one option with titles", "oneOf": titled("Option")},
			"legacyEnum": map[string]any{"type": "string", "description": "Select one option (legacy)", "enum": []string{"opt1", "opt2", "opt3"},
				"enumNames": []string{"Option One", "Option Two", "Option Three"}},
			"untitledMulti": map[string]any{"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
				"items": map[string]any{"type": "string", "enum": opts}},
			"titledMulti": map[string]any{"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3,
				"items": map[string]any{"anyOf": titled("Choice")}},
		})))
	// test_missing_capability needs the client's sampling capability.
	f.tool("test_missing_capability", "Needs the client's sampling capability", func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if caps := clientCapabilities(ctx); caps.Sampling == nil {
			return nil, mcp.MissingRequiredClientCapabilityError{Capability: "sampling"}
		}
		return contentResult(text("sampling declared")), nil
	})
}

// clientCapabilities are the capabilities the client declared: per request
// (2026-07-28) or at initialize (2025-11-25).
func clientCapabilities(ctx context.Context) mcp.ClientCapabilities {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		if info.ClientCapabilities != nil {
			return *info.ClientCapabilities
		}
		return mcp.ClientCapabilities{}
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return s.GetClientCapabilities()
	}
	return mcp.ClientCapabilities{}
}

// errTamperedState answers a request state that fails its integrity check.
var errTamperedState = errors.New("requestState failed its integrity check")

// sign returns state with an HMAC of it, so a client cannot forge one.
func (f *fixtures) sign(state string) string {
	m := hmac.New(sha256.New, f.key)
	m.Write([]byte(state))
	return state + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// verify returns the state signed by sign, or errTamperedState.
func (f *fixtures) verify(signed string) (string, error) {
	i := strings.LastIndexByte(signed, '.')
	if i < 0 || !hmac.Equal([]byte(f.sign(signed[:i])), []byte(signed)) {
		return "", errTamperedState
	}
	return signed[:i], nil
}

func elicitParams(message, field, typ string) mcp.ElicitationParams {
	return mcp.ElicitationParams{Message: message, RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{field: map[string]any{"type": typ}}, "required": []string{field}}}
}

func sampleParams(prompt string, maxTokens int) mcp.CreateMessageParams {
	return mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: text(prompt)}}, MaxTokens: maxTokens}
}

// elicited returns the string field of the elicitation answer under id.
func elicited(rs mcp.InputResponses, id, field string) (string, bool) {
	r := server.ElicitationResponse(rs, id)
	if r == nil {
		return "", false
	}
	if m, ok := r.Content.(map[string]any); ok {
		return fmt.Sprint(m[field]), true
	}
	return "", true
}

// addInputRequiredTools adds the multi round-trip fixtures (SEP-2322):
// handlers that return an input_required result and finish when the client
// retries with the answers. mcp-go fulfils the same result with
// server-initiated requests for 2025-11-25 clients.
func (f *fixtures) addInputRequiredTools() {
	f.tool("test_input_required_result_elicitation", "Asks the user's name", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if name, ok := elicited(req.Params.InputResponses, "user_name", "name"); ok {
			return contentResult(text("Hello, " + name + "!")), nil
		}
		return server.NewInputRequestBuilder("").Elicit("user_name", elicitParams("What is your name?", "name", "string")).ToolResult(), nil
	})
	f.tool("test_streaming_elicitation", "Asks the user's name", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if name, ok := elicited(req.Params.InputResponses, "user_name", "name"); ok {
			return contentResult(text("Hello, " + name + "!")), nil
		}
		return server.NewInputRequestBuilder("").Elicit("user_name", elicitParams("What is your name?", "name", "string")).ToolResult(), nil
	})
	f.tool("test_input_required_result_sampling", "Asks the client's LLM", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r := server.SamplingResponse(req.Params.InputResponses, "capital_question"); r != nil {
			answer := ""
			if c, ok := r.Content.(mcp.TextContent); ok {
				answer = c.Text
			}
			return contentResult(text("The model said: " + answer)), nil
		}
		return server.NewInputRequestBuilder("").Sample("capital_question", sampleParams("What is the capital of France?", 100)).ToolResult(), nil
	})
	f.tool("test_input_required_result_list_roots", "Asks for the client's roots", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r := server.RootsResponse(req.Params.InputResponses, "client_roots"); r != nil {
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			return contentResult(text(fmt.Sprintf("Client roots: %s", strings.Join(uris, ", ")))), nil
		}
		return server.NewInputRequestBuilder("").Roots("client_roots").ToolResult(), nil
	})
	f.tool("test_input_required_result_request_state", "Round-trips a request state", f.signedConfirm("request-state"))
	f.tool("test_input_required_result_tampered_state", "Rejects a tampered request state", f.signedConfirm("tamper-check"))
	f.tool("test_input_required_result_multiple_inputs", "Asks three things at once", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rs := req.Params.InputResponses
		if len(rs) > 0 {
			if _, err := f.verify(req.Params.RequestState); err != nil {
				return nil, err
			}
			name, _ := elicited(rs, "user_name", "name")
			if server.SamplingResponse(rs, "greeting") != nil && server.RootsResponse(rs, "client_roots") != nil {
				return contentResult(text("All inputs received for " + name)), nil
			}
		}
		return server.NewInputRequestBuilder(f.sign("multiple")).
			Elicit("user_name", elicitParams("What is your name?", "name", "string")).
			Sample("greeting", sampleParams("Generate a greeting", 50)).
			Roots("client_roots").ToolResult(), nil
	})
	f.tool("test_input_required_result_multi_round", "Asks in two rounds", func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rs := req.Params.InputResponses
		if len(rs) == 0 {
			return server.NewInputRequestBuilder(f.sign("round-1")).
				Elicit("step1", elicitParams("Step 1: What is your name?", "name", "string")).ToolResult(), nil
		}
		state, err := f.verify(req.Params.RequestState)
		if err != nil {
			return nil, err
		}
		if name, ok := elicited(rs, "step1", "name"); ok && state == "round-1" {
			return server.NewInputRequestBuilder(f.sign("round-2:"+name)).
				Elicit("step2", elicitParams("Step 2: What is your favorite color?", "color", "string")).ToolResult(), nil
		}
		if color, ok := elicited(rs, "step2", "color"); ok && strings.HasPrefix(state, "round-2:") {
			return contentResult(text(fmt.Sprintf("%s likes %s", strings.TrimPrefix(state, "round-2:"), color))), nil
		}
		return nil, errTamperedState
	})
	f.tool("test_input_required_result_capabilities", "Asks only what the client can answer", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(req.Params.InputResponses) > 0 {
			return contentResult(text(fmt.Sprintf("received %d answers", len(req.Params.InputResponses)))), nil
		}
		caps := clientCapabilities(ctx)
		b := server.NewInputRequestBuilder("")
		if caps.Elicitation != nil {
			b.Elicit("user_name", elicitParams("What is your name?", "name", "string"))
		}
		if caps.Sampling != nil {
			b.Sample("greeting", sampleParams("Generate a greeting", 50))
		}
		if caps.Roots != nil {
			b.Roots("client_roots")
		}
		if len(caps.Extensions) == 0 && caps.Elicitation == nil && caps.Sampling == nil && caps.Roots == nil {
			return contentResult(text("the client declared no capability to ask")), nil
		}
		return b.ToolResult(), nil
	})
}

// signedConfirm asks for a confirmation with a signed request state and
// checks the state on the retry ("state-ok").
func (f *fixtures) signedConfirm(state string) server.ToolHandlerFunc {
	return func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(req.Params.InputResponses) == 0 {
			return server.NewInputRequestBuilder(f.sign(state)).
				Elicit("confirm", elicitParams("Please confirm", "ok", "boolean")).ToolResult(), nil
		}
		if got, err := f.verify(req.Params.RequestState); err != nil || got != state {
			return nil, errTamperedState
		}
		return contentResult(text("Confirmed: state-ok")), nil
	}
}

func (f *fixtures) addResources() {
	static := func(c mcp.ResourceContents) server.ResourceHandlerFunc {
		return func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{c}, nil
		}
	}
	f.s.AddResource(mcp.NewResource("test://static-text", "static-text", mcp.WithResourceDescription("A static text resource"),
		mcp.WithMIMEType("text/plain")), static(mcp.TextResourceContents{URI: "test://static-text", MIMEType: "text/plain",
		Text: "This is the content of the static text resource."}))
	f.s.AddResource(mcp.NewResource("test://static-binary", "static-binary", mcp.WithResourceDescription("A static binary resource"),
		mcp.WithMIMEType("image/png")), static(mcp.BlobResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: fixtureImage}))
	f.s.AddResource(mcp.NewResource(WatchedResourceURI, "watched-resource", mcp.WithResourceDescription("A resource to subscribe to"),
		mcp.WithMIMEType("text/plain")), static(mcp.TextResourceContents{URI: WatchedResourceURI, MIMEType: "text/plain", Text: "Watched resource content"}))
	f.s.AddResourceTemplate(mcp.NewResourceTemplate("test://template/{id}/data", "template",
		mcp.WithTemplateDescription("A resource template with parameter substitution"), mcp.WithTemplateMIMEType("application/json")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
			body, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(body)}}, nil
		})
}

func (f *fixtures) addPrompts() {
	msg := func(c mcp.Content) mcp.PromptMessage { return mcp.NewPromptMessage(mcp.RoleUser, c) }
	f.s.AddPrompt(mcp.NewPrompt("test_simple_prompt", mcp.WithPromptDescription("A prompt without arguments")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("simple", []mcp.PromptMessage{msg(text("This is a simple prompt for testing."))}), nil
		})
	f.s.AddPrompt(mcp.NewPrompt("test_prompt_with_arguments", mcp.WithPromptDescription("A prompt with arguments"),
		mcp.WithArgument("arg1", mcp.ArgumentDescription("First test argument"), mcp.RequiredArgument()),
		mcp.WithArgument("arg2", mcp.ArgumentDescription("Second test argument"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return mcp.NewGetPromptResult("with arguments", []mcp.PromptMessage{
				msg(text(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])))}), nil
		})
	f.s.AddPrompt(mcp.NewPrompt("test_prompt_with_embedded_resource", mcp.WithPromptDescription("A prompt with an embedded resource"),
		mcp.WithArgument("resourceUri", mcp.ArgumentDescription("URI of the resource to embed"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("embedded resource", []mcp.PromptMessage{
				msg(mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain",
					Text: "Embedded resource content for testing."})),
				msg(text("Please process the embedded resource above.")),
			}), nil
		})
	f.s.AddPrompt(mcp.NewPrompt("test_prompt_with_image", mcp.WithPromptDescription("A prompt with an image")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("image", []mcp.PromptMessage{
				msg(mcp.NewImageContent(fixtureImage, "image/png")), msg(text("Please analyze the image above."))}), nil
		})
	f.s.AddPrompt(mcp.NewPrompt("test_input_required_result_prompt", mcp.WithPromptDescription("A prompt that asks the user first")),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if c, ok := elicited(req.Params.InputResponses, "user_context", "context"); ok {
				return mcp.NewGetPromptResult("with context", []mcp.PromptMessage{msg(text("Use this context: " + c))}), nil
			}
			return server.NewInputRequestBuilder("").Elicit("user_context",
				elicitParams("What context should the prompt use?", "context", "string")).PromptResult(), nil
		})
}
