package csv

import (
	"bytes"
	"fmt"
	"math/bits"
	"unicode/utf8"
	"unsafe"

	"github.com/quarrydb/quarry/catalog/infer"
)

// This file is the fast CSV tokenizer: it splits a chunk of complete
// records into field spans with exactly the semantics of encoding/csv
// (LazyQuotes off, FieldsPerRecord fixed by the header, no comments, no
// trimming), which stays the reference implementation (csv.go, the
// differential tests in csv_fast_test.go):
//
//   - "\r\n" ending a line counts as "\n"; a lone '\r' is data, except that
//     a '\r' right before the end of the input is dropped.
//   - Empty lines are skipped (outside quoted fields).
//   - A field starting with '"' is quoted: it runs to the next '"' not
//     followed by another '"' ("" is an escaped quote), may span lines
//     (its "\r\n" become "\n") and must be followed by the delimiter, the
//     end of the line or the end of the input.
//   - A '"' anywhere else in a field is an error, as is an unterminated
//     quoted field or a record with a different number of fields.

// Span flags. Offsets are relative to the chunk, which is always smaller
// than 2 GiB (see splitter).
const (
	spanQuoted  = 1 << 31 // on start: the field was quoted; the span is its content between the quotes
	spanEscaped = 1 << 31 // on end: the quoted content holds "" or "\r\n" and must be unescaped
	spanMask    = spanQuoted - 1
)

// errMalformed is returned by the tokenizer for any input encoding/csv
// would reject. Callers that need encoding/csv's exact message (line and
// column) re-read the file with it.
type errMalformed struct {
	off    int    // byte offset in the chunk
	reason string // short description
}

func (e *errMalformed) Error() string {
	return fmt.Sprintf("malformed CSV at byte %d of its chunk: %s", e.off, e.reason)
}

// csvTokenizer splits chunks into records and records the spans of the
// fields it was asked for. A tokenizer is used by one goroutine at a time
// and reused across chunks.
type csvTokenizer struct {
	delim  byte
	ncols  int     // fields per record
	slot   []int32 // file column -> slot of its span pair in a row, -1 = skipped
	nslots int
	// cols[s] holds the start and end of slot s's field in each row; the
	// slots are regions of flat, capRows rows each, followed by a trash
	// region that takes the fields of skipped columns (and of records
	// with too many fields) so that recording a field never branches.
	cols    [][]uint32
	flat    []uint32
	off     []int // per file column (+1 for "too many"), its region's offset in flat
	capRows int
	rows    int
	total   int // rows of the last run (with flush: across flushes)
	// flush, when set, receives the recorded rows every flushRows rows or
	// so (at a window end) and at the end of the chunk; the spans are then
	// reused. Without it every row of the chunk stays recorded.
	flush     func(rows int) error
	flushRows int
	mask      []uint64 // structural bitmap of one window
	nq        []uint64 // '\n' and '"' bitmap of one window
	hi        []uint64 // non-ASCII bitmap of one window
	utf8      bool     // check that the chunk is valid UTF-8
	pat       [48]byte // delimiter, '\n', '"', 16 times each
}

func newTokenizer(delim byte, ncols int, record []int) *csvTokenizer {
	t := &csvTokenizer{delim: delim, ncols: ncols, slot: make([]int32, ncols)}
	for i := range t.slot {
		t.slot[i] = -1
	}
	for s, c := range record {
		t.slot[c] = int32(s)
	}
	t.nslots = len(record)
	return t
}

// layout makes room for capRows rows of spans, keeping the first keep rows
// of every slot.
func (t *csvTokenizer) layout(capRows, keep int) {
	if t.cols != nil && t.capRows >= capRows {
		return
	}
	region := 2 * capRows
	flat := make([]uint32, (t.nslots+1)*region)
	cols := make([][]uint32, t.nslots)
	for s := range cols {
		cols[s] = flat[s*region : (s+1)*region : (s+1)*region]
		if keep > 0 {
			copy(cols[s], t.cols[s][:2*keep])
		}
	}
	off := make([]int, t.ncols+1)
	for c := range off {
		off[c] = t.nslots * region // trash
		if c < t.ncols && t.slot[c] >= 0 {
			off[c] = int(t.slot[c]) * region
		}
	}
	t.cols, t.flat, t.off, t.capRows = cols, flat, off, capRows
}

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

