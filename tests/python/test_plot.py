"""Plots: unknown counters are errors, axes carry the units the kernel's names hide, and the
last, partial report interval is a rate like the others instead of a false cliff."""

import pathlib

import pytest

import pagelab

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from pagelab import plot  # noqa: E402

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "fio-zipf.toml"


@pytest.fixture(scope="module")
def report():
    # 0.3 s intervals: the run's last interval ends with the run, short of 0.3 s.
    return pagelab.run(EXAMPLE, set={"workload.fio-zipf.ops": 60000, "report.interval": "300ms"})


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def synthetic(ts, deltas):
    """A report whose series has `pgsteal_file` increases `deltas` in intervals ending at `ts`."""
    series = [{"t_s": t, "ops": 0, "vmstat": {"pgsteal_file": d, "pgpgin": 4 * d, "nr_inactive_file": 500}} for t, d in zip(ts, deltas)]
    return {"scenario": "s", "kernel": "6.1", "policy": "classic", "series": series, "vmstat": {"pgsteal_file": sum(deltas), "nr_inactive_file": 500}}


def test_an_unknown_counter_is_an_error_not_a_line_of_zeros(report, ax):
    with pytest.raises(ValueError, match="pgsteal_fiel.*pgsteal_file"):
        plot.series(report, ["pgsteal_file", "pgsteal_fiel"], ax=ax)
    assert not ax.lines
    with pytest.raises(ValueError, match="nr_inactive_files"):
        plot.bars([report], "nr_inactive_files", ax=ax)
    assert not ax.patches


def test_axes_say_the_units_the_kernel_names_hide(report):
    fig, ax = plt.subplots()
    plot.series(report, ["pgpgin", "pgpgout"], ax=ax)
    assert ax.get_ylabel().startswith("KiB/s"), ax.get_ylabel()
    assert "pages" not in ax.get_ylabel()
    plt.close(fig)

    fig, ax = plt.subplots()
    plot.series(report, ["nr_inactive_file"], ax=ax)
    label = ax.get_ylabel()
    assert label.startswith("pages") and "/s" not in label and "per interval" not in label, label
    # A gauge is drawn at its values, not as a rate.
    assert list(ax.lines[0].get_ydata()) == [p["vmstat"]["nr_inactive_file"] for p in report["series"]]
    plt.close(fig)

    # Events and gauges together: the gauges get an axis of their own.
    fig, ax = plt.subplots()
    plot.series(report, ["pgsteal_file", "nr_inactive_file"], ax=ax)
    assert ax.get_ylabel().startswith("pages/s")
    assert [a.get_ylabel().split()[0] for a in fig.axes] == ["pages/s", "pages"]
    plt.close(fig)

    fig, ax = plt.subplots()
    plot.bars([report, report], "pgpgin", labels=["a", "b"], ax=ax)
    assert "KiB" in ax.get_ylabel()
    plt.close(fig)


def test_the_last_partial_interval_is_a_rate_not_a_cliff(report, ax):
    # Two whole 1 s intervals and a last one of 0.1 s at the same rate.
    plot.series(synthetic([1.0, 2.0, 2.1], [1000, 1000, 100]), ["pgsteal_file"], ax=ax)
    assert list(ax.lines[0].get_ydata()) == pytest.approx([1000, 1000, 1000])
    assert "partial" in ax.get_ylabel()
    # A real run: the last interval is shorter than 0.3 s, and its rate is its increase over
    # its own length.
    t = [p["t_s"] for p in report["series"]]
    assert len(t) > 2 and t[-1] - t[-2] < 0.3 - 1e-9, t
    fig, ax2 = plt.subplots()
    plot.series(report, ["pgsteal_file"], ax=ax2)
    y = ax2.lines[0].get_ydata()
    assert y[-1] == pytest.approx(report["series"][-1]["vmstat"]["pgsteal_file"] / (t[-1] - t[-2]))
    assert y[1] == pytest.approx(report["series"][1]["vmstat"]["pgsteal_file"] / 0.3)
    plt.close(fig)



