//! Options and inputs that used to be ignored or accepted wrongly (issue 16): each is now
//! applied or refused with a message.

use crate::pagelab;

use std::process::Command;

fn write(name: &str, text: &str) -> std::path::PathBuf {
    crate::scratch_file("bad-input-test", name, text)
}

use crate::SMALL_SCENARIO as SCENARIO;

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

#[test]
fn an_empty_trace_is_an_error_not_a_zero_miss_ratio() {
    let p = write("empty.oracleGeneral", "");
    for policy in ["lru", "classic"] {
        let out = pagelab().args(["run", "--trace"]).arg(&p).args(["--policy", policy, "--memory", "1M"]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{policy}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("the trace is empty"), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let z = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bad-input-test/empty.zst");
    std::fs::write(&z, zstd_empty()).unwrap();
    let out = pagelab().args(["run", "--trace"]).arg(&z).args(["--policy", "lru", "--memory", "1M"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no accesses"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A zstd frame of nothing (the zstd tool's output for an empty file).
fn zstd_empty() -> Vec<u8> {
    vec![0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x00, 0x01, 0x00, 0x00, 0x99, 0xe9, 0xd8, 0x51]
}

#[test]
fn cgroup_tree_errors_point_at_the_cgroup_entry() {
    let text = SCENARIO.replace("cgroup = \"/\"", "cgroup = \"/a/b\"") + "\n[[cgroup]]\npath = \"/a/b\"\nmax = \"8M\"\n";
    let p = write("orphan.toml", &text);
    let out = pagelab().arg("run").arg(&p).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("cgroup") && err.contains("/a/b") && err.contains("/a"), "{err}");
    assert!(err.contains(":12") || err.contains("line 12") || err.contains("[[cgroup]]"), "the error points at the [[cgroup]] entry: {err}");
}

/// Runs `pagelab run FILE -q` with the process's address space limited to `kib` KiB.
fn run_limited(file: &std::path::Path, kib: u64) -> std::process::Output {
    Command::new("sh").arg("-c").arg(format!("ulimit -v {kib}; exec \"$0\" run \"$1\" -q")).arg(env!("CARGO_BIN_EXE_pagelab")).arg(file).output().unwrap()
}

const ANON: &str = r#"[machine]
memory = "256M"
swap = { device = "zram", size = "SWAP" }
[[workload]]
name = "a"
cgroup = "/"
kind = "anon-rw"
size = "64M"
distribution = "uniform"
ops = 1000
"#;

/// Issue 16: an 8T swap device took 16 GB of host memory before a page was swapped. The swap
/// map grows with the slots used: the run fits in 2 GiB of address space.
#[test]
fn a_huge_swap_device_costs_memory_for_what_is_swapped() {
    let out = run_limited(&write("swap8t.toml", &ANON.replace("SWAP", "8T")), 2 << 20);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = pagelab().arg("run").arg(write("swap100t.toml", &ANON.replace("SWAP", "100T"))).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`machine.swap.size`: `100T` is more than the model's largest swap device"));
}

/// Issue 16: a 1T file cost 2.3 GB of host memory even for 1000 operations (8 bytes of
/// address space per declared page). Past the flat-table limit the address space and its
/// xarray nodes are sparse: a 7 TiB file read 1000 times fits in 1 GiB of address space
/// (just under 8 TiB is the largest object pagelab models; a bigger one is refused with its key).
#[test]
fn a_huge_file_costs_memory_for_the_pages_touched() {
    for size in ["1T", "7T"] {
        let text = format!(
            r#"[machine]
memory = "256M"
[[workload]]
name = "r"
cgroup = "/"
kind = "file-read"
file_size = "{size}"
distribution = "uniform"
ops = 1000
"#
        );
        let out = run_limited(&write(&format!("file{size}.toml"), &text), 1 << 20);
        assert!(out.status.success(), "{size}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// The frame table grows with the frames handed out, not with machine.memory: a 4T machine
/// runs a small workload inside a 1 GiB address-space limit (it was refused, or aborted,
/// for the 20 bytes of every declared frame).
#[test]
fn a_machine_of_terabytes_costs_what_its_workload_touches() {
    let big = SCENARIO.replace("memory = \"32M\"", "memory = \"4T\"");
    assert_ne!(big, SCENARIO);
    let out = run_limited(&write("mem4t.toml", &big), 1 << 20);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
}
