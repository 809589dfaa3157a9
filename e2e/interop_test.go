package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestInteropMCPSDK runs interop/mcp-sdk/flow.mjs: the official MCP
// TypeScript SDK client goes through catalog -> schema -> estimate -> query
// -> page -> artifact against the built binary, over stdio and over
// Streamable HTTP (with a bearer token). It needs Node.js 20+ and npm; their
// absence is a failure, not a skip, because CI has both. The SDK's pinned
// lockfile is installed once per test binary (nodePackage), shared with the
// other mcp-sdk scripts.
func TestInteropMCPSDK(t *testing.T) {
	node, dir := nodePackage(t, "mcp-sdk", "node_modules/@modelcontextprotocol/sdk/package.json")
	if out, err := exec.Command(node, "--version").Output(); err != nil || nodeMajor(string(out)) < 20 {
		t.Fatalf("the interop test needs Node.js 20+, found %q (%v)", strings.TrimSpace(string(out)), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	flow := exec.CommandContext(ctx, node, filepath.Join(dir, "flow.mjs"), "--bin", binary)
	flow.Env = env()
	flow.Dir = dir
	start := time.Now()
	out, err := flow.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "interop: OK") {
		t.Fatalf("flow.mjs: %v\n%s", err, out)
	}
	t.Logf("flow.mjs (%v):\n%s", time.Since(start).Round(time.Millisecond), out)
}

// nodeMajor parses "v20.11.1" into 20.
func nodeMajor(v string) int {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	major, _, _ := strings.Cut(v, ".")
	n, _ := strconv.Atoi(major)
	return n
}
