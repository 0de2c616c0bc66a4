//! Options and inputs that used to be ignored or accepted wrongly (issue 16): each is now
//! applied or refused with a message.

use std::process::Command;

fn pagelab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pagelab"))
}

fn write(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bad-input-test");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const SCENARIO: &str = r#"[machine]
memory = "32M"
[[workload]]
name = "r"
cgroup = "/"
kind = "file-read"
file_size = "8M"
distribution = "uniform"
ops = 2000
"#;

fn report(args: &[&str], name: &str, text: &str) -> serde_json::Value {
    let p = write(name, text);
    let out = pagelab().arg("run").arg(&p).args(args).args(["--json", "-", "-q"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn kernel_policy_and_memory_apply_to_a_scenario_as_their_set_keys() {
    let short = report(&["--kernel", "6.12", "--policy", "mglru", "--memory", "16M"], "short.toml", SCENARIO);
    let long = report(&["--set", "machine.kernel=\"6.12\"", "--set", "machine.policy=\"mglru\"", "--set", "machine.memory=\"16M\""], "long.toml", SCENARIO);
    assert_eq!(short["kernel"], "6.12");
    assert_eq!(short["policy"], "mglru");
    assert_eq!(short["vmstat"], long["vmstat"]);
    let plain = report(&[], "plain.toml", SCENARIO);
    assert_ne!(plain["vmstat"], short["vmstat"], "the options changed the run");
}

#[test]
fn an_unwritable_json_path_fails_before_the_run() {
    let p = write("unwritable.toml", SCENARIO);
    let out = pagelab().arg("run").arg(&p).args(["--json", "/proc/pagelab-no/x.json", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot write /proc/pagelab-no/x.json"), "{err}");
    let out = pagelab().arg("sweep").arg(&p).args(["--vary", "machine.memory=16M,32M", "--csv", "/proc/pagelab-no/x.csv", "-q"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write /proc/pagelab-no/x.csv"));
}

#[test]
fn integer_sizes_are_bytes() {
    let ints = SCENARIO.replace("memory = \"32M\"", "memory = 33554432").replace("file_size = \"8M\"", "file_size = 8388608");
    assert_eq!(report(&[], "ints.toml", &ints)["vmstat"], report(&[], "strs.toml", SCENARIO)["vmstat"]);
    let p = write("neg.toml", &SCENARIO.replace("memory = \"32M\"", "memory = -5"));
    let out = pagelab().arg("run").arg(&p).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("whole number of bytes"), "{err}");
}
