//! Debian's 7.3.4 against 6.12.95: one test per rule that differs (docs/kernel-7.3.md), named
//! after its predicate in kernel.rs. Each asserts what 7.3 does and that 6.12 does otherwise,
//! so it fails if the predicate is flipped.

use crate::common;
use common::*;

use pagelab::kernel::{Kernel, DEF_PRIORITY};
use pagelab::mm::mapping::Entry;
use pagelab::mm::memcontrol::{FedStat, ROOT_MEMCG};
use pagelab::mm::vmscan::ScanControl;
use pagelab::mm::vmstat::{Ev, Reclaimer};

/// A file reader in /a, limited to 8M of a 64M machine: only limit reclaim runs.
fn limited_reader(kernel: &str, policy: &str) -> String {
    format!(
        r#"
[machine]
memory = "64M"
kernel = "{kernel}"
policy = "{policy}"
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
ops = 6000
"#
    )
}

#[test]
fn reclaim_counters_are_node_stats() {
    for policy in ["classic", "mglru"] {
        for kernel in ["6.12", "7.3"] {
            let text = limited_reader(kernel, policy);
            let (global, memcg, limit_hits) = if policy == "classic" {
                let mut m = classic(&text);
                while m.step() {}
                let a = m.mm.memcgs.find("/a").unwrap();
                let e = m.mm.memcgs.hierarchical_events(a);
                (
                    ev(&m, Ev::PgScanDirect) + ev(&m, Ev::PgScanKswapd) + ev(&m, Ev::PgStealDirect),
                    e.get(Ev::PgScanDirect) + e.get(Ev::PgScanKswapd) + e.get(Ev::PgStealDirect),
                    m.mm.memcgs.get(a).memory_events.max,
                )
            } else {
                let mut m = mglru(&text);
                while m.step() {}
                let a = m.mm.memcgs.find("/a").unwrap();
                let e = m.mm.memcgs.hierarchical_events(a);
                (
                    ev(&m, Ev::PgScanDirect) + ev(&m, Ev::PgScanKswapd) + ev(&m, Ev::PgStealDirect),
                    e.get(Ev::PgScanDirect) + e.get(Ev::PgScanKswapd) + e.get(Ev::PgStealDirect),
                    m.mm.memcgs.get(a).memory_events.max,
                )
            };
            assert!(limit_hits > 0 && memcg > 0, "{kernel} {policy}: the limit drove reclaim");
            if kernel == "7.3" {
                assert_eq!(global, memcg, "{kernel} {policy}: /proc/vmstat counts limit reclaim");
            } else {
                assert_eq!(global, 0, "{kernel} {policy}: limit reclaim stays out of /proc/vmstat");
            }
        }
    }
    assert!(Kernel::V7_3.reclaim_counters_are_node_stats() && !Kernel::V6_12.reclaim_counters_are_node_stats());
}

/// An anon writer in /a (limited to 4M) over 64M of zram: most of its pages sit in swap, as
/// shadows once swapped in and out again.
fn limited_swapper(kernel: &str) -> String {
    format!(
        r#"
[machine]
memory = "64M"
kernel = "{kernel}"
swap = {{ device = "zram", size = "128M" }}
[[cgroup]]
path = "/a"
max = "4M"
[[workload]]
name = "heap"
cgroup = "/a"
kind = "anon-write"
size = "40M"
distribution = "uniform"
ops = 40000
"#
    )
}

#[test]
fn swap_shadows_in_swap_table() {
    // 6.12: shadow-only nodes of the swap cache beyond an eighth of /a's LRU pages are freed
    // by the shadow shrinker (workingset_nodereclaim); 7.3 keeps swap shadows in the swap
    // table, which no shrinker walks, so /a's refaults find every shadow.
    let mut got = Vec::new();
    for kernel in ["6.12", "7.3"] {
        let mut m = classic(&limited_swapper(kernel));
        while m.step() {}
        got.push((ev(&m, Ev::WorkingsetNodeReclaim), ev(&m, Ev::WorkingsetRefaultAnon)));
        m.check().unwrap();
    }
    let (old, new) = (got[0], got[1]);
    assert!(old.0 > 0, "6.12: the shrinker freed swap shadow nodes: {old:?}");
    assert_eq!(new.0, 0, "7.3: no swap shadow node is ever freed: {new:?}");
    assert!(new.1 > old.1, "7.3: more swap-ins find their shadow: {new:?} against {old:?}");
}

