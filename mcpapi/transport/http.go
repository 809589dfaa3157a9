package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/console"
	"github.com/quarrydb/quarry/internal/obs"
)

// MCPPath is the Streamable HTTP endpoint.
const MCPPath = "/mcp"

// bodyReadTimeout bounds reading one request body, so a client trickling
// bytes cannot hold a connection and an in-flight slot forever.
const bodyReadTimeout = 30 * time.Second

// Stable codes of the HTTP layer's rejections, in the error data of the
// JSON-RPC-style body (like the tool error codes).
const (
	codeUnauthorized     = "unauthorized"
	codeForbiddenOrigin  = "forbidden_origin"
	codeForbiddenHost    = "forbidden_host"
	codeRateLimited      = "rate_limited"
	codeTooManyInFlight  = "too_many_requests"
	codeBodyTooLarge     = "body_too_large"
	codeUnsupportedMedia = "unsupported_media_type"
	codeInvalidRequest   = "invalid_request"
	codeBadBody          = "bad_request_body"
)

// JSON-RPC error codes used by the HTTP layer.
const (
	rpcInvalidRequest = -32600
	rpcServerError    = -32000
)

// HTTPHandler serves Quarry over HTTP: Streamable HTTP MCP at /mcp behind
// Origin validation, CORS, bearer-token auth, per-principal rate and
// concurrency limits, body-size and Content-Type checks; plus the liveness
// probe /healthz and the readiness probe /readyz, which need no token.
// Every response carries X-Request-Id.
type HTTPHandler struct {
	opts     HTTPOptions
	log      *slog.Logger
	mcp      *server.StreamableHTTPServer
	origins  *originPolicy
	auth     *authenticator
	limits   *principalLimits
	streams  *streamSlots
	sessions *sessionTable
	owners   *sessionOwners
}

// NewHTTPHandler builds the handler. opts.Addr only matters for the
// loopback check: without tokens, a non-loopback Addr is an error.
func NewHTTPHandler(s *server.MCPServer, opts HTTPOptions) (*HTTPHandler, error) {
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	origins, err := newOriginPolicy(opts.AllowOrigins)
	if err != nil {
		return nil, err
	}
	h := &HTTPHandler{
		opts:     opts,
		log:      opts.Logger,
		origins:  origins,
		auth:     newAuthenticator(opts.Tokens),
		limits:   newPrincipalLimits(opts.RateLimit, opts.RateBurst, opts.MaxConcurrent),
		streams:  &streamSlots{max: opts.MaxStreams},
		sessions: &sessionTable{max: opts.MaxSessions, ttl: opts.SessionIdleTTL},
		owners:   &sessionOwners{ttl: opts.SessionIdleTTL},
	}
	h.mcp = server.NewStreamableHTTPServer(s,
		server.WithEndpointPath(MCPPath),
		server.WithSessionIdleTTL(opts.SessionIdleTTL),
		server.WithStreamableHTTPLogger(opts.Logger),
	)
	return h, nil
}

// Close ends the MCP sessions' listening streams (long-lived GET requests
// that would otherwise hold a graceful shutdown until its deadline) and
// stops the session sweeper. In-flight POST requests are not affected.
func (h *HTTPHandler) Close(ctx context.Context) error {
	return h.mcp.Shutdown(ctx)
}

// requestInfo is what the access log learns while a request is served.
type requestInfo struct {
	principal string
	reject    string
}

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get("X-Request-Id")
	if !obs.ValidRequestID(id) {
		id = obs.NewRequestID()
	}
	w.Header().Set("X-Request-Id", id)
	ctx := obs.WithRequest(r.Context(), h.log, id)
	dw := newDeadlineWriter(w, h.opts.WriteTimeout, obs.Logger(ctx))
	defer dw.arm() // the server flushes the response after ServeHTTP returns
	sw := &statusWriter{ResponseWriter: dw}
	info := &requestInfo{}
	r = r.WithContext(ctx)
	defer func() {
		lvl := slog.LevelInfo
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			lvl = slog.LevelDebug
		}
		attrs := []any{"method", r.Method, "path", clipString(r.URL.Path, 200), "status", sw.code(), "bytes", sw.n,
			"duration_ms", time.Since(start).Milliseconds(), "remote", r.RemoteAddr}
		if info.principal != "" {
			attrs = append(attrs, "principal", info.principal)
		}
		if info.reject != "" {
			attrs = append(attrs, "reject", info.reject)
			if h.opts.OnReject != nil {
				h.opts.OnReject(info.reject)
			}
		}
		if o := r.Header.Get("Origin"); o != "" {
			attrs = append(attrs, "origin", clipString(o, 200))
		}
		obs.Logger(ctx).Log(ctx, lvl, "http request", attrs...)
	}()
	h.serve(sw, r, id, info)
}

