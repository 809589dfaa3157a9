'use strict';
// Usage: node joins.js SPEC.json
//
// SPEC is {"tables": {"name": {"csv": FILE, "columns": [["col", "DuckDB type"], ...]}, ...}, "queries": [SQL, ...]}.
// Loads each CSV into a table of that name (read_csv with exactly those column types) and, for each
// query, prints its rows with every value cast to text (SQL NULL as null), sorted:
//   {"duckdb": "<version>", "rows": [[["1", "CA"], ...], ...]}
// e2e/join_test.go compares them with Quarry's joins.
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');
const { quoteIdent, quoteString } = require('./sql');

async function main() {
  const specFile = process.argv[2];
  if (!specFile) {
    console.error('usage: node joins.js SPEC.json');
    process.exit(2);
  }
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const version = (await conn.runAndReadAll('SELECT version()')).getRows()[0][0];
  for (const [name, t] of Object.entries(spec.tables)) {
    const cols = t.columns.map(([k, v]) => `${quoteString(k)}: ${quoteString(v)}`).join(', ');
    await conn.run(`CREATE TABLE ${quoteIdent(name)} AS SELECT * FROM read_csv(${quoteString(t.csv)}, header = true, columns = {${cols}})`);
  }
  const out = [];
  for (const q of spec.queries) {
    const rows = (await conn.runAndReadAll(q)).getRows().map((r) => r.map((v) => (v === null ? null : String(v))));
    rows.sort((a, b) => {
      const x = JSON.stringify(a);
      const y = JSON.stringify(b);
      return x < y ? -1 : x > y ? 1 : 0;
    });
    out.push(rows);
  }
  process.stdout.write(JSON.stringify({ duckdb: version, rows: out }) + '\n');
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
