package console

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHandler: the home page, assets and configuration carry the CSP and
// security headers; other methods and unknown assets are refused.
func TestHandler(t *testing.T) {
	h, err := New(Options{Version: "v-test", Clients: []ClientConfig{{Client: "C", Where: "w", Text: "t"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		code         int
		contains     string
	}{
		{"GET", "/", 200, `src="/console/app.js"`},
		{"GET", "/console/app.js", 200, "textContent"},
		{"GET", "/console/app.css", 200, "prefers-color-scheme"},
		{"GET", "/console/config.json", 200, `"version":"v-test"`},
		{"GET", "/favicon.ico", 301, ""},
		{"GET", "/console/nope.js", 404, ""},
		{"POST", "/", 405, ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != tc.code || !strings.Contains(string(body), tc.contains) {
			t.Errorf("%s %s: %d %.80q", tc.method, tc.path, rec.Code, body)
		}
		if got := rec.Header().Get("Content-Security-Policy"); got != CSP {
			t.Errorf("%s %s: CSP %q", tc.method, tc.path, got)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Header().Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s %s: headers %v", tc.method, tc.path, rec.Header())
		}
	}
	if strings.Contains(CSP, "unsafe-inline") || strings.Contains(CSP, "unsafe-eval") {
		t.Errorf("CSP allows inline code: %s", CSP)
	}
}

// TestInstructionsEscape: client configurations and the Host header are
// escaped in the instruction page.
func TestInstructionsEscape(t *testing.T) {
	h, err := New(Options{Clients: []ClientConfig{{Client: "<script>x</script>", Text: `"><img src=x onerror=alert(1)>`}}})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/mcp", nil)
	req.Host = `127.0.0.1:1"><script>`
	rec := httptest.NewRecorder()
	h.Instructions(rec, req)
	body := rec.Body.String()
	if strings.Contains(body, "<script>") || strings.Contains(body, "<img") || !strings.Contains(body, "&lt;script&gt;x&lt;/script&gt;") {
		t.Errorf("instruction page not escaped:\n%s", body)
	}
}

// TestWantsHTML: only a browser's plain GET of the endpoint gets HTML.
func TestWantsHTML(t *testing.T) {
	for _, tc := range []struct {
		method, accept, session string
		want                    bool
	}{
		{"GET", "text/html,application/xhtml+xml", "", true},
		{"GET", "text/event-stream", "", false},
		{"GET", "text/html, text/event-stream", "", false},
		{"GET", "text/html", "sess", false},
		{"POST", "text/html", "", false},
		{"GET", "application/json", "", false},
	} {
		r := httptest.NewRequest(tc.method, "/mcp", nil)
		r.Header.Set("Accept", tc.accept)
		if tc.session != "" {
			r.Header.Set("Mcp-Session-Id", tc.session)
		}
		if got := WantsHTML(r); got != tc.want {
			t.Errorf("%s %q session=%q: %v", tc.method, tc.accept, tc.session, got)
		}
	}
	for p, want := range map[string]bool{"/": true, "/console/app.js": true, "/favicon.ico": true, "/mcp": false, "/metrics": false, "/healthz": false} {
		if Owns(p) != want {
			t.Errorf("Owns(%q) = %v", p, !want)
		}
	}
}
