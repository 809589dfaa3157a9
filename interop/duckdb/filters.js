'use strict';
// Usage: node filters.js SPEC.json
//
// SPEC is {"csv": FILE, "columns": {"name": "DuckDB type", ...}, "where": [SQL condition, ...]}.
// Reads FILE with DuckDB (read_csv with exactly those column types) and, for each condition,
// prints the ids (the "id" column, as text, ascending) of the rows it selects:
//   {"duckdb": "<version>", "ids": [["1", "2"], ...]}
// e2e/duckdb_filters_test.go compares them with Quarry's filters.
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');
const { quoteString } = require('./sql');

async function main() {
  const specFile = process.argv[2];
  if (!specFile) {
    console.error('usage: node filters.js SPEC.json');
    process.exit(2);
  }
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const version = (await conn.runAndReadAll('SELECT version()')).getRows()[0][0];
  const cols = Object.entries(spec.columns).map(([k, v]) => `${quoteString(k)}: ${quoteString(v)}`).join(', ');
  await conn.run(`CREATE TABLE t AS SELECT * FROM read_csv(${quoteString(spec.csv)}, header = true, columns = {${cols}})`);
  const ids = [];
  for (const where of spec.where) {
    const rows = (await conn.runAndReadAll(`SELECT CAST(id AS VARCHAR) FROM t WHERE ${where} ORDER BY id`)).getRows();
    ids.push(rows.map((r) => String(r[0])));
  }
  process.stdout.write(JSON.stringify({ duckdb: version, ids }) + '\n');
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
