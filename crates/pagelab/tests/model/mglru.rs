//! MGLRU's rules, each pinned to the kernel behaviour it models (6.1.192 and 6.12.95).

use crate::common;
use common::*;

use pagelab::mm::folio::pg;
use pagelab::mm::memcontrol::ROOT_MEMCG;
use pagelab::mm::vmstat::Ev;
use pagelab::policy::lru_gen::{folio_gen, folio_lru_refs, gen_of, lru_tier_from_refs, positive_ctrl_err, CtrlPos, LruGen, LvId};
use pagelab::policy::{Inspect, Policy};
use pagelab::sim::Machine;

/// The root memcg's lruvec on node 0 (a machine of one node).
const ROOT_LV: LvId = LvId { memcg: ROOT_MEMCG, nid: 0 };

const KERNELS: [&str; 2] = ["6.1", "6.12"];

/// One file of `pages` pages read by one task in the root cgroup, nothing run yet.
fn one_file(memory: &str, kernel: &str, pages: u64) -> Machine<LruGen> {
    mglru(&one_file_scenario(memory, kernel, "mglru", pages))
}

/// One task touching `pages` anonymous pages, with swap (so anon is aged and walked).
fn one_anon(kernel: &str, pages: u64, walks: bool) -> Machine<LruGen> {
    mglru(&format!(
        r#"
[machine]
memory = "64M"
kernel = "{kernel}"
policy = "mglru"
swap = {{ device = "ssd", size = "64M" }}
[mglru]
walks = {walks}
[[workload]]
name = "a"
cgroup = "/"
kind = "anon-write"
size = "{pages}p"
ops = 0
"#
    ))
}

fn tier_of(m: &Machine<LruGen>, pfn: pagelab::mm::folio::Pfn) -> usize {
    lru_tier_from_refs(folio_lru_refs(m.mm.folios.get(pfn).flags))
}

fn order_base_2(n: u32) -> usize {
    (n.max(1) as f64).log2().ceil() as usize
}

#[test]
fn a_page_read_n_times_through_a_file_descriptor_lands_in_tier_order_base_2_of_n() {
    for kernel in KERNELS {
        let mut m = one_file("64M", kernel, 64);
        for n in 1..=6u32 {
            let page = n as u64;
            for _ in 0..n {
                m.apply(0, read(0, page));
                m.apply(0, read(0, 40)); // another page between, so every read is marked
            }
        }
        m.drain();
        for n in 1..=6u32 {
            let pfn = pfn_of(&m, 0, 0, n as u64).unwrap();
            let want = order_base_2(n).min(3);
            assert_eq!(tier_of(&m, pfn), want, "{kernel}: {n} reads");
        }
        m.check().unwrap();
    }
}

#[test]
fn the_controller_compares_refault_rates_with_a_margin_of_min_lru_batch() {
    let sp = CtrlPos { refaulted: 100, total: 1000, gain: 1 };
    // Fewer than MIN_LRU_BATCH refaults are never an error, whatever the rate.
    assert!(positive_ctrl_err(sp, CtrlPos { refaulted: 63, total: 64, gain: 2 }));
    // 20% vs 10% with twice the gain: 200*(1064)*1 <= 101*1000*2 is false.
    assert!(!positive_ctrl_err(sp, CtrlPos { refaulted: 200, total: 1000, gain: 2 }));
    // 10% vs 10% with twice the gain: protected only when clearly worse.
    assert!(positive_ctrl_err(sp, CtrlPos { refaulted: 100, total: 1000, gain: 2 }));
}

#[test]
fn the_pid_controller_protects_a_tier_whose_refault_rate_exceeds_tier_0s() {
    for kernel in KERNELS {
        let mut m = one_file("64M", kernel, 64);
        let lv = &mut m.policy.lv[ROOT_MEMCG as usize];
        lv.evicted[1][0] = 10_000;
        lv.refaulted[1][0] = 100; // 1% for tier 0
        lv.evicted[1][2] = 1_000;
        lv.refaulted[1][2] = 500; // 50% for tier 2
        assert_eq!(m.policy.get_tier_idx(ROOT_LV, 1), 1, "{kernel}: tiers above 1 are protected");
        let lv = &mut m.policy.lv[ROOT_MEMCG as usize];
        lv.refaulted[1][1] = 500;
        lv.evicted[1][1] = 1_000;
        assert_eq!(m.policy.get_tier_idx(ROOT_LV, 1), 0, "{kernel}: tier 1 refaulting too is protected");
        let lv = &mut m.policy.lv[ROOT_MEMCG as usize];
        lv.refaulted[1] = [500, 500, 500, 0];
        lv.evicted[1] = [1_000, 1_000, 1_000, 0];
        assert_eq!(m.policy.get_tier_idx(ROOT_LV, 1), 3, "{kernel}: equal rates protect nothing");
    }
}

