//! Issue 44 item 5: `pagelab run S --kernel 6.1,6.12,7.3` runs the scenario on each kernel and
//! prints what changed, counter by counter, and the kernel.rs rules that differ.

use crate::pagelab;

/// A file reader limited to 8M by its cgroup: on 7.3 /proc/vmstat counts the limit reclaim
/// (reclaim_counters_are_node_stats), on 6.1 and 6.12 only memory.stat does.
const LIMITED: &str = r#"[machine]
memory = "64M"
[[cgroup]]
path = "/a"
max = "8M"
[[workload]]
name = "files"
cgroup = "/a"
kind = "file-read"
file_size = "24M"
distribution = "zipf:0.7"
fadvise = "random"
ops = 4000
"#;

#[test]
fn run_on_several_kernels_prints_changed_counters_and_the_rules_that_differ() {
    let p = crate::scratch_file("kernels", "limited.toml", LIMITED);
    let json = p.with_file_name("limited.json");
    let out = pagelab().arg("run").arg(&p).args(["--kernel", "6.1,6.12,7.3", "--json"]).arg(&json).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("on kernels 6.1, 6.12, 7.3"), "{text}");
    // The mmtests-style table, one column a kernel.
    let header =
        text.lines().find(|l| l.contains("6.1 classic") && l.contains("6.12 classic") && l.contains("7.3 classic")).unwrap_or_else(|| panic!("{text}"));
    assert!(!header.is_empty());
    // Counter by counter: limit reclaim appears in 7.3's /proc/vmstat only.
    let changed = text.split("vmstat counters that changed:").nth(1).unwrap_or_else(|| panic!("{text}"));
    let direct = changed.lines().find(|l| l.starts_with("pgscan_direct ")).unwrap_or_else(|| panic!("{changed}"));
    // The values, without the label and the changes in parentheses.
    let cells: Vec<&str> = direct.split_whitespace().skip(1).filter(|c| !c.starts_with('(') && !c.ends_with(')')).collect();
    assert_eq!(cells.len(), 3, "{direct}");
    assert_eq!((cells[0], cells[1]), ("0", "0"), "6.1 and 6.12 count no limit reclaim globally: {direct}");
    assert_ne!(cells[2], "0", "7.3 does: {direct}");
    // The rules, from kernel.rs's predicate table, neighbours first.
    let rules = text.split("Rules that differ").nth(1).unwrap();
    let pair = rules.split("6.12 -> 7.3: ").nth(1).unwrap_or_else(|| panic!("{rules}"));
    use pagelab::kernel::{Kernel, PREDICATES};
    let differ: Vec<&str> = PREDICATES.iter().filter(|(_, f)| f(Kernel::V6_12) != f(Kernel::V7_3)).map(|p| p.0).collect();
    assert!(pair.starts_with(&format!("{} rules differ", differ.len())), "{rules}");
    for r in &differ {
        assert!(pair.lines().take(differ.len() + 1).any(|l| l.trim_start().starts_with(r)), "{r} in {pair}");
    }
    assert!(rules.find("6.1 -> 6.12:").unwrap() < rules.find("6.12 -> 7.3:").unwrap());
    assert!(rules.contains("6.1 -> 7.3:") && rules.contains("partial_memcg_walk"), "{rules}");
    // --json: every kernel's report, in order.
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let kernels: Vec<&str> = v.as_array().unwrap().iter().map(|r| r["kernel"].as_str().unwrap()).collect();
    assert_eq!(kernels, ["6.1", "6.12", "7.3"]);
}

#[test]
fn several_kernels_refuse_an_unknown_or_repeated_one_and_parquet() {
    let p = crate::scratch_file("kernels", "small.toml", crate::SMALL_SCENARIO);
    for (kernels, want) in [("6.12,7.4", "`7.4` is not a pinned kernel"), ("6.12,6.12", "6.12 is given twice")] {
        let out = pagelab().arg("run").arg(&p).args(["--kernel", kernels]).output().unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("--kernel {kernels}")) && err.contains(want), "{err}");
    }
    let out = pagelab().arg("run").arg(&p).args(["--kernel", "6.12,7.3", "--parquet"]).arg(p.with_file_name("x.parquet")).output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("give one --kernel"));
}
