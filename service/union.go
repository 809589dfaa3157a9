package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"go.opentelemetry.io/otel/attribute"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/safeopen"
	"github.com/quarrydb/quarry/internal/tracing"
	"github.com/quarrydb/quarry/planner"
)

// UnionColumn is the column that names each row's dataset in a query_data
// over several datasets.
const UnionColumn = "_dataset"

// maxUnionDatasets bounds the datasets one query_data call reads (the
// bound of a pattern_filter search, whose token such a query applies).
const maxUnionDatasets = maxPatternDatasets

// queryUnion is query_data with datasets: the spec runs over the rows of
// every dataset (UNION ALL of the columns they all have, plus
// UnionColumn). The filters run in each dataset's branch (so a filter
// token is checked against each dataset); everything else of the spec
// runs over the union. A file replaced while the query ran is looked up
// again once, as for one dataset.
func (s *Service) queryUnion(ctx context.Context, req QueryRequest, tool string) (*QueryResponse, error) {
	for attempt := 0; ; attempt++ {
		start := time.Now()
		q, d, err := s.prepareUnion(ctx, req.Datasets, req.Spec)
		if err != nil {
			return nil, err
		}
		out, err := s.runPrepared(ctx, d, q, req, tool, start)
		if attempt > 0 || !errors.Is(err, safeopen.ErrReplaced) || ctx.Err() != nil {
			return out, err
		}
		obs.Logger(ctx).Info("data file replaced while the query ran; looking the datasets up again", "datasets", req.Datasets)
	}
}

// unionInputs looks up the datasets of a union query, checking the list.
func (s *Service) unionInputs(ctx context.Context, ids []string) ([]*catalog.Dataset, error) {
	if len(ids) > maxUnionDatasets {
		return nil, qerr.New(qerr.ErrLimitExceeded, qerr.CodeInvalidArgument, "datasets names %d datasets; at most %d", len(ids), maxUnionDatasets).
			With("field", "datasets").WithHint("query fewer datasets per call")
	}
	ds := make([]*catalog.Dataset, 0, len(ids))
	seen := map[string]bool{}
	for i, id := range ids {
		d, err := s.lookup(ctx, id)
		if err != nil {
			var qe *qerr.Error
			if errors.As(err, &qe) {
				qe.With("field", fmt.Sprintf("datasets[%d]", i))
			}
			return nil, err
		}
		if seen[d.ID] {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "datasets names %s twice", d.ID).With("field", "datasets").
				WithHint("list each dataset once")
		}
		seen[d.ID] = true
		ds = append(ds, d)
	}
	return ds, nil
}

// unionColumns returns the columns every schema has, in the first
// schema's order, with types that unify; dropped explains the others.
func unionColumns(names []string, schemas []*arrow.Schema) (common []string, dropped map[string]string) {
	dropped = map[string]string{}
	for _, f := range schemas[0].Fields() {
		typ := f.Type
		for i, sc := range schemas[1:] {
			idx := sc.FieldIndices(f.Name)
			if len(idx) != 1 {
				dropped[f.Name] = "not in " + names[i+1]
				break
			}
			u, ok := planner.UnifyTypes(typ, sc.Field(idx[0]).Type)
			if !ok {
				dropped[f.Name] = fmt.Sprintf("%s in %s but %s in %s", f.Type, names[0], sc.Field(idx[0]).Type, names[i+1])
				break
			}
			typ = u
		}
		if _, ok := dropped[f.Name]; !ok {
			common = append(common, f.Name)
		}
	}
	for _, sc := range schemas[1:] {
		for _, f := range sc.Fields() {
			if _, ok := dropped[f.Name]; !ok && !slices.Contains(common, f.Name) {
				dropped[f.Name] = "not in " + names[0]
			}
		}
	}
	return common, dropped
}

// prepareUnion plans spec over the union of the datasets ids. The
// returned dataset stands for the union in logs and the confirmation
// preflight (its row count is the sum).
func (s *Service) prepareUnion(ctx context.Context, ids []string, spec planner.Spec) (*preparedQuery, *catalog.Dataset, error) {
	ctx, span := tracing.Start(ctx, "plan", attribute.Int("quarry.union_datasets", len(ids)))
	defer span.End()
	ds, err := s.unionInputs(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	ins := make([]planner.Input, len(ds))
	schemas := make([]*arrow.Schema, len(ds))
	names := make([]string, len(ds))
	sources := map[string]catalog.Source{}
	var total int64
	for i, d := range ds {
		src := s.cfg.Cache.Wrap(d)
		ins[i] = planner.Input{Dataset: d.ID, Schema: colcache.PlanSchema(src, d), RowCount: d.RowCount, RowCountExact: d.RowCountExact}
		schemas[i], names[i], sources[d.ID] = ins[i].Schema, d.ID, src
		total += d.RowCount
		if ins[i].Schema.HasField(UnionColumn) {
			return nil, nil, qerr.Invalid(qerr.CodeInvalidArgument, "dataset %s has a column named %s, which a query over several datasets adds", d.ID, UnionColumn).
				With("field", "datasets").WithHint("query that dataset on its own (dataset instead of datasets)")
		}
	}
	common, dropped := unionColumns(names, schemas)
	var union planner.Node
	for i, d := range ds {
		f, err := s.resolveFilterTokens(d.ID, planner.Spec{Filters: spec.Filters})
		if err != nil {
			return nil, nil, err
		}
		cols := append(slices.Clip(common), planner.QuoteString(d.ID)+" AS "+UnionColumn)
		branch, err := planner.Build(planner.Spec{Columns: cols, Filters: f.Filters}, ins[i])
		if err != nil {
			return nil, nil, unionError(err, d.ID, dropped)
		}
		if union == nil {
			union = branch
		} else if union, err = planner.NewSetOp(planner.SetUnion, true, union, branch); err != nil {
			return nil, nil, err
		}
	}
	outer := spec
	outer.Filters = nil
	joins, jsrcs, err := s.joinInputs(ctx, outer)
	if err != nil {
		return nil, nil, err
	}
	for id, src := range jsrcs {
		sources[id] = src
	}
	in := planner.Input{Dataset: "datasets", Schema: union.Schema(), Node: union, RowCount: total, RowCountExact: true, Joins: joins}
	plan, err := planner.Build(outer, in)
	if err != nil {
		return nil, nil, unionError(err, "", dropped)
	}
	if plan, err = planner.Optimize(plan, planner.OptimizeOptions{}); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, qerr.As(err)
	}
	q := &preparedQuery{s: s, spec: spec, src: sources[ds[0].ID], plan: plan, rows: total, joins: joins, sources: sources}
	return q, &catalog.Dataset{ID: strings.Join(names, "+"), RowCount: total, RowCountExact: true}, nil
}

// unionError adds to a column error of a union query the dataset it
// came from and why a column the datasets do not all share is missing.
func unionError(err error, dataset string, dropped map[string]string) error {
	var qe *qerr.Error
	if !errors.As(err, &qe) || qe.Code != qerr.CodeInvalidColumn {
		return err
	}
	if dataset != "" {
		qe.With("dataset", dataset)
	}
	col, _ := qe.Diagnostics["column"].(string)
	if why, ok := dropped[col]; ok {
		qe.WithHint("a query over several datasets sees only the columns all of them have; %s is %s", col, why)
	}
	return err
}
