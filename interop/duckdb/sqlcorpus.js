'use strict';
// Usage: node sqlcorpus.js SPEC.json
//
// SPEC is {"tables": {"dataset/id": CSV_FILE, ...}, "queries": [SQL, ...]}.
// Creates one view per table (read_csv with auto-detected types, named by
// the dataset id) and prints, for each query, its rows with every value as
// text (null for SQL NULL), or the error message:
//   {"duckdb": "<version>", "results": [{"rows": [[...], ...]} | {"error": "..."}, ...]}
// e2e/sql_duckdb_test.go runs the same queries through advanced_query.
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');
const { quoteIdent, quoteString } = require('./sql');

async function main() {
  const specFile = process.argv[2];
  if (!specFile) {
    console.error('usage: node sqlcorpus.js SPEC.json');
    process.exit(2);
  }
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const version = (await conn.runAndReadAll('SELECT version()')).getRows()[0][0];
  for (const [id, csv] of Object.entries(spec.tables)) {
    await conn.run(`CREATE VIEW ${quoteIdent(id)} AS SELECT * FROM read_csv(${quoteString(csv)}, header = true)`);
  }
  const results = [];
  for (const q of spec.queries) {
    try {
      const rows = (await conn.runAndReadAll(q)).getRows();
      results.push({ rows: rows.map((r) => r.map((v) => (v === null ? null : String(v)))) });
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
