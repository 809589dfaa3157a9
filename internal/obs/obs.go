// Package obs owns request-scoped observability: the request id carried in
// a context and a slog.Logger that stamps it on every line. Logs always go
// to stderr (stdout belongs to the stdio transport).
package obs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"strings"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyLogger
	keyPrincipal
)

// NewRequestID returns a fresh random request id ("r_" + 16 hex digits).
func NewRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "r_" + hex.EncodeToString(b[:])
}

// WithRequest returns ctx carrying id and a logger derived from base that
// adds request_id=id to every line.
func WithRequest(ctx context.Context, base *slog.Logger, id string) context.Context {
	if base == nil {
		base = slog.Default()
	}
	ctx = context.WithValue(ctx, keyRequestID, id)
	return context.WithValue(ctx, keyLogger, base.With("request_id", id))
}

// RequestID returns the request id in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

// Logger returns the request logger in ctx, or slog.Default().
func Logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(keyLogger).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// WithPrincipal returns ctx carrying the authenticated principal name.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, keyPrincipal, principal)
}

// Principal returns the authenticated principal in ctx, or "" when auth is off.
func Principal(ctx context.Context) string {
	p, _ := ctx.Value(keyPrincipal).(string)
	return p
}

// NewLogger builds the process logger: format "json" or "text" (default),
// level "debug", "info" (default), "warn" or "error".
func NewLogger(w io.Writer, format, level string) *slog.Logger {
	var lv slog.Level
	switch strings.ToLower(level) {
	case "debug":
		lv = slog.LevelDebug
	case "warn", "warning":
		lv = slog.LevelWarn
	case "error":
		lv = slog.LevelError
	default:
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv}
	if strings.ToLower(format) == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// ValidRequestID reports whether an incoming X-Request-Id may be used as
// is: 1-128 characters of [A-Za-z0-9._-]. Anything else is replaced by a
// fresh id, so that log lines cannot be forged or bloated through it.
func ValidRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
