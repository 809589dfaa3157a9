package mcpapi

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/service"
)

// completer answers completion/complete: dataset ids for every "dataset"
// argument (resource templates and prompts) and column names for a
// "column" argument once the dataset is known (from the context arguments).
type completer struct {
	svc *service.Service
}

// CompletePromptArgument implements server.PromptCompletionProvider.
func (c *completer) CompletePromptArgument(_ context.Context, _ string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	return c.complete(arg, cc), nil
}

// CompleteResourceArgument implements server.ResourceCompletionProvider.
func (c *completer) CompleteResourceArgument(_ context.Context, _ string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	return c.complete(arg, cc), nil
}

func (c *completer) complete(arg mcp.CompleteArgument, cc mcp.CompleteContext) *mcp.Completion {
	var vals []string
	var total int
	switch arg.Name {
	case "dataset":
		vals, total = c.svc.CompleteDatasets(arg.Value)
	case "column":
		if ds := cc.Arguments["dataset"]; ds != "" {
			vals, total = c.svc.CompleteColumns(ds, arg.Value)
		}
	}
	if vals == nil {
		vals = []string{}
	}
	return &mcp.Completion{Values: vals, Total: total, HasMore: total > len(vals)}
}
