package catalog_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/testutil/arrowfile"
)

// arrowBytes and arrowStreamBytes write recs as an Arrow IPC file and
// stream (opts: compression).
var arrowBytes, arrowStreamBytes = arrowfile.IPC, arrowfile.IPCStream

// dictRecord is a record with a dictionary-encoded string column and an
// int64 column.
func dictRecord(t testing.TB, mem memory.Allocator, n int) arrow.RecordBatch {
	t.Helper()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "grp", Type: dt, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := range n {
		db := b.Field(0).(*array.BinaryDictionaryBuilder)
		if i%5 == 4 {
			db.AppendNull()
		} else if err := db.AppendString([]string{"north", "south", "east"}[i%3]); err != nil {
			t.Fatal(err)
		}
		b.Field(1).(*array.Int64Builder).Append(int64(i * i))
	}
	return b.NewRecordBatch()
}

// TestArrowDataset: Arrow IPC files (plain, several batches, zstd and
// lz4 bodies, a dictionary column) are datasets with exact row counts,
// the Parquet type mapping, and scans that read every value back.
func TestArrowDataset(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := sampleRecord(t, mem)
	defer rec.Release()
	a, b := rec.NewSlice(0, 4), rec.NewSlice(4, 10)
	defer a.Release()
	defer b.Release()
	root := t.TempDir()
	cattest.WriteRaw(t, root, "plain.arrow", string(arrowBytes(t, nil, rec)))
	cattest.WriteRaw(t, root, "multi.feather", string(arrowBytes(t, nil, a, b)))
	cattest.WriteRaw(t, root, "zstd.ipc", string(arrowBytes(t, []ipc.Option{ipc.WithZstd()}, a, b)))
	cattest.WriteRaw(t, root, "lz4.ARROW", string(arrowBytes(t, []ipc.Option{ipc.WithLZ4()}, rec)))
	cattest.WriteRaw(t, root, "stream.arrows", string(arrowStreamBytes(t, nil, a, b)))
	cattest.WriteRaw(t, root, "zstream.arrows", string(arrowStreamBytes(t, []ipc.Option{ipc.WithZstd()}, a, b)))
	cattest.WriteRaw(t, root, "named.arrow", string(arrowStreamBytes(t, nil, rec))) // a stream named as a file
	c := cattest.NewCatalog(t, root, catalog.NewArrowFormat(catalog.Limits{}))
	if d := c.Diagnostics(); len(d) != 0 {
		t.Fatalf("diagnostics %v", d)
	}
	want := []string{"int64", "int32", "float64", "utf8", "bool", "date32", "timestamp[us, tz=UTC]", "float64", "utf8", "utf8", "utf8"}
	var first [][]any
	for _, id := range []string{"plain", "multi", "zstd", "lz4", "stream", "zstream", "named"} {
		ds := cattest.Lookup(t, c, id)
		if ds.Kind != catalog.KindArrow || !ds.RowCountExact || ds.RowCount != 10 {
			t.Fatalf("%s: kind %s rows %d exact %v", id, ds.Kind, ds.RowCount, ds.RowCountExact)
		}
		if isStream := ds.Attributes["ipc_format"] == "stream"; isStream != (id == "stream" || id == "zstream" || id == "named") {
			t.Errorf("%s: attributes %v", id, ds.Attributes)
		}
		if got := cattest.TypeNames(ds.Schema); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: types %v, want %v", id, got, want)
		}
		if h := ds.ColumnNotes["tags"].Hint; !strings.Contains(h, "JSON text") {
			t.Errorf("%s: tags hint %q", id, h)
		}
		_, cols := cattest.ScanAll(t, ds, catalog.ScanOptions{BatchSize: 3})
		if first == nil {
			first = cols
			if cols[0][9] != int64(9) || cols[1][4] != "-4" && cols[1][4] != int64(-4) || cols[3][0] != nil || cols[3][1] != "b00501" ||
				cols[8][0] != "123456789012345678901234567.891" || cols[7][2] != 2.05 || cols[9][0] != `["t"]` || cols[10][3] != `{"a":3}` {
				t.Fatalf("%s: values %v", id, cols)
			}
			continue
		}
		if !reflect.DeepEqual(cols, first) {
			t.Fatalf("%s reads %v, plain.arrow %v", id, cols, first)
		}
	}
	// Projection in another order, batches sliced below the file's.
	sc, cols := cattest.ScanAll(t, cattest.Lookup(t, c, "multi"), catalog.ScanOptions{Columns: []string{"name", "id"}, BatchSize: 2})
	if got := cattest.FieldNames(sc); !reflect.DeepEqual(got, []string{"name", "id"}) || len(cols[1]) != 10 || cols[1][7] != int64(7) || cols[0][2] != "a00501" {
		t.Fatalf("projection: %v %v", got, cols)
	}

	// A dictionary column is decoded; its nulls stay null.
	drec := dictRecord(t, mem, 12)
	defer drec.Release()
	cattest.WriteRaw(t, root, "d/dict.arrow", string(arrowBytes(t, nil, drec)))
	d1, d2 := drec.NewSlice(0, 5), drec.NewSlice(5, 12)
	defer d1.Release()
	defer d2.Release()
	cattest.WriteRaw(t, root, "d/sdict.arrows", string(arrowStreamBytes(t, nil, d1, d2)))
	c = cattest.NewCatalog(t, root, catalog.NewArrowFormat(catalog.Limits{}))
	for _, id := range []string{"d/dict", "d/sdict"} {
		ds := cattest.Lookup(t, c, id)
		if got := cattest.TypeNames(ds.Schema); !reflect.DeepEqual(got, []string{"utf8", "int64"}) {
			t.Fatalf("%s: dict types %v", id, got)
		}
		_, cols = cattest.ScanAll(t, ds, catalog.ScanOptions{})
		if cols[0][0] != "north" || cols[0][4] != nil || cols[0][5] != "east" || cols[1][11] != int64(121) {
			t.Fatalf("%s: dict values %v", id, cols)
		}
	}
}

