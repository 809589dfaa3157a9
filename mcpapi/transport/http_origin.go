package transport

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// corsAllowHeaders are the request headers a browser client may send
// cross-origin.
var corsAllowHeaders = []string{
	"Authorization", "Content-Type", "Accept", "MCP-Protocol-Version", "Mcp-Session-Id",
	"Mcp-Method", "Mcp-Name", "Last-Event-ID", "X-Request-Id",
}

// corsExposeHeaders are the response headers a browser client may read.
var corsExposeHeaders = []string{"Mcp-Session-Id", "X-Request-Id", "WWW-Authenticate", "Retry-After"}

// originPolicy decides which browser origins may talk to the server.
// Requests without an Origin header (every non-browser client) are always
// allowed: Origin exists to stop web pages from driving a local server.
type originPolicy struct {
	any      bool            // "*" was listed
	exact    map[string]bool // "scheme://host[:port]"
	anyPort  map[string]bool // "scheme://host" of "scheme://host:*"
	loopback bool            // http(s)://localhost|127.0.0.1|[::1] on any port
}

// newOriginPolicy parses allow-list entries: "scheme://host[:port]",
// "scheme://host:*" (any port), "null" or "*" (any origin). Each entry may
// hold several comma-separated origins. Loopback origins are always
// allowed.
func newOriginPolicy(entries []string) (*originPolicy, error) {
	p := &originPolicy{exact: map[string]bool{}, anyPort: map[string]bool{}, loopback: true}
	for _, e := range entries {
		for o := range strings.SplitSeq(e, ",") {
			o = strings.TrimSpace(o)
			switch {
			case o == "":
				continue
			case o == "*":
				p.any = true
				continue
			case o == "null":
				p.exact["null"] = true
				continue
			}
			base, wildcard := strings.CutSuffix(o, ":*")
			norm, err := normalizeOrigin(base)
			if err != nil {
				return nil, fmt.Errorf("--allow-origin %q: %v (want scheme://host[:port], scheme://host:*, null or *)", o, err)
			}
			if wildcard {
				p.anyPort[norm] = true
			} else {
				p.exact[norm] = true
			}
		}
	}
	return p, nil
}

// normalizeOrigin returns "scheme://host[:port]" in lower case, or an
// error when s is not a bare origin.
func normalizeOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	if err != nil {
		return "", err
	}
	if u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("missing scheme or host")
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("an origin has no user, path, query or fragment")
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// allowed reports whether a request Origin header value may proceed. An
// empty origin (no header) is allowed.
func (p *originPolicy) allowed(origin string) bool {
	if origin == "" || p.any {
		return true
	}
	if origin == "null" {
		return p.exact["null"]
	}
	norm, err := normalizeOrigin(origin)
	if err != nil {
		return false
	}
	if p.exact[norm] {
		return true
	}
	u, _ := url.Parse(norm)
	if p.anyPort[u.Scheme+"://"+strings.ToLower(u.Hostname())] || p.anyPort[u.Scheme+"://"+hostBracketed(u.Hostname())] {
		return true
	}
	if p.loopback && (u.Scheme == "http" || u.Scheme == "https") {
		switch u.Hostname() {
		case "localhost", "127.0.0.1", "::1":
			return true
		}
	}
	return false
}

func hostBracketed(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// applyCORS decorates the response to an allowed cross-origin request. It
// reports whether r is a CORS preflight, which the caller answers with 204
// and nothing else.
func applyCORS(w http.ResponseWriter, r *http.Request) (preflight bool) {
	h := w.Header()
	h.Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", strings.Join(corsExposeHeaders, ", "))
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
	h.Set("Access-Control-Allow-Headers", strings.Join(corsAllowHeaders, ", "))
	h.Set("Access-Control-Max-Age", "600")
	return true
}
