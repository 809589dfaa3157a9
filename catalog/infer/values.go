package infer

import (
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
)

// Kind is the inferred logical type of a CSV column, or a state of
// inference on the way to one. The zero value means "no non-null value seen
// yet". Kinds form a join semilattice (joinKinds): a column's kind is the
// join of the kinds of its non-empty cells (classify), in any order and
// grouping, so chunks of a file can be classified apart and merged.
type Kind uint8

const (
	KindNull    Kind = iota // only empty cells so far
	KindInt                 // int64: canonical integers float64 also holds exactly
	KindFloat               // float64: decimals (a '.', NaN or Inf somewhere), every value printed back as written
	KindBool                // true/false, case-insensitive
	KindDate                // YYYY-MM-DD -> date32
	KindTSZoned             // ISO-8601 with Z or ±hh[:mm] -> timestamp[ms, UTC]
	KindTSNaive             // ISO-8601 without zone -> timestamp[ms]
	KindString              // anything else, or a mix

	// Numeric states that are not plain int or float (see numKind).
	KindIntWide  // int64: canonical integers, some with more digits than float64 holds
	KindNumNoDot // string: numbers without a '.', not all canonical int64 ("1e3", "-0", 2^70); a decimal later makes it float
	KindNumText  // string: numeric text no number type prints back as written ("00501", "+1", 30 digits)

	// Date and timestamp layouts beyond ISO (csv_dates.go).
	KindDateYMD   // YYYY/MM/DD -> date32
	KindDateMDY   // MM/DD/YYYY -> date32
	KindDateDMY   // DD/MM/YYYY -> date32
	KindDateAmbig // string: every value reads both as MM/DD/YYYY and DD/MM/YYYY
	KindDateMonDY // Mon D YYYY ("Jan 1 2000", "January 1, 2000") -> date32
	KindDateDMonY // D Mon YYYY ("1 January 2000", "01-Jan-2000") -> date32
	KindDateYMonD // YYYY-Mon-DD ("2000-Jan-01") -> date32
	KindTSYMD     // YYYY/MM/DD HH:MM[:SS[.f]] -> timestamp[ms]
	KindTSMDY     // MM/DD/YYYY HH:MM[:SS[.f]] -> timestamp[ms]
	KindTSDMY     // DD/MM/YYYY HH:MM[:SS[.f]] -> timestamp[ms]
	KindTSAmbig   // string: every value reads both as MM/DD/YYYY and DD/MM/YYYY
)

// ArrowType is the Arrow type a column of this kind is exposed as.
// A column that never saw a non-null value is a string column.
func (k Kind) ArrowType() arrow.DataType {
	switch k {
	case KindInt, KindIntWide:
		return arrow.PrimitiveTypes.Int64
	case KindFloat:
		return arrow.PrimitiveTypes.Float64
	case KindBool:
		return arrow.FixedWidthTypes.Boolean
	case KindDate, KindDateYMD, KindDateMDY, KindDateDMY, KindDateMonDY, KindDateDMonY, KindDateYMonD:
		return arrow.FixedWidthTypes.Date32
	case KindTSZoned:
		return &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	case KindTSNaive, KindTSYMD, KindTSMDY, KindTSDMY:
		return &arrow.TimestampType{Unit: arrow.Millisecond}
	default:
		return arrow.BinaryTypes.String
	}
}

// Textual reports whether a column of this kind is a string column (its
// cells are kept as written).
func (k Kind) Textual() bool {
	return k.ArrowType().ID() == arrow.STRING
}

// NativeRead reports whether arrow-go's CSV reader parses this kind itself
// with exactly the rules used by inference (strconv.ParseInt/ParseFloat and
// time.Parse("2006-01-02")). Other kinds are read as strings and converted by
// ConvertColumn, so inference and reading can never disagree.
func (k Kind) NativeRead() bool {
	return k == KindInt || k == KindIntWide || k == KindFloat || k == KindDate
}

// Classify returns the kind of a single non-empty cell.
func Classify(s string) Kind {
	if k := numKind(s); k != KindNull {
		return k
	}
	switch {
	case isBool(s):
		return KindBool
	case IsDate(s):
		return KindDate
	}
	if _, zoned, ok := ParseTimestamp(s); ok {
		if zoned {
			return KindTSZoned
		}
		return KindTSNaive
	}
	return dateKind(s)
}

