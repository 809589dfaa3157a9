package engine

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Radix-partitioned parallel hash aggregation: the parallel path for what
// the merging path (agg_parallel.go) does not take, i.e. grouped aggregates
// whose keys look nearly unique (H2O q10: 10M groups of 6 keys, where every
// worker's partial table would hold about every group and the merge would
// redo the work) or whose states cannot merge (median, quantile, first,
// last, mode, arg_min/arg_max, string_agg, list, approx_quantile).
//
// The key space is split by a hash of the key values into one partition
// per worker: the operator's goroutine pulls each batch, computes every
// row's partition (keyVals.load: the hash join's key hash; rows with a
// null key go to partition 0) and hands the batch to every worker; worker
// j gathers its rows (the whole batch when all rows are its) and folds
// them into an aggregate of its own (its own group table and states, an
// aggOp built from the same plan node charging the query's budget). A
// group lives in exactly one partition, so no state merges, and each
// worker sees its rows in input order: every aggregate, order-dependent or
// not, gives the serial result to the bit (float sums included). Groups
// come out partition by partition, each in its first-seen order (the same
// on every run). Each worker's table holds about 1/w of the groups, so the
// memory is that of one table.
//
// The decision is taken after the serial prefix of consumeParallel; its
// batches were kept, its groups are dropped and the prefix is folded again
// by the partitions (at most parallelMinRows rows done twice).

// radixRan is called when an aggregate goes radix-partitioned (a test hook).
var radixRan = func() {}

// radixBatch is one input batch on its way to a partition's worker.
type radixBatch struct {
	b    arrow.RecordBatch
	part []uint8 // each row's partition (read only, shared by the workers)
	seq  int     // the batch's number in the input (0, 1, ...)
}

func (rb radixBatch) release() { rb.b.Release() }

// dealRadix returns the dealing of a radix-partitioned operator whose
// partition keys are the columns keyIdx: each batch, its rows'
// partitions computed, goes to every worker of p.
func dealRadix(p *workerPool[radixBatch], keyIdx []int) func(arrow.RecordBatch) bool {
	var kv keyVals
	seq := 0
	return func(b arrow.RecordBatch) bool {
		settleLazy(b)
		rb := radixBatch{b: b, part: partitionRows(&kv, b, keyIdx, int(b.NumRows()), len(p.in)), seq: seq}
		seq++
		for j := range p.in {
			b.Retain()
			if !p.send(j, rb) {
				return false
			}
		}
		return true
	}
}

// settleLazy computes what Arrow arrays compute on first use and cache
// (null counts, a dictionary array's values array), so that the workers
// sharing b only read it.
func settleLazy(b arrow.RecordBatch) {
	for _, c := range b.Columns() {
		c.NullN()
		if d, ok := c.(*array.Dictionary); ok {
			d.Dictionary().NullN()
		}
	}
}

// partitionRows returns the partition (0..w-1) of each of b's n rows by
// the hash of its key columns keyIdx; rows with a null key go to 0.
func partitionRows(kv *keyVals, b arrow.RecordBatch, keyIdx []int, n, w int) []uint8 {
	kv.load(b.Columns(), keyIdx, n)
	part := make([]uint8, n)
	for i, h := range kv.hash {
		if kv.ok[i] {
			part[i] = uint8((h >> 32) * uint64(w) >> 32)
		}
	}
	return part
}

// runRadix folds the prefix batches (kept by the caller, in input order)
// and the rest of the input into w partitions (see above); a's own groups
// (the prefix's) are dropped. The partitions are left in a.radix, their
// input ended, for next to emit.
func (a *aggOp) runRadix(w int, prefix []arrow.RecordBatch) error {
	parts := a.partitionKeys()
	a.dropGroups()
	for range w {
		p, err := newAggOp(a.ex, a.node)
		if err != nil {
			return err
		}
		a.radix = append(a.radix, p)
	}
	refs := make([][]rowRef, w)
	pool := startWorkers(a.ex.ctx, w, func(j int, rb radixBatch) error {
		return a.radix[j].foldPartition(rb, uint8(j), &refs[j])
	}, radixBatch.release)
	if err := pool.drive(a.in, prefix, dealRadix(pool, parts)); err != nil {
		return err
	}
	for _, p := range a.radix {
		p.consumed = true
		if err := p.endInput(); err != nil {
			return err
		}
	}
	return nil
}

// radixSpread is the distinct values a number key column (one keyVals
// hashes: integers, floats, booleans, dates, timestamps) must have shown in the serial prefix for the partitions to be chosen by
// the non-string key columns alone.
var radixSpread int32 = 1024

// partitionKeys returns the key columns whose hash gives a row's partition
// (before a's groups are dropped). Any subset of the keys partitions
// correctly (equal key tuples are equal on every subset); hashing strings
// (a view and a string hash per row and column on the operator's one
// goroutine) costs several times what hashing numbers does, so when the
// keys that are not strings spread the rows by themselves (one of them
// had at least radixSpread distinct values in the prefix: H2O q10's id6)
// they alone place the rows. Otherwise every key column does.
func (a *aggOp) partitionKeys() []int {
	var nums []int
	spread := false
	in := a.node.Input.Schema()
	for c, k := range a.keyIdx {
		if dt := in.Field(k).Type; isStringLike(dt) || !joinKeySupported(dt) {
			continue // (keyVals hashes the types of join keys; others would all land in one partition)
		}
		nums = append(nums, k)
		spread = spread || a.table.valueIDsOf(c).n >= radixSpread
	}
	if !spread || len(nums) == len(a.keyIdx) {
		return a.keyIdx
	}
	return nums
}

// foldPartition folds the rows of rb in partition j (refs: a reusable
// buffer) into a (a worker's partition aggregate).
func (a *aggOp) foldPartition(rb radixBatch, j uint8, refs *[]rowRef) (err error) {
	defer recoverWorker(&err)
	b, _, err := rb.rows(a.ex, j, refs)
	if b == nil || err != nil {
		return err
	}
	defer b.Release()
	return a.foldChecked(b)
}

// rows returns rb's rows in partition j as a batch of the caller's (rb's
// batch retained when they are all of its rows, else a copy; nil when
// there are none), and their rows in rb's batch (in refs, a reusable
// buffer; nil when they are all of its rows).
func (rb radixBatch) rows(ex *exec, j uint8, refs *[]rowRef) (arrow.RecordBatch, []rowRef, error) {
	// Branch-free: a row goes to one of the partitions at random, which a
	// branch would mispredict half the time with two workers.
	rs := slices.Grow((*refs)[:0], len(rb.part))[:len(rb.part)]
	k := 0
	for i, p := range rb.part {
		rs[k] = rowRef{0, int32(i)}
		k += b2i(p == j)
	}
	rs = rs[:k]
	*refs = rs
	switch {
	case len(rs) == 0:
		return nil, nil, nil
	case len(rs) == len(rb.part):
		rb.b.Retain()
		return rb.b, nil, nil
	}
	sub, err := gatherBatch(ex.alloc, ex.soft, rb.b.Schema(), rb.b, rs)
	return sub, rs, err
}

// b2i is 1 for true, else 0 (compiled without a branch).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nextRadix emits the partitions' groups, partition by partition.
func (a *aggOp) nextRadix() (arrow.RecordBatch, error) {
	for len(a.radix) > 0 {
		b, err := a.radix[0].next() // (a partition closes itself after its last batch)
		if err != nil || b != nil {
			return b, err
		}
		a.radix = a.radix[1:]
	}
	a.close()
	return nil, nil
}
