'use strict';
// Usage: node joinbench.js
//
// DuckDB side of the engine's join benchmarks (engine/join_bench_test.go,
// docs/BENCHMARKS.md): the same tables (probe: k = (i * 7919) % m, v = i;
// build: b = p = m - 1 - i) built in memory, then the inner join
// materialized as a table (all 4 columns), best of 3 warm runs, seconds.
const { DuckDBInstance } = require('@duckdb/node-api');

async function main() {
  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await db.connect();
  const version = (await conn.runAndReadAll('SELECT version()')).getRows()[0][0];
  const out = { duckdb: version, seconds: {} };
  for (const [n, m] of [[10000000, 10], [10000000, 10000], [1000000, 1000000]]) {
    await conn.run(`CREATE OR REPLACE TABLE probe AS SELECT (i * 7919) % ${m} AS k, i AS v FROM range(${n}) t(i)`);
    await conn.run(`CREATE OR REPLACE TABLE build AS SELECT ${m} - 1 - i AS b, ${m} - 1 - i AS p FROM range(${m}) t(i)`);
    let best = Infinity;
    for (let r = 0; r < 3; r++) {
      const t0 = process.hrtime.bigint();
      await conn.run('CREATE OR REPLACE TABLE res AS SELECT k, v, b, p FROM probe JOIN build ON k = b');
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
    }
    const rows = (await conn.runAndReadAll('SELECT count(*) FROM res')).getRows()[0][0];
    if (Number(rows) !== n) throw new Error(`${n}x${m}: ${rows} rows`);
    out.seconds[`${n}x${m}`] = best;
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
