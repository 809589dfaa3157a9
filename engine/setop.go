package engine

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// Set operations (planner.SetOp). Each input's batches are first converted
// to the output types (setConv: the expression evaluator's casts, so the
// widening is the one expressions use). UNION ALL streams the left input,
// then the right one. The others go through one groupTable (keys.go: the
// group-by key machinery, nulls equal, NaN equal, -0 = 0) over whole rows:
//
//   - union: both inputs stream through the table; a row whose group is new
//     is emitted (first occurrence, like Distinct).
//   - intersect / except [all]: the right input is read first, counting its
//     rows per group (groups 0..nRight-1); then the left input streams:
//     intersect emits a row of a right group while its count is positive
//     (all: decrementing it; distinct: zeroing it), except emits a row of a
//     new group on its first occurrence (distinct) or every row of a group
//     whose right count is used up (all: decrementing it first).
//
// The table and counts are charged to the query's memory budget; under a
// budget the table also stores its keys, so that the operator can spill
// to disk when the query nears its limit (setop_spill.go).

// setConv converts the batches of one input to the output schema.
type setConv struct {
	ex    *exec
	out   *arrow.Schema
	casts []planner.Expr // per column: nil when the type is already the output's
	ev    evaluator
}

func newSetConv(ex *exec, in, out *arrow.Schema, a *acct) (*setConv, error) {
	c := &setConv{ex: ex, out: out, casts: make([]planner.Expr, out.NumFields())}
	c.ev.pool.acct = a
	c.ev.mem = ex.alloc
	if in.NumFields() != out.NumFields() {
		return nil, qerr.Internal(nil, "set operation: input has %d columns, output %d", in.NumFields(), out.NumFields())
	}
	for i, f := range in.Fields() {
		to := out.Field(i).Type
		if arrow.TypeEqual(f.Type, to) || f.Type.ID() == arrow.NULL {
			continue
		}
		et, ok := funcs.ExprType(f.Type)
		if !ok || !exprInput(f.Type) || !funcs.CanCast(et, to) {
			return nil, qerr.Unsupported(qerr.CodeUnsupportedType, "set operation: column %d of type %s cannot be converted to %s", i+1, f.Type, to)
		}
		c.casts[i] = &planner.Cast{X: &planner.ColRef{Name: f.Name, Index: i, Typ: et}, To: to, Implicit: true}
	}
	return c, nil
}

// convert returns b (owned) as a batch of the output schema (owned).
func (c *setConv) convert(b arrow.RecordBatch) (out arrow.RecordBatch, err error) {
	defer b.Release()
	defer catchBudget(&err)
	n := int(b.NumRows())
	cols := make([]arrow.Array, b.NumCols())
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	defer c.ev.reset()
	for i, col := range b.Columns() {
		to := c.out.Field(i).Type
		switch {
		case c.casts[i] != nil:
			c.ev.reset()
			c.ev.name = c.out.Field(i).Name
			v, err := c.ev.eval(c.casts[i], b.Columns(), n)
			if err != nil {
				return nil, err
			}
			arr := ownedArray(c.ex.alloc, v)
			made = append(made, arr)
			cols[i] = arr
		case !arrow.TypeEqual(col.DataType(), to): // a column of the null type
			arr := array.MakeArrayOfNull(c.ex.alloc, to, n)
			made = append(made, arr)
			cols[i] = arr
		default:
			cols[i] = col
		}
	}
	return array.NewRecordBatch(c.out, cols, int64(n)), nil
}

// setOpOp runs a set operation.
type setOpOp struct {
	ex          *exec
	n           *planner.SetOp
	left, right op
	lconv       *setConv
	rconv       *setConv
	acct        acct

	table  *groupTable // nil for union all
	cols   []arrow.Array
	refs   []rowRef
	counts []int64 // intersect/except: right rows per right group
	nRight int32
	built  bool
	onLeft bool // union: still reading the left input
	closed bool

	leftPhase bool      // intersect / except: the right input is counted
	level     int       // spill level (0: the operator; 1...: a partition's, setop_spill.go)
	spill     *setSpill // set once spilled
}

