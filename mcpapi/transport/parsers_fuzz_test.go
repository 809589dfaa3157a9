package transport

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// FuzzLoopbackHost: the DNS-rebinding check accepts a Host header only when
// it names a loopback host (and a port 1-65535) and nothing else, as a URL
// parser reads it.
func FuzzLoopbackHost(f *testing.F) {
	for _, s := range []string{"localhost", "LOCALHOST:8765", "127.0.0.1:8765", "127.9.9.9", "[::1]:80", "[::1]",
		"127.0.0.1:8765.evil.com", "localhost.evil.com", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "[::1%eth0]:1",
		"[::ffff:127.0.0.1]:1", "0x7f.0.0.1", "", ":8765", "evil.com:127.0.0.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if !loopbackHost(h) {
			return
		}
		u, err := url.Parse("http://" + h + "/mcp")
		if err != nil || u.Host != h {
			t.Fatalf("accepted %q, which is not a URL host (%v)", h, err)
		}
		name := u.Hostname()
		if strings.EqualFold(name, "localhost") {
			return
		}
		ip, err := netip.ParseAddr(name)
		if err != nil || !ip.IsLoopback() {
			t.Fatalf("accepted %q whose host %q is not loopback", h, name)
		}
	})
}

// FuzzTokenFile: ParseTokenFile never panics, and every token it returns
// is one authenticate accepts (as "Bearer <secret>") for its principal.
func FuzzTokenFile(f *testing.F) {
	for _, s := range []string{
		"# tokens\n0123456789abcdef0123456789abcdef\n",
		"alice:0123456789abcdef0123456789abcdef\nbob:fedcba9876543210fedcba9876543210:with:colons\n",
		"bad name:0123456789abcdef0123456789abcdef\n",
		"short\n",
		"alice:0123456789abcdef 0123456789abcdef\n",
		"\n\n   \n#\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks, err := ParseTokenFile(strings.NewReader(s))
		if err != nil {
			return
		}
		for i := range toks {
			if toks[i].Principal == "" {
				toks[i].Principal = anonymousPrincipal(toks[i].Secret)
			}
		}
		a := newAuthenticator(toks)
		for _, tok := range toks {
			p, ok := a.authenticate("Bearer " + tok.Secret)
			if !ok {
				t.Fatalf("token of %q not accepted", tok.Principal)
			}
			// Two tokens may share a secret; the first one's principal wins.
			if p != tok.Principal && !sameSecretEarlier(toks, tok) {
				t.Fatalf("token of %q authenticated as %q", tok.Principal, p)
			}
		}
		if _, ok := a.authenticate("Bearer "); ok {
			t.Fatal("an empty token was accepted")
		}
	})
}

func sameSecretEarlier(toks []Token, tok Token) bool {
	for _, o := range toks {
		if o.Secret == tok.Secret {
			return o.Principal != tok.Principal
		}
	}
	return false
}
