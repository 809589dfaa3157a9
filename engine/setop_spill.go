package engine

import (
	"os"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/planner"
)

// Spilling set operations (UNION, INTERSECT, EXCEPT [ALL] through the key
// table, setop.go). Under a memory budget the table stores its groups' keys;
// when after a batch the query holds more than 3/4 of its budget, the
// operator spills, like the Grace hash join (join_spill.go): rows are
// partitioned by a hash of the whole row (nulls hashed as a value of their
// own, floats normalized as the table compares them) into graceParts pairs
// of Arrow IPC files in a private directory under Options.SpillDir:
//
//   - R files: the table's groups, each with its count (an int64 column
//     after the output columns): the right input's rows counted so far
//     (intersect / except) or the rows already emitted (union), then the
//     right input's unread rows (count 1 each);
//   - L files: the left input's unread rows (union: every unread row, of
//     either input).
//
// Equal rows land in the same partition, so each partition is an
// independent set operation over its two files, run by a setOpOp of its
// own (which spills again on other bits of the hash, up to graceMaxLevel
// levels): intersect / except as the operator itself, with the counts
// reloaded (except distinct also reloads the left groups it has emitted,
// with count 0, so that they are not emitted again); union as an except
// distinct of its unread rows minus the rows already emitted. Only rows of
// L files are emitted, so partitions without one are skipped. The result
// is exact; the rows emitted after the spill come partition by partition.

// setopSpills counts the set operations that spilled (tests check it).
var setopSpills atomic.Int64

// setSpill runs the partition set operations of one spilled operator.
type setSpill struct {
	s     *setOpOp
	tmp   *artifacts.TempDir
	left  []string // L files ("" = empty)
	right []string // R files
	part  int
	cur   *setOpOp
}

// canSpill reports whether the operator can still spill (its table
// stores its keys, and the partitions are not too deep yet).
func (s *setOpOp) canSpill() bool {
	return s.table != nil && s.table.store && s.level < graceMaxLevel
}

// overBudget reports whether the operator should spill now: it holds a
// table storing its keys and the query holds more than 3/4 of its budget.
// (The table's growth is checked here, not by assign: one doubling may
// take it past the limit, and spilling gives it all back.)
func (s *setOpOp) overBudget() bool {
	l := s.ex.budget.limit
	return s.table != nil && s.table.store && l > 0 && s.ex.budget.live.Load() > l-l/4
}

// startSpill spills s: the groups the partitions must know (dumpGroups)
// into R files, then the unread rows: while the right input is being
// counted (intersect / except), its rest into R files and the left input
// into L files; later, the rest of the left input (union: and then the
// right input) into L files. s's table and counts are released.
func (s *setOpOp) startSpill() (err error) {
	if s.level >= graceMaxLevel {
		return s.ex.budget.err()
	}
	tmp, err := s.ex.spillTemp("setop-spill-", "set operation")
	if err != nil {
		return err
	}
	setopSpills.Add(1)
	sp := &setSpill{s: s, tmp: tmp}
	defer func() {
		if err != nil {
			sp.close()
		} else {
			s.spill = sp
		}
	}()
	out := s.n.Schema()
	keys := make([]int, out.NumFields())
	rfields := make([]arrow.Field, 0, len(keys)+1)
	for i, f := range out.Fields() {
		keys[i] = i
		rfields = append(rfields, f)
	}
	rfields = append(rfields, arrow.Field{Name: "count", Type: arrow.PrimitiveTypes.Int64})
	rw := newPartWriters(s.ex, tmp.Path, "right", arrow.NewSchema(rfields, nil), keys, s.level)
	defer rw.abort()
	lw := newPartWriters(s.ex, tmp.Path, "left", out, keys, s.level)
	defer lw.abort()
	if err := s.dumpGroups(rw); err != nil {
		return err
	}
	s.table.reset()
	s.table = nil
	s.counts = nil
	s.acct.release()
	switch {
	case s.n.Kind == planner.SetUnion:
		if s.onLeft {
			if err := s.drainSpill(true, lw); err != nil {
				return err
			}
			s.onLeft = false
		}
		err = s.drainSpill(false, lw)
	case !s.leftPhase:
		if err = s.drainSpill(false, rw); err == nil {
			err = s.drainSpill(true, lw)
		}
	default:
		err = s.drainSpill(true, lw)
	}
	if err != nil {
		return err
	}
	if sp.right, err = rw.finish(); err != nil {
		return err
	}
	sp.left, err = lw.finish()
	return err
}

