package csv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/infer"
	"github.com/quarrydb/quarry/internal/qerr"
)

// csvFormat implements Format for delimited text files.
type csvFormat struct {
	keeper ColumnKeeper
	lim    catalog.Limits
}

// Options configure NewFormatWith.
type Options struct {
	// Keeper, when non-nil, is offered the columns of every file the format
	// opens: the type-checking pass then also parses every cell into Arrow
	// arrays (one pass over the file instead of two for the first query).
	Keeper ColumnKeeper
	// Limits bound what reading one file may cost; zero fields take
	// DefaultLimits. A file beyond them is not cataloged (a diagnostic).
	Limits catalog.Limits
}

// ColumnKeeper keeps columns a Format parsed while opening a file
// (catalog.ColumnKeeper): with one, the columns this format hands over may
// have low-cardinality strings dictionary-encoded (dictionary<int16, utf8>,
// one dictionary per array, at most 32,768 values).
type ColumnKeeper = catalog.ColumnKeeper

// NewFormatWith is NewFormat with options.
func NewFormatWith(opts Options) catalog.Format {
	return csvFormat{keeper: opts.Keeper, lim: opts.Limits.WithDefaults()}
}

// NewFormat returns the Format for delimited text files: ".csv", ".tsv",
// and either compressed with gzip (".csv.gz"), Zstandard (".csv.zst",
// ".csv.zstd") or bzip2 (".csv.bz2") (extensions matched
// case-insensitively; compress.go).
//
// Opening a file reads it once in full: the header row gives the column
// names (a UTF-8 BOM is stripped; names are trimmed, and empty or duplicate
// names are made unique as "column_<position>" and "<name>_2"), the
// delimiter is sniffed from the first lines among ',', '\t', ';' and '|'
// (the extension's delimiter wins when it fits), every cell is type-checked
// and the rows are counted exactly. Quoting follows RFC 4180.
//
// Column types are the narrowest that fit every non-empty cell, and lose
// nothing: a column is int64 or float64 only when printing every value back
// reproduces its text up to float formatting ("00501", "+1", integers
// beyond int64 and decimals with more digits than float64 keeps make it a
// string column, with a hint in Dataset.ColumnNotes); bool (true/false, any
// case), dates (YYYY-MM-DD, YYYY/MM/DD, MM/DD/YYYY or DD/MM/YYYY when the
// column settles the order, month names) and timestamps (ISO-8601 with T or
// space, optional fraction, with a "UTC" zone when cells carry Z or ±hh:mm;
// slash layouts, naive) are recognised when every non-empty cell fits one
// layout (csv_values.go, csv_dates.go; docs/DATA_FORMATS.md). Mixed
// columns, and columns with no non-empty cell, are strings. Only the empty
// cell is null ("NA", "null" and the like are ordinary strings). All fields
// are nullable.
//
// Files beyond the format's Limits (DefaultLimits: compression bombs,
// overlong records, too many columns) are rejected too; overlong column
// names are cut.
//
// Files that are not valid UTF-8, contain NUL bytes, have rows with a
// different number of fields than the header, or have malformed quoting are
// rejected (the catalog lists them in its Diagnostics). Blank lines are
// skipped, as encoding/csv does.
//
// Reading is parallel: one goroutine reads the file (decompressing gzip)
// and cuts it into chunks of whole records by quote parity, and every core
// tokenizes and parses chunks into Arrow buffers; a scan
// only parses the columns it is asked for. Results are identical to
// encoding/csv and arrow-go's CSV reader, which stay the reference (files
// the fast path rejects are re-read by encoding/csv for the exact message).
func NewFormat() catalog.Format { return csvFormat{lim: catalog.DefaultLimits()} }

// Kind implements Format.
func (csvFormat) Kind() catalog.Kind { return catalog.KindCSV }

// Match implements Format.
func (csvFormat) Match(name string) bool {
	_, _, ok := csvExt(name)
	return ok
}

// csvExt classifies a file name: its default delimiter and whether it is
// compressed (gz: any codec of compress.go, chosen by the name).
func csvExt(name string) (delim rune, gz, ok bool) {
	lower, codec := catalog.TrimCompression(strings.ToLower(name))
	gz = codec != ""
	switch {
	case strings.HasSuffix(lower, ".csv") && len(lower) > len(".csv"):
		return ',', gz, true
	case strings.HasSuffix(lower, ".tsv") && len(lower) > len(".tsv"):
		return '\t', gz, true
	}
	return 0, false, false
}

