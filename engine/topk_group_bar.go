package engine

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// The bar of the top n per group: once a group holds n rows, a new row
// must rank before its n-th to be kept, and most rows of a large input do
// not (H2O q8: 100 rows per group, 2 kept). When the first rank key is a
// number, date or timestamp, each value maps to order bits (a uint64 that
// never decreases along the key's order: nulls, NaN and the direction
// included) and every group keeps the order bits of its n-th row; a row
// whose bits are above its group's bar ranks after that row and is dropped
// after one read of a dense array, without touching the group's buffer or
// the retained chunks. Equal bits prove nothing (the later keys decide)
// and go through the full comparison.

// topNBars turns the bars on (a variable so that tests can compare with
// the operator without them).
var topNBars = true

// topNBarCopied is called when fold retains a copy of the rows within the
// bars instead of the batch (a test hook).
var topNBarCopied = func() {}

// normKey is a sortKey whose values have order bits.
type normKey interface {
	sortKey
	// normBatch writes the order bits of arr's rows to out (resized).
	normBatch(arr arrow.Array, out []uint64) []uint64
	// normAt returns the order bits of a retained row.
	normAt(r rowRef) uint64
}

// barKey returns k as a normKey, or nil when its values have no order bits.
func barKey(k sortKey) normKey {
	switch o := k.(type) {
	case *ordKey[int8]:
		return normOrNil(o)
	case *ordKey[int16]:
		return normOrNil(o)
	case *ordKey[int32]:
		return normOrNil(o)
	case *ordKey[int64]:
		return normOrNil(o)
	case *ordKey[uint8]:
		return normOrNil(o)
	case *ordKey[uint16]:
		return normOrNil(o)
	case *ordKey[uint32]:
		return normOrNil(o)
	case *ordKey[uint64]:
		return normOrNil(o)
	case *ordKey[float32]:
		return normOrNil(o)
	case *ordKey[float64]:
		return normOrNil(o)
	}
	return nil
}

func normOrNil[T integer | float](k *ordKey[T]) normKey {
	if k.norm == nil {
		return nil
	}
	return k
}

// signedBits, unsignedBits and floatBits are the ascending order bits of
// a value; values that compare equal have equal bits (-0 is +0's), or a
// row tied on the first key but ahead on a later one would be dropped.
func signedBits[T int8 | int16 | int32 | int64](x T) uint64       { return uint64(int64(x)) ^ 1<<63 }
func unsignedBits[T uint8 | uint16 | uint32 | uint64](x T) uint64 { return uint64(x) }
func floatBits[T float32 | float64](x T) uint64 {
	f := float64(x)
	if f == 0 {
		f = 0 // -0 is +0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// nullBits are the order bits of null: first or last.
func (k *ordKey[T]) nullBits() uint64 {
	if k.first {
		return 0
	}
	return math.MaxUint64
}

// valueBits are the order bits of a non-null value: the direction applied;
// NaN after every number (numbers stay at or below 0xfff0…, the bits of
// ±Inf, in both directions).
func (k *ordKey[T]) valueBits(x T) uint64 {
	if x != x {
		return math.MaxUint64 - 1
	}
	u := k.norm(x)
	if k.desc {
		u = ^u
	}
	return u
}

func (k *ordKey[T]) normBatch(arr arrow.Array, out []uint64) []uint64 {
	vs := k.load(arr)
	out = resize(out, len(vs))
	valid := validityOf(arr)
	for i, x := range vs {
		if valid.bits != nil && !valid.ok(i) {
			out[i] = k.nullBits()
			continue
		}
		out[i] = k.valueBits(x)
	}
	return out
}

func (k *ordKey[T]) normAt(r rowRef) uint64 {
	if !k.valid[r.b].ok(int(r.r)) {
		return k.nullBits()
	}
	return k.valueBits(k.vals[r.b][r.r])
}

// topNBar is the bars of a topNGroupOp (see above).
//
// With one rank key and n at most barRowsMax, every group also keeps the
// order bits of each of its buffered rows (rows, per = n slots a group, in
// buffer order): a row that passes the bar finds its place among them
// without reading the retained chunks, whose rows are scattered over
// memory (H2O q8: about ten of a group's hundred rows pass, each compared
// with the rows kept so far).
type topNBar struct {
	key  normKey
	col  int      // the key's column
	bars []uint64 // per group: its n-th row's order bits; MaxUint64 while it holds fewer
	per  int      // slots per group in rows (0: rows not kept)
	rows []uint64 // per group, per slots: its buffered rows' order bits
	buf  []uint64 // the batch's order bits
	pass []rowRef // the batch's rows within their group's bar (fold)
}

// barRowsMax is the largest n whose rows' order bits are kept.
const barRowsMax = 8

// grow adds n groups (their bars MaxUint64: nothing is rejected yet).
func (b *topNBar) grow(n int) {
	for range n {
		b.bars = append(b.bars, math.MaxUint64)
	}
	b.rows = growTo(b.rows, len(b.bars)*b.per)
}
