package engine

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A dictionary much larger than its batch is resolved per row the first
// time; when the next batch shares it (the column cache's shared
// dictionaries) its entries go through the code table, ids unchanged.
func TestValueIDsSharedDictionary(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dictOf := func(prefix string, n int) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for i := range n {
			b.Append(fmt.Sprintf("%s%06d", prefix, i))
		}
		return b.NewArray()
	}
	const entries = 20_000                                      // > 2*rows+4096
	shared, other := dictOf("k", entries), dictOf("k", entries) // equal values, distinct dictionaries
	defer shared.Release()
	defer other.Release()
	batch := func(dict arrow.Array, codes []int32) arrow.Array {
		ib := array.NewInt32Builder(mem)
		defer ib.Release()
		ib.AppendValues(codes, nil)
		idx := ib.NewArray()
		defer idx.Release()
		return array.NewDictionaryArray(tDict, idx, dict)
	}
	a := acct{b: &budget{}}
	v := newValueIDs(tDict, true, &a)
	steps := []struct {
		name  string
		dict  arrow.Array
		codes []int32
		table bool // resolved through the code table of this dictionary
	}{
		{"first batch: per row", shared, []int32{7, 19_999, 7, 3}, false},
		{"same dictionary again: table", shared, []int32{3, 5, 19_999, 5}, true},
		{"and again", shared, []int32{0, 7}, true},
		{"another dictionary: per row", other, []int32{5, 7, 11}, false},
	}
	want := map[string]int32{}
	for _, st := range steps {
		arr := batch(st.dict, st.codes)
		ids := v.assign(arr)
		for i, c := range st.codes {
			s := fmt.Sprintf("k%06d", c)
			id, ok := want[s]
			if !ok {
				id = int32(len(want))
				want[s] = id
			}
			if ids[i] != id {
				t.Fatalf("%s: row %d (%s) id %d, want %d", st.name, i, s, ids[i], id)
			}
		}
		if used := v.ddata == st.dict.Data() && len(v.dmap) == entries; used != st.table {
			t.Fatalf("%s: code table used %v, want %v", st.name, used, st.table)
		}
		arr.Release()
	}
}
