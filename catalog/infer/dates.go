package infer

import "strings"

// Dates and timestamps in the common non-ISO layouts (ISO-8601 is
// csv_values.go's isDate and parseTimestamp). Each layout is a colKind;
// a column has one layout. Day and month numbers may have one or two
// digits, years have four; month names are English, full or three-letter,
// any case. Times are H:MM, H:MM:SS or H:MM:SS.f (up to 9 fraction digits,
// truncated to milliseconds) and carry no zone: such timestamps are naive.
//
// Numeric day/month dates (A/B/YYYY): a cell that is a valid date both as
// MM/DD/YYYY and as DD/MM/YYYY is ambiguous (kindDateAmbig); one valid in a
// single order has that order's kind. A column is MDY or DMY when at least
// one cell settles the order and none contradicts it, and stays text (with
// a hint) when every cell is ambiguous.

// dateKind returns the layout kind of a cell that is a non-ISO date or
// timestamp, or kindString.
func dateKind(s string) Kind {
	if len(s) < 8 || len(s) > 40 {
		return KindString
	}
	if c := s[0]; c < '0' || c > '9' {
		if _, ok := parseMonDY(s); ok {
			return KindDateMonDY
		}
		return KindString
	}
	if _, ok := parseDMonY(s); ok {
		return KindDateDMonY
	}
	if _, ok := parseYMonD(s); ok {
		return KindDateYMonD
	}
	date, clock, hasTime := strings.Cut(s, " ")
	if hasTime {
		if _, ok := parseClock(clock); !ok {
			return KindString
		}
	}
	k := KindString
	if _, ok := parseYMDSlash(date); ok {
		k = KindDateYMD
	} else {
		_, mdy := parseSlashDate(date, false)
		_, dmy := parseSlashDate(date, true)
		switch {
		case mdy && dmy:
			k = KindDateAmbig
		case mdy:
			k = KindDateMDY
		case dmy:
			k = KindDateDMY
		}
	}
	if hasTime {
		switch k {
		case KindDateYMD:
			k = KindTSYMD
		case KindDateMDY:
			k = KindTSMDY
		case KindDateDMY:
			k = KindTSDMY
		case KindDateAmbig:
			k = KindTSAmbig
		}
	}
	return k
}

// IsDateLike reports whether k is a date or timestamp kind (ISO or not,
// ambiguous included).
func (k Kind) IsDateLike() bool {
	switch k {
	case KindDate, KindTSZoned, KindTSNaive, KindDateYMD, KindDateMDY, KindDateDMY, KindDateAmbig,
		KindDateMonDY, KindDateDMonY, KindDateYMonD, KindTSYMD, KindTSMDY, KindTSDMY, KindTSAmbig:
		return true
	}
	return false
}

// layout names the date or timestamp layout of a kind, as get_schema shows
// it; "" for other kinds.
func (k Kind) layout() string {
	switch k {
	case KindDate:
		return "YYYY-MM-DD"
	case KindTSNaive:
		return "YYYY-MM-DD HH:MM:SS[.f] (T or space)"
	case KindTSZoned:
		return "YYYY-MM-DD HH:MM:SS[.f]Z|±hh[:mm] (T or space; converted to UTC)"
	case KindDateYMD:
		return "YYYY/MM/DD"
	case KindDateMDY:
		return "MM/DD/YYYY"
	case KindDateDMY:
		return "DD/MM/YYYY"
	case KindDateAmbig:
		return "MM/DD/YYYY or DD/MM/YYYY"
	case KindDateMonDY:
		return "Mon D YYYY"
	case KindDateDMonY:
		return "D Mon YYYY"
	case KindDateYMonD:
		return "YYYY-Mon-DD"
	case KindTSYMD:
		return "YYYY/MM/DD HH:MM[:SS[.f]]"
	case KindTSMDY:
		return "MM/DD/YYYY HH:MM[:SS[.f]]"
	case KindTSDMY:
		return "DD/MM/YYYY HH:MM[:SS[.f]]"
	case KindTSAmbig:
		return "MM/DD/YYYY or DD/MM/YYYY HH:MM[:SS[.f]]"
	}
	return ""
}

// ParseDateKind parses a cell of a non-ISO date kind into days since the
// epoch. It accepts exactly the cells whose kind joins k to k.
func ParseDateKind(k Kind, s string) (int32, bool) {
	var days int64
	ok := false
	switch k {
	case KindDateYMD:
		days, ok = parseYMDSlash(s)
	case KindDateMDY:
		days, ok = parseSlashDate(s, false)
	case KindDateDMY:
		days, ok = parseSlashDate(s, true)
	case KindDateMonDY:
		days, ok = parseMonDY(s)
	case KindDateDMonY:
		days, ok = parseDMonY(s)
	case KindDateYMonD:
		days, ok = parseYMonD(s)
	}
	return int32(days), ok
}

// ParseTSKind parses a cell of a non-ISO timestamp kind into milliseconds
// since the epoch (naive: wall-clock time). It accepts exactly the cells
// whose kind joins k to k.
func ParseTSKind(k Kind, s string) (int64, bool) {
	date, clock, ok := strings.Cut(s, " ")
	if !ok {
		return 0, false
	}
	ms, ok := parseClock(clock)
	if !ok {
		return 0, false
	}
	var dk Kind
	switch k {
	case KindTSYMD:
		dk = KindDateYMD
	case KindTSMDY:
		dk = KindDateMDY
	case KindTSDMY:
		dk = KindDateDMY
	default:
		return 0, false
	}
	days, ok := ParseDateKind(dk, date)
	return int64(days)*86_400_000 + ms, ok
}

