package service

import (
	"context"
	"time"

	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
)

// maxRequeues bounds how many times one request runs its query again
// after giving its memory back to other queries.
const maxRequeues = 8

// requeued runs one execution of the query (run, entering the server-wide
// memory pool as adm says) and, while it fails because the query gave its
// memory back to a query that started earlier or could not grow while
// other queries held the pool (engine.Admission.Requeue), runs it again as
// a retry: it reserves the bytes it held up front and waits in line, for
// most of what is left of the request's deadline, until the query it gave
// way to and any other retry have ended (engine.Pool). Nothing has been
// delivered when a run fails, so running it again is safe. The last
// failure is returned as it is (resource_exhausted with a hint).
func (q *preparedQuery) requeued(ctx context.Context, run func(context.Context, *engine.Admission) error) error {
	ctx, cancel := q.s.withDeadline(ctx) // one deadline for every run
	defer cancel()
	adm := &engine.Admission{}
	for attempt := 1; ; attempt++ {
		err := run(ctx, adm)
		if err == nil || !adm.Requeue || attempt > maxRequeues || ctx.Err() != nil ||
			qerr.As(err).Code != qerr.CodeResourceExhausted {
			return err
		}
		wait := q.s.requeueWait(ctx)
		obs.Logger(ctx).Info("the query gave its memory back to other queries; it runs again when memory is free",
			"attempt", attempt, "reserve_bytes", adm.Need, "max_wait", wait.Round(time.Millisecond))
		adm.Again(wait)
	}
}

// requeueWait is how long a query that gave its memory back waits in line
// to run again: nine tenths of what is left of its deadline, so that it
// fails with resource_exhausted rather than a timeout when memory does not
// come back.
func (s *Service) requeueWait(ctx context.Context) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return s.cfg.ServerMemoryWait
	}
	return max(time.Until(dl)*9/10, time.Millisecond)
}
