#!/usr/bin/env python3
"""Seed 000's STOCK_LEVEL query model: the table and the time series of examples/seeds/README.md.

    python3 examples/seeds/000/stock_level_report.py [--wt] [--runtime S] [--jobs N] [--runs DIR]
        [--only LABEL ...] [--set KEY=VALUE ...]

Runs stock-level-query-full.toml under every kernel, LRU and refault model (12 runs, N at a
time; a run's JSON report is kept in DIR, default target/seed000/<runtime><sets>, and reused
when present; --runtime shortens the 900 modeled seconds, --set passes overrides on),
then prints one table row per run and, per run, every 100 modeled seconds, queries per
second, what a query read from storage and what is resident. Needs a release build (`cargo build --release`).

--wt runs stock-level-wt-full.toml instead, the same query model with the primary's
WiredTiger cache in front of the page cache (`app_cache`), under 6.1 MGLRU and its three
refault models (--only picks others, e.g. 6.12-mglru-kairui-v3); its table adds the cache's
hit ratio, and its series give what is resident (a query's parts are operations of their
own there, so the per-window rates are left out).
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[3]
SCENARIO = ROOT / "examples/seeds/000/stock-level-query-full.toml"
WT_SCENARIO = ROOT / "examples/seeds/000/stock-level-wt-full.toml"
PAGELAB = pathlib.Path(os.environ.get("PAGELAB", ROOT / "target/release/pagelab"))
# A query is one customer read and FETCHES stock fetches (stock-level-query-full.toml's lockstep).
FETCHES = 100_000

RUNS = [
    (kernel, lru, model)
    for kernel in ("6.1", "6.12")
    for lru in ("mglru", "classic")
    for model in ("mainline", "kairui-v3", "kairui-2026")
]


def label(run):
    return "-".join(run)


TIMED = ["wiredtiger1", "stock", "customers", "journal1", "journal2", "journal3"]
WT_TIMED = ["stock", "customers", "journal1", "journal2", "journal3"]
WT = False


def command(run, out, runtime, extra):
    kernel, lru, model = run
    sets = [f"machine.kernel={kernel}", f"machine.policy={lru}", f"workingset.refault_model={model}"]
    if runtime != 900:
        sets += [f"workload.{w}.runtime={runtime}s" for w in (WT_TIMED if WT else TIMED)]
    cmd = [str(PAGELAB), "run", str(WT_SCENARIO if WT else SCENARIO), "--json", str(out / f"{label(run)}.json")]
    for s in sets + extra:
        cmd += ["--set", s]
    return cmd


def run_all(runs, out, runtime, extra, jobs):
    """Runs the missing reports, `jobs` at a time, each timed by its own wall clock."""
    todo = [r for r in runs if not (out / f"{label(r)}.json").exists()]
    running = []
    while todo or running:
        while todo and len(running) < jobs:
            r = todo.pop(0)
            p = subprocess.Popen(command(r, out, runtime, extra), stdout=subprocess.DEVNULL)
            running.append((r, p, time.monotonic()))
        time.sleep(0.5)
        for item in list(running):
            r, p, start = item
            if p.poll() is not None:
                running.remove(item)
                if p.returncode != 0:
                    sys.exit(f"{label(r)} failed ({p.returncode})")
                (out / f"{label(r)}.wall").write_text(f"{time.monotonic() - start:.1f}\n")
    return {r: json.loads((out / f"{label(r)}.json").read_text()) for r in runs}


def queries(report):
    """Finished queries: per client, the customer reads that also have their 100,000 fetches."""
    # With the WiredTiger cache a fetch is one or two operations (a hit; a miss's read and
    # store) and a customer extent thousands: its workload operations count.
    ops = {t["name"]: t.get("workload_ops", t["ops"]) for t in report["tasks"]}
    n = 0
    for name, c in ops.items():
        if name.startswith("customers."):
            job = name.split(".", 1)[1]
            n += min(c, ops.get(f"stock.{job}", 0) // FETCHES)
    return n


def misses(vmstat, kernel):
    """Pages read from the collection files: pgpgin (KiB) less swap-ins where the kernel
    counts zram's reads in it (6.12: zram has no rw_page)."""
    read = vmstat.get("pgpgin", 0) // 4
    if kernel == "6.12":
        read -= vmstat.get("pswpin", 0)
    return max(read, 0)


