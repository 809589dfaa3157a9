package catalog_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// compressWith compresses data with a codec named by its suffix (".gz",
// ".zst"); ".bz2" files come from testdata (bzip2(1) wrote them: the
// standard library has no bzip2 writer).
func compressWith(t *testing.T, suffix string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch suffix {
	case ".gz":
		zw := gzip.NewWriter(&buf)
		zw.Write(data)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	case ".zst":
		zw, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		zw.Write(data)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("no writer for %s", suffix)
	}
	return buf.Bytes()
}

// TestCompressedCSV: .csv.gz, .csv.zst, .csv.zstd and .csv.bz2 files read
// exactly as the plain file, with the codec in the dataset's attributes.
func TestCompressedCSV(t *testing.T) {
	plain, err := os.ReadFile("testdata/compressed/plain.csv")
	if err != nil {
		t.Fatal(err)
	}
	bz, err := os.ReadFile("testdata/compressed/plain.csv.bz2")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	cattest.WriteRaw(t, root, "plain.csv", string(plain))
	cattest.WriteRaw(t, root, "g.csv.gz", string(compressWith(t, ".gz", plain)))
	cattest.WriteRaw(t, root, "z.csv.zst", string(compressWith(t, ".zst", plain)))
	cattest.WriteRaw(t, root, "zz.CSV.ZSTD", string(compressWith(t, ".zst", plain)))
	cattest.WriteRaw(t, root, "b.csv.bz2", string(bz))
	c := cattest.NewCatalog(t, root, csv.NewFormat())
	ref := cattest.Lookup(t, c, "plain")
	_, want := cattest.ScanAll(t, ref, catalog.ScanOptions{})
	for id, codec := range map[string]string{"g": "gzip", "z": "zstd", "zz": "zstd", "b": "bzip2"} {
		ds := cattest.Lookup(t, c, id)
		if ds.Attributes["compression"] != codec || ds.RowCount != ref.RowCount || !ds.Schema.Equal(ref.Schema) {
			t.Errorf("%s: attributes %v rows %d schema %v", id, ds.Attributes, ds.RowCount, ds.Schema)
		}
		if _, got := cattest.ScanAll(t, ds, catalog.ScanOptions{}); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", id, got, want)
		}
	}
}

// TestCompressedLimits: every codec is bounded by MaxDecompressedBytes, and
// a file that is not what its suffix says is a diagnostic.
func TestCompressedLimits(t *testing.T) {
	bomb, err := os.ReadFile("testdata/compressed/bomb.csv.bz2")
	if err != nil {
		t.Fatal(err)
	}
	big := append([]byte("n\n"), bytes.Repeat([]byte("0\n"), 2<<20)...)
	root := t.TempDir()
	cattest.WriteRaw(t, root, "bz.csv.bz2", string(bomb))
	cattest.WriteRaw(t, root, "zs.csv.zst", string(compressWith(t, ".zst", big)))
	cattest.WriteRaw(t, root, "gz.csv.gz", string(compressWith(t, ".gz", big)))
	cattest.WriteRaw(t, root, "notzstd.csv.zst", "n\n1\n")
	cattest.WriteRaw(t, root, "notbz.csv.bz2", "n\n1\n")
	c := cattest.NewCatalog(t, root, csv.NewFormatWith(csv.Options{Limits: catalog.Limits{MaxDecompressedBytes: 1 << 20}}))
	if len(c.Datasets()) != 0 {
		t.Fatalf("datasets %v", cattest.IDs(c))
	}
	reasons := map[string]string{}
	for _, d := range c.Diagnostics() {
		reasons[d.Path] = d.Reason
	}
	for _, p := range []string{"bz.csv.bz2", "zs.csv.zst", "gz.csv.gz"} {
		if !strings.Contains(reasons[p], "decompresses to more than 1 MiB") {
			t.Errorf("%s: %q", p, reasons[p])
		}
	}
	for _, p := range []string{"notzstd.csv.zst", "notbz.csv.bz2"} {
		if reasons[p] == "" {
			t.Errorf("%s: no diagnostic (%v)", p, reasons)
		}
	}
}
