// mode and arg_min / arg_max, and valStore, the per-group copy of one
// value of any comparable type that both keep.

package engine

import (
	"cmp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/planner"
)

// valStore keeps one value (or null) per slot, copied from rows of the
// current batch: the batch is read once per batch (load), rows are copied
// into slots by index (set), and the slots build an array of the decoded
// input type. It reuses the group keys' column (keyCol).
type valStore struct {
	k    keyCol // the per-slot values and the output type
	acct *acct
	// the loaded batch
	dict  bool
	cbuf  []int32
	raw   []uint64 // raw bits, zero-extended (numbers, booleans, dates)
	strs  []string // views into the batch (strings)
	valid validity
}

func newValStore(dt arrow.DataType, a *acct) *valStore {
	id := dt.ID()
	dict := isDictStr(dt)
	return &valStore{acct: a, dict: dict,
		k: keyCol{dt: planner.Decoded(dt), str: dict || isStringType(id)}}
}

// load reads a batch; the rows set copies come from it until the next load.
func (v *valStore) load(arr arrow.Array) {
	v.valid = validityOf(arr)
	switch {
	case v.dict:
		v.strs = dictRowViews(arr, v.strs, &v.cbuf)
	case v.k.str:
		v.strs = strViews(arr, v.strs)
	default:
		n := arr.Len()
		if cap(v.raw) < n {
			v.raw = make([]uint64, n)
		}
		v.raw = v.raw[:n]
		rawBits(arr, v.raw, false)
	}
}

// unload drops the views into the batch.
func (v *valStore) unload() { clear(v.strs) }

func (v *valStore) grow(n int) {
	v.k.gvalid = growTo(v.k.gvalid, n)
	if v.k.str {
		v.k.gstrs = growTo(v.k.gstrs, n)
	} else {
		v.k.gbits = growTo(v.k.gbits, n)
	}
}

// set copies row i of the loaded batch into slot k.
func (v *valStore) set(k, i int) {
	ok := v.valid.ok(i)
	v.k.gvalid[k] = ok
	if !v.k.str {
		v.k.gbits[k] = v.raw[i]
		return
	}
	s := ""
	if ok {
		s = strings.Clone(v.strs[i])
	}
	v.acct.charge(int64(len(s) - len(v.k.gstrs[k])))
	v.k.gstrs[k] = s
}

// bytes is the Go memory of one slot (strings: beyond their text).
const valStoreBytes = 17

func (v *valStore) build(mem memory.Allocator, lo, hi int) arrow.Array { return v.k.build(mem, lo, hi) }

// ---- mode ----

// modeState is mode: the count of every (group, value) pair (values
// numbered query-wide by valueIDs, so they compare as group keys do), and
// per group the pair with the highest count, ties going to the pair seen
// first (pair indices grow in input order), with a copy of its value.
type modeState struct {
	ids    *valueIDs
	pairs  *u64Map
	counts []int64 // per pair
	best   []int32 // per group: best pair + 1 (0: none)
	vals   *valStore
	acct   *acct
}

func newModeState(dt arrow.DataType, a *acct) aggState {
	if !supportedCompute(dt) {
		return nil
	}
	return &modeState{ids: newValueIDs(dt, false, a), pairs: newU64Map(a), vals: newValStore(dt, a), acct: a}
}

func (s *modeState) grow(n int)        { s.best = growTo(s.best, n); s.vals.grow(n) }
func (s *modeState) groupBytes() int64 { return 4 + valStoreBytes }

func (s *modeState) update(col arrow.Array, gids []int32) error {
	ids := s.ids.assign(col)[:len(gids)]
	s.vals.load(col)
	defer s.vals.unload()
	counts, best := s.counts, s.best
	added := 0
	for i, g := range gids {
		id := ids[i]
		if id < 0 {
			continue
		}
		p, isNew := s.pairs.getOrAdd(uint64(uint32(g))<<32|uint64(uint32(id)), int32(len(counts)))
		if isNew {
			counts = append(counts, 0)
			added++
		}
		counts[p]++
		b := best[g] - 1
		if b == p {
			continue
		}
		if b < 0 || counts[p] > counts[b] || (counts[p] == counts[b] && p < b) {
			best[g] = p + 1
			s.vals.set(int(g), i)
		}
	}
	s.counts = counts
	s.acct.charge(int64(added) * 8)
	return nil
}

func (s *modeState) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return s.vals.build(mem, lo, hi)
}

// ---- arg_min / arg_max ----

// argBest is arg_min / arg_max with a fixed-width (or boolean, as 0/1)
// compared column: per group the best compared value so far and a copy
// of the returned column at its row. Rows where either column is null are
// skipped; NaN never replaces a number (as in min/max); ties keep the
// first row.
type argBest[T ordered] struct {
	max  bool
	load func(arrow.Array, *[]T) []T
	buf  []T
	cur  []T
	seen []bool
	vals *valStore
}

