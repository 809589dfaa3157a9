package csv

import (
	"bytes"
	"context"
	"github.com/quarrydb/quarry/internal/testutil/cpuclock"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/internal/chunk"
)

// loadModes are the ways a plain file's chunks can come in.
var loadModes = []struct {
	name     string
	mapped   bool
	prefault int
}{
	{"read", false, chunk.PrefaultNone},
	{"mmap-populate", true, chunk.PrefaultPopulate},
	{"mmap-willneed", true, chunk.PrefaultWillNeed},
	{"mmap-fault", true, chunk.PrefaultNone},
}

// benchLoadFile is QUARRY_BENCH_CSV or a generated file.
func benchLoadFile(b *testing.B) (string, int64) {
	path := os.Getenv("QUARRY_BENCH_CSV")
	if path == "" {
		path = filepath.Join(b.TempDir(), "edge.csv")
		text := edgeCSV(rand.New(rand.NewPCG(1, 2)), 400_000, 0, false, true)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size()
}

// BenchmarkCSVChunks is the reader goroutine's share of a load alone:
// cutting the file into chunks (and releasing them) in each mode, with
// the CPU time per pass.
func BenchmarkCSVChunks(b *testing.B) {
	path, size := benchLoadFile(b)
	for _, m := range loadModes {
		b.Run(m.name, func(b *testing.B) {
			withMapping(b, m.mapped, 1<<20, m.prefault)
			b.SetBytes(size)
			t0 := cpuclock.Process()
			for b.Loop() {
				cr, err := openChunks(fileAt(path), false, keepChunkBytes, catalog.Limits{})
				if err != nil {
					b.Fatal(err)
				}
				for {
					ch, err := cr.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					cr.Release(ch)
				}
				cr.Close()
			}
			b.ReportMetric(float64(cpuclock.Process()-t0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// BenchmarkCSVLoadMapped is the column cache's load pass (inference keeping
// every column) over a file read with read() and over a memory map with
// each prefault mode. Besides the wall time it reports the CPU time and
// the rise of the process's peak RSS over its RSS before the loads (Linux:
// the peak is reset through /proc/self/clear_refs): what a load keeps plus
// its transient plus garbage the GC had not returned yet, so compare it
// at -benchtime 1x. QUARRY_BENCH_CSV names a file to load instead of the
// generated one.
func BenchmarkCSVLoadMapped(b *testing.B) {
	path, size := benchLoadFile(b)
	for _, m := range loadModes {
		b.Run(m.name, func(b *testing.B) {
			withMapping(b, m.mapped, 1<<20, m.prefault)
			load := func() {
				inf, err := inferFast(context.Background(), fileAt(path), false, ',', size, memory.DefaultAllocator, catalog.Limits{})
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range inf.kept {
					for _, a := range c {
						a.Release()
					}
				}
			}
			b.SetBytes(size)
			debug.FreeOSMemory()
			base := procStatusKB("VmRSS")
			resetPeakRSS()
			t0 := cpuclock.Process()
			for b.Loop() {
				load()
			}
			b.ReportMetric(float64(cpuclock.Process()-t0)/float64(b.N)/1e6, "cpu-ms/op")
			if peak := procStatusKB("VmHWM"); peak > 0 && base > 0 {
				b.ReportMetric(float64(peak-base)/1024, "peak-rise-MB")
			}
		})
	}
}

// procStatusKB is a "kB" field of /proc/self/status, 0 where unknown.
func procStatusKB(field string) int64 {
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(s) {
		if v, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			n, _ := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			return n
		}
	}
	return 0
}

// resetPeakRSS sets the peak RSS (VmHWM) to the current RSS, where Linux
// allows it.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