def test_an_idle_stretch_is_not_taken_for_the_report_interval(ax):
    # 1 s intervals, an idle stretch kept as one point spanning 50 s (every delta zero), then
    # a last whole interval: nothing is partial, and the idle point's rate is 0.
    plot.series(synthetic([1.0, 2.0, 52.0, 53.0], [1000, 1000, 0, 1000]), ["pgsteal_file"], ax=ax)
    assert list(ax.lines[0].get_ydata()) == pytest.approx([1000, 1000, 0, 1000])
    assert "partial" not in ax.get_ylabel()

# Issue 40 #16: a sizing curve's figure says what it shows.
CURVE = [
    {"memory": 64 << 20, "throughput_ops_s": 900.5, "pswpin": 40, "oom_kills": 1},
    {"memory": 128 << 20, "throughput_ops_s": 1000.0, "pswpin": 30, "oom_kills": 0},
]


def test_a_curve_axis_says_what_its_counter_counts(ax):
    plot.curve(CURVE, "throughput_ops_s", ax=ax)
    assert ax.get_ylabel() == "throughput_ops_s (operations per modeled second)"
    assert "pages" not in ax.get_ylabel()
    ax.clear()
    plot.curve([{**p, "oom_kills": 0} for p in CURVE], "oom_kills", ax=ax)
    assert ax.get_ylabel() == "oom_kills (OOM kills)"
    assert ax.get_ylim()[1] >= 1 and all(t == int(t) for t in ax.get_yticks()), "whole kills"


def test_a_lone_curve_has_no_legend_and_its_y_axis_starts_at_zero(ax):
    plot.curve(CURVE, "pswpin", ax=ax)
    assert ax.get_legend() is None, "a lone curve is not labelled 'exact'"
    assert ax.get_ylim()[0] == 0


def test_a_whole_curve_json_file_draws_as_its_points(ax):
    """`pagelab curve --json` writes {"provenance": ..., "points": [...]}: plot.curve takes it
    as it is, and draws what its points draw."""
    plot.curve({"provenance": {"pagelab_version": "0.1.0", "schema_version": 1, "set": []}, "points": CURVE}, "pswpin", ax=ax)
    whole = ax.get_lines()[0].get_xydata().tolist()
    ax.clear()
    plot.curve(CURVE, "pswpin", ax=ax)
    assert whole == ax.get_lines()[0].get_xydata().tolist() and len(whole) == len(CURVE)


def test_overlaid_curves_are_labelled_and_a_varied_key_names_the_x_axis(ax):
    plot.curve(CURVE, "pswpin", ax=ax, label="6.1 classic", xlabel="cgroup./test.max (MiB)")
    plot.curve(CURVE, "pswpin", ax=ax, label="6.1 mglru", xlabel="cgroup./test.max (MiB)")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["6.1 classic", "6.1 mglru"]
    assert ax.get_xlabel() == "cgroup./test.max (MiB)"


def test_curve_png_overlays_curves_and_wraps_a_long_title(tmp_path):
    data = {"curves": [{"label": "6.1 classic", "points": CURVE}, {"label": "6.1 mglru", "points": CURVE}], "counters": ["pswpin"],
            "title": "a-long-scenario-name: cgroup./a/much/longer/path/than/usual.max, miniature scenarios at R = 0.1",
            "xlabel": "cgroup./a/much/longer/path/than/usual.max (MiB)"}
    (path,) = plot.curve_png(data, str(tmp_path / "c"))
    assert pathlib.Path(path).stat().st_size > 0
    ax = plot.curve_figure(data, "pswpin").axes[0]
    title = ax.get_title()
    assert "\n" in title and all(len(line) <= 60 for line in title.split("\n")), title
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["6.1 classic", "6.1 mglru"]
    assert ax.get_xlabel() == data["xlabel"]
