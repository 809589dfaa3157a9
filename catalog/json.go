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
type jsonFormat struct{ lim Limits }

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
		if c.strK == infer.KindString {
			return
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

// Open implements Format.
func (jf jsonFormat) Open(ctx context.Context, f FileInfo) ([]*Dataset, error) {
	gz, ok := jsonExt(f.RelPath)
	if !ok {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "%s is not a JSON file", f.RelPath)
	}
	recs, closer, err := openJSON(f, gz, jf.lim)
	if err != nil {
		return nil, asFileError(err)
	}
	defer closer.Close()
	var cols []*jsonColumn
	defer func() { releaseChecks(cols) }()
	keys := newJSONKeys()
	for {
		more, err := recs.next()
		if err != nil {
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
				return nil, err
			}
		}
		for i := range recs.fields {
			fd := &recs.fields[i]
			j, ok := keys.lookup(i, fd.name)
			if !ok {
				if len(cols) >= jf.lim.MaxColumns {
					return nil, limitError("the records have more than %d distinct keys (the column limit)", jf.lim.MaxColumns)
				}
				name := strings.Clone(fd.name) // fd.name is a view of the record
				j = keys.add(i, name)
				col, err := newJSONColumn(f.Read, name, "")
				if err != nil {
					return nil, asFileError(err)
				}
				cols = append(cols, col)
			}
			if err := cols[j].addChecked(f.Read, recs.n, fd); err != nil {
				return nil, asFileError(err)
			}
		}
	}
	if len(cols) == 0 {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "the JSON file has no keys to make columns of")
	}
	schema, kinds, notes := inferredSchema(cols)
	types := cardTypes(cols)
	schema, notes = cardTyped(schema, notes, types)
	attrs := map[string]any{"layout": "objects one after another (newline-delimited)"}
	if recs.array {
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
		RowCount:      recs.n,
		RowCountExact: true,
		SizeBytes:     f.Size,
		ModTime:       f.ModTime,
		FileID:        f.FileID,
		Attributes:    attrs,
		ColumnNotes:   notes,
	}
	ds.Source = &jsonSource{id: f.BaseID, file: f, gz: gz, schema: schema, kinds: kinds, types: types, rows: recs.n, lim: jf.lim}
	return []*Dataset{ds}, nil
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
}

// Scan implements Source: the file is read again, record by record; only
// the requested columns are built, straight into their types where
// jsonCells can (json_build.go), else as text converted per batch.
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
	innerFields := make([]arrow.Field, len(proj))
	pick := make([]int, len(proj))
	keys := newJSONKeys()
	out := make([]int, s.schema.NumFields()) // column -> output position, -1 when not read
	for j, f := range s.schema.Fields() {
		keys.add(j, f.Name)
		out[j] = -1
	}
	builders := make([]*jsonCells, len(proj))
	for i, j := range proj {
		fields[i] = s.schema.Field(j)
		builders[i] = newJSONCells(alloc, s.kinds, s.types, j)
		innerFields[i] = builders[i].field(fields[i].Name)
		pick[i] = i
		out[j] = i
	}
	release := func() {
		for _, b := range builders {
			b.release()
		}
	}
	recs, closer, err := openJSON(s.file, s.gz, s.lim)
	if err != nil {
		release()
		return nil, SourceOpenError(s.id, err)
	}
	inner := arrow.NewSchema(innerFields, nil)
	cells := make([]*jsonField, len(proj))
	errs := make([]error, len(proj)) // the current batch's unparsed texts, by column
	next := func() (arrow.RecordBatch, error) {
		for _, b := range builders {
			b.b.Reserve(batch)
		}
		n := 0
		for n < batch {
			more, err := recs.next()
			if err != nil {
				return nil, corruptFileError(s.id, err)
			}
			if !more {
				break
			}
			clear(cells)
			for k := range recs.fields {
				fd := &recs.fields[k]
				j, ok := keys.lookup(k, fd.name)
				if !ok {
					return nil, corruptFileError(s.id, fmt.Errorf("record %d has key %q, not in the cataloged schema: the file changed since it was cataloged", recs.n, fd.name))
				}
				if p := out[j]; p >= 0 {
					cells[p] = fd
				}
			}
			for i, c := range cells {
				builders[i].append(c)
			}
			n++
		}
		if n == 0 {
			return nil, nil
		}
		cols := make([]arrow.Array, len(builders))
		for i, b := range builders {
			cols[i], errs[i] = b.finish()
		}
		defer releaseAll(cols)
		return array.NewRecordBatch(inner, cols, int64(n)), nil
	}
	r := newExposedReader(ctx, s.id, newFuncReader(inner, next), arrow.NewSchema(fields, nil), pick, alloc, func() {
		closer.Close()
		release()
	})
	r.convert = func(mem memory.Allocator, a arrow.Array, i int) (arrow.Array, error) {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if builders[i].direct {
			a.Retain()
			return a, nil
		}
		return convertText(mem, a.(*array.String), s.kinds, s.types, proj[i])
	}
	return r, nil
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
