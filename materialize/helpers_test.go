package materialize

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/artifacts"
)

// newAlloc returns a checked allocator asserted empty at the end of the test
// (registered first, so it runs after every other cleanup).
func newAlloc(t testing.TB) *memory.CheckedAllocator {
	t.Helper()
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { alloc.AssertSize(t, 0) })
	return alloc
}

// fromJSON builds an array of dt from a JSON array.
func fromJSON(t testing.TB, mem memory.Allocator, dt arrow.DataType, js string) arrow.Array {
	t.Helper()
	arr, _, err := array.FromJSON(mem, dt, strings.NewReader(js))
	if err != nil {
		t.Fatalf("FromJSON(%s, %s): %v", dt, js, err)
	}
	return arr
}

// tableOf builds a one-batch Table from columns (it releases the arrays).
func tableOf(t testing.TB, names []string, cols ...arrow.Array) *Table {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: names[i], Type: c.DataType(), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	n := int64(0)
	if len(cols) > 0 {
		n = int64(cols[0].Len())
	}
	rec := array.NewRecordBatch(schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	tbl := NewTable(schema, []arrow.RecordBatch{rec})
	rec.Release()
	return tbl
}

var idSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// idTable builds a table of rows rows (id = 0..rows-1, name "row-<id>",
// score id/2, null every 7th) in batches of batchRows rows.
func idTable(t testing.TB, mem memory.Allocator, rows, batchRows int) *Table {
	t.Helper()
	b := array.NewRecordBuilder(mem, idSchema)
	defer b.Release()
	var batches []arrow.RecordBatch
	for lo := 0; lo < rows; lo += batchRows {
		for i := lo; i < min(rows, lo+batchRows); i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			if i%7 == 3 {
				b.Field(1).AppendNull()
				b.Field(2).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row-%d", i))
				b.Field(2).(*array.Float64Builder).Append(float64(i) / 2)
			}
		}
		batches = append(batches, b.NewRecordBatch())
	}
	tbl := NewTable(idSchema, batches)
	for _, r := range batches {
		r.Release()
	}
	return tbl
}

// fixture is a Materializer with its registry and store.
type fixture struct {
	m     *Materializer
	reg   *handles.Registry[*Table]
	store *artifacts.Store
	now   time.Time
}

func newFixture(t testing.TB, hard Caps) *fixture {
	t.Helper()
	return newFixtureCfg(t, Config{Hard: hard}, handles.Options{})
}

// newFixtureCfg is newFixture with a full Config (its Artifacts and Handles
// are filled in) and registry options (TTL, Key and Now are filled in).
func newFixtureCfg(t testing.TB, cfg Config, ho handles.Options) *fixture {
	t.Helper()
	f := &fixture{now: time.Unix(1_700_000_000, 0)}
	ho.TTL, ho.Key, ho.Now = time.Minute, []byte("test-key"), func() time.Time { return f.now }
	f.reg = handles.New[*Table](ho)
	t.Cleanup(f.reg.Close)
	store, err := artifacts.Open(artifacts.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	f.store = store
	cfg.Artifacts, cfg.Handles = store, f.reg
	f.m = New(cfg)
	return f
}

// ids decodes a JSON array of records and returns their "id" values.
func ids(t testing.TB, data []byte) []int64 {
	t.Helper()
	var recs []map[string]any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&recs); err != nil {
		t.Fatalf("decode %q: %v", clipBytes(data), err)
	}
	out := make([]int64, len(recs))
	for i, r := range recs {
		n, err := r["id"].(json.Number).Int64()
		if err != nil {
			t.Fatalf("id %v: %v", r["id"], err)
		}
		out[i] = n
	}
	return out
}

func clipBytes(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// checkInvariants checks the never-silently-truncated contract of a result.
func checkInvariants(t testing.TB, r *Result) {
	t.Helper()
	if r.Warnings == nil {
		t.Errorf("warnings is nil")
	}
	if r.RowCount < r.TotalRows && !r.Truncated && (r.PageInfo == nil || r.PageInfo.Offset == 0) {
		t.Errorf("response has %d of %d rows but is not truncated (page %+v)", r.RowCount, r.TotalRows, r.PageInfo)
	}
	if r.PageInfo != nil {
		if r.PageInfo.HasMore != r.Truncated {
			t.Errorf("has_more %v but truncated %v", r.PageInfo.HasMore, r.Truncated)
		}
		if r.PageInfo.HasMore != (r.PageInfo.PageToken != "") {
			t.Errorf("has_more %v but token %q", r.PageInfo.HasMore, r.PageInfo.PageToken)
		}
		if r.PageInfo.Size != r.RowCount {
			t.Errorf("page size %d, row_count %d", r.PageInfo.Size, r.RowCount)
		}
		if r.PageInfo.HasMore != (r.PageInfo.Offset+r.PageInfo.Size < r.TotalRows) {
			t.Errorf("has_more %v for page %+v of %d", r.PageInfo.HasMore, r.PageInfo, r.TotalRows)
		}
	}
	if r.Data != nil && !json.Valid(r.Data) {
		t.Errorf("data is not valid JSON: %s", clipBytes(r.Data))
	}
	b, err := json.Marshal(r)
	if err != nil || !json.Valid(b) {
		t.Errorf("result does not marshal: %v", err)
	}
	if !strings.Contains(string(b), `"warnings":[`) {
		t.Errorf("warnings not an array: %s", clipBytes(b))
	}
}

func ctx() context.Context { return context.Background() }

// sliceBatches returns the batches of rows [off, off+n) of tbl, each
// retained (the caller releases them), as the old Table.Slice did.
func sliceBatches(tb testing.TB, tbl *Table, off, n int64) []arrow.RecordBatch {
	tb.Helper()
	v, err := tbl.Slice(context.Background(), off, n)
	if err != nil {
		tb.Fatal(err)
	}
	defer v.Release()
	out := make([]arrow.RecordBatch, len(v.batches))
	for i, b := range v.batches {
		b.Retain()
		out[i] = b
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
