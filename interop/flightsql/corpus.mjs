// Usage: node corpus.mjs SPEC.json
//
// SPEC is {"host": "127.0.0.1", "port": 32010, "token": "" (optional),
// "queries": [SQL, ...]}. Connects to a Flight SQL server with
// @lakehouse-rs/flight-sql-client (arrow-rs's Flight SQL client: the
// statement is prepared, executed and its endpoints fetched in Rust, the
// result handed over as Arrow IPC bytes), decodes each result with
// apache-arrow's JavaScript IPC reader and prints
//   {"client": "<crate version>", "tables": [name, ...] | {"error": "..."},
//    "results": [{"columns": [...], "rows": [[...], ...]} | {"error": "..."}, ...]}
// tables being GetTables' table names. Every value is printed as text the
// way e2e/flightsql_test.go's flightCell prints what arrow-go's driver
// returns (null for SQL NULL): integers exactly, floats in shortest
// round-trip form, dates (date32) as YYYY-MM-DD, timestamps as RFC 3339 in
// UTC (a midnight timestamp as its date); a column of another type (Quarry
// sends none) stops the script. A failed query gives its error message;
// anything else exits 1.
import fs from "node:fs";

import { createFlightSqlClient, rustCrateVersion } from "@lakehouse-rs/flight-sql-client";
import { DataType, DateUnit, TimeUnit, tableFromIPC } from "apache-arrow";

// Never hang: the whole run is bounded.
setTimeout(() => {
  console.error("corpus.mjs: timed out after 240 s");
  process.exit(2);
}, 240_000).unref();

const pad = (n, w = 2) => String(n).padStart(w, "0");

// dateText prints an instant (epoch nanoseconds, a BigInt) as flightCell
// prints a time.Time: the date alone at midnight UTC, else RFC 3339 with
// the fraction's trailing zeros dropped.
function dateText(ns) {
  const nsPerMs = 1_000_000n;
  let ms = ns / nsPerMs;
  if (ns < 0n && ms * nsPerMs !== ns) ms -= 1n; // floor
  const sub = ns - ms * nsPerMs; // 0..999999 ns within the millisecond
  const d = new Date(Number(ms));
  const day = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const fracNs = BigInt(d.getUTCMilliseconds()) * nsPerMs + sub;
  if (d.getUTCHours() === 0 && d.getUTCMinutes() === 0 && d.getUTCSeconds() === 0 && fracNs === 0n) {
    return day;
  }
  let frac = fracNs === 0n ? "" : "." + String(fracNs).padStart(9, "0").replace(/0+$/, "");
  return `${day}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${frac}Z`;
}

// int64At reads the i-th 64-bit integer of an Arrow buffer kept as 32-bit
// words (apache-arrow 14 stores timestamps that way).
function int64At(words, i) {
  const lo = BigInt(words[2 * i] >>> 0);
  const hi = BigInt(words[2 * i + 1] | 0);
  return (hi << 32n) | lo;
}

const nsPerUnit = {
  [TimeUnit.SECOND]: 1_000_000_000n,
  [TimeUnit.MILLISECOND]: 1_000_000n,
  [TimeUnit.MICROSECOND]: 1_000n,
  [TimeUnit.NANOSECOND]: 1n,
};

function floatText(x) {
  if (x === Infinity) return "+Inf";
  if (x === -Infinity) return "-Inf";
  return String(x);
}

// cellText prints row i of one column chunk (an apache-arrow Data).
function cellText(vec, data, i) {
  if (!vec.isValid(i)) return null;
  const t = data.type;
  const j = data.offset + i;
  if (DataType.isTimestamp(t)) return dateText(int64At(data.values, j) * nsPerUnit[t.unit]);
  if (DataType.isDate(t) && t.unit === DateUnit.DAY) return dateText(BigInt(data.values[j]) * 86_400_000_000_000n);
  if (DataType.isFloat(t)) return floatText(vec.get(i));
  const v = vec.get(i);
  if (typeof v === "string" || typeof v === "bigint" || typeof v === "number" || typeof v === "boolean") {
    return String(v);
  }
  throw new Error(`column of type ${t} not printed by corpus.mjs`);
}

// rowsOf prints every row of an Arrow table, batch by batch.
function rowsOf(table) {
  const rows = [];
  for (const batch of table.batches) {
    const cols = table.schema.fields.map((_, c) => batch.getChildAt(c));
    for (let i = 0; i < batch.numRows; i++) {
      rows.push(cols.map((vec) => cellText(vec, vec.data[0], i)));
    }
  }
  return rows;
}

async function main() {
  const specFile = process.argv[2];
  if (!specFile) {
    console.error("usage: node corpus.mjs SPEC.json");
    process.exit(2);
  }
  const spec = JSON.parse(fs.readFileSync(specFile, "utf8"));
  const options = { host: spec.host, port: spec.port, tls: false, headers: [] };
  if (spec.token) options.token = spec.token;
  const client = await createFlightSqlClient(options);
  let tables;
  try {
    tables = rowsOf(tableFromIPC(await client.getTables({ includeSchema: false }))).map((r) => r[2]);
  } catch (err) {
    tables = { error: String(err && err.message ? err.message : err) };
  }
  const results = [];
  for (const sql of spec.queries) {
    try {
      const table = tableFromIPC(await client.query(sql));
      results.push({ columns: table.schema.fields.map((f) => f.name), rows: rowsOf(table) });
    } catch (err) {
      results.push({ error: String(err && err.message ? err.message : err) });
    }
  }
  process.stdout.write(JSON.stringify({ client: rustCrateVersion(), tables, results }) + "\n");
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
