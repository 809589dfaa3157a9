package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/service"
)

// TestBoundFromColumnCache: the wired server skips the confirmation
// preflight of a grouped query over a big CSV file when the column cache
// (filled when the file is cataloged) holds the key column's dictionary
// (3 values): it runs once. Without the cache the plan alone proves
// nothing under the threshold (150,000 possible groups), so the query is
// sized from a sample first and then run. Scans are counted by the
// progress hook's start report.
func TestBoundFromColumnCache(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("i,g\n")
	for i := range 150_000 {
		fmt.Fprintf(&b, "%d,%s\n", i, []string{"north", "south", "west"}[i%3])
	}
	if err := os.WriteFile(filepath.Join(root, "big.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		cache int64
		scans int64
	}{{"cached", 0, 1}, {"no cache", -1, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := app.Open(context.Background(), app.Config{Data: root, ArtifactDir: t.TempDir(), ConfirmRows: 1000,
				CacheMemory: tc.cache, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			var scans atomic.Int64
			ctx := service.WithProgress(context.Background(), func(done, _ int64) {
				if done == 0 {
					scans.Add(1)
				}
			})
			res, err := a.Service.SQL(ctx, service.SQLRequest{SQL: `SELECT g, count(*) AS n FROM big GROUP BY g`})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != "" || res.Result == nil || res.Result.TotalRows != 3 {
				t.Fatalf("result: %+v", res)
			}
			if n := scans.Load(); n != tc.scans {
				t.Fatalf("%d scans, want %d", n, tc.scans)
			}
		})
	}
}
