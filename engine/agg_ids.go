package engine

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// valueIDs numbers the distinct values of one column across a whole query:
// dense ids 0, 1, ... in the order the values are first seen. Group keys
// and count_distinct work on these small integers instead of the values.
//
// Values compare as group keys do: strings bytewise (plain and
// dictionary-encoded strings alike), fixed-width values by their bits with
// floats normalized (every NaN equal, -0 == +0). With nulls set, null is a
// value with an id of its own; otherwise null rows get id -1.
//
// Dictionary-encoded strings are resolved once per dictionary entry: each
// batch's dictionary gets a code → id table filled on first use, so the
// strings are hashed per distinct entry and batch, not per row. A
// dictionary much larger than its batch is resolved per row instead (a
// table would cost more than the rows), unless the previous batch had the
// same dictionary (one shared by many batches, as the column cache's): the
// table then serves every batch that shares it.
type valueIDs struct {
	str    bool // plain or dictionary-encoded strings
	dict   bool // dictionary-encoded strings
	nulls  bool // null is a value (group keys)
	nullID int32
	n      int32 // ids handed out

	// strings: id of each value and value of each id (copies)
	smap  map[string]int32 // longer than shortStrMax bytes
	short *shortStrs       // the others
	sbuf  strBatch         // (assignStrs)
	strs  []string

	// dictionary: id per entry of the last dictionary seen (-1: unresolved)
	ddata arrow.ArrayData
	dmap  []int32
	cbuf  []int32
	dlast arrow.ArrayData // the last dictionary resolved per row (too large for its batch)

	// fixed width: id per normalized bit pattern
	fmap  *u64Map
	dense *intDense // instead of fmap while in use, for integer-like columns (nil: not one)
	bits  []uint64

	// keep: the raw bits of each id's first row (fixed width; 0 for null),
	// so that ids can be turned back into values (packedKeys)
	keep bool
	vals []uint64

	out  []int32
	acct *acct

	// fresh: the rows of the last assign that numbered a new value, in row
	// order, when freshKnown (fixed-width columns; strings leave it unset)
	fresh      []int32
	freshKnown bool
}

func newValueIDs(dt arrow.DataType, nulls bool, a *acct) *valueIDs {
	v := &valueIDs{nulls: nulls, nullID: -1, acct: a}
	v.dict = isDictStr(dt)
	v.str = v.dict || isStringType(dt.ID())
	if v.str {
		v.smap = map[string]int32{}
		v.short = newShortStrs(a)
	} else {
		v.fmap = newU64Map(a)
		if denseInts(dt) {
			v.dense = &intDense{m: v.fmap, acct: a}
		}
	}
	return v
}

// strID returns the id of s (a view into Arrow memory), copying s when it
// is new.
func (v *valueIDs) strID(s string) int32 {
	if len(s) <= shortStrMax {
		return v.short.id(s, v) // (agg_strids.go)
	}
	if id, ok := v.smap[s]; ok {
		return id
	}
	id := v.newStr(s)
	v.smap[v.strs[id]] = id
	v.acct.charge(48) // map entry
	return id
}

// newStr numbers s, a new value, keeping a copy of it.
func (v *valueIDs) newStr(s string) int32 {
	id := v.n
	v.n++
	s = strings.Clone(s)
	v.strs = append(v.strs, s)
	v.acct.charge(int64(len(s)) + 16) // copy, strs slot
	return id
}

// null returns the id of null rows: -1 unless nulls is set.
func (v *valueIDs) null() int32 {
	if !v.nulls {
		return -1
	}
	if v.nullID < 0 {
		v.nullID = v.n
		v.n++
		if v.str {
			v.strs = append(v.strs, "")
			v.acct.charge(16)
		} else if v.keep {
			v.vals = append(v.vals, 0)
			v.acct.charge(8)
		}
	}
	return v.nullID
}

// assign returns the id of every row of arr. The slice is reused by the
// next call.
func (v *valueIDs) assign(arr arrow.Array) []int32 {
	n := arr.Len()
	if cap(v.out) < n {
		v.out = make([]int32, n)
	}
	out := v.out[:n]
	valid := validityOf(arr)
	v.freshKnown = false
	switch {
	case v.dict && isDictStr(arr.DataType()): // (a partial aggregate's decoded keys are plain: agg_parallel.go)
		v.assignDict(arr, out, valid)
	case v.str:
		v.assignStrs(strSrcOf(arr), out, valid)
	default:
		var bits []uint64
		if id := arr.DataType().ID(); fixedWidth(arr.DataType()) == 8 && id != arrow.FLOAT64 {
			bits = values[uint64](arr) // the raw bits are the key: no copy
		} else {
			if cap(v.bits) < n {
				v.bits = make([]uint64, n)
			}
			bits = v.bits[:n]
			rawBits(arr, bits, true)
		}
		v.fresh, v.freshKnown = v.fresh[:0], true
		i := 0
		if v.dense.active() { // (agg_ids_dense.go)
			if i = v.assignDense(arr, bits, out, valid, 0); i < n && v.dense.fit(bits, valid, v.n) {
				i = v.assignDense(arr, bits, out, valid, i)
			}
		}
		for ; i < n; i++ {
			if !valid.ok(i) {
				out[i] = v.nullAt(i)
				continue
			}
			out[i] = v.fixedID(arr, i, bits[i])
		}
	}
	return out
}

