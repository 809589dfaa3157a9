package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// checkFlagServerMemory: with a server-wide query memory of one byte no
// query can start; after the short wait it fails with resource_exhausted
// naming the server scope (not the query's own limit).
func checkFlagServerMemory(t *testing.T) {
	c := startStdio(t, "--data", flagData(t, 100), "--server-memory", "1")
	start := time.Now()
	e := callErr(t, c, "query_data", map[string]any{"dataset": "big", "limit": 5})
	if e.Code != "resource_exhausted" || e.Diagnostics["scope"] != "server" || e.Hint == "" {
		t.Fatalf("query under a 1-byte server budget: %+v", e)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("the refusal took %v", el)
	}
}

// TestHTTPStreamCap: `serve --max-streams 1` lets one principal hold one
// listening stream (GET /mcp); a second gets 429 too_many_streams until the
// first is closed.
func TestHTTPStreamCap(t *testing.T) {
	p := launchHTTP(t, nil, "--max-streams", "1", "--rate-limit", "0")
	session := func() map[string]string {
		r := httpDo(t, http.MethodPost, p.base+"/mcp",
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`, nil)
		if r.status != 200 {
			t.Fatalf("initialize: %d %s", r.status, r.body)
		}
		return map[string]string{"Mcp-Session-Id": r.header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
	}
	open := func() *http.Response {
		req, _ := http.NewRequest(http.MethodGet, p.base+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		for k, v := range session() {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := open()
	defer first.Body.Close()
	if first.StatusCode != 200 {
		t.Fatalf("first stream: %d", first.StatusCode)
	}
	second := open()
	b, _ := io.ReadAll(second.Body)
	second.Body.Close()
	if second.StatusCode != 429 || !strings.Contains(string(b), "too_many_streams") {
		t.Fatalf("second stream: %d %s", second.StatusCode, b)
	}
	first.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := open()
		r.Body.Close()
		if r.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after closing the first stream: %d", r.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHTTPSessionCap: `serve --max-sessions 1` lets one principal hold one
// live session; a second initialize gets 429 too_many_sessions until the
// first session is deleted.
func TestHTTPSessionCap(t *testing.T) {
	p := launchHTTP(t, nil, "--max-sessions", "1", "--rate-limit", "0")
	const initMsg = `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`
	first := httpDo(t, http.MethodPost, p.base+"/mcp", initMsg, nil)
	if first.status != 200 || first.header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("first initialize: %d %s", first.status, first.body)
	}
	second := httpDo(t, http.MethodPost, p.base+"/mcp", initMsg, nil)
	if _, _, data := second.rpcError(); second.status != 429 || data["code"] != "too_many_sessions" {
		t.Fatalf("second initialize: %d %s", second.status, second.body)
	}
	del := httpDo(t, http.MethodDelete, p.base+"/mcp", "", map[string]string{
		"Mcp-Session-Id": first.header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"})
	if third := httpDo(t, http.MethodPost, p.base+"/mcp", initMsg, nil); third.status != 200 {
		t.Fatalf("initialize after deleting the session: %d %s (delete: %d)", third.status, third.body, del.status)
	}
}
