//! Tests of the MGLRU drivers and of the rules where 6.1.192 and 6.12.95 differ (each test
//! names the kernel function that differs; the predicates are in kernel.rs), plus Kairui Song's
//! scenario. The generation, tier, controller and
//! refault rules shared by both kernels are pinned in tests/model/mglru.rs.

use super::gen::{folio_gen, gen_of};
use super::LruGen;
use crate::kernel::DEF_PRIORITY;
use crate::mm::folio::{pg, Pfn};
use crate::mm::memcontrol::ROOT_MEMCG;

/// The root memcg's lruvec on node 0.
const ROOT_LV: super::LvId = super::LvId { memcg: ROOT_MEMCG, nid: 0 };
use crate::mm::vmscan::ScanControl;
use crate::mm::vmstat::{Ev, Reclaimer};
use crate::mm::Actor;
use crate::policy::Policy;
use crate::sim::scenario::Scenario;
use crate::sim::Machine;
use pagelab_workload::{Access, Advice, Op};

fn machine(text: &str) -> Machine<LruGen> {
    let s = Scenario::parse(text, "test.toml", "test", &[]).unwrap_or_else(|e| panic!("{e}"));
    Machine::new(&s, |mm| LruGen::new(mm, &s.mglru)).unwrap()
}

/// One task with `pages` of anonymous memory (object 0), swap on an SSD, nothing run yet.
fn anon(kernel: &str, pages: u64, walks: bool) -> Machine<LruGen> {
    machine(&format!(
        "[machine]\nmemory = \"64M\"\nkernel = \"{kernel}\"\npolicy = \"mglru\"\nswap = {{ device = \"ssd\", size = \"64M\" }}\n\
         [mglru]\nwalks = {walks}\n\
         [[workload]]\nname = \"a\"\ncgroup = \"/\"\nkind = \"anon-write\"\nsize = \"{pages}p\"\nops = 0\n"
    ))
}

/// One task with a file of `pages` (object 0) it reads through `kind` (file-read or mmap-read).
fn file(kernel: &str, memory: &str, kind: &str, pages: u64) -> Machine<LruGen> {
    let advice = if kind == "file-read" { "fadvise = \"random\"\n" } else { "" };
    machine(&format!(
        "[machine]\nmemory = \"{memory}\"\nkernel = \"{kernel}\"\npolicy = \"mglru\"\n\
         [[workload]]\nname = \"f\"\ncgroup = \"/\"\nkind = \"{kind}\"\nfile_size = \"{pages}p\"\n{advice}ops = 0\n"
    ))
}

fn op(access: Access, page: u64, write: bool) -> Op {
    Op { object: 0, page, npages: 1, write, access, advice: Advice::Normal, fill: false, think_ns: 0, due: None, more: false }
}

fn pfn(m: &Machine<LruGen>, page: u64) -> Pfn {
    let (base, _) = m.object(0, 0);
    m.mm.space.resident(base + page as u32).expect("resident")
}

fn gen(m: &Machine<LruGen>, page: u64) -> Option<usize> {
    folio_gen(m.mm.folios.get(pfn(m, page)).flags)
}

fn max_seq(m: &Machine<LruGen>) -> u64 {
    m.policy.lv[ROOT_MEMCG as usize].max_seq
}

/// Creates `n` generations without walking page tables (young bits stay as they are).
fn age(m: &mut Machine<LruGen>, n: usize) {
    let walks = std::mem::replace(&mut m.policy.walks, false);
    for _ in 0..n {
        let max = max_seq(m);
        assert!(m.policy.try_to_inc_max_seq(&mut m.mm, ROOT_LV, max, true));
    }
    m.policy.walks = walks;
}

