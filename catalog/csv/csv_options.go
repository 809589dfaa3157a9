package csv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/infer"
	"github.com/quarrydb/quarry/internal/qerr"
)

// CSV files read with options: a schema card's read options and type
// overrides, a UTF-16 file (sniffed from its byte order mark) or a file
// without a header row (sniffed). Such files are inferred and scanned by
// the record reader of csv_records.go with the same type rules as the
// fast reader (infer.Widen), plus what the options add.

// csvPlan is how one file is read with options.
type csvPlan struct {
	enc           string
	delim         rune
	quote, escape rune
	comment       string
	skip          int  // lines skipped before the header (or the first row)
	header        bool // the first record after skip is the header
	nulls         map[string]bool
	decComma      bool
	thou          byte
	dateFmt       *infer.TimeFormat
	tsFmt         *infer.TimeFormat
	types         map[string]catalog.TypeOverride
}

// readError is a problem reading a file under its card.
func (p *csvPlan) cardError(spec *catalog.ReadSpec, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if spec != nil {
		return fmt.Errorf("%s (%s): %s", catalog.CardReadPrefix, spec.SourcesPhrase(), msg)
	}
	return errors.New(msg)
}

// normNumber rewrites a number written with a decimal comma or thousands
// separators into plain form ("1.234,5" -> "1234.5"). ok is false for a
// cell made of digits and separators that is not a number under the
// options ("1.5" with a decimal comma): such a cell makes its column
// text. Other cells come back unchanged.
func (p *csvPlan) normNumber(s string) (string, bool) {
	if !p.decComma && p.thou == 0 {
		return s, true
	}
	dec := byte('.')
	if p.decComma {
		dec = ','
	}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i == len(s) || s[i] < '0' || s[i] > '9' {
		return s, true
	}
	// Only digits, separators and an exponent may follow.
	mant, exp := s[i:], ""
	if e := strings.IndexAny(mant, "eE"); e >= 0 {
		mant, exp = mant[:e], mant[e:]
		if !digitsSigned(exp[1:]) {
			return s, true
		}
	}
	for j := 0; j < len(mant); j++ {
		c := mant[j]
		if (c < '0' || c > '9') && c != '.' && c != ',' && c != p.thou {
			return s, true // not a number at all (a date, a code with letters)
		}
	}
	intPart, frac, hasFrac := strings.Cut(mant, string(dec))
	if hasFrac && !optDigits(frac) {
		return s, false
	}
	if p.thou != 0 && strings.IndexByte(intPart, p.thou) >= 0 {
		groups := strings.Split(intPart, string(p.thou))
		if len(groups[0]) < 1 || len(groups[0]) > 3 {
			return s, false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return s, false
			}
		}
		intPart = strings.Join(groups, "")
	}
	if !optDigits(intPart) {
		return s, false
	}
	out := s[:i] + intPart
	if hasFrac {
		out += "." + frac
	}
	return out + exp, true
}

// optDigits reports whether s is one or more ASCII digits.
func optDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

func digitsSigned(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return optDigits(s)
}

// newCSVPlan resolves a file's options. delim is the card's delimiter or 0
// (sniff); header is -1 when it is to be sniffed.
func newCSVPlan(spec *catalog.ReadSpec, sniffedEnc string) (*csvPlan, error) {
	var o catalog.ReadOptions
	if spec != nil {
		o = spec.Options
		if err := o.Validate(); err != nil { // cards were validated; a merge cannot break them, but be safe
			return nil, err
		}
	}
	p := &csvPlan{quote: '"', header: true, skip: o.SkipRows, comment: o.Comment, decComma: o.DecimalComma}
	p.enc = catalog.CanonicalEncoding(o.Encoding)
	if p.enc == "" {
		p.enc = "utf-8"
		if sniffedEnc != "" {
			p.enc = sniffedEnc
		}
	}
	p.delim, _ = catalog.OneChar("delimiter", o.Delimiter, true)
	if o.Quote != nil {
		p.quote, _ = catalog.OneChar("quote", *o.Quote, true)
	}
	p.escape, _ = catalog.OneChar("escape", o.Escape, true)
	if o.Header != nil {
		p.header = o.Header.Row > 0
		if o.Header.Row > 1 {
			p.skip += o.Header.Row - 1
		}
	}
	if len(o.NullValues) > 0 {
		p.nulls = make(map[string]bool, len(o.NullValues))
		for _, v := range o.NullValues {
			p.nulls[v] = true
		}
	}
	if o.ThousandsSeparator != "" {
		p.thou = o.ThousandsSeparator[0]
	}
	if o.DateFormat != "" {
		tf, err := infer.CompileTimeFormat(o.DateFormat, false)
		if err != nil {
			return nil, err
		}
		p.dateFmt = &tf
	}
	if o.TimestampFormat != "" {
		tf, err := infer.CompileTimeFormat(o.TimestampFormat, true)
		if err != nil {
			return nil, err
		}
		p.tsFmt = &tf
	}
	if spec != nil {
		p.types = spec.Types
	}
	return p, nil
}

