"""pagelab: a fast, faithful laboratory for Linux page reclaim.

    import pagelab
    r = pagelab.run("examples/fio-zipf.toml", set={"machine.memory": "512M"})
    r["vmstat"]["workingset_refault_file"], r["memcg"]["/test"]["pgsteal"]

Reports are the dicts `pagelab run --json` writes, with the kernel's own counter names.
Sweeps and curves are pandas DataFrames, one row a point, with each row's full report in
`df.attrs["reports"]`; `series_frame(report)` is a run's series, one row an interval.
These are the tables `--parquet` writes (docs/tables.md).
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Union

from . import _pagelab
from .controller import ControlCgroup, Controller
from .policy import Cgroup, Folio, Policy

#: cache_ext's eviction lists for a Python policy (one per cgroup): see docs/policies.md.
Lists = _pagelab.Lists

__version__ = _pagelab.__version__

__all__ = ["Policy", "Folio", "Cgroup", "Lists", "Controller", "ControlCgroup", "run", "run_trace", "trace_stats", "sweep", "compare", "cluster_sweep", "policies", "curve", "series_frame"]


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


def _toml_key(k):
    k = str(k)
    return k if k and all(c.isalnum() or c in "_-" for c in k) else json.dumps(k)


def _toml_value(v, where):
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(x, f'{where}.{k}')}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x, f"{where}[{i}]") for i, x in enumerate(v)) + "]"
    if isinstance(v, bool) or isinstance(v, (int, float)):
        return _toml(v)
    if isinstance(v, str):
        return json.dumps(v)
    raise TypeError(f"scenario dict: `{where}` is a {type(v).__name__}; a scenario holds str, int, float, bool, lists and dicts")


def _dict_to_toml(d):
    """A scenario given as a dict (the TOML file's tables: {"machine": {...}, "cgroup":
    [{...}], "workload": [{...}]}) as TOML text."""
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            out.append(f"[{_toml_key(k)}]")
            out += [f"{_toml_key(kk)} = {_toml_value(vv, f'{k}.{kk}')}" for kk, vv in v.items()]
        elif isinstance(v, (list, tuple)) and v and all(isinstance(x, dict) for x in v):
            for i, t in enumerate(v):
                out.append(f"[[{_toml_key(k)}]]")
                out += [f"{_toml_key(kk)} = {_toml_value(vv, f'{k}[{i}].{kk}')}" for kk, vv in t.items()]
        else:
            out.insert(0, f"{_toml_key(k)} = {_toml_value(v, k)}")
    return "\n".join(out) + "\n"


def _scenario_source(scenario, text):
    """(path, text) from what the caller gave: a path, a dict of the TOML tables, or text."""
    if isinstance(scenario, dict):
        if text is not None:
            raise ValueError("give either a scenario (a path or a dict) or its text, not both")
        return None, _dict_to_toml(scenario)
    if scenario is not None and not isinstance(scenario, (str, bytes)) and not hasattr(scenario, "__fspath__"):
        raise TypeError(f"scenario: expected a path or a dict of the scenario's tables, got a {type(scenario).__name__}")
    return (None if scenario is None else str(scenario)), text


def _bar(done, total, what="points"):
    """A progress bar on standard error for `progress=True`."""
    import sys

    width = 30
    filled = width * done // max(total, 1)
    sys.stderr.write(f"\r[{'=' * filled}{' ' * (width - filled)}] {done}/{total} {what}")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _warn(report):
    import warnings

    for w in report.get("warnings", []) if isinstance(report, dict) else []:
        warnings.warn(f"pagelab: {w}", RuntimeWarning, stacklevel=3)
    return report


Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]
Settings = Optional[Union[Mapping[str, Any], Iterable[str]]]


def run(
    scenario: Optional[Scenario] = None,
    *,
    text: Optional[str] = None,
    set: Settings = None,
    policy: Optional[Union[str, Policy, type]] = None,
    policies: Optional[Mapping[str, Union[str, Policy, type]]] = None,
    kernel: Optional[str] = None,
    memory: Optional[Union[str, int]] = None,
    controllers: Optional[Iterable[Union[Controller, type]]] = None,
) -> Dict[str, Any]:
    """Runs a scenario (a path, a dict of its TOML tables, or TOML `text`) and returns its
    report as a dict.

    `kernel` ("6.1", "6.12", "7.3", "5.7") and `memory` ("512M", or bytes) are `pagelab run`'s
    --kernel and --memory: the same as set={"machine.kernel": ..., "machine.memory": ...}.
    `policy` may be a name from `pagelab.policies()` ("mglru", "s3fifo"; the command line's
    --policy), and so may the values of `policies` ({"/db": "mru"}).

    `policy` (every cgroup) and `policies` ({"/db": MyPolicy}, per cgroup) also run your own
    page-cache eviction policies inside the kernel model, behind its cache_ext-shaped seam.
    A policy is a class (instantiated once per cgroup) or an object with the methods
    `init(self, cgroup)`, `folio_added(self, folio)`, `folio_accessed(self, folio)`,
    `folio_removed(self, folio)` and `evict_folios(self, cgroup, nr)`, which returns an
    iterable of up to `nr` folios or their ids; while it runs, `cgroup.freeable(folio)` says
    whether the kernel could free a folio now (clean, not under writeback, on the LRU, its
    read done), as cache_ext's policies test before they choose. A folio has `id` (stable while resident),
    `key` (the page, stable across residencies), `file`/`anon`, `object` and `index`,
    `cgroup`, `dirty`, `mapped`, `referenced`, `refault`, `workingset`, `putback`, `task`
    (an index into the cgroup's `tasks`, the task names) and `how`. An optional sixth hook,
    `admit_folio(self, folio)`, returning False drops a folio once a read has copied it
    (cache_ext's admission); `pagelab.Lists` are cache_ext's eviction lists.
    Candidates are handed over: each then comes back through `folio_added` (`putback`) if
    the kernel keeps it, or leaves through `folio_removed`. An exception in a hook ends the
    run with a RuntimeError naming the cgroup, the method and the exception.
    Cgroups without a policy keep the classic LRU (the machine policy must be classic).
    The report's `warnings` (a policy whose candidates the kernel mostly could not take)
    are also raised as RuntimeWarning.

    `controllers` run your own controllers beside the scenario's `[[controller]]`s: each a
    class (instantiated once) or an object with `interval` (modeled seconds between ticks)
    and `tick(self, now, cgroups)`, which reads every cgroup's `current`, `high`, `max`,
    `stat`, `events` and `pressure` at modeled time `now` and acts with `reclaim(bytes,
    swappiness=None)`, `set_high(bytes)`, `set_max(bytes)` and `kill()`; the actions run
    when `tick` returns and are in the report's `controller_actions`
    (pagelab/controller.py has the contract)."""
    path, text = _scenario_source(scenario, text)
    args = _set_args(set)
    if kernel is not None:
        args.append(f"machine.kernel={json.dumps(str(kernel))}")
    if memory is not None:
        args.append(f"machine.memory={_toml(memory)}")
    if isinstance(policy, str):
        args.append(f"machine.policy={json.dumps(policy)}")
        policy = None
    per_cgroup = []
    for cg, p in (policies or {}).items():
        if isinstance(p, str):
            args.append(f"cgroup.{cg}.policy={json.dumps(p)}")
        else:
            per_cgroup.append((cg, p))
    controllers = list(controllers or [])
    if policy is None and not per_cgroup and not controllers:
        return _warn(json.loads(_pagelab.run_json(path, text, args)))
    return _warn(json.loads(_pagelab.run_policies_json(path, text, args, policy, per_cgroup, controllers)))


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


def curve(path, *, policy=None, memory=None, vary=None, sample=None, format="oracleGeneral", kernel=None, counters=None, set=None, threads=0,
          progress=None):
    """A sizing curve of a trace, or with `vary` of a scenario, as `pagelab curve` computes
    it, as a pandas DataFrame.

    A scenario's curve: `vary` is "KEY=SIZES" ("cgroup./db.max=64M..1G:16", or KEY=[sizes]
    as a dict {KEY: [...]}); every point is a full run of the scenario with KEY set to the
    size, `threads` at a time, or with `sample` R the mean of two miniature scenarios (R of
    every object's pages in R of every size, docs/curve.md), scaled back, each counter with
    `<name>_error`. `counters`: vmstat names or `throughput_ops_s`, `elapsed_s`, `ops`,
    `oom_kills`, `unfinished_tasks` (default refaults, pages read back, steals, swap traffic,
    throughput and the OOM kills; docs/curve.md). One row a size: `memory` (the
    varied size, bytes), then the counters; `df.attrs["reports"][i]` is row i's report (with
    a sample, the list of the two runs' reports). `policy` and `kernel` set the scenario's
    machine.

    A trace's curve (`memory` given, default policy classic and kernel 6.1):

    `memory`: "A..B:N" (N evenly spaced sizes), a comma-separated string or a list of sizes,
    each in bytes ("64M", "4096p") or a percentage of the trace's distinct pages ("5%"; with
    a sample, of the distinct pages the two samples estimate).
    `sample`: miniature simulation at this rate (0 < R <= 1): a spatially hashed R of the
    pages in R of the memory, counts scaled back by 1/R, each counter with `<name>_error`
    from two hash seeds; without it every point replays the whole trace. `counters`: vmstat
    names to report beside `misses` and `miss_ratio` (kernel models).

    One row a size, in size order: `memory` (bytes), `misses`, `miss_ratio`, the other
    counters, then with a sample their `<name>_error` columns: the table `pagelab curve
    --parquet` writes. `df.attrs["reports"][i]` is row i's replay report (with a sample, the
    list of the two seeds' miniature runs' reports); with a sample `df.attrs["sample"]` holds
    the `rate`, the `pages` each seed kept and each row's scaled `memory`. A point whose
    scaled memory is too small for a faithful miniature kernel model raises a
    RuntimeWarning (`warnings`).

    `progress(done, total)` is called on this thread as runs finish (runs done, of all: a
    point is one run, or with a sample two), as `sweep`'s; `progress=True` draws a bar on
    standard error."""
    if progress is True:
        progress = lambda done, total: _bar(done, total, "runs")  # noqa: E731
    if vary is not None:
        if memory is not None:
            raise ValueError("a scenario's curve (vary=) varies a size of the scenario: leave out memory")
        if isinstance(vary, dict):
            if len(vary) != 1:
                raise ValueError("vary= varies one key: {KEY: sizes}")
            ((key, sizes),) = vary.items()
            if isinstance(sizes, (list, tuple)):
                sizes = ",".join(str(x) for x in sizes)
            vary = f"{key}={sizes}"
        machine = [f"machine.{k}={_toml(v)}" for k, v in (("policy", policy), ("kernel", kernel)) if v is not None]
        out = json.loads(_pagelab.scenario_curve_json(str(path), str(vary), list(counters or []), machine + _set_args(set), threads, sample,
                                                  progress or None))
        key = vary.split("=")[0]
        df = _curve_frame(out, lambda size: f"{key}={size}")
        df.attrs["vary"] = key  # plot.curve's x-axis names the varied size
        return df
    if memory is None:
        raise ValueError("curve() needs memory= for a trace, or vary= for a scenario")
    if isinstance(memory, (list, tuple)):
        memory = ",".join(str(m) for m in memory)
    policy, kernel = policy or "classic", kernel or "6.1"
    out = json.loads(_pagelab.curve_json(str(path), policy, str(memory), format, kernel, sample, list(counters or []), _set_args(set),
                                         progress or None))
    return _curve_frame(out, lambda m: f"memory {m} bytes")


def _curve_frame(out, point):
    """A curve's DataFrame from the extension's JSON: its warnings raised (each point named
    by `point(size)`), its sample's description in `df.attrs["sample"]`."""
    import warnings

    for size, text in out["warnings"]:
        warnings.warn(f"{point(size)}: {text}", RuntimeWarning, stacklevel=3)
    df = _frame(out["table"], out["reports"])
    if out["sample"] is not None:
        df.attrs["sample"] = out["sample"]
    return df


