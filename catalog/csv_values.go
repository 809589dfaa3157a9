package catalog

import (
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// colKind is the inferred logical type of a CSV column. The zero value means
// "no non-null value seen yet".
type colKind uint8

const (
	kindNull    colKind = iota // only empty cells so far
	kindInt                    // int64
	kindFloat                  // float64
	kindBool                   // true/false, case-insensitive
	kindDate                   // YYYY-MM-DD -> date32
	kindTSZoned                // ISO-8601 with Z or ±hh:mm -> timestamp[ms, UTC]
	kindTSNaive                // ISO-8601 without zone -> timestamp[ms]
	kindString                 // anything else, or a mix
)

// arrowType is the Arrow type a column of this kind is exposed as.
// A column that never saw a non-null value is a string column.
func (k colKind) arrowType() arrow.DataType {
	switch k {
	case kindInt:
		return arrow.PrimitiveTypes.Int64
	case kindFloat:
		return arrow.PrimitiveTypes.Float64
	case kindBool:
		return arrow.FixedWidthTypes.Boolean
	case kindDate:
		return arrow.FixedWidthTypes.Date32
	case kindTSZoned:
		return &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	case kindTSNaive:
		return &arrow.TimestampType{Unit: arrow.Millisecond}
	default:
		return arrow.BinaryTypes.String
	}
}

// nativeRead reports whether arrow-go's CSV reader parses this kind itself
// with exactly the rules used by inference (strconv.ParseInt/ParseFloat and
// time.Parse("2006-01-02")). Other kinds are read as strings and converted by
// convertColumn, so inference and reading can never disagree.
func (k colKind) nativeRead() bool {
	return k == kindInt || k == kindFloat || k == kindDate
}

// classify returns the narrowest kind a single non-empty cell fits.
func classify(s string) colKind {
	switch {
	case isInt(s):
		return kindInt
	case isFloat(s):
		return kindFloat
	case isBool(s):
		return kindBool
	case isDate(s):
		return kindDate
	}
	if _, zoned, ok := parseTimestamp(s); ok {
		if zoned {
			return kindTSZoned
		}
		return kindTSNaive
	}
	return kindString
}

// widen folds one more non-empty cell into a column's kind: int widens to
// float, every other disagreement makes the column a string column.
func widen(cur colKind, s string) colKind {
	switch cur {
	case kindString:
		return kindString
	case kindNull:
		return classify(s)
	case kindInt:
		if isInt(s) {
			return kindInt
		}
		if isFloat(s) {
			return kindFloat
		}
	case kindFloat:
		if isFloat(s) {
			return kindFloat
		}
	case kindBool:
		if isBool(s) {
			return kindBool
		}
	case kindDate:
		if isDate(s) {
			return kindDate
		}
	case kindTSZoned, kindTSNaive:
		if _, zoned, ok := parseTimestamp(s); ok && zoned == (cur == kindTSZoned) {
			return cur
		}
	}
	return kindString
}

func isInt(s string) bool {
	if len(s) == 0 || len(s) > 20 {
		return false
	}
	if c := s[0]; !(c >= '0' && c <= '9') && c != '-' && c != '+' {
		return false
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// isFloat accepts what strconv.ParseFloat accepts (including NaN and Inf in
// any case), except hexadecimal floats and out-of-range values.
func isFloat(s string) bool {
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

// parseBool parses a bool cell (true/false, case-insensitive).
func parseBool(s string) (v, ok bool) {
	switch {
	case strings.EqualFold(s, "true"):
		return true, true
	case strings.EqualFold(s, "false"):
		return false, true
	}
	return false, false
}

// isDate reports whether s is a valid calendar date written YYYY-MM-DD.
// arrow-go parses date32 cells with time.Parse("2006-01-02"), which accepts
// every string this accepts.
func isDate(s string) bool {
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

// parseTimestamp parses YYYY-MM-DD(T| )HH:MM:SS[.f{1,9}][Z|±hh:mm] and returns
// milliseconds since the Unix epoch (fractions below a millisecond are
// truncated), and whether a zone was present. Values with a zone are
// converted to UTC; values without one are taken as wall-clock time
// (Arrow's "naive" timestamp semantics).
func parseTimestamp(s string) (ms int64, zoned, ok bool) {
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
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':' && digits(rest[1:3]) && digits(rest[4:6]):
		oh, om := atoiFixed(rest[1:3]), atoiFixed(rest[4:6])
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
	if day > daysIn(month, year) {
		return 0, false, false // e.g. February 30th
	}
	secs := daysFromCivil(year, month, day)*86400 + int64(hour*3600+minute*60+sec) - int64(offset)
	return secs*1000 + int64(nanos/1_000_000), zoned, true
}
