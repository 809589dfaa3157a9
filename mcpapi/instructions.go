package mcpapi

import (
	"context"
	"regexp"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The server's instructions (initialize and server/discover): how to use
// Quarry well. They are said from the tools the server offers at that
// moment: a sentence or a flow step that names a tool (a word that is the
// name of one of Tools) is left out while that tool is not offered (export
// without serve --export-dir, advanced_query with --sql=false, anything
// --tools leaves out), so the model is never pointed at a tool it cannot
// call.

// instructionFlow is the typical flow: steps joined by " -> ", each step's
// offered alternatives joined by " or ".
var instructionFlow = [][]string{
	{"get_catalog"},
	{"get_schema (exact column names and value formats)"},
	{"distinct_values (valid filter values)"},
	{"estimate_query (size, plan)"},
	{"query_data", "aggregate"},
}

// instructionSentences are the sentences, in order; "{flow}" stands for
// the typical flow.
var instructionSentences = []string{
	"Quarry answers questions about tabular data files (CSV, HDF5) under one data root.",
	"{flow}",
	"Prompts schema_cards_overview, query_examples and size_management_guidelines give a compact start.",
	"Prefer aggregates (group_by + aggs), filters and limits to pulling raw rows.",
	"Results larger than the inline caps come back as a paged result handle or, with output_format=parquet|csv, as a file;" +
		" total_rows is always exact and truncation is always flagged.",
	"query_next_page reads a handle's next page.",
	"read_result pages the rows of a result file.",
	"export saves a result to the user's export directory.",
	"Very large queries ask for confirmation first (status needs_confirmation: ask the user, then re-call with the chosen option's args).",
	"When the user names values in their own words (programs, categories), call pattern_filter and use its confirmed filter_token" +
		" instead of guessing contains/regex filters (prompt pattern_disambiguation_guidelines).",
	"Errors are JSON {error, code, hint}: follow the hint.",
}

var instructionWord = regexp.MustCompile(`[a-z_0-9]+`)

// instructions are the instructions for the offered tools (names: every
// tool the server knows, offered or not).
func instructions(names, offered map[string]bool) string {
	says := func(text string) bool {
		for _, w := range instructionWord.FindAllString(text, -1) {
			if names[w] && !offered[w] {
				return false
			}
		}
		return true
	}
	var steps []string
	for _, alts := range instructionFlow {
		var kept []string
		for _, a := range alts {
			if says(a) {
				kept = append(kept, a)
			}
		}
		if len(kept) > 0 {
			steps = append(steps, strings.Join(kept, " or "))
		}
	}
	var out []string
	for _, s := range instructionSentences {
		switch {
		case s == "{flow}" && len(steps) > 0:
			out = append(out, "Typical flow: "+strings.Join(steps, " -> ")+".")
		case s != "{flow}" && says(s):
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n")
}

// offeredInstructions sets the instructions of every initialize and
// server/discover answer of s from the tools s offers then (names: every
// tool it knows).
func offeredInstructions(hooks *server.Hooks, s **server.MCPServer, names map[string]bool) {
	now := func() string {
		offered := map[string]bool{}
		for name := range (*s).ListTools() {
			offered[name] = true
		}
		return instructions(names, offered)
	}
	hooks.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		res.Instructions = now()
	})
	hooks.AddAfterDiscover(func(_ context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		res.Instructions = now()
	})
}
