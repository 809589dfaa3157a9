//go:build cgo && !nohdf5

package hdf5

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/qerr"
)

// Limits of discovery.
const (
	// DefaultMaxOpenFiles is the size of the open-file cache.
	DefaultMaxOpenFiles = 64
	// DefaultMaxSliceBytes caps the memory of one ReadSlice result.
	DefaultMaxSliceBytes = 256 << 20
	// maxWalkObjects bounds the objects visited in one file by Open.
	maxWalkObjects = 100_000
	// maxTables bounds the tables one file contributes.
	maxTables = 10_000
	// maxTableColumns bounds the columns of a 2-D table (wider arrays are
	// not tables; read them with ReadSlice).
	maxTableColumns = 10_000
	// maxAttrs bounds the attributes decoded per object.
	maxAttrs = 256
)

// Format is the catalog.Format for HDF5 (and NetCDF-4) files, plus the
// object browsing and slicing the MCP layer exposes. Safe for concurrent
// use. Close it to release cached file handles.
type Format struct {
	cache         *h5.FileCache
	root          string
	maxSliceBytes int64
}

// Option configures a Format.
type Option func(*Format)

// WithRoot sets the data root. External links are followed only to files
// inside it. Without a root they are followed only to files in the
// directory tree of the file being read.
func WithRoot(dir string) Option {
	return func(f *Format) {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		f.root = filepath.Clean(dir)
	}
}

// WithMaxOpenFiles sets the size of the open-file cache (default 64).
func WithMaxOpenFiles(n int) Option {
	return func(f *Format) { f.cache = h5.NewFileCache(n) }
}

// WithMaxSliceBytes caps the in-memory size of one ReadSlice result
// (default 256 MiB); larger selections fail with oversize_result.
func WithMaxSliceBytes(n int64) Option {
	return func(f *Format) { f.maxSliceBytes = n }
}

// NewFormat returns the HDF5 format. It implements catalog.Format.
func NewFormat(opts ...Option) *Format {
	f := &Format{maxSliceBytes: DefaultMaxSliceBytes}
	for _, o := range opts {
		o(f)
	}
	if f.cache == nil {
		f.cache = h5.NewFileCache(DefaultMaxOpenFiles)
	}
	return f
}

var _ catalog.Format = (*Format)(nil)

// Close closes the cached files (files still being read close when their
// readers are released). The Format must not be used afterwards.
func (f *Format) Close() error { return f.cache.Close() }

// acquire opens fi's file through the cache, checking the HDF5 signature
// first; errors are qerr errors. The file is opened confined to fi.Root
// (catalog.FileInfo.Open: no symlink followed, identity checked) and
// libhdf5 reads exactly the file so opened (h5.FileCache.Acquire).
func (f *Format) acquire(fi catalog.FileInfo) (*h5.File, error) {
	absFile := fi.AbsPath
	fh, err := fi.Open()
	if err != nil {
		return nil, openErr(absFile, err)
	}
	defer fh.Close()
	ok, err := h5.IsHDF5FD(fh)
	if err != nil || !ok {
		e := qerr.Unsupported(qerr.CodeUnsupportedFormat, "%s is not an HDF5 file", filepath.Base(absFile))
		if strings.EqualFold(filepath.Ext(absFile), ".nc") {
			e = e.WithHint("only NetCDF-4 (HDF5-based) .nc files are supported, not NetCDF-3 classic")
		}
		return nil, e
	}
	file, err := f.cache.Acquire(absFile, fh)
	if err != nil {
		if errors.Is(err, h5.ErrCacheClosed) {
			return nil, qerr.Internal(err, "the HDF5 format is closed")
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, qerr.NotFound(qerr.CodeResourceNotFound, "file %s does not exist", filepath.Base(absFile)).Wrap(err)
		}
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "cannot open HDF5 file %s: %v", filepath.Base(absFile), err).Wrap(err)
	}
	return file, nil
}

// tableKind is the layout a table was found in.
type tableKind uint8

const (
	tableGroup    tableKind = iota // a group of equal-length 1-D datasets
	tableCompound                  // a 1-D compound dataset
	tableColumn                    // a lone 1-D dataset
	table2D                        // a 2-D numeric dataset
)

// String names the layout.
func (k tableKind) String() string {
	return [...]string{"group_columns", "compound", "column", "2d"}[k]
}

