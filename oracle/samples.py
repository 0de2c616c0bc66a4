#!/usr/bin/env python3
"""Prints the time series a sampled oracle run recorded in the guest.

    PAGELAB_ORACLE_SAMPLE_MS=100 pagelab oracle SCENARIO --kernel K --policy P --json RUN.json
    oracle/samples.py RUN.json [FROM_S [TO_S]]

One line per sample: each zone's free pages (and its high watermark, which includes any
watermark boost), then pgalloc per zone, kswapd's and direct reclaim's steals, kswapd runs and
the runs that ended with kswapd woken during its nap (kswapd_low_wmark_hit_quickly), and,
where the guest recorded them (since 2026-11-28), each zone's free pages on the unmovable and
reclaimable lists (`nonmov`), which movable allocations reach only by falling back.
"""
import json
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    run = json.load(open(sys.argv[1]))
    samples = run.get("kernel", {}).get("samples", [])
    if not samples:
        sys.exit(f"{sys.argv[1]}: no samples (set PAGELAB_ORACLE_SAMPLE_MS when running the oracle)")
    lo = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    hi = float(sys.argv[3]) if len(sys.argv) > 3 else float("inf")
    for s in samples:
        if not lo <= s["t_s"] <= hi:
            continue
        v = s["vmstat"]
        zones = " ".join(f"{name} {free:6d}/{high:<4d}" for name, free, _min, _low, high in s["zones"])
        allocs = " ".join(f"{k[8:]} {v.get(k, 0):8d}" for k in ("pgalloc_dma", "pgalloc_dma32", "pgalloc_normal") if k in v)
        print(
            f"{s['t_s']:7.2f}s  {zones} | {allocs} | kswapd {v.get('pgsteal_kswapd', 0):8d} "
            f"direct {v.get('pgsteal_direct', 0):7d} runs {v.get('pageoutrun', 0):6d} "
            f"nap-woken {v.get('kswapd_low_wmark_hit_quickly', 0):6d}"
            + "".join(f" | nonmov {name} {n:5d}" for name, n in s.get("nonmovable_free", []))
        )


if __name__ == "__main__":
    main()
