package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"

	"github.com/quarrydb/quarry/planner"
)

// Counts a Parquet file answers itself (planner.SubtreePusher): a global
// count(*) (any number of them) over one predicate on a flat column,
//
//   - is_null / is_not_null: from the footer's null count of every row
//     group (pushed only when every row group has one; no page is read);
//   - eq on a string column (not case-insensitive): the column's pages
//     are read (the row groups its zone cannot exclude, as zone filters
//     prune them) and the values counted without building any array: a
//     dictionary page's entries are compared once and its data pages'
//     codes counted, plain pages' values compared;
//   - no predicate, grouped by that string column (without nulls, by the
//     footer): the counts of its values, counted the same way, the groups
//     in the order their values first appear (the hash aggregate's).
//
// Nulls never equal anything, and a page holds values only for its
// non-null rows, so the counts are exact. The column's chunks go through
// the checks of the parquet-go read path (parquetGoChunk); a chunk that
// fails them, or a file that changed since it was cataloged, is an error
// (no row is guessed). A count over a column the cache holds is not pushed
// (the column cache's Source asks first).

var _ planner.SubtreePusher = (*parquetSource)(nil)

// parquetCount is a pushed count: predicate pred on field (an index into
// the dataset's schema), answered as aggs count(*) columns of out.
type parquetCount struct {
	pred  planner.Predicate
	group bool // count by the values of field (pred unset)
	field int
	out   *arrow.Schema
}

// PushesPlan implements planner.SubtreePusher.
func (s *parquetSource) PushesPlan(n planner.Node) bool {
	_, ok := s.countOf(n)
	return ok
}

// countOf returns the count n asks for when the file answers it.
func (s *parquetSource) countOf(n planner.Node) (parquetCount, bool) {
	agg, ok := n.(*planner.Aggregate)
	if !ok || len(agg.GroupIdx) > 1 || len(agg.Aggs) == 0 || agg.Out.NumFields() != len(agg.GroupIdx)+len(agg.Aggs) {
		return parquetCount{}, false
	}
	for j, a := range agg.Aggs {
		if a.Fn != planner.AggCount || a.Col != "*" || len(a.Filter) > 0 || !arrow.TypeEqual(agg.Out.Field(len(agg.GroupIdx)+j).Type, arrow.PrimitiveTypes.Int64) {
			return parquetCount{}, false
		}
	}
	// The predicate: a Filter's over the Scan, or the Scan's own (pushed
	// into it, HandlesFilter).
	var preds []planner.Predicate
	in := agg.Input
	if f, ok := in.(*planner.Filter); ok {
		preds, in = f.Preds, f.Input
	}
	scan, ok := in.(*planner.Scan)
	if !ok || scan.Dataset != s.id || scan.Pushed != nil || s.leaves == nil {
		return parquetCount{}, false
	}
	preds = append(slices.Clip(preds), scan.Filters...) // never into the plan's slice
	if len(agg.GroupIdx) == 1 {
		g := agg.GroupIdx[0]
		if len(preds) > 0 || g < 0 || g >= scan.Out.NumFields() || agg.Out.Field(0).Type.ID() != arrow.STRING {
			return parquetCount{}, false
		}
		fi := s.schema.FieldIndices(scan.Out.Field(g).Name)
		if len(fi) != 1 || s.leaves[fi[0]] < 0 || s.nulls[fi[0]] != 0 || !s.plainString(fi[0]) {
			return parquetCount{}, false
		}
		return parquetCount{group: true, field: fi[0], out: agg.Out}, true
	}
	if len(preds) != 1 {
		return parquetCount{}, false
	}
	p := preds[0]
	fi := s.schema.FieldIndices(p.Col)
	if len(fi) != 1 || s.leaves[fi[0]] < 0 {
		return parquetCount{}, false
	}
	c := parquetCount{pred: p, field: fi[0], out: agg.Out}
	switch p.Op {
	case planner.OpIsNull, planner.OpIsNotNull:
		return c, s.nulls[fi[0]] >= 0
	case planner.OpEq:
		if p.Value == nil {
			return parquetCount{}, false
		}
		_, isStr := p.Value.Value.(string)
		return c, isStr && !p.CaseInsensitive && s.plainString(fi[0])
	}
	return parquetCount{}, false
}

