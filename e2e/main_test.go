package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// binary is the quarry binary built once for all tests.
var binary string

// cacheHome isolates demo-data extraction and artifacts from the user's cache.
var cacheHome string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "quarry-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "quarry")
	cacheHome = filepath.Join(dir, "cache")
	build := exec.Command("go", "build", "-o", binary, "../cmd/quarry")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building quarry:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func env() []string {
	return append(os.Environ(), "XDG_CACHE_HOME="+cacheHome)
}

func initialize(t *testing.T, c *client.Client) {
	t.Helper()
	initializeVersion(t, c, mcp.LATEST_PROTOCOL_VERSION)
}

// initializeVersion initializes c asking for protocol version ("": the
// client's own choice) and checks that it talks to quarry.
func initializeVersion(t *testing.T, c *client.Client, version string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcp.Implementation{Name: "quarry-e2e", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.ServerInfo.Name != "quarry" {
		t.Fatalf("server name %q", res.ServerInfo.Name)
	}
}

// startStdio launches `quarry serve` (stdio, demo data) and connects.
func startStdio(t *testing.T, extra ...string) *client.Client {
	t.Helper()
	return startStdioWith(t, binary, env(), extra...)
}

// startHTTP launches `quarry serve --transport http` on a free loopback
// port (launchHTTP) and connects; it returns the client and the base URL.
func startHTTP(t *testing.T, extra ...string) (*client.Client, string) {
	t.Helper()
	p := launchHTTP(t, nil, extra...)
	return httpClient(t, p.base, mcp.LATEST_PROTOCOL_VERSION, nil), p.base
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitHealthy(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := httpGet(url); err == nil && resp == 200 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never became healthy", url)
}

// call invokes a tool and decodes its structured result into out. It fails
// the test on a protocol error or an isError result.
func call(t *testing.T, c *client.Client, tool string, args any, out any) *mcp.CallToolResult {
	t.Helper()
	res := callRaw(t, c, tool, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", tool, args, text(res))
	}
	checkOutputSchema(t, c, tool, res)
	if out != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("decoding %s result: %v\n%s", tool, err, b)
		}
	}
	return res
}

func callRaw(t *testing.T, c *client.Client, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// toolErr is the structured error a tool returns with isError.
type toolErr struct {
	Error       string         `json:"error"`
	Code        string         `json:"code"`
	Hint        string         `json:"hint"`
	Diagnostics map[string]any `json:"diagnostics"`
}

// callErr invokes a tool that must fail and returns its structured error.
func callErr(t *testing.T, c *client.Client, tool string, args any) toolErr {
	t.Helper()
	res := callRaw(t, c, tool, args)
	if !res.IsError {
		t.Fatalf("%s(%v): expected an error, got %s", tool, args, text(res))
	}
	var e toolErr
	if err := json.Unmarshal([]byte(text(res)), &e); err != nil {
		t.Fatalf("error is not structured JSON: %v: %s", err, text(res))
	}
	if e.Code == "" || e.Error == "" {
		t.Fatalf("error lacks code or message: %s", text(res))
	}
	return e
}
