package funcs

import (
	"regexp"
	"testing"
)

// TestLikeLiteralMatcher: the substring matcher agrees with LIKE's regexp.
func TestLikeLiteralMatcher(t *testing.T) {
	patterns := []string{"", "%", "%%", "abc", "abc%", "%abc", "%abc%", "a%c", "%special%requests%", "ab%ab", "%a%a%",
		"PROMO%", "%BRASS", "é%ü", "a%%b"}
	values := []string{"", "a", "abc", "abcabc", "xabcx", "ac", "abbc", "aXc", "a\nc", "no special requests here",
		"special requests", "requests special", "ab", "aba", "abab", "PROMO BRUSHED", "SMALL BRASS", "éü", "é-ü", "\xff", "a\xffb", "aab"}
	for _, p := range patterns {
		m := likeLiteralMatcher(p)
		if m == nil {
			t.Fatalf("%q: no matcher", p)
		}
		re := regexp.MustCompile(LikeRegexp(p, false))
		for _, v := range values {
			if got, want := m(v), re.MatchString(v); got != want {
				t.Errorf("%q LIKE %q: %v, the regexp says %v", v, p, got, want)
			}
		}
	}
	for _, p := range []string{"a_c", `a\%`, "\xff%"} {
		if likeLiteralMatcher(p) != nil {
			t.Errorf("%q: a matcher for a pattern it does not cover", p)
		}
	}
}
