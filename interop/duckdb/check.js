'use strict';
// Usage: node check.js FILE.parquet|FILE.jsonl
//
// Reads FILE with DuckDB (read_parquet, or read_json for JSON files) and prints one JSON object:
//   {"duckdb": "<version>",
//    "columns": [{"name": ..., "type": "<DuckDB type>"}, ...],
//    "rows": [[<cell>, ...], ...]}
// Every non-null cell is printed as DuckDB's own text for it (CAST(... AS
// VARCHAR)), so no precision is lost on the way through JavaScript; a SQL
// NULL is JSON null. The session time zone is UTC, so TIMESTAMP WITH TIME
// ZONE values print with "+00".
const { DuckDBInstance } = require('@duckdb/node-api');
const { quoteIdent, quoteString } = require('./sql');

async function main() {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node check.js FILE.parquet');
    process.exit(2);
  }
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  await conn.run("SET TimeZone = 'UTC'");
  // Parquet by default; JSON files (.json, .jsonl, .ndjson, optionally
  // compressed) through read_json with types auto-detected.
  const src = /\.(json|jsonl|ndjson)(\.(gz|zst))?$/i.test(file)
    ? `read_json(${quoteString(file)})`
    : `read_parquet(${quoteString(file)})`;
  const version = (await conn.runAndReadAll('SELECT version()')).getRows()[0][0];

  const described = await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`);
  const columns = described.getRowObjects().map((r) => ({ name: r.column_name, type: r.column_type }));

  const select = columns.length === 0
    ? 'SELECT 1 WHERE false'
    : 'SELECT ' + columns.map((c) => `CAST(${quoteIdent(c.name)} AS VARCHAR)`).join(', ') + ` FROM ${src}`;
  const rows = (await conn.runAndReadAll(select)).getRows().map((r) => r.map((v) => (v === null ? null : String(v))));

  process.stdout.write(JSON.stringify({ duckdb: version, columns, rows }) + '\n');
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
