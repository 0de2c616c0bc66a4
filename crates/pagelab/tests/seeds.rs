//! The seeds' experiments reproduce the direction each seed reports.

use std::collections::BTreeMap;
use std::path::Path;

use pagelab::experiments::{load, run, Outcome};

fn outcome(id: &str) -> Outcome {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/seeds/experiments.toml");
    let exps: Vec<_> = load(&manifest).unwrap().into_iter().filter(|e| e.id == id).collect();
    assert_eq!(exps.len(), 1, "experiment {id} is in the manifest");
    run(&exps, 0, &|| {}).unwrap().pop().unwrap()
}

fn vmstat(o: &Outcome, run: usize) -> BTreeMap<String, f64> {
    o.reports[run].as_ref().unwrap().vmstat.iter().map(|(k, &v)| (k.clone(), v as f64)).collect()
}

#[test]
fn seed_001_test_1_5_7_never_scans_anon_and_the_cost_model_converges() {
    let o = outcome("001-1");
    let (old, new) = (vmstat(&o, 0), vmstat(&o, 1));
    assert_eq!(old["pgscan_anon"], 0.0, "5.7 refuses to scan the cold anon set");
    assert!(old["workingset_refault_file"] > 0.9 * old["pgscan_file"], "5.7 serves the file set from disk");
    assert!(new["pgscan_anon"] > 0.0 && new["pswpout"] > 0.0, "the cost model pushes cold anon out");
    // Seed: refaults -85.75% then -44.79%; scaled down, pagelab must at least halve them.
    assert!(new["workingset_refault_file"] < 0.5 * old["workingset_refault_file"]);
    assert!(new["workingset_restore_file"] > 0.0, "workingset pages come back as restores");
}

#[test]
fn seed_001_test_3_the_cost_model_scans_more_anon_under_equal_cost() {
    let o = outcome("001-3");
    let share = |v: &BTreeMap<String, f64>| v["pgscan_anon"] / (v["pgscan_anon"] + v["pgscan_file"]);
    let (old, new) = (vmstat(&o, 0), vmstat(&o, 1));
    assert!(share(&new) > share(&old), "anon share of scanning grows: {} -> {}", share(&old), share(&new));
}

#[test]
fn seed_001_test_4_streaming_writes_do_not_swap() {
    let o = outcome("001-4");
    for run in 0..2 {
        let v = vmstat(&o, run);
        assert!(v["pgscan_file"] > 100_000.0, "the written file moves through the file LRU");
        assert!(v["pgscan_anon"] < 0.001 * v["pgscan_file"], "no anon scanning: {}", v["pgscan_anon"]);
        assert_eq!(v["pswpout"], 0.0);
    }
}

#[test]
fn seed_002_flushing_in_the_refault_path_removes_stale_decisions_for_more_flushes() {
    let o = outcome("002");
    let r: Vec<&pagelab::Report> = o.reports.iter().map(|r| r.as_ref().unwrap()).collect();
    let (ratelimited, refault_flush, exact) = (r[0], r[1], r[2]);
    assert!(ratelimited.stale_refault_decisions > 1000, "6.12 judges refaults on statistics up to 2 s old");
    assert!(refault_flush.stale_refault_decisions * 100 < ratelimited.stale_refault_decisions);
    assert_eq!(exact.stale_refault_decisions, 0);
    assert!(refault_flush.rstat_flushes > 100 * ratelimited.rstat_flushes, "the price is flushes");
    assert!(exact.rstat_flushes > 10 * refault_flush.rstat_flushes);
}
