//go:build !cgo || nohdf5

package hdf5

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
)

// Available reports whether this binary reads HDF5 files. It is false in a
// build without cgo or with -tags nohdf5 (no libhdf5 needed): the Format
// then still matches HDF5 files, so the catalog lists each one as a
// diagnostic, and every call fails with NotBuilt's error.
const Available = false

// NotBuilt is the error of every HDF5 operation in a build without HDF5:
// unsupported, code not_in_build, diagnostics.feature "hdf5".
func NotBuilt() error {
	return qerr.Unsupported(qerr.CodeNotInBuild, "this quarry was built without HDF5 support (cgo-free or -tags nohdf5 build): HDF5 and NetCDF-4 files cannot be read").
		With("feature", "hdf5").
		WithHint("use a quarry built with libhdf5 (the linux cgo release archive, or `make build` from source); CSV, Parquet, JSON, Arrow and Excel files work in this build")
}

// Format is the HDF5 format of a build without HDF5: it matches HDF5 files
// and refuses to open them.
type Format struct{}

// Option configures a Format (no effect in this build).
type Option func(*Format)

// WithRoot sets the data root (no effect in this build).
func WithRoot(string) Option { return func(*Format) {} }

// NewFormat returns the HDF5 format of a build without HDF5.
func NewFormat(...Option) *Format { return &Format{} }

var _ catalog.Format = (*Format)(nil)

// Close does nothing.
func (f *Format) Close() error { return nil }

// Open fails with NotBuilt's error: the catalog reports the file as a
// diagnostic.
func (f *Format) Open(context.Context, catalog.FileInfo) ([]*catalog.Dataset, error) {
	return nil, NotBuilt()
}

// Browse fails with NotBuilt's error.
func (f *Format) Browse(context.Context, string, string) (*Object, error) { return nil, NotBuilt() }

// Slice is what ReadSlice returns; ReadSlice never returns one in this build.
type Slice struct {
	Shape  []int64
	DType  string
	Values arrow.Array
}

// ReadSlice fails with NotBuilt's error.
func (f *Format) ReadSlice(context.Context, string, string, string, memory.Allocator) (*Slice, error) {
	return nil, NotBuilt()
}

// Release does nothing.
func (s *Slice) Release() {}

// AppendNestedJSON returns dst.
func (s *Slice) AppendNestedJSON(dst []byte) []byte { return dst }

// Table fails with NotBuilt's error.
func (s *Slice) Table(memory.Allocator) (arrow.RecordBatch, error) { return nil, NotBuilt() }
