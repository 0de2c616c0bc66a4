"""Runs examples/policies/hot-and-scan.toml under the kernel's LRUs and with eviction
policies for the scanner's cgroup (registry policies and a Python one), and prints the
refaults, pgscan and modeled throughput of each cgroup.

    python3 examples/policies/run.py
"""

import pathlib

import pagelab

SCENARIO = pathlib.Path(__file__).with_name("hot-and-scan.toml")


class ScanAware:
    """A GET-SCAN-like policy in a few lines: pages read once since they came in are
    evicted first, newest first (a scan's pages: what was just scanned is read again last);
    pages read again are kept in LRU order behind them."""

    def init(self, cgroup):
        self.once, self.again = {}, {}

    def folio_added(self, folio):
        self.once[folio.id] = None

    def folio_accessed(self, folio):
        if self.once.pop(folio.id, 0) is None or self.again.pop(folio.id, 0) is None:
            self.again[folio.id] = None

    def folio_removed(self, folio):
        self.once.pop(folio.id, None)
        self.again.pop(folio.id, None)

    def evict_folios(self, cgroup, nr):
        out = []
        while self.once and len(out) < nr:
            out.append(self.once.popitem()[0])  # the newest
        for fid in list(self.again)[: nr - len(out)]:  # the least recent
            del self.again[fid]
            out.append(fid)
        return out


RUNS = [
    ("classic", {}, None),
    ("mglru", {"machine.policy": "mglru"}, None),
    ("scan: s3fifo", {"cgroup./app/scan.policy": "s3fifo"}, None),
    ("scan: mru", {"cgroup./app/scan.policy": "mru"}, None),
    ("all: s3fifo", {"machine.policy": "s3fifo"}, None),
    ("scan: python", {}, {"/app/scan": ScanAware}),
]


def main():
    print(f"{'run':14} {'cgroup':10} {'refaults':>9} {'pgscan':>8} {'ops/s':>9}")
    for label, sets, policies in RUNS:
        r = pagelab.run(SCENARIO, set=sets, policies=policies)
        for t in r["tasks"]:
            m = r["memcg"][t["cgroup"]]
            print(f"{label:14} {t['cgroup']:10} {m['workingset_refault_file']:9} {m['pgscan']:8} {t['ops_per_s']:9.0f}")


if __name__ == "__main__":
    main()
