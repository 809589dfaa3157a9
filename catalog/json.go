package catalog

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog/infer"
	"github.com/quarrydb/quarry/internal/qerr"
)

// KindJSON is the kind of datasets read from JSON files.
const KindJSON Kind = "json"

// jsonFormat implements Format for JSON files.
type jsonFormat struct {
	lim    Limits
	keeper ColumnKeeper // nil: none
	// chunkBytes and workers, when not 0, fix the chunk size and the
	// number of workers of chunked opens and scans (tests).
	chunkBytes, workers int
}

// NewJSONFormat returns the Format for JSON files: newline-delimited
// (".jsonl", ".ndjson": one object per line; any whitespace between
// objects is fine) and ".json" (a top-level array of objects, or objects
// one after another), each optionally compressed (".gz", ".zst", ".bz2";
// compress.go). Extensions match case-insensitively; schema cards
// (".schema.json", "_overall.json") are never datasets.
//
// Opening reads the file once (json_records.go tokenizes it byte by byte,
// in place): every object is a row (exact count); its
// keys are the columns, in order of first appearance; nested objects are
// flattened to dotted names ({"a":{"b":1}} is column "a.b"); arrays are
// kept as compact JSON text; a missing key or null is null. Column types
// follow the CSV rules (csv_values.go) and lose nothing: a column of JSON
// numbers is int64 or float64 only when every number prints back as
// written (otherwise text with a hint, as 12345678901234567890 or -0);
// a column of JSON strings is a date or timestamp when every string is one
// in a layout CSV recognises, and text otherwise (numeric-looking strings
// stay text: the writer quoted them); true/false make a bool column; a
// column mixing JSON types is text with a hint (numbers as written). When
// a key occurs twice in one object, the last value wins.
//
// Limits: a record longer than MaxRecordBytes, more than MaxColumns
// distinct columns, a key longer than MaxNameBytes, and the decompression
// bounds make the file a diagnostic.
func NewJSONFormat(lim Limits) Format { return jsonFormat{lim: lim.WithDefaults()} }

// JSONOptions configure NewJSONFormatWith.
type JSONOptions struct {
	// Keeper, when non-nil, is offered the columns of every
	// newline-delimited file the format opens in chunks: the opening pass
	// then also builds every column (json_keep.go), so the first query
	// does not read the file again.
	Keeper ColumnKeeper
	// Limits as NewJSONFormat's.
	Limits Limits
}

// NewJSONFormatWith is NewJSONFormat with options.
func NewJSONFormatWith(opts JSONOptions) Format {
	return jsonFormat{keeper: opts.Keeper, lim: opts.Limits.WithDefaults()}
}

// Kind implements Format.
func (jsonFormat) Kind() Kind { return KindJSON }

// Match implements Format.
func (jsonFormat) Match(name string) bool {
	_, ok := jsonExt(name)
	return ok
}

// jsonExt classifies a file name: whether it is compressed and JSON.
func jsonExt(name string) (gz, ok bool) {
	if IsCardFile(path.Base(name)) {
		return false, false
	}
	lower, codec := TrimCompression(strings.ToLower(name))
	for _, ext := range []string{".json", ".jsonl", ".ndjson"} {
		if hasExt(lower, ext) {
			return codec != "", true
		}
	}
	return false, false
}

// openJSON opens a JSON file for reading records (confined:
// FileInfo.Open), decompressing it and skipping a UTF-8 BOM.
func openJSON(file FileInfo, gz bool, lim Limits) (*jsonRecords, io.Closer, error) {
	src, closer, err := OpenDecompressed(file, gz, lim)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(src, 64<<10)
	SkipBOM(br)
	recs, err := newJSONRecords(br, lim)
	if err != nil {
		closer.Close()
		return nil, nil, err
	}
	return recs, closer, nil
}

