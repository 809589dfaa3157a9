package flightsql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"

	"github.com/quarrydb/quarry/mcpapi/transport"
	"github.com/quarrydb/quarry/service"
)

// DefaultShutdownTimeout is how long running calls get to finish when
// the server stops, before their streams are cut.
const DefaultShutdownTimeout = 5 * time.Second

// Options configure the facade.
type Options struct {
	// Addr is the listen address (host:port; port 0 picks a free one).
	Addr string
	// Service runs the statements.
	Service *service.Service
	// Tokens are the accepted bearer tokens (the HTTP transport's); none
	// => auth off, allowed on loopback addresses only.
	Tokens []transport.Token
	// Logger receives the call logs; nil => slog.Default().
	Logger *slog.Logger
	// Alloc allocates the facade's own batches (catalog listings,
	// parameter batches); nil => memory.DefaultAllocator. Query results
	// are allocated by the engine under the service's budgets.
	Alloc memory.Allocator
	// Version is announced in GetSqlInfo; "" => "dev".
	Version string
	// ShutdownTimeout bounds the graceful stop; 0 => DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// Limits applies per-principal rate and in-flight limits to every
	// call (the HTTP transport's, see transport.HTTPFlags.Limiter); nil =>
	// none.
	Limits *transport.Limiter
	// TLSCert and TLSKey are PEM files: serve TLS with them (both or
	// neither; none => plaintext).
	TLSCert, TLSKey string
}

// Server is the Flight SQL facade over one service.
type Server struct {
	fsql.BaseServer
	svc   *service.Service
	alloc memory.Allocator
	log   *slog.Logger
	srv   flight.Server
	wait  time.Duration
	cut   context.CancelFunc // ends every running call
	plans planCache
}

// New validates opts, binds the listener and returns the server (not yet
// serving: call Serve or Run).
func New(opts Options) (*Server, error) {
	if opts.Service == nil {
		return nil, errors.New("flightsql: no service")
	}
	if err := transport.RequireAuth("Flight SQL", opts.Addr, opts.Tokens); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Alloc == nil {
		opts.Alloc = memory.DefaultAllocator
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	s := &Server{svc: opts.Service, alloc: opts.Alloc, log: opts.Logger, wait: opts.ShutdownTimeout}
	s.Alloc = opts.Alloc
	if err := s.registerSQLInfo(opts.Version); err != nil {
		return nil, err
	}
	creds, err := tlsOption(opts.TLSCert, opts.TLSKey)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("--flightsql-addr: %w", err)
	}
	g := &guard{auth: transport.NewAuthenticator(opts.Tokens), limits: opts.Limits, log: opts.Logger}
	g.cut, s.cut = context.WithCancel(context.Background())
	s.srv = flight.NewServerWithMiddleware(nil, append(creds, grpc.ChainUnaryInterceptor(g.unary), grpc.ChainStreamInterceptor(g.stream))...)
	s.srv.InitListener(ln)
	s.srv.RegisterFlightService(fsql.NewFlightServerWithAllocator(s, opts.Alloc))
	return s, nil
}

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.srv.Addr() }

// Run serves until ctx is cancelled, then stops gracefully: running calls
// get the shutdown timeout to finish, then their streams are cut.
func (s *Server) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve() }()
	s.log.Info("flightsql listening", "addr", s.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() { s.srv.Shutdown(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(s.wait):
		s.log.Warn("flightsql: calls still running after the shutdown timeout; cancelling them")
		s.cut()
		<-stopped
	}
	s.cut()
	return nil
}

// registerSQLInfo declares what the server is and can do.
func (s *Server) registerSQLInfo(version string) error {
	infos := []struct {
		id  fsql.SqlInfo
		val any
	}{
		{fsql.SqlInfoFlightSqlServerName, "Quarry"},
		{fsql.SqlInfoFlightSqlServerVersion, version},
		{fsql.SqlInfoFlightSqlServerArrowVersion, arrowVersion},
		{fsql.SqlInfoFlightSqlServerReadOnly, true},
		{fsql.SqlInfoFlightSqlServerSql, true},
		{fsql.SqlInfoFlightSqlServerSubstrait, false},
		{fsql.SqlInfoFlightSqlServerTransaction, int32(0)}, // SQL_SUPPORTED_TRANSACTION_NONE
		{fsql.SqlInfoFlightSqlServerCancel, false},         // cancel the DoGet call instead
		{fsql.SqlInfoFlightSqlServerBulkIngestion, false},
		{fsql.SqlInfoTransactionsSupported, false},
		{fsql.SqlInfoDDLCatalog, false},
		{fsql.SqlInfoDDLSchema, false},
		{fsql.SqlInfoIdentifierQuoteChar, `"`},
	}
	for _, in := range infos {
		if err := s.RegisterSqlInfo(in.id, in.val); err != nil {
			return err
		}
	}
	return nil
}

// arrowVersion is the Arrow format the facade speaks (arrow-go's major).
const arrowVersion = "18"

// flightInfo is the answer to a GetFlightInfo: one endpoint on this
// server whose ticket is tkt.
func (s *Server) flightInfo(desc *flight.FlightDescriptor, schema *arrow.Schema, tkt []byte) *flight.FlightInfo {
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, s.alloc),
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: tkt}}},
		TotalRecords:     -1,
		TotalBytes:       -1,
	}
}
