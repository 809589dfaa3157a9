package mcpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/service"
)

// Prompt names.
const (
	PromptSchemaCards = "schema_cards_overview"
	PromptExamples    = "query_examples"
	PromptSize        = "size_management_guidelines"
	PromptPatterns    = "pattern_disambiguation_guidelines"
)

// addPrompts registers the startup-context prompts. Their text is generated
// from the live catalog and configuration at prompts/get time.
func addPrompts(s *server.MCPServer, svc *service.Service) {
	s.AddPrompt(mcp.NewPrompt(PromptSchemaCards,
		mcp.WithPromptTitle("Datasets and column roles"),
		mcp.WithPromptDescription("Compact overview of the datasets: size, description, tags and every column with type, role and unit "+
			"from the schema cards. Without arguments it covers the whole catalog (up to 40 datasets)."),
		mcp.WithArgument("dataset", mcp.ArgumentDescription("Only this dataset (id from get_catalog; completion available)."))),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			text, err := svc.SchemaCardsOverview(ctx, req.Params.Arguments["dataset"])
			if err != nil {
				return nil, promptErr(err)
			}
			return promptResult("Datasets and column roles", text), nil
		})
	s.AddPrompt(mcp.NewPrompt(PromptExamples,
		mcp.WithPromptTitle("Query examples"),
		mcp.WithPromptDescription("Small, correct tool calls for this catalog, with real column names and values: finding filter "+
			"values, a filter, a group-by, a size estimate, a page walk, a Parquet export, and chart_examples (plot calls)."),
		mcp.WithArgument("dataset", mcp.ArgumentDescription("Build the examples on this dataset (default: one picked from the catalog).")),
		mcp.WithArgument("column", mcp.ArgumentDescription("Filter and group by this column (needs dataset; completion available)."))),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			args := req.Params.Arguments
			if args["column"] != "" && args["dataset"] == "" {
				return nil, fmt.Errorf("invalid_argument: column needs dataset")
			}
			exs, err := svc.QueryExamples(ctx, args["dataset"], args["column"])
			if err != nil {
				return nil, promptErr(err)
			}
			return promptResult("Query examples", RenderExamples(exs)), nil
		})
	s.AddPrompt(mcp.NewPrompt(PromptSize,
		mcp.WithPromptTitle("Size management guidelines"),
		mcp.WithPromptDescription("When to estimate, page, aggregate or export to a file, and the caps and thresholds in force on this server.")),
		func(ctx context.Context, _ mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return promptResult("Size management guidelines", svc.SizeGuidelines()), nil
		})
	s.AddPrompt(mcp.NewPrompt(PromptPatterns,
		mcp.WithPromptTitle("Pattern disambiguation guidelines"),
		mcp.WithPromptDescription("How to turn the user's words into a confirmed filter with pattern_filter: the modes, asking before "+
			"including or excluding ambiguous values, with an Armenian and an English example.")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return promptResult("Pattern disambiguation guidelines", service.PatternGuidelines()), nil
		})
}

// RenderExamples writes examples as the query_examples prompt text: one
// numbered item per call, its arguments as compact JSON.
func RenderExamples(exs []service.Example) string {
	var b strings.Builder
	b.WriteString("Quarry query examples for this catalog. Each is a real tool call; adapt names and values.\n")
	section := ""
	for i, ex := range exs {
		if ex.Section != section {
			section = ex.Section
			fmt.Fprintf(&b, "\n## %s\n", section)
		}
		args, _ := json.Marshal(ex.Args)
		fmt.Fprintf(&b, "\n%d. %s\n   %s %s\n", i+1, ex.Title, ex.Tool, args)
		if ex.Then != "" {
			fmt.Fprintf(&b, "   then: %s\n", ex.Then)
		}
	}
	return b.String()
}

func promptResult(desc, text string) *mcp.GetPromptResult {
	return mcp.NewGetPromptResult(desc, []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text))})
}

// promptErr turns a service error into a prompts/get error message with
// its stable code and hint (mcp-go reports it as a JSON-RPC error).
func promptErr(err error) error {
	e := qerr.As(err)
	msg := e.Code + ": " + e.Message
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return fmt.Errorf("%s", msg)
}
