package engine

import (
	"math"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/planner"
)

// rangeKeys holds the single order key of a range frame with offsets, in
// partition order (perm positions). Ordinary rows (non-null, non-NaN) sort
// first in every partition, so they are a prefix of it.
type rangeKeys struct {
	ints   []int64   // integer, date and timestamp keys
	floats []float64 // float keys
	ok     []bool    // ordinary row
	desc   bool
}

// rangeKeys loads the layout's order key for range offsets (once).
func (w *windowOp) rangeKeys(l *winLayout, k planner.SortKey) (*rangeKeys, error) {
	if l.rk != nil {
		return l.rk, nil
	}
	n := w.total
	if err := w.acct.reserve(int64(9 * n)); err != nil {
		return nil, err
	}
	rk := &rangeKeys{ok: make([]bool, n), desc: k.Desc}
	dt := w.n.Input.Schema().Field(k.Index).Type
	var glob *numCol
	switch dt.ID() {
	case arrow.DATE32, arrow.TIMESTAMP:
		if err := w.acct.reserve(int64(9 * n)); err != nil { // (loadNum reserves its own)
			return nil, err
		}
		glob = &numCol{ints: make([]int64, n), valid: make([]bool, n)}
		for c, ch := range w.chunks {
			a := ch.Column(k.Index)
			v := validityOf(a)
			for r := range a.Len() {
				g := w.offs[c] + r
				if dt.ID() == arrow.DATE32 {
					glob.ints[g] = int64(values[int32](a)[r])
				} else {
					glob.ints[g] = values[int64](a)[r]
				}
				glob.valid[g] = v.ok(r)
			}
		}
	default:
		var err error
		if glob, err = w.loadNum(k.Index, dt.ID() == arrow.FLOAT32 || dt.ID() == arrow.FLOAT64); err != nil {
			return nil, err
		}
	}
	if glob.ints != nil {
		rk.ints = make([]int64, n)
	} else {
		rk.floats = make([]float64, n)
	}
	for i, g := range l.gidx {
		if rk.ints != nil {
			rk.ints[i] = glob.ints[g]
			rk.ok[i] = glob.ok(int(g))
		} else {
			x := glob.floats[g]
			rk.floats[i] = x
			rk.ok[i] = glob.ok(int(g)) && x == x
		}
	}
	l.rk = rk
	return rk, nil
}

// bound returns the range frame bound b (an offset) of perm position i in
// the partition [lo, hi): the first position whose key is not before
// (start) or is after (end) the current key shifted by the offset.
// Positions past the ordinary rows are never included; a row that is not
// ordinary (null or NaN key) gets its peer group.
func (rk *rangeKeys) bound(b planner.FrameBound, end bool, lo, hi, i int, peerS, peerE []int32) int {
	if !rk.ok[i] {
		if end {
			return int(peerE[i])
		}
		return int(peerS[i])
	}
	oe := lo + sort.Search(hi-lo, func(j int) bool { return !rk.ok[lo+j] })
	// Shift toward preceding rows: in ascending order smaller values.
	toward := b.Kind == planner.Preceding
	if rk.desc {
		toward = !toward
	}
	var before func(j int) bool // key[j] is before the target (or, for end, not after it)
	if rk.ints != nil {
		t := rk.ints[i]
		if toward {
			t = satSub(t, b.N)
		} else {
			t = satAdd(t, b.N)
		}
		before = func(j int) bool {
			x := rk.ints[j]
			if rk.desc {
				return x > t || (end && x == t)
			}
			return x < t || (end && x == t)
		}
	} else {
		t := rk.floats[i]
		if toward {
			t -= float64(b.N)
		} else {
			t += float64(b.N)
		}
		before = func(j int) bool {
			x := rk.floats[j]
			if rk.desc {
				return x > t || (end && x == t)
			}
			return x < t || (end && x == t)
		}
	}
	return lo + sort.Search(oe-lo, func(j int) bool { return !before(lo + j) })
}

func satAdd(a, n int64) int64 {
	if a > math.MaxInt64-n {
		return math.MaxInt64
	}
	return a + n
}

func satSub(a, n int64) int64 {
	if a < math.MinInt64+n {
		return math.MinInt64
	}
	return a - n
}
