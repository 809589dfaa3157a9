package h5_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	. "github.com/quarrydb/quarry/internal/h5"
	. "github.com/quarrydb/quarry/internal/h5/h5write"
)

// rawAttr creates attribute name on obj with file and memory type typ
// (closed afterwards), dims (nil = scalar) and the raw element bytes buf.
func rawAttr(t *testing.T, obj ID, name string, typ ID, dims []int64, buf []byte) {
	t.Helper()
	defer Close(typ)
	a, err := CreateAttribute(obj, name, typ, dims)
	must(t, err)
	defer Close(a)
	must(t, WriteAttribute(a, typ, unsafe.Pointer(&buf[0])))
}

func f64Bytes(vals ...float64) []byte {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.NativeEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return b
}

func iotaF64(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i)
	}
	return out
}

func anys[T any](vals []T) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}

func TestReadAttributeCaps(t *testing.T) {
	mustID := idOK(t)
	p := filepath.Join(t.TempDir(), "caps.h5")
	f := mustID(CreateFile(p))

	// Numbers: non-finite floats, an attribute exactly at the element cap,
	// one above it (1-D and 2-D) and array-typed elements.
	must(t, SetAttr(f, "nan", math.NaN()))
	must(t, SetAttr(f, "inf32", float32(math.Inf(-1))))
	must(t, SetAttr(f, "nonfinite", []float64{math.NaN(), math.Inf(1), math.Inf(-1), 2.5}))
	must(t, SetAttr(f, "at_cap", iotaF64(MaxAttrElements)))
	must(t, SetAttr(f, "huge", iotaF64(6000)))
	rawAttr(t, f, "huge2d", NewFloat(8), []int64{100, 60}, f64Bytes(iotaF64(6000)...))
	f64 := NewFloat(8)
	arr := mustID(NewArray(f64, []int64{1000}))
	rawAttr(t, f, "arrays", arr, []int64{6}, f64Bytes(iotaF64(6000)...)) // 4 of 6 fit
	arr = mustID(NewArray(f64, []int64{5000}))
	rawAttr(t, f, "one_huge_array", arr, nil, f64Bytes(iotaF64(5000)...)) // no element fits
	Close(f64)
	rawAttr(t, f, "empty", NewInt(4, true), []int64{0}, []byte{0})

	// Strings: long variable- and fixed-length strings, a cut inside a
	// multi-byte character's neighbourhood, and an array spending the
	// attribute's text budget.
	longVar := strings.Repeat("é", MaxAttrStringChars+904)
	must(t, SetAttr(f, "long_var", longVar))
	longFixed := strings.Repeat("x", MaxAttrStringChars+10)
	rawAttr(t, f, "long_fixed", NewString(len(longFixed), false, StrNullPad), nil, []byte(longFixed))
	edge := strings.Repeat("a", MaxAttrStringChars-1) + "€€"
	must(t, SetAttr(f, "edge", edge))
	many := make([]string, 20)
	for i := range many {
		many[i] = strings.Repeat(string(rune('a'+i)), MaxAttrStringChars)
	}
	must(t, SetAttr(f, "many_strings", many))
	must(t, SetAttr(f, "short_strings", []string{"a", "β"}))

	// Bytes: opaque scalars (small, tagged, above the byte cap) and an array.
	small := []byte{0, 1, 2, 0xff}
	rawAttr(t, f, "blob", mustID(NewOpaque(len(small), "")), nil, small)
	rawAttr(t, f, "tagged", mustID(NewOpaque(3, "png")), nil, []byte("abc"))
	big := make([]byte, 10000)
	for i := range big {
		big[i] = byte(i * 7)
	}
	rawAttr(t, f, "big_blob", mustID(NewOpaque(len(big), "")), nil, big)
	rawAttr(t, f, "blobs", mustID(NewOpaque(2, "")), []int64{3}, []byte{1, 2, 3, 4, 5, 6})
	// A compound with an opaque and a long string member.
	op := mustID(NewOpaque(2, ""))
	fs := NewString(MaxAttrStringChars+1, false, StrNullTerm)
	cmp := mustID(NewCompound(MaxAttrStringChars+3, []MemberSpec{{Name: "raw", Offset: 0, Type: op}, {Name: "s", Offset: 2, Type: fs}}))
	Close(op)
	Close(fs)
	rawAttr(t, f, "record", cmp, nil, append([]byte{9, 8}, []byte(strings.Repeat("z", MaxAttrStringChars+1))...))
	must(t, Close(f))

	f = mustID(OpenFile(p))
	defer Close(f)
	got, err := ReadAttributes(f, 100)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	tests := []struct {
		name string
		want any
	}{
		{"nan", "NaN"},
		{"inf32", "-Infinity"},
		{"nonfinite", []any{"NaN", "Infinity", "-Infinity", 2.5}},
		{"at_cap", anys(iotaF64(MaxAttrElements))},
		{"huge", Truncated{Truncated: true, DType: "float64", Shape: []int64{6000}, ElementCount: 6000, Values: anys(iotaF64(MaxAttrElements))}},
		{"huge2d", Truncated{Truncated: true, DType: "float64", Shape: []int64{100, 60}, ElementCount: 6000, Values: anys(iotaF64(MaxAttrElements))}},
		{"arrays", Truncated{Truncated: true, DType: "float64[1000]", Shape: []int64{6}, ElementCount: 6, Values: func() []any {
			out := make([]any, 4)
			for i := range out {
				out[i] = anys(iotaF64(6000)[i*1000 : (i+1)*1000])
			}
			return out
		}()}},
		{"one_huge_array", Truncated{Truncated: true, DType: "float64[5000]", Shape: []int64{}, ElementCount: 1}},
		{"empty", []any{}},
		{"long_var", Truncated{Truncated: true, DType: "vlen utf-8 string", Shape: []int64{}, ElementCount: 1,
			Value: strings.Repeat("é", MaxAttrStringChars), Length: int64(MaxAttrStringChars + 904)}},
		{"long_fixed", Truncated{Truncated: true, DType: "|S4106", Shape: []int64{}, ElementCount: 1,
			Value: longFixed[:MaxAttrStringChars], Length: int64(len(longFixed))}},
		{"edge", Truncated{Truncated: true, DType: "vlen utf-8 string", Shape: []int64{}, ElementCount: 1,
			Value: strings.Repeat("a", MaxAttrStringChars-1) + "€", Length: MaxAttrStringChars + 1}},
		{"many_strings", Truncated{Truncated: true, DType: "vlen utf-8 string", Shape: []int64{20}, ElementCount: 20,
			Values: anys(many[:MaxAttrTextChars/MaxAttrStringChars])}},
		{"short_strings", []any{"a", "β"}},
		{"blob", Bytes{Base64: b64(small), SizeBytes: 4}},
		{"tagged", Bytes{Base64: b64([]byte("abc")), SizeBytes: 3, Tag: "png"}},
		{"big_blob", Truncated{Truncated: true, DType: "opaque(10000 bytes)", Shape: []int64{}, ElementCount: 1,
			Value: Bytes{Base64: b64(big[:MaxAttrBytes]), SizeBytes: len(big), Truncated: true}}},
		{"blobs", []any{Bytes{Base64: b64([]byte{1, 2}), SizeBytes: 2}, Bytes{Base64: b64([]byte{3, 4}), SizeBytes: 2}, Bytes{Base64: b64([]byte{5, 6}), SizeBytes: 2}}},
		{"record", Truncated{Truncated: true, DType: got["record"].(Truncated).DType, Shape: []int64{}, ElementCount: 1,
			Value: map[string]any{"raw": Bytes{Base64: b64([]byte{9, 8}), SizeBytes: 2}, "s": strings.Repeat("z", MaxAttrStringChars)}}},
	}
	if len(got) != len(tests) {
		t.Errorf("%d attributes, want %d", len(got), len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(got[tc.name], tc.want) {
				gb, _ := json.Marshal(got[tc.name])
				wb, _ := json.Marshal(tc.want)
				t.Errorf("got  %.300s\nwant %.300s", gb, wb)
			}
		})
	}
	if _, err := json.Marshal(got); err != nil {
		t.Errorf("attributes are not JSON-safe: %v", err)
	}
}