// buildSetOp builds the operator of n: each input with the source of its
// own first scan (inputExec).
func (ex *exec) buildSetOp(n *planner.SetOp) (op, error) {
	out := n.Schema()
	s := &setOpOp{ex: ex, n: n, acct: acct{b: ex.budget}, onLeft: true}
	var err error
	if s.lconv, err = newSetConv(ex, n.Left.Schema(), out, &s.acct); err != nil {
		return nil, err
	}
	if s.rconv, err = newSetConv(ex, n.Right.Schema(), out, &s.acct); err != nil {
		return nil, err
	}
	if !(n.Kind == planner.SetUnion && n.All) {
		types, err := setKeyTypes(n)
		if err != nil {
			return nil, err
		}
		s.table = newGroupTable(types, ex.budget.limit > 0, &s.acct) // keys stored to spill (setop_spill.go)
		s.cols = make([]arrow.Array, len(types))
	}
	lx, err := ex.inputExec(n.Left)
	if err != nil {
		return nil, err
	}
	rx, err := ex.inputExec(n.Right)
	if err != nil {
		return nil, err
	}
	if s.left, err = lx.build(n.Left); err != nil {
		return nil, err
	}
	if s.right, err = rx.build(n.Right); err != nil {
		s.left.close()
		return nil, err
	}
	return s, nil
}

// setKeyTypes are the key table's column types of n's rows.
func setKeyTypes(n *planner.SetOp) ([]arrow.DataType, error) {
	out := n.Schema()
	types := make([]arrow.DataType, out.NumFields())
	for i, f := range out.Fields() {
		if !supportedCompute(f.Type) && f.Type.ID() != arrow.NULL {
			return nil, qerr.Unsupported(qerr.CodeUnsupportedType, "%s cannot compare column %q of type %s", n.Name(), f.Name, f.Type).
				WithHint("select only numeric, string, boolean, date or timestamp columns in a set operation other than UNION ALL")
		}
		types[i] = f.Type
		if f.Type.ID() == arrow.NULL { // all nulls: any key type compares them
			types[i] = arrow.PrimitiveTypes.Int64
		}
	}
	return types, nil
}

// inputExec returns the exec that builds the subtree n: ex itself, or a
// copy reading the source of n's first scan when that is another dataset
// than ex's (one of Options.Sources).
func (ex *exec) inputExec(n planner.Node) (*exec, error) {
	sc := planner.ScanOf(n)
	if sc == nil || sc.Dataset == ex.srcDataset {
		return ex, nil
	}
	src, ok := ex.sources[sc.Dataset]
	if !ok || src == nil {
		return nil, qerr.Internal(nil, "execute: no source for dataset %s", sc.Dataset)
	}
	rx := *ex
	rx.src, rx.srcDataset = src, sc.Dataset
	return &rx, nil
}

// pull returns the next converted batch of the left (or right) input.
func (s *setOpOp) pull(left bool) (arrow.RecordBatch, error) {
	if err := s.ex.ctx.Err(); err != nil {
		return nil, err
	}
	in, conv := s.right, s.rconv
	if left {
		in, conv = s.left, s.lconv
	}
	b, err := in.next()
	if err != nil || b == nil || conv == nil { // no conversion: a partition's spill files (setop_spill.go)
		return b, err
	}
	return conv.convert(b)
}

// assign returns the group ids of b's rows.
func (s *setOpOp) assign(b arrow.RecordBatch) (gids []int32, err error) {
	defer catchBudget(&err)
	n := int(b.NumRows())
	for i := range s.cols {
		col := b.Column(i)
		if col.DataType().ID() == arrow.NULL { // keyed as int64 nulls (see buildSetOp)
			col = array.MakeArrayOfNull(s.ex.alloc, arrow.PrimitiveTypes.Int64, n)
			defer col.Release()
		}
		s.cols[i] = col
	}
	gids = s.table.assign(s.cols, n)
	clear(s.cols)
	if s.canSpill() { // over the budget the caller spills, releasing the table (setop_spill.go)
		return gids, nil
	}
	return gids, s.acct.check()
}

func (s *setOpOp) next() (arrow.RecordBatch, error) {
	if s.n.Kind == planner.SetUnion {
		return s.nextUnion()
	}
	if !s.built {
		s.built = true
		if err := s.consumeRight(); err != nil {
			return nil, err
		}
	}
	for {
		if s.spill != nil {
			return s.spill.next()
		}
		b, err := s.pull(true)
		if err != nil || b == nil {
			return nil, err
		}
		out, err := s.filter(b, s.keep)
		if out, err = s.spillAfter(out, err); out != nil || err != nil {
			return out, err
		}
	}
}

