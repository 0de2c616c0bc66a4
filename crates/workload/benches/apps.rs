//! The application models' generator speed: `cargo bench -p pagelab-workload --bench apps`.
//!
//! Prints, for each model, the operations it generated per second of wall time (the
//! workload's own operations: YCSB operations, reads; and the accesses the kernel sees),
//! best of three, and the generator's tables. The 10M-operation YCSB-C over a 100 GiB store
//! is the target (under a minute on 2 cores).

use std::time::Instant;

use pagelab_workload::{lsm::LsmToml, AppCacheToml, JobStream, Kind, Workload, WorkloadToml};

fn workload(f: impl FnOnce(&mut WorkloadToml)) -> Workload {
    let mut t = WorkloadToml { cgroup: Some("/".into()), name: Some("w".into()), ..Default::default() };
    f(&mut t);
    t.resolve(0).unwrap()
}

/// (seconds to build the stream, seconds to drain it, accesses), best of three.
fn time(w: &Workload) -> (f64, f64, u64) {
    let mut best = (f64::MAX, f64::MAX, 0);
    for _ in 0..3 {
        let t0 = Instant::now();
        let s = JobStream::new(w, 0);
        let built = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let n = s.count() as u64;
        let ran = t1.elapsed().as_secs_f64();
        if built + ran < best.0 + best.1 {
            best = (built, ran, n);
        }
    }
    best
}

fn report(name: &str, ops: u64, w: &Workload) {
    let (built, ran, accesses) = time(w);
    println!(
        "{name:<44} {ops:>11} ops  build {built:>6.2} s  run {ran:>6.2} s  {:>6.2} M ops/s  {:>6.2} M accesses/s",
        ops as f64 / ran / 1e6,
        accesses as f64 / ran / 1e6
    );
}

fn main() {
    let ops = 10_000_000;
    let app = workload(|t| {
        t.defaults.kind = Some(Kind::FileRead);
        t.defaults.file_size = Some("100G".into());
        t.defaults.distribution = Some("scrambled-zipfian".into());
        t.defaults.ops = Some(ops);
        t.app_cache = Some(AppCacheToml { size: Some("5G".into()), ..Default::default() });
    });
    report("app_cache 5G lru, zipfian reads of 100G", ops, &app);
    let rg = workload(|t| {
        t.defaults.kind = Some(Kind::Search);
        t.defaults.passes = Some(3);
    });
    let search_ops = JobStream::new(&rg, 0).remaining();
    report("search, Linux 6.12 tree, 3 passes", search_ops, &rg);
    for (letter, dist) in [("c", None), ("a", None), ("e", None), ("c", Some("uniform"))] {
        let lsm = workload(|t| {
            t.defaults.kind = Some(Kind::Lsm);
            t.defaults.ops = Some(if letter == "e" { ops / 10 } else { ops });
            t.defaults.distribution = dist.map(Into::into);
            t.defaults.lsm = Some(LsmToml { db_size: Some("100G".into()), ycsb: Some(letter.into()), ..Default::default() });
        });
        let n = lsm.phases[0].ops;
        report(&format!("lsm 100G, YCSB-{} {}", letter.to_uppercase(), dist.unwrap_or("")), n, &lsm);
    }
    let lsm = workload(|t| {
        t.defaults.kind = Some(Kind::Lsm);
        t.defaults.ops = Some(ops);
        t.defaults.lsm = Some(LsmToml { db_size: Some("100G".into()), ycsb: Some("c".into()), ..Default::default() });
    });
    let mut s = JobStream::new(&lsm, 0);
    s.by_ref().for_each(drop);
    let (block, table, kib) = s
        .with_lsm(|st| {
            (
                100.0 * st.block_cache.hits as f64 / (st.block_cache.hits + st.block_cache.misses) as f64,
                100.0 * st.table_cache.hits as f64 / (st.table_cache.hits + st.table_cache.misses) as f64,
                (st.block_cache.state_bytes() + st.table_cache.state_bytes()) / 1024,
            )
        })
        .unwrap();
    println!("lsm 100G YCSB-C after {ops} ops: block cache {block:.1}% hits, table cache {table:.1}% hits, tables {kib} KiB, objects {}", s.objects().len());
}
