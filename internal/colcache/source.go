package colcache

import (
	"context"
	"os"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/safeopen"
	"github.com/quarrydb/quarry/planner"
)

// Source is a dataset's Source seen through the cache.
type Source struct {
	c     *Cache
	ds    *catalog.Dataset
	inner catalog.Source
	key   fileKey
}

var _ catalog.Source = (*Source)(nil)

// Wrap returns the Source queries should read ds through: ds.Source itself
// when the cache is disabled (or nil) or ds is not a file (a remote
// table), a *Source otherwise. It is cheap
// (call it per query).
func (c *Cache) Wrap(ds *catalog.Dataset) catalog.Source {
	if ds == nil {
		return nil
	}
	if !c.Enabled() || ds.Source == nil || ds.AbsPath == "" { // "": not a file (a remote table)
		return ds.Source
	}
	return &Source{c: c, ds: ds, inner: ds.Source, key: keyOf(ds.AbsPath, ds.ID, ds.SizeBytes, ds.ModTime)}
}

// PlanSchema is the schema to plan queries against: the dataset's, with
// the types of the columns as cached now (low-cardinality strings cached
// dictionary-encoded are dictionary<int16, utf8>, repeating strings of
// plain columns dictionary<int32, utf8> with one shared dictionary, so the
// engine works on their codes). Reads that miss the cache produce the dataset's types; the
// engine converts between the two string encodings when they differ.
func (s *Source) PlanSchema() *arrow.Schema {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	f := s.c.files[s.key]
	if f == nil {
		if p, ok := s.inner.(catalog.PlanSchemaer); ok {
			return p.PlanSchema() // what a read that misses the cache returns
		}
		return s.ds.Schema
	}
	fields := s.ds.Schema.Fields()
	changed := false
	for i, fd := range fields {
		if col := f.cols[fd.Name]; col != nil && !arrow.TypeEqual(col.dtype, fd.Type) {
			fields[i].Type = col.dtype
			changed = true
		}
	}
	if !changed {
		return s.ds.Schema
	}
	md := s.ds.Schema.Metadata()
	return arrow.NewSchema(fields, &md)
}

// Unwrap returns the underlying source.
func (s *Source) Unwrap() catalog.Source { return s.inner }

// columns resolves ScanOptions.Columns (nil = all, in schema order).
func (s *Source) columns(cols []string) []string {
	if len(cols) > 0 {
		return cols
	}
	out := make([]string, s.ds.Schema.NumFields())
	for i, f := range s.ds.Schema.Fields() {
		out[i] = f.Name
	}
	return out
}

// fresh reports whether the data file is still the dataset's: a regular
// file (not a symlink swapped in) with its identity, size and modification
// time. When it is not, the dataset's entries are dropped (and the
// underlying source, which opens the file confined to the data root, has
// the last word).
func (s *Source) fresh() bool {
	st, err := os.Lstat(s.ds.AbsPath)
	if err == nil && st.Mode().IsRegular() && st.Size() == s.ds.SizeBytes && st.ModTime().Equal(s.ds.ModTime) &&
		(s.ds.FileID.IsZero() || safeopen.IdentityOf(st) == s.ds.FileID) {
		return true
	}
	s.c.invalidate(s.key.path, s.key.dataset)
	return false
}

// Cached reports whether a Scan of cols (nil = all columns) would be served
// from memory right now.
func (s *Source) Cached(cols []string) bool {
	return s.fresh() && s.c.has(s.key, s.columns(cols))
}

