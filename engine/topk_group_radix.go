package engine

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// The partitioned parallel top n per group (H2O q8: the largest two v3 per
// id6), in the style of the radix-partitioned aggregate (agg_radix.go).
// Once the input has more than parallelMinRows rows, the key space is split
// by a hash of the partition columns into one partition per worker: the
// operator's goroutine computes each batch's row partitions and hands the
// batch to every worker; worker j takes its rows (the whole batch when all
// rows are its, else a copy of them) and folds them into a topNGroupOp of
// its own (its own group table, buffers and retained chunks). A group lives
// in one partition and each partition sees its rows in input order, so
// every group keeps exactly the rows the serial operator keeps, in the same
// rank order (ties included). Each partition also notes where each of its
// groups first appeared (batch number << 32 | row), and the partitions'
// groups are merged in that order: the output is the serial one, row for
// row.
//
// Inputs of at most parallelMinRows rows, or whose first parallelMinRows
// rows hold fewer than radixMinGroups groups, are folded serially.

// topNRadixRan is called when a top n per group goes parallel (a test hook).
var topNRadixRan = func() {}

// consumeParallel folds up to parallelMinRows rows serially (keeping the
// batches) and, when the input goes on (and there are workers) and they
// hold at least radixMinGroups groups, drops what they folded and runs the
// partitioned path over them and the rest of the input: then done, with
// t.refs the kept rows in order. With fewer groups the serial fold is
// cheaper than the partitioning and the workers' copies (5M rows of 10k
// groups: 1.2-1.5x the serial time; see radixMinGroups) and goes on
// serially; done reports whether the input ended.
func (t *topNGroupOp) consumeParallel() (done bool, err error) {
	w := parallelWorkers()
	if w < 2 || t.n == 0 {
		return false, nil
	}
	var prefix []arrow.RecordBatch
	defer func() {
		for _, b := range prefix {
			b.Release()
		}
	}()
	rows := 0
	for rows < parallelMinRows {
		if err := t.ex.ctx.Err(); err != nil {
			return false, err
		}
		b, err := t.in.next()
		if err != nil {
			return false, err
		}
		if b == nil {
			return true, nil
		}
		b.Retain()
		prefix = append(prefix, b)
		rows += int(b.NumRows())
		if err := t.add(b); err != nil {
			return false, err
		}
	}
	if t.table.n < radixMinGroups {
		return false, nil
	}
	t.unfold()
	topNRadixRan()
	return true, t.runRadix(w, prefix)
}

// unfold drops the rows and groups folded so far and their memory.
func (t *topNGroupOp) unfold() {
	t.dropChunks()
	t.table.reset()
	t.table = newGroupTable(t.types, false, &t.acct)
	t.bufs, t.kept = nil, 0
	if t.bar != nil {
		t.bar.bars, t.bar.rows = nil, nil
	}
	t.acct.release()
}

// runRadix folds the prefix batches (the caller's, in input order) and the
// rest of the input into w partitions, then takes over their retained
// chunks and lists their kept rows in t.refs (see above).
func (t *topNGroupOp) runRadix(w int, prefix []arrow.RecordBatch) error {
	for range w {
		p, err := newTopNGroupOp(t.ex, t.node)
		if err != nil {
			return err
		}
		t.radix = append(t.radix, p)
	}
	refs := make([][]rowRef, w)
	pool := startWorkers(t.ex.ctx, w, func(j int, rb radixBatch) error {
		return t.radix[j].foldPartition(rb, uint8(j), &refs[j])
	}, radixBatch.release)
	if err := pool.drive(t.in, prefix, dealRadix(pool, t.partIdx)); err != nil {
		return err
	}
	off := make([]int32, w) // each partition's first chunk among t's
	var kept int64
	for j, p := range t.radix {
		off[j] = int32(len(t.chunks))
		t.chunks = append(t.chunks, p.chunks...)
		p.chunks = p.chunks[:0]
		kept += p.kept
	}
	t.refs = make([]rowRef, 0, kept)
	next := make([]int, w) // each partition's next group
	for {
		best := -1
		for j, p := range t.radix {
			if next[j] < len(p.first) && (best < 0 || p.first[next[j]] < t.radix[best].first[next[best]]) {
				best = j
			}
		}
		if best < 0 {
			break
		}
		for _, r := range t.radix[best].bufs[next[best]] {
			t.refs = append(t.refs, rowRef{r.b + off[best], r.r})
		}
		next[best]++
	}
	for _, p := range t.radix {
		p.close() // (their chunks are t's now)
	}
	t.radix = nil
	return nil
}

// foldPartition folds the rows of rb in partition j (refs: a reusable
// buffer) into t (a worker's partition), noting where its new groups
// first appeared.
func (t *topNGroupOp) foldPartition(rb radixBatch, j uint8, refs *[]rowRef) (err error) {
	defer recoverWorker(&err)
	b, rs, err := rb.rows(t.ex, j, refs)
	if b == nil || err != nil {
		return err
	}
	next := t.table.n
	gids, err := t.fold(b)
	if err != nil {
		return err
	}
	if grow := t.table.n - next; grow > 0 {
		t.acct.charge(8 * int64(grow))
		for i, g := range gids {
			if int(g) != next {
				continue
			}
			r := i
			if rs != nil {
				r = int(rs[i].r)
			}
			t.first = append(t.first, int64(rb.seq)<<32|int64(r))
			next++
		}
	}
	return t.settle()
}
