#!/usr/bin/env python3
"""What a WiredTiger cache miss costs the client in CPU, measured on this host: the snappy
decompression of one stock leaf (stock-level-wt-full.toml's `miss_think`).

    pip install python-snappy          # in pagelab's .venv; it wraps cramjam's snappy
    python3 examples/seeds/000/leaf_cost.py [--leaves N] [--rounds R]

The leaves are built as the scenario describes them: py-tpcc's STOCK documents in BSON (the
field names repeated in every document, TPC-C's random strings: S_DIST_01..10 of 24
characters, S_DATA of 26-50), packed to a 32 KiB leaf, snappy-compressed as WiredTiger's
default block compressor does. The script prints the leaf's compression ratio and the CPU
time (this process's, `time.process_time_ns`) to decompress one leaf: the median and the
best of R rounds over N leaves.

Not measured here, and not in the figure: WiredTiger's checksum of the on-disk block
(crc32c), the in-memory page's instantiation (`__wt_page_inmem`), and the B-tree search of
a hit. So the figure is a lower bound of a miss's CPU.
"""
import argparse
import random
import string
import struct
import sys
import time

try:
    import snappy
except ImportError:
    sys.exit("leaf_cost.py: needs python-snappy (pip install python-snappy, in pagelab's .venv)")

LEAF = 32 * 1024


def text(rng, lo, hi):
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(rng.randint(lo, hi))).encode()


def bson(doc):
    body = b""
    for key, value in doc.items():
        name = key.encode() + b"\0"
        if isinstance(value, int):
            body += b"\x10" + name + struct.pack("<i", value)
        else:
            body += b"\x02" + name + struct.pack("<i", len(value) + 1) + value + b"\0"
    return struct.pack("<i", len(body) + 5) + body + b"\0"


def stock(rng, item):
    doc = {"_id": item, "S_I_ID": item, "S_W_ID": rng.randint(1, 500), "S_QUANTITY": rng.randint(10, 100)}
    for d in range(1, 11):
        doc["S_DIST_%02d" % d] = text(rng, 24, 24)
    doc.update({"S_YTD": 0, "S_ORDER_CNT": 0, "S_REMOTE_CNT": 0, "S_DATA": text(rng, 26, 50)})
    return bson(doc)


def leaves(n, seed=1):
    rng = random.Random(seed)
    out, item = [], 0
    for _ in range(n):
        leaf = b""
        while len(leaf) < LEAF:
            leaf += stock(rng, item)
            item += 1
        out.append(leaf[:LEAF])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--leaves", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=9)
    a = ap.parse_args()
    plain = leaves(a.leaves)
    packed = [snappy.compress(x) for x in plain]
    ratio = sum(map(len, packed)) / sum(map(len, plain))
    per_leaf = []
    for _ in range(a.rounds):
        start = time.process_time_ns()
        for _ in range(10):
            for p in packed:
                snappy.decompress(p)
        per_leaf.append((time.process_time_ns() - start) / (10 * len(packed)))
    per_leaf.sort()
    print(f"stock leaf: {LEAF} bytes, snappy to {ratio:.2f} of it ({ratio * LEAF / 1024:.1f} KiB on disk)")
    print(f"decompression a leaf: median {per_leaf[len(per_leaf) // 2] / 1000:.1f} us, best {per_leaf[0] / 1000:.1f} us "
          f"({a.rounds} rounds of {10 * len(packed)} leaves, process CPU time)")


if __name__ == "__main__":
    main()
