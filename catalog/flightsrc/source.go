package flightsrc

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
	"github.com/quarrydb/quarry/planner/sqlgen"
)

// source reads one remote table. It takes the filters its dialect prints
// exactly (planner.FilterPushdowner) and pushes the projection, those
// filters and the scan's limit/offset to the remote as one generated
// SELECT; the remote's Arrow batches stream through, converted to the
// dataset's types.
type source struct {
	r      *Remote
	id     string
	table  sqlgen.Table
	schema *arrow.Schema // the dataset's (exposed) schema
}

var (
	_ catalog.Source           = (*source)(nil)
	_ catalog.ScanDescriber    = (*source)(nil)
	_ planner.FilterPushdowner = (*source)(nil)
)

// DescribeScan implements catalog.ScanDescriber: the statement sent.
func (s *source) DescribeScan(opts catalog.ScanOptions) string {
	sql, _, _, err := s.SQL(opts)
	if err != nil {
		return ""
	}
	return "remote " + s.r.cfg.Name + ": " + sql
}

// HandlesFilter implements planner.FilterPushdowner.
func (s *source) HandlesFilter(p planner.Predicate) bool { return s.r.dialect.Printable(p, s.schema) }

// SQL is the statement a scan with opts sends to the remote, the schema
// of its rows and the leading rows it leaves out (opts.SkipRows pushed
// as OFFSET, or 0).
func (s *source) SQL(opts catalog.ScanOptions) (sql string, out *arrow.Schema, skipped int64, err error) {
	if opts.Pushed != nil {
		n := opts.Pushed
		if _, isLimit := n.(*planner.Limit); !isLimit && opts.Limit > 0 {
			n = &planner.Limit{Input: n, Count: opts.Limit}
		}
		if sql, err = sqlgen.GenerateTables(n, s.tables, s.r.dialect); err != nil {
			return "", nil, 0, qerr.Internal(err, "remote dataset %s: a pushed plan", s.id)
		}
		return sql, n.Schema(), 0, nil
	}
	proj, err := catalog.Projection(s.id, s.schema, opts.Columns)
	if err != nil {
		return "", nil, 0, err
	}
	fields := make([]arrow.Field, len(proj))
	names := make([]string, len(proj))
	for i, j := range proj {
		fields[i], names[i] = s.schema.Field(j), s.schema.Field(j).Name
	}
	out = arrow.NewSchema(fields, nil)
	scan := &planner.Scan{Dataset: s.id, Out: out, Columns: names, Filters: opts.Filters}
	var n planner.Node = scan
	if opts.SkipRows > 0 || opts.Limit > 0 {
		l := &planner.Limit{Input: scan, Count: -1, Offset: max(opts.SkipRows, 0)}
		if opts.Limit > 0 {
			l.Count = max(opts.Limit-l.Offset, 0)
		}
		n = l
	}
	sql, err = sqlgen.Generate(n, s.table, s.r.dialect)
	if err != nil {
		// Not expected (filters are taken only when printable): read
		// every row and let the engine filter and limit.
		scan.Filters = nil
		if sql, err = sqlgen.Generate(scan, s.table, s.r.dialect); err != nil {
			return "", nil, 0, qerr.Internal(err, "remote dataset %s", s.id)
		}
		return sql, out, 0, nil
	}
	return sql, out, max(opts.SkipRows, 0), nil
}

// Scan implements catalog.Source.
func (s *source) Scan(ctx context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sql, out, skipped, err := s.SQL(opts)
	if err != nil {
		return nil, err
	}
	mem := opts.Alloc
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	s.r.log.Debug("flightsql remote query", "dataset", s.id, "sql", sql)
	pushed := opts.Pushed != nil
	check := func(got *arrow.Schema) error { return s.checkSchema(got, out, pushed) }
	st, err := s.r.stream(ctx, ctx, sql, mem, check)
	if err != nil {
		return nil, err
	}
	if skipped > 0 && opts.Skipped != nil {
		opts.Skipped.Add(skipped)
	}
	r := &scanReader{ctx: ctx, s: s, in: st, out: out, mem: mem, pushed: pushed}
	r.refs.Store(1)
	return r, nil
}

// checkSchema compares the remote's result schema with the dataset's
// columns out: same number of columns, each exposed as the same type
// (for a pushed plan, whose computed columns each remote types its own
// way, only the number: values are converted).
func (s *source) checkSchema(got, out *arrow.Schema, pushed bool) error {
	exp, _ := catalog.ExposedSchema(got)
	if exp.NumFields() != out.NumFields() {
		return s.changed(fmt.Sprintf("the remote returned %d columns for %d", exp.NumFields(), out.NumFields()))
	}
	if pushed {
		return nil
	}
	for i := range exp.Fields() {
		if !arrow.TypeEqual(exp.Field(i).Type, out.Field(i).Type) {
			return s.changed(fmt.Sprintf("column %q is %s now, was %s", out.Field(i).Name, got.Field(i).Type, out.Field(i).Type))
		}
	}
	return nil
}

// changed is the error of a table whose columns changed since listing.
func (s *source) changed(what string) error {
	s.r.stale.Store(true)
	return qerr.NotFound(qerr.CodeRemoteSchemaChanged, "the remote table of dataset %q changed since the catalog listed it: %s", s.id, what).
		With("remote", s.r.cfg.Name).
		WithHint("call get_catalog (it lists the remote again), then retry with the new columns")
}