def resident(point):
    """(file pages of /mongo1, anon pages of /mongo1, anon pages of /mongo2 and /mongo3) from
    MGLRU's generations; None under the classic LRU (its state has no per-memcg lists)."""
    state = point.get("policy_state")
    if not isinstance(state, list):
        return None
    f1 = a1 = a23 = 0
    for memcg in state:
        gens = memcg.get("generations", [])
        file = sum(g["file"] for g in gens)
        anon = sum(g["anon"] for g in gens)
        if memcg["memcg"] == "/mongo1":
            f1, a1 = file, anon
        elif memcg["memcg"] in ("/mongo2", "/mongo3"):
            a23 += anon
    return f1, a1, a23


def series(report, kernel, every=100):
    """Every `every` modeled seconds: queries/s and MiB read from storage per query over the
    window, and what is resident at its end."""
    rows = []
    acc = {"misses": 0, "fetches": 0, "t0": 0.0}
    for p in report["series"]:
        ops = p.get("task_ops", {})
        acc["fetches"] += sum(v for k, v in ops.items() if k.startswith("stock."))
        acc["misses"] += misses(p["vmstat"], kernel)
        if p["t_s"] - acc["t0"] >= every - 1e-6:
            q = acc["fetches"] / FETCHES
            v = p["vmstat"]
            rows.append(
                {
                    "t_s": p["t_s"],
                    "read_mib": acc["misses"] * 4096 / 2**20 / q if q else float("nan"),
                    "qps": q / (p["t_s"] - acc["t0"]),
                    "resident": resident(p),
                    "nr_file": v.get("nr_active_file", 0) + v.get("nr_inactive_file", 0),
                    "nr_anon": v.get("nr_active_anon", 0) + v.get("nr_inactive_anon", 0),
                }
            )
            acc = {"misses": 0, "fetches": 0, "t0": p["t_s"]}
    return rows


