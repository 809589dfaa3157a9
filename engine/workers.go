package engine

import (
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// workerPool is the machinery the parallel operators share (the merging
// and the radix-partitioned aggregates, agg_parallel.go and agg_radix.go,
// and the partitioned top n per group, topk_group_radix.go): w worker
// goroutines, each working through the items the operator's goroutine
// sends it, in the order sent. The first error (a worker's, or the
// query's cancellation) stops every worker; items sent or queued after it
// are only released.
type workerPool[T any] struct {
	parent  context.Context
	ctx     context.Context
	cancel  context.CancelFunc
	in      []chan T
	errs    []error
	release func(T)
	wg      sync.WaitGroup
}

// startWorkers starts w workers: worker j calls work(j, x) for every x
// sent to it until an error stops the pool; release(x) follows every x.
func startWorkers[T any](ctx context.Context, w int, work func(j int, x T) error, release func(T)) *workerPool[T] {
	p := &workerPool[T]{parent: ctx, in: make([]chan T, w), errs: make([]error, w), release: release}
	p.ctx, p.cancel = context.WithCancel(ctx)
	for j := range w {
		p.in[j] = make(chan T, 2)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for x := range p.in[j] {
				if p.errs[j] == nil && p.ctx.Err() == nil {
					if p.errs[j] = work(j, x); p.errs[j] != nil {
						p.cancel()
					}
				}
				p.release(x)
			}
		}()
	}
	return p
}

// send hands x to worker j; false (x released) when the pool is stopping.
func (p *workerPool[T]) send(j int, x T) bool {
	select {
	case p.in[j] <- x:
		return true
	case <-p.ctx.Done():
		p.release(x)
		return false
	}
}

// drive gives deal the prefix batches (still the caller's), then every
// batch of in until it ends (each released after deal; deal retains what
// it sends), stopping early when deal returns false (the pool is
// stopping). Then the workers finish their queues and drive returns the
// first error: a worker's, in's, the query's cancellation.
func (p *workerPool[T]) drive(in op, prefix []arrow.RecordBatch, deal func(arrow.RecordBatch) bool) error {
	defer p.cancel()
	var perr error
	ok := true
	for _, b := range prefix {
		if ok = deal(b); !ok {
			break
		}
	}
	for ok && p.ctx.Err() == nil {
		b, err := in.next()
		if err != nil {
			perr = err
			break
		}
		if b == nil {
			break
		}
		ok = deal(b)
		b.Release()
	}
	for _, c := range p.in {
		close(c)
	}
	p.wg.Wait()
	for _, err := range p.errs {
		if err != nil {
			return err
		}
	}
	if perr != nil {
		return perr
	}
	return p.parent.Err()
}
