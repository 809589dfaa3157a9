package engine

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// topNGroupOp keeps the first n rows of every partition in key order (a
// planner.TopNPerGroup) without sorting its input: rows are assigned to
// partitions through a group table, and each partition keeps a sorted
// buffer of at most n row references (binary insertion; a row that does
// not beat the partition's n-th row is dropped at once, ties keep the
// earlier row). Retained batches are compacted (the kept rows copied into
// new chunks, the rest released) whenever they hold more than twice the
// kept rows plus a batch. Output: the partitions in first-seen order, each
// in rank order.
type topNGroupOp struct {
	ex      *exec
	in      op
	schema  *arrow.Schema
	n       int64
	partIdx []int
	keyIdx  []int
	keys    []sortKey
	types   []arrow.DataType // the partition columns'
	table   *groupTable
	parts   []arrow.Array
	chunks  []arrow.RecordBatch
	bufs    [][]rowRef
	held    int64 // rows in retained chunks
	kept    int64 // rows in bufs
	keyB    int64 // what the keys' add allocates per row
	acct    acct
	refs    []rowRef
	emit    refEmitter
	done    bool
	closed  bool
	bar     *topNBar              // the first rank key's bars, when it has order bits (topk_group_bar.go)
	node    *planner.TopNPerGroup // to build the partitions of the parallel path
	first   []int64               // a partition's: each group's first row (topk_group_radix.go)
	radix   []*topNGroupOp        // the partitions, while the parallel path runs
}

func (ex *exec) buildTopNPerGroup(n *planner.TopNPerGroup) (op, error) {
	t, err := newTopNGroupOp(ex, n)
	if err != nil {
		return nil, err
	}
	if t.in, err = ex.build(n.Input); err != nil {
		return nil, err
	}
	return t, nil
}

// newTopNGroupOp is the operator of n without its input.
func newTopNGroupOp(ex *exec, n *planner.TopNPerGroup) (*topNGroupOp, error) {
	in := n.Input.Schema()
	t := &topNGroupOp{ex: ex, schema: in, n: n.N, acct: acct{b: ex.budget}, node: n}
	var types []arrow.DataType
	for _, k := range n.PartIdx {
		if k < 0 || k >= in.NumFields() {
			return nil, qerr.Internal(nil, "top_n_per_group: partition index %d out of range", k)
		}
		dt := in.Field(k).Type
		if !supportedCompute(dt) {
			return nil, qerr.Unsupported(qerr.CodeUnsupportedType, "cannot group by column %q of type %s", in.Field(k).Name, dt)
		}
		types = append(types, dt)
		t.partIdx = append(t.partIdx, k)
	}
	if len(types) == 0 {
		return nil, qerr.Internal(nil, "top_n_per_group: no partition columns")
	}
	for _, k := range n.Keys {
		if k.Index < 0 || k.Index >= in.NumFields() {
			return nil, qerr.Internal(nil, "top_n_per_group: key index %d out of range", k.Index)
		}
		sk := nullsFirst(newSortKey(in.Field(k.Index).Type, k.Desc), k.NullsFirst)
		if sk == nil {
			return nil, qerr.Unsupported(qerr.CodeUnsupportedType, "cannot rank by column %q of type %s", k.Col, in.Field(k.Index).Type)
		}
		t.keys = append(t.keys, sk)
		t.keyIdx = append(t.keyIdx, k.Index)
		t.keyB += sk.bytes(1)
	}
	if k := barKey(t.keys[0]); k != nil && topNBars {
		t.bar = &topNBar{key: k, col: t.keyIdx[0]}
		if len(t.keys) == 1 && n.N <= barRowsMax {
			t.bar.per = int(n.N)
		}
	}
	t.types = types
	t.table = newGroupTable(types, false, &t.acct)
	t.parts = make([]arrow.Array, len(types))
	return t, nil
}

func (t *topNGroupOp) compare(a, b rowRef) int { return compareRows(t.keys, a, b) }

// offer inserts row r into partition p's buffer when it ranks among the first n.
func (t *topNGroupOp) offer(p int32, r rowRef) bool {
	buf := t.bufs[p]
	if int64(len(buf)) == t.n && t.compare(r, buf[len(buf)-1]) >= 0 {
		return false
	}
	j, _ := slices.BinarySearchFunc(buf, r, t.compare)
	t.place(p, j, r)
	return true
}

// place puts r at position j of partition p's buffer (the last row drops
// out of a full one).
func (t *topNGroupOp) place(p int32, j int, r rowRef) {
	buf := t.bufs[p]
	if int64(len(buf)) < t.n {
		if len(buf) == cap(buf) {
			t.acct.charge(8 * int64(max(cap(buf), 1)))
		}
		t.bufs[p] = slices.Insert(buf, j, r)
		t.kept++
		return
	}
	copy(buf[j+1:], buf[j:len(buf)-1])
	buf[j] = r
}

