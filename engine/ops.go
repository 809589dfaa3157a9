package engine

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// scanOp reads the source and re-labels its batches with the scan's schema.
type scanOp struct {
	ex      *exec
	dataset string
	rdr     array.RecordReader
	out     *arrow.Schema
	rest    arrow.RecordBatch // the part of a source batch not yet handed out (see conformSplit)
	// read counts the rows of the source's batches; stats are the
	// reader's own counts (catalog.ScanStats), taken when it is released.
	read     int64
	stats    catalog.ScanStats
	hasStats bool
	// notes are what the source says about this read (explain).
	notes []string
}

func (ex *exec) buildScan(n *planner.Scan) (op, error) {
	var preds []predicate
	if len(n.Filters) > 0 {
		var err error
		if preds, err = compilePreds(n.Filters, n.Out); err != nil {
			return nil, err
		}
	}
	var rdr array.RecordReader
	if !ex.dry { // Explain builds the operators without reading anything
		var err error
		if rdr, err = ex.openScan(n); err != nil {
			return nil, err
		}
	}
	var s op = &scanOp{ex: ex, dataset: n.Dataset, rdr: rdr, out: n.Out, notes: ex.scanNotes(n)}
	if len(preds) > 0 {
		s = newFilterOp(ex, s, n.Out, preds)
	}
	return s, nil
}

// openScan opens the source for n and checks the columns' types.
func (ex *exec) openScan(n *planner.Scan) (array.RecordReader, error) {
	rdr, err := ex.src.Scan(ex.ctx, ex.scanOptions(n))
	if err != nil {
		return nil, sourceErr(n.Dataset, err)
	}
	if rdr == nil {
		return nil, qerr.Internal(nil, "scan %s: the source returned no reader", n.Dataset)
	}
	if err := sameTypes(n.Dataset, rdr.Schema(), n.Out); err != nil {
		rdr.Release()
		return nil, err
	}
	return rdr, nil
}

// scanOptions is what the scan n asks its source for.
func (ex *exec) scanOptions(n *planner.Scan) catalog.ScanOptions {
	skipRows, skipped := ex.skipOf(n)
	return catalog.ScanOptions{Columns: n.Columns, BatchSize: ex.batchSize, Alloc: ex.soft, ZoneFilters: n.ZoneFilters,
		Filters: n.Filters, SkipRows: skipRows, Skipped: skipped, Limit: ex.limits[n], Pushed: n.Pushed}
}

// scanNotes is what a source that describes its reads says about n's
// (when explaining or profiling).
func (ex *exec) scanNotes(n *planner.Scan) []string {
	if ex.trace == nil { // not explaining or profiling
		return nil
	}
	if d, ok := ex.src.(catalog.ScanDescriber); ok {
		if s := d.DescribeScan(ex.scanOptions(n)); s != "" {
			return []string{s}
		}
	}
	return nil
}

// sameTypes checks that the source's columns have the plan's types; a
// string column may arrive dictionary-encoded and vice versa (conform
// converts it).
func sameTypes(dataset string, got, want *arrow.Schema) error {
	if got.NumFields() != want.NumFields() {
		return qerr.Internal(nil, "scan %s: the source returned %d columns, the plan expects %d", dataset, got.NumFields(), want.NumFields())
	}
	for i := range got.Fields() {
		g, w := got.Field(i).Type, want.Field(i).Type
		if !arrow.TypeEqual(g, w) && !(isStringLike(g) && isStringLike(w)) {
			return qerr.Internal(nil, "scan %s: column %d (%s) is %s in the source but %s in the plan",
				dataset, i, want.Field(i).Name, got.Field(i).Type, want.Field(i).Type)
		}
	}
	return nil
}