// dumpGroups writes the groups the partitions must know to R files, each
// with its count: every group emitted (union); every group of the right
// input with its count left (intersect / except); for except distinct
// also the left groups already emitted (count 0: they suppress later rows
// as a right group does).
func (s *setOpOp) dumpGroups(w *partWriters) (err error) {
	defer catchBudget(&err)
	n := s.table.n
	if s.leftPhase && !(s.n.Kind == planner.SetExcept && !s.n.All) {
		n = int(s.nRight) // intersect, except all: left-only groups need no memory
	}
	ncol := len(s.table.cols)
	step := s.ex.batchSize
	for _, f := range w.schema.Fields()[:ncol] {
		if dt, ok := f.Type.(*arrow.DictionaryType); ok {
			step = int(min(int64(step), maxCode(dt)+1)) // every batch's values fit the index type
		}
	}
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		cols := make([]arrow.Array, ncol+1)
		for c := range ncol {
			cols[c] = s.table.buildKey(s.ex.soft, c, lo, hi) // plain strings for dictionary columns
			switch want := w.schema.Field(c).Type; {
			case want.ID() == arrow.NULL: // keyed as int64 nulls (buildSetOp)
				cols[c].Release()
				cols[c] = array.MakeArrayOfNull(s.ex.soft, want, hi-lo)
			case isDictStr(want):
				enc, err := encodeDict(s.ex.soft, cols[c], want.(*arrow.DictionaryType))
				cols[c].Release()
				if err != nil {
					for _, x := range cols[:c] {
						x.Release()
					}
					return err
				}
				cols[c] = enc
			}
		}
		counts := make([]int64, hi-lo)
		if s.n.Kind != planner.SetUnion {
			copy(counts, s.counts[min(lo, len(s.counts)):min(hi, len(s.counts))])
		}
		cols[ncol] = buildFixed(s.ex.soft, arrow.PrimitiveTypes.Int64, counts, nil)
		b := array.NewRecordBatch(w.schema, cols, int64(hi-lo))
		for _, c := range cols {
			c.Release()
		}
		err := w.writeRows(b, ncol)
		b.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// drainSpill writes the unread rows of one input to w: an R file's rows
// with a count (1 each, unless they come from an R file and have one).
func (s *setOpOp) drainSpill(left bool, w *partWriters) error {
	ncol := s.n.Schema().NumFields()
	for {
		b, err := s.pull(left)
		if err != nil || b == nil {
			return err
		}
		if w.schema.NumFields() > ncol && int(b.NumCols()) == ncol {
			ones := make([]int64, b.NumRows())
			for i := range ones {
				ones[i] = 1
			}
			c := buildFixed(s.ex.soft, arrow.PrimitiveTypes.Int64, ones, nil)
			cols := append(append([]arrow.Array(nil), b.Columns()...), c)
			nb := array.NewRecordBatch(w.schema, cols, b.NumRows())
			c.Release()
			b.Release()
			b = nb
		}
		err = w.writeRows(b, ncol)
		b.Release()
		if err != nil {
			return err
		}
	}
}

// writeRows partitions the rows of b (which the caller keeps) by the hash
// of its first ncol columns, nulls hashed as a value.
func (w *partWriters) writeRows(b arrow.RecordBatch, ncol int) error {
	n := int(b.NumRows())
	hash := make([]uint64, n)
	one := []int{0}
	for c := range ncol {
		col := b.Column(c)
		if col.DataType().ID() == arrow.NULL {
			for i := range hash {
				hash[i] = combineHash(hash[i], setNullHash)
			}
			continue
		}
		w.kv.load([]arrow.Array{col}, one, n)
		for i, h := range w.kv.hash {
			if !w.kv.ok[i] {
				h = setNullHash
			}
			hash[i] = combineHash(hash[i], h)
		}
	}
	return w.scatter(b, func(i int) int { return partOf(hash[i], w.level) })
}

// setNullHash is the hash of a null value in a spilled set operation's rows.
const setNullHash = 0x5bd1e9955bd1e995

// next returns the next batch of the partition set operations.
func (sp *setSpill) next() (arrow.RecordBatch, error) {
	for {
		if sp.cur == nil {
			if sp.part >= graceParts {
				return nil, nil
			}
			p := sp.part
			sp.part++
			if sp.left[p] == "" { // only left rows are emitted
				continue
			}
			cur, err := sp.s.partition(sp.right[p], sp.left[p])
			if err != nil {
				return nil, err
			}
			sp.cur = cur
		}
		b, err := sp.cur.next()
		if err != nil || b != nil {
			return b, err
		}
		sp.cur.close()
		sp.cur = nil
		for _, f := range []string{sp.left[sp.part-1], sp.right[sp.part-1]} {
			if f != "" {
				_ = os.Remove(f)
			}
		}
	}
}

// partition is the set operation of one partition: right over the R file,
// left over the L file, one level down.
func (s *setOpOp) partition(right, left string) (*setOpOp, error) {
	n := s.n
	if n.Kind == planner.SetUnion { // its unread rows minus those already emitted
		cp := *n
		cp.Kind, cp.All = planner.SetExcept, false
		n = &cp
	}
	sub := &setOpOp{ex: s.ex, n: n, acct: acct{b: s.ex.budget}, level: s.level + 1, onLeft: true}
	types, err := setKeyTypes(s.n)
	if err != nil {
		return nil, err
	}
	sub.table = newGroupTable(types, true, &sub.acct)
	sub.cols = make([]arrow.Array, len(sub.table.cols))
	if sub.right, err = openSpillOp(s.ex, right); err != nil {
		return nil, err
	}
	if sub.left, err = openSpillOp(s.ex, left); err != nil {
		sub.right.close()
		return nil, err
	}
	return sub, nil
}

func (sp *setSpill) close() {
	if sp.cur != nil {
		sp.cur.close()
		sp.cur = nil
	}
	_ = sp.tmp.Remove()
}
