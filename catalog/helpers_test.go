package catalog_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
)

// quiet is a logger that drops everything.
var quiet = slog.New(slog.DiscardHandler)

// writeFile writes content to root/rel (slash separated), creating
// directories; names ending in .gz are gzipped.
func writeFile(t testing.TB, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	data := []byte(content)
	if strings.EqualFold(filepath.Ext(p), ".gz") {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		data = buf.Bytes()
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeRaw writes content to root/rel as is.
func writeRaw(t testing.TB, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

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

func newCatalog(t testing.TB, root string, formats ...catalog.Format) *catalog.Catalog {
	t.Helper()
	c, err := catalog.New(context.Background(), catalog.Options{Root: root, Formats: formats, Logger: quiet})
	if err != nil {
		t.Fatalf("New(%s): %v", root, err)
	}
	return c
}

func ids(c *catalog.Catalog) []string {
	var out []string
	for _, d := range c.Datasets() {
		out = append(out, d.ID)
	}
	return out
}

func lookup(t testing.TB, c *catalog.Catalog, id string) *catalog.Dataset {
	t.Helper()
	ds, err := c.Lookup(id)
	if err != nil {
		t.Fatalf("Lookup(%q): %v (datasets %v, diagnostics %v)", id, err, ids(c), c.Diagnostics())
	}
	return ds
}

func typeNames(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Type.String())
	}
	return out
}

func fieldNames(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name)
	}
	return out
}

// scanAll reads a dataset with a checked allocator and returns every column
// as Go values (nil for null), asserting that nothing leaks.
func scanAll(t testing.TB, ds *catalog.Dataset, opts catalog.ScanOptions) (*arrow.Schema, [][]any) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	opts.Alloc = mem
	rr, err := ds.Source.Scan(context.Background(), opts)
	if err != nil {
		t.Fatalf("Scan(%s): %v", ds.ID, err)
	}
	defer rr.Release()
	schema := rr.Schema()
	cols := make([][]any, schema.NumFields())
	for rr.Next() {
		rec := rr.RecordBatch()
		if !rec.Schema().Equal(schema) {
			t.Fatalf("batch schema %v != reader schema %v", rec.Schema(), schema)
		}
		for i := range cols {
			cols[i] = append(cols[i], values(rec.Column(i))...)
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatalf("Scan(%s): %v", ds.ID, err)
	}
	return schema, cols
}

func values(a arrow.Array) []any {
	out := make([]any, a.Len())
	for i := range out {
		if a.IsNull(i) {
			continue
		}
		switch a := a.(type) {
		case *array.Int64:
			out[i] = a.Value(i)
		case *array.Float64:
			out[i] = a.Value(i)
		case *array.String:
			out[i] = a.Value(i)
		case *array.Boolean:
			out[i] = a.Value(i)
		case *array.Date32:
			out[i] = a.Value(i).ToTime().Format("2006-01-02")
		case *array.Timestamp:
			out[i] = time.UnixMilli(int64(a.Value(i))).UTC().Format("2006-01-02T15:04:05.000")
		default:
			out[i] = a.ValueStr(i)
		}
	}
	return out
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

func assertCode(t testing.TB, err error, category error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error %s, got nil", code)
	}
	if !errors.Is(err, category) {
		t.Errorf("error %v: want category %v", err, category)
	}
	if got := qerr.Code(err); got != code {
		t.Errorf("error %v: code %q, want %q", err, got, code)
	}
	var qe *qerr.Error
	if !errors.As(err, &qe) {
		t.Errorf("error %v is not a *qerr.Error", err)
	}
}
