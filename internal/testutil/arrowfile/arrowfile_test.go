package arrowfile

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ints is a batch of one int64 column holding vs.
func ints(mem memory.Allocator, vs ...int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil))
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(vs, nil)
	return b.NewRecordBatch()
}

// sum adds up column 0 of every batch rr gives.
func sum(t *testing.T, rr array.RecordReader) (n int64) {
	t.Helper()
	for rr.Next() {
		for _, v := range rr.RecordBatch().Column(0).(*array.Int64).Int64Values() {
			n += v
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// Every writer's output reads back as the batches written, with no
// buffer left behind.
func TestRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a, b := ints(mem, 1, 2, 3), ints(mem, 40, 50)
	defer a.Release()
	defer b.Release()

	fr, err := ipc.NewFileReader(bytes.NewReader(IPC(t, []ipc.Option{ipc.WithZstd()}, a, b)), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	if fr.NumRecords() != 2 {
		t.Errorf("IPC file: %d batches, want 2", fr.NumRecords())
	}
	fr.Close()

	sr, err := ipc.NewReader(bytes.NewReader(IPCStream(t, nil, a, b)), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	if n := sum(t, sr); n != 96 {
		t.Errorf("IPC stream: sum %d, want 96", n)
	}
	sr.Release()

	data := Parquet(t, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(2)), pqarrow.DefaultWriterProps(), a, b)
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if pf.NumRows() != 5 || pf.NumRowGroups() != 3 { // 2+1 rows of a, 2 of b
		t.Errorf("Parquet: %d rows in %d row groups, want 5 in 3", pf.NumRows(), pf.NumRowGroups())
	}
	fileReader, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 10}, mem)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := fileReader.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := sum(t, rr); n != 96 {
		t.Errorf("Parquet: sum %d, want 96", n)
	}
	rr.Release()
}
