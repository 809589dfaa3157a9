package service

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/textmatch"
)

// pattern_filter limits and defaults.
const (
	// DefaultConfirmThreshold is the share of a field's distinct values or
	// rows above which a match set is "wide" and is confirmed first.
	DefaultConfirmThreshold = 0.5
	// wideMatchValues is the number of matched values above which a match
	// set is confirmed first whatever the threshold.
	wideMatchValues = 50
	// maxCandidatesListed bounds each candidate list of an answer.
	maxCandidatesListed = 200
	// MaxPatternDistinct bounds the distinct values one field may have.
	MaxPatternDistinct = 5_000_000
	// maxPatternDatasets bounds the datasets one call scans.
	maxPatternDatasets = 64
	// maxPatterns bounds patterns and exclude.
	maxPatterns = 32
	// patternCacheEntries is the number of normalized dictionaries kept.
	patternCacheEntries = 16
)

// pattern_filter statuses.
const (
	PatternNeedsConfirmation = "needs_confirmation"
	PatternConfirmed         = "confirmed"
)

// PatternFilterRequest is the input of pattern_filter.
type PatternFilterRequest struct {
	Dataset          string               `json:"dataset,omitempty" jsonschema:"Dataset id (or datasets, tag)."`
	Field            string               `json:"field" jsonschema:"Text column to match."`
	Patterns         []string             `json:"patterns" jsonschema:"The user's words."`
	Mode             string               `json:"mode,omitempty" jsonschema:"enum=strict,enum=balanced,enum=permissive" jsonschema_description:"strict (words), balanced (stems) or permissive (substrings)."`
	Exclude          []string             `json:"exclude,omitempty" jsonschema:"Words to exclude."`
	ConfirmThreshold *float64             `json:"confirm_threshold,omitempty" jsonschema:"Share (0..1) above which the user confirms."`
	Datasets         []string             `json:"datasets,omitempty" jsonschema:"More datasets with the same field."`
	Tag              string               `json:"tag,omitempty" jsonschema:"Datasets whose tags have this value or key:value."`
	Confirmed        *PatternConfirmation `json:"confirmed,omitempty" jsonschema:"The user's choice after needs_confirmation."`
}

// PatternConfirmation is the user's choice among candidates.
type PatternConfirmation struct {
	Include []string `json:"include" jsonschema:"Values to keep."`
	Exclude []string `json:"exclude,omitempty" jsonschema:"Values rejected."`
}

// PatternCandidate is one distinct value of the field.
type PatternCandidate struct {
	Value    string           `json:"value" jsonschema:"The exact value in the data."`
	Count    int64            `json:"count" jsonschema:"Rows with this value (over all datasets searched)."`
	Why      string           `json:"why" jsonschema:"Why it is a candidate (what matched, or why it is doubtful)."`
	Datasets map[string]int64 `json:"datasets,omitempty" jsonschema:"Rows per dataset, when several datasets were searched."`
}

// PatternCandidates are the values proposed for inclusion and the doubtful
// ones proposed for exclusion.
type PatternCandidates struct {
	Include []PatternCandidate `json:"include" jsonschema:"Values that match in the chosen mode, most rows first."`
	Exclude []PatternCandidate `json:"exclude" jsonschema:"Values where a pattern occurs only inside a longer word (or in another form), or that match an exclude word: not included unless the user says so."`
}

// PatternDiagnostics are pattern_filter's counts.
type PatternDiagnostics struct {
	DistinctScanned int64    `json:"distinct_scanned" jsonschema:"Distinct values of the field scanned (all datasets)."`
	MatchedRows     int64    `json:"matched_rows" jsonschema:"Rows whose value is an include candidate."`
	Matched         int64    `json:"matched,omitempty" jsonschema:"Rows the confirmed filter keeps (confirmed answers)."`
	Datasets        []string `json:"datasets" jsonschema:"The datasets searched."`
	DurationMS      int64    `json:"duration_ms"`
}

// PatternNextCall is the call that confirms a needs_confirmation answer.
type PatternNextCall struct {
	Tool      string                `json:"tool"`
	Arguments *PatternFilterRequest `json:"arguments"`
}