// open opens the file's text and positions it after the skipped lines;
// with no delimiter set, it sniffs one from what follows.
func (p *csvPlan) open(f catalog.FileInfo, gz bool, lim catalog.Limits, defDelim rune) (*recordReader, io.Closer, error) {
	br, closer, err := openOptionText(f, gz, lim, p.enc)
	if err != nil {
		return nil, nil, err
	}
	rr := newRecordReader(br, p.delim, p.quote, p.escape, p.comment, lim.MaxRecordBytes)
	if err := rr.skipLines(p.skip); err != nil {
		closer.Close()
		return nil, nil, err
	}
	if p.delim == 0 {
		sample, err := br.Peek(sniffBytes)
		truncated := err == nil
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			closer.Close()
			return nil, nil, err
		}
		p.delim = sniffDelimiter(sample, truncated, defDelim)
		rr.delim = p.delim
	}
	return rr, closer, nil
}

// optCol is the inference state of one column.
type optCol struct {
	kind     infer.Kind
	trace    infer.Trace
	seen     bool // a non-null cell
	dateOK   bool // every non-null cell parses under the date format
	tsOK     bool
	ov       *infer.OvType
	ovFormat string
	check    infer.CellParser
	scratch  array.Builder
	nScratch int
}

// optRead is how a scan reads one column.
type optRead struct {
	dt    arrow.DataType
	parse infer.CellParser
	norm  bool // numbers: normNumber first
	note  infer.ColumnNote
}

// inferCSVOptions reads the whole file under the plan: names, types, rows.
// sniffHeader decides whether the first record is a header.
func inferCSVOptions(ctx context.Context, f catalog.FileInfo, gz bool, defDelim rune, p *csvPlan, spec *catalog.ReadSpec, sniffHeader bool, lim catalog.Limits) (names []string, cols []optRead, rows int64, cut int, headerless bool, err error) {
	rr, closer, err := p.open(f, gz, lim, defDelim)
	if err != nil {
		return nil, nil, 0, 0, false, err
	}
	defer closer.Close()
	first, _, err := rr.read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("file is empty: a CSV file needs at least a header row")
		}
		return nil, nil, 0, 0, false, err
	}
	first = append([]string(nil), first...)
	if len(first) > lim.MaxColumns {
		return nil, nil, 0, 0, false, catalog.TooManyColumns(len(first), lim.MaxColumns)
	}
	st := make([]optCol, len(first))
	for i := range st {
		st[i].dateOK, st[i].tsOK = p.dateFmt != nil, p.tsFmt != nil
	}
	defer func() {
		for i := range st {
			if st[i].scratch != nil {
				st[i].scratch.Release()
			}
		}
	}()
	if p.header {
		if names, cut, err = headerNames(first, lim); err != nil {
			return nil, nil, 0, 0, false, err
		}
	} else {
		names = numberedNames(len(first))
	}
	if err := p.bindOverrides(names, st); err != nil {
		return nil, nil, 0, 0, false, err
	}
	var row int64
	add := func(rec []string, line int) error {
		if len(rec) != len(st) {
			return fmt.Errorf("line %d has %d fields, the first row %d (ragged rows are not supported)", line, len(rec), len(st))
		}
		row++
		if row&8191 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for i, cell := range rec {
			if cell == "" || p.nulls[cell] {
				continue
			}
			if err := p.inferCell(&st[i], names[i], cell, row, spec); err != nil {
				return err
			}
		}
		return nil
	}
	if !p.header {
		if err := add(first, 1); err != nil {
			return nil, nil, 0, 0, false, err
		}
	}
	for {
		rec, line, err := rr.read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, 0, 0, false, err
		}
		if err := add(rec, line); err != nil {
			return nil, nil, 0, 0, false, err
		}
	}
	if p.header && sniffHeader && row > 0 && headerIsData(first, st) {
		// Re-read with the first record as data (a headerless file).
		p.header = false
		n, c, r, _, _, err := inferCSVOptions(ctx, f, gz, defDelim, p, spec, false, lim)
		return n, c, r, 0, true, err
	}
	cols = make([]optRead, len(st))
	for i := range st {
		if cols[i], err = p.finish(&st[i]); err != nil {
			return nil, nil, 0, 0, false, err
		}
	}
	return names, cols, row, cut, false, nil
}

