package catalog

import (
	"testing"
	"time"
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
		{"2024-03-01T12:30:45+0400", false, false, ""},
		{"2024-03-01T12:30:45 Z", false, false, ""},
		{"2024-03-01X12:30:45", false, false, ""},
		{"+024-03-01T12:30:45", false, false, ""},
	}
	for _, tc := range tests {
		got, zoned, ok := parseTimestamp(tc.in)
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
		want  colKind
	}{
		{[]string{"1", "-2", "+3"}, kindInt},
		{[]string{"1", "2.5"}, kindFloat},
		{[]string{"2.5", "1"}, kindFloat},
		{[]string{"1", "x"}, kindString},
		{[]string{"0x10"}, kindString},
		{[]string{"1_000"}, kindString},
		{[]string{" 1"}, kindString},
		{[]string{"true", "FALSE"}, kindBool},
		{[]string{"true", "1"}, kindString},
		{[]string{"1", "true"}, kindString},
		{[]string{"2024-01-01", "2024-12-31"}, kindDate},
		{[]string{"2024-01-01", "2024-01-01 00:00:00"}, kindString},
		{[]string{"2024-01-01T00:00:00Z", "2024-01-01 00:00:00+01:00"}, kindTSZoned},
		{[]string{"2024-01-01T00:00:00", "2024-01-01 00:00:00.5"}, kindTSNaive},
		{[]string{"1e5", "inf", "-Inf", "NaN"}, kindFloat},
		{[]string{"1e999"}, kindString},
	}
	for _, tc := range tests {
		k := kindNull
		for _, c := range tc.cells {
			k = widen(k, c)
		}
		if k != tc.want {
			t.Errorf("%q: kind %d, want %d", tc.cells, k, tc.want)
		}
	}
}

// fileAt is the FileInfo of a test file opened outside a catalog (confined
// to its own directory).
func fileAt(p string) FileInfo { return FileInfo{AbsPath: p} }
