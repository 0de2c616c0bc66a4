"""Writes db-anon.txt.gz, the anonymous-memory trace examples/byo/lockstep.toml replays.

It stands in for a trace captured from a database process (pagelab's text format: `T PAGE`
first touches in the order the process touched its heap, then one `R PAGE` or `W PAGE` a
line): 8192 pages (32 MiB) touched in 64-page chunks, then 24,000 accesses, 80% of them to
a hot fifth of the pages, 30% of them writes. Deterministic; rerun to regenerate it:

    python3 examples/byo/make_trace.py
"""

import gzip
import pathlib
import random

PAGES, ACCESSES = 8192, 24_000
rng = random.Random(18)
chunks = list(range(0, PAGES, 64))
rng.shuffle(chunks)
hot = rng.sample(range(PAGES), PAGES // 5)
lines = ["# a database's heap: first touches, then reads and writes (pagelab text format)"]
lines += [f"T {c + i}" for c in chunks for i in range(64)]
for _ in range(ACCESSES):
    page = rng.choice(hot) if rng.random() < 0.8 else rng.randrange(PAGES)
    lines.append(f"{'W' if rng.random() < 0.3 else 'R'} {page}")
out = pathlib.Path(__file__).with_name("db-anon.txt.gz")
with gzip.GzipFile(out, "wb", mtime=0) as f:
    f.write(("\n".join(lines) + "\n").encode())
print(f"{out}: {PAGES} pages, {ACCESSES} accesses")