// TestTruncatedJSON pins the JSON the MCP client sees for cut values.
func TestTruncatedJSON(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"array", Truncated{Truncated: true, DType: "float64", Shape: []int64{5000}, ElementCount: 5000, Values: []any{0.5, "NaN"}},
			`{"truncated":true,"dtype":"float64","shape":[5000],"element_count":5000,"values":[0.5,"NaN"]}`},
		{"string", Truncated{Truncated: true, DType: "vlen utf-8 string", Shape: []int64{}, ElementCount: 1, Value: "ab", Length: 9000},
			`{"truncated":true,"dtype":"vlen utf-8 string","shape":[],"element_count":1,"value":"ab","length":9000}`},
		{"unread", Truncated{Truncated: true, DType: "int8", Shape: []int64{1 << 30}, ElementCount: 1 << 30},
			`{"truncated":true,"dtype":"int8","shape":[1073741824],"element_count":1073741824}`},
		{"bytes", Bytes{Base64: "AQI=", SizeBytes: 2}, `{"base64":"AQI=","size_bytes":2}`},
		{"cut bytes", Bytes{Base64: "AQI=", SizeBytes: 9, Tag: "t", Truncated: true}, `{"base64":"AQI=","size_bytes":9,"tag":"t","truncated":true}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			if err != nil || string(b) != tc.want {
				t.Errorf("json = %s, %v; want %s", b, err, tc.want)
			}
		})
	}
}

func TestAttrText(t *testing.T) {
	tests := []struct {
		v    any
		want string
		ok   bool
	}{
		{"plain", "plain", true},
		{Truncated{Truncated: true, Value: "cut"}, "cut", true},
		{Truncated{Truncated: true, Values: []any{"a"}}, "", false},
		{int64(3), "", false},
		{nil, "", false},
	}
	for _, tc := range tests {
		if s, ok := AttrText(tc.v); s != tc.want || ok != tc.ok {
			t.Errorf("AttrText(%#v) = %q, %v; want %q, %v", tc.v, s, ok, tc.want, tc.ok)
		}
	}
}
