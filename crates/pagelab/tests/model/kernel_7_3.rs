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
use pagelab::policy::lru_gen::LvId;

/// The root memcg's lruvec on node 0 (a machine of one node).
const ROOT_LV: LvId = LvId { memcg: ROOT_MEMCG, nid: 0 };

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
        m.policy.lru_gen_shrink_lruvec(&mut m.mm, ROOT_LV, &mut sc);
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

/// A buffered write of one page of object `object`.
fn write(object: u32, page: u64) -> pagelab_workload::Op {
    pagelab_workload::Op { write: true, ..read(object, page) }
}

#[test]
fn lru_gen_workingset_top_tier() {
    // Buffered reads of one cached page: 6.12's folio_inc_refs() sets PG_workingset on the
    // second access (refs 1, tier 1); 7.3's lru_gen_inc_refs() counts the LRU_REFS field after
    // PG_referenced and sets PG_workingset only once the field is full, which puts the folio
    // in the top tier. A folio_inc_gen() (protection) then keeps PG_workingset on 7.3.
    use pagelab::mm::folio::pg;
    let mut got = Vec::new();
    for kernel in ["6.12", "7.3"] {
        let mut m = mglru(&one_file_scenario("64M", kernel, "mglru", 64));
        m.apply(0, read(0, 7));
        m.drain();
        let pfn = pfn_of(&m, 0, 0, 7).expect("cached");
        let mut history = Vec::new();
        for _ in 0..6 {
            // A read of another page between, so each read of page 7 counts as an access.
            m.apply(0, read(0, 9));
            m.apply(0, read(0, 7));
            let flags = m.mm.folios.get(pfn).flags;
            history.push((flags & pg::WORKINGSET != 0, m.policy.refs_tier(flags).1));
        }
        let first_ws = history.iter().position(|h| h.0).expect("PG_workingset at last");
        got.push((first_ws, history));
        m.check().unwrap();
    }
    let ((old_ws, old), (new_ws, new)) = (&got[0], &got[1]);
    assert!(new_ws >= &(old_ws + 3), "7.3 sets PG_workingset three accesses later: 6.12 {old:?}, 7.3 {new:?}");
    assert_eq!(new[*new_ws].1, 3, "7.3: a PG_workingset folio is in the top tier: {new:?}");
    assert!(new[..*new_ws].iter().all(|h| h.1 < 3), "{new:?}");
    assert!(Kernel::V7_3.lru_gen_workingset_top_tier() && !Kernel::V6_12.lru_gen_workingset_top_tier());
}

#[test]
fn lru_gen_type_by_all_tiers() {
    // File refaults only from its top tier (500 of 1000), none from tier 0; anon refaults 10%
    // from tier 0. 6.12 compares tier 0 alone (file: fewer than MIN_LRU_BATCH refaults, so
    // evict file); 7.3 sums every tier (file 25% against anon's 10% at swappiness 60: evict
    // anon) and takes file below swappiness 2.
    let mut got = Vec::new();
    for kernel in ["6.12", "7.3"] {
        let mut m = mglru(&one_file_scenario("64M", kernel, "mglru", 64));
        let lv = &mut m.policy.lv[ROOT_MEMCG as usize];
        lv.avg_total[1][0] = 1000;
        lv.avg_refaulted[1][3] = 500;
        lv.avg_total[1][3] = 1000;
        lv.avg_refaulted[0][0] = 100;
        lv.avg_total[0][0] = 1000;
        got.push((m.policy.get_type_to_scan(ROOT_LV, 60).0, m.policy.get_type_to_scan(ROOT_LV, 1).0));
    }
    assert_eq!(got[0].0, 1, "6.12: tier 0 alone says file");
    assert_eq!(got[1], (0, 1), "7.3: all tiers say anon; swappiness 1 says file");
}