/// Reads `hot` pages three times each (tier 2), then streams new pages through a small
/// memory so reclaim runs; returns the machine.
fn hot_then_stream(kernel: &str, protect: bool) -> Machine<LruGen> {
    let mut m = one_file("8M", kernel, 20_000);
    if protect {
        let lv = &mut m.policy.lv[ROOT_MEMCG as usize];
        lv.avg_total[1][0] = 100_000;
        lv.avg_refaulted[1][0] = 1_000;
        lv.avg_total[1][2] = 1_000;
        lv.avg_refaulted[1][2] = 800;
    }
    for _ in 0..3 {
        for p in 0..200 {
            m.apply(0, read(0, p));
        }
    }
    for p in 1000..8000 {
        m.apply(0, read(0, p));
    }
    m.drain();
    m.check().unwrap();
    m
}

#[test]
fn sort_folio_keeps_a_protected_tier_and_counts_it() {
    for kernel in KERNELS {
        let m = hot_then_stream(kernel, true);
        let resident = (0..200).filter(|&p| pfn_of(&m, 0, 0, p).is_some()).count();
        let lv = &m.policy.lv[ROOT_MEMCG as usize];
        assert!(resident >= 190, "{kernel}: {resident} of 200 hot pages resident");
        assert!(lv.protected[1][1] > 0, "{kernel}: tier 2 protections counted: {:?}", lv.protected);
        let activate = ev(&m, Ev::WorkingsetActivateFile);
        if kernel == "6.1" {
            // 6.1 counts each protection as a workingset activation; 6.12 does not.
            assert!(activate >= lv.protected[1][1], "{kernel}: activate {activate}");
        } else {
            assert_eq!(activate, 0, "{kernel}: no refault, no activation");
        }
    }
}

#[test]
fn without_refault_evidence_tiers_are_not_protected_and_hot_pages_age_out() {
    for kernel in KERNELS {
        let m = hot_then_stream(kernel, false);
        let lv = &m.policy.lv[ROOT_MEMCG as usize];
        assert_eq!(lv.protected[1][1], 0, "{kernel}: {:?}", lv.protected);
        let resident = (0..200).filter(|&p| pfn_of(&m, 0, 0, p).is_some()).count();
        assert!(resident < 50, "{kernel}: {resident} hot pages survived a stream 3x memory");
    }
}

#[test]
fn aging_moves_a_young_mapped_page_to_max_seq() {
    for kernel in KERNELS {
        let mut m = one_anon(kernel, 64, true);
        for p in 0..64 {
            m.apply(0, touch(0, p, true));
        }
        m.drain();
        let lv = &m.policy.lv[ROOT_MEMCG as usize];
        let first = lv.max_seq;
        let p5 = pfn_of(&m, 0, 0, 5).unwrap();
        assert_eq!(folio_gen(m.mm.folios.get(p5).flags), Some(gen_of(first)), "{kernel}: faulted anon starts in max_seq");
        // A first walk finds every freshly faulted page young (a dense page table, so the
        // Bloom filter lets the next walk in); then page 5 alone is touched again.
        assert!(m.policy.try_to_inc_max_seq(&mut m.mm, ROOT_LV, first, true), "{kernel}");
        m.apply(0, touch(0, 5, false));
        assert!(m.mm.folios.test(p5, pg::YOUNG), "{kernel}: the access set the PTE young bit");
        let max = m.policy.lv[ROOT_MEMCG as usize].max_seq;
        assert!(m.policy.try_to_inc_max_seq(&mut m.mm, ROOT_LV, max, true));
        assert_eq!(m.policy.lv[ROOT_MEMCG as usize].max_seq, first + 2);
        // The walk promotes to the max_seq it walks for, which the new generation then follows.
        assert_eq!(folio_gen(m.mm.folios.get(p5).flags), Some(gen_of(max)), "{kernel}: the walk promoted the young page");
        assert!(!m.mm.folios.test(p5, pg::YOUNG), "{kernel}: and cleared its young bit");
        let p6 = pfn_of(&m, 0, 0, 6).unwrap();
        assert_eq!(folio_gen(m.mm.folios.get(p6).flags), Some(gen_of(first)), "{kernel}: an old page keeps its generation");
        m.check().unwrap();
    }
}

