#!/usr/bin/env python3
"""Who had the guest's one CPU: a table of oracle runs' scheduling figures.

    oracle/cpu.py RUN.json [RUN.json ...]

One row per run (`pagelab oracle ... --json RUN.json`, a guest that recorded schedstat):

  * kswapd0's CPU time and its waits for the CPU, as shares of the workload's wall time;
    its involuntary context switches (preemptions) and voluntary ones (it slept);
  * the tasks' CPU time, waits and preemptions;
  * the guest's iowait share;
  * kswapd's CPU time per page it reclaimed, in the guest and in the model, and the model's
    kswapd CPU share of its modeled time;
  * how much slower the guest is than the model at kswapd's work per page and at the whole
    run (where the two differ, the model's costs are out of proportion to the guest's and
    CPU shares cannot compare);
  * direct reclaim's steals in both.
"""
import json
import sys


def row(path):
    run = json.load(open(path))
    k, m = run["kernel"], run.get("model") or {}
    ks = k.get("kswapd")
    if not ks:
        return None
    wall_ns = k["wall_s"][-1] * 1e9
    tasks = [t["sched"] for t in k.get("tasks", []) if t.get("sched")]
    t_run = sum(t["run_ns"] for t in tasks)
    t_wait = sum(t["wait_ns"] for t in tasks)
    t_pre = sum(t["involuntary"] for t in tasks)
    iowait = k.get("cpu_ms", {}).get("iowait", 0) * 1e6
    stolen_k = max(k["vmstat"].get("pgsteal_kswapd", 0), 1)
    stolen_m = max(m.get("vmstat", {}).get("pgsteal_kswapd", 0), 1)
    pct = lambda ns: 100.0 * ns / wall_ns
    name = f"{run['scenario']} {run['kernel_version']} {run['policy']}"
    return [
        name,
        f"{pct(ks['run_ns']):.1f}",
        f"{pct(ks['wait_ns']):.1f}",
        f"{ks['involuntary']:,}",
        f"{ks['voluntary']:,}",
        f"{pct(t_run):.1f}",
        f"{pct(t_wait):.1f}",
        f"{t_pre:,}",
        f"{pct(iowait):.1f}",
        f"{ks['run_ns'] / stolen_k / 1e3:.1f} / {m.get('kswapd_cpu_s', 0) * 1e9 / stolen_m / 1e3:.1f}",
        f"{100.0 * m.get('kswapd_cpu_s', 0) / max(m.get('elapsed_s', 0), 1e-12):.1f}",
        f"{ks['run_ns'] / stolen_k / max(m.get('kswapd_cpu_s', 0) * 1e9 / stolen_m, 1e-9):.1f} / {k['wall_s'][-1] / max(m.get('elapsed_s', 0), 1e-12):.1f}",
        f"{k['vmstat'].get('pgsteal_direct', 0):,} / {m.get('vmstat', {}).get('pgsteal_direct', 0):,}",
    ]


HEADER = [
    "run",
    "kswapd0 on CPU %",
    "kswapd0 waiting %",
    "kswapd0 preempted",
    "kswapd0 slept",
    "tasks on CPU %",
    "tasks waiting %",
    "tasks preempted",
    "iowait %",
    "kswapd µs/page stolen, guest / model",
    "model's kswapd CPU %",
    "guest/model: kswapd CPU per page / whole run",
    "pgsteal_direct, kernel / model",
]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = []
    for p in sys.argv[1:]:
        r = row(p)
        if r is None:
            print(f"{p}: no scheduling figures (a run from before 2026-11-27's guest)", file=sys.stderr)
        else:
            rows.append(r)
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
