package service

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/textmatch"
)

// proposePattern answers a call without a confirmation: confirmed with a
// token when the match set is clear, needs_confirmation with candidates
// otherwise (doubtful values, nothing matched, or a wide match: more than
// wideMatchValues values, or a share of the distinct values or of the
// rows above threshold).
func (s *Service) proposePattern(req PatternFilterRequest, mode textmatch.Mode, threshold float64, rows int64,
	matches *matchSet, out *PatternFilterResponse) error {
	inc, exc := matches.split()
	var incRows int64
	for _, m := range inc {
		incRows += m.count
	}
	out.Diagnostics.MatchedRows = incRows
	var reasons []string
	if len(exc) > 0 {
		reasons = append(reasons, fmt.Sprintf("%d value(s) contain the words only inside longer words, in another form or with an exclude word (listed under exclude)", len(exc)))
	}
	switch distinct := out.Diagnostics.DistinctScanned; {
	case len(inc) == 0:
		reasons = append(reasons, "no value matches in "+out.Mode+" mode")
	case len(inc) > wideMatchValues:
		reasons = append(reasons, fmt.Sprintf("the match is wide: %d values", len(inc)))
	case float64(len(inc)) > threshold*float64(distinct) || float64(incRows) > threshold*float64(rows):
		reasons = append(reasons, fmt.Sprintf("the match is wide: %d of %d values, %d of %d rows (confirm_threshold %g)", len(inc), distinct, incRows, rows, threshold))
	}
	if len(reasons) == 0 {
		slices.SortFunc(inc, byRows)
		values := make([]string, len(inc))
		for i, m := range inc {
			values[i] = m.value
		}
		out.Notes = append(out.Notes, fmt.Sprintf("every value that matched is clear: %d value(s)", len(values)))
		return s.confirmedAnswer(req.Field, out.Diagnostics.Datasets, values, incRows, out)
	}
	out.Status = PatternNeedsConfirmation
	topInc, topExc := topMatches(inc, maxCandidatesListed), topMatches(exc, maxCandidatesListed)
	out.Candidates = &PatternCandidates{Include: candidates(topInc, mode), Exclude: candidates(topExc, mode)}
	if len(inc) > maxCandidatesListed || len(exc) > maxCandidatesListed {
		out.Notes = append(out.Notes, fmt.Sprintf("only the %d values with the most rows of each list are shown", maxCandidatesListed))
	}
	next := req
	next.Confirmed = &PatternConfirmation{Include: valuesOf(topInc), Exclude: valuesOf(topExc)}
	out.NextCall = &PatternNextCall{Tool: "pattern_filter", Arguments: &next}
	out.Question = fmt.Sprintf("Which values of %q should the filter keep? %s. Proposed: the %d include value(s) (%d rows); "+
		"the exclude candidates are left out unless the user picks them. Ask the user, then call next_call with confirmed.include set to their choice.",
		req.Field, strings.Join(reasons, "; "), len(inc), incRows)
	if len(inc) == 0 && len(exc) == 0 {
		out.Question = fmt.Sprintf("No value of %q contains %s. Ask the user for other words, or try mode permissive.", req.Field, quoteAll(req.Patterns))
		out.NextCall = nil
	}
	return nil
}

// valuesOf lists the values of ms.
func valuesOf(ms []*patternMatch) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.value
	}
	return out
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// confirmPattern answers a call with the user's confirmed lists: every
// included value must be a value of the field in one of the datasets; the
// token keeps exactly those values.
func (s *Service) confirmPattern(req PatternFilterRequest, ids []string, dicts []*patternDict, matches *matchSet, out *PatternFilterResponse) error {
	c := req.Confirmed
	if len(c.Include) == 0 {
		return qerr.Invalid(qerr.CodeInvalidArgument, "confirmed.include is empty: nothing to filter on").With("field", "confirmed.include").
			WithHint("include at least one value the user chose; to cancel, do not call pattern_filter again")
	}
	if len(c.Include) > MaxFilterTokenValues {
		return qerr.New(qerr.ErrLimitExceeded, qerr.CodeInvalidArgument, "confirmed.include has %d values; a filter token holds at most %d", len(c.Include), MaxFilterTokenValues).
			With("field", "confirmed.include").WithHint("narrow the patterns")
	}
	include := slices.Clone(c.Include)
	slices.Sort(include)
	include = slices.Compact(include)
	for _, v := range c.Exclude {
		if _, found := slices.BinarySearch(include, v); found {
			return qerr.Invalid(qerr.CodeInvalidArgument, "%q is both in confirmed.include and confirmed.exclude", v).With("field", "confirmed")
		}
	}
	counts := make(map[string]int64, len(include))
	for _, d := range dicts {
		for i, v := range d.values {
			if _, found := slices.BinarySearch(include, v); found {
				counts[v] += d.counts[i]
			}
		}
	}
	var unknown, unmatched []string
	var rows int64
	found := matches.find(include)
	for _, v := range include {
		n, ok := counts[v]
		if !ok {
			unknown = append(unknown, v)
		}
		rows += n
		if m := found[v]; ok && (m == nil || !m.include) {
			unmatched = append(unmatched, v)
		}
	}
	if len(unknown) > 0 {
		return qerr.Invalid(qerr.CodeInvalidArgument, "confirmed.include has %d value(s) that %q never takes in %s: %s", len(unknown), req.Field,
			strings.Join(ids, ", "), quoteAll(unknown[:min(len(unknown), 5)])).With("field", "confirmed.include").
			WithHint("copy values verbatim from the candidates of the needs_confirmation answer")
	}
	if len(unmatched) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d confirmed value(s) were not proposed for inclusion by the patterns (kept, as the user chose)", len(unmatched)))
	}
	out.Diagnostics.MatchedRows = rows
	return s.confirmedAnswer(req.Field, ids, include, rows, out)
}

// confirmedAnswer fills out as confirmed with a token for field in values.
func (s *Service) confirmedAnswer(field string, ids, values []string, rows int64, out *PatternFilterResponse) error {
	if len(values) > MaxFilterTokenValues {
		return qerr.New(qerr.ErrLimitExceeded, qerr.CodeInvalidArgument, "%d values match; a filter token holds at most %d", len(values), MaxFilterTokenValues).
			With("field", "patterns").WithHint("use more specific patterns, strict mode or exclude words")
	}
	exp := time.Now().Add(FilterTokenTTL)
	tok, err := s.filterKeys.sign(filterClaims{Datasets: ids, Col: field, Op: "in", Values: values, Expires: exp.Unix()})
	if err != nil {
		return err
	}
	out.Status = PatternConfirmed
	out.FilterToken = tok
	out.Filter = &PatternFilterExplained{Col: field, Op: "in", Value: values}
	out.ExpiresAt = exp.UTC().Format(time.RFC3339)
	out.Diagnostics.Matched = rows
	return nil
}