// Scan implements catalog.Source: from memory when every requested column
// is cached and the file is unchanged; otherwise from the underlying source,
// caching the columns read (when the file is unchanged and could fit).
func (s *Source) Scan(ctx context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.fresh() || opts.Pushed != nil { // a subtree the file runs itself (PushesPlan)
		return s.inner.Scan(ctx, opts)
	}
	names := s.columns(opts.Columns)
	if chunks, rows, ok := s.c.lookup(s.key, names); ok {
		schema, err := s.schemaOf(names, chunks)
		if err != nil {
			for _, cs := range chunks {
				releaseAll(cs)
			}
			return s.inner.Scan(ctx, opts)
		}
		batch := opts.BatchSize
		if batch <= 0 {
			batch = catalog.DefaultBatchSize
		}
		r := &memReader{ctx: ctx, schema: schema, chunks: chunks, rows: rows, batch: batch, pos: make([]cursor, len(chunks)),
			skip: s.newSkipper(opts.ZoneFilters, names, chunks)}
		r.refs.Store(1)
		return r, nil
	}
	// Too big to fit, or filtered or offset while read (the rows are not
	// all the file's): do not tee, read with the caller's allocator.
	// Another read of the file filling the cache, or no room beside the
	// reads filling it: read through too, so that concurrent cold queries
	// do not each hold a copy of the columns outside their memory budgets
	// (the caller's allocator counts these batches; the cache's allocator
	// counts against no query).
	est := s.estimate(len(names))
	if len(opts.Filters) > 0 && s.ds.Kind == catalog.KindParquet {
		s.c.filteredOnce.Store(s.key, struct{}{})
	}
	if est > s.c.budget || len(opts.Filters) > 0 || opts.SkipRows > 0 || !s.c.startTee(s.key, est) {
		return s.inner.Scan(ctx, opts)
	}
	inner := opts
	inner.Alloc = s.c.alloc
	rr, err := s.inner.Scan(ctx, inner)
	if err != nil {
		s.c.endTee(s.key, 0)
		return nil, err
	}
	t := &teeReader{RecordReader: rr, src: s, names: names, pending: make([][]arrow.Array, len(names)), teeing: true,
		seen: map[*memory.Buffer]bool{}, cached: s.c.cachedCols(s.key, names)}
	t.refs.Store(1)
	return t, nil
}

var _ planner.FilterPushdowner = (*Source)(nil)

var _ planner.SubtreePusher = (*Source)(nil)

// PushesPlan implements planner.SubtreePusher: what the underlying source
// runs itself (a Parquet file counting from its footer or its pages), when
// the columns n scans are not cached (from memory the engine is faster, and
// a pushed subtree fills nothing).
func (s *Source) PushesPlan(n planner.Node) bool {
	p, ok := s.inner.(planner.SubtreePusher)
	if !ok {
		return false
	}
	if scan := planner.ScanOf(n); scan != nil && s.Cached(scan.Columns) {
		return false
	}
	return p.PushesPlan(n)
}

// HandlesFilter implements planner.FilterPushdowner: what the underlying
// source handles, when the file is too big for the cache as a whole (its
// scans read the file and never fill the cache, so filtering while
// reading costs no later query anything), or is a Parquet file read by no
// filtered scan yet (whose filtered scans decode the other columns for the
// passing rows only, catalog/parquet_filter.go: cheaper than filling the
// cache for a cold query; its unfiltered scans fill it). The second
// filtered query of a Parquet file takes no filters and fills the cache,
// so that a file explored with filters is read from memory from then on. Scans of a CSV or JSON file that
// fits fill the cache and are served from memory afterwards; they take no
// filters. A scan given filters is still served from memory when its
// columns are cached (the engine applies the filters to what it returns).
func (s *Source) HandlesFilter(p planner.Predicate) bool {
	pd, ok := s.inner.(planner.FilterPushdowner)
	if !ok || !pd.HandlesFilter(p) {
		return false
	}
	if s.estimate(s.ds.Schema.NumFields()) > s.c.budget {
		return true
	}
	_, again := s.c.filteredOnce.Load(s.key)
	return s.ds.Kind == catalog.KindParquet && !again
}

// estimate guesses the in-memory bytes of ncols columns of the dataset
// from the file size (text formats take about their size in Arrow memory;
// gzip about four times its size).
func (s *Source) estimate(ncols int) int64 {
	n := s.ds.Schema.NumFields()
	if n == 0 || s.ds.Kind != catalog.KindCSV {
		return 0
	}
	size := s.ds.SizeBytes
	if a, _ := s.ds.Attributes["compression"].(string); a != "" {
		size *= 4
	}
	return size * int64(ncols) / int64(n)
}

