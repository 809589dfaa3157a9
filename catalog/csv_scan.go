package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync/atomic"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowcsv "github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/internal/qerr"
)

// DefaultBatchSize is the number of rows per record batch a Source produces
// when ScanOptions.BatchSize is 0.
const DefaultBatchSize = 64 << 10

// csvSource streams one CSV file as record batches.
type csvSource struct {
	id     string
	file   FileInfo // the file as cataloged: opened with file.Open
	gz     bool
	delim  rune
	schema *arrow.Schema
	kinds  []colKind
	rows   int64
	size   int64 // file size on disk when cataloged
	lim    Limits
}

// projection resolves requested column names to file column indices.
func projection(id string, schema *arrow.Schema, cols []string) ([]int, error) {
	if len(cols) == 0 {
		idx := make([]int, schema.NumFields())
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	idx := make([]int, len(cols))
	seen := make(map[string]bool, len(cols))
	for i, name := range cols {
		if seen[name] {
			return nil, qerr.Invalid(qerr.CodeInvalidColumn, "column %q is requested more than once", name).
				WithHint("list each column once")
		}
		seen[name] = true
		fi := schema.FieldIndices(name)
		if len(fi) == 0 {
			names := make([]string, schema.NumFields())
			for j, f := range schema.Fields() {
				names[j] = f.Name
			}
			return nil, qerr.Invalid(qerr.CodeInvalidColumn, "dataset %q has no column %q", id, name).
				With("suggestions", qerr.Suggest(name, names, 3)).
				WithHint("column names are case-sensitive; call get_catalog to see the dataset's columns")
		}
		idx[i] = fi[0]
	}
	return idx, nil
}

// Scan implements Source. Columns that are not requested are read as plain
// strings (no parsing); bool and timestamp columns are read as strings and
// converted here so they follow exactly the inference rules.
//
// arrow-go v18.8's csv.WithIncludeColumns cannot be combined with an explicit
// schema (it panics), and its inferring reader cannot address duplicate
// header names and panics on header-only files, so projection is done on
// each batch instead.
func (s *csvSource) Scan(ctx context.Context, opts ScanOptions) (array.RecordReader, error) {
	return s.scan(ctx, opts, false)
}

// scanReference is Scan through arrow-go's CSV reader: the reference the
// fast reader is tested against.
func (s *csvSource) scanReference(ctx context.Context, opts ScanOptions) (array.RecordReader, error) {
	return s.scan(ctx, opts, true)
}

func (s *csvSource) scan(ctx context.Context, opts ScanOptions, reference bool) (array.RecordReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	proj, err := projection(s.id, s.schema, opts.Columns)
	if err != nil {
		return nil, err
	}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = DefaultBatchSize
	}
	// Do not reserve 64Ki-row buffers for a 10-row file; if the file grew
	// since it was cataloged, more (smaller) batches are produced.
	chunk := int(min(int64(batch), max(s.rows, 1)))
	alloc := opts.Alloc
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}

	outFields := make([]arrow.Field, len(proj))
	wanted := make([]bool, len(s.kinds))
	for i, fi := range proj {
		outFields[i] = s.schema.Field(fi)
		wanted[fi] = true
	}
	readFields := make([]arrow.Field, len(s.kinds))
	for i, k := range s.kinds {
		readFields[i] = arrow.Field{Name: s.schema.Field(i).Name, Type: arrow.BinaryTypes.String, Nullable: true}
		if wanted[i] && k.nativeRead() {
			readFields[i].Type = k.arrowType()
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
	br, closer, err := openText(s.file, s.gz, s.lim.withDefaults())
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

func (s *csvSource) openError(err error) error { return sourceOpenError(s.id, err) }

// sourceOpenError is the error of a Source that cannot open the file of
// dataset id when a scan starts.
func sourceOpenError(id string, err error) error {
	var qe *qerr.Error
	if errors.As(err, &qe) { // refused by FileInfo.Open
		return err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return qerr.NotFound(qerr.CodeDatasetNotFound, "the file of dataset %q no longer exists", id).
			WithHint("call get_catalog to see the current datasets").Wrap(err)
	}
	return qerr.Internal(err, "cannot open the file of dataset %q", id)
}

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
		if k.nativeRead() || k.textual() {
			col.Retain()
			cols = append(cols, col)
			continue
		}
		conv, err := convertColumn(r.alloc, col.(*array.String), k)
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

func (r *csvRecordReader) readError(err error) error {
	var qe *qerr.Error
	if errors.As(err, &qe) {
		return err
	}
	return qerr.Internal(err, "reading dataset %q failed; the file may have changed since it was cataloged", r.src.id).
		WithHint("refresh the catalog and retry")
}

// convertColumn turns a string column into the kind's Arrow type.
func convertColumn(mem memory.Allocator, in *array.String, k colKind) (arrow.Array, error) {
	switch dt := k.arrowType(); {
	case k == kindBool:
		b := array.NewBooleanBuilder(mem)
		return convertEach(in, b, func(s string) bool {
			v, ok := parseBool(s)
			b.UnsafeAppend(v)
			return ok
		}, "a bool")
	case dt.ID() == arrow.TIMESTAMP:
		b := array.NewTimestampBuilder(mem, dt.(*arrow.TimestampType))
		return convertEach(in, b, func(s string) bool {
			var ms int64
			ok := false
			if k == kindTSZoned || k == kindTSNaive {
				var zoned bool
				ms, zoned, ok = parseTimestamp(s)
				ok = ok && zoned == (k == kindTSZoned)
			} else {
				ms, ok = parseTSKind(k, s)
			}
			b.UnsafeAppend(arrow.Timestamp(ms))
			return ok
		}, "a "+dt.String()+" timestamp")
	case dt.ID() == arrow.DATE32 && k != kindDate:
		b := array.NewDate32Builder(mem)
		return convertEach(in, b, func(s string) bool {
			d, ok := parseDateKind(k, s)
			b.UnsafeAppend(arrow.Date32(d))
			return ok
		}, "a "+k.layout()+" date")
	}
	return nil, fmt.Errorf("no conversion for column kind %d", k)
}

// convertEach builds b from the cells of in: nulls stay null, every other
// cell goes through add, which appends it and reports whether it parsed.
// It consumes b.
func convertEach(in *array.String, b array.Builder, add func(string) bool, what string) (arrow.Array, error) {
	defer b.Release()
	b.Reserve(in.Len())
	for i := range in.Len() {
		if in.IsNull(i) {
			b.AppendNull()
		} else if !add(in.Value(i)) {
			return nil, fmt.Errorf("value %q is not %s", in.Value(i), what)
		}
	}
	return b.NewArray(), nil
}
