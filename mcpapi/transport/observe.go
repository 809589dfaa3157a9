package transport

import "net/http"

// RejectReason groups an HTTP guard's rejection code: auth, origin, rate
// or size ("" for a code that is not a rejection).
func RejectReason(code string) string {
	switch code {
	case codeUnauthorized:
		return "auth"
	case codeForbiddenOrigin, codeForbiddenHost:
		return "origin"
	case codeRateLimited, codeTooManyInFlight, codeTooManyStreams, codeTooManySessions:
		return "rate"
	case codeBodyTooLarge:
		return "size"
	}
	return ""
}

// MetricsPath is where HTTPOptions.Metrics is served.
const MetricsPath = "/metrics"

// serveMetrics serves HTTPOptions.Metrics: with bearer tokens configured
// (always the case off loopback) only to a request carrying a valid one.
func (h *HTTPHandler) serveMetrics(w http.ResponseWriter, r *http.Request, info *requestInfo) {
	if h.opts.Metrics == nil {
		http.NotFound(w, r)
		return
	}
	if !probeMethod(w, r) {
		return
	}
	if h.auth != nil {
		p, ok := h.auth.authenticate(r.Header.Get("Authorization"))
		if !ok {
			info.reject = codeUnauthorized
			w.Header().Set("WWW-Authenticate", `Bearer realm="quarry"`)
			writeGuardError(w, http.StatusUnauthorized, rpcServerError, nil, codeUnauthorized, "/metrics needs a bearer token: send Authorization: Bearer <token>")
			return
		}
		info.principal = p
	}
	h.opts.Metrics.ServeHTTP(w, r)
}
