package materialize

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/internal/qerr"
)

// HandleTable returns the Table behind result handle id, with a reference
// the caller must Release (the plot tool draws a result handle). An
// unknown or expired handle, or another principal's, is handle_expired.
func (m *Materializer) HandleTable(id, principal string) (*Table, error) {
	if m.handles == nil {
		return nil, qerr.Internal(errors.New("materialize: no handle registry configured"), "result handles are not available")
	}
	return m.handles.Get(id, principal)
}

// ScanSchema is the schema of the batches Reader returns: Schema, or for a
// spilled table the schema its rows are read back with (see spill.go).
func (t *Table) ScanSchema() *arrow.Schema {
	if t.spill != nil {
		return t.spill.schema
	}
	return t.schema
}

// Reader streams t's rows as record batches of at most chunk rows (a
// spilled table reads them back from its file chunk by chunk), so a query
// can run over a collected result. The reader holds a reference to t
// until it is released.
func (t *Table) Reader(ctx context.Context, chunk int64) array.RecordReader {
	t.Retain()
	r := &tableReader{ctx: ctx, t: t, chunk: max(chunk, 1)}
	r.refs.Store(1)
	return r
}

// tableReader is Table.Reader's reader.
type tableReader struct {
	refs  atomic.Int64
	ctx   context.Context
	t     *Table
	chunk int64
	off   int64
	view  *Table // the current chunk
	next  int    // the next batch of view
	cur   arrow.RecordBatch
	err   error
}

func (r *tableReader) Schema() *arrow.Schema { return r.t.ScanSchema() }

func (r *tableReader) Next() bool {
	for r.err == nil {
		if r.view != nil && r.next < len(r.view.batches) {
			r.cur = r.view.batches[r.next]
			r.next++
			return true
		}
		r.dropView()
		if r.off >= r.t.NumRows() {
			return false
		}
		if err := r.ctx.Err(); err != nil {
			r.err = qerr.As(err)
			return false
		}
		v, err := r.t.Slice(r.ctx, r.off, r.chunk)
		if err != nil {
			r.err = err
			return false
		}
		r.view, r.next, r.off = v, 0, r.off+r.chunk
	}
	return false
}

func (r *tableReader) dropView() {
	r.cur = nil
	if r.view != nil {
		r.view.Release()
		r.view = nil
	}
}

func (r *tableReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is the deprecated alias of RecordBatch.
func (r *tableReader) Record() arrow.RecordBatch { return r.cur }

func (r *tableReader) Err() error { return r.err }

func (r *tableReader) Retain() { r.refs.Add(1) }

func (r *tableReader) Release() {
	if r.refs.Add(-1) == 0 {
		r.dropView()
		r.t.Release()
	}
}