class _Shared(list):
    """A DataFrame's `attrs["reports"]`: pandas deep-copies `attrs` into the result of most
    operations, which for a sweep's reports would copy megabytes each time; the reports are
    shared instead (treat them as read-only)."""

    def __deepcopy__(self, memo):
        return self


def _frame(table, reports=None):
    """A table of `tables::Table::to_json` as a DataFrame, with `reports` (one per row) in
    `attrs["reports"]`."""
    try:
        import pandas
    except ImportError as e:  # pandas is a dependency of the package; say so if it is gone
        raise ImportError("pagelab's sweeps and curves are pandas DataFrames: pip install pandas") from e
    df = pandas.DataFrame(dict(zip(table["names"], table["columns"])), columns=table["names"])
    if reports is not None:
        df.attrs["reports"] = _Shared(reports)
    return df


def series_frame(report):
    """A run's series (`report["series"]`) as a pandas DataFrame, one row a report interval:
    `t_s` (modeled seconds at the interval's end), `ops` (operations in the interval), then
    every vmstat counter in name order, events as their increase over the interval and
    gauges (`nr_*`, `workingset_nodes`) as their value at its end: the table `pagelab run
    --parquet` writes. Raises ValueError for a report without a series (a plain cache's
    trace replay)."""
    table = json.loads(_pagelab.series_table_json(json.dumps({"series": report.get("series")})))
    return _frame(table)


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


