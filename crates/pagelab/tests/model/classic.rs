//! The classic LRU's rules, each pinned to the kernel behaviour it models.

use crate::common;
use common::*;

use pagelab::mm::folio::pg;
use pagelab::mm::mapping::Entry;
use pagelab::mm::memcontrol::ROOT_MEMCG;
use pagelab::mm::vmstat::{Ev, Lru};
use pagelab::policy::classic::{scan_fraction_by_cost, Classic};

/// One file of `pages` pages read by one task in the root cgroup, nothing run yet.
fn one_file(memory: &str, kernel: &str, pages: u64) -> pagelab::sim::Machine<Classic> {
    classic(&one_file_scenario(memory, kernel, "classic", pages))
}

#[test]
fn a_file_page_read_twice_while_inactive_is_activated() {
    for kernel in ["6.1", "6.12"] {
        let mut m = one_file("64M", kernel, 100);
        m.apply(0, read(0, 7));
        m.drain();
        let pfn = pfn_of(&m, 0, 0, 7).unwrap();
        let f = *m.mm.folios.get(pfn);
        assert!(f.test(pg::REFERENCED) && !f.test(pg::ACTIVE), "{kernel}: first read only sets PG_referenced");
        assert_eq!(m.policy.list_pages(&m.mm, ROOT_MEMCG, Lru::InactiveFile), vec![pfn]);
        m.apply(0, read(0, 3)); // a different page in between, so the second read is marked
        m.apply(0, read(0, 7));
        m.drain();
        let f = *m.mm.folios.get(pfn);
        assert!(f.test(pg::ACTIVE) && !f.test(pg::REFERENCED), "{kernel}: second read activates");
        assert_eq!(m.policy.list_pages(&m.mm, ROOT_MEMCG, Lru::ActiveFile), vec![pfn]);
        assert_eq!(ev(&m, Ev::PgActivate), 1, "{kernel}: the batched activation counts pgactivate");
        m.check().unwrap();
    }
}

#[test]
fn a_page_activated_while_still_in_the_lru_add_batch_counts_no_pgactivate() {
    let mut m = one_file("64M", "6.1", 100);
    m.apply(0, read(0, 1));
    m.apply(0, read(0, 2));
    m.apply(0, read(0, 1)); // page 1 still waits in the per-CPU batch (fewer than 15 adds)
    let pfn = pfn_of(&m, 0, 0, 1).unwrap();
    assert!(m.mm.folios.test(pfn, pg::IN_LRU_ADD) && m.mm.folios.test(pfn, pg::ACTIVE));
    assert_eq!(ev(&m, Ev::PgActivate), 0);
    m.drain();
    assert_eq!(m.policy.list_len(ROOT_MEMCG, Lru::ActiveFile), 1);
}

#[test]
fn rereading_the_same_page_in_a_row_marks_it_once() {
    let mut m = one_file("64M", "6.1", 100);
    m.apply(0, read(0, 5));
    m.apply(0, read(0, 5));
    m.drain();
    let pfn = pfn_of(&m, 0, 0, 5).unwrap();
    assert!(!m.mm.folios.test(pfn, pg::ACTIVE), "filemap_read() marks only the first touch of a folio in a row");
}

#[test]
fn the_lru_add_batch_holds_pagevec_size_minus_one_pages() {
    for (kernel, size) in [("6.1", 15usize), ("6.12", 31)] {
        let mut m = one_file("64M", kernel, 100);
        for p in 0..(size as u64 - 1) {
            m.apply(0, read(0, p));
        }
        assert_eq!(m.mm.lru_add_batch.len(), size - 1, "{kernel}");
        assert_eq!(m.policy.list_len(ROOT_MEMCG, Lru::InactiveFile), 0, "{kernel}: still invisible to reclaim");
        m.apply(0, read(0, size as u64));
        assert!(m.mm.lru_add_batch.is_empty(), "{kernel}: the {size}th add drains");
        assert_eq!(m.policy.list_len(ROOT_MEMCG, Lru::InactiveFile), size as u64);
    }
}

/// Reads `pages` pages once each, in order.
fn stream(m: &mut pagelab::sim::Machine<Classic>, from: u64, pages: u64) {
    for p in from..from + pages {
        m.apply(0, read(0, p));
    }
}

#[test]
fn a_refault_within_the_workingset_size_is_activated_and_one_beyond_is_not() {
    // 16M machine (4096 frames): stream 6000 pages through it so the first ones are evicted.
    let mut m = one_file("16M", "6.1", 20_000);
    stream(&mut m, 0, 6000);
    m.check().unwrap();
    let evicted = ev(&m, Ev::PgStealFile);
    assert!(evicted > 1000, "streaming must have evicted pages ({evicted})");
    assert!(pfn_of(&m, 0, 0, 0).is_none());
    // Every page was read once: nothing is active, so the workingset size (active file,
    // no swap) is 0 and no refault is recent.
    assert_eq!(m.policy.list_len(ROOT_MEMCG, Lru::ActiveFile), 0);
    m.apply(0, read(0, 0));
    assert_eq!(ev(&m, Ev::WorkingsetRefaultFile), 1);
    assert_eq!(ev(&m, Ev::WorkingsetActivateFile), 0, "distance > 0 = workingset size");

    // Now make half of the next pages active (read twice), so the active list is large,
    // evict a page and bring it back soon: its refault distance is below the active size.
    let mut m = one_file("16M", "6.1", 20_000);
    for p in 0..1500 {
        m.apply(0, read(0, p));
        m.apply(0, read(0, 19_999));
        m.apply(0, read(0, p));
    }
    m.drain();
    let active = m.policy.list_len(ROOT_MEMCG, Lru::ActiveFile);
    assert!(active >= 1400, "pages read twice are active ({active})");
    stream(&mut m, 2000, 4000);
    // The most recently evicted page: few evictions happened since, fewer than active pages.
    let victim = (2000..6000).rev().find(|&p| pfn_of(&m, 0, 0, p).is_none()).expect("streaming evicts pages");
    m.apply(0, read(0, victim));
    m.drain();
    assert_eq!(ev(&m, Ev::WorkingsetRefaultFile), 1);
    assert_eq!(ev(&m, Ev::WorkingsetActivateFile), 1, "distance < active file pages: recent");
    let pfn = pfn_of(&m, 0, 0, victim).unwrap();
    assert!(m.mm.folios.test(pfn, pg::ACTIVE), "a recent refault is added to the active list");
    // The first page the stream evicted has seen more evictions since than there are active
    // pages: not recent.
    let old = (2000..6000).find(|&p| pfn_of(&m, 0, 0, p).is_none()).unwrap();
    m.apply(0, read(0, old));
    assert_eq!(ev(&m, Ev::WorkingsetRefaultFile), 2);
    assert_eq!(ev(&m, Ev::WorkingsetActivateFile), 1);
    m.check().unwrap();
}

#[test]
fn inactive_is_low_follows_the_ratio_table() {
    // mm/vmscan.c: inactive_is_low(): ratio int_sqrt(10 * GB) of active to inactive.
    for (gb_pages, ratio) in [(2560u64, 1u64), (25_600, 1), (262_144, 3), (2_621_440, 10), (26_214_400, 31), (268_435_456, 101)] {
        let mut m = one_file("16M", "6.1", 1);
        // Put `gb_pages` on the lists' rstat counters by hand: inactive = total/(ratio+1).
        let inactive = gb_pages / (ratio + 1);
        let active = gb_pages - inactive;
        m.mm.memcgs.mod_state(ROOT_MEMCG, pagelab::mm::memcontrol::StatItem::Lru(Lru::InactiveFile), inactive as i64);
        m.mm.memcgs.mod_state(ROOT_MEMCG, pagelab::mm::memcontrol::StatItem::Lru(Lru::ActiveFile), active as i64);
        m.mm.memcgs.periodic_flush(0);
        let low = Classic::inactive_is_low(&m.mm, ROOT_MEMCG, Lru::InactiveFile);
        assert_eq!(low, inactive * ratio < active, "{gb_pages} pages, ratio {ratio}");
        // One page fewer of inactive tips it exactly at the ratio.
        m.mm.memcgs.mod_state(ROOT_MEMCG, pagelab::mm::memcontrol::StatItem::Lru(Lru::InactiveFile), -(inactive as i64) + (active / ratio - 1) as i64);
        m.mm.memcgs.periodic_flush(0);
        assert!(Classic::inactive_is_low(&m.mm, ROOT_MEMCG, Lru::InactiveFile), "{gb_pages}: below 1:{ratio} is low");
    }
}

#[test]
fn get_scan_count_splits_by_io_cost_and_swappiness() {
    // Equal costs at swappiness 100: equal shares.
    let ([a, f], d) = scan_fraction_by_cost(100, 100, 100);
    assert_eq!(a, f);
    assert_eq!(d, a + f);
    // T = 400, A = 700, F = 500, T' = 1200: ap = 60*1201/701 = 102, fp = 140*1201/501 = 335.
    assert_eq!(scan_fraction_by_cost(300, 100, 60), ([102, 335], 437));
    // swappiness 0 gives anon nothing; 200 gives file nothing.
    assert_eq!(scan_fraction_by_cost(5, 5, 0).0[0], 0);
    assert_eq!(scan_fraction_by_cost(5, 5, 200).0[1], 0);
    // A zero cost cannot starve the other list (the `T +` damping).
    let ([a, f], _) = scan_fraction_by_cost(0, 1000, 100);
    assert!(a > f && f > 0, "{a} {f}");
}

