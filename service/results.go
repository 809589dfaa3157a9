package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
)

// ResultsURIPrefix starts the URIs of result pages:
// quarry://results/<handle>/pages/<n>.
const ResultsURIPrefix = "quarry://results/"

// ResultPageURI is the resource URI of page n (0-based, pages of the
// server's page size) of the result behind handle.
func ResultPageURI(handle string, n int64) string {
	return ResultsURIPrefix + handle + "/pages/" + strconv.FormatInt(n, 10)
}

// ParseResultPageURI splits quarry://results/<handle>/pages/<n>.
func ParseResultPageURI(uri string) (handle string, n int64, ok bool) {
	rest, ok := strings.CutPrefix(uri, ResultsURIPrefix)
	if !ok {
		return "", 0, false
	}
	handle, page, ok := strings.Cut(rest, "/pages/")
	if !ok || handle == "" || strings.Contains(handle, "/") {
		return "", 0, false
	}
	n, err := strconv.ParseInt(page, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != page {
		return "", 0, false
	}
	return handle, n, true
}

// ReadResultPage serves the resource quarry://results/<handle>/pages/<n>:
// rows [n×page_rows, (n+1)×page_rows) of a result handle as the JSON of a
// handle-shaped query result (data, total_rows, page_info, warnings). Only
// the principal that created the handle may read it. A page larger than
// the resource read limit is refused with a hint to page with
// query_next_page (whose pages respect the inline byte cap) instead.
func (s *Service) ReadResultPage(ctx context.Context, uri string) ([]byte, error) {
	handle, n, ok := ParseResultPageURI(uri)
	if !ok {
		return nil, qerr.NotFound(qerr.CodeResourceNotFound, "malformed result page URI %q", clipURI(uri)).
			WithHint("result pages are quarry://results/{result_handle}/pages/{n}, n = 0, 1, ... (pages of the server's page size)")
	}
	res, err := s.cfg.Materializer.ReadPage(ctx, handle, n, obs.Principal(ctx))
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, qerr.Internal(err, "encoding result page %s", uri)
	}
	if limit := s.cfg.ResourceReadLimit; int64(len(b)) > limit {
		return nil, qerr.Limit(qerr.CodeOversizeResult, "result page %d is %d bytes of JSON, more than the %d bytes a resource read returns", n, len(b), limit).
			WithHint("page with query_next_page instead (its pages respect the inline byte cap), or re-run the query with output_format=parquet")
	}
	obs.Logger(ctx).Info("result_page", "handle", handle, "page", n, "rows", res.RowCount, "total_rows", res.TotalRows)
	return b, nil
}

func clipURI(s string) string {
	if len(s) > 120 {
		return fmt.Sprintf("%s...", s[:120])
	}
	return s
}