#[test]
fn without_page_table_walks_aging_leaves_young_pages_for_look_around() {
    let mut m = one_anon("6.1", 64, false);
    for p in 0..64 {
        m.apply(0, touch(0, p, true));
    }
    m.drain();
    let first = m.policy.lv[ROOT_MEMCG as usize].max_seq;
    m.apply(0, touch(0, 5, false));
    assert!(m.policy.try_to_inc_max_seq(&mut m.mm, ROOT_LV, first, true));
    let p5 = pfn_of(&m, 0, 0, 5).unwrap();
    assert_eq!(folio_gen(m.mm.folios.get(p5).flags), Some(gen_of(first)));
    assert!(m.mm.folios.test(p5, pg::YOUNG), "the young bit waits for reclaim's rmap walk");
}

/// Evicts file page 3 (its shadow made now), then lets `advance` generations of the oldest
/// file generation pass before it refaults. Returns (refault, activate) counted.
fn refault_after(kernel: &str, advance: u64) -> (u64, u64) {
    let mut m = one_file("64M", kernel, 64);
    m.apply(0, read(0, 3));
    m.drain();
    let pfn = pfn_of(&m, 0, 0, 3).unwrap();
    let shadow = m.policy.eviction(&mut m.mm, pfn);
    let lv = &mut m.policy.lv[ROOT_MEMCG as usize];
    lv.min_seq[1] += advance;
    lv.max_seq += advance;
    m.policy.refault(&mut m.mm, pfn, shadow);
    (ev(&m, Ev::WorkingsetRefaultFile), ev(&m, Ev::WorkingsetActivateFile))
}

#[test]
fn v6_1_counts_only_refaults_from_the_current_oldest_generation() {
    assert_eq!(refault_after("6.1", 0), (1, 0), "recent: a refault; activations come from sort_folio()");
    assert_eq!(refault_after("6.1", 1), (0, 0), "older: nothing is counted at all");
}

#[test]
fn v6_12_counts_every_refault_and_activates_the_recent_ones() {
    assert_eq!(refault_after("6.12", 0), (1, 1));
    assert_eq!(refault_after("6.12", 1), (1, 0));
}

#[test]
fn a_refault_in_a_fault_or_with_maximal_refs_is_restored() {
    for kernel in KERNELS {
        let mut m = one_file("64M", kernel, 64);
        for _ in 0..5 {
            m.apply(0, read(0, 3));
            m.apply(0, read(0, 9));
        }
        m.drain();
        let pfn = pfn_of(&m, 0, 0, 3).unwrap();
        assert_eq!(folio_lru_refs(m.mm.folios.get(pfn).flags), 4);
        let shadow = m.policy.eviction(&mut m.mm, pfn);
        m.mm.folios.clear(pfn, pg::REFS_MASK | pg::WORKINGSET | pg::REFERENCED);
        m.policy.refault(&mut m.mm, pfn, shadow);
        assert_eq!(ev(&m, Ev::WorkingsetRestoreFile), 1, "{kernel}");
        assert_eq!(folio_lru_refs(m.mm.folios.get(pfn).flags), 4, "{kernel}: restored to the top tier");
    }
}

#[test]
fn should_run_aging_scales_the_scan_by_priority_only_in_6_1() {
    for (kernel, want) in [("6.1", 4096u64 >> 10), ("6.12", 4096)] {
        let mut m = one_file("64M", kernel, 64);
        let lv = &mut m.policy.lv[ROOT_MEMCG as usize];
        lv.nr_pages[gen_of(lv.min_seq[1])][1] = 4096;
        let (need, nr) = m.policy.should_run_aging(ROOT_LV, false, 10);
        assert_eq!(nr, want, "{kernel}");
        assert!(!need, "{kernel}: four generations need no aging");
    }
}