// jsonColumn is what inference learns about one column.
type jsonColumn struct {
	name       string
	seen       [jNested + 1]bool // JSON kinds met (jNull unused)
	numK, strK infer.Kind        // join of the numbers / strings met
	num, str   infer.Trace
	source     string    // names the values' format in hints; "" is JSON
	card       *cardType // the schema card's type override (cardtypes.go); nil: none
	// Keeping the columns (json_keep.go): a chunk's kept cells, then its
	// column built from them in keptKind (nil: no value); noKeep: the
	// column is not kept.
	cells    []jsonCell
	kept     arrow.Array
	keptKind infer.Kind
	noKeep   bool
}

// addChecked is add, then the check of the value against the column's
// type override (row counted from 1).
func (c *jsonColumn) addChecked(spec *ReadSpec, row int64, f *jsonField) error {
	c.add(row, f)
	if c.card == nil || f.kind == jNull {
		return nil
	}
	return c.card.check(spec, row, c.name, f.text)
}

// cardTypes are the columns' type overrides, nil when none applies
// (cardTyped may drop some), after releasing their check scratch.
func cardTypes(cols []*jsonColumn) []*cardType {
	var out []*cardType
	for i, c := range cols {
		c.card.release()
		if c.card != nil {
			if out == nil {
				out = make([]*cardType, len(cols))
			}
			out[i] = c.card
		}
	}
	return out
}

// newJSONColumn is a column named name with its override in spec.
func newJSONColumn(spec *ReadSpec, name, source string) (*jsonColumn, error) {
	card, err := cardTypeFor(spec, name)
	return &jsonColumn{name: name, source: source, card: card}, err
}

// releaseChecks frees the override checks of cols (an Open that failed).
func releaseChecks(cols []*jsonColumn) {
	for _, c := range cols {
		c.card.release()
	}
}

// add folds value f of record row into the column.
func (c *jsonColumn) add(row int64, f *jsonField) {
	c.seen[f.kind] = true
	switch f.kind {
	case jNumber:
		if nk := infer.Widen(c.numK, f.text); nk != c.numK {
			c.numK = nk
			c.num.Step(row, f.text, nk)
		}
	case jString:
		if c.strK == infer.KindString || infer.Keeps(c.strK, f.text) {
			return // the kind stays (Keeps: only date and timestamp kinds get here)
		}
		k := infer.Classify(f.text)
		if !k.IsDateLike() {
			k = infer.KindString
		}
		if nk := infer.JoinKinds(c.strK, k); nk != c.strK {
			c.strK = nk
			c.str.Step(row, f.text, nk)
		}
	}
}

// kind is the column's final kind and note.
func (c *jsonColumn) kind() (infer.Kind, ColumnNote) {
	var kinds []string
	for k, seen := range c.seen {
		if seen && jsonKind(k) != jNull {
			kinds = append(kinds, [...]string{"", "numbers", "strings", "booleans", "arrays"}[k])
		}
	}
	switch {
	case len(kinds) == 0:
		return infer.KindString, ColumnNote{}
	case len(kinds) > 1:
		src := cmp.Or(c.source, "JSON")
		return infer.KindString, ColumnNote{Hint: "mixes " + src + " " + strings.Join(kinds, " and ") + "; kept as text (numbers as written)"}
	case c.seen[jNumber]:
		return c.numK, c.num.Note()
	case c.seen[jString]:
		return c.strK, c.str.Note()
	case c.seen[jBool]:
		return infer.KindBool, ColumnNote{}
	}
	return infer.KindString, ColumnNote{Hint: "JSON arrays kept as JSON text"}
}

// merge folds o, the same column over the next records of the file
// (after off records), into c; o's override checks are released.
func (c *jsonColumn) merge(o *jsonColumn, off int64) {
	for k, seen := range o.seen {
		c.seen[k] = c.seen[k] || seen
	}
	c.num = c.num.Merge(o.num, off)
	c.numK = c.num.Kind()
	c.str = c.str.Merge(o.str, off)
	c.strK = c.str.Kind()
	o.card.release()
}

