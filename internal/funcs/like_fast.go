package funcs

import (
	"strings"
	"unicode/utf8"
)

// likeLiteralMatcher returns a matcher equal to LIKE pattern (case
// sensitive) for the patterns made of literal text and % only
// ('%special%requests%', 'PROMO%', '%BRASS'): a prefix, a suffix and the
// parts between found in order with substring search, much faster than
// the regular expression LikeRegexp builds. Nil for any other pattern
// (with _, a \ escape, or invalid UTF-8), which the regexp matches.
func likeLiteralMatcher(pattern string) func(string) bool {
	if strings.ContainsAny(pattern, `_\`) || !utf8.ValidString(pattern) {
		return nil
	}
	parts := strings.Split(pattern, "%")
	if len(parts) == 1 {
		return func(s string) bool { return s == pattern }
	}
	prefix, suffix, middle := parts[0], parts[len(parts)-1], parts[1:len(parts)-1]
	return func(s string) bool {
		if len(s) < len(prefix)+len(suffix) || !strings.HasPrefix(s, prefix) || !strings.HasSuffix(s, suffix) {
			return false
		}
		s = s[len(prefix) : len(s)-len(suffix)]
		for _, m := range middle {
			i := strings.Index(s, m)
			if i < 0 {
				return false
			}
			s = s[i+len(m):]
		}
		return true
	}
}