// PatternFilterResponse is the output of pattern_filter.
type PatternFilterResponse struct {
	Status     string             `json:"status" jsonschema:"enum=needs_confirmation,enum=confirmed" jsonschema_description:"needs_confirmation: ask the user, then call next_call (edited to their choice); confirmed: use filter_token."`
	Mode       string             `json:"mode"`
	Candidates *PatternCandidates `json:"candidates,omitempty"`
	Question   string             `json:"question,omitempty" jsonschema:"What to ask the user (needs_confirmation)."`
	Notes      []string           `json:"notes,omitempty"`
	NextCall   *PatternNextCall   `json:"next_call,omitempty" jsonschema:"needs_confirmation: the pattern_filter call that confirms the proposed include list; move values between include and exclude as the user decides."`
	// FilterToken is the signed confirmed filter.
	FilterToken string                  `json:"filter_token,omitempty" jsonschema:"Pass as filters: [{\"filter_token\": \"...\"}] to query_data, aggregate, estimate_query or distinct_values on the datasets listed in diagnostics.datasets (query_data with datasets: [...] for their union), or WHERE filter_token($1) in advanced_query: it keeps exactly the confirmed values' rows."`
	Filter      *PatternFilterExplained `json:"filter,omitempty" jsonschema:"What the token stands for (for inspection)."`
	ExpiresAt   string                  `json:"expires_at,omitempty" jsonschema:"When the token stops being accepted (RFC 3339)."`
	Diagnostics PatternDiagnostics      `json:"diagnostics"`
}

// PatternFilterExplained is the filter a token stands for.
type PatternFilterExplained struct {
	Col   string   `json:"col"`
	Op    string   `json:"op"`
	Value []string `json:"value"`
}

// patternDict is a field's distinct values with their counts and
// normalized forms, cached per file version.
type patternDict struct {
	values []string
	counts []int64
	texts  []textmatch.Text
	rows   int64 // non-null rows: the sum of counts
}

// patternMatch is one distinct value's verdict. why is computed only for
// the values an answer lists (explain).
type patternMatch struct {
	value     string
	count     int64
	include   bool
	byExclude bool // an exclude word occurs in it (pat is that word)
	text      textmatch.Text
	pat       textmatch.Pattern // the pattern that matched, or the exclude word
	byDS      map[string]int64  // with several datasets only
}

// explain says why m is a candidate.
func (m *patternMatch) explain(mode textmatch.Mode) string {
	if m.byExclude {
		return fmt.Sprintf("contains the exclude word %q", m.pat.Norm)
	}
	_, why := m.pat.Match(m.text, mode)
	return why
}

// PatternFilter matches patterns against the distinct values of a text
// field (pattern_filter) and either proposes candidates to confirm or
// returns a signed filter token.
func (s *Service) PatternFilter(ctx context.Context, req PatternFilterRequest) (*PatternFilterResponse, error) {
	start := time.Now()
	mode, pats, excl, threshold, err := parsePatternRequest(req)
	if err != nil {
		return nil, err
	}
	ids, notes, err := s.patternDatasets(ctx, req)
	if err != nil {
		return nil, err
	}
	matches := newMatchSet(len(ids) > 1)
	dicts := make([]*patternDict, len(ids))
	var distinct, rows int64
	for i, id := range ids {
		dict, err := onDataset(ctx, s, id, func(d *catalog.Dataset) (*patternDict, error) { return s.patternDictOf(ctx, d, req.Field) })
		if err != nil {
			return nil, err
		}
		dicts[i] = dict
		distinct += int64(len(dict.values))
		rows += dict.rows
		matches.classify(dict, id, pats, excl, mode)
	}
	out := &PatternFilterResponse{Mode: string(mode), Notes: notes, Diagnostics: PatternDiagnostics{DistinctScanned: distinct, Datasets: ids}}
	if req.Confirmed != nil {
		err = s.confirmPattern(req, ids, dicts, matches, out)
	} else {
		err = s.proposePattern(req, mode, threshold, rows, matches, out)
	}
	if err != nil {
		return nil, err
	}
	out.Diagnostics.DurationMS = time.Since(start).Milliseconds()
	obs.Logger(ctx).Info("pattern_filter", "datasets", ids, "field", req.Field, "mode", mode, "status", out.Status,
		"distinct_scanned", distinct, "matched_rows", out.Diagnostics.MatchedRows, "duration_ms", out.Diagnostics.DurationMS)
	return out, nil
}