/// Touches `pages` anonymous pages, then ages them into the oldest of three generations with
/// their young bits cleared (as if reclaim's rmap walk had seen them).
fn anon_in_oldest(kernel: &str, pages: u64, walks: bool) -> Machine<LruGen> {
    let mut m = anon(kernel, pages, walks);
    for p in 0..pages {
        m.apply(0, op(Access::Anon, p, true));
    }
    m.drain();
    age(&mut m, 2);
    m.policy.try_to_inc_min_seq(ROOT_LV, true);
    for p in 0..pages {
        let f = pfn(&m, p);
        m.mm.folios.clear(f, pg::YOUNG);
    }
    let lv = &m.policy.lv[ROOT_MEMCG as usize];
    assert_eq!(lv.max_seq - lv.min_seq[0] + 1, 3, "{kernel}: three anon generations");
    assert_eq!(gen(&m, 0), Some(gen_of(lv.min_seq[0])), "{kernel}: the pages are in the oldest one");
    m.check().unwrap();
    m
}

#[test]
fn v6_1_walks_skip_a_task_with_fewer_than_64_eligible_pages() {
    // mm/vmscan.c: should_skip_mm(): 6.1.192 skips an mm with fewer than 64 eligible pages,
    // 6.12.95 has no size filter.
    for (kernel, promoted) in [("6.1", false), ("6.12", true)] {
        let mut m = anon_in_oldest(kernel, 32, true);
        m.apply(0, op(Access::Anon, 5, false));
        let max = max_seq(&m);
        assert!(m.policy.try_to_inc_max_seq(&mut m.mm, ROOT_LV, max, true));
        // The walk promotes to the generation it ages (max_seq then, max_seq - 1 now).
        let youngest = Some(gen_of(max));
        assert_eq!(max_seq(&m), max + 1);
        assert_eq!(gen(&m, 5) == youngest, promoted, "{kernel}: walked and promoted?");
        assert_eq!(m.mm.folios.test(pfn(&m, 5), pg::YOUNG), !promoted, "{kernel}: the walk clears the young bit");
        assert_ne!(gen(&m, 6), youngest, "{kernel}: an old page is never promoted");
        m.check().unwrap();
    }
}

/// Calls look-around from direct reclaim (no walk context) for page 0 after touching `young`
/// of its neighbours; returns (pgactivate after the batch drains, how many reached max_seq).
fn look_around_from_direct_reclaim(kernel: &str, young: u64) -> (u64, usize) {
    let mut m = anon_in_oldest(kernel, 64, true);
    for p in 1..=young {
        m.apply(0, op(Access::Anon, p, false));
    }
    m.mm.actor = Actor::Task(0);
    let trigger = pfn(&m, 0);
    m.policy.look_around(&mut m.mm, trigger);
    let before = m.mm.events.get(Ev::PgActivate);
    m.drain();
    let activated = m.mm.events.get(Ev::PgActivate) - before;
    let youngest = Some(gen_of(max_seq(&m)));
    let promoted = (1..=young).filter(|&p| gen(&m, p) == youngest).count();
    assert!((1..=young).all(|p| !m.mm.folios.test(pfn(&m, p), pg::YOUNG)), "{kernel}: young bits cleared");
    m.check().unwrap();
    (activated, promoted)
}

#[test]
fn look_around_without_a_walk_activates_in_6_12_and_only_below_15_folios_in_6_1() {
    // mm/vmscan.c: lru_gen_look_around() without a walk: 6.1.192 folio_activate()s fewer than
    // 15 young folios and moves more under the LRU lock; 6.12.95 always folio_activate()s.
    assert_eq!(look_around_from_direct_reclaim("6.1", 5), (5, 5), "6.1: few folios go through folio_activate()");
    assert_eq!(look_around_from_direct_reclaim("6.1", 20), (0, 20), "6.1: many are moved under the LRU lock");
    assert_eq!(look_around_from_direct_reclaim("6.12", 5), (5, 5));
    assert_eq!(look_around_from_direct_reclaim("6.12", 20), (20, 20), "6.12: always folio_activate()");
}

