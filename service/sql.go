package service

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/tracing"
	"github.com/quarrydb/quarry/planner"
	"github.com/quarrydb/quarry/sqlfront"
)

// SQLRequest is the input of advanced_query.
type SQLRequest struct {
	// SQL is one SELECT statement (optionally prefixed by EXPLAIN [ANALYZE]).
	SQL string `json:"sql" jsonschema:"One SELECT; EXPLAIN ANALYZE prefix for per-operator statistics."`
	// Params are the values of $1, $2, ...
	Params []any `json:"params,omitempty" jsonschema:"Values of $1, $2, ..."`
	// DeliveryOptions are those of query_data.
	DeliveryOptions
}

// sqlCatalog resolves SQL table names against the service's catalog.
type sqlCatalog struct {
	s       *Service
	sources map[string]catalog.Source
	pushdn  map[string]planner.FilterPushdowner
	rows    map[string]*catalog.Dataset
}

// Input implements sqlfront.Catalog: an exact dataset id, or the last
// path element of exactly one id.
func (c *sqlCatalog) Input(ctx context.Context, name string) (planner.Input, error) {
	d, err := c.s.lookup(ctx, name)
	if err != nil && !strings.Contains(name, "/") {
		var match []*catalog.Dataset
		for _, x := range c.s.cfg.Catalog.Datasets() {
			if planner.JoinAlias(x.ID) == name || strings.HasSuffix(x.ID, "/"+name) {
				match = append(match, x)
			}
		}
		if len(match) == 1 {
			d, err = c.s.lookup(ctx, match[0].ID)
		} else if len(match) > 1 {
			ids := make([]string, len(match))
			for i, m := range match {
				ids[i] = m.ID
			}
			return planner.Input{}, qerr.Invalid(qerr.CodeInvalidArgument, "table name %q matches several datasets: %s", name, strings.Join(ids, ", ")).
				With("suggestions", ids).WithHint("double-quote the full dataset id: FROM \"%s\"", ids[0])
		}
	}
	if err != nil {
		return planner.Input{}, err
	}
	src := c.s.cfg.Cache.Wrap(d)
	c.sources[d.ID] = src
	c.rows[d.ID] = d
	if p, ok := d.Source.(planner.FilterPushdowner); ok {
		c.pushdn[d.ID] = p
	}
	return planner.Input{Dataset: d.ID, Schema: colcache.PlanSchema(src, d), RowCount: d.RowCount, RowCountExact: d.RowCountExact}, nil
}

// prepareSQL parses, checks and plans a statement.
func (s *Service) prepareSQL(ctx context.Context, sql string, params []any) (*preparedQuery, string, *catalog.Dataset, error) {
	ctx, span := tracing.Start(ctx, "plan", attribute.String("quarry.sql", "true"))
	defer span.End()
	st, err := sqlfront.Parse(sql)
	if err != nil {
		return nil, "", nil, err
	}
	cat := &sqlCatalog{s: s, sources: map[string]catalog.Source{}, pushdn: map[string]planner.FilterPushdowner{}, rows: map[string]*catalog.Dataset{}}
	c, err := st.Compile(ctx, cat, params)
	if err != nil {
		return nil, "", nil, err
	}
	scan := planner.ScanOf(c.Plan)
	if scan == nil {
		// Constant rows only (VALUES, SELECT without FROM): no source.
		plan, err := planner.Optimize(c.Plan, planner.OptimizeOptions{})
		if err != nil {
			return nil, "", nil, err
		}
		return &preparedQuery{s: s, spec: c.Spec, plan: plan, sources: cat.sources}, c.Explain, &catalog.Dataset{ID: "values"}, nil
	}
	main := scan.Dataset
	opts := planner.OptimizeOptions{}
	if len(cat.sources) == 1 {
		opts.Pushdown = cat.pushdn[main]
		opts.Zones, _ = cat.sources[main].(planner.ZoneFilterer)
	} else {
		opts.Sources = scanSources(cat.sources)
	}
	plan, err := planner.Optimize(c.Plan, opts)
	if err != nil {
		return nil, "", nil, err
	}
	if plan, err = pushRemote(plan, cat.sources); err != nil {
		return nil, "", nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, "", nil, qerr.As(err)
	}
	d := cat.rows[main]
	q := &preparedQuery{s: s, spec: c.Spec, dataset: main, src: cat.sources[main], plan: plan, rows: d.RowCount, sources: cat.sources, input: d.Schema}
	return q, c.Explain, d, nil
}

