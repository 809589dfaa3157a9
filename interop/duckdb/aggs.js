'use strict';
// Usage: node aggs.js SPEC.json
//
// SPEC is {"csv": FILE, "columns": {"name": "DuckDB type", ...}, "group_by": COLUMN, "queries": [[SQL aggregate, ...], ...]}.
// Reads FILE with DuckDB (read_csv with exactly those column types) and, for each query, prints the rows of
//   SELECT group_by, aggregates... FROM t GROUP BY group_by ORDER BY group_by
// with every value as text (null for SQL NULL):
//   {"duckdb": "<version>", "rows": [[["g", "v1", ...], ...], ...]}
// e2e/duckdb_aggs_test.go compares them with Quarry's aggregates.
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');
const { quoteIdent, quoteString } = require('./sql');

async function main() {
  const specFile = process.argv[2];
  if (!specFile) {
    console.error('usage: node aggs.js SPEC.json');
    process.exit(2);
  }
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const version = (await conn.runAndReadAll('SELECT version()')).getRows()[0][0];
  await conn.run('SET threads = 1'); // list and string_agg keep the file's row order
  const cols = Object.entries(spec.columns).map(([k, v]) => `${quoteString(k)}: ${quoteString(v)}`).join(', ');
  await conn.run(`CREATE TABLE t AS SELECT * FROM read_csv(${quoteString(spec.csv)}, header = true, columns = {${cols}})`);
  const g = quoteIdent(spec.group_by);
  const rows = [];
  for (const aggs of spec.queries) {
    const sql = `SELECT CAST(${g} AS VARCHAR), ${aggs.map((a) => `CAST(${a} AS VARCHAR)`).join(', ')} FROM t GROUP BY ${g} ORDER BY ${g}`;
    rows.push((await conn.runAndReadAll(sql)).getRows().map((r) => r.map((v) => (v === null ? null : String(v)))));
  }
  process.stdout.write(JSON.stringify({ duckdb: version, rows }) + '\n');
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
