'use strict';
// Usage: node writeforeign.js SPEC.json OUTDIR
//
// Writes one table with the writers of other tools, so that Quarry's
// readers are tested on files it did not write (e2e/foreign_writers_test.go):
//   DuckDB (COPY):       duck_parquet.parquet, duck_csv.csv,
//                        duck_ndjson.jsonl, duck_array.json
//   apache-arrow (JS):   arrowjs_file.arrow (IPC file), arrowjs_stream.arrows (IPC stream)
//   exceljs:             exceljs.xlsx (one sheet "data")
// SPEC is {"columns": [{"name", "duck", "arrow", "xlsx"}...], "rows": [[text|null, ...]]}:
// every cell is text (null is SQL NULL). "duck" is the DuckDB type the
// text is cast to; "arrow" names the Arrow type apache-arrow builds
// ("" leaves the column out of the Arrow files); "xlsx" how exceljs
// writes the cell ("" leaves it out of the workbook). Nested values
// (DuckDB lists and structs) are JSON text. The session time zone is UTC.
const fs = require('fs');
const path = require('path');
const { DuckDBInstance } = require('@duckdb/node-api');
const arrow = require('apache-arrow');
const ExcelJS = require('exceljs');
const { quoteIdent, quoteString } = require('./sql');

// duckExpr casts cell text to the column's DuckDB type; nested types go
// through JSON.
function duckExpr(col, v) {
  if (v === null) return `CAST(NULL AS ${col.duck})`;
  if (/\[\]$|^STRUCT/i.test(col.duck)) return `CAST(CAST(${quoteString(v)} AS JSON) AS ${col.duck})`;
  return `CAST(${quoteString(v)} AS ${col.duck})`;
}

async function writeDuckDB(spec, out) {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  await conn.run("SET TimeZone = 'UTC'");
  const rows = spec.rows.map((r) => 'SELECT ' + spec.columns.map((c, j) => `${duckExpr(c, r[j])} AS ${quoteIdent(c.name)}`).join(', '));
  await conn.run('CREATE TABLE t AS ' + rows.join(' UNION ALL ') + ' ORDER BY 1');
  const copy = (file, opts) => conn.run(`COPY t TO ${quoteString(path.join(out, file))} (${opts})`);
  await copy('duck_parquet.parquet', 'FORMAT parquet');
  await copy('duck_csv.csv', 'FORMAT csv, HEADER true');
  await copy('duck_ndjson.jsonl', 'FORMAT json');
  await copy('duck_array.json', 'FORMAT json, ARRAY true');
}

// arrowType is the apache-arrow type named by a spec column.
function arrowType(name) {
  const A = arrow;
  const item = (t) => new A.Field('item', t, true);
  switch (name) {
    case 'int64': return new A.Int64();
    case 'uint64': return new A.Uint64();
    case 'int32': return new A.Int32();
    case 'float64': return new A.Float64();
    case 'utf8': return new A.Utf8();
    case 'bool': return new A.Bool();
    case 'date': return new A.DateDay();
    case 'timestamp_ms': return new A.TimestampMillisecond();
    case 'timestamp_ms_utc': return new A.TimestampMillisecond('UTC');
    case 'dict_utf8': return new A.Dictionary(new A.Utf8(), new A.Int32());
    case 'list_int32': return new A.List(item(new A.Int32()));
    case 'struct_a_b': return new A.Struct([new A.Field('a', new A.Int32(), true), new A.Field('b', new A.Utf8(), true)]);
    default: throw new Error(`unknown arrow type ${name}`);
  }
}

// epochMs reads a DuckDB timestamp text ("2024-01-31 10:00:00.5", with
// an optional "+01:00") as milliseconds since the epoch, a naive one as UTC.
function epochMs(v) {
  let s = v.replace(' ', 'T');
  if (!/[Zz]|[+-]\d\d:?\d\d$/.test(s.slice(10))) s += 'Z';
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) throw new Error(`not a timestamp: ${v}`);
  return ms;
}

// arrowValue converts cell text to what apache-arrow's builders take.
function arrowValue(name, v) {
  if (v === null) return null;
  switch (name) {
    case 'int64': case 'uint64': return BigInt(v);
    case 'int32': return Number(v);
    case 'float64': return Number(v);
    case 'bool': return v === 'true';
    case 'date': return new Date(v + 'T00:00:00Z');
    case 'timestamp_ms': case 'timestamp_ms_utc': return epochMs(v);
    case 'list_int32': case 'struct_a_b': return JSON.parse(v);
    default: return v;
  }
}

function writeArrow(spec, out) {
  const cols = {};
  spec.columns.forEach((c, j) => {
    if (!c.arrow) return;
    cols[c.name] = arrow.vectorFromArray(spec.rows.map((r) => arrowValue(c.arrow, r[j])), arrowType(c.arrow));
  });
  const table = new arrow.Table(cols);
  fs.writeFileSync(path.join(out, 'arrowjs_file.arrow'), arrow.tableToIPC(table, 'file'));
  fs.writeFileSync(path.join(out, 'arrowjs_stream.arrows'), arrow.tableToIPC(table, 'stream'));
}

async function writeXLSX(spec, out) {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('data');
  const cols = spec.columns.map((c, j) => ({ c, j })).filter(({ c }) => c.xlsx);
  ws.addRow(cols.map(({ c }) => c.name));
  for (const r of spec.rows) {
    const row = ws.addRow(cols.map(({ c, j }) => {
      const v = r[j];
      if (v === null) return null;
      switch (c.xlsx) {
        case 'number': return Number(v);
        case 'bool': return v === 'true';
        case 'date': return new Date(v + 'T00:00:00Z');
        case 'datetime': return new Date(epochMs(v));
        case 'formula': return { formula: `${v}+0`, result: Number(v) };
        default: return v;
      }
    }));
    cols.forEach(({ c }, k) => {
      const cell = row.getCell(k + 1);
      if (c.xlsx === 'date') cell.numFmt = 'yyyy-mm-dd';
      if (c.xlsx === 'datetime') cell.numFmt = 'yyyy-mm-dd hh:mm:ss';
    });
  }
  await wb.xlsx.writeFile(path.join(out, 'exceljs.xlsx'));
}

async function main() {
  const [specFile, out] = process.argv.slice(2);
  if (!specFile || !out) {
    console.error('usage: node writeforeign.js SPEC.json OUTDIR');
    process.exit(2);
  }
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  await writeDuckDB(spec, out);
  writeArrow(spec, out);
  await writeXLSX(spec, out);
  const versions = {};
  for (const p of ['@duckdb/node-api', 'apache-arrow', 'exceljs']) {
    versions[p] = JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', p, 'package.json'), 'utf8')).version;
  }
  process.stdout.write(JSON.stringify({ versions, files: fs.readdirSync(out).sort() }) + '\n');
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
