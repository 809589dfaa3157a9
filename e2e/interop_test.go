package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestInteropMCPSDK runs interop/mcp-sdk/flow.mjs: the official MCP
// TypeScript SDK client goes through catalog -> schema -> estimate -> query
// -> page -> artifact against the built binary, over stdio and over
// Streamable HTTP (with a bearer token). It needs Node.js 20+ and npm; their
// absence is a failure, not a skip, because CI has both.
func TestInteropMCPSDK(t *testing.T) { runSDKScript(t, "flow.mjs") }

// sdkInstall runs npm ci in interop/mcp-sdk once for all the scripts.
var (
	sdkInstall    sync.Once
	sdkInstallErr error
)

// runSDKScript installs interop/mcp-sdk with npm ci and runs one of its
// scripts against the built binary; the script must print "interop: OK".
func runSDKScript(t *testing.T, script string) {
	t.Helper()
	node, nodeErr := exec.LookPath("node")
	npm, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		t.Fatalf("the interop test needs Node.js 20+ and npm on PATH (node: %v, npm: %v)", nodeErr, npmErr)
	}
	if out, err := exec.Command(node, "--version").Output(); err != nil || nodeMajor(string(out)) < 20 {
		t.Fatalf("the interop test needs Node.js 20+, found %q (%v)", strings.TrimSpace(string(out)), err)
	}
	dir, err := filepath.Abs(filepath.Join("..", "interop", "mcp-sdk"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// npm ci installs exactly package-lock.json, once per test binary.
	sdkInstall.Do(func() {
		install := exec.CommandContext(ctx, npm, "ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel", "error")
		install.Env = env()
		start := time.Now()
		out, err := install.CombinedOutput()
		if err != nil {
			sdkInstallErr = fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
		}
		t.Logf("npm ci: %v", time.Since(start).Round(time.Millisecond))
	})
	if sdkInstallErr != nil {
		t.Fatal(sdkInstallErr)
	}

	run := exec.CommandContext(ctx, node, filepath.Join(dir, script), "--bin", binary)
	run.Env = env()
	run.Dir = dir
	start := time.Now()
	out, err := run.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "interop: OK") {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	t.Logf("%s (%v):\n%s", script, time.Since(start).Round(time.Millisecond), out)
}

// nodeMajor parses "v20.11.1" into 20.
func nodeMajor(v string) int {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	major, _, _ := strings.Cut(v, ".")
	n, _ := strconv.Atoi(major)
	return n
}
