package engine

import (
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Parallel hash aggregation. The operator first folds its input serially
// (as always) until it has seen parallelMinRows rows. If by then every
// aggregate state has a merge (agg_merge.go) and the key columns do not
// look nearly unique (the last batch found new groups for fewer than half
// of its rows), the rest of the input is spread over workers: the
// operator's goroutine pulls batches and deals them out round-robin (batch
// k to worker k mod w, so that the result does not depend on timing); every
// worker folds its batches into a partial aggregate of its own
// (its own group table and states: an aggOp built from the same plan node,
// charging its own accounts to the query's budget). When the input ends
// the partial aggregates are merged into the operator's: each partial
// table's keys are built in batch-sized chunks and numbered by the
// operator's table (new keys become new groups), then every state merges
// its partial state through that group mapping.
//
// Keys unique in all but 1/16 of the rows once a quarter of the prefix
// (64K rows) is folded are nearly unique for sure (with 100k distinct
// keys, H2O q3, 64K rows hold about 48K): the rest of the prefix is only
// kept, not folded, since the radix path folds the prefix again (folded
// serially after all if the input ends within it).
//
// Nearly unique keys, and grouped aggregates with a state that does not
// merge over at least radixMinGroups groups (fewer stay serial), take the
// radix-partitioned path instead (agg_radix.go: each
// worker owns a slice of the key space): with merges each worker would
// build a table of about all the groups and the merge would redo the work.
// Median and quantile merge only without keys (agg_quant_merge.go), as do
// first and last (agg_firstlast_merge.go).
// Without keys and with a non-merging state the input is folded on one
// table (pipelined).
//
// Results: groups come out in first-seen order of the serial prefix, then
// in the workers' first-seen order, worker by worker (not the input's
// first-seen order, but the same on every run over the same batches). Exact
// aggregates give the serial result; float sums and moments differ from it
// by rounding only (see mergingState), the same rounding on every run. Errors (a sum overflowing, the
// memory budget, cancellation) stop every worker and are returned.

// parallelMinRows is the rows folded serially before going parallel: below
// it the workers cost more than they save.
var parallelMinRows = 1 << 18

// radixMinGroups is the groups the serial prefix must have found before an
// aggregate whose states do not merge goes radix-partitioned: with fewer
// groups the table fits in cache, the serial fold is cheaper per row than
// the operator goroutine's key hashing and the workers' gathers, and one
// core beats two. Measured on an idle box (docs/BENCHMARKS.md, session 9):
// the peer harness's Q3 (count distinct + median over 240 groups, 5M rows)
// 0.54 s radix vs 0.23 s serial; H2O G6 (median + sd over 10k groups, 1M
// rows) 0.118 vs 0.079 s. Nearly unique keys go radix whatever the count.
// A variable so that tests can take the radix path on small data.
var radixMinGroups = 1 << 16

// parallelWorkers is the number of workers (a variable so that tests can
// run the parallel path on any machine); below 2 the path is off.
var parallelWorkers = func() int { return runtime.GOMAXPROCS(0) }

// parallelRan is called when an aggregate goes parallel (a test hook).
var parallelRan = func() {}

// consumeParallel runs the serial prefix and, when worth it, the parallel
// rest of consume. done reports whether the input was consumed entirely
// (else the caller's loop goes on with the rest).
func (a *aggOp) consumeParallel() (done bool, err error) {
	w := parallelWorkers()
	if w < 2 || a.node == nil {
		return false, nil
	}
	merge := true
	for _, s := range a.states {
		_, keyless := s.(keylessMerger) // (agg_quant_merge.go)
		merge = merge && mergeable(s) && (a.table == nil || !keyless)
	}
	radix := a.table != nil // else the radix-partitioned path (agg_radix.go) is the fallback
	if !merge && !radix {
		return false, nil
	}
	var prefix []arrow.RecordBatch // kept for the radix path, which folds them again
	defer func() {
		for _, b := range prefix {
			b.Release()
		}
	}()
	rows, lastRows, lastNew := 0, 0, 0
	folded, unique := 0, false // prefix[:folded] folded; the rest only kept (unique: see above)
	for rows < parallelMinRows {
		if err := a.ex.ctx.Err(); err != nil {
			return false, err
		}
		b, err := a.in.next()
		if err != nil {
			return false, err
		}
		if b == nil {
			return true, a.foldKept(prefix[folded:])
		}
		n := int(b.NumRows())
		if unique {
			prefix = append(prefix, b)
			rows += n
			continue
		}
		before := a.ngroups
		err = a.fold(b)
		if radix {
			prefix = append(prefix, b)
			folded++
		} else {
			b.Release()
		}
		if err != nil {
			return false, err
		}
		if err := a.acct.check(); err != nil {
			return false, err
		}
		if n > 0 {
			rows, lastRows, lastNew = rows+n, n, a.ngroups-before
		}
		unique = radix && rows >= parallelMinRows/4 && 16*a.ngroups >= 15*rows
	}
	// (unique: the batches kept unfolded are the radix path's to fold)
	if !unique && !merge && a.ngroups < radixMinGroups && 2*lastNew <= lastRows {
		return false, nil // few groups, no merge: serial (see radixMinGroups)
	}
	if !unique && merge && (a.table == nil || 2*lastNew <= lastRows) {
		for _, b := range prefix {
			b.Release()
		}
		prefix = nil
		parallelRan()
		return true, a.runParallel(w)
	}
	radixRan()
	return true, a.runRadix(w, prefix)
}

// foldKept folds the prefix batches kept without folding them (the input
// ended within the prefix after all: the serial fold).
func (a *aggOp) foldKept(bs []arrow.RecordBatch) error {
	for _, b := range bs {
		if err := a.fold(b); err != nil {
			return err
		}
		if err := a.acct.check(); err != nil {
			return err
		}
	}
	return nil
}

// runParallel folds the rest of the input on w workers, then merges their
// partial aggregates into a.
func (a *aggOp) runParallel(w int) error {
	parts := make([]*aggOp, 0, w)
	defer func() {
		for _, p := range parts {
			p.close()
		}
	}()
	for range w {
		p, err := newAggOp(a.ex, a.node)
		if err != nil {
			return err
		}
		if p.table == nil {
			p.setGroups(1)
		}
		parts = append(parts, p)
	}
	folded := make([]int64, w) // per worker: batches folded (worker i's k-th batch is the input's k*w+i-th)
	pool := startWorkers(a.ex.ctx, w, func(i int, b arrow.RecordBatch) error {
		parts[i].stampSeq(folded[i]*int64(w) + int64(i))
		folded[i]++
		return parts[i].foldChecked(b)
	}, arrow.RecordBatch.Release)
	k := 0
	err := pool.drive(a.in, nil, func(b arrow.RecordBatch) bool {
		b.Retain()
		k++
		return pool.send((k-1)%w, b)
	})
	if err != nil {
		return err
	}
	for _, p := range parts {
		if err := a.mergePart(p); err != nil {
			return err
		}
		if err := a.acct.check(); err != nil {
			return err
		}
	}
	return nil
}

// stampSeq tells the states that want it (sequenced) the position of the
// next batch in the parallel part of the input.
func (a *aggOp) stampSeq(seq int64) {
	for _, s := range a.states {
		if q, ok := s.(sequenced); ok {
			q.setSeq(seq)
		}
	}
}

// foldChecked is fold on a worker: a panic (the hard allocator's budget
// panic included) comes back as an error, and the budget is checked after
// the batch.
func (a *aggOp) foldChecked(b arrow.RecordBatch) (err error) {
	defer recoverWorker(&err)
	if err := a.fold(b); err != nil {
		return err
	}
	return a.acct.check()
}

// recoverWorker turns a panic on a worker goroutine (the hard allocator's
// budget panic included) into *err; deferred.
func recoverWorker(err *error) {
	if r := recover(); r != nil {
		if e, ok := r.(exhausted); ok {
			*err = e.err()
			return
		}
		*err = qerr.Internal(nil, "parallel worker: %v", r)
	}
}

// mergePart merges the partial aggregate p into a (see above) and closes p.
func (a *aggOp) mergePart(p *aggOp) (err error) {
	defer catchBudget(&err)
	if p.ngroups == 0 {
		return nil
	}
	dst := make([]int32, p.ngroups)
	a.acct.charge(int64(len(dst)) * 4)
	defer a.acct.charge(-int64(len(dst)) * 4)
	if a.table != nil {
		for lo := 0; lo < p.ngroups; lo += a.ex.batchSize {
			hi := min(lo+a.ex.batchSize, p.ngroups)
			a.numberKeys(p.table, lo, hi, dst[lo:hi])
		}
		a.setGroups(a.table.n)
	}
	for j, s := range a.states {
		if err := s.(mergingState).merge(p.states[j], dst); err != nil {
			return err
		}
	}
	p.close()
	return nil
}

// numberKeys writes to dst a's group ids of t's groups [lo, hi) (new keys
// become new groups of a).
func (a *aggOp) numberKeys(t *groupTable, lo, hi int, dst []int32) {
	keys := make([]arrow.Array, len(t.cols))
	defer func() {
		for _, k := range keys {
			if k != nil {
				k.Release()
			}
		}
	}()
	for c := range keys {
		keys[c] = t.buildKey(a.ex.alloc, c, lo, hi)
	}
	copy(dst, a.table.assign(keys, hi-lo))
}
