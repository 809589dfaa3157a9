package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// replaceFile atomically replaces path with content (temp file + rename).
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestReplacedFileRetried: a data file atomically replaced between the
// dataset's lookup and the scan is looked up again and the query answers
// from the new file; replaced again on the retry, the query fails as
// replaced (one retry only).
func TestReplacedFileRetried(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "t.csv")
	if err := os.WriteFile(path, []byte("x\n1\n2\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cache=%v", cached), func(t *testing.T) {
			var cache *colcache.Cache
			if cached {
				cache = colcache.New(colcache.Options{Budget: 16 << 20})
				defer cache.Purge()
			}
			s, alloc := newTestService(t, root, 0, func(c *Config) { c.Cache = cache })
			ctx := context.Background()
			spec := planner.Spec{Aggs: []planner.AggSpec{{Col: "*", Fn: planner.AggCount}, {Col: "x", Fn: planner.AggSum}}}
			if _, err := s.Query(ctx, confirmed("t", spec)); err != nil { // cataloged (and cached)
				t.Fatal(err)
			}
			gen := 0
			replace := func(every bool) func(*catalog.Dataset) {
				first := true
				return func(*catalog.Dataset) {
					if first || every {
						gen++
						// Each version is longer than the last: the catalog sees a new size.
						replaceFile(t, path, "x\n10\n20\n30\n40\n"+strings.Repeat("0\n", gen))
					}
					first = false
				}
			}
			testHookLookedUp = replace(false)
			defer func() { testHookLookedUp = nil }()
			res, err := s.Query(ctx, confirmed("t", spec))
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf(`[{"count_all":%d,"sum_x":100}]`, 4+gen)
			if got := string(res.Result.Data); got != want {
				t.Fatalf("query after replacement: %s, want %s", got, want)
			}
			testHookLookedUp = replace(false)
			est, err := s.Estimate(ctx, EstimateRequest{Dataset: "t", Spec: spec})
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf(`[{"count_all":%d,"sum_x":100}]`, 4+gen); string(est.Preview) != want {
				t.Fatalf("estimate after replacement: %s, want %s", est.Preview, want)
			}
			testHookLookedUp = replace(true)
			_, err = s.Query(ctx, confirmed("t", spec))
			if qe := qerr.As(err); qe == nil || qe.Code != qerr.CodeDatasetNotFound || !strings.Contains(qe.Message, "replaced") {
				t.Fatalf("replaced on every lookup: %v, want dataset_not_found (replaced)", err)
			}
			if !errors.Is(err, qerr.ErrNotFound) {
				t.Fatalf("error %v is not a not-found", err)
			}
			waitFreed(t, alloc)
		})
	}
}
