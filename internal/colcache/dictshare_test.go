package colcache

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/planner"
)

// stringChunks builds a plain string column of rows rows in chunks of
// chunk rows: row i is "v<i mod distinct>", null every nullEvery rows
// (0: never). With sliced, each chunk is a slice (offset 3) of a longer
// array.
func stringChunks(mem memory.Allocator, rows, chunk, distinct, nullEvery int, sliced bool) []arrow.Array {
	var out []arrow.Array
	for lo := 0; lo < rows; lo += chunk {
		hi := min(lo+chunk, rows)
		b := array.NewStringBuilder(mem)
		pad := 0
		if sliced {
			pad = 3
			b.AppendValues([]string{"pad0", "pad1", "pad2"}, nil)
		}
		for i := lo; i < hi; i++ {
			if nullEvery > 0 && i%nullEvery == 0 {
				b.AppendNull()
				continue
			}
			b.Append(fmt.Sprintf("v%d", i%distinct))
		}
		a := b.NewArray()
		b.Release()
		if sliced {
			s := array.NewSlice(a, int64(pad), int64(a.Len()))
			a.Release()
			a = s
		}
		out = append(out, a)
	}
	return out
}

func TestShareDict(t *testing.T) {
	dict16 := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	cases := []struct {
		name                  string
		rows, chunk, distinct int
		nullEvery             int
		sliced, dict          bool
		want                  bool
	}{
		{name: "repeating values, nulls", rows: 200_000, chunk: 70_000, distinct: 1000, nullEvery: 7, want: true},
		{name: "sliced chunks", rows: 100_000, chunk: 30_000, distinct: 12_500, sliced: true, want: true},
		{name: "one distinct value per 8 rows", rows: 80_000, chunk: 80_000, distinct: 10_000, want: true},
		{name: "too many distinct values", rows: 80_000, chunk: 40_000, distinct: 10_001},
		{name: "too few rows", rows: shareMinRows - 1, chunk: 10_000, distinct: 10},
		{name: "already dictionary-encoded", rows: 100_000, chunk: 50_000, distinct: 10, dict: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			chunks := stringChunks(mem, tc.rows, tc.chunk, tc.distinct, tc.nullEvery, tc.sliced)
			defer releaseAll(chunks)
			if tc.dict {
				for i, a := range chunks {
					b := array.NewDictionaryBuilder(mem, dict16).(*array.BinaryDictionaryBuilder)
					for j := range a.Len() {
						_ = b.AppendString(a.(*array.String).Value(j))
					}
					d := b.NewArray()
					b.Release()
					a.Release()
					chunks[i] = d
				}
			}
			enc, ok := shareDict(mem, chunks, int64(tc.rows))
			if ok != tc.want {
				t.Fatalf("encoded %v, want %v", ok, tc.want)
			}
			if !ok {
				return
			}
			defer releaseAll(enc)
			var dictData arrow.ArrayData
			for i, a := range enc {
				if !arrow.TypeEqual(a.DataType(), sharedDictType) {
					t.Fatalf("chunk %d type %s", i, a.DataType())
				}
				d := a.(*array.Dictionary)
				if i == 0 {
					dictData = d.Dictionary().Data()
				} else if d.Dictionary().Data() != dictData {
					t.Fatalf("chunk %d has a dictionary of its own", i)
				}
				if d.Dictionary().Len() != tc.distinct || d.Dictionary().NullN() != 0 {
					t.Fatalf("dictionary of %d values (%d null), want %d", d.Dictionary().Len(), d.Dictionary().NullN(), tc.distinct)
				}
				src := chunks[i].(*array.String)
				if a.Len() != src.Len() || a.NullN() != src.NullN() {
					t.Fatalf("chunk %d: %d rows %d nulls, want %d %d", i, a.Len(), a.NullN(), src.Len(), src.NullN())
				}
				vals := d.Dictionary().(*array.String)
				for j := range a.Len() {
					if a.IsNull(j) != src.IsNull(j) || (src.IsValid(j) && vals.Value(d.GetValueIndex(j)) != src.Value(j)) {
						t.Fatalf("chunk %d row %d: %q, want %q", i, j, a.ValueStr(j), src.ValueStr(j))
					}
				}
			}
		})
	}
}

