'use strict';
// Usage: node bench/window_duckdb.js [threads] [reps]
// (run from the repository root after `npm ci --prefix interop/duckdb`)
//
// DuckDB's side of the window benchmarks of engine/window_bench_test.go: the
// same 5M-row table (g: 10,000 interleaved groups, t: row number, v: float
// with ties), each window materialized into a temporary table (all input
// columns plus the window column, like Quarry's engine output). Prints, per
// query, the median wall and CPU (user + system, all threads) milliseconds
// of reps warm runs after one warm-up.
const path = require('path');
const { DuckDBInstance } = require(path.join(__dirname, '..', 'interop', 'duckdb', 'node_modules', '@duckdb', 'node-api'));

const queries = {
  RunningSum5M: 'sum(v) OVER (PARTITION BY g ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)',
  Rank5M: 'rank() OVER (PARTITION BY g ORDER BY v DESC)',
  MovingAvg5M: 'avg(v) OVER (PARTITION BY g ORDER BY t ROWS BETWEEN 6 PRECEDING AND CURRENT ROW)',
};

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main() {
  const threads = Number(process.argv[2] || 2);
  const reps = Number(process.argv[3] || 5);
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  await conn.run(`SET threads = ${threads}`);
  await conn.run('CREATE TABLE x AS SELECT (i * 7919) % 10000 AS g, i AS t, ((i * 31) % 1000)::DOUBLE / 4 AS v FROM range(5000000) r(i)');
  const version = (await conn.runAndReadAll('SELECT version()')).getRows()[0][0];
  const all = Object.entries(queries).map(([name, w]) => [name, `CREATE OR REPLACE TEMP TABLE r AS SELECT g, t, v, ${w} AS w FROM x`]);
  all.push(['TopNPerGroup5M', 'CREATE OR REPLACE TEMP TABLE r AS SELECT g, v FROM (SELECT g, v, row_number() OVER (PARTITION BY g ORDER BY v DESC) AS n FROM x) WHERE n <= 2']);
  for (const [name, sql] of all) {
    await conn.run(sql); // warm-up
    const walls = [], cpus = [];
    for (let i = 0; i < reps; i++) {
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      await conn.run(sql);
      walls.push(Number(process.hrtime.bigint() - t0) / 1e6);
      const c = process.cpuUsage(c0);
      cpus.push((c.user + c.system) / 1000);
    }
    console.log(`duckdb ${version} threads=${threads} ${name}: wall ${median(walls).toFixed(0)} ms, cpu ${median(cpus).toFixed(0)} ms (median of ${reps})`);
  }
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
