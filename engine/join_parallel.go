package engine

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// Parallel probe. Once an in-memory build side is indexed it is only read,
// so the probe batches of a join go to workers, each probing with its own
// probe state (a clone of the operator sharing the build side) and
// gathering its own output batches; the operator's goroutine reads the
// probe input, keeps up to probeWindow batches per worker in flight and
// returns the outputs in input order, so the result is the serial one,
// batch for batch. While the output due next is not ready, the
// operator's goroutine probes the batches no worker has started, that one
// first, rather than wait for a worker to be scheduled (on a loaded
// machine the wake-up of another thread can take longer than a batch). A chain of joins (TPC-H's fact table probing one
// dimension after another) then runs its probes on every core, each join
// on its own workers, while the operator goroutine of the lowest join
// reads the scan.
//
// Only joins that emit nothing after the probe side ends and whose probe
// marks nothing on the build side go parallel: not outer joins keeping
// unmatched build rows, nor semi and anti joins that build their left
// side; nor joins with a residual condition (join_residual.go keeps
// candidate pairs across batches), a null-aware anti join, or one whose
// build side is empty (the probe side is not read at all). Memory: the
// batches in flight and their outputs, probeWindow per worker; the
// outputs are allocated on the workers through the query's allocators,
// so the budget counts them as on the operator's goroutine, and a
// worker's budget panic comes back as the batch's error.

// joinWorkers is the number of probe workers (a variable so that tests can
// set it).
var joinWorkers = func() int { return runtime.GOMAXPROCS(0) }

// probeWindow is the probe batches in flight per worker.
const probeWindow = 2

// maxTaskOutputs caps the output batches a worker makes of one probe
// batch. A batch that would make more (a cross join, or keys repeated on
// the build side: one probe row may match thousands of rows) is handed
// back whole and probed on the operator's goroutine, one output batch at
// a time as the consumer asks, so a fan-out never holds more than this
// many outputs per task in memory.
const maxTaskOutputs = 4

// errTaskOverflow: the probe batch makes more than maxTaskOutputs outputs.
var errTaskOverflow = errors.New("join probe task overflow")

// probeTask is one probe batch and, when done is closed, its output.
type probeTask struct {
	b   arrow.RecordBatch
	out []arrow.RecordBatch
	err error
	// overflow: the batch makes more than maxTaskOutputs outputs; b is
	// kept (out is empty) for the operator's goroutine to probe
	overflow bool
	taken    atomic.Bool // by a worker or the operator's goroutine
	done     chan struct{}
}

// parallelProbe is the running workers of one join.
type parallelProbe struct {
	j       *joinOp
	self    *joinOp // the operator goroutine's probe state
	tasks   chan *probeTask
	queue   []*probeTask // handed out, in input order, not yet returned
	window  int
	eof     bool // the probe input ended
	stopped atomic.Bool
	wg      sync.WaitGroup
}

// probesInParallel reports whether the join's probe goes to workers (see
// above); after finishBuild.
func (j *joinOp) probesInParallel() bool {
	return joinWorkers() > 1 && j.p.residual == nil && !j.p.nullAware && j.na == nil &&
		!j.p.buildUnmatched() && !j.p.markOnly() && len(j.build.refs) > 0
}

// startParallel starts the probe workers.
func (j *joinOp) startParallel() {
	w := joinWorkers()
	pp := &parallelProbe{j: j, self: j.probeClone(), tasks: make(chan *probeTask, probeWindow*w), window: probeWindow * w}
	for range w {
		c := j.probeClone()
		pp.wg.Add(1)
		go func() {
			defer pp.wg.Done()
			for t := range pp.tasks {
				if t.taken.CompareAndSwap(false, true) {
					pp.run(c, t)
				}
			}
		}()
	}
	j.par = pp
}

// probeClone is a probe state over j's build side.
func (j *joinOp) probeClone() *joinOp {
	return &joinOp{ex: j.ex, p: j.p, build: j.build, level: j.level, pk: keyVals{noHash: j.pk.noHash}}
}

