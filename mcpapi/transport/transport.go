package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/console"
)

// ServeStdio serves MCP over in/out (newline-delimited JSON-RPC) until in
// closes or ctx is cancelled, with the default StdioOptions; errors of the
// transport go to logger. See ServeStdioWith.
func ServeStdio(ctx context.Context, s *server.MCPServer, in io.Reader, out io.Writer, logger *slog.Logger) error {
	return ServeStdioWith(ctx, s, in, out, StdioOptions{Logger: logger})
}

// ServeStdioWith serves MCP over in/out (newline-delimited JSON-RPC) until
// in closes or ctx is cancelled, or the client stops reading out (a write
// blocked for opts.WriteTimeout: ErrClientStoppedReading, see
// stdio_bounds.go).
// Messages that are valid JSON but not valid JSON-RPC (batches, non-objects,
// a non-string method, an object with neither method nor result) are
// answered -32600 here, as over HTTP; mcp-go would report them as parse
// errors or drop them. Requests are run here too (stdioCalls), so that
// their number is bounded and tool results are written by appendMessage;
// notifications and the client's responses are served by mcp-go's stdio
// server.
func ServeStdioWith(ctx context.Context, s *server.MCPServer, in io.Reader, out io.Writer, opts StdioOptions) error {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	std := server.NewStdioServer(s)
	// Requests do not reach mcp-go's worker pool (stdioCalls runs them);
	// a few workers are left for any that would.
	server.WithWorkerPoolSize(4)(std)
	server.WithQueueSize(256)(std)
	std.SetErrorLogger(log.New(&slogWriter{logger}, "", 0))
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	timeout := opts.WriteTimeout
	if timeout <= 0 {
		timeout = DefaultWriteTimeout
	}
	lw := newStdioWriter(out, timeout, func() {
		logger.Warn("client stopped reading: ending the stdio session", "write_timeout", timeout.String())
		stop()
	})
	defer lw.Close()
	calls := newStdioCalls(s, lw, logger)
	// mcp-go builds the session's context (the client session that
	// elicitation, logging and progress notifications need) when it
	// starts listening; tool calls run under it.
	std.SetContextFunc(func(c context.Context) context.Context {
		calls.start(c)
		return c
	})
	pr, pw := io.Pipe()
	go filterStdio(in, pw, lw, calls)
	err := std.Listen(ctx, pr, lw)
	_ = pr.Close()
	calls.stop()
	if lw.Stalled() {
		return ErrClientStoppedReading
	}
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, io.EOF)) {
		return nil
	}
	return err
}

// filterStdio copies lines from in to pw, answering invalid JSON-RPC
// envelopes itself on out and handing tool calls to calls.
func filterStdio(in io.Reader, pw *io.PipeWriter, out io.Writer, calls *stdioCalls) {
	br := bufio.NewReader(in)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if id, msg, call := checkEnvelope(line); msg != "" {
				if _, werr := out.Write(rpcErrorBody(id, rpcInvalidRequest, msg, nil)); werr != nil {
					_ = pw.CloseWithError(werr)
					return
				}
			} else if !(call && calls.offer(line)) {
				if _, werr := pw.Write(line); werr != nil {
					return // the server stopped reading
				}
			}
		}
		if err != nil {
			calls.inputClosed()
			_ = pw.CloseWithError(err) // io.EOF reads as a clean close
			return
		}
	}
}