#[test]
fn lru_gen_min_seq_independent() {
    // 300 cached file pages, no anon: try_to_inc_min_seq() finds anon's oldest generations
    // empty. 6.12 keeps anon's min_seq no younger than file's; 7.3 lets anon's move past it.
    let mut got = Vec::new();
    for kernel in ["6.12", "7.3"] {
        let mut m = mglru(&one_file_scenario("64M", kernel, "mglru", 300));
        for p in 0..300 {
            m.apply(0, read(0, p));
        }
        m.drain();
        let before = m.policy.lv[ROOT_MEMCG as usize].min_seq;
        m.policy.try_to_inc_min_seq(ROOT_LV, true);
        let after = m.policy.lv[ROOT_MEMCG as usize].min_seq;
        m.check().unwrap();
        got.push((before, after));
    }
    let (old, new) = (got[0].1, got[1].1);
    assert!(old[0] <= old[1], "6.12: anon's min_seq never passes file's: {got:?}");
    assert!(new[0] > new[1], "7.3: anon's min_seq moves on its own: {got:?}");
}

/// A Zipf reader of a file four times the size of a 32M machine (read(2) only, no page faults).
fn zipf_reader(kernel: &str) -> String {
    format!(
        r#"
[machine]
memory = "32M"
kernel = "{kernel}"
policy = "mglru"
[[workload]]
name = "zipf"
cgroup = "/"
kind = "file-read"
file_size = "128M"
distribution = "zipf:0.9"
fadvise = "random"
ops = 150000
seed = 12
"#
    )
}

#[test]
fn lru_gen_refault_workingset() {
    // read(2) refaults are never in a fault: 7.3 counts no workingset_activate_file, only
    // restores of PG_workingset shadows; 6.12 counts an activation for every recent refault.
    let mut got = Vec::new();
    for kernel in ["6.12", "7.3"] {
        let mut m = mglru(&zipf_reader(kernel));
        while m.step() {}
        m.check().unwrap();
        got.push((ev(&m, Ev::WorkingsetRefaultFile), ev(&m, Ev::WorkingsetActivateFile), ev(&m, Ev::WorkingsetRestoreFile)));
    }
    let (old, new) = (got[0], got[1]);
    assert!(old.0 > 1000 && new.0 > 1000, "both refault: {got:?}");
    assert!(old.1 > 0, "6.12 activates recent refaults: {old:?}");
    assert_eq!(new.1, 0, "7.3 activates only in a fault: {new:?}");
    assert!(new.2 > 0, "7.3 restores workingset refaults: {new:?}");
}

#[test]
fn lru_gen_evict_handles_writeback() {
    // 256 dirty file pages (buffered writes, below the flushers' background threshold), then
    // eviction passes. 6.12's sort_folio() moves them on with PG_reclaim (pgrefill) and
    // evict_folios() reports nothing to sc->nr; 7.3 lets them through to shrink_folio_list(),
    // which marks them for immediate reclaim, and handle_reclaim_writeback() adds them to
    // sc->nr and wakes the flushers.
    let mut got = Vec::new();
    for kernel in ["6.12", "7.3"] {
        let mut m = mglru(&one_file_scenario("64M", kernel, "mglru", 256));
        for p in 0..256 {
            m.apply(0, write(0, p));
        }
        m.drain();
        let dirty = (0..256).filter(|&p| pfn_of(&m, 0, 0, p).is_some_and(|f| m.mm.folios.test(f, pagelab::mm::folio::pg::DIRTY))).count();
        assert!(dirty > 200, "{kernel}: the pages are dirty ({dirty})");
        let immediate = ev(&m, Ev::NrVmscanImmediateReclaim);
        let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Kswapd, 32);
        sc.priority = 4;
        for _ in 0..4 {
            m.policy.evict_folios(&mut m.mm, ROOT_LV, &mut sc, 0, 64);
        }
        m.check().unwrap();
        got.push((ev(&m, Ev::NrVmscanImmediateReclaim) - immediate, sc.nr.nr_dirty, sc.nr.nr_unqueued_dirty, sc.nr.nr_taken));
    }
    let (old, new) = (got[0], got[1]);
    assert_eq!(old, (0, 0, 0, 0), "6.12: dirty folios sorted aside, nothing fed back: {got:?}");
    assert!(new.0 > 0, "7.3: shrink_folio_list() met the dirty folios: {new:?}");
    assert!(new.1 > 0 && new.2 == new.1 && new.3 >= new.1, "7.3: sc->nr counts them: {new:?}");
}

