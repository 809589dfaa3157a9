package textmatch

import (
	"errors"
	"testing"
)

func TestMatch(t *testing.T) {
	type want struct{ strict, balanced, permissive Verdict }
	tests := []struct {
		name, pattern, value string
		want                 want
	}{
		{"exact armenian", "գիտություն", "Գիտություն", want{Match, Match, Match}},
		{"inside a longer word", "գիտություն", "Մասնագիտական կրթություն եւ մասնագիտություն", want{Partial, Partial, Match}},
		{"only the longer word", "գիտություն", "մասնագիտություն", want{Partial, Partial, Match}},
		{"inflected genitive", "գիտություն", "Գիտության զարգացման ծրագիր", want{Partial, Match, NoMatch}},
		{"ligature in value", "Երեւան", "Երևանի քաղաքապետարան", want{Partial, Match, Match}},
		{"ligature in pattern", "Երևան", "Երեւան քաղաք", want{Match, Match, Match}},
		{"standalone and either way", "գիտություն և կրթություն", "ԳԻՏՈՒԹՅՈՒՆ ԵՒ ԿՐԹՈՒԹՅՈՒՆ", want{Match, Match, Match}},
		{"emphasis mark in value", "կրթություն", "կրթությու՛ն", want{Match, Match, Match}},
		{"latin look-alike in value", "հանրակրթություն", "hանրակրթություն", want{Match, Match, Match}},
		{"multi-word window", "բարձրագույն կրթություն", "Բարձրագույն կրթության ծրագիր", want{Partial, Match, NoMatch}},
		{"words out of order", "կրթություն բարձրագույն", "բարձրագույն կրթություն", want{NoMatch, NoMatch, NoMatch}},
		{"unrelated", "գիտություն", "Առողջապահություն", want{NoMatch, NoMatch, NoMatch}},
		{"english plural", "programs", "Science Program 2024", want{Partial, Match, NoMatch}},
		{"english inner", "science", "Neuroscience research", want{Partial, Partial, Match}},
		{"english case", "EDUCATION", "Higher education", want{Match, Match, Match}},
		{"short word needs whole word", "it", "IT services and item", want{Match, Match, Match}},
		{"short word is a prefix only", "it", "items", want{Partial, Partial, Match}},
		{"russian inflection", "наука", "Развитие науки", want{Partial, Match, NoMatch}},
		{"russian case", "Образование", "ОБРАЗОВАНИЕ", want{Match, Match, Match}},
		{"dash joins in permissive", "a-b", "x a—b y", want{Match, Match, Match}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Compile(tc.pattern)
			if err != nil {
				t.Fatal(err)
			}
			v := Prepare(tc.value)
			for _, c := range []struct {
				m    Mode
				want Verdict
			}{{Strict, tc.want.strict}, {Balanced, tc.want.balanced}, {Permissive, tc.want.permissive}} {
				got, why := p.Match(v, c.m)
				if got != c.want {
					t.Errorf("%s: %q vs %q = %d (%s), want %d", c.m, tc.pattern, tc.value, got, why, c.want)
				}
				if (got == NoMatch) != (why == "") {
					t.Errorf("%s: verdict %d with why %q", c.m, got, why)
				}
			}
		})
	}
}

func TestCompileAndMode(t *testing.T) {
	if _, err := Compile(" ՝ -- "); !errors.Is(err, ErrEmptyPattern) {
		t.Errorf("Compile of punctuation: %v, want ErrEmptyPattern", err)
	}
	for in, want := range map[string]Mode{"": Balanced, "STRICT": Strict, " permissive ": Permissive, "balanced": Balanced} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("fuzzy"); !errors.Is(err, ErrMode) {
		t.Errorf("ParseMode(fuzzy): %v", err)
	}
}
