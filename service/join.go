package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/planner"
)

// joinInputs resolves the datasets of spec.Join: one planner input per
// join (in order) and the sources to read them from (through the column
// cache, like the query's own dataset), by dataset id. An unknown dataset
// is dataset_not_found with did-you-mean suggestions over the catalog ids,
// naming the join in its "field" diagnostic.
func (s *Service) joinInputs(ctx context.Context, spec planner.Spec) ([]planner.Input, map[string]catalog.Source, error) {
	if len(spec.Join) == 0 {
		return nil, nil, nil
	}
	ins := make([]planner.Input, len(spec.Join))
	srcs := make(map[string]catalog.Source, len(spec.Join))
	for i, j := range spec.Join {
		field := fmt.Sprintf("join[%d].dataset", i)
		if j.Dataset == "" {
			return nil, nil, qerr.Invalid(qerr.CodeInvalidArgument, "%s is required", field).With("field", field).
				WithHint("name the dataset to join (an id from get_catalog)")
		}
		d, err := s.lookup(ctx, j.Dataset)
		if err != nil {
			var qe *qerr.Error
			if errors.As(err, &qe) && qe.Code == qerr.CodeDatasetNotFound {
				qe.With("field", field)
			}
			return nil, nil, err
		}
		src := s.cfg.Cache.Wrap(d)
		ins[i] = planner.Input{Dataset: d.ID, Schema: colcache.PlanSchema(src, d), RowCount: d.RowCount, RowCountExact: d.RowCountExact}
		srcs[d.ID] = src
	}
	return ins, srcs, nil
}

// crossRows is the row count of the cross joins of spec over mainRows rows
// (the product of the catalog row counts), or 0 when spec has no cross
// join or aggregates its rows (the result size is then the aggregate's).
// A join with a where condition and no on keys counts as a cross join
// (its result is at most the product).
func crossRows(spec planner.Spec, mainRows int64, ins []planner.Input) int64 {
	if len(spec.Aggs) > 0 || len(spec.GroupBy) > 0 {
		return 0
	}
	rows, cross := mainRows, false
	for i, j := range spec.Join {
		keyless := len(j.On) == 0 && j.Type != planner.JoinSemi && j.Type != planner.JoinAnti // a pure inequality join tests every pair
		if j.Type != planner.JoinCross && !keyless || i >= len(ins) {
			continue
		}
		cross = true
		if r := ins[i].RowCount; r > 0 && rows > (1<<62)/r {
			rows = 1 << 62
		} else {
			rows *= r
		}
	}
	if !cross {
		return 0
	}
	return rows
}

// estimateFormula is the kind of an estimate computed from catalog row
// counts instead of by running the query (big cross joins).
const estimateFormula = "formula"

// crossEstimate sizes a query whose cross joins make more than SampleRows
// rows from the catalog row counts (crossRows) instead of running it: it
// runs only the first 1,000 rows of the result, for the preview and the
// bytes per row. ok is false when the query has no such cross join.
func (q *preparedQuery) crossEstimate(ctx context.Context) (est *estimation, ok bool, err error) {
	rows := crossRows(q.spec, q.rows, q.joins)
	if rows <= q.s.cfg.SampleRows {
		return nil, false, nil
	}
	head := *q
	head.plan = &planner.Limit{Input: q.plan, Count: 1000}
	t, err := head.run(ctx, 0)
	if err != nil {
		return nil, true, err
	}
	est = &estimation{table: t, plan: q.plan, kind: estimateFormula, rows: extrapolate(rows, 0, rows, q.spec)}
	if est.bytes, err = jsonBytes(t, est.rows); err != nil {
		t.Release()
		return nil, true, err
	}
	return est, true, nil
}