#[test]
fn restore_cost_is_one_page_on_6_1_and_one_io_on_6_12() {
    for (kernel, cost) in [("6.1", 1u64), ("6.12", 32)] {
        let mut m = one_file("16M", kernel, 10);
        m.mm.memcgs.mod_state(ROOT_MEMCG, pagelab::mm::memcontrol::StatItem::Lru(Lru::InactiveFile), 100_000);
        m.mm.memcgs.periodic_flush(0);
        pagelab::mm::swap::lru_note_cost_refault(&mut m.mm, ROOT_MEMCG, 0, true, 1);
        assert_eq!(m.mm.memcgs.get(ROOT_MEMCG).lruvec.file_cost, cost, "{kernel}");
    }
}

#[test]
fn lru_note_cost_halves_both_costs_past_a_quarter_of_the_lru() {
    let mut m = one_file("16M", "6.12", 10);
    m.mm.memcgs.mod_state(ROOT_MEMCG, pagelab::mm::memcontrol::StatItem::Lru(Lru::InactiveFile), 400);
    m.mm.memcgs.periodic_flush(0);
    pagelab::mm::swap::lru_note_cost(&mut m.mm, ROOT_MEMCG, 0, false, 3, 0); // 96
    assert_eq!(m.mm.memcgs.get(ROOT_MEMCG).lruvec.anon_cost, 96);
    pagelab::mm::swap::lru_note_cost(&mut m.mm, ROOT_MEMCG, 0, true, 0, 10); // 106 > 400/4
    let lv = &m.mm.memcgs.get(ROOT_MEMCG).lruvec;
    assert_eq!((lv.anon_cost, lv.file_cost), (48, 5));
}

#[test]
fn shmem_active_starts_on_the_active_anon_list_the_rest_inactive() {
    // machine.shmem_active: the part of the calibrated initramfs the guest's kernel holds on
    // the active anon list; the rest is inactive and goes first.
    let text = |active: &str| {
        format!(
            "[machine]\nmemory = \"32M\"\nkernel = \"6.1\"\nshmem = \"400p\"\nshmem_active = \"{active}\"\n\
             swap = {{ device = \"ssd\", size = \"64M\" }}\n\
             [[workload]]\nname = \"a\"\ncgroup = \"/\"\nkind = \"anon-write\"\nsize = \"1p\"\nops = 0\n"
        )
    };
    let m = classic(&text("300p"));
    assert_eq!(m.policy.list_len(ROOT_MEMCG, Lru::ActiveAnon), 300);
    assert_eq!(m.policy.list_len(ROOT_MEMCG, Lru::InactiveAnon), 100);
    m.check().unwrap();
    let m = classic(&text("0p"));
    assert_eq!(m.policy.list_len(ROOT_MEMCG, Lru::ActiveAnon), 0);
    assert_eq!(m.policy.list_len(ROOT_MEMCG, Lru::InactiveAnon), 400);
    let e = pagelab::Scenario::parse(&text("401p"), "t.toml", "t", &[]).unwrap_err().to_string();
    assert!(e.contains("machine.shmem_active") && e.contains("more than machine.shmem"), "{e}");
}

#[test]
fn pages_written_early_in_a_reclaim_pass_are_freed_by_the_same_pass() {
    // folio_end_writeback() runs from the device's interrupt: a swap write that finished
    // while reclaim goes on rotates its page to the inactive tail, and the pass frees it
    // instead of writing page after page while priority drops.
    let mut m = classic(
        "[machine]\nmemory = \"32M\"\nkernel = \"6.1\"\nswap = { device = \"ssd\", size = \"64M\" }\n\
         [time.swap]\nread_latency_ns = 1000\nwrite_latency_ns = 1000\npage_transfer_ns = 400\n\
         [[workload]]\nname = \"a\"\ncgroup = \"/\"\nkind = \"anon-write\"\nsize = \"2000p\"\nops = 0\n",
    );
    for page in 0..2000 {
        m.apply(0, touch(0, page, true));
    }
    m.drain();
    for page in 0..2000 {
        let pfn = pfn_of(&m, 0, 0, page).unwrap();
        m.mm.folios.clear(pfn, pg::YOUNG | pg::REFERENCED);
    }
    assert_eq!(m.policy.list_len(ROOT_MEMCG, Lru::InactiveAnon), 2000);
    let reclaimed = pagelab::mm::vmscan::try_to_free_pages(&mut m.mm, &mut m.policy);
    let written = ev(&m, Ev::PswpOut);
    assert!(reclaimed >= 32, "the pass frees what it wrote: {reclaimed} reclaimed, {written} written");
    assert!(written < 200, "it writes about what it frees, not the whole list: {written} written, {reclaimed} reclaimed");
    m.check().unwrap();
}

#[test]
fn a_major_mmap_fault_is_retried_and_the_retry_maps_the_pages_read_around_it() {
    // filemap_fault() drops the mmap lock for the read-around IO and returns VM_FAULT_RETRY;
    // the retried fault runs do_fault_around() first, which maps the 16-page block around
    // the fault (all but the PG_readahead page). 6.1 counts PGFAULT per attempt, 6.12 once.
    for (kernel, faults) in [("6.1", 2), ("6.12", 1)] {
        let mut m = classic(&format!(
            "[machine]\nmemory = \"64M\"\nkernel = \"{kernel}\"\n\
             [[workload]]\nname = \"m\"\ncgroup = \"/\"\nkind = \"mmap-read\"\nfile_size = \"1000p\"\nops = 0\n"
        ));
        m.apply(0, mmap_read(0, 100, pagelab::Advice::Normal));
        assert_eq!(ev(&m, Ev::PgMajFault), 1, "{kernel}");
        assert_eq!(ev(&m, Ev::PgFault), faults, "{kernel}: faults counted");
        let mapped = |m: &pagelab::sim::Machine<Classic>, page| m.mm.folios.test(pfn_of(m, 0, 0, page).unwrap(), pg::MAPPED);
        // Read-around: 32 pages from 84, the PG_readahead mark on page 108.
        assert!((96..112).filter(|&p| p != 108).all(|p| mapped(&m, p)), "{kernel}: the retry maps the block 96..112");
        assert!(!mapped(&m, 108), "{kernel}: the PG_readahead page is left for its own fault");
        assert!(!mapped(&m, 90) && !mapped(&m, 112), "{kernel}: only the fault-around block");
        // A neighbour in the block is then touched without a fault.
        m.apply(0, mmap_read(0, 97, pagelab::Advice::Normal));
        assert_eq!(ev(&m, Ev::PgFault), faults, "{kernel}: no fault for a page the retry mapped");
        m.check().unwrap();
    }
}

/// mm/vmscan.c: folio_check_dirty_writeback() (6.1.192, 6.12.95) reports only file folios'
/// dirty and writeback state to shrink_folio_list()'s statistics: a swap-backed folio being
/// swapped out is neither, so anon batches cannot mark the node dirty or congested.
#[test]
fn folio_check_dirty_writeback_reports_file_folios_only() {
    use pagelab::mm::folio::{pg, Folio};
    use pagelab::mm::vmscan::folio_check_dirty_writeback;
    let folio = |flags| Folio { flags, pos: 0, vpn: 0, swap: 0, memcg: 0, lru_slot: 0 };
    let anon_under_swap_out = folio(pg::SWAPBACKED | pg::SWAPCACHE | pg::DIRTY | pg::WRITEBACK | pg::RECLAIM);
    assert_eq!(folio_check_dirty_writeback(&anon_under_swap_out), (false, false));
    assert_eq!(folio_check_dirty_writeback(&folio(pg::SWAPBACKED | pg::DIRTY)), (false, false));
    assert_eq!(folio_check_dirty_writeback(&folio(pg::DIRTY)), (true, false));
    assert_eq!(folio_check_dirty_writeback(&folio(pg::DIRTY | pg::WRITEBACK)), (true, true));
    assert_eq!(folio_check_dirty_writeback(&folio(pg::WRITEBACK)), (false, true));
}

/// mm/swap.c: folio_activate() (6.1.192 and 6.12.95 alike) queues a folio with PG_lru still
/// set; folio_batch_move_lru() clears it only at drain, so reclaim can isolate a queued
/// folio, and the drain then skips it.
#[test]
fn folio_activate_leaves_the_folio_on_its_lru_until_the_batch_drains() {
    for kernel in ["6.1", "6.12"] {
        let mut m = one_file("64M", kernel, 100);
        m.apply(0, read(0, 7));
        m.apply(0, read(0, 8));
        m.drain();
        let (queued, isolated) = (pfn_of(&m, 0, 0, 7).unwrap(), pfn_of(&m, 0, 0, 8).unwrap());
        pagelab::mm::swap::folio_activate(&mut m.mm, &mut m.policy, queued);
        pagelab::mm::swap::folio_activate(&mut m.mm, &mut m.policy, isolated);
        assert!(m.mm.folios.test(queued, pg::LRU) && !m.mm.folios.test(queued, pg::ACTIVE), "{kernel}: still on its list while queued");
        assert_eq!(m.policy.list_len(ROOT_MEMCG, Lru::InactiveFile), 2, "{kernel}");
        // Reclaim takes one of them meanwhile (isolate_lru_folios() clears PG_lru).
        m.mm.folios.clear(isolated, pg::LRU);
        pagelab::mm::swap::lru_add_drain(&mut m.mm, &mut m.policy);
        assert!(m.mm.folios.test(queued, pg::ACTIVE), "{kernel}: the drain activates the queued folio");
        assert!(!m.mm.folios.test(isolated, pg::ACTIVE), "{kernel}: and skips the isolated one");
        assert_eq!(ev(&m, Ev::PgActivate), 1, "{kernel}");
    }
}