// run probes task t (taken) with c's state and marks it done.
func (pp *parallelProbe) run(c *joinOp, t *probeTask) {
	if pp.stopped.Load() || pp.j.ex.ctx.Err() != nil {
		t.b.Release()
		t.err = pp.j.ex.ctx.Err()
	} else {
		t.b.Retain()
		t.out, t.err = c.probeBatch(t.b, maxTaskOutputs)
		if t.overflow = errors.Is(t.err, errTaskOverflow); t.overflow {
			t.err = nil
		} else {
			t.b.Release()
		}
	}
	close(t.done)
}

// probeBatch probes the whole batch b (released) and returns its output,
// or errTaskOverflow (and nothing) when it would make more than limit
// output batches.
func (j *joinOp) probeBatch(b arrow.RecordBatch, limit int) (out []arrow.RecordBatch, err error) {
	defer func() {
		b.Release()
		j.pb = nil
		if err != nil {
			for _, o := range j.pending {
				o.Release()
			}
			j.pending = nil
		}
	}()
	defer recoverWorker(&err)
	n := int(b.NumRows())
	j.pb, j.pi, j.started = b, 0, false
	j.pRows, j.bRows = j.pRows[:0], j.bRows[:0] // an earlier batch's error may have left pairs
	j.pk.load(b.Columns(), j.p.probeKeys(), n)
	for j.pi < n {
		j.probe(j.ex.batchSize)
		if err := j.emit(b); err != nil {
			return nil, err
		}
		if len(j.pending) >= limit && j.pi < n {
			return nil, errTaskOverflow
		}
	}
	out, j.pending = j.pending, nil
	return out, nil
}

// nextParallel returns the next output batch of a parallel probe.
func (j *joinOp) nextParallel() (arrow.RecordBatch, error) {
	pp := j.par
	for len(j.pending) == 0 {
		if err := j.ex.ctx.Err(); err != nil {
			return nil, err
		}
		if j.pb != nil { // a task's overflow batch, probed here as the serial join does
			j.probe(j.ex.batchSize)
			if err := j.emit(j.pb); err != nil {
				return nil, err
			}
			if j.pi >= int(j.pb.NumRows()) {
				j.pb.Release()
				j.pb = nil
			}
			continue
		}
		for !pp.eof && len(pp.queue) < pp.window {
			b, err := j.probeIn.next()
			if err != nil {
				return nil, err
			}
			if b == nil {
				pp.eof = true
				break
			}
			t := &probeTask{b: b, done: make(chan struct{})}
			pp.queue = append(pp.queue, t)
			pp.tasks <- t // never blocks: the channel holds window tasks
		}
		if len(pp.queue) == 0 {
			return nil, nil
		}
		t := pp.queue[0]
		pp.help(t)
		<-t.done
		pp.queue[0] = nil
		pp.queue = pp.queue[1:]
		if t.err != nil {
			return nil, t.err
		}
		if t.overflow {
			j.pb, j.pi, j.started = t.b, 0, false
			j.pk.load(t.b.Columns(), j.p.probeKeys(), int(t.b.NumRows()))
			continue
		}
		j.pending = t.out
	}
	b := j.pending[0]
	j.pending = j.pending[1:]
	return b, nil
}

// help probes, on the operator's goroutine, the tasks no worker has
// started, the one due (t) first, until t is done or every task in flight
// is taken: the operator waits only for batches a worker is probing.
func (pp *parallelProbe) help(t *probeTask) {
	for {
		select {
		case <-t.done:
			return
		default:
		}
		helped := false
		for _, u := range pp.queue {
			if u.taken.CompareAndSwap(false, true) {
				pp.run(pp.self, u)
				helped = true
				break
			}
		}
		if !helped {
			return
		}
	}
}

// stop stops the workers (the tasks still queued are dropped) and releases
// the outputs not returned.
func (pp *parallelProbe) stop() {
	pp.stopped.Store(true)
	close(pp.tasks)
	pp.wg.Wait()
	for _, t := range pp.queue {
		for _, b := range t.out {
			b.Release()
		}
		if t.overflow {
			t.b.Release()
		}
	}
	pp.queue = nil
}
