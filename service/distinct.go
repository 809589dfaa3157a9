package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/planner"
)

// Distinct value limits.
const (
	// DefaultDistinctLimit is distinct_values' limit when none is given.
	DefaultDistinctLimit = 50
	// MaxDistinctLimit is the largest limit distinct_values accepts.
	MaxDistinctLimit = 1000
)

// distinctEntry is a cached distinct_values computation: the first
// MaxDistinctLimit values with count >= minCount, and the totals.
type distinctEntry struct {
	values     []ValueCount
	qualifying int64 // non-null values with count >= minCount
	total      int64 // distinct non-null values
	nulls      int64
}

// DistinctValues counts the distinct values of one column (distinct_values),
// most frequent first. Results are cached per dataset file version, column,
// filters and min_count.
func (s *Service) DistinctValues(ctx context.Context, req DistinctRequest) (*DistinctResponse, error) {
	limit := int64(DefaultDistinctLimit)
	if req.Limit != nil {
		limit = *req.Limit
	}
	if limit < 1 || limit > MaxDistinctLimit {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "limit must be between 1 and %d, got %d", MaxDistinctLimit, limit).
			With("field", "limit").WithHint("omit limit for the default (%d)", DefaultDistinctLimit)
	}
	if req.MinCount < 0 {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "min_count must be >= 0, got %d", req.MinCount).With("field", "min_count")
	}
	if strings.TrimSpace(req.Column) == "" {
		return nil, qerr.Invalid(qerr.CodeInvalidColumn, "column is required").With("field", "column").
			WithHint("name the column whose values you want; get_schema lists them")
	}
	return onDataset(ctx, s, req.Dataset, func(d *catalog.Dataset) (*DistinctResponse, error) {
		return s.distinctOn(ctx, d, req, limit)
	})
}

// distinctOn is DistinctValues for dataset d.
func (s *Service) distinctOn(ctx context.Context, d *catalog.Dataset, req DistinctRequest, limit int64) (*DistinctResponse, error) {
	if !d.Schema.HasField(req.Column) {
		names := columnNames(d.Schema)
		return nil, qerr.Invalid(qerr.CodeInvalidColumn, "dataset %q has no column %q", d.ID, req.Column).
			With("field", "column").With("column", req.Column).With("suggestions", qerr.Suggest(req.Column, names, 3)).
			WithHint("valid columns: %s", listNames(names, 30))
	}
	start := time.Now()
	// Filter tokens are checked before the cache: a cached answer must not
	// outlive its token.
	if _, err := s.resolveFilterTokens(d.ID, planner.Spec{Filters: req.Filters}); err != nil {
		return nil, err
	}
	key, err := distinctKey(d, req)
	if err != nil {
		return nil, err
	}
	e, cached := s.distinct.Get(key)
	if !cached {
		if e, err = s.computeDistinct(ctx, d, req); err != nil {
			return nil, err
		}
		s.distinct.Add(key, e)
	}
	out := &DistinctResponse{Dataset: d.ID, Column: req.Column, Values: e.values, TotalDistinct: e.total, NullCount: e.nulls,
		Truncated: e.qualifying > limit}
	if int64(len(out.Values)) > limit {
		out.Values = out.Values[:limit]
	}
	if out.Values == nil {
		out.Values = []ValueCount{}
	}
	obs.Logger(ctx).Info("distinct_values", "dataset", d.ID, "column", req.Column, "cached", cached,
		"total_distinct", e.total, "returned", len(out.Values), "truncated", out.Truncated, "duration_ms", time.Since(start).Milliseconds())
	return out, nil
}

// distinctKey identifies a distinct_values computation: the file version,
// the column, the filters (as JSON) and min_count.
func distinctKey(d *catalog.Dataset, req DistinctRequest) (string, error) {
	f, err := json.Marshal(req.Filters)
	if err != nil {
		return "", qerr.Invalid(qerr.CodeInvalidFilter, "filters are not valid JSON: %v", err)
	}
	return fmt.Sprintf("%s\x00%s\x00%d\x00%d\x00%s\x00%s\x00%d", d.AbsPath, d.ID, d.SizeBytes, d.ModTime.UnixNano(), req.Column, f, req.MinCount), nil
}

// computeDistinct runs group_by column + count(*) ordered by count
// descending then value, and keeps what distinct_values can return.
func (s *Service) computeDistinct(ctx context.Context, d *catalog.Dataset, req DistinctRequest) (*distinctEntry, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	spec := distinctSpec(d, req.Column, req.Filters)
	spec.OrderBy = []planner.OrderSpec{{Col: spec.Aggs[0].As, Desc: true}, {Col: req.Column}}
	q, err := s.prepare(ctx, d, spec)
	if err != nil {
		return nil, err
	}
	t, err := q.run(ctx, 0)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	e := &distinctEntry{}
	// Walk the groups (count descending) in chunks of JSON records, typed
	// as in query results.
	names := materialize.ColumnNames(t.Schema())
	const chunk = 8192
	for off := int64(0); off < t.NumRows(); off += chunk {
		raw, _, err := materialize.EncodeRecords(ctx, t, off, chunk, 0)
		if err != nil {
			return nil, err
		}
		var recs []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &recs); err != nil {
			return nil, qerr.Internal(err, "decoding distinct values")
		}
		for _, rec := range recs {
			var n int64
			if err := json.Unmarshal(rec[names[1]], &n); err != nil {
				return nil, qerr.Internal(err, "decoding a count")
			}
			v := rec[names[0]]
			if len(v) == 0 || string(v) == "null" {
				e.nulls = n
				continue
			}
			e.total++
			if n >= req.MinCount {
				e.qualifying++
				if len(e.values) < MaxDistinctLimit {
					e.values = append(e.values, ValueCount{Value: v, Count: n})
				}
			}
		}
	}
	return e, nil
}

// distinctSpec is the query counting the rows of each distinct value of
// column (rows passing filters): group by column, count(*) under a name no
// column of d has.
func distinctSpec(d *catalog.Dataset, column string, filters []planner.FilterSpec) planner.Spec {
	countName := "count_all"
	for d.Schema.HasField(countName) || column == countName {
		countName += "_"
	}
	return planner.Spec{
		Filters: filters,
		GroupBy: []string{column},
		Aggs:    []planner.AggSpec{{Col: "*", Fn: planner.AggCount, As: countName}},
	}
}

// listNames joins up to n names, noting how many were left out.
func listNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, ... (%d more; get_schema lists them)", strings.Join(names[:n], ", "), len(names)-n)
}
