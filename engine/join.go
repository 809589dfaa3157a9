package engine

import (
	"hash/maphash"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Hash join (planner.Join). One input, the build side, is read whole into
// memory and indexed by a hash table over its key columns; the other, the
// probe side, streams through it batch by batch. The build side is the
// input with the smaller estimated row count (catalog row counts), so the
// table usually holds the small dimension table. Join semantics follow
// SQL: a row with a null key never matches (it still appears, null-filled,
// in outer joins, and in anti joins); integer keys of different widths
// compare by value, float keys as float64 (NaN equals NaN, -0 equals 0),
// string keys by value whatever their encoding (plain, large or
// dictionary-encoded with different dictionaries on the two sides).
//
// The build side's batches, hash table and key values are charged to the
// query's memory budget. When they do not fit, the join partitions both
// inputs to disk by key hash and joins partition by partition (Grace hash
// join, see join_spill.go).

// Build side choice (Options.joinBuild, for tests).
const (
	buildAuto = iota
	buildLeft
	buildRight
)

// joinSeed seeds the string key hash (one per process; spill partitioning
// and the in-memory table hash the same way).
var joinSeed = maphash.MakeSeed()

// estRows estimates the rows a plan subtree produces, for the build side
// choice: catalog row counts scaled by the filters on them and by the
// joins (planner.EstimateRows).
func estRows(n planner.Node) float64 { return planner.EstimateRows(n) }

// joinPlan is what a join operator needs from the plan node, resolved once.
type joinPlan struct {
	typ        planner.JoinType
	buildLeft  bool
	left       *arrow.Schema
	right      *arrow.Schema
	out        *arrow.Schema
	leftKeys   []int
	rightKeys  []int
	rightKeep  []int // right input columns in the output, in order
	keepsRight bool
	residual   planner.Expr // the non-equi condition over the pair schema (join_residual.go); nil: none
	nullAware  bool         // SQL NOT IN (planner.Join.NullAware; the right side is built)
	resNeed    []bool       // the pair schema's columns the residual reads
}

func (p *joinPlan) probeKeys() []int {
	if p.buildLeft {
		return p.rightKeys
	}
	return p.leftKeys
}

func (p *joinPlan) buildKeys() []int {
	if p.buildLeft {
		return p.leftKeys
	}
	return p.rightKeys
}

// probeUnmatched: unmatched probe rows are emitted (null-filled build side).
func (p *joinPlan) probeUnmatched() bool {
	if p.buildLeft {
		return p.typ == planner.JoinRight || p.typ == planner.JoinFull
	}
	return p.typ == planner.JoinLeft || p.typ == planner.JoinFull
}

// buildUnmatched: unmatched build rows are emitted at the end.
func (p *joinPlan) buildUnmatched() bool {
	if p.buildLeft {
		return p.typ == planner.JoinLeft || p.typ == planner.JoinFull || p.typ == planner.JoinAnti
	}
	return p.typ == planner.JoinRight || p.typ == planner.JoinFull
}

// semiAnti: a semi or anti join (left columns only).
func (p *joinPlan) semiAnti() bool { return p.typ == planner.JoinSemi || p.typ == planner.JoinAnti }

// markOnly: the probe only marks build rows (semi/anti with the left side built).
func (p *joinPlan) markOnly() bool { return p.buildLeft && p.semiAnti() }

func newJoinPlan(n *planner.Join, side int) (*joinPlan, error) {
	p := &joinPlan{typ: n.Type, left: n.Left.Schema(), right: n.Right.Schema(), out: n.Schema(),
		leftKeys: n.LeftIdx, rightKeys: n.RightIdx, keepsRight: n.Type.KeepsRight()}
	if !slicesContainsType(planner.JoinTypes, n.Type) {
		return nil, qerr.Internal(nil, "join: unknown type %q", n.Type)
	}
	noKeys := len(p.leftKeys) == 0 && n.Type != planner.JoinCross && n.Residual == nil
	if len(p.leftKeys) != len(p.rightKeys) || len(p.leftKeys) != len(n.LeftKeys) || noKeys || len(p.leftKeys) > 0 && n.Type == planner.JoinCross {
		return nil, qerr.Internal(nil, "join: %d left and %d right keys for a %s join", len(p.leftKeys), len(p.rightKeys), n.Type)
	}
	for k := range p.leftKeys {
		li, ri := p.leftKeys[k], p.rightKeys[k]
		if li < 0 || li >= p.left.NumFields() || ri < 0 || ri >= p.right.NumFields() {
			return nil, qerr.Internal(nil, "join: key index out of range")
		}
		lt, rt := p.left.Field(li).Type, p.right.Field(ri).Type
		if !planner.JoinComparable(lt, rt) || !joinKeySupported(lt) || !joinKeySupported(rt) {
			return nil, qerr.Unsupported(qerr.CodeUnsupportedType, "join: cannot compare keys of types %s and %s", lt, rt)
		}
	}
	if p.keepsRight {
		for i, f := range p.right.Fields() {
			for _, c := range n.RightCols {
				if c == f.Name {
					p.rightKeep = append(p.rightKeep, i)
					break
				}
			}
		}
	}
	if want := p.left.NumFields() + len(p.rightKeep); p.out.NumFields() != want {
		return nil, qerr.Internal(nil, "join: output schema has %d columns, want %d", p.out.NumFields(), want)
	}
	if err := p.setResidual(n); err != nil {
		return nil, err
	}
	switch side {
	case buildLeft:
		p.buildLeft = true
	case buildRight:
	default:
		p.buildLeft = estRows(n.Left) < estRows(n.Right)
	}
	if n.NullAware {
		if n.Type != planner.JoinAnti || len(p.leftKeys) != 1 || p.residual != nil {
			return nil, qerr.Internal(nil, "join: a null-aware join is an anti join on one key")
		}
		p.nullAware, p.buildLeft = true, false // the rule needs the whole right side first
	}
	return p, nil
}

func slicesContainsType(ts []planner.JoinType, t planner.JoinType) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

func joinKeySupported(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL, arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return true
	}
	return isStringLike(dt)
}

