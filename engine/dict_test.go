package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/planner"
)

// dictArray builds a dictionary array of type dt: codes (nil = null) into dict values (nil = null entry).
func dictArray(mem memory.Allocator, dt *arrow.DictionaryType, codes []any, dict []any) arrow.Array {
	ib := array.NewBuilder(mem, dt.IndexType)
	defer ib.Release()
	for _, c := range codes {
		if c == nil {
			ib.AppendNull()
			continue
		}
		appendValue(ib, int64(c.(int)))
	}
	idx := ib.NewArray()
	defer idx.Release()
	vb := array.NewBuilder(mem, dt.ValueType)
	defer vb.Release()
	for _, v := range dict {
		appendValue(vb, v)
	}
	vals := vb.NewArray()
	defer vals.Release()
	return array.NewDictionaryArray(dt, idx, vals)
}

// batchSource serves prepared batches one by one (each with its own dictionary).
func batchSource(schema *arrow.Schema, batches ...arrow.RecordBatch) *memSource {
	src := &memSource{schema: schema, batches: batches}
	src.noCopy = true
	return src
}

func dictType(index arrow.DataType) *arrow.DictionaryType {
	return &arrow.DictionaryType{IndexType: index, ValueType: arrow.BinaryTypes.String}
}

// Every index width works for filters, keys, sorts, aggregates and copies,
// with a different dictionary per batch and nulls inside the dictionary.
func TestDictionaryIndexTypesAndBatches(t *testing.T) {
	for _, it := range []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Int16,
		arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint64} {
		t.Run(it.String(), func(t *testing.T) {
			alloc := newAlloc()
			defer alloc.AssertSize(t, 0)
			dt := dictType(it)
			schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: tInt64, Nullable: true}, {Name: "s", Type: dt, Nullable: true}}, nil)
			mk := func(ids []any, codes []any, dict []any) arrow.RecordBatch {
				ib := array.NewInt64Builder(alloc)
				defer ib.Release()
				for _, v := range ids {
					ib.Append(v.(int64))
				}
				a := ib.NewArray()
				defer a.Release()
				d := dictArray(alloc, dt, codes, dict)
				defer d.Release()
				return array.NewRecordBatch(schema, []arrow.Array{a, d}, int64(len(ids)))
			}
			// Logical values: b1 = [apple, null, Banana, null(entry), apple], b2 = [cherry, apple, null, banana]
			b1 := mk(vals(int64(0), int64(1), int64(2), int64(3), int64(4)), []any{0, nil, 1, 2, 0}, []any{"apple", "Banana", nil})
			b2 := mk(vals(int64(5), int64(6), int64(7), int64(8)), []any{2, 1, nil, 0}, []any{"banana", "apple", "cherry"})
			src := batchSource(schema, b1, b2)
			defer src.release()
			sc := scanOf(schema)
			check := func(name string, plan planner.Node, want [][]any) {
				t.Helper()
				got, err := run(t, plan, src, Options{Alloc: alloc, BatchSize: 100})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !rowsEq(got, want) {
					t.Fatalf("%s: got\n%swant\n%s", name, fmtRows(got), fmtRows(want))
				}
			}
			check("is_null", projectOf(filterOf(sc, pred(schema, "s", "is_null")), "id"), ids(1, 3, 7))
			check("eq", projectOf(filterOf(sc, pred(schema, "s", "eq", "apple")), "id"), ids(0, 4, 6))
			ci := pred(schema, "s", "contains", "AN")
			ci.CaseInsensitive = true
			check("contains ci", projectOf(filterOf(sc, ci), "id"), ids(2, 8))
			check("not_in", projectOf(filterOf(sc, pred(schema, "s", "not_in", "apple", "x")), "id"), ids(2, 5, 8))
			check("sort", projectOf(sortOf(sc, "-s", "id"), "id", "s"), [][]any{
				{int64(5), "cherry"}, {int64(8), "banana"}, {int64(0), "apple"}, {int64(4), "apple"}, {int64(6), "apple"}, {int64(2), "Banana"},
				{int64(1), nil}, {int64(3), nil}, {int64(7), nil}})
			check("top-k", limitOf(projectOf(sortOf(sc, "s"), "s"), 1, 3), [][]any{{"apple"}, {"apple"}, {"apple"}})
			check("group", aggOf(sc, []string{"s"}, "count:*", "min:id", "count_distinct:s"), [][]any{
				{"apple", int64(3), int64(0), int64(1)}, {nil, int64(3), int64(1), int64(0)}, {"Banana", int64(1), int64(2), int64(1)},
				{"cherry", int64(1), int64(5), int64(1)}, {"banana", int64(1), int64(8), int64(1)}})
			check("min max first last", aggOf(sc, nil, "min:s", "max:s", "first:s", "last:s", "count:s"), [][]any{
				{"Banana", "cherry", "apple", "banana", int64(6)}})
			check("distinct", &planner.Distinct{Input: projectOf(sc, "s")}, [][]any{{"apple"}, {nil}, {"Banana"}, {"cherry"}, {"banana"}})
		})
	}
}