// Open implements Format.
func (cf csvFormat) Open(ctx context.Context, f catalog.FileInfo) ([]*catalog.Dataset, error) {
	defDelim, gz, ok := csvExt(f.RelPath)
	if !ok {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "%s is not a CSV/TSV file", f.RelPath)
	}
	if f.Read.HasOptions() {
		return cf.openWithOptions(ctx, f, gz, defDelim, f.Read, "", true)
	}
	var keep memory.Allocator
	if cf.keeper != nil {
		est := f.Size
		if gz {
			est *= 4
		}
		if alloc, ok := cf.keeper.Reserve(f, est); ok {
			if alloc == nil {
				alloc = memory.DefaultAllocator
			}
			keep = alloc
		}
	}
	inf, err := inferCSVFast(ctx, f, gz, defDelim, f.Size, keep, cf.lim)
	if ds, done, rerr := cf.reopenWithOptions(ctx, f, gz, defDelim, inf, err); done {
		return ds, rerr
	}
	if err != nil {
		return nil, openFailure(ctx, err)
	}
	fields := make([]arrow.Field, len(inf.names))
	for i, n := range inf.names {
		fields[i] = arrow.Field{Name: n, Type: inf.kinds[i].ArrowType(), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	var notes map[string]infer.ColumnNote
	for i, tr := range inf.traces {
		if n := tr.Note(); n != (infer.ColumnNote{}) {
			if notes == nil {
				notes = make(map[string]infer.ColumnNote)
			}
			notes[inf.names[i]] = n
		}
	}
	attrs := map[string]any{"delimiter": string(inf.delim), "read_options": catalog.ReadOptions{}.Describe(inf.delim, 1, []string{"delimiter", "header"}, nil)}
	if gz {
		attrs["compression"] = catalog.CodecOf(f)
	}
	if inf.cutNames > 0 {
		attrs["truncated_column_names"] = inf.cutNames
	}
	ds := &catalog.Dataset{
		ID:            f.BaseID,
		Kind:          catalog.KindCSV,
		Path:          f.RelPath,
		AbsPath:       f.AbsPath,
		Schema:        schema,
		RowCount:      inf.rows,
		RowCountExact: true,
		SizeBytes:     f.Size,
		ModTime:       f.ModTime,
		FileID:        f.FileID,
		Attributes:    attrs,
		ColumnNotes:   notes,
	}
	ds.Source = &csvSource{
		id:     f.BaseID,
		file:   f,
		gz:     gz,
		delim:  inf.delim,
		schema: schema,
		kinds:  inf.kinds,
		rows:   inf.rows,
		size:   f.Size,
		lim:    cf.lim,
	}
	if inf.kept != nil {
		cf.keeper.Keep(ds, inf.kept)
	}
	return []*catalog.Dataset{ds}, nil
}

// sniffBytes is how much of the (decompressed) start of a file the delimiter
// sniffer and the binary check look at.
const sniffBytes = 64 << 10

// openText opens a CSV file for reading (confined: FileInfo.Open):
// decompresses a compressed file and strips a UTF-8 BOM. The returned closer closes
// everything. The text fails with a resource_exhausted error past lim
// (inflation, record length).
func openText(file catalog.FileInfo, gz bool, lim catalog.Limits) (*bufio.Reader, io.Closer, error) {
	src, closer, err := catalog.OpenDecompressed(file, gz, lim)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(catalog.NewRecordLimiter(src, lim.MaxRecordBytes), sniffBytes)
	catalog.SkipBOM(br)
	return br, closer, nil
}

// csvInference is what one full pass over a CSV file learns.
type csvInference struct {
	names  []string
	kinds  []infer.Kind
	traces []infer.Trace // per column: how its kind came about (notes)
	rows   int64
	delim  rune
	kept   [][]arrow.Array // with a keeper: the parsed columns (see ColumnKeeper.Keep)
	// cutNames is how many column names were cut to Limits.MaxNameBytes.
	cutNames int
}

// inferCSV reads the whole file once: header, delimiter, types, row count.
func inferCSV(ctx context.Context, file catalog.FileInfo, gz bool, defDelim rune, lim catalog.Limits) (*csvInference, error) {
	lim = lim.WithDefaults()
	br, closer, err := openText(file, gz, lim)
	if err != nil {
		return nil, err
	}
	defer closer.Close()

	sample, err := br.Peek(sniffBytes)
	truncated := err == nil
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("cannot read file: %w", err)
	}
	if len(bytes.TrimSpace(sample)) == 0 {
		return nil, errors.New("file is empty: a CSV file needs at least a header row")
	}
	if bytes.IndexByte(sample, 0) >= 0 {
		return nil, errors.New("file looks binary (contains NUL bytes), not delimited text")
	}
	delim := sniffDelimiter(sample, truncated, defDelim)

	r := csv.NewReader(br)
	r.Comma = delim
	r.LazyQuotes = false
	r.ReuseRecord = true
	r.FieldsPerRecord = 0

	header, err := r.Read()
	if err != nil {
		return nil, describeCSVError(err, "header row")
	}
	names, cut, err := headerNames(header, lim)
	if err != nil {
		return nil, err
	}
	inf := &csvInference{names: names, kinds: make([]infer.Kind, len(names)), traces: make([]infer.Trace, len(names)), delim: delim, cutNames: cut}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, qerr.ErrLimitExceeded) {
				return nil, err
			}
			return nil, describeCSVError(err, "")
		}
		inf.rows++
		if inf.rows&8191 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for i, cell := range rec {
			if cell == "" {
				continue
			}
			if !utf8.ValidString(cell) {
				line, _ := r.FieldPos(i)
				return nil, fmt.Errorf("line %d is not valid UTF-8 text; re-save the file as UTF-8", line)
			}
			if k := inf.kinds[i]; k != infer.KindString {
				if nk := infer.Widen(k, cell); nk != k {
					inf.kinds[i] = nk
					inf.traces[i].Step(inf.rows, cell, nk)
				}
			}
		}
	}
	return inf, nil
}

