'use strict';
// runSpec: the frame shared by the DuckDB oracle scripts that answer a list
// of queries from a SPEC.json file (queries.js, sqlcorpus.js): read the spec
// named on the command line, open an in-memory DuckDB, let the script load
// its tables, run every query and print
//   {"duckdb": "<version>", "results": [<result> | {"error": "..."}, ...]}
// on stdout. A failed query gives its error message; anything else exits 1.
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');

// runSpec(script, load, answer): load(conn, spec) prepares the tables;
// answer(conn, sql) returns one query's result object.
function runSpec(script, load, answer) {
  main(script, load, answer).catch((err) => {
    console.error(err && err.stack ? err.stack : String(err));
    process.exit(1);
  });
}

async function main(script, load, answer) {
  const specFile = process.argv[2];
  if (!specFile) {
    console.error(`usage: node ${script} SPEC.json`);
    process.exit(2);
  }
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const version = (await conn.runAndReadAll('SELECT version()')).getRows()[0][0];
  await load(conn, spec);
  const results = [];
  for (const sql of spec.queries) {
    try {
      results.push(await answer(conn, sql));
    } catch (err) {
      results.push({ error: String(err && err.message ? err.message : err) });
    }
  }
  process.stdout.write(JSON.stringify({ duckdb: version, results }) + '\n');
}

// text is a DuckDB value as the oracle prints it: null or its string form.
function text(v) {
  return v === null ? null : String(v);
}

module.exports = { runSpec, text };
