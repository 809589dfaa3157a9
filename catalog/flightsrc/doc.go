// Package flightsrc makes Arrow Flight SQL servers a catalog source: each
// [[flightsql]] remote of the config file (Config, ParseConfig) is a
// catalog.Remote whose allowed tables become datasets
// remote/<name>/<table>, with Arrow schemas from GetTables(include_schema)
// mapped to the engine's types as typed files are
// (catalog.ExposedSchema), and exact row counts from a generated
// SELECT count(*) (count_rows; otherwise not exact).
//
// A scan of a remote dataset sends one SELECT produced by the one SQL
// generator (planner/sqlgen) from the scan: its projection, the filters
// the dialect prints exactly (the source is a planner.FilterPushdowner)
// and the limit/offset the engine passes (catalog.ScanOptions.Limit,
// SkipRows); as a planner.SubtreePusher it also runs aggregates with
// their HAVING filters, top-N sorts and joins of its remote's own tables
// (PushesPlan: only what the remote computes as the engine does; the
// other tables of a join are named by the remote's last listing);
// everything else runs locally on the streamed batches. No
// request text reaches a remote except as typed literals printed by the
// generator, and a remote is only what the config names.
//
// The remote's record batches are read with the scan's allocator (the
// query's memory budget) and converted to the dataset's types; cancelling
// the query (or releasing the reader early) cancels the DoGet call.
// Remote failures are structured errors with stable codes:
// remote_unavailable, remote_auth_failed, timeout, remote_error and
// remote_schema_changed (which also makes the catalog list the remote
// again).
package flightsrc