#[test]
fn get_swappiness_is_zero_when_reclaim_may_not_swap_only_in_6_12() {
    for (kernel, want) in [("6.1", 60u64), ("6.12", 0)] {
        let m = one_anon(kernel, 16, true);
        let mut sc = pagelab::mm::vmscan::ScanControl::new(ROOT_MEMCG, pagelab::mm::vmstat::Reclaimer::Direct, 32);
        sc.may_swap = false;
        assert_eq!(m.policy.get_swappiness(&m.mm, &sc), want, "{kernel}");
    }
}

#[test]
fn the_kairui_rule_reactivates_a_refault_whose_distance_beats_the_active_generations() {
    // The alias (kairui-v3); exact statistics, since the rule reads them as reclaim sees them
    // (more cases: tests/model/refault_models.rs).
    let text = r#"
[machine]
memory = "64M"
kernel = "6.1"
policy = "mglru"
rstat = "exact"
[mglru]
refault_distance = true
[[workload]]
name = "r"
cgroup = "/"
kind = "file-read"
file_size = "4000p"
fadvise = "random"
ops = 0
"#;
    let mut m = mglru(text);
    for p in 0..2000 {
        m.apply(0, read(0, p));
    }
    m.drain();
    // All 2000 pages sit in the inactive (two oldest) generations: a file refault must beat
    // the active set, which is empty, so even distance 1 is not re-activated.
    let p7 = pfn_of(&m, 0, 0, 7).unwrap();
    let shadow = m.policy.eviction(&mut m.mm, p7);
    m.policy.refault(&mut m.mm, p7, shadow);
    assert_eq!(ev(&m, Ev::WorkingsetRefaultFile), 1);
    assert_eq!(ev(&m, Ev::WorkingsetActivateFile), 0, "nothing active to compete with");
    // Activate 1000 pages (to max_seq): now active < inactive, and a file refault is
    // re-activated iff its distance < active + inactive anon (no swap: 0) = 1000.
    for p in 1000..2000 {
        let pfn = pfn_of(&m, 0, 0, p).unwrap();
        m.policy.activate(&mut m.mm, pfn);
    }
    let p8 = pfn_of(&m, 0, 0, 8).unwrap();
    let shadow = m.policy.eviction(&mut m.mm, p8);
    m.policy.refault(&mut m.mm, p8, shadow);
    assert_eq!(ev(&m, Ev::WorkingsetActivateFile), 1, "distance 1 < 1000 active pages");
    assert!(m.mm.folios.test(p8, pg::ACTIVE), "re-activated: lru_gen_add_folio() puts it in max_seq");
    let p9 = pfn_of(&m, 0, 0, 9).unwrap();
    let shadow = m.policy.eviction(&mut m.mm, p9);
    let p10 = pfn_of(&m, 0, 0, 10).unwrap();
    for _ in 0..1000 {
        m.policy.eviction(&mut m.mm, p10); // each eviction ages the nonresident clock
    }
    m.policy.refault(&mut m.mm, p9, shadow);
    assert_eq!(ev(&m, Ev::WorkingsetRefaultFile), 3);
    assert_eq!(ev(&m, Ev::WorkingsetActivateFile), 1, "distance 1001 is beyond the active set");
}

#[test]
fn generation_lists_and_sizes_stay_consistent_through_reclaim_and_refaults() {
    for kernel in KERNELS {
        let mut m = one_file("8M", kernel, 6000);
        for round in 0..3u64 {
            for p in 0..6000u64 {
                m.apply(0, read(0, (p * 7 + round) % 6000));
            }
            m.check().unwrap();
        }
        assert!(ev(&m, Ev::PgStealFile) > 0);
        let lv = &m.policy.lv[ROOT_MEMCG as usize];
        let gens = lv.max_seq - lv.min_seq[1] + 1;
        assert!((2..=4).contains(&gens), "{kernel}: {gens}");
        assert!(m.policy.debugfs(&m.mm).unwrap().contains("memcg     1 /"));
    }
}

