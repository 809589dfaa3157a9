package engine

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/artifacts"
	"github.com/quarrydb/quarry/internal/qerr"
)

// Grace hash join. When the build side of a join does not fit the query's
// memory budget, both inputs are partitioned by their key hash into
// graceParts pairs of Arrow IPC stream files in a private directory under
// Options.SpillDir (the artifact directory in the server, never the data
// root), the in-memory rows are released, and each partition pair is
// joined in turn by an in-memory join over the two files. Rows with equal
// keys land in the same partition, so the union of the partition joins is
// the join (null-key rows, which match nothing but are still emitted where
// the join type keeps unmatched rows, are spread over the partitions). A partition
// whose build side still does not fit is partitioned again on other bits
// of the hash, up to graceMaxLevel levels; beyond that (a single key with
// more rows than the budget holds, or a cross join) the query fails with
// the memory limit error.

const (
	graceBits     = 5
	graceParts    = 1 << graceBits
	graceMaxLevel = 4
)

// graceSpills counts the joins that spilled (tests check that spilling happened).
var graceSpills atomic.Int64

// graceJoin runs the partition joins of one spilled join.
type graceJoin struct {
	j     *joinOp
	tmp   *artifacts.TempDir
	dir   string   // tmp.Path
	build []string // partition file paths ("" = empty)
	probe []string
	part  int     // next partition to join
	cur   *joinOp // the running partition join
}

// partOf is the partition of a row with key hash h at level.
func partOf(h uint64, level int) int {
	return int(h>>(64-graceBits*(level+1))) & (graceParts - 1)
}

// newGraceJoin spills j's build side (the rows in memory and the rest of
// its input) and its probe input into partition files.
func newGraceJoin(j *joinOp) (g *graceJoin, err error) {
	if len(j.p.buildKeys()) == 0 {
		return nil, j.ex.budget.err() // a cross join cannot be partitioned
	}
	if j.level >= graceMaxLevel {
		return nil, j.ex.budget.err()
	}
	tmp, err := j.ex.spillTemp("join-spill-", "join")
	if err != nil {
		return nil, err
	}
	dir := tmp.Path
	graceSpills.Add(1)
	g = &graceJoin{j: j, tmp: tmp, dir: dir}
	defer func() {
		if err != nil {
			g.close()
			g = nil
		}
	}()
	bw := newPartWriters(j.ex, dir, "build", j.buildSchema(), j.p.buildKeys(), j.level)
	defer bw.abort()
	if j.p.nullAware && j.level == 0 {
		j.na = &nullAwareState{}
		bw.na = j.na
	}
	for _, c := range j.build.chunks {
		if err := bw.write(c); err != nil {
			return g, err
		}
	}
	j.build.release()
	j.acct.release()
	if err := bw.drain(j.buildIn); err != nil {
		return g, err
	}
	j.buildIn.close() // the source's memory goes before the partitions are joined
	j.buildIn = nil
	if g.build, err = bw.finish(); err != nil {
		return g, err
	}
	pw := newPartWriters(j.ex, dir, "probe", j.probeSchema(), j.p.probeKeys(), j.level)
	defer pw.abort()
	if err := pw.drain(j.probeIn); err != nil {
		return g, err
	}
	j.probeIn.close()
	j.probeIn = nil
	if g.probe, err = pw.finish(); err != nil {
		return g, err
	}
	return g, nil
}

// next returns the next batch of the partition joins.
func (g *graceJoin) next() (arrow.RecordBatch, error) {
	for {
		if g.cur == nil {
			if g.part >= graceParts {
				return nil, nil
			}
			p := g.part
			g.part++
			if g.build[p] == "" && g.probe[p] == "" {
				continue
			}
			sub := &joinOp{ex: g.j.ex, p: g.j.p, acct: acct{b: g.j.ex.budget}, level: g.j.level + 1, na: g.j.na}
			var err error
			if sub.buildIn, err = openSpillOp(g.j.ex, g.build[p]); err != nil {
				return nil, err
			}
			if sub.probeIn, err = openSpillOp(g.j.ex, g.probe[p]); err != nil {
				sub.close()
				return nil, err
			}
			g.cur = sub
		}
		b, err := g.cur.next()
		if err != nil || b != nil {
			return b, err
		}
		g.cur.close()
		g.cur = nil
		g.removePart(g.part - 1)
	}
}

