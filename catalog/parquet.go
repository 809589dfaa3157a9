package catalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// KindParquet is the kind of datasets read from Parquet files.
const KindParquet Kind = "parquet"

// parquetFormat implements Format for Parquet files.
type parquetFormat struct{ lim Limits }

// NewParquetFormat returns the Format for Parquet files (".parquet", any
// case). Each file is one dataset whose id is the path without extension.
//
// Opening a file reads only its footer (through FileInfo.Open): the Arrow
// schema (arrow-go's pqarrow mapping of the Parquet schema; an embedded
// Arrow schema is ignored, see openParquet) and the exact row count from the row groups'
// metadata. Column types the engine computes on are kept as stored;
// others become what exposedType says (decimals of at most 15 digits are
// float64, wider ones text; nested struct/list/map columns are JSON text;
// binary is base64 text), with a note in Dataset.ColumnNotes. Scans read
// row group by row group and only the requested columns (their leaf
// columns in the file): flat columns through parquet-go (parquet_go.go),
// the others through pqarrow; string columns with a dictionary page in
// every row group as Arrow dictionaries (parquet_dict.go).
//
// A file beyond lim (more than MaxColumns leaf columns, a footer longer
// than MaxMetadataBytes) or whose footer does not decode is a diagnostic;
// a decoder failure or panic during a scan is an error naming the dataset.
func NewParquetFormat(lim Limits) Format { return parquetFormat{lim: lim.WithDefaults()} }

// Kind implements Format.
func (parquetFormat) Kind() Kind { return KindParquet }

// Match implements Format.
func (parquetFormat) Match(name string) bool {
	return hasExt(name, ".parquet")
}

// hasExt reports whether name ends in ext (lower case, with its dot),
// case-insensitively, with something before it.
func hasExt(name, ext string) bool {
	return len(name) > len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext)
}

// parquetMagic opens and closes every Parquet file.
var parquetMagic = []byte("PAR1")

// openParquet opens f (confined) and parses its footer within lim. The
// caller closes the returned reader (which closes the file).
func openParquet(f FileInfo, lim Limits) (*file.Reader, error) {
	pf, _, err := openParquetFile(f, lim)
	return pf, err
}

// openParquetFile is openParquet that also returns the open file (which
// the reader closes).
func openParquetFile(f FileInfo, lim Limits) (pf *file.Reader, _ *os.File, err error) {
	fh, err := f.Open()
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the Parquet footer does not decode (%v)", p)
		}
		if err != nil {
			fh.Close()
		}
	}()
	if err := checkParquetTail(fh, lim); err != nil {
		return nil, nil, err
	}
	pf, err = file.NewParquetReader(fh)
	if err != nil {
		return nil, nil, fmt.Errorf("not a readable Parquet file: %v", trimParquetErr(err))
	}
	// The Arrow schema some writers embed (ARROW:schema, a base64 IPC
	// message) is decoded by arrow-go without bounds (a few hostile bytes
	// claim billions of fields): it is not used; types come from the
	// Parquet schema alone.
	for _, kv := range pf.MetaData().KeyValueMetadata() {
		if kv != nil && kv.Key == "ARROW:schema" {
			kv.Key = "quarry:ignored:ARROW:schema"
		}
	}
	if n := pf.MetaData().Schema.NumColumns(); n > lim.MaxColumns {
		return nil, nil, limitError("the file has %d columns, more than the limit of %d", n, lim.MaxColumns)
	}
	return pf, fh, nil
}

