package catalog

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Row groups decoded in parallel: a scan of several row groups decodes up
// to parquetWorkers of them at once, each by its own pqarrow record reader
// (so a query of one column uses every core, and no batch spans two row
// groups: pqarrow concatenates such a batch's pieces, unifying their
// dictionaries), and returns their batches in file order, so the rows come
// in the order a sequential read gives. The row groups are dealt out in
// turn: the reader's caller decodes every workers-th one itself, in its own
// Next (on a loaded machine a goroutine that blocks waits a whole round of
// the OS scheduler to run again, so the caller should rarely wait), and
// workers-1 helper goroutines decode the others, each keeping at most
// rowGroupAhead decoded batches ready. What is in flight is released when
// the reader is.

// parquetWorkers is how many row groups a scan decodes at once.
var parquetWorkers = func() int { return runtime.GOMAXPROCS(0) }

// rowGroupAhead is how many decoded batches a worker keeps ready.
const rowGroupAhead = 4

// rowGroupJob is the read of one row group.
type rowGroupJob struct {
	rg  int
	rr  pqarrow.RecordReader   // made by whoever decodes it (nil until then)
	out chan arrow.RecordBatch // a helper's job: its batches; nil for the caller's
	err error                  // a helper's job: set before out is closed
}

// rowGroupReader reads the leaf columns leaves of the row groups jobs in
// order, decoding ahead in parallel.
type rowGroupReader struct {
	refs    atomic.Int64
	ctx     context.Context
	fr      *pqarrow.FileReader
	leaves  []int
	schema  *arrow.Schema
	workers int
	jobs    []*rowGroupJob
	next    int // the job being read
	cur     arrow.RecordBatch
	err     error
	stop    chan struct{}
	wg      sync.WaitGroup
	closed  bool
}

// newRowGroupReader starts reading rgs (at least one) with workers-1
// helper goroutines (workers > 1). fr's reads must be sequential
// (Props.Parallel false) and it must not change while the reader lives.
func newRowGroupReader(ctx context.Context, fr *pqarrow.FileReader, leaves, rgs []int, workers int) (*rowGroupReader, error) {
	r := &rowGroupReader{ctx: ctx, fr: fr, leaves: leaves, workers: workers, stop: make(chan struct{})}
	r.refs.Store(1)
	for i, rg := range rgs {
		j := &rowGroupJob{rg: rg}
		if !r.mine(i) {
			j.out = make(chan arrow.RecordBatch, rowGroupAhead)
		}
		r.jobs = append(r.jobs, j)
	}
	// The first row group is the caller's; its reader's schema is the scan's.
	first, err := fr.GetRecordReader(ctx, leaves, rgs[:1])
	if err != nil {
		return nil, err
	}
	r.jobs[0].rr = first
	r.schema = first.Schema()
	for h := 1; h < workers && h < len(r.jobs); h++ {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for i := h; i < len(r.jobs); i += workers {
				if !r.decode(r.jobs[i]) {
					return
				}
			}
		}()
	}
	return r, nil
}

// mine reports whether the caller decodes job i itself.
func (r *rowGroupReader) mine(i int) bool { return i%r.workers == 0 }

// decode reads a helper's job j into j.out, then closes it; false when
// the reader stopped or the read failed.
func (r *rowGroupReader) decode(j *rowGroupJob) (ok bool) {
	defer close(j.out)
	defer func() {
		if p := recover(); p != nil {
			j.err = fmt.Errorf("decoder panic: %v", p)
			ok = false
		}
	}()
	rr, err := r.fr.GetRecordReader(r.ctx, r.leaves, []int{j.rg})
	if err != nil {
		j.err = err
		return false
	}
	j.rr = rr
	for rr.Next() {
		b := rr.RecordBatch()
		b.Retain()
		select {
		case j.out <- b:
		case <-r.stop:
			b.Release()
			return false
		}
	}
	j.err = rr.Err()
	return j.err == nil
}

func (r *rowGroupReader) Schema() *arrow.Schema          { return r.schema }
func (r *rowGroupReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch.
//
// Deprecated: use RecordBatch.
func (r *rowGroupReader) Record() arrow.RecordBatch { return r.cur }
func (r *rowGroupReader) Err() error                { return r.err }
func (r *rowGroupReader) Retain()                   { r.refs.Add(1) }

func (r *rowGroupReader) Release() {
	if r.refs.Add(-1) == 0 {
		r.close()
	}
}

// Next implements array.RecordReader: the next batch of the current job,
// decoded here for the caller's jobs, taken from the helper for the others.
func (r *rowGroupReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	for r.err == nil && !r.closed && r.next < len(r.jobs) {
		j := r.jobs[r.next]
		if j.out != nil {
			if b, ok := <-j.out; ok {
				r.cur = b
				return true
			}
			if j.err != nil {
				r.err = j.err
				break
			}
			r.next++
			continue
		}
		if j.rr == nil {
			rr, err := r.fr.GetRecordReader(r.ctx, r.leaves, []int{j.rg})
			if err != nil {
				r.err = err
				break
			}
			j.rr = rr
		}
		if j.rr.Next() {
			r.cur = j.rr.RecordBatch()
			r.cur.Retain()
			return true
		}
		if err := j.rr.Err(); err != nil {
			r.err = err
			break
		}
		j.rr.Release()
		j.rr = nil
		r.next++
	}
	r.close()
	return false
}

// close stops the helpers, waits for them and releases what they hold.
func (r *rowGroupReader) close() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.closed {
		return
	}
	r.closed = true
	close(r.stop)
	r.wg.Wait()
	for _, j := range r.jobs {
		for drained := j.out == nil; !drained; {
			select {
			case b, ok := <-j.out:
				if ok {
					b.Release()
				} else {
					drained = true
				}
			default: // never started: nothing sent, never closed
				drained = true
			}
		}
		if j.rr != nil {
			j.rr.Release()
			j.rr = nil
		}
	}
}
