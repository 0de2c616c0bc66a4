"""The Python package: runs, sweeps, comparisons, plots and Dask sweeps."""

import json
import os
import pathlib

import pytest

import pagelab

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "fio-zipf.toml"
SMALL = {"workload.fio-zipf.ops": 20000}


def test_run_returns_the_report_with_kernel_counter_names():
    r = pagelab.run(EXAMPLE, set=SMALL)
    assert r["ops"] == 20000
    assert r["kernel"] == "6.1" and r["policy"] == "classic"
    for k in ("workingset_refault_file", "pgscan_file", "pgsteal_file", "pswpout", "nr_active_file"):
        assert k in r["vmstat"]
    assert r["memcg"]["/test"]["memory.current"] <= 192 << 20


def test_runs_are_deterministic_and_text_equals_file():
    a = pagelab.run(EXAMPLE, set=SMALL)
    b = pagelab.run(text=EXAMPLE.read_text(), set=SMALL)
    b["scenario"] = a["scenario"]  # named after the file or "scenario"
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_sweep_points_equal_single_runs_whatever_the_threads():
    import pandas

    vary = {"cgroup./test.max": ["16M", "32M"], "machine.kernel": ["6.1", "6.12"]}
    one = pagelab.sweep(EXAMPLE, vary=vary, set=SMALL, threads=1)
    many = pagelab.sweep(EXAMPLE, vary=vary, set=SMALL, threads=4)
    assert one[["cgroup./test.max", "machine.kernel"]].values.tolist() == [["16M", "6.1"], ["16M", "6.12"], ["32M", "6.1"], ["32M", "6.12"]]
    pandas.testing.assert_frame_equal(one, many)
    assert one.attrs["reports"] == many.attrs["reports"]
    single = pagelab.run(EXAMPLE, set={**SMALL, "cgroup./test.max": "16M", "machine.kernel": "6.12"})
    assert one.attrs["reports"][1]["vmstat"] == single["vmstat"]
    assert one.loc[1, "workingset_refault_file"] == single["vmstat"]["workingset_refault_file"]
    assert one.loc[1, "ops"] == single["ops"]


def test_bad_scenarios_raise_value_errors_naming_the_key():
    with pytest.raises(ValueError, match="machine.memory"):
        pagelab.run(text='[machine]\nmemory = "12Q"\n')
    with pytest.raises(ValueError, match="workload"):
        pagelab.run(text='[machine]\nmemory = "64M"\n')


def test_compare_renders_seed_001_rows(tmp_path):
    paths = []
    for ops in (20000, 10000):
        p = tmp_path / f"r{ops}.json"
        p.write_text(json.dumps(pagelab.run(EXAMPLE, set={"workload.fio-zipf.ops": ops})))
        paths.append(p)
    t = pagelab.compare(paths, labels=["a", "b"])
    assert "Total paging IO" in t and "Restore refaults" in t
    assert t.splitlines()[0].split() == ["a", "b"]


def test_series_plot_draws_one_line_per_counter():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pagelab import plot

    r = pagelab.run(EXAMPLE, set={"workload.fio-zipf.ops": 100000, "report.interval": "500ms"})
    fig, ax = plt.subplots()
    plot.series(r, ["pgsteal_file", "workingset_refault_file"], ax=ax)
    assert len(ax.lines) == 2
    assert len(ax.lines[0].get_xdata()) == len(r["series"]) > 1
    plt.close(fig)


def test_a_dask_cluster_sweep_equals_the_local_sweep():
    pytest.importorskip("dask.distributed")
    import pandas
    from dask.distributed import Client, LocalCluster

    vary = {"machine.kernel": ["6.1", "6.12"]}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        remote = pagelab.cluster_sweep(EXAMPLE, vary, set=SMALL, client=client)
    local = pagelab.sweep(EXAMPLE, vary=vary, set=SMALL)
    pandas.testing.assert_frame_equal(remote, local)
    assert [r["vmstat"] for r in remote.attrs["reports"]] == [r["vmstat"] for r in local.attrs["reports"]]


def _timing_free(report):
    """A report without the fields that measure the machine rather than the model."""
    drop = {"wall_s", "accesses_per_s", "convert_s"}
    if isinstance(report, dict):
        return {k: _timing_free(v) for k, v in report.items() if k not in drop}
    if isinstance(report, list):
        return [_timing_free(v) for v in report]
    return report


def test_run_trace_equals_the_command_line_and_lists_sizes(tmp_path):
    import subprocess
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import traces

    path = tmp_path / "zipf.oracleGeneral"
    pages = traces.write_zipf(path, 50_000, 5_000, 0.9, seed=3)
    exe = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "pagelab"
    for policy in ("classic", "mglru", "lru", "s3fifo"):
        ours = pagelab.run_trace(path, policy=policy, memory="2M")
        cli = json.loads(subprocess.run(
            [str(exe), "run", "--trace", str(path), "--policy", policy, "--memory", "2M", "--json", "-"],
            check=True, capture_output=True, text=True,
        ).stdout)
        assert _timing_free(ours) == _timing_free(cli), policy
        assert ours["ops"] == 50_000 and 0 < ours["misses"] < 50_000
    both = pagelab.run_trace(path, policy="sieve", memory=["1M", "4M"])
    assert [r["capacity_pages"] for r in both] == [256, 1024]
    assert both[0]["misses"] > both[1]["misses"] and both[0]["trace"]["pages"] == pages
    assert len(pagelab.run_trace(path, policy="arc", memory=["1M"])) == 1


def test_run_trace_names_bad_input():
    with pytest.raises(ValueError, match="unknown policy `lhd`"):
        pagelab.run_trace(EXAMPLE, policy="lhd", memory="1M")
    with pytest.raises(ValueError, match="oracleGeneral"):
        pagelab.run_trace(EXAMPLE, policy="lru", memory="1M")


def test_run_trace_replays_a_fio_iolog(tmp_path):
    log = tmp_path / "job.iolog"
    lines = ["fio version 2 iolog", "/d/f add", "/d/f open"]
    lines += [f"/d/f read {(i * 7 % 3000) * 4096} 4096" for i in range(6000)]
    lines += [f"/d/f write {i * 4096} 8192" for i in range(0, 40, 2)]
    log.write_text("\n".join(lines + ["/d/f close"]) + "\n")
    small, large = pagelab.run_trace(log, policy="mglru", memory=["8M", "64M"], format="fio-iolog")
    for r in (small, large):
        assert r["ops"] == 6020 and r["trace"]["reads"] == 6000 and r["trace"]["writes"] == 20
    # Two passes over 3000 pages: 64M holds them all, so each is read once; 8M does not, so
    # the second pass reads some again.
    assert large["vmstat"]["pgpgin"] // 4 <= 3000 < small["vmstat"]["pgpgin"] // 4
