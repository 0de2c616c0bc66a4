//! memcg limits and protection.

use crate::common;
use common::*;

use pagelab::mm::vmstat::{Ev, Lru};

#[test]
fn a_cgroup_never_stays_above_memory_max() {
    for kernel in ["6.1", "6.12"] {
        let mut m = classic(&format!(
            r#"
[machine]
memory = "64M"
kernel = "{kernel}"
swap = {{ device = "zram", size = "64M" }}
[[cgroup]]
path = "/a"
max = "8M"
[[workload]]
name = "files"
cgroup = "/a"
kind = "file-read"
file_size = "40M"
distribution = "zipf:0.7"
ops = 6000
[[workload]]
name = "heap"
cgroup = "/a"
kind = "anon-rw"
size = "12M"
distribution = "uniform"
ops = 6000
"#
        ));
        let a = m.mm.memcgs.find("/a").unwrap();
        let max = m.mm.memcgs.get(a).max;
        let mut steps = 0;
        while m.step() {
            steps += 1;
            assert!(m.mm.memcgs.get(a).usage <= max, "{kernel}: usage {} > max {max} after {steps} ops", m.mm.memcgs.get(a).usage);
            if steps % 500 == 0 {
                m.check().unwrap_or_else(|e| panic!("{kernel} step {steps}: {e}"));
            }
        }
        assert!(m.mm.memcgs.get(a).memory_events.max > 0, "{kernel}: the limit was hit");
        assert!(m.mm.events.get(Ev::PswpOut) > 0, "{kernel}: limit reclaim swapped anon");
        // Limit reclaim is cgroup reclaim: /proc/vmstat's kswapd/direct copies stay out of it.
        assert_eq!(ev(&m, Ev::PgScanDirect) + ev(&m, Ev::PgScanKswapd), 0, "{kernel}");
        let memcg_scan = m.mm.memcgs.hierarchical_events(a).get(Ev::PgScanDirect);
        assert!(memcg_scan > 0 && ev(&m, Ev::PgScanFile) + ev(&m, Ev::PgScanAnon) >= memcg_scan, "{kernel}");
    }
}

/// /p/a reads its 10M file, /p/b then streams 60M through their 24M parent, and /p/a reads
/// its file again; `low` protects /p/a or not.
fn refaults_of_protected(low: &str) -> (u64, u64) {
    let mut m = classic(&format!(
        r#"
[machine]
memory = "128M"
kernel = "6.1"
[[cgroup]]
path = "/p"
max = "24M"
[[cgroup]]
path = "/p/a"
low = "{low}"
[[cgroup]]
path = "/p/b"
[[workload]]
name = "a-first"
cgroup = "/p/a"
kind = "file-read"
file = "dataset-a"
file_size = "10M"
distribution = "seq"
ops = 2560
[[workload]]
name = "b"
cgroup = "/p/b"
kind = "file-read"
file_size = "60M"
distribution = "seq"
ops = 15360
start = "1s"
[[workload]]
name = "a-again"
cgroup = "/p/a"
kind = "file-read"
file = "dataset-a"
file_size = "10M"
distribution = "seq"
ops = 2560
start = "10s"
"#
    ));
    while m.step() {}
    m.check().unwrap();
    let a = m.mm.memcgs.find("/p/a").unwrap();
    let b = m.mm.memcgs.find("/p/b").unwrap();
    let ra = m.mm.memcgs.hierarchical_events(a).get(Ev::WorkingsetRefaultFile);
    let steal_b = m.mm.memcgs.hierarchical_events(b).get(Ev::PgStealDirect);
    (ra, steal_b)
}

#[test]
fn memory_low_protects_a_cgroup_working_set() {
    let (unprotected, _) = refaults_of_protected("0");
    let (protected, b_reclaimed) = refaults_of_protected("12M");
    assert!(unprotected > 1000, "without protection /p/a's pages are reclaimed too ({unprotected} refaults)");
    assert!(protected * 10 < unprotected, "memory.low keeps /p/a's 10M set: {protected} vs {unprotected} refaults");
    assert!(b_reclaimed > 5000, "/p/b's stream is reclaimed instead ({b_reclaimed})");
}

