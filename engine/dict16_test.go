package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/planner"
)

// Dictionary columns with int16 indices (the type of the CSV column
// cache): operators that re-encode rows of several chunks into a new
// dictionary (sort output, top-k compaction, the scan's encoding of plain
// batches) must not fail, nor change the type, when the rows hold more
// distinct values than int16 addresses.

// manyDistinctBatches cuts rows (id, s, t) into batches of per rows, each
// with dictionaries of its own (first-use order) for s and t of type dt.
func manyDistinctBatches(mem memory.Allocator, dt *arrow.DictionaryType, ids []int64, s, t []any, per int) (*arrow.Schema, []arrow.RecordBatch) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: tInt64, Nullable: true}, {Name: "s", Type: dt, Nullable: true}, {Name: "t", Type: dt, Nullable: true}}, nil)
	encode := func(part []any) arrow.Array {
		index := map[string]int{}
		var dict []any
		codes := make([]any, len(part))
		for i, v := range part {
			if v == nil {
				continue
			}
			c, ok := index[v.(string)]
			if !ok {
				c = len(dict)
				index[v.(string)] = c
				dict = append(dict, v)
			}
			codes[i] = c
		}
		return dictArray(mem, dt, codes, dict)
	}
	var batches []arrow.RecordBatch
	for lo := 0; lo < len(ids); lo += per {
		hi := min(lo+per, len(ids))
		ib := array.NewInt64Builder(mem)
		ib.AppendValues(ids[lo:hi], nil)
		arrs := []arrow.Array{ib.NewArray(), encode(s[lo:hi]), encode(t[lo:hi])}
		ib.Release()
		batches = append(batches, array.NewRecordBatch(schema, arrs, int64(hi-lo)))
		for _, a := range arrs {
			a.Release()
		}
	}
	return schema, batches
}

// drainTyped reads every row of the plan and checks that every batch has
// exactly the reader's schema, which is the plan's.
func drainTyped(t *testing.T, plan planner.Node, src *memSource, opts Options) ([][]any, int) {
	t.Helper()
	r, err := Execute(context.Background(), plan, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	if !r.Schema().Equal(plan.Schema()) {
		t.Fatalf("reader schema %s, plan schema %s", r.Schema(), plan.Schema())
	}
	var rows [][]any
	batches := 0
	for r.Next() {
		b := r.RecordBatch()
		batches++
		if !b.Schema().Equal(r.Schema()) {
			t.Fatalf("batch schema %s, reader schema %s", b.Schema(), r.Schema())
		}
		for i, c := range b.Columns() {
			if !arrow.TypeEqual(c.DataType(), r.Schema().Field(i).Type) {
				t.Fatalf("column %d is %s, schema says %s", i, c.DataType(), r.Schema().Field(i).Type)
			}
		}
		for i := range int(b.NumRows()) {
			row := make([]any, b.NumCols())
			for j, c := range b.Columns() {
				row[j] = cell(c, i)
			}
			rows = append(rows, row)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, batches
}

// TestSortManyDistinctInt16: sort and top-k (limit 100000, compacted
// several times) over multi-chunk data whose int16 dictionary columns
// hold far more than 32,768 distinct strings among the selected rows; the
// results equal the reference order and every batch stays int16-indexed.
func TestSortManyDistinctInt16(t *testing.T) {
	const n = 260_000
	ids := make([]int64, n)
	s, u := make([]any, n), make([]any, n)
	for i := range n {
		ids[i] = int64(i)
		if i%53 != 7 {
			s[i] = fmt.Sprintf("s%06d", (i*7919)%120_000) // 120,000 distinct, ~2 rows each
		}
		if i%31 != 3 {
			u[i] = fmt.Sprintf("t%06d", (i*104_729)%90_001)
		}
	}
	// reference: s ascending (nulls last), then t descending (nulls last), then id
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	cmpNullsLast := func(a, b any, desc bool) int {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return 1
		case b == nil:
			return -1
		}
		c := cmp.Compare(a.(string), b.(string))
		if desc {
			return -c
		}
		return c
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmpNullsLast(s[a], s[b], false); c != 0 {
			return c
		}
		return cmpNullsLast(u[a], u[b], true)
	})
	for _, tc := range []struct {
		name  string
		limit int64 // -1: no limit
		bs    int
		per   int // rows per source batch
	}{
		{"top-k 100000", 100_000, 65_536, 20_000},
		{"top-k 100000 small batches", 100_000, 4_096, 7_000},
		{"full sort", -1, 65_536, 30_000},
		{"top-k 40000", 40_000, 65_536, 20_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alloc := newAlloc()
			defer alloc.AssertSize(t, 0)
			schema, batches := manyDistinctBatches(alloc, tDict16, ids, s, u, tc.per)
			src := batchSource(schema, batches...)
			defer src.release()
			var plan planner.Node = sortOf(scanOf(schema), "s", "-t", "id")
			want := len(order)
			if tc.limit >= 0 {
				plan = limitOf(plan, 0, tc.limit)
				want = int(tc.limit)
			}
			got, nb := drainTyped(t, plan, src, Options{Alloc: alloc, BatchSize: tc.bs})
			if len(got) != want {
				t.Fatalf("%d rows, want %d", len(got), want)
			}
			for i, row := range got {
				j := order[i]
				if row[0] != ids[j] || row[1] != s[j] || row[2] != u[j] {
					t.Fatalf("row %d = %v, want [%d %v %v]", i, row, ids[j], s[j], u[j])
				}
			}
			if min := (want + tc.bs - 1) / tc.bs; nb < min {
				t.Fatalf("%d batches, want at least %d", nb, min)
			}
		})
	}
}

