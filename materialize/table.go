package materialize

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Table is a fully collected query result: a schema and its record batches,
// or, for a result spilled to disk (Materializer.Collect), a schema and a
// Parquet file holding the rows.
//
// A Table is reference counted: it starts with one reference, Retain adds
// one, Release drops one and the batches are released with the last. It
// implements handles.Value and handles.Sizer so it can live behind a result
// handle. All read methods are safe for concurrent use while the caller
// holds a reference.
type Table struct {
	refs    atomic.Int64
	schema  *arrow.Schema
	batches []arrow.RecordBatch // non-empty batches only
	starts  []int64             // starts[i]: first row of batches[i]; starts[len(batches)] == rows
	rows    int64
	size    int64
	spill   *spill // non-nil: the rows live in a spill file, batches is empty
}

// Collect drains rr into a Table. It retains the batches it keeps and does
// not Release rr (the caller does). If rr fails (rr.Err()) or ctx is done,
// it releases what it collected and returns the error: rr's error as is, a
// context error as the qerr timeout/cancelled error.
func Collect(ctx context.Context, rr array.RecordReader) (*Table, error) {
	var batches []arrow.RecordBatch
	fail := func(err error) (*Table, error) {
		for _, b := range batches {
			b.Release()
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return fail(qerr.As(err))
	}
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			return fail(qerr.As(err))
		}
		b := rr.RecordBatch()
		if b == nil || b.NumRows() == 0 {
			continue
		}
		b.Retain()
		batches = append(batches, b)
	}
	if err := rr.Err(); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(qerr.As(err))
	}
	t := newTable(rr.Schema(), batches)
	t.size = batchesSize(batches)
	return t, nil
}

// NewTable returns a Table over batches (which must all have schema's
// fields). It Retains the batches it keeps (empty ones are skipped), so the
// caller keeps its own references. A nil schema is taken from the first
// batch.
func NewTable(schema *arrow.Schema, batches []arrow.RecordBatch) *Table {
	kept := make([]arrow.RecordBatch, 0, len(batches))
	for _, b := range batches {
		if b == nil || b.NumRows() == 0 {
			continue
		}
		b.Retain()
		kept = append(kept, b)
	}
	if schema == nil {
		if len(batches) > 0 && batches[0] != nil {
			schema = batches[0].Schema()
		} else {
			schema = arrow.NewSchema(nil, nil)
		}
	}
	t := newTable(schema, kept)
	t.size = batchesSize(kept)
	return t
}

// newTable takes over the references to batches (all non-empty).
func newTable(schema *arrow.Schema, batches []arrow.RecordBatch) *Table {
	t := &Table{schema: schema, batches: batches, starts: make([]int64, len(batches)+1)}
	for i, b := range batches {
		t.starts[i] = t.rows
		t.rows += b.NumRows()
	}
	t.starts[len(batches)] = t.rows
	t.refs.Store(1)
	return t
}

// Schema returns the table's schema.
func (t *Table) Schema() *arrow.Schema { return t.schema }

// NumRows returns the number of rows.
func (t *Table) NumRows() int64 { return t.rows }

// NumCols returns the number of (top-level) columns.
func (t *Table) NumCols() int64 { return int64(t.schema.NumFields()) }

// SizeBytes returns the bytes of Arrow buffers the table holds (buffers
// shared between batches or columns are counted once); 0 for a spilled
// table, whose rows are on disk. It implements handles.Sizer.
func (t *Table) SizeBytes() int64 { return t.size }

// Spilled reports whether the rows live in a spill file rather than memory.
func (t *Table) Spilled() bool { return t.spill != nil }

// Retain adds a reference.
func (t *Table) Retain() { t.refs.Add(1) }

// Release drops a reference; the last one releases the batches. Releasing
// more often than retaining panics (it is a bug in the caller).
func (t *Table) Release() {
	switch n := t.refs.Add(-1); {
	case n == 0:
		for _, b := range t.batches {
			b.Release()
		}
		t.batches = nil
		if t.spill != nil {
			t.spill.close()
		}
	case n < 0:
		panic("materialize: Table released more times than retained")
	}
}

// Slice returns a Table holding rows [offset, offset+n) of t, clamped to
// t (empty when the range is). For an in-memory table the batches are
// zero-copy slices of t's; for a spilled table the rows are read from the
// spill file (reading only the row groups and pages that hold them). The
// caller must Release the result.
func (t *Table) Slice(ctx context.Context, offset, n int64) (*Table, error) {
	offset = max(offset, 0)
	end := min(t.rows, offset+max(n, 0))
	if t.spill != nil {
		return t.spill.read(ctx, offset, max(end-offset, 0))
	}
	var out []arrow.RecordBatch
	for bi := t.batchIndex(offset); offset < end && bi < len(t.batches) && t.starts[bi] < end; bi++ {
		b, start := t.batches[bi], t.starts[bi]
		lo := max(offset, start) - start
		hi := min(end, start+b.NumRows()) - start
		if lo == 0 && hi == b.NumRows() {
			b.Retain()
			out = append(out, b)
			continue
		}
		out = append(out, b.NewSlice(lo, hi))
	}
	v := newTable(t.schema, out)
	v.size = 0 // a view: its buffers belong to t
	return v, nil
}

// batchIndex returns the index of the batch holding row (0 <= row < rows).
func (t *Table) batchIndex(row int64) int {
	return sort.Search(len(t.batches), func(i int) bool { return t.starts[i+1] > row })
}

// batchesSize sums the Arrow buffers reachable from batches, each buffer once.
func batchesSize(batches []arrow.RecordBatch) int64 {
	seen := map[*memory.Buffer]struct{}{}
	var total int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		if d == nil {
			return
		}
		if ad, ok := d.(*array.Data); ok && ad == nil { // typed nil (no dictionary)
			return
		}
		for _, buf := range d.Buffers() {
			if buf == nil {
				continue
			}
			if _, ok := seen[buf]; ok {
				continue
			}
			seen[buf] = struct{}{}
			total += int64(buf.Len())
		}
		for _, c := range d.Children() {
			walk(c)
		}
		walk(d.Dictionary())
	}
	for _, b := range batches {
		for _, c := range b.Columns() {
			walk(c.Data())
		}
	}
	return total
}

// ColumnNames returns the output names of schema's columns, used for JSON
// keys, CSV headers, Parquet columns and Result.Columns alike: the field
// names with invalid UTF-8 replaced by U+FFFD, an empty name replaced by
// "column_<i>" (1-based), and a repeated name suffixed "_2", "_3", ... so
// that every name is unique.
func ColumnNames(schema *arrow.Schema) []string {
	fields := schema.Fields()
	names := make([]string, len(fields))
	used := make(map[string]bool, len(fields))
	for _, f := range fields {
		used[toValidUTF8(f.Name)] = true
	}
	seen := make(map[string]bool, len(fields))
	for i, f := range fields {
		n := toValidUTF8(f.Name)
		if n == "" {
			n = "column_" + strconv.Itoa(i+1)
		}
		if seen[n] || (f.Name == "" && used[n]) {
			base := n
			for k := 2; ; k++ {
				n = fmt.Sprintf("%s_%d", base, k)
				if !seen[n] && !used[n] {
					break
				}
			}
		}
		seen[n] = true
		names[i] = n
	}
	return names
}
