package flightsql

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/mcpapi/transport"
)

// requestIDHeader carries the request id of every call back to the client
// (the HTTP transport's X-Request-Id).
const requestIDHeader = "x-request-id"

// anonymous names the caller in logs when auth is off.
const anonymous = "anonymous"

// guard authenticates every gRPC call, gives it a request id and a
// logger, and logs its end.
type guard struct {
	auth *transport.Authenticator // nil: auth off
	// limits are the per-principal rate and in-flight limits; nil: none.
	limits *transport.Limiter
	log    *slog.Logger
	// cut ends every running call when cancelled (the end of a shutdown).
	cut context.Context
}

// bind makes ctx end when the server cuts its calls; call release at the
// end of the call.
func (g *guard) bind(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(g.cut, cancel)
	return ctx, func() { stop(); cancel() }
}

// enter checks the call's bearer token and limits and returns its
// context; call release at the end of the call.
func (g *guard) enter(ctx context.Context, method string) (_ context.Context, release func(), _ error) {
	id := obs.NewRequestID()
	_ = grpc.SetHeader(ctx, metadata.Pairs(requestIDHeader, id))
	principal := anonymous
	if g.auth != nil {
		md, _ := metadata.FromIncomingContext(ctx)
		var authz string
		if v := md.Get("authorization"); len(v) > 0 {
			authz = v[0]
		}
		p, ok := g.auth.Authenticate(authz)
		if !ok {
			msg := "unauthorized: missing bearer token (send the metadata authorization: Bearer <token>)"
			if authz != "" {
				msg = "unauthorized: invalid bearer token"
			}
			// Failed attempts share the anonymous budget: guessing is
			// throttled without touching any real principal's.
			if _, err := g.admit(ctx, anonymous); err != nil {
				g.log.Warn("flightsql call refused", "request_id", id, "method", method, "reason", "rate_limited")
				return ctx, nil, err
			}
			g.log.Warn("flightsql call refused", "request_id", id, "method", method, "reason", "unauthorized")
			return ctx, nil, status.Error(codes.Unauthenticated, msg)
		}
		principal = p
		ctx = obs.WithPrincipal(ctx, p)
	}
	release, err := g.admit(ctx, principal)
	if err != nil {
		g.log.Warn("flightsql call refused", "request_id", id, "method", method, "principal", principal, "reason", strings.SplitN(status.Convert(err).Message(), ":", 2)[0])
		return ctx, nil, err
	}
	return obs.WithRequest(ctx, g.log.With("principal", principal), id), release, nil
}

// done logs the end of a call.
func done(ctx context.Context, method string, start time.Time, err error) {
	l := obs.Logger(ctx)
	d := float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		l.Info("flightsql call", "method", shortMethod(method), "ms", d, "code", status.Code(err).String(), "error", err.Error())
		return
	}
	l.Info("flightsql call", "method", shortMethod(method), "ms", d, "code", "OK")
}

func shortMethod(m string) string { return m[strings.LastIndex(m, "/")+1:] }

func (g *guard) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
	start := time.Now()
	ctx, free, err := g.enter(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	defer free()
	ctx, release := g.bind(ctx)
	defer release()
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, panicStatus(ctx, p)
		}
		done(ctx, info.FullMethod, start, err)
	}()
	return h(ctx, req)
}

// panicStatus logs a recovered panic with its stack and returns the
// Internal status the client gets (nothing crashes the server).
func panicStatus(ctx context.Context, p any) error {
	obs.Logger(ctx).Error("panic in flightsql handler", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	return status.Errorf(codes.Internal, "internal: the server log has details (request %s)", obs.RequestID(ctx))
}

func (g *guard) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
	start := time.Now()
	ctx, free, err := g.enter(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	defer free()
	ctx, release := g.bind(ctx)
	defer release()
	defer func() {
		if p := recover(); p != nil {
			err = panicStatus(ctx, p)
		}
		done(ctx, info.FullMethod, start, err)
	}()
	return h(srv, &ctxStream{ServerStream: ss, ctx: ctx})
}

// ctxStream is a server stream with the call's context.
type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }
