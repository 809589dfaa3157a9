//go:build cgo && !nohdf5

package hdf5

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/quarrydb/quarry/internal/jsonx"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/qerr"
)

func TestReadSlice(t *testing.T) {
	fx := sharedFixtures(t)
	f := NewFormat(WithRoot(fx.dir))
	defer f.Close()
	tests := []struct {
		path, slice string
		shape       []int64
		dtype       string
		json        string
	}{
		{"/matrix", "0:3, ::2", []int64{3, 2}, "float64", `[[0,2],[10,12],[20,22]]`},
		{"/matrix", "-1", []int64{4}, "float64", `[190,191,192,193]`},
		{"/matrix", "2, 3", nil, "float64", `23`},
		{"/matrix", "5:5", []int64{0, 4}, "float64", `[]`},
		{"/matrix", ":2, 4:", []int64{2, 0}, "float64", `[[],[]]`},
		{"/cube", "1", []int64{3, 4}, "int16", `[[12,13,14,15],[16,17,18,19],[20,21,22,23]]`},
		{"/cube", "..., 0", []int64{2, 3}, "int16", `[[0,4,8],[12,16,20]]`},
		{"/cube", ":, 1:, ::3", []int64{2, 2, 2}, "int16", `[[[4,7],[8,11]],[[16,19],[20,23]]]`},
		{"/scalar", "", nil, "float64", `3.141592653589793`},
		{"/scalar", "...", nil, "float64", `3.141592653589793`},
		{"/nan", ":", []int64{4}, "float64", `["NaN","Infinity","-Infinity",1.5]`},
		{"/bigint", ":", []int64{3}, "int64", `["1152921504606846976","-1152921504606846976",42]`},
		{"/table/u64", ":2", []int64{2}, "uint64", `["1152921504606846976","1152921504606846977"]`},
		{"/table/u8", "250:", []int64{0}, "uint8", `[]`},
		{"/table/flag", ":4", []int64{4}, "bool", `[true,false,false,true]`},
		{"/table/color", "1:4", []int64{3}, "enum(int16){RED=0, GREEN=1, BLUE=5}", `["GREEN","BLUE","RED"]`},
		{"/table/code", "6:8", []int64{2}, "|S4", `["c6","abcd"]`},
		{"/table/name", "-2:", []int64{2}, "vlen utf-8 string", `["row-98-Գեղարդ","row-99-Գեղարդ"]`},
		{"/table/i16be", "1:3", []int64{2}, "int16", `[-1,-2]`},
		{"/table/f32be", "1:3", []int64{2}, "float32", `[1.25,2.5]`},
		{"/table/x", "::50", []int64{2}, "float64", `[0,25]`},
		{"/events", "1", nil, "", `{"id":1000,"pos":{"x":1.25,"y":-1},"vec":[10,11,12],"ok":true,"tag":"t01","label":"event 1 ✓","blob":null}`},
		{"/bigendian", "0", []int64{3}, "int32", `[-100,-93,-86]`},
		{"/empty", ":", []int64{0}, "float64", `[]`},
		{"/zero2d", "", []int64{0, 3}, "float64", `[]`},
		{"/links/soft", "0:2", []int64{2}, "float64", `[0,0.5]`},
		{"/links/ext", "1:3", []int64{2}, "float64", `[101,102]`},
		{"/links/extgroup/data", "-1", nil, "float64", `105`},
		{"/links/softgroup/b", "...", []int64{5}, "int8", `[-1,-2,-3,-4,-5]`},
	}
	for _, tc := range tests {
		t.Run(tc.path+"["+tc.slice+"]", func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s, err := f.ReadSlice(context.Background(), fx.main, tc.path, tc.slice, mem)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Release()
			if len(s.Shape) != len(tc.shape) || (len(tc.shape) > 0 && !reflect.DeepEqual(s.Shape, tc.shape)) {
				t.Errorf("shape = %v, want %v", s.Shape, tc.shape)
			}
			if tc.dtype != "" && s.DType != tc.dtype {
				t.Errorf("dtype = %q, want %q", s.DType, tc.dtype)
			}
			got := string(s.AppendNestedJSON(nil))
			if got != tc.json {
				t.Errorf("JSON = %s\n want %s", got, tc.json)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("invalid JSON %s", got)
			}
		})
	}
}