// numberedNames names the columns of a file without a header.
func numberedNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "column_" + strconv.Itoa(i+1)
	}
	return names
}

// headerIsData reports whether a first row looks like data: every cell
// is a number, date, timestamp or bool of the same kind as the rest of
// its column. A header of names always has a text cell.
func headerIsData(first []string, st []optCol) bool {
	kinds := make([]infer.Kind, len(st))
	for i := range st {
		if st[i].ov != nil || st[i].dateOK && st[i].seen || st[i].tsOK && st[i].seen {
			return false // typed by the card: names are what the card uses
		}
		kinds[i] = st[i].kind
	}
	return rowFitsKinds(first, kinds)
}

// rowFitsKinds reports whether every cell of row has a typed (not text)
// kind that its column's kind already covers.
func rowFitsKinds(row []string, kinds []infer.Kind) bool {
	if len(row) == 0 || len(row) != len(kinds) {
		return false
	}
	for i, cell := range row {
		k := kinds[i]
		if cell == "" || k == infer.KindNull || k.Textual() {
			return false
		}
		if ck := infer.Classify(strings.TrimSpace(cell)); ck.Textual() || infer.JoinKinds(k, ck) != k {
			return false
		}
	}
	return true
}

// bindOverrides attaches the card's type overrides to their columns.
func (p *csvPlan) bindOverrides(names []string, st []optCol) error {
	for name, to := range p.types {
		for i, n := range names {
			if n != name {
				continue
			}
			t, err := infer.OverrideType(to.Type)
			if err != nil {
				return err
			}
			parse, err := infer.OverrideParser(t, to.Format, p.dateFmt, p.tsFmt)
			if err != nil {
				return err
			}
			st[i].ov, st[i].ovFormat, st[i].check = &t, to.Format, parse
			st[i].scratch = array.NewBuilder(memory.DefaultAllocator, t.DT)
		}
	}
	return nil
}

// inferCell folds one non-null cell into a column's state.
func (p *csvPlan) inferCell(c *optCol, name, cell string, row int64, spec *catalog.ReadSpec) error {
	c.seen = true
	if c.ov != nil {
		v := cell
		if c.ov.ID == infer.OvInt || c.ov.ID == infer.OvUint || c.ov.ID == infer.OvFloat {
			v, _ = p.normNumber(cell)
		}
		if !c.check(c.scratch, v) {
			return p.cardError(spec, "row %d, column %q: %q does not parse as %s%s", row, name, cell, catalog.TypeName(c.ov.DT), formatPhrase(c.ovFormat))
		}
		if c.nScratch++; c.nScratch == 4096 {
			c.scratch.NewArray().Release()
			c.nScratch = 0
		}
		return nil
	}
	if c.dateOK {
		_, c.dateOK = p.dateFmt.Parse(cell)
	}
	if c.tsOK {
		t, ok := p.tsFmt.Parse(cell)
		c.tsOK = ok && infer.TimestampFits(t, 1000) // as finish reads it: timestamp[ms]
	}
	if c.kind == infer.KindString {
		return nil
	}
	v, ok := p.normNumber(cell)
	nk := infer.KindString
	if ok {
		nk = infer.Widen(c.kind, v)
	}
	if nk != c.kind {
		c.kind = nk
		c.trace.Step(row, cell, nk)
	}
	return nil
}

func formatPhrase(f string) string {
	if f == "" {
		return ""
	}
	return " in format " + strconv.Quote(f)
}

