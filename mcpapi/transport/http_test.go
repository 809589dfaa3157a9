package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/obs"
)

const (
	tokAlice = "alice-0123456789abcdef"
	tokBob   = "bob-0123456789abcdef00"
	tokBare  = "bare-0123456789abcdef0"
)

func TestLoadTokens(t *testing.T) {
	file := t.TempDir() + "/tokens"
	writeFile(t, file, "# team tokens\n\nalice:"+tokAlice+"\n  bob:"+tokBob+"  \n"+tokBare+"\n")
	toks, err := LoadTokens(TokenSources{Flags: []string{tokBare}, Env: " , " + tokAlice + ",x-0123456789abcdef00 ", File: file})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tk := range toks {
		got[tk.Secret] = tk.Principal
	}
	want := map[string]string{
		tokBare:                anonymousPrincipal(tokBare),  // flag first; the file's copy is deduplicated
		tokAlice:               anonymousPrincipal(tokAlice), // env first
		"x-0123456789abcdef00": anonymousPrincipal("x-0123456789abcdef00"),
		tokBob:                 "bob",
	}
	if len(toks) != len(want) {
		t.Fatalf("tokens %v, want %d", toks, len(want))
	}
	for s, p := range want {
		if got[s] != p {
			t.Errorf("principal of %.6s...: %q, want %q", s, got[s], p)
		}
	}
	if !strings.HasPrefix(anonymousPrincipal(tokBare), "token-") || len(anonymousPrincipal(tokBare)) != len("token-")+8 {
		t.Fatalf("anonymous principal %q", anonymousPrincipal(tokBare))
	}

	for name, src := range map[string]TokenSources{
		"short flag":     {Flags: []string{"short-but-secret"[:10]}},
		"space in env":   {Env: "abc def 0123456789abcdef"},
		"bad name":       {File: writeTemp(t, "al ice:"+tokAlice+"\n")},
		"empty file":     {File: writeTemp(t, "# nothing\n")},
		"missing file":   {File: t.TempDir() + "/nope"},
		"short in file":  {File: writeTemp(t, "carol:0123456789\n")},
		"non-ASCII file": {File: writeTemp(t, "dave:0123456789abcdefé\n")},
	} {
		_, err := LoadTokens(src)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		for _, secret := range []string{"short-but", "abc def", tokAlice, "0123456789"} {
			if strings.Contains(err.Error(), secret) && name != "missing file" {
				t.Errorf("%s: error reveals a token: %v", name, err)
			}
		}
	}
	if s := (Token{Principal: "p", Secret: tokAlice}); strings.Contains(s.String()+s.GoString(), tokAlice) {
		t.Fatal("Token formats its secret")
	}
}

