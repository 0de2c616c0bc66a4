//! Issue 40: results that say what they are. `run --json FILE` prints a summary, not the whole
//! report again; a sweep's rows say when a task was OOM-killed; `compare` shows read-back IO
//! beside refaults and counts as whole numbers; a curve takes several policies.

use crate::pagelab;

/// A heap that fits in 32M but not in 8M, with no swap: at 8M the task is OOM-killed.
const HEAP: &str = r#"[machine]
memory = "64M"
[[cgroup]]
path = "/db"
max = "32M"
[[workload]]
name = "heap"
cgroup = "/db"
kind = "anon-rw"
size = "24M"
distribution = "uniform"
ops = 20000
seed = 3
"#;

fn stdout(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn run_with_json_to_a_file_prints_the_summary_unless_asked_for_the_table() {
    let p = crate::scratch_file("results", "heap.toml", HEAP);
    let json = p.with_file_name("heap.json");
    let short = stdout(&pagelab().arg("run").arg(&p).arg("--json").arg(&json).output().unwrap());
    assert!(short.starts_with("heap — kernel 6.1, policy classic: 20,000 ops"), "{short}");
    assert!(!short.contains("/proc/vmstat") && short.contains("heap.json"), "{short}");
    let full = stdout(&pagelab().arg("run").arg(&p).arg("--json").arg(&json).arg("--table").output().unwrap());
    assert!(full.contains("/proc/vmstat") && full.contains("memory.stat /db"), "{full}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["provenance"]["pagelab_version"], env!("CARGO_PKG_VERSION"));
    assert!(v["provenance"]["scenario"].as_str().unwrap().contains("size = \"24M\""));
}

#[test]
fn a_sweep_says_which_points_lost_a_task_to_the_oom_killer() {
    let p = crate::scratch_file("results", "heap-sweep.toml", HEAP);
    let (csv, json) = (p.with_file_name("sweep.csv"), p.with_file_name("sweep.json"));
    let text = stdout(
        &pagelab()
            .arg("sweep")
            .arg(&p)
            .args(["--vary", "cgroup./db.max=8M,32M", "--set", "machine.swappiness=0", "--csv"])
            .arg(&csv)
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap(),
    );
    assert!(text.lines().next().unwrap().contains("oom kills") && text.contains("OOM-killed"), "{text}");
    let csv = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0][..6], ["cgroup./db.max", "elapsed_s", "ops", "throughput_ops_s", "oom_kills", "unfinished_tasks"]);
    assert_eq!((rows[1][4], rows[1][5]), ("1", "1"), "8M: {csv}");
    assert_eq!((rows[2][4], rows[2][5]), ("0", "0"), "32M: {csv}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v[0]["unfinished_tasks"], 1);
    assert_eq!(v[0]["report"]["provenance"]["set"], serde_json::json!(["machine.swappiness=0", "cgroup./db.max=\"8M\""]));
}

#[test]
fn compare_shows_pages_read_beside_refaults_as_whole_numbers() {
    let swapping = HEAP.replace("memory = \"64M\"", "memory = \"64M\"\nswap = { device = \"zram\", size = \"64M\" }").replace("\"32M\"", "\"16M\"");
    let p = crate::scratch_file("results", "heap-cmp.toml", &swapping);
    let a = p.with_file_name("cmp-a.json");
    stdout(&pagelab().arg("run").arg(&p).arg("--json").arg(&a).output().unwrap());
    let t = stdout(&pagelab().arg("compare").arg(&a).arg(&a).output().unwrap());
    let row = |name: &str| t.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no {name}:\n{t}")).to_string();
    for r in ["Pages read (pgpgin/4)", "Refaults anon", "Refaults file", "Swapins"] {
        assert!(!row(r).contains(".00 "), "{}", row(r));
    }
    assert!(row("Swapins").split_whitespace().nth(1).unwrap().contains(','), "{}", row("Swapins"));
}

#[test]
fn a_curve_takes_several_policies_into_one_json_and_refuses_them_in_parquet() {
    let p = crate::scratch_file("results", "heap-curve.toml", HEAP);
    let json = p.with_file_name("curve.json");
    let text =
        stdout(&pagelab().arg("curve").arg(&p).args(["--vary", "cgroup./db.max=8M,32M", "--policy", "classic,mglru", "--json"]).arg(&json).output().unwrap());
    assert!(text.contains("classic:\n") && text.contains("mglru:\n"), "{text}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let policies: Vec<&str> = v["points"].as_array().unwrap().iter().map(|p| p["policy"].as_str().unwrap()).collect();
    assert_eq!(policies, ["classic", "classic", "mglru", "mglru"]);
    let out = pagelab()
        .arg("curve")
        .arg(&p)
        .args(["--vary", "cgroup./db.max=8M", "--policy", "classic,mglru", "--parquet"])
        .arg(p.with_file_name("c.parquet"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--parquet writes one curve"));
}