// finish decides how a column is read.
func (p *csvPlan) finish(c *optCol) (optRead, error) {
	switch {
	case c.ov != nil:
		t := *c.ov
		parse, err := infer.OverrideParser(t, c.ovFormat, p.dateFmt, p.tsFmt)
		note := infer.ColumnNote{Format: c.ovFormat}
		if note.Format == "" && t.ID == infer.OvDate && p.dateFmt != nil {
			note.Format = p.dateFmt.Src
		}
		if note.Format == "" && t.ID == infer.OvTimestamp && p.tsFmt != nil {
			note.Format = p.tsFmt.Src
		}
		return optRead{dt: t.DT, parse: parse, norm: t.ID == infer.OvInt || t.ID == infer.OvUint || t.ID == infer.OvFloat, note: note}, err
	case c.seen && c.dateOK:
		t, _ := infer.OverrideType("date")
		parse, err := infer.OverrideParser(t, "", p.dateFmt, nil)
		return optRead{dt: t.DT, parse: parse, note: infer.ColumnNote{Format: p.dateFmt.Src}}, err
	case c.seen && c.tsOK:
		name := "timestamp[ms]"
		if strings.Contains(p.tsFmt.Src, "%z") {
			name = "timestamp[ms, UTC]"
		}
		t, _ := infer.OverrideType(name)
		parse, err := infer.OverrideParser(t, "", nil, p.tsFmt)
		return optRead{dt: t.DT, parse: parse, note: infer.ColumnNote{Format: p.tsFmt.Src}}, err
	}
	k := c.trace.Kind()
	if len(c.trace) == 0 {
		k = infer.KindNull
	}
	return optRead{dt: k.ArrowType(), parse: kindParser(k), norm: k == infer.KindInt || k == infer.KindIntWide || k == infer.KindFloat, note: c.trace.Note()}, nil
}

// kindParser parses a cell of an inferred kind (the fast reader's rules).
func kindParser(k infer.Kind) infer.CellParser {
	switch dt := k.ArrowType(); {
	case k == infer.KindInt || k == infer.KindIntWide:
		return func(b array.Builder, s string) bool {
			v, err := strconv.ParseInt(s, 10, 64)
			b.(*array.Int64Builder).Append(v)
			return err == nil
		}
	case k == infer.KindFloat:
		return func(b array.Builder, s string) bool {
			v, ok := parseFloatValue([]byte(s))
			b.(*array.Float64Builder).Append(v)
			return ok
		}
	case k == infer.KindBool:
		return func(b array.Builder, s string) bool {
			v, ok := infer.ParseBool(s)
			b.(*array.BooleanBuilder).Append(v)
			return ok
		}
	case k == infer.KindDate:
		return func(b array.Builder, s string) bool {
			d, ok := infer.ParseDateBytes([]byte(s))
			b.(*array.Date32Builder).Append(arrow.Date32(d))
			return ok
		}
	case dt.ID() == arrow.DATE32:
		return func(b array.Builder, s string) bool {
			d, ok := infer.ParseDateKind(k, s)
			b.(*array.Date32Builder).Append(arrow.Date32(d))
			return ok
		}
	case dt.ID() == arrow.TIMESTAMP:
		return func(b array.Builder, s string) bool {
			ms, ok := parseTSCell(k, []byte(s))
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(ms))
			return ok
		}
	}
	return func(b array.Builder, s string) bool { b.(*array.StringBuilder).Append(s); return true }
}