// describeCSVError turns encoding/csv errors into one readable sentence.
func describeCSVError(err error, what string) error {
	if errors.Is(err, qerr.ErrLimitExceeded) {
		return err
	}
	if errors.Is(err, io.EOF) {
		return errors.New("file is empty: a CSV file needs at least a header row")
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		switch {
		case errors.Is(pe.Err, csv.ErrFieldCount):
			return fmt.Errorf("line %d has a different number of fields than the header row (ragged rows are not supported)", pe.Line)
		case errors.Is(pe.Err, csv.ErrBareQuote), errors.Is(pe.Err, csv.ErrQuote):
			return fmt.Errorf("line %d, column %d: malformed quoting (%v)", pe.StartLine, pe.Column, pe.Err)
		}
		return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
	}
	if what != "" {
		return fmt.Errorf("cannot read %s: %w", what, err)
	}
	return fmt.Errorf("cannot read file: %w", err)
}

// headerNames checks the header's column count against lim, cuts overlong
// names (returning how many) and makes the names unique (uniqueNames).
func headerNames(header []string, lim catalog.Limits) ([]string, int, error) {
	if len(header) > lim.MaxColumns {
		return nil, 0, catalog.TooManyColumns(len(header), lim.MaxColumns)
	}
	capped := append([]string(nil), header...)
	cut := catalog.CapNames(capped, lim.MaxNameBytes)
	names, err := uniqueNames(capped)
	return names, cut, err
}

// uniqueNames cleans header names: trims spaces, names empty ones
// "column_<1-based position>", and suffixes duplicates "_2", "_3", ...
func uniqueNames(header []string) ([]string, error) {
	names := make([]string, len(header))
	taken := make(map[string]bool, len(header))
	for i, h := range header {
		if !utf8.ValidString(h) {
			return nil, errors.New("the header row is not valid UTF-8 text; re-save the file as UTF-8")
		}
		h = strings.TrimSpace(h)
		if h == "" {
			h = "column_" + strconv.Itoa(i+1)
		}
		names[i] = h
	}
	// First pass reserves every name as written so a later "a_2" in the
	// header is not stolen by a renamed duplicate "a".
	first := make(map[string]int, len(names))
	for i, n := range names {
		if _, ok := first[n]; !ok {
			first[n] = i
			taken[n] = true
		}
	}
	for i, n := range names {
		if first[n] == i {
			continue
		}
		for k := 2; ; k++ {
			cand := n + "_" + strconv.Itoa(k)
			if !taken[cand] {
				names[i] = cand
				taken[cand] = true
				break
			}
		}
	}
	return names, nil
}

// sniffCandidates are the delimiters the sniffer tries, in tie-break order.
var sniffCandidates = []rune{',', '\t', ';', '|'}

// sniffDelimiter picks the delimiter that splits the first records of the
// sample into the same number (at least two) of fields. The extension's
// default wins when it qualifies; otherwise the candidate giving the most
// fields; otherwise the default (a single-column file).
func sniffDelimiter(sample []byte, truncated bool, def rune) rune {
	if truncated {
		if i := bytes.LastIndexByte(sample, '\n'); i >= 0 {
			sample = sample[:i+1]
		}
	}
	if consistentFields(sample, def) >= 2 {
		return def
	}
	best, bestN := def, 1
	for _, c := range sniffCandidates {
		if n := consistentFields(sample, c); n > bestN {
			best, bestN = c, n
		}
	}
	return best
}

// consistentFields returns the field count shared by the first records of
// sample when split on c, or 0 when they disagree.
func consistentFields(sample []byte, c rune) int {
	r := csv.NewReader(bytes.NewReader(sample))
	r.Comma = c
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = true
	n := -1
	for range 50 {
		rec, err := r.Read()
		if err != nil {
			break // EOF, or a record cut off by the end of the sample
		}
		switch {
		case n < 0:
			n = len(rec)
		case len(rec) != n:
			return 0
		}
	}
	return max(n, 0)
}
