package service

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"go.opentelemetry.io/otel/attribute"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/engine"
	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/internal/obs"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/safeopen"
	"github.com/quarrydb/quarry/internal/tracing"
	"github.com/quarrydb/quarry/materialize"
	"github.com/quarrydb/quarry/planner"
)

// preparedQuery is one query made ready to run, built once: the source it
// reads (a dataset through the column cache, or an in-memory table) and
// the optimized plan. Its runs (estimate, run, profiled run, explain) all
// execute that plan; a run over a sample and progress reporting only wrap
// the source (see source).
type preparedQuery struct {
	s       *Service
	spec    planner.Spec
	dataset string         // the main dataset's id (empty: constant rows)
	src     catalog.Source // what the plan's scan of dataset reads
	plan    planner.Node
	rows    int64 // rows of the input (row_count; for progress and sampling)
	// joins are the inputs of the datasets spec.Join joins, sources
	// their sources by dataset id (see joinInputs).
	joins   []planner.Input
	sources map[string]catalog.Source
	// input is the main dataset's schema (nil: constant rows) and round
	// the significant digits of computed float columns (0: off; round.go).
	input *arrow.Schema
	round int
}

// prepare plans spec over dataset d, read through the column cache (and
// planned against the types the cache holds its columns in).
func (s *Service) prepare(ctx context.Context, d *catalog.Dataset, spec planner.Spec) (*preparedQuery, error) {
	src := s.cfg.Cache.Wrap(d) // d.Source when there is no cache
	pushdown, _ := src.(planner.FilterPushdowner)
	in := planner.Input{Dataset: d.ID, Schema: colcache.PlanSchema(src, d), RowCount: d.RowCount, RowCountExact: d.RowCountExact}
	return s.prepareOn(ctx, in, src, pushdown, spec)
}

// prepareOn plans spec against in (read from src) and optimizes the plan:
// filters go into sources that take them (pushdown, may be nil), zone
// filters to sources that skip batches with them.
func (s *Service) prepareOn(ctx context.Context, in planner.Input, src catalog.Source, pushdown planner.FilterPushdowner, spec planner.Spec) (*preparedQuery, error) {
	ctx, span := tracing.Start(ctx, "plan", attribute.String("quarry.dataset", in.Dataset))
	defer span.End()
	spec, err := s.resolveFilterTokens(in.Dataset, spec)
	if err != nil {
		return nil, err
	}
	joins, sources, err := s.joinInputs(ctx, spec)
	if err != nil {
		return nil, err
	}
	in.Joins = joins
	plan, err := planner.Build(spec, in)
	if err != nil {
		return nil, err
	}
	opts := planner.OptimizeOptions{Pushdown: pushdown}
	opts.Zones, _ = src.(planner.ZoneFilterer)
	if len(sources) > 0 {
		opts.Sources = scanSources(sources) // the joined datasets'
		opts.Sources[in.Dataset] = planner.SourceOptions{Pushdown: pushdown, Zones: opts.Zones}
	}
	if plan, err = planner.Optimize(plan, opts); err != nil {
		return nil, err
	}
	scanned := map[string]catalog.Source{in.Dataset: src}
	for id, s := range sources {
		scanned[id] = s
	}
	if plan, err = pushRemote(plan, scanned); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil { // planning used up the request's time
		return nil, qerr.As(err)
	}
	return &preparedQuery{s: s, spec: spec, dataset: in.Dataset, src: src, plan: plan, rows: in.RowCount, joins: joins, sources: sources, input: in.Schema}, nil
}

// source is what one run reads: the prepared source, cut to its first
// sample rows when sample > 0, reporting progress to the context's
// progress function (WithProgress), if any.
func (q *preparedQuery) source(ctx context.Context, sample int64) catalog.Source {
	src, total := q.src, q.rows
	if src == nil {
		return nil // a plan of constant rows reads no source
	}
	if sample > 0 {
		src = headSource{src: src, rows: sample}
		total = min(total, sample)
	}
	if fn := progressFrom(ctx); fn != nil {
		src = &progressSource{src: src, total: total, report: fn}
	}
	return src
}

// stream executes the plan (over the first sample rows when sample > 0)
// under the query timeout and memory budget, and hands the reader to
// consume. prof, when not nil, collects per-operator statistics. Context
// errors become the qerr timeout and cancelled errors.
func (q *preparedQuery) stream(ctx context.Context, sample int64, prof *engine.Profile, consume func(context.Context, array.RecordReader) error) error {
	return q.streamAdmitted(ctx, sample, prof, nil, consume)
}