func load64(b []byte, i int) uint64 { return infer.Load64(b, i) }

// maskWindow is how many bytes get their structural mask computed at a
// time (so the mask and the bytes stay in L1/L2 for the second stage).
var maskWindow = 16 << 10

// run tokenizes b, which holds complete records (the last one may end at
// the end of b without a newline only when b ends the input). With
// skipFirst the first record (the header) is checked but not recorded.
// Spans and rows are reset first.
//
// It works in two stages per window of maskWindow bytes: bitmaps of the
// structural bytes (delimiter, '\n', '"') and of the '\n' and '"' among
// them (SSE2 on amd64), then a walk over the set bits in which a
// delimiter, the common case, is told apart in registers. A quoted field
// is scanned with bytes.IndexByte and the bits inside it are cleared.
func (t *csvTokenizer) run(b []byte, skipFirst bool) error {
	n := len(b)
	if n >= spanQuoted {
		return &errMalformed{0, "chunk too large"}
	}
	t.rows, t.total = 0, 0
	// A record takes at least max(ncols, 2) bytes (its delimiters and
	// newline, or one byte and the newline), which bounds the rows of b
	// and of a window: wide files must not get a span region of n/48
	// rows per column. (The layout grows should the guess be short.)
	minRec := max(t.ncols, 2)
	capRows := max(min(n/48, n/minRec+1), 16)
	if t.flush != nil {
		capRows = t.flushRows + maskWindow/minRec + 2 // a window adds at most maskWindow/minRec+1 rows
	}
	t.layout(capRows, 0)
	capRows = t.capRows
	if len(t.mask) < maskWindow/64 {
		t.mask = make([]uint64, maskWindow/64)
		t.nq = make([]uint64, maskWindow/64)
		t.hi = make([]uint64, maskWindow/64)
	}
	uni := -1 // start of a run of blocks holding non-ASCII bytes (UTF-8 check)
	pat := &t.pat
	for i := range 16 {
		pat[i], pat[16+i], pat[32+i] = t.delim, '\n', '"'
	}
	delim := t.delim
	ncols := t.ncols
	sp, off := t.flat, t.off[:ncols+1]
	rows := 0      // committed rows; the current record's fields go to row rows
	fs, rs := 0, 0 // current field and record start
	col := 0
	skipTo := 0 // bits below this position are inside a quoted field
	qf := false // the current field was quoted: [qs, qe) with flags
	var qs, qe uint32

	for w0 := 0; w0 < n; w0 += maskWindow {
		w1 := min(w0+maskWindow, n)
		full := w0 + (w1-w0)&^63
		mask, nqm, hi := t.mask, t.nq, t.hi
		structMask(b[w0:full], pat, mask, nqm, hi)
		nw := (full - w0) >> 6
		if full < w1 {
			var m, q, h uint64
			for i := full; i < w1; i++ {
				if c := b[i]; c == '\n' || c == '"' {
					m |= 1 << uint(i-full)
					q |= 1 << uint(i-full)
				} else if c == delim {
					m |= 1 << uint(i-full)
				} else if c >= 0x80 {
					h = 1
				}
			}
			mask[nw], nqm[nw], hi[nw] = m, q, h
			nw++
		}
		if t.utf8 {
			for wi := 0; wi < nw; wi++ {
				if hi[wi] != 0 {
					if uni < 0 {
						uni = w0 + wi<<6
					}
				} else if uni >= 0 {
					if !utf8.Valid(b[uni : w0+wi<<6]) {
						return &errMalformed{uni, "invalid UTF-8"}
					}
					uni = -1
				}
			}
		}
		for wi := 0; wi < nw; wi++ {
			m := mask[wi]
			base := w0 + wi<<6
			if skipTo > base {
				if skipTo-base >= 64 {
					continue
				}
				m &= ^uint64(0) << uint(skipTo-base)
			}
			nq := nqm[wi]
			for m != 0 {
				// The delimiters before the next '\n' or '"' first.
				special := nq & m
				if d := m & (special&-special - 1); d != 0 {
					m ^= d
					if qf {
						p := base + bits.TrailingZeros64(d)
						d &= d - 1
						i := off[min(col, ncols)] + 2*rows
						sp[i], sp[i+1] = qs, qe
						qf = false
						col++
						fs = p + 1
					}
					col, fs = recordDelims(sp, off, d, base, col, fs, 2*rows)
					if m == 0 {
						break
					}
				}
				p := base + bits.TrailingZeros64(m)
				m &= m - 1
				if b[p] == '\n' {
					if col == 0 && !qf && fs == rs && (p == rs || (p == rs+1 && b[rs] == '\r')) {
						fs, rs = p+1, p+1 // blank line
						continue
					}
					i := off[min(col, ncols)] + 2*rows
					if qf {
						sp[i], sp[i+1] = qs, qe
					} else {
						e := p
						if e > fs && b[e-1] == '\r' {
							e--
						}
						sp[i], sp[i+1] = uint32(fs), uint32(e)
					}
					if col+1 != ncols {
						return &errMalformed{p, fmt.Sprintf("record has %d fields, want %d", col+1, ncols)}
					}
					qf = false
					col = 0
					fs, rs = p+1, p+1
					if skipFirst {
						skipFirst = false
						continue
					}
					rows++
					if rows == capRows {
						t.layout(2*capRows, rows)
						capRows = t.capRows
						sp, off = t.flat, t.off[:ncols+1]
					}
					continue
				}
				// '"'
				if p != fs {
					return &errMalformed{p, "bare \" in non-quoted field"}
				}
				q, esc, err := quotedEnd(b, p, delim)
				if err != nil {
					return err
				}
				qf = true
				qs, qe = uint32(p+1)|spanQuoted, uint32(q)
				if esc {
					qe |= spanEscaped
				}
				skipTo = q + 1
				if skipTo-base >= 64 {
					break // the following words clear their bits below skipTo
				}
				m &= ^uint64(0) << uint(skipTo-base)
			}
		}
		if t.flush != nil && rows >= t.flushRows {
			if err := t.flushRecorded(rows, col); err != nil {
				return err
			}
			t.total += rows
			rows = 0
		}
	}
	if uni >= 0 && !utf8.Valid(b[uni:]) {
		return &errMalformed{uni, "invalid UTF-8"}
	}
	// A last record without a newline.
	if rs < n && !(col == 0 && !qf && fs == rs && n == rs+1 && b[rs] == '\r') {
		i := off[min(col, ncols)] + 2*rows
		if qf {
			sp[i], sp[i+1] = qs, qe
		} else {
			e := n
			if e > fs && b[e-1] == '\r' {
				e--
			}
			sp[i], sp[i+1] = uint32(fs), uint32(e)
		}
		if col+1 != ncols {
			return &errMalformed{n, fmt.Sprintf("record has %d fields, want %d", col+1, ncols)}
		}
		if !skipFirst {
			rows++
		}
	}
	t.rows = rows
	t.total += rows
	if t.flush != nil && rows > 0 {
		if err := t.flush(rows); err != nil {
			return err
		}
		t.rows = 0
	}
	return nil
}

