package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestArrowStreamInput: an Arrow IPC stream written by arrow-go's stream
// writer (two record batches, zstd-compressed bodies, no footer) is a
// dataset queried over MCP with every value compared (checkFormatDataset).
func TestArrowStreamInput(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := formatRecord(t, mem)
	defer rec.Release()
	a, b := rec.NewSlice(0, 64), rec.NewSlice(64, formatRows)
	defer a.Release()
	defer b.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()), ipc.WithZstd())
	if err := w.Write(a); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sales.arrows"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	checkFormatDataset(t, dir, "sales", "arrow")
}