/// mm/filemap.c: filemap_read(): 6.12.95 stores the position a read reached in
/// `ra->prev_pos` only when the read ends, 6.1.192 after every folio. A 20-page read whose
/// first 10 pages are cached meets its first miss at page 10: on 6.1 readahead sees the read
/// itself just before it (sequential: an initial window of 32 pages, 10..42); on 6.12 it
/// still sees the previous read, far away at page 900, and the 10 pages of history before
/// page 10 are no more than the request, so it reads just the request (10..20).
#[test]
fn filemap_read_stores_prev_pos_per_folio_on_6_1_and_at_the_end_on_6_12() {
    use pagelab_workload::Advice;
    for kernel in ["6.1", "6.12"] {
        let mut m = one_file("64M", kernel, 1000);
        let normal = |page, npages| pagelab_workload::Op { npages, advice: Advice::Normal, ..read(0, page) };
        for page in 0..10 {
            m.apply(0, read(0, page));
        }
        m.apply(0, read(0, 900));
        m.apply(0, normal(0, 20));
        let resident = |m: &pagelab::sim::Machine<Classic>, page| pfn_of(m, 0, 0, page).is_some();
        assert!((10..20).all(|p| resident(&m, p)), "{kernel}: the request is read");
        assert_eq!(resident(&m, 30), kernel == "6.1", "{kernel}: a readahead window past the request");
        assert!(!resident(&m, 42), "{kernel}");
        m.check().unwrap();
    }
}

#[test]
fn direct_reclaim_that_frees_nothing_by_priority_1_sleeps_a_jiffy_and_cgroup_reclaim_does_not() {
    // consider_reclaim_throttle() (6.1/6.12, from shrink_zones()): node-wide direct reclaim
    // that has freed nothing at priority 1 throttles on VMSCAN_THROTTLE_NOPROGRESS for a
    // jiffy; cgroup reclaim and kswapd never do. Anon memory without swap frees nothing.
    const JIFFY_NS: u64 = 4_000_000;
    for kernel in ["6.1", "6.12"] {
        let mut m = classic(&format!(
            "[machine]\nmemory = \"32M\"\nkernel = \"{kernel}\"\n[[cgroup]]\npath = \"/a\"\n\
             [[workload]]\nname = \"a\"\ncgroup = \"/a\"\nkind = \"anon-write\"\nsize = \"2000p\"\nops = 0\n"
        ));
        for page in 0..2000 {
            m.apply(0, touch(0, page, true));
        }
        m.drain();
        let a = m.mm.memcgs.find("/a").unwrap();
        let before = m.mm.now();
        let reclaimed = pagelab::mm::vmscan::try_to_free_mem_cgroup_pages(&mut m.mm, &mut m.policy, a, 32, true);
        let cgroup_took = m.mm.now() - before;
        assert_eq!(reclaimed, 0, "{kernel}: nothing to free without swap");
        assert!(cgroup_took < JIFFY_NS, "{kernel}: cgroup reclaim does not throttle ({cgroup_took} ns)");
        let before = m.mm.now();
        let reclaimed = pagelab::mm::vmscan::try_to_free_pages(&mut m.mm, &mut m.policy);
        let direct_took = m.mm.now() - before;
        assert_eq!(reclaimed, 0, "{kernel}");
        assert!(direct_took >= JIFFY_NS, "{kernel}: direct reclaim slept a jiffy at priority 1 ({direct_took} ns)");
    }
}

#[test]
fn exit_zaps_file_mappings_and_marks_young_pages_accessed_unless_the_mapping_has_no_recency() {
    // zap_pte_range() at exit_mmap(): a young PTE marks its page accessed (6.1 unless
    // VM_SEQ_READ; 6.12 unless VM_SEQ_READ or VM_RAND_READ), and the page leaves the page
    // table; it stays in the page cache.
    use pagelab::Advice;
    for (kernel, advice, marked) in [
        ("6.1", Advice::Normal, true),
        ("6.1", Advice::Random, true),
        ("6.1", Advice::Sequential, false),
        ("6.12", Advice::Normal, true),
        ("6.12", Advice::Random, false),
        ("6.12", Advice::Sequential, false),
    ] {
        let mut m = classic(&format!(
            "[machine]\nmemory = \"64M\"\nkernel = \"{kernel}\"\n\
             [[workload]]\nname = \"m\"\ncgroup = \"/\"\nkind = \"mmap-read\"\nfile_size = \"1000p\"\nops = 0\n"
        ));
        m.apply(0, mmap_read(0, 100, advice));
        m.drain();
        let pfn = pfn_of(&m, 0, 0, 100).unwrap();
        assert!(m.mm.folios.test(pfn, pg::MAPPED) && m.mm.folios.test(pfn, pg::YOUNG), "{kernel} {advice:?}");
        let state = |m: &pagelab::sim::Machine<Classic>| m.mm.folios.get(pfn).flags & (pg::REFERENCED | pg::ACTIVE);
        let before = state(&m);
        assert!(m.mm.nr_mapped > 0);
        pagelab::mm::oom_kill::exit_mmap(&mut m.mm, &mut m.policy, 0);
        m.drain();
        assert_eq!(pfn_of(&m, 0, 0, 100), Some(pfn), "{kernel} {advice:?}: the page stays cached");
        assert!(!m.mm.folios.test(pfn, pg::MAPPED), "{kernel} {advice:?}: unmapped");
        assert_eq!(m.mm.nr_mapped, 0, "{kernel} {advice:?}: nothing left mapped");
        assert_eq!(state(&m) != before, marked, "{kernel} {advice:?}: marked accessed ({before:#x} -> {:#x})", state(&m));
    }
}

/// One file in a miniature machine of sampling rate `rate` (`machine.miniature`), or a full one.
fn miniature(rate: Option<f64>) -> pagelab::sim::Machine<Classic> {
    let mut text = one_file_scenario("16M", "6.1", "classic", 10);
    if let Some(r) = rate {
        text = text.replace("[machine]\n", &format!("[machine]\nminiature = {r}\n"));
    }
    classic(&text)
}

#[test]
fn a_miniature_machine_scans_r_of_what_get_scan_count_gives_the_full_machine() {
    // get_scan_count() (6.1/6.12) scans lru_size >> priority: 963 pages at priority 12 round
    // down to 0 on a machine of that size. The miniature machine standing for 10 times it
    // scans R of the full machine's 9630 >> 12 = 2, 0.2 pages a call on average; at priority 0
    // R of 9630, its own 963.
    let counts = |rate: Option<f64>, priority: u32, calls: usize| -> Vec<u64> {
        let mut m = miniature(rate);
        m.mm.memcgs.get_mut(ROOT_MEMCG).lruvec.lru_size[Lru::InactiveFile as usize] = 963;
        let mut sc = pagelab::mm::vmscan::ScanControl::new(ROOT_MEMCG, pagelab::mm::vmstat::Reclaimer::Kswapd, 32);
        sc.priority = priority;
        (0..calls).map(|_| Classic::get_scan_count(&mut m.mm, ROOT_MEMCG, &mut sc).0[Lru::InactiveFile as usize]).collect()
    };
    assert!(counts(None, 12, 100).iter().all(|&n| n == 0));
    let mini = counts(Some(0.1), 12, 10_000);
    assert!(mini.iter().all(|&n| n <= 1));
    let mean = mini.iter().sum::<u64>() as f64 / mini.len() as f64;
    assert!((mean - 0.2).abs() < 0.02, "mean {mean}");
    assert_eq!(counts(Some(0.1), 0, 3), vec![963; 3]);
    assert_eq!(counts(Some(0.1), 12, 50), counts(Some(0.1), 12, 50), "the draws are deterministic");
}

#[test]
fn a_miniature_machine_compares_refaults_against_a_window_of_runs_as_long_as_one_full_run() {
    // prepare_scan_count() deactivates file pages only if a refault activated one since the
    // last reclaim run (snapshot_refaults(), 6.1/6.12). A miniature machine of rate 1/2 runs
    // twice as often per full run's worth of trace: its snapshot is the one of two runs ago.
    use pagelab::mm::memcontrol::StatItem;
    use pagelab::policy::Policy;
    let snapshots = |rate: Option<f64>| -> Vec<u64> {
        let mut m = miniature(rate);
        (0..4)
            .map(|_| {
                m.mm.memcgs.mod_state(ROOT_MEMCG, StatItem::WorkingsetActivateFile, 1);
                m.mm.memcgs.periodic_flush(0);
                m.policy.snapshot_refaults(&mut m.mm, ROOT_MEMCG, 0);
                m.mm.memcgs.get(ROOT_MEMCG).lruvec.refaults[1]
            })
            .collect()
    };
    assert_eq!(snapshots(None), vec![1, 2, 3, 4]);
    assert_eq!(snapshots(Some(0.5)), vec![1, 1, 2, 3]);
    assert_eq!(snapshots(Some(1.0)), vec![1, 2, 3, 4], "rate 1 is the full machine");
}

#[test]
fn a_miniature_machine_keeps_the_inactive_ratio_of_the_full_machines_list_sizes() {
    // inactive_is_low() (6.1/6.12): inactive × sqrt(10 × GiB of both lists) < active.
    // 2000 active and 700 inactive pages are 10.5 MiB: ratio 1, and 700 < 2000 is low. In a
    // miniature of rate 1/100 they stand for 1.03 GiB: ratio 3, and 2100 < 2000 is not. With
    // 600 inactive they stand for 0.99 GiB: ratio 1 again, low.
    use pagelab::mm::memcontrol::StatItem;
    let low = |rate: Option<f64>, inactive: i64| -> bool {
        let mut m = miniature(rate);
        m.mm.memcgs.mod_state(ROOT_MEMCG, StatItem::Lru(Lru::ActiveFile), 2000);
        m.mm.memcgs.mod_state(ROOT_MEMCG, StatItem::Lru(Lru::InactiveFile), inactive);
        m.mm.memcgs.periodic_flush(0);
        Classic::inactive_is_low(&m.mm, ROOT_MEMCG, Lru::InactiveFile)
    };
    assert!(low(None, 700), "ratio 1 on a full machine of these lists");
    assert!(!low(Some(0.01), 700), "ratio 3 for the 1.03 GiB the miniature's lists stand for");
    assert!(low(Some(0.01), 600));
}

