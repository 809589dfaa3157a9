package dictstr

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// dictOf builds a dictionary array of index type idx over values vals
// (nil: a null value) with rows codes (-1: a null row).
func dictOf(t *testing.T, mem memory.Allocator, idx, valType arrow.DataType, vals []*string, codes []int) *array.Dictionary {
	t.Helper()
	vb := array.NewBuilder(mem, valType)
	defer vb.Release()
	for _, v := range vals {
		switch {
		case v == nil:
			vb.AppendNull()
		case valType.ID() == arrow.LARGE_STRING:
			vb.(*array.LargeStringBuilder).Append(*v)
		default:
			vb.(*array.StringBuilder).Append(*v)
		}
	}
	dict := vb.NewArray()
	defer dict.Release()
	ib := array.NewBuilder(mem, idx)
	defer ib.Release()
	for _, c := range codes {
		if c < 0 {
			ib.AppendNull()
			continue
		}
		switch b := ib.(type) {
		case *array.Int8Builder:
			b.Append(int8(c))
		case *array.Int16Builder:
			b.Append(int16(c))
		case *array.Int32Builder:
			b.Append(int32(c))
		case *array.Int64Builder:
			b.Append(int64(c))
		case *array.Uint8Builder:
			b.Append(uint8(c))
		case *array.Uint16Builder:
			b.Append(uint16(c))
		case *array.Uint32Builder:
			b.Append(uint32(c))
		case *array.Uint64Builder:
			b.Append(uint64(c))
		}
	}
	ia := ib.NewArray()
	defer ia.Release()
	return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: idx, ValueType: valType}, ia, dict)
}

func sp(s string) *string { return &s }

func TestDecode(t *testing.T) {
	vals := []*string{sp("alpha"), sp(""), nil, sp("ünïcode"), sp("z")}
	codes := []int{0, 3, -1, 1, 2, 4, 0, 0, -1, 3}
	want := []*string{sp("alpha"), sp("ünïcode"), nil, sp(""), nil, sp("z"), sp("alpha"), sp("alpha"), nil, sp("ünïcode")}
	indices := []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
	}
	strTypes := []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString}
	for _, idx := range indices {
		for _, vt := range strTypes {
			for _, to := range strTypes {
				for _, slice := range []bool{false, true} {
					name := idx.String() + "/" + vt.String() + "->" + to.String()
					if slice {
						name += "/sliced"
					}
					t.Run(name, func(t *testing.T) {
						mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
						defer mem.AssertSize(t, 0)
						d := dictOf(t, mem, idx, vt, vals, codes)
						defer d.Release()
						exp := want
						if slice {
							s := array.NewSlice(d, 2, 8).(*array.Dictionary)
							defer s.Release()
							d, exp = s, want[2:8]
						}
						out, err := Decode(mem, d, to)
						if err != nil {
							t.Fatal(err)
						}
						defer out.Release()
						if !arrow.TypeEqual(out.DataType(), to) || out.Len() != len(exp) {
							t.Fatalf("got %s of %d rows, want %s of %d", out.DataType(), out.Len(), to, len(exp))
						}
						nulls := 0
						for i, w := range exp {
							if w == nil {
								nulls++
								if out.IsValid(i) {
									t.Errorf("row %d: got %q, want null", i, out.ValueStr(i))
								}
								continue
							}
							if out.IsNull(i) || out.ValueStr(i) != *w {
								t.Errorf("row %d: got %q (null %v), want %q", i, out.ValueStr(i), out.IsNull(i), *w)
							}
						}
						if out.NullN() != nulls {
							t.Errorf("null count %d, want %d", out.NullN(), nulls)
						}
					})
				}
			}
		}
	}
}

func TestDecodeSlicedDictionaryValues(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	vb := array.NewStringBuilder(mem)
	defer vb.Release()
	vb.AppendValues([]string{"skip", "me", "a", "bc"}, nil)
	all := vb.NewArray()
	defer all.Release()
	dict := array.NewSlice(all, 2, 4) // ValueOffsets start at 6, not 0
	defer dict.Release()
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	ib.AppendValues([]int32{1, 0, 1}, nil)
	ia := ib.NewArray()
	defer ia.Release()
	d := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, ia, dict)
	defer d.Release()
	out, err := Decode(mem, d, arrow.BinaryTypes.String)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if got := out.(*array.String); got.Value(0) != "bc" || got.Value(1) != "a" || got.Value(2) != "bc" {
		t.Errorf("got %v, want [bc a bc]", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	str := arrow.BinaryTypes.String
	d := dictOf(t, mem, arrow.PrimitiveTypes.Int16, str, []*string{sp("a"), sp("b")}, []int{0, 1, 2})
	defer d.Release()
	if _, err := Decode(mem, d, str); !errors.Is(err, ErrCorrupt) {
		t.Errorf("code out of range: got %v, want ErrCorrupt", err)
	}
	neg := dictOf(t, mem, arrow.PrimitiveTypes.Int8, str, []*string{sp("a")}, []int{0, 255})
	defer neg.Release()
	if _, err := Decode(mem, neg, str); !errors.Is(err, ErrCorrupt) {
		t.Errorf("negative code: got %v, want ErrCorrupt", err)
	}
	if _, err := Decode(mem, d, arrow.BinaryTypes.Binary); !errors.Is(err, ErrUnsupported) {
		t.Errorf("binary output: got %v, want ErrUnsupported", err)
	}
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	ib.Append(1)
	ints := ib.NewArray()
	defer ints.Release()
	idb := array.NewInt8Builder(mem)
	defer idb.Release()
	idb.Append(0)
	idx := idb.NewArray()
	defer idx.Release()
	intDict := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Int64}, idx, ints)
	defer intDict.Release()
	if _, err := Decode(mem, intDict, str); !errors.Is(err, ErrUnsupported) {
		t.Errorf("int64 dictionary: got %v, want ErrUnsupported", err)
	}
}