// Widen folds one more non-empty cell into a column's kind.
func Widen(cur Kind, s string) Kind {
	switch {
	case cur == KindString:
		return KindString
	case Keeps(cur, s):
		return cur
	}
	return JoinKinds(cur, Classify(s))
}

// Keeps reports, for the common cells of the common kinds only, that
// Classify(s) is k, without the parsing Classify does to tell kinds apart:
// a plain integer for KindInt, a plain decimal for KindFloat, an ISO date
// for KindDate, an ISO timestamp (with or without a zone) for KindTSZoned
// and KindTSNaive. False says nothing: classify s.
func Keeps(k Kind, s string) bool {
	switch k {
	case KindInt:
		return plainInt(s)
	case KindFloat:
		return plainDecimal(s)
	case KindDate:
		return IsDate(s) // not a number, not a bool
	case KindTSNaive, KindTSZoned:
		_, zoned, ok := ParseTimestamp(s) // 19 bytes or more, with ':': not a number, bool or date
		return ok && zoned == (k == KindTSZoned)
	}
	return false
}

// plainInt reports whether s is "0" or an optional '-', a digit 1-9 and
// digits, at most 15 in all: a canonical int64 float64 holds exactly, so
// Classify(s) is KindInt.
func plainInt(s string) bool {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 || !digits(d) {
		return false
	}
	return d[0] != '0' || s == "0"
}

// plainDecimal reports whether s is an optional '-', an integer part ("0"
// or a digit 1-9 and digits), '.' and digits, at most 15 digits in all,
// not zero: a decimal of at most 15 significant digits in float64's normal
// range, which the shortest printing of its float64 gives back, so
// Classify(s) is KindFloat.
func plainDecimal(s string) bool {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) < 3 || len(d) > 16 || d[0] == '0' && d[1] != '.' {
		return false
	}
	dot, nonzero := -1, false
	for i := 0; i < len(d); i++ {
		switch c := d[i]; {
		case c == '.' && dot < 0:
			dot = i
		case c >= '1' && c <= '9':
			nonzero = true
		case c != '0':
			return false
		}
	}
	return dot > 0 && dot < len(d)-1 && nonzero
}

// NumBits describes the numeric kinds for joinKinds: every cell is a
// canonical int64 (numI), every cell prints back as written as a float64
// (numF), some cell is a decimal (numD: a '.', NaN or Inf).
const (
	numI = 1 << iota
	numF
	numD
	numAny // a numeric kind
)

func (k Kind) NumBits() uint8 {
	switch k {
	case KindInt:
		return numAny | numI | numF
	case KindIntWide:
		return numAny | numI
	case KindNumNoDot:
		return numAny | numF
	case KindFloat:
		return numAny | numF | numD
	case KindNumText:
		return numAny
	}
	return 0
}

// JoinKinds is the kind of a column made of a part of kind a and a part of
// kind b: int and float meet at float, an integer float64 cannot hold
// exactly next to a decimal makes numeric text, an ambiguous day/month
// date meets either order at that order; every other disagreement is a
// string column.
func JoinKinds(a, b Kind) Kind {
	switch {
	case a == b:
		return a
	case a == KindNull:
		return b
	case b == KindNull:
		return a
	case a == KindString || b == KindString:
		return KindString
	}
	if x, y := a.NumBits(), b.NumBits(); x != 0 && y != 0 {
		j := x & y & (numI | numF)
		switch {
		case j == numI|numF:
			return KindInt
		case j == numI:
			return KindIntWide
		case j == numF && (x|y)&numD != 0:
			return KindFloat
		case j == numF:
			return KindNumNoDot
		}
		return KindNumText
	}
	switch {
	case a == KindDateAmbig && (b == KindDateMDY || b == KindDateDMY):
		return b
	case b == KindDateAmbig && (a == KindDateMDY || a == KindDateDMY):
		return a
	case a == KindTSAmbig && (b == KindTSMDY || b == KindTSDMY):
		return b
	case b == KindTSAmbig && (a == KindTSMDY || a == KindTSDMY):
		return a
	}
	return KindString
}