// colSpec locates one column of a table.
type colSpec struct {
	name   string
	dset   string   // dataset path
	member []string // compound member path
	index  int      // column index of a 2-D dataset
	lf     *leaf
}

// table is the layout of one discovered table.
type table struct {
	kind tableKind
	path string // group or dataset path
	rows int64
	cols []colSpec
}

// dsInfo is what discovery learns about one dataset.
type dsInfo struct {
	path  string
	name  string
	space h5.Space
	typ   *h5.Type
	attrs map[string]any
	addr  uint64
}

// Open inspects an HDF5 file and returns its tables (see the package doc
// for the rules). Files that are not HDF5, truncated or unreadable yield
// an error.
func (f *Format) Open(ctx context.Context, fi catalog.FileInfo) ([]*catalog.Dataset, error) {
	file, err := f.acquire(fi)
	if err != nil {
		return nil, err
	}
	defer file.Release()
	w := &walker{ctx: ctx, fid: file.ID(), seen: map[uint64]bool{}}
	if err := w.walk(); err != nil {
		return nil, err
	}
	if len(w.tables) == 0 {
		return nil, noTables()
	}
	var out []*catalog.Dataset
	for _, t := range w.tables {
		id := fi.BaseID
		if t.path != "/" {
			id = fi.BaseID + t.path
		}
		fields := make([]arrow.Field, len(t.cols))
		for i, c := range t.cols {
			fields[i] = c.lf.field(c.name)
			if md := w.colMeta[c.dset]; md != nil && t.kind != table2D && c.member == nil {
				fields[i] = withMeta(fields[i], md)
			}
		}
		attrs := cleanAttrs(w.attrs[t.path])
		ds := &catalog.Dataset{
			ID:            id,
			Kind:          catalog.KindHDF5,
			Path:          fi.RelPath,
			AbsPath:       fi.AbsPath,
			Schema:        arrow.NewSchema(fields, nil),
			RowCount:      t.rows,
			RowCountExact: true,
			SizeBytes:     fi.Size,
			ModTime:       fi.ModTime,
			FileID:        fi.FileID,
			Description:   describe(attrs),
			Attributes:    attrs,
		}
		ds.Source = &source{f: f, file: fi, tbl: t, schema: ds.Schema}
		out = append(out, ds)
	}
	return out, nil
}

// withMeta adds a column dataset's units/description attributes to its
// field metadata.
func withMeta(fd arrow.Field, md map[string]string) arrow.Field {
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ks, vs := fd.Metadata.Keys(), fd.Metadata.Values()
	for _, k := range keys {
		ks = append(ks, k)
		vs = append(vs, md[k])
	}
	fd.Metadata = arrow.NewMetadata(ks, vs)
	return fd
}

