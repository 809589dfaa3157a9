package service

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/qerr"
)

// get_catalog pages: datasets in id order, by default CatalogDefaultLimit
// per page and no more than CatalogPageBytes of entries (a limit given
// sets the count alone, at most CatalogMaxLimit), the next page after the
// last id returned.

const (
	// CatalogDefaultLimit is get_catalog's page size when limit is not given.
	CatalogDefaultLimit = 50
	// CatalogPageBytes bounds the JSON of a default page's entries, so
	// long descriptions and tags keep the answer well under 16 KB.
	CatalogPageBytes = 8 << 10
	// CatalogMaxLimit is the largest limit get_catalog accepts.
	CatalogMaxLimit = 500
	// CatalogMaxDiagnostics is the most diagnostics one answer lists.
	CatalogMaxDiagnostics = 10
)

// cursorPrefix marks get_catalog cursors (base64url of prefix + last id).
const cursorPrefix = "after:"

// catalogCursor is the opaque cursor of the page after dataset id.
func catalogCursor(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + id))
}

// parseCatalogCursor returns the id a cursor continues after ("" for none).
func parseCatalogCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return "", qerr.Invalid(qerr.CodeInvalidArgument, "cursor %q is not a get_catalog cursor", c).With("field", "cursor").
			WithHint("pass next_cursor from the previous get_catalog answer verbatim, or omit cursor for the first page")
	}
	return strings.TrimPrefix(string(b), cursorPrefix), nil
}

// catalogLimit is the page size of req, or an error for an invalid one.
func catalogLimit(req CatalogRequest) (int, error) {
	switch {
	case req.all:
		return math.MaxInt, nil
	case req.Limit == 0:
		return CatalogDefaultLimit, nil
	case req.Limit < 0 || req.Limit > CatalogMaxLimit:
		return 0, qerr.Invalid(qerr.CodeInvalidArgument, "limit %d is outside 1..%d", req.Limit, CatalogMaxLimit).With("field", "limit").
			WithHint("omit limit for %d datasets per page, and follow next_cursor", CatalogDefaultLimit)
	}
	return req.Limit, nil
}

// queryWords splits a get_catalog query into lower-case words.
func queryWords(q string) []string { return strings.Fields(strings.ToLower(q)) }

// matchesWords reports whether every word occurs (case-insensitively) in
// one of texts.
func matchesWords(words []string, texts ...string) bool {
	for _, w := range words {
		found := false
		for _, t := range texts {
			if strings.Contains(strings.ToLower(t), w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// datasetMatches reports whether d matches the query words: each occurs in
// its id, path, or a tag key or value.
func datasetMatches(d *catalog.Dataset, words []string) bool {
	if len(words) == 0 {
		return true
	}
	texts := []string{d.ID, d.Path}
	if d.Card != nil {
		for k, v := range d.Card.Tags {
			texts = append(texts, k+"="+v)
		}
	}
	return matchesWords(words, texts...)
}

// filterDiagnostics keeps the diagnostics whose path or reason holds every
// query word, at most CatalogMaxDiagnostics of them, and returns how many
// matched in all.
func filterDiagnostics(ds []catalog.Diagnostic, words []string) ([]catalog.Diagnostic, int) {
	var out []catalog.Diagnostic
	n := 0
	for _, d := range ds {
		if !matchesWords(words, d.Path, d.Reason) {
			continue
		}
		n++
		if len(out) < CatalogMaxDiagnostics {
			out = append(out, d)
		}
	}
	return out, n
}

// pageCatalog cuts out's matching datasets (sorted by id) to the page req
// asks for and sets the page fields.
func pageCatalog(out *CatalogResponse, req CatalogRequest) error {
	limit, err := catalogLimit(req)
	if err != nil {
		return err
	}
	after, err := parseCatalogCursor(req.Cursor)
	if err != nil {
		return err
	}
	out.Matching = len(out.Datasets)
	lo := 0
	if after != "" {
		for lo < len(out.Datasets) && out.Datasets[lo].ID <= after {
			lo++
		}
	}
	hi := lo + min(limit, len(out.Datasets)-lo)
	if req.Limit == 0 && !req.all {
		size := 0
		for i := lo; i < hi; i++ {
			b, _ := json.Marshal(&out.Datasets[i])
			if size += len(b) + 1; size > CatalogPageBytes && i > lo {
				hi = i
				break
			}
		}
	}
	if hi < len(out.Datasets) {
		out.NextCursor = catalogCursor(out.Datasets[hi-1].ID)
	}
	out.Datasets = out.Datasets[lo:hi]
	if after != "" {
		out.Diagnostics, out.DiagnosticsTotal = nil, 0 // listed on the first page
	}
	return nil
}
