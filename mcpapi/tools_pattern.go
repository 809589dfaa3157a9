package mcpapi

import (
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/service"
)

// NewPatternFilterTool builds pattern_filter.
func NewPatternFilterTool(svc *service.Service) (mcp.Tool, server.ToolHandlerFunc) {
	return newTool(toolSpec[service.PatternFilterRequest, *service.PatternFilterResponse]{
		name:  "pattern_filter",
		title: "Turn the user's words into a confirmed filter",
		description: "Match the user's words (patterns) against the distinct values of a text field, language-aware (case, Unicode forms, " +
			"Armenian ligatures, punctuation and look-alike letters; word boundaries by Unicode rules), in mode strict (whole words), balanced " +
			"(default: words starting with the pattern's stem; a pattern only inside a longer word, e.g. գիտություն in մասնագիտություն, is a " +
			"doubtful candidate) or permissive (substring). Use it before filtering free-text labels on what the user said. Answers either " +
			"status confirmed with a filter_token, or needs_confirmation with candidates {include, exclude} (value, count, why), a question to " +
			"ask the user and next_call: call it with confirmed.include set to the values the user chose. Pass the token as filters: " +
			"[{\"filter_token\": ...}] to query_data, aggregate, estimate_query or distinct_values. datasets or tag search the same field in " +
			"several datasets (e.g. one per year); the token applies to each.",
		call: svc.PatternFilter,
	})
}
