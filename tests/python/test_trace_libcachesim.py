"""pagelab's plain caches against libCacheSim (PyPI `libcachesim`) on the same trace files:
the miss counts must be equal, not close."""

import os
import pathlib
import subprocess
import sys
import json
from collections import OrderedDict

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import traces  # noqa: E402

import libcachesim as lcs  # noqa: E402  (test.sh installs it from PyPI)


def pagelab_bin():
    if os.environ.get("PAGELAB_BIN"):
        return os.environ["PAGELAB_BIN"]
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    exe = target / "release" / "pagelab"
    if not exe.exists():
        subprocess.run(["cargo", "build", "--release", "-p", "pagelab-cli"], cwd=ROOT, check=True)
    return str(exe)


def pagelab_run(path, policy, pages):
    out = subprocess.run(
        [pagelab_bin(), "run", "--trace", str(path), "--trace-format", "oracleGeneral", "--policy", policy, "--memory", f"{pages * 4}k", "--json", "-"],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout)


def libcachesim_misses(path, cls, pages, n):
    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = cls(pages * 4096, hashpower=max(pages.bit_length() + 1, 4))
    miss_ratio, _ = cache.process_trace(reader)
    misses = round(miss_ratio * n)
    assert abs(misses - miss_ratio * n) < 1e-6
    return misses


@pytest.fixture(scope="module")
def zipf_traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("traces")
    out = []
    for alpha in (0.8, 1.0):
        p = d / f"zipf{alpha}.oracleGeneral"
        objects = traces.write_zipf(p, 200_000, 20_000, alpha, seed=7)
        out.append((p, 200_000, objects))
    return out


KEYED = ("lru", "fifo", "clock")


@pytest.mark.parametrize(
    "policy,cls",
    [("lru", "LRU"), ("fifo", "FIFO"), ("clock", "Clock"), ("opt", "Belady"), ("sieve", "Sieve"), ("s3fifo", "S3FIFO")],
)
def test_plain_caches_miss_exactly_as_libcachesim(zipf_traces, policy, cls):
    for path, n, objects in zipf_traces:
        # S3-FIFO caches nothing below 11 pages (its small queue must hold a page): 10 and 11
        # check that edge.
        for pages in (1, 10, 11, objects // 100, objects // 10, objects // 2, objects + 10):
            ours = pagelab_run(path, policy, pages)
            # lru, fifo and clock stream oracleGeneral input keyed by object id, with no id map
            # to count pages; the others keep the id map.
            assert ours["ops"] == n and ours["trace"]["pages"] == (None if policy in KEYED else objects)
            assert ours["misses"] == libcachesim_misses(path, getattr(lcs, cls), pages, n), (path.name, policy, pages)


def arc_misses(ids, pages, step):
    """ARC as the paper's pseudo-code reads, with the target p counted in 4096ths of a page
    and moved by `step` of them per unit of ghost-hit ratio: 4096 is the paper's ARC, 1 is
    libCacheSim's (which keeps p in bytes but moves it by the page ratio)."""
    c, unit = pages, 4096
    t1, t2, b1, b2 = OrderedDict(), OrderedDict(), OrderedDict(), OrderedDict()  # oldest first
    p, misses = 0, 0

    def replace(in_b2):
        if len(t1) > 0 and (len(t1) * unit > p or (len(t1) * unit == p and in_b2)):
            b1[t1.popitem(last=False)[0]] = None
        else:
            b2[t2.popitem(last=False)[0]] = None

    for x in ids:
        if x in t1:
            del t1[x]
            t2[x] = None
            continue
        if x in t2:
            t2.move_to_end(x)
            continue
        misses += 1
        if x in b1:
            p = min(p + max(len(b2) // len(b1), 1) * step, c * unit)
            replace(False)
            del b1[x]
            t2[x] = None
        elif x in b2:
            p = max(p - max(len(b1) // len(b2), 1) * step, 0)
            replace(True)
            del b2[x]
            t2[x] = None
        else:
            while len(t1) + len(t2) + 1 > c:
                if len(t1) + len(b1) + 1 > c:
                    if len(t1) < c:
                        b1.popitem(last=False)
                        replace(False)
                    else:
                        t1.popitem(last=False)
                else:
                    if len(t1) + len(b1) + len(t2) + len(b2) >= 2 * c:
                        b2.popitem(last=False)
                    replace(False)
            t1[x] = None
    return misses


def test_arc_is_the_papers_and_libcachesims_differs_only_in_its_target_step(zipf_traces):
    for path, n, objects in zipf_traces:
        ids = np.fromfile(path, dtype=traces.RECORD)["obj_id"].tolist()
        for pages in (2, objects // 100, objects // 10):
            # The transliteration with libCacheSim's step is libCacheSim's ARC, miss for miss...
            assert arc_misses(ids, pages, 1) == libcachesim_misses(path, lcs.ARC, pages, n), (path.name, pages)
            # ...and pagelab's ARC is the same code with the paper's step of one page.
            assert pagelab_run(path, "arc", pages)["misses"] == arc_misses(ids, pages, 4096), (path.name, pages)
