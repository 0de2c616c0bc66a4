#!/usr/bin/env python3
"""The oracle guest's CPU costs, fitted from its schedstat: what `pagelab oracle` sets.

    oracle/fit-costs.py RUN.json [RUN.json ...]

Each RUN.json is a `pagelab oracle --json` run whose guest recorded schedstat (its kernel
side has `kswapd` and `tasks[].sched`); `oracle/rejudge.sh oracle/sched OUT` re-makes the
model's side of the fifteen saved runs.

The model's clock runs faster than the guest's: the guest (a virtual machine, itself often in
a virtual machine) is several times slower at the same kernel work. The *scale* is taken from
kswapd, whose work the model charges rule by rule: the median over the runs of the guest's
kswapd CPU per page it reclaimed over the model's. The guest's task CPU, divided by that
scale, less the task CPU the model already charges (its time, less its waits for IO and for
the CPU), is then fitted (least squares of the seconds, coefficients kept non-negative) as

    op_ns * operations + extra_syscall_ns * read()/write() operations + cpu_page_ns * pages read
        + cpu_read_request_ns * swap-ins from a block device
        + storage cpu_read_request_ns * read requests to the data disk

(pages read: vmstat pgpgin, file pages and swap-ins alike, each a virtio request's share of
its exits and copies; swap-ins from a virtio disk are requests of their own, each a sleep
and a wake-up of the faulting task; the data disk's requests are estimated from the kernel's
counts, `data_read_requests()`). On oracle/sched/'s runs the last column is not identified
(one random reader, whose operations and misses keep one proportion) and comes out 0; on
suite 10's 36 runs it is about 15 us (docs/journal/2026-11-30-suite-10-shortfalls.md). The fit explains what the costs the model ran with leave
unexplained: on runs re-judged with the model's default costs (`--set time.op_ns=0` and the
like) it gives the costs themselves, on runs re-judged with the oracle's calibration the
amounts to add to `GUEST_*` in crates/oracle/src/fidelity.rs (near 0 once those are right).
The result prints the costs, the scale, and each run's task CPU against the fit's.
"""
import json
import pathlib
import statistics
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent


def operations(scenario):
    """(all operations, read()/write() operations) of an oracle scenario's workloads."""
    s = tomllib.loads((ROOT / "scenarios" / f"{scenario}.toml").read_text())
    total = syscalls = 0
    for w in s.get("workload", []):
        for phase in w.get("phase", [w]):
            ops = phase.get("ops", 0)
            total += ops
            if phase.get("kind", "").startswith("file-"):
                syscalls += ops
    return total, syscalls


def swaps_to_a_block_device(scenario):
    """Whether an oracle scenario's swap is a disk or an SSD (a virtio disk in the guest)."""
    s = tomllib.loads((ROOT / "scenarios" / f"{scenario}.toml").read_text())
    return s.get("machine", {}).get("swap", {}).get("device") in ("disk", "ssd")


def data_read_requests(scenario, vm):
    """Read requests to the data disk, estimated from the kernel's counts: a mapped file's
    major fault reads around in one request (pgmajfault); a reader whose file phases are all
    fadvise-random reads each missing page by a request of its own; a sequential reader one
    readahead window (the guest disk's read_ahead_kb, 128 KiB: 32 pages) a request."""
    s = tomllib.loads((ROOT / "scenarios" / f"{scenario}.toml").read_text())
    phases = [ph for w in s.get("workload", []) for ph in w.get("phase", [w])]
    kinds = [ph.get("kind", "") for ph in phases]
    if any(k.startswith("mmap-") for k in kinds):
        return vm.get("pgmajfault", 0)
    files = [ph for ph, k in zip(phases, kinds) if k.startswith("file-")]
    file_pages = vm["pgpgin"] / 4 - vm.get("pswpin", 0)
    if not files:
        return 0
    if all(ph.get("fadvise") == "random" for ph in files):
        return file_pages
    return file_pages / 32


def solve(a, y):
    """Least squares with non-negative coefficients, by trying every subset of columns."""
    n = len(a[0])
    best = None
    for mask in range(1, 1 << n):
        cols = [j for j in range(n) if mask >> j & 1]
        # Normal equations of the chosen columns, by Gauss-Jordan elimination.
        m = [[sum(r[i] * r[j] for r in a) for j in cols] + [sum(r[i] * v for r, v in zip(a, y))] for i in cols]
        k = len(cols)
        ok = True
        for c in range(k):
            p = max(range(c, k), key=lambda r: abs(m[r][c]))
            if abs(m[p][c]) < 1e-30:
                ok = False
                break
            m[c], m[p] = m[p], m[c]
            for r in range(k):
                if r != c:
                    f = m[r][c] / m[c][c]
                    m[r] = [x - f * z for x, z in zip(m[r], m[c])]
        if not ok:
            continue
        x = [0.0] * n
        for i, j in enumerate(cols):
            x[j] = m[i][k] / m[i][i]
        if min(x) < 0:
            continue
        err = sum((sum(c * v for c, v in zip(x, r)) - t) ** 2 for r, t in zip(a, y))
        if best is None or err < best[0]:
            best = (err, x)
    return best


def main(paths):
    runs = []
    for p in paths:
        run = json.load(open(p))
        k, m = run["kernel"], run["model"]
        tasks = [t["sched"] for t in k.get("tasks", []) if t.get("sched")]
        if not k.get("kswapd") or not tasks:
            sys.exit(f"{p}: no schedstat in the kernel's side")
        g_steal, m_steal = k["vmstat"].get("pgsteal_kswapd", 0), m["vmstat"].get("pgsteal_kswapd", 0)
        scale = None
        if g_steal >= 1000 and m_steal >= 1000 and m["kswapd_cpu_s"] > 0:
            scale = (k["kswapd"]["run_ns"] / g_steal) / (m["kswapd_cpu_s"] * 1e9 / m_steal)
        ops, syscalls = operations(run["scenario"])
        name = f"{run['scenario']} {run['kernel_version']} {run['policy']}"
        model_cpu_ns = sum(t["elapsed_s"] - t["io_wait_s"] - t.get("cpu_wait_s", 0.0) for t in m["tasks"]) * 1e9
        disk_swapins = k["vmstat"].get("pswpin", 0) if swaps_to_a_block_device(run["scenario"]) else 0
        requests = data_read_requests(run["scenario"], k["vmstat"])
        runs.append((name, sum(t["run_ns"] for t in tasks), ops, syscalls, k["vmstat"]["pgpgin"] / 4, scale, model_cpu_ns, disk_swapins, requests))
    scales = [r[5] for r in runs if r[5]]
    if not scales:
        sys.exit("no run reclaimed 1,000 pages in kswapd on both sides")
    scale = statistics.median(scales)
    a = [[r[2], r[3], r[4], r[7], r[8]] for r in runs]
    y = [r[1] / scale - r[6] for r in runs]
    err, x = solve(a, y)
    print(f"scale (guest / model kswapd CPU per page, median of {len(scales)}): {scale:.2f}")
    names = ["op_ns", "extra syscall_ns", "cpu_page_ns", "swap cpu_read_request_ns", "storage cpu_read_request_ns"]
    for n, c in zip(names, x):
        print(f"  {n} = {c:.0f}")
    print(f"  rms error {(err / len(runs)) ** 0.5 / 1e9:.3f} s")
    print("| run | guest task CPU / scale, less the model's (s) | fit (s) |")
    print("|---|---|---|")
    for r, row, t in zip(runs, a, y):
        print(f"| {r[0]} | {t / 1e9:.3f} | {sum(c * v for c, v in zip(x, row)) / 1e9:.3f} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