// checkParquetTail checks the magic bytes and the footer length before
// the footer is read (so a hostile length never becomes an allocation).
func checkParquetTail(fh *os.File, lim Limits) error {
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size < 12 {
		return errors.New("not a Parquet file: too short")
	}
	var tail [8]byte
	if _, err := fh.ReadAt(tail[:], size-8); err != nil {
		return fmt.Errorf("cannot read the Parquet footer: %w", err)
	}
	if !bytes.Equal(tail[4:], parquetMagic) {
		if bytes.Equal(tail[4:], []byte("PARE")) {
			return qerr.Unsupported(qerr.CodeUnsupportedFormat, "the Parquet file is encrypted; encrypted files are not supported")
		}
		return errors.New("not a Parquet file: the magic bytes PAR1 are missing at the end")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n+12 > size {
		return fmt.Errorf("corrupt Parquet file: the footer claims %d bytes, more than the file holds", n)
	}
	if n > int64(lim.MaxMetadataBytes) {
		return limitError("the Parquet footer is %s, more than the limit of %s", sizeString(n), sizeString(int64(lim.MaxMetadataBytes)))
	}
	return nil
}

// trimParquetErr drops the library's "parquet: " prefixes.
func trimParquetErr(err error) string {
	return strings.ReplaceAll(err.Error(), "parquet: ", "")
}

// Open implements Format.
func (pf parquetFormat) Open(ctx context.Context, f FileInfo) ([]*Dataset, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := openParquet(f, pf.lim)
	if err != nil {
		return nil, asFileError(err)
	}
	defer r.Close()
	fr, sc, err := parquetArrow(r, memory.DefaultAllocator, 0, nil)
	if err != nil {
		return nil, asFileError(err)
	}
	if sc.NumFields() == 0 {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "the Parquet file has no columns")
	}
	var rows int64
	md := r.MetaData()
	for i := range r.NumRowGroups() {
		n := md.RowGroup(i).NumRows()
		if n < 0 {
			return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "corrupt Parquet file: row group %d has %d rows", i, n)
		}
		rows += n
	}
	if rows != r.NumRows() {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat,
			"corrupt Parquet file: the row groups hold %d rows, the footer says %d", rows, r.NumRows())
	}
	if err := checkFieldNames(sc); err != nil {
		return nil, err
	}
	exposed, notes := exposedSchema(sc)
	attrs := map[string]any{"row_groups": r.NumRowGroups()}
	if cb := md.GetCreatedBy(); cb != "" {
		attrs["created_by"] = cb
	}
	ds := &Dataset{
		ID:            f.BaseID,
		Kind:          KindParquet,
		Path:          f.RelPath,
		AbsPath:       f.AbsPath,
		Schema:        exposed,
		RowCount:      rows,
		RowCountExact: true,
		SizeBytes:     f.Size,
		ModTime:       f.ModTime,
		FileID:        f.FileID,
		Attributes:    attrs,
		ColumnNotes:   notes,
	}
	dict := dictLeaves(md, fr, sc)
	leaves, nulls := countLeaves(r, fr, sc)
	ds.Source = &parquetSource{id: f.BaseID, file: f, schema: exposed, stored: sc, rows: rows, lim: pf.lim,
		dict: dict, plan: withDicts(exposed, dict), storedDict: withDicts(sc, dict), leaves: leaves, nulls: nulls}
	return []*Dataset{ds}, nil
}

// parquetArrow wraps r for Arrow reads and returns the file's Arrow schema;
// the leaf columns in dict (-1: none) are read as dictionaries.
func parquetArrow(r *file.Reader, mem memory.Allocator, batch int64, dict []int) (fr *pqarrow.FileReader, sc *arrow.Schema, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the Parquet schema does not decode (%v)", p)
		}
	}()
	// Not Parallel: pqarrow decodes the columns of a parallel read on
	// goroutines of its own, where a hostile page (a DATA_PAGE without its
	// header, say) panics beyond any recover of ours and kills the
	// process. Read serially, the panic is the caller's, and
	// exposedReader.Next turns it into a structured error. (This path is
	// the fallback for what parquet-go does not read: nested and repeated
	// columns; flat columns go through newParquetGoReader.)
	props := pqarrow.ArrowReadProperties{BatchSize: batch}
	for _, leaf := range dict {
		if leaf >= 0 {
			props.SetReadDict(leaf, true)
		}
	}
	fr, err = pqarrow.NewFileReader(r, props, mem)
	if err != nil {
		return nil, nil, fmt.Errorf("unsupported Parquet schema: %v", trimParquetErr(err))
	}
	sc, err = fr.Schema()
	if err != nil {
		return nil, nil, fmt.Errorf("unsupported Parquet schema: %v", trimParquetErr(err))
	}
	return fr, sc, nil
}

// checkFieldNames refuses a typed file whose column names cannot address
// its columns: not UTF-8, or one name twice.
func checkFieldNames(sc *arrow.Schema) error {
	seen := make(map[string]bool, sc.NumFields())
	for _, f := range sc.Fields() {
		if !utf8.ValidString(f.Name) {
			return qerr.Unsupported(qerr.CodeUnsupportedFormat, "a column name is not valid UTF-8 text")
		}
		if seen[f.Name] {
			return qerr.Unsupported(qerr.CodeUnsupportedFormat, "two columns are named %q; rename one", f.Name)
		}
		seen[f.Name] = true
	}
	return nil
}

// asFileError makes err a *qerr.Error for a diagnostic: limit and
// confinement errors as they are, the rest unsupported_format.
func asFileError(err error) error {
	var qe *qerr.Error
	if errors.As(err, &qe) {
		return err
	}
	return qerr.Unsupported(qerr.CodeUnsupportedFormat, "%s", err.Error()).Wrap(err)
}

// corruptFileError is the error of a scan whose file no longer decodes.
func corruptFileError(id string, err error) error {
	var qe *qerr.Error
	if errors.As(err, &qe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, ErrFileChanged) {
		return FileChangedError(id, err)
	}
	if errors.Is(err, errIPC) { // found by checkArrowFile's validation
		return qerr.Unsupported(qerr.CodeUnsupportedFormat, "dataset %q cannot be read: %v", id, err).
			WithHint("the file is damaged; replace it").Wrap(err)
	}
	return qerr.Internal(err, "reading dataset %q failed: %v", id, err).
		WithHint("the file may be corrupt or have changed since it was cataloged; refresh the catalog and retry")
}