def main():
    global WT
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wt", action="store_true", help="stock-level-wt-full.toml: with the WiredTiger cache")
    ap.add_argument("--runtime", type=int, default=900, help="modeled seconds (default 900, the seed's)")
    ap.add_argument("--jobs", type=int, default=1, help="runs at a time (each wall time is its own)")
    ap.add_argument("--runs", help="where the reports go (default target/seed000/<runtime><sets>)")
    ap.add_argument("--only", nargs="*", help="run only these labels, e.g. 6.1-mglru-mainline")
    ap.add_argument("--set", action="append", default=[], help="an override for every run")
    args = ap.parse_args()
    WT = args.wt
    tag = ("wt-" if WT else "") + f"{args.runtime}s" + "".join("," + s.replace("/", "_") for s in args.set)
    out = pathlib.Path(args.runs) if args.runs else ROOT / "target/seed000" / tag
    out.mkdir(parents=True, exist_ok=True)
    if not PAGELAB.exists():
        sys.exit(f"{PAGELAB} is missing: run `cargo build --release` first")
    runs = [r for r in RUNS if r[:2] == ("6.1", "mglru")] if WT and not args.only else RUNS
    chosen = [r for r in runs if not args.only or label(r) in args.only]
    reports = run_all(chosen, out, args.runtime, args.set, args.jobs)
    seconds = args.runtime
    if WT:
        return wt_tables(reports, out, seconds)
    print("| kernel | LRU | refault_model | txn | txn/s | MiB read a txn | refaults | activated | pswpout | wall |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r, rep in reports.items():
        v, q, read, wall = run_figures(r, rep, out)
        print(
            f"| {r[0]} | {r[1]} | {r[2]} | {q:,} | {q / seconds:.2f} | {read:,.0f} | "
            f"{v['workingset_refault_file'] / 1e6:.2f} M | {v['workingset_activate_file'] / 1e6:.2f} M | "
            f"{v['pswpout'] / 1e6:.2f} M | {wall} |"
        )
    print()
    for r, rep in reports.items():
        print(f"{label(r)}: every 100 s, queries/s, MiB read a query, and (MGLRU) /mongo1 file, /mongo1 anon, /mongo2+3 anon in GiB")
        for row in series(rep, r[0]):
            res = row["resident"]
            gib = lambda pages: pages * 4096 / 2**30  # noqa: E731
            where = f"{gib(res[0]):5.1f} {gib(res[1]):4.1f} {gib(res[2]):4.1f}" if res else f"file {gib(row['nr_file']):5.1f} anon {gib(row['nr_anon']):4.1f}"
            print(f"  {row['t_s']:5.0f} s  {row['qps']:5.2f} q/s  {row['read_mib']:7,.0f} MiB/q  {where}")


def run_figures(r, rep, out):
    """A run's vmstat, its queries, the MiB it read a query and its wall time as printed."""
    v = rep["vmstat"]
    q = queries(rep)
    read = misses(v, r[0]) * 4096 / 2**20 / q if q else float("nan")
    wall_file = out / f"{label(r)}.wall"
    wall = wall_file.read_text().strip() + " s" if wall_file.exists() else "?"
    return v, q, read, wall


def wt_tables(reports, out, seconds):
    """The table with the WiredTiger cache: txn/s against the plain run of the same kernel
    and LRU, the cache's hit ratio, and per 100 s what is resident."""
    print("| kernel | LRU | refault_model | txn | txn/s | vs mainline | WT cache hits | MiB read a txn | refaults | activated | pswpout | wall |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    base = {r[:2]: queries(rep) for r, rep in reports.items() if r[2] == "mainline"}
    for r, rep in reports.items():
        v, q, read, wall = run_figures(r, rep, out)
        c = [rep.get("app_cache", {}).get(w, {}) for w in ("stock", "customers")]
        hits, looks = sum(x.get("hits", 0) for x in c), sum(x.get("hits", 0) + x.get("misses", 0) for x in c)
        b = base.get(r[:2])
        vs = f"{q / b:.2f}x" if b else "?"
        print(
            f"| {r[0]} | {r[1]} | {r[2]} | {q:,} | {q / seconds:.2f} | {vs} | {100 * hits / max(looks, 1):.1f}% | {read:,.0f} | "
            f"{v['workingset_refault_file'] / 1e6:.2f} M | {v['workingset_activate_file'] / 1e6:.2f} M | "
            f"{v['pswpout'] / 1e6:.2f} M | {wall} |"
        )
    print()
    gib = lambda pages: pages * 4096 / 2**30  # noqa: E731
    for r, rep in reports.items():
        print(f"{label(r)}: every 100 s, GiB resident: /mongo1 file, /mongo1 anon, /mongo2+3 anon (MGLRU), or file and anon")
        last = 0.0
        for p in rep["series"]:
            if p["t_s"] - last < 100 - 1e-6:
                continue
            last = p["t_s"]
            res = resident(p)
            v = p["vmstat"]
            if res:
                print(f"  {p['t_s']:5.0f} s  {gib(res[0]):5.1f} {gib(res[1]):4.1f} {gib(res[2]):4.1f}")
            else:
                print(f"  {p['t_s']:5.0f} s  file {gib(v.get('nr_active_file', 0) + v.get('nr_inactive_file', 0)):5.1f} anon {gib(v.get('nr_active_anon', 0) + v.get('nr_inactive_anon', 0)):4.1f}")


if __name__ == "__main__":
    main()
