"""Zipf traces in libCacheSim's oracleGeneral format, for pagelab's benchmark and tests.

`write_zipf(path, n_req, n_obj, alpha, seed)` draws `n_req` ranks from a Zipf(alpha)
distribution over `n_obj` objects by inverting its exact CDF (so alpha = 1.0 works), gives
each rank a scattered 64-bit object id, fills in every record's next-access time, and writes
the 24-byte little-endian records (u32 time, u64 obj_id, u32 obj_size = 4096, i64 next).
"""

import numpy as np

RECORD = np.dtype([("time", "<u4"), ("obj_id", "<u8"), ("obj_size", "<u4"), ("next", "<i8")])
assert RECORD.itemsize == 24


def zipf_ranks(n_req, n_obj, alpha, seed):
    rng = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, n_obj + 1, dtype=np.float64) ** alpha
    cdf = np.cumsum(w)
    cdf /= cdf[-1]
    u = rng.random(n_req)
    return np.minimum(np.searchsorted(cdf, u, side="right"), n_obj - 1)


def next_access(ids):
    """Index of the next record with the same id, -1 if none."""
    n = len(ids)
    order = np.lexsort((np.arange(n), ids))
    nxt = np.full(n, -1, dtype=np.int64)
    same = ids[order[1:]] == ids[order[:-1]]
    nxt[order[:-1][same]] = order[1:][same]
    return nxt


def records(ids, size=4096):
    r = np.empty(len(ids), dtype=RECORD)
    r["time"] = np.arange(len(ids), dtype=np.uint64) // 1000
    r["obj_id"] = ids
    r["obj_size"] = size
    r["next"] = next_access(ids)
    return r


def scatter(ranks, seed):
    """Distinct 64-bit ids for ranks (an odd multiplier is a bijection mod 2^64)."""
    mult = np.uint64(0x9E3779B97F4A7C15)
    return (ranks.astype(np.uint64) + np.uint64(seed)) * mult


def write_zipf(path, n_req, n_obj, alpha, seed=1):
    ids = scatter(zipf_ranks(n_req, n_obj, alpha, seed), seed)
    records(ids).tofile(path)
    return len(np.unique(ids))
