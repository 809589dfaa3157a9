package textmatch

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mode is a matching mode.
type Mode string

// The matching modes.
const (
	Strict     Mode = "strict"
	Balanced   Mode = "balanced"
	Permissive Mode = "permissive"
)

// Modes lists the modes, the default first.
var Modes = []Mode{Balanced, Strict, Permissive}

// ParseMode returns the mode named s ("" is Balanced).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return Balanced, nil
	case Strict, Balanced, Permissive:
		return m, nil
	}
	return "", fmt.Errorf("%w: %q (want strict, balanced or permissive)", ErrMode, s)
}

// Errors of Compile and ParseMode.
var (
	ErrMode         = errors.New("unknown matching mode")
	ErrEmptyPattern = errors.New("pattern has no letters or digits once normalized")
)

// Verdict is how a value relates to a pattern.
type Verdict int

// Verdicts, weakest first.
const (
	// NoMatch: the pattern does not occur in the value.
	NoMatch Verdict = iota
	// Partial: the pattern (or its stem) occurs, but not as the mode
	// requires (inside a longer word, or an inflected form in strict mode):
	// a candidate to confirm, not a match.
	Partial
	// Match: the value matches in the mode.
	Match
)

// Text is a value prepared for matching: its normalized form and words.
type Text struct {
	Norm  string
	Words []string
}

// Prepare normalizes s and segments it into words.
func Prepare(s string) Text {
	n := Normalize(s)
	return Text{Norm: n, Words: Words(n)}
}

// Pattern is a compiled pattern.
type Pattern struct {
	// Raw is the pattern as given.
	Raw string
	// Text is its normalized form and words.
	Text
	// stems are the balanced-mode stems of Words.
	stems []string
}

// Compile normalizes and segments a pattern. A pattern with no word once
// normalized is refused with ErrEmptyPattern.
func Compile(raw string) (Pattern, error) {
	p := Pattern{Raw: raw, Text: Prepare(raw)}
	if len(p.Words) == 0 {
		return p, fmt.Errorf("%w: %q", ErrEmptyPattern, raw)
	}
	p.stems = make([]string, len(p.Words))
	for i, w := range p.Words {
		p.stems[i] = Stem(w)
	}
	return p, nil
}

// Stems returns the pattern's balanced-mode word stems.
func (p Pattern) Stems() []string { return append([]string(nil), p.stems...) }

// Match classifies t against p in mode m and says why in a short phrase
// ("" for NoMatch).
func (p Pattern) Match(t Text, m Mode) (Verdict, string) { return p.match(t, m, true) }

// Verdict is Match without the explanation (no allocation).
func (p Pattern) Verdict(t Text, m Mode) Verdict {
	v, _ := p.match(t, m, false)
	return v
}

func (p Pattern) match(t Text, m Mode, explain bool) (Verdict, string) {
	// Every verdict but NoMatch needs the first word's stem (or the
	// word) somewhere in the value: most values stop here.
	if !strings.Contains(t.Norm, p.stemOrWord(0)) {
		return NoMatch, ""
	}
	why := func(format string, args ...any) string {
		if !explain {
			return ""
		}
		return fmt.Sprintf(format, args...)
	}
	switch m {
	case Permissive:
		if strings.Contains(t.Norm, p.Norm) {
			return Match, why("contains %q", p.Norm)
		}
		return NoMatch, ""
	case Strict:
		if i := p.window(t.Words, func(v string, j int) bool { return v == p.Words[j] }); i >= 0 {
			return Match, why("whole words %q", strings.Join(t.Words[i:i+len(p.Words)], " "))
		}
		if i := p.window(t.Words, p.stemMatch); i >= 0 {
			return Partial, why("only another form %q of %q (strict needs the whole word)", strings.Join(t.Words[i:i+len(p.Words)], " "), p.Norm)
		}
	default:
		if i := p.window(t.Words, p.stemMatch); i >= 0 {
			return Match, why("words %q start with %q", strings.Join(t.Words[i:i+len(p.Words)], " "), strings.Join(p.stems, " "))
		}
	}
	if w, ok := p.inner(t); ok {
		return Partial, why("%q only inside the longer word %q", p.stemOrWord(0), w)
	}
	if strings.Contains(t.Norm, p.Norm) {
		return Partial, why("contains %q but not on word boundaries", p.Norm)
	}
	return NoMatch, ""
}

