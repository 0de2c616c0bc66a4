#!/usr/bin/env python3
"""Miniature scenarios against full runs: a scenario's sampled curve beside its exact one.

For each bundled scenario below (or those given), and each policy, computes the curve of one
of its sizes (`pagelab curve SCENARIO --vary KEY=SIZES`) in full, then with `--sample R` for
each rate, and prints per counter the largest error of a sampled point against the exact
point, as a percentage of the exact curve's largest value (so a counter near zero at one
size does not blow up a relative error), the error estimate at that point (half the two
hash seeds' difference), and the wall time of each whole curve.

    python3 bench/scenario_curve_bench.py [--rates 0.25,0.1] [--policies classic,mglru]
                                          [--kernel 6.1] [--points 5] [--only NAME,...]

The binary is target/release/pagelab (build it first), or $PAGELAB_BIN.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = pathlib.Path(os.environ.get("PAGELAB_BIN", ROOT / "target/release/pagelab"))

# Scenario, the size varied, its sizes: the machine's memory or a cgroup's limit over a range
# where the counters move.
SCENARIOS = [
    ("examples/fio-zipf.toml", "cgroup./test.max", "64M..192M:{n}"),
    ("oracle/scenarios/file-zipf.toml", "machine.memory", "64M..192M:{n}"),
    ("oracle/scenarios/mmap-file.toml", "machine.memory", "64M..192M:{n}"),
    ("oracle/scenarios/memcg-limit-zipf.toml", "cgroup./test.max", "48M..192M:{n}"),
    ("oracle/scenarios/cgroups-parent-limit.toml", "machine.memory", "160M..384M:{n}"),
    ("oracle/scenarios/file-seq-stream.toml", "machine.memory", "192M..640M:{n}"),
    ("oracle/scenarios/file-loop-scan.toml", "machine.memory", "128M..320M:{n}"),
    ("oracle/scenarios/anon-swap-zram.toml", "machine.memory", "160M..256M:{n}"),
    ("oracle/scenarios/anon-swap-disk.toml", "machine.memory", "160M..256M:{n}"),
    ("oracle/scenarios/mixed-anon-file.toml", "machine.memory", "160M..384M:{n}"),
]

COUNTERS = [
    "workingset_refault_file",
    "workingset_refault_anon",
    "pgsteal_file",
    "pgsteal_anon",
    "pswpout",
    "pgactivate",
    "pgscan_kswapd",
    "pgscan_direct",
    "throughput_ops_s",
]


def curve(path, key, sizes, policy, kernel, rate, out):
    cmd = [str(BIN), "curve", str(ROOT / path), "--vary", f"{key}={sizes}", "--policy", policy, "--kernel", kernel]
    cmd += ["--counters", ",".join(COUNTERS), "--json", str(out)]
    if rate is not None:
        cmd += ["--sample", str(rate)]
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        return None, wall, r.stderr.strip().splitlines()[-1]
    return json.loads(out.read_text())["points"], wall, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="0.25,0.1")
    ap.add_argument("--policies", default="classic,mglru")
    ap.add_argument("--kernel", default="6.1")
    ap.add_argument("--points", type=int, default=5)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    rates = [float(r) for r in a.rates.split(",")]
    only = [o for o in a.only.split(",") if o]
    tmp = pathlib.Path(tempfile.mkdtemp())
    print(f"| scenario | varied | policy | R | exact s | sampled s | " + " | ".join(COUNTERS) + " |")
    print("|" + "---|" * (6 + len(COUNTERS)))
    for path, key, sizes in SCENARIOS:
        name = pathlib.Path(path).stem
        if only and name not in only:
            continue
        sizes = sizes.format(n=a.points)
        for policy in a.policies.split(","):
            exact, t_exact, err = curve(path, key, sizes, policy, a.kernel, None, tmp / "exact.json")
            if exact is None:
                print(f"| {name} | {key} | {policy} | - | failed: {err} |", flush=True)
                continue
            for rate in rates:
                sampled, t_sampled, err = curve(path, key, sizes, policy, a.kernel, rate, tmp / "sampled.json")
                if sampled is None:
                    print(f"| {name} | {key} | {policy} | {rate} | {t_exact:.1f} | refused: {err} |", flush=True)
                    continue
                cells = []
                for c in COUNTERS:
                    peak = max(abs(p[c]) for p in exact)
                    if peak < 100:
                        cells.append("-")
                        continue
                    worst = max(range(len(exact)), key=lambda i: abs(sampled[i][c] - exact[i][c]))
                    e = 100 * abs(sampled[worst][c] - exact[worst][c]) / peak
                    est = 100 * sampled[worst][c + "_error"] / peak
                    cells.append(f"{e:.1f} ({est:.1f})")
                print(f"| {name} | {key} | {policy} | {rate} | {t_exact:.1f} | {t_sampled:.1f} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