// parsePatternRequest validates the arguments and compiles the patterns.
func parsePatternRequest(req PatternFilterRequest) (textmatch.Mode, []textmatch.Pattern, []textmatch.Pattern, float64, error) {
	mode, err := textmatch.ParseMode(req.Mode)
	if err != nil {
		return "", nil, nil, 0, qerr.Invalid(qerr.CodeInvalidArgument, "%v", err).With("field", "mode")
	}
	if strings.TrimSpace(req.Field) == "" {
		return "", nil, nil, 0, qerr.Invalid(qerr.CodeInvalidColumn, "field is required").With("field", "field").
			WithHint("name the text column to match; get_schema lists them")
	}
	if len(req.Patterns) == 0 && req.Confirmed == nil {
		return "", nil, nil, 0, qerr.Invalid(qerr.CodeInvalidArgument, "patterns is required").With("field", "patterns").
			WithHint("give the user's words, e.g. [\"science\"]")
	}
	threshold := DefaultConfirmThreshold
	if req.ConfirmThreshold != nil {
		threshold = *req.ConfirmThreshold
		if threshold <= 0 || threshold > 1 {
			return "", nil, nil, 0, qerr.Invalid(qerr.CodeInvalidArgument, "confirm_threshold must be in (0, 1], got %v", threshold).
				With("field", "confirm_threshold")
		}
	}
	pats, err := compilePatterns("patterns", req.Patterns)
	if err != nil {
		return "", nil, nil, 0, err
	}
	excl, err := compilePatterns("exclude", req.Exclude)
	return mode, pats, excl, threshold, err
}

func compilePatterns(field string, raw []string) ([]textmatch.Pattern, error) {
	if len(raw) > maxPatterns {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "%s: at most %d, got %d", field, maxPatterns, len(raw)).With("field", field)
	}
	out := make([]textmatch.Pattern, 0, len(raw))
	for i, r := range raw {
		p, err := textmatch.Compile(r)
		if err != nil {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "%s[%d]: %v", field, i, err).With("field", field).
				WithHint("a pattern needs at least one letter or digit")
		}
		out = append(out, p)
	}
	return out, nil
}

