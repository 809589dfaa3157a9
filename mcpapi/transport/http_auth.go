package transport

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
)

// MinTokenLength is the shortest bearer token Quarry accepts. Tokens guard
// a server that may be reachable from a network, so they must be long
// random strings (e.g. `openssl rand -hex 32`).
const MinTokenLength = 16

// EnvAuthTokens is the environment variable holding comma-separated bearer
// tokens (bare tokens, no principal names).
const EnvAuthTokens = "QUARRY_AUTH_TOKENS"

// Token is one accepted bearer token and the principal it authenticates.
// Its String and GoString methods never reveal the secret.
type Token struct {
	// Principal names the caller in logs and scopes its result handles and
	// limits. Tokens given without a name get "token-" + the first 8 hex
	// digits of the token's SHA-256.
	Principal string
	// Secret is the token itself, as sent in "Authorization: Bearer <secret>".
	Secret string
}

// String returns the principal only.
func (t Token) String() string { return "Token(" + t.Principal + ")" }

// GoString returns the principal only.
func (t Token) GoString() string { return t.String() }

// TokenSources are the places bearer tokens come from. LoadTokens merges
// them.
type TokenSources struct {
	// Flags are the values of --auth-token (bare tokens).
	Flags []string
	// Env is the value of QUARRY_AUTH_TOKENS: comma-separated bare tokens.
	Env string
	// File is the path of --auth-token-file: one token per line, optionally
	// "name:token"; blank lines and lines starting with # are ignored.
	File string
}

// LoadTokens reads and validates every token of src. A token listed twice
// is kept once (with its first principal). Error messages never contain a
// token.
func LoadTokens(src TokenSources) ([]Token, error) {
	var out []Token
	seen := map[string]bool{}
	add := func(where string, t Token) error {
		if err := validToken(t.Secret); err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		if t.Principal == "" {
			t.Principal = anonymousPrincipal(t.Secret)
		}
		if !seen[t.Secret] {
			seen[t.Secret] = true
			out = append(out, t)
		}
		return nil
	}
	for i, s := range src.Flags {
		if err := add(fmt.Sprintf("--auth-token #%d", i+1), Token{Secret: strings.TrimSpace(s)}); err != nil {
			return nil, err
		}
	}
	n := 0
	for s := range strings.SplitSeq(src.Env, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n++
		if err := add(fmt.Sprintf("%s entry #%d", EnvAuthTokens, n), Token{Secret: s}); err != nil {
			return nil, err
		}
	}
	if src.File != "" {
		f, err := os.Open(src.File)
		if err != nil {
			return nil, fmt.Errorf("--auth-token-file: %w", err)
		}
		defer f.Close()
		toks, err := ParseTokenFile(f)
		if err != nil {
			return nil, fmt.Errorf("--auth-token-file %s: %w", src.File, err)
		}
		if len(toks) == 0 {
			return nil, fmt.Errorf("--auth-token-file %s holds no tokens", src.File)
		}
		for _, t := range toks {
			if err := add("--auth-token-file "+src.File, t); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// ParseTokenFile parses a token file: one token per line, optionally
// "name:token" (split at the first colon, so a named token may itself
// contain colons); blank lines and lines starting with # are ignored.
// Names are 1-64 characters of [A-Za-z0-9._@-].
func ParseTokenFile(r io.Reader) ([]Token, error) {
	var out []Token
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		t := Token{Secret: s}
		if name, secret, ok := strings.Cut(s, ":"); ok {
			if !validPrincipal(name) {
				return nil, fmt.Errorf("line %d: principal name must be 1-64 characters of [A-Za-z0-9._@-]", line)
			}
			t = Token{Principal: name, Secret: secret}
		}
		if err := validToken(t.Secret); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func validToken(s string) error {
	if len(s) < MinTokenLength {
		return fmt.Errorf("token is shorter than %d characters (use e.g. `openssl rand -hex 32`)", MinTokenLength)
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return fmt.Errorf("token contains a space, control or non-ASCII character")
		}
	}
	return nil
}

func validPrincipal(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '@' || c == '-') {
			return false
		}
	}
	return true
}

// anonymousPrincipal names an unnamed token by a short hash: stable across
// restarts, distinct per token, and useless for guessing it.
func anonymousPrincipal(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "token-" + hex.EncodeToString(sum[:4])
}

// authenticator checks bearer tokens in constant time.
type authenticator struct {
	sums       [][sha256.Size]byte
	principals []string
}

func newAuthenticator(tokens []Token) *authenticator {
	if len(tokens) == 0 {
		return nil
	}
	a := &authenticator{}
	for _, t := range tokens {
		a.sums = append(a.sums, sha256.Sum256([]byte(t.Secret)))
		a.principals = append(a.principals, t.Principal)
	}
	return a
}

// authenticate returns the principal of the bearer token in an
// Authorization header value. It hashes the candidate (so every comparison
// is over equal lengths) and compares it with every configured token, with
// no early exit, so timing reveals neither which token matched nor how much
// of one did.
func (a *authenticator) authenticate(header string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	match, idx := 0, 0
	for i := range a.sums {
		eq := subtle.ConstantTimeCompare(sum[:], a.sums[i][:])
		idx = subtle.ConstantTimeSelect(eq&^match&1, i, idx)
		match |= eq
	}
	if match != 1 {
		return "", false
	}
	return a.principals[idx], true
}

// IsLoopbackAddr reports whether a listen address (host:port) binds only
// a loopback interface: "localhost" or a loopback IP. An empty host
// (":8765", all interfaces), 0.0.0.0, :: and any other host name are not
// loopback.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
