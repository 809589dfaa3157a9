package engine

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/planner"
)

// Operator describes one physical operator of an execution, as the engine
// builds it from the plan: several plan nodes run by one operator (a
// projection fused into a filter, a count over a filter's mask, a top-k
// sort reading a filter's selection) are one Operator listing every node.
type Operator struct {
	// Name is the physical operator: scan, filter, filter+project,
	// filter+count, count, hash aggregate, sort, top-k sort,
	// filter+top-k sort, limit, project, compute, distinct (Distinct and
	// Deduplicate);
	// for operators without a description, their type's name.
	Name string
	// Notes are the physical choices worth knowing (kernels, fusions).
	Notes []string
	// Nodes are the plan nodes it runs, top first.
	Nodes []planner.Node
	// Inputs are the operators it reads.
	Inputs []*Operator
	// Stats are the measured numbers; nil from Explain.
	Stats *OpStats
}

// OpStats are one operator's numbers over an execution.
type OpStats struct {
	// RowsIn is the rows its inputs produced (the sum of their RowsOut);
	// for a scan, the rows the source read (those it returned plus those
	// filters pushed into it dropped; a scan stopped early by a limit
	// reads fewer).
	RowsIn int64
	// ZonesSkipped and RowsSkipped (scans only) are the zones (cached
	// blocks, Parquet row groups) the source skipped unread with zone
	// filters and their rows: a full scan's RowsIn + RowsSkipped is the
	// dataset's rows.
	ZonesSkipped, RowsSkipped int64
	// RowsOut and Batches are the rows and batches it produced.
	RowsOut, Batches int64
	// Time is the wall time spent in the operator itself (its inputs'
	// time excluded).
	Time time.Duration
	// PeakBytes is the most memory the query held (its memory budget:
	// Arrow buffers plus charged operator state) while the operator or its
	// inputs ran.
	PeakBytes int64
}

// String prints the operator tree, one operator per line (indented by
// depth): the name, the notes in parentheses, and after ← the plan nodes it runs.
func (o *Operator) String() string {
	var b strings.Builder
	o.Walk(func(o *Operator, depth int) {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(o.Name)
		if len(o.Notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(o.Notes, "; "))
		}
		descs := make([]string, len(o.Nodes))
		for i, n := range o.Nodes {
			descs[i] = n.Describe()
		}
		fmt.Fprintf(&b, " ← %s\n", strings.Join(descs, " | "))
	})
	return b.String()
}

// Walk calls f on o and every operator below it, pre-order, with its depth.
func (o *Operator) Walk(f func(o *Operator, depth int)) {
	var walk func(*Operator, int)
	walk = func(o *Operator, d int) {
		f(o, d)
		for _, in := range o.Inputs {
			walk(in, d+1)
		}
	}
	walk(o, 0)
}

// Explain describes the operator tree Execute builds for plan over src,
// without reading anything: the source is not opened.
func Explain(plan planner.Node, src catalog.Source, opts Options) (*Operator, error) {
	ex, err := newExec(context.Background(), plan, src, opts, true)
	if err != nil {
		return nil, err
	}
	ex.dry = true
	root, err := ex.build(plan)
	if err != nil {
		return nil, err
	}
	root.close()
	return root.(*tracedOp).operator(false), nil
}

// Profile collects per-operator statistics of one execution: set
// Options.Profile to a new Profile, run the query, and read Root once the
// reader is exhausted or released.
type Profile struct {
	root *tracedOp
}

// Root is the operator tree with its statistics; nil before Execute.
func (p *Profile) Root() *Operator {
	if p == nil || p.root == nil {
		return nil
	}
	return p.root.operator(true)
}

// tracer wraps every operator of an execution in a tracedOp (when
// Options.Profile is set, or for Explain) and tracks the memory peak of
// the innermost running operator.
type tracer struct {
	// pending are the operators built whose parent is not built yet.
	pending []*tracedOp
	live    *atomic.Int64 // the budget's live bytes
	window  atomic.Int64  // the peak of live bytes since the running operator's window opened
}

// observe records v live bytes in the current window.
func (t *tracer) observe(v int64) {
	for {
		cur := t.window.Load()
		if v <= cur || t.window.CompareAndSwap(cur, v) {
			return
		}
	}
}