// sourceErr passes context and qerr errors through and wraps anything else.
func sourceErr(dataset string, err error) error {
	var qe *qerr.Error
	if errors.As(err, &qe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return qerr.Internal(err, "reading dataset %s: %v", dataset, err)
}

func (s *scanOp) next() (arrow.RecordBatch, error) {
	if s.rest != nil {
		if err := s.ex.ctx.Err(); err != nil {
			return nil, err
		}
		b := s.rest
		s.rest = nil
		defer b.Release()
		return s.conformSplit(b)
	}
	for {
		if err := s.ex.ctx.Err(); err != nil {
			return nil, err
		}
		if s.rdr == nil {
			return nil, nil
		}
		if !s.rdr.Next() {
			err := s.rdr.Err()
			s.close()
			if err != nil {
				return nil, sourceErr(s.dataset, err)
			}
			return nil, nil
		}
		b := s.rdr.RecordBatch()
		s.read += b.NumRows()
		if err := s.ex.budget.check(); err != nil {
			return nil, err
		}
		if b.NumRows() == 0 {
			continue
		}
		if err := sameTypes(s.dataset, b.Schema(), s.out); err != nil {
			return nil, err
		}
		return s.conformSplit(b)
	}
}

// conformSplit is conform for the longest prefix of b whose string columns
// the plan wants dictionary-encoded fit the plan's index types (all of b
// unless a column holds more distinct values than its index type
// addresses); the rest of b is kept in s.rest for the next call.
func (s *scanOp) conformSplit(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(b.NumRows())
	fit := n
	for i, c := range b.Columns() {
		if want, ok := s.out.Field(i).Type.(*arrow.DictionaryType); ok && !arrow.TypeEqual(c.DataType(), want) {
			fit = min(fit, encodeFit(c, want))
		}
	}
	if fit == n {
		return s.conform(b)
	}
	head := b.NewSlice(0, int64(fit))
	defer head.Release()
	s.rest = b.NewSlice(int64(fit), int64(n))
	return s.conform(head)
}

// conform re-labels a source batch with the scan's schema. String columns
// are converted between plain and dictionary encoding when the source's
// encoding differs from the plan's, and nulls inside dictionaries are
// folded into the index validity (normalizeDict).
func (s *scanOp) conform(b arrow.RecordBatch) (out arrow.RecordBatch, err error) {
	defer catchBudget(&err)
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	cols := b.Columns()
	cloned := false
	for i, c := range b.Columns() {
		want := s.out.Field(i).Type
		got := c.DataType()
		if arrow.TypeEqual(got, want) && (!isDictStr(got) || dictValues(c).NullN() == 0) {
			continue
		}
		if !cloned {
			cols, cloned = slices.Clone(cols), true
		}
		var conv arrow.Array
		switch {
		case arrow.TypeEqual(got, want): // dictionary strings
			conv = normalizeDict(s.ex.alloc, c)
		case isDictStr(got) && !isDictStr(want):
			conv, err = decodeDict(s.ex.alloc, c, want)
		case !isDictStr(got) && isDictStr(want):
			conv, err = encodeDict(s.ex.alloc, c, want.(*arrow.DictionaryType))
		default: // dictionaries of different index or value types
			var plain arrow.Array
			if plain, err = decodeDict(s.ex.alloc, c, want.(*arrow.DictionaryType).ValueType); err == nil {
				conv, err = encodeDict(s.ex.alloc, plain, want.(*arrow.DictionaryType))
				plain.Release()
			}
		}
		if err != nil {
			return nil, err
		}
		made = append(made, conv)
		cols[i] = conv
	}
	return array.NewRecordBatch(s.out, cols, b.NumRows()), nil
}

func (s *scanOp) close() {
	if s.rest != nil {
		s.rest.Release()
		s.rest = nil
	}
	if s.rdr != nil {
		s.stats, s.hasStats = catalog.StatsOf(s.rdr)
		s.rdr.Release()
		s.rdr = nil
	}
}

// scanStats are the scan's counts for EXPLAIN ANALYZE: the rows the
// source read (its own count when it keeps one: filters pushed into it
// drop rows before they reach the scan) and what its zone filters skipped.
func (s *scanOp) scanStats() catalog.ScanStats {
	st := s.stats
	if !s.hasStats {
		st.RowsRead = s.read
	}
	return st
}

// filterOp keeps the rows for which every predicate holds. With proj set
// (a Project fused into it) it outputs only those columns of its input,
// with schema out, so that dropped columns are never copied.
type filterOp struct {
	ex     *exec
	in     op
	schema *arrow.Schema
	preds  []predicate
	proj   []int
	out    *arrow.Schema
	mask   []bool
	sel    []int32
	refs   []rowRef
	sc     scratch
}

// fuseProject makes f output the columns idx of its input (schema out);
// it reports false when f already has a projection.
func (f *filterOp) fuseProject(idx []int, out *arrow.Schema) bool {
	if f.proj != nil {
		return false
	}
	f.proj, f.out = idx, out
	return true
}

// outCol maps a column index of f's output to its input.
func (f *filterOp) outCol(k int) int {
	if f.proj != nil {
		return f.proj[k]
	}
	return k
}

// project applies the fused projection to b (consumed).
func (f *filterOp) project(b arrow.RecordBatch) arrow.RecordBatch {
	if f.proj == nil {
		return b
	}
	defer b.Release()
	cols := make([]arrow.Array, len(f.proj))
	for i, k := range f.proj {
		cols[i] = b.Column(k)
	}
	return array.NewRecordBatch(f.out, cols, b.NumRows())
}

func newFilterOp(ex *exec, in op, schema *arrow.Schema, preds []predicate) *filterOp {
	return &filterOp{ex: ex, in: in, schema: schema, preds: preds}
}

func (f *filterOp) next() (arrow.RecordBatch, error) {
	b, sel, err := f.nextSel()
	if err != nil || b == nil || sel == nil {
		return b, err
	}
	refs := f.refs[:0]
	for _, r := range sel {
		refs = append(refs, rowRef{0, r})
	}
	f.refs = refs
	out, err := gatherBatch(f.ex.alloc, f.ex.soft, b.Schema(), b, refs)
	b.Release()
	return out, err
}

// nextSel returns the next input batch in which some row passes, with the
// indices of the passing rows in sel (valid until the next call), or sel
// nil when every row passes. The caller owns the batch.
func (f *filterOp) nextSel() (b arrow.RecordBatch, sel []int32, err error) {
	for {
		if err := f.ex.ctx.Err(); err != nil {
			return nil, nil, err
		}
		b, err := f.in.next()
		if err != nil || b == nil {
			return nil, nil, err
		}
		mask := f.evalMask(b)
		f.sel = selectRows(mask, f.sel)
		switch len(f.sel) {
		case len(mask):
			return f.project(b), nil, nil
		case 0:
			b.Release()
			continue
		}
		return f.project(b), f.sel, nil
	}
}

// evalMask evaluates the predicates on b into the operator's mask (valid
// until the next call), stopping as soon as no row is left.
func (f *filterOp) evalMask(b arrow.RecordBatch) []bool {
	n := int(b.NumRows())
	if cap(f.mask) < n {
		f.mask = make([]bool, n)
	}
	mask := f.mask[:n]
	fillTrue(mask)
	cols := b.Columns()
	for i, p := range f.preds {
		if i > 0 && !anyTrue(mask) {
			break
		}
		p.eval(cols, mask, &f.sc)
	}
	clear(f.sc.strs) // drop views into the batch
	return mask
}

func (f *filterOp) close() { f.in.close() }

// projectOp selects columns without copying them.
type projectOp struct {
	ex  *exec
	in  op
	idx []int
	out *arrow.Schema
}

func (p *projectOp) next() (arrow.RecordBatch, error) {
	if err := p.ex.ctx.Err(); err != nil {
		return nil, err
	}
	b, err := p.in.next()
	if err != nil || b == nil {
		return nil, err
	}
	defer b.Release()
	cols := make([]arrow.Array, len(p.idx))
	for i, k := range p.idx {
		cols[i] = b.Column(k)
	}
	return array.NewRecordBatch(p.out, cols, b.NumRows()), nil
}

func (p *projectOp) close() { p.in.close() }

// limitOp skips the first skip rows and returns at most remain (< 0:
// unlimited). Once satisfied it closes its input at once.
type limitOp struct {
	ex     *exec
	in     op
	skip   int64
	remain int64
	closed bool
	// skipped counts the rows of skip the source left out (limit_skip.go);
	// taken once, when the first batch arrives.
	skipped *atomic.Int64
}

func (l *limitOp) next() (arrow.RecordBatch, error) {
	for {
		if l.remain == 0 {
			l.close()
			return nil, nil
		}
		if err := l.ex.ctx.Err(); err != nil {
			return nil, err
		}
		b, err := l.in.next()
		if err != nil || b == nil {
			return nil, err
		}
		if l.skipped != nil {
			l.skip -= l.skipped.Load()
			l.skipped = nil
		}
		n := b.NumRows()
		if l.skip >= n {
			l.skip -= n
			b.Release()
			continue
		}
		lo, hi := l.skip, n
		l.skip = 0
		if l.remain >= 0 && hi-lo > l.remain {
			hi = lo + l.remain
		}
		out := b
		if lo != 0 || hi != n {
			out = b.NewSlice(lo, hi)
			b.Release()
		}
		if l.remain > 0 {
			l.remain -= hi - lo
			if l.remain == 0 {
				l.close() // early exit: stop reading the input
			}
		}
		return out, nil
	}
}

func (l *limitOp) close() {
	if !l.closed {
		l.closed = true
		l.in.close()
	}
}

// distinctOp keeps the first occurrence of every distinct tuple of its key
// columns (all columns for Distinct, the listed ones for Deduplicate),
// passing whole rows through in input order.
type distinctOp struct {
	ex     *exec
	in     op
	keys   []int
	table  *groupTable
	acct   acct
	cols   []arrow.Array
	refs   []rowRef
	closed bool
}

// newDistinctOp builds the operator; keys nil means every column.
func newDistinctOp(ex *exec, schema *arrow.Schema, keys []int, what string) (*distinctOp, error) {
	if keys == nil {
		for i := range schema.Fields() {
			keys = append(keys, i)
		}
	}
	types := make([]arrow.DataType, len(keys))
	for i, k := range keys {
		if k < 0 || k >= schema.NumFields() {
			return nil, qerr.Internal(nil, "%s: column index %d out of range for %d input columns", what, k, schema.NumFields())
		}
		f := schema.Field(k)
		if !supportedCompute(f.Type) {
			return nil, qerr.Unsupported(qerr.CodeUnsupportedType, "%s cannot compare column %q of type %s", what, f.Name, f.Type).
				WithHint("select only numeric, string, boolean, date or timestamp columns with %s", what)
		}
		types[i] = f.Type
	}
	d := &distinctOp{ex: ex, keys: keys, acct: acct{b: ex.budget}, cols: make([]arrow.Array, len(types))}
	d.table = newGroupTable(types, false, &d.acct)
	return d, nil
}

func (d *distinctOp) next() (arrow.RecordBatch, error) {
	for {
		if err := d.ex.ctx.Err(); err != nil {
			return nil, err
		}
		b, err := d.in.next()
		if err != nil || b == nil {
			return nil, err
		}
		n := int(b.NumRows())
		for i, k := range d.keys {
			d.cols[i] = b.Column(k)
		}
		first := int32(d.table.n)
		gids := d.table.assign(d.cols, n)
		clear(d.cols)
		refs := d.refs[:0]
		for i, g := range gids {
			if g == first { // ids are handed out in row order
				refs = append(refs, rowRef{0, int32(i)})
				first++
			}
		}
		d.refs = refs
		if err := d.acct.check(); err != nil {
			b.Release()
			return nil, err
		}
		switch len(refs) {
		case 0:
			b.Release()
			continue
		case n:
			return b, nil
		}
		out, err := gatherBatch(d.ex.alloc, d.ex.soft, b.Schema(), b, refs)
		b.Release()
		return out, err
	}
}

func (d *distinctOp) close() {
	if d.closed {
		return
	}
	d.closed = true
	if d.in != nil {
		d.in.close()
	}
	d.table.reset()
	d.acct.release()
}
