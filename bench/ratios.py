#!/usr/bin/python3
"""Quarry/peer time ratios from a peer-benchmark run (runs.jsonl).

  bench/ratios.py bench/results/n5000000/runs.jsonl [--reference ../shared/bench/results/n5000000/runs.jsonl]

Prints, per query and mode, the median seconds of ours, DuckDB and Polars,
the ratios ours/duckdb and ours/polars (<1 means Quarry is faster) and their
geometric means over Q1-Q8; the warm load times; and the peak RSS the
quarry-bench warm process reported. With --reference, peers' medians come
from that run instead (e.g. a run on a quieter machine).
"""
import argparse
import json
import math
import statistics

QS = [f"Q{i}" for i in range(1, 9)]


def load(path):
    recs = []
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if line:
                recs.append(json.loads(line))
    return recs


def medians(recs):
    by = {}
    for r in recs:
        if r.get("_tag") == "RESULT" and r.get("secs") is not None and not r.get("error"):
            by.setdefault((r["peer"], r["mode"], r["query"]), []).append(r["secs"])
    return {k: statistics.median(v) for k, v in by.items()}


def ratio_geomean(med, peers, mode, peer):
    """Geometric mean over Q1-Q8 of ours/peer median seconds in mode (the
    queries both ran); nan when none did."""
    logs = [math.log(med[("ours", mode, q)] / peers[(peer, mode, q)]) for q in QS
            if med.get(("ours", mode, q)) and peers.get((peer, mode, q))]
    return math.exp(sum(logs) / len(logs)) if logs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs")
    ap.add_argument("--reference")
    a = ap.parse_args()
    recs = load(a.runs)
    med = medians(recs)
    peers = medians(load(a.reference)) if a.reference else med
    print("| query | mode | ours s | duckdb s | polars s | ours/duckdb | ours/polars |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for mode in ("cold", "warm"):
        for q in QS:
            o = med.get(("ours", mode, q))
            d = peers.get(("duckdb", mode, q))
            p = peers.get(("polars", mode, q))
            cells = [f"{o / v:.2f}" if o and v else "" for v in (d, p)]
            f = lambda x: "" if x is None else f"{x:.4f}"
            print(f"| {q} | {mode} | {f(o)} | {f(d)} | {f(p)} | {cells[0]} | {cells[1]} |")
        g = {k: ratio_geomean(med, peers, mode, k) for k in ("duckdb", "polars")}
        print(f"| **geomean** | {mode} | | | | **{g['duckdb']:.2f}** | **{g['polars']:.2f}** |")
    loads = {}
    for r in recs + (load(a.reference) if a.reference else []):
        # (quarry-bench's HDF5 warm load, the file open, is tagged "what": "h5")
        if r.get("_tag") == "LOAD" and r.get("secs") is not None and r.get("what") != "h5":
            loads.setdefault(r["peer"], []).append(r["secs"])
    print()
    print("Warm load: " + ", ".join(f"{k} {statistics.median(v):.3f}s" for k, v in sorted(loads.items())))
    # The CSV queries' peak: the HDF5 queries (whole-dataset reads) run after
    # them in the same warm process and are not part of the CSV target.
    rss = [r.get("peak_rss_bytes") for r in recs if r.get("peer") == "ours" and r.get("mode") == "warm" and r.get("peak_rss_bytes")
           and str(r.get("query", "Q")).startswith("Q")]
    load_rss = [r.get("peak_rss_bytes") for r in recs if r.get("_tag") == "LOAD" and r.get("peer") == "ours" and r.get("peak_rss_bytes")]
    if rss:
        print(f"Quarry warm process peak RSS: after load {max(load_rss) / 1e6:.0f} MB, Q1-Q8 {max(rss) / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