#[test]
fn memory_high_throttles_and_reclaims_without_failing_charges() {
    let mut m = classic(
        r#"
[machine]
memory = "64M"
kernel = "6.1"
[[cgroup]]
path = "/h"
high = "4M"
[[workload]]
name = "r"
cgroup = "/h"
kind = "file-read"
file_size = "16M"
distribution = "seq"
ops = 8192
"#,
    );
    while m.step() {}
    let h = m.mm.memcgs.find("/h").unwrap();
    let cg = m.mm.memcgs.get(h);
    assert!(cg.memory_events.high > 0);
    assert_eq!(cg.memory_events.max, 0);
    // Reclaim brings usage back to about memory.high (batches may leave it a little over).
    assert!(cg.usage <= cg.high + 128, "usage {} high {}", cg.usage, cg.high);
}

/// `machine.rstat_flush` sets the periodic flusher's period (FLUSH_TIME): flushing more
/// often leaves 6.12's ratelimited readers (the refault test, reclaim) fewer decisions made on
/// stale statistics. (An application's heap, then a Zipf file read, then the heap again.)
#[test]
fn the_rstat_flush_period_sets_how_stale_6_12_reclaim_reads_statistics() {
    let text = r#"
[machine]
memory = "64M"
kernel = "6.12"
policy = "classic"
swap = { device = "ssd", size = "256M" }
[[workload]]
name = "app"
cgroup = "/"
seed = 6
[[workload.phase]]
kind = "anon-rw"
file = "heap"
size = "24M"
distribution = "zipf:0.8"
read_ratio = 0.7
ops = 25000
[[workload.phase]]
kind = "file-read"
file = "data"
file_size = "160M"
distribution = "zipf:0.8"
fadvise = "random"
ops = 250000
[[workload.phase]]
kind = "anon-rw"
file = "heap"
size = "24M"
distribution = "zipf:0.8"
read_ratio = 0.7
ops = 25000
"#;
    let run = |o: &[String]| pagelab::run(&pagelab::Scenario::parse(text, "t.toml", "t", o).unwrap(), |_, _| {}).unwrap();
    let default = run(&[]);
    let period_ns = 200_000_000u64;
    let fast = run(&[format!("machine.rstat_flush=\"{period_ns}ns\"")]);
    let periods = (fast.elapsed_s * 1e9) as u64 / period_ns;
    assert!(fast.rstat_flushes >= periods && fast.rstat_flushes <= periods + 1, "{} flushes in {periods} periods", fast.rstat_flushes);
    assert!(default.rstat_flushes <= (default.elapsed_s / 2.0) as u64 + 1, "{} flushes in {} s", default.rstat_flushes, default.elapsed_s);
    assert!(
        default.stale_refault_decisions > 1000 && fast.stale_refault_decisions * 5 < default.stale_refault_decisions,
        "stale refault decisions: {} with a flush every 200 ms, {} every 2 s",
        fast.stale_refault_decisions,
        default.stale_refault_decisions
    );
}

