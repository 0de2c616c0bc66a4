#!/usr/bin/env python3
"""Prints the tables of examples/cache_ext/README.md: cache_ext's evaluation (SOSP '25,
Zussman et al.) beside pagelab's runs of the same setups, scaled.

    python3 examples/cache_ext/tables.py fig9|fig6|fig6-scale|fig7|fig10|fig10-mini|fig11|zipf-check [--pagelab PATH] [--keep DIR] [--plain]

Each cell compares the paper's ratio to the default policy (classic) with pagelab's:
direction agrees when both are above 1, both below, or both within 5% of 1 ("="); the
magnitude ratio is ln(pagelab's ratio) / ln(the paper's), within 1.5x when it lies in
[1/1.5, 1.5] (a cell where either is "=" counts as within when both are). The reason
column gives the counters that differ, as ratios to the default's run (see counters()).
"""
import argparse
import concurrent.futures
import fractions
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EQ = 0.05

# Fig. 6, k ops/s read off the paper's bar labels (docs: shared field survey, 2b).
FIG6 = {
    "classic": {"a": 13, "b": 9, "c": 8, "d": 210, "e": 2, "f": 13, "u100": 4, "u50": 13},
    "mglru": {"a": 11, "b": 7, "c": 6, "d": 233, "e": 1, "f": 11, "u100": 3, "u50": 9},
    "mru": {"a": 8, "b": 5, "c": 4, "d": 132, "e": 1, "f": 8, "u100": 2, "u50": 8},
    "fifo": {"a": 12, "b": 7, "c": 7, "d": 211, "e": 2, "f": 12, "u100": 3, "u50": 10},
    "s3fifo": {"a": 14, "b": 10, "c": 9, "d": 207, "e": 2, "f": 15, "u100": 5, "u50": 14},
    "lhd": {"a": 15, "b": 12, "c": 11, "d": 205, "e": 3, "f": 15, "u100": 5, "u50": 14},
    "sampling-lfu": {"a": 16, "b": 12, "c": 11, "d": 208, "e": 3, "f": 16, "u100": 5, "u50": 15},
}
# Fig. 7, YCSB A and C "for 8 million keys": each policy's throughput (ops/s) and total disk
# read and write IO (GB). The paper prints no labels on this figure: the points are its
# markers' centres in cache_ext_paper.pdf (cache-ext/cache_ext, page 11, the two plots' form
# XObjects), mapped through the axes' tick positions (docs/journal/2026-11-30-fig6-mglru.md).
FIG7 = {
    "a": {"classic": (17740, 60.4), "mglru": (15526, 62.5), "mru": (9539, 123.5),
          "fifo": (11770, 82.9), "s3fifo": (18787, 53.7), "lhd": (17907, 53.3),
          "sampling-lfu": (18144, 53.0)},
    "c": {"classic": (13007, 133.3), "mglru": (13093, 131.4), "mru": (5161, 247.5),
          "fifo": (10855, 164.9), "s3fifo": (14020, 112.9), "lhd": (13546, 112.5),
          "sampling-lfu": (13643, 112.7)},
}
# The uniform mixes: YCSB's read proportion 100% and 50% (the rest updates), uniform keys.
# D: My-YCSB's LatestWorkload (each thread reads behind its own inserts, which rewrite loaded
# keys: crates/workload's ycsb.rs, MyYcsbLatest); the other mixes take the scenario's
# distribution (My-YCSB's ZipfianWorkload).
MIXES = {"u100": ("c", "uniform"), "u50": ("a", "uniform"), "d": ("d", "my-ycsb-latest")}
# How long a mix runs where it differs from the scenario's 25,000 operations a thread. The
# paper ran every mix for the same time (bench_leveldb.py: 45 s of warm-up, then 240 s), so
# D, whose reads find what the threads have just written, ran 26 times C's operations (210
# against 8 k ops/s). D runs 4 s of modeled time, about what C's 200,000 operations take
# (3.6 s): its compactions fill the cgroup at 3 s (at 25,000 operations a thread it ends
# at a quarter full, and the cgroup fills after the clients are done).
MIX_RUN = {"d": ["workload.leveldb.runtime=\"4s\"", "workload.leveldb.ops=10000000"]}
# The paper's FIFO, MRU and S3-FIFO are cache_ext's BPF policies: pagelab's ports of them
# (policy/seam/cache_ext_*.rs). --plain runs pagelab-cachesim's trace algorithms instead.
PORTS = {"fifo": "cache-ext-fifo", "mru": "cache-ext-mru", "s3fifo": "cache-ext-s3fifo"}
PLAIN = False


