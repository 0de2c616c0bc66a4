//! The one reclaim batch (mm/vmscan.rs: reclaim_batch(), modeling the part of
//! shrink_inactive_list() and evict_folios() after isolation, 6.1.192/6.12.95): its named
//! rules decide the pgscan count and the flusher/sc->nr feedback, the epilogue is called in
//! the contract's order, and the three callers (classic, MGLRU, the seam) count alike.

use crate::common::{classic, ev, mglru, one_file_scenario, read, scenario};

use pagelab::mm::folio::{pg, Pfn};
use pagelab::mm::memcontrol::ROOT_MEMCG;
use pagelab::mm::vmscan::{move_folios_to_lru, reclaim_batch, BatchRules, DirtyFeedback, Epilogue, Pgscan, ReclaimStat, ScanControl};
use pagelab::mm::vmstat::{Ev, Lru, Reclaimer};
use pagelab::mm::Mm;
use pagelab::policy::classic::Classic;
use pagelab::policy::Policy;
use pagelab::sim::Machine;
use pagelab_workload::{Access, Advice, Op};

/// Records the epilogue's calls and puts every survivor back. With `forget_flush`, its putback
/// forgets a flush shrink_folio_list() asked for itself (it wakes the flusher for a dirty
/// file folio it cannot write), so that what follows is the batch's own wake-up.
#[derive(Default)]
struct Log(Vec<String>, bool);

impl Epilogue<Classic> for Log {
    fn before_shrink(&mut self, _: &mut Mm, _: &mut Classic, list: &[Pfn]) {
        self.0.push(format!("before_shrink {}", list.len()));
    }
    fn putback(&mut self, mm: &mut Mm, p: &mut Classic, list: &mut Vec<Pfn>) {
        self.0.push(format!("putback {}", list.len()));
        if self.1 {
            mm.wb_pending_all = false;
        }
        move_folios_to_lru(mm, p, list);
        list.clear();
    }
    fn note_cost(&mut self, _: &mut Mm, reclaimed: u64, _: &ReclaimStat) {
        self.0.push(format!("note_cost {reclaimed}"));
    }
}

const PAGES: u64 = 16;

/// A classic machine with one file of PAGES pages in the page cache, written (dirty) or
/// read (clean), every page on the inactive file list, then taken off it as an isolation
/// would.
fn isolated_file_pages(write: bool) -> (Machine<Classic>, Vec<Pfn>) {
    let mut m = classic(&one_file_scenario("64M", "6.12", "classic", PAGES));
    for p in 0..PAGES {
        m.apply(
            0,
            Op { object: 0, page: p, npages: 1, write, access: Access::Buffered, advice: Advice::Random, fill: false, think_ns: 0, due: None, more: false },
        );
    }
    m.drain();
    let list = m.policy.list_pages(&m.mm, ROOT_MEMCG, Lru::InactiveFile);
    assert_eq!(list.len() as u64, PAGES, "the fixture's pages are on the inactive file list");
    for &pfn in &list {
        m.policy.lru_del(&mut m.mm, pfn);
        m.mm.folios.set(pfn, pg::ISOLATED);
    }
    (m, list)
}

#[test]
fn an_all_dirty_batch_wakes_the_flusher_and_feeds_sc_nr_only_under_shrink_inactive_lists_rules() {
    // shrink_inactive_list() (6.1/6.12) wakes the flushers when every taken folio was dirty
    // and unqueued and adds its reclaim_stat to sc->nr; evict_folios() (6.1.192/6.12.95) does
    // neither. The batch does what its DirtyFeedback says.
    let run = |dirty: DirtyFeedback| {
        let (mut m, mut list) = isolated_file_pages(true);
        assert!(!m.mm.wb_pending_all, "no flush was asked for before the batch");
        let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Direct, 32);
        let rules = BatchRules { pgscan: Pgscan::AtIsolation, dirty, ignore_references: false, caller: "test" };
        reclaim_batch(&mut m.mm, &mut m.policy, ROOT_MEMCG, &mut sc, &mut list, rules, &mut Log(Vec::new(), true));
        (m.mm.wb_pending_all, sc.nr)
    };
    let (woken, nr) = run(DirtyFeedback::WakeFlusherAndAccount);
    assert!(woken, "shrink_inactive_list()'s rule wakes the flusher");
    assert_eq!((nr.nr_taken, nr.nr_file_taken, nr.nr_unqueued_dirty, nr.nr_dirty), (PAGES, PAGES, PAGES, PAGES));
    let (woken, nr) = run(DirtyFeedback::Ignore);
    assert!(!woken, "evict_folios()'s rule does not wake the flusher");
    assert_eq!(nr, ReclaimStat::default(), "evict_folios()'s rule leaves sc->nr alone");
    let (woken, nr) = run(DirtyFeedback::Dropped);
    assert!(!woken, "reclaim_folio_list()'s dropped statistics wake no flusher, not even per folio");
    assert_eq!(nr, ReclaimStat::default(), "reclaim_folio_list()'s rule leaves sc->nr alone");
}

