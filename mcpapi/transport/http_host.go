package transport

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// hostAllowed is the DNS-rebinding check: a request that arrived on a
// loopback connection must name a loopback host in its Host header, exactly
// (loopbackHost). Requests on other interfaces are not checked (they need
// bearer tokens). mcp-go's own check splits host and port loosely and lets
// "127.0.0.1:8765.evil.com" through.
func hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !IsLoopbackAddr(local.String()) {
		return true
	}
	return loopbackHost(r.Host)
}

// loopbackHost reports whether a Host header value is "localhost", an IPv4
// loopback address or a bracketed IPv6 loopback address, optionally
// followed by ":" and a decimal port 1-65535, and nothing else.
func loopbackHost(h string) bool {
	if h == "" {
		return false
	}
	host, port := h, ""
	if rest, ok := strings.CutPrefix(h, "["); ok {
		inner, after, found := strings.Cut(rest, "]")
		if !found {
			return false
		}
		ip, err := netip.ParseAddr(inner)
		if err != nil || !ip.Is6() || ip.Zone() != "" || !ip.IsLoopback() {
			return false
		}
		host = ""
		if after != "" {
			var ok bool
			if port, ok = strings.CutPrefix(after, ":"); !ok {
				return false
			}
		}
	} else if i := strings.IndexByte(h, ':'); i >= 0 {
		host, port = h[:i], h[i+1:]
		if host == "" { // ":8765" names no host (found by FuzzLoopbackHost)
			return false
		}
	}
	if host != "" && !strings.EqualFold(host, "localhost") {
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.Is4() || !ip.IsLoopback() {
			return false
		}
	}
	if port == "" {
		return !strings.HasSuffix(h, ":")
	}
	if len(port) > 5 || strings.TrimLeft(port, "0123456789") != "" {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}