// buildJoin builds a join operator: the left input with ex, the right one
// (a joined dataset) with its own source.
func (ex *exec) buildJoin(n *planner.Join) (op, error) {
	p, err := newJoinPlan(n, ex.joinBuild)
	if err != nil {
		return nil, err
	}
	// The right input reads its own dataset's source (none for constant
	// rows: a VALUES list joined in).
	rx, err := ex.inputExec(n.Right)
	if err != nil {
		return nil, err
	}
	left, err := ex.build(n.Left)
	if err != nil {
		return nil, err
	}
	right, err := rx.build(n.Right)
	if err != nil {
		left.close()
		return nil, err
	}
	j := &joinOp{ex: ex, p: p, acct: acct{b: ex.budget}, pickSide: ex.joinBuild == buildAuto && !p.nullAware}
	if p.buildLeft {
		j.probeIn, j.buildIn = right, left
	} else {
		j.probeIn, j.buildIn = left, right
	}
	return j, nil
}

// keyVals holds one batch's (or the build side's) key values in
// comparable form: per key column either normalized 64-bit values or
// strings (views into Arrow memory that stays alive while they are used).
type keyVals struct {
	bits [][]uint64
	strs [][]string
	hash []uint64
	ok   []bool // every key is non-null
	cbuf []int32
	own  [][]uint64 // the buffers of bits (bits[k] aliases Arrow memory for 64-bit integers)
	// noHash: load leaves hash empty (a one-number-key join's probe side,
	// join_probe.go).
	noHash bool
}