func (s *argBest[T]) grow(n int) {
	s.cur, s.seen = growTo(s.cur, n), growTo(s.seen, n)
	s.vals.grow(n)
}
func (s *argBest[T]) groupBytes() int64 { return 9 + valStoreBytes }

func (s *argBest[T]) update(arrow.Array, []int32) error { panic("arg_min/arg_max need two columns") }

func (s *argBest[T]) update2(col, by arrow.Array, gids []int32) error {
	bys := s.load(by, &s.buf)
	vb, vc := validityOf(by), validityOf(col)
	s.vals.load(col)
	defer s.vals.unload()
	cur, seen := s.cur, s.seen
	for i, g := range gids {
		if !vb.ok(i) || !vc.ok(i) {
			continue
		}
		x := bys[i]
		if seen[g] {
			if x != x { // NaN
				continue
			}
			c := cur[g]
			if c == c && (s.max && x <= c || !s.max && x >= c) {
				continue
			}
		}
		cur[g], seen[g] = x, true
		s.vals.set(int(g), i)
	}
	return nil
}

func (s *argBest[T]) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return s.vals.build(mem, lo, hi)
}

// argBestStr is arg_min / arg_max with a string compared column (bytewise).
type argBestStr struct {
	max  bool
	buf  []string
	cbuf []int32
	cur  []string
	seen []bool
	vals *valStore
	acct *acct
}

func (s *argBestStr) grow(n int) {
	s.cur, s.seen = growTo(s.cur, n), growTo(s.seen, n)
	s.vals.grow(n)
}
func (s *argBestStr) groupBytes() int64 { return 17 + valStoreBytes }

func (s *argBestStr) update(arrow.Array, []int32) error { panic("arg_min/arg_max need two columns") }

func (s *argBestStr) update2(col, by arrow.Array, gids []int32) error {
	s.buf = strViewsAny(by, s.buf, &s.cbuf)
	defer clear(s.buf)
	vb, vc := validityOf(by), validityOf(col)
	s.vals.load(col)
	defer s.vals.unload()
	var delta int64
	for i, g := range gids {
		if !vb.ok(i) || !vc.ok(i) {
			continue
		}
		x := s.buf[i]
		if s.seen[g] {
			if c := cmp.Compare(x, s.cur[g]); c == 0 || (c > 0) != s.max {
				continue
			}
		}
		delta += int64(len(x) - len(s.cur[g]))
		s.cur[g], s.seen[g] = strings.Clone(x), true
		s.vals.set(int(g), i)
	}
	s.acct.charge(delta)
	return nil
}

func (s *argBestStr) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return s.vals.build(mem, lo, hi)
}

func fixedLoad[T arrow.FixedWidthType](arr arrow.Array, _ *[]T) []T { return values[T](arr) }

func boolLoad(arr arrow.Array, buf *[]uint8) []uint8 {
	*buf = boolBytes(arr, *buf)
	return *buf
}

// newArgBest returns arg_min (arg_max with max) returning a column of type
// dt at the best row of a compared column of type by.
func newArgBest(dt, by arrow.DataType, max bool, a *acct) aggState {
	if !supportedCompute(dt) {
		return nil
	}
	vals := newValStore(dt, a)
	id := by.ID()
	if isDictStr(by) || isStringType(id) {
		return &argBestStr{max: max, vals: vals, acct: a}
	}
	switch id {
	case arrow.INT8:
		return &argBest[int8]{max: max, vals: vals, load: fixedLoad[int8]}
	case arrow.INT16:
		return &argBest[int16]{max: max, vals: vals, load: fixedLoad[int16]}
	case arrow.INT32:
		return &argBest[int32]{max: max, vals: vals, load: fixedLoad[int32]}
	case arrow.INT64:
		return &argBest[int64]{max: max, vals: vals, load: fixedLoad[int64]}
	case arrow.UINT8:
		return &argBest[uint8]{max: max, vals: vals, load: fixedLoad[uint8]}
	case arrow.UINT16:
		return &argBest[uint16]{max: max, vals: vals, load: fixedLoad[uint16]}
	case arrow.UINT32:
		return &argBest[uint32]{max: max, vals: vals, load: fixedLoad[uint32]}
	case arrow.UINT64:
		return &argBest[uint64]{max: max, vals: vals, load: fixedLoad[uint64]}
	case arrow.FLOAT32:
		return &argBest[float32]{max: max, vals: vals, load: fixedLoad[float32]}
	case arrow.FLOAT64:
		return &argBest[float64]{max: max, vals: vals, load: fixedLoad[float64]}
	case arrow.DATE32:
		return &argBest[arrow.Date32]{max: max, vals: vals, load: fixedLoad[arrow.Date32]}
	case arrow.TIMESTAMP:
		return &argBest[arrow.Timestamp]{max: max, vals: vals, load: fixedLoad[arrow.Timestamp]}
	case arrow.BOOL:
		return &argBest[uint8]{max: max, vals: vals, load: boolLoad}
	}
	return nil
}