#[test]
fn look_around_from_kswapd_updates_generations_in_place() {
    for kernel in ["6.1", "6.12"] {
        let mut m = anon_in_oldest(kernel, 64, true);
        for p in 1..=5 {
            m.apply(0, op(Access::Anon, p, false));
        }
        m.mm.actor = Actor::Kswapd(0);
        let trigger = pfn(&m, 0);
        m.policy.look_around(&mut m.mm, trigger);
        let youngest = Some(gen_of(max_seq(&m)));
        assert!((1..=5).all(|p| gen(&m, p) == youngest), "{kernel}");
        assert_eq!(m.mm.events.get(Ev::PgActivate), 0, "{kernel}");
        m.check().unwrap();
    }
}

#[test]
fn isolate_folio_needs_may_writepage_for_unswapped_anon_only_in_6_1() {
    // mm/vmscan.c: isolate_folio(): boosted kswapd (may_writepage = 0) cannot start swap-out
    // in 6.1.192; 6.12.95 only asks for __GFP_IO.
    for (kernel, isolates) in [("6.1", false), ("6.12", true)] {
        let mut m = anon_in_oldest(kernel, 64, true);
        let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Kswapd, 32);
        sc.may_writepage = false;
        m.mm.actor = Actor::Kswapd(0);
        m.policy.evict_folios(&mut m.mm, ROOT_LV, &mut sc, 60, super::MAX_LRU_BATCH);
        let scanned = m.mm.events.get(Ev::PgScanAnon);
        assert_eq!(scanned > 0, isolates, "{kernel}: pgscan_anon {scanned}");
        m.check().unwrap();
    }
}

/// File pages faulted through a mapping (all in max_seq), with the emptied generations
/// dropped: two generations left, so aging is needed.
fn mapped_file_needing_aging(kernel: &str) -> Machine<LruGen> {
    let mut m = file(kernel, "64M", "mmap-read", 256);
    for p in 0..256 {
        m.apply(0, op(Access::Mmap, p, false));
    }
    m.drain();
    m.policy.try_to_inc_min_seq(ROOT_LV, false);
    let (need, _) = m.policy.should_run_aging(ROOT_LV, false, DEF_PRIORITY - 1);
    assert!(need, "{kernel}: two generations need aging");
    m
}

#[test]
fn kswapd_ages_in_get_nr_to_scan_only_in_6_12() {
    // mm/vmscan.c: 6.1.192's get_nr_to_scan() returns 0 to kswapd and leaves the
    // aging to lru_gen_age_node(); 6.12 ages right there (and stops this lruvec).
    for (kernel, aged) in [("6.1", false), ("6.12", true)] {
        let mut m = mapped_file_needing_aging(kernel);
        let before = max_seq(&m);
        let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Kswapd, 32);
        sc.priority = DEF_PRIORITY - 1;
        m.mm.actor = Actor::Kswapd(0);
        m.policy.shrink_node(&mut m.mm, &mut sc);
        assert_eq!(max_seq(&m) > before, aged, "{kernel}");
        assert_eq!(sc.nr_reclaimed, 0, "{kernel}: nothing evicted in this pass");
        m.check().unwrap();
    }
}

#[test]
fn v6_1_kswapd_ages_in_lru_gen_age_node_but_not_on_its_first_iteration() {
    let mut m = mapped_file_needing_aging("6.1");
    let before = max_seq(&m);
    let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Kswapd, 0);
    m.mm.actor = Actor::Kswapd(0);
    m.policy.kswapd_age_node(&mut m.mm, &mut sc);
    assert_eq!(max_seq(&m), before, "the first call only arms memcgs_need_aging");
    assert!(sc.memcgs_need_aging);
    sc.priority = DEF_PRIORITY - 1;
    m.policy.kswapd_age_node(&mut m.mm, &mut sc);
    assert_eq!(max_seq(&m), before + 1, "the second one ages");
    // 6.12's lru_gen_age_node() ages nothing.
    let mut m = mapped_file_needing_aging("6.12");
    let before = max_seq(&m);
    let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Kswapd, 0);
    m.mm.actor = Actor::Kswapd(0);
    for _ in 0..2 {
        m.policy.kswapd_age_node(&mut m.mm, &mut sc);
    }
    assert_eq!(max_seq(&m), before);
}

