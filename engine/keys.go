package engine

import (
	"encoding/binary"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/planner"
)

// keyCol is one key column of a groupTable: the current batch's values in
// hashable form, and (when the table stores keys) every group's key value.
type keyCol struct {
	dt    arrow.DataType  // output type (decoded for dictionary strings)
	str   bool            // string/large_string/dictionary string: strs; otherwise bits
	dict  bool            // dictionary-encoded string
	codes dictIdx         // dict: the current batch's indices
	cbuf  []int32         // dictIndices' scratch
	ddata arrow.ArrayData // dict: the current batch's dictionary
	float bool            // float32/64: hash normalized bits, store raw bits
	// current batch
	raw   []uint64 // raw bits, zero-extended
	norm  []uint64 // == raw unless float
	strs  []string // views into the batch
	valid validity
	// per group (store only)
	gbits  []uint64
	gstrs  []string
	gvalid []bool
}

func (c *keyCol) load(arr arrow.Array) {
	n := arr.Len()
	c.valid = validityOf(arr)
	if c.dict {
		c.strs = dictRowViews(arr, c.strs, &c.cbuf)
		c.codes = dictIndices(arr, &c.cbuf)
		c.ddata = dictValues(arr).Data()
		return
	}
	if c.str {
		c.strs = strViews(arr, c.strs)
		return
	}
	if cap(c.raw) < n {
		c.raw = make([]uint64, n)
	}
	c.raw = c.raw[:n]
	rawBits(arr, c.raw, false)
	if !c.float {
		c.norm = c.raw
		return
	}
	if cap(c.norm) < n {
		c.norm = make([]uint64, n)
	}
	c.norm = c.norm[:n]
	rawBits(arr, c.norm, true)
}

// keep stores row i of the current batch as the key of a new group and
// returns the Go bytes it holds.
func (c *keyCol) keep(i int) int64 {
	ok := c.valid.ok(i)
	c.gvalid = append(c.gvalid, ok)
	if c.str {
		s := ""
		if ok {
			s = strings.Clone(c.strs[i]) // copy out of Arrow memory
		}
		c.gstrs = append(c.gstrs, s)
		return int64(17 + len(s))
	}
	c.gbits = append(c.gbits, c.raw[i])
	return 9
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

	// single fixed-width key
	single bool
	m64    map[uint64]int32
	nullID int32

	// general: encoded key tuples
	m    map[string]int32
	buf  []byte
	offs []int
	pos  []int

	// single dictionary-encoded string key: group id per dictionary entry
	// (-1 unknown), valid while the dictionary stays the same.
	dcache []int32
	ddata  arrow.ArrayData

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

	gids []int32
}

// maxChainKeys is the most key columns grouped through chained value ids;
// wider keys are encoded as byte strings (chaining would keep one table per
// column and per pair of levels, more memory than one table of tuples when
// rows are mostly distinct).
const maxChainKeys = 3

