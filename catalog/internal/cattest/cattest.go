// Package cattest holds the helpers the catalog and catalog/csv tests share:
// writing files under a test root, opening a catalog over it, scanning a
// dataset into Go values with a checked allocator, asserting error codes.
// Only tests import it.
package cattest

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/testutil/plantest"
	"github.com/quarrydb/quarry/planner"
)

// Quiet is a logger that drops everything.
var Quiet = slog.New(slog.DiscardHandler)

// writeFile writes content to root/rel (slash separated), creating
// directories; names ending in .gz are gzipped.
func WriteFile(t testing.TB, root, rel, content string) string {
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
func WriteRaw(t testing.TB, root, rel, content string) string {
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

// NewCatalog opens a catalog over root with formats (CSV when none).
func NewCatalog(t testing.TB, root string, formats ...catalog.Format) *catalog.Catalog {
	t.Helper()
	if len(formats) == 0 {
		formats = []catalog.Format{csv.NewFormat()}
	}
	c, err := catalog.New(context.Background(), catalog.Options{Root: root, Formats: formats, Logger: Quiet})
	if err != nil {
		t.Fatalf("New(%s): %v", root, err)
	}
	return c
}

// IDs lists the ids of c's datasets.
func IDs(c *catalog.Catalog) []string {
	var out []string
	for _, d := range c.Datasets() {
		out = append(out, d.ID)
	}
	return out
}

// Lookup returns dataset id of c, failing the test when it is missing.
func Lookup(t testing.TB, c *catalog.Catalog, id string) *catalog.Dataset {
	t.Helper()
	ds, err := c.Lookup(id)
	if err != nil {
		t.Fatalf("Lookup(%q): %v (datasets %v, diagnostics %v)", id, err, IDs(c), c.Diagnostics())
	}
	return ds
}

// TypeNames lists the Arrow type names of s's fields.
func TypeNames(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Type.String())
	}
	return out
}

// FieldNames lists the names of s's fields.
func FieldNames(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name)
	}
	return out
}

// scanAll reads a dataset with a checked allocator and returns every column
// as Go values (nil for null), asserting that nothing leaks.
func ScanAll(t testing.TB, ds *catalog.Dataset, opts catalog.ScanOptions) (*arrow.Schema, [][]any) {
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
			cols[i] = append(cols[i], Values(rec.Column(i))...)
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatalf("Scan(%s): %v", ds.ID, err)
	}
	return schema, cols
}

// Values returns the cells of a as Go values (nil for null).
func Values(a arrow.Array) []any {
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

// AssertCode fails the test unless err has the category and code.
func AssertCode(t testing.TB, err error, category error, code string) {
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

// RunPlan optimizes plan with opts, runs it over ds on a checked
// allocator (batches of 700 rows) and returns the rows as text (a line
// per row) and the plan's scan.
func RunPlan(t testing.TB, plan planner.Node, ds *catalog.Dataset, opts planner.OptimizeOptions) (string, *planner.Scan) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows, plan := plantest.Run(t, plan, ds.Source, opts, engine.Options{Alloc: mem, BatchSize: 700})
	var scan *planner.Scan
	planner.Inspect(plan, func(n planner.Node, _ int) bool {
		if s, ok := n.(*planner.Scan); ok {
			scan = s
		}
		return true
	})
	return rows, scan
}