// stream runs sql on the remote (Execute under the remote's timeout, then
// DoGet of each endpoint in order on this connection) and streams the
// batches as the remote types them, allocated from mem. parent is the
// caller's context (for error reporting); check, when set, vets each
// endpoint's schema.
func (r *Remote) stream(ctx, parent context.Context, sql string, mem memory.Allocator, check func(*arrow.Schema) error) (*stream, error) {
	octx := r.outgoing(ctx)
	ectx, cancel := context.WithTimeout(octx, r.cfg.timeout())
	info, err := r.client.Execute(ectx, sql)
	cancel()
	if err != nil {
		return nil, r.remoteError(parent, "Execute", err, sql)
	}
	sctx, stop := context.WithCancel(octx)
	st := &stream{r: r, ctx: sctx, parent: parent, stop: stop, sql: sql, mem: mem, check: check, eps: info.Endpoint}
	if err := st.open(); err != nil { // the first endpoint: errors surface here
		st.Release()
		return nil, err
	}
	return st, nil
}

// stream reads the endpoints of one statement in order.
type stream struct {
	r      *Remote
	ctx    context.Context
	parent context.Context
	stop   context.CancelFunc
	sql    string
	mem    memory.Allocator
	check  func(*arrow.Schema) error
	eps    []*flight.FlightEndpoint
	next   int
	cur    *flight.Reader
	err    error
}

// open starts the next endpoint's DoGet (cur stays nil past the last).
func (s *stream) open() error {
	if s.next >= len(s.eps) {
		return nil
	}
	ep := s.eps[s.next]
	s.next++
	gs, err := s.r.client.Client.DoGet(s.ctx, ep.Ticket)
	if err != nil {
		return s.r.remoteError(s.parent, "DoGet", err, s.sql)
	}
	rdr, err := flight.NewRecordReader(gs, ipc.WithAllocator(s.mem))
	if err != nil {
		return s.r.remoteError(s.parent, "DoGet", err, s.sql)
	}
	if s.check != nil {
		if err := s.check(rdr.Schema()); err != nil {
			rdr.Release()
			return err
		}
	}
	s.cur = rdr
	return nil
}

// Next advances to the next batch of any endpoint.
func (s *stream) Next() bool {
	for s.err == nil && s.cur != nil {
		if s.cur.Next() {
			return true
		}
		err := s.cur.Err()
		s.cur.Release()
		s.cur = nil
		if err != nil {
			s.err = s.r.remoteError(s.parent, "DoGet", err, s.sql)
			return false
		}
		if s.err = s.open(); s.err != nil {
			return false
		}
	}
	return false
}

// RecordBatch is the current batch (remote types).
func (s *stream) RecordBatch() arrow.RecordBatch { return s.cur.RecordBatch() }

// Err is the error that ended the stream.
func (s *stream) Err() error { return s.err }

// Release cancels the call and frees what the stream holds.
func (s *stream) Release() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	s.stop()
}

// scanReader converts a stream to the dataset's types.
type scanReader struct {
	ctx  context.Context
	s    *source
	in   *stream
	out  *arrow.Schema
	mem  memory.Allocator
	cur  arrow.RecordBatch
	err  error
	refs atomic.Int64
	// pushed: the rows of a pushed plan, converted to its types.
	pushed bool
}

func (r *scanReader) Retain() { r.refs.Add(1) }

func (r *scanReader) Release() {
	if r.refs.Add(-1) == 0 {
		r.finish()
	}
}

func (r *scanReader) finish() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.in != nil {
		r.in.Release()
		r.in = nil
	}
}

func (r *scanReader) Schema() *arrow.Schema { return r.out }

// RecordBatch implements array.RecordReader.
func (r *scanReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record implements array.RecordReader (deprecated alias of RecordBatch).
func (r *scanReader) Record() arrow.RecordBatch { return r.cur }

func (r *scanReader) Err() error { return r.err }

func (r *scanReader) fail(err error) bool {
	r.err = err
	r.finish()
	return false
}

// Next implements array.RecordReader.
func (r *scanReader) Next() (ok bool) {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || r.in == nil {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		return r.fail(err)
	}
	var cols []arrow.Array
	defer func() {
		if p := recover(); p != nil {
			for _, c := range cols {
				c.Release()
			}
			ok = r.fail(qerr.Unsupported(qerr.CodeRemoteError, "the Flight SQL remote %q sent a batch Quarry cannot read: %v", r.s.r.cfg.Name, p).
				With("remote", r.s.r.cfg.Name))
		}
	}()
	if !r.in.Next() {
		if err := r.in.Err(); err != nil {
			return r.fail(err)
		}
		r.finish()
		return false
	}
	b := r.in.RecordBatch()
	if err := r.s.checkSchema(b.Schema(), r.out, r.pushed); err != nil {
		return r.fail(err)
	}
	cols = make([]arrow.Array, 0, r.out.NumFields())
	for i := range r.out.NumFields() {
		in := b.Column(i)
		convert := catalog.ExposeArray
		if r.pushed {
			convert = toType
		}
		c, err := convert(r.mem, in, r.out.Field(i).Type)
		if err == nil && c == in {
			// The stream's buffers are the gRPC messages' bytes, which no
			// allocator counts: copy them into the query's memory.
			dd := catalog.CopyArrayData(r.mem, in.Data())
			c = array.MakeFromData(dd)
			dd.Release()
			in.Release() // the reference ExposeArray took
		}
		if err != nil {
			for _, c := range cols {
				c.Release()
			}
			cols = nil
			return r.fail(qerr.Unsupported(qerr.CodeRemoteError, "the Flight SQL remote %q sent a value of dataset %q that cannot be read: %v", r.s.r.cfg.Name, r.s.id, err).
				With("remote", r.s.r.cfg.Name))
		}
		cols = append(cols, c)
	}
	r.cur = array.NewRecordBatch(r.out, cols, b.NumRows())
	for _, c := range cols {
		c.Release()
	}
	cols = nil
	return true
}