// plainString reports whether field j is stored and exposed as a string.
func (s *parquetSource) plainString(j int) bool {
	st := s.stored.Field(j).Type
	return st.ID() == arrow.STRING && arrow.TypeEqual(st, s.schema.Field(j).Type)
}

// countLeaves returns, by field of sc, the leaf column of each flat field
// (a top-level leaf, not repeated, at most one definition level), -1 for
// the others, and the null count of each such field from the footer (-1
// where a row group has none).
func countLeaves(r *file.Reader, fr *pqarrow.FileReader, sc *arrow.Schema) (leaves []int, nulls []int64) {
	leaves, nulls = make([]int, sc.NumFields()), make([]int64, sc.NumFields())
	md := r.MetaData()
	for i := range leaves {
		leaves[i], nulls[i] = -1, -1
		if i >= len(fr.Manifest.Fields) || !fr.Manifest.Fields[i].IsLeaf() {
			continue
		}
		leaf := fr.Manifest.Fields[i].ColIndex
		col := md.Schema.Column(leaf)
		if col.MaxRepetitionLevel() != 0 || col.MaxDefinitionLevel() > 1 {
			continue
		}
		leaves[i] = leaf
		nulls[i] = footerNulls(r, leaf)
	}
	return leaves, nulls
}

// footerNulls is the null count of leaf column leaf over every row group
// of r, or -1 when a row group's statistics do not carry one.
func footerNulls(r *file.Reader, leaf int) (n int64) {
	defer func() {
		if recover() != nil {
			n = -1
		}
	}()
	md := r.MetaData()
	for rg := range md.NumRowGroups() {
		cc, err := md.RowGroup(rg).ColumnChunk(leaf)
		if err != nil {
			return -1
		}
		st, err := cc.Statistics()
		if err != nil || st == nil || !st.HasNullCount() || st.NullCount() < 0 || st.NullCount() > md.RowGroup(rg).NumRows() {
			return -1
		}
		n += st.NullCount()
	}
	return n
}