// parquetSource streams one Parquet file.
type parquetSource struct {
	id     string
	file   FileInfo
	schema *arrow.Schema // exposed
	stored *arrow.Schema // the file's Arrow schema when cataloged
	rows   int64
	lim    Limits
	// dict holds, by field, the leaf column read as a dictionary (-1:
	// none; nil: no field), plan the exposed schema and storedDict the
	// file's schema with those fields dictionary-typed (parquet_dict.go).
	dict             []int
	plan, storedDict *arrow.Schema
	// leaves holds, by field, the leaf column of each flat field (-1:
	// not flat) and nulls its null count from the footer's statistics
	// (-1: unknown), for the counts the file answers (parquet_count.go).
	leaves []int
	nulls  []int64
}

// Scan implements Source: the requested columns, row group by row group.
func (s *parquetSource) Scan(ctx context.Context, opts ScanOptions) (array.RecordReader, error) {
	if opts.Pushed != nil {
		return s.scanCount(ctx, opts)
	}
	ts, err := newTypedScan(ctx, s.id, s.plan, opts)
	if err != nil {
		return nil, err
	}
	proj, out, alloc, batch := ts.proj, ts.out, ts.alloc, ts.batch
	if s.rows == 0 {
		return array.NewRecordReader(out, nil)
	}
	r, fh, err := openParquetFile(s.file, s.lim)
	if err != nil {
		return nil, SourceOpenError(s.id, err)
	}
	fr, sc, err := parquetArrow(r, alloc, int64(batch), s.dict)
	if err == nil && (!sc.Equal(s.storedDict) || r.NumRows() != s.rows) {
		err = fmt.Errorf("%w since it was cataloged", ErrFileChanged)
	}
	if err != nil {
		r.Close()
		return nil, corruptFileError(s.id, err)
	}
	// The reader returns the requested fields in file order.
	sorted := append([]int(nil), proj...)
	slices.Sort(sorted)
	pick := make([]int, len(proj))
	for i, j := range proj {
		for k, x := range sorted {
			if x == j {
				pick[i] = k
			}
		}
	}
	rgs := s.keptRowGroups(r.MetaData(), fr, proj, opts.ZoneFilters)
	stats := prunedStats(r.MetaData(), rgs)
	rgs = skipRowGroups(r.MetaData(), rgs, opts)
	if rgs != nil && len(rgs) == 0 { // no row can match
		r.Close()
		empty, err := array.NewRecordReader(out, nil)
		if err != nil {
			return nil, err
		}
		er := newExposedReader(ctx, s.id, empty, out, identity(len(proj)), alloc, nil)
		er.stats = stats
		return er, nil
	}
	if pg := newParquetGoReader(ctx, fh, fr, s.storedDict, sorted, rgs, alloc, batch, s.slotTests(opts.Filters, sorted), stats); pg != nil {
		er := newExposedReader(ctx, s.id, newFuncReader(pg.schema, pg.next), out, pick, alloc, func() { pg.close(); r.Close() })
		er.stats = stats
		return er, nil
	}
	inner, err := parquetRecordReader(ctx, fr, sorted, rgs)
	if err != nil {
		r.Close()
		return nil, corruptFileError(s.id, err)
	}
	er := newExposedReader(ctx, s.id, inner, out, pick, alloc, func() { r.Close() })
	er.stats = stats
	return er, nil
}

// slotTests compiles the pushed filters for a parquet-go read of the
// fields (sorted indices); a filter it cannot compile is left to the
// engine (which applies every filter again).
func (s *parquetSource) slotTests(preds []planner.Predicate, fields []int) []slotTest {
	var out []slotTest
	for _, p := range preds {
		fi := s.schema.FieldIndices(p.Col)
		if len(fi) != 1 || !s.HandlesFilter(p) {
			continue
		}
		if slot := slices.Index(fields, fi[0]); slot >= 0 {
			if t := rowTestOf(p, s.stored.Field(fi[0]).Type); t != nil {
				out = append(out, slotTest{slot: slot, test: t})
			}
		}
	}
	return out
}

// identity is 0..n-1.
func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// parquetRecordReader reads the leaf columns of the top-level fields
// (sorted indices) of the row groups rgs (nil: all).
func parquetRecordReader(ctx context.Context, fr *pqarrow.FileReader, fields, rgs []int) (rr array.RecordReader, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("decoder panic: %v", p)
		}
	}()
	return fr.GetRecordReader(ctx, fieldLeaves(fr.Manifest, fields), rgs)
}

// fieldLeaves returns the leaf column indices of the top-level fields, in
// order. (The manifest's GetFieldIndices maps the other way, leaves to
// fields: the two agree only while no earlier field has several leaves,
// so a struct of two fields shifted every later column by one.)
func fieldLeaves(m *pqarrow.SchemaManifest, fields []int) []int {
	var out []int
	var walk func(f *pqarrow.SchemaField)
	walk = func(f *pqarrow.SchemaField) {
		if f.IsLeaf() {
			out = append(out, f.ColIndex)
			return
		}
		for i := range f.Children {
			walk(&f.Children[i])
		}
	}
	for _, i := range fields {
		if i >= 0 && i < len(m.Fields) {
			walk(&m.Fields[i])
		}
	}
	return out
}
