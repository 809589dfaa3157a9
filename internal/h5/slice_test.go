package h5

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/qerr"
)

func TestParseSlice(t *testing.T) {
	type want struct {
		start, stride, count []int64
		dropped              []bool
		shape                []int64
	}
	tests := []struct {
		name  string
		s     string
		shape []int64
		want  want
	}{
		{"empty selects all", "", []int64{4, 5}, want{[]int64{0, 0}, []int64{1, 1}, []int64{4, 5}, []bool{false, false}, []int64{4, 5}}},
		{"unit tuple selects all", "()", []int64{3}, want{[]int64{0}, []int64{1}, []int64{3}, []bool{false}, []int64{3}}},
		{"range and colon", "0:10, :", []int64{20, 3}, want{[]int64{0, 0}, []int64{1, 1}, []int64{10, 3}, []bool{false, false}, []int64{10, 3}}},
		{"integer drops dim", "5", []int64{10, 2}, want{[]int64{5, 0}, []int64{1, 1}, []int64{1, 2}, []bool{true, false}, []int64{2}}},
		{"negative index", "-1", []int64{10}, want{[]int64{9}, []int64{1}, []int64{1}, []bool{true}, []int64{}}},
		{"step", "::3", []int64{10}, want{[]int64{0}, []int64{3}, []int64{4}, []bool{false}, []int64{4}}},
		{"start stop step", "1:8:2", []int64{10}, want{[]int64{1}, []int64{2}, []int64{4}, []bool{false}, []int64{4}}},
		{"negative start", "-3:", []int64{10}, want{[]int64{7}, []int64{1}, []int64{3}, []bool{false}, []int64{3}}},
		{"negative stop", ":-2", []int64{10}, want{[]int64{0}, []int64{1}, []int64{8}, []bool{false}, []int64{8}}},
		{"clamped stop", "5:100", []int64{10}, want{[]int64{5}, []int64{1}, []int64{5}, []bool{false}, []int64{5}}},
		{"clamped negative start", "-100:2", []int64{10}, want{[]int64{0}, []int64{1}, []int64{2}, []bool{false}, []int64{2}}},
		{"empty range", "7:3", []int64{10}, want{[]int64{0}, []int64{1}, []int64{0}, []bool{false}, []int64{0}}},
		{"start past end", "20:", []int64{10}, want{[]int64{0}, []int64{1}, []int64{0}, []bool{false}, []int64{0}}},
		{"ellipsis first", "..., 1", []int64{2, 3, 4}, want{[]int64{0, 0, 1}, []int64{1, 1, 1}, []int64{2, 3, 1}, []bool{false, false, true}, []int64{2, 3}}},
		{"ellipsis middle", "0, ..., 1:3", []int64{2, 3, 4}, want{[]int64{0, 0, 1}, []int64{1, 1, 1}, []int64{1, 3, 2}, []bool{true, false, false}, []int64{3, 2}}},
		{"ellipsis expands to nothing", "1, 2, ...", []int64{3, 4}, want{[]int64{1, 2}, []int64{1, 1}, []int64{1, 1}, []bool{true, true}, []int64{}}},
		{"scalar with ellipsis", "...", []int64{}, want{[]int64{}, []int64{}, []int64{}, []bool{}, []int64{}}},
		{"brackets and spaces", " [ 1 : 3 , 0 ] ", []int64{5, 2}, want{[]int64{1, 0}, []int64{1, 1}, []int64{2, 1}, []bool{false, true}, []int64{2}}},
		{"trailing comma", "2,", []int64{5}, want{[]int64{2}, []int64{1}, []int64{1}, []bool{true}, []int64{}}},
		{"None fields", "None:3:None", []int64{5}, want{[]int64{0}, []int64{1}, []int64{3}, []bool{false}, []int64{3}}},
		{"plus sign", "+2", []int64{5}, want{[]int64{2}, []int64{1}, []int64{1}, []bool{true}, []int64{}}},
		{"zero length dim", ":", []int64{0}, want{[]int64{0}, []int64{1}, []int64{0}, []bool{false}, []int64{0}}},
		{"huge step", "::9223372036854775807", []int64{10}, want{[]int64{0}, []int64{9223372036854775807}, []int64{1}, []bool{false}, []int64{1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := ParseSlice(tc.s, tc.shape)
			if err != nil {
				t.Fatalf("ParseSlice(%q): %v", tc.s, err)
			}
			got := want{sel.Start, sel.Stride, sel.Count, sel.Dropped, sel.Shape()}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseSlice(%q, %v)\n got %+v\nwant %+v", tc.s, tc.shape, got, tc.want)
			}
		})
	}
}

