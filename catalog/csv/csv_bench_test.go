package csv_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/catalog/internal/cattest"
)

// CSV throughput benchmarks. They read a sales-like file shaped like the
// peer benchmark's (../shared/bench): 9 columns, ints, ISO timestamps,
// low-cardinality strings, 2-decimal floats, ~5% nulls, free text with
// quoting, commas and non-ASCII words. The file is generated once
// (benchRows rows, ~95 MB); set QUARRY_BENCH_CSV to a file to measure that
// instead. MB/s is over the file size. Set GOMAXPROCS per run to see the
// scaling (go test -cpu gives erratic numbers here):
//
//	GOMAXPROCS=1 go test ./catalog -run '^$' -bench CSV
//	GOMAXPROCS=2 go test ./catalog -run '^$' -bench CSV

const benchRows = 1_000_000

var (
	benchOnce sync.Once
	benchRoot string
	benchSize int64
)

func benchFile(b *testing.B) (root string, size int64) {
	b.Helper()
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "quarry-csvbench-")
		if err != nil {
			b.Fatal(err)
		}
		p := filepath.Join(dir, "sales.csv")
		if src := os.Getenv("QUARRY_BENCH_CSV"); src != "" {
			if err := os.Link(src, p); err != nil {
				b.Fatalf("QUARRY_BENCH_CSV: %v (must be on the same file system as %s)", err, os.TempDir())
			}
		} else if err := os.WriteFile(p, []byte(salesCSV(benchRows, 42)), 0o644); err != nil {
			b.Fatal(err)
		}
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		benchRoot, benchSize = dir, st.Size()
	})
	if benchRoot == "" {
		b.Fatal("no bench file")
	}
	return benchRoot, benchSize
}

// salesCSV generates n rows shaped like the peer benchmark's sales.csv.
func salesCSV(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 7))
	regions := []string{"north", "south", "east", "west", "central", "northeast", "northwest", "southeast"}
	cats := make([]string, 30)
	for i := range cats {
		cats[i] = fmt.Sprintf("category %d", i)
	}
	cats[3], cats[7] = "home & kitchen", "café supplies"
	words := []string{"good", "late", "excellent", "thanks", "damaged", "box", "leave", "poor", "value", "red", "Երևան", "naïve", "customer", "call", "again"}
	var sb strings.Builder
	sb.WriteString("id,ts,region,product,category,qty,price,discount,note\n")
	for i := range n {
		p := int(r.ExpFloat64()*300) % 2000
		fmt.Fprintf(&sb, "%d,%04d-%02d-%02dT%02d:%02d:%02d,%s,Product %d,%s,%d,%d.%02d,",
			3_000_000_000+i, 2023+r.IntN(2), 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60),
			regions[int(r.ExpFloat64()*2)%8], p, cats[p%30], 1+r.IntN(20), 2+r.IntN(200), r.IntN(100))
		if r.IntN(20) != 0 {
			fmt.Fprintf(&sb, "0.%02d", r.IntN(31))
		}
		sb.WriteByte(',')
		nw := r.IntN(7)
		var note []string
		for range nw {
			note = append(note, words[r.IntN(len(words))])
		}
		s := strings.Join(note, " ")
		switch k := r.IntN(100); {
		case k < 5 && nw > 1:
			sb.WriteString(`"` + strings.Replace(s, " ", ", ", 1) + `"`)
		case k < 6:
			sb.WriteString(`"say ""` + s + `"""`)
		default:
			sb.WriteString(s)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

func BenchmarkCSVInfer(b *testing.B) {
	root, size := benchFile(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		c, err := catalog.New(context.Background(), catalog.Options{Formats: []catalog.Format{csv.NewFormat()}, Root: root, Logger: cattest.Quiet})
		if err != nil || len(c.Datasets()) != 1 {
			b.Fatal(err, c.Diagnostics())
		}
	}
}

func benchScan(b *testing.B, cols []string) {
	root, size := benchFile(b)
	c, err := catalog.New(context.Background(), catalog.Options{Formats: []catalog.Format{csv.NewFormat()}, Root: root, Logger: cattest.Quiet})
	if err != nil || len(c.Datasets()) != 1 {
		b.Fatal(err)
	}
	ds := c.Datasets()[0]
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Columns: cols, Alloc: memory.DefaultAllocator})
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for rr.Next() {
			n += rr.RecordBatch().NumRows()
		}
		if err := rr.Err(); err != nil {
			b.Fatal(err)
		}
		rr.Release()
		if n != ds.RowCount {
			b.Fatalf("%d rows, want %d", n, ds.RowCount)
		}
	}
}

func BenchmarkCSVScanAll(b *testing.B)     { benchScan(b, nil) }
func BenchmarkCSVScanString(b *testing.B)  { benchScan(b, []string{"region"}) }
func BenchmarkCSVScanNumeric(b *testing.B) { benchScan(b, []string{"qty", "price"}) }

// discardKeeper takes the kept columns and drops them.
type discardKeeper struct{}

func (discardKeeper) Reserve(catalog.FileInfo, int64) (memory.Allocator, bool) {
	return memory.DefaultAllocator, true
}

func (discardKeeper) Keep(_ *catalog.Dataset, cols [][]arrow.Array) {
	for _, c := range cols {
		for _, a := range c {
			a.Release()
		}
	}
}

// BenchmarkCSVOpenKeep is opening with a ColumnKeeper: type inference and
// parsing every column (dictionary-encoding low-cardinality strings) in
// one pass, as quarry serve does with its column cache.
func BenchmarkCSVOpenKeep(b *testing.B) {
	root, size := benchFile(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		c, err := catalog.New(context.Background(), catalog.Options{Root: root, Logger: cattest.Quiet,
			Formats: []catalog.Format{csv.NewFormatWith(csv.Options{Keeper: discardKeeper{}})}})
		if err != nil || len(c.Datasets()) != 1 {
			b.Fatal(err, c.Diagnostics())
		}
	}
}
