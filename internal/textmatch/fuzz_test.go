package textmatch

import (
	"testing"
	"unicode/utf8"
)

// FuzzNormalize checks that Normalize never panics, always returns valid
// UTF-8 and is idempotent, and that matching a normalized value against a
// pattern never panics and agrees with itself: a strict match is a
// balanced match, a value always matches itself in every mode.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"գիտություն", "Մասնագիտություն", "Երևան", "եւ", "\uFB13\uFB17", "գիտությու՛ն՝ ծրագիր։",
		"hայաստան", "a\u2013b\u00ADc", "Straße", "ΐ", "\xff\xfe", "", "  ", "e\u0301", "ǅ",
	} {
		f.Add(s, "գիտություն")
	}
	f.Fuzz(func(t *testing.T, s, pat string) {
		n := Normalize(s)
		if !utf8.ValidString(n) {
			t.Fatalf("Normalize(%q) = %q: invalid UTF-8", s, n)
		}
		if again := Normalize(n); again != n {
			t.Fatalf("not idempotent: Normalize(%q) = %q, Normalize of that = %q", s, n, again)
		}
		v := Prepare(s)
		if p, err := Compile(s); err == nil {
			for _, m := range Modes {
				if got, _ := p.Match(v, m); got != Match {
					t.Fatalf("%q does not match itself in %s mode", s, m)
				}
			}
		}
		p, err := Compile(pat)
		if err != nil {
			return
		}
		for _, m := range Modes {
			if got, why := p.Match(v, m); got != p.Verdict(v, m) || (got == NoMatch) != (why == "") {
				t.Fatalf("%q vs %q in %s: Match %d %q, Verdict %d", pat, s, m, got, why, p.Verdict(v, m))
			}
		}
		if st, _ := p.Match(v, Strict); st == Match {
			if b, _ := p.Match(v, Balanced); b != Match {
				t.Fatalf("%q matches %q strictly but not balanced", pat, s)
			}
		}
	})
}