// A source may deliver dictionary-encoded batches for a column the plan
// types as plain string, and plain batches for a dictionary column.
func TestDictionaryScanConversion(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	data := []tcol{{"s", tDict, vals("b", nil, "a", "b")}}
	src := newSource(alloc, data)
	defer src.release()
	plain := arrow.NewSchema([]arrow.Field{{Name: "s", Type: tStr, Nullable: true}}, nil)
	got, err := run(t, sortOf(scanOf(plain), "s"), src, Options{Alloc: alloc, BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]any{{"a"}, {"b"}, {"b"}, {nil}}; !rowsEq(got, want) {
		t.Fatalf("got %v", got)
	}
	r, err := Execute(context.Background(), scanOf(plain), src, Options{Alloc: alloc})
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		if id := r.RecordBatch().Column(0).DataType().ID(); id != arrow.STRING {
			t.Fatalf("column delivered as %v, want decoded string", id)
		}
	}
	r.Release()

	src2 := newSource(alloc, []tcol{{"s", tStr, vals("b", nil, "a", "b")}})
	defer src2.release()
	dictSchema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: tDict, Nullable: true}}, nil)
	r, err = Execute(context.Background(), filterOf(scanOf(dictSchema), pred(dictSchema, "s", "eq", "b")), src2, Options{Alloc: alloc, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r.Next() {
		b := r.RecordBatch()
		if !arrow.TypeEqual(b.Column(0).DataType(), tDict) {
			t.Fatalf("column delivered as %v, want %v", b.Column(0).DataType(), tDict)
		}
		n += int(b.NumRows())
	}
	if r.Err() != nil || n != 2 {
		t.Fatalf("rows %d err %v", n, r.Err())
	}
	r.Release()
}

// Pass-through operators keep dictionary encoding; aggregate outputs are
// plain strings.
func TestDictionaryOutputEncoding(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	src := newSource(alloc, []tcol{{"s", tDict, vals("b", "a", "b", nil)}, {"i", tInt64, vals(int64(1), int64(2), int64(3), int64(4))}})
	defer src.release()
	s := src.schema
	cases := map[string]struct {
		plan planner.Node
		want arrow.DataType
	}{
		"filter":    {filterOf(scanOf(s), pred(s, "i", "gt", int64(1))), tDict},
		"sort":      {sortOf(scanOf(s), "s"), tDict},
		"distinct":  {&planner.Distinct{Input: scanOf(s)}, tDict},
		"aggregate": {aggOf(scanOf(s), []string{"s"}, "max:s"), tStr},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, ok := tc.plan.(*planner.Aggregate); ok {
				a := tc.plan.(*planner.Aggregate)
				a.Out = arrow.NewSchema([]arrow.Field{{Name: "s", Type: tStr, Nullable: true}, {Name: "max_s", Type: tStr, Nullable: true}}, nil)
				a.Aggs[0].Type = tStr
			}
			r, err := Execute(context.Background(), tc.plan, src, Options{Alloc: alloc, BatchSize: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			for r.Next() {
				if got := r.RecordBatch().Column(0).DataType(); !arrow.TypeEqual(got, tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
			if r.Err() != nil {
				t.Fatal(r.Err())
			}
		})
	}
}

// The per-entry predicate cache must not confuse batches whose
// dictionaries differ, even with identical lengths.
func TestDictionaryPredicateCache(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	dt := dictType(arrow.PrimitiveTypes.Int32)
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: dt, Nullable: true}}, nil)
	var batches []arrow.RecordBatch
	for i := range 6 {
		d := dictArray(alloc, dt, []any{0, 1, 0}, []any{fmt.Sprintf("v%d", i%2), fmt.Sprintf("w%d", i%3)})
		batches = append(batches, array.NewRecordBatch(schema, []arrow.Array{d}, 3))
		d.Release()
	}
	src := batchSource(schema, batches...)
	defer src.release()
	got, err := run(t, aggOf(filterOf(scanOf(schema), pred(schema, "s", "in", "v0", "w2")), nil, "count:*"), src, Options{Alloc: alloc})
	if err != nil {
		t.Fatal(err)
	}
	// v0 twice in batches 0, 2, 4; w2 once in batches 2 and 5.
	if want := [][]any{{int64(8)}}; !rowsEq(got, want) {
		t.Fatalf("got %v", got)
	}
}

