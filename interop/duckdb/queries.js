'use strict';
// Usage: node queries.js SPEC.json
//
// SPEC is {"csv": FILE, "columns": [["name", "DuckDB type"], ...], "queries": [SQL, ...]}.
// Reads FILE with DuckDB into table t (read_csv with exactly those column types, in file order) and prints,
// for each query, its rows with every value as DuckDB's text (CAST AS VARCHAR; null for SQL NULL), or the
// error message:
//   {"duckdb": "<version>", "results": [{"rows": [[...], ...]} | {"error": "..."}, ...]}
// e2e/duckdb_vocab_test.go compares them with Quarry's results for the same random specs.
const { quoteIdent, quoteString } = require('./sql');
const { runSpec, text } = require('./spec');

runSpec('queries.js', async (conn, spec) => {
  await conn.run("SET TimeZone = 'UTC'");
  await conn.run('SET threads = 1');
  const cols = spec.columns.map(([k, v]) => `${quoteString(k)}: ${quoteString(v)}`).join(', ');
  await conn.run(`CREATE TABLE t AS SELECT * FROM read_csv(${quoteString(spec.csv)}, header = true, columns = {${cols}})`);
}, async (conn, sql) => {
  const r = await conn.runAndReadAll(sql);
  const names = r.columnNames();
  const cast = `SELECT ${names.map((n) => `CAST(${quoteIdent(n)} AS VARCHAR)`).join(', ')} FROM (${sql})`;
  // the cast keeps the query's row order (one thread, no reordering of a plain projection)
  const rows = (await conn.runAndReadAll(cast)).getRows().map((row) => row.map(text));
  return { columns: names, rows };
});