// buildAs builds n's operator with build, wrapping it when tracing.
func (ex *exec) buildAs(n planner.Node, build func() (op, error)) (op, error) {
	t := ex.trace
	if t == nil {
		return build()
	}
	mark := len(t.pending)
	o, err := build()
	if err != nil {
		t.pending = t.pending[:mark]
		return nil, err
	}
	return t.wrap(n, o, mark), nil
}

// absorber is an operator that runs its input operator inside itself
// (calling that input's own input directly): the two are one operator.
type absorber interface {
	absorbed() op
}

// describer is an operator that names itself (see Operator.Name).
type describer interface {
	describe() (name string, notes []string)
}

// wrap makes o (built for n, with the operators built since mark as its
// inputs) a tracedOp.
func (t *tracer) wrap(n planner.Node, o op, mark int) op {
	inputs := slices.Clone(t.pending[mark:])
	t.pending = t.pending[:mark]
	if w, ok := o.(*tracedOp); ok { // n was fused into an operator of its input
		w.nodes = slices.Insert(w.nodes, 0, n)
		w.name, w.notes = describeOp(w.op, w.nodes)
		t.pending = append(t.pending, w)
		return w
	}
	w := &tracedOp{op: o, tr: t, nodes: []planner.Node{n}}
	if a, ok := o.(absorber); ok {
		if f := a.absorbed(); f != nil {
			for i, in := range inputs {
				if in.op == f {
					w.nodes = append(w.nodes, in.nodes...)
					inputs = slices.Replace(inputs, i, i+1, in.inputs...)
					break
				}
			}
		}
	}
	w.inputs = inputs
	w.name, w.notes = describeOp(o, w.nodes)
	t.pending = append(t.pending, w)
	return w
}

// describeOp names o and notes its kernels: the operator's own
// description, plus the dictionary kernels of the filters it runs.
func describeOp(o op, nodes []planner.Node) (string, []string) {
	var name string
	var notes []string
	if d, ok := o.(describer); ok {
		name, notes = d.describe()
	} else {
		name = strings.TrimSuffix(strings.TrimPrefix(reflect.TypeOf(o).String(), "*engine."), "Op")
	}
	for _, n := range nodes {
		var preds []planner.Predicate
		var in *arrow.Schema
		switch n := n.(type) {
		case *planner.Filter:
			preds, in = n.Preds, n.Input.Schema()
		case *planner.Scan:
			preds, in = n.Filters, n.Out
		}
		if cols := dictCols(preds, in); len(cols) > 0 {
			notes = append(notes, "dictionary kernel on "+strings.Join(cols, ", "))
		}
	}
	return name, notes
}

// dictCols lists the columns of preds (OR groups included) that are
// dictionary-encoded strings in schema: their predicates run once per
// dictionary entry.
func dictCols(preds []planner.Predicate, schema *arrow.Schema) []string {
	var out []string
	for _, p := range preds {
		if p.Op == planner.OpAny {
			out = append(out, dictCols(p.Any, schema)...)
			continue
		}
		if p.Op == planner.OpIsNull || p.Op == planner.OpIsNotNull || p.Index < 0 || p.Index >= schema.NumFields() {
			continue
		}
		if isDictStr(schema.Field(p.Index).Type) && !slices.Contains(out, p.Col) {
			out = append(out, p.Col)
		}
	}
	return out
}

// tracedOp measures the operator it wraps.
type tracedOp struct {
	op
	tr     *tracer
	nodes  []planner.Node
	inputs []*tracedOp
	name   string
	notes  []string

	rows, batches int64
	total         time.Duration // inclusive of the inputs
	peak          int64
}

// unwrap returns the operator a tracedOp wraps (o itself otherwise).
func unwrap(o op) op {
	if t, ok := o.(*tracedOp); ok {
		return t.op
	}
	return o
}

// asFilter is o as a filter operator (seen through tracing), or nil.
func asFilter(o op) *filterOp {
	f, _ := unwrap(o).(*filterOp)
	return f
}