// numKind classifies a cell by how faithfully a number type keeps it: the
// rule is that a value stays numeric only when printing the number back
// reproduces the text, up to plain float formatting (1.50 is 1.5, 1e3 is
// 1000 in a float column). It returns kindNull for a cell that is not a
// number (what strconv.ParseFloat rejects, hexadecimal, '_', out of range).
//
//   - kindInt: -?[1-9][0-9]* or 0 within int64, with at most 15 digits or
//     otherwise exact as a float64.
//   - kindIntWide: such an integer with more digits than float64 holds.
//   - kindFloat: a decimal with a '.', or NaN/Inf, that prints back as written.
//   - kindNumNoDot: "-0", exponent forms without '.' ("1e3") and integers
//     beyond int64 that float64 holds exactly: floats, but not integers.
//   - kindNumText: a leading '+', leading zeros ("00501", "01.5"), or more
//     significant digits than float64 keeps.
func numKind(s string) Kind {
	if !IsFloat(s) {
		return KindNull
	}
	d := s
	if d[0] == '-' || d[0] == '+' {
		d = d[1:]
	}
	if c := d[0]; c == 'i' || c == 'I' || c == 'n' || c == 'N' {
		return KindFloat // NaN, Inf, Infinity
	}
	if s[0] == '+' || (len(d) > 1 && d[0] == '0' && d[1] >= '0' && d[1] <= '9') {
		return KindNumText
	}
	if digits(d) {
		if d == "0" && s[0] == '-' {
			return KindNumNoDot
		}
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			if len(d) <= 15 || FloatExact(s) {
				return KindInt
			}
			return KindIntWide
		}
	}
	switch {
	case !FloatExact(s):
		return KindNumText
	case strings.IndexByte(s, '.') >= 0:
		return KindFloat
	}
	return KindNumNoDot
}

// FloatExact reports whether the float64 nearest to the decimal s (which
// strconv.ParseFloat accepts, not NaN or Inf) prints back, shortest form,
// as the same decimal number: same significant digits and magnitude.
func FloatExact(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return false
	}
	var b1 [32]byte
	var b2, b3 [64]byte
	back := strconv.AppendFloat(b1[:0], f, 'e', -1, 64)
	m1, e1 := normDecimal(s, b2[:0])
	m2, e2 := normDecimal(unsafe.String(unsafe.SliceData(back), len(back)), b3[:0])
	if len(m1) == 0 || len(m2) == 0 {
		return len(m1) == len(m2) // zero (the sign came along)
	}
	if e1 == e2 && string(m1) == string(m2) {
		return true
	}
	if len(m1) <= 17 || digits(strings.TrimPrefix(s, "-")) {
		return false // plain integers are written as integers, not printed floats
	}
	// More digits than the shortest form: the text is still a printing of
	// this float when it is the float's exact binary value correctly rounded
	// to as many significant digits as were written (numpy's "%.18e",
	// printf's "%.17g" and the like). A decimal that float64 cannot hold
	// rounds to other digits, so it stays text.
	var b4, b5 [72]byte
	long := strconv.AppendFloat(b4[:0], f, 'e', len(m1)-1, 64)
	m3, e3 := normDecimal(unsafe.String(unsafe.SliceData(long), len(long)), b5[:0])
	return e1 == e3 && string(m1) == string(m3)
}

// normDecimal returns the significant digits of a decimal number (no
// leading or trailing zeros; empty for zero) and its decimal exponent (the
// number is 0.<digits> × 10^exp). s is [+-]?digits[.digits][e[+-]digits].
func normDecimal(s string, buf []byte) ([]byte, int) {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	point := -1
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			point = len(buf)
		} else if c >= '0' && c <= '9' {
			buf = append(buf, c)
		} else {
			break
		}
	}
	if point < 0 {
		point = len(buf)
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			neg = s[i] == '-'
			i++
		}
		for ; i < len(s); i++ {
			if exp < 1<<20 {
				exp = exp*10 + int(s[i]-'0')
			}
		}
		if neg {
			exp = -exp
		}
	}
	for len(buf) > 0 && buf[0] == '0' {
		buf = buf[1:]
		point--
	}
	for len(buf) > 0 && buf[len(buf)-1] == '0' {
		buf = buf[:len(buf)-1]
	}
	return buf, point + exp
}

