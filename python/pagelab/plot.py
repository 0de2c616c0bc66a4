"""Plots of pagelab reports with matplotlib.

The counters keep the kernel's names, which hide their units: the axes say them.
`pgpgin`/`pgpgout` count KiB, the `nr_*` gauges and the reclaim events count pages,
`workingset_nodes`/`workingset_nodereclaim` count xarray nodes. A gauge (`nr_*`,
`workingset_nodes`) is drawn at its value at the end of each report interval; an event is
drawn as its rate over each interval (its increase divided by the interval's length), so the
last interval of a run, usually shorter than the others, neither drops nor jumps for want of
time; it is marked with a hollow circle.
"""

import difflib

# /proc/vmstat entries named nr_* that are running totals, not gauges.
_NR_EVENTS = {"nr_dirtied", "nr_written", "nr_vmscan_write", "nr_vmscan_immediate_reclaim", "nr_foll_pin_acquired", "nr_foll_pin_released"}

_PLAIN_EVENTS = {
    "pgfault": "faults",
    "pgmajfault": "faults",
    "allocstall": "stalls",
    "allocstall_normal": "stalls",
    "allocstall_movable": "stalls",
    "pageoutrun": "kswapd runs",
    "oom_kill": "OOM kills",
    "slabs_scanned": "objects",
    "kswapd_low_wmark_hit_quickly": "events",
    "kswapd_high_wmark_hit_quickly": "events",
}


def is_gauge(name):
    """True for a /proc/vmstat gauge (a value that stands), False for an event counter."""
    return (name.startswith("nr_") and name not in _NR_EVENTS) or name == "workingset_nodes"


def unit(name):
    """The unit a /proc/vmstat counter's name hides: "KiB", "pages", "nodes", or what an
    event without a size counts ("faults", "stalls", ...)."""
    if name in ("pgpgin", "pgpgout"):
        return "KiB"
    if name in ("workingset_nodes", "workingset_nodereclaim"):
        return "nodes"
    return _PLAIN_EVENTS.get(name, "pages")


def axis_label(name):
    """The axis label of a counter as `series` draws it: "pages" for a gauge, "KiB/s",
    "pages/s", ... for an event."""
    return unit(name) if is_gauge(name) else f"{unit(name)}/s"


def _check_counters(counters, known, where):
    if isinstance(counters, str):
        counters = [counters]
    missing = [c for c in counters if c not in known]
    if missing:
        hints = []
        for c in missing:
            close = difflib.get_close_matches(c, sorted(known), n=3)
            hints.append(f"`{c}`" + (f" (did you mean {', '.join(close)}?)" if close else ""))
        raise ValueError(f"no such counter in {where}: {'; '.join(hints)}")
    return list(counters)


def _join(labels):
    out = []
    for x in labels:
        if x not in out:
            out.append(x)
    return ", ".join(out)


def series(report, counters, ax=None, title=None):
    """Plots `counters` (/proc/vmstat names) of one report over modeled time, one line per
    counter: events as rates per second of modeled time, gauges as values (on a second
    y-axis when both are asked for). Raises ValueError for a name the report's series does
    not have. Returns the axes the events are drawn on (the gauges' if there are no events).
    """
    import matplotlib.pyplot as plt

    points = report.get("series") or []
    if not points:
        raise ValueError("the report has no series (no report interval ended)")
    known = set()
    for p in points:
        known.update(p["vmstat"])
    counters = _check_counters(counters, known, "the report's series")
    events = [c for c in counters if not is_gauge(c)]
    gauges = [c for c in counters if is_gauge(c)]

    ax = ax or plt.gca()
    t = [p["t_s"] for p in points]
    dt = [b - a for a, b in zip([0.0] + t[:-1], t)]
    # The report interval is the shortest of every interval but the last: an idle stretch is
    # one point spanning several intervals, and a coarsened series doubles them all.
    nominal = min(dt[:-1]) if len(dt) > 1 else dt[0]
    partial = len(dt) > 1 and dt[-1] < nominal * 0.999
    event_ax = ax
    gauge_ax = ax.twinx() if events and gauges else ax
    # One color cycle over both axes, so a gauge on the second axis never takes an event's color.
    colors = plt.rcParams["axes.prop_cycle"].by_key().get("color", [None])
    color = {c: colors[i % len(colors)] for i, c in enumerate(events + gauges)}
    for c in events:
        y = [p["vmstat"].get(c, 0) / d if d > 0 else 0.0 for p, d in zip(points, dt)]
        kw = {"marker": "o", "markevery": [len(y) - 1], "fillstyle": "none"} if partial else {}
        event_ax.plot(t, y, drawstyle="steps-pre", color=color[c], label=f"{c} ({axis_label(c)})", **kw)
    for c in gauges:
        y = [p["vmstat"].get(c, 0) for p in points]
        gauge_ax.plot(t, y, linestyle="--" if events else "-", color=color[c], label=f"{c} ({axis_label(c)})")
    ax.set_xlabel("modeled time (s)")
    if events:
        event_ax.set_ylabel(_join(axis_label(c) for c in events) + (" (○: the last interval, partial)" if partial else ""))
    if gauges:
        gauge_ax.set_ylabel(_join(axis_label(c) for c in gauges) + " at the end of each interval")
    ax.set_title(title or f'{report["scenario"]} ({report["kernel"]}, {report["policy"]})')
    handles, labels = [], []
    for a in {id(event_ax): event_ax, id(gauge_ax): gauge_ax}.values():
        h, l = a.get_legend_handles_labels()
        handles += h
        labels += l
    ax.legend(handles, labels)
    return ax


