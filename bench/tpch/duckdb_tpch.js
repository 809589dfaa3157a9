'use strict';
// DuckDB side of the TPC-H-style benchmark (bench/tpch/README.md).
//   node bench/tpch/duckdb_tpch.js --dir DIR [--queries all|Q1,Q6] [--reps 3]
//     [--qdir DIR --tables t1,t2,...]  (another query set over other CSVs: the H2O join
//     questions, bench/h2o/README.md; LOAD counts the rows of the last table)
// Loads the eight CSVs the generator wrote (bench/tpch/gen) as tables with
// read_csv_auto (LOAD, timed), then runs each query of bench/tpch/queries REPS
// times as CREATE OR REPLACE TABLE ans AS <query> (warm, timed, as the H2O
// runner does), and reports for each its row count and, untimed, its rows in
// the query's order (first 100) in the peer harness's RESULT record format
// (../shared/bench/README.md, "Runner protocol").
const fs = require('fs');
const path = require('path');
const c = require(path.join(process.env.PEERBENCH || path.join(__dirname, '../../../shared/bench'), 'runners/common.js'));

const { DuckDBInstance } = c.depRequire('@duckdb/node-api');
const { timed } = require('../duckdb_timed.js');

function parseArgs(argv) {
  const a = { dir: null, queries: 'all', reps: 3, qdir: path.join(__dirname, 'queries'),
    tables: ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem'] };
  for (let i = 2; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (k === '--dir') a.dir = v;
    else if (k === '--queries') a.queries = v;
    else if (k === '--reps') a.reps = parseInt(v, 10);
    else if (k === '--qdir') a.qdir = v;
    else if (k === '--tables') a.tables = v.split(',');
    else throw new Error(`unknown argument ${k}`);
  }
  if (!a.dir) throw new Error('--dir DIR (the generator output) is required');
  const all = fs.readdirSync(a.qdir).filter((f) => /^q\d\d\.sql$/.test(f)).sort()
    .map((f) => 'Q' + parseInt(f.slice(1, 3), 10));
  a.queries = a.queries === 'all' ? all : a.queries.split(',');
  return a;
}

function querySQL(qdir, q) {
  const n = parseInt(q.slice(1), 10);
  return fs.readFileSync(path.join(qdir, `q${String(n).padStart(2, '0')}.sql`), 'utf8').trim().replace(/;$/, '');
}

// JSON-safe cell by the JS type DuckDB returns: BIGINT as bigint, DOUBLE as
// number, DATE as a Date (written YYYY-MM-DD), everything else as its text.
function cell(v) {
  if (typeof v === 'bigint') return c.cell(v, 'i');
  if (typeof v === 'number') return c.cell(v, Number.isInteger(v) ? 'i' : 'f');
  if (v instanceof Date) return c.cell(v.toISOString().replace(/T00:00:00\.000Z$/, ''), 't');
  return c.cell(v === null || v === undefined ? null : String(v), 's');
}

async function main() {
  const a = parseArgs(process.argv);
  const inst = await DuckDBInstance.create(':memory:');
  const con = await inst.connect();
  const ver = (await con.runAndReadAll("SELECT version(), current_setting('threads')")).getRowsJS()[0];
  c.emit('INFO', { peer: 'duckdb', version: String(ver[0]), threads: Number(ver[1]), node: process.version });
  const t0 = c.now();
  for (const t of a.tables) {
    await con.run(`CREATE TABLE ${t} AS SELECT * FROM read_csv_auto(${c.sqlString(path.join(a.dir, t + '.csv'))})`);
  }
  const rows = Number((await con.runAndReadAll(`SELECT count(*) FROM ${a.tables[a.tables.length - 1]}`)).getRowsJS()[0][0]);
  c.emit('LOAD', { peer: 'duckdb', mode: 'warm', secs: c.secsSince(t0), rows });
  for (const q of a.queries) {
    await timed(c, con, q, querySQL(a.qdir, q), a.reps, async () => {
      const r = await con.runAndReadAll(`SELECT * FROM ans LIMIT ${c.FIRST_ROWS}`);
      return { cols: r.columnNames(), first_rows: r.getRowsJS().map((row) => row.map(cell)) };
    });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
