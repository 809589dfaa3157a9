package engine

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"runtime/debug"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// DefaultBatchSize is the target rows per batch when Options.BatchSize is 0.
const DefaultBatchSize = 65536

// Options configures one execution.
type Options struct {
	// Alloc allocates every Arrow buffer of the query, including the
	// source's batches; nil means memory.DefaultAllocator.
	Alloc memory.Allocator
	// BatchSize is the target rows per batch; 0 means DefaultBatchSize.
	BatchSize int
	// MemoryLimit is the number of bytes of Arrow memory (batches in flight,
	// including ones the caller still holds) plus operator state (sort,
	// aggregate and distinct) the query may hold at once; 0 means unlimited.
	// Exceeding it fails the query with a qerr.ErrLimitExceeded error of code
	// qerr.CodeResourceExhausted, reported by the reader's Err.
	MemoryLimit int64
	// Pool, when set, is the server-wide memory cap the query reserves
	// from as it grows (see Pool); nil means no cap across queries.
	Pool *Pool
	// Admission, when set, says how the query enters Pool (an up-front
	// reservation, a retry) and reports whether it may be run again after
	// failing for lack of server memory (see Admission).
	Admission *Admission
	// Profile, when set, collects per-operator statistics (see Profile).
	Profile *Profile
	// Sources are the sources of the datasets a plan joins (planner.Join),
	// by dataset id; the plan's first scan reads the src of Execute.
	Sources map[string]catalog.Source
	// SpillDir is where a join whose build side exceeds MemoryLimit writes
	// its partition files (in a private directory removed when the query
	// ends); "" means os.TempDir(). Never the data root.
	SpillDir string
	// Spilled, when set, counts the bytes of the spill files the query
	// writes (added as each file is finished; a server's spill metric).
	Spilled *atomic.Int64

	joinBuild int // tests: force the build side of joins (buildLeft, buildRight)
}

// op is one running operator (an iterator built from a plan node).
type op interface {
	// next returns the next non-empty batch, which the caller owns and must
	// release, or nil at the end of the stream.
	next() (arrow.RecordBatch, error)
	// close releases everything the operator and its inputs hold. It is
	// idempotent; next must not be called afterwards.
	close()
}

// exec is the state shared by the operators of one execution.
type exec struct {
	ctx       context.Context
	src       catalog.Source
	budget    *budget
	alloc     memory.Allocator // hard: engine-built arrays
	soft      memory.Allocator // counted, never failing: the source, Arrow library code
	batchSize int
	trace     *tracer // set when profiling or explaining: build wraps every operator
	dry       bool    // Explain: build the operators without opening the source

	sources   map[string]catalog.Source // joined datasets (Options.Sources)
	joinBuild int
	spillDir  string
	spilled   *atomic.Int64 // Options.Spilled

	// srcDataset is the dataset src reads (the plan's first scan's).
	srcDataset string
	// skips are the offsets passed to scans (limit_skip.go).
	skips map[*planner.Scan]*scanSkip
	// limits are the row limits passed to scans (limit_scan.go).
	limits map[*planner.Scan]int64
}

// Execute builds a streaming pipeline for the plan and returns a reader over
// its output. The plan has exactly one planner.Scan leaf, read from src. The
// caller must Release the reader. Errors during execution are reported by
// reader.Err(). Cancelling ctx stops the pipeline at the next batch and
// releases everything.
//
// Plan shape errors are qerr.ErrInternal; a filter, key or aggregate on a
// column type it does not support is qerr.ErrUnsupported.
func Execute(ctx context.Context, plan planner.Node, src catalog.Source, opts Options) (array.RecordReader, error) {
	ex, err := newExec(ctx, plan, src, opts, opts.Profile != nil)
	if err != nil {
		return nil, err
	}
	if err := ex.budget.admit(ctx, opts.Admission); err != nil {
		return nil, err
	}
	root, err := ex.build(plan)
	if err != nil {
		ex.budget.giveBack()
		return nil, err
	}
	if opts.Profile != nil {
		opts.Profile.root = root.(*tracedOp)
	}
	r := &reader{schema: plan.Schema(), root: root, budget: ex.budget}
	r.refs.Store(1)
	return r, nil
}