/// mm/vmscan.c: scan_folios() (6.1, 6.12): a generation keeps one list per zone and the
/// scan of the oldest generation takes the zones in turn from reclaim_idx (ZONE_MOVABLE for
/// page cache) downwards, so ZONE_DMA's folios go last. A read stream adds every new folio
/// to the oldest generation (lru_gen_add_folio() with three generations), whose DMA32 list
/// therefore never runs dry: the folios that filled ZONE_DMA outlive the stream, where one
/// FIFO over both zones would have evicted them with their neighbours.
#[test]
fn scan_folios_takes_the_oldest_generation_zone_by_zone_leaving_zone_dma_to_the_last() {
    for kernel in KERNELS {
        // 64M on x86-64's layout: 3,840 pages of ZONE_DMA, the rest ZONE_DMA32.
        let mut m = one_file("64M", kernel, 50_000);
        for p in 0..20_000 {
            m.apply(0, read(0, p));
        }
        m.drain();
        let in_dma = |m: &Machine<LruGen>, p: u64| pfn_of(m, 0, 0, p).is_some_and(|pfn| m.mm.folios.zone_of(pfn) == 0);
        let dma: Vec<u64> = (0..20_000).filter(|&p| in_dma(&m, p)).collect();
        assert!(dma.len() > 1000, "{kernel}: the read filled ZONE_DMA too ({} pages there)", dma.len());
        // Twice the memory more: every folio of the first 20,000 pages has had its turn.
        for p in 20_000..50_000 {
            m.apply(0, read(0, p));
        }
        m.drain();
        m.check().unwrap();
        let dma32_left = (0..20_000).filter(|&p| pfn_of(&m, 0, 0, p).is_some() && !dma.contains(&p)).count();
        assert_eq!(dma32_left, 0, "{kernel}: the stream went through ZONE_DMA32's folios");
        let dma_left = dma.iter().filter(|&&p| in_dma(&m, p)).count();
        assert_eq!(dma_left, dma.len(), "{kernel}: {dma_left} of {} ZONE_DMA folios left", dma.len());
    }
}

#[test]
fn a_reclaim_limited_to_zone_dma_moves_the_oldest_generations_dma32_folios_on_and_frees_only_zone_dma_sort_folio_6_1_6_12() {
    // mm/vmscan.c: scan_folios() (6.1/6.12) starts at sc->reclaim_idx's zone, and
    // sort_folio() moves a folio of a zone above reclaim_idx to the next generation (counted
    // as sorted: pgrefill) instead of isolating it; kswapd balancing ZONE_DMA alone (woken by
    // its boost) reclaims this way.
    use pagelab::mm::vmscan::{shrink_node, ScanControl};
    use pagelab::mm::vmstat::Reclaimer;
    for kernel in KERNELS {
        let mut m = one_file("64M", kernel, 50_000);
        for p in 0..20_000 {
            m.apply(0, read(0, p));
        }
        m.drain();
        let oldest = |m: &Machine<LruGen>| gen_of(m.policy.lv[ROOT_MEMCG as usize].min_seq[1]);
        let gen_of_pfn = |m: &Machine<LruGen>, pfn| folio_gen(m.mm.folios.get(pfn).flags);
        let old_dma32: Vec<_> = (0..20_000u64)
            .filter_map(|p| pfn_of(&m, 0, 0, p))
            .filter(|&pfn| m.mm.folios.zone_of(pfn) == 1 && gen_of_pfn(&m, pfn) == Some(oldest(&m)))
            .collect();
        assert!(!old_dma32.is_empty(), "{kernel}: DMA32 folios in the oldest generation");
        let (free_dma, free_dma32, refill) = (m.mm.folios.nr_free_in(0), m.mm.folios.nr_free_in(1), ev(&m, Ev::PgRefill));
        // ZONE_DMA's list of the oldest generation comes first; once it runs dry the scan
        // reaches DMA32's and sorts its folios on.
        let mut reclaimed = 0;
        for _ in 0..200 {
            let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Kswapd, 32);
            sc.reclaim_idx = 0;
            shrink_node(&mut m.mm, &mut m.policy, &mut sc);
            reclaimed += sc.nr_reclaimed;
            if ev(&m, Ev::PgRefill) > refill {
                break;
            }
        }
        assert!(reclaimed > 0, "{kernel}: ZONE_DMA's folios were reclaimed");
        assert_eq!(m.mm.folios.nr_free_in(1), free_dma32, "{kernel}: no DMA32 frame was freed");
        assert_eq!(m.mm.folios.nr_free_in(0), free_dma + reclaimed, "{kernel}: the reclaimed frames are ZONE_DMA's");
        let moved_on = old_dma32.iter().filter(|&&pfn| m.mm.folios.test(pfn, pg::LRU) && gen_of_pfn(&m, pfn) != Some(oldest(&m))).count();
        assert!(moved_on > 0 && ev(&m, Ev::PgRefill) >= refill + moved_on as u64, "{kernel}: {moved_on} DMA32 folios moved on a generation, counted as sorted");
        m.check().unwrap();
    }
}