def policy(p):
    """The pagelab policy that runs the paper's policy `p`."""
    return p if PLAIN else PORTS.get(p, p)


# Fig. 6's sizes in the paper (bench_leveldb.py and My-YCSB as ycsb-paper.toml's header
# gives them: a 100 GiB store in a 10 GiB cgroup, LevelDB's 2 MiB tables, 10 MiB L1, 4 MiB
# write buffer, 8 MiB block cache), which --scale multiplies, and the scale the scenario
# file is written at (ycsb-paper.toml: 1/32).
PAPER_SIZES = {
    "workload.leveldb.lsm.db_size": 100 << 30,
    "cgroup./db.max": 10 << 30,
    "workload.leveldb.lsm.table_size": 2 << 20,
    "workload.leveldb.lsm.l1_size": 10 << 20,
    "workload.leveldb.lsm.write_buffer_size": 4 << 20,
    "workload.leveldb.lsm.block_cache": 8 << 20,
}
FILE_SCALE = fractions.Fraction(1, 32)
# ycsb-paper.toml's operations a thread at FILE_SCALE: a run at another scale does as many
# operations per page of its cgroup.
FILE_OPS = 25000
# ycsb-paper.toml's machine at FILE_SCALE (1 GiB); a larger scale's is as much larger, so
# that it holds the cgroup (no global reclaim, as on the paper's 128 GB).
FILE_MEMORY = 1 << 30


def scale_sets(scale):
    """The --set overrides that run ycsb-paper.toml at `scale` (a Fraction) of the paper's
    store: every size of PAPER_SIZES, the classic LRU's miniature correction
    (`machine.miniature`, crates/pagelab/src/mm/miniature.rs), the operations (in proportion)
    and the machine's memory (at least the file's). At FILE_SCALE they are the file's values."""
    sets = []
    for key, full in PAPER_SIZES.items():
        b = full * scale
        if b.denominator != 1 or b % 1024:
            sys.exit(f"--scale {scale}: {key} would be {float(b):.0f} bytes, not whole KiB")
        sets.append(f'{key}="{b // 1024}K"')
    ops = FILE_OPS * scale / FILE_SCALE
    if ops.denominator != 1:
        sys.exit(f"--scale {scale}: {float(ops)} operations a thread, not a whole number")
    memory = max(FILE_MEMORY, FILE_MEMORY * scale / FILE_SCALE)
    # LevelDB's fewest allowed seeks (100) scaled with the tables (ycsb-paper.toml's header).
    seeks = max(1, round(100 * scale))
    return sets + [f"machine.miniature={float(scale)}", f"workload.leveldb.ops={ops}",
                   f'machine.memory="{int(memory) >> 20}M"', f"workload.leveldb.lsm.allowed_seeks_min={seeks}"]


def scale_label(a):
    if a.scale is None:
        return f"1/{FILE_SCALE.denominator} (as written)" if a.scenario == "ycsb-paper.toml" else "as written"
    return str(a.scale)


REUSE = False


def run(pagelab, scenario, sets, out):
    if REUSE and os.path.exists(out):
        with open(out) as f:
            return json.load(f)
    cmd = [pagelab, "run", os.path.join(HERE, scenario), "-q", "--json", out]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def compaction_thread(name):
    """Whether task `name` is an lsm store's background compaction thread
    (lsm.compaction_thread's `<store>.compaction`), not a client of the store."""
    return name.endswith(".compaction")


def steady(r, task=None, cgroup=None):
    """Workload operations (YCSB's, for an lsm store) a second once the page cache is full:
    the intervals after the first whose file pages reach 98% of the run's most (the paper
    measures after a warm-up). `task`: the tasks counted (a name prefix, a set of names, or
    a test of the name), else every task but a compaction
    thread (lsm.compaction_thread's `<store>.compaction`). `cgroup`: full
    means that cgroup's memory.current reaches 98% of its most, for a tenant beside
    another (Fig. 11: the paper measured the store after its own warm-up)."""
    if isinstance(task, str):
        prefix = task
        task = lambda name: name.startswith(prefix)  # noqa: E731
    elif isinstance(task, (set, frozenset)):
        names = task
        task = lambda name: name in names  # noqa: E731
    s = r["series"]

    def level(x):
        return x["memory_current"].get(cgroup, 0) if cgroup else x["vmstat"]["nr_file_pages"]

    full = max(level(x) for x in s)
    prev, ops, dt, on = 0.0, 0, 0.0, False
    for x in s:
        if on:
            # YCSB operations where the tasks count them (a task's workload operations: a
            # writer's wait for a flush is a part of its write, not an operation), else ops.
            per_task = x.get("task_workload_ops") or x.get("task_ops", {})
            if task is None:
                # Every task but an lsm store's background compaction thread.
                ops += sum(v for k, v in per_task.items() if not compaction_thread(k))
            else:
                ops += sum(v for k, v in per_task.items() if task(k))
            dt += x["t_s"] - prev
        if level(x) >= 0.98 * full:
            on = True
        prev = x["t_s"]
    return ops / dt if dt else float("nan")