// newExec checks the plan and sets up its execution state; trace wraps
// every operator in a tracedOp (Options.Profile, Explain).
func newExec(ctx context.Context, plan planner.Node, src catalog.Source, opts Options, trace bool) (*exec, error) {
	if err := checkShape(plan); err != nil {
		return nil, err
	}
	first := planner.ScanOf(plan)
	if src == nil && first != nil {
		return nil, qerr.Internal(nil, "execute: no source for the plan's scan")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	mem := opts.Alloc
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	bs := opts.BatchSize
	if bs <= 0 {
		bs = DefaultBatchSize
	}
	b := &budget{limit: max(opts.MemoryLimit, 0), pool: opts.Pool}
	var tr *tracer
	if trace {
		tr = &tracer{live: &b.live}
		mem = &peakAlloc{Allocator: mem, tr: tr}
	}
	return &exec{
		ctx:       ctx,
		src:       src,
		budget:    b,
		alloc:     &hardAlloc{b: b, mem: mem},
		soft:      &softAlloc{b: b, mem: mem},
		batchSize: bs,
		trace:     tr,
		sources:   opts.Sources,
		joinBuild: opts.joinBuild,
		spillDir:  opts.SpillDir,
		spilled:   opts.Spilled,

		srcDataset: datasetOf(first),
	}, nil
}

// datasetOf is the dataset s reads ("" for nil).
func datasetOf(s *planner.Scan) string {
	if s == nil {
		return ""
	}
	return s.Dataset
}

// checkShape verifies, before anything is built, that the plan has no nil
// node, that every node has a schema, and that it has exactly one leaf (a
// Scan, or a Values of constant rows) plus one per join and set operation.
// It walks the plan generically (planner.Inspect); unknown node types are
// rejected by build, before the source is opened.
func checkShape(plan planner.Node) error {
	scans, joins, values, setops := 0, 0, 0, 0
	var err error
	planner.Inspect(plan, func(n planner.Node, _ int) bool {
		if err != nil {
			return false
		}
		if isNil(n) {
			err = qerr.Internal(nil, "execute: plan has a nil node")
			return false
		}
		for _, c := range n.Children() {
			if isNil(c) {
				err = qerr.Internal(nil, "execute: plan node %T has a nil input", n)
				return false
			}
		}
		if n.Schema() == nil {
			err = qerr.Internal(nil, "execute: plan node %q has no schema", n.Describe())
			return false
		}
		if _, ok := n.(*planner.Scan); ok {
			scans++
		}
		if _, ok := n.(*planner.Join); ok {
			joins++
		}
		if _, ok := n.(*planner.Values); ok {
			values++
		}
		if _, ok := n.(*planner.SetOp); ok {
			setops++
		}
		return true
	})
	if err != nil {
		return err
	}
	if values+setops > 0 && scans+values == joins+setops+1 {
		return nil
	}
	if scans != joins+1 {
		return qerr.Internal(nil, "execute: plan has %d scans, want exactly %d (one plus one per join)", scans, joins+1)
	}
	return nil
}

// isNil reports a nil node, including a typed nil pointer.
func isNil(n planner.Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// build turns a plan node into its operator (wrapped in a tracedOp when
// tracing). Each node is validated before its input is built, so a failing
// plan never opens the source; only the Scan (the last thing built)
// acquires resources.
func (ex *exec) build(n planner.Node) (op, error) {
	return ex.buildAs(n, func() (op, error) { return ex.buildNode(n) })
}

// buildNode is build without the tracing.
func (ex *exec) buildNode(n planner.Node) (op, error) {
	switch n := n.(type) {
	case *planner.Scan:
		return ex.buildScan(n)
	case *planner.Filter:
		preds, err := compilePreds(n.Preds, n.Input.Schema())
		if err != nil {
			return nil, err
		}
		in, err := ex.build(n.Input)
		if err != nil {
			return nil, err
		}
		return newFilterOp(ex, in, n.Input.Schema(), preds), nil
	case *planner.Project:
		if err := checkProject(n); err != nil {
			return nil, err
		}
		in, err := ex.build(n.Input)
		if err != nil {
			return nil, err
		}
		if f := asFilter(in); f != nil && f.fuseProject(n.Indices, n.Out) {
			return in, nil // the filter copies only the projected columns
		}
		return &projectOp{ex: ex, in: in, idx: n.Indices, out: n.Out}, nil
	case *planner.Aggregate:
		a, err := newAggOp(ex, n)
		if err != nil {
			return nil, err
		}
		if c := newCountOp(ex, n); c != nil {
			if c.in, err = ex.build(n.Input); err != nil {
				return nil, err
			}
			return c, nil
		}
		if a.in, err = ex.build(n.Input); err != nil {
			return nil, err
		}
		return a, nil
	case *planner.Distinct:
		d, err := newDistinctOp(ex, n.Input.Schema(), nil, "distinct")
		if err != nil {
			return nil, err
		}
		if d.in, err = ex.build(n.Input); err != nil {
			return nil, err
		}
		return d, nil
	case *planner.Deduplicate:
		var keys []int
		if len(n.Indices) > 0 {
			keys = n.Indices
		}
		d, err := newDistinctOp(ex, n.Input.Schema(), keys, "deduplicate")
		if err != nil {
			return nil, err
		}
		if d.in, err = ex.build(n.Input); err != nil {
			return nil, err
		}
		return d, nil
	case *planner.Compute:
		c, err := newComputeOp(ex, n)
		if err != nil {
			return nil, err
		}
		if c.in, err = ex.build(n.Input); err != nil {
			return nil, err
		}
		return c, nil
	case *planner.Join:
		return ex.buildJoin(n)
	case *planner.SetOp:
		return ex.buildSetOp(n)
	case *planner.Values:
		return newValuesOp(ex, n)
	case *planner.Sort:
		return ex.buildSort(n, -1)
	case *planner.Window:
		w, err := newWindowOp(ex, n)
		if err != nil {
			return nil, err
		}
		if w.in, err = ex.build(n.Input); err != nil {
			return nil, err
		}
		return w, nil
	case *planner.TopNPerGroup:
		return ex.buildTopNPerGroup(n)
	case *planner.Limit:
		var (
			in      op
			err     error
			skipped *atomic.Int64
		)
		if s, ok := n.Input.(*planner.Sort); ok && n.Count >= 0 {
			// Top-k: the sort only needs to keep offset+count rows.
			k := int64(-1)
			if n.Offset >= 0 && n.Offset <= math.MaxInt64-n.Count {
				k = n.Offset + n.Count
			}
			in, err = ex.buildAs(s, func() (op, error) { return ex.buildSort(s, k) })
		} else {
			skipped = ex.skipFor(n)
			ex.limitFor(n)
			in, err = ex.build(n.Input)
		}
		if err != nil {
			return nil, err
		}
		return &limitOp{ex: ex, in: in, skip: max(n.Offset, 0), remain: n.Count, skipped: skipped}, nil
	}
	return nil, qerr.Internal(nil, "execute: unknown plan node %T", n)
}

func checkProject(n *planner.Project) error {
	in := n.Input.Schema()
	if n.Out == nil || n.Out.NumFields() != len(n.Indices) {
		return qerr.Internal(nil, "project: output schema does not have %d columns", len(n.Indices))
	}
	for i, k := range n.Indices {
		if k < 0 || k >= in.NumFields() {
			return qerr.Internal(nil, "project: column index %d out of range for %d input columns", k, in.NumFields())
		}
		if !arrow.TypeEqual(in.Field(k).Type, n.Out.Field(i).Type) {
			return qerr.Internal(nil, "project: column %q has type %s but the output schema says %s", in.Field(k).Name, in.Field(k).Type, n.Out.Field(i).Type)
		}
	}
	return nil
}

// reader is the array.RecordReader over the root operator.
type reader struct {
	refs   atomic.Int64
	schema *arrow.Schema
	root   op
	budget *budget
	cur    arrow.RecordBatch
	err    error
	done   bool
}

// Retain increases the reference count.
func (r *reader) Retain() { r.refs.Add(1) }

// Release decreases the reference count; at zero the pipeline is closed and
// all its memory released.
func (r *reader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.finish()
	}
}

// Schema is the plan's output schema.
func (r *reader) Schema() *arrow.Schema { return r.schema }

// Next advances to the next batch; false at the end or on error (see Err).
func (r *reader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.done {
		return false
	}
	b, err := r.pull()
	if err != nil {
		r.err = err
		r.finish()
		return false
	}
	if b == nil {
		r.finish()
		return false
	}
	r.cur = b
	return true
}

// pull runs the pipeline for one batch, turning panics into errors.
func (r *reader) pull() (b arrow.RecordBatch, err error) {
	defer func() {
		if p := recover(); p != nil {
			b = nil
			if e, ok := p.(exhausted); ok {
				err = e.err()
				return
			}
			err = qerr.Internal(fmt.Errorf("panic: %v\n%s", p, debug.Stack()), "the query engine failed: %v", p)
		}
	}()
	return r.root.next()
}

func (r *reader) finish() {
	r.done = true
	if r.root != nil {
		r.root.close()
		r.root = nil
		r.budget.giveBack()
	}
}

// RecordBatch is the current batch, valid until the next call to Next or Release.
func (r *reader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch.
//
// Deprecated: use RecordBatch.
func (r *reader) Record() arrow.RecordBatch { return r.cur }

// Err is the error that stopped the stream, if any.
func (r *reader) Err() error { return r.err }