/// A random reader of a mapped file twice the size of a 32M machine: page faults only.
fn mmap_reader(kernel: &str) -> String {
    format!(
        r#"
[machine]
memory = "32M"
kernel = "{kernel}"
[[workload]]
name = "mapped"
cgroup = "/"
kind = "mmap-read"
file_size = "64M"
distribution = "zipf:0.6"
ops = 20000
seed = 10
"#
    )
}

#[test]
fn mmap_miss_lowered_once_per_hit() {
    // 6.12's fault-around lowers mmap_miss by every page it finds, the retry after a major
    // fault's read-around included, so random faults keep read-around on (a window of pages
    // a major fault); 7.3 lowers it once per fault that fault-around answers, so the misses
    // outnumber the hits, mmap_miss passes MMAP_LOTSAMISS and major faults read their page
    // alone.
    let mut got = Vec::new();
    for kernel in ["6.12", "7.3"] {
        let mut m = classic(&mmap_reader(kernel));
        while m.step() {}
        m.check().unwrap();
        let (major, pages) = (ev(&m, Ev::PgMajFault), ev(&m, Ev::PgpgIn) / 4);
        assert!(major > 1000, "{kernel}: major faults ({major})");
        got.push(pages as f64 / major as f64);
    }
    let (old, new) = (got[0], got[1]);
    assert!(old > 8.0, "6.12 reads around a major fault: {got:?} pages a fault");
    assert!(new < old / 2.0, "7.3 turns read-around off: {got:?} pages a fault");
}

#[test]
fn reclaim_never_writes_file_folios() {
    // 64 dirty file pages that an earlier pass marked PG_reclaim, unreferenced, on a node
    // flagged PGDAT_DIRTY, handed to kswapd's shrink_folio_list(): 6.12 writes them from
    // reclaim (pageout(): nr_vmscan_write); 7.3 marks each for immediate reclaim and
    // activates it, leaving the write to the flushers.
    use pagelab::mm::folio::pg;
    use pagelab::mm::vmscan::{move_folios_to_lru, shrink_folio_list, ReclaimStat};
    use pagelab::policy::Policy;
    let mut got = Vec::new();
    for kernel in ["6.12", "7.3"] {
        let mut m = classic(&one_file_scenario("64M", kernel, "classic", 64));
        for p in 0..64 {
            m.apply(0, write(0, p));
        }
        m.drain();
        let mut list: Vec<_> = (0..64).filter_map(|p| pfn_of(&m, 0, 0, p)).filter(|&f| m.mm.folios.test(f, pg::DIRTY)).collect();
        let n = list.len() as u64;
        assert!(n > 48, "{kernel}: the pages are dirty ({n})");
        for &pfn in &list {
            m.policy.lru_del(&mut m.mm, pfn);
            m.mm.folios.set(pfn, pg::ISOLATED | pg::RECLAIM);
            m.mm.folios.clear(pfn, pg::REFERENCED);
        }
        m.mm.nodes[0].reclaim.dirty = true;
        let (written, immediate) = (ev(&m, Ev::NrVmscanWrite), ev(&m, Ev::NrVmscanImmediateReclaim));
        let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Kswapd, 32);
        let mut stat = ReclaimStat::default();
        shrink_folio_list(&mut m.mm, &mut m.policy, &mut list, &mut sc, &mut stat, pagelab::mm::vmscan::BatchRules::shrink_inactive_list([0, 0]));
        move_folios_to_lru(&mut m.mm, &mut m.policy, &list);
        got.push((n, ev(&m, Ev::NrVmscanWrite) - written, ev(&m, Ev::NrVmscanImmediateReclaim) - immediate));
    }
    let (old, new) = (got[0], got[1]);
    assert_eq!((old.1, old.2), (old.0, 0), "6.12: kswapd writes every PG_reclaim dirty folio: {got:?}");
    assert_eq!((new.1, new.2), (0, new.0), "7.3: none written, all marked for immediate reclaim: {got:?}");
}