// scanCount answers a pushed count: one batch of out's columns.
func (s *parquetSource) scanCount(ctx context.Context, opts ScanOptions) (array.RecordReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, ok := s.countOf(opts.Pushed)
	if !ok {
		return nil, fmt.Errorf("dataset %q: the Parquet source does not run this plan", s.id)
	}
	r, fh, err := openParquetFile(s.file, s.lim)
	if err != nil {
		return nil, SourceOpenError(s.id, err)
	}
	defer r.Close()
	fr, sc, err := parquetArrow(r, memory.DefaultAllocator, 0, s.dict)
	if err == nil && (!sc.Equal(s.storedDict) || r.NumRows() != s.rows) {
		err = fmt.Errorf("%w since it was cataloged", ErrFileChanged)
	}
	if err != nil {
		return nil, corruptFileError(s.id, err)
	}
	leaf := s.leaves[c.field]
	if c.group {
		if footerNulls(r, leaf) != 0 {
			return nil, FileChangedError(s.id, fmt.Errorf("%w: its statistics no longer say the column has no nulls", ErrFileChanged))
		}
		keys, counts, err := countValues(ctx, fh, leaf)
		if err != nil {
			return nil, corruptFileError(s.id, err)
		}
		return groupCounts(opts.Alloc, c.out, keys, counts)
	}
	var n int64
	switch c.pred.Op {
	case planner.OpIsNull, planner.OpIsNotNull:
		if n = footerNulls(r, leaf); n < 0 {
			return nil, FileChangedError(s.id, fmt.Errorf("%w: its statistics lost their null counts", ErrFileChanged))
		}
		if c.pred.Op == planner.OpIsNotNull {
			n = s.rows - n
		}
	case planner.OpEq:
		p := c.pred
		p.Index = 0 // of the one column the row groups' zones describe
		rgs := s.keptRowGroups(r.MetaData(), fr, []int{c.field}, []planner.Predicate{p})
		if n, err = countEqual(ctx, fh, leaf, rgs, []byte(c.pred.Value.Value.(string))); err != nil {
			return nil, corruptFileError(s.id, err)
		}
	}
	alloc := opts.Alloc
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	cols := make([]arrow.Array, c.out.NumFields())
	for i := range cols {
		b := array.NewInt64Builder(alloc)
		b.Append(n)
		cols[i] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecordBatch(c.out, cols, 1)
	releaseAll(cols)
	defer rec.Release()
	return array.NewRecordReader(c.out, []arrow.RecordBatch{rec})
}

// groupCounts is the one batch of a grouped count: the keys, then each
// count column.
func groupCounts(alloc memory.Allocator, out *arrow.Schema, keys []string, counts []int64) (array.RecordReader, error) {
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	cols := make([]arrow.Array, out.NumFields())
	kb := array.NewStringBuilder(alloc)
	kb.AppendValues(keys, nil)
	cols[0] = kb.NewArray()
	kb.Release()
	for i := 1; i < len(cols); i++ {
		b := array.NewInt64Builder(alloc)
		b.AppendValues(counts, nil)
		cols[i] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecordBatch(out, cols, int64(len(keys)))
	releaseAll(cols)
	defer rec.Release()
	return array.NewRecordReader(out, []arrow.RecordBatch{rec})
}

// countValues counts each value of leaf column leaf (a column without
// nulls) over the file fh: the values in the order they first appear.
// Chunks are counted on their own (in parallel, mapChunks), then folded
// in file order, which keeps the order of first appearance.
func countValues(ctx context.Context, fh *os.File, leaf int) (keys []string, counts []int64, err error) {
	// chunkCounts is one chunk's counts: of its dictionary's codes (one
	// dictionary a chunk: n by code, first the codes in the order they
	// first appear, names their values, copied once), then of the values
	// of its plain pages (a dictionary that overflowed; they come after
	// the dictionary pages).
	type chunkCounts struct {
		n     []int64
		first []int32
		names []string
		plain valueCounts
	}
	chunks, err := mapChunks(ctx, fh, leaf, nil, func(cc *chunkCounts) chunkPageFunc {
		return func(dv []byte, doff []uint32, codes []int32, v []byte, off []uint32) {
			if codes == nil {
				for i := 0; i+1 < len(off); i++ {
					cc.plain.add(string(v[off[i]:off[i+1]]), 1)
				}
				return
			}
			if cc.n == nil {
				cc.n, cc.names = make([]int64, len(doff)-1), make([]string, len(doff)-1)
			} else if len(cc.n) != len(doff)-1 {
				panic("a column chunk with two dictionaries")
			}
			for _, c := range codes {
				if uint32(c) >= uint32(len(cc.n)) {
					panic(codeRangeError(c, len(cc.n)))
				}
				if cc.n[c] == 0 {
					cc.first = append(cc.first, c)
					cc.names[c] = string(dv[doff[c]:doff[c+1]])
				}
				cc.n[c]++
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	var all valueCounts
	for i := range chunks {
		cc := &chunks[i]
		for _, c := range cc.first {
			all.add(cc.names[c], cc.n[c])
		}
		for j, k := range cc.plain.keys {
			all.add(k, cc.plain.counts[j])
		}
	}
	return all.keys, all.counts, nil
}

// valueCounts counts values in the order they first appear.
type valueCounts struct {
	index  map[string]int
	keys   []string
	counts []int64
}

// add counts k more of v.
func (vc *valueCounts) add(v string, k int64) {
	i, ok := vc.index[v]
	if !ok {
		if vc.index == nil {
			vc.index = map[string]int{}
		}
		i = len(vc.keys)
		vc.index[v] = i
		vc.keys = append(vc.keys, v)
		vc.counts = append(vc.counts, 0)
	}
	vc.counts[i] += k
}

// countEqual counts the values of leaf column leaf equal to want in the
// row groups rgs (nil: all) of the file fh.
func countEqual(ctx context.Context, fh *os.File, leaf int, rgs []int, want []byte) (int64, error) {
	chunks, err := mapChunks(ctx, fh, leaf, rgs, func(n *int64) chunkPageFunc {
		var match []bool // by dictionary code (one dictionary per chunk)
		return func(dv []byte, doff []uint32, codes []int32, v []byte, off []uint32) {
			if codes == nil {
				for i := 0; i+1 < len(off); i++ {
					if bytes.Equal(v[off[i]:off[i+1]], want) {
						*n++
					}
				}
				return
			}
			if match == nil {
				match = make([]bool, len(doff)-1)
				for i := range match {
					match[i] = bytes.Equal(dv[doff[i]:doff[i+1]], want)
				}
			}
			for _, c := range codes {
				if uint32(c) >= uint32(len(match)) {
					panic(codeRangeError(c, len(match)))
				}
				if match[c] {
					*n++
				}
			}
		}
	})
	var n int64
	for _, k := range chunks {
		n += k
	}
	return n, err
}

// chunkPageFunc takes a data page of a column chunk: a dictionary-encoded
// page as its dictionary's values and offsets and its codes, a plain one
// as its values and offsets (codes nil). The slices are valid during the
// call only. The codes are not checked: the function checks each against
// the dictionary's length as it counts (one pass), and panics with
// codeRangeError (mapChunks returns it as the chunk's error).
type chunkPageFunc func(dv []byte, doff []uint32, codes []int32, v []byte, off []uint32)

// mapChunks reads the chunks of leaf column leaf in the row groups rgs
// (nil: all) of the file fh and returns one R per chunk, in file order:
// chunk i's pages go to the function visit returns for &out[i]. Chunks
// are read on up to min(GOMAXPROCS, 4) goroutines, a chunk's pages in
// order on one of them, so visit's functions share nothing but what they
// only read. The first error in file order is returned (with what was
// counted).
func mapChunks[R any](ctx context.Context, fh *os.File, leaf int, rgs []int, visit func(r *R) chunkPageFunc) (out []R, err error) {
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := openParquetGo(fh, st.Size())
	if err != nil {
		return nil, err
	}
	if rgs == nil {
		rgs = identity(len(pf.RowGroups()))
	}
	out = make([]R, len(rgs))
	errs := make([]error, len(rgs))
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(rgs) {
				return
			}
			errs[i] = readChunk(ctx, fh, pf, rgs[i], leaf, visit(&out[i]))
			if errs[i] != nil {
				next.Store(int64(len(rgs))) // stop the others at their next chunk
				return
			}
		}
	}
	w := min(runtime.GOMAXPROCS(0), 4, len(rgs))
	var wg sync.WaitGroup
	for range w - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// openParquetGo opens the file with parquet-go, its footer only (no page
// index, bloom filters or magic bytes checked: the catalog checked the
// file); a footer parquet-go cannot take is an error.
func openParquetGo(fh *os.File, size int64) (pf *parquet.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			pf, err = nil, fmt.Errorf("decoder panic: %v", p)
		}
	}()
	return parquet.OpenFile(fh, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.SkipMagicBytes(true))
}

// readChunk is chunkPages for row group rg, after checking ctx and rg,
// with a decoder's panic returned as an error.
func readChunk(ctx context.Context, fh *os.File, pf *parquet.File, rg, leaf int, page chunkPageFunc) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("decoder panic: %v", p)
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	if rg < 0 || rg >= len(pf.RowGroups()) {
		return errors.New("no such row group")
	}
	return chunkPages(fh, pf, rg, leaf, page)
}

// chunkPages calls page for every data page of column chunk (rg, leaf).
func chunkPages(fh io.ReaderAt, pf *parquet.File, rg, leaf int, page chunkPageFunc) error {
	g := pf.RowGroups()[rg]
	meta := &pf.Metadata().RowGroups[rg]
	chunks := g.ColumnChunks()
	if leaf >= len(chunks) || leaf >= len(meta.Columns) {
		return errors.New("no such column chunk")
	}
	fc, isFile := chunks[leaf].(*parquet.FileColumnChunk)
	cc := &meta.Columns[leaf]
	if !isFile || cc.FilePath != "" || len(cc.EncryptedColumnMetadata) > 0 {
		return errors.New("another file's or an encrypted column chunk")
	}
	mem, err := parquetGoChunk(fh, &cc.MetaData, false)
	if err != nil {
		return err
	}
	pages := fc.PagesFrom(mem)
	defer pages.Close()
	var rows int64
	for rows < g.NumRows() {
		p, err := pages.ReadPage()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("a column chunk holds fewer values than its row group has rows")
			}
			return err
		}
		rows += p.NumRows()
		pd := p.Data()
		if d := p.Dictionary(); d != nil {
			dd := d.Page().Data()
			dv, doff := dd.ByteArray()
			page(dv, doff, pd.Int32(), nil, nil)
		} else {
			v, off := pd.ByteArray()
			page(nil, nil, nil, v, off)
		}
		parquet.Release(p)
	}
	if rows != g.NumRows() {
		return errors.New("a column chunk holds more values than its row group has rows")
	}
	return nil
}
