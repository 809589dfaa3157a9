package e2e

import (
	"bytes"
	le "encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/testutil/arrowfile"
)

// TestArrowInput: an Arrow IPC file written by arrow-go's ipc writer (two
// record batches, zstd-compressed bodies) is a dataset queried over MCP
// with every value compared, and hostile Arrow files next to it (a footer
// claiming 2 GiB, a schema whose field vector claims 2^31 entries, a
// truncated file) are diagnostics while the server keeps answering.
// DuckDB reads Arrow IPC only through an extension it downloads, so
// the values are compared with the rows written (formatRow), not DuckDB.
func TestArrowInput(t *testing.T) {
	dir, good := writeFormatRecord(t, "sales.arrow", func(_, a, b arrow.RecordBatch) []byte {
		return arrowfile.IPC(t, []ipc.Option{ipc.WithZstd()}, a, b)
	})
	checkFormatDataset(t, dir, "sales", "arrow")

	// Hostile files: the catalog diagnoses them, the good file still reads.
	claims := bytes.Clone(good)
	le.LittleEndian.PutUint32(claims[len(claims)-10:], 0x7FFFFFF0)
	fields := bytes.Clone(good)
	// The footer's schema field vector: the first word after the footer
	// start that holds the field count (7) is set to 2^31-8.
	footerLen := int(le.LittleEndian.Uint32(good[len(good)-10:]))
	footer := len(good) - 10 - footerLen
	patched := false
	for p := footer; p+4 <= len(good)-10; p += 4 {
		if le.LittleEndian.Uint32(good[p:]) == 7 {
			le.LittleEndian.PutUint32(fields[p:], 0x7FFFFFF8)
			patched = true
			break
		}
	}
	if !patched {
		t.Fatal("no field count in the footer")
	}
	for name, data := range map[string][]byte{"claims.arrow": claims, "fields.feather": fields, "cut.arrow": good[:len(good)-40]} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := startStdio(t, "--data", dir, "--artifact-dir", t.TempDir())
	var cat scanCatalog
	call(t, c, "get_catalog", map[string]any{}, &cat)
	want := map[string]string{"claims.arrow": "footer claims", "fields.feather": "flatbuffer", "cut.arrow": "missing at the end"}
	for _, d := range cat.Diagnostics {
		if w, ok := want[d.Path]; ok {
			if !strings.Contains(d.Reason, w) {
				t.Errorf("diagnostic of %s: %q, want it to mention %q", d.Path, d.Reason, w)
			}
			delete(want, d.Path)
		}
	}
	if len(want) > 0 || len(cat.Datasets) != 1 {
		t.Fatalf("datasets %+v; no diagnostics for %v; got %+v", cat.Datasets, want, cat.Diagnostics)
	}
	var q queryResult
	call(t, c, "query_data", map[string]any{"dataset": "sales", "aggs": []map[string]any{{"col": "*", "fn": "count"}}}, &q)
	if len(q.Data) != 1 || q.Data[0]["count_all"] != float64(formatRows) {
		t.Fatalf("count after the hostile files: %+v", q.Data)
	}
}

// writeFormatRecord writes formatRecord (on a checked allocator that must
// end empty) as the file name under a new directory, write making its
// bytes from the record and its two slices (rows 0-63 and the rest); it
// returns the directory and the bytes.
func writeFormatRecord(t *testing.T, name string, write func(rec, a, b arrow.RecordBatch) []byte) (string, []byte) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := formatRecord(t, mem)
	defer rec.Release()
	a, b := rec.NewSlice(0, 64), rec.NewSlice(64, formatRows)
	defer a.Release()
	defer b.Release()
	data := write(rec, a, b)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, data
}