#[test]
fn sync_swapin_through_swap_cache() {
    // One page of a zram-backed heap swapped out, then faulted in: 7.3's swapin_sync() adds
    // it to the swap cache and folio_free_swap() takes it out, two NR_SWAPCACHE updates
    // (rstat updates of the memcg) that 6.12's skip_swapcache path does not make.
    let mut delta = Vec::new();
    for kernel in ["6.12", "7.3"] {
        let mut m = classic(&limited_swapper(kernel));
        let pages = m.object(0, 0).1;
        for p in 0..pages {
            m.apply(0, touch(0, p, true));
        }
        m.drain();
        let base = m.object(0, 0).0;
        // The page swapped out last, its shadow in the youngest node (the shrinker of 6.12
        // frees the oldest first): the swap-in finds a shadow under both kernels.
        let page = (0..pages)
            .rev()
            .find(|&p| matches!(m.mm.space.get(base + p as u32), Entry::Swapped(s) if m.mm.swap.shadow(s).is_some()))
            .expect("a page in swap with its shadow");
        let (updates, swapins) = (m.mm.memcgs.rstat_updates(), ev(&m, Ev::PswpIn));
        m.apply(0, touch(0, page, false));
        assert_eq!(ev(&m, Ev::PswpIn), swapins + 1, "{kernel}: one swap-in");
        assert!(matches!(m.mm.space.get(base + page as u32), Entry::Resident(_)), "{kernel}");
        delta.push(m.mm.memcgs.rstat_updates() - updates);
        m.check().unwrap();
    }
    assert_eq!(delta[1], delta[0] + 2, "rstat updates of the swap-in, 6.12 then 7.3: {delta:?}");
}

#[test]
fn lru_gen_scan_budget_up_front() {
    // Root reclaim of 32 pages at the default priority over 12,000 clean file pages: 6.12's
    // evict_folios() takes a whole batch (64 isolated) whatever get_nr_to_scan() said; 7.3
    // computes the budget first (evictable >> 12, here 2) and scans no more than it.
    let mut scanned = Vec::new();
    for kernel in ["6.12", "7.3"] {
        let mut m = mglru(&one_file_scenario("64M", kernel, "mglru", 12_000));
        for p in 0..12_000 {
            m.apply(0, read(0, p));
        }
        m.drain();
        let evictable = m.mm.node_lru_size(pagelab::mm::vmstat::Lru::InactiveFile) + m.mm.node_lru_size(pagelab::mm::vmstat::Lru::ActiveFile);
        let before = ev(&m, Ev::PgScanFile) + ev(&m, Ev::PgRefill);
        let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Direct, 32);
        sc.priority = DEF_PRIORITY;
        m.policy.lru_gen_shrink_lruvec(&mut m.mm, ROOT_MEMCG, &mut sc);
        scanned.push((ev(&m, Ev::PgScanFile) + ev(&m, Ev::PgRefill) - before, evictable >> DEF_PRIORITY));
        m.check().unwrap();
    }
    let ((old, _), (new, budget)) = (scanned[0], scanned[1]);
    assert!(budget > 0 && budget < 64, "{scanned:?}");
    assert!(old >= 64, "6.12 scans a whole batch: {scanned:?}");
    assert!(new > 0 && new <= budget, "7.3 scans within its budget: {scanned:?}");
}

#[test]
fn memcg_rstat_update_stops_at_flushable() {
    // /a passes its flush threshold (64 updates on one CPU); 50 more updates of /a: 6.12
    // still adds them to the root's pending count, 7.3 stops at /a.
    let mut root_gain = Vec::new();
    for kernel in ["6.12", "7.3"] {
        let mut m = classic(&format!(
            "[machine]\nmemory = \"64M\"\nkernel = \"{kernel}\"\n[[cgroup]]\npath = \"/a\"\nmax = \"8M\"\n\
             [[workload]]\nname = \"r\"\ncgroup = \"/a\"\nkind = \"file-read\"\nfile_size = \"1M\"\nops = 0\n"
        ));
        let a = m.mm.memcgs.find("/a").unwrap();
        m.mm.memcgs.stat_updated(a, FedStat::SwapCache, 100);
        assert!(m.mm.memcgs.rstat_pending(a) >= 100, "{kernel}: /a is flushable");
        let (a_before, root_before) = (m.mm.memcgs.rstat_pending(a), m.mm.memcgs.rstat_pending(ROOT_MEMCG));
        m.mm.memcgs.stat_updated(a, FedStat::SwapCache, 50);
        root_gain.push((m.mm.memcgs.rstat_pending(a) - a_before, m.mm.memcgs.rstat_pending(ROOT_MEMCG) - root_before));
    }
    assert_eq!(root_gain[0], (50, 50), "6.12: /a and the root count the updates");
    assert_eq!(root_gain[1], (0, 0), "7.3: the walk stops at the flushable /a");
}
