//! The command line: clear errors for bad scenarios, JSON output.

use crate::pagelab;

fn write(name: &str, text: &str) -> std::path::PathBuf {
    crate::scratch_file("cli-test", name, text)
}

const GOOD: &str = r#"[machine]
memory = "32M"
[[workload]]
name = "r"
cgroup = "/"
kind = "file-read"
file_size = "8M"
distribution = "seq"
ops = 1000
"#;

fn fails_with(text: &str, name: &str, needles: &[&str]) {
    let p = write(name, text);
    let out = pagelab().arg("run").arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{name} should fail cleanly");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "{name}: `{n}` not in: {err}");
    }
}

#[test]
fn malformed_scenarios_name_file_key_and_problem() {
    fails_with(&GOOD.replace("memory", "memroy"), "unknown-key.toml", &["unknown-key.toml:2", "`machine.memroy`: unknown field `memroy`"]);
    fails_with(
        &GOOD.replace("ops = 1000", "ops = 1000\nopz = 1"),
        "unknown-workload-key.toml",
        &["unknown-workload-key.toml:10", "`workload[0].opz`: unknown field"],
    );
    fails_with(&GOOD.replace("\"32M\"", "\"32Q\""), "bad-size.toml", &["bad-size.toml:2", "machine.memory", "unknown unit"]);
    fails_with(&GOOD.replace("cgroup = \"/\"", "cgroup = \"/db\""), "undeclared.toml", &["undeclared.toml:5", "workload[0].cgroup", "not declared"]);
    fails_with(&GOOD.replace("cgroup = \"/\"\n", ""), "no-cgroup.toml", &["no-cgroup.toml", "workload[0].cgroup", "missing"]);
    fails_with("[machine\n", "syntax.toml", &["syntax.toml:1"]);
    // A workload's phase defaults (its own `ops`, `kind`, ...) are named too.
    fails_with(&GOOD.replace("ops = 1000", "ops = \"1000\""), "string-ops.toml", &["string-ops.toml:9", "workload[0].ops", "expected u64"]);
    fails_with(&GOOD.replace("kind = \"file-read\"", "kind = \"file-raed\""), "bad-kind.toml", &["bad-kind.toml:6", "workload[0].kind", "file-raed"]);
    // A mistyped CPU cost in [time] is an error, not a silently ignored table.
    let timed = GOOD.replace("[[workload]]", "[time]\nsyscall_ns = \"x\"\n[[workload]]");
    fails_with(&timed, "time-cost.toml", &["time-cost.toml:4", "time.syscall_ns", "expected u64"]);
    let phased = format!("{GOOD}[[workload.phase]]\nops = 10\n[[workload.phase]]\nops = \"x\"\n");
    fails_with(&phased, "phase-ops.toml", &["phase-ops.toml:13", "workload[0].phase[1].ops", "expected u64"]);
    // A bad value given by --set is blamed on the --set, not on a line of the file.
    let p = write("set.toml", GOOD);
    let out = pagelab().arg("run").arg(&p).args(["--set", "machine.memory=32Q"]).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("`machine.memory`") && e.contains("(from --set machine.memory=32Q)") && !e.contains("set.toml:2"), "{e}");
    let out = pagelab().arg("run").arg(&p).args(["--set", "workload.r.opz=1"]).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("`workload[0].opz`: unknown field") && e.contains("(from --set workload.r.opz=1)"), "{e}");
    let missing = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("pagelab-does-not-exist.toml");
    let out = pagelab().arg("run").arg(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
}

#[test]
fn run_writes_json_with_the_kernel_counter_names() {
    let p = write("good.toml", GOOD);
    let out = pagelab().args(["run", "-q", "--json", "-"]).arg(&p).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ops"], 1000);
    assert!(v["vmstat"]["pgpgin"].as_u64().unwrap() >= 4000, "every read page came from disk");
    assert!(v["memcg"]["/"]["file"].as_u64().is_some());
    let set = pagelab().args(["run", "-q", "--json", "-", "--set", "workload.r.ops=10"]).arg(&p).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&set.stdout).unwrap();
    assert_eq!(v["ops"], 10);
}

#[test]
fn compare_prints_seed_001_rows_for_two_runs() {
    let p = write("cmp.toml", GOOD);
    let dir = p.parent().unwrap();
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    for (out, ops) in [(&a, "1000"), (&b, "500")] {
        let st = pagelab().args(["run", "-q", "--json"]).arg(out).arg(&p).args(["--set", &format!("workload.r.ops={ops}")]).status().unwrap();
        assert!(st.success());
    }
    let out = pagelab().arg("compare").arg(&a).arg(&b).args(["--labels", "full,half"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = String::from_utf8_lossy(&out.stdout);
    for row in [
        "Scanned",
        "Reclaimed",
        "Reclaim efficiency %",
        "Scanned file",
        "Scanned anon",
        "Swapouts",
        "Swapins",
        "Refaults",
        "Restore refaults",
        "Total paging IO",
    ] {
        assert!(t.lines().any(|l| l.starts_with(row)), "no row {row}:\n{t}");
    }
    assert!(t.lines().next().unwrap().contains("full") && t.contains("half"));
    let bad = pagelab().arg("compare").arg(&a).arg(dir.join("missing.json")).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("missing.json"));
}