/// Clean file pages read through read(2), spread over the generations by aging.
fn read_file(kernel: &str, pages: u64) -> Machine<LruGen> {
    let mut m = file(kernel, "256M", "file-read", pages);
    for p in 0..pages {
        m.apply(0, op(Access::Buffered, p, false));
    }
    m.drain();
    m
}

#[test]
fn boosted_kswapd_reclaims_clean_pages_in_6_1_and_nothing_in_6_12() {
    // mm/vmscan.c: 6.12.95's lru_gen_shrink_node() returns at once without may_writepage;
    // 6.1.192's evicts clean folios.
    for (kernel, reclaims) in [("6.1", true), ("6.12", false)] {
        let mut m = read_file(kernel, 2048);
        let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Kswapd, 64);
        sc.may_writepage = false;
        sc.priority = 4;
        m.mm.actor = Actor::Kswapd(0);
        m.policy.shrink_node(&mut m.mm, &mut sc);
        assert_eq!(sc.nr_reclaimed > 0, reclaims, "{kernel}: reclaimed {}", sc.nr_reclaimed);
        m.check().unwrap();
    }
}

#[test]
fn v6_12_kswapd_starts_at_the_priority_that_fits_its_target() {
    // mm/vmscan.c: set_initial_priority() (6.12.95): fls(inactive) - 1 - fls(target - 1),
    // clamped to [6, 12]; 6.1.192 has no such step.
    for (kernel, pages, target, want) in [("6.12", 16_384u64, 1000u64, 6u32), ("6.12", 16_384, 64, 8), ("6.12", 2048, 1000, 6), ("6.1", 16_384, 1000, 12)] {
        let mut m = read_file(kernel, pages);
        let inactive = m.mm.node_lru_size(crate::mm::vmstat::Lru::InactiveFile);
        if kernel == "6.12" {
            let fls = |x: u64| 64 - x.leading_zeros() as i64;
            let expect = (fls(inactive) - 1 - fls(target - 1)).clamp(6, 12) as u32;
            assert_eq!(expect, want, "inactive {inactive}");
        }
        let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Kswapd, target);
        m.mm.actor = Actor::Kswapd(0);
        m.policy.shrink_node(&mut m.mm, &mut sc);
        assert_eq!(sc.priority, want, "{kernel}: {pages} pages, target {target}");
    }
}

/// kswapd's root reclaim of a 256M machine (`zones`: its layout) whose memory a file read
/// filled, at priority 2, with a target well above what lifts the free pages over high + 64;
/// returns (free before, reclaimed, the high watermarks added up).
fn kswapd_pass(kernel: &str, zones: &str) -> (u64, u64, u64) {
    let pages = 72_000;
    let mut m = machine(&format!(
        "[machine]\nmemory = \"256M\"\nkernel = \"{kernel}\"\npolicy = \"mglru\"\nzones = \"{zones}\"\n\
         [[workload]]\nname = \"f\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"{pages}p\"\nfadvise = \"random\"\nops = 0\n"
    ));
    for p in 0..pages {
        m.apply(0, op(Access::Buffered, p, false));
    }
    m.drain();
    // balance_pgdat() holds the per-CPU lists to four batches (ZONE_RECLAIM_ACTIVE); start
    // with them empty so the free pages are all where the watermark checks see them.
    crate::mm::page_alloc::drain_all_pages(&mut m.mm);
    for zone in &mut m.mm.nodes[0].zones.z {
        zone.reclaim_active = true;
    }
    let free = m.mm.nr_free();
    let high = m.mm.nodes[0].zones.high_wmarks();
    assert!(free + 1000 > high + 64 + 2 * 64, "the target lies past high + 64: {free} free");
    let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Kswapd, 1000);
    sc.may_writepage = true;
    // A later priority iteration of balance_pgdat(): the lruvec's scan budget
    // (total >> priority) exceeds the target, so only should_abort_scan() stops the pass.
    sc.priority = 2;
    m.mm.actor = Actor::Kswapd(0);
    m.policy.shrink_node(&mut m.mm, &mut sc);
    m.check().unwrap();
    (free, sc.nr_reclaimed, high)
}

