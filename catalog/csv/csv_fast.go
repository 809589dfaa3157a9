package csv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/infer"
	"github.com/quarrydb/quarry/catalog/internal/chunk"
	"github.com/quarrydb/quarry/internal/qerr"
)

// This file is the fast path of CSV inference and scanning: the file is cut
// into chunks of complete records (catalog/internal/chunk), tokenized
// (csv_tokenize.go) and parsed (csv_parse.go) on every core. Results are
// identical to the reference path (inferCSV with encoding/csv, and
// arrow-go's CSV reader in scanReference); any input the fast path rejects
// is re-read by the reference path, so error messages (line numbers,
// reasons) are the reference's.

// openChunks opens a CSV file for reading in chunks of complete records
// (catalog.OpenChunks, cut at CSV's record boundaries: lastBoundary).
func openChunks(file catalog.FileInfo, gz bool, size int, lim catalog.Limits) (*chunk.Reader, error) {
	return catalog.OpenChunks(file, gz, chunk.Config{Size: size, Boundary: lastBoundary, What: "CSV"}, lim)
}

// csvHeader is what the start of a file tells: delimiter and column names.
type csvHeader struct {
	delim    rune
	names    []string
	cutNames int // names cut to Limits.MaxNameBytes
}

// errFallback marks inputs the fast path leaves to the reference path.
var errFallback = errors.New("use the reference CSV reader")

// readHeader sniffs the delimiter and reads the header row from the first
// sniffBytes of the file, with the same checks as inferCSV. It returns
// errFallback when the header does not fit in the sample or does not parse.
func readHeader(file catalog.FileInfo, gz bool, defDelim rune, lim catalog.Limits) (*csvHeader, error) {
	br, closer, err := openText(file, gz, lim)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	sample, err := br.Peek(sniffBytes)
	truncated := err == nil
	if errors.Is(err, qerr.ErrLimitExceeded) {
		return nil, err
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, errFallback
	}
	if len(bytes.TrimSpace(sample)) == 0 || bytes.IndexByte(sample, 0) >= 0 {
		return nil, errFallback
	}
	delim := sniffDelimiter(sample, truncated, defDelim)
	r := csv.NewReader(bytes.NewReader(sample))
	r.Comma = delim
	header, err := r.Read()
	if err != nil {
		return nil, errFallback
	}
	if off := r.InputOffset(); truncated && (off <= 0 || off > int64(len(sample)) || sample[off-1] != '\n') {
		return nil, errFallback
	}
	names, cut, err := headerNames(header, lim)
	if errors.Is(err, qerr.ErrLimitExceeded) {
		return nil, err
	}
	if err != nil {
		return nil, errFallback
	}
	return &csvHeader{delim: delim, names: names, cutNames: cut}, nil
}