func (g *graceJoin) removePart(p int) {
	for _, s := range [][]string{g.build, g.probe} {
		if p < len(s) && s[p] != "" {
			_ = os.Remove(s[p])
		}
	}
}

func (g *graceJoin) close() {
	if g.cur != nil {
		g.cur.close()
		g.cur = nil
	}
	_ = g.tmp.Remove()
}

// partWriters writes the rows of one input into per-partition IPC files.
type partWriters struct {
	ex     *exec
	dir    string
	side   string
	schema *arrow.Schema
	keys   []int
	level  int
	kv     keyVals
	files  []*os.File
	bufs   []*bufio.Writer
	ws     []*ipc.Writer
	refs   [graceParts][]rowRef
	na     *nullAwareState // counts the build side of a null-aware join
}

func newPartWriters(ex *exec, dir, side string, schema *arrow.Schema, keys []int, level int) *partWriters {
	return &partWriters{ex: ex, dir: dir, side: side, schema: schema, keys: keys, level: level,
		files: make([]*os.File, graceParts), bufs: make([]*bufio.Writer, graceParts), ws: make([]*ipc.Writer, graceParts)}
}

func (w *partWriters) path(p int) string {
	return filepath.Join(w.dir, fmt.Sprintf("%s-%02d.arrows", w.side, p))
}

// drain partitions every batch of in.
func (w *partWriters) drain(in op) error {
	for {
		if err := w.ex.ctx.Err(); err != nil {
			return err
		}
		b, err := in.next()
		if err != nil || b == nil {
			return err
		}
		err = w.write(b)
		b.Release()
		if err != nil {
			return err
		}
	}
}

// write partitions one batch (which the caller keeps).
func (w *partWriters) write(b arrow.RecordBatch) error {
	n := int(b.NumRows())
	w.kv.load(b.Columns(), w.keys, n)
	if w.na != nil {
		w.na.count(w.kv.ok[:n])
	}
	return w.scatter(b, func(i int) int {
		if w.kv.ok[i] {
			return partOf(w.kv.hash[i], w.level)
		}
		return i & (graceParts - 1) // null keys match nothing: spread them
	})
}

// scatter writes each row i of b (which the caller keeps) to partition
// partAt(i).
func (w *partWriters) scatter(b arrow.RecordBatch, partAt func(i int) int) error {
	for p := range w.refs {
		w.refs[p] = w.refs[p][:0]
	}
	for i := range int(b.NumRows()) {
		p := partAt(i)
		w.refs[p] = append(w.refs[p], rowRef{0, int32(i)})
	}
	for p, refs := range w.refs {
		if len(refs) == 0 {
			continue
		}
		if err := w.writePart(p, b, refs); err != nil {
			return err
		}
	}
	return nil
}

// spillTemp creates the spill directory of one spilling operator (prefix
// starts its name, what names the operator in errors): a locked ".tmp-" directory under the spill dir (or
// the system's), which the artifact store deletes if this process dies
// before the operator's close does.
func (ex *exec) spillTemp(prefix, what string) (*artifacts.TempDir, error) {
	dir := ex.spillDir
	if dir == "" {
		dir = os.TempDir()
	}
	tmp, err := artifacts.MkdirTemp(dir, prefix)
	if err != nil {
		return nil, qerr.Internal(err, "%s: cannot create a spill directory: %v", what, err)
	}
	return tmp, nil
}

func (w *partWriters) writePart(p int, b arrow.RecordBatch, refs []rowRef) error {
	if w.ws[p] == nil {
		f, err := os.Create(w.path(p))
		if err != nil {
			return qerr.Internal(err, "join: cannot create a spill file: %v", err)
		}
		w.files[p], w.bufs[p] = f, bufio.NewWriterSize(f, 64<<10)
		w.ws[p] = ipc.NewWriter(w.bufs[p], ipc.WithSchema(w.schema), ipc.WithAllocator(w.ex.soft))
	}
	var part arrow.RecordBatch
	if len(refs) == int(b.NumRows()) {
		part = b
		part.Retain()
	} else {
		var err error
		if part, err = gatherBatch(w.ex.soft, w.ex.soft, w.schema, b, refs); err != nil { // transient: soft, so spilling never fails on the budget
			return err
		}
	}
	defer part.Release()
	small, err := shrinkDicts(w.ex.soft, part)
	if err != nil {
		return err
	}
	defer small.Release()
	if err := w.ws[p].Write(small); err != nil {
		return qerr.Internal(err, "join: writing a spill file: %v", err)
	}
	return nil
}

