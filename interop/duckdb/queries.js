'use strict';
// Usage: node queries.js SPEC.json
//
// SPEC is {"csv": FILE, "columns": [["name", "DuckDB type"], ...], "queries": [SQL, ...]}.
// Reads FILE with DuckDB into table t (read_csv with exactly those column types, in file order) and prints,
// for each query, its rows with every value as DuckDB's text (CAST AS VARCHAR; null for SQL NULL), or the
// error message:
//   {"duckdb": "<version>", "results": [{"rows": [[...], ...]} | {"error": "..."}, ...]}
// e2e/duckdb_vocab_test.go compares them with Quarry's results for the same random specs.
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');
const { quoteIdent, quoteString } = require('./sql');

async function main() {
  const specFile = process.argv[2];
  if (!specFile) {
    console.error('usage: node queries.js SPEC.json');
    process.exit(2);
  }
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  await conn.run("SET TimeZone = 'UTC'");
  await conn.run('SET threads = 1');
  const version = (await conn.runAndReadAll('SELECT version()')).getRows()[0][0];
  const cols = spec.columns.map(([k, v]) => `${quoteString(k)}: ${quoteString(v)}`).join(', ');
  await conn.run(`CREATE TABLE t AS SELECT * FROM read_csv(${quoteString(spec.csv)}, header = true, columns = {${cols}})`);
  const results = [];
  for (const sql of spec.queries) {
    try {
      const r = await conn.runAndReadAll(sql);
      const names = r.columnNames();
      const text = `SELECT ${names.map((n) => `CAST(${quoteIdent(n)} AS VARCHAR)`).join(', ')} FROM (${sql})`;
      // the cast keeps the query's row order (one thread, no reordering of a plain projection)
      const rows = (await conn.runAndReadAll(text)).getRows().map((row) => row.map((v) => (v === null ? null : String(v))));
      results.push({ columns: names, rows });
    } catch (err) {
      results.push({ error: String(err && err.message ? err.message : err) });
    }
  }
  process.stdout.write(JSON.stringify({ duckdb: version, results }) + '\n');
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