// inferCSVFast is inferCSV on every core. size is the file size on disk.
// With keep non-nil it also parses every column into arrays allocated
// from keep (csvInference.kept); columns whose cells changed kind along the
// file in a way a typed array cannot follow are left out (nil).
//
// A file beyond lim is a resource_exhausted error (errors.Is
// qerr.ErrLimitExceeded) at once, without the reference re-read.
func inferCSVFast(ctx context.Context, file catalog.FileInfo, gz bool, defDelim rune, size int64, keep memory.Allocator, lim catalog.Limits) (*csvInference, error) {
	lim = lim.WithDefaults()
	inf, err := inferFast(ctx, file, gz, defDelim, size, keep, lim)
	if err == nil {
		return inf, nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	if errors.Is(err, qerr.ErrLimitExceeded) {
		return nil, err
	}
	return inferCSV(ctx, file, gz, defDelim, lim)
}

// chunkKinds is what one chunk tells inference: the kind of each column
// over the chunk, its rows, and (when keeping) its parsed columns.
type chunkKinds struct {
	kinds  []infer.Kind
	traces []infer.Trace // per column, rows counted from the chunk's start
	rows   int64
	cols   []arrow.Array // keep: per column, nil for kindNull
}

func (c chunkKinds) release() {
	for _, a := range c.cols {
		if a != nil {
			a.Release()
		}
	}
}

// Chunk sizes of the inference pass: small chunks keep a chunk's field
// spans in the core's cache; kept chunks become the batches of the cache,
// so they are bigger.
var (
	inferChunkBytes = 1 << 20
	keepChunkBytes  = 4 << 20
)

func inferFast(ctx context.Context, file catalog.FileInfo, gz bool, defDelim rune, size int64, keep memory.Allocator, lim catalog.Limits) (*csvInference, error) {
	lim = lim.WithDefaults()
	h, err := readHeader(file, gz, defDelim, lim)
	if err != nil {
		return nil, err
	}
	if h.delim >= utf8.RuneSelf {
		return nil, errFallback
	}
	ncols := len(h.names)
	chunkBytes := inferChunkBytes
	if keep != nil {
		chunkBytes = keepChunkBytes
	}
	cr, err := openChunks(file, gz, chunkBytes, lim)
	if err != nil {
		return nil, err
	}
	workers := chunk.Workers(size)
	all := make([]int, ncols)
	for i := range all {
		all[i] = i
	}
	toks := make([]*csvTokenizer, workers)
	scratch := make([][]byte, workers)
	for w := range toks {
		toks[w] = newTokenizer(byte(h.delim), ncols, all)
	}
	noDict := make([]atomic.Bool, ncols) // keep: the column has too many distinct values
	var dicts [][]workerDict             // keep: per worker, per column
	if keep != nil {
		dicts = make([][]workerDict, workers)
		for w := range dicts {
			dicts[w] = make([]workerDict, ncols)
		}
	}
	p := chunk.Start(cr, workers, func(w int, ch *chunk.Chunk) (chunkKinds, error) {
		t := toks[w]
		if keep == nil {
			return inferChunk(t, ch, &scratch[w])
		}
		return keepChunk(keep, t, ch, &scratch[w], noDict, dicts[w])
	}, chunkKinds.release)
	defer p.Close()
	inf := &csvInference{names: h.names, kinds: make([]infer.Kind, ncols), traces: make([]infer.Trace, ncols), delim: h.delim, cutNames: h.cutNames}
	var kept []chunkKinds
	defer func() {
		for _, k := range kept {
			k.release()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ck, ok, err := p.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		for c, tr := range ck.traces {
			inf.traces[c] = inf.traces[c].Merge(tr, inf.rows)
			inf.kinds[c] = inf.traces[c].Kind()
		}
		inf.rows += ck.rows
		if keep != nil && ck.rows > 0 {
			kept = append(kept, ck)
		}
	}
	if keep != nil {
		inf.kept = assembleKept(keep, inf.kinds, kept)
		kept = nil
	}
	return inf, nil
}

// flushRowsFor is how many rows the tokenizer records between flushes:
// about 128 KiB of spans, so they stay in the core's cache; for very wide
// files fewer than minFlushRows, so the spans stay within maxFlushSpanBytes.
func flushRowsFor(nslots int) int {
	n := min(max((64<<10)/(8*max(nslots, 1)), minFlushRows), 8192)
	return max(min(n, maxFlushSpanBytes/(8*max(nslots, 1))), 1)
}

// maxFlushSpanBytes bounds the span memory of one tokenizer between
// flushes (about 8 bytes per recorded field).
const maxFlushSpanBytes = 4 << 20

var minFlushRows = 256 // tests lower it

// inferChunk classifies every column of a chunk (and checks that string
// columns are UTF-8), batch by batch as the tokenizer goes.
func inferChunk(t *csvTokenizer, ch *chunk.Chunk, scratch *[]byte) (chunkKinds, error) {
	ncols := t.ncols
	out := chunkKinds{kinds: make([]infer.Kind, ncols), traces: make([]infer.Trace, ncols)}
	t.flushRows = flushRowsFor(ncols)
	base := int64(0) // rows of the chunk before this flush
	t.flush = func(rows int) error {
		for c := range ncols {
			k, err := classifyFrom(out.kinds[c], t.spansOf(ch.Data, c), scratch, &out.traces[c], base)
			if err != nil {
				return err
			}
			out.kinds[c] = k
		}
		base += int64(rows)
		return nil
	}
	defer func() { t.flush = nil }()
	if err := t.run(ch.Data, ch.First); err != nil {
		return chunkKinds{}, err
	}
	out.rows = int64(t.total)
	return out, nil
}

// errKindChange: a column's cells do not all fit the kind of its first
// cell; the chunk is parsed again the slow way.
var errKindChange = errors.New("column kind changes within the chunk")

// keepCol is one column of a chunk being kept: empty until its first
// non-empty cell, then a builder of that cell's kind.
type keepCol struct {
	kind  infer.Kind
	b     colBuilder
	nulls int // leading empty cells before the builder exists
	trace infer.Trace
}

// keepChunk classifies and parses every column of a chunk in one pass: each
// column is built with the kind of its first non-empty cell (parsing a cell
// as kind k accepts exactly the cells widen keeps at k, so when every cell
// parses, k is the chunk's kind). When a cell does not fit, the chunk is
// tokenized again and classified first (keepChunkSlow).
//
// dicts are the worker's dictionaries of the columns (workerDict).
func keepChunk(mem memory.Allocator, t *csvTokenizer, ch *chunk.Chunk, scratch *[]byte, noDict []atomic.Bool, dicts []workerDict) (chunkKinds, error) {
	ncols := t.ncols
	ub := bytes.Count(ch.Data, nl) + 1
	cols := make([]keepCol, ncols)
	release := func() {
		for _, kc := range cols {
			if kc.b != nil {
				kc.b.release()
			}
		}
	}
	t.flushRows = flushRowsFor(ncols)
	base := int64(0) // rows of the chunk before this flush
	t.flush = func(rows int) error {
		for c := range cols {
			if err := cols[c].add(mem, t.spansOf(ch.Data, c), ub, scratch, &noDict[c], &dicts[c], base); err != nil {
				return err
			}
		}
		base += int64(rows)
		return nil
	}
	err := t.run(ch.Data, ch.First)
	t.flush = nil
	if err != nil {
		release()
		if errors.Is(err, errKindChange) {
			return keepChunkSlow(mem, t, ch, scratch, noDict, dicts)
		}
		return chunkKinds{}, err
	}
	out := chunkKinds{kinds: make([]infer.Kind, ncols), traces: make([]infer.Trace, ncols), rows: int64(t.total), cols: make([]arrow.Array, ncols)}
	if t.total == 0 {
		release()
		return out, nil
	}
	for c, kc := range cols {
		out.kinds[c] = kc.kind
		out.traces[c] = kc.trace
		if kc.b == nil {
			continue // kindNull
		}
		if db, ok := kc.b.(*dictBuilder); ok && db.plain != nil {
			noDict[c].Store(true)
		}
		out.cols[c] = kc.b.finish()
	}
	return out, nil
}

var nl = []byte{'\n'}

func (kc *keepCol) add(mem memory.Allocator, c colSpans, ub int, scratch *[]byte, noDict *atomic.Bool, dict *workerDict, base int64) error {
	if kc.b == nil {
		first := -1
		for r := range c.rows {
			if f := c.at(r, scratch); len(f) > 0 {
				first = r
				kc.kind = infer.Classify(unsafeString(f))
				kc.trace.Step(base+int64(r)+1, unsafeString(f), kc.kind)
				break
			}
		}
		if first < 0 {
			kc.nulls += c.rows
			return nil
		}
		if !kc.kind.Textual() || noDict.Load() {
			dict = nil
		}
		kc.b = newBuilder(mem, kc.kind, ub, true, dict)
		if kc.nulls > 0 {
			_ = kc.b.add(colSpans{sp: make([]uint32, 2*kc.nulls), rows: kc.nulls}, scratch)
		}
	}
	err := kc.b.add(c, scratch)
	var ce *cellError
	if errors.As(err, &ce) {
		return errKindChange
	}
	return err
}

// keepChunkSlow is keepChunk for a chunk whose columns change kind: the
// whole chunk is tokenized, each column classified, then parsed.
func keepChunkSlow(mem memory.Allocator, t *csvTokenizer, ch *chunk.Chunk, scratch *[]byte, noDict []atomic.Bool, dicts []workerDict) (chunkKinds, error) {
	if err := t.run(ch.Data, ch.First); err != nil {
		return chunkKinds{}, err
	}
	ncols := t.ncols
	out := chunkKinds{kinds: make([]infer.Kind, ncols), traces: make([]infer.Trace, ncols), rows: int64(t.rows), cols: make([]arrow.Array, ncols)}
	if t.rows == 0 {
		return out, nil
	}
	for c := range ncols {
		cs := t.spansOf(ch.Data, c)
		k, err := classifyFrom(infer.KindNull, cs, scratch, &out.traces[c], 0)
		if err != nil {
			out.release()
			return chunkKinds{}, err
		}
		out.kinds[c] = k
		if k == infer.KindNull {
			continue
		}
		var dict *workerDict
		if k.Textual() && !noDict[c].Load() {
			dict = &dicts[c]
		}
		b := newBuilder(mem, k, cs.rows, true, dict)
		if err := b.add(cs, scratch); err != nil {
			b.release()
			out.release()
			return chunkKinds{}, err
		}
		out.cols[c] = b.finish()
	}
	return out, nil
}

// assembleKept turns the chunks' columns into the columns of the final
// kinds: a chunk of a kind with the final kind's Arrow type is kept as is
// (its cells parse the same), an all-null chunk becomes an all-null array,
// an int chunk of a float column is converted (exact: kindInt values are
// exact float64s); a column with any other mismatch is dropped. It
// consumes the chunks.
func assembleKept(mem memory.Allocator, kinds []infer.Kind, chunks []chunkKinds) [][]arrow.Array {
	out := make([][]arrow.Array, len(kinds))
	for c, final := range kinds {
		col := make([]arrow.Array, 0, len(chunks))
		ok := true
		for _, ch := range chunks {
			k := ch.kinds[c]
			switch {
			case !ok:
			case k != infer.KindNull && arrow.TypeEqual(k.ArrowType(), final.ArrowType()):
				if ch.cols[c] == nil { // all-null column (final kind null)
					col = append(col, array.MakeArrayOfNull(mem, final.ArrowType(), int(ch.rows)))
				} else {
					ch.cols[c].Retain()
					col = append(col, ch.cols[c])
				}
			case k == infer.KindNull:
				col = append(col, array.MakeArrayOfNull(mem, final.ArrowType(), int(ch.rows)))
			case k == infer.KindInt && final == infer.KindFloat:
				col = append(col, infer.IntsToFloats(mem, ch.cols[c].(*array.Int64)))
			default:
				ok = false
			}
		}
		if ok && final.Textual() {
			col = sameStringEncoding(mem, col)
		}
		if ok {
			out[c] = col
		} else {
			for _, a := range col {
				a.Release()
			}
		}
	}
	for _, ch := range chunks {
		ch.release()
	}
	return out
}

// sameStringEncoding makes the arrays of one string column all plain when
// some are dictionary-encoded and some are not (every batch of a reader
// has the same type). It consumes col.
func sameStringEncoding(mem memory.Allocator, col []arrow.Array) []arrow.Array {
	dict := 0
	for _, a := range col {
		if a.DataType().ID() == arrow.DICTIONARY {
			dict++
		}
	}
	if dict == 0 || dict == len(col) {
		return col
	}
	for i, a := range col {
		d, ok := a.(*array.Dictionary)
		if !ok {
			continue
		}
		vals := d.Dictionary().(*array.String)
		b := array.NewStringBuilder(mem)
		b.Reserve(d.Len())
		for j := range d.Len() {
			if d.IsNull(j) {
				b.AppendNull()
			} else {
				b.Append(vals.Value(d.GetValueIndex(j)))
			}
		}
		col[i] = b.NewArray()
		b.Release()
		a.Release()
	}
	return col
}

// classifyFrom folds widen over the non-empty cells of one column of a
// batch, starting from kind k, with validate-only fast paths for the kinds
// that need every cell checked. Every change of kind is a step of tr (rows
// numbered from base+1). When the result is string, every cell of the
// batch must be valid UTF-8 (cells of the other kinds are ASCII).
func classifyFrom(k infer.Kind, c colSpans, scratch *[]byte, tr *infer.Trace, base int64) (infer.Kind, error) {
	for r := range c.rows {
		if k == infer.KindString {
			break
		}
		st, en := c.sp[2*r], c.sp[2*r+1]
		var f []byte
		if st&spanQuoted == 0 {
			if st == en {
				continue
			}
			f = c.b[st:en]
		} else {
			if f = quotedField(c.b, st, en, scratch); len(f) == 0 {
				continue
			}
		}
		var ok bool
		switch k {
		case infer.KindInt, infer.KindIntWide, infer.KindNumNoDot:
			ok = validInt(f)
		case infer.KindFloat:
			ok = validDecimal(f)
		case infer.KindNumText:
			ok = looksDecimal(f)
		case infer.KindTSNaive:
			ok = validNaiveTS(f)
		case infer.KindDate:
			_, ok = infer.ParseDateBytes(f)
		case infer.KindDateYMD, infer.KindDateMDY, infer.KindDateDMY, infer.KindDateMonDY, infer.KindDateDMonY, infer.KindDateYMonD:
			_, ok = infer.ParseDateKind(k, unsafeString(f))
		case infer.KindTSYMD, infer.KindTSMDY, infer.KindTSDMY:
			_, ok = infer.ParseTSKind(k, unsafeString(f))
		}
		if !ok {
			if nk := widenBytes(k, f); nk != k {
				k = nk
				tr.Step(base+int64(r)+1, unsafeString(f), k)
			}
		}
	}
	if k.Textual() {
		for r := range c.rows {
			if f := c.at(r, scratch); !utf8.Valid(f) {
				return k, errInvalidUTF8
			}
		}
	}
	return k, nil
}

// validInt reports (for the common shapes only) that s is a kindInt cell:
// -?[1-9][0-9]* or 0 with at most 15 digits. false means "look closer".
func validInt(s []byte) bool {
	n := len(s)
	i := 0
	if n > 0 && s[0] == '-' {
		i = 1
	}
	if d := n - i; d == 0 || d > 15 {
		return false
	} else if s[i] == '0' {
		return n == 1 // "0"; not "-0" or leading zeros
	}
	for ; i < n; i++ {
		if s[i]-'0' > 9 {
			return false
		}
	}
	return true
}

// validDecimal reports (for plain decimals only) that s is a cell a float
// column keeps: -?digits[.digits] with 1 to 15 digits (so it prints back
// as written) and no leading zero before other digits of the integer part.
// false means "look closer".
func validDecimal(s []byte) bool {
	n := len(s)
	if n == 0 || n > 17 {
		return false
	}
	if !cleanLead(s) {
		return false
	}
	i := 0
	if s[0] == '-' {
		i = 1
	}
	digits, dot := 0, false
	for ; i < n; i++ {
		c := s[i]
		if c-'0' <= 9 {
			digits++
		} else if c == '.' && !dot {
			dot = true
		} else {
			return false
		}
	}
	return digits > 0 && digits <= 15
}

// cleanLead reports that a non-empty decimal has no leading '+' and no
// leading zero before another digit of its integer part ("0.5" and "-0"
// yes, "+1", "00501" and "01.5" no).
func cleanLead(s []byte) bool {
	i := 0
	switch s[0] {
	case '+':
		return false
	case '-':
		i = 1
	}
	return !(i+1 < len(s) && s[i] == '0' && s[i+1] != '.')
}

// looksDecimal reports (for plain decimals only) that s is a number
// strconv.ParseFloat accepts: [+-]?digits[.digits] with a digit somewhere,
// at most 64 bytes (so it cannot overflow). false means "look closer".
func looksDecimal(s []byte) bool {
	n := len(s)
	if n == 0 || n > 64 {
		return false
	}
	i := 0
	if s[0] == '-' || s[0] == '+' {
		i = 1
	}
	digits, dot := false, false
	for ; i < n; i++ {
		c := s[i]
		if c-'0' <= 9 {
			digits = true
		} else if c == '.' && !dot {
			dot = true
		} else {
			return false
		}
	}
	return digits
}

// validNaiveTS is parseNaiveTSFast without computing the value.
func validNaiveTS(s []byte) bool {
	_, ok := parseNaiveTSFast(s)
	return ok
}

// ---------------------------------------------------------------- scan

// chunkCols is one parsed chunk: the projected columns.
type chunkCols struct {
	cols []arrow.Array
	rows int
	read int // rows tokenized (rows plus those pushed filters dropped)
}

func (c chunkCols) release() {
	for _, a := range c.cols {
		if a != nil {
			a.Release()
		}
	}
}

// scanFast starts the parallel reader over the projected columns, keeping
// only the rows that pass tests (pushed filters; none when nil).
func (s *csvSource) scanFast(ctx context.Context, proj []int, schema *arrow.Schema, batch int, alloc memory.Allocator, tests []rowTest) (array.RecordReader, error) {
	rowBytes := 100.0
	if s.rows > 0 && s.size > 0 {
		rowBytes = float64(s.size) / float64(s.rows)
		if s.gz {
			rowBytes *= 4
		}
	}
	cr, err := openChunks(s.file, s.gz, chunk.BytesFor(batch, rowBytes), s.lim)
	if err != nil {
		return nil, err
	}
	workers := chunk.Workers(s.size)
	ncols := len(s.kinds)
	type wstate struct {
		tok     *csvTokenizer
		scratch []byte
		spans   []colSpans // pushed filters: the flushed rows' spans
		keep    []bool
	}
	ws := make([]wstate, workers)
	for w := range ws {
		ws[w].tok = newTokenizer(byte(s.delim), ncols, proj)
	}
	kinds := make([]infer.Kind, len(proj))
	for i, fi := range proj {
		kinds[i] = s.kinds[fi]
	}
	p := chunk.Start(cr, workers, func(w int, ch *chunk.Chunk) (chunkCols, error) {
		st := &ws[w]
		ub := bytes.Count(ch.Data, nl) + 1
		st.tok.flushRows = flushRowsFor(len(proj))
		if tests != nil { // few rows may be kept: let the builders grow
			ub = min(ub, st.tok.flushRows)
		}
		builders := make([]colBuilder, len(proj))
		for i, k := range kinds {
			builders[i] = newBuilder(alloc, k, ub, false, nil)
		}
		release := func() {
			for _, b := range builders {
				b.release()
			}
		}
		kept := 0
		st.tok.flush = func(rows int) error {
			if tests == nil {
				kept += rows
				for i, b := range builders {
					if err := b.add(st.tok.spansOf(ch.Data, i), &st.scratch); err != nil {
						return err
					}
				}
				return nil
			}
			st.spans = st.spans[:0]
			for i := range builders {
				st.spans = append(st.spans, st.tok.spansOf(ch.Data, i))
			}
			if cap(st.keep) < rows {
				st.keep = make([]bool, rows)
			}
			rows = filterRows(tests, st.spans, rows, st.keep, &st.scratch)
			kept += rows
			for i, b := range builders {
				c := st.spans[i]
				c.sp, c.rows = c.sp[:2*rows], rows
				if err := b.add(c, &st.scratch); err != nil {
					return err
				}
			}
			return nil
		}
		err := st.tok.run(ch.Data, ch.First)
		st.tok.flush = nil
		if err != nil {
			release()
			return chunkCols{}, err
		}
		out := chunkCols{cols: make([]arrow.Array, len(proj)), rows: kept, read: st.tok.total}
		for i, b := range builders {
			out.cols[i] = b.finish()
		}
		return out, nil
	}, chunkCols.release)
	r := &csvFastReader{ctx: ctx, src: s, schema: schema, batch: batch, pipe: p}
	r.refs.Store(1)
	return r, nil
}

// csvFastReader hands out the parsed chunks as batches of at most batch rows.
type csvFastReader struct {
	refs   atomic.Int64
	ctx    context.Context
	src    *csvSource
	schema *arrow.Schema
	batch  int

	mu   sync.Mutex // guards pipe against Release racing a panicking Next
	pipe *chunk.Pipeline[chunkCols]
	pend chunkCols // chunk being handed out
	off  int       // rows of pend already handed out
	read int64     // rows of the chunks taken (before pushed filters)
	cur  arrow.RecordBatch
	err  error
}

var _ array.RecordReader = (*csvFastReader)(nil)

// Retain implements array.RecordReader.
func (r *csvFastReader) Retain() { r.refs.Add(1) }

// Release implements array.RecordReader.
func (r *csvFastReader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.finish()
	}
}

func (r *csvFastReader) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pend.release()
	r.pend = chunkCols{}
	if r.pipe != nil {
		r.pipe.Close()
		r.pipe = nil
	}
}