// TestScanEncodesManyDistinctInt16: a source delivering plain strings for
// a column the plan types as dictionary<int16> (a cache miss after
// planning) gets each batch cut where its distinct values would overflow
// the index; nothing is lost or reordered.
func TestScanEncodesManyDistinctInt16(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	const n = 100_000
	sv, idv := make([]any, n), make([]any, n)
	for i := range n {
		idv[i] = int64(i)
		if i%17 != 0 {
			sv[i] = fmt.Sprintf("v%06d", (i*7919)%70_000)
		}
	}
	src := newSource(alloc, []tcol{{"id", tInt64, idv}, {"s", tStr, sv}})
	defer src.release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: tInt64, Nullable: true}, {Name: "s", Type: tDict16, Nullable: true}}, nil)
	for _, bs := range []int{n, 40_000, 1_000} {
		got, nb := drainTyped(t, scanOf(schema), src, Options{Alloc: alloc, BatchSize: bs})
		if len(got) != n {
			t.Fatalf("batch size %d: %d rows, want %d", bs, len(got), n)
		}
		for i, row := range got {
			if row[0] != idv[i] || row[1] != sv[i] {
				t.Fatalf("batch size %d: row %d = %v, want [%v %v]", bs, i, row, idv[i], sv[i])
			}
		}
		if bs == n && nb < 3 {
			t.Fatalf("%d batches: the %d-row batch was not cut", nb, n)
		}
		// the same through a filter and a sort (the encoded batches feed operators)
		top := ""
		for _, v := range sv {
			if v != nil && v.(string) < "v0001" && v.(string) > top {
				top = v.(string)
			}
		}
		f := filterOf(scanOf(schema), pred(schema, "s", "starts_with", "v0000"))
		rows, _ := drainTyped(t, limitOf(sortOf(f, "-s", "id"), 0, 5), src, Options{Alloc: alloc, BatchSize: bs})
		if len(rows) != 5 || rows[0][1] != top {
			t.Fatalf("batch size %d: filtered top rows %v, want %q first", bs, rows, top)
		}
	}
}