// openWithOptions opens a CSV file through the options reader. sniffed
// names what was detected rather than set (encoding, header).
func (cf csvFormat) openWithOptions(ctx context.Context, f catalog.FileInfo, gz bool, defDelim rune, spec *catalog.ReadSpec, sniffedEnc string, sniffHeader bool) ([]*catalog.Dataset, error) {
	p, err := newCSVPlan(spec, sniffedEnc)
	if err != nil {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "%s: %v", catalog.CardReadPrefix, err)
	}
	var o catalog.ReadOptions
	if spec != nil {
		o = spec.Options
	}
	cardDelim := p.delim != 0
	sniffHeader = sniffHeader && o.Header == nil
	names, cols, rows, cut, headerless, err := inferCSVOptions(ctx, f, gz, defDelim, p, spec, sniffHeader, cf.lim)
	if err != nil {
		return nil, openFailure(ctx, err)
	}
	fields := make([]arrow.Field, len(names))
	var notes map[string]infer.ColumnNote
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: cols[i].dt, Nullable: true}
		if cols[i].note != (infer.ColumnNote{}) {
			if notes == nil {
				notes = map[string]infer.ColumnNote{}
			}
			notes[n] = cols[i].note
		}
	}
	schema := arrow.NewSchema(fields, nil)
	var sniffed []string
	if !cardDelim {
		sniffed = append(sniffed, "delimiter")
	}
	if sniffedEnc != "" && o.Encoding == "" {
		sniffed = append(sniffed, "encoding")
	}
	if sniffHeader {
		sniffed = append(sniffed, "header")
	}
	hdr := 0
	if !headerless && p.header {
		hdr = 1
		if o.Header != nil {
			hdr = o.Header.Row
		}
	}
	o.Encoding = p.enc
	var sources []string
	if spec != nil {
		sources = spec.Sources
	}
	attrs := map[string]any{"delimiter": string(p.delim), "read_options": o.Describe(p.delim, hdr, sniffed, sources)}
	if gz {
		attrs["compression"] = catalog.CodecOf(f)
	}
	if cut > 0 {
		attrs["truncated_column_names"] = cut
	}
	ds := &catalog.Dataset{
		ID: f.BaseID, Kind: catalog.KindCSV, Path: f.RelPath, AbsPath: f.AbsPath, Schema: schema,
		RowCount: rows, RowCountExact: true, SizeBytes: f.Size, ModTime: f.ModTime, FileID: f.FileID,
		Attributes: attrs, ColumnNotes: notes,
	}
	ds.Source = &optSource{id: f.BaseID, file: f, gz: gz, plan: p, cols: cols, schema: schema, rows: rows, lim: cf.lim}
	return []*catalog.Dataset{ds}, nil
}

// optSource scans a file read with options.
type optSource struct {
	id     string
	file   catalog.FileInfo
	gz     bool
	plan   *csvPlan // delim resolved; not modified after opening
	cols   []optRead
	schema *arrow.Schema
	rows   int64
	lim    catalog.Limits
}

// Scan implements Source.
func (s *optSource) Scan(ctx context.Context, opts catalog.ScanOptions) (array.RecordReader, error) {
	proj, batch, alloc, err := scanSetup(ctx, s.id, s.schema, opts)
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, len(proj))
	for i, fi := range proj {
		fields[i] = s.schema.Field(fi)
	}
	rr, closer, err := s.plan.open(s.file, s.gz, s.lim, s.plan.delim)
	if err != nil {
		return nil, catalog.SourceOpenError(s.id, err)
	}
	if s.plan.header {
		if _, _, err := rr.read(); err != nil && !errors.Is(err, io.EOF) {
			closer.Close()
			return nil, s.readError(err)
		}
	}
	r := &optReader{ctx: ctx, src: s, rr: rr, closer: closer, proj: proj, batch: batch, alloc: alloc, schema: arrow.NewSchema(fields, nil)}
	r.refs.Store(1)
	return r, nil
}

func (s *optSource) readError(err error) error { return readFailure(s.id, s.file, err) }

// optReader is the record reader of an optSource.
type optReader struct {
	refs   atomic.Int64
	ctx    context.Context
	src    *optSource
	rr     *recordReader
	closer io.Closer
	proj   []int
	batch  int
	alloc  memory.Allocator
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
	done   bool
}

func (r *optReader) Retain() { r.refs.Add(1) }

func (r *optReader) Release() {
	if r.refs.Add(-1) == 0 {
		r.finish()
	}
}

func (r *optReader) finish() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.closer != nil {
		r.closer.Close()
		r.closer = nil
	}
	r.done = true
}

func (r *optReader) Schema() *arrow.Schema          { return r.schema }
func (r *optReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *optReader) Record() arrow.RecordBatch      { return r.cur }
func (r *optReader) Err() error                     { return r.err }
func (r *optReader) fail(err error)                 { r.err = err; r.finish() }
func (r *optReader) builders() []array.Builder      { return make([]array.Builder, len(r.proj)) }
func releaseBuilders(bs []array.Builder) {
	for _, b := range bs {
		if b != nil {
			b.Release()
		}
	}
}

