#!/usr/bin/env python3
"""Per-memcg lru_lock against the node's: vm-scalability's readtwice in containers.

Alex Shi's "per memcg lru_lock" series (merged in 5.11) replaced the node's pgdat->lru_lock
with one lock per memcg lruvec, and reported "62% improvement on modified readtwice case on
his 2P * 10 core * 2 HT broadwell box on v18" (openanolis bug 2349, quoting the series) and
"about 80%" with 208 dd in 104 containers on 104 threads (v11 cover letter). The modified case
runs vm-scalability's case-lru-file-readtwice in containers: each container has one file
and two `dd bs=4k` readers of it started together, so the second read of each page marks it
accessed and activates it (activate_page(), the case's main lru_lock user by its own
comments), and the containers' files together exceed memory so that reclaim runs too.

pagelab runs the same on kernel 5.7 (one pgdat->lru_lock for every lruvec of the node) and
6.1 (a lock per memcg), at one container per CPU as the v11 run had (two readers each).
What is not from the source, and chosen here: the files add up to twice the memory
(vm-scalability's ROTATE_BYTES is set by its caller), the sparse files' zero-filled reads are
modeled as a ramdisk's copies (the CPU cost of a page either way), and memory is 32M a
container so that a run takes seconds. Everything else is the kernels' own rules; 5.7 and 6.1
also differ in their anon/file balance, which a file-only run does not exercise.

    python3 examples/contention/readtwice.py [--pagelab PATH] [--cpus 4,10,20,40]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

MEMORY_MB_PER_CONTAINER = 32


def scenario(kernel: str, cpus: int) -> str:
    memory = MEMORY_MB_PER_CONTAINER * cpus
    file_mb = 2 * MEMORY_MB_PER_CONTAINER
    out = [
        "[machine]",
        f'memory = "{memory}M"',
        f'kernel = "{kernel}"',
        'policy = "classic"',
        'storage = "ramdisk"',
        f"cpus = {cpus}",
    ]
    for c in range(cpus):
        out += [
            "",
            "[[cgroup]]",
            f'path = "/c{c}"',
            "",
            "[[workload]]",
            f'name = "dd{c}"',
            f'cgroup = "/c{c}"',
            "jobs = 2",
            'kind = "file-read"',
            f'file_size = "{file_mb}M"',
            "shared_file = true",
            'distribution = "sequential"',
            f"ops = {file_mb * 256}",
            f"seed = {c + 1}",
        ]
    return "\n".join(out) + "\n"


def run(pagelab: str, kernel: str, cpus: int, tmp: str) -> dict:
    path = os.path.join(tmp, f"readtwice-{kernel}-{cpus}.toml")
    with open(path, "w") as f:
        f.write(scenario(kernel, cpus))
    out = path[:-5] + ".json"
    subprocess.run([pagelab, "run", path, "--json", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def spin_share(r: dict) -> float:
    busy = sum(t.get("cpu_s") or 0 for t in r["tasks"])
    return 100 * sum(t.get("lock_spin_s") or 0 for t in r["tasks"]) / busy if busy else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pagelab", default="target/release/pagelab")
    ap.add_argument("--cpus", default="4,10,20,40")
    a = ap.parse_args()
    print("| CPUs = containers | readers | 5.7 pages/s | 6.1 pages/s | 6.1 gain | 5.7 spinning | 6.1 spinning |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in a.cpus.split(",")):
            old, new = run(a.pagelab, "5.7", n, tmp), run(a.pagelab, "6.1", n, tmp)
            to, tn = old["throughput_ops_s"], new["throughput_ops_s"]
            print(f"| {n} | {2 * n} | {to:,.0f} | {tn:,.0f} | {100 * (tn / to - 1):+.1f}% | {spin_share(old):.1f}% | {spin_share(new):.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
