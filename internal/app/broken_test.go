//go:build unix

package app_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/klauspost/compress/zstd"
	"github.com/xuri/excelize/v2"

	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/testutil/arrowfile"
	"github.com/quarrydb/quarry/service"
)

var updateBroken = flag.Bool("update", false, "regenerate testdata/broken (the broken-file corpus)")

// brokenDir holds the broken-file corpus: every supported format
// truncated, bit-flipped, with a wrong magic number, a huge declared size or
// otherwise garbled (written by writeBrokenCorpus; go test -update).
const brokenDir = "testdata/broken"

// brokenFiles lists the corpus. diag: the file must be refused at catalog
// time with a diagnostic; otherwise it may also open as a dataset (a
// truncated text file is still text), and then every call on it must
// answer or fail with a structured, non-internal error.
var brokenFiles = []struct {
	name string
	diag bool
}{
	{"csv/unclosed_quote.csv", true},
	{"csv/binary_nul.csv", true},
	{"csv/ragged.csv", true},
	{"csv/empty.csv", true},
	{"csv/invalid_utf8.csv", true},
	{"gz/truncated.csv.gz", true},
	{"gz/bad_magic.csv.gz", true},
	{"gz/bitflip.csv.gz", true},
	{"zst/truncated.csv.zst", true},
	{"zst/bad_magic.csv.zst", true},
	{"bz2/truncated.csv.bz2", true},
	{"bz2/bad_magic.csv.bz2", true},
	{"parquet/truncated.parquet", true},
	{"parquet/bad_magic.parquet", true},
	{"parquet/huge_footer.parquet", true},
	{"parquet/bitflip.parquet", false},
	{"json/truncated.json", true},
	{"json/garbled.jsonl", true},
	{"json/deep.json", true},
	{"json/truncated.jsonl.gz", true},
	{"h5/truncated.h5", true},
	{"h5/bad_magic.h5", true},
	{"h5/bitflip.h5", false},
	{"xlsx/truncated.xlsx", true},
	{"xlsx/bad_magic.xlsx", true},
	{"xlsx/bitflip.xlsx", false},
	{"xlsx/not_a_zip.xlsx", true},
	{"arrow/truncated.arrow", true},
	{"arrow/bad_magic.arrow", true},
	{"arrow/huge_footer.arrow", true},
	{"arrow/bitflip.arrow", false},
}

// TestBrokenFileCorpus loads the broken-file corpus through the fully wired
// app (every format registered) and calls get_schema, query_data,
// estimate_query and distinct_values on whatever opened: nothing panics,
// every file is accounted for (a diagnostic or a dataset), every error is
// structured and not internal, and the whole run stays in bounded time and
// memory.
func TestBrokenFileCorpus(t *testing.T) {
	if *updateBroken {
		writeBrokenCorpus(t)
	}
	root := t.TempDir()
	copyTree(t, brokenDir, root)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	a, err := app.Open(context.Background(), app.Config{Data: root, ArtifactDir: t.TempDir(), CacheMemory: 16 << 20,
		Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	defer a.Close()
	diags := map[string]string{}
	for _, d := range a.Catalog.Diagnostics() {
		diags[d.Path] = d.Reason
	}
	datasets := map[string][]string{}
	for _, d := range a.Catalog.Datasets() {
		datasets[d.Path] = append(datasets[d.Path], d.ID)
	}
	ctx := context.Background()
	for _, f := range brokenFiles {
		t.Run(f.name, func(t *testing.T) {
			reason, hasDiag := diags[f.name]
			ids := datasets[f.name]
			switch {
			case f.diag && !hasDiag:
				t.Fatalf("no diagnostic (datasets %v)", ids)
			case !hasDiag && len(ids) == 0:
				t.Fatal("neither a diagnostic nor a dataset: the file vanished silently")
			case hasDiag && strings.TrimSpace(reason) == "":
				t.Fatal("empty diagnostic")
			}
			for _, id := range ids {
				structured := func(call string, err error) {
					if err == nil {
						return
					}
					e := qerr.As(err)
					if e == nil || e.Code == qerr.CodeInternal || e.Message == "" {
						t.Errorf("%s on %s: %v (want a structured, non-internal error)", call, id, err)
					}
				}
				sch, err := a.Service.Schema(ctx, service.SchemaRequest{Dataset: id})
				structured("get_schema", err)
				_, err = a.Service.Query(ctx, service.QueryRequest{EstimateRequest: service.EstimateRequest{Dataset: id}, DeliveryOptions: service.DeliveryOptions{Confirm: true}})
				structured("query_data", err)
				_, err = a.Service.Estimate(ctx, service.EstimateRequest{Dataset: id})
				structured("estimate_query", err)
				if sch != nil && len(sch.Columns) > 0 {
					_, err = a.Service.DistinctValues(ctx, service.DistinctRequest{Dataset: id, Column: sch.Columns[0].Name})
					structured("distinct_values", err)
				}
			}
		})
	}
	seen := map[string]bool{}
	for _, f := range brokenFiles {
		seen[f.name] = true
	}
	must(t, filepath.WalkDir(brokenDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if rel, _ := filepath.Rel(brokenDir, p); !seen[filepath.ToSlash(rel)] {
				t.Errorf("%s is in the corpus but not in brokenFiles", rel)
			}
		}
		return err
	}))
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("the corpus took %v", el)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 256<<20 {
		t.Errorf("the heap grew by %d MiB", grew>>20)
	}
}

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	must(t, filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		must(t, os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755))
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
}

