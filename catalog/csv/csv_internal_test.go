package csv

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/infer"
)

func TestSniffDelimiter(t *testing.T) {
	tests := []struct {
		name      string
		sample    string
		truncated bool
		def, want rune
	}{
		{"comma", "a,b,c\n1,2,3\n", false, ',', ','},
		{"semicolon with decimal commas", "a;b\n1,5;2,5\n", false, ',', ';'},
		{"tab in csv", "a\tb\n1\t2\n", false, ',', '\t'},
		{"pipe", "a|b|c\n1|2|3\n", false, ',', '|'},
		{"tsv keeps tab when it fits", "a\tb,c,d\n1\tx,y,z\n", false, '\t', '\t'},
		{"tsv without tabs sniffs comma", "a,b\n1,2\n", false, '\t', ','},
		{"single column keeps default", "a\n1\n", false, ',', ','},
		{"quoted delimiters do not count", "a,b\n\"x;y;z\",1\n\"p;q;r\",2\n", false, ',', ','},
		{"inconsistent comma", "name;note\nx;a,b\ny;c\n", false, ',', ';'},
		{"cut-off last line ignored", "a;b\n1;2\n3;4\n5", true, ',', ';'},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sniffDelimiter([]byte(tc.sample), tc.truncated, tc.def); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseTimestamp(t *testing.T) {
	ms := func(s string) int64 {
		tt, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tt.UnixMilli()
	}
	tests := []struct {
		in    string
		ok    bool
		zoned bool
		want  string // RFC 3339 instant
	}{
		{"2024-03-01T12:30:45", true, false, "2024-03-01T12:30:45Z"},
		{"2024-03-01 12:30:45", true, false, "2024-03-01T12:30:45Z"},
		{"2024-03-01T12:30:45Z", true, true, "2024-03-01T12:30:45Z"},
		{"2024-03-01T12:30:45.1Z", true, true, "2024-03-01T12:30:45.1Z"},
		{"2024-03-01T12:30:45.123456789+04:00", true, true, "2024-03-01T08:30:45.123Z"},
		{"1969-12-31T23:59:59.999", true, false, "1969-12-31T23:59:59.999Z"},
		{"2024-03-01T12:30:45-00:30", true, true, "2024-03-01T13:00:45Z"},
		{"2024-02-30T00:00:00", false, false, ""},
		{"2024-03-01T24:00:00", false, false, ""},
		{"2024-03-01T12:30", false, false, ""},
		{"2024-03-01", false, false, ""},
		{"2024-03-01T12:30:45.", false, false, ""},
		{"2024-03-01T12:30:45.1234567890", false, false, ""},
		{"2024-03-01T12:30:45+0400", true, true, "2024-03-01T08:30:45Z"},
		{"2024-01-31 09:00:00+00", true, true, "2024-01-31T09:00:00Z"}, // DuckDB's TIMESTAMPTZ text
		{"2024-01-31 09:00:00.5-09", true, true, "2024-01-31T18:00:00.5Z"},
		{"2024-01-31 09:00:00+4", false, false, ""},
		{"2024-01-31 09:00:00+040", false, false, ""},
		{"2024-01-31 09:00:00+24", false, false, ""},
		{"2024-01-31 09:00:00+04:0", false, false, ""},
		{"2024-01-31 09:00:00+04:60", false, false, ""},
		{"2024-01-31 09:00:00+", false, false, ""},
		{"2024-03-01T12:30:45 Z", false, false, ""},
		{"2024-03-01X12:30:45", false, false, ""},
		{"+024-03-01T12:30:45", false, false, ""},
	}
	for _, tc := range tests {
		got, zoned, ok := infer.ParseTimestamp(tc.in)
		if ok != tc.ok || zoned != tc.zoned {
			t.Errorf("%q: ok %v zoned %v, want %v %v", tc.in, ok, zoned, tc.ok, tc.zoned)
			continue
		}
		if ok && got != ms(tc.want) {
			t.Errorf("%q: %d, want %d", tc.in, got, ms(tc.want))
		}
	}
}

func TestClassifyAndWiden(t *testing.T) {
	tests := []struct {
		cells []string
		want  infer.Kind
	}{
		{[]string{"1", "-2", "3"}, infer.KindInt},
		{[]string{"1", "-2", "+3"}, infer.KindNumText},
		{[]string{"00501", "10001"}, infer.KindNumText},
		{[]string{"0", "-0"}, infer.KindNumNoDot},
		{[]string{"0", "-0", "1.5"}, infer.KindFloat},
		{[]string{"1", "1e3"}, infer.KindNumNoDot},
		{[]string{"1", "1e3", "1.5"}, infer.KindFloat},
		{[]string{"1", "1e3", "x"}, infer.KindString},
		{[]string{"12345678901234567"}, infer.KindIntWide},
		{[]string{"12345678901234567", "1.5"}, infer.KindNumText},
		{[]string{"9007199254740992", "1.5"}, infer.KindFloat},
		{[]string{"9223372036854775808"}, infer.KindNumText},
		{[]string{"100000000000000000000"}, infer.KindNumNoDot},
		{[]string{"0.1", "1.50", "-0.0", ".5", "5."}, infer.KindFloat},
		{[]string{"0.30000000000000004"}, infer.KindFloat},
		{[]string{"0.30000000000000000001"}, infer.KindNumText},
		{[]string{"1.000000000000000000e+00", "2.999999999999999889e-01", "-1.234567890123456664e+02"}, infer.KindFloat}, // numpy's %.18e
		{[]string{"0.29999999999999998890"}, infer.KindFloat},                                                            // %.20f of 0.3
		{[]string{"2.999999999999999999e-01"}, infer.KindNumText},                                                        // not a float64 printed
		{[]string{"123456789012345678"}, infer.KindIntWide},
		{[]string{"01.5"}, infer.KindNumText},
		{[]string{"2015/01/31", "2015/1/1"}, infer.KindDateYMD},
		{[]string{"01/02/2015", "03/04/2015"}, infer.KindDateAmbig},
		{[]string{"01/02/2015", "01/13/2015"}, infer.KindDateMDY},
		{[]string{"01/02/2015", "13/01/2015"}, infer.KindDateDMY},
		{[]string{"13/01/2015", "01/13/2015"}, infer.KindString},
		{[]string{"2015/01/01 01:00:00", "2015/01/01 1:00"}, infer.KindTSYMD},
		{[]string{"01/02/2015 01:00", "03/04/2015 10:00:00.25"}, infer.KindTSAmbig},
		{[]string{"Jan 1 2000", "december 31, 1999", "Feb 29 2000"}, infer.KindDateMonDY},
		{[]string{"Feb 30 2000"}, infer.KindString},
		{[]string{"1 January 2000", "31 Dec 1999"}, infer.KindDateDMonY},
		{[]string{"01-JAN-2000"}, infer.KindDateDMonY},
		{[]string{"2000-Jan-01", "1999-December-31"}, infer.KindDateYMonD},
		{[]string{"1", "2.5"}, infer.KindFloat},
		{[]string{"2.5", "1"}, infer.KindFloat},
		{[]string{"1", "x"}, infer.KindString},
		{[]string{"0x10"}, infer.KindString},
		{[]string{"1_000"}, infer.KindString},
		{[]string{" 1"}, infer.KindString},
		{[]string{"true", "FALSE"}, infer.KindBool},
		{[]string{"true", "1"}, infer.KindString},
		{[]string{"1", "true"}, infer.KindString},
		{[]string{"2024-01-01", "2024-12-31"}, infer.KindDate},
		{[]string{"2024-01-01", "2024-01-01 00:00:00"}, infer.KindString},
		{[]string{"2024-01-01T00:00:00Z", "2024-01-01 00:00:00+01:00"}, infer.KindTSZoned},
		{[]string{"2024-01-01T00:00:00", "2024-01-01 00:00:00.5"}, infer.KindTSNaive},
		{[]string{"1e5", "inf", "-Inf", "NaN"}, infer.KindFloat},
		{[]string{"1e999"}, infer.KindString},
	}
	for _, tc := range tests {
		k := infer.KindNull
		for _, c := range tc.cells {
			k = infer.Widen(k, c)
		}
		if k != tc.want {
			t.Errorf("%q: kind %d, want %d", tc.cells, k, tc.want)
		}
	}
}

// fileAt is the FileInfo of a test file opened outside a catalog (confined
// to its own directory).
func fileAt(p string) catalog.FileInfo { return catalog.FileInfo{AbsPath: p} }

// FuzzClassify checks the cell classifier against its rule and the fast
// paths against the classifier: a cell of a number kind prints back as
// written (up to float formatting), validInt/validDecimal/looksDecimal
// only accept cells of the kinds they stand for, and a cell of a date
// kind parses under that kind.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"0", "-0", "00501", "+1", "1.50", "1e3", "01.5", "12345678901234567", "9223372036854775808",
		"0.30000000000000004", "0.1000000000000000055511", "NaN", "-inf", ".5", "5.", "2015/01/31", "01/02/2015", "13/01/2015 10:00:00.5",
		"Jan 1 2000", "1 January 2000", "2000-Jan-01", "31-DEC-1999", "2024-01-01T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" {
			return
		}
		k := infer.Classify(s)
		if widenBytes(infer.KindNull, []byte(s)) != k {
			t.Fatalf("%q: widenBytes %d, classify %d", s, widenBytes(infer.KindNull, []byte(s)), k)
		}
		switch k {
		case infer.KindInt, infer.KindIntWide:
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil || strconv.FormatInt(v, 10) != s {
				t.Fatalf("%q: int kind does not print back (%v)", s, err)
			}
			if k == infer.KindInt && strconv.FormatFloat(float64(v), 'f', -1, 64) != s {
				t.Fatalf("%q: kindInt is not exact as a float64", s)
			}
		case infer.KindFloat, infer.KindNumNoDot:
			if strings.ContainsAny(s, "iInN") {
				break // NaN, Inf
			}
			if !infer.FloatExact(s) {
				t.Fatalf("%q: float kind does not print back", s)
			}
			if s[0] == '+' || strings.HasPrefix(strings.TrimPrefix(s, "-"), "00") {
				t.Fatalf("%q: float kind with a sign or leading zeros", s)
			}
		}
		b := []byte(s)
		if validInt(b) && k != infer.KindInt {
			t.Fatalf("validInt(%q) but kind %d", s, k)
		}
		if validDecimal(b) && infer.JoinKinds(infer.KindFloat, k) != infer.KindFloat {
			t.Fatalf("validDecimal(%q) but kind %d", s, k)
		}
		if looksDecimal(b) && k.NumBits() == 0 {
			t.Fatalf("looksDecimal(%q) but kind %d", s, k)
		}
		for dk := infer.KindDateYMD; dk <= infer.KindTSAmbig; dk++ {
			_, dok := infer.ParseDateKind(dk, s)
			_, tok := infer.ParseTSKind(dk, s)
			if (dok || tok) && infer.JoinKinds(dk, k) != dk {
				t.Fatalf("%q parses as kind %d but is kind %d", s, dk, k)
			}
		}
		if dt := k.ArrowType().ID(); dt == arrow.DATE32 && k != infer.KindDate {
			if _, ok := infer.ParseDateKind(k, s); !ok {
				t.Fatalf("%q: kind %d does not parse", s, k)
			}
		} else if dt == arrow.TIMESTAMP {
			if _, ok := parseTSCell(k, b); !ok {
				t.Fatalf("%q: kind %d does not parse", s, k)
			}
		}
	})
}

// TestJoinKindsIsASemilattice: joinKinds is commutative, associative and
// idempotent over every kind, so chunks may be merged in any grouping.
func TestJoinKindsIsASemilattice(t *testing.T) {
	for a := infer.KindNull; a <= infer.KindTSAmbig; a++ {
		if infer.JoinKinds(a, a) != a {
			t.Fatalf("join(%d, %d) != %d", a, a, a)
		}
		for b := infer.KindNull; b <= infer.KindTSAmbig; b++ {
			if infer.JoinKinds(a, b) != infer.JoinKinds(b, a) {
				t.Fatalf("join(%d, %d) not commutative", a, b)
			}
			for c := infer.KindNull; c <= infer.KindTSAmbig; c++ {
				if infer.JoinKinds(infer.JoinKinds(a, b), c) != infer.JoinKinds(a, infer.JoinKinds(b, c)) {
					t.Fatalf("join not associative on %d %d %d", a, b, c)
				}
			}
		}
	}
}
