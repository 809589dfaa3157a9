package transport

import "fmt"

// Authenticator checks bearer tokens the way the HTTP transport does
// (constant time, principal per token), for other listeners of the same
// server such as the Flight SQL facade. A nil *Authenticator means auth is
// off.
type Authenticator struct{ a *authenticator }

// NewAuthenticator returns the checker of tokens; nil when there are none
// (auth off).
func NewAuthenticator(tokens []Token) *Authenticator {
	a := newAuthenticator(tokens)
	if a == nil {
		return nil
	}
	return &Authenticator{a: a}
}

// Authenticate returns the principal of the bearer token in an
// Authorization header value ("Bearer <token>").
func (a *Authenticator) Authenticate(header string) (string, bool) {
	return a.a.authenticate(header)
}

// RequireAuth is the rule every listener follows: serving on an address
// that is not loopback requires bearer tokens. what names the listener's
// protocol in the error ("" for MCP over HTTP, "Flight SQL").
func RequireAuth(what, addr string, tokens []Token) error {
	if len(tokens) == 0 && !IsLoopbackAddr(addr) {
		if what != "" {
			what += " "
		}
		return fmt.Errorf("refusing to serve %son %s without authentication: it is not a loopback address; "+
			"give bearer tokens with --auth-token-file FILE, --auth-token or %s", what, addr, EnvAuthTokens)
	}
	return nil
}

// Sources are the token sources these flags name, with getenv's
// QUARRY_AUTH_TOKENS (getenv may be nil).
func (f *HTTPFlags) Sources(getenv func(string) string) TokenSources {
	src := TokenSources{Flags: f.AuthTokens, File: f.AuthTokenFile}
	if getenv != nil {
		src.Env = getenv(EnvAuthTokens)
	}
	return src
}