/// include/linux/memcontrol.h: mem_cgroup_below_min/low(). 6.1.192 takes no target: a
/// reclaim target whose effective protection (left over from an earlier reclaim rooted
/// above it) covers its usage skips itself. 6.12.95's mem_cgroup_unprotected() exempts the
/// target (and the root) from its own protection.
#[test]
fn the_reclaim_target_is_exempt_from_its_own_protection_only_on_6_12() {
    for (kernel, target_protected) in [("6.1", true), ("6.12", false)] {
        let mut m = classic(&format!(
            "[machine]\nmemory = \"64M\"\nkernel = \"{kernel}\"\n[[cgroup]]\npath = \"/a\"\nmax = \"8M\"\nlow = \"16M\"\nmin = \"16M\"\n\
             [[workload]]\nname = \"f\"\ncgroup = \"/a\"\nkind = \"file-read\"\nfile_size = \"4M\"\nops = 0\n"
        ));
        let a = (0..m.mm.memcgs.cg.len() as u16).find(|&i| i != pagelab::mm::memcontrol::ROOT_MEMCG).unwrap();
        // An earlier reclaim rooted at the root left /a's effective protection at its own.
        m.mm.memcgs.cg[a as usize].usage = 100;
        m.mm.memcgs.calculate_protection(pagelab::mm::memcontrol::ROOT_MEMCG, a, false);
        assert_eq!(m.mm.memcgs.below_min(Some(a), a), target_protected, "{kernel}: min, /a reclaiming against its own max");
        assert_eq!(m.mm.memcgs.below_low(Some(a), a), target_protected, "{kernel}: low");
        assert!(m.mm.memcgs.below_min(None, a) && m.mm.memcgs.below_low(None, a), "{kernel}: under another target it is protected");
        assert!(!m.mm.memcgs.below_min(Some(a), pagelab::mm::memcontrol::ROOT_MEMCG), "{kernel}: the root never is");
    }
}

/// mm/memcontrol.c (6.1.192, 6.12.95): memcg_rstat_updated() is fed by every memcg stat and
/// event update, not only by the LRU sizes reclaim reads. A page-cache miss without reclaim
/// feeds NR_FILE_PAGES, the LRU size and, on 6.1 only (6.12.95 counts them for cgroup v1
/// alone), PGPGIN; evicting it then feeds the LRU size, PGSCAN, PGSTEAL, NR_FILE_PAGES and
/// PGPGOUT (6.1), whatever else reclaim does.
#[test]
fn every_memcg_stat_and_event_update_feeds_the_rstat_flush_threshold() {
    for (kernel, per_miss, per_eviction) in [("6.1", 3, 5), ("6.12", 2, 4)] {
        let mut m = classic(&one_file_scenario("64M", kernel, "classic", 128 * 256));
        let before = m.mm.memcgs.rstat_updates();
        for page in 0..1000 {
            m.apply(0, read(0, page));
        }
        assert_eq!(ev(&m, Ev::PgStealKswapd) + ev(&m, Ev::PgStealDirect), 0, "{kernel}: no reclaim yet");
        // The LRU sizes change when the lru_add batch drains: count the pages on the LRUs.
        let on_lru: u64 = [Lru::InactiveFile, Lru::ActiveFile].iter().map(|&l| m.mm.node_lru_size(l)).sum();
        assert!(on_lru > 950, "{kernel}: {on_lru} pages on the LRUs");
        assert_eq!(m.mm.memcgs.rstat_updates() - before, (per_miss - 1) * 1000 + on_lru, "{kernel}: units per miss");
        // Now read the rest of the file (128 MiB through a 64 MiB machine): every eviction
        // feeds at least its own five (6.1) or four (6.12) units.
        // A page feeds its LRU size when the lru_add batch drains, so the pages waiting in
        // the batch at the start feed this window and those waiting at its end do not.
        let before = m.mm.memcgs.rstat_updates();
        let pending_before = m.mm.lru_add_batch.len() as u64;
        for page in 1000..128 * 256 {
            m.apply(0, read(0, page));
        }
        let pending_after = m.mm.lru_add_batch.len() as u64;
        let stolen = ev(&m, Ev::PgStealKswapd) + ev(&m, Ev::PgStealDirect);
        let misses = 128 * 256 - 1000;
        assert!(stolen > 1000, "{kernel}: reclaim ran ({stolen} stolen)");
        let fed = m.mm.memcgs.rstat_updates() - before;
        assert!(
            fed + pending_after >= per_miss * misses + pending_before + per_eviction * stolen,
            "{kernel}: {fed} units for {misses} misses and {stolen} evictions ({pending_before} then {pending_after} pages awaiting the LRU)"
        );
    }
}