// Next implements array.RecordReader.
func (r *optReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.done {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.fail(err)
		return false
	}
	bs := r.builders()
	defer releaseBuilders(bs)
	for i, fi := range r.proj {
		bs[i] = array.NewBuilder(r.alloc, r.src.cols[fi].dt)
	}
	n := 0
	p := r.src.plan
	for n < r.batch {
		rec, line, err := r.rr.read()
		if errors.Is(err, io.EOF) {
			r.closer.Close()
			r.closer, r.done = nil, true
			break
		}
		if err != nil {
			r.fail(r.src.readError(err))
			return false
		}
		if len(rec) != len(r.src.cols) {
			r.fail(r.src.readError(fmt.Errorf("line %d has %d fields, not %d", line, len(rec), len(r.src.cols))))
			return false
		}
		for i, fi := range r.proj {
			cell := rec[fi]
			c := &r.src.cols[fi]
			if cell == "" || p.nulls[cell] {
				bs[i].AppendNull()
				continue
			}
			v := cell
			if c.norm {
				v, _ = p.normNumber(cell)
			}
			if !c.parse(bs[i], v) {
				r.fail(r.src.readError(fmt.Errorf("line %d: %q is not a %s", line, cell, catalog.TypeName(c.dt))))
				return false
			}
		}
		n++
	}
	if n == 0 {
		return false
	}
	cols := make([]arrow.Array, len(bs))
	for i, b := range bs {
		cols[i] = b.NewArray()
	}
	r.cur = array.NewRecordBatch(r.schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return true
}

// reopenWithOptions decides, after the fast reader's pass over a file
// without read options (inf, or err when it failed), whether the file is
// read with options after all: a UTF-16 byte order mark (the fast reader
// calls such a file binary), a first row that looks like data (no
// header), or a card's type override that changes a column's type.
// done reports that ds, err are the answer.
func (cf csvFormat) reopenWithOptions(ctx context.Context, f catalog.FileInfo, gz bool, defDelim rune, inf *csvInference, err error) (ds []*catalog.Dataset, done bool, _ error) {
	if err != nil {
		if ctx.Err() == nil && strings.Contains(err.Error(), "looks binary") {
			if enc := sniffFileEncoding(f, gz, cf.lim); enc != "" {
				ds, err := cf.openWithOptions(ctx, f, gz, defDelim, f.Read, enc, true)
				return ds, true, err
			}
		}
		return nil, false, nil
	}
	reopen := inf.rows > 0 && rowFitsKinds(inf.names, inf.kinds)
	if !reopen && f.Read.Overrides() {
		for i, n := range inf.names {
			if to, ok := f.Read.Types[n]; ok && (to.Format != "" || !catalog.SameTypeName(to.Type, inf.kinds[i].ArrowType())) {
				reopen = true
			}
		}
	}
	if !reopen {
		return nil, false, nil
	}
	for _, col := range inf.kept {
		for _, a := range col {
			a.Release()
		}
	}
	inf.kept = nil
	ds, err = cf.openWithOptions(ctx, f, gz, defDelim, f.Read, "", true)
	return ds, true, err
}

// sniffFileEncoding reads the first bytes of a file's text for a byte
// order mark (sniffEncoding).
func sniffFileEncoding(f catalog.FileInfo, gz bool, lim catalog.Limits) string {
	src, closer, err := catalog.OpenDecompressed(f, gz, lim)
	if err != nil {
		return ""
	}
	defer closer.Close()
	b := make([]byte, 2)
	if _, err := io.ReadFull(src, b); err != nil {
		return ""
	}
	return sniffEncoding(b)
}

// openFailure is the error of a CSV file that cannot be opened: ctx's
// error when it ended, a *qerr.Error as is, others unsupported_format.
func openFailure(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	var qe *qerr.Error
	if errors.As(err, &qe) {
		return err
	}
	return qerr.Unsupported(qerr.CodeUnsupportedFormat, "%s", err.Error()).Wrap(err)
}

// scanSetup checks what every text Source's Scan starts with: ctx, the
// catalog.Projection, the batch size and the allocator (defaults applied).
func scanSetup(ctx context.Context, id string, schema *arrow.Schema, opts catalog.ScanOptions) ([]int, int, memory.Allocator, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, nil, err
	}
	proj, err := catalog.Projection(id, schema, opts.Columns)
	if err != nil {
		return nil, 0, nil, err
	}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = catalog.DefaultBatchSize
	}
	alloc := opts.Alloc
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	return proj, batch, alloc, nil
}
