package engine

import (
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestLendVector checks the zero-copy hand-off of computed number columns:
// the lent vector leaves the pool (the next evaluation writes elsewhere, the
// array keeps its values), comes back when the array is released, and is
// taken again by the pool; a vector that is not pooled is not lent.
func TestLendVector(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a := acct{b: &budget{}}
	ev := &evaluator{pool: vecPool{acct: &a, lend: &lender{}}, mem: mem}

	fs := ev.pool.float64s(4)
	copy(fs, []float64{1, 2, 3, 4})
	arr := ev.lendVector(vec{floats: fs, valid: []bool{true, false, true, true}})
	if arr == nil {
		t.Fatal("a pooled vector was not lent")
	}
	ev.pool.reset()
	next := ev.pool.float64s(4)
	if unsafe.SliceData(next) == unsafe.SliceData(fs) {
		t.Fatal("the pool handed out a vector that is lent")
	}
	copy(next, []float64{9, 9, 9, 9})
	got := arr.(*array.Float64)
	if got.Len() != 4 || got.NullN() != 1 || got.Value(0) != 1 || got.Value(3) != 4 || got.IsValid(1) {
		t.Fatalf("lent array %v", got)
	}
	is := ev.pool.int64s(3) // a second slot, int64
	copy(is, []int64{7, 8, 9})
	iarr := ev.lendVector(vec{isInt: true, ints: is})
	if iarr == nil || iarr.(*array.Int64).Value(2) != 9 {
		t.Fatalf("lent int64 array %v", iarr)
	}

	arr.Release()
	iarr.Release()
	ev.pool.reset()
	ev.pool.float64s(4) // slot 0 still holds next
	back := ev.pool.float64s(4)
	if p := unsafe.Pointer(unsafe.SliceData(back)); p != unsafe.Pointer(unsafe.SliceData(fs)) && p != unsafe.Pointer(unsafe.SliceData(is)) {
		t.Fatal("a released lent vector did not come back to the pool")
	}

	own := []float64{5, 6}
	if ev.lendVector(vec{floats: own}) != nil {
		t.Fatal("a vector the pool does not hold was lent")
	}
}