/// A sequential reader of a file twice a 64M machine, with a 2 MiB readahead window: on 7.3
/// its readahead takes folios up to order 9.
fn streaming_reader(kernel: &str) -> String {
    format!(
        r#"
[machine]
memory = "64M"
kernel = "{kernel}"
policy = "classic"
read_ahead_kb = 2048
[[workload]]
name = "stream"
cgroup = "/"
kind = "file-read"
file_size = "128M"
block_size = "128k"
distribution = "seq"
ops = 1024
"#
    )
}

#[test]
fn large_folio_allocated_at_its_order() {
    // 7.3: a large readahead folio is one allocation of its order. Under pressure it fails
    // the low watermark at that order while order-0 pages would still pass, so it wakes
    // kswapd with the order, and kswapd balances at that order until it has reclaimed
    // compact_gap() of it in the run. 6.12 (order-0 folios only) never wakes kswapd with
    // an order; nor would 7.3 if the folio's frames were taken one page at a time.
    use pagelab::mm::vmscan::{compact_gap, pgdat_balanced, pgdat_balanced_order, ALL_ZONES};
    let mut got = Vec::new();
    for kernel in ["6.12", "7.3"] {
        let mut m = classic(&streaming_reader(kernel));
        let (mut runs_at_order, mut highest) = (0u64, 0u32);
        let mut seen_between = false;
        while m.step() {
            if let Some(b) = m.mm.nodes[0].reclaim.kswapd.as_ref() {
                if b.order > 0 {
                    runs_at_order += 1;
                    highest = highest.max(b.order);
                    assert!(b.sc.nr_reclaimed < compact_gap(b.order), "{kernel}: the run drops to order 0 after compact_gap()");
                }
            }
            // Between the high watermark at order 0 and at order 5 the node is balanced
            // for one and not the other.
            seen_between |= pgdat_balanced(&m.mm, 0, ALL_ZONES) && !pgdat_balanced_order(&m.mm, 0, ALL_ZONES, 5);
        }
        m.check().unwrap();
        got.push((runs_at_order, highest, seen_between, ev(&m, Ev::PgStealKswapd), ev(&m, Ev::PgStealDirect)));
    }
    let (old, new) = (got[0], got[1]);
    assert_eq!((old.0, old.1), (0, 0), "6.12: kswapd is never woken with an order: {got:?}");
    assert!(new.0 > 0 && new.1 >= 5, "7.3: kswapd balances for the folios' orders: {got:?}");
    assert!(new.2, "7.3: the order's watermark is met later than order 0's: {got:?}");
    assert!(Kernel::V7_3.large_folio_allocated_at_its_order() && !Kernel::V6_12.large_folio_allocated_at_its_order());
}

#[test]
fn fair_preemption_is_lazy() {
    // 7.3 (PREEMPT_LAZY): the end of the task's slice, noticed at a tick inside its
    // operation, preempts it at the next tick; 6.12 (PREEMPT_VOLUNTARY) at once. At the
    // guest's clock (tick 4 ms, slice 0.75 ms), kswapd woken without lag at 1 ms.
    use pagelab::mm::time::Eevdf;
    const MS: u64 = 1_000_000;
    let turn_at = |k: Kernel| {
        let mut e = Eevdf::new(1, 1).with_lazy(k.fair_preemption_is_lazy());
        assert_eq!(e.kswapd_woken(MS), 0);
        (1..=20).map(|ms| ms * MS + MS / 2).find(|&now| e.kswapd_turn_in_op(now) > 0)
    };
    assert_eq!(turn_at(Kernel::V6_12), Some(4 * MS + MS / 2), "6.12: at the 4 ms tick");
    assert_eq!(turn_at(Kernel::V7_3), Some(8 * MS + MS / 2), "7.3: at the 8 ms tick");
}