// offerBar is offer with the group's bar kept (t.bar set): norm is r's
// order bits.
func (t *topNGroupOp) offerBar(p int32, r rowRef, norm uint64) bool {
	b := t.bar
	if norm > b.bars[p] {
		return false
	}
	if b.per > 0 {
		return t.offerBits(p, r, norm)
	}
	if !t.offer(p, r) {
		return false
	}
	if buf := t.bufs[p]; int64(len(buf)) == t.n {
		b.bars[p] = b.key.normAt(buf[len(buf)-1])
	}
	return true
}

// offerBits is offerBar ranking by the order bits of the group's buffered
// rows (t.bar.per set: the only rank key). Only equal bits need the rows
// compared (equal keys, where the later row ranks after, or null beside
// an extreme value).
func (t *topNGroupOp) offerBits(p int32, r rowRef, norm uint64) bool {
	b := t.bar
	buf := t.bufs[p]
	k := len(buf)
	bits := b.rows[int(p)*b.per : (int(p)+1)*b.per]
	after := func(j int) bool { // r ranks after buffered row j
		return bits[j] < norm || bits[j] == norm && t.compare(r, buf[j]) > 0
	}
	if k == b.per && after(k-1) {
		return false
	}
	j := 0
	for j < k && after(j) {
		j++
	}
	t.place(p, j, r)
	if k < b.per {
		k++
	}
	copy(bits[j+1:k], bits[j:k-1])
	bits[j] = norm
	if k == b.per {
		b.bars[p] = bits[k-1]
	}
	return true
}

// addChunk retains b and its rank keys' values, reserved before they are
// allocated (refused: b is released and the error returned).
func (t *topNGroupOp) addChunk(b arrow.RecordBatch) error {
	if err := t.acct.reserve(t.keyB * b.NumRows()); err != nil {
		b.Release()
		return err
	}
	t.chunks = append(t.chunks, b)
	for j, k := range t.keys {
		k.add(b.Column(t.keyIdx[j]))
	}
	t.held += b.NumRows()
	return nil
}

// fold takes b, folding its rows in, and returns their group ids (the
// table's slice, valid until the next fold).
//
// With bars, the rows past their group's bar (as it stands before the
// batch: bars only tighten) are dropped first; when fewer than half the
// rows are left, only those are retained (a copy of them, b released), so
// that the retained chunks, and the compactions that copy them, grow by
// the rows that may rank rather than by whole batches (H2O q8: after the
// first rows of each group, a few rows in a batch).
func (t *topNGroupOp) fold(b arrow.RecordBatch) ([]int32, error) {
	n := int(b.NumRows())
	for i, k := range t.partIdx {
		t.parts[i] = b.Column(k)
	}
	gids := t.table.assign(t.parts, n)
	clear(t.parts)
	if grow := t.table.n - len(t.bufs); grow > 0 {
		// The new groups' buffers (and bars) are reserved before they are allocated.
		need := 24 * int64(grow)
		if t.n <= barRowsMax {
			need += 8 * int64(grow) * t.n
		}
		if t.bar != nil {
			need += 8 * int64(grow) * int64(1+t.bar.per)
		}
		if err := t.acct.reserve(need); err != nil {
			b.Release()
			return nil, err
		}
		first := len(t.bufs)
		t.bufs = append(t.bufs, make([][]rowRef, grow)...)
		if t.n <= barRowsMax { // the new groups' buffers in one allocation (place grows none)
			slab := make([]rowRef, int64(grow)*t.n)
			for g := range grow {
				t.bufs[first+g] = slab[int64(g)*t.n : int64(g)*t.n : int64(g+1)*t.n]
			}
		}
		if t.bar != nil {
			t.bar.grow(grow)
		}
	}
	bar := t.bar
	var rs []rowRef // the rows offered (nil: all of b's)
	if bar != nil {
		bar.buf = bar.key.normBatch(b.Column(bar.col), bar.buf)
		rs = bar.pass[:0]
		for i, p := range gids[:n] {
			if bar.buf[i] <= bar.bars[p] {
				rs = append(rs, rowRef{0, int32(i)})
			}
		}
		bar.pass = rs
		if len(rs) == 0 {
			b.Release()
			return gids[:n], nil
		}
		if 2*len(rs) < n {
			sub, err := gatherBatch(t.ex.alloc, t.ex.soft, t.schema, b, rs)
			b.Release()
			if err != nil {
				return nil, err
			}
			b = sub
			topNBarCopied()
		} else {
			rs = nil
		}
	}
	ci := int32(len(t.chunks))
	if err := t.addChunk(b); err != nil {
		return nil, err
	}
	kept := false
	switch {
	case rs != nil:
		for k, r := range rs {
			if t.offerBar(gids[r.r], rowRef{ci, int32(k)}, bar.buf[r.r]) {
				kept = true
			}
		}
	case bar != nil:
		for i, p := range gids[:n] {
			if t.offerBar(p, rowRef{ci, int32(i)}, bar.buf[i]) {
				kept = true
			}
		}
	default:
		for i, p := range gids[:n] {
			if t.offer(p, rowRef{ci, int32(i)}) {
				kept = true
			}
		}
	}
	if !kept { // nothing of this batch is kept
		for _, k := range t.keys {
			k.pop()
		}
		t.chunks[ci] = nil
		t.chunks = t.chunks[:ci]
		t.held -= b.NumRows()
		b.Release()
	}
	return gids[:n], nil
}

