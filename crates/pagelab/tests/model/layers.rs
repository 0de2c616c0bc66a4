//! The layers' fence (docs/architecture.md): data flows workload -> machine -> counters ->
//! reports, so the kernel model (`mm/`) and the policies (`policy/`) never reach up into the
//! scenario schema, the machine's event loop (`sim/`) or the experiments (`lab/`). Test
//! modules may (they build scenarios to drive the model).

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && path.file_name().unwrap() != "tests.rs" {
            out.push(path);
        }
    }
}

/// The lines of `file` outside its `#[cfg(test)]` modules that name `crate::sim` or
/// `crate::lab`.
fn upward_uses(file: &Path) -> Vec<String> {
    uses_of(file, &["crate::sim", "crate::lab"])
}

/// The lines of `file` outside its `#[cfg(test)]` modules that name any of `paths`.
fn uses_of(file: &Path, paths: &[&str]) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let code = match text.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    code.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//") && paths.iter().any(|p| l.contains(p)))
        .map(|(i, l)| format!("{}:{}: {}", file.display(), i + 1, l.trim()))
        .collect()
}

#[test]
fn the_kernel_model_and_the_policies_do_not_import_the_layers_above_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src.join("mm"), &mut files);
    sources(&src.join("policy"), &mut files);
    assert!(files.len() > 20, "found only {} source files under mm/ and policy/", files.len());
    let found: Vec<String> = files.iter().flat_map(|f| upward_uses(f)).collect();
    assert!(found.is_empty(), "mm/ and policy/ reach into sim/ or lab/:\n{}", found.join("\n"));
}

/// The hooks live in `mm/hooks.rs`, beside the code that calls them, so the kernel model
/// names no policy: the import loop between `mm/` and `policy/` closes inside `mm/`.
#[test]
fn the_kernel_model_calls_policies_only_through_its_own_hooks() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src.join("mm"), &mut files);
    assert!(files.len() > 20, "found only {} source files under mm/", files.len());
    let found: Vec<String> = files.iter().flat_map(|f| uses_of(f, &["crate::policy"])).collect();
    assert!(found.is_empty(), "mm/ names policy/ outside its tests:\n{}", found.join("\n"));
}

/// The machine under `mm/` (the kernel's kernel/sched and kernel/locking) knows nothing of
/// memory: `mm/` calls it, never the other way round.
#[test]
fn the_scheduler_and_the_locks_sit_below_the_kernel_model() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src.join("sched"), &mut files);
    sources(&src.join("locking"), &mut files);
    sources(&src.join("block"), &mut files);
    assert!(files.len() >= 3, "found only {} source files under sched/, locking/ and block/", files.len());
    let found: Vec<String> = files.iter().flat_map(|f| uses_of(f, &["crate::mm", "crate::policy", "crate::sim", "crate::lab", "crate::report"])).collect();
    assert!(found.is_empty(), "sched/, locking/ or block/ reach up:\n{}", found.join("\n"));
}
