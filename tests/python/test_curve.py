"""pagelab.curve: sizing curves of a trace, exact and by miniature simulation."""
import pathlib
import subprocess
import sys

import pytest

import pagelab

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import traces  # noqa: E402


@pytest.fixture(scope="module")
def zipf(tmp_path_factory):
    p = tmp_path_factory.mktemp("curve") / "z.oracleGeneral"
    traces.write_zipf(str(p), 200_000, 20_000, 0.8, seed=3)
    return p


def test_curve_returns_a_frame_one_row_a_size_in_size_order(zipf):
    df = pagelab.curve(zipf, policy="lru", memory="5%..20%:4")
    assert list(df.columns[:3]) == ["memory", "misses", "miss_ratio"]
    assert list(df["memory"]) == sorted(df["memory"]) and len(df) == 4
    # A bigger LRU never misses more (LRU is a stack algorithm).
    assert list(df["misses"]) == sorted(df["misses"], reverse=True)


def test_a_sample_at_rate_one_is_the_exact_curve_with_zero_error(zipf):
    exact = pagelab.curve(zipf, policy="classic", memory=["4M", "16M"])
    one = pagelab.curve(zipf, policy="classic", memory=["4M", "16M"], sample=1.0)
    for c in ["misses", "miss_ratio", "workingset_refault_file", "pgsteal_file"]:
        assert list(exact[c]) == pytest.approx(list(one[c]))
        assert list(one[c + "_error"]) == [0, 0]


def test_a_sampled_curve_is_within_two_points_of_the_exact_one(zipf):
    exact = pagelab.curve(zipf, policy="s3fifo", memory="5%..25%:3")
    sampled = pagelab.curve(zipf, policy="s3fifo", memory="5%..25%:3", sample=0.25)
    for e, s in zip(exact["miss_ratio"], sampled["miss_ratio"]):
        assert abs(e - s) < 0.02


def test_curve_errors_name_what_is_wrong(zipf):
    with pytest.raises(ValueError, match="rounds to 0 pages"):
        pagelab.curve(zipf, policy="lru", memory="8K", sample=0.01)
    with pytest.raises(ValueError, match="smallest machine"):
        pagelab.curve(zipf, policy="mglru", memory="2M", sample=0.1)
    with pytest.raises(ValueError, match="not a counter"):
        pagelab.curve(zipf, policy="classic", memory="4M", counters=["pgsteal_fiel"])


def test_the_cli_curve_writes_the_json_array(zipf, tmp_path):
    out = tmp_path / "c.json"
    subprocess.run(["pagelab", "curve", str(zipf), "--policy", "lru", "--memory", "1M,2M", "--json", str(out)], check=True, capture_output=True)
    import json

    written = json.loads(out.read_text())
    assert written["provenance"]["set"] == [] and "scenario" not in written["provenance"]
    pts = written["points"]
    assert [p["memory"] for p in pts] == [1 << 20, 2 << 20]
    assert all(sorted(p) == ["memory", "miss_ratio", "misses"] for p in pts)
    # The DataFrame's rows are the same points.
    df = pagelab.curve(zipf, policy="lru", memory="1M,2M")
    assert df.to_dict("records") == pts


def test_curve_frames_keep_the_reports_and_the_sample(zipf):
    exact = pagelab.curve(zipf, policy="lru", memory="1M,2M")
    assert [r["memory"] for r in exact.attrs["reports"]] == [1 << 20, 2 << 20]
    assert [r["misses"] for r in exact.attrs["reports"]] == list(exact["misses"])
    assert "sample" not in exact.attrs
    with pytest.warns(RuntimeWarning, match="scaled memory"):
        sampled = pagelab.curve(zipf, policy="classic", memory="4M", sample=0.5)
    assert list(sampled.columns) == ["memory", "misses", "miss_ratio", "workingset_refault_file", "workingset_activate_file",
                                     "pgscan_file", "pgsteal_file", "misses_error", "miss_ratio_error",
                                     "workingset_refault_file_error", "workingset_activate_file_error", "pgscan_file_error",
                                     "pgsteal_file_error"]
    s = sampled.attrs["sample"]
    assert s["rate"] == 0.5 and len(s["pages"]) == 2 and s["memory"] == [2 << 20]
    seeds = sampled.attrs["reports"][0]
    assert len(seeds) == 2 and [r["trace"]["pages"] for r in seeds] == s["pages"]
    # A filtered frame shares the reports, and the index still finds a row's report.
    big = exact[exact["memory"] > 1 << 20]
    assert big.attrs["reports"] is exact.attrs["reports"]
    assert big.attrs["reports"][big.index[0]]["memory"] == 2 << 20


