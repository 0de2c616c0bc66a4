//! Results as tables: `pagelab curve --json`'s shape, and `--parquet` on `run` (the series),
//! `sweep` and `curve`, read back with the parquet crate's reader; outputs checked before
//! the run.

use crate::pagelab;

use std::path::{Path, PathBuf};
use std::process::Command;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::Value;

fn path(name: &str) -> PathBuf {
    let dir = crate::scratch_dir("cli-tables-test");
    dir.join(name)
}

const SCENARIO: &str = r#"[machine]
memory = "32M"
[report]
interval = "10ms"
[[workload]]
name = "r"
cgroup = "/"
kind = "file-read"
file_size = "48M"
distribution = "zipf:0.9"
ops = 20000
"#;

/// A skewed oracleGeneral trace of 20000 accesses over 4000 objects, in a file of its own
/// for each test (the tests run in parallel).
fn trace(name: &str) -> PathBuf {
    let p = path(&format!("{name}.oracleGeneral"));
    let mut x = pagelab_host::xorshift::XorShift64::new(88172645463325252);
    let ids: Vec<u64> = (0..20_000)
        .map(|_| {
            let r = x.next_f64();
            (r * r * 4000.0) as u64
        })
        .collect();
    pagelab_trace::write_oracle(&p, pagelab_trace::with_next_access(&ids, 4096), None).unwrap();
    p
}

fn ok(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn fails(cmd: &mut Command, needles: &[&str]) {
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1), "should fail: {}", String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8_lossy(&out.stderr);
    for n in needles {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }
}

/// A Parquet file's column names and its rows as JSON values (null for a missing value).
fn read_parquet(p: &Path) -> (Vec<String>, Vec<Vec<Value>>) {
    let reader = SerializedFileReader::new(std::fs::File::open(p).unwrap()).unwrap();
    let names = reader.metadata().file_metadata().schema_descr().columns().iter().map(|c| c.name().to_string()).collect();
    let rows = reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| {
            r.unwrap()
                .get_column_iter()
                .map(|(_, f)| match f {
                    Field::Null => Value::Null,
                    Field::Long(v) => Value::from(*v),
                    Field::Double(v) => Value::from(*v),
                    Field::Str(s) => Value::from(s.as_str()),
                    other => panic!("unexpected field {other:?}"),
                })
                .collect()
        })
        .collect();
    (names, rows)
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

#[test]
fn curve_json_points_are_in_size_order_with_memory_counters_and_errors() {
    let t = trace("json-shape");
    let curve = |args: &[&str]| -> Vec<Value> {
        let out = ok(pagelab().arg("curve").arg(&t).args(args).args(["--json", "-"]));
        // Standard output is the JSON alone when it goes there.
        serde_json::from_slice::<Value>(&out).unwrap()["points"].as_array().unwrap().clone()
    };
    let exact = curve(&["--policy", "lru", "--memory", "2M,1M,4M"]);
    assert_eq!(exact.iter().map(|p| p["memory"].as_u64().unwrap()).collect::<Vec<_>>(), [1 << 20, 2 << 20, 4 << 20]);
    for p in &exact {
        assert_eq!(keys(p), ["memory", "miss_ratio", "misses"]);
        assert!(p["misses"].is_u64(), "an exact count is an integer: {p}");
        assert!((p["miss_ratio"].as_f64().unwrap() - p["misses"].as_f64().unwrap() / 20_000.0).abs() < 1e-12);
    }
    let sampled = curve(&["--policy", "lru", "--memory", "1M,4M", "--sample", "0.5"]);
    for p in &sampled {
        assert_eq!(keys(p), ["memory", "miss_ratio", "miss_ratio_error", "misses", "misses_error"]);
    }
    let classic = curve(&["--policy", "classic", "--memory", "4M", "--counters", "pswpin"]);
    assert_eq!(keys(&classic[0]), ["memory", "miss_ratio", "misses", "pswpin"]);
}