def direction(x):
    return "=" if abs(x - 1) < EQ else ("+" if x > 1 else "-")


def compare(paper, ours):
    """(direction agrees, magnitude ratio, within 1.5x); a run with no steady throughput
    (`ours` not finite: the cgroup never filled, e.g. an OOM kill) agrees in nothing."""
    if not math.isfinite(ours):
        return False, float("nan"), False
    dp, dm = direction(paper), direction(ours)
    agree = dp == dm
    if dp == "=" or dm == "=":
        return agree, float("nan"), agree
    mag = math.log(ours) / math.log(paper)
    return agree, mag, 1 / 1.5 <= mag <= 1.5


def counters(r, base, cg):
    """The counters that differ from the base run, for the cgroup `cg`: its tasks' time
    waiting for IO, its file refaults (memory.stat), the machine's pages written (vmstat
    pgpgout) and, for a policy of the seam, the share of its candidates the kernel kept."""

    def io_wait(x):
        return sum(t.get("io_wait_s") or 0 for t in x["tasks"] if t["cgroup"] == cg)

    def ratio(a, b):
        return f"x{a / b:.2f}" if b else "—"

    out = [f"IO wait {ratio(io_wait(r), io_wait(base))}",
           f"refaults {ratio(r['memcg'][cg]['workingset_refault_file'], base['memcg'][cg]['workingset_refault_file'])}"]
    if base["vmstat"].get("pgpgout"):
        out.append(f"pages written {ratio(r['vmstat'].get('pgpgout', 0), base['vmstat']['pgpgout'])}")
    seam = r.get("policy_state")
    for k in ("state", "seam", cg):  # the seam's per-cgroup counts; the kernel LRUs have none
        seam = seam.get(k) if isinstance(seam, dict) else None
    if seam and seam["counts"]["candidates"]:
        c = seam["counts"]
        out.append(f"candidates kept by the kernel {100 * c['kept'] / c['candidates']:.0f}%")
    return ", ".join(out)


def order_agreement(paper, ours):
    """How far pagelab ranks the policies as the paper does, over one mix (`paper`, `ours`:
    policy to throughput): (pairs agreeing, pairs the paper orders, Kendall's tau-b). A pair
    the paper ties (the same bar label) is left out of the agreement; tau-b counts ties on
    either side as the statistic does."""
    names = list(paper)
    agree = strict = conc = disc = tp = to = 0
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            dp = (paper[a] > paper[b]) - (paper[a] < paper[b])
            do = (ours[a] > ours[b]) - (ours[a] < ours[b])
            tp += dp == 0
            to += do == 0
            if dp and do:
                conc += dp == do
                disc += dp != do
            if dp:
                strict += 1
                agree += dp == do
    n = len(names) * (len(names) - 1) // 2
    denom = math.sqrt((n - tp) * (n - to))
    return agree, strict, (conc - disc) / denom if denom else float("nan")


class Tally:
    def __init__(self):
        self.cells = self.dirs = self.mags = self.mag_cells = 0

    def add(self, agree, within):
        """within None: a cell with a direction and no magnitude in the paper."""
        self.cells += 1
        self.dirs += agree
        if within is not None:
            self.mag_cells += 1
            self.mags += within

    def line(self, name):
        return (f"{name}: direction agrees in {self.dirs}/{self.cells} cells "
                f"({100 * self.dirs / self.cells:.0f}%), magnitude within 1.5x in "
                f"{self.mags}/{self.mag_cells} ({100 * self.mags / max(self.mag_cells, 1):.0f}%)")


def row(label, paper, ours, r, base, cg, tally, direction_only=False):
    agree, mag, within = compare(paper, ours)
    if direction_only:
        mag, within = float("nan"), None
    tally.add(agree, within)
    m = "—" if math.isnan(mag) else f"{mag:.2f}"
    w = "—" if within is None else ("yes" if within else "no")
    p = "<1" if direction_only else f"{paper:.2f}x"
    print(f"| {label} | {p} | {ours:.2f}x | {'yes' if agree else 'no'} | {m} | {w} | "
          f"{counters(r, base, cg)} |")


HEAD = ("| cell | paper (vs default) | pagelab (vs default) | direction agrees | "
        "magnitude ratio | within 1.5x | pagelab's counters vs default |\n|---|---|---|---|---|---|---|")