// TestDictCodeKernelsInt16: the kernels read int16 codes natively, also
// when the dictionary has more entries than int16 addresses (unused ones:
// a single passing entry beyond the range matches no row), with nulls and
// an offset, per dictionary entry (big batches) and per row (small ones).
func TestDictCodeKernelsInt16(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	const entries = 40_000
	dict := make([]any, entries)
	for i := range dict {
		dict[i] = fmt.Sprintf("e%05d", i)
	}
	pattern := []any{0, 5, nil, 32767, 5, 1, nil, 0, 32767}
	var codes []any
	for range 2_500 { // 22,500 rows: the dictionary is resolved per entry
		codes = append(codes, pattern...)
	}
	arr := dictArray(alloc, tDict16, codes, dict)
	defer arr.Release()
	ib := array.NewInt64Builder(alloc)
	for i := range codes {
		ib.Append(int64(i))
	}
	ida := ib.NewArray()
	ib.Release()
	defer ida.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: tInt64, Nullable: true}, {Name: "s", Type: tDict16, Nullable: true}}, nil)
	full := array.NewRecordBatch(schema, []arrow.Array{ida, arr}, int64(len(codes)))
	defer full.Release()
	value := func(i int) any {
		if codes[i] == nil {
			return nil
		}
		return dict[codes[i].(int)]
	}
	for _, off := range []int64{0, 1} {
		b := full.NewSlice(off, full.NumRows())
		src := batchSource(schema, b)
		sc := scanOf(schema)
		where := func(keep func(v any) bool) [][]any {
			var rows [][]any
			for i := int(off); i < len(codes); i++ {
				if keep(value(i)) {
					rows = append(rows, []any{int64(i)})
				}
			}
			return rows
		}
		is := func(set ...string) func(any) bool {
			return func(v any) bool { return v != nil && slices.Contains(set, v.(string)) }
		}
		var groups [][]any
		pos := map[any]int{}
		for i := int(off); i < len(codes); i++ {
			v := value(i)
			if _, ok := pos[v]; !ok {
				pos[v] = len(groups)
				groups = append(groups, []any{v, int64(0)})
			}
			groups[pos[v]][1] = groups[pos[v]][1].(int64) + 1
		}
		for _, bs := range []int{65_536, 4} {
			for _, tc := range []struct {
				name string
				plan planner.Node
				want [][]any
			}{
				{"eq one entry", projectOf(filterOf(sc, pred(schema, "s", "eq", "e00005")), "id"), where(is("e00005"))},
				{"eq last int16 code", projectOf(filterOf(sc, pred(schema, "s", "eq", "e32767")), "id"), where(is("e32767"))},
				{"eq entry beyond int16", projectOf(filterOf(sc, pred(schema, "s", "eq", "e39000")), "id"), nil},
				{"in several", projectOf(filterOf(sc, pred(schema, "s", "in", "e00000", "e32767", "e39999")), "id"), where(is("e00000", "e32767"))},
				{"neq", projectOf(filterOf(sc, pred(schema, "s", "neq", "e00000")), "id"), where(func(v any) bool { return v != nil && v != "e00000" })},
				{"group", aggOf(sc, []string{"s"}, "count:*"), groups},
				{"count distinct", aggOf(sc, nil, "count_distinct:s"), [][]any{{int64(4)}}},
				{"sort", limitOf(projectOf(sortOf(sc, "-s", "id"), "id"), 0, 3), where(is("e32767"))[:3]},
			} {
				got, err := run(t, tc.plan, src, Options{Alloc: alloc, BatchSize: bs})
				if err != nil {
					t.Fatalf("offset %d batch %d %s: %v", off, bs, tc.name, err)
				}
				if !rowsEq(got, tc.want) {
					t.Fatalf("offset %d batch %d %s: got %d rows\n%.300s\nwant %d rows\n%.300s", off, bs, tc.name, len(got), fmtRows(got), len(tc.want), fmtRows(tc.want))
				}
			}
		}
		src.release()
	}
}

