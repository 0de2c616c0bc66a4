"""The eviction seam's cost, printed (not a timed test):

* the kernel model with the `lru` plain cache behind the seam vs the classic LRU, on the
  same scenario (wall time and modeled operations per wall second);
* a Python policy (an LRU in a dict) inside the model: accesses per second and the cost
  of one callback.

    python3 bench/seam_bench.py [ops]
"""

import sys
import time

import pagelab

OPS = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000

SCENARIO = """
[machine]
memory = "256M"
kernel = "6.1"
policy = "{policy}"
[[cgroup]]
path = "/test"
max = "64M"
[[workload]]
name = "zipf"
cgroup = "/test"
kind = "file-read"
file_size = "256M"
block_size = "4k"
distribution = "zipf:0.8"
fadvise = "random"
ops = {ops}
seed = 42
"""


class PyLRU:
    calls = 0

    def init(self, cgroup):
        self.order = {}

    def folio_added(self, folio):
        PyLRU.calls += 1
        self.order[folio.id] = None

    def folio_accessed(self, folio):
        PyLRU.calls += 1
        if folio.id in self.order:
            del self.order[folio.id]
            self.order[folio.id] = None

    def folio_removed(self, folio):
        PyLRU.calls += 1
        self.order.pop(folio.id, None)

    def evict_folios(self, cgroup, nr):
        PyLRU.calls += 1
        out = []
        it = iter(self.order)
        for _ in range(nr):
            k = next(it, None)
            if k is None:
                break
            out.append(k)
        for k in out:
            del self.order[k]
        return out


def timed(**kw):
    best = None
    for _ in range(3):
        t = time.perf_counter()
        r = pagelab.run(**kw)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return r, best


def main():
    print(f"scenario: zipf:0.8 reads of a 256M file in a 64M cgroup, {OPS} ops, best of 3")
    rows = []
    for policy in ["classic", "lru", "s3fifo"]:
        r, dt = timed(text=SCENARIO.format(policy=policy, ops=OPS))
        rows.append((policy, dt, r))
        print(f"  {policy:8} {dt:7.3f} s  {OPS / dt / 1e6:6.2f} M ops/s  refaults {r['memcg']['/test']['workingset_refault_file']}")
    base = rows[0][1]
    print(f"  the lru adapter costs {rows[1][1] / base:.2f}x classic's wall time")
    PyLRU.calls = 0
    n = OPS // 10
    r, dt = timed(text=SCENARIO.format(policy="classic", ops=n), policies={"/test": PyLRU})
    calls = PyLRU.calls / 3
    print(f"  python lru ({n} ops): {dt:.3f} s, {n / dt:,.0f} accesses/s, {calls / dt:,.0f} callbacks/s, {dt / calls * 1e6:.2f} us per callback (all in)")


if __name__ == "__main__":
    main()