#[test]
fn rmqueue_pcplist_refills_in_batches_the_watermarks_do_not_see_growing_on_6_12_only() {
    // mm/page_alloc.c: an empty per-CPU list takes nr_pcp_alloc() pages from the buddy lists:
    // one batch (15 pages in a 256M machine) on 6.1, and on 6.12 a batch doubled at each
    // refill without a free between (15, 30, 60, 120, 240, 480). Pages on the list are not
    // NR_FREE_PAGES, so the watermark checks do not count them.
    for (kernel, held) in [("6.1", 34 * 15 - 500), ("6.12", 15 + 30 + 60 + 120 + 240 + 480 - 500)] {
        let mut m = classic(&one_file_scenario("256M", kernel, "classic", 1000));
        let before = m.mm.folios.nr_free();
        for page in 0..500 {
            m.apply(0, read(0, page));
        }
        assert_eq!(m.mm.nodes[0].zones.z.last().unwrap().pcp.count, held as i64, "{kernel}: ZONE_DMA32's list");
        assert_eq!(m.mm.folios.nr_free(), before - 500, "{kernel}: 500 pages in use");
        assert_eq!(m.mm.nr_free(), before - 500 - held as u64, "{kernel}: NR_FREE_PAGES leaves the list out");
        m.check().unwrap();
    }
}

#[test]
fn user_pages_fall_back_to_zone_dma_down_to_low_plus_lowmem_reserve_before_kswapd_wakes() {
    // mm/page_alloc.c: get_page_from_freelist() (6.1/6.12) walks the zonelist from
    // ZONE_DMA32 down: ZONE_DMA serves user pages only once ZONE_DMA32 fails its low
    // watermark, and only while it keeps more than its own low watermark plus its lowmem
    // reserve (zone_watermark_fast()); kswapd is woken when both fail.
    for kernel in ["6.1", "6.12"] {
        let mut m = one_file("256M", kernel, 80_000);
        let (dma, dma32) = (0, 1);
        assert_eq!(m.mm.nodes[0].zones.z.iter().map(|z| z.name).collect::<Vec<_>>(), ["DMA", "DMA32"]);
        let mut page = 0;
        while m.mm.events.get(Ev::PgallocDma) == 0 {
            m.apply(0, read(0, page));
            page += 1;
        }
        let z = &m.mm.nodes[0].zones.z[dma32];
        assert!(m.mm.zone_free(dma32) <= z.wmark_low, "{kernel}: ZONE_DMA used with {} free in ZONE_DMA32", m.mm.zone_free(dma32));
        while m.mm.events.get(Ev::PageOutRun) == 0 {
            m.apply(0, read(0, page));
            page += 1;
        }
        // Near that floor: the read that woke kswapd may have let it reclaim a few pages.
        let z = &m.mm.nodes[0].zones.z[dma];
        let (free, floor) = (m.mm.zone_free(dma), z.wmark_low + z.lowmem_reserve);
        assert!(free + 64 > floor && free < floor + 64, "{kernel}: kswapd woken with {free} free in ZONE_DMA, floor {floor}");
        assert!(m.mm.events.get(Ev::PgallocDma) > 3000, "{kernel}: ZONE_DMA gave its pages down to the floor");
        m.check().unwrap();
    }
}

#[test]
fn pgdat_balanced_needs_one_zone_above_its_high_watermark_plus_lowmem_reserve() {
    // mm/vmscan.c: pgdat_balanced() (6.1/6.12): the node is balanced when any zone passes
    // zone_watermark_ok_safe() at its high watermark for ZONE_MOVABLE allocations.
    let mut m = one_file("256M", "6.12", 100);
    let (dma, dma32) = (0, 1);
    let take = |m: &mut pagelab::sim::Machine<Classic>, z: usize, keep: u64| {
        while m.mm.zone_free(z) > keep {
            m.mm.folios.alloc_from(z).unwrap();
        }
    };
    let high = |m: &pagelab::sim::Machine<Classic>, z: usize| m.mm.nodes[0].zones.z[z].wmark_high + m.mm.nodes[0].zones.z[z].lowmem_reserve;
    let h32 = high(&m, dma32);
    take(&mut m, dma32, h32);
    assert!(pagelab::mm::vmscan::pgdat_balanced(&m.mm, 0, pagelab::mm::vmscan::ALL_ZONES), "ZONE_DMA alone balances the node");
    let hdma = high(&m, dma);
    take(&mut m, dma, hdma);
    assert!(!pagelab::mm::vmscan::pgdat_balanced(&m.mm, 0, pagelab::mm::vmscan::ALL_ZONES), "no zone above its mark");
    m.mm.folios.free(0); // the first frame `take` handed out
    assert!(pagelab::mm::vmscan::pgdat_balanced(&m.mm, 0, pagelab::mm::vmscan::ALL_ZONES), "one free ZONE_DMA page past high + reserve balances it");
}

/// A machine whose kswapd has just finished a balanced run and taken its short sleep.
fn kswapd_napping() -> pagelab::sim::Machine<Classic> {
    let mut m = one_file("256M", "6.1", 80_000);
    let mut page = 0;
    while m.mm.nodes[0].reclaim.nap_until.is_none() {
        m.apply(0, read(0, page));
        page += 1;
    }
    assert!(m.mm.nodes[0].reclaim.kswapd.is_none() && pagelab::mm::vmscan::pgdat_balanced(&m.mm, 0, pagelab::mm::vmscan::ALL_ZONES));
    m
}

/// Takes free frames until no zone is above its high watermark plus reserve.
fn unbalance(m: &mut pagelab::sim::Machine<Classic>) {
    for z in 0..m.mm.nodes[0].zones.z.len() {
        let mark = m.mm.nodes[0].zones.z[z].wmark_high + m.mm.nodes[0].zones.z[z].lowmem_reserve;
        while m.mm.zone_free(z) > mark {
            m.mm.folios.alloc_from(z).unwrap();
        }
    }
}

#[test]
fn kswapd_try_to_sleep_naps_and_counts_who_ends_the_nap() {
    // mm/vmscan.c: kswapd_try_to_sleep() (6.1/6.12): after a balanced run kswapd sleeps HZ/10;
    // a wake-up during it counts KSWAPD_LOW_WMARK_HIT_QUICKLY and starts a run at once.
    let mut m = kswapd_napping();
    let end = m.mm.nodes[0].reclaim.nap_until.unwrap();
    assert!(m.mm.now() < end, "the task runs on during the nap");
    unbalance(&mut m);
    pagelab::mm::vmscan::wakeup_kswapd(&mut m.mm, 0, pagelab::mm::vmscan::ALL_ZONES);
    assert_eq!(m.mm.events.get(Ev::KswapdLowWmarkHitQuickly), 1);
    assert!(m.mm.nodes[0].reclaim.kswapd.is_some() && m.mm.nodes[0].reclaim.nap_until.is_none());
    // A nap that ends with the node unbalanced and no wake-up sends kswapd back to work
    // (KSWAPD_HIGH_WMARK_HIT_QUICKLY); one that ends balanced lets it sleep until woken.
    for (unbalanced, runs) in [(true, 1), (false, 0)] {
        let mut m = kswapd_napping();
        let (before, high_before) = (m.mm.events.get(Ev::PageOutRun), m.mm.events.get(Ev::KswapdHighWmarkHitQuickly));
        if unbalanced {
            unbalance(&mut m);
        }
        pagelab::mm::vmscan::kswapd_step(&mut m.mm, &mut m.policy, 0);
        assert!(m.mm.nodes[0].reclaim.nap_until.is_none());
        assert_eq!(m.mm.events.get(Ev::PageOutRun) - before, runs, "unbalanced: {unbalanced}");
        assert_eq!(m.mm.events.get(Ev::KswapdHighWmarkHitQuickly) - high_before, runs);
        assert_eq!(m.mm.nodes[0].reclaim.kswapd.is_some(), unbalanced);
    }
}

#[test]
fn on_one_cpu_a_woken_kswapd_preempts_its_waker_under_cfs_6_1_and_not_under_eevdf_6_12() {
    // kernel/sched/fair.c on one CPU: CFS (6.1) places a kswapd waking from sleep behind the
    // allocating task by more than the wake-up granularity, so it runs before the allocation
    // that woke it goes on, and the task waits; EEVDF (6.12) keeps the waker on the CPU.
    // The operations are applied without the event loop, so only a preempting kswapd can
    // have reclaimed anything by the time the waking read returns.
    for (kernel, preempts) in [("6.1", true), ("6.12", false)] {
        for cpus in [None, Some(1)] {
            let mut text = one_file_scenario("64M", kernel, "classic", 80_000);
            if let Some(n) = cpus {
                text = text.replace("[machine]\n", &format!("[machine]\ncpus = {n}\n"));
            }
            let mut m = classic(&text);
            let mut page = 0;
            while m.mm.events.get(Ev::PageOutRun) == 0 {
                m.apply(0, read(0, page));
                page += 1;
            }
            let stolen = m.mm.events.get(Ev::PgStealKswapd);
            let waited = m.mm.tasks[0].cpu_wait_ns;
            if preempts && cpus == Some(1) {
                assert!(stolen > 0, "{kernel}: kswapd should have reclaimed before the read returned");
                assert!(waited > 0, "{kernel}: the task should have waited for the CPU");
            } else {
                assert_eq!((stolen, waited), (0, 0), "{kernel} with cpus {cpus:?}: kswapd waits for the event loop");
            }
            m.check().unwrap();
        }
    }
}