def fig9(a, tmp):
    """Fig. 9: 10 ripgrep passes over the Linux tree in a 1 GiB cgroup; time to finish."""
    runs = {
        "classic": ["machine.policy=\"classic\""],
        "mglru": ["machine.policy=\"mglru\""],
        "mru": [f"cgroup./search.policy=\"{policy('mru')}\""],
    }
    r = {p: run(a.pagelab, "search.toml", s, f"{tmp}/s-{policy(p)}.json") for p, s in runs.items()}
    print("| policy | modeled time (s) | speed-up vs default | read from disk (GiB) | file refaults |")
    print("|---|---|---|---|---|")
    for p, x in r.items():
        print(f"| {p} | {x['elapsed_s']:.2f} | {r['classic']['elapsed_s'] / x['elapsed_s']:.2f}x | "
              f"{x['vmstat']['pgpgin'] / 2**20:.2f} | {x['vmstat'].get('workingset_refault_file', 0):,} |")
    print()
    print(HEAD)
    t = Tally()
    base = r["classic"]
    # The paper gives MRU about 2x faster than both the default and MGLRU, and MGLRU about
    # the default's time (its bars).
    row("MGLRU vs default", 1.0, base["elapsed_s"] / r["mglru"]["elapsed_s"], r["mglru"], base, "/search", t)
    row("MRU vs default", 2.0, base["elapsed_s"] / r["mru"]["elapsed_s"], r["mru"], base, "/search", t)
    print()
    print(t.line("Fig. 9"))


def fig6(a, tmp):
    """Fig. 6: YCSB A-F and the uniform mixes on the LSM store; steady-state ops/s."""
    mixes = ["a", "b", "c", "d", "e", "f", "u100", "u50"] if not a.quick else ["c"]
    if a.mixes:
        mixes = a.mixes.split(",")
    chosen = a.policies.split(",") if a.policies else None
    policies = [p for p in FIG6 if not chosen or p == "classic" or p in chosen or policy(p) in chosen]
    t = Tally()
    per = {}
    tables = []

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.parallel) as ex:
        done = {(m, p): ex.submit(fig6_run, a, tmp, m, p) for m in mixes for p in policies}
    for mix in mixes:
        res = {p: done[(mix, p)].result() for p in policies}
        tp = {p: steady(x) for p, x in res.items()}
        tables.append((mix, res, tp))
    print(f"Fig. 6 on {a.scenario}, scale {scale_label(a)}")
    print()
    print("| policy | " + " | ".join(m.upper() for m in mixes) + " |")
    print("|---|" + "---|" * len(mixes))
    for p in policies:
        print(f"| {p} | " + " | ".join(f"{tp[p] / tp['classic']:.3f}" for _, _, tp in tables) + " |")
    print()
    print(HEAD)
    for mix, res, tp in tables:
        mt = per.setdefault(mix, Tally())
        for p in policies:
            if p == "classic":
                continue
            paper = FIG6[p][mix] / FIG6["classic"][mix]
            row(f"{mix.upper()}: {p}", paper, tp[p] / tp["classic"], res[p], res["classic"], "/db", mt)
            t.add(*compare(paper, tp[p] / tp["classic"])[0::2])
    print()
    for mix, mt in per.items():
        print(mt.line(f"YCSB {mix.upper()}"))
    print(t.line("Fig. 6"))
    print()
    print("| mix | pairs ordered as the paper orders them | Kendall tau-b |\n|---|---|---|")
    agree = strict = 0
    for mix, _, tp in tables:
        a_, s_, tau = order_agreement({p: FIG6[p][mix] for p in policies}, tp)
        agree, strict = agree + a_, strict + s_
        print(f"| {mix.upper()} | {a_}/{s_} | {tau:.2f} |")
    print(f"Fig. 6 order: {agree}/{strict} pairs ({100 * agree / max(strict, 1):.0f}%) ordered as the paper orders them")


def mix_sets(mix, scale=None):
    """The --set values of Fig. 6's `mix` (a YCSB letter or a uniform mix) at `scale` (None:
    the scenario file's own)."""
    ycsb, dist = MIXES.get(mix, (mix, None))
    sets = [f"workload.leveldb.lsm.ycsb=\"{ycsb}\""] + ([f"workload.leveldb.distribution=\"{dist}\""] if dist else [])
    sets += MIX_RUN.get(mix, [])
    return sets + (scale_sets(scale) if scale is not None else [])


