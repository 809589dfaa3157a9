'use strict';
// Usage: node csvcheck.js LIST
//
// LIST is a text file naming one CSV file per line. Each file is read with
// DuckDB's read_csv, its sniffer choosing the column types (the dialect is
// fixed: header row, ',' delimiter, '"' quote and escape, so only types are
// sniffed), and one JSON line per file is printed:
//   {"file": ..., "columns": [{"name": ..., "type": ...}], "rows": [[<cell>, ...]]}
// or {"file": ..., "error": "..."}. Cells are DuckDB's own text for the
// value (CAST(... AS VARCHAR)); SQL NULL is JSON null. The session time
// zone is UTC. Used by e2e/ingest_duckdb_test.go.
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');
const { quoteIdent, quoteString } = require('./sql');

async function main() {
  const list = process.argv[2];
  if (!list) {
    console.error('usage: node csvcheck.js LIST');
    process.exit(2);
  }
  const files = fs.readFileSync(list, 'utf8').split('\n').filter((l) => l !== '');
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  await conn.run("SET TimeZone = 'UTC'");
  const out = [];
  for (const file of files) {
    const src = `read_csv(${quoteString(file)}, header = true, delim = ',', quote = '"', escape = '"', sample_size = -1)`;
    try {
      const described = await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`);
      const columns = described.getRowObjects().map((r) => ({ name: r.column_name, type: r.column_type }));
      const select = 'SELECT ' + columns.map((c) => `CAST(${quoteIdent(c.name)} AS VARCHAR)`).join(', ') + ` FROM ${src}`;
      const rows = (await conn.runAndReadAll(select)).getRows().map((r) => r.map((v) => (v === null ? null : String(v))));
      out.push(JSON.stringify({ file, columns, rows }));
    } catch (err) {
      out.push(JSON.stringify({ file, error: String(err && err.message ? err.message : err) }));
    }
    if (out.length >= 256) {
      process.stdout.write(out.join('\n') + '\n');
      out.length = 0;
    }
  }
  if (out.length > 0) {
    process.stdout.write(out.join('\n') + '\n');
  }
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
