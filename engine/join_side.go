package engine

import "github.com/apache/arrow-go/v18/arrow"

// Build side choice at run time. The planner's row estimates
// (planner.EstimateRows: catalog row counts scaled by fixed selectivities)
// often pick the larger input: TPC-H Q8's p_type = '...' keeps 1/150 of
// the parts, not the estimated 1/10, so the 39,000 lines of those parts
// were probed against a table of 455,000 orders built for the purpose;
// Q7's and Q9's filtered lines against all 1.5M orders. So a join whose
// side is not forced reads its two inputs in step, always from the one
// that has produced fewer rows so far (the estimated build side first),
// until one ends: that one, whole in memory, is built, and the batches
// read of the other are replayed to the probe before the rest of its
// input. Reading in step costs no extra work, only memory for the other
// side's batches read meanwhile, at most about as many rows as the build
// side has. It stops, falling back to the estimate, once both inputs
// have produced sideStepRows rows or the query holds a quarter of its
// memory budget (the rest is for the build and, over budget, the Grace
// join, which reads the replayed batches like the rest of its inputs).
// A null-aware anti join always builds its right side (join_nullaware.go).

// sideStepRows is the rows each input may produce before the choice falls
// back to the estimate.
const sideStepRows = 1 << 21

// replayOp returns buffered batches, then the rest of its input (none when
// done: the input ended while its batches were buffered).
type replayOp struct {
	buf  []arrow.RecordBatch
	in   op
	done bool
}

func (r *replayOp) next() (arrow.RecordBatch, error) {
	if len(r.buf) > 0 {
		b := r.buf[0]
		r.buf[0] = nil
		r.buf = r.buf[1:]
		return b, nil
	}
	if r.done {
		return nil, nil
	}
	return r.in.next()
}

func (r *replayOp) close() {
	for _, b := range r.buf {
		b.Release()
	}
	r.buf = nil
	if r.in != nil {
		r.in.close()
		r.in = nil
	}
}

// chooseSide reads the join's inputs in step until one ends and makes it
// the build side (see above), leaving buildIn and probeIn as replayOps of
// what was read.
func (j *joinOp) chooseSide() error {
	side := [2]*replayOp{{in: j.buildIn}, {in: j.probeIn}} // 0: the estimated build side
	j.buildIn, j.probeIn = side[0], side[1]
	var rows [2]int64
	for !side[0].done && !side[1].done {
		if rows[0] >= sideStepRows && rows[1] >= sideStepRows {
			return nil
		}
		if l := j.ex.budget.limit; l > 0 && j.ex.budget.live.Load() > l/4 {
			return nil
		}
		if err := j.ex.ctx.Err(); err != nil {
			return err
		}
		s := 0
		if rows[1] < rows[0] {
			s = 1
		}
		b, err := side[s].in.next()
		if err != nil {
			return err
		}
		if b == nil {
			side[s].done = true
			break
		}
		side[s].buf = append(side[s].buf, b)
		rows[s] += b.NumRows()
	}
	if side[1].done && !side[0].done {
		j.p.buildLeft = !j.p.buildLeft
		j.buildIn, j.probeIn = side[1], side[0]
	}
	return nil
}
