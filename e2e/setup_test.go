package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The set-up the tests share to start a server and connect a client.

// startClient starts an mcp-go client over tr built with opts (closed at
// cleanup) and initializes it asking for protocol version ("": the
// client's own choice), checking that it talks to quarry.
func startClient(t *testing.T, tr transport.Interface, version string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	c := client.NewClient(tr, opts...)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	initializeVersion(t, c, version)
	return c
}

// startStdioWith launches bin's `serve` over stdio (log level warn, then
// extra) with environment environ and connects (startClient).
func startStdioWith(t *testing.T, bin string, environ []string, extra ...string) *client.Client {
	t.Helper()
	tr := transport.NewStdioWithOptions(bin, environ, append([]string{"serve", "--log-level", "warn"}, extra...))
	return startClient(t, tr, mcp.LATEST_PROTOCOL_VERSION)
}

// httpClient connects a client built with opts to the Streamable HTTP
// endpoint of the server at base (a 60 s request timeout, then topts) and
// initializes it asking for version (startClient).
func httpClient(t *testing.T, base, version string, topts []transport.StreamableHTTPCOption, opts ...client.ClientOption) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(base+"/mcp", append([]transport.StreamableHTTPCOption{transport.WithHTTPTimeout(httpCallTimeout)}, topts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return startClient(t, tr, version, opts...)
}

// replaceFile writes body to root/name atomically (a new file renamed
// over the old one), as a tool that rewrites a data file would.
func replaceFile(t *testing.T, root, name, body string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.WriteFile(p+".new", []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
}

// kill ends the server with SIGKILL and waits until it has exited.
func (p *httpProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

// killMidWrite starts a server with args, calls tool with args call (a
// call never answered) and kills the server once a temp entry of the
// artifact directory arts holds bytes (failing when none does within d);
// it fails unless a temp entry is left behind and no artifact is visible.
// what names the write in the failures.
func killMidWrite(t *testing.T, args []string, arts, tool string, call map[string]any, d time.Duration, what string) {
	t.Helper()
	p := launchHTTP(t, nil, args...)
	c := connectHTTP(t, p.base, nil, false)
	go func() { // never answered: the server dies under it
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool, call
		_, _ = c.CallTool(context.Background(), req)
	}()
	deadline := time.Now().Add(d)
	for {
		if temps, _, _ := artifactDirState(t, arts); len(temps) > 0 && dirBytes(filepath.Join(arts, temps[0])) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s started within %v", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.kill(t)
	temps, files, _ := artifactDirState(t, arts)
	if len(temps) == 0 {
		t.Fatalf("the %s finished before the kill (files %v): the test checked nothing; give it more rows", what, files)
	}
	if len(files) != 0 {
		t.Fatalf("a partial artifact is visible after the kill: %v", files)
	}
}