#[test]
fn the_batch_counts_pgscan_where_its_rule_says_and_pgsteal_by_type_around_the_epilogue() {
    let run = |pgscan: Pgscan| {
        let (mut m, mut list) = isolated_file_pages(false);
        let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Direct, 32);
        let mut log = Log::default();
        let rules = BatchRules { pgscan, dirty: DirtyFeedback::WakeFlusherAndAccount, ignore_references: false, caller: "test" };
        let reclaimed = reclaim_batch(&mut m.mm, &mut m.policy, ROOT_MEMCG, &mut sc, &mut list, rules, &mut log);
        let memcg = |e| m.mm.memcgs.get(ROOT_MEMCG).events.get(e);
        assert!(reclaimed > 0, "clean, unmapped file pages are reclaimed");
        assert_eq!(log.0, vec![format!("before_shrink {PAGES}"), format!("putback {}", PAGES - reclaimed), format!("note_cost {reclaimed}")]);
        assert_eq!((ev(&m, Ev::PgStealDirect), ev(&m, Ev::PgStealFile), ev(&m, Ev::PgStealAnon)), (reclaimed, reclaimed, 0));
        assert_eq!(memcg(Ev::PgStealDirect), reclaimed);
        assert_eq!(ev(&m, Ev::PgScanFile), memcg(Ev::PgScanDirect));
        (ev(&m, Ev::PgScanDirect), ev(&m, Ev::PgScanFile), ev(&m, Ev::PgScanAnon))
    };
    // shrink_inactive_list() counts what it scanned, taken or not: 3 more than it took.
    assert_eq!(run(Pgscan::Here([0, PAGES + 3])), (PAGES + 3, PAGES + 3, 0));
    // MGLRU's scan_folios() counted them already.
    assert_eq!(run(Pgscan::AtIsolation), (0, 0, 0));
}

#[test]
fn classic_mglru_and_the_seam_count_pgscan_and_pgsteal_alike_through_the_one_batch() {
    // The same file, half again the machine's memory, read three times by each caller of
    // the batch: each reclaims, and its pgscan/pgsteal by reclaimer, by type and in the
    // root memcg agree.
    let text = one_file_scenario("16M", "6.12", "classic", 6000);
    let reads = |apply: &mut dyn FnMut(Op)| {
        for _ in 0..3 {
            for p in 0..6000 {
                apply(read(0, p));
            }
        }
    };
    fn counts<P: Policy>(m: &Machine<P>) -> Vec<(Ev, u64, u64)> {
        [Ev::PgScanKswapd, Ev::PgScanDirect, Ev::PgStealKswapd, Ev::PgStealDirect, Ev::PgScanFile, Ev::PgScanAnon, Ev::PgStealFile, Ev::PgStealAnon]
            .into_iter()
            .map(|e| (e, ev(m, e), m.mm.memcgs.get(ROOT_MEMCG).events.get(e)))
            .collect()
    }
    fn check(name: &str, c: &[(Ev, u64, u64)]) {
        let g = |i: usize| c[i].1;
        assert!(g(2) + g(3) > 0, "{name} reclaimed: {c:?}");
        assert_eq!(g(0) + g(1), g(4) + g(5), "{name}: pgscan by reclaimer and by type: {c:?}");
        assert_eq!(g(2) + g(3), g(6) + g(7), "{name}: pgsteal by reclaimer and by type: {c:?}");
        for &(e, global, memcg) in &c[..4] {
            assert_eq!(global, memcg, "{name}: {e:?} globally and in the root memcg");
        }
    }
    let mut m = classic(&text);
    reads(&mut |op| m.apply(0, op));
    check("classic", &counts(&m));
    let mut m = mglru(&text.replace("\"classic\"", "\"mglru\""));
    reads(&mut |op| m.apply(0, op));
    check("mglru", &counts(&m));
    let s = scenario(&text.replace("\"classic\"", "\"lru\""));
    let mut m = Machine::new(&s, |mm| s.machine.policy.seam_host(mm, None)).unwrap();
    reads(&mut |op| m.apply(0, op));
    check("seam", &counts(&m));
}
