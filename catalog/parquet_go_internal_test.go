package catalog

import (
	"slices"
	"testing"
)

// TestGatherCodes checks the one-pass dictionary gather of the parquet-go
// read path: codes in range are copied, the first code out of range (too
// big or negative, as a corrupt page can hold) stops it, and checkCodes
// then names it.
func TestGatherCodes(t *testing.T) {
	dict := []int64{10, 20, 30}
	for _, tc := range []struct {
		codes []int32
		ok    bool
		want  []int64
	}{
		{[]int32{2, 0, 1, 1}, true, []int64{30, 10, 20, 20}},
		{[]int32{}, true, []int64{}},
		{[]int32{0, 3}, false, nil},
		{[]int32{1, -1}, false, nil},
		{[]int32{-2147483648}, false, nil},
	} {
		dst := make([]int64, len(tc.codes))
		ok := gatherCodes(dst, dict, tc.codes)
		if ok != tc.ok {
			t.Fatalf("codes %v: ok %v, want %v", tc.codes, ok, tc.ok)
		}
		if ok && !slices.Equal(dst, tc.want) {
			t.Fatalf("codes %v: %v, want %v", tc.codes, dst, tc.want)
		}
		if err := checkCodes(tc.codes, len(dict)); (err == nil) != ok {
			t.Fatalf("codes %v: checkCodes %v, gatherCodes %v", tc.codes, err, ok)
		}
	}
}
