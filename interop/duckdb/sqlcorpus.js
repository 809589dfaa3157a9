'use strict';
// Usage: node sqlcorpus.js SPEC.json
//
// SPEC is {"tables": {"dataset/id": CSV_FILE, ...}, "queries": [SQL, ...]}.
// Creates one view per table (read_csv with auto-detected types, named by
// the dataset id) and prints, for each query, its rows with every value as
// text (null for SQL NULL), or the error message:
//   {"duckdb": "<version>", "results": [{"rows": [[...], ...]} | {"error": "..."}, ...]}
// e2e/sql_duckdb_test.go runs the same queries through advanced_query.
const { quoteIdent, quoteString } = require('./sql');
const { runSpec, text } = require('./spec');

runSpec('sqlcorpus.js', async (conn, spec) => {
  for (const [id, csv] of Object.entries(spec.tables)) {
    await conn.run(`CREATE VIEW ${quoteIdent(id)} AS SELECT * FROM read_csv(${quoteString(csv)}, header = true)`);
  }
}, async (conn, sql) => {
  const rows = (await conn.runAndReadAll(sql)).getRows();
  return { rows: rows.map((r) => r.map(text)) };
});