func TestReadSliceErrors(t *testing.T) {
	fx := sharedFixtures(t)
	f := NewFormat(WithRoot(fx.dir))
	defer f.Close()
	small := NewFormat(WithRoot(fx.dir), WithMaxSliceBytes(100))
	defer small.Close()
	tests := []struct {
		f           *Format
		path, slice string
		code        string
		cat         error
		contains    string
	}{
		{f, "/table", ":", qerr.CodeNotADataset, qerr.ErrInvalidArgument, "group"},
		{f, "/", "", qerr.CodeNotADataset, qerr.ErrInvalidArgument, "group"},
		{f, "/types/color_t", "", qerr.CodeNotADataset, qerr.ErrInvalidArgument, "named_datatype"},
		{f, "/links/dangling", ":", qerr.CodeDanglingLink, qerr.ErrNotFound, "/nope"},
		{f, "/links/extmissing", ":", qerr.CodeDanglingLink, qerr.ErrNotFound, "missing.h5"},
		{f, "/links/extbadobj", ":", qerr.CodeDanglingLink, qerr.ErrNotFound, "/missing"},
		{f, "/links/loop1", ":", qerr.CodeDanglingLink, qerr.ErrInvalidArgument, "cycle"},
		{f, "/links/extoutside", ":", qerr.CodePathOutsideRoot, qerr.ErrPermission, "outside"},
		{f, "/nope", ":", qerr.CodeResourceNotFound, qerr.ErrNotFound, "/nope"},
		{f, "/matrix", "20", qerr.CodeInvalidSlice, qerr.ErrInvalidArgument, "out of bounds"},
		{f, "/matrix", "0, 0, 0", qerr.CodeInvalidSlice, qerr.ErrInvalidArgument, "too many indices"},
		{f, "/matrix", "os.system('x')", qerr.CodeInvalidSlice, qerr.ErrInvalidArgument, "not an integer"},
		{f, "/scalar", "0", qerr.CodeInvalidSlice, qerr.ErrInvalidArgument, "too many indices"},
		{f, "/null", "", qerr.CodeInvalidSlice, qerr.ErrInvalidArgument, "null dataspace"},
		{f, "/refs", ":", qerr.CodeUnsupportedType, qerr.ErrUnsupported, "object reference"},
		{f, "/filters/blosc", ":", qerr.CodeUnsupportedFilter, qerr.ErrUnsupported, "blosc"},
		{f, "/filters/lzo", "0", qerr.CodeUnsupportedFilter, qerr.ErrUnsupported, "lzo"},
		{small, "/matrix", ":", qerr.CodeOversizeResult, qerr.ErrLimitExceeded, "limit"},
		{f, "/extstore", ":", qerr.CodeUnsupportedFormat, qerr.ErrUnsupported, "external file"},
	}
	for _, tc := range tests {
		t.Run(tc.path+"["+tc.slice+"]", func(t *testing.T) {
			s, err := tc.f.ReadSlice(context.Background(), fx.main, tc.path, tc.slice, nil)
			if err == nil {
				s.Release()
				t.Fatal("succeeded")
			}
			if qerr.Code(err) != tc.code || !errors.Is(err, tc.cat) {
				t.Fatalf("error %v: want code %s", err, tc.code)
			}
			if !strings.Contains(err.Error(), tc.contains) {
				t.Fatalf("error %q does not mention %q", err, tc.contains)
			}
		})
	}
	// The slice limit does not block small reads.
	s, err := small.ReadSlice(context.Background(), fx.main, "/matrix", "0", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.ReadSlice(ctx, fx.main, "/matrix", "", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ReadSlice = %v", err)
	}
}

func TestSliceTable(t *testing.T) {
	fx := sharedFixtures(t)
	f := NewFormat(WithRoot(fx.dir))
	defer f.Close()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := f.ReadSlice(context.Background(), fx.main, "/cube", "1, 1:, ::2", mem)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	rec, err := s.Table(mem)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if got := fieldSig(rec.Schema()); !reflect.DeepEqual(got, []string{"i0:int64", "i1:int64", "value:int16"}) {
		t.Fatalf("schema = %v", got)
	}
	i0 := rec.Column(0).(*array.Int64).Int64Values()
	i1 := rec.Column(1).(*array.Int64).Int64Values()
	v := rec.Column(2).(*array.Int16).Int16Values()
	// cube[1, j, k] = 12 + 4j + k for j in 1..2, k in {0, 2}.
	wantI0, wantI1 := []int64{1, 1, 2, 2}, []int64{0, 2, 0, 2}
	wantV := []int16{16, 18, 20, 22}
	if !reflect.DeepEqual(i0, wantI0) || !reflect.DeepEqual(i1, wantI1) || !reflect.DeepEqual(v, wantV) {
		t.Fatalf("table = %v %v %v", i0, i1, v)
	}
	sc, err := f.ReadSlice(context.Background(), fx.main, "/scalar", "", mem)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	rec2, err := sc.Table(mem)
	if err != nil {
		t.Fatal(err)
	}
	defer rec2.Release()
	if rec2.NumRows() != 1 || rec2.NumCols() != 1 || rec2.Schema().Field(0).Name != "value" {
		t.Fatalf("scalar table = %v", rec2)
	}
	ev, err := f.ReadSlice(context.Background(), fx.main, "/events", "::10", mem)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Release()
	rec3, err := ev.Table(mem)
	if err != nil {
		t.Fatal(err)
	}
	defer rec3.Release()
	if rec3.NumRows() != 5 || rec3.Column(1).DataType().ID() != arrow.STRUCT {
		t.Fatalf("compound table = %v", rec3.Schema())
	}
}

func TestAppendJSONString(t *testing.T) {
	tests := map[string]string{
		"plain":          `"plain"`,
		`q"uo\te`:        `"q\"uo\\te"`,
		"line\nbreak\t":  `"line\nbreak\t"`,
		"\x00\x1f\x7f":   "\"\\u0000\\u001f\x7f\"",
		"bad\xffutf8":    "\"bad\ufffdutf8\"",
		"Գեղարդ":         `"Գեղարդ"`,
		"sep\u2028x":     `"sep\u2028x"`,
		"<script>&amp;'": `"<script>&amp;'"`,
	}
	for in, want := range tests {
		got := string(jsonx.AppendString(nil, in))
		if got != want {
			t.Errorf("AppendString(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("%s is not valid JSON: %v", got, err)
		}
	}
}