// num12 parses one or two digits at the start of s; n is how many.
func num12(s string) (v, n int) {
	if len(s) == 0 || s[0] < '0' || s[0] > '9' {
		return 0, 0
	}
	v, n = int(s[0]-'0'), 1
	if len(s) > 1 && s[1] >= '0' && s[1] <= '9' {
		v, n = v*10+int(s[1]-'0'), 2
	}
	return v, n
}

// civil returns the epoch day of y-m-d when it is a valid date.
func civil(y, m, d int) (int64, bool) {
	if m < 1 || m > 12 || d < 1 || d > DaysIn(m, y) {
		return 0, false
	}
	return EpochDays(y, m, d), true
}

// year4 parses exactly four digits.
func year4(s string) (int, bool) {
	if len(s) != 4 || !digits(s) {
		return 0, false
	}
	return atoiFixed(s), true
}

// parseYMDSlash parses YYYY/M/D (month and day of one or two digits).
func parseYMDSlash(s string) (int64, bool) {
	if len(s) < 8 || s[4] != '/' {
		return 0, false
	}
	y, ok := year4(s[:4])
	if !ok {
		return 0, false
	}
	m, n := num12(s[5:])
	if n == 0 || 5+n >= len(s) || s[5+n] != '/' {
		return 0, false
	}
	rest := s[6+n:]
	d, n2 := num12(rest)
	if n2 == 0 || n2 != len(rest) {
		return 0, false
	}
	return civil(y, m, d)
}

// parseSlashDate parses A/B/YYYY as month/day (dayFirst false) or
// day/month (dayFirst true).
func parseSlashDate(s string, dayFirst bool) (int64, bool) {
	a, n := num12(s)
	if n == 0 || n >= len(s) || s[n] != '/' {
		return 0, false
	}
	rest := s[n+1:]
	b, n2 := num12(rest)
	if n2 == 0 || n2 >= len(rest) || rest[n2] != '/' {
		return 0, false
	}
	y, ok := year4(rest[n2+1:])
	if !ok {
		return 0, false
	}
	if dayFirst {
		a, b = b, a
	}
	return civil(y, a, b)
}

// parseClock parses H:MM, H:MM:SS or H:MM:SS.f into milliseconds of the day.
func parseClock(s string) (int64, bool) {
	h, n := num12(s)
	if n == 0 || n+3 > len(s) || s[n] != ':' {
		return 0, false
	}
	s = s[n+1:]
	if len(s) < 2 || !digits(s[:2]) {
		return 0, false
	}
	mi, sec, nanos := atoiFixed(s[:2]), 0, 0
	s = s[2:]
	if len(s) > 0 {
		if len(s) < 3 || s[0] != ':' || !digits(s[1:3]) {
			return 0, false
		}
		sec = atoiFixed(s[1:3])
		s = s[3:]
		if len(s) > 0 {
			frac := s[1:]
			if s[0] != '.' || len(frac) == 0 || len(frac) > 9 || !digits(frac) {
				return 0, false
			}
			nanos = atoiFixed(frac)
			for i := len(frac); i < 9; i++ {
				nanos *= 10
			}
		}
	}
	if h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	return int64(h*3600+mi*60+sec)*1000 + int64(nanos/1_000_000), true
}

var MonthNames = [...]string{"january", "february", "march", "april", "may", "june",
	"july", "august", "september", "october", "november", "december"}

// monthPrefix parses an English month name (full or its first three
// letters, any case) at the start of s; n is its length.
func monthPrefix(s string) (m, n int) {
	if len(s) < 3 {
		return 0, 0
	}
	for i, name := range MonthNames {
		if !strings.EqualFold(s[:3], name[:3]) {
			continue
		}
		if len(s) >= len(name) && strings.EqualFold(s[:len(name)], name) {
			return i + 1, len(name)
		}
		return i + 1, 3
	}
	return 0, 0
}

// parseMonDY parses "Mon D YYYY" and "Mon D, YYYY" (full or short month).
func parseMonDY(s string) (int64, bool) {
	m, n := monthPrefix(s)
	if n == 0 || n >= len(s) || s[n] != ' ' {
		return 0, false
	}
	s = s[n+1:]
	d, n := num12(s)
	if n == 0 {
		return 0, false
	}
	s = s[n:]
	s = strings.TrimPrefix(s, ",")
	if len(s) != 5 || s[0] != ' ' {
		return 0, false
	}
	y, ok := year4(s[1:])
	if !ok {
		return 0, false
	}
	return civil(y, m, d)
}

// parseDMonY parses "D Mon YYYY" and "D-Mon-YYYY" (full or short month).
func parseDMonY(s string) (int64, bool) {
	d, n := num12(s)
	if n == 0 || n >= len(s) || (s[n] != ' ' && s[n] != '-') {
		return 0, false
	}
	sep := s[n]
	s = s[n+1:]
	m, n := monthPrefix(s)
	if n == 0 || len(s) != n+5 || s[n] != sep {
		return 0, false
	}
	y, ok := year4(s[n+1:])
	if !ok {
		return 0, false
	}
	return civil(y, m, d)
}

// parseYMonD parses "YYYY-Mon-DD" (full or short month, day of one or two digits).
func parseYMonD(s string) (int64, bool) {
	if len(s) < 10 || s[4] != '-' {
		return 0, false
	}
	y, ok := year4(s[:4])
	if !ok {
		return 0, false
	}
	s = s[5:]
	m, n := monthPrefix(s)
	if n == 0 || n >= len(s) || s[n] != '-' {
		return 0, false
	}
	s = s[n+1:]
	d, n := num12(s)
	if n == 0 || n != len(s) {
		return 0, false
	}
	return civil(y, m, d)
}
