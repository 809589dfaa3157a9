package engine

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// strKernel ANDs a string predicate's outcome for vals into mask (null
// handling is the caller's). Kernels read string headers that alias the
// Arrow offsets and data buffers; nothing is copied except, for
// case-insensitive ops, the folded value (into a reused buffer).
type strKernel func(vals []string, mask []bool)

// appendFold appends the case-fold canonical form of s to dst: every rune
// is replaced by the smallest rune of its Unicode simple-folding orbit
// (unicode.SimpleFold), so two strings are equal under simple folding (as
// strings.EqualFold says, for valid UTF-8) exactly when their folded forms
// are byte-equal. ASCII letters map to upper case. Invalid UTF-8 bytes are
// kept as is (they match only themselves).
func appendFold(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			dst = append(dst, c)
			i++
			continue
		}
		dst = utf8.AppendRune(dst, foldRune(r))
		i += w
	}
	return dst
}

// foldRune is the smallest rune of r's simple-folding orbit.
func foldRune(r rune) rune {
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < m {
			m = f
		}
	}
	return m
}

// foldString is appendFold into a new string.
func foldString(s string) string { return string(appendFold(nil, s)) }

// stringKernel compiles a string predicate (any op but is_null/is_not_null).
func stringKernel(p planner.Predicate) (strKernel, error) {
	lits, err := operands(p)
	if err != nil {
		return nil, err
	}
	strs := make([]string, len(lits))
	for i, l := range lits {
		if l == nil {
			continue // open range bound
		}
		s, ok := l.Value.(string)
		if !ok {
			return nil, badLiteral(p, l, "a string")
		}
		strs[i] = s
	}
	ci := p.CaseInsensitive
	switch p.Op {
	case planner.OpRegex:
		pat := strs[0]
		if len(pat) > planner.MaxRegexLen {
			return nil, qerr.Invalid(qerr.CodeInvalidFilter, "regex on %q: the pattern is longer than %d characters", p.Col, planner.MaxRegexLen)
		}
		if ci {
			pat = "(?i)" + pat
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, qerr.Invalid(qerr.CodeInvalidFilter, "regex on %q: %v", p.Col, err).
				WithHint("patterns use Go RE2 syntax")
		}
		return func(vals []string, mask []bool) {
			for i, v := range vals {
				if mask[i] && !re.MatchString(v) {
					mask[i] = false
				}
			}
		}, nil
	case planner.OpIn, planner.OpNotIn:
		if ci {
			for i := range strs {
				strs[i] = foldString(strs[i])
			}
			in := inKernel(strs, p.Op == planner.OpNotIn)
			return foldedKernel(func(folded []string, mask []bool) { in(folded, mask) }), nil
		}
		return inKernel(strs, p.Op == planner.OpNotIn), nil
	case planner.OpRange:
		var steps []strKernel
		for i, op := range []planner.Op{planner.OpGte, planner.OpLte} {
			if lits[i] != nil {
				lit := strs[i]
				steps = append(steps, func(vals []string, mask []bool) { cmpLoop(vals, op, lit, mask) })
			}
		}
		return func(vals []string, mask []bool) {
			for _, s := range steps {
				s(vals, mask)
			}
		}, nil
	case planner.OpContains, planner.OpStartsWith, planner.OpEndsWith:
		lit := strs[0]
		match := strings.Contains
		switch p.Op {
		case planner.OpStartsWith:
			match = strings.HasPrefix
		case planner.OpEndsWith:
			match = strings.HasSuffix
		}
		k := func(vals []string, mask []bool) {
			for i, v := range vals {
				if mask[i] && !match(v, lit) {
					mask[i] = false
				}
			}
		}
		if ci {
			lit = foldString(lit)
			return foldedKernel(k), nil
		}
		return k, nil
	}
	lit := strs[0]
	op := p.Op
	if ci { // eq, neq
		lit = foldString(lit)
		return foldedKernel(func(folded []string, mask []bool) { cmpLoop(folded, op, lit, mask) }), nil
	}
	return func(vals []string, mask []bool) { cmpLoop(vals, op, lit, mask) }, nil
}

// foldedKernel runs k on the case-folded values (of the rows still in the
// mask), folding into one reused buffer.
func foldedKernel(k strKernel) strKernel {
	var buf []byte
	var folded []string
	var ends []int
	return func(vals []string, mask []bool) {
		buf = buf[:0]
		if cap(folded) < len(vals) {
			folded, ends = make([]string, len(vals)), make([]int, len(vals))
		}
		folded, ends = folded[:len(vals)], ends[:len(vals)]
		for i, v := range vals {
			if mask[i] {
				buf = appendFold(buf, v)
			}
			ends[i] = len(buf)
		}
		start := 0
		for i := range vals {
			folded[i] = unsafeString(buf[start:ends[i]])
			start = ends[i]
		}
		k(folded, mask)
		clear(folded)
	}
}