// schemaOf is the output schema of cached columns: the dataset's fields
// with the types of the cached arrays (which may be dictionary-encoded
// strings where the dataset says string).
func (s *Source) schemaOf(names []string, chunks [][]arrow.Array) (*arrow.Schema, error) {
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		idx := s.ds.Schema.FieldIndices(n)
		if len(idx) == 0 {
			return nil, errNoColumn
		}
		fields[i] = s.ds.Schema.Field(idx[0])
		if len(chunks[i]) > 0 {
			fields[i].Type = chunks[i][0].DataType()
		}
	}
	return arrow.NewSchema(fields, nil), nil
}

var errNoColumn = &colErr{"column not in the dataset schema"}

type colErr struct{ s string }

func (e *colErr) Error() string { return e.s }

// ---------------------------------------------------------------- memReader

// cursor is a position in one column's chunk list.
type cursor struct{ chunk, off int }

// memReader serves cached columns as batches of at most batch rows
// (shorter where the columns' chunks do not line up), zero-copy, leaving
// out the batches skip rules out (zone filters).
type memReader struct {
	refs   atomic.Int64
	ctx    context.Context
	schema *arrow.Schema
	chunks [][]arrow.Array // per column, retained
	rows   int64
	batch  int
	pos    []cursor
	done   int64 // rows handed out
	cur    arrow.RecordBatch
	err    error
	skip   *skipper // nil: no zone filters
}

func (r *memReader) Retain() { r.refs.Add(1) }

func (r *memReader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.free()
	}
}

func (r *memReader) free() {
	r.skip.done()
	for _, cs := range r.chunks {
		releaseAll(cs)
	}
	r.chunks = nil
}

