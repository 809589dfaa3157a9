package engine

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/planner"
)

// keyCol is one key column of a groupTable: its output type and (when the
// table stores keys through chained ids) every group's key value.
type keyCol struct {
	dt  arrow.DataType // output type (decoded for dictionary strings)
	str bool           // string/large_string/dictionary string: gstrs; otherwise gbits
	// per group (store only)
	gbits  []uint64
	gstrs  []string
	gvalid []bool
}

// build returns the stored keys of groups [lo, hi) as an array of c.dt.
func (c *keyCol) build(mem memory.Allocator, lo, hi int) arrow.Array {
	valid := c.gvalid[lo:hi]
	if c.str {
		return buildStrings(mem, c.dt, c.gstrs[lo:hi], valid)
	}
	bits := c.gbits[lo:hi]
	if c.dt.ID() == arrow.BOOL {
		vs := make([]bool, len(bits))
		for i, b := range bits {
			vs[i] = b != 0
		}
		return buildBools(mem, vs, valid)
	}
	switch fixedWidth(c.dt) {
	case 1:
		return buildFixed(mem, c.dt, narrow[uint8](bits), valid)
	case 2:
		return buildFixed(mem, c.dt, narrow[uint16](bits), valid)
	case 4:
		return buildFixed(mem, c.dt, narrow[uint32](bits), valid)
	}
	return buildFixed(mem, c.dt, bits, valid)
}

func narrow[T ~uint8 | ~uint16 | ~uint32](bits []uint64) []T {
	out := make([]T, len(bits))
	for i, b := range bits {
		out[i] = T(b)
	}
	return out
}

// groupTable assigns dense group ids (0, 1, ... in first-seen order) to the
// distinct key tuples of the rows it sees. Null is a key value of its own;
// float keys compare by value with all NaNs equal and -0 == +0.
type groupTable struct {
	cols  []*keyCol
	store bool
	n     int // groups so far
	acct  *acct

	// chained ids (up to maxChainKeys columns): each column's values are
	// numbered by vids; a single column's value id is the group id, and
	// several columns combine pairwise, (id so far, next column's id) ->
	// dense id, through pairs. Every level hands out ids in first-seen row
	// order, so the last level's ids are the group ids.
	chain bool
	vids  []*valueIDs
	pairs []*u64Map
	pair2 *pairDense // two columns: pairs[0] behind a direct table
	idbuf [][]int32

	// wider keys: value ids packed into words (see packedKeys)
	packed *packedKeys

	gids  []int32
	fresh []int32 // rows of the batch that start a new group (assignChain)
	capN  int     // groups the stored keys have room for (growStore)

	// fromIDs: one integer-like key column, whose value ids are the group
	// ids and whose value → id table (the map, or the dense table) holds
	// every value's raw bits: the keys are not stored as groups are added
	// (8 bytes and a validity byte a group, grown in copies), but written
	// out of the table once, when the groups are complete (idKeys).
	fromIDs bool
}

// maxChainKeys is the most key columns grouped through chained value ids;
// wider keys are packed (chaining would keep one table per pair of levels,
// more memory and more probes than one table of packed tuples when rows are
// mostly distinct).
const maxChainKeys = 3

func newGroupTable(types []arrow.DataType, store bool, a *acct) *groupTable {
	t := &groupTable{store: store, acct: a}
	for _, dt := range types {
		t.cols = append(t.cols, &keyCol{dt: planner.Decoded(dt), str: isStringType(dt.ID()) || isDictStr(dt)})
	}
	if len(types) > maxChainKeys {
		t.packed = newPackedKeys(types, store, a)
		return t
	}
	t.chain = true
	for _, dt := range types {
		t.vids = append(t.vids, newValueIDs(dt, true, a))
	}
	if len(types) == 2 {
		t.pair2 = newPairDense(a)
		t.pairs = []*u64Map{t.pair2.m}
	} else {
		for range len(types) - 1 {
			t.pairs = append(t.pairs, newU64Map(a))
		}
	}
	t.idbuf = make([][]int32, len(types))
	return t
}

// assign returns the group id of every row of cols (the key columns of one
// batch, n rows). The slice is reused by the next call.
func (t *groupTable) assign(cols []arrow.Array, n int) []int32 {
	if t.packed != nil {
		gids := t.packed.assign(cols, n)
		t.n = t.packed.n
		return gids
	}
	return t.assignChain(cols, n)
}

