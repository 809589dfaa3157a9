#!/usr/bin/python3
"""Regression check of a peer-benchmark run against a committed one.

  bench/check_peers.py BASELINE_RUNS RESULTS_DIR [--tolerance 0.05]

BASELINE_RUNS is the runs.jsonl of the committed run (make bench-peers takes
it from git before the new run overwrites bench/results/n$N); RESULTS_DIR
holds the new run's runs.jsonl and expected.json. It fails (exit 1) when
Quarry's geometric mean over Q1-Q8 of ours/DuckDB (median seconds, cold and
warm separately; DuckDB is re-run each time, so the ratio absorbs most of
the machine's own drift) is more than the tolerance above the baseline's,
when an answer of ours (cold or warm) disagrees with the reference in
expected.json, or when a query of ours failed. It prints one line per
check.
"""
import argparse
import json
import os
import sys

from ratios import load, medians, ratio_geomean


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("baseline")
    ap.add_argument("results")
    ap.add_argument("--tolerance", type=float, default=0.05)
    a = ap.parse_args()
    base = medians(load(a.baseline))
    recs = load(os.path.join(a.results, "runs.jsonl"))
    new = medians(recs)
    ok = True
    for mode in ("cold", "warm"):
        b, n = ratio_geomean(base, base, mode, "duckdb"), ratio_geomean(new, new, mode, "duckdb")
        bad = not (n <= b * (1 + a.tolerance))  # nan (no run) fails too
        ok = ok and not bad
        print(f"{'FAIL' if bad else 'ok'}: {mode} geomean ours/duckdb {n:.3f} vs committed {b:.3f} "
              f"(limit {b * (1 + a.tolerance):.3f})")
    with open(os.path.join(a.results, "expected.json")) as fh:
        queries = json.load(fh)["queries"]
    wrong = sorted(f"{q} {who}" for q, e in queries.items() for who in e.get("disagree", {}) if who.startswith("ours"))
    failed = sorted({f"{r['query']} {r['mode']}" for r in recs
                     if r.get("_tag") == "RESULT" and r.get("peer") == "ours" and r.get("error")})
    for what, items in (("answers differ", wrong), ("queries failed", failed)):
        ok = ok and not items
        print(f"{'FAIL' if items else 'ok'}: {what}: {', '.join(items) or 'none'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
