package engine

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Joins with a residual condition (planner.Join.Residual). The probe
// collects the candidate pairs of a probe batch (equal keys; every pair
// when the join has no keys: the build side is then one chain, a nested
// loop over it), gathers them into pair batches (every left column, then
// every right column: the residual's PairSchema), evaluates the residual
// over them and keeps the pairs where it is true. Whether a probe row
// matched is known only once all its candidates are evaluated, so the
// unmatched rows of outer joins, and the rows semi and anti joins keep,
// are emitted when the probe batch ends; build rows are marked matched
// only by passing pairs. The build side is bounded by the memory budget as
// in every join (a keyless join cannot spill: over the budget it fails
// with resource_exhausted, like a cross join).

// residualState is a joinOp's residual evaluation state.
type residualState struct {
	ev     *evaluator
	batch  arrow.RecordBatch // the probe batch any belongs to
	any    []bool            // per probe row: some pair passed
	cp, cb []int32           // candidate pairs: probe row, build row
	pass   []bool
}

func (r *residualState) release() {
	if r.ev != nil {
		r.ev.reset()
	}
	*r = residualState{}
}

// setResidual checks n's residual against its pair schema and keeps it.
func (p *joinPlan) setResidual(n *planner.Join) error {
	if n.Residual == nil {
		return nil
	}
	ps := n.PairSchema()
	var err error
	planner.WalkExpr(n.Residual, func(x planner.Expr) {
		ref, ok := x.(*planner.ColRef)
		if !ok || err != nil {
			return
		}
		if ref.Index < 0 || ref.Index >= ps.NumFields() || ps.Field(ref.Index).Name != ref.Name {
			err = qerr.Internal(nil, "join condition: column %q is not at index %d of the pair schema", ref.Name, ref.Index)
		} else if t := ps.Field(ref.Index).Type; !exprInput(t) {
			err = qerr.Unsupported(qerr.CodeUnsupportedType, "join condition: column %q of type %s cannot be computed on", ref.Name, t)
		}
	})
	if err != nil {
		return err
	}
	if t := n.Residual.Type(); t == nil || t.ID() != arrow.BOOL {
		return qerr.Internal(nil, "join condition %s is not boolean", n.Residual)
	}
	p.residual = n.Residual
	p.resNeed = make([]bool, ps.NumFields())
	planner.WalkExpr(n.Residual, func(x planner.Expr) {
		if ref, ok := x.(*planner.ColRef); ok {
			p.resNeed[ref.Index] = true
		}
	})
	return nil
}

// probeResidual is probe for a join with a residual: it collects about
// bsz candidate pairs from j.pi on, evaluates them, and appends the
// output pairs (and, at the end of the batch, the rows decided per probe
// row).
func (j *joinOp) probeResidual(bsz int) error {
	bs, r := &j.build, &j.res
	n := int(j.pb.NumRows())
	if r.batch != j.pb {
		r.batch = j.pb
		r.any = resize(r.any, n)
		clear(r.any)
	}
	r.cp, r.cb = r.cp[:0], r.cb[:0]
	for j.pi < n && len(r.cp) < bsz {
		if !j.started && bs.oneBits { // rows without candidates are decided at the batch's end
			if j.pi = j.skipMisses(j.pi, n); j.pi == n {
				break
			}
		}
		i := j.pi
		if !j.started {
			j.started, j.chain = true, j.chainOf(i)
		}
		for j.chain != 0 && len(r.cp) < bsz {
			row := j.chain - 1
			j.chain = bs.after(row)
			if !j.matches(i, row) {
				continue
			}
			r.cp, r.cb = append(r.cp, int32(i)), append(r.cb, row)
		}
		if j.chain != 0 {
			break // resume this row's chain next time
		}
		j.started = false
		j.pi++
	}
	if err := j.evalCandidates(); err != nil {
		return err
	}
	if j.pi < n {
		return nil
	}
	semiAnti := j.p.semiAnti()
	for i := range n {
		switch {
		case j.p.markOnly():
			return nil
		case semiAnti:
			if r.any[i] == (j.p.typ == planner.JoinSemi) {
				j.pRows, j.bRows = append(j.pRows, int32(i)), append(j.bRows, -1)
			}
		case !r.any[i] && j.p.probeUnmatched():
			j.pRows, j.bRows = append(j.pRows, int32(i)), append(j.bRows, -1)
		}
	}
	return nil
}