// SQL runs an advanced_query statement with the delivery, caps and
// confirmation of query_data.
func (s *Service) SQL(ctx context.Context, req SQLRequest) (*QueryResponse, error) {
	if err := checkShape(req.Shape); err != nil {
		return nil, err
	}
	r, err := s.sql(ctx, req)
	return shapeQuery(r, err, req.Shape)
}

// sql is SQL before the rows are shaped.
func (s *Service) sql(ctx context.Context, req SQLRequest) (*QueryResponse, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	if strings.TrimSpace(req.SQL) == "" {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "sql is required").With("field", "sql").
			WithHint(`pass one SELECT, e.g. SELECT * FROM "weather/stations" LIMIT 10`)
	}
	q, explain, d, err := s.prepareSQL(ctx, req.SQL, req.Params)
	if err != nil {
		return nil, err
	}
	qr := QueryRequest{EstimateRequest: EstimateRequest{Dataset: d.ID, Spec: q.spec}, DeliveryOptions: req.DeliveryOptions}
	switch explain {
	case "analyze":
		qr.Explain = ExplainAnalyze
	case "plan":
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "EXPLAIN without ANALYZE shows the plan without running: use estimate_query with sql").
			WithHint("estimate_query {sql} returns the plan and the size; EXPLAIN ANALYZE here runs the query with per-operator statistics")
	}
	if qr.Explain != "" && qr.Explain != ExplainAnalyze {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "unknown explain mode %q", qr.Explain).With("field", "explain").WithHint(`explain takes "analyze"`)
	}
	return s.runPrepared(ctx, d, q, qr, "advanced_query", time.Now())
}

// EstimateQueryRequest is the input of estimate_query: a knob query on a
// dataset (the fields of EstimateRequest), or a SQL statement (then
// dataset and the knobs are not used).
type EstimateQueryRequest struct {
	// Dataset is the dataset id; required unless SQL is given.
	Dataset string `json:"dataset,omitempty" jsonschema:"Dataset id from get_catalog (required unless sql is given)."`
	// Spec is the knob query.
	planner.Spec
	// SQL is an advanced_query statement to estimate instead of the knobs.
	SQL string `json:"sql,omitempty" jsonschema:"A SELECT, as advanced_query takes it, instead of dataset and knobs."`
	// Params are the values of $1, $2, ... of SQL.
	Params []any `json:"params,omitempty" jsonschema:"Values of $1, $2, ... in sql."`
}

// EstimateQuery is estimate_query: Estimate for knobs, or the same for a SQL statement.
func (s *Service) EstimateQuery(ctx context.Context, req EstimateQueryRequest) (*EstimateResponse, error) {
	if strings.TrimSpace(req.SQL) == "" {
		return s.Estimate(ctx, EstimateRequest{Dataset: req.Dataset, Spec: req.Spec})
	}
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	return s.estimateSQL(ctx, req.SQL, req.Params)
}

// estimateSQL is estimate_query for a SQL statement.
func (s *Service) estimateSQL(ctx context.Context, sql string, params []any) (*EstimateResponse, error) {
	q, _, d, err := s.prepareSQL(ctx, sql, params)
	if err != nil {
		return nil, err
	}
	return s.estimatePrepared(ctx, d, q)
}

// FilterToken implements sqlfront.TokenResolver: pattern_filter's tokens
// in advanced_query (WHERE filter_token($1)).
func (c *sqlCatalog) FilterToken(token string) ([]string, planner.FilterSpec, error) {
	cl, err := c.s.filterKeys.verify(token, time.Now())
	if err != nil {
		return nil, planner.FilterSpec{}, err
	}
	return cl.Datasets, cl.filter(), nil
}