def sweep(
    scenario: Optional[Scenario] = None,
    *,
    text: Optional[str] = None,
    vary: Mapping[str, List[Any]],
    set: Settings = None,
    threads: int = 0,
    progress: Optional[Union[bool, Callable[[int, int], Any]]] = None,
) -> Any:
    """Runs every combination of `vary` ({key: [values]}, the first key varying slowest) in
    parallel and returns a pandas DataFrame, one row a point in point order (results do not
    depend on `threads`): the varied keys as columns (integers, numbers or text, as the
    values parse), then `elapsed_s`, `ops`, `throughput_ops_s` and every vmstat counter; if
    a point failed, its counters are missing and an `error` column says why. The table
    `pagelab sweep --parquet` writes. `df.attrs["reports"][i]` is row i's full report (None
    for a failed point). `scenario` may be a path or a dict of the TOML tables.

    `progress(done, total)` is called on this thread as points finish (points done, of
    all); `progress=True` draws a bar on standard error."""
    path, text = _scenario_source(scenario, text)
    if text is None:
        with open(path) as f:
            text = f.read()
    if progress is True:
        progress = _bar
    axes = [(k, [str(v) for v in vs]) for k, vs in vary.items()]
    results = _pagelab.sweep_json(text, axes, _set_args(set), threads, progress or None)
    return _sweep_frame([k for k, _ in axes], results)


def _sweep_frame(keys, results_json):
    """The DataFrame of a sweep's results ([{"point", "report" or "error"}] as JSON text)."""
    table = json.loads(_pagelab.sweep_table_json(keys, results_json))
    return _frame(table, [r.get("report") for r in json.loads(results_json)])


def compare(paths, labels=None):
    """The mmtests-style table of reports written by `pagelab run --json`."""
    return _pagelab.compare_table([str(p) for p in paths], labels)


def cluster_sweep(scenario, vary, *, set=None, client=None):
    """Runs a sweep's points as tasks of a Dask distributed cluster (one point per task).

    `client` is a dask.distributed.Client; without one a local cluster is started. Returns
    the same DataFrame as `sweep` (rows in the same order, the reports in
    `df.attrs["reports"]`)."""
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
    results = [{"point": {k: str(v) for k, v in p.items()}, "report": r} for p, r in zip(points, reports)]
    return _sweep_frame(keys, json.dumps(results))


def _run_point(text, set_args):
    from pagelab import _pagelab as lib

    return json.loads(lib.run_json(None, text, set_args))