func TestParseSliceErrors(t *testing.T) {
	tests := []struct {
		name     string
		s        string
		shape    []int64
		contains string
	}{
		{"index out of range", "10", []int64{10}, "out of bounds for axis 0 with size 10"},
		{"negative index out of range", "-11", []int64{10}, "out of bounds"},
		{"index into empty dim", "0", []int64{0}, "out of bounds"},
		{"too many dims", "1, 2", []int64{5}, "too many indices"},
		{"index on scalar", "0", []int64{}, "too many indices"},
		{"zero step", "::0", []int64{5}, "step cannot be zero"},
		{"negative step", "::-1", []int64{5}, "negative slice steps"},
		{"two ellipses", "..., ...", []int64{5, 5}, "single ellipsis"},
		{"garbage", "abc", []int64{5}, "not an integer"},
		{"expression", "__import__('os')", []int64{5}, "not an integer"},
		{"arithmetic", "1+1", []int64{5}, "not an integer"},
		{"float", "1.5", []int64{5}, "not an integer"},
		{"too many colons", "1:2:3:4", []int64{5}, "too many colons"},
		{"empty part", "1,,2", []int64{5, 5, 5}, "empty index"},
		{"overflow", "99999999999999999999", []int64{5}, "out of range"},
		{"lone sign", "-", []int64{5}, "not an integer"},
		{"too long", strings.Repeat(":,", 3000), []int64{5}, "too long"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSlice(tc.s, tc.shape)
			if err == nil {
				t.Fatalf("ParseSlice(%q, %v) succeeded", tc.s, tc.shape)
			}
			var qe *qerr.Error
			if !errors.As(err, &qe) || qe.Code != qerr.CodeInvalidSlice || !errors.Is(err, qerr.ErrInvalidArgument) {
				t.Fatalf("error %v is not an invalid_slice qerr", err)
			}
			if !strings.Contains(qe.Message, tc.contains) {
				t.Fatalf("message %q does not contain %q", qe.Message, tc.contains)
			}
			if !strings.Contains(qe.Hint, "shape") || qe.Diagnostics["shape"] == nil {
				t.Fatalf("hint %q / diagnostics %v lack the shape", qe.Hint, qe.Diagnostics)
			}
		})
	}
}

// checkSelection verifies the invariants every successful parse must hold.
func checkSelection(t *testing.T, s string, shape []int64, sel Selection) {
	t.Helper()
	rank := len(shape)
	if len(sel.Start) != rank || len(sel.Stride) != rank || len(sel.Count) != rank || len(sel.Dropped) != rank {
		t.Fatalf("%q on %v: selection rank mismatch %+v", s, shape, sel)
	}
	for d := 0; d < rank; d++ {
		n := shape[d]
		if sel.Stride[d] < 1 || sel.Count[d] < 0 || sel.Start[d] < 0 {
			t.Fatalf("%q on %v: bad dim %d: %+v", s, shape, d, sel)
		}
		if sel.Count[d] > 0 {
			last := sel.Start[d] + (sel.Count[d]-1)*sel.Stride[d]
			if sel.Start[d] >= n || last >= n || last < sel.Start[d] {
				t.Fatalf("%q on %v: dim %d selects beyond the end: %+v", s, shape, d, sel)
			}
		}
		if sel.Dropped[d] && sel.Count[d] != 1 {
			t.Fatalf("%q on %v: dropped dim %d has count %d", s, shape, d, sel.Count[d])
		}
	}
}

func FuzzParseSlice(f *testing.F) {
	for _, s := range []string{"", "...", "0:10, :", "5", "-1", "::2", "1:8:2", "..., 1", "[1:3, 0]", "None:3", "::-1", "1,,2", "99999999999999999999", "-9223372036854775808", "9223372036854775807:", ":-9223372036854775808"} {
		f.Add(s, int64(10), int64(3), uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, d0, d1 int64, rank uint8) {
		shape := []int64{d0, d1, 7}[:rank%4]
		for i := range shape {
			if shape[i] < 0 {
				shape[i] = -shape[i]
			}
			if shape[i] < 0 { // MinInt64
				shape[i] = 0
			}
		}
		sel, err := ParseSlice(s, shape)
		if err != nil {
			if qerr.Code(err) != qerr.CodeInvalidSlice {
				t.Fatalf("%q: error without invalid_slice code: %v", s, err)
			}
			return
		}
		checkSelection(t, s, shape, sel)
	})
}