// TestArrowBrokenFiles: files that are not valid Arrow IPC files are
// diagnostics with a reason, never datasets or panics.
func TestArrowBrokenFiles(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := sampleRecord(t, mem)
	defer rec.Release()
	good := arrowBytes(t, nil, rec)
	stream := string(arrowStreamBytes(t, nil, rec))
	// The footer's length at the end claims the whole file.
	hugeFooter := bytes.Clone(good)
	binary.LittleEndian.PutUint32(hugeFooter[len(good)-10:], 0x7FFFFFF0)
	for _, tc := range []struct {
		name, data, reason string
	}{
		{"empty", "", "too short"},
		{"text", "a,b\n1,2\n", "Arrow message's metadata is"},
		{"feather1", "FEA1" + strings.Repeat("\x00", 40), "Feather v1"},
		{"truncated", string(good[:len(good)/2]), "missing at the end"},
		{"stream truncated", stream[:len(stream)/2], "the file holds"},
		{"stream schema only", stream[:8] + "\x00\x00\x00\x00", "claims"},
		{"footer", string(hugeFooter), "footer claims"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cattest.WriteRaw(t, root, "x.arrow", tc.data)
			c := cattest.NewCatalog(t, root, catalog.NewArrowFormat(catalog.Limits{}))
			d := c.Diagnostics()
			if len(c.Datasets()) != 0 || len(d) != 1 || !strings.Contains(d[0].Reason, tc.reason) {
				t.Fatalf("datasets %d diagnostics %v, want %q", len(c.Datasets()), d, tc.reason)
			}
		})
	}
}

// TestArrowHostileLengths overwrites every aligned 4-byte word of valid
// files (the footer, every message's metadata, the bodies; plain, zstd
// and dictionary files) with lengths arrow-go would allocate from
// unchecked, and checks that each mutant is either a diagnostic or a
// dataset whose scan reads its rows or fails with an error: no panic, no
// huge allocation (the test would run out of memory), nothing leaked.
func TestArrowHostileLengths(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := dictRecord(t, mem, 6)
	defer rec.Release()
	small := sampleRecord(t, mem)
	defer small.Release()
	one := small.NewSlice(0, 2)
	defer one.Release()
	// The plain file without dictionaries is read through the mapped path.
	files := [][]byte{arrowBytes(t, nil, rec), arrowBytes(t, []ipc.Option{ipc.WithZstd()}, one), arrowBytes(t, nil, one),
		arrowStreamBytes(t, nil, rec), arrowStreamBytes(t, []ipc.Option{ipc.WithZstd()}, one)}
	root := t.TempDir()
	path := filepath.Join(root, "h.arrow")
	format := catalog.NewArrowFormat(catalog.Limits{MaxMetadataBytes: 1 << 20})
	opened, refused := 0, 0
	for _, good := range files {
		for p := 0; p+4 <= len(good); p += 4 {
			{
				v := []uint32{0x7FFFFFF8, 0xFFFFFFF0}[p/4%2]
				bad := bytes.Clone(good)
				binary.LittleEndian.PutUint32(bad[p:], v)
				if err := os.WriteFile(path, bad, 0o644); err != nil {
					t.Fatal(err)
				}
				st, _ := os.Stat(path)
				dss, err := format.Open(context.Background(), catalog.FileInfo{AbsPath: path, RelPath: "h.arrow", BaseID: "h", Root: root, Size: st.Size()})
				if err != nil {
					var qe *qerr.Error
					if !errors.As(err, &qe) {
						t.Fatalf("offset %d: error %v is not structured", p, err)
					}
					refused++
					continue
				}
				opened++
				ds := dss[0]
				base := mem.CurrentAlloc()
				rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Alloc: mem, BatchSize: 4})
				if err != nil {
					continue
				}
				var n int64
				for rr.Next() {
					n += rr.RecordBatch().NumRows()
				}
				if rr.Err() == nil && n != ds.RowCount {
					t.Fatalf("offset %d: scanned %d rows, cataloged %d", p, n, ds.RowCount)
				}
				rr.Release()
				if mem.CurrentAlloc() != base {
					t.Fatalf("offset %d: the scan (error %v) left %d bytes allocated", p, rr.Err(), mem.CurrentAlloc()-base)
				}
			}
		}
	}
	if refused == 0 || opened == 0 {
		t.Fatalf("opened %d, refused %d: the sweep tests nothing", opened, refused)
	}
}