#[test]
fn the_bloom_filter_skips_a_page_table_that_was_sparse_in_young_pages_last_walk() {
    let mut m = one_anon("6.1", 64, true);
    for p in 0..64 {
        m.apply(0, touch(0, p, true));
    }
    m.drain();
    let first = m.policy.lv[ROOT_MEMCG as usize].max_seq;
    assert!(m.policy.try_to_inc_max_seq(&mut m.mm, ROOT_LV, first, true)); // dense: kept
                                                                           // The task ran since (context_switch()'s lru_gen_use_mm()), so the next walk takes it.
    m.mm.tasks[0].ran = true;
    assert!(m.policy.try_to_inc_max_seq(&mut m.mm, ROOT_LV, first + 1, true)); // none young: dropped
    m.apply(0, touch(0, 5, false));
    let walked = m.policy.lv[ROOT_MEMCG as usize].mm_stats[4];
    assert!(m.policy.try_to_inc_max_seq(&mut m.mm, ROOT_LV, first + 2, true));
    assert_eq!(m.policy.lv[ROOT_MEMCG as usize].mm_stats[4], walked, "the page table was not walked");
    let p5 = pfn_of(&m, 0, 0, 5).unwrap();
    assert!(m.mm.folios.test(p5, pg::YOUNG), "its young bit waits for look-around");
    assert_eq!(folio_gen(m.mm.folios.get(p5).flags), Some(gen_of(first)));
}

/// mm/vmscan.c: iterate_mm_list() (6.1.192, 6.12.95, 7.3.4) clears the next generation's
/// Bloom filter only when its pass takes an mm (`mm && first`). A pass that takes no task,
/// none having run since the last walk (should_skip_mm(): the mm's bitmap bit is clear), as
/// in a direct reclaimer's second aging within one call, creates the generation and leaves
/// that filter as it was, so the walk after it still visits the page tables the filter holds
/// (here no filter of that parity exists yet: every table). Clearing it instead skipped half
/// the page tables on anon-swap-zram-memcg160 (pgscan_anon +55 % against the kernel).
#[test]
fn an_aging_pass_that_walks_no_task_leaves_the_next_bloom_filter_alone() {
    for kernel in ["6.1", "6.12", "7.3"] {
        let mut m = one_anon(kernel, 64, true);
        for p in 0..64 {
            m.apply(0, touch(0, p, true));
        }
        m.drain();
        let stats = |m: &Machine<LruGen>| m.policy.lv[ROOT_MEMCG as usize].mm_stats;
        let first = m.policy.lv[ROOT_MEMCG as usize].max_seq;
        assert!(m.policy.try_to_inc_max_seq(&mut m.mm, ROOT_LV, first, true));
        let seen = stats(&m)[3];
        assert!(seen > 0, "{kernel}: the first pass walks the task");
        // At once again, the task not having run since: the pass takes no mm.
        assert!(m.policy.try_to_inc_max_seq(&mut m.mm, ROOT_LV, first + 1, true));
        assert_eq!(stats(&m)[3], seen, "{kernel}: the second pass visits no page table");
        m.apply(0, touch(0, 5, false));
        let walked = stats(&m)[4];
        assert!(m.policy.try_to_inc_max_seq(&mut m.mm, ROOT_LV, first + 2, true));
        assert!(stats(&m)[4] > walked, "{kernel}: the third pass walks the page table");
        let p5 = pfn_of(&m, 0, 0, 5).unwrap();
        assert!(!m.mm.folios.test(p5, pg::YOUNG), "{kernel}: the walk cleared the young bit");
        assert_eq!(folio_gen(m.mm.folios.get(p5).flags), Some(gen_of(first + 2)), "{kernel}: promoted");
        m.check().unwrap();
    }
}

