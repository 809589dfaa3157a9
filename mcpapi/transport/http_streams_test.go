package transport

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/testutil/syncbuf"
)

// A client that sends a call and then reads nothing cannot hold the
// server: the write of the (big) answer fails on the write timeout, the
// request ends and a line is logged, while the client keeps its connection
// open.
func TestHandlerSlowClient(t *testing.T) {
	s := server.NewMCPServer("t", "1", server.WithToolCapabilities(false))
	big := strings.Repeat("x", 8<<20)
	s.AddTool(mcp.NewTool("big"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(big), nil
	})
	var logs syncbuf.Buffer
	h, err := NewHTTPHandler(s, HTTPOptions{RateLimit: -1, WriteTimeout: 300 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		ended <- struct{}{}
	}))
	defer ts.Close()
	defer h.Close(context.Background())

	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	body, hdr := callTool("big")
	var req strings.Builder
	fmt.Fprintf(&req, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n",
		ts.Listener.Addr(), len(body))
	for k, v := range hdr {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n" + body)
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	// Read nothing.
	select {
	case <-ended:
	case <-time.After(15 * time.Second):
		t.Fatal("the request to a client that reads nothing did not end")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "client stopped reading") {
		if time.Now().After(deadline) {
			t.Fatalf("no log line about the stalled client:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// openStream opens a listening stream (GET /mcp) of a legacy session and
// returns the response (body unread) or the status and body of a refusal.
func openStream(t *testing.T, url string, session map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range session {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// Open listening streams are capped per principal: one more gets 429 with
// too_many_streams; closing one lets a new one in.
func TestHandlerStreamCap(t *testing.T) {
	ts, _ := testServer(t, HTTPOptions{MaxStreams: 2, RateLimit: -1})
	var open []*http.Response
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	var session map[string]string
	newSession := func() map[string]string {
		init, _ := rpc(t, ts.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
		return map[string]string{"Mcp-Session-Id": init.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
	}
	for i := range 2 {
		session = newSession()
		r := openStream(t, ts.URL+"/mcp", session)
		if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
			b, _ := io.ReadAll(r.Body)
			t.Fatalf("stream %d: %d %s", i, r.StatusCode, b)
		}
		open = append(open, r)
	}
	r := openStream(t, ts.URL+"/mcp", newSession())
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 429 || !strings.Contains(string(b), codeTooManyStreams) || r.Header.Get("Retry-After") == "" {
		t.Fatalf("third stream: %d %s", r.StatusCode, b)
	}
	// POST calls are not affected.
	if resp, out := rpc(t, ts.URL+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, session); resp.StatusCode != 200 {
		t.Fatalf("a call while the streams are open: %d %s", resp.StatusCode, out)
	}
	open[0].Body.Close()
	open = open[1:]
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := openStream(t, ts.URL+"/mcp", newSession())
		if r.StatusCode == 200 {
			open = append(open, r)
			break
		}
		r.Body.Close()
		if time.Now().After(deadline) {
			t.Fatalf("after closing a stream: %d", r.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Live sessions are capped per principal: one more initialize gets 429
// with too_many_sessions; deleting a session lets a new one in.
func TestHandlerSessionCap(t *testing.T) {
	ts, _ := testServer(t, HTTPOptions{MaxSessions: 2, RateLimit: -1})
	const initMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	var ids []string
	for i := range 2 {
		resp, out := rpc(t, ts.URL+"/mcp", initMsg, nil)
		if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("session %d: %d %s", i, resp.StatusCode, out)
		}
		ids = append(ids, resp.Header.Get("Mcp-Session-Id"))
	}
	resp, out := rpc(t, ts.URL+"/mcp", initMsg, nil)
	if resp.StatusCode != 429 || !strings.Contains(out, codeTooManySessions) || !strings.Contains(out, `"id":1`) {
		t.Fatalf("third session: %d %s", resp.StatusCode, out)
	}
	// Stateless (2026-07-28) calls need no session and are not affected.
	body, hdr := callTool("whoami")
	if resp, out := rpc(t, ts.URL+"/mcp", body, hdr); resp.StatusCode != 200 {
		t.Fatalf("stateless call: %d %s", resp.StatusCode, out)
	}
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", ids[0])
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	del, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	del.Body.Close()
	if resp, out := rpc(t, ts.URL+"/mcp", initMsg, nil); resp.StatusCode != 200 {
		t.Fatalf("after deleting a session: %d %s (delete: %d)", resp.StatusCode, out, del.StatusCode)
	}
}
