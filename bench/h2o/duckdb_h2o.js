'use strict';
// DuckDB side of the H2O groupby benchmark (bench/h2o/README.md), speaking the
// peer harness's runner protocol (../shared/bench/README.md) through its
// runners/common.js (PEERBENCH: the harness directory).
//   warm: CREATE TABLE x AS SELECT * FROM read_csv_auto(csv) once (LOAD), then each
//         question REPS times as CREATE OR REPLACE TABLE ans AS <question> (timed,
//         as db-benchmark does), then untimed: the row count and the first rows in
//         key order for the checksum.
const path = require('path');
const c = require(path.join(process.env.PEERBENCH || path.join(__dirname, '../../../shared/bench'), 'runners/common.js'));

const { DuckDBInstance, DuckDBTypeId } = c.depRequire('@duckdb/node-api');
const { timed } = require('../duckdb_timed.js');

// The questions as in db-benchmark's duckdb/groupby-duckdb.R, output names as
// Quarry's specs (cmd/quarry-bench/h2o.go) name them.
const SQL = {
  G1: ['SELECT id1, sum(v1) AS sum_v1 FROM x GROUP BY id1', 'id1'],
  G2: ['SELECT id1, id2, sum(v1) AS sum_v1 FROM x GROUP BY id1, id2', 'id1, id2'],
  G3: ['SELECT id3, sum(v1) AS sum_v1, avg(v3) AS avg_v3 FROM x GROUP BY id3', 'id3'],
  G4: ['SELECT id4, avg(v1) AS avg_v1, avg(v2) AS avg_v2, avg(v3) AS avg_v3 FROM x GROUP BY id4', 'id4'],
  G5: ['SELECT id6, sum(v1) AS sum_v1, sum(v2) AS sum_v2, sum(v3) AS sum_v3 FROM x GROUP BY id6', 'id6'],
  G6: ['SELECT id4, id5, quantile_cont(v3, 0.5) AS median_v3, stddev(v3) AS sd_v3 FROM x GROUP BY id4, id5', 'id4, id5'],
  G7: ['SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM x GROUP BY id3', 'id3'],
  G8: [`SELECT id6, v3 AS largest2_v3 FROM (SELECT id6, v3, row_number() OVER (PARTITION BY id6 ORDER BY v3 DESC) AS order_v3
        FROM x WHERE v3 IS NOT NULL) sub_query WHERE order_v3 <= 2`, 'id6, largest2_v3 DESC'],
  G9: ['SELECT id2, id4, pow(corr(v1, v2), 2) AS r2 FROM x GROUP BY id2, id4', 'id2, id4'],
  G10: [`SELECT id1, id2, id3, id4, id5, id6, sum(v3) AS sum_v3, count(*) AS count
         FROM x GROUP BY id1, id2, id3, id4, id5, id6`, 'id1, id2, id3, id4, id5, id6'],
};

function kindOf(typeId) {
  switch (typeId) {
    case DuckDBTypeId.TINYINT: case DuckDBTypeId.SMALLINT: case DuckDBTypeId.INTEGER: case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UTINYINT: case DuckDBTypeId.USMALLINT: case DuckDBTypeId.UINTEGER: case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT: case DuckDBTypeId.UHUGEINT: return 'i';
    case DuckDBTypeId.FLOAT: case DuckDBTypeId.DOUBLE: case DuckDBTypeId.DECIMAL: return 'f';
    case DuckDBTypeId.BOOLEAN: return 'b';
    default: return 's';
  }
}

async function main() {
  const a = c.parseArgs(process.argv);
  const inst = await DuckDBInstance.create(':memory:');
  const con = await inst.connect();
  const ver = (await con.runAndReadAll("SELECT version(), current_setting('threads')")).getRowsJS()[0];
  c.emit('INFO', { peer: 'duckdb', version: String(ver[0]), threads: Number(ver[1]), node: process.version });
  const t0 = c.now();
  await con.run(`CREATE TABLE x AS SELECT * FROM read_csv_auto(${c.sqlString(a.csv)})`);
  const load = c.secsSince(t0);
  const n = (await con.runAndReadAll('SELECT count(*) FROM x')).getRowsJS()[0][0];
  c.emit('LOAD', { peer: 'duckdb', mode: 'warm', secs: load, rows: Number(n) });
  for (const q of a.queries) {
    const [sql, keys] = SQL[q];
    await timed(c, con, q, sql, a.reps, async () => {
      const r = await con.runAndReadAll(`SELECT * FROM ans ORDER BY ${keys} LIMIT ${c.FIRST_ROWS}`);
      const kinds = r.columnTypes().map((t) => kindOf(t.typeId));
      return { cols: r.columnNames(), kinds, first_rows: r.getRowsJS().map((row) => row.map((v, i) => c.cell(v, kinds[i]))) };
    });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
