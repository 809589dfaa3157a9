package catalog

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// Reading a Parquet scan's row groups ahead, in parallel. A parquet-go
// scan reads its first row group on the caller's goroutine (a LIMIT
// query that stops there decodes nothing more); when the caller asks for
// more and at least parquetReadAheadMin row groups are left, the rest
// go to workers: worker k reads the left row groups k, k+w, k+2w, ...
// with a reader of its own (its own pages and dictionaries; the file,
// its footer and the pushed tests are shared, read only) and hands its
// batches over a channel holding readAheadDepth of them. The caller takes
// the batches worker by worker, row group by row group, so the scan
// returns the same batches in the same order as the serial read: the
// workers only decode ahead, while the caller's operators work.
//
// The workers allocate through the scan's allocator (the query's budget
// counts them; at most w×(readAheadDepth+1) batches are in flight beyond
// the caller's). A row group parquet-go refuses goes to pqarrow, whose
// file reader the readers share: they take turns (fallbackMu). Cancelling
// the query stops the workers at their next batch; releasing the scan
// stops them, releases the batches in flight and waits for them.

// parquetReadAheadWorkers is the workers of a read-ahead (below 2: off);
// a variable so that tests can take either path on any machine.
var parquetReadAheadWorkers = func() int { return min(runtime.GOMAXPROCS(0), 4) }

// parquetReadAheadMin is the row groups that must be left after the first
// for the rest to be read ahead.
const parquetReadAheadMin = 2

// readAheadDepth is the batches a worker decodes ahead of the caller.
const readAheadDepth = 2

// parquetReadAheads counts the scans that read ahead (tests read it).
var parquetReadAheads atomic.Int64

// pqgoParallel is the workers of one scan's read-ahead.
type pqgoParallel struct {
	workers []*pqgoWorker
	turn    int // the worker whose row group comes next
	left    int // row groups not yet returned in full
	stop    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

// pqgoWorker reads its row groups (r.rgs) into out, closed when it ends.
type pqgoWorker struct {
	r   *pqgoReader
	out chan pqgoMsg
}

// pqgoMsg is a worker's batch, the end of its row group, or its error;
// dropped counts the rows pushed filters dropped since its last message.
type pqgoMsg struct {
	rec     arrow.RecordBatch
	dropped int64
	end     bool
	err     error
}

// readAhead starts the read-ahead of the row groups after the current
// one when that is done and enough are left (it reports whether it did).
func (r *pqgoReader) readAhead() bool {
	if r.at < 0 || r.left > 0 || r.fallback != nil || r.at+1 >= len(r.rgs) {
		return false
	}
	rest := r.rgs[r.at+1:]
	w := min(parquetReadAheadWorkers(), len(rest))
	if w < 2 || len(rest) < parquetReadAheadMin || r.ctx.Err() != nil {
		return false
	}
	r.closeColumns()
	r.fallbackMu = new(sync.Mutex)
	p := &pqgoParallel{left: len(rest), stop: make(chan struct{})}
	for k := range w {
		var mine []int
		for i := k; i < len(rest); i += w {
			mine = append(mine, rest[i])
		}
		p.workers = append(p.workers, &pqgoWorker{r: r.clone(mine), out: make(chan pqgoMsg, readAheadDepth)})
	}
	r.at = len(r.rgs) // the serial read is over
	for _, wk := range p.workers {
		p.wg.Go(func() { wk.run(p.stop) })
	}
	r.par = p
	parquetReadAheads.Add(1)
	return true
}

// clone is a reader of the same columns of the row groups rgs, with
// positions of its own.
func (r *pqgoReader) clone(rgs []int) *pqgoReader {
	cols := make([]*pqgoCol, len(r.cols))
	for i, c := range r.cols {
		cols[i] = &pqgoCol{leaf: c.leaf, isDict: c.isDict, dt: c.dt, strs: c.strs, newOut: c.newOut}
	}
	return &pqgoReader{ctx: r.ctx, mem: r.mem, schema: r.schema, fh: r.fh, pf: r.pf, fr: r.fr, leaves: r.leaves,
		cols: cols, rgs: rgs, batch: r.batch, at: -1, tests: r.tests, fallbackMu: r.fallbackMu}
}

// run reads the worker's row groups until they end, an error, or stop.
func (w *pqgoWorker) run(stop <-chan struct{}) {
	r := w.r
	defer close(w.out)
	defer r.close()
	var dropped int64
	send := func(m pqgoMsg) bool {
		m.dropped, dropped = dropped, 0
		select {
		case w.out <- m:
			return true
		case <-stop:
			if m.rec != nil {
				m.rec.Release()
			}
			return false
		}
	}
	defer func() {
		if p := recover(); p != nil {
			send(pqgoMsg{err: fmt.Errorf("decoder panic: %v", p)})
		}
	}()
	for r.at+1 < len(r.rgs) {
		r.at++
		if err := r.ctx.Err(); err != nil {
			send(pqgoMsg{err: err})
			return
		}
		if err := r.openRowGroup(r.rgs[r.at]); err != nil {
			send(pqgoMsg{err: err})
			return
		}
		for {
			rec, n, err := r.groupBatch()
			dropped += n
			if err == nil {
				err = r.ctx.Err()
			}
			if err != nil {
				if rec != nil {
					rec.Release()
				}
				send(pqgoMsg{err: err})
				return
			}
			if rec == nil {
				break
			}
			if rec.NumRows() == 0 && len(r.tests) > 0 { // no row passed
				rec.Release()
				continue
			}
			if !send(pqgoMsg{rec: rec}) {
				return
			}
		}
		if !send(pqgoMsg{end: true}) {
			return
		}
	}
}

// errReadAheadEnded is a worker that ended before its row groups did
// (which run never does).
var errReadAheadEnded = errors.New("parquet read-ahead: a worker ended early")

// next returns the next batch in file order (nil at the end), adding the
// rows filters dropped to stats.
func (p *pqgoParallel) next(stats *ScanStats) (arrow.RecordBatch, error) {
	for p.left > 0 {
		m, ok := <-p.workers[p.turn].out
		if !ok {
			return nil, errReadAheadEnded
		}
		if stats != nil {
			stats.RowsRead += m.dropped
		}
		switch {
		case m.err != nil:
			return nil, m.err
		case m.end:
			p.left--
			p.turn = (p.turn + 1) % len(p.workers)
		case m.rec != nil:
			return m.rec, nil
		}
	}
	return nil, nil
}

// close stops the workers, releases the batches in flight and waits for
// the workers to end (and release their readers).
func (p *pqgoParallel) close() {
	p.once.Do(func() { close(p.stop) })
	for _, w := range p.workers {
		for m := range w.out {
			if m.rec != nil {
				m.rec.Release()
			}
		}
	}
	p.wg.Wait()
}