// TestDictIndicesWidths: dictIndices aliases int16 and int32 indices and
// converts the other widths (out-of-range values to -1).
func TestDictIndicesWidths(t *testing.T) {
	alloc := newAlloc()
	defer alloc.AssertSize(t, 0)
	for _, it := range []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Int16,
		arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint64} {
		arr := dictArray(alloc, dictType(it), []any{2, nil, 0, 1, 2}, []any{"a", "b", "c"})
		sl := array.NewSlice(arr, 1, 5)
		var buf []int32
		for _, a := range []arrow.Array{arr, sl} {
			x := dictIndices(a, &buf)
			switch it.ID() {
			case arrow.INT16:
				if x.i16 == nil || x.i32 != nil {
					t.Fatalf("%s: not aliased as int16", it)
				}
			case arrow.INT32:
				if x.i32 == nil || x.i16 != nil {
					t.Fatalf("%s: not aliased as int32", it)
				}
			default:
				if x.i16 != nil || len(x.i32) != a.Len() || len(buf) != a.Len() {
					t.Fatalf("%s: not converted", it)
				}
			}
			want := []int32{2, 0, 0, 1, 2}[5-a.Len():]
			for i := range a.Len() {
				if a.IsValid(i) && x.at(i) != want[i] {
					t.Fatalf("%s: code %d = %d, want %d", it, i, x.at(i), want[i])
				}
			}
		}
		sl.Release()
		arr.Release()
	}
	out := make([]int32, 3)
	convCodes([]uint64{0, 1 << 40, 7}, out)
	if out[1] != -1 || out[2] != 7 {
		t.Fatalf("convCodes = %v", out)
	}
}

// TestAndCodes: the code kernels against a per-row reference, for int16
// and int32 codes, every tail length of the 4-row unrolled loops, no, one
// and several passing entries (one beyond int16's range), and codes
// outside the dictionary (negative, too large) that must read as false.
func TestAndCodes(t *testing.T) {
	ok := []bool{false, true, false, true, false, false} // 5 entries + the clamp slot
	for _, tc := range []struct {
		name string
		c    dictEntryCache
	}{
		{"none", dictEntryCache{ok: make([]bool, 6), hits: 0, hit: -1}},
		{"one", dictEntryCache{ok: []bool{false, false, false, true, false, false}, hits: 1, hit: 3}},
		{"one beyond int16", dictEntryCache{ok: []bool{false}, hits: 1, hit: 40_000}},
		{"several", dictEntryCache{ok: ok, hits: 2, hit: 3}},
	} {
		for n := range 11 {
			codes := make([]int32, n)
			mask := make([]bool, n)
			for i := range codes {
				codes[i] = []int32{0, 1, 2, 3, 4, -5, 9, 3, 1, 32767, 3}[i]
				mask[i] = i%5 != 2 // some rows already false
			}
			want := make([]bool, n)
			for i, c := range codes {
				pass := false
				switch {
				case tc.c.hits == 1:
					pass = c == tc.c.hit
				case tc.c.hits > 1:
					pass = c >= 0 && int(c) < len(tc.c.ok)-1 && tc.c.ok[c]
				}
				want[i] = mask[i] && pass
			}
			m32 := append([]bool(nil), mask...)
			andCodes(maskBytes(m32), codes, &tc.c)
			c16 := make([]int16, n)
			for i, c := range codes {
				c16[i] = int16(c)
			}
			m16 := append([]bool(nil), mask...)
			andCodes(maskBytes(m16), c16, &tc.c)
			if !slices.Equal(m32, want) || !slices.Equal(m16, want) {
				t.Fatalf("%s n=%d: int32 %v int16 %v, want %v", tc.name, n, m32, m16, want)
			}
		}
	}
}