// doneAssigning drops what only assign needs (the caller will only build
// keys from now on).
func (t *groupTable) doneAssigning() {
	if t.packed != nil {
		t.packed.doneAssigning()
	}
	if t.fromIDs {
		// The keys are written out now; the value → id table stays (and
		// stays charged) until the table is reset: given back here, its
		// bytes, garbage until the next collection, let the pool admit
		// another query's growth beside them (the 8-query soak peaked
		// 150 MiB higher).
		t.idKeys()
	}
}

// keysFromIDs makes a table that stores keys keep one integer-like key
// column's keys in its value → id table until its groups are complete
// (fromIDs): for a table whose keys are built only after its last assign
// (an aggregate's; a set operation's spill builds them mid-stream).
func (t *groupTable) keysFromIDs() {
	t.fromIDs = t.store && t.chain && len(t.cols) == 1 && t.vids[0].fmap != nil && t.vids[0].dense != nil
}

// idKeys writes the keys of every group so far out of the value → id
// table (fromIDs), once per number of groups: the arrays are taken before
// they are allocated.
func (t *groupTable) idKeys() {
	kc := t.cols[0]
	if len(kc.gbits) == t.n {
		return
	}
	per := t.groupKeyBytes()
	t.acct.take(int64(t.n) * per)
	t.acct.charge(-int64(t.capN) * per)
	t.capN = t.n
	kc.gbits, kc.gvalid = make([]uint64, t.n), make([]bool, t.n)
	t.vids[0].eachFixed(func(k uint64, id int32) {
		kc.gbits[id], kc.gvalid[id] = k, true
	})
}

// buildKey returns key column c of groups [lo, hi) (store only).
func (t *groupTable) buildKey(mem memory.Allocator, c, lo, hi int) arrow.Array {
	kc := t.cols[c]
	if t.fromIDs {
		t.idKeys()
	}
	if t.packed == nil {
		return kc.build(mem, lo, hi)
	}
	part := &keyCol{dt: kc.dt, str: kc.str}
	t.packed.decode(c, lo, hi, part)
	return part.build(mem, 0, hi-lo)
}

// valueIDsOf returns the value ids of key column c.
func (t *groupTable) valueIDsOf(c int) *valueIDs {
	if t.packed != nil {
		return t.packed.vids[c]
	}
	return t.vids[c]
}

// assignChain is assign through chained value ids (see groupTable.chain).
func (t *groupTable) assignChain(cols []arrow.Array, n int) []int32 {
	for c, v := range t.vids {
		t.idbuf[c] = v.assign(cols[c])
	}
	// Group g is new when it is the next id to hand out: t.n plus the new
	// groups met before it in this batch (their keys are stored after the loop).
	fresh := t.fresh[:0]
	var gids []int32
	switch len(t.vids) {
	case 1:
		gids = t.idbuf[0] // value ids are group ids
		// the rows that numbered new values start new groups
		if v := t.vids[0]; v.freshKnown {
			fresh = append(fresh, v.fresh...)
			break
		}
		for i, g := range gids {
			if int(g) == t.n+len(fresh) {
				fresh = append(fresh, int32(i))
			}
		}
	case 2:
		if cap(t.gids) < n {
			t.gids = make([]int32, n)
		}
		gids = t.gids[:n]
		a, b, p := t.idbuf[0][:n], t.idbuf[1][:n], t.pairs[0]
		if d := t.pair2; d.fit(t.vids[0].n, t.vids[1].n) {
			tab, shift := d.tab, d.bShift
			for i := range gids {
				x := uint64(a[i])<<shift | uint64(b[i])
				g := tab[x]
				if g < 0 {
					g, _ = p.getOrAdd(uint64(uint32(a[i]))<<32|uint64(uint32(b[i])), int32(p.n))
					tab[x] = g
				}
				gids[i] = g
				if int(g) == t.n+len(fresh) {
					fresh = append(fresh, int32(i))
				}
			}
			break
		}
		for i := range gids {
			g, _ := p.getOrAdd(uint64(uint32(a[i]))<<32|uint64(uint32(b[i])), int32(p.n))
			gids[i] = g
			if int(g) == t.n+len(fresh) {
				fresh = append(fresh, int32(i))
			}
		}
	default:
		if cap(t.gids) < n {
			t.gids = make([]int32, n)
		}
		gids = t.gids[:n]
		for i := range gids {
			acc := t.idbuf[0][i]
			for l, p := range t.pairs {
				acc, _ = p.getOrAdd(uint64(uint32(acc))<<32|uint64(uint32(t.idbuf[l+1][i])), int32(p.n))
			}
			gids[i] = acc
			if int(acc) == t.n+len(fresh) {
				fresh = append(fresh, int32(i))
			}
		}
	}
	t.fresh = fresh
	t.newChainGroups(cols, fresh)
	return gids
}