// recordDelims records the fields ended by the delimiters whose positions
// relative to base are the bits of d: the current field starts at fs and is
// the col-th of row r2/2 of sp (see csvTokenizer.off). It returns the
// following field's column and start. (A leaf function: its loop keeps
// everything in registers.)
func recordDelims(sp []uint32, off []int, d uint64, base, col, fs, r2 int) (int, int) {
	last := len(off) - 1
	for d != 0 {
		p := base + bits.TrailingZeros64(d)
		d &= d - 1
		i := off[min(col, last)] + r2
		sp[i], sp[i+1] = uint32(fs), uint32(p)
		col++
		fs = p + 1
	}
	return col, fs
}

// flushRecorded hands rows recorded rows to flush and moves the current
// record's first fields fields (recorded at index rows) to index 0.
func (t *csvTokenizer) flushRecorded(rows, fields int) error {
	t.rows = rows
	if err := t.flush(rows); err != nil {
		return err
	}
	t.rows = 0
	for c := 0; c < fields && c < t.ncols; c++ {
		if s := t.slot[c]; s >= 0 {
			col := t.cols[s]
			col[0], col[1] = col[2*rows], col[2*rows+1]
		}
	}
	return nil
}

// quotedEnd finds the closing quote of the quoted field opening at b[p]
// and checks what follows it. esc reports whether the content needs
// unescaping ("" or "\r\n" inside).
func quotedEnd(b []byte, p int, delim byte) (q int, esc bool, err error) {
	n := len(b)
	j := p + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false, &errMalformed{p, "unterminated quoted field"}
		}
		q = j + k
		if q+1 < n && b[q+1] == '"' {
			esc = true
			j = q + 2
			continue
		}
		break
	}
	if !esc && bytes.IndexByte(b[p+1:q], '\r') >= 0 {
		esc = true
	}
	if a := q + 1; a < n {
		if c := b[a]; c != delim && c != '\n' && !(c == '\r' && (a+1 == n || b[a+1] == '\n')) {
			return 0, false, &errMalformed{a, "extraneous or missing \" in quoted field"}
		}
	}
	return q, esc, nil
}