// inferredSchema is the schema of the inferred columns, their kinds and
// their notes (nil when none).
func inferredSchema(cols []*jsonColumn) (*arrow.Schema, []infer.Kind, map[string]ColumnNote) {
	fields := make([]arrow.Field, len(cols))
	kinds := make([]infer.Kind, len(cols))
	var notes map[string]ColumnNote
	for i, c := range cols {
		k, note := c.kind()
		kinds[i] = k
		fields[i] = arrow.Field{Name: c.name, Type: k.ArrowType(), Nullable: true}
		if note != (ColumnNote{}) {
			if notes == nil {
				notes = map[string]ColumnNote{}
			}
			notes[c.name] = note
		}
	}
	return arrow.NewSchema(fields, nil), kinds, notes
}

// jsonInference is what inference learns from a run of records: the
// columns in order of first appearance.
type jsonInference struct {
	spec    *ReadSpec
	maxCols int
	keys    *jsonKeys
	cols    []*jsonColumn
	rows    int64
	array   bool // the file is an array of objects
	// multiline: some record holds a newline (between its tokens), so the
	// file cannot be cut at newlines.
	multiline bool
	// keep, when not nil, allocates the kept columns (json_keep.go): a
	// chunk's are built into its columns, a file's gathered in chunks.
	keep   memory.Allocator
	chunks []*jsonKeptChunk
	ks     *jsonKeepScratch // a chunk's: the worker's scratch (not nil: keeping)
	side   []byte           // a chunk's: texts kept that are not in the chunk
	lines  int              // a chunk's: its lines, about its records
}

func newJSONInference(spec *ReadSpec, lim Limits) *jsonInference {
	return &jsonInference{spec: spec, maxCols: lim.MaxColumns, keys: newJSONKeys()}
}

// release frees the columns' override checks and the kept columns.
func (in *jsonInference) release() {
	releaseChecks(in.cols)
	for _, c := range in.cols {
		if c.kept != nil {
			c.kept.Release()
			c.kept = nil
		}
	}
	for _, ch := range in.chunks {
		ch.release()
	}
	in.chunks = nil
}

// column is the column named name (a view the caller does not keep),
// added when new; pos is the field's position in its record (-1: none).
func (in *jsonInference) column(pos int, name string) (*jsonColumn, error) {
	j, err := in.columnIndex(pos, name)
	if err != nil {
		return nil, err
	}
	return in.cols[j], nil
}

// columnIndex is column's number.
func (in *jsonInference) columnIndex(pos int, name string) (int, error) {
	j, ok := in.keys.lookup(pos, name)
	if !ok {
		if len(in.cols) >= in.maxCols {
			return 0, limitError("the records have more than %d distinct keys (the column limit)", in.maxCols)
		}
		name = strings.Clone(name)
		j = in.keys.add(pos, name)
		col, err := newJSONColumn(in.spec, name, "")
		if err != nil {
			return 0, asFileError(err)
		}
		in.cols = append(in.cols, col)
	}
	return j, nil
}

// record folds the record recs holds (record number recs.n) into the
// columns.
func (in *jsonInference) record(recs *jsonRecords) error {
	for i := range recs.fields {
		fd := &recs.fields[i]
		col, err := in.column(i, fd.name)
		if err != nil {
			return err
		}
		if err := col.addChecked(in.spec, recs.n, fd); err != nil {
			return asFileError(err)
		}
		if in.ks != nil {
			in.keepCell(col, recs, fd)
		}
	}
	in.rows = recs.n
	return nil
}

