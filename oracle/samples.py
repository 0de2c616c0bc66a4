#!/usr/bin/env python3
"""Prints the time series a sampled oracle run recorded in the guest.

    PAGELAB_ORACLE_SAMPLE_MS=100 pagelab oracle SCENARIO --kernel K --policy P --json RUN.json
    oracle/samples.py RUN.json [FROM_S [TO_S]]
    oracle/samples.py --model RUN.json [FROM_S [TO_S]]
    oracle/samples.py --lru-gen RUN.json [FROM_S [TO_S]]
    oracle/samples.py --frames RUN.json [FROM_S [TO_S]]

`--model` prints the model's side instead, from its series (`--set report.interval=100ms` for
the same period); the per-zone columns need a run with non-movable pageblocks
(`--pageblocks`), whose series carry each zone's free pages, high watermark and non-movable
free pages. The model's clock is not the guest's: compare the phases, not the seconds.

`--lru-gen` prints MGLRU's generations instead, where the guest sampled
/sys/kernel/debug/lru_gen (since 2026-11-29): per sample and memcg, each generation as
`seq:age_ms anon/file` pages, oldest first.

`--frames` prints what the frames of each zone's non-movable pageblocks hold, where the guest
ran the census (`PAGELAB_ORACLE_KPAGEFLAGS=1`, since 2026-11-30): per zone and migratetype, its
blocks, then frames by /proc/kpageflags: LRU (anon), slab, page tables, free (buddy), no flag
at all (`none`: a page on a per-CPU list, or kernel memory the flags do not name), and the rest.

One line per sample: each zone's free pages (and its high watermark, which includes any
watermark boost), then pgalloc per zone, kswapd's and direct reclaim's steals, kswapd runs and
the runs that ended with kswapd woken during its nap (kswapd_low_wmark_hit_quickly), and,
where the guest recorded them (since 2026-11-28), each zone's free pages on the unmovable and
reclaimable lists (`nonmov`), which movable allocations reach only by falling back, and
(since 2026-11-29) the kernel's own allocations: xarray nodes, slab, page tables, pageblocks.
"""
import json
import sys


def model_lines(run, lo, hi):
    """The model's series in the same columns: its events are per interval, so they are summed."""
    totals = {}
    for s in run.get("model", {}).get("series", []):
        v = s["vmstat"]
        for k in ("pgalloc_dma", "pgalloc_dma32", "pgalloc_normal", "pgsteal_kswapd", "pgsteal_direct", "pageoutrun", "kswapd_low_wmark_hit_quickly"):
            totals[k] = totals.get(k, 0) + v.get(k, 0)
        if not lo <= s["t_s"] <= hi:
            continue
        zones = " ".join(
            f"{name} {v[f'zone_free_{name.lower()}']:6d}/{v[f'zone_high_{name.lower()}']:<4d}" for name in ("DMA", "DMA32", "Normal") if f"zone_free_{name.lower()}" in v
        )
        allocs = " ".join(f"{k[8:]} {totals[k]:8d}" for k in ("pgalloc_dma", "pgalloc_dma32", "pgalloc_normal") if k in v)
        print(
            f"{s['t_s']:7.2f}s  {zones} | {allocs} | kswapd {totals['pgsteal_kswapd']:8d} "
            f"direct {totals['pgsteal_direct']:7d} runs {totals['pageoutrun']:6d} "
            f"nap-woken {totals['kswapd_low_wmark_hit_quickly']:6d}"
            + "".join(f" | nonmov {name} {v[f'nonmovable_free_{name.lower()}']:5d}" for name in ("DMA", "DMA32", "Normal") if f"nonmovable_free_{name.lower()}" in v)
        )


def lru_gen_line(text):
    """One sample of /sys/kernel/debug/lru_gen: per memcg, its generations on every node."""
    out, memcg = [], None
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "memcg":
            memcg = f[2] if len(f) > 2 else f[1]
            out.append(f"{memcg}:")
        elif len(f) >= 4 and f[0].isdigit() and memcg is not None:
            out.append(f"{f[0]}:{f[1]}ms {f[2]}/{f[3]}")
    return " ".join(out)


