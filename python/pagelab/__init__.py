"""pagelab: a fast, faithful laboratory for Linux page reclaim.

    import pagelab
    r = pagelab.run("examples/fio-zipf.toml", set={"machine.memory": "512M"})
    r["vmstat"]["workingset_refault_file"], r["memcg"]["/test"]["pgsteal"]

Reports are the dicts `pagelab run --json` writes, with the kernel's own counter names.
"""

import json

from . import _pagelab

__version__ = _pagelab.__version__

__all__ = ["run", "run_trace", "trace_stats", "sweep", "compare", "cluster_sweep", "policies"]


def _set_args(set):
    """{"machine.memory": "512M"} -> ["machine.memory=\"512M\""]; values are TOML."""
    if set is None:
        return []
    if isinstance(set, dict):
        return [f"{k}={_toml(v)}" for k, v in set.items()]
    return list(set)


def _toml(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v))


def run(scenario=None, *, text=None, set=None, policy=None, policies=None):
    """Runs a scenario (a path, or TOML `text`) and returns its report as a dict.

    `policy` (every cgroup) and `policies` ({"/db": MyPolicy}, per cgroup) run your own
    page-cache eviction policies inside the kernel model, behind its cache_ext-shaped seam.
    A policy is a class (instantiated once per cgroup) or an object with the methods
    `init(self, cgroup)`, `folio_added(self, folio)`, `folio_accessed(self, folio)`,
    `folio_removed(self, folio)` and `evict_folios(self, cgroup, nr)`, which returns an
    iterable of up to `nr` folios or their ids. A folio has `id` (stable while resident),
    `key` (the page, stable across residencies), `file`/`anon`, `object` and `index`,
    `cgroup`, `dirty`, `mapped`, `referenced`, `refault`, `workingset`, `putback` and `how`.
    Candidates are handed over: each then comes back through `folio_added` (`putback`) if
    the kernel keeps it, or leaves through `folio_removed`. An exception in a hook ends the
    run with a RuntimeError naming the cgroup, the method and the exception.
    Cgroups without a policy keep the classic LRU (the machine policy must be classic)."""
    path = None if scenario is None else str(scenario)
    if policy is None and not policies:
        return json.loads(_pagelab.run_json(path, text, _set_args(set)))
    per_cgroup = list((policies or {}).items())
    return json.loads(_pagelab.run_policies_json(path, text, _set_args(set), policy, per_cgroup))


def policies():
    """The policy registry: a list of {"name", "runs" ("trace", "machine", "both"),
    "description", "params"}."""
    return [dict(zip(("name", "runs", "description", "params"), p)) for p in _pagelab.policy_list()]


def run_trace(path, *, policy="classic", memory, format="oracleGeneral", kernel="6.1", set=None):
    """Replays a page-access trace as `pagelab run --trace` does and returns its report.

    `policy`: a kernel model ("classic", "mglru"; the trace becomes one-page buffered reads
    of one file) or a plain cache ("lru", "fifo", "clock", "opt", "sieve", "s3fifo", "arc").
    `memory`: the machine's memory ("40M"; the plain caches hold memory / 4 KiB pages), or a
    list of sizes, run in parallel, which returns a list of reports in their order. `format`:
    "oracleGeneral" (libCacheSim's, plain or zstd), "dense", "fio-iolog" (fio's
    write_iolog), "text", "lcs", "csv:COLUMNS", "blkparse" or "msr" (docs/workloads.md).
    The report has `ops` and the kernel's counters, and for the page traces `misses` and
    `miss_ratio`."""
    sizes = memory if isinstance(memory, (list, tuple)) else [memory]
    out = json.loads(_pagelab.run_trace_json(str(path), policy, ",".join(str(m) for m in sizes), format, kernel, _set_args(set)))
    if isinstance(memory, (list, tuple)) and not isinstance(out, list):
        return [out]
    return out


