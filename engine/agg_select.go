package engine

import (
	"math/bits"
	"slices"
)

// selectKth reorders vs (NaN-free) so that vs[k] is the value of rank k
// (0-based, as if sorted), every value left of k is <= vs[k] and every
// value right of k is >= vs[k], and returns vs[k]. It is a quickselect
// (median-of-three pivot, Hoare partition, which splits runs of equal
// values evenly) in expected linear time; after 2*log2(n) rounds that did
// not narrow the range enough it sorts what is left, so the worst case is
// O(n log n).
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
		i, j := lo, hi
		for i <= j {
			for vs[i] < pivot {
				i++
			}
			for vs[j] > pivot {
				j--
			}
			if i <= j {
				vs[i], vs[j] = vs[j], vs[i]
				i++
				j--
			}
		}
		// vs[lo..j] <= pivot, vs[i..hi] >= pivot, vs[j+1..i-1] == pivot.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return vs[k]
		}
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
