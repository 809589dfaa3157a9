package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// FuzzCSV checks that opening any file never panics and that whatever the
// inference pass accepts, the Arrow scan reads back: same schema, same row
// count, no error, nothing leaked.
func FuzzCSV(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,2\n",
		"x;y\n1,5;true\n",
		"t\n2024-01-02T03:04:05Z\n2024-01-02 03:04:05.5-01:30\n\"\"\n",
		"d\tb\n2024-02-29\tFALSE\n\tTrue\n",
		"\ufeffid,note\n1,\"a, b\"\n2,\"say \"\"hi\"\"\"\n3,\"line1\nline2\"\r\n",
		"name,,name\n1e3,NaN,-0\n",
		"a|b\n|\n",
		"a\n\n\n1\n",
		"zip,n,x\n00501,-0,1e3\n10001,12345678901234567,1.5\n",
		"d,t,m\n01/02/2015,2015/01/01 01:00:00,Jan 1 2000\n13/01/2015,2015/1/1 1:00,\"February 29, 2000\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzOpenAndScan(t, "f.csv", data, false, csv.NewFormat())
	})
}

// fuzzOpenAndScan writes data as root/name, catalogs it with formats
// and checks that the file is either a dataset or a
// diagnostic, and that a scan of the dataset reads its schema and row
// count leaking nothing. With scanMayFail, a scan may end in an error
// instead (binary formats catalog from metadata and meet corrupt pages
// only when reading).
func fuzzOpenAndScan(t *testing.T, name string, data []byte, scanMayFail bool, formats ...catalog.Format) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	checkOpenAndScan(t, root, name, scanMayFail, formats...)
}

// checkOpenAndScan is fuzzOpenAndScan for a root already written.
func checkOpenAndScan(t *testing.T, root, name string, scanMayFail bool, formats ...catalog.Format) {
	c, err := catalog.New(context.Background(), catalog.Options{Root: root, Logger: cattest.Quiet, Workers: 1, Formats: formats})
	if err != nil {
		t.Fatal(err)
	}
	all := c.Datasets()
	if len(all) == 0 {
		diagnosed := false
		for _, d := range c.Diagnostics() {
			diagnosed = diagnosed || d.Path == name
		}
		if !diagnosed {
			t.Fatalf("file neither opened nor diagnosed: %v", c.Diagnostics())
		}
		return
	}
	ds := all[0]
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Alloc: mem, BatchSize: 3})
	if err != nil {
		if scanMayFail {
			return
		}
		t.Fatal(err)
	}
	defer rr.Release()
	var n int64
	for rr.Next() {
		rec := rr.RecordBatch()
		if !rec.Schema().Equal(ds.Schema) {
			t.Fatalf("schema %v, want %v", rec.Schema(), ds.Schema)
		}
		n += rec.NumRows()
	}
	if err := rr.Err(); err != nil {
		if scanMayFail {
			return
		}
		t.Fatalf("scan of an accepted file failed: %v\nschema %v", err, ds.Schema)
	}
	if n != ds.RowCount {
		t.Fatalf("scanned %d rows, cataloged %d", n, ds.RowCount)
	}
}
