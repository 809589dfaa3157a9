// Package textmatch is Quarry's language-aware text matching: the
// normalization of free text (Unicode NFKC and full case folding from
// golang.org/x/text, Armenian ligatures, punctuation and look-alike letters,
// whitespace and dashes), word segmentation by Unicode rules
// (github.com/rivo/uniseg) and the three matching modes of pattern_filter:
//
//   - Strict: the pattern's words equal consecutive words of the value.
//   - Balanced (the default): the value's words start with the pattern's
//     word stems (per-language inflection rules, see stem), so inflected
//     forms match; a pattern found only in the middle or tail of a longer
//     word ("գիտություն" inside "մասնագիտություն") is Partial: a candidate
//     to ask about, never a match.
//   - Permissive: the normalized pattern is a substring of the normalized
//     value.
//
// Normalize is idempotent and never panics, whatever its input (invalid
// UTF-8 included); FuzzNormalize checks both. The normalization table is
// documented in docs/PATTERNS.md and declared once here (lookalikes).
package textmatch