// Schema implements array.RecordReader.
func (r *csvFastReader) Schema() *arrow.Schema { return r.schema }

// RecordBatch implements array.RecordReader.
func (r *csvFastReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record implements array.RecordReader.
//
// Deprecated: use RecordBatch.
func (r *csvFastReader) Record() arrow.RecordBatch { return r.cur }

// Err implements array.RecordReader.
func (r *csvFastReader) Err() error { return r.err }

// ScanStats implements ScanStatser: the rows read, pushed filters' drops
// included.
func (r *csvFastReader) ScanStats() (catalog.ScanStats, bool) {
	return catalog.ScanStats{RowsRead: r.read}, true
}

// Next implements array.RecordReader.
func (r *csvFastReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.pipe == nil || r.err != nil {
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.fail(err)
		return false
	}
	for r.off >= r.pend.rows {
		r.pend.release()
		r.pend, r.off = chunkCols{}, 0
		c, ok, err := r.pipe.Next()
		if err != nil {
			r.fail(r.readError(err))
			return false
		}
		if !ok {
			r.finish()
			return false
		}
		r.pend = c
		r.read += int64(c.read)
	}
	n := min(r.batch, r.pend.rows-r.off)
	cols := make([]arrow.Array, len(r.pend.cols))
	for i, a := range r.pend.cols {
		if r.off == 0 && n == r.pend.rows {
			a.Retain()
			cols[i] = a
		} else {
			cols[i] = array.NewSlice(a, int64(r.off), int64(r.off+n))
		}
	}
	r.off += n
	r.cur = array.NewRecordBatch(r.schema, cols, int64(n))
	for _, a := range cols {
		a.Release()
	}
	return true
}

func (r *csvFastReader) fail(err error) {
	r.err = err
	r.finish()
}

func (r *csvFastReader) readError(err error) error { return readFailure(r.src.id, r.src.file, err) }