// writeBrokenCorpus regenerates testdata/broken from good files: text
// written here, a Parquet and an Arrow IPC file written by arrow-go, a
// workbook written by excelize, the demo data's calibration.h5 and
// catalog's bzip2 test file.
func writeBrokenCorpus(t *testing.T) {
	must(t, os.RemoveAll(brokenDir))
	put := func(rel string, b []byte) {
		p := filepath.Join(brokenDir, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, b, 0o644))
	}
	var csv bytes.Buffer
	csv.WriteString("id,name,value\n")
	for i := range 2000 {
		fmt.Fprintf(&csv, "%d,name %d,%d.5\n", i, i%37, i*7)
	}
	good := csv.Bytes()
	flip := func(b []byte, at ...int) []byte {
		b = bytes.Clone(b)
		for _, i := range at {
			b[i] ^= 0x5a
		}
		return b
	}
	half := func(b []byte) []byte { return bytes.Clone(b[:len(b)/2]) }

	put("csv/unclosed_quote.csv", []byte("a,b\n1,\"open field\n2,3\n"))
	put("csv/binary_nul.csv", []byte("a,b\n\x00\x01\x02,\x00\n\xff\xfe\x00\x00\n"))
	put("csv/ragged.csv", []byte("a,b,c\n1,2\n3,4,5,6\n7\n"))
	put("csv/empty.csv", nil)
	put("csv/invalid_utf8.csv", []byte("a,b\n1,caf\xe9\n2,\xc3\x28\n"))

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write(good)
	must(t, err)
	must(t, zw.Close())
	put("gz/truncated.csv.gz", half(gz.Bytes()))
	put("gz/bad_magic.csv.gz", flip(gz.Bytes(), 0, 1))
	put("gz/bitflip.csv.gz", flip(gz.Bytes(), gz.Len()/3, gz.Len()/2, gz.Len()-6))

	enc, err := zstd.NewWriter(nil)
	must(t, err)
	zs := enc.EncodeAll(good, nil)
	must(t, enc.Close())
	put("zst/truncated.csv.zst", half(zs))
	put("zst/bad_magic.csv.zst", flip(zs, 0, 1, 2, 3))

	bz, err := os.ReadFile("../../catalog/testdata/compressed/plain.csv.bz2")
	must(t, err)
	put("bz2/truncated.csv.bz2", half(bz))
	put("bz2/bad_magic.csv.bz2", flip(bz, 0, 1, 2))

	pq := parquetFile(t)
	put("parquet/truncated.parquet", half(pq))
	put("parquet/bad_magic.parquet", flip(pq, 0, 1, len(pq)-1, len(pq)-2))
	huge := bytes.Clone(pq)
	copy(huge[len(huge)-8:], []byte{0xff, 0xff, 0xff, 0x7f}) // footer length 2 GiB
	put("parquet/huge_footer.parquet", huge)
	put("parquet/bitflip.parquet", flip(pq, len(pq)/4, len(pq)/3))

	var js bytes.Buffer
	js.WriteString("[")
	for i := range 200 {
		if i > 0 {
			js.WriteString(",")
		}
		fmt.Fprintf(&js, `{"id":%d,"name":"n%d","nested":{"v":%d}}`, i, i, i*3)
	}
	js.WriteString("]")
	put("json/truncated.json", half(js.Bytes()))
	put("json/garbled.jsonl", []byte("{\"a\":1}\n{\"a\":2\n\x00\x01garbage\n{\"a\":\n"))
	put("json/deep.json", []byte("["+strings.Repeat(`{"a":[`, 10_000)))
	var jz bytes.Buffer
	zw = gzip.NewWriter(&jz)
	for i := range 500 {
		fmt.Fprintf(zw, "{\"id\":%d,\"v\":\"x%d\"}\n", i, i)
	}
	must(t, zw.Close())
	put("json/truncated.jsonl.gz", half(jz.Bytes()))

	h5, err := os.ReadFile("../../demodata/files/physics/calibration.h5")
	must(t, err)
	put("h5/truncated.h5", half(h5))
	put("h5/bad_magic.h5", flip(h5, 0, 1, 2, 3, 4, 5, 6, 7))
	put("h5/bitflip.h5", flip(h5, len(h5)/3, len(h5)/2, 2*len(h5)/3))

	xl := xlsxFile(t)
	put("xlsx/truncated.xlsx", half(xl))
	put("xlsx/bad_magic.xlsx", flip(xl, 0, 1, 2, 3))
	put("xlsx/bitflip.xlsx", flip(xl, len(xl)/4, len(xl)/3, len(xl)/2))
	put("xlsx/not_a_zip.xlsx", good)

	ar := arrowFile(t)
	put("arrow/truncated.arrow", half(ar))
	put("arrow/bad_magic.arrow", flip(ar, 0, 1, 2, len(ar)-1, len(ar)-2))
	hugeAr := bytes.Clone(ar)
	copy(hugeAr[len(hugeAr)-10:], []byte{0xff, 0xff, 0xff, 0x7f}) // footer length 2 GiB
	put("arrow/huge_footer.arrow", hugeAr)
	put("arrow/bitflip.arrow", flip(ar, len(ar)/4, len(ar)/3, len(ar)/2))
}