func (h *HTTPHandler) serve(w http.ResponseWriter, r *http.Request, id string, info *requestInfo) {
	if !hostAllowed(r) {
		info.reject = codeForbiddenHost
		writeGuardError(w, http.StatusForbidden, rpcServerError, nil, codeForbiddenHost,
			fmt.Sprintf("Host %q is not a loopback host; on a loopback address the server answers only localhost, 127.0.0.1 or [::1] with an optional port", clipString(r.Host, 200)))
		return
	}
	origin := r.Header.Get("Origin")
	if !h.origins.allowed(origin) {
		info.reject = codeForbiddenOrigin
		writeGuardError(w, http.StatusForbidden, rpcServerError, nil, codeForbiddenOrigin,
			fmt.Sprintf("origin %q is not allowed; the server operator can allow it with --allow-origin", clipString(origin, 200)))
		return
	}
	if applyCORS(w, r) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if c := h.opts.Console; c != nil {
		if console.Owns(r.URL.Path) {
			c.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == MCPPath && console.WantsHTML(r) {
			c.Instructions(w, r)
			return
		}
	}
	if h.opts.Download != nil && h.opts.Download.Serves(r.URL.Path) {
		h.opts.Download.ServeHTTP(w, r)
		return
	}
	switch r.URL.Path {
	case "/healthz":
		if !probeMethod(w, r) {
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	case "/readyz":
		if !probeMethod(w, r) {
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if h.opts.Readiness != nil {
			if err := h.opts.Readiness(); err != nil {
				obs.Logger(r.Context()).Warn("not ready", "err", err)
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, "not ready\n")
				return
			}
		}
		_, _ = io.WriteString(w, "ready\n")
	case MetricsPath:
		h.serveMetrics(w, r, info)
	case MCPPath:
		if r.Method == http.MethodOptions {
			w.Header().Set("Allow", "GET, POST, DELETE, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.serveMCP(w, r, id, info)
	default:
		http.NotFound(w, r)
	}
}

func probeMethod(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

// serveMCP authenticates, limits and checks one /mcp request, then hands
// it to mcp-go with the principal and request id in its context.
func (h *HTTPHandler) serveMCP(w http.ResponseWriter, r *http.Request, id string, info *requestInfo) {
	ctx := r.Context()
	principal := anonymous
	if h.auth != nil {
		authz := r.Header.Get("Authorization")
		p, ok := h.auth.authenticate(authz)
		if !ok {
			// Failed attempts share the anonymous bucket: guessing is
			// throttled without touching any real principal's budget.
			if ok, retry := h.limits.admitRate(ctx, anonymous); !ok {
				info.reject = codeRateLimited
				w.Header().Set("Retry-After", strconv.Itoa(retry))
				writeGuardError(w, http.StatusTooManyRequests, rpcServerError, nil, codeRateLimited,
					fmt.Sprintf("too many unauthenticated requests; retry after %d s", retry))
				return
			}
			challenge := `Bearer realm="quarry"`
			msg := "missing bearer token: send Authorization: Bearer <token>"
			if authz != "" {
				challenge += `, error="invalid_token"`
				msg = "invalid bearer token"
			}
			info.reject = codeUnauthorized
			w.Header().Set("WWW-Authenticate", challenge)
			writeGuardError(w, http.StatusUnauthorized, rpcServerError, nil, codeUnauthorized, msg)
			return
		}
		principal = p
		ctx = obs.WithPrincipal(ctx, p)
	}
	info.principal = principal
	ctx = obs.WithRequest(ctx, h.log.With("principal", principal), id)
	if h.opts.Download != nil {
		ctx = h.opts.Download.WithBase(ctx, r.Host)
	}
	r = r.WithContext(ctx)

	if ok, retry := h.limits.admitRate(ctx, principal); !ok {
		info.reject = codeRateLimited
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		writeGuardError(w, http.StatusTooManyRequests, rpcServerError, nil, codeRateLimited,
			fmt.Sprintf("rate limit of %g requests/s exceeded; retry after %d s", h.opts.RateLimit, retry))
		return
	}
	if r.Method != http.MethodPost {
		if !h.checkSession(w, r, principal, info) {
			return
		}
		// GET (the legacy listening stream), DELETE and HEAD carry no body
		// and are not counted as in-flight: a listening stream lives for
		// the whole session. Open streams are capped per principal.
		if r.Method == http.MethodGet {
			if !h.streams.acquire(principal) {
				info.reject = codeTooManyStreams
				w.Header().Set("Retry-After", "5")
				writeGuardError(w, http.StatusTooManyRequests, rpcServerError, nil, codeTooManyStreams,
					fmt.Sprintf("more than %d open listening streams (GET %s) for this principal; close one and retry", h.opts.MaxStreams, MCPPath))
				return
			}
			defer h.streams.release(principal)
		}
		sid := r.Header.Get(server.HeaderKeySessionID)
		h.sessions.touch(sid, time.Now())
		h.mcp.ServeHTTP(w, r)
		if r.Method == http.MethodDelete {
			h.sessions.remove(sid)
			h.owners.end(sid)
		}
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		info.reject = codeUnsupportedMedia
		writeGuardError(w, http.StatusUnsupportedMediaType, rpcInvalidRequest, nil, codeUnsupportedMedia,
			"Content-Type must be application/json")
		return
	}
	if r.ContentLength > h.opts.MaxBody {
		info.reject = codeBodyTooLarge
		writeGuardError(w, http.StatusRequestEntityTooLarge, rpcInvalidRequest, nil, codeBodyTooLarge,
			fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, h.opts.MaxBody))
		return
	}
	// A slot is taken before the body is read, so that slow uploads count
	// too. JSON-RPC responses and notifications give theirs back at once,
	// and get through even when no slot is free: a response may be what an
	// in-flight call is waiting for (legacy elicitation), and must not
	// queue behind it.
	release, slot := h.limits.acquire(ctx, principal)
	defer func() {
		if slot {
			release()
		}
	}()
	body, tooLarge, err := readBody(w, r, h.opts.MaxBody)
	switch {
	case tooLarge:
		info.reject = codeBodyTooLarge
		writeGuardError(w, http.StatusRequestEntityTooLarge, rpcInvalidRequest, nil, codeBodyTooLarge,
			fmt.Sprintf("request body exceeds the limit of %d bytes", h.opts.MaxBody))
		return
	case err != nil:
		info.reject = codeBadBody
		writeGuardError(w, http.StatusBadRequest, rpcInvalidRequest, nil, codeBadBody, "reading the request body: "+err.Error())
		return
	}
	gid, msg, isCall := checkEnvelope(body)
	if msg != "" {
		info.reject = codeInvalidRequest
		writeGuardError(w, http.StatusBadRequest, rpcInvalidRequest, gid, codeInvalidRequest, msg)
		return
	}
	switch {
	case !isCall && slot:
		release()
		slot = false
	case isCall && !slot:
		info.reject = codeTooManyInFlight
		w.Header().Set("Retry-After", "1")
		writeGuardError(w, http.StatusTooManyRequests, rpcServerError, gid, codeTooManyInFlight,
			fmt.Sprintf("more than %d requests in flight; retry after 1 s", h.opts.MaxConcurrent))
		return
	}
	if b := hugeNumberResponse(body); b != nil { // mcp-go could not decode the arguments
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
		return
	}
	now := time.Now()
	h.sessions.touch(r.Header.Get(server.HeaderKeySessionID), now)
	initialize, initID := isInitialize(body)
	if initialize && h.sessions.full(principal, now) {
		info.reject = codeTooManySessions
		w.Header().Set("Retry-After", "5")
		writeGuardError(w, http.StatusTooManyRequests, rpcServerError, initID, codeTooManySessions,
			fmt.Sprintf("more than %d live sessions for this principal; end one (DELETE %s with its Mcp-Session-Id) or let it idle out, then retry", h.opts.MaxSessions, MCPPath))
		return
	}
	if !h.checkSession(w, r, principal, info) {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	h.mcp.ServeHTTP(w, r)
	if initialize {
		h.sessions.add(w.Header().Get(server.HeaderKeySessionID), principal, now)
		h.owners.bind(w.Header().Get(server.HeaderKeySessionID), principal, now)
	}
}

// readBody reads at most limit bytes of the request body under a read
// deadline of bodyReadTimeout (cleared afterwards, so that a long-running
// request is not cut off by its own connection's deadline).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, tooLarge bool, err error) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(bodyReadTimeout))
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	body, err = io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > limit {
		return nil, true, nil
	}
	return body, false, nil
}

// checkEnvelope rejects what mcp-go would accept or misreport although it
// is not a valid JSON-RPC message: batches (removed from MCP in
// 2025-06-18; mcp-go reports them as parse errors), non-object JSON, a
// method that is not a string, a request id that is not a string or number,
// and an object with neither method nor result/error (mcp-go answers 202).
// Invalid JSON is left to mcp-go (-32700). It returns the id to echo and a
// message ("" when body may proceed), and whether body is a call (a request
// with a method and an id, or anything mcp-go will answer with an error)
// rather than a notification or a response.
func checkEnvelope(body []byte) (id json.RawMessage, msg string, call bool) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || !json.Valid(trimmed) {
		return nil, "", true
	}
	if trimmed[0] == '[' {
		return nil, "JSON-RPC batches are not supported (MCP removed them in protocol version 2025-06-18); send one message per request", true
	}
	if trimmed[0] != '{' {
		return nil, "a JSON-RPC message must be a JSON object", true
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return nil, "", true
	}
	rawID, hasID := m["id"]
	var echo json.RawMessage
	if hasID && validID(rawID) {
		echo = rawID
	}
	method, hasMethod := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	switch {
	case hasMethod:
		var s string
		if json.Unmarshal(method, &s) != nil || s == "" {
			return echo, "method must be a non-empty string", true
		}
		if hasID && !validID(rawID) {
			return nil, "id must be a string or a number", true
		}
		if hasID && !idKept(rawID) {
			return echo, fmt.Sprintf("id %s cannot be echoed exactly (mcp-go reads numeric ids as float64); use a string id or an integer within ±2^53", clipString(string(rawID), 100)), true
		}
		return nil, "", hasID
	case !hasResult && !hasError:
		return echo, "a JSON-RPC message needs a method (request or notification) or a result or error (response)", true
	}
	return nil, "", false // a response
}

// validID reports whether a raw JSON id is a string or a number (MCP
// forbids null ids).
func validID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	c := raw[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// idKept reports whether mcp-go echoes the id raw exactly (the same value):
// strings always; numbers only when mcp-go's float64 reading (an int64 when
// integral) holds their value exactly, so 2^53+1 or 0.1000000000000000001
// are not.
func idKept(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == '"' {
		return true
	}
	if len(raw) > 64 {
		return false
	}
	if i := bytes.IndexAny(raw, "eE"); i >= 0 {
		// Bound the exponent: big.Rat would expand 1e-999999999.
		if exp, err := strconv.Atoi(string(raw[i+1:])); err != nil || exp < -400 || exp > 400 {
			return false
		}
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return false
	}
	var echoed string
	if f == float64(int64(f)) { // what mcp-go's RequestId.UnmarshalJSON does
		echoed = strconv.FormatInt(int64(f), 10)
	} else {
		echoed = strconv.FormatFloat(f, 'g', -1, 64)
	}
	want, ok1 := new(big.Rat).SetString(string(raw))
	got, ok2 := new(big.Rat).SetString(echoed)
	return ok1 && ok2 && want.Cmp(got) == 0
}

// guardData is the error data of an HTTP-layer rejection.
type guardData struct {
	Code       string `json:"code"`
	HTTPStatus int    `json:"http_status,omitempty"` // 0 over stdio
}

// rpcErrorBody is a JSON-RPC error response (id null unless known).
func rpcErrorBody(id json.RawMessage, code int, msg string, data *guardData) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	type errObj struct {
		Code    int        `json:"code"`
		Message string     `json:"message"`
		Data    *guardData `json:"data,omitempty"`
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   errObj          `json:"error"`
	}{"2.0", id, errObj{code, msg, data}})
	return buf.Bytes() // Encode ends it with a newline
}

// writeGuardError answers a request the HTTP layer refuses with a
// JSON-RPC error whose data carries a stable code and the HTTP status.
func writeGuardError(w http.ResponseWriter, status, rpcCode int, id json.RawMessage, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(rpcErrorBody(id, rpcCode, msg, &guardData{Code: code, HTTPStatus: status}))
}

func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}

// statusWriter records the status and size of a response. It is always an
// http.Flusher (mcp-go streams SSE only through one) and unwraps for
// http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

// Flush implements http.Flusher.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