def fig6_run(a, tmp, mix, p, scale=None):
    """One Fig. 6 run (`p` the paper's policy) at `scale` (None: --scale), kept as
    y-MIX-POLICY.json, so Fig. 7 reuses Fig. 6's runs."""
    sets = [f"machine.policy=\"{policy(p)}\""] + mix_sets(mix, a.scale if scale is None else scale)
    return run(a.pagelab, a.scenario, sets + (a.set or []), f"{tmp}/y-{mix}-{policy(p)}.json")


def fig7(a, tmp):
    """Fig. 7: YCSB A and C, throughput and total disk IO (pgpgin + pgpgout), each policy
    against the default, beside the paper's points."""
    mixes = a.mixes.split(",") if a.mixes else ["a", "c"]
    policies = [p for p in FIG7["c"] if not a.policies or p == "classic" or p in a.policies.split(",")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.parallel) as ex:
        done = {(m, p): ex.submit(fig6_run, a, tmp, m, p) for m in mixes for p in policies}
    t, io = Tally(), Tally()
    print("| cell | paper throughput | pagelab throughput | paper disk IO | pagelab disk IO | "
          "direction agrees (throughput / IO) |\n|---|---|---|---|---|---|")
    for mix in mixes:
        res = {p: done[(mix, p)].result() for p in policies}
        disk = {p: x["vmstat"].get("pgpgin", 0) + x["vmstat"].get("pgpgout", 0) for p, x in res.items()}
        for p in policies[1:]:
            pt, pio = (FIG7[mix][p][i] / FIG7[mix]["classic"][i] for i in (0, 1))
            ot, oio = steady(res[p]) / steady(res["classic"]), disk[p] / disk["classic"]
            ct, ci = compare(pt, ot), compare(pio, oio)
            t.add(ct[0], ct[2])
            io.add(ci[0], ci[2])
            print(f"| {mix.upper()}: {p} | {pt:.3f}x | {ot:.3f}x | {pio:.3f}x | {oio:.3f}x | "
                  f"{'yes' if ct[0] else 'no'} / {'yes' if ci[0] else 'no'} |")
    print()
    print(t.line("Fig. 7 throughput"))
    print(io.line("Fig. 7 disk IO"))


def page_skew(a, tmp, mix, scale):
    """The page-read stream the store gives the page cache at `scale` (mix `mix`), before any
    policy: the page_reads example (crates/pagelab/examples/page_reads.rs) writes the pages the
    workload generator reads, `pagelab trace-stats` counts them. Returns trace-stats' JSON."""
    out = f"{tmp}/skew-{mix}.json"
    if not (REUSE and os.path.exists(out)):
        sets = mix_sets(mix, scale) + (a.set or [])
        reads = f"{tmp}/reads-{mix}.txt"
        example = os.path.join(os.path.dirname(a.pagelab), "examples", "page_reads")
        with open(reads, "w") as f:
            subprocess.run([example, os.path.join(HERE, a.scenario), "leveldb"]
                           + [x for v in sets for x in ("--set", v)], check=True, stdout=f)
        subprocess.run([a.pagelab, "trace-stats", "--trace-format", "text", reads, "--json", out],
                       check=True, stdout=subprocess.DEVNULL)
        os.remove(reads)
    with open(out) as f:
        return json.load(f)


def stream_bounds(sk, pages):
    """Two hit ratios of the page-read stream `sk` (trace-stats' JSON) in `pages` of cache, no
    policy run: an exact LRU's (the reads whose reuse distance is below `pages`, linear within
    trace-stats' power-of-two bucket) and a cache of the `pages` most read pages' (their share
    of the reads, the popularity curve's samples joined by straight lines)."""
    lru = 0.0
    for b in sk["reuse"]["histogram"]:
        lo, hi = b["min"], b["max"]
        lru += b["accesses"] * min(1.0, max(0.0, (pages - lo) / (hi - lo + 1)))
    top, (r0, c0) = 0.0, (0, 0)
    for r, c in sk["popularity"]:
        if r0 >= pages:
            break
        r1 = min(r, pages)
        c1 = c0 + (c - c0) * (r1 - r0) / (r - r0) if r > r0 else c
        top += (c0 + c1) / 2 * (r1 - r0) if r0 else c
        r0, c0 = r1, c1
    return lru / sk["reads"], top / sk["reads"]


