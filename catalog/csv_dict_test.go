package catalog

import (
	"fmt"
	"strings"
	"testing"

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
