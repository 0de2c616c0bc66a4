#!/usr/bin/env python3
"""Prints the table of examples/operators/README.md: the fleet of fleet.toml run without a
controller and with senpai on each cgroup (`[[controller]] kind = "senpai"`, its defaults:
docs/controllers.md), reported as TMO (ASPLOS '22) reports its savings.

    python3 examples/operators/tmo_table.py [--pagelab PATH] [--keep DIR]

Per workload: its cgroup's memory.current averaged over the run (the series' points,
weighted by the time each covers) without and with senpai and the share saved; the memory
pressure the cgroup had (`some` stall total, as a share of the run's modeled time, and the
largest avg10 of the series); its task's p99 operation latency and its throughput
(operations per modeled second of its own run) with senpai against without; and what senpai
did (probes, bytes reclaimed, back-offs).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FLEET = os.path.join(HERE, "fleet.toml")
WORKLOADS = [("cache", "/cache"), ("batch", "/batch"), ("web", "/web"), ("sidecar", "/sidecar")]


def run(pagelab, text, out):
    path = out.replace(".json", ".toml")
    with open(path, "w") as f:
        f.write(text)
    subprocess.run([pagelab, "run", path, "-q", "--json", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def avg_current(report, cgroup):
    """memory.current over the run, each series point weighted by the time it covers."""
    total, last_t, weighted = 0.0, 0.0, 0.0
    for p in report["series"]:
        dt = p["t_s"] - last_t
        weighted += p["memory_current"][cgroup] * dt
        total += dt
        last_t = p["t_s"]
    return weighted / total if total else 0.0


def pressure(report, cgroup):
    """(some total as % of the run, largest some avg10 of the series)."""
    total_us = report["memory.pressure"][cgroup]["some"]["total_us"]
    peak = max((p["memory.pressure"][cgroup]["some"]["avg10"] for p in report["series"]), default=0.0)
    return 100.0 * total_us / 1e6 / report["elapsed_s"], peak


def task(report, name):
    return next(t for t in report["tasks"] if t["name"] == name)


def p99_us(report, name):
    lat = task(report, name).get("latency")
    return lat["p99_ns"] / 1e3 if lat else 0.0


def senpai_did(report, cgroup):
    acts = [a for a in report.get("controller_actions", []) if a["cgroup"] == cgroup]
    probes = [a for a in acts if a["action"] == "memory.reclaim"]
    backoffs = [a for a in acts if a["action"] == "hold"]
    return len(probes), sum(a["reclaimed_bytes"] for a in probes), len(backoffs)


def mib(b):
    return f"{b / (1 << 20):,.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pagelab", default=os.path.join(ROOT, "target", "release", "pagelab"))
    ap.add_argument("--keep", help="keep the scenarios and JSON reports in this directory")
    a = ap.parse_args()
    with open(FLEET) as f:
        fleet = f.read()
    controlled = fleet + "".join(f'\n[[controller]]\nkind = "senpai"\ncgroup = "{cg}"\n' for _, cg in WORKLOADS)
    tmp = a.keep or tempfile.mkdtemp(prefix="pagelab-operators-")
    os.makedirs(tmp, exist_ok=True)
    base = run(a.pagelab, fleet, os.path.join(tmp, "without.json"))
    tmo = run(a.pagelab, controlled, os.path.join(tmp, "senpai.json"))
    print("| workload | memory.current without (MiB) | with senpai (MiB) | saved | some stall without / with (% of run) | peak some avg10 with (%) | p99 latency without / with (µs) | throughput with / without | senpai: probes, reclaimed (MiB), back-offs |")
    print("|---|---|---|---|---|---|---|---|---|")
    sums = [0.0, 0.0]
    for name, cg in WORKLOADS:
        m0, m1 = avg_current(base, cg), avg_current(tmo, cg)
        sums[0] += m0
        sums[1] += m1
        (p0, _), (p1, peak1) = pressure(base, cg), pressure(tmo, cg)
        t0, t1 = task(base, name)["ops_per_s"], task(tmo, name)["ops_per_s"]
        l0, l1 = p99_us(base, name), p99_us(tmo, name)
        probes, reclaimed, backoffs = senpai_did(tmo, cg)
        saved = 100.0 * (1 - m1 / m0) if m0 else 0.0
        print(f"| {name} | {mib(m0)} | {mib(m1)} | {saved:.1f}% | {p0:.3f} / {p1:.3f} | {peak1:.2f} | {l0:,.0f} / {l1:,.0f} | {t1 / t0:.3f} | {probes}, {mib(reclaimed)}, {backoffs} |")
    saved = 100.0 * (1 - sums[1] / sums[0]) if sums[0] else 0.0
    print(f"| all | {mib(sums[0])} | {mib(sums[1])} | {saved:.1f}% | | | | | |")
    print(f"\nmodeled time: {base['elapsed_s']:.1f} s without, {tmo['elapsed_s']:.1f} s with senpai; kernel {tmo['kernel']}, policy {tmo['policy']}")


if __name__ == "__main__":
    sys.exit(main())
