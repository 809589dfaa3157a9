//go:build cgo && !nohdf5

package hdf5

import (
	"context"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/qerr"
)

const (
	// defaultBatchRows is the batch size when ScanOptions.BatchSize is 0.
	defaultBatchRows = 64 << 10
	// blockBudget bounds the temporary buffer of a multi-column 2-D read.
	blockBudget = 32 << 20
	// maxChunkCache bounds the per-dataset chunk cache of a scan.
	maxChunkCache = 64 << 20
)

// source reads one discovered table.
type source struct {
	f      *Format
	file   catalog.FileInfo // the file as cataloged (root, identity)
	tbl    *table
	schema *arrow.Schema
}

// Scan implements catalog.Source. The file is reopened (through the cache)
// and the table's datasets are checked against the catalogued schema; a
// dataset needing a filter the library lacks fails with unsupported_filter
// before anything is read.
func (s *source) Scan(ctx context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	alloc := opts.Alloc
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	proj, err := s.projection(opts.Columns)
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(proj))
	for i, c := range proj {
		fields[i] = s.schema.Field(c)
	}
	schema := arrow.NewSchema(fields, nil)

	file, err := s.f.acquire(s.file)
	if err != nil {
		return nil, err
	}
	r := &reader{ctx: ctx, schema: schema, alloc: alloc, file: file, dsets: map[string]h5.ID{}, rows: -1}
	r.refs.Store(1)
	if err := r.setup(s, proj, opts.BatchSize); err != nil {
		r.free()
		return nil, err
	}
	return r, nil
}

