package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/testutil/syncbuf"
)

// Tokens used by the auth tests (never real secrets).
const (
	tokAlice = "alice-token-0123456789abcdef"
	tokBob   = "bob-token-0123456789abcdef00"
	tokFlag  = "flag-token-0123456789abcdef0"
	tokEnv   = "env-token-0123456789abcdef00"
)

// httpProc is a `quarry serve --transport http` child on a loopback port.
type httpProc struct {
	base   string // http://127.0.0.1:port
	addr   string
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	exited chan struct{} // closed once the process has exited
	err    error         // Wait's result, valid after exited
}

// launchHTTP starts the server with extra flags and environment (always on
// 127.0.0.1) and waits for /healthz. It does not connect a client.
func launchHTTP(t *testing.T, extraEnv []string, extra ...string) *httpProc {
	t.Helper()
	p := &httpProc{addr: freeAddr(t), stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	p.base = "http://" + p.addr
	args := append([]string{"serve", "--transport", "http", "--addr", p.addr, "--log-level", "warn"}, extra...)
	p.cmd = exec.Command(binary, args...)
	// An inherited QUARRY_AUTH_TOKENS must not change the tests' servers.
	p.cmd.Env = append(env(), append([]string{"QUARRY_AUTH_TOKENS="}, extraEnv...)...)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", p.stderr.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, err := httpGet(p.base + "/healthz"); err == nil && code == 200 {
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("server exited: %v\n%s", p.err, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became healthy", p.base)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// signal sends sig to the server.
func (p *httpProc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// waitExit waits up to d for the server to exit and returns how long it took.
func (p *httpProc) waitExit(t *testing.T, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-p.exited:
		return time.Since(start)
	case <-time.After(d):
		t.Fatalf("server still running %v after the signal", d)
	}
	return 0
}

// connect opens an mcp-go Streamable HTTP client with optional headers;
// legacy pins protocol 2025-11-25 (initialize handshake and a session).
// httpCallTimeout bounds one HTTP request of connectHTTP's clients (soak
// tests that queue long queries raise it).
var httpCallTimeout = 60 * time.Second

func connectHTTP(t *testing.T, base string, headers map[string]string, legacy bool) *client.Client {
	t.Helper()
	topts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(headers)}
	if legacy {
		return httpClient(t, base, mcp.LATEST_LEGACY_PROTOCOL_VERSION, topts, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	}
	return httpClient(t, base, "", topts)
}

// rawResp is one raw HTTP exchange.
type rawResp struct {
	status int
	header http.Header
	body   string
}

// rpcError decodes a JSON-RPC error body (code 0 when there is none).
func (r rawResp) rpcError() (code int, msg string, data map[string]any) {
	var m struct {
		Error *struct {
			Code    int            `json:"code"`
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(r.body), &m) != nil || m.Error == nil {
		return 0, "", nil
	}
	return m.Error.Code, m.Error.Message, m.Error.Data
}

// do sends one raw HTTP request to base+path.
func httpDo(t *testing.T, method, url, body string, hdr map[string]string) rawResp {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	cl := &http.Client{Timeout: 60 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResp{resp.StatusCode, resp.Header, string(b)}
}

// modernMeta is the _meta of a stateless (2026-07-28) request.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"quarry-e2e","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// statelessCall builds a stateless tools/call request and its headers.
func statelessCall(tool, args string) (string, map[string]string) {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,%s}}`, tool, args, modernMeta),
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
}

func withHeaders(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// TestHTTPSessionEras serves a 2025-11-25 client (initialize handshake,
// Mcp-Session-Id), a 2026-07-28 client (stateless) and a lone stateless
// request on the same endpoint.
func TestHTTPSessionEras(t *testing.T) {
	p := launchHTTP(t, nil)

	legacy := connectHTTP(t, p.base, nil, true)
	if v := legacy.ProtocolVersion(); v != mcp.LATEST_LEGACY_PROTOCOL_VERSION {
		t.Fatalf("legacy client negotiated %q", v)
	}
	sid := legacy.GetTransport().(*transport.StreamableHTTP).GetSessionId()
	if sid == "" {
		t.Fatal("no Mcp-Session-Id for a 2025-11-25 session")
	}
	var cat catalogResult
	call(t, legacy, "get_catalog", map[string]any{}, &cat)
	if cat.Total < 6 {
		t.Fatalf("legacy catalog: %+v", cat)
	}

	modern := connectHTTP(t, p.base, nil, false)
	if v := modern.ProtocolVersion(); v != mcp.ProtocolVersion20260728 {
		t.Fatalf("default client negotiated %q", v)
	}
	if sid := modern.GetTransport().(*transport.StreamableHTTP).GetSessionId(); sid != "" {
		t.Fatalf("stateless client got session %q", sid)
	}
	call(t, modern, "get_schema", map[string]any{"dataset": "sensors/readings"}, nil)

	// One stateless request, no handshake at all.
	body, hdr := statelessCall("get_catalog", `{"query":"weather"}`)
	r := httpDo(t, http.MethodPost, p.base+"/mcp", body, hdr)
	if r.status != 200 || r.header.Get("Mcp-Session-Id") != "" || !strings.Contains(r.body, `weather/daily`) {
		t.Fatalf("stateless request: %d session %q %s", r.status, r.header.Get("Mcp-Session-Id"), r.body)
	}

	// The legacy session ends with DELETE.
	del := httpDo(t, http.MethodDelete, p.base+"/mcp", "", map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
	if del.status != 200 {
		t.Fatalf("DELETE session: %d %s", del.status, del.body)
	}
}

// TestHTTPRefusesNonLoopbackWithoutAuth: off loopback, tokens are
// mandatory, and the refusal comes before anything is opened or bound.
// 192.0.2.1 (TEST-NET-1) is assigned to no host, so even a regression
// could not listen on a non-loopback address. (That tokens lift the
// refusal is checked by mcpapi's TestValidate, without binding.)
func TestHTTPRefusesNonLoopbackWithoutAuth(t *testing.T) {
	run := func(extraEnv []string, args ...string) (string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, binary, append([]string{"serve", "--transport", "http"}, args...)...)
		cmd.Env = append(env(), append([]string{"QUARRY_AUTH_TOKENS="}, extraEnv...)...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return string(out), code
	}
	// (":0", "0.0.0.0:0" and "[::]:0" are refused the same way, before any
	// bind; mcpapi's IsLoopbackAddr test covers them without the risk.)
	const addr = "192.0.2.1:8765"
	out, code := run(nil, "--addr", addr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || len(lines) != 1 || !strings.Contains(out, "refusing to serve on "+addr) || !strings.Contains(out, "--auth-token-file") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	// Bad token sources fail fast with one line that does not echo a token.
	bad := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(bad, []byte("alice:short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--addr", "127.0.0.1:0", "--auth-token-file", bad},
		{"--addr", "127.0.0.1:0", "--auth-token", "tiny"},
		{"--addr", "127.0.0.1:0", "--allow-origin", "example.com"},
	} {
		out, code := run(nil, args...)
		if code != 1 || strings.Count(strings.TrimSpace(out), "\n") != 0 || strings.Contains(out, "short\n") || strings.Contains(out, "tiny") {
			t.Fatalf("%v: exit %d, output:\n%s", args, code, out)
		}
	}
}

// TestHTTPAuth covers every token source, 401s, unauthenticated probes and
// the principal reaching the tools (result handles are per principal).
func TestHTTPAuth(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("# quarry tokens\nalice:"+tokAlice+"\n\nbob:"+tokBob+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := launchHTTP(t, []string{"QUARRY_AUTH_TOKENS=" + tokEnv}, "--auth-token-file", file, "--auth-token", tokFlag, "--log-level", "info")
	body, hdr := statelessCall("get_catalog", `{}`)

	for name, authz := range map[string]string{"missing": "", "wrong": "Bearer " + tokAlice + "x", "basic": "Basic " + tokAlice, "bare": tokAlice} {
		h := hdr
		if authz != "" {
			h = withHeaders(hdr, "Authorization", authz)
		}
		r := httpDo(t, http.MethodPost, p.base+"/mcp", body, h)
		code, _, data := r.rpcError()
		if r.status != 401 || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), `Bearer realm="quarry"`) || code == 0 || data["code"] != "unauthorized" {
			t.Fatalf("%s token: %d %q %s", name, r.status, r.header.Get("WWW-Authenticate"), r.body)
		}
		if strings.Contains(r.body, "datasets") {
			t.Fatalf("%s token: data leaked: %s", name, r.body)
		}
	}
	waitHealthy(t, p.base+"/readyz") // 503 while the first catalog scan runs
	for _, path := range []string{"/healthz", "/readyz"} {
		if r := httpDo(t, http.MethodGet, p.base+path, "", nil); r.status != 200 {
			t.Fatalf("%s without a token: %d %s", path, r.status, r.body)
		}
	}
	for name, tok := range map[string]string{"file": tokAlice, "flag": tokFlag, "env": tokEnv} {
		r := httpDo(t, http.MethodPost, p.base+"/mcp", body, withHeaders(hdr, "Authorization", "Bearer "+tok))
		if r.status != 200 || !strings.Contains(r.body, "sensors/readings") {
			t.Fatalf("%s token: %d %s", name, r.status, r.body)
		}
	}

	// The principal reaches the tools: a handle made by alice is invisible to bob.
	alice := connectHTTP(t, p.base, map[string]string{"Authorization": "Bearer " + tokAlice}, false)
	bob := connectHTTP(t, p.base, map[string]string{"Authorization": "Bearer " + tokBob}, true)
	var first queryResult
	call(t, alice, "query_data", map[string]any{"dataset": "sensors/readings", "columns": []string{"id"}}, &first)
	if first.Method != "handle" {
		t.Fatalf("expected a handle: %+v", first)
	}
	next := map[string]any{"result_handle": first.ResultHandle, "page_token": first.PageInfo.PageToken}
	if e := callErr(t, bob, "query_next_page", next); e.Code != "handle_expired" {
		t.Fatalf("bob paging alice's handle: %+v", e)
	}
	var page queryResult
	call(t, alice, "query_next_page", next, &page)
	if page.PageInfo == nil || page.PageInfo.Offset != first.RowCount {
		t.Fatalf("alice's page: %+v", page.PageInfo)
	}
	// The principal is on the log lines of the tool call.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.stderr.String(), "principal=bob") || !strings.Contains(p.stderr.String(), "principal=alice") {
		if time.Now().After(deadline) {
			t.Fatalf("no principal in the logs:\n%s", p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, tok := range []string{tokAlice, tokBob, tokFlag, tokEnv} {
		if strings.Contains(p.stderr.String(), tok) {
			t.Fatal("a token appears in the logs")
		}
	}
}

// TestHTTPOrigin: bad origins get 403, allowed ones CORS headers,
// requests without Origin pass, preflights are answered.
func TestHTTPOrigin(t *testing.T) {
	p := launchHTTP(t, nil, "--allow-origin", "https://app.example.com,https://other.example.com", "--allow-origin", "http://tools.test:*")
	body, hdr := statelessCall("get_catalog", `{}`)
	for origin, want := range map[string]int{
		"": 200, "http://localhost:5173": 200, "http://127.0.0.1:9": 200, "http://[::1]:3000": 200,
		"https://app.example.com": 200, "https://other.example.com": 200, "http://tools.test:8080": 200,
		"https://evil.example": 403, "http://localhost.evil.example": 403, "null": 403, "https://app.example.com.evil.example": 403,
	} {
		h := hdr
		if origin != "" {
			h = withHeaders(hdr, "Origin", origin)
		}
		r := httpDo(t, http.MethodPost, p.base+"/mcp", body, h)
		if r.status != want {
			t.Errorf("Origin %q: %d %s", origin, r.status, r.body)
			continue
		}
		acao := r.header.Get("Access-Control-Allow-Origin")
		switch {
		case want == 403:
			if _, _, data := r.rpcError(); data["code"] != "forbidden_origin" || acao != "" || strings.Contains(r.body, "datasets") {
				t.Errorf("Origin %q: 403 body %s, ACAO %q", origin, r.body, acao)
			}
		case origin == "":
			if acao != "" {
				t.Errorf("no Origin but ACAO %q", acao)
			}
		default:
			if acao != origin || !strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
				t.Errorf("Origin %q: ACAO %q, expose %q", origin, acao, r.header.Get("Access-Control-Expose-Headers"))
			}
		}
	}
	pre := httpDo(t, http.MethodOptions, p.base+"/mcp", "", map[string]string{
		"Origin": "https://app.example.com", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization,content-type,mcp-protocol-version,mcp-method,mcp-name,mcp-session-id,last-event-id",
	})
	if pre.status != 204 || pre.header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Fatalf("preflight: %d %v", pre.status, pre.header)
	}
	allow := strings.ToLower(pre.header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"authorization", "content-type", "mcp-protocol-version", "mcp-method", "mcp-name", "last-event-id", "mcp-session-id"} {
		if !strings.Contains(allow, h) {
			t.Errorf("preflight Allow-Headers %q lacks %s", allow, h)
		}
	}
	if bad := httpDo(t, http.MethodOptions, p.base+"/mcp", "", map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}); bad.status != 403 {
		t.Fatalf("preflight from a bad origin: %d", bad.status)
	}
	// DNS rebinding: a loopback connection with a foreign Host header (mcp-go's check).
	req, _ := http.NewRequest(http.MethodPost, p.base+"/mcp", strings.NewReader(body))
	req.Host = "evil.example"
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("foreign Host header: %d", resp.StatusCode)
	}
}

// TestHTTPLimits: rate limit 429 + Retry-After, body 413, Content-Type 415,
// in-flight limit 429.
func TestHTTPLimits(t *testing.T) {
	t.Run("rate", func(t *testing.T) {
		p := launchHTTP(t, nil, "--rate-limit", "1", "--rate-burst", "2")
		body, hdr := statelessCall("get_catalog", `{}`)
		var mu sync.Mutex
		codes := map[int]int{}
		retry := ""
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				r := httpDo(t, http.MethodPost, p.base+"/mcp", body, hdr)
				mu.Lock()
				defer mu.Unlock()
				codes[r.status]++
				if r.status == 429 {
					retry = r.header.Get("Retry-After")
					if _, _, data := r.rpcError(); data["code"] != "rate_limited" {
						t.Errorf("429 body: %s", r.body)
					}
				}
			})
		}
		wg.Wait()
		if codes[200] < 2 || codes[429] < 5 || codes[200]+codes[429] != 10 || retry == "" || retry == "0" {
			t.Fatalf("status counts %v, Retry-After %q", codes, retry)
		}
		// Probes are not rate limited.
		for range 5 {
			if r := httpDo(t, http.MethodGet, p.base+"/healthz", "", nil); r.status != 200 {
				t.Fatalf("healthz: %d", r.status)
			}
		}
	})
	t.Run("body and content type", func(t *testing.T) {
		p := launchHTTP(t, nil, "--max-body", "2048")
		body, hdr := statelessCall("get_catalog", `{"query":"`+strings.Repeat("x", 4096)+`"}`)
		r := httpDo(t, http.MethodPost, p.base+"/mcp", body, hdr)
		if code, _, data := r.rpcError(); r.status != 413 || code != -32600 || data["code"] != "body_too_large" {
			t.Fatalf("oversized body: %d %s", r.status, r.body)
		}
		small, _ := statelessCall("get_catalog", `{}`)
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json-patch+json"} {
			r := httpDo(t, http.MethodPost, p.base+"/mcp", small, withHeaders(hdr, "Content-Type", ct))
			if code, _, data := r.rpcError(); r.status != 415 || code != -32600 || data["code"] != "unsupported_media_type" {
				t.Fatalf("Content-Type %q: %d %s", ct, r.status, r.body)
			}
		}
		if r := httpDo(t, http.MethodPost, p.base+"/mcp", small, withHeaders(hdr, "Content-Type", "application/json; charset=utf-8")); r.status != 200 {
			t.Fatalf("charset parameter: %d %s", r.status, r.body)
		}
	})
	t.Run("in flight", func(t *testing.T) {
		p := launchHTTP(t, nil, "--max-concurrent", "1", "--rate-limit", "0")
		slow := startSlowRequest(t, p.addr)
		body, hdr := statelessCall("get_catalog", `{}`)
		start := time.Now()
		r := httpDo(t, http.MethodPost, p.base+"/mcp", body, hdr)
		if _, _, data := r.rpcError(); r.status != 429 || data["code"] != "too_many_requests" || r.header.Get("Retry-After") == "" {
			t.Fatalf("second request: %d %s", r.status, r.body)
		}
		if waited := time.Since(start); waited < 900*time.Millisecond {
			t.Fatalf("429 after %v: the request should queue briefly first", waited)
		}
		if resp := slow.finish(t); resp.status != 200 || !strings.Contains(resp.body, "sensors/readings") {
			t.Fatalf("slow request: %d %s", resp.status, resp.body)
		}
		if r := httpDo(t, http.MethodPost, p.base+"/mcp", body, hdr); r.status != 200 {
			t.Fatalf("after the slot freed: %d", r.status)
		}
	})
}

// slowRequest is a POST whose body is only half sent: it is in flight
// (holding an in-flight slot, keeping its connection active) until finish.
type slowRequest struct {
	conn net.Conn
	rest string
}

func startSlowRequest(t *testing.T, addr string) *slowRequest {
	t.Helper()
	body, hdr := statelessCall("get_catalog", `{}`)
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var req strings.Builder
	fmt.Fprintf(&req, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n", addr, len(body))
	for k, v := range hdr {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n")
	half := len(body) / 2
	req.WriteString(body[:half])
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // let the server start reading it
	return &slowRequest{conn: conn, rest: body[half:]}
}

func (s *slowRequest) finish(t *testing.T) rawResp {
	t.Helper()
	if _, err := io.WriteString(s.conn, s.rest); err != nil {
		t.Fatalf("finishing the slow request: %v", err)
	}
	_ = s.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(s.conn), nil)
	if err != nil {
		t.Fatalf("reading the slow response: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResp{resp.StatusCode, resp.Header, string(b)}
}

// TestHTTPRequestID: an incoming X-Request-Id is echoed and stamped on the
// request's log lines; an unsafe one is replaced.
func TestHTTPRequestID(t *testing.T) {
	p := launchHTTP(t, nil, "--log-level", "info", "--log-format", "json")
	body, hdr := statelessCall("get_schema", `{"dataset":"sensors/readings"}`)
	r := httpDo(t, http.MethodPost, p.base+"/mcp", body, withHeaders(hdr, "X-Request-Id", "e2e-req.42_A"))
	if r.status != 200 || r.header.Get("X-Request-Id") != "e2e-req.42_A" {
		t.Fatalf("%d, X-Request-Id %q", r.status, r.header.Get("X-Request-Id"))
	}
	bad := httpDo(t, http.MethodPost, p.base+"/mcp", body, withHeaders(hdr, "X-Request-Id", `x" injected="1`))
	gen := bad.header.Get("X-Request-Id")
	if !strings.HasPrefix(gen, "r_") {
		t.Fatalf("unsafe request id echoed as %q", gen)
	}
	if h := httpDo(t, http.MethodGet, p.base+"/healthz", "", nil); h.header.Get("X-Request-Id") == "" {
		t.Fatal("no X-Request-Id on /healthz")
	}
	want := map[string]bool{"tool call": false, "http request": false}
	deadline := time.Now().Add(10 * time.Second)
	for {
		for line := range strings.SplitSeq(p.stderr.String(), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			if rec["request_id"] == "e2e-req.42_A" {
				if msg, _ := rec["msg"].(string); msg != "" {
					if _, ok := want[msg]; ok {
						want[msg] = true
					}
				}
			}
			if strings.Contains(line, "injected") {
				t.Fatalf("unsafe request id reached the log: %s", line)
			}
		}
		if want["tool call"] && want["http request"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log lines with request_id=e2e-req.42_A: %v\n%s", want, p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHTTPGracefulShutdown: SIGTERM lets an in-flight request finish and
// does not wait for open listening streams.
func TestHTTPGracefulShutdown(t *testing.T) {
	p := launchHTTP(t, nil, "--shutdown-timeout", "30s", "--log-level", "info")

	// A 2025-11-25 session with its standalone GET listening stream open.
	init := httpDo(t, http.MethodPost, p.base+"/mcp",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`, nil)
	sid := init.header.Get("Mcp-Session-Id")
	if init.status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", init.status, init.body)
	}
	streamCtx, cancelStream := context.WithCancel(context.Background())
	defer cancelStream()
	sreq, _ := http.NewRequestWithContext(streamCtx, http.MethodGet, p.base+"/mcp", nil)
	sreq.Header.Set("Accept", "text/event-stream")
	sreq.Header.Set("Mcp-Session-Id", sid)
	sreq.Header.Set("MCP-Protocol-Version", "2025-11-25")
	stream, err := http.DefaultClient.Do(sreq)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", err, stream)
	}
	defer stream.Body.Close()

	slow := startSlowRequest(t, p.addr)
	p.signal(t, syscall.SIGTERM)
	time.Sleep(500 * time.Millisecond)
	select {
	case <-p.exited:
		t.Fatalf("exited with a request in flight: %v", p.err)
	default:
	}
	// New connections are refused while draining.
	if c, err := net.DialTimeout("tcp", p.addr, time.Second); err == nil {
		c.Close()
		t.Fatal("still accepting connections after SIGTERM")
	}
	resp := slow.finish(t)
	if resp.status != 200 || !strings.Contains(resp.body, "sensors/readings") {
		t.Fatalf("in-flight request after SIGTERM: %d %s", resp.status, resp.body)
	}
	slow.conn.Close()
	if took := p.waitExit(t, 15*time.Second); took > 10*time.Second {
		t.Fatalf("shutdown took %v: the listening stream held it", took)
	}
	if p.err != nil {
		t.Fatalf("exit: %v", p.err)
	}
	if !strings.Contains(p.stderr.String(), "shutting down") || !strings.Contains(p.stderr.String(), "stopped") {
		t.Fatalf("shutdown not logged:\n%s", p.stderr.String())
	}
	// The stream was ended by the server.
	_, _ = io.Copy(io.Discard, stream.Body)
}

// TestHTTPShutdownTimeout: a request that never completes is cut off at
// --shutdown-timeout and the server still exits cleanly.
func TestHTTPShutdownTimeout(t *testing.T) {
	p := launchHTTP(t, nil, "--shutdown-timeout", "1s")
	_ = startSlowRequest(t, p.addr) // never finished
	p.signal(t, syscall.SIGINT)
	if took := p.waitExit(t, 20*time.Second); took < 900*time.Millisecond {
		t.Fatalf("exited after %v, before the shutdown timeout, with a request in flight", took)
	}
	if p.err != nil {
		t.Fatalf("exit: %v\n%s", p.err, p.stderr.String())
	}
}