#[test]
fn v6_12_kswapd_stops_at_its_target_when_zone_dma_fails_the_watermark_check() {
    // should_abort_scan() (6.12) lets kswapd stop early only when every zone passes
    // zone_watermark_ok(high + 64), lowmem_reserve included; x86-64's ZONE_DMA sits below
    // that (the allocator leaves it at low + reserve, and it gets only its 6% share of what
    // kswapd frees), so kswapd reclaims its whole target (the oracle's 6.12 guests steal
    // 540-1280 pages per kswapd run against a target of ~770).
    let (free, reclaimed, _) = kswapd_pass("6.12", "x86-64");
    assert!(reclaimed >= 1000, "6.12 with ZONE_DMA: {reclaimed} reclaimed from {free} free, want the target");
    // With one zone, that zone decides: kswapd stops once free > high + 64, one 64-page
    // batch past it at most.
    let (free, reclaimed, high) = kswapd_pass("6.12", "one");
    assert!(reclaimed < 1000 && free + reclaimed <= high + 64 + 2 * 64, "6.12 with one zone: {reclaimed} reclaimed from {free} free");
    assert!(free + reclaimed > high + 64);
}

#[test]
fn min_ttl_ms_ooms_when_every_oldest_generation_is_younger_than_it() {
    // Both kernels invoke the OOM killer from lru_gen_age_node() when no lruvec's oldest file
    // generation has lived min_ttl_ms (6.1 from its second call on, see memcgs_need_aging).
    for kernel in ["6.1", "6.12"] {
        for (now_ns, oom) in [(500_000_000u64, true), (2_000_000_000, false)] {
            let mut m = machine(&format!(
                "[machine]\nmemory = \"64M\"\nkernel = \"{kernel}\"\npolicy = \"mglru\"\n[mglru]\nmin_ttl_ms = 1000\n\
                 [[workload]]\nname = \"f\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"8192p\"\nfadvise = \"random\"\nops = 0\n\
                 [[workload]]\nname = \"a\"\ncgroup = \"/\"\nkind = \"anon-write\"\nsize = \"64p\"\nops = 0\n"
            ));
            for p in 0..8192 {
                m.apply(0, op(Access::Buffered, p, false));
            }
            for p in 0..64 {
                m.apply(1, op(Access::Anon, p, true));
            }
            m.drain();
            let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Kswapd, 0);
            sc.priority = DEF_PRIORITY - 1;
            m.mm.actor = Actor::Kswapd(0);
            m.mm.nodes[0].kswapd_clock = now_ns; // every generation was born at 0
            for _ in 0..2 {
                m.policy.kswapd_age_node(&mut m.mm, &mut sc);
            }
            assert_eq!(m.mm.oom_kills.len() == 1, oom, "{kernel} at {now_ns} ns");
        }
    }
}

#[test]
fn prefetch_changes_nothing_but_speed() {
    // Seed 003: the prefetch in scan_folios()/inc_min_seq() has no semantic effect.
    let text = include_str!("../../../../../examples/mglru-kairui.toml");
    for kernel in ["6.1", "6.12"] {
        let run = |prefetch: bool| {
            let sets = [format!("machine.kernel=\"{kernel}\""), format!("mglru.prefetch={prefetch}"), "workload.scan.ops=20000".into()];
            let s = Scenario::parse(text, "mglru-kairui.toml", "kairui", &sets).unwrap();
            crate::run(&s, |_, _| {}).unwrap()
        };
        let (on, off) = (run(true), run(false));
        assert_eq!(on.vmstat, off.vmstat, "{kernel}");
        assert_eq!(on.elapsed_s, off.elapsed_s, "{kernel}");
    }
}

