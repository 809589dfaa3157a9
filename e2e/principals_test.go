package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestHTTPPrincipalIsolation: a session or a result handle of one principal
// is never usable by another, whichever protocol revision either speaks.
//   - 2025-11-25 sessions: bob naming alice's Mcp-Session-Id (POST, GET
//     stream, DELETE) gets 404 session_not_found, as does a well-formed id
//     the server never issued; alice's session keeps working until she
//     DELETEs it, then it is 404 for her too.
//   - handles: a handle alice got over 2025-11-25 is handle_expired for bob
//     over 2026-07-28 (stateless) and over 2025-11-25, while alice pages it.
//   - --conformance-fixtures is off by default: no fixture tool is listed.
func TestHTTPPrincipalIsolation(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("alice:"+tokAlice+"\nbob:"+tokBob+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := launchHTTP(t, nil, "--auth-token-file", file)
	url := p.base + "/mcp"
	authA := map[string]string{"Authorization": "Bearer " + tokAlice}
	authB := map[string]string{"Authorization": "Bearer " + tokBob}

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`
	r := httpDo(t, http.MethodPost, url, init, authA)
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != 200 || sid == "" {
		t.Fatalf("alice initialize: %d %q %s", r.status, sid, r.body)
	}
	legacyHdr := func(auth map[string]string, sid string) map[string]string {
		return withHeaders(auth, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	}
	if r := httpDo(t, http.MethodPost, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, legacyHdr(authA, sid)); r.status != 202 {
		t.Fatalf("alice initialized: %d %s", r.status, r.body)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	notFound := func(what string, r rawResp) {
		t.Helper()
		if _, _, data := r.rpcError(); r.status != 404 || data["code"] != "session_not_found" {
			t.Fatalf("%s: %d %s, want 404 session_not_found", what, r.status, r.body)
		}
	}
	if r := httpDo(t, http.MethodPost, url, list, legacyHdr(authA, sid)); r.status != 200 || !strings.Contains(r.body, "query_data") {
		t.Fatalf("alice in her session: %d %s", r.status, r.body)
	}
	if strings.Contains(httpDo(t, http.MethodPost, url, list, legacyHdr(authA, sid)).body, "test_simple_text") {
		t.Fatal("conformance fixtures listed without --conformance-fixtures")
	}
	notFound("bob POST in alice's session", httpDo(t, http.MethodPost, url, list, legacyHdr(authB, sid)))
	notFound("bob GET alice's stream", httpDo(t, http.MethodGet, url, "", legacyHdr(authB, sid)))
	notFound("bob DELETE alice's session", httpDo(t, http.MethodDelete, url, "", legacyHdr(authB, sid)))
	notFound("a session id never issued", httpDo(t, http.MethodPost, url, list,
		legacyHdr(authA, "mcp-session-00000000-0000-4000-8000-000000000000")))

	// Handles across principals and revisions.
	var first queryResult
	alice := connectHTTP(t, p.base, authA, true)
	call(t, alice, "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"id"}}, &first)
	if first.Method != "handle" {
		t.Fatalf("expected a handle: %+v", first)
	}
	args := `{"result_handle":"` + first.ResultHandle + `","page_token":"` + first.PageInfo.PageToken + `"}`
	body, hdr := statelessCall("query_next_page", args)
	r = httpDo(t, http.MethodPost, url, body, withHeaders(hdr, "Authorization", "Bearer "+tokBob))
	if r.status != 200 || !strings.Contains(r.body, `\"code\":\"handle_expired\"`) || strings.Contains(r.body, `\"rows\"`) {
		t.Fatalf("bob (2026-07-28) paging alice's handle: %d %s", r.status, r.body)
	}
	bob := connectHTTP(t, p.base, authB, true)
	next := map[string]any{"result_handle": first.ResultHandle, "page_token": first.PageInfo.PageToken}
	if e := callErr(t, bob, "query_next_page", next); e.Code != "handle_expired" {
		t.Fatalf("bob (2025-11-25) paging alice's handle: %+v", e)
	}
	r = httpDo(t, http.MethodPost, url, body, withHeaders(hdr, "Authorization", "Bearer "+tokAlice))
	if r.status != 200 || strings.Contains(r.body, "isError") {
		t.Fatalf("alice (2026-07-28) paging her handle: %d %s", r.status, r.body)
	}
	var page queryResult
	call(t, alice, "query_next_page", next, &page)
	if page.PageInfo == nil || page.PageInfo.Offset != first.RowCount {
		t.Fatalf("alice's page: %+v", page.PageInfo)
	}
	if _, err := alice.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
		t.Fatalf("alice's client session: %v", err)
	}

	// Ending a session ends it for its owner too.
	if r := httpDo(t, http.MethodDelete, url, "", legacyHdr(authA, sid)); r.status != 200 {
		t.Fatalf("alice DELETE: %d %s", r.status, r.body)
	}
	notFound("alice after DELETE", httpDo(t, http.MethodPost, url, list, legacyHdr(authA, sid)))
}