// spillAfter spills when due after a batch whose output is out (see
// overBudget): out is returned first, the spill's rows after it.
func (s *setOpOp) spillAfter(out arrow.RecordBatch, err error) (arrow.RecordBatch, error) {
	if err != nil || s.spill != nil || !s.overBudget() {
		return out, err
	}
	if err := s.startSpill(); err != nil {
		if out != nil {
			out.Release()
		}
		return nil, err
	}
	return out, nil
}

// keep decides, for intersect and except, whether a left row of group g is emitted.
func (s *setOpOp) keep(g int32) bool {
	if g < s.nRight {
		c := &s.counts[g]
		if s.n.Kind == planner.SetIntersect {
			if *c <= 0 {
				return false
			}
			if s.n.All {
				*c--
			} else {
				*c = 0
			}
			return true
		}
		// except
		if *c > 0 && s.n.All {
			*c--
			return false
		}
		return s.n.All
	}
	if s.n.Kind == planner.SetIntersect {
		return false
	}
	// except, a group the right side does not have
	if s.n.All {
		return true
	}
	if g == int32(len(s.counts)) { // its first occurrence (ids are handed out in row order)
		s.counts = append(s.counts, 0)
		s.acct.charge(8)
		return true
	}
	return false
}

// consumeRight reads the right input into the table, counting rows per group.
func (s *setOpOp) consumeRight() error {
	for {
		b, err := s.pull(false)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		gids, err := s.assign(b)
		var counted []int64 // a partition's R file: rows with their counts (setop_spill.go)
		if err == nil && int(b.NumCols()) > len(s.cols) {
			counted = values[int64](b.Column(len(s.cols)))
		}
		for i, g := range gids {
			if int(g) == len(s.counts) {
				s.counts = append(s.counts, 0)
				s.acct.charge(8)
			}
			if counted != nil {
				s.counts[g] += counted[i]
			} else {
				s.counts[g]++
			}
		}
		b.Release()
		if err != nil {
			return err
		}
		if s.overBudget() {
			return s.startSpill()
		}
	}
	s.nRight = int32(s.table.n)
	s.leftPhase = true
	return nil
}

// nextUnion streams the left input, then the right one; without ALL only
// the first occurrence of each row passes.
func (s *setOpOp) nextUnion() (arrow.RecordBatch, error) {
	for {
		if s.spill != nil {
			return s.spill.next()
		}
		b, err := s.pull(s.onLeft)
		if err != nil {
			return nil, err
		}
		if b == nil {
			if !s.onLeft {
				return nil, nil
			}
			s.onLeft = false
			continue
		}
		if s.table == nil {
			if b.NumRows() == 0 {
				b.Release()
				continue
			}
			return b, nil
		}
		first := int32(s.table.n)
		isNew := func(g int32) bool { // ids are handed out in row order
			if g != first {
				return false
			}
			first++
			return true
		}
		out, err := s.filter(b, isNew)
		if out, err = s.spillAfter(out, err); out != nil || err != nil {
			return out, err
		}
	}
}

// filter returns the rows of b (owned) whose group keep accepts (called
// in row order), or nil when there are none.
func (s *setOpOp) filter(b arrow.RecordBatch, keep func(g int32) bool) (arrow.RecordBatch, error) {
	gids, err := s.assign(b)
	if err != nil {
		b.Release()
		return nil, err
	}
	refs := s.refs[:0]
	for i, g := range gids {
		if keep(g) {
			refs = append(refs, rowRef{0, int32(i)})
		}
	}
	s.refs = refs
	switch len(refs) {
	case 0:
		b.Release()
		return nil, nil
	case int(b.NumRows()):
		return b, nil
	}
	mem := s.ex.alloc
	if s.overBudget() { // a spill follows and releases the table (setop_spill.go)
		mem = s.ex.soft
	}
	out, err := gatherBatch(mem, s.ex.soft, b.Schema(), b, refs)
	b.Release()
	return out, err
}

func (s *setOpOp) describe() (string, []string) {
	if s.n.Kind == planner.SetUnion && s.n.All {
		return "union all", nil
	}
	return "hash " + s.n.Name(), []string{"nulls compare equal"}
}

func (s *setOpOp) close() {
	if s.closed {
		return
	}
	s.closed = true
	if s.left != nil {
		s.left.close()
	}
	if s.right != nil {
		s.right.close()
	}
	for _, c := range []*setConv{s.lconv, s.rconv} {
		if c != nil {
			c.ev.reset()
		}
	}
	if s.table != nil {
		s.table.reset()
	}
	if s.spill != nil {
		s.spill.close()
		s.spill = nil
	}
	s.counts = nil
	s.acct.release()
}