// newChainGroups counts the new groups that start at rows of cols and,
// when the table stores keys, keeps their key values (column by column).
func (t *groupTable) newChainGroups(cols []arrow.Array, rows []int32) {
	if len(rows) == 0 {
		return
	}
	t.n += len(rows)
	if !t.store || t.fromIDs {
		return
	}
	if t.n > t.capN {
		t.growStore()
	}
	for c, kc := range t.cols {
		arr, v := cols[c], t.vids[c]
		valid := validityOf(arr)
		for _, i := range rows {
			kc.gvalid = append(kc.gvalid, valid.ok(int(i)))
		}
		if kc.str {
			for _, i := range rows {
				s := ""
				if valid.ok(int(i)) {
					s = v.value(t.idbuf[c][i]) // the interned copy
				}
				kc.gstrs = append(kc.gstrs, s)
			}
			continue
		}
		kc.gbits = appendRaw(kc.gbits, arr, rows, valid)
	}
}

// growStore gives the stored keys room for groupCap(t.n) groups (chained
// ids): the new arrays are taken from the acct before they are allocated,
// the old ones given back once copied, a big step in turn with the query's
// others (acct.turn).
func (t *groupTable) growStore() {
	c := groupCap(t.n)
	per := t.groupKeyBytes()
	defer t.acct.turn(int64(c) * per)()
	t.acct.take(int64(c) * per)
	for _, kc := range t.cols {
		kc.gvalid = withCap(kc.gvalid, c)
		if kc.str {
			kc.gstrs = withCap(kc.gstrs, c)
		} else {
			kc.gbits = withCap(kc.gbits, c)
		}
	}
	t.acct.charge(-int64(t.capN) * per)
	t.capN = c
}

// withCap returns a copy of s with capacity c (>= len(s)).
func withCap[T any](s []T, c int) []T {
	t := make([]T, len(s), c)
	copy(t, s)
	return t
}

// groupKeyBytes is what storing one group's keys costs: validity, and a
// string header or the bits.
func (t *groupTable) groupKeyBytes() int64 {
	var b int64
	for _, kc := range t.cols {
		if kc.str {
			b += 17
		} else {
			b += 9
		}
	}
	return b
}

// appendRaw appends to dst the raw bits of rows of a fixed-width or
// boolean array, zero-extended as rawAt reads them (0 for null rows).
func appendRaw(dst []uint64, arr arrow.Array, rows []int32, valid validity) []uint64 {
	if arr.DataType().ID() == arrow.BOOL {
		for _, i := range rows {
			var b uint64
			if valid.ok(int(i)) {
				b = rawAt(arr, int(i))
			}
			dst = append(dst, b)
		}
		return dst
	}
	switch fixedWidth(arr.DataType()) {
	case 1:
		return appendRows(dst, values[uint8](arr), rows, valid)
	case 2:
		return appendRows(dst, values[uint16](arr), rows, valid)
	case 4:
		return appendRows(dst, values[uint32](arr), rows, valid)
	}
	return appendRows(dst, values[uint64](arr), rows, valid)
}

func appendRows[T uint8 | uint16 | uint32 | uint64](dst []uint64, vs []T, rows []int32, valid validity) []uint64 {
	for _, i := range rows {
		var b uint64
		if valid.ok(int(i)) {
			b = uint64(vs[i])
		}
		dst = append(dst, b)
	}
	return dst
}

// reset drops all state (the caller releases the charged bytes).
func (t *groupTable) reset() {
	t.gids = nil
	for _, v := range t.vids {
		v.reset()
	}
	t.vids, t.pairs, t.pair2, t.idbuf = nil, nil, nil, nil
	if t.packed != nil {
		t.packed.reset()
	}
	for _, c := range t.cols {
		c.gbits, c.gstrs, c.gvalid = nil, nil, nil
	}
	t.capN = 0
}