// nullAt is null for row i of a fixed-width assign, which records the row
// in fresh when it numbers null.
func (v *valueIDs) nullAt(i int) int32 {
	n := v.n
	id := v.null()
	if v.n != n {
		v.fresh = append(v.fresh, int32(i))
	}
	return id
}

// fixedID returns the id of row i of arr (fixed width), whose bits are k,
// through the map.
func (v *valueIDs) fixedID(arr arrow.Array, i int, k uint64) int32 {
	id, added := v.fmap.getOrAdd(k, v.n)
	if added {
		v.n++
		v.fresh = append(v.fresh, int32(i))
		if v.keep {
			v.vals = append(v.vals, rawAt(arr, i))
			v.acct.charge(8)
		}
	}
	return id
}

// newFixed numbers row i of arr (fixed width), a value not seen before.
func (v *valueIDs) newFixed(arr arrow.Array, i int) int32 {
	id := v.n
	v.n++
	v.fresh = append(v.fresh, int32(i))
	if v.keep {
		v.vals = append(v.vals, rawAt(arr, i))
		v.acct.charge(8)
	}
	return id
}

// bitsID returns the id of the fixed-width value of normalized bits k,
// numbering it when new (only where keep is off: there is no row to keep).
func (v *valueIDs) bitsID(k uint64) int32 {
	one := [1]uint64{k}
	if v.dense != nil && v.dense.fit(one[:], validity{}, v.n) {
		s := &v.dense.tab[k-uint64(v.dense.lo)]
		if *s < 0 {
			*s = v.n
			v.n++
		}
		return *s
	}
	id, added := v.fmap.getOrAdd(k, v.n)
	if added {
		v.n++
	}
	return id
}

// eachFixed calls fn with the bits and the id of every fixed-width value
// numbered (null's id aside).
func (v *valueIDs) eachFixed(fn func(k uint64, id int32)) {
	if v.dense.active() {
		v.dense.each(fn)
	}
	for _, sl := range v.fmap.slots {
		if sl.v >= 0 {
			fn(sl.k, sl.v)
		}
	}
}

func (v *valueIDs) assignDict(arr arrow.Array, out []int32, valid validity) {
	if len(out) == 0 {
		return
	}
	if x := dictIndices(arr, &v.cbuf); x.i16 != nil {
		assignCodes(v, arr, x.i16, out, valid)
	} else {
		assignCodes(v, arr, x.i32, out, valid)
	}
}

// assignCodes is assignDict for one index width.
func assignCodes[T codeType](v *valueIDs, arr arrow.Array, codes []T, out []int32, valid validity) {
	n := len(out)
	codes = codes[:n]
	dict := dictValues(arr)
	src := strSrcOf(dict)
	nd := src.n
	// A code outside the dictionary reads as "" (as dictRowViews does).
	at := func(c T) string {
		if c < 0 || int(c) >= nd {
			return ""
		}
		return src.at(int(c))
	}
	dd := dict.Data()
	if nd > 2*n+4096 && dd != v.ddata && dd != v.dlast {
		v.dlast = dd // a dictionary seen again (shared by batches) takes the table
		for i, c := range codes {
			if !valid.ok(i) {
				out[i] = v.null()
				continue
			}
			out[i] = v.strID(at(c))
		}
		return
	}
	if dd != v.ddata {
		if c := cap(v.dmap); nd > c {
			v.acct.charge(int64(nd-c) * 4)
		}
		v.dmap = growTo(v.dmap[:0], nd)[:nd]
		for i := range v.dmap {
			v.dmap[i] = -1
		}
		v.ddata = dd
	}
	dmap := v.dmap
	for i, c := range codes {
		if valid.bits != nil && !valid.ok(i) {
			out[i] = v.null()
			continue
		}
		if uint(c) < uint(nd) {
			id := dmap[c]
			if id < 0 {
				id = v.strID(src.at(int(c)))
				dmap[c] = id
			}
			out[i] = id
			continue
		}
		out[i] = v.strID(at(c))
	}
}

// value returns the string of id (strings only; "" for null).
func (v *valueIDs) value(id int32) string { return v.strs[id] }

// reset drops all state (the caller releases the charged bytes).
func (v *valueIDs) reset() {
	v.smap, v.short, v.strs, v.ddata, v.dmap, v.cbuf, v.fmap, v.bits, v.out, v.vals, v.fresh = nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil
	v.dlast = nil
	v.dense = nil
	v.n, v.nullID = 0, -1
}

// rawAt returns the raw bits of row i of a fixed-width or boolean array,
// zero-extended (as rawBits writes them).
func rawAt(arr arrow.Array, i int) uint64 {
	if arr.DataType().ID() == arrow.BOOL {
		d := arr.Data()
		if b := d.Buffers()[1]; b != nil {
			return uint64(getBit(b.Bytes(), d.Offset()+i))
		}
		return 0
	}
	switch fixedWidth(arr.DataType()) {
	case 1:
		return uint64(values[uint8](arr)[i])
	case 2:
		return uint64(values[uint16](arr)[i])
	case 4:
		return uint64(values[uint32](arr)[i])
	}
	return values[uint64](arr)[i]
}
