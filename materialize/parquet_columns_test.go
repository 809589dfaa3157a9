package materialize

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/qerr"
)

// manyColumns is one row of cols int8 columns.
func manyColumns(t *testing.T, mem memory.Allocator, cols int) *Table {
	t.Helper()
	fields := make([]arrow.Field, cols)
	arrs := make([]arrow.Array, cols)
	b := array.NewInt8Builder(mem)
	defer b.Release()
	for i := range cols {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: arrow.PrimitiveTypes.Int8, Nullable: true}
		b.Append(int8(i))
		arrs[i] = b.NewArray()
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, 1)
	for _, a := range arrs {
		a.Release()
	}
	return newTable(rec.Schema(), []arrow.RecordBatch{rec})
}

// TestParquetTooManyColumns: a result with more columns than a Parquet
// file can hold is refused with unsupported_format before anything is
// written (parquet-go would panic mid-write), is not spilled, and can still
// be delivered as CSV.
func TestParquetTooManyColumns(t *testing.T) {
	mem := newAlloc(t)
	// (A file of MaxParquetColumns columns writes fine, but takes parquet-go
	// 20 s to set up: not tested here.)
	for _, cols := range []int{MaxParquetColumns + 1} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			src := manyColumns(t, mem, cols)
			defer src.Release()
			var buf bytes.Buffer
			err := WriteParquet(ctx(), &buf, src.Schema(), src.batches)
			f := newFixtureCfg(t, Config{SpillRows: -1, SpillBytes: 1}, handles.Options{})
			tbl := collectVia(t, f.m, src)
			defer tbl.Release()
			_, derr := f.m.Deliver(ctx(), tbl, Request{Format: FormatParquet})
			for _, err := range []error{err, derr} {
				if !errors.Is(err, qerr.ErrUnsupported) || qerr.Code(err) != qerr.CodeUnsupportedFormat || qerr.As(err).Hint == "" {
					t.Fatalf("%d columns: %v, want unsupported_format", cols, err)
				}
			}
			if buf.Len() != 0 || tbl.Spilled() || len(f.store.List()) != 0 {
				t.Fatalf("wrote %d bytes, spilled %v, artifacts %v", buf.Len(), tbl.Spilled(), f.store.List())
			}
			if ents, _ := os.ReadDir(f.store.Dir()); len(ents) != 0 {
				t.Fatalf("left behind %v", ents)
			}
			if res, err := f.m.Deliver(ctx(), tbl, Request{Format: FormatCSV}); err != nil || res.RowCount != 1 {
				t.Fatalf("csv: %+v %v", res, err)
			}
		})
	}
}