// structMaskGo is the portable structMask.
func structMaskGo(b []byte, pat *[48]byte, out, nq, hi []uint64) {
	dm := uint64(pat[0]) * lo8
	const nlm = uint64('\n') * lo8
	const qm = uint64('"') * lo8
	for k := 0; k+64 <= len(b); k += 64 {
		var m, q, h uint64
		for j := 0; j < 64; j += 8 {
			x := load64(b, k+j)
			zq := exactZero(x^nlm) | exactZero(x^qm)
			z := exactZero(x^dm) | zq
			m |= ((z >> 7) * 0x0102040810204080 >> 56) << uint(j)
			q |= ((zq >> 7) * 0x0102040810204080 >> 56) << uint(j)
			h |= ((x & hi8 >> 7) * 0x0102040810204080 >> 56) << uint(j)
		}
		out[k>>6] = m
		nq[k>>6] = q
		hi[k>>6] = h
	}
}

// exactZero has the high bit set in exactly the zero bytes of x.
func exactZero(x uint64) uint64 { return infer.ExactZero(x) }

// field returns the bytes of a recorded field; escaped quoted content is
// unescaped into *scratch.
func field(b []byte, start, end uint32, scratch *[]byte) []byte {
	if start&spanQuoted == 0 {
		return b[start:end]
	}
	s := b[start&spanMask : end&spanMask]
	if end&spanEscaped == 0 {
		return s
	}
	return unescape(s, (*scratch)[:0], scratch)
}

// unescape appends s to dst with "" turned into " and "\r\n" into "\n",
// stores the result in *keep and returns it.
func unescape(s, dst []byte, keep *[]byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' && i+1 < len(s) && s[i+1] == '"' {
			i++
		} else if c == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			continue
		}
		dst = append(dst, c)
	}
	*keep = dst
	return dst
}

// unsafeString views b as a string without copying; b must not change
// while the string is in use.
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// lastBoundary returns the offset just past the last record terminator
// ('\n' outside quoted fields) in b, which starts at a record boundary, or
// 0 when b holds no complete record. Quote parity decides what is quoted:
// in valid RFC 4180 text every '"' opens, closes or doubles inside a quoted
// field, so an even count before a newline means it ends a record. (For
// malformed text the split may be wrong, but the tokenizer still fails on
// the first malformation, which lies in the chunk that really holds it.)
func lastBoundary(b []byte) int {
	last := -1
	inQ := false
	i := 0
	for {
		q := bytes.IndexByte(b[i:], '"')
		seg := b[i:]
		if q >= 0 {
			seg = b[i : i+q]
		}
		if !inQ {
			if k := bytes.LastIndexByte(seg, '\n'); k >= 0 {
				last = i + k
			}
		}
		if q < 0 {
			break
		}
		inQ = !inQ
		i += q + 1
	}
	return last + 1
}