func TestAuthenticate(t *testing.T) {
	a := newAuthenticator([]Token{{"alice", tokAlice}, {"bob", tokBob}, {"alice", tokBare}})
	for _, tc := range []struct {
		header, principal string
	}{
		{"Bearer " + tokAlice, "alice"},
		{"bearer " + tokBob, "bob"},
		{"BEARER   " + tokBare + " ", "alice"},
		{"Bearer " + tokAlice + "x", ""},
		{"Bearer " + tokAlice[:len(tokAlice)-1], ""},
		{"Basic " + tokAlice, ""},
		{tokAlice, ""},
		{"Bearer", ""},
		{"", ""},
	} {
		p, ok := a.authenticate(tc.header)
		if p != tc.principal || ok != (tc.principal != "") {
			t.Errorf("%q: %q %v, want %q", tc.header, p, ok, tc.principal)
		}
	}
	if newAuthenticator(nil) != nil {
		t.Fatal("no tokens must mean no authenticator")
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8765": true, "localhost:1": true, "[::1]:8765": true, "127.1.2.3:80": true, "LOCALHOST:9": true,
		":8765": false, "0.0.0.0:8765": false, "[::]:8765": false, "192.168.1.2:8765": false, "example.com:80": false, "": false,
	} {
		if got := IsLoopbackAddr(addr); got != want {
			t.Errorf("IsLoopbackAddr(%q) = %v", addr, got)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := (HTTPOptions{}).Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	err := HTTPOptions{Addr: "0.0.0.0:8765"}.Validate()
	if err == nil || !strings.Contains(err.Error(), "--auth-token-file") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("non-loopback without tokens: %v", err)
	}
	if err := (HTTPOptions{Addr: ":8765", Tokens: []Token{{"a", tokAlice}}}).Validate(); err != nil {
		t.Fatalf("non-loopback with tokens: %v", err)
	}
	if err := (HTTPOptions{AllowOrigins: []string{"example.com"}}).Validate(); err == nil {
		t.Fatal("origin without scheme accepted")
	}
	if o := (HTTPOptions{}).withDefaults(); o.Addr != "127.0.0.1:8765" || o.RateLimit != 20 || o.RateBurst != 40 ||
		o.MaxBody != 4<<20 || o.MaxConcurrent != 8 || o.ShutdownTimeout != 10*time.Second || o.SessionIdleTTL != 30*time.Minute {
		t.Fatalf("defaults: %+v", o)
	}
}

func TestOriginPolicy(t *testing.T) {
	p, err := newOriginPolicy([]string{"https://app.example.com, http://tool.test:*", "HTTPS://Upper.Example:8443/", "http://[fd00::1]:*"})
	if err != nil {
		t.Fatal(err)
	}
	for origin, want := range map[string]bool{
		"": true, "http://localhost:5173": true, "http://127.0.0.1:1": true, "http://[::1]:3000": true, "https://localhost": true,
		"https://app.example.com": true, "https://APP.example.com": true, "http://tool.test:9999": true, "http://tool.test": true,
		"https://upper.example:8443": true, "http://[fd00::1]:8080": true,
		"http://app.example.com": false, "https://app.example.com:444": false, "https://evil.com": false, "null": false,
		"http://localhost.evil.com": false, "http://127.0.0.1.evil.com": false, "file://": false, "ws://localhost:1": false,
		"https://app.example.com/path": false, "not a url": false, "https://tool.test:1": false,
	} {
		if got := p.allowed(origin); got != want {
			t.Errorf("allowed(%q) = %v", origin, got)
		}
	}
	anyP, _ := newOriginPolicy([]string{"*"})
	if !anyP.allowed("https://evil.com") {
		t.Fatal("* must allow any origin")
	}
	for _, bad := range []string{"example.com", "https://a.com/x", "https://u@a.com", "://x"} {
		if _, err := newOriginPolicy([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCheckEnvelope(t *testing.T) {
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`:     "",
		`{"jsonrpc":"2.0","id":"x","method":"ping"}`:   "",
		`{"jsonrpc":"2.0","method":"notifications/x"}`: "",
		`{"jsonrpc":"2.0","id":1,"result":{}}`:         "",
		`{"jsonrpc":"2.0","id":1,"error":{"code":1}}`:  "",
		`{`: "", // mcp-go: parse error
		``:  "",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`: "batches",
		`"hello"`:                                        "JSON object",
		`null`:                                           "JSON object",
		`{"jsonrpc":"2.0","id":1}`:                       "needs a method",
		`{"jsonrpc":"2.0"}`:                              "needs a method",
		`{"jsonrpc":"2.0","id":1,"method":5}`:            "method must",
		`{"jsonrpc":"2.0","id":1,"method":""}`:           "method must",
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`:    "id must",
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`: "id must",
		// Numeric ids mcp-go would not echo with the same value.
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`:       "cannot be echoed exactly",
		`{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`:   "cannot be echoed exactly",
		`{"jsonrpc":"2.0","id":0.10000000000000000001,"method":"ping"}`: "cannot be echoed exactly",
		`{"jsonrpc":"2.0","id":1e-999999999,"method":"ping"}`:           "cannot be echoed exactly",
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`:                  "cannot be echoed exactly",
		`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`:       "",
		`{"jsonrpc":"2.0","id":-9007199254740992,"method":"ping"}`:      "",
		`{"jsonrpc":"2.0","id":9223372036854775807000,"method":"ping"}`: "cannot be echoed exactly",
		`{"jsonrpc":"2.0","id":"9007199254740993","method":"ping"}`:     "",
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`:                    "",
		`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`:                    "",
	} {
		_, msg, _ := checkEnvelope([]byte(body))
		if (want == "") != (msg == "") || !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want %q", body, msg, want)
		}
	}
	if id, _, _ := checkEnvelope([]byte(`{"jsonrpc":"2.0","id":7}`)); string(id) != "7" {
		t.Fatalf("id not echoed: %s", id)
	}
	for body, call := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`:    true,
		`{"jsonrpc":"2.0","method":"notifications/x"}`:      false,
		`{"jsonrpc":"2.0","id":1,"result":{"action":"ok"}}`: false,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1}}`:       false,
		`{`: true,
	} {
		if _, _, got := checkEnvelope([]byte(body)); got != call {
			t.Errorf("%s: call %v", body, got)
		}
	}
}

// testServer is an MCP server whose "whoami" tool reports the principal
// and request id it sees, and whose "slow" tool blocks until released.
func testServer(t *testing.T, opts HTTPOptions) (*httptest.Server, func()) {
	t.Helper()
	release := make(chan struct{})
	var once sync.Once
	releaseSlow := func() { once.Do(func() { close(release) }) }
	s := server.NewMCPServer("t", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("whoami"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(obs.Principal(ctx) + "|" + obs.RequestID(ctx)), nil
	})
	s.AddTool(mcp.NewTool("slow"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return mcp.NewToolResultText("done"), nil
	})
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	h, err := NewHTTPHandler(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h) // 127.0.0.1
	t.Cleanup(func() {
		releaseSlow()
		ts.Close()
		_ = h.Close(context.Background())
	})
	return ts, releaseSlow
}

// rpc POSTs one JSON-RPC message in the stateless (2026-07-28) style.
func rpc(t *testing.T, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.Host = req.Header.Get("Host") // the client sends req.Host, not the header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

func callTool(name string) (string, map[string]string) {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{},` + modernMeta + `}}`,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
}

func with(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func TestHandlerAuthAndContext(t *testing.T) {
	ts, _ := testServer(t, HTTPOptions{Tokens: []Token{{"alice", tokAlice}, {"bob", tokBob}}})
	body, hdr := callTool("whoami")

	resp, out := rpc(t, ts.URL+"/mcp", body, hdr)
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Bearer realm="quarry"` || !strings.Contains(out, `"unauthorized"`) {
		t.Fatalf("no token: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), out)
	}
	resp, _ = rpc(t, ts.URL+"/mcp", body, with(hdr, "Authorization", "Bearer "+tokAlice+"0"))
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("wrong token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	resp, out = rpc(t, ts.URL+"/mcp", body, with(hdr, "Authorization", "Bearer "+tokBob, "X-Request-Id", "req-42.a_b"))
	if resp.StatusCode != 200 || !strings.Contains(out, `bob|req-42.a_b`) || resp.Header.Get("X-Request-Id") != "req-42.a_b" {
		t.Fatalf("bob: %d %s %q", resp.StatusCode, out, resp.Header.Get("X-Request-Id"))
	}
	resp, out = rpc(t, ts.URL+"/mcp", body, with(hdr, "Authorization", "Bearer "+tokAlice, "X-Request-Id", "bad id; DROP"))
	gen := resp.Header.Get("X-Request-Id")
	if resp.StatusCode != 200 || !strings.HasPrefix(gen, "r_") || !strings.Contains(out, "alice|"+gen) {
		t.Fatalf("alice with a bad request id: %d %s %q", resp.StatusCode, out, gen)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		r, err := http.Get(ts.URL + p)
		if err != nil || r.StatusCode != 200 || r.Header.Get("X-Request-Id") == "" {
			t.Fatalf("%s without a token: %v %v", p, err, r)
		}
		r.Body.Close()
	}
}

func TestHandlerFailedAuthThrottled(t *testing.T) {
	ts, _ := testServer(t, HTTPOptions{Tokens: []Token{{"alice", tokAlice}}, RateLimit: 1, RateBurst: 2})
	body, hdr := callTool("whoami")
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			resp, _ := rpc(t, ts.URL+"/mcp", body, with(hdr, "Authorization", "Bearer wrong-0123456789abcdef"))
			mu.Lock()
			codes[resp.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[401] < 2 || codes[429] == 0 {
		t.Fatalf("failed attempts: %v", codes)
	}
	// alice's own budget is untouched.
	if resp, out := rpc(t, ts.URL+"/mcp", body, with(hdr, "Authorization", "Bearer "+tokAlice)); resp.StatusCode != 200 {
		t.Fatalf("alice after the guessing: %d %s", resp.StatusCode, out)
	}
}

func TestHandlerNoAuthPrincipal(t *testing.T) {
	ts, _ := testServer(t, HTTPOptions{})
	body, hdr := callTool("whoami")
	resp, out := rpc(t, ts.URL+"/mcp", body, hdr)
	if resp.StatusCode != 200 || !strings.Contains(out, `"text":"|r_`) {
		t.Fatalf("without auth the principal must be empty: %d %s", resp.StatusCode, out)
	}
}

func TestHandlerOriginAndCORS(t *testing.T) {
	ts, _ := testServer(t, HTTPOptions{AllowOrigins: []string{"https://app.example.com"}})
	body, hdr := callTool("whoami")
	for origin, want := range map[string]int{"": 200, "http://localhost:3000": 200, "https://app.example.com": 200, "https://evil.example": 403, "null": 403} {
		resp, out := rpc(t, ts.URL+"/mcp", body, with(hdr, "Origin", origin))
		if resp.StatusCode != want {
			t.Errorf("origin %q: %d %s", origin, resp.StatusCode, out)
			continue
		}
		acao := resp.Header.Get("Access-Control-Allow-Origin")
		if (origin != "" && want == 200) != (acao == origin && acao != "") {
			t.Errorf("origin %q: Access-Control-Allow-Origin %q", origin, acao)
		}
		if want == 200 && origin != "" && !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
			t.Errorf("origin %q: expose %q", origin, resp.Header.Get("Access-Control-Expose-Headers"))
		}
	}
	// Health probes check Origin too.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/healthz", nil)
	req.Header.Set("Origin", "https://evil.example")
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 403 {
		t.Fatalf("healthz from a bad origin: %v %v", err, r)
	}
	// Preflight.
	for origin, want := range map[string]int{"https://app.example.com": 204, "https://evil.example": 403} {
		req, _ := http.NewRequest(http.MethodOptions, ts.URL+"/mcp", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, mcp-protocol-version")
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != want {
			t.Fatalf("preflight from %s: %d", origin, r.StatusCode)
		}
		if want == 204 {
			ah := strings.ToLower(r.Header.Get("Access-Control-Allow-Headers"))
			for _, h := range []string{"authorization", "content-type", "mcp-protocol-version", "mcp-method", "mcp-name", "last-event-id", "mcp-session-id"} {
				if !strings.Contains(ah, h) {
					t.Errorf("Access-Control-Allow-Headers %q lacks %s", ah, h)
				}
			}
			if !strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "POST") || r.Header.Get("Access-Control-Allow-Origin") != origin {
				t.Errorf("preflight headers %v", r.Header)
			}
		}
	}
}

func TestHandlerBodyAndContentType(t *testing.T) {
	ts, _ := testServer(t, HTTPOptions{MaxBody: 512})
	body, hdr := callTool("whoami")
	big := strings.Replace(body, `"arguments":{}`, `"arguments":{"pad":"`+strings.Repeat("x", 600)+`"}`, 1)
	resp, out := rpc(t, ts.URL+"/mcp", big, hdr)
	if resp.StatusCode != 413 || !strings.Contains(out, `"body_too_large"`) || !json.Valid([]byte(out)) {
		t.Fatalf("oversized body: %d %s", resp.StatusCode, out)
	}
	// Without Content-Length (chunked).
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", io.MultiReader(strings.NewReader(big)))
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 413 {
		t.Fatalf("chunked oversized body: %d", r.StatusCode)
	}
	for _, ct := range []string{"text/plain", "", "application/x-www-form-urlencoded", "application/jsonx"} {
		resp, out := rpc(t, ts.URL+"/mcp", body, with(hdr, "Content-Type", ct))
		if resp.StatusCode != 415 || !strings.Contains(out, "unsupported_media_type") {
			t.Errorf("Content-Type %q: %d %s", ct, resp.StatusCode, out)
		}
	}
	if resp, out := rpc(t, ts.URL+"/mcp", body, with(hdr, "Content-Type", "application/json; charset=utf-8")); resp.StatusCode != 200 {
		t.Fatalf("charset: %d %s", resp.StatusCode, out)
	}
}

func TestHandlerRateLimit(t *testing.T) {
	ts, _ := testServer(t, HTTPOptions{RateLimit: 1, RateBurst: 2})
	body, hdr := callTool("whoami")
	var mu sync.Mutex
	codes := map[int]int{}
	retry := ""
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp, _ := rpc(t, ts.URL+"/mcp", body, hdr)
			mu.Lock()
			defer mu.Unlock()
			codes[resp.StatusCode]++
			if resp.StatusCode == 429 {
				retry = resp.Header.Get("Retry-After")
			}
		})
	}
	wg.Wait()
	// 2 at once, at most ~1 more after waiting up to a second, the rest 429.
	if codes[200] < 2 || codes[200] > 4 || codes[429] < 4 || retry == "" || retry == "0" {
		t.Fatalf("codes %v, Retry-After %q", codes, retry)
	}
}

func TestHandlerConcurrency(t *testing.T) {
	ts, release := testServer(t, HTTPOptions{MaxConcurrent: 1, RateLimit: -1})
	init, _ := rpc(t, ts.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	session := map[string]string{"Mcp-Session-Id": init.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
	slow, shdr := callTool("slow")
	done := make(chan int, 1)
	go func() {
		resp, _ := rpc(t, ts.URL+"/mcp", slow, shdr)
		done <- resp.StatusCode
	}()
	// Wait until the slow call holds the only slot.
	body, hdr := callTool("whoami")
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, out := rpc(t, ts.URL+"/mcp", body, hdr)
		if resp.StatusCode == 429 {
			if !strings.Contains(out, "too_many_requests") || resp.Header.Get("Retry-After") != "1" {
				t.Fatalf("429: %s %v", out, resp.Header)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow call never took the slot")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Notifications and responses need no slot.
	for _, msg := range []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":99,"result":{}}`} {
		if resp, out := rpc(t, ts.URL+"/mcp", msg, session); resp.StatusCode != 202 {
			t.Fatalf("%s while the slot is held: %d %s", msg, resp.StatusCode, out)
		}
	}
	release()
	if c := <-done; c != 200 {
		t.Fatalf("slow call: %d", c)
	}
	if resp, _ := rpc(t, ts.URL+"/mcp", body, hdr); resp.StatusCode != 200 {
		t.Fatalf("after release: %d", resp.StatusCode)
	}
}

func TestHandlerReadiness(t *testing.T) {
	ready := errors.New("catalog not scanned")
	var mu sync.Mutex
	ts, _ := testServer(t, HTTPOptions{Readiness: func() error { mu.Lock(); defer mu.Unlock(); return ready }})
	get := func() (int, string) {
		r, err := http.Get(ts.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	if c, b := get(); c != 503 || strings.Contains(b, "catalog") {
		t.Fatalf("not ready: %d %q (the reason belongs in the log, not the body)", c, b)
	}
	mu.Lock()
	ready = nil
	mu.Unlock()
	if c, _ := get(); c != 200 {
		t.Fatalf("ready: %d", c)
	}
	r, _ := http.Post(ts.URL+"/healthz", "text/plain", nil)
	if r.StatusCode != 405 {
		t.Fatalf("POST /healthz: %d", r.StatusCode)
	}
	r.Body.Close()
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeTemp(t *testing.T, s string) string {
	t.Helper()
	f := t.TempDir() + "/tokens"
	writeFile(t, f, s)
	return f
}

// TestServeStdioEnvelope: over stdio too, invalid JSON-RPC envelopes get
// -32600 and everything else reaches mcp-go; EOF ends the server cleanly.
func TestServeStdioEnvelope(t *testing.T) {
	s := server.NewMCPServer("t", "1")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- ServeStdio(context.Background(), s, inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil)))
		outW.Close()
	}()
	msgs := []string{
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":2}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":4,"method":7}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	go func() {
		for _, m := range msgs {
			_, _ = io.WriteString(inW, m+"\n")
		}
	}()
	got := map[string]int{}
	sc := bufio.NewScanner(outR)
	for len(got) < 4 && sc.Scan() {
		var resp struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &resp); err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		code := 0
		if resp.Error != nil {
			code = resp.Error.Code
		}
		got[string(resp.ID)] = code
	}
	want := map[string]int{"null": -32600, "2": -32600, "3": 0, "4": -32600}
	for id, code := range want {
		if c, ok := got[id]; !ok || c != code {
			t.Errorf("id %s: %v, want %d (all: %v)", id, c, code, got)
		}
	}
	inW.Close()
	waitStdioEOF(t, done)
}

// waitStdioEOF waits for ServeStdio's result after its input was closed:
// it must return nil within 10 s.
func waitStdioEOF(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return at EOF")
	}
}
