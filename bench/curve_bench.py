#!/usr/bin/env python3
"""Sampled sizing curves against exact ones, and against one libCacheSim run.

Writes a Zipf oracleGeneral trace (default 100 M accesses over 10 M objects, alpha 0.8),
then for each policy (default classic, mglru, lru):

  * `pagelab curve --sample R` over N sizes (default 20, 1%..20% of the footprint) for each
    rate R, timed as a whole process (trace reading, conversion and sampling included);
  * the exact curve over the same sizes (`pagelab curve` without --sample, every point a full
    replay), timed the same way;
  * libCacheSim's LRU once over the whole trace at the smallest and at the middle size (PyPI
    `libcachesim`, its C core), the faster of the two the baseline a sampled curve must beat
    in wall time;

and prints, per policy and rate, the wall time of the sampled curve against libCacheSim's one
run and the largest miss-ratio error against the exact curve (percentage points), with each
point's error estimate beside its true error.

    python3 bench/curve_bench.py [--requests 100000000] [--objects 11000000] [--points 20]
                                 [--rates 0.01,0.001] [--policies classic,mglru,lru]
                                 [--trace EXISTING.oracleGeneral]

The sizes are given to both curves in pages (1%..20% of the trace's distinct pages, counted
here), so the sampled and the exact curve are computed at the same sizes: a sampled curve's
percentages would be of the footprint its samples estimate.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import traces  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


def curve(bin_, path, policy, memory, sample=None):
    """(seconds, points) of one `pagelab curve` process."""
    cmd = [bin_, "curve", str(path), "--policy", policy, "--memory", memory, "--json", "-"]
    if sample is not None:
        cmd += ["--sample", str(sample)]
    t = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    secs = time.perf_counter() - t
    # With --json - standard output is the JSON alone: its provenance and points.
    return secs, json.loads(out.stdout)["points"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=100_000_000)
    ap.add_argument("--objects", type=int, default=11_000_000)
    ap.add_argument("--alpha", type=float, default=0.8)
    ap.add_argument("--points", type=int, default=20)
    ap.add_argument("--rates", default="0.01,0.001")
    ap.add_argument("--policies", default="classic,mglru,lru")
    ap.add_argument("--bin", default=str(ROOT / "target/release/pagelab"))
    ap.add_argument("--trace", help="an existing oracleGeneral trace instead of a generated one")
    a = ap.parse_args()
    import libcachesim as lcs
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        if a.trace:
            path = pathlib.Path(a.trace)
            ids = np.memmap(path, dtype=traces.RECORD, mode="r")["obj_id"]
            requests, footprint = len(ids), len(np.unique(ids))
            del ids
        else:
            path = pathlib.Path(tmp) / "zipf.oracleGeneral"
            requests = a.requests
            footprint = traces.write_zipf(str(path), a.requests, a.objects, a.alpha, seed=11)
        pages = [round(footprint * (1 + 19 * i / (a.points - 1)) / 100) for i in range(a.points)]
        memory = ",".join(f"{p}p" for p in pages)
        lcs_runs = []
        for size in (pages[0], pages[len(pages) // 2]):
            reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
            cache = lcs.LRU(size * 4096, hashpower=max(size.bit_length() + 1, 16))
            t = time.perf_counter()
            mr, _ = cache.process_trace(reader)
            lcs_runs.append((time.perf_counter() - t, size, mr))
        lcs_s = min(s for s, _, _ in lcs_runs)
        print(f"trace: {requests / 1e6:g} M accesses, {footprint / 1e6:.2f} M distinct pages"
              f"{'' if a.trace else f', Zipf {a.alpha}'}; curve: {a.points} sizes, 1%..20% of the footprint")
        for s, size, mr in lcs_runs:
            print(f"libCacheSim LRU, one run at {size} pages: {s:.1f} s, {requests / s / 1e6:.1f} M accesses/s (miss ratio {mr:.4f})")
        print()
        print(f"{'policy':8} {'rate':>7} {'sampled s':>10} {'x lcs run':>10} {'exact s':>9} {'max err pp':>11} {'max est pp':>11}")
        for policy in a.policies.split(","):
            exact_s, exact = curve(a.bin, path, policy, memory)
            for rate in (float(r) for r in a.rates.split(",")):
                try:
                    s, pts = curve(a.bin, path, policy, memory, rate)
                except subprocess.CalledProcessError as e:
                    print(f"{policy:8} {rate:>7g} refused: {e.stderr.strip().splitlines()[-1]}")
                    continue
                err = max(abs(p["miss_ratio"] - q["miss_ratio"]) for p, q in zip(pts, exact)) * 100
                est = max(p["miss_ratio_error"] for p in pts) * 100
                print(f"{policy:8} {rate:>7g} {s:>10.2f} {s / lcs_s:>10.3f} {exact_s:>9.1f} {err:>11.2f} {est:>11.2f}", flush=True)
                for p, q in zip(pts, exact):
                    # The command warns (on standard error) below this many scaled pages.
                    scaled = round(p["memory"] // 4096 * rate)
                    small = f"(the scaled memory ({scaled} pages) is below 1024 pages)" if policy in ("classic", "mglru") and scaled < 1024 else ""
                    print(f"    {p['memory'] / 2**20:>9.1f}M  exact {q['miss_ratio']:.4f}  sampled {p['miss_ratio']:.4f} "
                          f"±{p['miss_ratio_error']:.4f}  {small}")


if __name__ == "__main__":
    main()