#[test]
fn on_one_cpu_update_curr_gives_kswapd_its_turn_inside_the_tasks_operation_under_eevdf() {
    // kernel/sched/fair.c (6.12, EEVDF): the tick ends the task's slice inside a long
    // operation, and kswapd, eligible, takes its turn (update_curr(), pick_eevdf()). A random
    // mmap reader with an 8 MiB read-around window allocates 2,048 pages a major fault, far
    // past the watermarks' gaps; at the guest's clock (the oracle's rstat period) that
    // operation spans many ticks. Before the rule the operation ran to its end before
    // kswapd's next step, and the task reclaimed about eight pages for each of kswapd's.
    let text = r#"
[machine]
memory = "128M"
kernel = "6.12"
cpus = 1
read_ahead_kb = 8192
rstat_flush = "45735466ns"
[time.storage]
read_latency_ns = 1000
write_latency_ns = 1000
page_transfer_ns = 400
cpu_page_ns = 2099
[[workload]]
name = "mapped"
cgroup = "/"
kind = "mmap-read"
file_size = "256M"
distribution = "zipf:1.0"
ops = 3000
seed = 10
"#;
    let mut m = classic(text);
    while m.step() {}
    m.check().unwrap();
    let (kswapd, direct) = (ev(&m, Ev::PgStealKswapd), ev(&m, Ev::PgStealDirect));
    assert!(kswapd > direct, "kswapd reclaims in its turns inside the read-arounds: kswapd {kswapd}, direct {direct}");
}

#[test]
fn a_disk_whose_requests_cost_cpu_charges_its_reader_per_page_and_per_read_request_and_a_workload_op_its_own_cpu() {
    // DeviceCost::cpu_page_ns (a virtio disk's exits, the block layer), cpu_read_request_ns
    // (the sleep on a read and its wake-up) and Costs::op_ns (the workload's own loop) are CPU
    // time of the task, not IO wait.
    let run = |extra: &str| {
        // Sequential reads with the default advice: readahead reads several pages a request.
        let text =
            one_file_scenario("64M", "6.1", "classic", 1_000).replace("fadvise = \"random\"\n", "").replace("[[workload]]", &format!("{extra}\n[[workload]]"));
        let mut m = classic(&text);
        for page in 0..100 {
            m.apply(0, pagelab_workload::Op { advice: pagelab_workload::Advice::Normal, ..read(0, page) });
        }
        m.check().unwrap();
        let t = &m.mm.tasks[0];
        (t.clock, t.io_wait_ns, m.mm.file_dev.pages_read, m.mm.file_dev.read_requests)
    };
    let (clock, io_wait, pages, requests) = run("");
    assert!(pages > requests && requests > 1, "readahead reads several pages per request: {pages} pages, {requests} requests");
    let (clock_cpu, io_wait_cpu, pages_cpu, requests_cpu) = run(
        "[time]\nop_ns = 1000\n[time.storage]\nread_latency_ns = 80000\nwrite_latency_ns = 30000\npage_transfer_ns = 2000\ncpu_page_ns = 5000\ncpu_read_request_ns = 7000\n",
    );
    assert_eq!((pages_cpu, requests_cpu), (pages, requests), "the same pages are read in the same requests");
    // The task's CPU is its clock less its IO waits; the waits may only shrink (CPU spent
    // while a readahead is in flight shortens the wait for it).
    assert_eq!(
        (clock_cpu - io_wait_cpu) - (clock - io_wait),
        100 * 1_000 + pages * 5_000 + requests * 7_000,
        "one op_ns per read, one cpu_page_ns per page read, one cpu_read_request_ns per request"
    );
    assert!(io_wait_cpu <= io_wait, "the disk's CPU is not IO wait");
}

#[test]
fn do_swap_page_waits_for_a_swap_in_submitted_after_its_folio_and_cpu() {
    // mm/memory.c: do_swap_page() -> swapin_readahead() allocates the folios, and
    // swap_read_folio() submits the request (its CPU: DeviceCost::cpu_read_request_ns and
    // cpu_page_ns) before folio_lock_or_retry() sleeps until the read completes. The device's
    // latency starts at the submission, so the task waits for all of it even when the request's
    // CPU outlasts the latency.
    let text = r#"
[machine]
memory = "64M"
kernel = "6.12"
swap = { device = "ssd", size = "64M" }
[time.swap]
read_latency_ns = 20000
write_latency_ns = 1000
page_transfer_ns = 400
cpu_page_ns = 5000
cpu_read_request_ns = 50000
[[cgroup]]
path = "/a"
max = "4M"
[[workload]]
name = "heap"
cgroup = "/a"
kind = "anon-write"
size = "8M"
distribution = "uniform"
ops = 0
"#;
    let mut m = classic(text);
    let (base, pages) = m.object(0, 0);
    for p in 0..pages {
        m.apply(0, touch(0, p, true));
    }
    m.drain();
    let page = (0..pages).find(|&p| matches!(m.mm.space.get(base + p as u32), Entry::Swapped(_))).expect("a page in swap");
    let (io_wait, swapins) = (m.mm.tasks[0].io_wait_ns, ev(&m, Ev::PswpIn));
    m.apply(0, touch(0, page, false));
    assert!(ev(&m, Ev::PswpIn) > swapins, "a swap-in");
    let waited = m.mm.tasks[0].io_wait_ns - io_wait;
    assert!(waited >= 20_000, "the task waits for the device's whole latency after submitting: {waited} ns");
    m.check().unwrap();
}

#[test]
fn free_pcppages_bulk_returns_a_refills_stolen_pages_to_their_pageblock_6_12_7_3_and_rmqueue_bulk_lists_movable_pages_first() {
    // mm/page_alloc.c: rmqueue_bulk() lists a refill's pages in the order __rmqueue() returns
    // them, so the last movable page is handed out before the pages the fallback found (6.1,
    // 6.12, 7.3). A drain (free_pcppages_bulk()) then frees each listed page by its
    // pageblock's migratetype on 6.12.95 and 7.3.4 (get_pfnblock_migratetype()): the pages
    // stolen from a non-movable block go back to it. 6.1 frees them as movable
    // (get_pcppage_migratetype()), and its fallback had moved the whole chunk to the movable
    // lists. Eight blocks a quarter free (one chunk of order 7 each: never claimed).
    use pagelab::mm::page_alloc::{alloc_page, drain_all_pages, Gfp};
    for kernel in ["6.1", "6.12", "7.3"] {
        let mut m = with_nonmovable_blocks("64M", kernel, "{ DMA32 = { blocks = 8, free = [0, 0, 0, 0, 0, 0, 0, 8], pcp = 0 } }");
        let top = m.mm.nodes[0].zones.top();
        drain_all_pages(&mut m.mm);
        // Every movable free frame of the zone held but one.
        let mut held = Vec::new();
        while let Some(pfn) = m.mm.folios.alloc_from(top) {
            held.push(pfn);
        }
        let last = held.pop().unwrap();
        m.mm.folios.push_free(top, &[last]);
        let pool = |m: &pagelab::sim::Machine<Classic>| m.mm.pageblocks.as_ref().unwrap().nr_free(top);
        assert_eq!(pool(&m), 8 * 128);
        let page = alloc_page(&mut m.mm, &mut m.policy, Gfp::User).unwrap();
        assert_eq!(page, last, "{kernel}: the movable page first");
        let listed = m.mm.zone(top).pcp.count as u64;
        assert!(listed > 0 && m.mm.pageblocks.as_ref().unwrap().fallbacks > 0, "{kernel}: the refill fell back");
        let (before, movable_before) = (pool(&m), m.mm.movable_free(top));
        drain_all_pages(&mut m.mm);
        if kernel == "6.1" {
            assert_eq!(pool(&m), before, "6.1: the drained pages stay on the movable lists");
            assert_eq!(m.mm.movable_free(top), movable_before + listed);
        } else {
            assert_eq!(pool(&m), 8 * 128, "{kernel}: every stolen page is back in its block");
            assert_eq!(m.mm.movable_free(top), movable_before);
        }
        m.mm.pageblocks.as_ref().unwrap().check().unwrap();
    }
}