// load computes the keys of cols[keys] for one batch (n rows), reusing buffers.
func (kv *keyVals) load(cols []arrow.Array, keys []int, n int) {
	if len(kv.bits) != len(keys) {
		kv.bits, kv.strs, kv.own = make([][]uint64, len(keys)), make([][]string, len(keys)), make([][]uint64, len(keys))
	}
	kv.hash = resize(kv.hash, n)
	kv.ok = resize(kv.ok, n)
	for i := range kv.ok {
		kv.ok[i] = true
	}
	clear(kv.hash)
	if kv.noHash {
		kv.hash = kv.hash[:0]
	}
	for k, c := range keys {
		arr := cols[c]
		andValid(arr, kv.ok)
		if isStringLike(arr.DataType()) {
			kv.strs[k] = strViewsAny(arr, kv.strs[k], &kv.cbuf)
			if kv.noHash {
				continue
			}
			for i, s := range kv.strs[k] {
				kv.hash[i] = combineHash(kv.hash[i], maphash.String(joinSeed, s))
			}
			continue
		}
		if kv.bits[k] = bits64(arr); kv.bits[k] == nil {
			kv.own[k] = keyBits(arr, resize(kv.own[k], n))
			kv.bits[k] = kv.own[k]
		}
		if kv.noHash {
			continue
		}
		for i, b := range kv.bits[k] {
			kv.hash[i] = combineHash(kv.hash[i], mix64(b))
		}
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func combineHash(h, k uint64) uint64 {
	return mix64(h ^ (k + 0x9e3779b97f4a7c15 + h<<6 + h>>2))
}

// keyBits returns a non-string key column's values normalized so that
// equal keys have equal bits: integers as int64 (uint64 as is), floats as
// float64 (-0 as 0, one NaN), booleans as 0/1, dates and timestamps as
// their integer values. Null slots hold arbitrary values.
func keyBits(arr arrow.Array, out []uint64) []uint64 {
	switch arr.DataType().ID() {
	case arrow.INT8:
		sext(values[int8](arr), out)
	case arrow.INT16:
		sext(values[int16](arr), out)
	case arrow.INT32, arrow.DATE32:
		sext(values[int32](arr), out)
	case arrow.INT64, arrow.DATE64, arrow.TIMESTAMP:
		sext(values[int64](arr), out)
	case arrow.UINT8:
		sext(values[uint8](arr), out)
	case arrow.UINT16:
		sext(values[uint16](arr), out)
	case arrow.UINT32:
		sext(values[uint32](arr), out)
	case arrow.UINT64:
		sext(values[uint64](arr), out)
	case arrow.FLOAT32:
		for i, v := range values[float32](arr) {
			out[i] = floatKey(float64(v))
		}
	case arrow.FLOAT64:
		for i, v := range values[float64](arr) {
			out[i] = floatKey(v)
		}
	case arrow.BOOL:
		var buf []uint8
		for i, v := range boolBytes(arr, buf) {
			out[i] = uint64(v)
		}
	}
	return out
}

func sext[T integer](vs []T, out []uint64) {
	for i, v := range vs {
		out[i] = uint64(int64(v))
	}
}

// floatKey is the key bits of f: -0 as 0, every NaN as one value (normF64).
func floatKey(f float64) uint64 { return normF64(math.Float64bits(f)) }

// joinOp is a running hash join.
type joinOp struct {
	ex               *exec
	p                *joinPlan
	probeIn, buildIn op
	acct             acct

	built   bool
	build   buildSide
	pk      keyVals
	pb      arrow.RecordBatch // current probe batch
	pi      int               // next probe row
	chain   int32             // 1-based build row to compare next, 0: none
	started bool              // probe row pi's chain has been started
	any     bool              // probe row pi matched
	pRows   []int32           // output pairs: probe row (-1: null side)
	bRows   []int32           // build row (-1: null side)
	pending []arrow.RecordBatch
	tail    int // next build row of the unmatched/matched tail
	done    bool
	nullP   arrow.RecordBatch // one all-null row of the probe schema
	spill   *graceJoin        // set when the build side did not fit
	res     residualState     // candidate pairs of a join with a residual
	level   int               // partitioning level (0: the plan's join; n: a partition of level n-1)
	na      *nullAwareState   // what a null-aware join knows of its whole build side (shared with its partitions)
	// pickSide: the build side is chosen by reading both inputs in step
	// (join_side.go); else it is the estimate's or the one forced
	pickSide bool
	par      *parallelProbe // the probe's workers (join_parallel.go); nil: serial
}

// buildSide is an in-memory build side: its batches, hash table and keys.
type buildSide struct {
	chunks  []arrow.RecordBatch
	refs    []rowRef
	keys    keyVals // per build row (bits/strs/hash/ok over all rows)
	strKey  []bool  // per key: a string (keys.strs) or a number (keys.bits)
	head    []int32
	ents    []joinEnt // per row: hash, chain link, and the key of a one-number-key join
	oneBits bool      // the join has one non-string key (ents hold it)
	mask    uint64
	matched []bool
	gather  *gatherer
	null    rowRef
	nullB   arrow.RecordBatch

	// the one-key lookup (join_probe.go): keys lo..lo+span; dense: head is
	// indexed by key - lo; filt: a bitmap of the keys over that range
	lo, span uint64
	dense    bool
	filt     []uint64
	// unique (dense only): no two build rows share a key, so a chain is
	// one row and the probe never reads ents (a cache miss per probe row
	// on a large build side)
	unique bool
}

func (j *joinOp) probeSchema() *arrow.Schema {
	if j.p.buildLeft {
		return j.p.right
	}
	return j.p.left
}

func (j *joinOp) buildSchema() *arrow.Schema {
	if j.p.buildLeft {
		return j.p.left
	}
	return j.p.right
}

// add appends one build batch (owned) to the build side; grow made room
// for its rows.
func (bs *buildSide) add(b arrow.RecordBatch, keys []int, scratch *keyVals) {
	n := int(b.NumRows())
	ci := int32(len(bs.chunks))
	bs.chunks = append(bs.chunks, b)
	scratch.load(b.Columns(), keys, n)
	for i := range n {
		bs.refs = append(bs.refs, rowRef{ci, int32(i)})
	}
	for k := range keys {
		if scratch.strs[k] != nil && isStringLike(b.Column(keys[k]).DataType()) {
			bs.keys.strs[k] = append(bs.keys.strs[k], scratch.strs[k][:n]...)
		} else {
			bs.keys.bits[k] = append(bs.keys.bits[k], scratch.bits[k][:n]...)
		}
	}
	bs.keys.hash = append(bs.keys.hash, scratch.hash[:n]...)
	bs.keys.ok = append(bs.keys.ok, scratch.ok[:n]...)
}

// rowBytes is the Go memory of one build row's entries in the build
// side's per-row arrays: refs, hash, ok, and each key's value (8 bytes a
// number, a 16-byte view a string).
func (bs *buildSide) rowBytes() int64 {
	n := int64(8 + 8 + 1)
	for _, s := range bs.strKey {
		if s {
			n += 16
		} else {
			n += 8
		}
	}
	return n
}

// setKeys records which of the build side's keys (columns keys of
// schema) are strings, before its first row is added.
func (bs *buildSide) setKeys(schema *arrow.Schema, keys []int) {
	bs.strKey = make([]bool, len(keys))
	for i, k := range keys {
		bs.strKey[i] = isStringLike(schema.Field(k).Type)
	}
	bs.keys.bits, bs.keys.strs = make([][]uint64, len(keys)), make([][]string, len(keys))
}

// growCap is the capacity the build side's per-row arrays grow to for
// n more rows (0 when they fit): half as much again, at least 1024 rows.
func (bs *buildSide) growCap(n int) int {
	need := len(bs.refs) + n
	if need <= cap(bs.refs) {
		return 0
	}
	return max(need, cap(bs.refs)+cap(bs.refs)/2, 1024)
}

// grow gives the build side's per-row arrays the capacity c (growCap):
// reserved before they are allocated, beside the old arrays, which are
// given back once copied; so a build side over the budget fails (or
// spills, consumeBuild) before its memory exists.
func (bs *buildSide) grow(c int, a *acct) error {
	per := bs.rowBytes()
	if err := a.reserve(per * int64(c)); err != nil {
		return err
	}
	old := cap(bs.refs)
	bs.refs = withCap(bs.refs, c)
	for k, s := range bs.strKey {
		if s {
			bs.keys.strs[k] = withCap(bs.keys.strs[k], c)
		} else {
			bs.keys.bits[k] = withCap(bs.keys.bits[k], c)
		}
	}
	bs.keys.hash = withCap(bs.keys.hash, c)
	bs.keys.ok = withCap(bs.keys.ok, c)
	a.charge(-per * int64(old))
	return nil
}

// joinEnt is one build row in the hash table: everything the probe
// compares sits in one cache line (its row reference and, with several
// or string keys, its key values are read only on a hash match).
type joinEnt struct {
	h    uint64
	k    uint64 // the key of a one-number-key join
	next int32  // the next row (1-based) of the chain, 0 at the end
}

// joinEntBytes is the memory of one joinEnt (with padding).
const joinEntBytes = 24

// plan decides the build side's lookup before it is indexed (oneBits,
// and for one number key the range and whether it is dense:
// oneKeyTable) and returns the head table's size and the words of its
// key bitmap (0: none), which index allocates.
func (bs *buildSide) plan() (size, filt int) {
	n := len(bs.refs)
	size = 1
	for size < 2*n {
		size <<= 1
	}
	bs.oneBits = len(bs.keys.bits) == 1 && bs.keys.strs[0] == nil && n > 0
	if bs.oneBits {
		size, filt = bs.oneKeyTable(size)
	}
	return size, filt
}

// indexBytes is the memory index allocates: the head table of size
// slots, the bitmap of filt words, an entry per row of n and, when
// matched, a flag per row.
func indexBytes(size, filt, n int, matched bool) int64 {
	b := 4*int64(size) + 8*int64(filt) + joinEntBytes*int64(n)
	if matched {
		b += int64(n)
	}
	return b
}

// index builds the hash table over the rows added so far, with the
// sizes plan returned. The per-row hashes move into the entries (the
// caller drops keys.hash).
func (bs *buildSide) index(size, filt int, needMatched bool) {
	n := len(bs.refs)
	if filt > 0 {
		bs.fillFilter(filt)
	}
	bs.head = make([]int32, size)
	bs.ents = make([]joinEnt, n)
	bs.mask = uint64(size - 1)
	bs.unique = bs.dense
	for r := n - 1; r >= 0; r-- { // chains in input order
		e := &bs.ents[r]
		e.h = bs.keys.hash[r]
		if bs.oneBits {
			e.k = bs.keys.bits[0][r]
		}
		if !bs.keys.ok[r] {
			continue
		}
		h := bs.slot(e.h, e.k)
		e.next = bs.head[h]
		bs.unique = bs.unique && e.next == 0
		bs.head[h] = int32(r + 1)
	}
	if needMatched {
		bs.matched = make([]bool, n)
	}
}

func (bs *buildSide) release() {
	for _, c := range bs.chunks {
		c.Release()
	}
	if bs.nullB != nil {
		bs.nullB.Release()
	}
	*bs = buildSide{}
}

// nullBatch is one row of nulls of schema s.
func nullBatch(mem memory.Allocator, s *arrow.Schema) arrow.RecordBatch {
	cols := make([]arrow.Array, s.NumFields())
	for i, f := range s.Fields() {
		cols[i] = array.MakeArrayOfNull(mem, f.Type, 1)
	}
	b := array.NewRecordBatch(s, cols, 1)
	for _, c := range cols {
		c.Release()
	}
	return b
}

// consumeBuild reads the whole build input into memory. It reports
// whether the build side would go over the memory budget (the caller then
// spills); in that case the rows read so far are kept in j.build (the
// last batch read only as a chunk, its rows not indexed) and the input is
// not exhausted. The decision is taken before the per-row arrays grow for
// a batch, and they are reserved before they are allocated.
func (j *joinOp) consumeBuild() (over bool, err error) {
	defer catchBudget(&err)
	keys := j.p.buildKeys()
	j.build.setKeys(j.buildSchema(), keys)
	var scratch keyVals
	for {
		if err := j.ex.ctx.Err(); err != nil {
			return false, err
		}
		b, err := j.buildIn.next()
		if err != nil {
			return false, err
		}
		if b == nil {
			return false, nil
		}
		n := int(b.NumRows())
		c := j.build.growCap(n)
		if j.overBudget(c, len(j.build.refs)+n) {
			j.build.chunks = append(j.build.chunks, b) // the spill writes it
			return true, nil
		}
		if c > 0 {
			if err := j.build.grow(c, &j.acct); err != nil {
				b.Release()
				return false, err
			}
		}
		j.build.add(b, keys, &scratch)
	}
}

// overBudget reports whether a build side of rows rows, its per-row
// arrays grown to capacity c first (0: not grown), would take the query
// past 3/4 of its memory budget (the rest is for the probe batches and
// the output): the arrays' new copies beside the old ones while they
// grow, the table beside the arrays once built.
func (j *joinOp) overBudget(c, rows int) bool {
	l := j.ex.budget.limit
	if l <= 0 {
		return false
	}
	bs := &j.build
	grow, old := int64(0), int64(0)
	if c > 0 {
		grow, old = int64(c)*bs.rowBytes(), int64(cap(bs.refs))*bs.rowBytes()
	}
	return j.ex.budget.live.Load()+grow+max(0, tableBytes(rows)-old) > l-l/4
}

// tableBytes is about what indexing a build side of n rows adds (the
// head table and the entries; indexBytes is exact).
func tableBytes(n int) int64 { return int64(n) * (8 + joinEntBytes) }

// finishBuild indexes the build side and prepares its gatherer. The table
// is reserved before it is allocated: when it would take the query past
// its budget, finishBuild reports over (the caller spills), when the
// server's pool refuses it, the error; either way before it exists.
func (j *joinOp) finishBuild() (over bool, err error) {
	bs := &j.build
	needMatched := j.p.buildUnmatched() || j.p.markOnly()
	size, filt := bs.plan()
	need := indexBytes(size, filt, len(bs.refs), needMatched)
	if j.ex.budget.wouldExceed(need) { // (newGraceJoin fails a join it cannot partition)
		return true, nil
	}
	if err := j.acct.reserve(need); err != nil {
		return false, err
	}
	bs.index(size, filt, needMatched)
	j.acct.charge(-8 * int64(cap(bs.keys.hash))) // index moved the hashes into the entries
	bs.keys.hash = nil
	j.pk.noHash = bs.oneBits
	chunks := bs.chunks
	if j.p.probeUnmatched() {
		bs.nullB = nullBatch(j.ex.soft, j.buildSchema())
		chunks = append(chunks[:len(chunks):len(chunks)], bs.nullB)
		bs.null = rowRef{int32(len(chunks) - 1), 0}
	}
	bs.gather = newGatherer(j.buildSchema(), chunks)
	if j.p.buildUnmatched() || (j.p.markOnly() && j.p.typ == planner.JoinSemi) {
		j.nullP = nullBatch(j.ex.soft, j.probeSchema())
	}
	return false, nil
}

func (j *joinOp) next() (out arrow.RecordBatch, err error) {
	if !j.built {
		j.built = true
		if j.pickSide {
			if err := j.chooseSide(); err != nil {
				return nil, err
			}
		}
		over, err := j.consumeBuild()
		if err != nil {
			return nil, err
		}
		if over {
			if j.spill, err = newGraceJoin(j); err != nil {
				return nil, err
			}
		} else if over, err = j.finishBuild(); err != nil {
			return nil, err
		} else if over {
			j.buildIn.close() // read to its end
			j.buildIn = &replayOp{done: true}
			if j.spill, err = newGraceJoin(j); err != nil {
				return nil, err
			}
		} else {
			j.countBuildNulls()
			if j.probesInParallel() {
				j.startParallel()
			}
		}
	}
	if j.spill != nil {
		return j.spill.next()
	}
	if j.par != nil {
		return j.nextParallel()
	}
	return j.nextInMemory()
}

// nextInMemory returns the next output batch of the in-memory join.
func (j *joinOp) nextInMemory() (arrow.RecordBatch, error) {
	bsz := j.ex.batchSize
	for len(j.pending) == 0 {
		if j.done {
			return nil, nil
		}
		if err := j.ex.ctx.Err(); err != nil {
			return nil, err
		}
		if j.pb == nil && !j.probeExhausted() {
			if j.na.keepsNone() || len(j.build.refs) == 0 && !j.p.probeUnmatched() && !(j.p.typ == planner.JoinAnti && !j.p.buildLeft) {
				j.markProbeExhausted() // nothing can match: skip the probe side
				continue
			}
			b, err := j.probeIn.next()
			if err != nil {
				return nil, err
			}
			if b == nil {
				j.markProbeExhausted()
				continue
			}
			j.pb, j.pi, j.started = b, 0, false
			j.pk.load(b.Columns(), j.p.probeKeys(), int(b.NumRows()))
		}
		if j.pb != nil {
			if j.p.residual == nil {
				j.probe(bsz)
			} else if err := j.probeResidual(bsz); err != nil {
				return nil, err
			}
			if err := j.emit(j.pb); err != nil {
				return nil, err
			}
			if j.pi >= int(j.pb.NumRows()) {
				j.pb.Release()
				j.pb = nil
			}
			continue
		}
		// The probe side is exhausted: the build-side tail.
		if !j.tailRows(bsz) {
			j.done = true
		}
		if err := j.emit(j.nullP); err != nil {
			return nil, err
		}
	}
	b := j.pending[0]
	j.pending = j.pending[1:]
	return b, nil
}

// probeEnd is the probe-row index meaning "exhausted".
const probeEnd = -1

func (j *joinOp) probeExhausted() bool { return j.pi == probeEnd }

func (j *joinOp) markProbeExhausted() { j.pi = probeEnd }

// probe matches rows of the current probe batch from j.pi on, appending
// output pairs until about bsz are collected.
func (j *joinOp) probe(bsz int) {
	if j.bitsDecide() {
		j.probeBits(bsz)
		return
	}
	bs := &j.build
	n := int(j.pb.NumRows())
	semiAnti, markOnly := j.p.semiAnti(), j.p.markOnly()
	skips := bs.oneBits && !j.missEmits()
	for j.pi < n && len(j.pRows) < bsz {
		if !j.started && skips {
			if j.pi = j.skipMisses(j.pi, n); j.pi == n {
				break
			}
		}
		i := j.pi
		if !j.started {
			j.started, j.any, j.chain = true, false, j.chainOf(i)
		}
		for j.chain != 0 && len(j.pRows) < bsz {
			r := j.chain - 1
			j.chain = bs.after(r)
			if !j.matches(i, r) {
				continue
			}
			j.any = true
			switch {
			case markOnly:
				bs.matched[r] = true
			case semiAnti:
				j.chain = 0 // one match decides
			default:
				if bs.matched != nil {
					bs.matched[r] = true
				}
				j.pRows, j.bRows = append(j.pRows, int32(i)), append(j.bRows, r)
			}
		}
		if j.chain != 0 {
			return // output full: resume this row's chain next time
		}
		switch {
		case markOnly:
		case semiAnti:
			if j.any == (j.p.typ == planner.JoinSemi) && (j.pk.ok[i] || !j.na.dropsNullProbe()) {
				j.pRows, j.bRows = append(j.pRows, int32(i)), append(j.bRows, -1)
			}
		case !j.any && j.p.probeUnmatched():
			j.pRows, j.bRows = append(j.pRows, int32(i)), append(j.bRows, -1)
		}
		j.started = false
		j.pi++
	}
}

// equal compares the keys of probe row i and build row r.
func (j *joinOp) equal(i, r int) bool {
	for k := range j.pk.bits {
		if s := j.pk.strs[k]; s != nil && j.build.keys.strs[k] != nil {
			if s[i] != j.build.keys.strs[k][r] {
				return false
			}
		} else if j.pk.bits[k][i] != j.build.keys.bits[k][r] {
			return false
		}
	}
	return true
}

// tailRows appends the build rows emitted after the probe side ends
// (unmatched ones for outer and build-left anti joins, matched ones for
// build-left semi joins), about bsz at a time; false when there are no more.
func (j *joinOp) tailRows(bsz int) bool {
	bs := &j.build
	if bs.matched == nil {
		return false
	}
	want := j.p.markOnly() && j.p.typ == planner.JoinSemi
	for j.tail < len(bs.refs) && len(j.pRows) < bsz {
		if bs.matched[j.tail] == want {
			j.pRows, j.bRows = append(j.pRows, -1), append(j.bRows, int32(j.tail))
		}
		j.tail++
	}
	return j.tail < len(bs.refs) || len(j.pRows) > 0
}

// emit gathers the collected pairs into output batches: probe rows of pb
// (probe row -1: the null row nullP; pb is nullP itself in the tail).
func (j *joinOp) emit(pb arrow.RecordBatch) (err error) {
	if len(j.pRows) == 0 {
		return nil
	}
	defer catchBudget(&err)
	if pb != j.nullP && j.identity(pb) {
		return j.emitIdentity(pb)
	}
	pRefs := make([]rowRef, len(j.pRows))
	bRefs := make([]rowRef, len(j.bRows))
	for i, r := range j.pRows {
		pRefs[i] = rowRef{0, max(r, 0)}
	}
	for i, r := range j.bRows {
		if r < 0 {
			bRefs[i] = j.build.null
		} else {
			bRefs[i] = j.build.refs[r]
		}
	}
	j.pRows, j.bRows = j.pRows[:0], j.bRows[:0]
	chunks := []arrow.RecordBatch{pb}
	pg := newGatherer(j.probeSchema(), chunks)
	lg, rg, lRefs, rRefs := pg, j.build.gather, pRefs, bRefs
	if j.p.buildLeft {
		lg, rg, lRefs, rRefs = j.build.gather, pg, bRefs, pRefs
	}
	b, err := joinGather(j.ex, j.p, lg, rg, lRefs, rRefs)
	if err != nil {
		return err
	}
	j.pending = append(j.pending, b...)
	return nil
}

// identity reports whether the collected pairs pair every row of pb, in
// order, with one build row (the common many-to-one join): the probe
// columns are then pb's own.
func (j *joinOp) identity(pb arrow.RecordBatch) bool {
	if len(j.pRows) != int(pb.NumRows()) || !j.p.keepsRight && j.p.buildLeft {
		return false
	}
	for i, r := range j.pRows {
		if int(r) != i {
			return false
		}
	}
	return true
}

// emitIdentity emits the pairs of an identity batch (see identity),
// gathering only the build side.
func (j *joinOp) emitIdentity(pb arrow.RecordBatch) error {
	bRefs := make([]rowRef, len(j.bRows))
	for i, r := range j.bRows {
		if r < 0 {
			bRefs[i] = j.build.null
		} else {
			bRefs[i] = j.build.refs[r]
		}
	}
	j.pRows, j.bRows = j.pRows[:0], j.bRows[:0]
	for off := 0; off < len(bRefs); {
		var bb arrow.RecordBatch
		k := len(bRefs) - off
		if j.p.keepsRight || j.p.buildLeft {
			var err error
			if bb, err = j.build.gather.gather(j.ex.alloc, j.ex.soft, bRefs[off:]); err != nil {
				return err
			}
			k = int(bb.NumRows())
		}
		pp := pb.NewSlice(int64(off), int64(off+k))
		left, right := pp, bb
		if j.p.buildLeft {
			left, right = bb, pp
		}
		cols := append([]arrow.Array(nil), left.Columns()...)
		if j.p.keepsRight {
			for _, c := range j.p.rightKeep {
				cols = append(cols, right.Column(c))
			}
		}
		j.pending = append(j.pending, array.NewRecordBatch(j.p.out, cols, int64(k)))
		pp.Release()
		if bb != nil {
			bb.Release()
		}
		off += k
	}
	return nil
}

// joinGather gathers the left rows lRefs and the right rows rRefs (same
// length; right ignored for semi and anti joins) into output batches.
func joinGather(ex *exec, p *joinPlan, lg, rg *gatherer, lRefs, rRefs []rowRef) (out []arrow.RecordBatch, err error) {
	defer func() {
		if err != nil {
			for _, b := range out {
				b.Release()
			}
			out = nil
		}
	}()
	for len(lRefs) > 0 {
		lb, err := lg.gather(ex.alloc, ex.soft, lRefs)
		if err != nil {
			return out, err
		}
		k := int(lb.NumRows())
		cols := append([]arrow.Array(nil), lb.Columns()...)
		var rb arrow.RecordBatch
		if p.keepsRight {
			if rb, err = rg.gather(ex.alloc, ex.soft, rRefs[:k]); err != nil {
				lb.Release()
				return out, err
			}
			if k2 := int(rb.NumRows()); k2 < k {
				s := lb.NewSlice(0, int64(k2))
				lb.Release()
				lb, k = s, k2
				cols = append(cols[:0], lb.Columns()...)
			}
			for _, c := range p.rightKeep {
				cols = append(cols, rb.Column(c))
			}
		}
		out = append(out, array.NewRecordBatch(p.out, cols, int64(k)))
		lb.Release()
		if rb != nil {
			rb.Release()
		}
		lRefs = lRefs[k:]
		if p.keepsRight {
			rRefs = rRefs[k:]
		}
	}
	return out, nil
}

func (j *joinOp) close() {
	if j.par != nil {
		j.par.stop() // before the build side the workers read goes
		j.par = nil
	}
	if j.probeIn != nil {
		j.probeIn.close()
		j.probeIn = nil
	}
	if j.buildIn != nil {
		j.buildIn.close()
		j.buildIn = nil
	}
	if j.pb != nil {
		j.pb.Release()
		j.pb = nil
	}
	for _, b := range j.pending {
		b.Release()
	}
	j.pending = nil
	if j.nullP != nil {
		j.nullP.Release()
		j.nullP = nil
	}
	if j.spill != nil {
		j.spill.close()
		j.spill = nil
	}
	j.build.release()
	j.res.release()
	j.acct.release()
}
