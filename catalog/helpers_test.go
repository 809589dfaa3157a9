package catalog_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/catalog"
)

// touch moves a file's mtime so a rewrite with equal size is still seen.
func touch(t testing.TB, p string, d time.Duration) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	mt := st.ModTime().Add(d)
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
}

// countingFormat wraps a Format and counts Open calls per relative path.
type countingFormat struct {
	catalog.Format
	opens atomic.Int64
}

func (f *countingFormat) Open(ctx context.Context, fi catalog.FileInfo) ([]*catalog.Dataset, error) {
	f.opens.Add(1)
	return f.Format.Open(ctx, fi)
}

// fakeFormat claims files with the given extension and returns one dataset
// per file (or an error / a panic).
type fakeFormat struct {
	ext      string
	suffixes []string // if set, one dataset per suffix: BaseID + "/" + suffix
	err      error
	panic    bool
	none     bool // return no datasets at all
}

func (f fakeFormat) Kind() catalog.Kind     { return catalog.Kind("fake" + f.ext) }
func (f fakeFormat) Match(name string) bool { return filepath.Ext(name) == f.ext }
func (f fakeFormat) Open(_ context.Context, fi catalog.FileInfo) ([]*catalog.Dataset, error) {
	if f.panic {
		panic("boom")
	}
	if f.err != nil {
		return nil, f.err
	}
	if f.none {
		return nil, nil
	}
	mk := func(id string) *catalog.Dataset {
		return &catalog.Dataset{ID: id, Kind: f.Kind(), Path: fi.RelPath, AbsPath: fi.AbsPath,
			Schema: arrow.NewSchema(nil, nil), SizeBytes: fi.Size, ModTime: fi.ModTime, Source: emptySource{}}
	}
	if len(f.suffixes) == 0 {
		return []*catalog.Dataset{mk(fi.BaseID)}, nil
	}
	var out []*catalog.Dataset
	for _, s := range f.suffixes {
		out = append(out, mk(fi.BaseID+"/"+s))
	}
	return out, nil
}

type emptySource struct{}

func (emptySource) Scan(context.Context, catalog.ScanOptions) (array.RecordReader, error) {
	return nil, errors.New("the fake test format has no rows to scan")
}
