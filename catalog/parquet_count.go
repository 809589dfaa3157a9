package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

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
//     codes counted, plain pages' values compared.
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
	if !ok || len(agg.GroupIdx) > 0 || len(agg.Aggs) == 0 {
		return parquetCount{}, false
	}
	for j, a := range agg.Aggs {
		if a.Fn != planner.AggCount || a.Col != "*" || len(a.Filter) > 0 || !arrow.TypeEqual(agg.Out.Field(j).Type, arrow.PrimitiveTypes.Int64) {
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
	if !ok || scan.Dataset != s.id || scan.Pushed != nil || len(preds)+len(scan.Filters) != 1 {
		return parquetCount{}, false
	}
	p := append(preds, scan.Filters...)[0]
	fi := s.schema.FieldIndices(p.Col)
	if len(fi) != 1 || s.leaves == nil || s.leaves[fi[0]] < 0 {
		return parquetCount{}, false
	}
	c := parquetCount{pred: p, field: fi[0], out: agg.Out}
	switch p.Op {
	case planner.OpIsNull, planner.OpIsNotNull:
		return c, s.nulls[fi[0]] >= 0
	case planner.OpEq:
		_, isStr := p.Value.Value.(string)
		st := s.stored.Field(fi[0]).Type
		return c, p.Value != nil && isStr && !p.CaseInsensitive && st.ID() == arrow.STRING && arrow.TypeEqual(st, s.schema.Field(fi[0]).Type)
	}
	return parquetCount{}, false
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
	var n int64
	leaf := s.leaves[c.field]
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

// countEqual counts the values of leaf column leaf equal to want in the
// row groups rgs (nil: all) of the file fh.
func countEqual(ctx context.Context, fh *os.File, leaf int, rgs []int, want []byte) (n int64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("decoder panic: %v", p)
		}
	}()
	st, err := fh.Stat()
	if err != nil {
		return 0, err
	}
	pf, err := parquet.OpenFile(fh, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.SkipMagicBytes(true))
	if err != nil {
		return 0, err
	}
	if rgs == nil {
		rgs = identity(len(pf.RowGroups()))
	}
	for _, rg := range rgs {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if rg >= len(pf.RowGroups()) {
			return 0, errors.New("no such row group")
		}
		k, err := countEqualChunk(fh, pf, rg, leaf, want)
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}

// countEqualChunk counts in one column chunk.
func countEqualChunk(fh io.ReaderAt, pf *parquet.File, rg, leaf int, want []byte) (int64, error) {
	g := pf.RowGroups()[rg]
	meta := &pf.Metadata().RowGroups[rg]
	chunks := g.ColumnChunks()
	if leaf >= len(chunks) || leaf >= len(meta.Columns) {
		return 0, errors.New("no such column chunk")
	}
	fc, isFile := chunks[leaf].(*parquet.FileColumnChunk)
	cc := &meta.Columns[leaf]
	if !isFile || cc.FilePath != "" || len(cc.EncryptedColumnMetadata) > 0 {
		return 0, errors.New("another file's or an encrypted column chunk")
	}
	mem, err := parquetGoChunk(fh, &cc.MetaData, false)
	if err != nil {
		return 0, err
	}
	pages := fc.PagesFrom(mem)
	defer pages.Close()
	var n, rows int64
	var match []bool // by dictionary code (one dictionary per chunk)
	for rows < g.NumRows() {
		p, err := pages.ReadPage()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0, errors.New("a column chunk holds fewer values than its row group has rows")
			}
			return 0, err
		}
		rows += p.NumRows()
		pd := p.Data()
		if d := p.Dictionary(); d != nil {
			if match == nil {
				dd := d.Page().Data()
				dv, off := dd.ByteArray()
				match = make([]bool, len(off)-1)
				for i := range match {
					match[i] = bytes.Equal(dv[off[i]:off[i+1]], want)
				}
			}
			codes := pd.Int32()
			if err := checkCodes(codes, len(match)); err != nil {
				parquet.Release(p)
				return 0, err
			}
			for _, c := range codes {
				if match[c] {
					n++
				}
			}
		} else {
			v, off := pd.ByteArray()
			for i := 0; i+1 < len(off); i++ {
				if bytes.Equal(v[off[i]:off[i+1]], want) {
					n++
				}
			}
		}
		parquet.Release(p)
	}
	if rows != g.NumRows() {
		return 0, errors.New("a column chunk holds more values than its row group has rows")
	}
	return n, nil
}
