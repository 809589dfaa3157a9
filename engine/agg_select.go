package engine

import (
	"math/bits"
	"slices"
)

// selectKth reorders vs (NaN-free) so that vs[k] is the value of rank k
// (0-based, as if sorted), every value left of k is <= vs[k] and every
// value right of k is >= vs[k], and returns vs[k]. It is a quickselect
// (median-of-three pivot) in expected linear time whose partitions have no
// branch on the data (partitionBelow: the comparisons of random values
// mispredict half the time): one pass splits the range into values below
// the pivot and the rest and, when k is in the rest, a second pass splits
// that into values equal to the pivot and above it, so runs of equal values
// end the search at once. After 2*log2(n) rounds that did not narrow the
// range enough it sorts what is left, so the worst case is O(n log n).
func selectKth(vs []float64, k int) float64 {
	lo, hi := 0, len(vs)-1
	rounds := 2*bits.Len(uint(len(vs))) + 4
	for hi-lo > 16 {
		if rounds == 0 {
			slices.Sort(vs[lo : hi+1])
			return vs[k]
		}
		rounds--
		mid := lo + (hi-lo)/2
		if vs[mid] < vs[lo] {
			vs[mid], vs[lo] = vs[lo], vs[mid]
		}
		if vs[hi] < vs[lo] {
			vs[hi], vs[lo] = vs[lo], vs[hi]
		}
		if vs[hi] < vs[mid] {
			vs[hi], vs[mid] = vs[mid], vs[hi]
		}
		pivot := vs[mid]
		// vs[lo..j-1] < pivot, vs[j..m-1] == pivot, vs[m..hi] > pivot; the
		// pivot itself is in the middle part, so the range always narrows.
		j := lo + partitionBelow(vs[lo:hi+1], pivot, false)
		if k < j {
			hi = j - 1
			continue
		}
		m := j + partitionBelow(vs[j:hi+1], pivot, true)
		if k < m {
			return vs[k]
		}
		lo = m
	}
	// insertion sort of the small rest
	for i := lo + 1; i <= hi; i++ {
		x := vs[i]
		j := i
		for j > lo && vs[j-1] > x {
			vs[j] = vs[j-1]
			j--
		}
		vs[j] = x
	}
	return vs[k]
}

// partitionBelow moves the values of vs below p (at most p with eq) to its
// front, in one pass with no branch on the values (Lomuto's scheme with an
// unconditional swap; the values compare as orderKey integers,
// agg_approx.go, which the compiler turns into a SETcc where a float
// comparison stays a branch), and returns how many there are. -0 counts as
// below +0.
func partitionBelow(vs []float64, p float64, eq bool) int {
	j, kp := 0, orderKey(p)
	if eq {
		kp++ // at most p: below p's successor
	}
	for i, x := range vs {
		vs[i] = vs[j]
		vs[j] = x
		c := 0
		if orderKey(x) < kp {
			c = 1
		}
		j += c
	}
	return j
}