func newGroupTable(types []arrow.DataType, store bool, a *acct) *groupTable {
	t := &groupTable{store: store, acct: a, nullID: -1}
	for _, dt := range types {
		id := dt.ID()
		dict := isDictStr(dt)
		t.cols = append(t.cols, &keyCol{dt: planner.Decoded(dt), str: isStringType(id) || dict, dict: dict,
			float: id == arrow.FLOAT32 || id == arrow.FLOAT64})
	}
	if len(types) <= maxChainKeys {
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
	if len(t.cols) == 1 && !t.cols[0].str {
		t.single = true
		t.m64 = make(map[uint64]int32)
	} else {
		t.m = make(map[string]int32)
	}
	return t
}

// newGroup registers row i of the current batch as group t.n.
func (t *groupTable) newGroup(i int, keyBytes int) int32 {
	id := int32(t.n)
	t.n++
	cost := int64(keyBytes) + 48
	if t.store {
		for _, c := range t.cols {
			cost += c.keep(i)
		}
	}
	t.acct.charge(cost)
	return id
}

// assign returns the group id of every row of cols (the key columns of one
// batch, n rows). The slice is reused by the next call.
func (t *groupTable) assign(cols []arrow.Array, n int) []int32 {
	if t.chain {
		return t.assignChain(cols, n)
	}
	for i, c := range t.cols {
		c.load(cols[i])
	}
	if cap(t.gids) < n {
		t.gids = make([]int32, n)
	}
	gids := t.gids[:n]
	if t.single {
		c := t.cols[0]
		for i, k := range c.norm[:n] {
			if !c.valid.ok(i) {
				if t.nullID < 0 {
					t.nullID = t.newGroup(i, 0)
				}
				gids[i] = t.nullID
				continue
			}
			id, ok := t.m64[k]
			if !ok {
				id = t.newGroup(i, 8)
				t.m64[k] = id
			}
			gids[i] = id
		}
		return gids
	}
	if len(t.cols) == 1 && t.cols[0].dict {
		return t.assignDict(gids)
	}
	t.encode(n)
	for i := range gids {
		key := t.buf[t.offs[i]:t.offs[i+1]]
		id, ok := t.m[string(key)]
		if !ok {
			id = t.newGroup(i, len(key)+16)
			t.m[string(key)] = id
		}
		gids[i] = id
	}
	return gids
}

// assignDict assigns group ids for a single dictionary-encoded string key:
// each dictionary entry is hashed once (per dictionary), rows map through
// their codes. Keys are encoded exactly as encode does, so ids agree with
// batches of any encoding.
func (t *groupTable) assignDict(gids []int32) []int32 {
	c := t.cols[0]
	nd := 0
	if c.ddata != nil {
		nd = c.ddata.Len()
	}
	useCache := nd <= 2*len(gids)+4096
	if useCache && t.ddata != c.ddata {
		t.dcache = growTo(t.dcache[:0], nd)[:nd]
		for i := range t.dcache {
			t.dcache[i] = -1
		}
		t.ddata = c.ddata
	}
	var key []byte
	lookup := func(i int) int32 {
		key = key[:0]
		if !c.valid.ok(i) {
			key = append(key, 0)
		} else {
			s := c.strs[i]
			key = append(key, 1, 0, 0, 0, 0)
			binary.LittleEndian.PutUint32(key[1:], uint32(len(s)))
			key = append(key, s...)
		}
		id, ok := t.m[string(key)]
		if !ok {
			id = t.newGroup(i, len(key)+16)
			t.m[string(key)] = id
		}
		return id
	}
	for i := range gids {
		code := c.codes.at(i)
		if useCache && c.valid.ok(i) && code >= 0 && int(code) < nd {
			if id := t.dcache[code]; id >= 0 {
				gids[i] = id
				continue
			}
			id := lookup(i)
			t.dcache[code] = id
			gids[i] = id
			continue
		}
		gids[i] = lookup(i)
	}
	return gids
}

// encode writes every row's key tuple as bytes into buf (row i at
// offs[i]:offs[i+1]); each value is a null flag, then 8 bytes for fixed-width
// values or a 4-byte length and the bytes for strings (prefix-free).
func (t *groupTable) encode(n int) {
	if cap(t.offs) < n+1 {
		t.offs = make([]int, n+1)
		t.pos = make([]int, n)
	}
	offs, pos := t.offs[:n+1], t.pos[:n]
	clear(offs)
	for _, c := range t.cols {
		if c.str {
			for i, s := range c.strs[:n] {
				if c.valid.ok(i) {
					offs[i+1] += 5 + len(s)
				} else {
					offs[i+1]++
				}
			}
			continue
		}
		if c.valid.bits == nil {
			for i := range pos {
				offs[i+1] += 9
			}
			continue
		}
		for i := range pos {
			if c.valid.ok(i) {
				offs[i+1] += 9
			} else {
				offs[i+1]++
			}
		}
	}
	for i := 1; i <= n; i++ {
		offs[i] += offs[i-1]
	}
	if cap(t.buf) < offs[n] {
		t.buf = make([]byte, offs[n])
	}
	buf := t.buf[:offs[n]]
	copy(pos, offs[:n])
	for _, c := range t.cols {
		if c.str {
			for i, s := range c.strs[:n] {
				p := pos[i]
				if !c.valid.ok(i) {
					buf[p] = 0
					pos[i] = p + 1
					continue
				}
				buf[p] = 1
				binary.LittleEndian.PutUint32(buf[p+1:], uint32(len(s)))
				pos[i] = p + 5 + copy(buf[p+5:], s)
			}
			continue
		}
		for i, k := range c.norm[:n] {
			p := pos[i]
			if !c.valid.ok(i) {
				buf[p] = 0
				pos[i] = p + 1
				continue
			}
			buf[p] = 1
			binary.LittleEndian.PutUint64(buf[p+1:], k)
			pos[i] = p + 9
		}
	}
}

// assignChain is assign through chained value ids (see groupTable.chain).
func (t *groupTable) assignChain(cols []arrow.Array, n int) []int32 {
	for c, v := range t.vids {
		t.idbuf[c] = v.assign(cols[c])
	}
	var gids []int32
	switch len(t.vids) {
	case 1:
		gids = t.idbuf[0] // value ids are group ids
		for i, g := range gids {
			if int(g) == t.n {
				t.newChainGroup(cols, i)
			}
		}
		return gids
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
				if int(g) == t.n {
					t.newChainGroup(cols, i)
				}
			}
			return gids
		}
		for i := range gids {
			g, _ := p.getOrAdd(uint64(uint32(a[i]))<<32|uint64(uint32(b[i])), int32(p.n))
			gids[i] = g
			if int(g) == t.n {
				t.newChainGroup(cols, i)
			}
		}
		return gids
	}
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
		if int(acc) == t.n {
			t.newChainGroup(cols, i)
		}
	}
	return gids
}

// newChainGroup registers row i of cols as group t.n (chained ids).
func (t *groupTable) newChainGroup(cols []arrow.Array, i int) {
	t.n++
	if !t.store {
		return
	}
	var cost int64
	for c, kc := range t.cols {
		arr, v := cols[c], t.vids[c]
		ok := arr.IsValid(i)
		kc.gvalid = append(kc.gvalid, ok)
		if kc.str {
			s := ""
			if ok {
				s = v.value(t.idbuf[c][i]) // the interned copy
			}
			kc.gstrs = append(kc.gstrs, s)
			cost += 17
			continue
		}
		var bits uint64
		if ok {
			bits = rawAt(arr, i)
		}
		kc.gbits = append(kc.gbits, bits)
		cost += 9
	}
	t.acct.charge(cost)
}

// reset drops all state (the caller releases the charged bytes).
func (t *groupTable) reset() {
	t.m, t.m64, t.buf, t.offs, t.pos, t.gids = nil, nil, nil, nil, nil, nil
	t.dcache, t.ddata = nil, nil
	for _, v := range t.vids {
		v.reset()
	}
	t.vids, t.pairs, t.pair2, t.idbuf = nil, nil, nil, nil
	for _, c := range t.cols {
		c.raw, c.norm, c.strs, c.gbits, c.gstrs, c.gvalid = nil, nil, nil, nil, nil, nil
		c.codes, c.cbuf, c.ddata = dictIdx{}, nil, nil
	}
}