func IsInt(s string) bool {
	if len(s) == 0 || len(s) > 20 {
		return false
	}
	if c := s[0]; !(c >= '0' && c <= '9') && c != '-' && c != '+' {
		return false
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// IsFloat accepts what strconv.ParseFloat accepts (including NaN and Inf in
// any case), except hexadecimal floats and out-of-range values.
func IsFloat(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	switch c := s[0]; {
	case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'i', c == 'I', c == 'n', c == 'N':
	default:
		return false
	}
	if strings.ContainsAny(s, "xX_") {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func isBool(s string) bool {
	return strings.EqualFold(s, "true") || strings.EqualFold(s, "false")
}

// ParseBool parses a bool cell (true/false, case-insensitive).
func ParseBool(s string) (v, ok bool) {
	switch {
	case strings.EqualFold(s, "true"):
		return true, true
	case strings.EqualFold(s, "false"):
		return false, true
	}
	return false, false
}

// IsDate reports whether s is a valid calendar date written YYYY-MM-DD.
// arrow-go parses date32 cells with time.Parse("2006-01-02"), which accepts
// every string this accepts.
func IsDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !digits(s[0:4]) || !digits(s[5:7]) || !digits(s[8:10]) {
		return false
	}
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

func atoiFixed(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// ParseTimestamp parses YYYY-MM-DD(T| )HH:MM:SS[.f{1,9}][Z|±hh:mm|±hhmm|±hh] and returns
// milliseconds since the Unix epoch (fractions below a millisecond are
// truncated), and whether a zone was present. Values with a zone are
// converted to UTC; values without one are taken as wall-clock time
// (Arrow's "naive" timestamp semantics).
func ParseTimestamp(s string) (ms int64, zoned, ok bool) {
	if len(s) < 19 || len(s) > 35 {
		return 0, false, false
	}
	if s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':' {
		return 0, false, false
	}
	if !digits(s[0:4]) || !digits(s[5:7]) || !digits(s[8:10]) || !digits(s[11:13]) || !digits(s[14:16]) || !digits(s[17:19]) {
		return 0, false, false
	}
	year, month, day := atoiFixed(s[0:4]), atoiFixed(s[5:7]), atoiFixed(s[8:10])
	hour, minute, sec := atoiFixed(s[11:13]), atoiFixed(s[14:16]), atoiFixed(s[17:19])
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return 0, false, false
	}
	rest := s[19:]
	nanos := 0
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		frac := rest[1:n]
		if len(frac) == 0 || len(frac) > 9 {
			return 0, false, false
		}
		nanos = atoiFixed(frac)
		for i := len(frac); i < 9; i++ {
			nanos *= 10
		}
		rest = rest[n:]
	}
	offset := 0
	switch {
	case rest == "":
	case rest == "Z":
		zoned = true
	case rest[0] == '+' || rest[0] == '-':
		// ±hh:mm, ±hhmm or ±hh (how DuckDB and PostgreSQL print a whole-hour offset: "+00").
		hm := rest[1:]
		if len(hm) == 5 && hm[2] == ':' {
			hm = hm[:2] + hm[3:]
		}
		if len(hm) == 2 {
			hm += "00"
		}
		if len(hm) != 4 || !digits(hm) {
			return 0, false, false
		}
		oh, om := atoiFixed(hm[:2]), atoiFixed(hm[2:])
		if oh > 23 || om > 59 {
			return 0, false, false
		}
		offset = oh*3600 + om*60
		if rest[0] == '-' {
			offset = -offset
		}
		zoned = true
	default:
		return 0, false, false
	}
	if day > DaysIn(month, year) {
		return 0, false, false // e.g. February 30th
	}
	secs := daysFromCivil(year, month, day)*86400 + int64(hour*3600+minute*60+sec) - int64(offset)
	return secs*1000 + int64(nanos/1_000_000), zoned, true
}