#[test]
fn free_pcppages_bulk_gives_a_non_movable_blocks_per_cpu_frames_back_to_it_at_a_drain_and_decay_pcp_high_first_6_12_7_3() {
    // mm/page_alloc.c: a page freed in an unmovable block waits on the per-CPU list of that
    // migratetype (free_unref_page()), which movable allocations never take from. A drain
    // (drain_all_pages() -> free_pcppages_bulk()) frees it to its block's buddy lists (6.1,
    // 6.12, 7.3); decay_pcp_high() (6.12, 7.3) drains from pindex 0, the unmovable list,
    // first. `machine.nonmovable.DMA32.pcp` lays out such frames, the kernel's until then.
    use pagelab::mm::page_alloc::{decay_pcp_high, drain_all_pages};
    // The kernel's pages outside the blocks too, as the oracle's calibration gives them.
    let layout = |pcp: &str| format!("{{ DMA32 = {{ blocks = 4, free = [0, 0, 0, 0, 0, 0, 0, 1]{pcp} }} }}\nkernel_used = \"16M\"");
    for kernel in ["6.1", "6.12", "7.3"] {
        let without = with_nonmovable_blocks("64M", kernel, &layout(""));
        let mut m = with_nonmovable_blocks("64M", kernel, &layout(", pcp = 40"));
        let top = m.mm.nodes[0].zones.top();
        let pool = |m: &pagelab::sim::Machine<Classic>| m.mm.pageblocks.as_ref().unwrap().nr_free(top);
        assert_eq!(pool(&m), 128);
        // The calibration counts every per-CPU page free on the movable side; these are not.
        assert_eq!(m.mm.movable_free(top) + 40, without.mm.movable_free(top), "{kernel}");
        assert_eq!(m.mm.kernel_pages, without.mm.kernel_pages + 40, "{kernel}");
        let (kernel_pages, movable) = (m.mm.kernel_pages, m.mm.movable_free(top));
        m.mm.zone_mut(top).pcp.count = 0;
        m.mm.zone_mut(top).pcp.high = 8;
        decay_pcp_high(&mut m.mm);
        let back = pool(&m) - 128;
        if kernel == "6.1" {
            assert_eq!(back, 0, "6.1 does not decay high");
        } else {
            let high = m.mm.zone(top).pcp.high as u64;
            assert!(back > 0 && back == 40 - high.min(40), "{kernel}: {back} back, high {high}");
            assert_eq!(m.mm.zone(top).pcp.count, 0, "{kernel}: the movable list gave nothing");
        }
        drain_all_pages(&mut m.mm);
        assert_eq!(pool(&m), 128 + 40, "{kernel}: every frame back in its block");
        assert_eq!(m.mm.kernel_pages, kernel_pages - 40);
        assert_eq!(m.mm.movable_free(top), movable, "{kernel}: none to the movable lists");
        drain_all_pages(&mut m.mm);
        assert_eq!(pool(&m), 128 + 40);
        m.mm.pageblocks.as_ref().unwrap().check().unwrap();
        pagelab::mm::invariants::check(&m.mm).unwrap();
    }
}

#[test]
fn a_boosted_zone_wakes_kswapd_on_a_balanced_node_whose_run_reclaims_the_boost_then_clears_it_balance_pgdat_6_1_6_12() {
    // mm/vmscan.c: wakeup_kswapd() wakes kswapd on a balanced node while a zone's watermarks
    // are boosted (pgdat_watermark_boosted()); balance_pgdat() then reclaims the boosts'
    // worth of pages (nr_boost_reclaim) without writeback or swap and takes the boosts off.
    for kernel in ["6.1", "6.12"] {
        let text = one_file_scenario("64M", kernel, "classic", 12_000)
            .replace("[machine]\n", "[machine]\nnonmovable = { DMA32 = { blocks = 2, free = [0, 0, 0, 0, 4] } }\n");
        let mut m = classic(&text);
        for page in 0..11_000 {
            m.apply(0, read(0, page));
        }
        while m.mm.nodes[0].reclaim.kswapd.is_some() {
            pagelab::mm::vmscan::kswapd_step(&mut m.mm, &mut m.policy, 0);
        }
        assert!(pagelab::mm::vmscan::pgdat_balanced(&m.mm, 0, pagelab::mm::vmscan::ALL_ZONES), "{kernel}: the node is balanced");
        pagelab::mm::vmscan::wakeup_kswapd(&mut m.mm, 0, pagelab::mm::vmscan::ALL_ZONES);
        assert!(m.mm.nodes[0].reclaim.kswapd.is_none(), "{kernel}: a balanced node without a boost is not woken");
        let top = m.mm.nodes[0].zones.z.len() - 1;
        let pb = m.mm.pageblocks.as_mut().unwrap();
        assert!(pb.boost_watermark(top));
        let boost = pb.watermark_boost[top];
        pagelab::mm::page_alloc::apply_boost(&mut m.mm.nodes[0].zones, m.mm.pageblocks.as_ref().unwrap(), top);
        let stolen = m.mm.events.get(Ev::PgStealKswapd);
        pagelab::mm::vmscan::wakeup_kswapd(&mut m.mm, 0, pagelab::mm::vmscan::ALL_ZONES);
        assert!(m.mm.nodes[0].reclaim.kswapd.is_some(), "{kernel}: the boost wakes kswapd");
        while m.mm.nodes[0].reclaim.kswapd.is_some() {
            pagelab::mm::vmscan::kswapd_step(&mut m.mm, &mut m.policy, 0);
        }
        let reclaimed = m.mm.events.get(Ev::PgStealKswapd) - stolen;
        assert!(reclaimed >= boost, "{kernel}: {reclaimed} pages reclaimed for a boost of {boost}");
        assert_eq!(m.mm.pageblocks.as_ref().unwrap().watermark_boost[top], 0, "{kernel}: the run takes its boost off");
        m.check().unwrap();
    }
}

#[test]
fn movable_allocations_fall_back_to_the_nonmovable_pageblocks_once_their_lists_run_dry_rmqueue_fallback_6_1_6_12() {
    // mm/page_alloc.c: __rmqueue_fallback() (6.1) boosts on every fallback; 6.12.95 boosts
    // when rmqueue_bulk() first tries to claim a block (__rmqueue_claim(): a chunk of order
    // 4 or more) and steals the bulk's other pages singly, without a boost
    // (__rmqueue_steal()). Four blocks a quarter free (one chunk of order 7 each) hold more
    // free pages than the high watermark, so the movable lists run dry, and the blocks are
    // never claimed; pages freed from them go back to them, so the fallbacks go on.
    for kernel in ["6.1", "6.12"] {
        let text = one_file_scenario("64M", kernel, "classic", 80_000)
            .replace("[machine]\n", "[machine]\nnonmovable = { DMA32 = { blocks = 4, free = [0, 0, 0, 0, 0, 0, 0, 4] } }\n");
        let mut m = classic(&text);
        for page in 0..80_000 {
            m.apply(0, read(0, page));
            while m.mm.nodes[0].reclaim.kswapd.is_some() {
                pagelab::mm::vmscan::kswapd_step(&mut m.mm, &mut m.policy, 0);
            }
        }
        m.check().unwrap();
        let pb = m.mm.pageblocks.as_ref().unwrap();
        // More than the four first fallbacks, one per block: the freed pages came back.
        assert!(pb.fallbacks > 4, "{kernel}: the movable lists ran dry and fell back ({} times)", pb.fallbacks);
        assert_eq!(pb.claims, 0, "{kernel}: blocks a quarter free are never claimed");
        if kernel == "6.1" {
            assert_eq!(pb.boosts, pb.fallbacks, "6.1 boosts on every fallback");
        } else {
            assert!(pb.boosts > 0 && pb.boosts < pb.fallbacks, "6.12.95: {} boosts in {} fallbacks", pb.boosts, pb.fallbacks);
        }
    }
}

#[test]
fn a_boost_of_zone_dma_wakes_kswapd_for_zone_dma_alone_whose_isolation_skips_dma32_folios_to_the_head_balance_pgdat_isolate_lru_folios_6_1_6_12() {
    // mm/page_alloc.c: rmqueue() wakes kswapd for a boosted zone with that zone as the
    // highest (wakeup_kswapd(zone, 0, 0, zone_idx(zone))); mm/vmscan.c: balance_pgdat() then
    // reclaims with reclaim_idx = ZONE_DMA, and isolate_lru_folios() passes over the DMA32
    // folios: counted in pgscan and pgskip_dma32 but not towards the batch, and spliced to
    // the head of the list. Only ZONE_DMA's frames are freed. (The file is read past the
    // machine's memory, so that ZONE_DMA holds page cache.)
    for kernel in ["6.1", "6.12"] {
        let text = one_file_scenario("64M", kernel, "classic", 80_000)
            .replace("[machine]\n", "[machine]\nnonmovable = { DMA = { blocks = 1, free = [0, 0, 0, 0, 4] } }\n");
        let mut m = classic(&text);
        for page in 0..60_000 {
            m.apply(0, read(0, page));
        }
        while m.mm.nodes[0].reclaim.kswapd.is_some() {
            pagelab::mm::vmscan::kswapd_step(&mut m.mm, &mut m.policy, 0);
        }
        let pb = m.mm.pageblocks.as_mut().unwrap();
        assert!(pb.boost_watermark(0), "{kernel}: ZONE_DMA (3,840 pages) is large enough to boost");
        let boost = pb.watermark_boost[0];
        pagelab::mm::page_alloc::apply_boost(&mut m.mm.nodes[0].zones, m.mm.pageblocks.as_ref().unwrap(), 0);
        let inactive = |m: &pagelab::sim::Machine<Classic>| m.policy.list_pages(&m.mm, ROOT_MEMCG, Lru::InactiveFile);
        // The oldest DMA32 folio, which a DMA-only isolation meets first.
        let oldest_dma32 = *inactive(&m).iter().rev().find(|&&pfn| m.mm.folios.zone_of(pfn) == 1).expect("DMA32 folios on the list");
        let (stolen, scanned, dma_free) = (ev(&m, Ev::PgStealKswapd), ev(&m, Ev::PgScanKswapd), m.mm.zone_free(0));
        pagelab::mm::vmscan::wakeup_kswapd(&mut m.mm, 0, 0);
        assert_eq!(m.mm.nodes[0].reclaim.kswapd.as_ref().map(|b| b.classzone), Some(0), "{kernel}: the boost wakes kswapd for ZONE_DMA");
        while m.mm.nodes[0].reclaim.kswapd.is_some() {
            pagelab::mm::vmscan::kswapd_step(&mut m.mm, &mut m.policy, 0);
        }
        let (reclaimed, skipped) = (ev(&m, Ev::PgStealKswapd) - stolen, ev(&m, Ev::PgskipDma32));
        assert!(reclaimed >= boost && skipped > 0, "{kernel}: {reclaimed} pages reclaimed for a boost of {boost}, {skipped} DMA32 folios skipped");
        assert!(ev(&m, Ev::PgScanKswapd) - scanned >= reclaimed + skipped, "{kernel}: the skipped folios count as scanned");
        assert!(m.mm.zone_free(0) >= dma_free + reclaimed - 64, "{kernel}: ZONE_DMA got the reclaimed frames");
        assert_eq!(m.mm.folios.zone_of(oldest_dma32), 1);
        let at = inactive(&m).iter().position(|&pfn| pfn == oldest_dma32).expect("a skipped folio stays on the list");
        assert!((at as u64) < skipped, "{kernel}: the oldest DMA32 folio went to the head ({at} from it)");
        m.check().unwrap();
    }
}

