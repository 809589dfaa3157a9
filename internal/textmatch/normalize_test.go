package textmatch

import (
	"slices"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"armenian case", "ԳԻՏՈՒԹՅՈՒՆ", "գիտություն"},
		{"ligature ech-yiwn", "Երևան", "երեւան"},
		{"ech-yiwn spelled out", "Երեւան", "երեւան"},
		{"standalone and", "գիտություն և կրթություն", "գիտություն եւ կրթություն"},
		{"men-now ligature", "\uFB13", "մն"},
		{"men-ech ligature", "\uFB14", "մե"},
		{"men-ini ligature", "\uFB15", "մի"},
		{"vew-now ligature", "\uFB16", "վն"},
		{"men-xeh ligature", "\uFB17", "մխ"},
		{"emphasis mark inside word", "գիտությու՛ն", "գիտություն"},
		{"exclamation and question marks", "ինչու՞ ո՜վ", "ինչու ով"},
		{"apostrophe and abbreviation mark", "Ս՚ Թ՟", "ս թ"},
		{"armenian comma separates", "ծրագիր՝կրթություն", "ծրագիր կրթություն"},
		{"armenian full stop separates", "ավարտ։Սկիզբ", "ավարտ սկիզբ"},
		{"armenian hyphen is a dash", "հանրակրթական\u058Aմասնագիտական", "հանրակրթական-մասնագիտական"},
		{"dashes unified", "a\u2013b\u2014c\u2012d", "a-b-c-d"},
		{"whitespace collapsed and trimmed", " \t a\u00A0\u2003b \n", "a b"},
		{"soft hyphen and zero width removed", "գիտու\u00ADթյուն\u200B", "գիտություն"},
		{"latin look-alikes inside armenian", "hայաստան nւսում", "հայաստան ուսում"},
		{"cyrillic look-alikes inside armenian", "\u04BBայ\u043Eտար", "հայօտար"},
		{"latin word untouched", "Hong Kong", "hong kong"},
		{"german full folding", "STRASSE Straße", "strasse strasse"},
		{"cyrillic case", "НАУКА Образование", "наука образование"},
		{"fullwidth compat", "ＡＢＣ１２", "abc12"},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
		{"empty", "", ""},
		{"only punctuation", "՝ ։ ՛", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Normalize(tc.in)
			if got != tc.want {
				t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again := Normalize(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"գիտություն եւ կրթություն", []string{"գիտություն", "եւ", "կրթություն"}},
		{"ծրագիր-2024 (նոր)", []string{"ծրագիր", "2024", "նոր"}},
		{"science, education; r&d", []string{"science", "education", "r", "d"}},
		{"наука и образование", []string{"наука", "и", "образование"}},
		{"", nil},
	}
	for _, tc := range tests {
		if got := Words(Normalize(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("Words(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStem(t *testing.T) {
	tests := []struct{ in, want string }{
		{"գիտություն", "գիտությ"},
		{"գիտության", "գիտությ"},
		{"նախարարություն", "նախարարությ"},
		{"ծրագրեր", "ծրագր"},
		{"ծրագրերի", "ծրագր"},
		{"դպրոցներ", "դպրոց"},
		{"ծրագիր", "ծրագիր"},
		{"եւ", "եւ"},
		{"programs", "program"},
		{"studies", "stud"},
		{"science", "science"},
		{"образование", "образовани"},
		{"наука", "наук"},
		{"ab", "ab"},
		{"東京", "東京"},
	}
	for _, tc := range tests {
		if got := Stem(tc.in); got != tc.want {
			t.Errorf("Stem(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