def curve(path, *, policy="classic", memory, sample=None, format="oracleGeneral", kernel="6.1", counters=None, set=None):
    """A sizing curve of a trace, as `pagelab curve` computes it.

    `memory`: "A..B:N" (N evenly spaced sizes), a comma-separated string or a list of sizes,
    each in bytes ("64M", "4096p") or a percentage of the trace's distinct pages ("5%").
    `sample`: miniature simulation at this rate (0 < R <= 1): a spatially hashed R of the
    pages in R of the memory, counts scaled back by 1/R, each counter with `<name>_error`
    from two hash seeds; without it every point replays the whole trace. `counters`: vmstat
    names to report beside `misses` and `miss_ratio` (kernel models).

    Returns a pandas DataFrame, one row a size (`memory` in bytes first), if pandas is
    installed, else a list of dicts."""
    if isinstance(memory, (list, tuple)):
        memory = ",".join(str(m) for m in memory)
    points = json.loads(_pagelab.curve_json(str(path), policy, str(memory), format, kernel, sample, list(counters or []), _set_args(set)))
    # Columns: memory, the counters (misses and miss_ratio first), their errors, the sample's.
    def order(k):
        rank = {"memory": 0, "misses": 1, "miss_ratio": 2}
        kind = 5 if k.startswith("sample_") or k == "warning" else 4 if k.endswith("_error") else 3
        return (rank.get(k, kind), k)

    return _frame([{k: p[k] for k in sorted(p, key=order)} for p in points])


def _frame(rows):
    """`rows` as a pandas DataFrame when pandas is installed, else as they are."""
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


def trace_stats(path, *, format="oracleGeneral", plot=None, heatmap=False):
    """A trace's statistics, as `pagelab trace-stats` prints them, as a dict: `accesses`,
    `distinct_pages`, `reads`, `writes`, `touches` (the text format's T lines), `plain`
    (accesses whose format does not say), `one_hit_wonders`, `top_1pct_share` and
    `top_10pct_share` (of the accesses, on the most accessed pages), `time_span_s` (None
    without times), `popularity` ([rank, accesses] at log-spaced ranks) and `reuse`
    (`cold` first accesses and a `histogram` of reuse distances, the distinct pages between
    two accesses to a page, in power-of-two buckets; exact up to 2^24 accesses, else sampled
    at `rate` and scaled back). `format` is any `--trace-format`. `heatmap=True` adds
    `heatmap` (accesses by 200 time bins × 200 page bins); `plot="PREFIX"` also draws
    PREFIX-popularity.png and PREFIX-heatmap.png (matplotlib)."""
    stats = json.loads(_pagelab.trace_stats_json(str(path), format, bool(heatmap or plot)))
    if plot is not None:
        from . import plot as _plot

        _plot.trace_stats_png(stats, str(plot))
    return stats


def sweep(scenario=None, *, text=None, vary, set=None, threads=0):
    """Runs every combination of `vary` ({key: [values]}) in parallel; returns a list of
    {"point": {...}, "report": {...}} in point order (results do not depend on `threads`)."""
    if text is None:
        with open(scenario) as f:
            text = f.read()
    axes = [(k, [str(v) for v in vs]) for k, vs in vary.items()]
    return json.loads(_pagelab.sweep_json(text, axes, _set_args(set), threads))


def compare(paths, labels=None):
    """The mmtests-style table of reports written by `pagelab run --json`."""
    return _pagelab.compare_table([str(p) for p in paths], labels)


def cluster_sweep(scenario, vary, *, set=None, client=None):
    """Runs a sweep's points as tasks of a Dask distributed cluster (one point per task).

    `client` is a dask.distributed.Client; without one a local cluster is started. The
    points and their results are the same as `sweep`'s, in the same order."""
    import itertools

    from dask.distributed import Client

    with open(scenario) as f:
        text = f.read()
    keys = list(vary)
    points = [dict(zip(keys, combo)) for combo in itertools.product(*(vary[k] for k in keys))]
    own = client is None
    client = client or Client(processes=True)
    try:
        futures = [client.submit(_run_point, text, _set_args(set) + _set_args(p), pure=True) for p in points]
        reports = client.gather(futures)
    finally:
        if own:
            client.close()
    return [{"point": {k: str(v) for k, v in p.items()}, "report": r} for p, r in zip(points, reports)]


def _run_point(text, set_args):
    from pagelab import _pagelab as lib

    return json.loads(lib.run_json(None, text, set_args))