// ordered lists the kept rows: partitions in first-seen order, each in rank order.
func (t *topNGroupOp) ordered() []rowRef {
	out := make([]rowRef, 0, t.kept)
	for _, buf := range t.bufs {
		out = append(out, buf...)
	}
	return out
}

// compact copies the kept rows into new chunks and releases the old ones.
func (t *topNGroupOp) compact() error {
	if err := t.acct.reserve(8 * t.kept); err != nil { // refs
		return err
	}
	refs := t.ordered()
	out, err := t.ex.gatherAll(newGatherer(t.schema, t.chunks), refs)
	t.acct.charge(-8 * t.kept)
	if err != nil {
		return err
	}
	t.dropChunks()
	// Rewrite the buffers to the new locations, in the order gathered.
	c, r := int32(0), int32(0)
	for _, buf := range t.bufs {
		for j := range buf {
			if int64(r) == out[c].NumRows() {
				c, r = c+1, 0
			}
			buf[j] = rowRef{c, r}
			r++
		}
	}
	for i, b := range out {
		if err := t.addChunk(b); err != nil {
			for _, b := range out[i+1:] {
				b.Release()
			}
			return err
		}
	}
	return nil
}

func (t *topNGroupOp) dropChunks() {
	for _, c := range t.chunks {
		c.Release()
	}
	t.chunks = t.chunks[:0]
	for _, k := range t.keys {
		k.reset()
	}
	t.held = 0
}

// add folds b in (taking it), compacts when due and checks the budget.
func (t *topNGroupOp) add(b arrow.RecordBatch) error {
	if _, err := t.fold(b); err != nil {
		return err
	}
	return t.settle()
}

// settle compacts the retained chunks when due and checks the budget.
func (t *topNGroupOp) settle() error {
	if t.held > 2*t.kept+int64(t.ex.batchSize) {
		if err := t.compact(); err != nil {
			return err
		}
	}
	return t.acct.check()
}

func (t *topNGroupOp) consume() error {
	done, err := t.consumeParallel() // (topk_group_radix.go)
	if err != nil {
		return err
	}
	for !done {
		if err := t.ex.ctx.Err(); err != nil {
			return err
		}
		b, err := t.in.next()
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		if t.n == 0 {
			b.Release()
			continue
		}
		if err := t.add(b); err != nil {
			return err
		}
	}
	t.in.close()
	if t.refs == nil { // (else the partitions' rows, already in order)
		if err := t.acct.reserve(8 * t.kept); err != nil {
			return err
		}
		t.refs = t.ordered()
	} else {
		t.acct.charge(8 * int64(len(t.refs)))
	}
	t.done = true
	return nil
}

func (t *topNGroupOp) next() (arrow.RecordBatch, error) {
	if err := t.ex.ctx.Err(); err != nil {
		return nil, err
	}
	if t.closed {
		return nil, nil
	}
	if !t.done {
		if err := t.consume(); err != nil {
			return nil, err
		}
	}
	b, err := t.emit.next(t.ex, t.schema, t.chunks, t.refs)
	if b == nil && err == nil {
		t.close()
	}
	return b, err
}

func (t *topNGroupOp) close() {
	if t.closed {
		return
	}
	t.closed = true
	if t.in != nil {
		t.in.close()
	}
	for _, p := range t.radix {
		p.close()
	}
	t.radix = nil
	t.dropChunks()
	t.table.reset()
	t.bufs, t.refs, t.first, t.emit = nil, nil, nil, refEmitter{}
	if t.bar != nil {
		t.bar.bars, t.bar.rows, t.bar.buf = nil, nil, nil
	}
	t.acct.release()
}

// describe implements describer (explain).
func (t *topNGroupOp) describe() (string, []string) {
	return "top n per group", []string{fmt.Sprintf("bounded buffer of %d rows per group", t.n)}
}
