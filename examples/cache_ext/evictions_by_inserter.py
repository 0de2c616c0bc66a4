"""What classic and cache_ext's sampling LFU evict on Fig. 6's store, by who brought each
page in (LevelDB's compaction thread or a client thread) and how many reads it had:

    . scripts/venv.sh && python3 examples/cache_ext/evictions_by_inserter.py classic|lfu|random

`classic` is a deferring policy (the kernel's classic LRU decides; the hooks only count).
`lfu` is docs/policies.md's port of cache_ext's sampling LFU with scores kept in the lists,
which hands over a dirty folio where cache_ext's scores it out (the kernel keeps it); its
refaults are within 1% of the built-in `sampling-lfu`'s. `random` is an LFU that samples
20 folios at random from all of its folios for each victim (RandomLfu). Accesses count the inserting read
and every later read cache_ext's hook hears (folio_mark_accessed()), capped at 4.
(docs/journal/2026-11-30-my-ycsb-zipfian.md, last section.)
"""
import collections
import json
import os
import random
import sys

import pagelab

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

class Observe:
    """Counts, by who brought a page in (the compaction thread or a client), the pages added,
    re-added after an eviction (refault), and evicted, with their accesses at eviction."""
    def init(self, cgroup):
        self.cg = cgroup
        self.meta = {}   # id -> [inserter, accesses]
        self.c = collections.Counter()
        self.acc = collections.Counter()

    def who(self, folio):
        if folio.task is None:
            return "none"
        return "compactor" if "compaction" in str(self.cg.tasks[folio.task]) else "client"

    def folio_added(self, folio):
        if folio.anon:
            return
        w = self.who(folio)
        self.meta[folio.id] = [w, 1]
        self.c[("added", w)] += 1
        if folio.refault:
            self.c[("refault", w)] += 1

    def folio_accessed(self, folio):
        if folio.how != "read":
            return
        m = self.meta.get(folio.id)
        if m:
            m[1] += 1

    def folio_removed(self, folio):
        m = self.meta.pop(folio.id, None)
        if not m:
            return
        if folio.how == "evicted":
            self.c[("evicted", m[0])] += 1
            self.acc[(m[0], min(m[1], 4))] += 1
        else:
            self.c[("freed", m[0])] += 1

    def state(self):
        return {"c": {"%s/%s" % k: v for k, v in self.c.items()}, "acc": {"%s/%d" % k: v for k, v in self.acc.items()}}



class Classic(Observe):
    defers_eviction = True

    def evict_folios(self, cgroup, nr):
        return []


class Lfu(Observe):
    def init(self, cgroup):
        super().init(cgroup)
        self.lists = pagelab.Lists()
        self.list = self.lists.create()

    def folio_added(self, folio):
        super().folio_added(folio)
        if folio.anon or not self.lists.add_tail(self.list, folio):
            return
        self.lists.set_score(folio, 1)

    def folio_accessed(self, folio):
        super().folio_accessed(folio)
        if folio.how == "read":
            self.lists.add_score(folio)

    def folio_removed(self, folio):
        super().folio_removed(folio)
        self.lists.delete(folio)

    def evict_folios(self, cgroup, nr):
        return self.lists.sample(self.list, 20, nr)


class RandomLfu(Observe):
    """LFU that takes each victim as the least-read of 20 folios drawn at random from all of
    its folios (Redis-style sampling), passing over those the kernel could not free now: the
    sample without cache_ext's runs of consecutive list nodes."""

    def init(self, cgroup):
        super().init(cgroup)
        self.ids, self.pos, self.rng = [], {}, random.Random(1)

    def folio_added(self, folio):
        super().folio_added(folio)
        if not folio.anon:
            self.pos[folio.id] = len(self.ids)
            self.ids.append(folio.id)

    def folio_removed(self, folio):
        super().folio_removed(folio)
        i = self.pos.pop(folio.id, None)
        if i is not None:
            last = self.ids.pop()
            if i < len(self.ids):
                self.ids[i], self.pos[last] = last, i

    def score(self, fid):
        m = self.meta.get(fid)
        return m[1] if m and self.cg.freeable(fid) else 2**63 - 1

    def evict_folios(self, cgroup, nr):
        out = []
        for _ in range(nr if len(self.ids) >= 20 else 0):
            draws = [self.ids[self.rng.randrange(len(self.ids))] for _ in range(20)]
            best = min((f for f in draws if f not in out), key=self.score, default=None)
            if best is not None:
                out.append(best)
        return out


which = sys.argv[1] if len(sys.argv) == 2 else sys.exit("usage: evictions_by_inserter.py classic|lfu|random")
pol = {"classic": Classic, "lfu": Lfu, "random": RandomLfu}[which]()
r = pagelab.run(os.path.join(ROOT, "examples/cache_ext/ycsb-paper.toml"), policies={"/db": pol})
print(which, json.dumps(pol.state(), sort_keys=True))
print(which, "refaults", r["vmstat"].get("workingset_refault_file"), "elapsed", r["elapsed_s"])