func TestFoldMatchesEqualFold(t *testing.T) {
	words := []string{"", "a", "A", "straße", "STRASSE", "ſ", "S", "s", "K", "k", "\u212a", "Σ", "σ", "ς", "ǅ", "ǆ", "Ǆ", "İ", "i", "ı", "ﬀ", "日本", "ÉCLAIR", "éclair", "Ω", "\u2126"}
	for _, a := range words {
		for _, b := range words {
			if got, want := foldString(a) == foldString(b), strings.EqualFold(a, b); got != want {
				t.Errorf("fold(%q) == fold(%q) is %v, EqualFold says %v", a, b, got, want)
			}
		}
	}
}

// encodeGathered maps each chunk's codes through a table where its
// dictionary is small enough, and hashes the others' values: both must
// give the encoding a per-row hash gives (first-use order), nulls kept,
// and stop at the same row when the index type runs out of codes.
func TestEncodeGatheredRemap(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(7, 9))
	for _, tc := range []struct {
		name  string
		index arrow.DataType
		sizes []int // dictionary size of each chunk
		pool  int   // distinct values over all chunks
	}{
		{"small dictionaries", arrow.PrimitiveTypes.Int16, []int{3, 5, 1, 8, 8, 2, 7}, 12},
		{"big ones past the tables' room", arrow.PrimitiveTypes.Int32, []int{9000, 4, 9000, 6000, 3, 9000}, 20000},
		{"int8 codes run out", arrow.PrimitiveTypes.Int8, []int{100, 90, 100, 5, 100, 100}, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dt := dictType(tc.index)
			schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: dt, Nullable: true}}, nil)
			var chunks []arrow.RecordBatch
			for _, size := range tc.sizes {
				size = min(size, int(maxCode(dt))+1)
				dict := make([]any, size)
				for k, v := range rng.Perm(tc.pool)[:size] {
					dict[k] = fmt.Sprintf("v%d", v)
				}
				codes := make([]any, 50)
				for k := range codes {
					if rng.IntN(10) > 0 {
						codes[k] = rng.IntN(size)
					}
				}
				a := dictArray(alloc, dt, codes, dict)
				chunks = append(chunks, array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len())))
				a.Release()
			}
			defer func() {
				for _, c := range chunks {
					c.Release()
				}
			}()
			refs := make([]rowRef, 600)
			for k := range refs {
				refs[k] = rowRef{int32(rng.IntN(len(chunks))), int32(rng.IntN(50))}
			}
			gc := &newGatherer(schema, chunks).cols[0]
			got := encodeGathered(gc, refs)
			// The reference: every row's value hashed.
			index, rows := map[string]int32{}, len(refs)
			var uniq []string
			want := make([]int32, len(refs))
			for i, r := range refs {
				d := chunks[r.b].Column(0).(*array.Dictionary)
				if d.IsNull(int(r.r)) {
					continue
				}
				s := d.Dictionary().(*array.String).Value(d.GetValueIndex(int(r.r)))
				c, ok := index[s]
				if !ok {
					if int64(len(uniq)) == maxCode(dt)+1 {
						rows = i
						break
					}
					c = int32(len(uniq))
					index[s] = c
					uniq = append(uniq, s)
				}
				want[i] = c
			}
			if got.rows != rows || !slices.Equal(got.codes, want[:rows]) || !slices.Equal(got.uniq, uniq) {
				t.Fatalf("rows %d codes %v uniq %v\nwant rows %d codes %v uniq %v", got.rows, got.codes, got.uniq, rows, want[:rows], uniq)
			}
			if tc.name == "int8 codes run out" && rows == len(refs) {
				t.Fatal("the case should run out of int8 codes")
			}
		})
	}
}