// stemMatch is the balanced test of value word v against pattern word j:
// v starts with the word's stem; a stem of fewer than minStem letters must
// equal the word.
func (p Pattern) stemMatch(v string, j int) bool {
	s := p.stems[j]
	if utf8.RuneCountInString(s) < minStem {
		return v == p.Words[j]
	}
	return strings.HasPrefix(v, s)
}

// window returns the first i where eq(words[i+j], j) holds for every
// pattern word j, or -1.
func (p Pattern) window(words []string, eq func(v string, j int) bool) int {
	k := len(p.Words)
outer:
	for i := 0; i+k <= len(words); i++ {
		for j := 0; j < k; j++ {
			if !eq(words[i+j], j) {
				continue outer
			}
		}
		return i
	}
	return -1
}

// inner reports the first value word that contains the pattern's first
// stem (or the first word, when its stem is too short) anywhere but at its
// start, when every other pattern word's stem occurs in the value too: the
// pattern is the tail or the inside of a longer word.
func (p Pattern) inner(t Text) (string, bool) {
	for j := 1; j < len(p.Words); j++ {
		if !strings.Contains(t.Norm, p.stemOrWord(j)) {
			return "", false
		}
	}
	s := p.stemOrWord(0)
	for _, w := range t.Words {
		if strings.Index(w, s) > 0 {
			return w, true
		}
	}
	return "", false
}

// stemOrWord is pattern word j's stem, or the word when its stem is too
// short to match as a prefix.
func (p Pattern) stemOrWord(j int) string {
	if utf8.RuneCountInString(p.stems[j]) < minStem {
		return p.Words[j]
	}
	return p.stems[j]
}

// minStem is the shortest stem (in letters) that matches as a prefix;
// shorter pattern words must match whole words.
const minStem = 3

// Suffix rules per script, longest first within each list: inflectional
// endings removed from a pattern word before prefix matching in balanced
// mode. Armenian: "ություն" (-ness) keeps "ությ" so that the genitive
// "ության" and plural "ություններ" match; then plural and case endings and
// the articles. English: plural and verb endings. Russian: the common case
// endings. Other scripts: no stemming (the whole word is the prefix).
var (
	armenianSuffixes = []string{"ներից", "ներով", "ներում", "ներին", "ների", "ները", "երից", "երով", "երում", "երին", "երի", "երը", "ներ", "եր", "ում", "ից", "ով", "ին", "ը", "ն", "ի"}
	latinSuffixes    = []string{"ing", "ies", "es", "ed", "s"}
	cyrillicSuffixes = []string{"ами", "ями", "ого", "ему", "ов", "ев", "ей", "ам", "ям", "ах", "ях", "ой", "ый", "ий", "ая", "ое", "ые", "а", "я", "ы", "и", "у", "ю", "е", "о"}
)

// Stem returns the balanced-mode stem of a normalized word: the word
// without one inflectional ending of its script (see the suffix rules),
// keeping at least minStem letters.
func Stem(w string) string {
	var suffixes []string
	switch script(w) {
	case unicode.Armenian:
		if s, ok := strings.CutSuffix(w, "ություն"); ok {
			return s + "ությ"
		}
		if s, ok := strings.CutSuffix(w, "ության"); ok {
			return s + "ությ"
		}
		suffixes = armenianSuffixes
	case unicode.Latin:
		suffixes = latinSuffixes
	case unicode.Cyrillic:
		suffixes = cyrillicSuffixes
	}
	for _, suf := range suffixes {
		if s, ok := strings.CutSuffix(w, suf); ok && utf8.RuneCountInString(s) >= minStem {
			return s
		}
	}
	return w
}

// script is the script of w's first letter (nil for none of the three).
func script(w string) *unicode.RangeTable {
	for _, r := range w {
		for _, t := range []*unicode.RangeTable{unicode.Armenian, unicode.Latin, unicode.Cyrillic} {
			if unicode.Is(t, r) {
				return t
			}
		}
		if unicode.IsLetter(r) {
			return nil
		}
	}
	return nil
}
