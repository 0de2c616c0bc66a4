#!/usr/bin/env python3
"""The check behind Fig. 6's LFU cells (README.md): on the key distribution alone, does an
in-cache LFU beat exact LRU? 600,000 draws of Zipf 0.99 over 819,200 blocks (ycsb.toml's
3,200 MiB of 4 KiB blocks), shuffled as YCSB scrambles them, against a cache of 10% of them
(its 320 MiB cgroup). Hit ratios over the last two thirds of the draws. About 30 s."""
import bisect
import collections
import heapq
import itertools
import random

N, C, n, theta = 819200, 81920, 600000, 0.99
random.seed(1)
cum = list(itertools.accumulate(1 / (i + 1) ** theta for i in range(N)))
perm = list(range(N))
random.shuffle(perm)
reqs = [perm[bisect.bisect_left(cum, random.random() * cum[-1])] for _ in range(n)]
warm = n // 3


def lru():
    c, h = collections.OrderedDict(), 0
    for i, x in enumerate(reqs):
        if x in c:
            c.move_to_end(x)
            h += i >= warm
        else:
            c[x] = 1
            if len(c) > C:
                c.popitem(last=False)
    return h / (n - warm)


def lfu():
    """Evict the least frequently used block (counts kept while cached), the oldest on a tie."""
    f, heap, h = {}, [], 0
    for i, x in enumerate(reqs):
        if x in f:
            f[x] += 1
            h += i >= warm
        else:
            if len(f) >= C:
                while True:
                    fr, _, y = heapq.heappop(heap)
                    if f.get(y) == fr:
                        del f[y]
                        break
            f[x] = 1
        heapq.heappush(heap, (f[x], i, x))
    return h / (n - warm)


print(f"hit ratio: LRU {100 * lru():.1f}%, LFU {100 * lfu():.1f}%")
