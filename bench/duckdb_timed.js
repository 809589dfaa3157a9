'use strict';
// timed: the warm timing loop shared by the DuckDB runners of bench/h2o and
// bench/tpch. Each of REPS runs of a question is timed as
// CREATE OR REPLACE TABLE ans AS <sql> (as db-benchmark does); then, untimed,
// the row count and, on the first rep, the fields first(con) returns (the
// first rows, read from table ans) go into the peer harness's RESULT record
// (../shared/bench/README.md, "Runner protocol"), printed with c.emit.
async function timed(c, con, q, sql, reps, first) {
  for (let rep = 1; rep <= reps; rep++) {
    const rec = { peer: 'duckdb', mode: 'warm', query: q, rep };
    try {
      const t1 = c.now();
      await con.run(`CREATE OR REPLACE TABLE ans AS ${sql}`);
      rec.secs = c.secsSince(t1);
      rec.rows = Number((await con.runAndReadAll('SELECT count(*) FROM ans')).getRowsJS()[0][0]);
      if (rep === 1) Object.assign(rec, await first(con));
      await con.run('DROP TABLE ans');
    } catch (e) {
      rec.error = String(e && e.message || e).split('\n')[0].slice(0, 300);
    }
    c.human('duckdb', 'warm', q, rep, rec.rows, rec.secs, rec.error);
    c.emit('RESULT', rec);
  }
}

module.exports = { timed };