def fig6_scale(a, tmp):
    """Fig. 6's YCSB cells at several scales (--scales): each policy's steady throughput against
    classic's, the page cache's hit ratio (1 - file refaults / page reads, the page reads the
    generator's) and the stream's skew (the top 10% of the pages read take this share of the
    reads; trace-stats on page_skew())."""
    mixes = (a.mixes or "c").split(",")
    policies = ["classic"] + (a.policies.split(",") if a.policies else ["sampling-lfu", "lhd", "mru", "fifo", "mglru"])
    print("| mix | scale | store in cgroup | page reads a get | top 10% of pages | top 1% | exact LRU | "
          "most read pages | " + " | ".join(f"{p} (hit ratio)" for p in policies) + " |")
    print("|---|---|---|---|---|---|---|---|" + "---|" * len(policies))
    for mix in mixes:
        for scale in (fractions.Fraction(x) for x in a.scales.split(",")):
            d = f"{tmp}/{mix}-{scale.numerator}_{scale.denominator}"
            os.makedirs(d, exist_ok=True)
            res = {p: fig6_run(a, d, mix, p, scale) for p in policies}
            sk = page_skew(a, d, mix, scale)
            gets = sum(t["workload_ops"] for t in res["classic"]["tasks"] if t["cgroup"] == "/db")
            base = steady(res["classic"])

            def hit(r):
                return 1 - r["memcg"]["/db"]["workingset_refault_file"] / sk["reads"]

            cells = " | ".join(f"{steady(r) / base:.3f} ({hit(r):.3f})" for r in res.values())
            cgroup = float(PAPER_SIZES["cgroup./db.max"] * scale)
            lru, top = stream_bounds(sk, cgroup / 4096)
            print(f"| {mix.upper()} | {scale} | {cgroup * 10 / 2**20:,.0f} MiB in {cgroup / 2**20:,.0f} MiB | "
                  f"{sk['reads'] / gets:.2f} | {sk['top_10pct_share']:.3f} | {sk['top_1pct_share']:.3f} | "
                  f"{lru:.3f} | {top:.3f} | {cells} |")


def fig11(a, tmp):
    """Fig. 11: YCSB-C and the search in sibling cgroups, per-cgroup against global policies."""
    configs = {
        "default": ["machine.policy=\"classic\""],
        "global LFU": ["machine.policy=\"sampling-lfu\""],
        "global MRU": [f"machine.policy=\"{policy('mru')}\""],
        "tailored": ["machine.policy=\"classic\"", "cgroup./db.policy=\"sampling-lfu\"",
                     f"cgroup./search.policy=\"{policy('mru')}\""],
    }
    extra = [f"machine.cpus={a.cpus}"] if a.cpus else []
    r = {c: run(a.pagelab, "isolation.toml", s + extra, f"{tmp}/i-{i}{'-plain' if PLAIN else ''}.json")
         for i, (c, s) in enumerate(configs.items())}

    def ycsb(x):
        # From the store's cgroup full (1 s), not the machine's page cache: that waits for
        # the search to fill its cgroup (3 s), and its last second held the default's
        # compaction burst (the README's Fig. 11 section).
        return steady(x, {t["name"] for t in x["tasks"] if t["name"].startswith("leveldb") and not compaction_thread(t["name"])}, "/db")

    def search(x):
        # the ten passes end with the search's last thread (a task's time excludes its start)
        return max(t["elapsed_s"] for t in x["tasks"] if t["name"].startswith("rg"))

    print("| setup | YCSB-C ops/s (steady) | vs default | search time (s) | search speed-up vs default |")
    print("|---|---|---|---|---|")
    d = r["default"]
    for c, x in r.items():
        print(f"| {c} | {ycsb(x):,.0f} | {ycsb(x) / ycsb(d):.3f}x | {search(x):.2f} | {search(d) / search(x):.2f}x |")
    print()
    print(HEAD)
    t = Tally()
    tl = r["tailored"]
    row("tailored, YCSB-C", 1.498, ycsb(tl) / ycsb(d), tl, d, "/db", t)
    row("tailored, search", 1.794, search(d) / search(tl), tl, d, "/search", t)
    # "Global policies hurt the other tenant": against the tailored setup, a global MRU slows
    # YCSB and a global LFU slows the search (direction only: the paper's bars are not in
    # the sources read here, so these cells compare directions only).
    gm, gl = r["global MRU"], r["global LFU"]
    row("global MRU vs tailored, YCSB-C", 0.5, ycsb(gm) / ycsb(tl), gm, tl, "/db", t, True)
    row("global LFU vs tailored, search", 0.5, search(tl) / search(gl), gl, tl, "/search", t, True)
    print()
    print(t.line("Fig. 11"))