/// Runs examples/mglru-kairui.toml with exact LRU statistics (`machine.rstat = "exact"`):
/// (workingset_refault_file, the scan task's ops/s).
fn kairui(kernel: &str, refault_distance: bool) -> (u64, f64, crate::Report) {
    let text = include_str!("../../../../../examples/mglru-kairui.toml");
    let sets = [format!("machine.kernel=\"{kernel}\""), format!("mglru.refault_distance={refault_distance}"), "machine.rstat=\"exact\"".into()];
    let s = Scenario::parse(text, "mglru-kairui.toml", "kairui", &sets).unwrap();
    let r = crate::run(&s, |_, _| {}).unwrap();
    let scan = r.tasks.iter().find(|t| t.name == "scan").unwrap();
    (r.vmstat["workingset_refault_file"], scan.ops_per_s, r.clone())
}

#[test]
fn seed_000_refault_distance_lowers_refaults_and_raises_throughput() {
    // With exact statistics the rule sees the generations as they are. (With the kernel's
    // rate-limited rstat, the default, it reads sizes up to a flush period old and this
    // example gains far less: examples/seeds/README.md, seed 000.)
    for kernel in ["6.1", "6.12"] {
        let (plain_refaults, plain_ops, plain) = kairui(kernel, false);
        let (rd_refaults, rd_ops, rd) = kairui(kernel, true);
        let scan_ops = plain.tasks.iter().find(|t| t.name == "scan").unwrap().ops;
        // Plain MGLRU: the scanned file is stuck in the oldest generation, every access after
        // the first loop refaults, and nothing is activated on refault.
        assert!(plain_refaults as f64 > 0.9 * scan_ops as f64, "{kernel}: {plain_refaults} refaults in {scan_ops} reads");
        if kernel == "6.1" {
            assert_eq!(plain.vmstat["workingset_activate_file"], 0, "{kernel}");
        }
        // The variant re-activates refaults within the active generations' reach.
        assert!(rd.vmstat["workingset_activate_file"] > 0, "{kernel}");
        assert!((rd_refaults as f64) < 0.75 * plain_refaults as f64, "{kernel}: refaults {rd_refaults} vs {plain_refaults}");
        assert!(rd_ops > 1.3 * plain_ops, "{kernel}: scan ops/s {rd_ops:.0} vs {plain_ops:.0}");
    }
}

#[test]
fn memory_low_is_skipped_once_by_6_12s_memcg_lru_and_until_the_low_pass_in_6_1() {
    // mm/vmscan.c: 6.1.192's get_nr_to_scan() skips a memcg below memory.low until reclaim
    // retries with memcg_low_reclaim; 6.12.95's shrink_one() rotates it to the tail once, then
    // reclaims it and counts a `low` event.
    for kernel in ["6.1", "6.12"] {
        let mut m = machine(&format!(
            "[machine]\nmemory = \"256M\"\nkernel = \"{kernel}\"\npolicy = \"mglru\"\n\
             [[cgroup]]\npath = \"/a\"\nlow = \"64M\"\n[[cgroup]]\npath = \"/b\"\n\
             [[workload]]\nname = \"f\"\ncgroup = \"/a\"\nkind = \"file-read\"\nfile_size = \"2048p\"\nfadvise = \"random\"\nops = 0\n"
        ));
        for p in 0..2048 {
            m.apply(0, op(Access::Buffered, p, false));
        }
        m.drain();
        let a = m.mm.memcgs.find("/a").unwrap();
        m.mm.actor = Actor::Task(0);
        let pass = |m: &mut Machine<LruGen>, low_reclaim: bool| {
            let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Direct, 32);
            sc.priority = 4;
            sc.memcg_low_reclaim = low_reclaim;
            m.policy.shrink_node(&mut m.mm, &mut sc);
            (sc.nr_reclaimed, sc.memcg_low_skipped)
        };
        let (first, skipped) = pass(&mut m, false);
        let low_after_first = m.mm.memcgs.get(a).memory_events.low;
        let (second, _) = pass(&mut m, kernel == "6.1" && skipped);
        let low = m.mm.memcgs.get(a).memory_events.low;
        if kernel == "6.1" {
            assert_eq!((first, low_after_first), (0, 0), "6.1: passed over without memcg_low_reclaim");
            assert!(skipped, "6.1: shrink_node_memcgs() notes the skip for a low-reclaim retry");
            assert!(second > 0 && low == 1, "6.1: the low-reclaim pass reclaims it and counts `low`");
        } else {
            // The first visit only rotates it to the tail; a later visit (in the same pass if
            // the random bins bring it round again) reclaims it, each time counting `low`.
            assert_eq!(low_after_first, (first > 0) as u64, "6.12: a low event with every reclaim");
            assert_eq!(low, (first > 0) as u64 + (second > 0) as u64, "6.12");
            assert!(second > 0, "6.12: reclaimed once it was rotated to the tail");
        }
        m.check().unwrap();
    }
}

