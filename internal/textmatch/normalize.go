package textmatch

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// folder is full Unicode case folding (stateless, safe for concurrent use).
var folder = cases.Fold()

// Armenian punctuation that separates words: the comma (՝, U+055D) and the
// full stop (։, U+0589) become a space. Every other Armenian punctuation
// mark (՚ ՛ ՜ ՞ ՟: apostrophe, emphasis, exclamation, question and
// abbreviation marks, written over or after a letter inside a word) is
// removed; which runes are Armenian punctuation comes from the unicode
// package (script Armenian, category P), not from a table.
const (
	armenianComma    = '\u055D'
	armenianFullStop = '\u0589'
)

// lookalikes maps Latin and Cyrillic letters that look like Armenian
// letters to those letters, applied only inside words that also contain an
// Armenian letter (after case folding, so only lower case is listed). No
// library declares these confusables; docs/PATTERNS.md shows the table.
var lookalikes = map[rune]rune{
	'o':      'օ', // Latin o → U+0585 oh
	'\u043E': 'օ', // Cyrillic о → oh
	'n':      'ո', // Latin n → U+0578 vo
	'\u043F': 'ո', // Cyrillic п → vo
	'u':      'ս', // Latin u → U+057D seh
	'h':      'հ', // Latin h → U+0570 ho
	'\u04BB': 'հ', // Cyrillic һ → ho
	'q':      'զ', // Latin q → U+0566 za
	'g':      'ց', // Latin g → U+0581 co
}

// Normalize returns the normalized form of s, in this order:
//
//  1. invalid UTF-8 bytes become U+FFFD;
//  2. NFKC, full case folding, NFKC again (compatibility forms such as the
//     Armenian ligatures և U+0587 → եւ and ﬓ–ﬗ U+FB13–U+FB17 → մն, մե,
//     մի, վն, մխ are decomposed here, from Unicode's own data);
//  3. format characters (category Cf: soft hyphen, zero-width joiners)
//     are removed; the Armenian comma and full stop become a space; other
//     Armenian punctuation is removed; every dash (category Pd, the
//     Armenian hyphen ֊ included) becomes "-"; every run of white space
//     becomes one space, trimmed at both ends;
//  4. NFKC once more (a removal can bring a base letter and a combining
//     mark together);
//  5. inside words (Unicode word segmentation) that contain an Armenian
//     letter, Latin and Cyrillic look-alike letters become the Armenian
//     letters they imitate.
//
// Normalize is idempotent and never panics.
func Normalize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = norm.NFKC.String(folder.String(norm.NFKC.String(s)))
	var b strings.Builder
	b.Grow(len(s))
	pendingSpace := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cf, r):
			continue
		case r == armenianComma || r == armenianFullStop || unicode.IsSpace(r) || unicode.Is(unicode.Zs, r):
			pendingSpace = b.Len() > 0
			continue
		case unicode.Is(unicode.Pd, r):
			r = '-'
		case unicode.Is(unicode.Armenian, r) && unicode.IsPunct(r):
			continue
		}
		if pendingSpace {
			b.WriteByte(' ')
			pendingSpace = false
		}
		b.WriteRune(r)
	}
	s = norm.NFKC.String(b.String())
	return mapLookalikes(s)
}

// mapLookalikes applies the look-alike table inside Armenian words.
func mapLookalikes(s string) string {
	if !hasLookalike(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	state := -1
	for rest := s; rest != ""; {
		var w string
		w, rest, state = uniseg.FirstWordInString(rest, state)
		if !hasArmenianLetter(w) {
			b.WriteString(w)
			continue
		}
		for _, r := range w {
			if m, ok := lookalikes[r]; ok {
				r = m
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hasLookalike(s string) bool {
	for _, r := range s {
		if _, ok := lookalikes[r]; ok {
			return true
		}
	}
	return false
}

func hasArmenianLetter(w string) bool {
	for _, r := range w {
		if r >= utf8.RuneSelf && unicode.Is(unicode.Armenian, r) && unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// Words returns the words of s (normally a Normalize result) by Unicode
// word segmentation (UAX #29): the segments that contain a letter or a
// digit, in order. Spaces, dashes and punctuation separate words.
func Words(s string) []string {
	var out []string
	state := -1
	for rest := s; rest != ""; {
		var w string
		w, rest, state = uniseg.FirstWordInString(rest, state)
		if isWord(w) {
			out = append(out, w)
		}
	}
	return out
}

func isWord(w string) bool {
	for _, r := range w {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}