def fig10(a, tmp):
    """Fig. 10 on the LSM store (get-scan-lsm.toml): My-YCSB's mixed_get_scan, one scan thread
    (leveldb.0) and three get threads on one LevelDB; steady YCSB operations a second."""
    scan, gets = {"leveldb.0"}, {"leveldb.1", "leveldb.2", "leveldb.3"}
    runs = {
        "default": [],
        "MGLRU": ["machine.policy=\"mglru\""],
        "scan FADV_SEQUENTIAL": ["workload.leveldb.lsm.scan_fadvise=\"sequential\""],
    }
    r = {c: run(a.pagelab, "get-scan-lsm.toml", s, f"{tmp}/gl-{i}.json") for i, (c, s) in enumerate(runs.items())}
    # The GET-SCAN policy (examples/policies/get_scan.py, needs the Python package): the scan
    # thread's tid registered as cache_ext's scan_pids. Its threshold: 1,000 x the sampling
    # rate, the BPF program's constant (5,000 folios, 0.19% of the paper's 10 GiB cgroup);
    # and, beside it, the same share of the 320 MiB cgroup here (156).
    try:
        sys.path.insert(0, os.path.join(ROOT, "examples", "policies"))
        import get_scan
        import pagelab  # noqa: F401
    except ImportError as e:
        missing = e
    else:
        missing = None
        for label, threshold in (("GET-SCAN", 5000), ("GET-SCAN, threshold 156", 5000 * 81920 // 2621440)):
            out = f"{tmp}/gl-{label}.json"
            if REUSE and os.path.exists(out):
                with open(out) as f:
                    r[label] = json.load(f)
                continue
            r[label] = get_scan.pagelab.run(os.path.join(HERE, "get-scan-lsm.toml"),
                                            policies={"/db": get_scan.GetScan(("leveldb.0",), threshold)})
            with open(out, "w") as f:
                json.dump(r[label], f)
    tp = {c: (steady(x, gets), steady(x, scan)) for c, x in r.items()}
    d = tp["default"]
    print("| setup | GET ops/s (steady) | vs default | SCAN ops/s (steady) | vs default | file refaults | read from disk (MiB) | ran (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for c, (g, s_) in tp.items():
        x = r[c]
        oom = " (OOM)" if x["memcg"]["/db"].get("memory.events.oom_kill") else ""
        print(f"| {c} | {g:,.0f} | {g / d[0]:.3f}x | {s_:,.2f} | {s_ / d[1]:.3f}x | "
              f"{x['memcg']['/db']['workingset_refault_file']:,} | {x['vmstat']['pgpgin'] / 1024:,.0f} | {x['elapsed_s']:.2f}{oom} |")
    print()
    print(HEAD)
    t = Tally()
    row("MGLRU, GET", 0.5, tp["MGLRU"][0] / d[0], r["MGLRU"], r["default"], "/db", t, True)
    row("scan FADV_SEQUENTIAL, GET", 1.0, tp["scan FADV_SEQUENTIAL"][0] / d[0], r["scan FADV_SEQUENTIAL"], r["default"], "/db", t)
    if missing:
        print(f"| GET-SCAN, GET | 1.70x | not run ({missing}) | | | | |")
    else:
        g = r["GET-SCAN"]
        row("GET-SCAN, GET", 1.70, tp["GET-SCAN"][0] / d[0], g, r["default"], "/db", t)
        row("GET-SCAN, SCAN", 0.82, tp["GET-SCAN"][1] / d[1], g, r["default"], "/db", t)
    print()
    print(t.line("Fig. 10"))


def fig10_mini(a, tmp):
    """Fig. 10's miniature: GET-SCAN on get-scan.toml (GETs of a Zipf 0.99 file and a task scanning it,
    side by side for 4 s, in a cgroup holding a quarter of it)."""
    runs = {
        "default": [],
        "MGLRU": ["machine.policy=\"mglru\""],
        "scan FADV_SEQUENTIAL": ["workload.scan.fadvise=\"sequential\""],
    }
    r = {c: run(a.pagelab, "get-scan.toml", s, f"{tmp}/g10-{i}.json")
         for i, (c, s) in enumerate(runs.items())}

    def task(x, name):
        return next(t for t in x["tasks"] if t["name"] == name)

    print("| setup | GET ops/s | vs default | GET p99 (µs) | SCAN ops/s |")
    print("|---|---|---|---|---|")
    d = task(r["default"], "get")["ops_per_s"]
    for c, x in r.items():
        g = task(x, "get")
        print(f"| {c} | {g['ops_per_s']:,.0f} | {g['ops_per_s'] / d:.3f}x | "
              f"{g['latency']['p99_ns'] / 1000:.0f} | {task(x, 'scan')['ops_per_s']:,.0f} |")
    print()
    print(HEAD)
    t = Tally()
    row("MGLRU, GET", 0.5, task(r["MGLRU"], "get")["ops_per_s"] / d, r["MGLRU"], r["default"], "/db", t, True)
    row("scan FADV_SEQUENTIAL, GET", 1.0, task(r["scan FADV_SEQUENTIAL"], "get")["ops_per_s"] / d,
        r["scan FADV_SEQUENTIAL"], r["default"], "/db", t)
    # The GET-SCAN policy is examples/policies/get_scan.py's Python port: it needs the pagelab
    # Python package (maturin develop --release); without it the cell is left out.
    try:
        sys.path.insert(0, os.path.join(ROOT, "examples", "policies"))
        import get_scan
        import pagelab  # noqa: F401
    except ImportError as e:
        print(f"| GET-SCAN, GET | 1.70x | not run ({e}) | | | | |")
    else:
        g = get_scan.pagelab.run(os.path.join(HERE, "get-scan.toml"),
                                 policies={"/db": get_scan.GetScan})
        row("GET-SCAN, GET", 1.70, task(g, "get")["ops_per_s"] / d, g, r["default"], "/db", t)
        row("GET-SCAN, SCAN", 0.82, task(g, "scan")["ops_per_s"] / task(r["default"], "scan")["ops_per_s"],
            g, r["default"], "/db", t)
    print()
    print(t.line("Fig. 10"))


def zipf_check(a, tmp):
    """The key distribution alone: does a frequency policy beat the default on it?"""
    pols = ["classic", "lru", "lfu", "sampling-lfu", "lhd"]
    r = {p: run(a.pagelab, "zipf-check.toml", [f"machine.policy=\"{p}\""], f"{tmp}/z-{p}.json") for p in pols}
    print("| policy | steady reads/s | vs default | read from disk (MiB) |")
    print("|---|---|---|---|")
    for p, x in r.items():
        print(f"| {p} | {steady(x):,.0f} | {steady(x) / steady(r['classic']):.3f}x | "
              f"{x['vmstat']['pgpgin'] / 1024:,.0f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("figure", choices=["fig9", "fig6", "fig6-scale", "fig7", "fig10", "fig10-mini", "fig11",
                                       "zipf-check"])
    ap.add_argument("--pagelab", default=os.path.join(ROOT, "target/release/pagelab"))
    ap.add_argument("--quick", action="store_true", help="fig6: YCSB-C only")
    ap.add_argument("--scenario", default="ycsb-paper.toml",
                    help="fig6: ycsb-paper.toml (the paper's LevelDB setup, default) or ycsb.toml "
                         "(pagelab's LevelDB defaults: a 10-bit Bloom filter, 1 KiB values)")
    ap.add_argument("--mixes", help="fig6, fig7: these mixes only (a,b,c,d,e,f,u100,u50); fig6-scale: default c")
    ap.add_argument("--policies", help="fig6, fig6-scale, fig7: these policies only, beside classic (the "
                    "paper's names or the ports': mru or cache-ext-mru)")
    ap.add_argument("--plain", action="store_true", help="fig6, fig7, fig9, fig11: run the paper's fifo, "
                    "mru and s3fifo as pagelab-cachesim's trace algorithms, not cache_ext's ports")
    ap.add_argument("--set", action="append", help="fig6: one more --set for every run "
                    "(a hypothesis's cells, e.g. workload.leveldb.jobs=1)")
    ap.add_argument("--scale", type=fractions.Fraction, help="fig6: run ycsb-paper.toml at this "
                    "scale of the paper's store (e.g. 1/16; default: the file's, 1/32): store, cgroup, "
                    "tables, L1, write buffer, block cache, machine.miniature and the operations "
                    "scaled together (scale_sets())")
    ap.add_argument("--scales", default="1/128,1/64,1/32,1/16", help="fig6-scale: the scales (see --scale)")
    ap.add_argument("--parallel", type=int, default=1, help="fig6: runs at a time")
    ap.add_argument("--cpus", type=int, default=0, help="fig11: machine.cpus (default: none)")
    ap.add_argument("--keep", metavar="DIR", help="keep the runs' JSON reports in DIR and reuse "
                    "the ones already there (to reprint a table without running again)")
    a = ap.parse_args()
    global PLAIN
    PLAIN = a.plain
    fig = {"fig9": fig9, "fig6": fig6, "fig6-scale": fig6_scale, "fig7": fig7, "fig10": fig10,
           "fig10-mini": fig10_mini, "fig11": fig11,
           "zipf-check": zipf_check}[a.figure]
    if a.keep:
        global REUSE
        REUSE = True
        os.makedirs(a.keep, exist_ok=True)
        fig(a, a.keep)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            fig(a, tmp)


if __name__ == "__main__":
    sys.exit(main())