// patternDatasets returns the datasets to search: dataset, datasets and
// those tagged tag, without duplicates, in that order.
func (s *Service) patternDatasets(ctx context.Context, req PatternFilterRequest) ([]string, []string, error) {
	ids := []string{}
	add := func(id string) {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	add(req.Dataset)
	for _, id := range req.Datasets {
		add(id)
	}
	var notes []string
	if tag := strings.TrimSpace(req.Tag); tag != "" {
		s.WaitFirstScan(ctx)
		if err := s.cfg.Catalog.Refresh(ctx); err != nil {
			return nil, nil, err
		}
		n := len(ids)
		for _, d := range s.cfg.Catalog.Datasets() {
			if hasTag(d, tag) && d.Schema.HasField(req.Field) {
				add(d.ID)
			}
		}
		if len(ids) == n {
			notes = append(notes, fmt.Sprintf("no dataset with a column %q is tagged %q", req.Field, tag))
		}
	}
	if len(ids) == 0 && len(notes) > 0 {
		return nil, nil, qerr.New(qerr.ErrNotFound, qerr.CodeDatasetNotFound, "%s", notes[0]).With("field", "tag").
			WithHint("get_catalog lists the datasets with their tags")
	}
	if len(ids) == 0 {
		return nil, nil, qerr.Invalid(qerr.CodeInvalidArgument, "dataset, datasets or tag is required").With("field", "dataset").
			WithHint("call get_catalog to list dataset ids and tags")
	}
	if len(ids) > maxPatternDatasets {
		return nil, nil, qerr.New(qerr.ErrLimitExceeded, qerr.CodeInvalidArgument, "pattern_filter searches at most %d datasets, got %d", maxPatternDatasets, len(ids)).
			With("field", "datasets").WithHint("name fewer datasets or a narrower tag")
	}
	return ids, notes, nil
}

// hasTag reports whether d's card has tag as a value, or as "key:value".
func hasTag(d *catalog.Dataset, tag string) bool {
	if d.Card == nil {
		return false
	}
	if k, v, ok := strings.Cut(tag, ":"); ok {
		return tagsMatch(d, map[string]string{strings.TrimSpace(k): v})
	}
	for _, v := range d.Card.Tags {
		if strings.EqualFold(strings.TrimSpace(v), tag) {
			return true
		}
	}
	return false
}

// patternDictOf returns the normalized distinct values of field in d,
// cached per file version.
func (s *Service) patternDictOf(ctx context.Context, d *catalog.Dataset, field string) (*patternDict, error) {
	f, ok := d.Schema.FieldsByName(field)
	if !ok {
		names := columnNames(d.Schema)
		return nil, qerr.Invalid(qerr.CodeInvalidColumn, "dataset %q has no column %q", d.ID, field).
			With("field", "field").With("column", field).With("suggestions", qerr.Suggest(field, names, 3)).
			WithHint("valid columns: %s", listNames(names, 30))
	}
	if !isText(f[0].Type) {
		return nil, qerr.Invalid(qerr.CodeInvalidColumn, "column %q of %q is %s, not text: pattern_filter matches text", field, d.ID, f[0].Type).
			With("field", "field").WithHint("use filters with eq/in/range on non-text columns")
	}
	key := fmt.Sprintf("%s\x00%s\x00%d\x00%d\x00%s", d.AbsPath, d.ID, d.SizeBytes, d.ModTime.UnixNano(), field)
	if dict, ok := s.patterns.Get(key); ok {
		return dict, nil
	}
	dict := &patternDict{}
	err := s.eachDistinctText(ctx, d, field, func(v string, n int64) error {
		if len(dict.values) >= MaxPatternDistinct {
			return qerr.New(qerr.ErrLimitExceeded, qerr.CodeResourceExhausted, "column %q of %q has more than %d distinct values", field, d.ID, MaxPatternDistinct).
				WithHint("pattern_filter is for label-like columns; filter free text with contains or regex")
		}
		dict.values = append(dict.values, v)
		dict.counts = append(dict.counts, n)
		dict.rows += n
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := dict.prepare(ctx); err != nil {
		return nil, err
	}
	s.patterns.Add(key, dict)
	return dict, nil
}

// prepare normalizes every value, in parallel on every core.
func (dict *patternDict) prepare(ctx context.Context) error {
	dict.texts = make([]textmatch.Text, len(dict.values))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(dict.values)/1024))
	chunk := (len(dict.values) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < len(dict.values); lo += chunk {
		hi := min(lo+chunk, len(dict.values))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi && ctx.Err() == nil; i++ {
				dict.texts[i] = textmatch.Prepare(dict.values[i])
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return qerr.As(err)
	}
	return nil
}

func isText(t arrow.DataType) bool {
	switch t := t.(type) {
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return true
	case *arrow.DictionaryType:
		return isText(t.ValueType)
	}
	return false
}

// eachDistinctText streams the distinct non-null values of a text column
// with their row counts (the distinct_values query, unordered: the engine
// hashes dictionary-encoded columns by dictionary entry), batch by batch.
func (s *Service) eachDistinctText(ctx context.Context, d *catalog.Dataset, field string, fn func(v string, n int64) error) error {
	q, err := s.prepare(ctx, d, distinctSpec(d, field, nil))
	if err != nil {
		return err
	}
	return q.stream(ctx, 0, nil, func(ctx context.Context, rr array.RecordReader) error {
		for rr.Next() {
			rec := rr.RecordBatch()
			vals, counts := rec.Column(0), rec.Column(1)
			cnt, ok := counts.(*array.Int64)
			if !ok {
				return qerr.Internal(fmt.Errorf("count column is %s", counts.DataType()), "reading distinct values")
			}
			str := textAt(vals)
			if str == nil {
				return qerr.Internal(fmt.Errorf("key column is %s", vals.DataType()), "reading distinct values")
			}
			for i := 0; i < vals.Len(); i++ {
				if vals.IsNull(i) {
					continue
				}
				if err := fn(str(i), cnt.Value(i)); err != nil {
					return err
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return rr.Err()
	})
}

// textAt returns the string accessor of a text array (nil for others).
func textAt(a arrow.Array) func(int) string {
	switch a := a.(type) {
	case *array.String:
		return a.Value
	case *array.LargeString:
		return a.Value
	case *array.StringView:
		return a.Value
	case *array.Dictionary:
		inner := textAt(a.Dictionary())
		if inner == nil {
			return nil
		}
		return func(i int) string { return inner(a.GetValueIndex(i)) }
	}
	return nil
}

// matchSet holds one verdict per value over every dataset searched.
type matchSet struct {
	list    []*patternMatch
	byValue map[string]*patternMatch // several datasets: a value's verdict, to add up its counts
}

func newMatchSet(multi bool) *matchSet {
	ms := &matchSet{}
	if multi {
		ms.byValue = map[string]*patternMatch{}
	}
	return ms
}

// classify matches every value of dict (dataset id) and merges the
// verdicts by value: a value is included when a pattern matches it in mode
// and no exclude word occurs in it; it is an exclude candidate when a
// pattern occurs only partially or an exclude word occurs.
func (ms *matchSet) classify(dict *patternDict, id string, pats, excl []textmatch.Pattern, mode textmatch.Mode) {
	for i, t := range dict.texts {
		best, bestPat := textmatch.NoMatch, -1
		for j, p := range pats {
			if v := p.Verdict(t, mode); v > best {
				best, bestPat = v, j
				if v == textmatch.Match {
					break
				}
			}
		}
		if best == textmatch.NoMatch {
			continue
		}
		var m *patternMatch
		if ms.byValue != nil {
			m = ms.byValue[dict.values[i]]
		}
		if m == nil {
			m = &patternMatch{value: dict.values[i], include: best == textmatch.Match, text: t, pat: pats[bestPat]}
			for _, x := range excl {
				if x.Verdict(t, textmatch.Permissive) == textmatch.Match {
					m.include, m.byExclude, m.pat = false, true, x
					break
				}
			}
			ms.list = append(ms.list, m)
			if ms.byValue != nil {
				ms.byValue[dict.values[i]] = m
				m.byDS = map[string]int64{}
			}
		}
		m.count += dict.counts[i]
		if m.byDS != nil {
			m.byDS[id] += dict.counts[i]
		}
	}
}

// split returns the included and the excluded matches, unordered.
func (ms *matchSet) split() (inc, exc []*patternMatch) {
	for _, m := range ms.list {
		if m.include {
			inc = append(inc, m)
		} else {
			exc = append(exc, m)
		}
	}
	return inc, exc
}

// find returns the matches of the given values (sorted).
func (ms *matchSet) find(sortedValues []string) map[string]*patternMatch {
	out := map[string]*patternMatch{}
	for _, m := range ms.list {
		if _, ok := slices.BinarySearch(sortedValues, m.value); ok {
			out[m.value] = m
		}
	}
	return out
}

// byRows orders matches most rows first, then by value.
func byRows(a, b *patternMatch) int {
	if a.count != b.count {
		return cmp.Compare(b.count, a.count)
	}
	return strings.Compare(a.value, b.value)
}

// topMatches returns the first k of ms in byRows order, without sorting
// all of them.
func topMatches(ms []*patternMatch, k int) []*patternMatch {
	if len(ms) <= k {
		out := slices.Clone(ms)
		slices.SortFunc(out, byRows)
		return out
	}
	top := slices.Clone(ms[:k])
	slices.SortFunc(top, byRows)
	for _, m := range ms[k:] {
		if byRows(m, top[k-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, m, byRows)
		copy(top[i+1:], top[i:k-1])
		top[i] = m
	}
	return top
}

// candidates lists ms with why they are candidates.
func candidates(ms []*patternMatch, mode textmatch.Mode) []PatternCandidate {
	out := make([]PatternCandidate, 0, len(ms))
	for _, m := range ms {
		out = append(out, PatternCandidate{Value: m.value, Count: m.count, Why: m.explain(mode), Datasets: m.byDS})
	}
	return out
}