func (t *tracedOp) next() (arrow.RecordBatch, error) {
	start := time.Now()
	live := t.tr.live.Load()
	saved := t.tr.window.Swap(live)
	b, err := t.op.next()
	t.tr.observe(t.tr.live.Load())
	w := t.tr.window.Load()
	t.peak = max(t.peak, w)
	t.tr.window.Store(max(saved, w))
	t.total += time.Since(start)
	if b != nil {
		t.rows += b.NumRows()
		t.batches++
	}
	return b, err
}

// operator is t's tree as Operators (with stats when withStats).
func (t *tracedOp) operator(withStats bool) *Operator {
	o := &Operator{Name: t.name, Notes: t.notes, Nodes: t.nodes}
	var inTime time.Duration
	var rowsIn int64
	for _, in := range t.inputs {
		o.Inputs = append(o.Inputs, in.operator(withStats))
		inTime += in.total
		rowsIn += in.rows
	}
	if withStats {
		o.Stats = &OpStats{RowsIn: rowsIn, RowsOut: t.rows, Batches: t.batches, Time: max(t.total-inTime, 0), PeakBytes: t.peak}
		if s := scanOpOf(t.op); s != nil && len(t.inputs) == 0 {
			st := s.scanStats()
			o.Stats.RowsIn, o.Stats.ZonesSkipped, o.Stats.RowsSkipped = st.RowsRead, st.ZonesSkipped, st.RowsSkipped
		}
	}
	return o
}

// scanOpOf is the scan o runs itself (a scan, the filter pushed into one,
// an operator absorbing such a filter), or nil.
func scanOpOf(o op) *scanOp {
	if a, ok := o.(absorber); ok {
		if o = a.absorbed(); o == nil {
			return nil
		}
		o = unwrap(o)
	}
	if f, ok := o.(*filterOp); ok {
		o = f.in
	}
	s, _ := o.(*scanOp)
	return s
}

// peakAlloc passes allocations through and reports the budget's live
// bytes after each to the tracer (the budget's allocators count them
// before calling it).
type peakAlloc struct {
	memory.Allocator
	tr *tracer
}

func (p *peakAlloc) Allocate(size int) []byte {
	b := p.Allocator.Allocate(size)
	p.tr.observe(p.tr.live.Load())
	return b
}

func (p *peakAlloc) Reallocate(size int, b []byte) []byte {
	b = p.Allocator.Reallocate(size, b)
	p.tr.observe(p.tr.live.Load())
	return b
}

// Physical descriptions of the built-in operators.

func (s *scanOp) describe() (string, []string) { return "scan", s.notes }

func (f *filterOp) describe() (string, []string) {
	if s, ok := f.in.(*scanOp); ok { // filters pushed into the scan
		return "scan+filter", s.notes
	}
	if f.proj != nil {
		return "filter+project", []string{"copies only the projected columns of passing rows"}
	}
	return "filter", nil
}

func (p *projectOp) describe() (string, []string) { return "project", nil }

func (l *limitOp) describe() (string, []string) {
	return "limit", []string{"stops reading its input once satisfied"}
}

func (c *countOp) describe() (string, []string) {
	f := asFilter(c.in)
	switch {
	case f == nil:
		return "count", []string{"adds up batch lengths and null counts"}
	case len(f.preds) == 1 && f.preds[0].nullTest != nullNone && c.starOnly():
		return "filter+count", []string{"answered from null counts"}
	}
	return "filter+count", []string{"counts the filter's mask, copies no rows"}
}

func (c *countOp) absorbed() op {
	if f := asFilter(c.in); f != nil {
		return f
	}
	return nil
}

func (s *sortOp) describe() (string, []string) {
	switch {
	case s.selFilter() != nil:
		return "filter+top-k sort", []string{fmt.Sprintf("keeps %d rows; takes the filter's selection, copies only the winners", s.k)}
	case s.k >= 0:
		return "top-k sort", []string{fmt.Sprintf("keeps %d rows", s.k)}
	}
	return "sort", nil
}

func (s *sortOp) absorbed() op {
	if f := s.selFilter(); f != nil {
		return f
	}
	return nil
}

func (a *aggOp) describe() (string, []string) { return "hash aggregate", nil }

func (c *computeOp) describe() (string, []string) { return "compute", nil }

func (d *distinctOp) describe() (string, []string) { return "distinct", nil }