func (s *source) projection(cols []string) ([]int, error) {
	if len(cols) == 0 {
		out := make([]int, len(s.tbl.cols))
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	out := make([]int, 0, len(cols))
	for _, name := range cols {
		idx := -1
		for i, c := range s.tbl.cols {
			if c.name == name {
				idx = i
				break
			}
		}
		if idx < 0 {
			names := make([]string, len(s.tbl.cols))
			for i, c := range s.tbl.cols {
				names[i] = c.name
			}
			sugg := qerr.Suggest(name, names, 3)
			e := qerr.NotFound(qerr.CodeInvalidColumn, "no column %q in this HDF5 table", name).With("suggestions", sugg)
			if len(sugg) > 0 {
				e = e.WithHint("did you mean %q?", sugg[0])
			}
			return nil, e
		}
		out = append(out, idx)
	}
	return out, nil
}

// reader is the RecordReader of one scan.
type reader struct {
	refs   atomic.Int64
	ctx    context.Context
	schema *arrow.Schema
	alloc  memory.Allocator
	file   *h5.File
	dsets  map[string]h5.ID
	infos  map[string]h5.DatasetInfo
	cols   []scanCol
	rows   int64
	pos    int64
	batch  int64
	cur    arrow.RecordBatch
	err    error
	done   bool
	// rec reads every projected column of a compound table with one read
	// per batch (nil for other tables).
	rec *recordReader
	// 2-D multi-column block reads.
	block        bool
	blockDset    h5.ID
	blockReader  *leafReader
	blockC0      int
	blockWidth   int
	blockElemLen int
}

type scanCol struct {
	lr    *leafReader
	dset  h5.ID
	kind  tableKind
	index int
}

func (r *reader) setup(s *source, proj []int, batchSize int) error {
	t := s.tbl
	chunkRows := int64(0)
	// Open every dataset the projection needs, once.
	for _, ci := range proj {
		c := t.cols[ci]
		if _, ok := r.dsets[c.dset]; ok {
			continue
		}
		if err := r.openDataset(c.dset, t, &chunkRows, batchSize); err != nil {
			return err
		}
	}
	if r.rows < 0 {
		r.rows = 0
	}
	// Re-derive every column's type from the live file; the schema was
	// built at discovery and the file may have been rewritten since.
	types := map[string]*h5.Type{}
	var recPaths [][]string
	var recLeaves []*leaf
	for i, ci := range proj {
		c := t.cols[ci]
		did := r.dsets[c.dset]
		typ, ok := types[c.dset]
		if !ok {
			var err error
			if typ, err = h5.DatasetType(did); err != nil {
				return qerr.Internal(err, "reading the type of %s: %v", c.dset, err)
			}
			types[c.dset] = typ
		}
		lf := memberLeaf(typ, c.member)
		if lf == nil || !arrow.TypeEqual(lf.dt, r.schema.Field(i).Type) {
			return changedErr(c.dset)
		}
		sc := scanCol{dset: did, kind: t.kind, index: c.index}
		if t.kind == tableCompound {
			recPaths = append(recPaths, c.member)
			recLeaves = append(recLeaves, lf)
		} else if t.kind == table2D && r.blockReader != nil {
			sc.lr = r.blockReader
		} else {
			lr, err := newLeafReader(lf, c.member)
			if err != nil {
				return err
			}
			if len(c.member) == 0 {
				// Whole-element columns decode compressed chunks on every
				// core when they can.
				lr.useChunkReader(did, r.infos[c.dset])
			}
			sc.lr = lr
			if t.kind == table2D {
				r.blockReader = lr
			}
		}
		r.cols = append(r.cols, sc)
	}
	if t.kind == tableCompound && len(r.cols) > 0 {
		p := t.cols[proj[0]].dset
		rr, err := newRecordReader(r.dsets[p], r.infos[p], types[p], recPaths, recLeaves)
		if err != nil {
			return err
		}
		r.rec = rr
	}
	// 2-D tables with several projected columns read one row block per batch.
	width := 1
	if t.kind == table2D && len(r.cols) > 1 {
		lo, hi := r.cols[0].index, r.cols[0].index
		for _, c := range r.cols {
			lo, hi = min(lo, c.index), max(hi, c.index)
		}
		r.block, r.blockDset, r.blockC0, r.blockWidth = true, r.cols[0].dset, lo, hi-lo+1
		r.blockElemLen = r.blockReader.elemSize
		width = r.blockWidth
	}
	batch := int64(batchSize)
	if batch <= 0 {
		batch = defaultBatchRows
	}
	if r.block {
		batch = min(batch, max(1, int64(blockBudget/(width*max(r.blockElemLen, 1)))))
	}
	if chunkRows > 0 && batch >= chunkRows {
		batch = max(1, (batch+chunkRows/2)/chunkRows) * chunkRows
	}
	r.batch = batch
	return nil
}

func changedErr(p string) error {
	return qerr.NotFound(qerr.CodeDatasetNotFound, "the HDF5 dataset %s changed since the catalog was built", p).
		WithHint("rescan the data root and retry")
}

// memberLeaf maps the type at a compound member path (nil = whole type).
func memberLeaf(t *h5.Type, member []string) *leaf {
	for _, m := range member {
		var next *h5.Type
		for _, cm := range t.Members {
			if cm.Name == m {
				next = cm.Type
				break
			}
		}
		if next == nil {
			return nil
		}
		t = next
	}
	return mapType(t)
}

func (r *reader) openDataset(p string, t *table, chunkRows *int64, batchSize int) error {
	// A compound table read through H5Dread touches the chunks at batch
	// boundaries twice when batches do not line up with chunks: give the
	// dataset a chunk cache large enough to hold one batch of chunks.
	cache := 0
	did, err := h5.OpenDataset(r.file.ID(), p, 0)
	if err != nil {
		return changedErr(p)
	}
	info, err := h5.GetDatasetInfo(did)
	if err != nil {
		_ = h5.Close(did)
		return qerr.Internal(err, "reading the storage of %s: %v", p, err)
	}
	if err := storageErr(p, info); err != nil {
		_ = h5.Close(did)
		return err
	}
	sp, err := h5.DatasetSpace(did)
	if err != nil {
		_ = h5.Close(did)
		return qerr.Internal(err, "reading the shape of %s: %v", p, err)
	}
	want := 1
	if t.kind == table2D {
		want = 2
	}
	if sp.Class != h5.SpaceSimple || len(sp.Dims) != want {
		_ = h5.Close(did)
		return changedErr(p)
	}
	if t.kind == table2D && int64(len(t.cols)) != sp.Dims[1] {
		_ = h5.Close(did)
		return changedErr(p)
	}
	if r.rows < 0 || sp.Dims[0] < r.rows {
		r.rows = sp.Dims[0]
	}
	if len(info.Chunk) > 0 && info.Chunk[0] > *chunkRows {
		*chunkRows = info.Chunk[0]
	}
	if t.kind == tableCompound && len(info.Chunk) > 0 {
		typ, err := h5.DatasetType(did)
		if err == nil {
			chunkBytes := int64(typ.Size)
			for _, c := range info.Chunk {
				chunkBytes *= c
			}
			b := int64(batchSize)
			if b <= 0 {
				b = defaultBatchRows
			}
			nChunks := (b+info.Chunk[0]-1)/info.Chunk[0] + 1
			cache = int(min(maxChunkCache, max(1<<20, chunkBytes*nChunks)))
		}
		if cache > 0 {
			_ = h5.Close(did)
			if did, err = h5.OpenDataset(r.file.ID(), p, cache); err != nil {
				return changedErr(p)
			}
		}
	}
	r.dsets[p] = did
	if r.infos == nil {
		r.infos = map[string]h5.DatasetInfo{}
	}
	r.infos[p] = info
	return nil
}

// storageErr refuses, before any read, datasets the library cannot or must
// not read: a filter it lacks, raw data in external files, or a virtual
// dataset assembled from other files (the last two would let a file in the
// data root make the server read arbitrary files).
func storageErr(p string, info h5.DatasetInfo) error {
	if flt, bad := info.UnavailableFilter(); bad {
		return unavailableFilterErr(p, flt)
	}
	if info.ExternalFiles > 0 {
		return qerr.Unsupported(qerr.CodeUnsupportedFormat, "dataset %s keeps its raw data in %d external file(s), which Quarry does not read", p, info.ExternalFiles).
			WithHint("copy the data into the HDF5 file (external storage can point anywhere on the server)")
	}
	if info.Layout == h5.LayoutVirtual {
		return qerr.Unsupported(qerr.CodeUnsupportedFormat, "dataset %s is a virtual dataset assembled from %d other source(s), which Quarry does not read", p, info.VirtualSources).
			WithHint("read the source datasets directly")
	}
	return nil
}

func unavailableFilterErr(p string, flt h5.Filter) error {
	name := flt.Name
	if name == "" {
		name = "unregistered"
	}
	return qerr.Unsupported(qerr.CodeUnsupportedFilter,
		"dataset %s is compressed with the %s filter (id %d), which this server's HDF5 library does not provide", p, name, flt.ID).
		WithHint("rewrite the dataset with gzip (deflate), or install the HDF5 plugin for filter %d where the server runs", flt.ID).
		With("filter_id", flt.ID).With("filter_name", name)
}

// Retain implements array.RecordReader.
func (r *reader) Retain() { r.refs.Add(1) }

// Release implements array.RecordReader.
func (r *reader) Release() {
	if r.refs.Add(-1) == 0 {
		r.free()
	}
}

func (r *reader) free() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.closeFile()
}

