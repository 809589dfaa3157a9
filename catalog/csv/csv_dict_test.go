package csv

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// dictChunk parses cells (the second field of each row, "" = null) with a
// dictBuilder over wd.
func dictChunk(t *testing.T, mem memory.Allocator, wd *workerDict, cells []string) *array.Dictionary {
	t.Helper()
	b := []byte("h,h\nx," + strings.Join(cells, "\nx,") + "\n")
	tok := newTokenizer(',', 2, []int{1})
	if err := tok.run(b, true); err != nil {
		t.Fatal(err)
	}
	db := newDictBuilder(mem, tok.rows, wd)
	var scratch []byte
	if err := db.add(tok.spansOf(b, 0), &scratch); err != nil {
		t.Fatal(err)
	}
	if db.plain != nil {
		t.Fatalf("%q: went plain", cells)
	}
	return db.finish().(*array.Dictionary)
}

// TestWorkerDictPerChunk: chunks parsed by one worker share its
// dictionary, yet each chunk's array holds only its own values, in
// first-seen order, with codes into them.
func TestWorkerDictPerChunk(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var wd workerDict
	for i, chunk := range [][]string{
		{"east", "west", "east", "", "north"},
		{"north", "south", "", "east", "north"},
		{"", ""},
		{"a-value-longer-than-16-bytes", "west", "a-value-longer-than-16-bytes-too"},
		{"west"},
	} {
		d := dictChunk(t, mem, &wd, chunk)
		var want []string
		seen := map[string]bool{}
		for _, c := range chunk {
			if c != "" && !seen[c] {
				seen[c] = true
				want = append(want, c)
			}
		}
		vals := d.Dictionary().(*array.String)
		var got []string
		for j := range vals.Len() {
			got = append(got, vals.Value(j))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("chunk %d: dictionary %q, want %q", i, got, want)
		}
		for r, c := range chunk {
			if (c == "") != d.IsNull(r) || (c != "" && vals.Value(d.GetValueIndex(r)) != c) {
				t.Errorf("chunk %d row %d: wrong value, want %q", i, r, c)
			}
		}
		d.Release()
	}
	if wd.d.len() != 6 {
		t.Errorf("worker dictionary holds %d values, want 6", wd.d.len())
	}
}

// TestWorkerDictStartsOver: a worker dictionary past its bounds is
// replaced at the next chunk, and chunks stay correct.
func TestWorkerDictStartsOver(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var wd workerDict
	next := 0
	for range 16 {
		cells := make([]string, 12000)
		for j := range cells {
			cells[j] = fmt.Sprint("v", next+j%3000)
		}
		next += 3000
		d := dictChunk(t, mem, &wd, cells)
		if d.Dictionary().Len() != 3000 || d.Dictionary().(*array.String).Value(0) != cells[0] {
			t.Fatalf("dictionary of %d values starting %q", d.Dictionary().Len(), d.Dictionary().(*array.String).Value(0))
		}
		d.Release()
		if wd.d.len() > workerDictValues+3000 {
			t.Fatalf("worker dictionary grew to %d values", wd.d.len())
		}
	}
}

// TestDictBuilderInt16Cap: chunk dictionaries have int16 indices and at
// most dictMaxValues entries, whatever the chunk size allows; a chunk with
// more distinct values falls back to plain strings with the same values.
func TestDictBuilderInt16Cap(t *testing.T) {
	for _, tc := range []struct {
		name     string
		distinct int
		rows     int // the chunk's rows (its bound: a quarter may be distinct)
		plain    bool
	}{
		{"small", 3, 10, false},
		{"at quarter of rows", 1000, 4000, false},
		{"over quarter of rows", 1001, 4000, true},
		{"at int16 cap", dictMaxValues, 140000, false},
		{"over int16 cap", dictMaxValues + 1, 140000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			// Value j/4 for the first 4*distinct rows (never more than half
			// of the rows so far distinct), then repeats, with a few nulls.
			cells := make([]string, tc.rows)
			for j := range cells {
				switch {
				case j%97 == 5:
					cells[j] = ""
				case j < 4*tc.distinct:
					cells[j] = fmt.Sprint("v", j/4)
				default:
					cells[j] = fmt.Sprint("v", j%tc.distinct)
				}
			}
			if tc.distinct*4 > tc.rows { // make sure every value occurs
				for v := range tc.distinct {
					cells[tc.rows-tc.distinct+v] = fmt.Sprint("v", v)
				}
			}
			b := []byte("h,h\nx," + strings.Join(cells, "\nx,") + "\n")
			tok := newTokenizer(',', 2, []int{1})
			if err := tok.run(b, true); err != nil {
				t.Fatal(err)
			}
			var wd workerDict
			db := newDictBuilder(mem, tok.rows, &wd)
			defer db.release()
			var scratch []byte
			if err := db.add(tok.spansOf(b, 0), &scratch); err != nil {
				t.Fatal(err)
			}
			a := db.finish()
			defer a.Release()
			var value func(int) string
			if d, ok := a.(*array.Dictionary); ok {
				if tc.plain {
					t.Fatalf("kept a dictionary of %d values", d.Dictionary().Len())
				}
				if !arrow.TypeEqual(d.DataType(), dictStringType) || d.Indices().DataType().ID() != arrow.INT16 {
					t.Fatalf("type %s, want dictionary<values=utf8, indices=int16>", d.DataType())
				}
				if d.Dictionary().Len() > dictMaxValues {
					t.Fatalf("dictionary of %d values", d.Dictionary().Len())
				}
				vals := d.Dictionary().(*array.String)
				value = func(i int) string { return vals.Value(d.GetValueIndex(i)) }
			} else {
				if !tc.plain {
					t.Fatalf("went plain (%s)", a.DataType())
				}
				s := a.(*array.String)
				value = s.Value
			}
			if a.Len() != len(cells) {
				t.Fatalf("%d rows, want %d", a.Len(), len(cells))
			}
			for i, c := range cells {
				if (c == "") != a.IsNull(i) || (c != "" && value(i) != c) {
					t.Fatalf("row %d: wrong value, want %q", i, c)
				}
			}
		})
	}
}

func TestDictLimit(t *testing.T) {
	for _, tc := range []struct{ ub, want int }{
		{0, 64}, {100, 64}, {1000, 250}, {4 * dictMaxValues, dictMaxValues}, {1 << 20, dictMaxValues},
	} {
		if got := dictLimit(tc.ub); got != tc.want {
			t.Errorf("dictLimit(%d) = %d, want %d", tc.ub, got, tc.want)
		}
	}
}
