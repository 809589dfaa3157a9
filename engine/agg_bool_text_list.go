// count_if, string_agg and list / array_agg (bool_and / bool_or are
// min / max over booleans: minMaxBool).

package engine

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/funcs"
	"github.com/quarrydb/quarry/internal/qerr"
)

// countIf counts the true values; a group without non-null values is null.
type countIf struct {
	counts []int64
	seen   []bool
	buf    []uint8
}

func (s *countIf) grow(n int)        { s.counts, s.seen = growTo(s.counts, n), growTo(s.seen, n) }
func (s *countIf) groupBytes() int64 { return 9 }

func (s *countIf) update(col arrow.Array, gids []int32) error {
	s.buf = boolBytes(col, s.buf)
	v := validityOf(col)
	counts, seen := s.counts, s.seen
	for i, g := range gids {
		if v.ok(i) {
			counts[g] += int64(s.buf[i])
			seen[g] = true
		}
	}
	return nil
}

func (s *countIf) build(mem memory.Allocator, lo, hi int) arrow.Array {
	return buildFixed(mem, arrow.PrimitiveTypes.Int64, s.counts[lo:hi], s.seen[lo:hi])
}

// stringAgg is string_agg: each group's non-null values in input order,
// joined by sep, in a buffer of its own (charged to the budget), at most
// funcs.MaxStringAggBytes long.
type stringAgg struct {
	dt   arrow.DataType
	sep  string
	col  string
	bufs [][]byte
	seen []bool
	strs []string
	cbuf []int32
	acct *acct
}

func (s *stringAgg) grow(n int)        { s.bufs, s.seen = growTo(s.bufs, n), growTo(s.seen, n) }
func (s *stringAgg) groupBytes() int64 { return 25 }

func (s *stringAgg) update(col arrow.Array, gids []int32) error {
	s.strs = strViewsAny(col, s.strs, &s.cbuf)
	defer clear(s.strs)
	v := validityOf(col)
	var delta int64
	for i, g := range gids {
		if !v.ok(i) {
			continue
		}
		b := s.bufs[g]
		before := cap(b)
		if s.seen[g] {
			b = append(b, s.sep...)
		}
		b = append(b, s.strs[i]...)
		if len(b) > funcs.MaxStringAggBytes {
			return qerr.Invalid(qerr.CodeOversizeResult, "string_agg(%s): a group's result is longer than %d bytes", s.col, funcs.MaxStringAggBytes).
				WithHint("filter the rows (the aggregate's filter, or filters), group by more columns, or use count_distinct / list with a limit")
		}
		s.bufs[g], s.seen[g] = b, true
		delta += int64(cap(b) - before)
	}
	s.acct.charge(delta)
	return nil
}

func (s *stringAgg) build(mem memory.Allocator, lo, hi int) arrow.Array {
	out := make([]string, hi-lo)
	for i, b := range s.bufs[lo:hi] {
		out[i] = unsafe.String(unsafe.SliceData(b), len(b)) // copied by buildStrings
	}
	return buildStrings(mem, s.dt, out, s.seen[lo:hi])
}

// listAgg is list / array_agg: every row's value (nulls included) and
// group, appended in input order; once the input has ended (finish) the
// values are reordered by group, so that each range of groups builds one
// list array over a contiguous run of values.
type listAgg struct {
	dt     arrow.DataType // list type
	col    string
	rows   *valStore // per row, input order; after finish: by group
	gids   []int32   // group of each row
	counts []int64   // per group
	offs   []int64   // after finish: group g's values are [offs[g], offs[g+1])
	n      int
	acct   *acct
}

func newListAgg(in, out arrow.DataType, col string, a *acct) aggState {
	if !supportedCompute(in) {
		return nil
	}
	return &listAgg{dt: out, col: col, rows: newValStore(in, a), acct: a}
}

func (s *listAgg) grow(n int)        { s.counts = growTo(s.counts, n) }
func (s *listAgg) groupBytes() int64 { return 8 }

func (s *listAgg) update(col arrow.Array, gids []int32) error {
	s.rows.load(col)
	defer s.rows.unload()
	s.rows.grow(s.n + len(gids))
	for i, g := range gids {
		s.counts[g]++
		if s.counts[g] > funcs.MaxListItems {
			return qerr.Invalid(qerr.CodeOversizeResult, "list(%s): a group has more than %d rows", s.col, funcs.MaxListItems).
				WithHint("filter the rows (the aggregate's filter, or filters), group by more columns, or use count / count_distinct")
		}
		s.rows.set(s.n+i, i)
	}
	s.gids = append(s.gids, gids...)
	s.n += len(gids)
	s.acct.charge(int64(len(gids)) * (valStoreBytes + 4))
	return nil
}

// finish reorders the rows by group (a stable counting sort).
func (s *listAgg) finish() error {
	ng := len(s.counts)
	s.offs = make([]int64, ng+1)
	for g, c := range s.counts {
		s.offs[g+1] = s.offs[g] + c
	}
	next := make([]int64, ng)
	copy(next, s.offs[:ng])
	src := s.rows.k
	dst := &s.rows.k
	dst.gvalid = make([]bool, s.n)
	if src.str {
		dst.gstrs = make([]string, s.n)
	} else {
		dst.gbits = make([]uint64, s.n)
	}
	for r, g := range s.gids[:s.n] {
		k := next[g]
		next[g]++
		dst.gvalid[k] = src.gvalid[r]
		if src.str {
			dst.gstrs[k] = src.gstrs[r]
		} else {
			dst.gbits[k] = src.gbits[r]
		}
	}
	s.gids = nil
	return nil
}

func (s *listAgg) build(mem memory.Allocator, lo, hi int) arrow.Array {
	n := hi - lo
	base := s.offs[lo]
	elems := s.rows.build(mem, int(base), int(s.offs[hi]))
	defer elems.Release()
	offs := make([]int32, n+1)
	valid := make([]bool, n)
	for i := range n {
		offs[i+1] = int32(s.offs[lo+i+1] - base)
		valid[i] = s.counts[lo+i] > 0
	}
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize(4 * (n + 1))
	copy(arrow.Int32Traits.CastFromBytes(offBuf.Bytes()), offs)
	defer offBuf.Release()
	vbuf, nulls := buildValidity(mem, valid)
	if vbuf != nil {
		defer vbuf.Release()
	}
	data := array.NewData(s.dt, n, []*memory.Buffer{vbuf, offBuf}, []arrow.ArrayData{elems.Data()}, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}