/// `curve --json` says what made it, as `run --json` and `sweep` do: the versions and --set,
/// and for a scenario's curve the scenario the points share and the --vary (it was a bare
/// array of points, with no provenance).
#[test]
fn curve_json_has_the_provenance_of_its_trace_or_scenario() {
    let t = trace("json-provenance");
    let v: Value = serde_json::from_slice(&ok(pagelab().arg("curve").arg(&t).args([
        "--policy",
        "classic",
        "--memory",
        "2M",
        "--set",
        "machine.swappiness=10",
        "--json",
        "-",
    ])))
    .unwrap();
    let p = &v["provenance"];
    assert_eq!(p["pagelab_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(p["schema_version"], 1);
    assert_eq!(p["set"], serde_json::json!(["machine.swappiness=10"]));
    assert!(p.get("scenario").is_none(), "a trace has no scenario: {p}");
    assert_eq!(v["points"].as_array().unwrap().len(), 1);

    let s = path("provenance.toml");
    std::fs::write(&s, SCENARIO).unwrap();
    let v: Value = serde_json::from_slice(&ok(pagelab().arg("curve").arg(&s).args([
        "--vary",
        "machine.memory=24M,32M",
        "--kernel",
        "6.12",
        "--set",
        "machine.swappiness=10",
        "--json",
        "-",
    ])))
    .unwrap();
    let p = &v["provenance"];
    assert_eq!(p["set"], serde_json::json!(["machine.kernel=\"6.12\"", "machine.swappiness=10"]));
    assert_eq!(p["vary"], "machine.memory=24M,32M");
    let scenario = p["scenario"].as_str().unwrap();
    assert!(scenario.contains("swappiness = 10") && scenario.contains("6.12"), "{scenario}");
    assert!(p["scenario_hash"].as_str().unwrap().starts_with("fnv1a64:"));
    assert_eq!(v["points"].as_array().unwrap().len(), 2);
}

#[test]
fn curve_parquet_holds_the_json_points_as_columns() {
    let t = trace("parquet-curve");
    for sample in [None, Some("0.5")] {
        let (json, pq) = (path("c.json"), path("c.parquet"));
        let mut cmd = pagelab();
        cmd.arg("curve").arg(&t).args(["--policy", "classic", "--memory", "2M..4M:3", "--json"]).arg(&json).arg("--parquet").arg(&pq);
        if let Some(r) = sample {
            cmd.args(["--sample", r]);
        }
        ok(&mut cmd);
        let written: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let points = written["points"].as_array().unwrap();
        let (names, rows) = read_parquet(&pq);
        let counters = ["misses", "miss_ratio", "workingset_refault_file", "workingset_activate_file", "pgscan_file", "pgsteal_file"];
        let mut want: Vec<String> = std::iter::once("memory".to_string()).chain(counters.iter().map(|c| c.to_string())).collect();
        if sample.is_some() {
            want.extend(counters.iter().map(|c| format!("{c}_error")));
        }
        assert_eq!(names, want);
        assert_eq!(rows.len(), 3);
        for (row, p) in rows.iter().zip(points) {
            for (n, v) in names.iter().zip(row) {
                assert_eq!(v, &p[n.as_str()], "{n} (sample {sample:?})");
            }
        }
    }
}

#[test]
fn run_parquet_is_the_series_one_row_an_interval() {
    let s = path("series.toml");
    std::fs::write(&s, SCENARIO).unwrap();
    let (json, pq) = (path("run.json"), path("run.parquet"));
    ok(pagelab().args(["run", "-q"]).arg(&s).arg("--json").arg(&json).arg("--parquet").arg(&pq));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let series = report["series"].as_array().unwrap();
    let (names, rows) = read_parquet(&pq);
    assert_eq!(&names[..2], ["t_s", "ops"]);
    assert!(names.iter().any(|n| n == "ops.r"), "a column of each task's operations: {names:?}");
    assert!(names.iter().any(|n| n == "workingset_refault_file") && names.iter().any(|n| n == "nr_free_pages"));
    assert!(names.iter().any(|n| n == "latency.p99_ns"), "the intervals' operation latency: {names:?}");
    assert!(series.len() > 2, "{} intervals", series.len());
    assert_eq!(rows.len(), series.len());
    for (row, p) in rows.iter().zip(series) {
        assert_eq!(row[0], p["t_s"]);
        assert_eq!(row[1], p["ops"]);
        for (n, v) in names.iter().zip(row).skip(2) {
            let want = match (n.strip_prefix("ops."), n.strip_prefix("latency."), n.strip_prefix("pressure.memory.")) {
                (Some(task), _, _) => &p["task_ops"][task],
                (_, Some(k), _) => &p["latency"][k],
                // pressure.memory.some.total_us, pressure.memory.full.avg10_pct, ...
                (_, _, Some(rest)) => {
                    let (line, key) = rest.split_once('.').unwrap();
                    &p["pressure"][line][key.trim_end_matches("_pct")]
                }
                _ => &p["vmstat"][n.as_str()],
            };
            assert_eq!(v, want, "{n}");
        }
        assert!(names.iter().any(|n| n == "pressure.memory.some.total_us"), "the pressure columns: {names:?}");
    }
    // A kernel model's trace replay has a series too; a plain cache's has none.
    let t = trace("run-series");
    let pq = path("trace-run.parquet");
    ok(pagelab().args(["run", "-q", "--policy", "classic", "--memory", "4M", "--trace"]).arg(&t).arg("--parquet").arg(&pq));
    assert!(!read_parquet(&pq).1.is_empty());
    fails(
        pagelab().args(["run", "--policy", "lru", "--memory", "4M", "--trace"]).arg(&t).arg("--parquet").arg(&pq),
        &["--parquet", "`lru`", "curve --parquet"],
    );
    fails(pagelab().args(["run", "--memory", "4M,8M", "--trace"]).arg(&t).arg("--parquet").arg(&pq), &["--parquet", "one --memory size", "4M,8M"]);
}

#[test]
fn sweep_parquet_is_one_row_a_point_with_typed_varied_values() {
    let s = path("sweep.toml");
    std::fs::write(&s, SCENARIO).unwrap();
    let (json, pq) = (path("sweep.json"), path("sweep.parquet"));
    ok(pagelab()
        .args(["sweep", "-q"])
        .arg(&s)
        .args(["--vary", "machine.memory=24M,32M", "--vary", "machine.swappiness=0,100", "--set", "workload.r.ops=5000", "--json"])
        .arg(&json)
        .arg("--parquet")
        .arg(&pq));
    let results: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let (names, rows) = read_parquet(&pq);
    assert_eq!(&names[..7], ["machine.memory", "machine.swappiness", "elapsed_s", "ops", "throughput_ops_s", "oom_kills", "unfinished_tasks"]);
    assert!(!names.iter().any(|n| n == "error"), "no point failed");
    assert_eq!(rows.len(), 4);
    let memory: Vec<&Value> = rows.iter().map(|r| &r[0]).collect();
    assert_eq!(memory, ["24M", "24M", "32M", "32M"]);
    assert_eq!(rows.iter().map(|r| r[1].as_i64().unwrap()).collect::<Vec<_>>(), [0, 100, 0, 100]);
    for (row, r) in rows.iter().zip(&results) {
        assert_eq!(row[3], r["report"]["ops"]);
        assert_eq!((&row[5], &row[6]), (&r["oom_kills"], &r["unfinished_tasks"]));
        for (n, v) in names.iter().zip(row).skip(7) {
            assert_eq!(v, &r["report"]["vmstat"][n.as_str()], "{n}");
        }
    }
}

#[test]
fn output_paths_are_checked_before_the_run() {
    let t = trace("checks");
    let s = path("check.toml");
    std::fs::write(&s, SCENARIO).unwrap();
    let nowhere = "/nonexistent-dir/out.parquet";
    // Each of these would run for a while: they fail at once, naming the option and path.
    fails(pagelab().args(["run"]).arg(&s).args(["--parquet", nowhere]), &["--parquet", "cannot write", nowhere]);
    fails(pagelab().args(["sweep"]).arg(&s).args(["--vary", "machine.swappiness=0,100", "--parquet", nowhere]), &["--parquet", nowhere]);
    fails(pagelab().arg("curve").arg(&t).args(["--memory", "4M", "--parquet", nowhere]), &["--parquet", nowhere]);
    fails(pagelab().arg("curve").arg(&t).args(["--memory", "4M", "--parquet", "-"]), &["--parquet -", "not to standard output"]);
    fails(pagelab().arg("curve").arg(&t).args(["--memory", "4M", "--plot", "/nonexistent-dir/c"]), &["--plot", "/nonexistent-dir", "not a directory"]);
    fails(
        pagelab().arg("curve").arg(&t).args(["--memory", "4M", "--plot", path("c").to_str().unwrap()]).env("PAGELAB_PYTHON", "/nonexistent-python"),
        &["--plot", "/nonexistent-python"],
    );
}
