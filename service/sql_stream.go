package service

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/quarrydb/quarry/internal/colcache"
	"github.com/quarrydb/quarry/internal/qerr"
)

// SQLStatement is one SQL statement parsed, checked and planned by the
// same front-end, planner and engine as advanced_query, to be streamed as
// Arrow record batches instead of delivered by the materializer (the
// Flight SQL facade). Caps, handles and artifacts do not apply: the
// caller reads the whole stream; the query timeout and the memory budgets
// do.
type SQLStatement struct {
	q *preparedQuery
}

// PrepareSQLStatement parses and plans sql with params as the values of
// $1, $2, ... EXPLAIN is refused (advanced_query and estimate_query
// serve it).
func (s *Service) PrepareSQLStatement(ctx context.Context, sql string, params []any) (*SQLStatement, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	if strings.TrimSpace(sql) == "" {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "sql is required").
			WithHint(`pass one SELECT, e.g. SELECT * FROM "weather/stations" LIMIT 10`)
	}
	q, explain, _, err := s.prepareSQL(ctx, sql, params)
	if err != nil {
		return nil, err
	}
	if explain != "" {
		return nil, qerr.Invalid(qerr.CodeUnsupportedSQL, "EXPLAIN is not streamed as rows").
			WithHint("drop EXPLAIN; the MCP tools estimate_query {sql} and advanced_query with EXPLAIN ANALYZE show plans")
	}
	return &SQLStatement{q: q}, nil
}

// Schema is the schema of the rows the statement produces, as planned.
func (st *SQLStatement) Schema() *arrow.Schema { return st.q.plan.Schema() }

// Stream runs the statement under the query timeout and the memory
// budgets and hands the engine's reader to consume; cancelling ctx stops
// the query. Context errors become the qerr timeout and cancelled errors.
func (st *SQLStatement) Stream(ctx context.Context, consume func(context.Context, array.RecordReader) error) error {
	return st.q.stream(ctx, 0, nil, consume)
}

// Table is one dataset as a SQL table: its id (the table name) and the
// Arrow schema queries see.
type Table struct {
	ID     string
	Schema *arrow.Schema
}

// Tables lists the catalog's datasets as SQL tables, sorted by id, after
// the same refresh as get_catalog.
func (s *Service) Tables(ctx context.Context) ([]Table, error) {
	s.WaitFirstScan(ctx)
	if err := s.cfg.Catalog.Refresh(ctx); err != nil {
		return nil, err
	}
	ds := s.cfg.Catalog.Datasets()
	out := make([]Table, 0, len(ds))
	for _, d := range ds {
		out = append(out, Table{ID: d.ID, Schema: colcache.PlanSchema(s.cfg.Cache.Wrap(d), d)})
	}
	return out, nil
}
