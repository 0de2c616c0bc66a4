"""Results as tables: a run's series as a DataFrame, and `--parquet` on `run`, `sweep` and
`curve` writes the same tables the Python functions return."""

import pathlib
import subprocess
import sys

import pytest

import pagelab

pandas = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "fio-zipf.toml"
SMALL = {"workload.fio-zipf.ops": 20000, "report.interval": "100ms"}


def cli(*args):
    r = subprocess.run(["pagelab", *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


def test_series_frame_is_one_row_an_interval():
    r = pagelab.run(EXAMPLE, set=SMALL)
    df = pagelab.series_frame(r)
    assert len(df) == len(r["series"]) > 1
    assert list(df.columns[:2]) == ["t_s", "ops"]
    assert list(df["t_s"]) == [p["t_s"] for p in r["series"]]
    assert list(df["pgsteal_file"]) == [p["vmstat"]["pgsteal_file"] for p in r["series"]]
    assert df["ops"].sum() == r["ops"]
    # Events are per interval: their sum is the run's total.
    assert df["pgsteal_file"].sum() == r["vmstat"]["pgsteal_file"]
    with pytest.raises(ValueError, match="no series"):
        pagelab.series_frame({"misses": 3})


def test_run_parquet_is_the_series_frame(tmp_path):
    pq, js = tmp_path / "run.parquet", tmp_path / "run.json"
    sets = [a for k, v in SMALL.items() for a in ("--set", f"{k}={v}" if isinstance(v, int) else f'{k}="{v}"')]
    cli("run", "-q", EXAMPLE, *sets, "--json", js, "--parquet", pq)
    import json

    report = json.loads(js.read_text())
    pandas.testing.assert_frame_equal(pandas.read_parquet(pq), pagelab.series_frame(report))


def test_sweep_parquet_is_the_sweep_frame(tmp_path):
    pq = tmp_path / "sweep.parquet"
    vary = {"cgroup./test.max": ["16M", "32M"], "machine.swappiness": [0, 100]}
    cli("sweep", "-q", EXAMPLE, "--vary", "cgroup./test.max=16M,32M", "--vary", "machine.swappiness=0,100",
        "--set", "workload.fio-zipf.ops=20000", "--parquet", pq)
    df = pagelab.sweep(EXAMPLE, vary=vary, set={"workload.fio-zipf.ops": 20000})
    assert list(df.columns[:5]) == ["cgroup./test.max", "machine.swappiness", "elapsed_s", "ops", "throughput_ops_s"]
    assert list(df["machine.swappiness"]) == [0, 100, 0, 100] and df["machine.swappiness"].dtype == "int64"
    assert len(df.attrs["reports"]) == 4
    pandas.testing.assert_frame_equal(pandas.read_parquet(pq), df)


@pytest.mark.parametrize("sample", [None, 0.5])
def test_curve_parquet_is_the_curve_frame(tmp_path, sample):
    sys.path.insert(0, str(ROOT / "bench"))
    import traces

    path = tmp_path / "z.oracleGeneral"
    traces.write_zipf(str(path), 50_000, 5_000, 0.8, seed=5)
    pq = tmp_path / "c.parquet"
    extra = [] if sample is None else ["--sample", sample]
    cli("curve", path, "--policy", "lru", "--memory", "5%..20%:3", "--parquet", pq, *extra)
    df = pagelab.curve(path, policy="lru", memory="5%..20%:3", sample=sample)
    pandas.testing.assert_frame_equal(pandas.read_parquet(pq), df)
    # A table any Parquet reader takes: pyarrow's own.
    import pyarrow.parquet

    t = pyarrow.parquet.read_table(pq)
    assert t.column_names == list(df.columns) and t.num_rows == 3


def test_parquet_files_and_reports_say_what_made_them(tmp_path):
    """Issue 40 #17: the version, the layout's version, the --set overrides and the scenario."""
    import json

    import pyarrow.parquet

    pq, js = tmp_path / "run.parquet", tmp_path / "run.json"
    cli("run", "-q", EXAMPLE, "--set", "workload.fio-zipf.ops=20000", "--json", js, "--parquet", pq)
    report = json.loads(js.read_text())
    p = report["provenance"]
    assert p["pagelab_version"] and p["schema_version"] == 1
    assert p["set"] == ["workload.fio-zipf.ops=20000"] and "ops = 20000" in p["scenario"]
    meta = {k.decode(): v.decode() for k, v in pyarrow.parquet.read_schema(pq).metadata.items()}
    assert meta["pagelab.version"] == p["pagelab_version"]
    assert meta["pagelab.schema_version"] == "1"
    assert json.loads(meta["pagelab.set"]) == p["set"]
    assert meta["pagelab.scenario_hash"] == p["scenario_hash"] and meta["pagelab.scenario"] == p["scenario"]
    sweep = tmp_path / "sweep.parquet"
    cli("sweep", "-q", EXAMPLE, "--vary", "machine.swappiness=0,100", "--set", "workload.fio-zipf.ops=20000", "--parquet", sweep)
    meta = {k.decode(): v.decode() for k, v in pyarrow.parquet.read_schema(sweep).metadata.items()}
    assert json.loads(meta["pagelab.set"]) == ["workload.fio-zipf.ops=20000"], "the fixed --set, not a point's"
    assert list(pandas.read_parquet(sweep).columns[3:6]) == ["throughput_ops_s", "oom_kills", "unfinished_tasks"]
