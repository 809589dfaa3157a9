package service

import (
	"net/url"
	"sort"
	"strings"
)

// MaxCompletions is the most values a completion returns (the MCP limit).
const MaxCompletions = 100

// CompleteDatasets returns dataset ids matching a partial value: ids
// starting with it first (case-insensitive), then ids containing it; and
// the total number of matches. A percent-encoded value (from a URI) is
// decoded first.
func (s *Service) CompleteDatasets(partial string) ([]string, int) {
	ids := make([]string, 0)
	for _, d := range s.cfg.Catalog.Datasets() {
		ids = append(ids, d.ID)
	}
	return complete(ids, partial)
}

// CompleteColumns returns the columns of dataset matching a partial
// value (nil when the dataset is unknown), and the total number of matches.
func (s *Service) CompleteColumns(dataset, partial string) ([]string, int) {
	if dec, err := url.PathUnescape(dataset); err == nil {
		dataset = dec
	}
	d, err := s.cfg.Catalog.Lookup(dataset)
	if err != nil {
		return nil, 0
	}
	return complete(columnNames(d.Schema), partial)
}

func complete(cands []string, partial string) ([]string, int) {
	if dec, err := url.PathUnescape(partial); err == nil {
		partial = dec
	}
	p := strings.ToLower(partial)
	var prefix, inner []string
	for _, c := range cands {
		lc := strings.ToLower(c)
		switch {
		case strings.HasPrefix(lc, p):
			prefix = append(prefix, c)
		case strings.Contains(lc, p):
			inner = append(inner, c)
		}
	}
	sort.Strings(prefix)
	sort.Strings(inner)
	out := append(prefix, inner...)
	total := len(out)
	if len(out) > MaxCompletions {
		out = out[:MaxCompletions]
	}
	if out == nil {
		out = []string{}
	}
	return out, total
}
