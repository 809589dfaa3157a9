package e2e

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/quarrydb/quarry/internal/testutil/arrowfile"
)

// TestArrowStreamInput: an Arrow IPC stream written by arrow-go's stream
// writer (two record batches, zstd-compressed bodies, no footer) is a
// dataset queried over MCP with every value compared (checkFormatDataset).
func TestArrowStreamInput(t *testing.T) {
	dir, _ := writeFormatRecord(t, "sales.arrows", func(_, a, b arrow.RecordBatch) []byte {
		return arrowfile.IPCStream(t, []ipc.Option{ipc.WithZstd()}, a, b)
	})
	checkFormatDataset(t, dir, "sales", "arrow")
}