func (r *memReader) Schema() *arrow.Schema          { return r.schema }
func (r *memReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch.
//
// Deprecated: use RecordBatch.
func (r *memReader) Record() arrow.RecordBatch { return r.cur }
func (r *memReader) Err() error                { return r.err }

// ScanStats implements catalog.ScanStatser: the rows handed out and the
// zones skipped.
func (r *memReader) ScanStats() (catalog.ScanStats, bool) {
	st := catalog.ScanStats{RowsRead: r.done}
	if r.skip != nil {
		st.ZonesSkipped, st.RowsSkipped = r.skip.skipped, r.skip.skippedRows
		st.RowsRead -= r.skip.skippedRows
	}
	return st, true
}

func (r *memReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.chunks == nil || r.err != nil {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.err = err
		r.free()
		return false
	}
	if len(r.chunks) == 0 { // no columns: rows only
		n := min(int64(r.batch), r.rows-r.done)
		if n <= 0 {
			r.free()
			return false
		}
		r.done += n
		r.cur = array.NewRecordBatch(r.schema, nil, n)
		return true
	}
	n, ok := r.span()
	if r.skip != nil {
		for ok {
			n = r.skip.clip(r.pos, 0, n)
			if c := r.skip.match(r.pos, n); c != zoneNone {
				n = r.grow(n, c)
				break
			}
			for i := range r.pos {
				r.pos[i].off += n
			}
			r.done += int64(n)
			n, ok = r.span()
		}
	}
	if !ok {
		r.free()
		return false
	}
	cols := make([]arrow.Array, len(r.chunks))
	for i, cs := range r.chunks {
		p := &r.pos[i]
		a := cs[p.chunk]
		if p.off == 0 && n == a.Len() {
			a.Retain()
			cols[i] = a
		} else {
			cols[i] = array.NewSlice(a, int64(p.off), int64(p.off+n))
		}
		p.off += n
	}
	r.done += int64(n)
	r.cur = array.NewRecordBatch(r.schema, cols, int64(n))
	releaseAll(cols)
	return true
}

// span moves the cursors past exhausted chunks and returns the rows of the
// next batch (it ends at the nearest chunk end); ok is false at the end.
func (r *memReader) span() (n int, ok bool) {
	n = r.batch
	for i, cs := range r.chunks {
		p := &r.pos[i]
		for p.chunk < len(cs) && p.off >= cs[p.chunk].Len() {
			p.chunk, p.off = p.chunk+1, 0
		}
		if p.chunk >= len(cs) {
			return 0, false
		}
		n = min(n, cs[p.chunk].Len()-p.off)
	}
	return n, true
}

// grow extends a batch of n rows of class c (zoneSome or zoneAll) over
// the blocks after it of the same class, within the columns' current
// chunks and up to r.batch rows. Keeping the classes apart hands the
// Filter above batches in which every row passes (which it passes on
// without copying) apart from those it must cut; a block no row of which
// can match is left for the next batch to skip.
func (r *memReader) grow(n, c int) int {
	for n < r.batch {
		m := r.batch - n
		for i, cs := range r.chunks {
			p := r.pos[i]
			m = min(m, cs[p.chunk].Len()-p.off-n)
		}
		if m = r.skip.clip(r.pos, n, m); m <= 0 || r.skip.class(r.pos, n) != c {
			break
		}
		r.skip.checked++
		n += m
	}
	return n
}

// ---------------------------------------------------------------- teeReader

// teeReader passes the underlying reader through and keeps the arrays of
// every column not cached when it began (a cached one is not held twice);
// when the read ends without error it inserts them into the cache.
// It is the one read filling the cache for its file (Cache.startTee), and
// the bytes it keeps count against the cache's budget as it goes
// (Cache.holdTee): it gives up caching when they cannot fit.
type teeReader struct {
	array.RecordReader
	refs    atomic.Int64
	src     *Source
	names   []string
	pending [][]arrow.Array
	bytes   int64
	held    int64 // of bytes, what the cache counts (holdTee)
	seen    map[*memory.Buffer]bool
	cached  []bool // per name: cached when the read began (not kept twice)
	rows    int64
	off     bool // gave up caching (too big, or failed)
	ended   bool
	teeing  bool // holds the file's tee (endTee not called yet)
}

func (t *teeReader) Retain() { t.refs.Add(1) }

// ScanStats implements catalog.ScanStatser for a reader that counts them.
func (t *teeReader) ScanStats() (catalog.ScanStats, bool) { return catalog.StatsOf(t.RecordReader) }

func (t *teeReader) Release() {
	if t.refs.Add(-1) == 0 {
		t.drop()
		t.RecordReader.Release()
	}
}

func (t *teeReader) drop() {
	for _, cs := range t.pending {
		releaseAll(cs)
	}
	t.pending, t.seen = nil, nil
	t.off = true
	t.endTee()
}

// endTee gives the file's tee and the bytes held back to the cache (once).
func (t *teeReader) endTee() {
	if t.teeing {
		t.teeing = false
		t.src.c.endTee(t.src.key, t.held)
		t.held = 0
	}
}

func (t *teeReader) Next() bool {
	if t.ended {
		return false
	}
	if !t.RecordReader.Next() {
		t.ended = true
		if !t.off && t.RecordReader.Err() == nil {
			t.commit()
		}
		t.drop()
		return false
	}
	if t.off {
		return true
	}
	rec := t.RecordReader.RecordBatch()
	if int(rec.NumCols()) != len(t.names) {
		t.drop()
		return true
	}
	var delta int64
	for i := range t.names {
		if t.cached[i] {
			continue
		}
		a := rec.Column(i)
		a.Retain()
		t.pending[i] = append(t.pending[i], a)
		// The bytes of buffers not seen before (slices of one chunk
		// share buffers), counted against the cache's budget as they come.
		delta += bufferBytes(t.seen, a)
	}
	t.rows += rec.NumRows()
	t.bytes += delta
	if t.bytes > t.src.c.budget || !t.src.c.holdTee(t.src.key, delta) {
		t.drop()
	} else {
		t.held = t.bytes
	}
	return true
}

// commit inserts the read columns if the file is still the cataloged one
// and the row count matches.
func (t *teeReader) commit() {
	s := t.src
	if t.rows != s.ds.RowCount && s.ds.RowCountExact {
		return
	}
	if !s.fresh() {
		return
	}
	var names []string
	var types []arrow.DataType
	var chunks [][]arrow.Array
	for i, name := range t.names {
		if !t.cached[i] {
			names = append(names, name)
			types = append(types, t.RecordReader.Schema().Field(i).Type)
			chunks = append(chunks, t.pending[i])
		}
	}
	t.pending = nil
	t.endTee() // insert counts what it keeps
	s.c.insert(s.key, t.rows, names, types, chunks)
}