def main():
    args = sys.argv[1:]
    model = "--model" in args
    gens = "--lru-gen" in args
    frames = "--frames" in args
    args = [a for a in args if a not in ("--model", "--lru-gen", "--frames")]
    if not args:
        sys.exit(__doc__)
    sys.argv = [sys.argv[0]] + args
    run = json.load(open(sys.argv[1]))
    if model:
        lo = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
        hi = float(sys.argv[3]) if len(sys.argv) > 3 else float("inf")
        if not run.get("model", {}).get("series"):
            sys.exit(f"{sys.argv[1]}: the model's side has no series")
        return model_lines(run, lo, hi)
    samples = run.get("kernel", {}).get("samples", [])
    if not samples:
        sys.exit(f"{sys.argv[1]}: no samples (set PAGELAB_ORACLE_SAMPLE_MS when running the oracle)")
    lo = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    hi = float(sys.argv[3]) if len(sys.argv) > 3 else float("inf")
    if gens and not any(s.get("lru_gen") for s in samples):
        sys.exit(f"{sys.argv[1]}: its samples have no lru_gen (a guest before 2026-11-29, or MGLRU off)")
    if frames and not any(s.get("frames") for s in samples):
        sys.exit(f"{sys.argv[1]}: its samples have no census (set PAGELAB_ORACLE_KPAGEFLAGS=1)")
    for s in samples:
        if not lo <= s["t_s"] <= hi:
            continue
        if frames:
            print(f"{s['t_s']:7.2f}s  {frames_line(s['frames'])}")
            continue
        if gens:
            print(f"{s['t_s']:7.2f}s  {lru_gen_line(s.get('lru_gen') or '')}")
            continue
        v = s["vmstat"]
        zones = " ".join(f"{name} {free:6d}/{high:<4d}" for name, free, _min, _low, high in s["zones"])
        allocs = " ".join(f"{k[8:]} {v.get(k, 0):8d}" for k in ("pgalloc_dma", "pgalloc_dma32", "pgalloc_normal") if k in v)
        print(
            f"{s['t_s']:7.2f}s  {zones} | {allocs} | kswapd {v.get('pgsteal_kswapd', 0):8d} "
            f"direct {v.get('pgsteal_direct', 0):7d} runs {v.get('pageoutrun', 0):6d} "
            f"nap-woken {v.get('kswapd_low_wmark_hit_quickly', 0):6d}"
            + "".join(f" | nonmov {name} {n:5d}" for name, n in s.get("nonmovable_free", []))
            + slab_columns(s)
        )


def frames_line(census):
    """One sample's census of the non-movable pageblocks' frames."""
    out = []
    for c in census:
        f = c["frames"]
        named = sum(f.get(k, 0) for k in ("lru", "slab", "pgtable", "buddy", "none"))
        out.append(
            f"{c['zone']} {c['migratetype'][:5]} {c['blocks']:2d} blocks: lru {f.get('lru', 0):4d} ({f.get('lru_anon', 0)} anon)"
            f" slab {f.get('slab', 0):5d} pt {f.get('pgtable', 0):4d} free {f.get('buddy', 0):5d}"
            f" none {f.get('none', 0):5d} rest {f.get('total', 0) - named:4d}"
        )
    return " | ".join(out)


def slab_columns(s):
    """The kernel's own allocations, where the guest recorded them (since 2026-11-29): the
    page cache's xarray nodes (radix_tree_node objects and slab pages), all reclaimable and
    unreclaimable slab and page tables in pages, DMA32's reclaimable free pages and its
    pageblocks by type (unmovable/movable/reclaimable)."""
    if not s.get("slab") and not s.get("meminfo"):
        return ""
    radix = s.get("slab", {}).get("radix_tree_node", {})
    mi = s.get("meminfo", {})
    blocks = {b["zone"]: b for b in s.get("pageblocks", [])}.get("DMA32")
    out = f" | xa_nodes {radix.get('objects', 0):5d} ({radix.get('pages', 0):4d} p)"
    out += f" slab R {mi.get('SReclaimable', 0) // 4:5d} U {mi.get('SUnreclaim', 0) // 4:5d} pt {mi.get('PageTables', 0) // 4:4d}"
    if blocks:
        out += f" | DMA32 recl free {blocks['reclaimable_free']:4d} blocks {blocks['unmovable']}/{blocks['movable']}/{blocks['reclaimable']}"
    return out


if __name__ == "__main__":
    main()
