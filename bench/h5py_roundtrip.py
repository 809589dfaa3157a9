#!/usr/bin/python3
"""h5py side of Quarry's HDF5 slice benchmark (docs/BENCHMARKS.md).

For the harness's H1 and H2 slices of sales.h5, times (median of REPS, file
kept open like the harness's warm mode):
  read       h5py read into numpy
  read+json  the read plus json.dumps(arr.tolist()) -- what a Python MCP
             server does to return the slice as nested lists
Usage: h5py_roundtrip.py SALES_H5 [REPS]
"""
import json
import statistics
import sys
import time

import h5py

path = sys.argv[1]
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
queries = {
    "H1": lambda f: f["sales/price"][1000000:1010000],
    "H2": lambda f: f["grid"][1000:1512, 2000:2512],
}
with h5py.File(path, "r") as f:
    for name, q in queries.items():
        q(f)  # warm the chunk cache the same way for both timings
        reads, rts = [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            a = q(f)
            t1 = time.perf_counter()
            s = json.dumps(a.tolist())
            t2 = time.perf_counter()
            reads.append(t1 - t0)
            rts.append(t2 - t0)
        print(json.dumps({"query": name, "read_ms": statistics.median(reads) * 1e3,
                          "read_json_ms": statistics.median(rts) * 1e3, "json_bytes": len(s)}))
