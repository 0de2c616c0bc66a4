"""pagelab's plain caches against libCacheSim (PyPI `libcachesim`) on the same trace files:
the miss counts must be equal, not close."""

import os
import pathlib
import subprocess
import sys
import json

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


@pytest.mark.parametrize("policy,cls", [("lru", "LRU"), ("fifo", "FIFO"), ("clock", "Clock"), ("opt", "Belady")])
def test_plain_caches_miss_exactly_as_libcachesim(zipf_traces, policy, cls):
    for path, n, objects in zipf_traces:
        for pages in (1, objects // 100, objects // 10, objects // 2, objects + 10):
            ours = pagelab_run(path, policy, pages)
            # lru, fifo and clock stream oracleGeneral input keyed by object id, with no id map
            # to count pages; opt keeps the id map.
            assert ours["ops"] == n and ours["trace"]["pages"] == (objects if policy == "opt" else None)
            assert ours["misses"] == libcachesim_misses(path, getattr(lcs, cls), pages, n), (path.name, policy, pages)