def bars(reports, counter, labels=None, ax=None):
    """One bar per report for a /proc/vmstat counter: an event's total over the run, a
    gauge's value at its end. Raises ValueError if a report lacks the counter."""
    import matplotlib.pyplot as plt

    for i, r in enumerate(reports):
        _check_counters([counter], r["vmstat"], f"report {i}'s vmstat")
    ax = ax or plt.gca()
    labels = labels or [f'{r["kernel"]}-{r["policy"]}' for r in reports]
    ax.bar(labels, [r["vmstat"][counter] for r in reports])
    ax.set_ylabel(f"{counter} ({unit(counter)}{' at the end' if is_gauge(counter) else ' in total'})")
    return ax


def trace_popularity(stats, ax=None):
    """The popularity curve of `pagelab.trace_stats(...)`: accesses of the page of each rank,
    on log-log axes (a straight line of slope -θ for a Zipf(θ) trace)."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    ranks = [r for r, _ in stats["popularity"]]
    counts = [c for _, c in stats["popularity"]]
    ax.loglog(ranks, counts, marker=".", linestyle="-")
    ax.set_xlabel("page rank (most accessed first)")
    ax.set_ylabel("accesses to the page")
    ax.set_title(f'{stats["distinct_pages"]} pages, top 1% take {100 * stats["top_1pct_share"]:.1f}% of {stats["accesses"]} accesses')
    return ax


def trace_heatmap(stats, ax=None):
    """The access heatmap of `pagelab.trace_stats(..., heatmap=True)`: accesses by time (bins
    of equal accesses, left to right) and page (bins of equal page ranges, bottom to top)."""
    import matplotlib.pyplot as plt

    if "heatmap" not in stats:
        raise ValueError("these statistics have no heatmap: call trace_stats(..., heatmap=True)")
    ax = ax or plt.gca()
    h = stats["heatmap"]
    counts = [list(col) for col in zip(*h["counts"])] if h["counts"] else [[0]]
    im = ax.imshow(counts, origin="lower", aspect="auto", interpolation="nearest", cmap="viridis",
                   extent=(0, stats["accesses"], 0, stats["page_bound"]))
    ax.set_xlabel("access (in trace order)")
    ax.set_ylabel("page")
    ax.figure.colorbar(im, ax=ax, label="accesses per bin")
    return ax


def trace_stats_png(stats, prefix):
    """Draws PREFIX-popularity.png and PREFIX-heatmap.png from `trace_stats(...)` with a
    heatmap; returns the two paths."""
    from matplotlib.figure import Figure  # no pyplot: any backend, no window

    out = []
    for name, draw in (("popularity", trace_popularity), ("heatmap", trace_heatmap)):
        fig = Figure(figsize=(7, 5))
        draw(stats, fig.subplots())
        path = f"{prefix}-{name}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        out.append(path)
    return out


# What a curve's non-vmstat columns count.
_CURVE_UNITS = {
    "miss_ratio": "fraction of accesses",
    "misses": "accesses",
    "throughput_ops_s": "operations per modeled second",
    "elapsed_s": "modeled seconds",
    "ops": "operations in total",
    "oom_kills": "OOM kills",
    "unfinished_tasks": "tasks OOM-killed",
}


def _curve_unit(name):
    return _CURVE_UNITS.get(name) or unit(name) + " in total"


def _rows(points):
    if isinstance(points, dict) and "points" in points:
        points = points["points"]  # a whole `pagelab curve --json` file
    return points.to_dict("records") if hasattr(points, "to_dict") else list(points)


def curve(points, counter, ax=None, label=None, xlabel=None):
    """One counter of a sizing curve (`pagelab.curve(...)`, or `pagelab curve --json`'s
    output or its `points`) against its size in MiB: the points as a line with markers, and where the curve
    was sampled (`<counter>_error` columns) its error band, ± the error estimate.

    `ax`: the matplotlib axes to draw on (default the current ones), so that several curves
    share a figure: call it once per curve (an exact and a sampled one, classic and MGLRU)
    with the same `ax` and a `label` each, which names the curve in the legend (a lone
    unlabelled curve has no legend). `xlabel`: the x-axis label (default "memory (MiB)",
    or the varied key's name for a scenario's curve, `df.attrs["vary"]`). The y-axis starts
    at 0. Raises ValueError for a counter the curve does not have. Returns the axes."""
    import matplotlib.pyplot as plt

    rows = _rows(points)
    if not rows:
        raise ValueError("the curve has no points")
    known = [k for k in rows[0] if k != "memory" and not k.endswith("_error")]
    _check_counters([counter], known, "the curve")
    ax = ax or plt.gca()
    x = [r["memory"] / (1 << 20) for r in rows]
    y = [r[counter] for r in rows]
    sampled = f"{counter}_error" in rows[0]
    line, = ax.plot(x, y, marker="o" if sampled else ".", linestyle="--" if sampled else "-", label=label)
    if sampled:
        e = [r[f"{counter}_error"] for r in rows]
        ax.fill_between(x, [a - b for a, b in zip(y, e)], [a + b for a, b in zip(y, e)], color=line.get_color(), alpha=0.25,
                        label=f"{label} ± error estimate" if label else "± error estimate")
    vary = getattr(points, "attrs", {}).get("vary")
    ax.set_xlabel(xlabel or (f"{vary} (MiB)" if vary else "memory (MiB)"))
    ax.set_ylabel(f"{counter} ({_curve_unit(counter)})")
    if min(y + [0]) >= 0:
        ax.set_ylim(bottom=0)
    if counter in ("oom_kills", "unfinished_tasks"):
        # Whole kills and tasks, and room above a row of zeros.
        from matplotlib.ticker import MaxNLocator

        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(top=max(1, ax.get_ylim()[1], max(y) * 1.1))
    if any(h.get_label() and not h.get_label().startswith("_") for h in ax.get_lines() + ax.collections):
        ax.legend()
    return ax


def curve_figure(data, counter):
    """The figure `curve_png` saves for one counter of `pagelab curve --plot`'s data: every
    curve on the same axes, labelled when there are several, the title wrapped to the
    figure's width."""
    import textwrap

    from matplotlib.figure import Figure  # no pyplot: any backend, no window

    curves = data.get("curves") or [{"label": None, "points": data["points"]}]
    fig = Figure(figsize=(7, 5))
    ax = fig.subplots()
    for one in curves:
        curve(one["points"], counter, ax=ax, label=one.get("label"), xlabel=data.get("xlabel"))
    title = f"{counter}: {data['title']}" if data.get("title") else counter
    ax.set_title("\n".join(textwrap.wrap(title, 60)), fontsize="medium")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def curve_png(data, prefix):
    """Draws PREFIX-<counter>.png for every counter of `pagelab curve --plot`'s data
    ({"curves": [{"label": ..., "points": [...]}, ...] or "points": [...], "counters": [...],
    "title": "...", "xlabel": "..."}): several curves (policies, kernels) on the same axes,
    each labelled; returns the paths."""
    curves = data.get("curves") or [{"label": None, "points": data["points"]}]
    first = curves[0]["points"]
    out = []
    for c in data.get("counters") or [k for k in first[0] if k != "memory" and not k.endswith("_error")]:
        path = f"{prefix}-{c}.png"
        curve_figure(data, c).savefig(path, dpi=100)
        out.append(path)
    return out
