package catalog_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
)

// FuzzArrowIPC checks that no file makes the Arrow IPC format panic or
// allocate from lengths it did not check: opening either catalogs the
// file or diagnoses it, and a scan of a cataloged file reads the
// cataloged row count in the cataloged schema or fails with an error,
// leaking nothing. The corpus (testdata/fuzz/FuzzArrowIPC) holds files
// written by arrow-go's ipc writer (files and streams: plain, zstd, lz4,
// a dictionary column) and broken ones: truncated files and streams,
// Feather v1, a
// footer claiming more bytes than the file, vector lengths and block
// sizes of 2^31 in the footer and in batch metadata.
func FuzzArrowIPC(f *testing.F) {
	mem := memory.NewGoAllocator()
	rec := sampleRecord(f, mem)
	small := rec.NewSlice(0, 2)
	f.Add(arrowBytes(f, nil, small))
	f.Add(arrowBytes(f, []ipc.Option{ipc.WithZstd()}, small))
	f.Add(arrowStreamBytes(f, nil, small))
	f.Add(arrowStreamBytes(f, []ipc.Option{ipc.WithLZ4()}, small))
	small.Release()
	rec.Release()
	drec := dictRecord(f, mem, 5)
	f.Add(arrowBytes(f, nil, drec))
	f.Add(arrowStreamBytes(f, nil, drec))
	drec.Release()
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzOpenAndScan(t, "f.arrow", data, true, catalog.NewArrowFormat(catalog.Limits{MaxMetadataBytes: 1 << 20}))
	})
}
