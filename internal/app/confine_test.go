//go:build unix

package app_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/h5/h5write"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/service"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p, content string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	data := []byte(content)
	if strings.HasSuffix(p, ".gz") {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, err := zw.Write(data)
		must(t, err)
		must(t, zw.Close())
		data = b.Bytes()
	}
	must(t, os.WriteFile(p, data, 0o644))
}

// writeH5 writes an HDF5 file whose one table has the column "name"
// (float64 values).
func writeH5(t *testing.T, p string, vals []float64) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	f, err := h5write.CreateFile(p)
	must(t, err)
	defer h5.Close(f)
	typ := h5.NewFloat(8)
	defer h5.Close(typ)
	d, err := h5write.CreateDataset(f, "/name", typ, []int64{int64(len(vals))}, nil)
	must(t, err)
	defer h5.Close(d)
	must(t, h5write.WriteValues(d, typ, vals))
}

// The datasets (each with a column "name") and what the file outside the
// root holds instead: following a swapped link would return the marker.
var confineFiles = []struct {
	rel, marker string
	write       func(t *testing.T, p string, secret bool)
}{
	{"small.csv", "SECRET", func(t *testing.T, p string, secret bool) {
		write(t, p, map[bool]string{false: "name,n\nalice,1\nbob,2\n", true: "name,n\nSECRET,42\n"}[secret])
	}},
	{"big.csv", "SECRET", func(t *testing.T, p string, secret bool) { // memory-mapped (>= 1 MiB)
		if secret {
			write(t, p, "name,n\nSECRET,42\n")
			return
		}
		write(t, p, "name,n\n"+strings.Repeat("alice,1\n", 150_000))
	}},
	{"g.csv.gz", "SECRET", func(t *testing.T, p string, secret bool) {
		write(t, p, map[bool]string{false: "name,n\nalice,1\n", true: "name,n\nSECRET,42\n"}[secret])
	}},
	{"x.h5", "4242", func(t *testing.T, p string, secret bool) {
		if secret {
			writeH5(t, p, []float64{4242, 4243})
			return
		}
		writeH5(t, p, []float64{1, 2, 3})
	}},
}

// TestSwappedDataFileRefused: through the fully wired service (column
// cache on, HDF5 format), a dataset file replaced after the catalog scan by
// a symlink to a file outside the data root, or with a symlink renamed
// over it, is refused by query_data and distinct_values with
// path_outside_root, and nothing of the outside file comes back.
func TestSwappedDataFileRefused(t *testing.T) {
	swaps := map[string]func(t *testing.T, p, target string){
		"replaced by a symlink": func(t *testing.T, p, target string) {
			must(t, os.Remove(p))
			must(t, os.Symlink(target, p))
		},
		"symlink renamed over it": func(t *testing.T, p, target string) {
			must(t, os.Symlink(target, p+".swap"))
			must(t, os.Rename(p+".swap", p))
		},
	}
	for _, f := range confineFiles {
		for swapName, swap := range swaps {
			for _, first := range []string{"query_data", "distinct_values"} {
				t.Run(f.rel+"/"+swapName+"/"+first, func(t *testing.T) {
					root, out := t.TempDir(), t.TempDir()
					p := filepath.Join(root, f.rel)
					f.write(t, p, false)
					secret := filepath.Join(out, f.rel)
					f.write(t, secret, true)
					a, err := app.Open(context.Background(), app.Config{Data: root, ArtifactDir: t.TempDir(),
						CacheMemory: 64 << 20, Logger: slog.New(slog.DiscardHandler)})
					must(t, err)
					defer a.Close()
					ds := a.Catalog.Datasets()
					if len(ds) != 1 {
						t.Fatalf("datasets %v, diagnostics %v", ds, a.Catalog.Diagnostics())
					}
					id := ds[0].ID
					ctx := context.Background()
					calls := map[string]func() (any, error){
						"query_data": func() (any, error) {
							return a.Service.Query(ctx, service.QueryRequest{EstimateRequest: service.EstimateRequest{Dataset: id}, DeliveryOptions: service.DeliveryOptions{Confirm: true}})
						},
						"distinct_values": func() (any, error) {
							return a.Service.DistinctValues(ctx, service.DistinctRequest{Dataset: id, Column: "name"})
						},
					}
					for name, call := range calls { // warm: cache, file handles
						if _, err := call(); err != nil {
							t.Fatalf("%s before the swap: %v", name, err)
						}
					}

					swap(t, p, secret)

					check := func(name string, wantCodes ...string) {
						res, err := calls[name]()
						b, _ := json.Marshal(res)
						if bytes.Contains(b, []byte(f.marker)) || err != nil && strings.Contains(err.Error(), f.marker) {
							t.Fatalf("%s returned the outside file's content: %s %v", name, b, err)
						}
						if err == nil {
							t.Fatalf("%s after the swap succeeded: %s", name, b)
						}
						if code := qerr.Code(err); !strings.Contains(strings.Join(wantCodes, " "), code) {
							t.Fatalf("%s: error %v, want code %v", name, err, wantCodes)
						}
					}
					check(first, qerr.CodePathOutsideRoot)
					for name := range calls { // later calls: still refused
						check(name, qerr.CodePathOutsideRoot, qerr.CodeDatasetNotFound)
					}
					found := false
					for _, d := range a.Catalog.Diagnostics() {
						found = found || d.Path == f.rel
					}
					if !found {
						t.Errorf("no diagnostic for %s: %v", f.rel, a.Catalog.Diagnostics())
					}
				})
			}
		}
	}
}

// TestInRootSymlinkServed: a symlink inside the root to a file inside the
// root is still served.
func TestInRootSymlinkServed(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "data", "real.csv"), "name,n\nalice,1\n")
	must(t, os.Symlink(filepath.Join("data", "real.csv"), filepath.Join(root, "link.csv")))
	a, err := app.Open(context.Background(), app.Config{Data: root, ArtifactDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	defer a.Close()
	res, err := a.Service.Query(context.Background(), service.QueryRequest{EstimateRequest: service.EstimateRequest{Dataset: "link"}, DeliveryOptions: service.DeliveryOptions{Confirm: true}})
	must(t, err)
	if b, _ := json.Marshal(res); !bytes.Contains(b, []byte("alice")) {
		t.Fatalf("link: %s", b)
	}
}
