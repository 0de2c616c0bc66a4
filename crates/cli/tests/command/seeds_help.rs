//! `pagelab seeds --help` lists the experiments it can run.

use std::process::Command;

#[test]
fn seeds_help_lists_every_experiment_with_its_title() {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/seeds/experiments.toml");
    let exps = pagelab::experiments::load(&manifest).unwrap();
    assert!(exps.len() >= 9);
    for flag in ["--help", "-h"] {
        let out = Command::new(env!("CARGO_BIN_EXE_pagelab")).args(["seeds", flag]).output().unwrap();
        assert!(out.status.success());
        let help = String::from_utf8(out.stdout).unwrap();
        for e in &exps {
            assert!(
                help.lines().any(|l| l.split_whitespace().next() == Some(e.id.as_str()) && l.contains(&e.title)),
                "seeds {flag}: no line with `{}` and its title:\n{help}",
                e.id
            );
        }
    }
}
