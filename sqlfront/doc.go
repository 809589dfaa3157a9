// Package sqlfront is Quarry's SQL front-end (the advanced_query tool): it
// parses one SQL statement with the PostgreSQL parser itself
// (github.com/pganalyze/pg_query_go), refuses everything that is not a
// read-only query over catalog datasets, binds table and column names
// against the catalog, and lowers each SELECT block to the same knob Spec
// the query_data and aggregate tools take, built by planner.Build into the
// same logical plan. One optimizer, one engine and one materializer serve
// both front-ends; a SQL query and its knob translation plan identically.
//
// Pipeline: Parse (text length and nesting caps, one statement, EXPLAIN
// prefix) → check (an allow-list walk over the whole syntax tree:
// statements other than SELECT are forbidden_sql, table functions and
// system catalogs are forbidden_sql, constructs the dialect lacks are
// unsupported_sql, IN lists and expression depth are capped) → lower (per
// SELECT block: FROM and JOINs become the Spec's input and join list, a
// subquery or CTE in FROM becomes a planner.Input whose Node is the
// subquery's plan, WHERE becomes filters, GROUP BY/aggregates/HAVING
// become group_by/aggs/having, window calls become windows, the SELECT
// list becomes columns, ORDER BY/LIMIT/OFFSET/DISTINCT the same knobs;
// the non-key ON conditions of an outer join become its join[].where).
// Subqueries in WHERE and the SELECT list become joins: x IN (SELECT ...)
// a semi join, a one-row scalar subquery a cross join; correlated ones are
// decorrelated (decorrelate.go: [NOT] EXISTS and IN to semi/anti joins on
// the correlation keys with the other correlated conditions as the join's
// residual, NOT IN with SQL's null rule, scalar aggregates to aggregates
// grouped by the keys and left joined back; uncorrelated NOT IN one
// null-aware anti join); IN and EXISTS used as values (inside CASE, OR,
// the SELECT list) are mark joins (mark.go); a subquery over the groups
// (HAVING, a grouped SELECT list) joins above the aggregate, correlated
// through GROUP BY columns (postsub.go, mark.go).
// GROUPING SETS/ROLLUP/CUBE become a UNION ALL of one grouped block per
// set (groupingsets.go).
// UNION/INTERSECT/EXCEPT combine two lowered blocks in a planner.SetOp;
// VALUES lists and SELECT without FROM read a planner.Values.
// Expressions are printed in the planner's expression language
// (planner.ParseExpr), which binds them through the function registry.
//
// Every error is a *qerr.Error; the ones about the SQL text carry the
// offending fragment and its 1-based line and column ("fragment", "line",
// "column" diagnostics). docs/SQL.md is the user reference.
package sqlfront