// HTTPOptions configures NewHTTPHandler and ServeHTTP. The zero value of a
// field means its default; a negative limit means "no limit".
type HTTPOptions struct {
	// Download, when set, serves signed artifact downloads at /artifacts/
	// and gives file results a download_url (NewDownloader).
	Download Downloader
	// Metrics, when set, is served at /metrics (GET), to token holders
	// only when tokens are configured.
	Metrics http.Handler
	// OnReject, when set, is told the code of every request a guard
	// rejects (unauthorized, forbidden_origin, rate_limited, ...).
	OnReject func(code string)
	// Addr is host:port to listen on; "" => "127.0.0.1:8765". A non-loopback
	// address requires Tokens.
	Addr string
	// Logger receives transport and access logs; nil => slog.Default().
	Logger *slog.Logger
	// Ready is called with the bound address once the listener is up (may be nil).
	Ready func(addr net.Addr)
	// ShutdownTimeout bounds graceful shutdown: in-flight requests get this
	// long to finish after ctx ends, then connections are closed; 0 => 10 s.
	ShutdownTimeout time.Duration

	// AllowOrigins lists the browser origins allowed besides loopback ones
	// (http(s)://localhost, 127.0.0.1 and [::1] on any port, always
	// allowed): "scheme://host[:port]", "scheme://host:*" (any port),
	// "null" or "*" (any origin; unsafe). Entries may be comma-separated.
	// Requests with another Origin get 403; requests without one (non-browser
	// clients) are allowed.
	AllowOrigins []string
	// Tokens are the accepted bearer tokens. Empty disables authentication,
	// which is only allowed on a loopback Addr.
	Tokens []Token
	// RateLimit is the sustained requests per second of one principal (all
	// unauthenticated requests share one); 0 => 20, negative => unlimited.
	RateLimit float64
	// RateBurst is how many requests one principal may send at once; 0 => 40.
	RateBurst int
	// MaxBody is the largest request body in bytes (413 beyond); 0 => 4 MiB.
	MaxBody int64
	// MaxConcurrent is the in-flight POST requests of one principal; a
	// request beyond it waits up to 1 s for a slot, then gets 429;
	// 0 => 8, negative => unlimited.
	MaxConcurrent int
	// MaxStreams is the open listening streams (GET /mcp, server-sent
	// events) of one principal; one more gets 429 too_many_streams;
	// 0 => 4, negative => unlimited.
	MaxStreams int
	// MaxSessions is the live legacy (2025-11-25) sessions of one
	// principal; one more initialize gets 429 too_many_sessions; a session
	// ends on DELETE or after SessionIdleTTL idle; 0 => 64, negative =>
	// unlimited.
	MaxSessions int
	// WriteTimeout is how long one write to a client may block (a client
	// that stopped reading) before its request or stream is ended;
	// 0 => 30 s.
	WriteTimeout time.Duration
	// SessionIdleTTL is how long the transport state of an idle legacy
	// (2025-11-25 era) MCP session is kept; 0 => 30 min.
	SessionIdleTTL time.Duration
	// Console, when not nil, serves the web console at / (and its assets)
	// and the instruction page browsers get for GET /mcp.
	Console *console.Handler
	// Readiness reports whether the server can answer queries (nil => always);
	// /readyz answers 503 while it returns an error.
	Readiness func() error
}

// withDefaults fills in the zero fields.
func (o HTTPOptions) withDefaults() HTTPOptions {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:8765"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.RateLimit == 0 {
		o.RateLimit = DefaultRateLimit
	}
	if o.RateBurst <= 0 {
		o.RateBurst = DefaultRateBurst
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxConcurrent == 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	if o.SessionIdleTTL <= 0 {
		o.SessionIdleTTL = DefaultSessionIdleTTL
	}
	if o.MaxStreams == 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	return o
}

// Validate checks the options before anything is opened or bound: the
// allowed origins must parse, and serving on a non-loopback address
// requires bearer tokens.
func (o HTTPOptions) Validate() error {
	o = o.withDefaults()
	if _, err := newOriginPolicy(o.AllowOrigins); err != nil {
		return err
	}
	return RequireAuth("", o.Addr, o.Tokens)
}

// ServeHTTP serves an HTTPHandler on opts.Addr until ctx is cancelled, then
// shuts down gracefully: it stops accepting connections, ends the MCP
// listening streams, lets in-flight requests finish for up to
// opts.ShutdownTimeout and then closes what is left.
func ServeHTTP(ctx context.Context, s *server.MCPServer, opts HTTPOptions) error {
	opts = opts.withDefaults()
	h, err := NewHTTPHandler(s, opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(&slogWriter{opts.Logger}, "", 0),
	}
	srv.RegisterOnShutdown(func() { _ = h.Close(context.Background()) })
	if opts.Ready != nil {
		opts.Ready(ln.Addr())
	}
	opts.Logger.Info("serving MCP over HTTP", "addr", ln.Addr().String(), "endpoint", MCPPath,
		"auth", len(opts.Tokens) > 0, "tokens", len(opts.Tokens))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	opts.Logger.Info("shutting down: finishing in-flight requests", "timeout", opts.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), opts.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		opts.Logger.Warn("shutdown timeout passed: closing the remaining connections", "err", err)
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	opts.Logger.Info("stopped")
	return nil
}

// slogWriter adapts log.Logger output to slog at warn level.
type slogWriter struct{ l *slog.Logger }

func (w *slogWriter) Write(p []byte) (int, error) {
	if w.l == nil {
		w.l = slog.Default()
	}
	w.l.Warn(string(trimNL(p)), "component", "transport")
	return len(p), nil
}

func trimNL(p []byte) []byte {
	for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
		p = p[:len(p)-1]
	}
	return p
}
