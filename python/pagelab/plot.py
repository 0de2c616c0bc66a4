"""Plots of pagelab reports with matplotlib."""


def series(report, counters, ax=None, title=None):
    """Plots per-interval values of `counters` (vmstat names) of one report over modeled time."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    t = [p["t_s"] for p in report["series"]]
    for c in counters:
        ax.plot(t, [p["vmstat"].get(c, 0) for p in report["series"]], label=c)
    ax.set_xlabel("modeled time (s)")
    ax.set_ylabel("pages per interval")
    ax.set_title(title or f'{report["scenario"]} ({report["kernel"]}, {report["policy"]})')
    ax.legend()
    return ax


def bars(reports, counter, labels=None, ax=None):
    """One bar per report for a vmstat counter."""
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    labels = labels or [f'{r["kernel"]}-{r["policy"]}' for r in reports]
    ax.bar(labels, [r["vmstat"].get(counter, 0) for r in reports])
    ax.set_ylabel(counter)
    return ax