func cleanAttrs(a map[string]any) map[string]any {
	if len(a) == 0 {
		return nil
	}
	out := make(map[string]any, len(a))
	for k, v := range a {
		if !internalAttrs[k] {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// descriptionKeys are the attributes a Description is taken from, in order.
var descriptionKeys = []string{"description", "long_name", "title"}

func describe(attrs map[string]any) string {
	for _, k := range descriptionKeys {
		for ak, v := range attrs {
			if strings.EqualFold(ak, k) {
				if s, ok := h5.AttrText(v); ok && s != "" {
					return s
				}
			}
		}
	}
	return ""
}

// walker discovers tables in one file.
type walker struct {
	ctx     context.Context
	fid     h5.ID
	seen    map[uint64]bool
	visited int
	tables  []*table
	attrs   map[string]map[string]any // table path -> attributes
	colMeta map[string]map[string]string
}

func (w *walker) walk() error {
	w.attrs = map[string]map[string]any{}
	w.colMeta = map[string]map[string]string{}
	root, err := h5.GetObjInfo(w.fid, "/")
	if err != nil {
		return qerr.Unsupported(qerr.CodeUnsupportedFormat, "cannot read the root group: %v", err).Wrap(err)
	}
	w.seen[root.Addr] = true
	queue := []string{"/"}
	for len(queue) > 0 && len(w.tables) < maxTables {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		g := queue[0]
		queue = queue[1:]
		sub, err := w.group(g)
		if err != nil {
			return err
		}
		queue = append(queue, sub...)
	}
	if len(w.tables) > maxTables {
		w.tables = w.tables[:maxTables]
	}
	return nil
}

func join(group, name string) string {
	if group == "/" {
		return "/" + name
	}
	return group + "/" + name
}

// group classifies the members of group g and returns its subgroups.
func (w *walker) group(g string) ([]string, error) {
	gid, err := h5.OpenObject(w.fid, g)
	if err != nil {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "cannot open group %s: %v", g, err).Wrap(err)
	}
	defer h5.Close(gid)
	members, _, err := h5.ListMembers(gid, maxWalkObjects)
	if err != nil {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "cannot list group %s: %v", g, err).Wrap(err)
	}
	var subgroups []string
	var oneD []*dsInfo
	for _, m := range members {
		if m.Link != h5.LinkHard {
			continue // links are browsable but not catalogued (no duplicates, no escapes)
		}
		w.visited++
		if w.visited > maxWalkObjects {
			break
		}
		if w.seen[m.Addr] {
			continue
		}
		w.seen[m.Addr] = true
		p := join(g, m.Name)
		switch m.Obj {
		case h5.ObjGroup:
			if !internalName(m.Name) {
				subgroups = append(subgroups, p)
			}
		case h5.ObjDataset:
			d, err := w.dataset(p, m.Name, m.Addr)
			if err != nil {
				// One unreadable dataset does not hide the rest of the file.
				continue
			}
			w.classify(d, &oneD)
		}
	}
	w.groupTable(g, gid, oneD)
	return subgroups, nil
}

func (w *walker) dataset(p, name string, addr uint64) (*dsInfo, error) {
	did, err := h5.OpenObject(w.fid, p)
	if err != nil {
		return nil, err
	}
	defer h5.Close(did)
	sp, err := h5.DatasetSpace(did)
	if err != nil {
		return nil, err
	}
	t, err := h5.DatasetType(did)
	if err != nil {
		return nil, err
	}
	d := &dsInfo{path: p, name: name, space: sp, typ: t, addr: addr}
	if sp.Class == h5.SpaceSimple && (len(sp.Dims) == 1 || len(sp.Dims) == 2) {
		d.attrs, _ = h5.ReadAttributes(did, maxAttrs)
	}
	return d, nil
}

// isNetCDFDim reports a NetCDF-4 dimension without a coordinate variable:
// a dataset of fill values that only anchors a dimension.
func isNetCDFDim(d *dsInfo) bool {
	s, _ := d.attrs["NAME"].(string)
	return strings.HasPrefix(s, netCDFDimPrefix)
}

func (w *walker) classify(d *dsInfo, oneD *[]*dsInfo) {
	if d.space.Class != h5.SpaceSimple || isNetCDFDim(d) {
		return
	}
	switch len(d.space.Dims) {
	case 1:
		if d.typ.Class == h5.ClassCompound && len(d.typ.Members) > 0 {
			w.compoundTable(d)
			return
		}
		*oneD = append(*oneD, d)
	case 2:
		if d.typ.IsNumeric() {
			w.table2D(d)
		}
	}
}

func (w *walker) add(t *table, attrs map[string]any) {
	dedupe(t.cols)
	w.tables = append(w.tables, t)
	w.attrs[t.path] = attrs
}

// dedupe renames duplicate column names name, name_1, name_2...
func dedupe(cols []colSpec) {
	seen := map[string]bool{}
	for i := range cols {
		n := cols[i].name
		if n == "" {
			n = fmt.Sprintf("c%d", i)
		}
		base := n
		for k := 1; seen[n]; k++ {
			n = fmt.Sprintf("%s_%d", base, k)
		}
		seen[n] = true
		cols[i].name = n
	}
}

func (w *walker) compoundTable(d *dsInfo) {
	t := &table{kind: tableCompound, path: d.path, rows: d.space.Dims[0]}
	for _, fc := range flatten(d.typ) {
		t.cols = append(t.cols, colSpec{name: fc.name, dset: d.path, member: fc.member, lf: fc.lf})
	}
	w.add(t, d.attrs)
}

func (w *walker) table2D(d *dsInfo) {
	ncol := d.space.Dims[1]
	if ncol == 0 || ncol > maxTableColumns {
		return
	}
	names := columnNames(d.attrs, int(ncol))
	lf := mapType(d.typ)
	t := &table{kind: table2D, path: d.path, rows: d.space.Dims[0]}
	for j := 0; j < int(ncol); j++ {
		t.cols = append(t.cols, colSpec{name: names[j], dset: d.path, index: j, lf: lf})
	}
	w.add(t, d.attrs)
}

// columnNames takes 2-D column names from a "columns" or "column_names"
// string-array attribute of the right length, else c0..cN.
func columnNames(attrs map[string]any, n int) []string {
	for _, k := range []string{"columns", "column_names"} {
		if v, ok := attrs[k].([]any); ok && len(v) == n {
			out := make([]string, n)
			good := true
			for i, x := range v {
				s, ok := x.(string)
				if !ok {
					good = false
					break
				}
				out[i] = s
			}
			if good {
				return out
			}
		}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("c%d", i)
	}
	return out
}

// groupTable decides which of a group's 1-D datasets form the group's
// table: when they all share one length, all of them; otherwise the largest
// set of equal length, if it has at least two members and is strictly the
// largest. The rest become one-column tables.
func (w *walker) groupTable(g string, gid h5.ID, oneD []*dsInfo) {
	if len(oneD) == 0 {
		return
	}
	byLen := map[int64][]*dsInfo{}
	var lens []int64
	for _, d := range oneD {
		n := d.space.Dims[0]
		if _, ok := byLen[n]; !ok {
			lens = append(lens, n)
		}
		byLen[n] = append(byLen[n], d)
	}
	var chosen []*dsInfo
	if len(lens) == 1 {
		chosen = oneD
	} else {
		best, second := 0, 0
		var bestLen int64
		for _, n := range lens {
			c := len(byLen[n])
			if c > best {
				second, best, bestLen = best, c, n
			} else if c > second {
				second = c
			}
		}
		if best >= 2 && best > second {
			chosen = byLen[bestLen]
		}
	}
	in := map[*dsInfo]bool{}
	if len(chosen) > 0 {
		t := &table{kind: tableGroup, path: g, rows: chosen[0].space.Dims[0]}
		for _, d := range chosen {
			in[d] = true
			t.cols = append(t.cols, colSpec{name: d.name, dset: d.path, lf: mapType(d.typ)})
			w.noteColumnMeta(d)
		}
		attrs, _ := h5.ReadAttributes(gid, maxAttrs)
		w.add(t, attrs)
	}
	for _, d := range oneD {
		if in[d] {
			continue
		}
		t := &table{kind: tableColumn, path: d.path, rows: d.space.Dims[0]}
		t.cols = []colSpec{{name: d.name, dset: d.path, lf: mapType(d.typ)}}
		w.noteColumnMeta(d)
		w.add(t, d.attrs)
	}
}

// noteColumnMeta records a column dataset's units/description for its
// Arrow field metadata.
func (w *walker) noteColumnMeta(d *dsInfo) {
	md := map[string]string{}
	for _, k := range []string{"units", "unit"} {
		if s, ok := h5.AttrText(d.attrs[k]); ok && s != "" {
			md["units"] = s
			break
		}
	}
	if s := describe(d.attrs); s != "" {
		md["description"] = s
	}
	if len(md) > 0 {
		w.colMeta[d.path] = md
	}
}

// openErr maps a failed open of a data file to a qerr error.
func openErr(path string, err error) error {
	var qe *qerr.Error
	switch {
	case errors.As(err, &qe): // refused by the confined open
		return err
	case errors.Is(err, fs.ErrNotExist):
		return qerr.NotFound(qerr.CodeResourceNotFound, "file %s does not exist", filepath.Base(path)).Wrap(err)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return qerr.Unsupported(qerr.CodeUnsupportedFormat, "cannot read %s: %v", filepath.Base(path), err).Wrap(err)
}

// fileAt describes absFile (a path resolve or the MCP layer checked to be
// inside the root) for acquire: confined to the Format's root, or without
// one to the file's own folder; identity unknown.
func (f *Format) fileAt(absFile string) catalog.FileInfo {
	fi := catalog.FileInfo{AbsPath: absFile, RelPath: filepath.Base(absFile), Root: f.root}
	if f.root != "" {
		if rel, err := filepath.Rel(f.root, absFile); err == nil {
			fi.RelPath = filepath.ToSlash(rel)
		}
	}
	return fi
}
