package engine

import (
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
)

// The hash aggregate's two halves run on two goroutines when there are
// cores for both: while the aggregate states fold batch i into their groups
// (update, on a worker goroutine), the operator's own goroutine pulls batch
// i+1 from its input and assigns its group ids. Each half keeps its order
// (every state sees the batches in input order, the table assigns ids in
// row order), so results are exactly the serial ones. The states only grow
// between batches, with the worker idle; the table charges its own acct so
// that the two goroutines never charge the same one.

// pipelineMinRows is the smallest batch worth handing to the worker.
const pipelineMinRows = 256

// aggBatch is one batch on its way through the states.
type aggBatch struct {
	b    arrow.RecordBatch
	gids []int32
	done chan error
}

// wait waits for the batch's update and releases the batch.
func (p *aggBatch) wait() error {
	err := <-p.done
	p.b.Release()
	return err
}

// consumePipelined is consume's loop with the states' updates on a worker
// goroutine (see above). It returns with no update running.
func (a *aggOp) consumePipelined() error {
	var prev *aggBatch
	flip := 0
	defer func() {
		if prev != nil {
			_ = prev.wait()
		}
	}()
	for {
		if err := a.ex.ctx.Err(); err != nil {
			return err
		}
		b, err := a.in.next()
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		n := int(b.NumRows())
		gids := a.assignBatch(b, n, flip)
		flip ^= 1
		if prev != nil {
			p := prev
			prev = nil
			if err := p.wait(); err != nil {
				b.Release()
				return err
			}
		}
		if a.table != nil {
			a.setGroups(a.table.n)
		}
		if err := a.acct.check(); err != nil {
			b.Release()
			return err
		}
		if n < pipelineMinRows {
			err := a.update(b, gids)
			b.Release()
			if err != nil {
				return err
			}
			continue
		}
		p := &aggBatch{b: b, gids: gids, done: make(chan error, 1)}
		go func() {
			var err error
			defer func() {
				if r := recover(); r != nil {
					err = qerr.Internal(nil, "aggregate: %v", r)
				}
				p.done <- err
			}()
			err = a.update(p.b, p.gids)
		}()
		prev = p
	}
	if prev != nil {
		p := prev
		prev = nil
		return p.wait()
	}
	return nil
}

// pipelined reports whether consume runs the states on a worker (a
// variable so that tests can run both ways on any machine).
var pipelined = func() bool { return runtime.GOMAXPROCS(0) > 1 }

// assignBatch returns the group ids of b's rows in buffer flip (0 or 1):
// the table's own slice is reused by its next assign; flip -1 returns that
// slice itself (for a caller done with it before the next assign).
func (a *aggOp) assignBatch(b arrow.RecordBatch, n, flip int) []int32 {
	if a.table == nil {
		if cap(a.zeros) < n {
			a.zeros = make([]int32, n)
		}
		return a.zeros[:n]
	}
	for i, k := range a.keyIdx {
		a.keyArrs[i] = b.Column(k)
	}
	gids := a.table.assign(a.keyArrs, n)
	clear(a.keyArrs)
	if flip < 0 {
		return gids
	}
	a.gbuf[flip] = append(a.gbuf[flip][:0], gids...)
	return a.gbuf[flip]
}

// update folds b's rows into their groups gids in every state.
func (a *aggOp) update(b arrow.RecordBatch, gids []int32) error {
	for j, s := range a.states {
		if x := a.inputs[j]; x != nil {
			if err := x.fold(a.ex, s, b, gids); err != nil {
				return err
			}
			continue
		}
		var col arrow.Array
		if a.aggCols[j] >= 0 {
			col = b.Column(a.aggCols[j])
		}
		if err := s.update(col, gids); err != nil {
			return err
		}
	}
	return nil
}