// closeFile releases the HDF5 resources (when exhausted, failed or released).
func (r *reader) closeFile() {
	seen := map[*leafReader]bool{}
	for _, c := range r.cols {
		if c.lr != nil && !seen[c.lr] {
			seen[c.lr] = true
			c.lr.close()
		}
	}
	r.cols = nil
	r.rec.close()
	r.rec = nil
	if r.blockReader != nil && !seen[r.blockReader] {
		r.blockReader.close()
	}
	r.blockReader = nil
	for p, d := range r.dsets {
		_ = h5.Close(d)
		delete(r.dsets, p)
	}
	if r.file != nil {
		r.file.Release()
		r.file = nil
	}
}

// Schema implements array.RecordReader.
func (r *reader) Schema() *arrow.Schema { return r.schema }

// RecordBatch implements array.RecordReader.
func (r *reader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record implements array.RecordReader.
//
// Deprecated: use RecordBatch.
func (r *reader) Record() arrow.RecordBatch { return r.cur }

// Err implements array.RecordReader.
func (r *reader) Err() error { return r.err }

// Next implements array.RecordReader.
func (r *reader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.done || r.err != nil {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.err = err
		r.closeFile()
		return false
	}
	n := min(r.batch, r.rows-r.pos)
	if n <= 0 || r.file == nil {
		r.done = true
		r.closeFile()
		return false
	}
	cols, err := r.readBatch(r.pos, int(n))
	if err != nil {
		r.err = err
		r.closeFile()
		return false
	}
	r.cur = array.NewRecordBatch(r.schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	r.pos += n
	return true
}

func (r *reader) readBatch(start int64, n int) ([]arrow.Array, error) {
	if r.rec != nil {
		return r.rec.read(r.cols[0].dset, h5.Hyperslab{Start: []int64{start}, Count: []int64{int64(n)}}, n, r.alloc)
	}
	cols := make([]arrow.Array, 0, len(r.cols))
	fail := func(err error) ([]arrow.Array, error) {
		for _, c := range cols {
			c.Release()
		}
		return nil, err
	}
	var block *memory.Buffer
	if r.block {
		var err error
		if block, err = r.readBlock(start, n); err != nil {
			return fail(err)
		}
		defer block.Release()
	}
	for _, c := range r.cols {
		var a arrow.Array
		var err error
		switch {
		case r.block:
			a = r.columnFromBlock(block, c.index-r.blockC0, n, c.lr.lf.dt)
		case c.kind == table2D:
			sel := h5.Hyperslab{Start: []int64{start, int64(c.index)}, Count: []int64{int64(n), 1}}
			a, err = c.lr.read(c.dset, sel, n, r.alloc)
		default:
			sel := h5.Hyperslab{Start: []int64{start}, Count: []int64{int64(n)}}
			a, err = c.lr.read(c.dset, sel, n, r.alloc)
		}
		if err != nil {
			return fail(err)
		}
		cols = append(cols, a)
	}
	return cols, nil
}

// readBlock reads rows [start, start+n) x the projected column range of a
// 2-D dataset into a temporary buffer.
func (r *reader) readBlock(start int64, n int) (*memory.Buffer, error) {
	buf := memory.NewResizableBuffer(r.alloc)
	buf.Resize(n * r.blockWidth * r.blockElemLen)
	if n > 0 {
		sel := h5.Hyperslab{Start: []int64{start, int64(r.blockC0)}, Count: []int64{int64(n), int64(r.blockWidth)}}
		if err := r.blockReader.readInto(r.blockDset, sel, unsafe.Pointer(&buf.Bytes()[0])); err != nil {
			buf.Release()
			return nil, readErr(err)
		}
	}
	return buf, nil
}

func (r *reader) columnFromBlock(block *memory.Buffer, j, n int, dt arrow.DataType) arrow.Array {
	size := r.blockElemLen
	dst := memory.NewResizableBuffer(r.alloc)
	defer dst.Release()
	dst.Resize(n * size)
	if n > 0 {
		copyColumn(dst.Bytes(), block.Bytes(), n, r.blockWidth, j, size)
	}
	return makeArray(dt, n, []*memory.Buffer{nil, dst}, nil)
}
