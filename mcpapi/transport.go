package mcpapi

import (
	"context"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio serves MCP over in/out (newline-delimited JSON-RPC) until in
// closes or ctx is cancelled. Errors of the transport go to logger.
func ServeStdio(ctx context.Context, s *server.MCPServer, in io.Reader, out io.Writer, logger *slog.Logger) error {
	std := server.NewStdioServer(s)
	std.SetErrorLogger(log.New(&slogWriter{logger}, "", 0))
	err := std.Listen(ctx, in, out)
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, io.EOF)) {
		return nil
	}
	return err
}

// HTTPOptions configures ServeHTTP.
type HTTPOptions struct {
	// Addr is host:port to listen on; "" => "127.0.0.1:8765".
	Addr string
	// Logger receives transport logs; nil => slog.Default().
	Logger *slog.Logger
	// Ready is called with the bound address once the listener is up (may be nil).
	Ready func(addr net.Addr)
	// ShutdownTimeout bounds graceful shutdown; 0 => 10 s.
	ShutdownTimeout time.Duration
}

// Handler returns the HTTP handler: Streamable HTTP MCP at /mcp and a
// liveness probe at /healthz.
func Handler(s *server.MCPServer, logger *slog.Logger) http.Handler {
	mcpHTTP := server.NewStreamableHTTPServer(s,
		server.WithEndpointPath("/mcp"),
		server.WithSessionIdleTTL(30*time.Minute),
		server.WithStreamableHTTPLogger(logger),
	)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpHTTP)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok\n")
	})
	return mux
}

// ServeHTTP serves Handler on opts.Addr until ctx is cancelled, then shuts
// down gracefully.
func ServeHTTP(ctx context.Context, s *server.MCPServer, opts HTTPOptions) error {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:8765"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 10 * time.Second
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           Handler(s, opts.Logger),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(&slogWriter{opts.Logger}, "", 0),
	}
	if opts.Ready != nil {
		opts.Ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), opts.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
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
