"""Peak host memory (RSS) of `pagelab run` against what a scenario declares, printed (not
a timed test): the bound of issue 40 is that memory follows the pages a run touches and
the report's size, never declared sizes or modeled time (docs/architecture.md, "Memory").

Each case runs in a process of its own; its peak RSS comes from wait4(). The same small
workload (20k random reads of a 64M file in a 192M cgroup) runs on a 64G and a 1T
machine; a 1T anonymous region in a 192M cgroup is OOM-killed; a slow reader's long idle
gaps and a long low-rate run show the series' bound; 2,000 small workloads show the cost
of many files.

    python3 bench/memory_bench.py [PAGELAB_BINARY]
"""

import os
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/pagelab"

SMALL = """
[machine]
memory = "{memory}"
[[cgroup]]
path = "/app"
max = "192M"
[[workload]]
name = "reader"
cgroup = "/app"
kind = "file-read"
file_size = "64M"
distribution = "random"
ops = 20000
seed = 1
"""

OOM = """
[machine]
memory = "256M"
[[cgroup]]
path = "/app"
max = "192M"
[[workload]]
name = "big"
cgroup = "/app"
kind = "anon-write"
size = "1T"
distribution = "random"
ops = 100000
seed = 1
"""

SLOW = """
[machine]
memory = "256M"
[[workload]]
name = "slow"
cgroup = "/"
kind = "file-read"
file_size = "64M"
distribution = "random"
ops = {ops}
{pacing}
seed = 1
"""

MANY = '[machine]\nmemory = "4G"\n' + "".join(
    f'[[workload]]\nname = "w{i}"\ncgroup = "/"\nkind = "file-read"\nfile_size = "2M"\ndistribution = "random"\nops = 10\nseed = {i}\n'
    for i in range(2000)
)

CASES = [
    ("20k reads, 64G machine", SMALL.format(memory="64G")),
    ("20k reads, 1T machine", SMALL.format(memory="1T")),
    ("1T anon in 192M, OOM", OOM),
    ("5 reads 20,000 s apart", SLOW.format(ops=5, pacing='think = "20000s"')),
    ("86,400 reads at 1/s", SLOW.format(ops=86_400, pacing="rate_iops = 1")),
    ("2,000 workloads, 2M files", MANY),
]


def run(text, d):
    path = os.path.join(d, "s.toml")
    with open(path, "w") as f:
        f.write(text)
    start = time.perf_counter()
    p = subprocess.Popen([BIN, "run", path, "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    err = p.stderr.read().decode().strip()
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, wall, code, err


def main():
    print(f"{'case':<28} {'peak RSS MiB':>12} {'wall s':>8}  outcome")
    with tempfile.TemporaryDirectory() as d:
        for name, text in CASES:
            rss, wall, code, err = run(text, d)
            outcome = "ok" if code == 0 else f"exit {code}: {err.splitlines()[-1] if err else ''}"
            print(f"{name:<28} {rss:>12.1f} {wall:>8.2f}  {outcome}")


if __name__ == "__main__":
    main()