// merge folds the inference of the next records of the file, after
// in.rows records, into in.
func (in *jsonInference) merge(next *jsonInference) error {
	var kept *jsonKeptChunk
	if in.keep != nil {
		kept = &jsonKeptChunk{rows: next.rows}
		in.chunks = append(in.chunks, kept)
	}
	for _, c := range next.cols {
		j, err := in.columnIndex(-1, c.name)
		if err != nil {
			return err
		}
		col := in.cols[j]
		col.merge(c, in.rows)
		if kept != nil {
			col.noKeep = col.noKeep || c.noKeep
			kept.take(j, c)
		}
	}
	in.rows += next.rows
	return nil
}

// Open implements Format.
func (jf jsonFormat) Open(ctx context.Context, f FileInfo) ([]*Dataset, error) {
	return jf.open(ctx, f, true)
}

// open is Open, in chunks when chunks is true and the file allows it,
// else in one pass (tests compare the two).
func (jf jsonFormat) open(ctx context.Context, f FileInfo, chunks bool) ([]*Dataset, error) {
	gz, ok := jsonExt(f.RelPath)
	if !ok {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "%s is not a JSON file", f.RelPath)
	}
	// Newline-delimited objects are inferred in chunks on every core
	// (json_chunks.go); anything else, and anything the chunks do not take
	// (an error, a record past the limits), in one pass, which gives the
	// exact error.
	chunked := chunks
	var in *jsonInference
	err := errJSONSerial
	if chunks {
		in, err = jf.inferChunked(ctx, f, gz, jf.reserve(f, gz))
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		chunked = false
		in, err = jf.inferSerial(ctx, f, gz)
	}
	if err != nil {
		return nil, err
	}
	defer in.release()
	cols := in.cols
	if len(cols) == 0 {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "the JSON file has no keys to make columns of")
	}
	schema, kinds, notes := inferredSchema(cols)
	types := cardTypes(cols)
	schema, notes = cardTyped(schema, notes, types)
	attrs := map[string]any{"layout": "objects one after another (newline-delimited)"}
	if in.array {
		attrs["layout"] = "array of objects"
	}
	if gz {
		attrs["compression"] = CodecOf(f)
	}
	ds := &Dataset{
		ID:            f.BaseID,
		Kind:          KindJSON,
		Path:          f.RelPath,
		AbsPath:       f.AbsPath,
		Schema:        schema,
		RowCount:      in.rows,
		RowCountExact: true,
		SizeBytes:     f.Size,
		ModTime:       f.ModTime,
		FileID:        f.FileID,
		Attributes:    attrs,
		ColumnNotes:   notes,
	}
	ds.Source = &jsonSource{id: f.BaseID, file: f, gz: gz, schema: schema, kinds: kinds, types: types, rows: in.rows, lim: jf.lim,
		chunked: chunked && !in.multiline, chunkBytes: jf.chunkBytes, workers: jf.workers}
	if in.keep != nil {
		jf.keeper.Keep(ds, in.keptColumns(kinds, types))
	}
	return []*Dataset{ds}, nil
}

// reserve is the allocator of f's kept columns, nil when there is no
// keeper or it declines.
func (jf jsonFormat) reserve(f FileInfo, gz bool) memory.Allocator {
	if jf.keeper == nil {
		return nil
	}
	est := f.Size
	if gz {
		est *= 4
	}
	alloc, ok := jf.keeper.Reserve(f, est)
	if !ok {
		return nil
	}
	return cmp.Or[memory.Allocator](alloc, memory.DefaultAllocator)
}

// inferSerial infers the columns of f in one pass over its records.
func (jf jsonFormat) inferSerial(ctx context.Context, f FileInfo, gz bool) (*jsonInference, error) {
	recs, closer, err := openJSON(f, gz, jf.lim)
	if err != nil {
		return nil, asFileError(err)
	}
	defer closer.Close()
	in := newJSONInference(f.Read, jf.lim)
	in.array = recs.array
	for {
		more, err := recs.next()
		if err != nil {
			in.release()
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, asFileError(err)
		}
		if !more {
			break
		}
		if recs.n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				in.release()
				return nil, err
			}
		}
		if err := in.record(recs); err != nil {
			in.release()
			return nil, err
		}
	}
	return in, nil
}

