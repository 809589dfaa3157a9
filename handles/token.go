package handles

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"strings"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Token is the content of a page token: where the next page of a result
// handle starts and how it is shaped.
type Token struct {
	// Handle is the result handle id the token belongs to.
	Handle string
	// Offset is the first row of the page.
	Offset int64
	// Size is the page size in rows.
	Size int64
	// Format is the output format of the page (e.g. "json", "csv").
	Format string
	// MaxBytes is the per-call inline byte cap the page was requested with
	// (0: the server's cap). It is signed with the rest, so a caller cannot
	// raise it, and later pages honour the max_bytes of the first call.
	MaxBytes int64
}

const (
	// tokenVersion 2 added MaxBytes; version 3 the key id and the checksum.
	// Older tokens are refused (tokens do not outlive the process that
	// signed them unless Options.Key is set).
	tokenVersion = 3
	// keyIDLen is the length of the key id, which names the signing key
	// without revealing it: a token signed with another key (by the server
	// before a restart, say) is told apart from a tampered one.
	keyIDLen = 8
	// sumLen is the length of the payload's trailing CRC-32: not a
	// defence (the MAC is), it makes accidental and blind modifications of
	// the payload, the key id included, read as tampering.
	sumLen = 4
	// MaxTokenLen is the longest page token Verify accepts. Tokens signed
	// from Tokens with ordinary handles and formats are far shorter.
	MaxTokenLen = 1024
	macDomain   = "quarry/page-token/v1\x00"
)

var b64 = base64.RawURLEncoding.Strict()

// Sign returns t as an opaque, URL-safe page token:
// base64url(payload) + "." + base64url(HMAC-SHA256(payload)), the payload
// being the version, the key id, t's fields and a CRC-32 of the rest.
func (r *Registry[T]) Sign(t Token) string {
	p := make([]byte, 0, 1+keyIDLen+5*binary.MaxVarintLen64+len(t.Handle)+len(t.Format)+sumLen)
	p = append(p, tokenVersion)
	p = append(p, r.keyID()...)
	p = binary.AppendVarint(p, t.Offset)
	p = binary.AppendVarint(p, t.Size)
	p = binary.AppendVarint(p, t.MaxBytes)
	p = binary.AppendUvarint(p, uint64(len(t.Handle)))
	p = append(p, t.Handle...)
	p = binary.AppendUvarint(p, uint64(len(t.Format)))
	p = append(p, t.Format...)
	p = binary.BigEndian.AppendUint32(p, crc32.ChecksumIEEE(p))
	return b64.EncodeToString(p) + "." + b64.EncodeToString(r.mac(p))
}

// keyID names the registry's key: the first keyIDLen bytes of its HMAC of
// a fixed label (the same key always has the same id).
func (r *Registry[T]) keyID() []byte {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(macDomain + "key-id"))
	return m.Sum(nil)[:keyIDLen]
}

func (r *Registry[T]) mac(p []byte) []byte {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(macDomain))
	m.Write(p)
	return m.Sum(nil)
}

// Verify checks token's signature and that it belongs to handle, and returns
// its content. When handle is "", the handle binding is not checked (the
// returned Token.Handle is still authentic). A well-formed token signed
// with another key (before a restart) returns a qerr.ErrExpired error with
// code qerr.CodeHandleExpired. Any malformed, tampered or truncated token,
// or one for a different handle, returns a qerr.ErrInvalidArgument error
// with code qerr.CodeInvalidPageToken.
// Verify never panics.
func (r *Registry[T]) Verify(token, handle string) (Token, error) {
	if token == "" {
		return Token{}, invalidToken("the page token is empty")
	}
	if len(token) > MaxTokenLen {
		return Token{}, invalidToken("the page token is too long")
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return Token{}, invalidToken("the page token contains characters no token has")
		}
	}
	enc, sig, ok := strings.Cut(token, ".")
	if !ok || strings.Contains(sig, ".") {
		return Token{}, invalidToken("the page token is malformed")
	}
	p, err := b64.DecodeString(enc)
	if err != nil {
		return Token{}, invalidToken("the page token is malformed")
	}
	m, err := b64.DecodeString(sig)
	if err != nil || len(m) != sha256.Size {
		return Token{}, invalidToken("the page token is malformed")
	}
	if !hmac.Equal(m, r.mac(p)) {
		if _, id, ok := decodePayload(p); ok && !hmac.Equal(id, r.keyID()) {
			// Well-formed, signed with another key: by this server before
			// it restarted (or by another instance). Its handle is gone.
			return Token{}, qerr.New(qerr.ErrExpired, qerr.CodeHandleExpired,
				"the page token was issued before the server restarted (or by another server instance): its result handle no longer exists").
				WithHint("result handles do not survive a server restart; re-run the query to get a fresh handle")
		}
		return Token{}, invalidToken("the page token was not issued by this server or was modified")
	}
	t, _, ok := decodePayload(p)
	if !ok {
		// Unreachable for tokens this package signed, unless the key leaked.
		return Token{}, invalidToken("the page token is malformed")
	}
	if handle != "" && t.Handle != handle {
		return Token{}, invalidToken("the page token belongs to a different result handle")
	}
	return t, nil
}

// decodePayload decodes a token payload and returns its key id; ok is
// false unless it is well-formed (version, layout and checksum).
func decodePayload(p []byte) (t Token, keyID []byte, ok bool) {
	if len(p) < 1+keyIDLen+sumLen || p[0] != tokenVersion {
		return t, nil, false
	}
	body, sum := p[:len(p)-sumLen], p[len(p)-sumLen:]
	if binary.BigEndian.Uint32(sum) != crc32.ChecksumIEEE(body) {
		return t, nil, false
	}
	keyID = body[1 : 1+keyIDLen]
	t, ok = decodeFields(body[1+keyIDLen:])
	return t, keyID, ok
}

// decodeFields decodes the token fields of a payload.
func decodeFields(p []byte) (Token, bool) {
	var t Token
	var n int
	if t.Offset, n = binary.Varint(p); n <= 0 {
		return t, false
	}
	p = p[n:]
	if t.Size, n = binary.Varint(p); n <= 0 {
		return t, false
	}
	p = p[n:]
	if t.MaxBytes, n = binary.Varint(p); n <= 0 {
		return t, false
	}
	p = p[n:]
	var s string
	var ok bool
	if s, p, ok = readString(p); !ok {
		return t, false
	}
	t.Handle = s
	if s, p, ok = readString(p); !ok {
		return t, false
	}
	t.Format = s
	return t, len(p) == 0
}

func readString(p []byte) (string, []byte, bool) {
	l, n := binary.Uvarint(p)
	if n <= 0 || l > uint64(len(p)-n) {
		return "", nil, false
	}
	p = p[n:]
	return string(p[:l]), p[l:], true
}

func invalidToken(reason string) error {
	return qerr.Invalid(qerr.CodeInvalidPageToken, "invalid page token: %s", reason).
		WithHint("pass the page token back exactly as it was returned, with the handle it came with; or re-run the query to start over")
}
