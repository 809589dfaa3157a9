// Package planner validates a query Spec against a dataset schema and builds
// a logical plan: a tree of pure-data Nodes (Scan, Filter, Project,
// Aggregate, Distinct, Sort, Limit) with a stable printable form. It also
// optimizes plans (projection and filter pushdown, limit pushdown) and
// estimates result rows and bytes. It performs no I/O; the engine package
// turns plans into Arrow record-batch pipelines.
package planner
