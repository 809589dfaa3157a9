package transport

import (
	"flag"
	"strings"
	"time"
)

// HTTPFlags are the `quarry serve` flags of the HTTP transport (besides
// --addr). Register binds them; Options turns them into HTTPOptions.
type HTTPFlags struct {
	// AllowOrigins are the --allow-origin values (repeatable, comma-separated).
	AllowOrigins []string
	// AuthTokens are the --auth-token values (repeatable).
	AuthTokens []string
	// AuthTokenFile is --auth-token-file.
	AuthTokenFile string
	// RateLimit is --rate-limit, requests/s per principal; 0 disables.
	RateLimit float64
	// RateBurst is --rate-burst.
	RateBurst int
	// MaxBody is --max-body, bytes.
	MaxBody int64
	// MaxConcurrent is --max-concurrent, in-flight requests per principal; 0 disables.
	MaxConcurrent int
	// MaxStreams is --max-streams, open listening streams per principal; 0 disables.
	MaxStreams int
	// MaxSessions is --max-sessions, live legacy sessions per principal; 0 disables.
	MaxSessions int
	// ShutdownTimeout is --shutdown-timeout.
	ShutdownTimeout time.Duration
	// WriteTimeout is --write-timeout (HTTP and stdio).
	WriteTimeout time.Duration
}

// Register adds the HTTP transport flags to fs, with their defaults.
func (f *HTTPFlags) Register(fs *flag.FlagSet) {
	fs.Func("allow-origin", "browser Origin allowed to call the HTTP server besides loopback ones: scheme://host[:port] or scheme://host:* "+
		"(repeatable, comma-separated; requests without Origin are always allowed)", func(s string) error {
		f.AllowOrigins = append(f.AllowOrigins, s)
		return nil
	})
	fs.Func("auth-token", "bearer token accepted by the HTTP server (repeatable; prefer --auth-token-file, flags show in ps); "+
		"also read from $"+EnvAuthTokens+" (comma-separated)", func(s string) error {
		f.AuthTokens = append(f.AuthTokens, s)
		return nil
	})
	fs.StringVar(&f.AuthTokenFile, "auth-token-file", "", "file of bearer tokens, one per line, optionally name:token; # comments. "+
		"Tokens are required when --addr is not a loopback address")
	fs.Float64Var(&f.RateLimit, "rate-limit", DefaultRateLimit, "HTTP requests per second per principal (0: unlimited)")
	fs.IntVar(&f.RateBurst, "rate-burst", DefaultRateBurst, "HTTP requests a principal may send in a burst")
	fs.Int64Var(&f.MaxBody, "max-body", DefaultMaxBody, "largest HTTP request body, bytes (413 beyond)")
	fs.IntVar(&f.MaxConcurrent, "max-concurrent", DefaultMaxConcurrent, "in-flight HTTP requests per principal; more wait up to 1 s, then get 429 (0: unlimited)")
	fs.IntVar(&f.MaxStreams, "max-streams", DefaultMaxStreams, "open listening streams (GET /mcp, server-sent events) per principal; one more gets 429 too_many_streams (0: unlimited)")
	fs.IntVar(&f.MaxSessions, "max-sessions", DefaultMaxSessions, "live MCP sessions (2025-11-25 initialize) per principal; one more gets 429 too_many_sessions until one is deleted or idles out (0: unlimited)")
	fs.DurationVar(&f.ShutdownTimeout, "shutdown-timeout", DefaultShutdownTimeout, "on SIGINT/SIGTERM, how long in-flight HTTP requests get to finish")
	fs.DurationVar(&f.WriteTimeout, "write-timeout", DefaultWriteTimeout, "how long one write to a client that stopped reading may block before its HTTP request or stream, or the stdio session, is ended")
}

// Options loads the tokens (flags, getenv(QUARRY_AUTH_TOKENS), the token
// file) and returns validated options for serving on addr.
func (f *HTTPFlags) Options(addr string, getenv func(string) string) (HTTPOptions, error) {
	tokens, err := LoadTokens(f.Sources(getenv))
	if err != nil {
		return HTTPOptions{}, err
	}
	o := HTTPOptions{
		Addr:            strings.TrimSpace(addr),
		ShutdownTimeout: f.ShutdownTimeout,
		AllowOrigins:    f.AllowOrigins,
		Tokens:          tokens,
		RateLimit:       f.RateLimit,
		RateBurst:       f.RateBurst,
		MaxBody:         f.MaxBody,
		MaxConcurrent:   f.MaxConcurrent,
		MaxStreams:      f.MaxStreams,
		MaxSessions:     f.MaxSessions,
		WriteTimeout:    f.WriteTimeout,
	}
	if o.RateLimit <= 0 {
		o.RateLimit = -1
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = -1
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = -1
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = -1
	}
	if err := o.Validate(); err != nil {
		return HTTPOptions{}, err
	}
	return o, nil
}