// xlsxFile is a small workbook (excelize) of a header row and 500 rows.
func xlsxFile(t *testing.T) []byte {
	x := excelize.NewFile()
	defer x.Close()
	must(t, x.SetSheetRow("Sheet1", "A1", &[]any{"id", "name", "value"}))
	for i := range 500 {
		must(t, x.SetSheetRow("Sheet1", fmt.Sprintf("A%d", i+2), &[]any{i, fmt.Sprintf("name %d", i%37), float64(i) * 1.5}))
	}
	b, err := x.WriteToBuffer()
	must(t, err)
	return b.Bytes()
}

// arrowFile is a small Arrow IPC file of sampleRecord.
func arrowFile(t *testing.T) []byte {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := sampleRecord(mem)
	defer rec.Release()
	return arrowfile.IPC(t, []ipc.Option{ipc.WithAllocator(mem)}, rec)
}

// sampleRecord is 3,000 rows of id (int64) and name (string).
func sampleRecord(mem memory.Allocator) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := range 3000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name %d", i%50))
	}
	return b.NewRecordBatch()
}

// parquetFile is a small Parquet file of two columns (arrow-go's writer).
func parquetFile(t *testing.T) []byte {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := sampleRecord(mem)
	defer rec.Release()
	return arrowfile.Parquet(t, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(1000), parquet.WithAllocator(mem)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()), rec)
}
