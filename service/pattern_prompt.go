package service

import "fmt"

// PatternGuidelines is the text of the pattern_disambiguation_guidelines
// prompt: how to turn a user's words into a confirmed filter, asking
// before including or excluding ambiguous values.
func PatternGuidelines() string {
	return fmt.Sprintf(`Pattern disambiguation on this Quarry server

When the user names things in their own words ("science programs", "education", "գիտություն") and the data has free-text labels (program, ministry, category), do not guess a contains or regex filter: substrings silently include the wrong rows. Use pattern_filter:

1. Call pattern_filter {dataset (or datasets / tag for several years), field, patterns: [the user's words, in every language they used], mode}. Modes: strict = whole words only; balanced (default) = words that start with the word's stem, so inflected forms match; permissive = any normalized substring (maximal recall). Matching ignores case, Unicode forms, Armenian ligatures (և = եւ, ﬓ–ﬗ), Armenian punctuation and emphasis marks, Latin/Cyrillic look-alike letters inside Armenian words, dashes and spacing.
2. status confirmed: the match was clear; use filter_token as filters: [{"filter_token": "..."}] in query_data, aggregate, estimate_query or distinct_values (on the datasets in diagnostics.datasets; it expires after %s), or in advanced_query as WHERE filter_token($1) with params: [token]. For several datasets, query_data {dataset, datasets: [the others], filters: [{"filter_token": "..."}]} returns the union of their matching rows with a _dataset column.
3. status needs_confirmation: show the user the question, the include candidates (proposed) and the exclude candidates (doubtful: the word occurs only inside a longer word, in another form, or with an exclude word), with their row counts. Ask which to keep; never include an exclude candidate without the user's yes, and do not drop an include candidate the user did not reject. Then call next_call's arguments with confirmed.include set to the chosen values (and confirmed.exclude to the rejected ones). If the client shows forms, the user picks in a form and the answer comes back confirmed directly.
4. Nothing matched: ask the user for other words or a synonym; try mode permissive only if they agree that broader matches are fine.
5. Add exclude words the user rules out ("not vocational") as exclude: [...] instead of editing the lists by hand.

Worked example (Armenian): the user asks for "գիտության ծրագրեր" (science programs). pattern_filter {field: "program", patterns: ["գիտություն"]} in balanced mode includes "Գիտություն", "Գիտության զարգացման ծրագիր" and "ԳԻՏՈՒԹՅՈՒՆ և ԿՐԹՈՒԹՅՈՒՆ" (case and և/եւ are normalized), but lists "Մասնագիտությունների զարգացում" (professions) under exclude: գիտություն is only the tail of մասնագիտություն. Ask: "Should 'Մասնագիտությունների զարգացում' (vocational development, 42 rows) count as science?" and confirm with the user's answer.

Worked example (English): the user asks for "education spending". patterns: ["education"] includes "Higher education" and "Education grants"; "Reeducation centres" is an exclude candidate (education inside a longer word). Ask before including it.
`, FilterTokenTTL)
}