// streamAdmitted is stream entering the server-wide memory pool as adm
// says (nil: the defaults; see requeued).
func (q *preparedQuery) streamAdmitted(ctx context.Context, sample int64, prof *engine.Profile, adm *engine.Admission,
	consume func(context.Context, array.RecordReader) error) error {
	ctx, cancel := q.s.withDeadline(ctx)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return qerr.As(err)
	}
	ctx, span := tracing.Start(ctx, "execute")
	defer span.End()
	opts := q.engineOptions(prof)
	opts.Admission = adm
	rr, err := engine.Execute(ctx, q.plan, q.source(ctx, sample), opts)
	if err == nil {
		rr = newRoundReader(rr, q.s.cfg.Alloc, q.input, q.round)
		err = consume(ctx, rr)
		rr.Release()
	}
	return ctxErr(ctx, err)
}

func (q *preparedQuery) engineOptions(prof *engine.Profile) engine.Options {
	return engine.Options{Alloc: q.s.cfg.Alloc, MemoryLimit: q.s.cfg.QueryMemory, Pool: q.s.pool, Profile: prof,
		Sources: q.sources, SpillDir: q.s.cfg.Artifacts.Dir(), Spilled: &q.s.spilled}
}

// run executes the query (over the first sample rows when sample > 0) and
// collects the result (big results spill to disk).
func (q *preparedQuery) run(ctx context.Context, sample int64) (*materialize.Table, error) {
	return q.collect(ctx, sample, nil)
}

func (q *preparedQuery) collect(ctx context.Context, sample int64, prof *engine.Profile) (*materialize.Table, error) {
	var t *materialize.Table
	err := q.requeued(ctx, func(ctx context.Context, adm *engine.Admission) error {
		return q.streamAdmitted(ctx, sample, prof, adm, func(ctx context.Context, rr array.RecordReader) error {
			var err error
			t, err = q.s.cfg.Materializer.Collect(ctx, rr, obs.Principal(ctx))
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// analyze runs the whole query with per-operator statistics.
func (q *preparedQuery) analyze(ctx context.Context) (*materialize.Table, *engine.Operator, error) {
	prof := &engine.Profile{}
	t, err := q.collect(ctx, 0, prof)
	if err != nil {
		return nil, nil, err
	}
	return t, prof.Root(), nil
}

// explain describes the operators the engine builds for the plan,
// without running it.
func (q *preparedQuery) explain() (*engine.Operator, error) {
	return engine.Explain(q.plan, q.src, q.engineOptions(nil))
}

// columnStats is what the source of dataset (the main one or a joined
// one) knows of column without reading it (planner.ColumnStatser).
func (q *preparedQuery) columnStats(dataset, column string) (planner.ColumnStats, bool) {
	src := q.sources[dataset]
	if src == nil && dataset == q.dataset {
		src = q.src
	}
	if st, ok := src.(planner.ColumnStatser); ok {
		return st.ColumnStats(column)
	}
	return planner.ColumnStats{}, false
}

// cached reports whether every column the plan's scan reads is in the
// column cache (and the file unchanged): running it costs no file read.
func (q *preparedQuery) cached() bool {
	src, ok := q.src.(*colcache.Source)
	if !ok {
		return false
	}
	var cols []string
	found := false
	planner.Inspect(q.plan, func(n planner.Node, _ int) bool {
		if s, ok := n.(*planner.Scan); ok {
			cols, found = s.Columns, true
		}
		return !found
	})
	return found && src.Cached(cols)
}

// estimate runs the query (over its first sample rows when sample > 0)
// and extrapolates the result size to the whole dataset.
func (q *preparedQuery) estimate(ctx context.Context, sample int64) (*estimation, error) {
	if est, ok, err := q.crossEstimate(ctx); ok || err != nil {
		return est, err
	}
	t, err := q.run(ctx, sample)
	if err != nil {
		return nil, err
	}
	e := &estimation{table: t, plan: q.plan, kind: estimateExact, rows: t.NumRows()}
	if sample > 0 {
		e.kind = estimateSampled
		e.rows = extrapolate(t.NumRows(), sample, q.rows, q.spec)
	}
	if e.bytes, err = jsonBytes(t, e.rows); err != nil {
		t.Release()
		return nil, err
	}
	return e, nil
}

// testHookLookedUp, set by tests only, runs after each lookup of onDataset.
var testHookLookedUp func(d *catalog.Dataset)

// onDataset looks dataset id up and calls fn with it. When fn fails
// because the data file was replaced after the lookup (the confined open
// refuses a file of another identity, safeopen.ErrReplaced), it looks the
// dataset up again, which re-reads the new file, and calls fn once more.
// fn must not have delivered anything when it fails.
func onDataset[T any](ctx context.Context, s *Service, id string, fn func(d *catalog.Dataset) (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		d, err := s.lookup(ctx, id)
		if err != nil {
			var zero T
			return zero, err
		}
		if testHookLookedUp != nil {
			testHookLookedUp(d)
		}
		out, err := fn(d)
		if attempt > 0 || !errors.Is(err, safeopen.ErrReplaced) || ctx.Err() != nil {
			return out, err
		}
		obs.Logger(ctx).Info("data file replaced while the query ran; looking the dataset up again", "dataset", id)
	}
}