/// mm/vmscan.c: walk_pte_range() (6.1.192, 6.12.95, 7.3.4): the walk's CPU is a load per
/// PTE and, per young PTE it clears and promotes, a scanned folio's work (`scan_page_ns`:
/// the folio's struct, the PTE's test-and-clear, folio_update_gen()). At a load alone, 6.1's
/// kswapd walked a 224M heap's 42,000 young PTEs well within the CFS slice it takes from
/// the task that woke it, and aged again in the same slice, before the task ran again;
/// in the guest the walk outlasts the slice, so the task runs between the two agings
/// (anon-swap-zram, suite 10).
#[test]
fn a_page_table_walk_charges_a_scanned_folio_per_young_pte() {
    use pagelab::mm::profile::Func;
    for kernel in ["6.1", "6.12", "7.3"] {
        let walk_cpu = |scan_page_ns: u64| {
            let mut m = mglru(&format!(
                "[machine]\nmemory = \"64M\"\nkernel = \"{kernel}\"\npolicy = \"mglru\"\n\
                 swap = {{ device = \"ssd\", size = \"64M\" }}\n[time]\nscan_page_ns = {scan_page_ns}\n\
                 [[workload]]\nname = \"a\"\ncgroup = \"/\"\nkind = \"anon-write\"\nsize = \"64p\"\nops = 0\n"
            ));
            for p in 0..64 {
                m.apply(0, touch(0, p, true));
            }
            m.drain();
            let walk = |m: &Machine<LruGen>| m.mm.profile.tasks[Func::WalkPageRange as usize] + m.mm.profile.kswapd[Func::WalkPageRange as usize];
            let (cpu, young) = (walk(&m), m.policy.lv[ROOT_MEMCG as usize].mm_stats[2]);
            let max = m.policy.lv[ROOT_MEMCG as usize].max_seq;
            assert!(m.policy.try_to_inc_max_seq(&mut m.mm, ROOT_LV, max, true));
            (walk(&m) - cpu, m.policy.lv[ROOT_MEMCG as usize].mm_stats[2] - young)
        };
        let (cheap, young) = walk_cpu(0);
        let (dear, _) = walk_cpu(1_000);
        assert_eq!(young, 64, "{kernel}: the walk found every page young");
        assert_eq!(dear - cheap, 64 * 1_000, "{kernel}: scan_page_ns per young PTE");
    }
}

/// mm/vmscan.c: shrink_node() on 6.12.95 hands MGLRU's root reclaim to lru_gen_shrink_node()
/// and returns, so kswapd never sets the node's dirty flag there; on 6.1.192 MGLRU runs
/// inside shrink_lruvec() and shrink_node() goes on to its kswapd bookkeeping, where a pass
/// with no unqueued dirty file pages among none taken (0 == 0) marks the node dirty.
#[test]
fn six_twelve_mglru_root_reclaim_skips_shrink_node_kswapd_bookkeeping() {
    use pagelab::mm::vmscan::{shrink_node, ScanControl};
    use pagelab::mm::vmstat::Reclaimer;
    for kernel in KERNELS {
        let mut m = one_file("64M", kernel, 100);
        for page in 0..100 {
            m.apply(0, read(0, page));
        }
        m.drain();
        let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Kswapd, 32);
        assert_eq!(m.policy.shrink_node_is_all(&sc), kernel == "6.12", "{kernel}: root reclaim");
        m.mm.nodes[0].reclaim.dirty = false;
        shrink_node(&mut m.mm, &mut m.policy, &mut sc);
        assert_eq!(m.mm.nodes[0].reclaim.dirty, kernel == "6.1", "{kernel}: PGDAT_DIRTY after a kswapd pass");
        m.check().unwrap();
    }
}