// evalCandidates evaluates the residual over the candidate pairs and
// records the passing ones.
func (j *joinOp) evalCandidates() (err error) {
	r := &j.res
	if len(r.cp) == 0 {
		return nil
	}
	defer catchBudget(&err)
	if r.ev == nil {
		r.ev = &evaluator{mem: j.ex.alloc, name: "join condition"}
		r.ev.pool.acct = &j.acct
	}
	pRefs := make([]rowRef, len(r.cp))
	bRefs := make([]rowRef, len(r.cb))
	for x := range r.cp {
		pRefs[x] = rowRef{0, r.cp[x]}
		bRefs[x] = j.build.refs[r.cb[x]]
	}
	lg, rg := newGatherer(j.probeSchema(), []arrow.RecordBatch{j.pb}), j.build.gather
	lRefs, rRefs := pRefs, bRefs
	if j.p.buildLeft {
		lg, rg, lRefs, rRefs = rg, lg, bRefs, pRefs
	}
	r.pass = resize(r.pass, len(r.cp))
	for off := 0; off < len(lRefs); {
		k, err := j.evalPairs(lg, rg, lRefs[off:], rRefs[off:], r.pass[off:])
		if err != nil {
			return err
		}
		off += k
	}
	bs := &j.build
	emits := !j.p.semiAnti()
	for x, ok := range r.pass {
		if !ok {
			continue
		}
		r.any[r.cp[x]] = true
		if bs.matched != nil {
			bs.matched[r.cb[x]] = true
		}
		if emits {
			j.pRows, j.bRows = append(j.pRows, r.cp[x]), append(j.bRows, r.cb[x])
		}
	}
	return nil
}

// evalPairs gathers a prefix of the pairs (lRefs[x], rRefs[x]), evaluates
// the residual over it into pass, and returns the prefix's length. Only
// the columns the residual reads are gathered (the others stay nil).
func (j *joinOp) evalPairs(lg, rg *gatherer, lRefs, rRefs []rowRef, pass []bool) (int, error) {
	nl := j.p.left.NumFields()
	lcols, k, err := lg.gatherCols(j.ex.alloc, j.ex.soft, lRefs, j.p.resNeed[:nl])
	if err != nil {
		return 0, err
	}
	defer releaseArrays(lcols)
	rcols, k, err := rg.gatherCols(j.ex.alloc, j.ex.soft, rRefs[:k], j.p.resNeed[nl:])
	if err != nil {
		return 0, err
	}
	defer releaseArrays(rcols)
	cols := make([]arrow.Array, 0, len(lcols)+len(rcols))
	for _, c := range lcols {
		if c != nil && c.Len() > k {
			c = array.NewSlice(c, 0, int64(k))
			defer c.Release()
		}
		cols = append(cols, c)
	}
	cols = append(cols, rcols...)
	ev := j.res.ev
	ev.reset()
	defer ev.reset()
	v, err := ev.eval(j.p.residual, cols, k)
	if err != nil {
		return 0, err
	}
	res, ok := v.arr.(*array.Boolean)
	if !ok || res.Len() != k {
		return 0, qerr.Internal(nil, "join condition did not evaluate to %d booleans", k)
	}
	for x := range k {
		pass[x] = res.IsValid(x) && res.Value(x)
	}
	return k, nil
}

// releaseArrays releases the non-nil arrays of cols.
func releaseArrays(cols []arrow.Array) {
	for _, c := range cols {
		if c != nil {
			c.Release()
		}
	}
}