#[test]
fn active_shmem_starts_in_the_youngest_generation() {
    // lru_gen_add_folio(): an active folio joins max_seq; an inactive anon folio outside the
    // swap cache max_seq - 1.
    for kernel in ["6.1", "6.12"] {
        let m = machine(&format!(
            "[machine]\nmemory = \"32M\"\nkernel = \"{kernel}\"\npolicy = \"mglru\"\nshmem = \"40p\"\nshmem_active = \"30p\"\n\
             [[workload]]\nname = \"a\"\ncgroup = \"/\"\nkind = \"anon-write\"\nsize = \"1p\"\nops = 0\n"
        ));
        let lv = &m.policy.lv[ROOT_MEMCG as usize];
        let (youngest, next) = (gen_of(lv.max_seq), gen_of(lv.max_seq - 1));
        assert_eq!(m.policy.gen_pages(&m.mm, ROOT_MEMCG, youngest, 0).len(), 30, "{kernel}");
        assert_eq!(m.policy.gen_pages(&m.mm, ROOT_MEMCG, next, 0).len(), 10, "{kernel}");
        m.check().unwrap();
    }
}

/// Touches page 0 (young PTE), isolates it as evict_folios() does and asks
/// folio_check_references() about it; returns the verdict and whether it kept PG_referenced.
fn check_references_of_a_young_isolated_folio(kernel: &str) -> (crate::mm::vmscan::FolioRef, bool) {
    let mut m = anon_in_oldest(kernel, 64, true);
    m.apply(0, op(Access::Anon, 0, false));
    let trigger = pfn(&m, 0);
    assert!(m.mm.folios.test(trigger, pg::YOUNG));
    assert!(m.policy.del_folio(&mut m.mm, trigger, true));
    m.mm.folios.set(trigger, pg::ISOLATED);
    m.mm.actor = Actor::Task(0);
    let verdict = crate::mm::vmscan::folio_check_references(&mut m.mm, &mut m.policy, trigger);
    assert!(!m.mm.folios.test(trigger, pg::YOUNG), "{kernel}: the young bit is consumed");
    (verdict, m.mm.folios.test(trigger, pg::REFERENCED))
}

#[test]
fn look_around_marks_its_isolated_trigger_referenced_so_6_1_activates_it() {
    use crate::mm::vmscan::FolioRef;
    // mm/vmscan.c: lru_gen_look_around() in 6.1.192 meets the trigger's PTE still young in
    // its window and sets PG_referenced on the isolated folio; folio_check_references() then
    // sees one young PTE and PG_referenced: FOLIOREF_ACTIVATE (pgactivate). 6.12.95 clears
    // the trigger's PTE first, so the folio is only referenced once: FOLIOREF_KEEP.
    assert_eq!(check_references_of_a_young_isolated_folio("6.1"), (FolioRef::Activate, true));
    assert_eq!(check_references_of_a_young_isolated_folio("6.12"), (FolioRef::Keep, true));
}

/// folio_referenced() of page 0 of a file mapped with `advice` and touched since; returns the
/// references counted and whether the young bit survived.
fn referenced_with_advice(kernel: &str, advice: Advice) -> (u32, bool) {
    let mut m = file(kernel, "64M", "mmap-read", 64);
    m.apply(0, Op { advice, ..op(Access::Mmap, 0, false) });
    m.drain();
    let f = pfn(&m, 0);
    assert!(m.mm.folios.test(f, pg::YOUNG) && m.mm.folios.test(f, pg::MAPPED));
    m.mm.actor = Actor::Task(0);
    let n = crate::mm::vmscan::folio_referenced(&mut m.mm, &mut m.policy, f);
    (n, m.mm.folios.test(f, pg::YOUNG))
}