// TestSharedDictThroughCache: a column with 40,000 distinct values among
// 400,000 rows (more per parse chunk than its int16 dictionaries take, so
// the CSV reader hands it over plain) is cached with one shared
// dictionary, and queries over it give the plain read's results and types.
func TestSharedDictThroughCache(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("id,k,v\n")
	const rows = 400_000
	for i := range rows {
		k := fmt.Sprintf("key%05d", (i*7919)%40_000)
		if i%101 == 0 {
			k = ""
		}
		fmt.Fprintf(&sb, "%d,%s,%d\n", i, k, i%13)
	}
	c, ds, src, mem := openCachedCSV(t, "k", sb.String(), 256<<20)
	if dt := src.PlanSchema().Field(1).Type; !arrow.TypeEqual(dt, sharedDictType) {
		t.Fatalf("plan type of k %s, want %s", dt, sharedDictType)
	}
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	i64 := func(v int64) *int64 { return &v }
	compareThroughCache(t, c, ds, src, mem, []planner.Spec{
		{GroupBy: []string{"k"}, Aggs: []planner.AggSpec{{Col: "v", Fn: planner.AggSum}, {Col: "*", Fn: planner.AggCount}, {Col: "v", Fn: planner.AggMax}}},
		{Filters: []planner.FilterSpec{{Col: "k", Op: planner.OpStartsWith, Value: raw(`"key0001"`)}}, Columns: []string{"id", "k"}},
		{Columns: []string{"k", "id"}, OrderBy: []planner.OrderSpec{{Col: "k", Desc: true}, {Col: "id"}}, Limit: i64(5000)},
		{Columns: []string{"k"}, Distinct: true, OrderBy: []planner.OrderSpec{{Col: "k"}}},
		{Aggs: []planner.AggSpec{{Col: "k", Fn: planner.AggCountDistinct}, {Col: "k", Fn: planner.AggMin}, {Col: "k", Fn: planner.AggLast}}},
		{Filters: []planner.FilterSpec{{Col: "k", Op: planner.OpIsNull}}, Columns: []string{"id"}},
	})
}

// TestShareDictGrowth: a column whose distinct values keep growing (like
// free-text notes: most rows new values throughout) is given up within
// three windows of shareWindow rows, long before its distinct count passes
// the limit; columns in random order that meet the ratio (few values, or
// exactly rows/shareRatio drawn uniformly, the hardest case) are still
// encoded.
func TestShareDictGrowth(t *testing.T) {
	const rows = 2_000_000
	cases := []struct {
		name  string
		value func(r *rand.Rand, i int) string
		want  bool
	}{
		{name: "notes: three rows in four new values", value: func(r *rand.Rand, i int) string {
			if r.IntN(4) == 0 {
				return fmt.Sprintf("w%d", r.IntN(100))
			}
			return fmt.Sprintf("note %d", i)
		}},
		{name: "id3-like: 40,000 values in random order", value: func(r *rand.Rand, _ int) string { return fmt.Sprintf("id%d", r.IntN(40_000)) }, want: true},
		{name: "rows/8 values uniformly at random", value: func(r *rand.Rand, _ int) string { return fmt.Sprintf("id%d", r.IntN(rows/shareRatio)) }, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			r := rand.New(rand.NewPCG(1, 2))
			var chunks []arrow.Array
			for lo := 0; lo < rows; lo += 1 << 16 {
				b := array.NewStringBuilder(mem)
				for i := lo; i < min(lo+1<<16, rows); i++ {
					b.Append(tc.value(r, i))
				}
				chunks = append(chunks, b.NewArray())
				b.Release()
			}
			defer releaseAll(chunks)
			before := shareDictRows.Load()
			enc, ok := shareDict(mem, chunks, rows)
			hashed := shareDictRows.Load() - before
			if ok != tc.want {
				t.Fatalf("encoded %v, want %v (hashed %d rows)", ok, tc.want, hashed)
			}
			if ok {
				releaseAll(enc)
				return
			}
			// Without the growth test the map takes 250,000 values, a
			// third of a million rows.
			if hashed > 3*shareWindow {
				t.Fatalf("hashed %d rows before giving up, want at most %d", hashed, 3*shareWindow)
			}
		})
	}
}
