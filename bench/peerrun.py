"""Running a peer runner (the harness's Runner protocol, ../shared/bench/README.md) and reading
its output: shared by bench/h2o/h2o.py and bench/tpch/tpch.py."""
import json
import math
import os
import statistics
import subprocess


def run_peer(peer, cmd, log, timeout, env):
    """Runs cmd, logs each RESULT/LOAD line, and returns its RESULT records (each tagged with
    peer), its LOAD seconds (None without a LOAD line) and the fields of its INFO/MEM lines."""
    records, load, info = [], None, {}
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    for line in p.stdout.splitlines():
        tag, _, rest = line.partition(" ")
        if tag not in ("RESULT", "LOAD", "INFO", "MEM"):
            continue
        r = json.loads(rest)
        if tag == "RESULT":
            r["peer"] = peer
            records.append(r)
            s = f"ERROR {r['error']}" if r.get("error") else f"rows={r.get('rows')} secs={r.get('secs', 0):.3f}"
            log(f"  {peer:6s} {r['query']:4s} rep={r.get('rep')} {s}")
        elif tag == "LOAD":
            load = r.get("secs")
            log(f"  {peer:6s} LOAD {r.get('secs', 0):.2f}s")
        else:
            info.update(r)
    if p.returncode != 0:
        log(f"  {peer} exited {p.returncode}: {p.stderr.strip()[-500:]}")
    return records, load, info


def median_secs(records, peer, q, keep=lambda r: True):
    """Median seconds of peer's timed runs of q (the records keep accepts); None when none ran."""
    v = [r["secs"] for r in records if r["peer"] == peer and r["query"] == q and r.get("secs") is not None and keep(r)]
    return statistics.median(v) if v else None


def results_log(results):
    """Creates the results directory and returns log(s): print s and append it to RESULTS/log.txt."""
    os.makedirs(results, exist_ok=True)
    logf = open(os.path.join(results, "log.txt"), "w")

    def log(s):
        print(s, flush=True)
        logf.write(s + "\n")
    return log


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def write_results(results, text, records, env, log):
    """Writes RESULTS/summary.md (text), runs.jsonl (records) and env.json, and logs text."""
    with open(os.path.join(results, "summary.md"), "w") as fh:
        fh.write(text)
    with open(os.path.join(results, "runs.jsonl"), "w") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    with open(os.path.join(results, "env.json"), "w") as fh:
        json.dump(env, fh, indent=1)
    log("")
    log(text)
