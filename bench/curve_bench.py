#!/usr/bin/env python3
"""Sampled sizing curves against exact ones, and against one libCacheSim run.

Writes a Zipf oracleGeneral trace (default 100 M accesses over 10 M objects, alpha 0.8),
then for each policy (default classic, mglru, lru):

  * `pagelab curve --sample R` over N sizes (default 20, 1%..20% of the footprint) for each
    rate R, timed as a whole process (trace reading, conversion and sampling included);
  * the exact curve over the same sizes (`pagelab curve` without --sample, every point a full
    replay), timed the same way;
  * libCacheSim's LRU once over the whole trace at the middle size (PyPI `libcachesim`, its C
    core), the baseline a sampled curve must beat in wall time;

and prints, per policy and rate, the wall time of the sampled curve against libCacheSim's one
run and the largest miss-ratio error against the exact curve (percentage points), with each
point's error estimate beside its true error.

    python3 bench/curve_bench.py [--requests 100000000] [--objects 10000000] [--points 20]
                                 [--rates 0.01,0.001] [--policies classic,mglru,lru]
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
    # With --json - standard output is the JSON array alone.
    return secs, json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=100_000_000)
    ap.add_argument("--objects", type=int, default=10_000_000)
    ap.add_argument("--alpha", type=float, default=0.8)
    ap.add_argument("--points", type=int, default=20)
    ap.add_argument("--rates", default="0.01,0.001")
    ap.add_argument("--policies", default="classic,mglru,lru")
    ap.add_argument("--bin", default=str(ROOT / "target/release/pagelab"))
    a = ap.parse_args()
    import libcachesim as lcs

    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "zipf.oracleGeneral"
        footprint = traces.write_zipf(str(path), a.requests, a.objects, a.alpha, seed=11)
        memory = f"1%..20%:{a.points}"
        mid = int(footprint * 0.10)
        reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
        cache = lcs.LRU(mid * 4096, hashpower=max(mid.bit_length() + 1, 16))
        t = time.perf_counter()
        mr, _ = cache.process_trace(reader)
        lcs_s = time.perf_counter() - t
        print(f"trace: {a.requests / 1e6:g} M accesses, {footprint / 1e6:.2f} M distinct pages, Zipf {a.alpha}; "
              f"curve: {a.points} sizes, 1%..20% of the footprint")
        print(f"libCacheSim LRU, one run at 10%: {lcs_s:.1f} s (miss ratio {mr:.4f})\n")
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
                    small = f"(the scaled memory ({scaled} pages) is below 16384 pages)" if policy in ("classic", "mglru") and scaled < 16384 else ""
                    print(f"    {p['memory'] / 2**20:>9.1f}M  exact {q['miss_ratio']:.4f}  sampled {p['miss_ratio']:.4f} "
                          f"±{p['miss_ratio_error']:.4f}  {small}")


if __name__ == "__main__":
    main()