def test_curve_plot_draws_one_png_a_counter(zipf, tmp_path):
    pytest.importorskip("matplotlib")
    prefix = tmp_path / "z"
    for extra in ([], ["--sample", "0.5"]):
        r = subprocess.run(["pagelab", "curve", str(zipf), "--policy", "lru", "--memory", "1M..4M:4", "--plot", str(prefix), *extra],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        for c in ("misses", "miss_ratio"):
            png = tmp_path / f"z-{c}.png"
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            png.unlink()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pagelab import plot

    fig, ax = plt.subplots()
    plot.curve(pagelab.curve(zipf, policy="lru", memory="1M..4M:4"), "miss_ratio", ax=ax)
    plot.curve(pagelab.curve(zipf, policy="lru", memory="1M..4M:4", sample=0.5), "miss_ratio", ax=ax)
    assert len(ax.lines) == 2 and len(ax.collections) == 1  # the sampled curve's error band
    with pytest.raises(ValueError, match="miss_ratoi"):
        plot.curve(pagelab.curve(zipf, policy="lru", memory="1M"), "miss_ratoi", ax=ax)
    plt.close(fig)


SCENARIO = """
[machine]
memory = "64M"
[[cgroup]]
path = "/db"
max = "16M"
[[workload]]
name = "reader"
cgroup = "/db"
kind = "file-read"
file_size = "24M"
distribution = "zipf:0.8"
ops = 40000
seed = 3
"""


def test_a_scenario_curve_is_a_run_a_size_of_the_varied_key(tmp_path):
    path = tmp_path / "db.toml"
    path.write_text(SCENARIO)
    df = pagelab.curve(path, vary={"cgroup./db.max": ["8M", "16M", "24M"]}, policy="mglru")
    assert list(df["memory"]) == [8 << 20, 16 << 20, 24 << 20]
    assert "throughput_ops_s" in df.columns and "pswpout" in df.columns
    run = pagelab.run(path, set={"cgroup./db.max": "16M", "machine.policy": "mglru"})
    assert df["workingset_refault_file"][1] == run["vmstat"]["workingset_refault_file"]
    assert df.attrs["reports"][1]["policy"] == "mglru"
    # The CLI writes the same points.
    out = tmp_path / "c.json"
    subprocess.run(["pagelab", "curve", str(path), "--vary", "cgroup./db.max=8M,16M,24M", "--policy", "mglru", "--json", str(out)], check=True, capture_output=True)
    import json

    written = json.loads(out.read_text())
    assert written["points"] == df.to_dict("records")
    # Its provenance: the scenario as the points share it, the --policy as its override.
    assert written["provenance"]["set"] == ['machine.policy="mglru"']
    assert written["provenance"]["vary"] == "cgroup./db.max=8M,16M,24M"
    assert 'policy = "mglru"' in written["provenance"]["scenario"]
    with pytest.raises(ValueError, match="leave out memory"):
        pagelab.curve(path, vary="cgroup./db.max=8M,16M", memory="8M")


def test_a_sampled_scenario_curve_at_rate_one_is_the_exact_curve_with_zero_error(tmp_path):
    path = tmp_path / "db.toml"
    path.write_text(SCENARIO)
    vary = {"cgroup./db.max": ["8M", "16M"]}
    exact = pagelab.curve(path, vary=vary)
    sampled = pagelab.curve(path, vary=vary, sample=1.0)
    for c in exact.columns:
        assert list(sampled[c]) == list(exact[c]), c
        if c != "memory":
            assert list(sampled[c + "_error"]) == [0.0, 0.0], c
    assert len(sampled.attrs["reports"][0]) == 2
    assert sampled.attrs["sample"]["rate"] == 1.0


def test_curve_reports_progress_to_a_callback(zipf, tmp_path):
    """curve(progress=) as sweep(progress=): (runs done, runs in all) on this thread, the
    last call (total, total); a sampled point is two runs."""
    for kw, total in [(dict(memory="1M,2M,4M"), 3), (dict(memory="1M,2M", sample=0.5), 4)]:
        seen = []
        df = pagelab.curve(zipf, policy="lru", progress=lambda done, all: seen.append((done, all)), **kw)
        assert len(df) == len(kw["memory"].split(","))
        assert seen and seen[-1] == (total, total) and all(t == total for _, t in seen), seen
        assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    path = tmp_path / "db.toml"
    path.write_text(SCENARIO)
    seen = []
    pagelab.curve(path, vary={"cgroup./db.max": ["8M", "16M"]}, progress=lambda done, all: seen.append((done, all)))
    assert seen[-1] == (2, 2), seen