// dictEntryCache remembers the predicate outcome per dictionary entry for
// the last dictionary seen (sources usually share one dictionary across
// batches). data is compared by identity; holding it keeps the identity
// from being reused. ok has one extra false entry at index len(dict) that
// out-of-range codes are clamped to; hits counts the passing entries and
// hit is the last one.
type dictEntryCache struct {
	data arrow.ArrayData
	ok   []bool
	hits int
	hit  int32
}

// stringEval adapts a string kernel to plain and dictionary-encoded string
// columns. On plain columns it runs pk (when not nil) on the offsets and
// data, else k on string views. On dictionary columns the kernel runs once
// per dictionary entry (cached across batches sharing the dictionary) and
// rows take their entry's outcome through the codes (a code compare when
// exactly one entry passes); when the dictionary is much larger than the
// batch it runs on the rows' values instead. Null rows are the caller's.
func stringEval(k strKernel, pk *plainKernel) func(arrow.Array, []bool, *scratch) {
	cache := &dictEntryCache{}
	return func(col arrow.Array, mask []bool, sc *scratch) {
		if !isDictStr(col.DataType()) {
			if pk != nil {
				pk.eval(col, mask)
				return
			}
			sc.strs = strViews(col, sc.strs)
			k(sc.strs, mask)
			return
		}
		dict := dictValues(col)
		n := col.Len()
		if cache.data != dict.Data() {
			if dict.Len() > 2*n+256 {
				sc.strs = dictRowViews(col, sc.strs, &sc.codes)
				k(sc.strs, mask)
				return
			}
			nd := dict.Len()
			ok := cache.ok[:0]
			for range nd {
				ok = append(ok, true)
			}
			sc.strs = strViews(dict, sc.strs)
			k(sc.strs, ok)
			cache.hits, cache.hit = 0, -1
			for i, b := range ok {
				if b {
					cache.hits++
					cache.hit = int32(i)
				}
			}
			cache.data, cache.ok = dict.Data(), append(ok, false)
		}
		m := maskBytes(mask)
		if x := dictIndices(col, &sc.codes); x.i16 != nil {
			andCodes(m, x.i16[:len(m)], cache)
		} else {
			andCodes(m, x.i32[:len(m)], cache)
		}
	}
}

// andCodes ANDs the outcome of each row's dictionary entry into m. The
// loops take four rows per iteration: fewer loop branches, and timings
// that depend much less on where the loop lands in the binary.
func andCodes[T codeType](m []uint8, codes []T, c *dictEntryCache) {
	m = m[:len(codes)]
	switch c.hits {
	case 0:
		clear(m)
	case 1:
		t := c.hit // may exceed T's range (unused entries): then no row matches
		i := 0
		for ; i+4 <= len(codes); i += 4 {
			c4, m4 := codes[i:i+4:i+4], m[i:i+4:i+4]
			m4[0] &= isCode(c4[0], t)
			m4[1] &= isCode(c4[1], t)
			m4[2] &= isCode(c4[2], t)
			m4[3] &= isCode(c4[3], t)
		}
		for ; i < len(codes); i++ {
			m[i] &= isCode(codes[i], t)
		}
	default:
		ok := maskBytes(c.ok)
		last := uint32(len(ok) - 1)
		i := 0
		for ; i+4 <= len(codes); i += 4 {
			c4, m4 := codes[i:i+4:i+4], m[i:i+4:i+4]
			m4[0] &= ok[min(uint32(c4[0]), last)]
			m4[1] &= ok[min(uint32(c4[1]), last)]
			m4[2] &= ok[min(uint32(c4[2]), last)]
			m4[3] &= ok[min(uint32(c4[3]), last)]
		}
		for ; i < len(codes); i++ {
			m[i] &= ok[min(uint32(codes[i]), last)]
		}
	}
}

// isCode is 1 when code == t, else 0 (branch-free: the difference's bits,
// zero-extended to 64 bits, minus one borrows into bit 63 only when they
// are all zero).
func isCode[T codeType](code T, t int32) uint8 {
	return uint8((uint64(uint32(int32(code)^t)) - 1) >> 63)
}