/// LRU pages whose frames lie in non-movable pageblocks, and those blocks' free pages.
fn lru_pages_in_nonmovable_blocks(m: &pagelab::sim::Machine<Classic>) -> u64 {
    let pb = m.mm.pageblocks.as_ref().unwrap();
    (0..m.mm.folios.frames() as u32).filter(|&pfn| m.mm.folios.get(pfn).flags & pg::LRU != 0 && pb.is_nonmovable(pfn)).count() as u64
}

/// A classic machine with the non-movable pageblocks `layout` (a `machine.nonmovable` value).
fn with_nonmovable_blocks(memory: &str, kernel: &str, layout: &str) -> pagelab::sim::Machine<Classic> {
    classic(&one_file_scenario(memory, kernel, "classic", 80_000).replace("[machine]\n", &format!("[machine]\nnonmovable = {layout}\n")))
}

/// Reads the file's first `pages` pages, letting kswapd finish each run it starts.
fn read_with_kswapd(m: &mut pagelab::sim::Machine<Classic>, pages: u64) {
    for page in 0..pages {
        m.apply(0, read(0, page));
        while m.mm.nodes[0].reclaim.kswapd.is_some() {
            pagelab::mm::vmscan::kswapd_step(&mut m.mm, &mut m.policy, 0);
        }
    }
}

/// Takes every even free frame of zone `z` off its free list (returned, to be given back), so
/// that no free pageblock remains to end a compaction run at once.
fn hold_every_other_free_frame(m: &mut pagelab::sim::Machine<Classic>, z: usize) -> Vec<u32> {
    let mut held = Vec::new();
    while let Some(pfn) = m.mm.folios.alloc_from(z) {
        held.push(pfn);
    }
    let (odd, even): (Vec<_>, Vec<_>) = held.iter().partition(|&&pfn| pfn % 2 == 1);
    m.mm.folios.push_free(z, &odd);
    even
}

#[test]
fn compaction_moves_the_lru_pages_that_fallbacks_left_in_nonmovable_pageblocks_out_and_their_frames_merge_compact_zone_6_1_6_12() {
    // mm/compaction.c: kcompactd's compact_zone() runs in MIGRATE_SYNC_LIGHT, whose migrate
    // scanner (from the zone's start, where the non-movable blocks are) takes LRU pages from
    // blocks of every type and moves them to free pages of movable blocks that the free
    // scanner takes from the zone's end; the frames they leave merge on the non-movable
    // block's free lists (__free_one_page()). The pages keep their place in the page cache.
    for kernel in ["6.1", "6.12"] {
        // Four blocks a quarter free (as in the fallback test above): the movable lists run
        // dry, and the fallbacks move the blocks' free pages (6.1) or steal them one at a time
        // (6.12) without claiming the blocks.
        // kcompactd's timeout kept out of the setup (its proactive passes set skip bits that
        // the run below would honour): a flush period far past the reads.
        let layout = "{ DMA32 = { blocks = 4, free = [0, 0, 0, 0, 0, 0, 0, 4] } }";
        let mut m = classic(
            &one_file_scenario("64M", kernel, "classic", 80_000)
                .replace("[machine]\n", &format!("[machine]\nrstat_flush = \"1000s\"\nnonmovable = {layout}\n")),
        );
        read_with_kswapd(&mut m, 40_000);
        let top = m.mm.nodes[0].zones.top();
        let stranded = lru_pages_in_nonmovable_blocks(&m);
        assert!(stranded > 0, "{kernel}: the fallbacks left movable pages in the non-movable blocks");
        // Room for the migrations: reclaim (memory.reclaim of the root) and drain the per-CPU
        // lists, so that the free scanner finds free pages; then hold every other free frame
        // of the zone, so that no free pageblock forms and ends the run early.
        let slab_pages = m.mm.pageblocks.as_ref().unwrap().nr_slabs() * pagelab::mm::pageblock::RADIX_TREE_NODE_SLAB_PAGES;
        pagelab::mm::vmscan::try_to_free_mem_cgroup_pages(&mut m.mm, &mut m.policy, ROOT_MEMCG, 1_000, true);
        pagelab::mm::page_alloc::drain_all_pages(&mut m.mm);
        let stranded = lru_pages_in_nonmovable_blocks(&m);
        assert!(stranded > 0, "{kernel}: the reclaim left some of them");
        let even = hold_every_other_free_frame(&mut m, top);
        // The free scanner's targets, less what the file's xarray-node slabs took from the zone
        // (since 2026-11-29): give that many back, twice, spread over the zone (a pageblock
        // made wholly free is not a target: suitable_migration_target()).
        let step = (even.len() / (2 * slab_pages as usize).max(1)).max(2);
        let back: Vec<u32> = even.iter().step_by(step).copied().collect();
        let even: Vec<u32> = even.iter().enumerate().filter(|(i, _)| i % step != 0).map(|(_, &pfn)| pfn).collect();
        m.mm.folios.push_free(top, &back);
        let resident = |m: &pagelab::sim::Machine<Classic>| (0..m.mm.space.len() as u32).map(|vpn| m.mm.space.resident(vpn)).collect::<Vec<_>>();
        let (pages, nonmovable_free, migrated) = (resident(&m), m.mm.pageblocks.as_ref().unwrap().nr_free(top), ev(&m, Ev::PgmigrateSuccess));
        let outcome = pagelab::mm::compaction::compact_zone(&mut m.mm, top);
        assert_eq!(lru_pages_in_nonmovable_blocks(&m), 0, "{kernel}: every stranded page moved out ({outcome:?})");
        assert_eq!(m.mm.pageblocks.as_ref().unwrap().nr_free(top), nonmovable_free + stranded, "{kernel}: their frames are free in the blocks");
        assert!(ev(&m, Ev::PgmigrateSuccess) - migrated >= stranded);
        assert!(resident(&m) == pages, "{kernel}: every page stays in the cache under its own frame number");
        m.mm.folios.push_free(top, &even);
        m.check().unwrap();
        m.mm.pageblocks.as_ref().unwrap().check().unwrap();
    }
}

#[test]
fn kcompactd_runs_at_once_when_a_zone_is_suitable_and_otherwise_at_its_timeout_wakeup_kcompactd_kcompactd_6_1_6_12() {
    // mm/compaction.c: wakeup_kcompactd() (from a boosted balance_pgdat()'s end) records the
    // order and wakes kcompactd only if some zone passes compaction_suitable(): free pages
    // above the low watermark plus compact_gap() (1,024 pages for a pageblock). Otherwise the
    // recorded order makes kcompactd_work_requested() true, so kcompactd runs at its next
    // 500 ms timeout all the same (kcompactd()), or at the end of the long sleep that follows
    // a proactive pass without progress.
    for kernel in ["6.1", "6.12"] {
        let mut m = with_nonmovable_blocks("64M", kernel, "{ DMA32 = { blocks = 2, free = [8, 8, 8, 8] } }");
        read_with_kswapd(&mut m, 40_000);
        let top = m.mm.nodes[0].zones.top();
        let zone = &m.mm.nodes[0].zones.z[top];
        assert!(m.mm.zone_free(top) < zone.wmark_low + 1024, "{kernel}: a balanced zone is below low + compact_gap()");
        let wakes = ev(&m, Ev::CompactDaemonWake);
        pagelab::mm::compaction::wakeup_kcompactd(&mut m.mm, 9, top);
        assert_eq!(ev(&m, Ev::CompactDaemonWake), wakes, "{kernel}: no zone suitable, kcompactd sleeps on");
        for _ in 0..m.mm.pageblocks.as_ref().unwrap().kcompactd.proactive_wait() {
            pagelab::mm::compaction::kcompactd_timeout(&mut m.mm);
            assert_eq!(ev(&m, Ev::CompactDaemonWake), wakes, "{kernel}: the long sleep goes on");
        }
        pagelab::mm::compaction::kcompactd_timeout(&mut m.mm);
        assert_eq!(ev(&m, Ev::CompactDaemonWake), wakes + 1, "{kernel}: its timeout finds the work requested");
        pagelab::mm::compaction::kcompactd_timeout(&mut m.mm);
        assert_eq!(ev(&m, Ev::CompactDaemonWake), wakes + 1, "{kernel}: the run cleared the request");
        m.check().unwrap();
    }
    // A zone far above low + compact_gap() whose free pages are every other frame (no chunk
    // above order 0, so a fragmentation index near 1000): suitable, kcompactd runs at once.
    for kernel in ["6.1", "6.12"] {
        let mut m = with_nonmovable_blocks("128M", kernel, "{ DMA32 = { blocks = 2, free = [8, 8, 8, 8] } }");
        let top = m.mm.nodes[0].zones.top();
        let even = hold_every_other_free_frame(&mut m, top);
        assert!(m.mm.zone_free(top) > m.mm.nodes[0].zones.z[top].wmark_low + 1024);
        pagelab::mm::compaction::wakeup_kcompactd(&mut m.mm, 9, top);
        assert_eq!(ev(&m, Ev::CompactDaemonWake), 1, "{kernel}: a suitable zone wakes kcompactd at once");
        assert!(ev(&m, Ev::CompactMigrateScanned) > 0, "{kernel}: and it compacts the zone");
        m.mm.folios.push_free(top, &even);
        m.check().unwrap();
    }
}