#[test]
fn folio_referenced_one_counts_random_read_mappings_in_6_1_and_skips_them_in_6_12() {
    // mm/rmap.c: folio_referenced_one() in 6.1.192 leaves VM_SEQ_READ and VM_RAND_READ
    // mappings out of the look-around but clears their young PTEs, counting a reference
    // unless the mapping is VM_SEQ_READ; 6.12.95 skips mappings without recency altogether
    // (invalid_folio_referenced_vma()), leaving the young bit.
    assert_eq!(referenced_with_advice("6.1", Advice::Random), (1, false));
    assert_eq!(referenced_with_advice("6.1", Advice::Sequential), (0, false));
    assert_eq!(referenced_with_advice("6.1", Advice::Normal), (1, false));
    assert_eq!(referenced_with_advice("6.12", Advice::Random), (0, true));
    assert_eq!(referenced_with_advice("6.12", Advice::Sequential), (0, true));
    assert_eq!(referenced_with_advice("6.12", Advice::Normal), (1, false));
}

/// A 6.12 machine reading one file through read(2), with `[mglru] refs_width = width`.
fn file_refs_width(width: u32, pages: u64) -> Machine<LruGen> {
    machine(&format!(
        "[machine]\nmemory = \"64M\"\nkernel = \"6.12\"\npolicy = \"mglru\"\n[mglru]\nrefs_width = {width}\n\
         [[workload]]\nname = \"f\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"{pages}p\"\nfadvise = \"random\"\nops = 0\n"
    ))
}

#[test]
fn one_refs_bit_saturates_the_count_and_sort_folio_protects_a_folio_read_three_times() {
    // include/linux/page-flags-layout.h: LRU_REFS_WIDTH is min(2, the bits page->flags has
    // left); 6.6.8 with a distro config has 1. mm/swap.c: folio_inc_refs() stops at the
    // field's top; mm/vmscan.c: sort_folio() protects refs == BIT(LRU_REFS_WIDTH) whatever
    // the tier.
    for (width, reads, field, lazy) in [(1, 3, 1, true), (2, 3, 1, false), (1, 6, 1, true), (2, 6, 3, true)] {
        let mut m = file_refs_width(width, 16);
        // filemap_read() marks a folio accessed once per run of reads of it: alternate pages.
        for _ in 0..reads {
            m.apply(0, op(Access::Buffered, 0, false));
            m.apply(0, op(Access::Buffered, 1, false));
        }
        m.drain();
        let flags = m.mm.folios.get(pfn(&m, 0)).flags;
        assert_eq!((flags & pg::REFS_MASK) >> pg::REFS_SHIFT, field, "width {width}, {reads} reads");
        assert!(flags & pg::REFERENCED != 0 && flags & pg::WORKINGSET != 0);
        assert_eq!(m.policy.refs_tier(flags).2, lazy, "width {width}, {reads} reads");
    }
}

#[test]
fn one_refs_bit_restores_every_recent_refault_of_a_workingset_folio() {
    // mm/workingset.c: lru_gen_refault() restores a recent refault whose refs reach
    // BIT(LRU_REFS_WIDTH) - 1: with one bit, any folio evicted with PG_workingset.
    let restores = |width: u32| {
        let mut m = file_refs_width(width, 20_000);
        // Twice over a file a little larger than memory: each page is read twice, apart
        // (PG_workingset set), before the pass evicts it; the second pass refaults them.
        for _ in 0..2 {
            for p in 1..20_000 {
                m.apply(0, op(Access::Buffered, p, false));
                m.apply(0, op(Access::Buffered, p - 1, false));
            }
        }
        m.drain();
        m.check().unwrap();
        m.mm.events.get(Ev::WorkingsetRestoreFile)
    };
    let (one, two) = (restores(1), restores(2));
    assert!(one > 1000 && two == 0, "restores: one bit {one}, two bits {two}");
}
