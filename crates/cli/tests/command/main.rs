//! The command line's integration tests, one binary (each test binary links the whole model
//! again): each module runs `pagelab` as a user would and reads what it prints and writes.

mod bad_input;
mod calibrate;
mod cli;
mod hardening;
mod kernels;
mod results;
mod seeds_help;
mod size;
mod tables;
mod trace;
mod trace_formats;

/// The `pagelab` binary under test.
fn pagelab() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_pagelab"))
}

/// A directory of Cargo's scratch space for integration tests (inside the target directory,
/// so the tests leave nothing in /tmp), one per module so that modules never share a file.
fn scratch_dir(module: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(module);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `text` to the file `name` of `module`'s scratch directory and returns its path.
fn scratch_file(module: &str, name: &str, text: &str) -> std::path::PathBuf {
    let p = scratch_dir(module).join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A small machine reading a small file: the scenario the input-checking modules vary.
const SMALL_SCENARIO: &str = r#"[machine]
memory = "32M"
[[workload]]
name = "r"
cgroup = "/"
kind = "file-read"
file_size = "8M"
distribution = "uniform"
ops = 2000
"#;