// jsonSource streams one JSON file.
type jsonSource struct {
	id     string
	file   FileInfo
	gz     bool
	schema *arrow.Schema
	kinds  []infer.Kind
	types  []*cardType // type overrides by column (nil: none)
	rows   int64
	lim    Limits
	// chunked: the records are objects none of which holds a newline, so
	// a scan reads the file in chunks cut at newlines on every core.
	chunked             bool
	chunkBytes, workers int // jsonFormat's
}

// Scan implements Source: the file is read again, record by record; only
// the requested columns are built, straight into their types where
// jsonCells can (json_build.go), else as text converted per batch. A
// chunked source is read on every core (json_chunks.go).
func (s *jsonSource) Scan(ctx context.Context, opts ScanOptions) (array.RecordReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	proj, err := Projection(s.id, s.schema, opts.Columns)
	if err != nil {
		return nil, err
	}
	alloc := opts.Alloc
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = DefaultBatchSize
	}
	batch = int(min(int64(batch), max(s.rows, 1)))
	fields := make([]arrow.Field, len(proj))
	pick := make([]int, len(proj))
	for i, j := range proj {
		fields[i] = s.schema.Field(j)
		pick[i] = i
	}
	schema := arrow.NewSchema(fields, nil)
	if s.chunked {
		return s.scanChunked(ctx, proj, schema, batch, alloc)
	}
	bt := s.newBatcher(proj, schema, alloc)
	recs, closer, err := openJSON(s.file, s.gz, s.lim)
	if err != nil {
		bt.release()
		return nil, SourceOpenError(s.id, err)
	}
	next := func() (arrow.RecordBatch, error) {
		n, err := bt.fill(recs, batch)
		if err != nil {
			return nil, corruptFileError(s.id, err)
		}
		if n == 0 {
			return nil, nil
		}
		return bt.batch(n)
	}
	return s.exposed(ctx, schema, next, alloc, func() {
		closer.Close()
		bt.release()
	}), nil
}

// exposed is the reader of the batches next returns (in schema, which
// is the exposed schema: the batcher converts), with the checks of
// exposedReader; done runs once at the end.
func (s *jsonSource) exposed(ctx context.Context, schema *arrow.Schema, next func() (arrow.RecordBatch, error), alloc memory.Allocator, done func()) array.RecordReader {
	pick := make([]int, schema.NumFields())
	for i := range pick {
		pick[i] = i
	}
	r := newExposedReader(ctx, s.id, newFuncReader(schema, next), schema, pick, alloc, done)
	r.convert = func(_ memory.Allocator, a arrow.Array, _ int) (arrow.Array, error) {
		a.Retain()
		return a, nil
	}
	return r
}

// jsonBatcher builds batches of the projected columns of a JSON file's
// records.
type jsonBatcher struct {
	src      *jsonSource
	mem      memory.Allocator
	proj     []int
	schema   *arrow.Schema // the batches' (exposed) schema
	keys     *jsonKeys
	out      []int // column -> output position, -1 when not read
	builders []*jsonCells
	cells    []*jsonField
	errs     []error // the current batch's unparsed texts, by column
}

func (s *jsonSource) newBatcher(proj []int, schema *arrow.Schema, alloc memory.Allocator) *jsonBatcher {
	bt := &jsonBatcher{src: s, mem: alloc, proj: proj, schema: schema, keys: newJSONKeys(), out: make([]int, s.schema.NumFields()),
		builders: make([]*jsonCells, len(proj)), cells: make([]*jsonField, len(proj)), errs: make([]error, len(proj))}
	for j, f := range s.schema.Fields() {
		bt.keys.add(j, f.Name)
		bt.out[j] = -1
	}
	for i, j := range proj {
		bt.builders[i] = newJSONCells(alloc, s.kinds, s.types, j)
		bt.out[j] = i
	}
	return bt
}

