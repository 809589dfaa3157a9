package csv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowcsv "github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/infer"
	"github.com/quarrydb/quarry/internal/qerr"
)

// csvSource streams one CSV file as record batches.
type csvSource struct {
	id     string
	file   catalog.FileInfo // the file as cataloged: opened with file.Open
	gz     bool
	delim  rune
	schema *arrow.Schema
	kinds  []infer.Kind
	rows   int64
	size   int64 // file size on disk when cataloged
	lim    catalog.Limits
}

// Scan implements Source. Columns that are not requested are read as plain
// strings (no parsing); bool and timestamp columns are read as strings and
// converted here so they follow exactly the inference rules.
//
// arrow-go v18.8's csv.WithIncludeColumns cannot be combined with an explicit
// schema (it panics), and its inferring reader cannot address duplicate
// header names and panics on header-only files, so projection is done on
// each batch instead.
func (s *csvSource) Scan(ctx context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	return s.scan(ctx, opts, false)
}

// scanReference is Scan through arrow-go's CSV reader: the reference the
// fast reader is tested against.
func (s *csvSource) scanReference(ctx context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	return s.scan(ctx, opts, true)
}

func (s *csvSource) scan(ctx context.Context, opts catalog.ScanOptions, reference bool) (array.RecordReader, error) {
	proj, batch, alloc, err := scanSetup(ctx, s.id, s.schema, opts)
	if err != nil {
		return nil, err
	}
	// Do not reserve 64Ki-row buffers for a 10-row file; if the file grew
	// since it was cataloged, more (smaller) batches are produced.
	chunk := int(min(int64(batch), max(s.rows, 1)))

	outFields := make([]arrow.Field, len(proj))
	wanted := make([]bool, len(s.kinds))
	for i, fi := range proj {
		outFields[i] = s.schema.Field(fi)
		wanted[fi] = true
	}
	readFields := make([]arrow.Field, len(s.kinds))
	for i, k := range s.kinds {
		readFields[i] = arrow.Field{Name: s.schema.Field(i).Name, Type: arrow.BinaryTypes.String, Nullable: true}
		if wanted[i] && k.NativeRead() {
			readFields[i].Type = k.ArrowType()
		}
	}

	if !reference && s.delim < utf8.RuneSelf {
		tests, ok := s.compileFilters(opts.Filters, proj)
		if !ok {
			tests = nil
		}
		rr, err := s.scanFast(ctx, proj, arrow.NewSchema(outFields, nil), batch, alloc, tests)
		if err != nil {
			return nil, s.openError(err)
		}
		return rr, nil
	}
	br, closer, err := openText(s.file, s.gz, s.lim.WithDefaults())
	if err != nil {
		return nil, s.openError(err)
	}
	r := arrowcsv.NewReader(br, arrow.NewSchema(readFields, nil),
		arrowcsv.WithHeader(true),
		arrowcsv.WithComma(s.delim),
		arrowcsv.WithLazyQuotes(false),
		arrowcsv.WithNullReader(true, ""),
		arrowcsv.WithChunk(chunk),
		arrowcsv.WithAllocator(alloc),
	)
	rr := &csvRecordReader{
		ctx:    ctx,
		src:    s,
		schema: arrow.NewSchema(outFields, nil),
		proj:   proj,
		alloc:  alloc,
		inner:  r,
		closer: closer,
	}
	rr.refs.Store(1)
	return rr, nil
}

func (s *csvSource) openError(err error) error { return catalog.SourceOpenError(s.id, err) }

// csvRecordReader adapts arrow-go's CSV reader: projection, conversion of
// string-read columns, context checks, and closing the file.
type csvRecordReader struct {
	refs   atomic.Int64
	ctx    context.Context
	src    *csvSource
	schema *arrow.Schema
	proj   []int
	alloc  memory.Allocator

	inner  *arrowcsv.Reader // nil once finished
	closer io.Closer        // nil once closed
	cur    arrow.RecordBatch
	err    error
}

var _ array.RecordReader = (*csvRecordReader)(nil)

// Retain implements array.RecordReader.
func (r *csvRecordReader) Retain() { r.refs.Add(1) }

// Release implements array.RecordReader.
func (r *csvRecordReader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.finish()
	}
}

// finish releases the inner reader and closes the file (idempotent).
func (r *csvRecordReader) finish() {
	if r.inner != nil {
		r.inner.Release()
		r.inner = nil
	}
	if r.closer != nil {
		_ = r.closer.Close()
		r.closer = nil
	}
}

// Schema implements array.RecordReader.
func (r *csvRecordReader) Schema() *arrow.Schema { return r.schema }

// RecordBatch implements array.RecordReader.
func (r *csvRecordReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record implements array.RecordReader.
//
// Deprecated: use RecordBatch.
func (r *csvRecordReader) Record() arrow.RecordBatch { return r.cur }

// Err implements array.RecordReader.
func (r *csvRecordReader) Err() error { return r.err }

// Next implements array.RecordReader.
func (r *csvRecordReader) Next() (ok bool) {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.inner == nil || r.err != nil {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.fail(err)
		return false
	}
	defer func() {
		if p := recover(); p != nil {
			r.fail(qerr.Internal(fmt.Errorf("panic: %v", p), "reading dataset %q failed", r.src.id))
			ok = false
		}
	}()
	if !r.inner.Next() {
		if err := r.inner.Err(); err != nil {
			r.fail(r.readError(err))
		} else {
			r.finish()
		}
		return false
	}
	if err := r.inner.Err(); err != nil {
		// arrow-go returns the batch with nulls where parsing failed; do
		// not hand out half-parsed data.
		r.fail(r.readError(err))
		return false
	}
	in := r.inner.RecordBatch()
	cols := make([]arrow.Array, 0, len(r.proj))
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for _, fi := range r.proj {
		col := in.Column(fi)
		k := r.src.kinds[fi]
		if k.NativeRead() || k.Textual() {
			col.Retain()
			cols = append(cols, col)
			continue
		}
		conv, err := infer.ConvertColumn(r.alloc, col.(*array.String), k)
		if err != nil {
			release()
			r.fail(r.readError(err))
			return false
		}
		cols = append(cols, conv)
	}
	r.cur = array.NewRecordBatch(r.schema, cols, in.NumRows())
	release()
	return true
}

func (r *csvRecordReader) fail(err error) {
	r.err = err
	r.finish()
}

func (r *csvRecordReader) readError(err error) error { return readFailure(r.src.id, r.src.file, err) }

// readFailure is the error of a scan of dataset id (file, as cataloged)
// that failed with err: err itself if structured, FileChangedError if the
// file changed under the scan (a record cut by a truncation looks malformed
// before the reader reaches the end and notices), else internal.
func readFailure(id string, file catalog.FileInfo, err error) error {
	var qe *qerr.Error
	if errors.As(err, &qe) {
		return err
	}
	if errors.Is(err, catalog.ErrFileChanged) || changedSince(file) {
		return catalog.FileChangedError(id, err)
	}
	return qerr.Internal(err, "reading dataset %q failed; the file may have changed since it was cataloged", id).
		WithHint("refresh the catalog and retry")
}

// changedSince reports whether file's size or modification time is not
// what it was when cataloged (or it is gone).
func changedSince(file catalog.FileInfo) bool {
	st, err := os.Stat(file.AbsPath)
	return err != nil || st.Size() != file.Size || !st.ModTime().Equal(file.ModTime)
}
