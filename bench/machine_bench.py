"""The machine's speed and memory (issue 42 item 8), printed, not timed in a test.

Seed 004's fio (examples/seeds/004/fio-randread-cpus.toml: uniform 4 KiB reads on a ramdisk,
files 2.75x the cgroup, 6.1 classic) in three shapes, each run in a process of its own whose
wall time and peak RSS come from wait4():

1. **One CPU each against a machine of CPUs.** 72 jobs without `machine.cpus` (each task as
   if on a CPU of its own: the one-CPU-a-task model) against the same 72 jobs on 36 CPUs
   (run queues, the lruvec's lock). Target: the machine costs at most 2x per access.
2. **A run without `cpus`** against itself is what scripts/same-counters.sh and farm-bench
   A/B measure; it is not repeated here.
3. **Seed 004 at its own scale** (`--full`): 72 jobs x 1408M files, a 36G memcg (9.4M pages),
   36 CPUs, one uniform pass of each job's file (360,448 reads a job, 26M in all). Target:
   minutes, with memory bounded by the pages touched. Without `--full` the same at 1/8 of
   every size shows the trend in seconds.

    python3 bench/machine_bench.py [--full] [--pagelab PATH]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

SCENARIO = "examples/seeds/004/fio-randread-cpus.toml"


def run(pagelab, sets, cpus):
    """Runs pagelab on SCENARIO with `sets`, on `cpus` CPUs or (None) without `machine.cpus`;
    returns (wall seconds, peak RSS MiB, report)."""
    import json

    with tempfile.TemporaryDirectory() as d:
        scenario = os.path.join(d, "fio.toml")
        with open(SCENARIO) as f:
            text = "".join(line for line in f if not line.startswith("cpus ="))
        if cpus is not None:
            text = text.replace("[machine]\n", f"[machine]\ncpus = {cpus}\n", 1)
        with open(scenario, "w") as f:
            f.write(text)
        out = os.path.join(d, "r.json")
        args = [pagelab, "run", scenario, "--json", out]
        for s in sets:
            args += ["--set", s]
        t0 = time.monotonic()
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        if status != 0:
            sys.exit(f"pagelab failed ({status}): {p.stderr.read().decode()[-400:]}")
        with open(out) as f:
            return wall, usage.ru_maxrss / 1024, json.load(f)


def shape(jobs, mem_per_job_mb, file_mb, ops):
    return [
        f"workload.fio.jobs={jobs}",
        f'cgroup./test.max="{jobs * mem_per_job_mb}M"',
        f'machine.memory="{8 * jobs * mem_per_job_mb}M"',
        f'workload.fio.file_size="{file_mb}M"',
        f"workload.fio.ops={ops}",
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pagelab", default="target/release/pagelab")
    ap.add_argument("--full", action="store_true", help="seed 004 at its own scale (minutes, several GiB)")
    a = ap.parse_args()

    print("1. 72 jobs, 36M of cgroup and 99M of file a job, 30,000 reads a job:")
    rows = []
    for cpus in (None, 36):
        wall, rss, r = run(a.pagelab, shape(72, 36, 99, 30000), cpus)
        accesses = 72 * 30000
        rows.append(wall / accesses)
        label = "without machine.cpus" if cpus is None else f"machine.cpus = {cpus}"
        print(f"   {label:22} {wall:6.2f} s  {1e9 * wall / accesses:7.0f} ns an access  peak {rss:6.0f} MiB  {r['throughput_ops_s']:,.0f} modeled ops/s")
    print(f"   the machine of CPUs costs {rows[1] / rows[0]:.2f}x an access (target: at most 2x)")

    div = 1 if a.full else 8
    jobs, mem, file_mb = 72, 512 // div, 1408 // div
    ops = file_mb * 256
    print(f"\n3. seed 004 {'at its own scale' if a.full else 'at 1/8 of its sizes (--full: its own)'}: 72 jobs x {file_mb}M files, "
          f"{jobs * mem}M memcg ({jobs * mem * 256:,} pages), 36 CPUs, {ops:,} reads a job:")
    wall, rss, r = run(a.pagelab, shape(jobs, mem, file_mb, ops), 36)
    pages = jobs * mem * 256
    print(f"   {wall:.1f} s, peak {rss:,.0f} MiB of host memory: {rss * 1048576 / pages:.0f} bytes a page of the "
          f"cgroup, {1e9 * wall / (jobs * ops):.0f} ns an access; {r['throughput_ops_s']:,.0f} modeled ops/s")

if __name__ == "__main__":
    main()
