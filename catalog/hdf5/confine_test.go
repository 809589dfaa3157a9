//go:build unix && cgo && !nohdf5

package hdf5

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/h5/h5write"
	"github.com/quarrydb/quarry/internal/qerr"
)

// writeColumn writes an HDF5 file with one float64 dataset /data.
func writeColumn(t *testing.T, path string, vals []float64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	b := &builder{}
	defer b.closeAll()
	f := b.id(h5write.CreateFile(path))
	f64 := b.t(h5.NewFloat(8))
	d := b.id(h5write.CreateDataset(f, "/data", f64, []int64{int64(len(vals))}, nil))
	b.check(h5write.WriteValues(d, f64, vals))
	if b.err != nil {
		t.Fatal(b.err)
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil || qerr.Code(err) != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

// TestSwappedFileRefused: an HDF5 data file replaced after the scan by a
// symlink to an HDF5 file outside the root (or a symlink renamed over it,
// or a folder above it swapped for a symlink) is never read: not by the
// Source handed out before (the file cache re-verifies), not by Lookup,
// not by browsing or slicing the path.
func TestSwappedFileRefused(t *testing.T) {
	swaps := []struct {
		name string
		do   func(t *testing.T, p, target string)
	}{
		{"replaced by a symlink", func(t *testing.T, p, target string) {
			mustDo(t, os.Remove(p))
			mustDo(t, os.Symlink(target, p))
		}},
		{"symlink renamed over it", func(t *testing.T, p, target string) {
			mustDo(t, os.Symlink(target, p+".tmp"))
			mustDo(t, os.Rename(p+".tmp", p))
		}},
		{"folder above replaced by a symlink", func(t *testing.T, p, target string) {
			mustDo(t, os.Rename(filepath.Dir(p), filepath.Dir(p)+".old"))
			mustDo(t, os.Symlink(filepath.Dir(target), filepath.Dir(p)))
		}},
	}
	for _, sw := range swaps {
		t.Run(sw.name, func(t *testing.T) {
			root, out := t.TempDir(), t.TempDir()
			p := filepath.Join(root, "d", "x.h5")
			writeColumn(t, p, []float64{1, 2, 3})
			secret := filepath.Join(out, "x.h5")
			writeColumn(t, secret, []float64{100, 101, 102})
			f := NewFormat(WithRoot(root))
			defer f.Close()
			c, err := catalog.New(context.Background(), catalog.Options{Root: root, Formats: []catalog.Format{f}, Logger: slog.New(slog.DiscardHandler)})
			mustDo(t, err)
			ds, err := c.Lookup("d/x")
			mustDo(t, err)
			read := func() (string, error) {
				rr, err := ds.Source.Scan(context.Background(), catalog.ScanOptions{Alloc: memory.NewGoAllocator()})
				if err != nil {
					return "", err
				}
				defer rr.Release()
				var b strings.Builder
				for rr.Next() {
					fmt.Fprint(&b, rr.RecordBatch().Column(0))
				}
				return b.String(), rr.Err()
			}
			if got, err := read(); err != nil || got != "[1 2 3]" {
				t.Fatalf("before the swap: %q, %v", got, err)
			}

			sw.do(t, p, secret)

			got, err := read()
			if strings.Contains(got, "100") {
				t.Fatalf("read the outside file: %s", got)
			}
			wantCode(t, err, qerr.CodePathOutsideRoot)
			_, err = c.Lookup("d/x")
			wantCode(t, err, qerr.CodePathOutsideRoot)
			if strings.Contains(err.Error(), out) {
				t.Errorf("the error names the outside path: %v", err)
			}
			// The h5:// resource paths, given the path the scan resolved.
			_, err = f.Browse(context.Background(), ds.AbsPath, "/")
			wantCode(t, err, qerr.CodePathOutsideRoot)
			_, err = f.ReadSlice(context.Background(), ds.AbsPath, "/data", ":", memory.NewGoAllocator())
			wantCode(t, err, qerr.CodePathOutsideRoot)
		})
	}
}