#[test]
fn a_pageblock_compaction_finished_without_isolating_is_skipped_by_the_next_run_isolation_suitable_6_1_6_12() {
    // mm/compaction.c: a block the migrate scanner finished without isolating a page is
    // marked skip (set_pageblock_skip()), the scanners pass over marked blocks
    // (isolation_suitable()), and only a direct compaction's meeting of the scanners lets
    // __reset_isolation_suitable() clear the marks. A zone with no LRU pages: the first run
    // walks every block and isolates nothing; the second, starting anew after the scanners
    // met, passes over them all.
    for kernel in ["6.1", "6.12"] {
        let mut m = with_nonmovable_blocks("128M", kernel, "{ DMA32 = { blocks = 2, free = [8, 8, 8, 8] } }");
        let top = m.mm.nodes[0].zones.top();
        let even = hold_every_other_free_frame(&mut m, top);
        let first = pagelab::mm::compaction::compact_zone(&mut m.mm, top);
        let scanned_1 = ev(&m, Ev::CompactMigrateScanned);
        let second = pagelab::mm::compaction::compact_zone(&mut m.mm, top);
        let scanned_2 = ev(&m, Ev::CompactMigrateScanned) - scanned_1;
        assert_eq!(first, pagelab::mm::compaction::Outcome::Complete, "{kernel}");
        assert!(scanned_1 > 20_000, "{kernel}: the first run walks the zone ({scanned_1} pages)");
        assert_eq!(scanned_2, 0, "{kernel}: the second run ({second:?}) passes over every marked block");
        m.mm.folios.push_free(top, &even);
        m.check().unwrap();
    }
}

/// The proactive passes kcompactd has made.
fn proactive_passes(m: &pagelab::sim::Machine<Classic>) -> u64 {
    m.mm.pageblocks.as_ref().unwrap().kcompactd.proactive_passes
}

#[test]
fn kcompactd_compacts_proactively_at_its_timeout_until_the_zone_scores_80_proactive_compact_node_6_1_6_12() {
    // mm/compaction.c: with no work requested and kswapd asleep, kcompactd's timeout compacts
    // when the node's fragmentation score (extfrag at order 9, zones weighted by size) is
    // above 90 (should_proactive_compact_node()); each zone whole, until its own score is at
    // most 80 (__compact_finished()). The free scanner passes over a block that is one free
    // chunk (suitable_migration_target()). 6.12.95 counts the scans as kcompactd's, 6.1 not.
    for kernel in ["6.1", "6.12"] {
        let mut m = with_nonmovable_blocks("256M", kernel, "{ DMA32 = { blocks = 2, free = [8, 8, 8, 8] } }");
        read_with_kswapd(&mut m, 20_000);
        pagelab::mm::page_alloc::drain_all_pages(&mut m.mm);
        let top = m.mm.nodes[0].zones.top();
        let even = hold_every_other_free_frame(&mut m, top);
        // The zone's last pageblock wholly free: the first block the free scanner comes to.
        let (_, end) = m.mm.folios.zone_span(top);
        let last = (end - 1) & !511;
        let (back, held): (Vec<u32>, Vec<u32>) = even.iter().partition(|&&pfn| pfn >= last);
        m.mm.folios.push_free(top, &back);
        let free_at = |m: &pagelab::sim::Machine<Classic>, phys: u32| {
            let page = m.mm.pageblocks.as_ref().unwrap().page_at(phys);
            m.mm.folios.free_list(top).any(|p| p == page)
        };
        assert!((last..end).all(|p| free_at(&m, p)), "{kernel}: the last block is free");
        let before = pagelab::mm::compaction::fragmentation_score_node(&m.mm);
        assert!(before > 90, "{kernel}: node score {before}");
        pagelab::mm::compaction::kcompactd_timeout(&mut m.mm);
        assert_eq!(proactive_passes(&m), 1, "{kernel}: a proactive pass");
        assert_eq!(ev(&m, Ev::CompactDaemonWake), 0, "{kernel}: not a kcompactd_do_work()");
        let scanned = ev(&m, Ev::CompactMigrateScanned);
        assert!(ev(&m, Ev::PgmigrateSuccess) > 0 && scanned > 0, "{kernel}: it migrated");
        let score = pagelab::mm::compaction::fragmentation_score_zone(&m.mm, top);
        assert!(score <= 80, "{kernel}: it ran until the zone scored {score}");
        assert!(scanned < (end - m.mm.folios.zone_span(top).0) as u64 / 2, "{kernel}: and stopped there ({scanned} scanned)");
        assert!((last..end).all(|p| free_at(&m, p)), "{kernel}: the free scanner passed over the free block");
        let daemon = ev(&m, Ev::CompactDaemonMigrateScanned);
        assert_eq!(daemon, if kernel == "6.12" { scanned } else { 0 }, "{kernel}: kcompactd's scan counters");
        m.mm.folios.push_free(top, &held);
        m.check().unwrap();
        m.mm.pageblocks.as_ref().unwrap().check().unwrap();
    }
}

#[test]
fn a_proactive_pass_that_does_not_lower_the_score_makes_kcompactd_sleep_64_timeouts_kcompactd_6_1_6_12() {
    // mm/compaction.c: kcompactd() sleeps default_timeout << COMPACT_MAX_DEFER_SHIFT after a
    // proactive pass that left the node's score where it was, until a wake-up runs
    // kcompactd_do_work() and the default timeout is back. A zone with no LRU pages and every
    // other frame free: nothing to migrate, the score stays near 100.
    for kernel in ["6.1", "6.12"] {
        let mut m = with_nonmovable_blocks("256M", kernel, "{ DMA32 = { blocks = 2, free = [8, 8, 8, 8] } }");
        let top = m.mm.nodes[0].zones.top();
        let even = hold_every_other_free_frame(&mut m, top);
        pagelab::mm::compaction::kcompactd_timeout(&mut m.mm);
        assert_eq!(proactive_passes(&m), 1, "{kernel}");
        assert!(pagelab::mm::compaction::fragmentation_score_node(&m.mm) > 90, "{kernel}: no progress");
        for _ in 0..63 {
            pagelab::mm::compaction::kcompactd_timeout(&mut m.mm);
        }
        assert_eq!(proactive_passes(&m), 1, "{kernel}: 63 timeouts slept through");
        pagelab::mm::compaction::kcompactd_timeout(&mut m.mm);
        assert_eq!(proactive_passes(&m), 2, "{kernel}: the 64th compacts again");
        pagelab::mm::compaction::kcompactd_timeout(&mut m.mm);
        assert_eq!(proactive_passes(&m), 2, "{kernel}: and sleeps long again");
        // A suitable zone (far above low + compact_gap(), fragmented) wakes kcompactd at once.
        pagelab::mm::compaction::wakeup_kcompactd(&mut m.mm, 9, top);
        assert_eq!(ev(&m, Ev::CompactDaemonWake), 1, "{kernel}");
        pagelab::mm::compaction::kcompactd_timeout(&mut m.mm);
        assert_eq!(proactive_passes(&m), 3, "{kernel}: the run set the default timeout again");
        m.mm.folios.push_free(top, &even);
        m.check().unwrap();
    }
}

#[test]
fn nonmovable_pageblocks_of_a_lower_zone_are_refused_under_a_policy_that_does_not_reclaim_by_zone() {
    // The classic LRU and MGLRU model kswapd reclaiming a lower zone alone; a plain policy
    // hosted through the seam does not.
    let text =
        |policy: &str| one_file_scenario("64M", "6.1", policy, 1_000).replace("[machine]\n", "[machine]\nnonmovable = { DMA = { blocks = 1, free = [4] } }\n");
    let Err(e) = pagelab::run(&scenario(&text("fifo")), |_, _| {}) else { panic!("refused") };
    assert!(matches!(e, pagelab::RunError::Scenario(_)), "the machine cannot be laid out: {e:?}");
    let e = e.to_string();
    assert!(e.contains("machine.nonmovable.DMA") && e.contains("highest zone (DMA32)") && e.contains("fifo"), "{e}");
    for policy in ["classic", "mglru"] {
        assert!(pagelab::run(&scenario(&text(policy)), |_, _| {}).is_ok(), "{policy} reclaims by zone");
    }
}

#[test]
fn posix_fadv_sequential_doubles_the_files_readahead_window() {
    // mm/fadvise.c: generic_fadvise() (6.1, 6.12): POSIX_FADV_SEQUENTIAL sets the file's
    // ra_pages to twice the device's, so a sequential reader's window grows to 64 pages
    // (read_ahead_kb = 128) instead of 32: more pages are cached ahead of the reader.
    let ahead = |advice: pagelab_workload::Advice| {
        let mut m = one_file("64M", "6.12", 1000);
        for p in 0..300 {
            m.apply(0, pagelab_workload::Op { advice, ..read(0, p) });
        }
        (300..1000).filter(|&p| pfn_of(&m, 0, 0, p).is_some()).count()
    };
    let (normal, sequential) = (ahead(pagelab_workload::Advice::Normal), ahead(pagelab_workload::Advice::Sequential));
    assert!(normal > 0 && normal <= 64, "{normal}");
    assert!(sequential > normal && sequential <= 128, "normal {normal}, sequential {sequential}");
}
