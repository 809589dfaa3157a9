package colcache

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
)

// BenchmarkCacheScan reads every cached column of a 1M-row dataset through
// the cache (zero-copy slices of the kept arrays): the floor of a warm
// query's scan. MB/s is over the cached bytes.
func BenchmarkCacheScan(b *testing.B) {
	root := b.TempDir()
	var sb strings.Builder
	sb.WriteString("id,region,price,note\n")
	for i := range 1_000_000 {
		fmt.Fprintf(&sb, "%d,%s,%d.%02d,note %d\n", 3_000_000_000+i, []string{"north", "south", "east", "west"}[i%4], i%100, i%97, i%5000)
	}
	if err := os.WriteFile(filepath.Join(root, "s.csv"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	c := New(Options{Budget: 1 << 30})
	cat, err := catalog.New(context.Background(), catalog.Options{Root: root, Logger: slog.New(slog.DiscardHandler),
		Formats: []catalog.Format{csv.NewFormatWith(csv.Options{Keeper: c})}})
	if err != nil {
		b.Fatal(err)
	}
	ds, err := cat.Lookup("s")
	if err != nil {
		b.Fatal(err)
	}
	src := c.Wrap(ds)
	if !src.(*Source).Cached(nil) {
		b.Fatal("not cached")
	}
	b.SetBytes(c.Stats().Used)
	b.ReportAllocs()
	for b.Loop() {
		rr, err := src.Scan(context.Background(), catalog.ScanOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for rr.Next() {
			n += rr.RecordBatch().NumRows()
		}
		rr.Release()
		if n != ds.RowCount {
			b.Fatalf("%d rows", n)
		}
	}
	c.Purge()
}