func (bt *jsonBatcher) release() {
	for _, b := range bt.builders {
		b.release()
	}
}

// fill appends up to max records of recs to the builders and returns how
// many it appended.
func (bt *jsonBatcher) fill(recs *jsonRecords, max int) (int, error) {
	for _, b := range bt.builders {
		b.b.Reserve(max)
	}
	n := 0
	for n < max {
		more, err := recs.next()
		if err != nil {
			return n, err
		}
		if !more {
			break
		}
		clear(bt.cells)
		for k := range recs.fields {
			fd := &recs.fields[k]
			j, ok := bt.keys.lookup(k, fd.name)
			if !ok {
				return n, fmt.Errorf("record %d has key %q, not in the cataloged schema: the file changed since it was cataloged", recs.n, fd.name)
			}
			if p := bt.out[j]; p >= 0 {
				bt.cells[p] = fd
			}
		}
		for i, c := range bt.cells {
			bt.builders[i].append(c)
		}
		n++
	}
	return n, nil
}

// batch is the batch of the n records appended since the last one,
// converted to the exposed types.
func (bt *jsonBatcher) batch(n int) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(bt.builders))
	for i, b := range bt.builders {
		cols[i], bt.errs[i] = b.finish()
	}
	defer releaseAll(cols)
	out := make([]arrow.Array, 0, len(cols))
	for i, a := range cols {
		c, err := bt.convert(a, i)
		if err != nil {
			releaseAll(out)
			return nil, err
		}
		out = append(out, c)
	}
	defer releaseAll(out)
	return array.NewRecordBatch(bt.schema, out, int64(n)), nil
}

// discard drops what the builders hold (a batch cut by an error).
func (bt *jsonBatcher) discard() {
	for _, b := range bt.builders {
		a, _ := b.finish()
		a.Release()
	}
}

// convert is column i of a batch in its exposed type.
func (bt *jsonBatcher) convert(a arrow.Array, i int) (arrow.Array, error) {
	if bt.errs[i] != nil {
		return nil, bt.errs[i]
	}
	if bt.builders[i].direct {
		a.Retain()
		return a, nil
	}
	return convertText(bt.mem, a.(*array.String), bt.src.kinds, bt.src.types, bt.proj[i])
}

// convertText converts the texts of column j: under its type override
// when it has one, else to its inferred kind.
func convertText(mem memory.Allocator, in *array.String, kinds []infer.Kind, types []*cardType, j int) (arrow.Array, error) {
	if types != nil && types[j] != nil {
		return types[j].convert(mem, in)
	}
	return textToKind(mem, in, kinds[j])
}

// textToKind converts a column of cell texts to kind k's type (the texts
// were all classified as k by inference).
func textToKind(mem memory.Allocator, in *array.String, k infer.Kind) (arrow.Array, error) {
	switch {
	case k.Textual():
		in.Retain()
		return in, nil
	case k == infer.KindInt || k == infer.KindIntWide:
		b := array.NewInt64Builder(mem)
		return infer.ConvertEach(in, b, func(s string) bool {
			v, err := strconv.ParseInt(s, 10, 64)
			b.UnsafeAppend(v)
			return err == nil
		}, "an int64")
	case k == infer.KindFloat:
		b := array.NewFloat64Builder(mem)
		return infer.ConvertEach(in, b, func(s string) bool {
			v, err := strconv.ParseFloat(s, 64)
			b.UnsafeAppend(v)
			return err == nil
		}, "a float64")
	case k == infer.KindDate:
		b := array.NewDate32Builder(mem)
		return infer.ConvertEach(in, b, func(s string) bool {
			d, ok := infer.ParseDateBytes([]byte(s))
			b.UnsafeAppend(arrow.Date32(d))
			return ok
		}, "a YYYY-MM-DD date")
	}
	return infer.ConvertColumn(mem, in, k)
}
