package flightsql

import (
	"context"
	"fmt"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// retryAfterHeader tells a refused client how many seconds to wait (the
// HTTP transport's Retry-After).
const retryAfterHeader = "retry-after"

// admit applies the per-principal limits (Options.Limits) to one call:
// its rate budget, then an in-flight slot held until release. A refused
// call gets RESOURCE_EXHAUSTED with a retry-after header.
func (g *guard) admit(ctx context.Context, principal string) (release func(), err error) {
	if g.limits == nil {
		return func() {}, nil
	}
	if ok, retry := g.limits.Admit(ctx, principal); !ok {
		_ = grpc.SetHeader(ctx, metadata.Pairs(retryAfterHeader, strconv.Itoa(retry)))
		return nil, status.Error(codes.ResourceExhausted,
			fmt.Sprintf("rate_limited: rate limit of %g calls/s exceeded; retry after %d s", g.limits.Rate(), retry))
	}
	release, ok := g.limits.Acquire(ctx, principal)
	if !ok {
		_ = grpc.SetHeader(ctx, metadata.Pairs(retryAfterHeader, "1"))
		return nil, status.Error(codes.ResourceExhausted,
			fmt.Sprintf("too_many_in_flight: more than %d calls in flight; retry after 1 s", g.limits.MaxConcurrent()))
	}
	return release, nil
}