// finish closes the files and returns their paths ("" for empty partitions).
func (w *partWriters) finish() ([]string, error) {
	paths := make([]string, graceParts)
	var first error
	for p := range w.ws {
		if w.ws[p] == nil {
			continue
		}
		paths[p] = w.path(p)
		err := w.ws[p].Close()
		if err == nil {
			err = w.bufs[p].Flush()
		}
		if fi, serr := w.files[p].Stat(); err == nil && serr == nil && w.ex.spilled != nil {
			w.ex.spilled.Add(fi.Size())
		}
		if cerr := w.files[p].Close(); err == nil {
			err = cerr
		}
		w.ws[p], w.files[p] = nil, nil
		if err != nil && first == nil {
			first = qerr.Internal(err, "join: writing a spill file: %v", err)
		}
	}
	return paths, first
}

// abort closes whatever finish did not (the directory is removed by the caller).
func (w *partWriters) abort() {
	for p := range w.ws {
		if w.ws[p] != nil {
			_ = w.ws[p].Close()
			_ = w.files[p].Close()
			w.ws[p], w.files[p] = nil, nil
		}
	}
}

// spillOp reads one partition file back.
type spillOp struct {
	f *os.File
	r *ipc.Reader
}

// openSpillOp opens a partition file; "" is an empty input.
func openSpillOp(ex *exec, path string) (op, error) {
	if path == "" {
		return &spillOp{}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, qerr.Internal(err, "join: cannot open a spill file: %v", err)
	}
	r, err := ipc.NewReader(bufio.NewReaderSize(f, 64<<10), ipc.WithAllocator(ex.soft))
	if err != nil {
		f.Close()
		return nil, qerr.Internal(err, "join: reading a spill file: %v", err)
	}
	return &spillOp{f: f, r: r}, nil
}

func (s *spillOp) next() (arrow.RecordBatch, error) {
	if s.r == nil {
		return nil, nil
	}
	for s.r.Next() {
		b := s.r.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		b.Retain()
		return b, nil
	}
	if err := s.r.Err(); err != nil {
		return nil, qerr.Internal(err, "join: reading a spill file: %v", err)
	}
	return nil, nil
}

func (s *spillOp) close() {
	if s.r != nil {
		s.r.Release()
		s.r = nil
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// shrinkDicts returns b (retained) with every dictionary-encoded column
// whose dictionary holds more entries than b has rows re-encoded with a
// dictionary of just its values: a partition file (and the memory of the
// partition join reading it back) then holds the dictionary entries its
// rows use, not the whole source dictionary with every batch.
func shrinkDicts(mem memory.Allocator, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	var cols []arrow.Array
	for i, c := range b.Columns() {
		dt, ok := c.DataType().(*arrow.DictionaryType)
		if !ok || !isDictStr(dt) || dictValues(c).Len() <= c.Len() {
			continue
		}
		if cols == nil {
			cols = slices.Clone(b.Columns())
			for _, x := range cols {
				x.Retain()
			}
		}
		plain, err := decodeDict(mem, c, dt.ValueType)
		if err == nil {
			var enc arrow.Array
			enc, err = encodeDict(mem, plain, dt)
			plain.Release()
			if err == nil {
				cols[i].Release()
				cols[i] = enc
			}
		}
		if err != nil {
			for _, x := range cols {
				x.Release()
			}
			return nil, err
		}
	}
	if cols == nil {
		b.Retain()
		return b, nil
	}
	out := array.NewRecordBatch(b.Schema(), cols, b.NumRows())
	for _, x := range cols {
		x.Release()
	}
	return out, nil
}
