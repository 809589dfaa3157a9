package engine

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// intDense takes the place of valueIDs' hash map for integer-like columns
// whose values lie in a small range (H2O's id4..id6: 1..100 and 1..N/100;
// TPC-H's order and customer keys): the id of value x is tab[x-lo], so a
// row costs one array read instead of a hash and a probe of a table 4–10×
// larger, and a new value is numbered without touching the map. While the
// table is in use it holds every id (the map holds none); the window
// [lo, lo+len(tab)) covers every value seen so far and grows (at least
// doubling) when a batch's values fall outside it; it is dropped for good,
// its ids moved into the map, when it would hold more than intDenseMax
// slots or be sparse (more than 8 slots per value numbered plus rows of the
// batch): keys such as timestamps or wide ranges keep the map alone.
type intDense struct {
	tab  []int32 // -1: no value numbered
	lo   int64
	off  bool
	m    *u64Map // the map the ids move into when the table is dropped
	acct *acct
}

// intDenseMax is the most slots of an intDense table (32 MiB; the map of
// the 1/4 as many values it must at least hold takes as much).
const intDenseMax = 1 << 23

// denseInts reports whether a column of type dt gets an intDense table:
// integers, dates, times, timestamps and durations, whose raw bits
// (rawBits: 8-byte values as they are, narrower ones zero-extended) order
// as int64 without gaps between neighbouring values.
func denseInts(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION:
		return true
	}
	return false
}

// fit makes the window cover the valid values of bits (nids: the ids
// numbered so far) and reports whether the table is in use.
func (d *intDense) fit(bits []uint64, valid validity, nids int32) bool {
	if d.off {
		return false
	}
	mn, mx, any := int64(math.MaxInt64), int64(math.MinInt64), false
	if valid.bits == nil {
		for _, b := range bits {
			mn, mx = min(mn, int64(b)), max(mx, int64(b))
		}
		any = len(bits) > 0
	} else {
		for i, b := range bits {
			if valid.ok(i) {
				mn, mx, any = min(mn, int64(b)), max(mx, int64(b)), true
			}
		}
	}
	n := uint64(len(d.tab))
	if !any || (n > 0 && uint64(mn)-uint64(d.lo) < n && uint64(mx)-uint64(d.lo) < n) {
		return true
	}
	lo, hi := mn, mx
	if n > 0 {
		lo, hi = min(lo, d.lo), max(hi, d.lo+int64(n-1))
	}
	span := uint64(hi) - uint64(lo) + 1 // (0 when the span is 2^64: over the limit too)
	if span == 0 || span > intDenseMax || span > 8*(uint64(nids)+uint64(len(bits)))+4096 {
		d.drop()
		return false
	}
	size := max(span, min(2*n, intDenseMax))
	start := lo // the window grows away from the old one
	if n > 0 && mn < d.lo {
		if uint64(hi)-1<<63 < size-1 { // (hi - MinInt64, unsigned)
			start = math.MinInt64
		} else {
			start = hi - int64(size-1)
		}
	} else if start > math.MaxInt64-int64(size-1) {
		start = math.MaxInt64 - int64(size-1)
	}
	d.acct.take(4 * int64(size))
	tab := make([]int32, size)
	for i := range tab {
		tab[i] = -1
	}
	shift := uint64(d.lo) - uint64(start)
	for i, id := range d.tab {
		tab[shift+uint64(i)] = id
	}
	d.acct.charge(-4 * int64(n))
	d.tab, d.lo = tab, start
	return true
}

// drop gives the table up for good, moving its ids into the map.
func (d *intDense) drop() {
	for i, id := range d.tab {
		if id >= 0 {
			d.m.getOrAdd(uint64(d.lo)+uint64(i), id)
		}
	}
	d.acct.charge(-4 * int64(len(d.tab)))
	d.tab, d.off = nil, true
}

// active reports whether the table holds the ids.
func (d *intDense) active() bool { return d != nil && !d.off }

// each calls fn with the bits and the id of every value in the table.
func (d *intDense) each(fn func(k uint64, id int32)) {
	for i, id := range d.tab {
		if id >= 0 {
			fn(uint64(d.lo)+uint64(i), id)
		}
	}
}

// assignDense is valueIDs.assign's loop for fixed-width bits through the
// table (active), from row i on; it returns the first valid row whose value
// lies outside the window (len(bits) when there is none), for the caller to
// fit the window to the batch and go on, so that a batch inside the window
// is read once.
func (v *valueIDs) assignDense(arr arrow.Array, bits []uint64, out []int32, valid validity, i int) int {
	tab, lo := v.dense.tab, uint64(v.dense.lo)
	size := uint64(len(tab))
	for ; i < len(bits); i++ {
		if valid.bits == nil {
			if i = denseRun(tab, lo, bits, out, i); i == len(bits) {
				break
			}
		} else if !valid.ok(i) {
			out[i] = v.nullAt(i)
			continue
		}
		x := bits[i] - lo
		if x >= size {
			return i
		}
		s := &tab[x]
		if *s < 0 {
			*s = v.newFixed(arr, i)
		}
		out[i] = *s
	}
	return len(bits)
}

// denseRun is assignDense's loop over rows without nulls while their values
// are in the window and numbered already (a leaf, so that it keeps every
// variable in a register): it returns the first row from i on that is not
// (len(bits) when there is none).
func denseRun(tab []int32, lo uint64, bits []uint64, out []int32, i int) int {
	size := uint64(len(tab))
	out = out[:len(bits)]
	for ; i < len(bits); i++ {
		x := bits[i] - lo
		if x >= size {
			return i
		}
		id := tab[x]
		if id < 0 {
			return i
		}
		out[i] = id
	}
	return i
}
