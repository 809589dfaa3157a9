package e2e

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestServeToolsSelection: --tools chooses the tools a real server offers;
// an unknown name stops serve with a did-you-mean and the tool list.
func TestServeToolsSelection(t *testing.T) {
	c := startStdio(t, "--tools", "all,-advanced_query,-read_dataset_slice")
	names := listToolNames(t, c)
	if slices.Contains(names, "advanced_query") || slices.Contains(names, "read_dataset_slice") || !slices.Contains(names, "query_data") || len(names) < 5 {
		t.Fatalf("all minus two: %v", names)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "advanced_query", map[string]any{"sql": "SELECT 1"}
	if res, err := c.CallTool(t.Context(), req); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("a removed tool answered: %v %v", res, err)
	}
	only := startStdio(t, "--tools", "get_catalog,get_schema")
	if got := listToolNames(t, only); strings.Join(got, ",") != "get_catalog,get_schema" {
		t.Fatalf("two tools: %v", got)
	}
	cmd := exec.Command(binary, "serve", "--tools", "all,-expor_data,-query_dat")
	cmd.Env = env()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), `unknown tool "expor_data"`) ||
		!strings.Contains(string(out), "the tools are: all, advanced_query,") {
		t.Fatalf("unknown tool: %v\n%s", err, out)
	}
	cmd = exec.Command(binary, "serve", "--tools", "query_dat")
	cmd.Env = env()
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "did you mean query_data") {
		t.Fatalf("no did-you-mean: %s", out)
	}
}
