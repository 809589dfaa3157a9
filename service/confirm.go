package service

import (
	"fmt"
)

// confirmEnabled reports whether big queries are confirmed first.
func (s *Service) confirmEnabled() bool { return s.cfg.ConfirmRows > 0 || s.cfg.ConfirmBytes > 0 }

// overThreshold reports whether an estimate needs the user's confirmation.
func (s *Service) overThreshold(rows, bytes int64) bool {
	return (s.cfg.ConfirmRows > 0 && rows > s.cfg.ConfirmRows) || (s.cfg.ConfirmBytes > 0 && bytes > s.cfg.ConfirmBytes)
}

// ConfirmThresholds returns the effective confirmation thresholds (0: that
// threshold is off).
func (s *Service) ConfirmThresholds() (rows, bytes int64) {
	return max(s.cfg.ConfirmRows, 0), max(s.cfg.ConfirmBytes, 0)
}

// needsConfirmation builds the needs_confirmation answer for est.
func (s *Service) needsConfirmation(est *estimation, tool string, req QueryRequest) *QueryResponse {
	rows, bytes := s.ConfirmThresholds()
	caps := s.cfg.Materializer.Caps()
	first := ConfirmOption{Choice: ChoiceFirstPage}
	if tool == "aggregate" {
		// An aggregate must read every row anyway; "first page" pages the groups.
		first.Description = fmt.Sprintf("Compute it and return only the first page (%d groups) with a result handle for more", caps.PageRows)
		first.Args = map[string]any{"confirm": true, "output_format": "json"}
	} else {
		n := caps.MaxRows
		if req.Limit != nil && *req.Limit < n {
			n = *req.Limit
		}
		first.Description = fmt.Sprintf("Return only the first %d rows (inline)", n)
		first.Args = map[string]any{"confirm": true, "limit": n}
	}
	return &QueryResponse{
		Status: StatusNeedsConfirmation,
		Estimate: &ConfirmEstimate{RowEstimate: est.rows, ByteEstimate: est.bytes, EstimateKind: est.kind,
			ConfirmRows: rows, ConfirmBytes: bytes},
		Options: []ConfirmOption{
			{Choice: ChoiceParquet, Description: fmt.Sprintf("Run it and deliver all ~%d rows as a Parquet file resource", est.rows),
				Args: map[string]any{"confirm": true, "output_format": "parquet"}},
			first,
			{Choice: ChoiceCancel, Description: "Do not run it; narrow the query (filters, aggregates, a limit) instead"},
		},
		Hint: fmt.Sprintf("This %s call was NOT run: its result is estimated at ~%d rows (~%s as JSON), above the confirmation threshold. "+
			"Ask the user which option they want, then call %s again with the same arguments plus that option's args; or narrow the query.",
			tool, est.rows, humanBytes(est.bytes), tool),
	}
}

// humanBytes formats n as B, KiB, MiB, ...
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
