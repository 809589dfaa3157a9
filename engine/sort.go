package engine

import (
	"cmp"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// sortKey compares rows of the retained chunks on one key column. Nulls sort
// last and NaN after every number (before nulls), whatever the direction.
type sortKey interface {
	// add appends the key column of a new chunk and returns the Go bytes it holds.
	add(arr arrow.Array) int64
	// bytes is what add allocates for a chunk of n rows (reserved first).
	bytes(n int) int64
	// pop removes the last chunk added.
	pop()
	reset()
	compare(a, b rowRef) int
}

type ordKey[T cmp.Ordered] struct {
	desc  bool
	first bool  // nulls first (see nullsFirst)
	size  int64 // Go bytes per row that load allocates (0: it aliases Arrow memory)
	load  func(arrow.Array) []T
	norm  func(T) uint64 // order bits of a value (topk_group_bar.go); nil: none
	vals  [][]T
	valid []validity
}

func (k *ordKey[T]) add(arr arrow.Array) int64 {
	v := k.load(arr)
	k.vals = append(k.vals, v)
	k.valid = append(k.valid, validityOf(arr))
	return k.size * int64(len(v))
}

func (k *ordKey[T]) bytes(n int) int64 { return k.size * int64(n) }

func (k *ordKey[T]) pop() {
	k.vals[len(k.vals)-1] = nil
	k.vals, k.valid = k.vals[:len(k.vals)-1], k.valid[:len(k.valid)-1]
}

func (k *ordKey[T]) reset() { k.vals, k.valid = nil, nil }

func (k *ordKey[T]) compare(a, b rowRef) int {
	an, bn := !k.valid[a.b].ok(int(a.r)), !k.valid[b.b].ok(int(b.r))
	if an || bn {
		switch {
		case an && bn:
			return 0
		case an != k.first:
			return 1
		}
		return -1
	}
	x, y := k.vals[a.b][a.r], k.vals[b.b][b.r]
	if xn, yn := x != x, y != y; xn || yn { // NaN
		switch {
		case xn && yn:
			return 0
		case xn:
			return 1
		}
		return -1
	}
	c := cmp.Compare(x, y)
	if k.desc {
		return -c
	}
	return c
}

func fixedKey[T integer | float](desc bool, norm func(T) uint64) sortKey {
	return &ordKey[T]{desc: desc, load: values[T], norm: norm}
}

// newSortKey returns the comparator for a key column of type dt.
func newSortKey(dt arrow.DataType, desc bool) sortKey {
	switch dt.ID() {
	case arrow.INT8:
		return fixedKey(desc, signedBits[int8])
	case arrow.INT16:
		return fixedKey(desc, signedBits[int16])
	case arrow.INT32, arrow.DATE32:
		return fixedKey(desc, signedBits[int32])
	case arrow.INT64, arrow.TIMESTAMP:
		return fixedKey(desc, signedBits[int64])
	case arrow.UINT8:
		return fixedKey(desc, unsignedBits[uint8])
	case arrow.UINT16:
		return fixedKey(desc, unsignedBits[uint16])
	case arrow.UINT32:
		return fixedKey(desc, unsignedBits[uint32])
	case arrow.UINT64:
		return fixedKey(desc, unsignedBits[uint64])
	case arrow.FLOAT32:
		return fixedKey(desc, floatBits[float32])
	case arrow.FLOAT64:
		return fixedKey(desc, floatBits[float64])
	case arrow.BOOL:
		return &ordKey[uint8]{desc: desc, size: 1, load: func(a arrow.Array) []uint8 { return boolBytes(a, nil) }}
	case arrow.STRING, arrow.LARGE_STRING:
		return &ordKey[string]{desc: desc, size: 16, load: func(a arrow.Array) []string { return strViews(a, nil) }}
	case arrow.DICTIONARY:
		if isDictStr(dt) { // compare the values, not the codes
			return &ordKey[string]{desc: desc, size: 16, load: func(a arrow.Array) []string {
				return dictRowViews(a, nil, nil)
			}}
		}
	}
	return nil
}

// sortOp sorts its whole input (stable: ties keep input order). With k >= 0
// it is a top-k: it keeps only the first k rows of the order. Whenever its
// buffered rows grow past max(2k, batch size) it compacts them (sort, keep
// k, copy into new chunks: one, unless a dictionary column re-encoded from
// several dictionaries needs more distinct values than its index type
// addresses); once it holds k rows, the k-th is a bound that later rows
// must beat to be buffered at all. Output batches likewise end early where
// a re-encoded dictionary would overflow, so every batch has the input's
// types whatever the number of distinct values.
type sortOp struct {
	ex     *exec
	in     op
	schema *arrow.Schema
	idx    []int
	keys   []sortKey
	k      int64
	chunks []arrow.RecordBatch
	refs   []rowRef
	acct   acct
	held   int64 // rows in retained chunks
	keyB   int64 // what the keys' add allocates per row
	bound  bool  // top-k: refs[k-1] (the last compacted row) is the bar to beat
	sorted bool
	emit   refEmitter
	closed bool
}

func (ex *exec) buildSort(n *planner.Sort, k int64) (op, error) {
	in := n.Input.Schema()
	s := &sortOp{ex: ex, schema: in, k: k, acct: acct{b: ex.budget}}
	for _, key := range n.Keys {
		if key.Index < 0 || key.Index >= in.NumFields() {
			return nil, qerr.Internal(nil, "sort: key %q index %d out of range for %d input columns", key.Col, key.Index, in.NumFields())
		}
		dt := in.Field(key.Index).Type
		sk := nullsFirst(newSortKey(dt, key.Desc), key.NullsFirst)
		if sk == nil {
			return nil, qerr.Unsupported(qerr.CodeUnsupportedType, "cannot sort by column %q of type %s", key.Col, dt).
				WithHint("sort by numeric, string, boolean, date or timestamp columns")
		}
		s.idx = append(s.idx, key.Index)
		s.keys = append(s.keys, sk)
		s.keyB += sk.bytes(1)
	}
	var err error
	if s.in, err = ex.build(n.Input); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *sortOp) compare(a, b rowRef) int { return compareRows(s.keys, a, b) }

// compareRows orders two rows of retained chunks by keys, then (stability:
// chunks are in input order, rows within a chunk too) by position.
func compareRows(keys []sortKey, a, b rowRef) int {
	for _, k := range keys {
		if c := k.compare(a, b); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(a.b, b.b); c != 0 {
		return c
	}
	return cmp.Compare(a.r, b.r)
}

// gatherAll copies the rows refs (in order) out of g's chunks into new
// batches (one unless a re-encoded dictionary overflows, see gather).
func (ex *exec) gatherAll(g *gatherer, refs []rowRef) ([]arrow.RecordBatch, error) {
	var out []arrow.RecordBatch
	for rest := refs; len(rest) > 0; {
		b, err := g.gather(ex.alloc, ex.soft, rest)
		if err != nil {
			for _, b := range out {
				b.Release()
			}
			return nil, err
		}
		out = append(out, b)
		rest = rest[b.NumRows():]
	}
	return out, nil
}

// refEmitter emits the rows refs of retained chunks in batches.
type refEmitter struct {
	gath *gatherer
	pos  int
}

// next gathers the next batch; nil when every row was emitted.
func (e *refEmitter) next(ex *exec, schema *arrow.Schema, chunks []arrow.RecordBatch, refs []rowRef) (arrow.RecordBatch, error) {
	if e.pos >= len(refs) {
		return nil, nil
	}
	if e.gath == nil {
		e.gath = newGatherer(schema, chunks)
	}
	hi := min(e.pos+ex.batchSize, len(refs))
	b, err := e.gath.gather(ex.alloc, ex.soft, refs[e.pos:hi])
	if err != nil {
		return nil, err
	}
	e.pos += int(b.NumRows())
	return b, nil
}

// addChunk retains b as a new chunk and registers its rows (those listed
// in sel; all when sel is nil) as candidates (with a top-k bound, only the
// rows that beat it; b is released at once when none does). The keys'
// values and the room for the candidates are reserved before they are
// allocated: when the budget refuses them, b is released and the error
// returned, nothing allocated.
func (s *sortOp) addChunk(b arrow.RecordBatch, sel []int32) error {
	n := int(b.NumRows())
	rows := n
	if sel != nil {
		rows = len(sel)
	}
	if err := s.acct.reserve(s.keyB * int64(n)); err != nil {
		b.Release()
		return err
	}
	if err := s.growRefs(rows); err != nil {
		s.acct.charge(-s.keyB * int64(n))
		b.Release()
		return err
	}
	ci := int32(len(s.chunks))
	s.chunks = append(s.chunks, b)
	for j, k := range s.keys {
		k.add(b.Column(s.idx[j]))
	}
	before := len(s.refs)
	if s.bound {
		bar := s.refs[s.k-1]
		if sel == nil {
			for i := range n {
				if r := (rowRef{ci, int32(i)}); s.compare(r, bar) < 0 {
					s.refs = append(s.refs, r)
				}
			}
		} else {
			for _, i := range sel {
				if r := (rowRef{ci, i}); s.compare(r, bar) < 0 {
					s.refs = append(s.refs, r)
				}
			}
		}
		if len(s.refs) == before {
			for _, k := range s.keys {
				k.pop()
			}
			s.chunks[ci] = nil
			s.chunks = s.chunks[:ci]
			b.Release()
			s.acct.charge(-s.keyB * int64(n))
			return nil
		}
	} else if sel == nil {
		for i := range n {
			s.refs = append(s.refs, rowRef{ci, int32(i)})
		}
	} else {
		for _, i := range sel {
			s.refs = append(s.refs, rowRef{ci, i})
		}
	}
	s.held += int64(n)
	return nil
}

// growRefs makes room for n more candidates: the new array is reserved
// (beside the old one, whose copy it takes) before it is allocated, and
// the old one given back after; the capacity doubles, so the copies of a
// sort's growth add up to its final size.
func (s *sortOp) growRefs(n int) error {
	need := len(s.refs) + n
	if need <= cap(s.refs) {
		return nil
	}
	c := max(need, 2*cap(s.refs), 1024)
	if err := s.acct.reserve(8 * int64(c)); err != nil {
		return err
	}
	old := cap(s.refs)
	s.refs = append(make([]rowRef, 0, c), s.refs...)
	s.acct.charge(-8 * int64(old))
	return nil
}

// compact sorts the candidates, keeps the first k, and copies them into
// new chunks (one unless a re-encoded dictionary overflows, see gather),
// releasing the old ones.
func (s *sortOp) compact() error {
	slices.SortFunc(s.refs, s.compare)
	if int64(len(s.refs)) > s.k {
		s.refs = s.refs[:s.k]
	}
	if len(s.refs) == 0 {
		s.dropChunks()
		return nil
	}
	out, err := s.ex.gatherAll(newGatherer(s.schema, s.chunks), s.refs)
	if err != nil {
		return err
	}
	full := int64(len(s.refs)) == s.k
	s.dropChunks()
	for i, b := range out {
		if err := s.addChunk(b, nil); err != nil {
			for _, b := range out[i+1:] {
				b.Release()
			}
			return err
		}
	}
	s.bound = full
	return nil
}

func (s *sortOp) dropChunks() {
	for _, c := range s.chunks {
		c.Release()
	}
	clear(s.chunks)
	s.chunks = s.chunks[:0]
	for _, k := range s.keys {
		k.reset()
	}
	s.refs = nil // its capacity was charged: given back below
	s.held, s.bound = 0, false
	s.acct.release()
}

func (s *sortOp) consume() error {
	limit := int64(-1)
	if s.k >= 0 {
		limit = max(2*s.k, int64(s.ex.batchSize))
	}
	// A small top-k over a filter takes the filter's unfiltered batches
	// with their passing rows instead of gathered copies: it keeps at most
	// about 2 batches before compacting, and copies only the winners.
	f := s.selFilter()
	for {
		if err := s.ex.ctx.Err(); err != nil {
			return err
		}
		var (
			b   arrow.RecordBatch
			sel []int32
			err error
		)
		if f != nil {
			b, sel, err = f.nextSel()
		} else {
			b, err = s.in.next()
		}
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		if s.k == 0 {
			b.Release()
			continue
		}
		if err := s.addChunk(b, sel); err != nil {
			return err
		}
		if limit >= 0 && (int64(len(s.refs)) >= limit || s.held >= limit) {
			if err := s.compact(); err != nil {
				return err
			}
		}
		if err := s.acct.check(); err != nil {
			return err
		}
	}
	s.in.close()
	slices.SortFunc(s.refs, s.compare)
	if s.k >= 0 && int64(len(s.refs)) > s.k {
		s.refs = s.refs[:s.k]
	}
	s.sorted = true
	return nil
}

// selFilter is the filter input whose selections a small top-k takes
// (see consume), or nil.
func (s *sortOp) selFilter() *filterOp {
	if s.k < 0 || s.k > int64(s.ex.batchSize) {
		return nil
	}
	return asFilter(s.in)
}

func (s *sortOp) next() (arrow.RecordBatch, error) {
	if err := s.ex.ctx.Err(); err != nil {
		return nil, err
	}
	if s.closed {
		return nil, nil
	}
	if !s.sorted {
		if err := s.consume(); err != nil {
			return nil, err
		}
	}
	b, err := s.emit.next(s.ex, s.schema, s.chunks, s.refs)
	if b == nil && err == nil {
		s.close()
	}
	return b, err
}

func (s *sortOp) close() {
	if s.closed {
		return
	}
	s.closed = true
	if s.in != nil {
		s.in.close()
	}
	s.dropChunks()
	s.refs, s.emit = nil, refEmitter{}
}
