//! cache_ext's interface completed: the sixth hook (`admit_folio`), the task that touched a
//! folio, and the built-in policies ported onto the eviction lists (sampling LFU, LHD, FIFO).
//! The tests are named after the clauses of policy/seam/mod.rs's "Admission", of
//! policy/seam/lists.rs and of the ported policies' rules (the MRU's and S3-FIFO's are unit
//! tests in their files, which build the folio flags a candidate is judged by).

use crate::common;

use std::cell::RefCell;
use std::rc::Rc;

use common::{mmap_read, read, scenario};
use pagelab::mm::hooks::Inspect;
use pagelab::mm::memcontrol::MemcgId;
use pagelab::mm::vmstat::Ev;
use pagelab::policy::seam::lists::{ListId, Lists};
use pagelab::policy::seam::{Access, Cgroup, EvictionPolicy, Ext, Folio, FolioId, Freeable, Removal, NO_TASK};
use pagelab::sim::Machine;
use pagelab_workload::{Access as OpAccess, Advice, Op};

/// What the test policy heard, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Heard {
    Admit { index: u64, refault: bool, task: u32 },
    Added { index: u64, task: u32 },
    Accessed { index: u64, task: u32 },
    Removed { index: u64, why: Removal },
}

type Log = Rc<RefCell<Vec<Heard>>>;

/// A FIFO on one eviction list that refuses the pages `refuse` names, logging every hook.
struct ListFifo {
    lists: Lists,
    list: ListId,
    refuse: fn(&Folio) -> bool,
    log: Log,
    tasks: Rc<RefCell<Vec<String>>>,
}

impl EvictionPolicy for ListFifo {
    fn init(&mut self, cgroup: &Cgroup) {
        *self.tasks.borrow_mut() = cgroup.tasks.clone();
    }
    fn admit_folio(&mut self, folio: &Folio) -> bool {
        self.log.borrow_mut().push(Heard::Admit { index: folio.index, refault: folio.refault, task: folio.task });
        !(self.refuse)(folio)
    }
    fn folio_added(&mut self, folio: &Folio) {
        if self.lists.add_tail(self.list, folio.id) {
            self.log.borrow_mut().push(Heard::Added { index: folio.index, task: folio.task });
        }
    }
    fn folio_accessed(&mut self, folio: &Folio, how: Access) {
        if how != Access::ReclaimReferenced {
            self.log.borrow_mut().push(Heard::Accessed { index: folio.index, task: folio.task });
        }
    }
    fn folio_removed(&mut self, folio: &Folio, why: Removal) {
        self.lists.del(folio.id);
        self.log.borrow_mut().push(Heard::Removed { index: folio.index, why });
    }
    fn evict_folios(&mut self, _cgroup: MemcgId, nr: usize, _freeable: &Freeable, out: &mut Vec<FolioId>) {
        self.lists.iterate(self.list, nr, out, |_, _| pagelab::policy::seam::lists::Iter::Evict);
    }
}

/// A machine whose cgroup `/c` runs a [`ListFifo`] refusing `refuse`.
fn machine(text: &str, refuse: fn(&Folio) -> bool) -> (Machine<Ext>, Log, Rc<RefCell<Vec<String>>>) {
    let s = scenario(text);
    let log: Log = Rc::default();
    let tasks = Rc::default();
    let m = Machine::new(&s, |mm| {
        let make = |path: &str| -> Option<Box<dyn EvictionPolicy>> {
            (path == "/c").then(|| {
                let mut lists = Lists::new();
                let list = lists.create();
                Box::new(ListFifo { lists, list, refuse, log: log.clone(), tasks: Rc::clone(&tasks) }) as Box<dyn EvictionPolicy>
            })
        };
        s.machine.policy.seam_host(mm, Some((&make, "test")))
    })
    .unwrap();
    (m, log, tasks)
}

/// `/c` of `limit` pages; workloads `(name, fadvise)` in it share the file "db" of `pages`.
fn cgroup_text(limit: u64, pages: u64, workloads: &[(&str, &str)]) -> String {
    let mut t = format!("[machine]\nmemory = \"256M\"\nkernel = \"6.12\"\npolicy = \"classic\"\n[[cgroup]]\npath = \"/c\"\nmax = \"{limit}p\"\n");
    for (name, fadvise) in workloads {
        t += &format!("[[workload]]\nname = \"{name}\"\ncgroup = \"/c\"\nkind = \"file-read\"\nfile = \"db\"\nfile_size = \"{pages}p\"\nfadvise = \"{fadvise}\"\nops = 0\n");
    }
    t
}

fn resident(m: &Machine<Ext>, page: u64) -> bool {
    common::pfn_of(m, 0, 0, page).is_some()
}

fn ev(m: &Machine<Ext>, e: Ev) -> u64 {
    m.mm.events.get(e)
}

#[test]
fn a_refused_folio_is_dropped_after_its_read_without_a_shadow_entry() {
    let (mut m, log, _) = machine(&cgroup_text(1000, 100, &[("r", "random")]), |f| f.index >= 50);
    m.apply(0, read(0, 10));
    m.apply(0, read(0, 60));
    assert!(resident(&m, 10), "an admitted folio stays");
    assert!(!resident(&m, 60), "a refused folio leaves after the read that copied it");
    assert!(log.borrow().contains(&Heard::Removed { index: 60, why: Removal::Freed }), "the policy hears it leave: {:?}", log.borrow());
    let pgpgin = ev(&m, Ev::PgpgIn);
    m.apply(0, read(0, 60));
    assert!(ev(&m, Ev::PgpgIn) > pgpgin, "reading it again reads the disk again");
    assert_eq!(ev(&m, Ev::WorkingsetRefaultFile), 0, "no shadow entry: a new miss, not a refault");
    let asked: Vec<_> = log.borrow().iter().filter(|h| matches!(h, Heard::Admit { index: 60, .. })).cloned().collect();
    assert_eq!(asked.len(), 2, "asked once per insertion");
    m.check().unwrap();
}

#[test]
fn admit_folio_is_asked_at_each_read_insertion_after_the_refault_check() {
    // 64 pages of memory.max, 200 pages read once: page 0 is evicted (a shadow entry stays)
    // and its next read is a refault, which admit_folio already sees.
    let (mut m, log, _) = machine(&cgroup_text(64, 200, &[("r", "random")]), |_| false);
    for p in 0..200 {
        m.apply(0, read(0, p));
    }
    assert!(!resident(&m, 0));
    m.apply(0, read(0, 0));
    assert!(ev(&m, Ev::WorkingsetRefaultFile) >= 1);
    let admits: Vec<_> = log.borrow().iter().filter_map(|h| if let Heard::Admit { index: 0, refault, .. } = h { Some(*refault) } else { None }).collect();
    assert_eq!(admits, [false, true], "the second insertion of page 0 is a refault when admit_folio is asked");
}

#[test]
fn a_refused_readahead_page_leaves_when_the_read_that_reaches_it_has_copied_it() {
    let (mut m, log, _) = machine(&cgroup_text(1000, 256, &[("r", "normal")]), |_| true);
    let seq = |page| Op {
        object: 0,
        page,
        npages: 1,
        write: false,
        access: OpAccess::Buffered,
        advice: Advice::Normal,
        fill: false,
        think_ns: 0,
        due: None,
        more: false,
    };
    m.apply(0, seq(0));
    assert!(!resident(&m, 0), "the page read is dropped");
    assert!(resident(&m, 1), "the readahead pages not read yet stay cached");
    let admitted: Vec<u64> = log.borrow().iter().filter_map(|h| if let Heard::Admit { index, .. } = h { Some(*index) } else { None }).collect();
    assert!(admitted.len() > 1 && admitted.iter().all(|&i| i < 256), "each readahead page is asked as it is inserted: {admitted:?}");
    m.apply(0, seq(1));
    assert!(!resident(&m, 1), "and leaves once a read has copied it");
    m.check().unwrap();
}

#[test]
fn a_fault_keeps_a_folio_that_was_not_admitted() {
    let text = "[machine]\nmemory = \"256M\"\nkernel = \"6.12\"\npolicy = \"classic\"\n[[cgroup]]\npath = \"/c\"\nmax = \"1000p\"\n\
                [[workload]]\nname = \"m\"\ncgroup = \"/c\"\nkind = \"mmap-read\"\nfile_size = \"64p\"\nops = 0\n";
    let (mut m, log, _) = machine(text, |_| true);
    m.apply(0, mmap_read(0, 5, Advice::Random));
    assert!(log.borrow().iter().any(|h| matches!(h, Heard::Admit { index: 5, .. })), "a fault's read is asked too");
    let pfn = common::pfn_of(&m, 0, 0, 5).expect("the mapped page stays");
    assert!(!m.mm.folios.test(pfn, pagelab::mm::folio::pg::DROPBEHIND), "the fault's lookup cleared the mark");
    m.check().unwrap();
}

#[test]
fn a_policy_sees_which_task_touched_a_folio() {
    let (mut m, log, tasks) = machine(&cgroup_text(1000, 100, &[("get", "random"), ("scan", "random")]), |_| false);
    assert_eq!(*tasks.borrow(), ["get", "scan"], "init names the machine's tasks by Folio::task");
    m.apply(0, read(0, 1));
    // Fill the lru_add batch so page 1 joins the LRU and the policy.
    for p in 10..40 {
        m.apply(0, read(0, p));
    }
    m.apply(1, read(0, 1));
    let log = log.borrow();
    assert!(log.contains(&Heard::Admit { index: 1, refault: false, task: 0 }), "the inserting task is asked");
    assert!(log.contains(&Heard::Added { index: 1, task: 0 }), "added: the task that brought the page in");
    assert!(log.contains(&Heard::Accessed { index: 1, task: 1 }), "accessed: the task that read it: {log:?}");
    assert!(log.iter().all(|h| !matches!(h, Heard::Added { task: NO_TASK, .. })));
}

/// policy/seam/mod.rs's contract: cache_ext's folio_accessed runs first thing in
/// folio_mark_accessed(), whatever PG_lru says, so the read that inserted a page (it marks the
/// page while the page still waits in the lru_add batch) is told right after the page's
/// folio_added, with the inserting task; a page read ahead and never read is added without an
/// access.
#[test]
fn the_read_that_inserts_a_folio_is_told_after_its_folio_added() {
    let (mut m, log, _) = machine(&cgroup_text(1000, 200, &[("r", "normal")]), |_| false);
    // Page 0 is read with the default advice; readahead brings the pages after it, which
    // are not read.
    m.apply(0, Op { advice: Advice::Normal, ..read(0, 0) });
    assert!(!log.borrow().iter().any(|h| matches!(h, Heard::Accessed { index: 0, .. })), "not before its folio_added");
    // Far from page 0 and one page each (no page before is cached), so the lru_add batch
    // (31 folios on 6.12) drains without page 0 being read again.
    for p in (100..200).step_by(2) {
        m.apply(0, read(0, p));
    }
    let log = log.borrow();
    let added = log.iter().position(|h| *h == Heard::Added { index: 0, task: 0 }).expect("page 0 joined the policy");
    assert_eq!(log.get(added + 1), Some(&Heard::Accessed { index: 0, task: 0 }), "the inserting read follows folio_added: {log:?}");
    assert!(log.contains(&Heard::Added { index: 1, task: 0 }), "page 1 was read ahead: {log:?}");
    assert!(!log.iter().any(|h| matches!(h, Heard::Accessed { index: 1, .. })), "and never read: no access");
    m.check().unwrap();
}

/// Reads 10 hot pages 6 times each, then scans `scan` other pages once (reading the hot
/// pages again every `rounds_between` scan reads, if not 0), in a cgroup of `limit` pages run
/// by `policy`; returns how many hot pages are still cached, and the refaults (only hot
/// pages are read again).
fn hot_after_scan(policy: &str, limit: u64, scan: u64, rounds_between: u64) -> (usize, u64) {
    let text = cgroup_text(limit, 100_000, &[("r", "random")]).replace("path = \"/c\"\n", &format!("path = \"/c\"\npolicy = \"{policy}\"\n"));
    let s = scenario(&text);
    let mut m = Machine::new(&s, |mm| s.machine.policy.seam_host(mm, None)).unwrap();
    let hot = 0..10u64;
    for p in hot.clone() {
        m.apply(0, read(0, p));
    }
    // Past the lru_add batch (31 folios on 6.12), so the re-reads below are seen.
    for p in 1000..1040 {
        m.apply(0, read(0, p));
    }
    for _ in 0..5 {
        for p in hot.clone() {
            m.apply(0, read(0, p));
        }
    }
    for (i, p) in (2000..2000 + scan).enumerate() {
        m.apply(0, read(0, p));
        if rounds_between > 0 && (i as u64).is_multiple_of(rounds_between) {
            for h in hot.clone() {
                m.apply(0, read(0, h));
            }
        }
    }
    m.check().unwrap();
    (hot.filter(|&p| common::pfn_of(&m, 0, 0, p).is_some()).count(), ev(&m, Ev::WorkingsetRefaultFile))
}

#[test]
fn sampling_lfu_keeps_the_often_read_folios_through_a_scan() {
    // Of each run of 20 folios at the head the least-accessed goes: a page read 6 times is
    // never the least of a run that holds scan pages, read once. FIFO loses them all.
    let (lfu, fifo) = (hot_after_scan("sampling-lfu", 200, 1000, 0).0, hot_after_scan("fifo", 200, 1000, 0).0);
    assert_eq!((lfu, fifo), (10, 0), "hot pages kept: sampling-lfu {lfu}, fifo {fifo}");
}

#[test]
fn lhd_keeps_the_folios_hit_recently_over_those_idle_longer() {
    // Hot pages hit every 200 scan reads keep age 0 (the highest hit density of their class),
    // scan pages age as requests pass: each sampled run of 16 gives up its oldest.
    // The refaults are the hot pages' (nothing else is read twice).
    let (_, lhd) = hot_after_scan("lhd", 4000, 20_000, 200);
    let (_, fifo) = hot_after_scan("fifo", 4000, 20_000, 200);
    assert!(lhd * 10 <= fifo && fifo >= 20, "hot-page refaults: lhd {lhd}, fifo {fifo}");
}

/// Writes 8 pages (dirty, each told once: no early access for a write that inserts; fewer
/// than the cgroup's dirty background threshold, so no flusher cleans them),
/// then reads `scan` other pages once (each told twice: its `folio_added` and the read) in a
/// cgroup of 200 pages run by `policy`; returns the seam's kept candidates and how many of
/// the written pages are still cached.
fn written_then_read(policy: &str, scan: u64) -> (u64, usize) {
    let text = cgroup_text(200, 100_000, &[("r", "random")]).replace("path = \"/c\"\n", &format!("path = \"/c\"\npolicy = \"{policy}\"\n"));
    let s = scenario(&text);
    let mut m = Machine::new(&s, |mm| s.machine.policy.seam_host(mm, None)).unwrap();
    for p in 0..8 {
        m.apply(0, Op { write: true, ..read(0, p) });
    }
    for p in 1000..1000 + scan {
        m.apply(0, read(0, p));
    }
    m.check().unwrap();
    let kept = m.policy.stats(m.mm.memcgs.find("/c").unwrap()).unwrap().kept;
    (kept, (0..8).filter(|&p| resident(&m, p)).count())
}

#[test]
fn a_sampled_run_hands_over_a_clean_folio_before_a_dirty_one_with_fewer_accesses() {
    // cache_ext's bpf_lfu_score_fn() and bpf_lhd_score_fn() (cache_ext 0d2eeca) score a
    // dirty or writeback folio INT64_MAX: of a run of 20 (16) the kernel gets a clean folio
    // whenever the run holds one. Here the written pages have the fewest accesses, so without
    // the test they are chosen first, and shrink_folio_list() (6.6.8, outside kswapd)
    // activates each and keeps it.
    for policy in ["sampling-lfu", "lhd"] {
        let (kept, written) = written_then_read(policy, 2000);
        assert_eq!((kept, written), (0, 8), "{policy}: candidates kept, written pages still cached");
    }
}

#[test]
fn reclaim_pages_keeps_a_dirty_candidate_and_wakes_no_flusher() {
    // cache_ext reclaims its candidates through reclaim_pages() -> reclaim_folio_list()
    // (linux-cache-ext 7442a92, 6.6.8; the same in 6.1, 6.12, 7.3), whose reclaim_stat is a
    // dummy: shrink_folio_list() activates a dirty file candidate outside kswapd with
    // PG_reclaim, and nothing wakes the flushers (shrink_inactive_list()'s wake-up is not on
    // this path). FIFO hands over the 8 written pages first: each is kept, still dirty, and
    // nothing is written.
    let text = cgroup_text(200, 100_000, &[("r", "random")]).replace("path = \"/c\"\n", "path = \"/c\"\npolicy = \"fifo\"\n");
    let s = scenario(&text);
    let mut m = Machine::new(&s, |mm| s.machine.policy.seam_host(mm, None)).unwrap();
    for p in 0..8 {
        m.apply(0, Op { write: true, ..read(0, p) });
    }
    for p in 1000..3000 {
        m.apply(0, read(0, p));
    }
    m.check().unwrap();
    let kept = m.policy.stats(m.mm.memcgs.find("/c").unwrap()).unwrap().kept;
    assert!(kept >= 8 && ev(&m, Ev::NrVmscanImmediateReclaim) >= 8, "the written pages were handed over and kept: {kept}");
    assert_eq!((ev(&m, Ev::PgpgOut), (0..8).filter(|&p| resident(&m, p)).count()), (0, 8), "pages written, written pages still cached");
}

#[test]
fn cache_ext_fifo_passes_over_written_pages_that_the_plain_fifo_hands_over() {
    // bpf_fifo_evict_cb() (cache_ext 0d2eeca) continues past a dirty folio: the written
    // pages, the oldest, stay cached and the kernel keeps no candidate. The plain FIFO
    // proposes them first and shrink_folio_list() (outside kswapd) keeps each.
    let (kept, written) = written_then_read("cache-ext-fifo", 2000);
    assert_eq!((kept, written), (0, 8), "cache-ext-fifo: candidates kept, written pages still cached");
    let (plain_kept, _) = written_then_read("fifo", 2000);
    assert!(plain_kept >= 8, "the plain fifo's kept candidates: {plain_kept}");
}

#[test]
fn a_buffered_write_is_not_an_access_cache_ext_hears() {
    // cache_ext's folio_accessed runs in folio_mark_accessed() only (linux-cache-ext
    // 7442a92); 6.6.8's buffered write never calls it (FGP_WRITEBEGIN has no FGP_ACCESSED).
    // A page written ten times keeps the count its folio_added gave it, 1; the 30 pages read
    // once that have left the lru_add batch have 2 (folio_added and the read).
    let text = cgroup_text(200, 100_000, &[("r", "random")]).replace("path = \"/c\"\n", "path = \"/c\"\npolicy = \"sampling-lfu\"\n");
    let s = scenario(&text);
    let mut m = Machine::new(&s, |mm| s.machine.policy.seam_host(mm, None)).unwrap();
    m.apply(0, Op { write: true, ..read(0, 0) });
    // Past the lru_add batch (31 folios on 6.12), so the writes below reach a listed folio.
    for p in 1000..1040 {
        m.apply(0, read(0, p));
    }
    for _ in 0..9 {
        m.apply(0, Op { write: true, ..read(0, 0) });
    }
    let state = m.policy.state(&m.mm).unwrap();
    let h = &state["seam"]["/c"]["state"]["listed_by_accesses"];
    assert_eq!((h["1"].as_u64(), h["2"].as_u64(), h["8+"].as_u64()), (Some(1), Some(30), Some(0)), "{h}");
}

#[test]
fn policies_lists_them() {
    let names: Vec<_> = pagelab::policy::registry::POLICIES.iter().map(|p| p.name).collect();
    for name in ["lhd", "sampling-lfu", "cache-ext-fifo", "cache-ext-mru", "cache-ext-s3fifo"] {
        assert!(names.contains(&name), "{name}: {names:?}");
    }
}

/// A policy that never hands over a candidate.
struct Stubborn;

impl EvictionPolicy for Stubborn {
    fn folio_added(&mut self, _: &Folio) {}
    fn folio_accessed(&mut self, _: &Folio, _: Access) {}
    fn folio_removed(&mut self, _: &Folio, _: Removal) {}
    fn evict_folios(&mut self, _: MemcgId, _: usize, _: &Freeable, _: &mut Vec<FolioId>) {}
}

/// 2,000 pages read once in a 200-page `/c` run by `policy` (`None`: [`Stubborn`]), with
/// or without `machine.seam_fallback`.
fn read_once(policy: Option<&str>, fallback: bool) -> Machine<Ext> {
    let mut text = cgroup_text(200, 100_000, &[("r", "random")]);
    if fallback {
        text = text.replace("policy = \"classic\"\n", "policy = \"classic\"\nseam_fallback = true\n");
    }
    if let Some(p) = policy {
        text = text.replace("path = \"/c\"\n", &format!("path = \"/c\"\npolicy = \"{p}\"\n"));
    }
    let s = scenario(&text);
    let make = |path: &str| (path == "/c" && policy.is_none()).then(|| Box::new(Stubborn) as Box<dyn EvictionPolicy>);
    let mut m =
        Machine::new(&s, |mm| s.machine.policy.seam_host(mm, policy.is_none().then_some((&make as pagelab::policy::registry::Factory, "stubborn")))).unwrap();
    for p in 0..2000 {
        m.apply(0, read(0, p));
    }
    m.check().unwrap();
    m
}

#[test]
fn with_seam_fallback_the_kernel_lru_reclaims_when_the_policy_frees_80_percent_or_less() {
    // cache_ext's shrink_lruvec() (linux-cache-ext 7442a92) asks the policy for the inactive
    // file list's scan target and runs the kernel's own loop on its lists when the policy
    // freed 80% or less of it. A policy that hands over nothing frees 0%: with the fallback
    // the classic LRU evicts; without it the seam's contract ends reclaim with nothing freed.
    let m = read_once(None, true);
    let st = m.policy.stats(m.mm.memcgs.find("/c").unwrap()).unwrap();
    assert!(st.fallbacks > 0 && st.evicted == 0, "{st:?}");
    assert!(m.mm.oom_kills.is_empty(), "{:?}", m.mm.oom_kills);
    assert!(ev(&m, Ev::PgStealFile) >= 1700, "the classic LRU reclaimed: {}", ev(&m, Ev::PgStealFile));
    let m = read_once(None, false);
    assert_eq!(ev(&m, Ev::PgStealFile), 0, "without the fallback nothing is reclaimed");
}

#[test]
fn with_seam_fallback_a_policy_that_frees_its_target_leaves_the_kernel_lru_alone() {
    // cache-ext-fifo hands over the oldest clean folios: each request frees what it asked
    // for, so reclaim never falls back.
    let m = read_once(Some("cache-ext-fifo"), true);
    let st = m.policy.stats(m.mm.memcgs.find("/c").unwrap()).unwrap();
    assert_eq!(st.fallbacks, 0, "{st:?}");
    assert!(st.evicted >= 1700, "{st:?}");
}

/// A FIFO that records the size of every request and whether it was told of an anon folio.
struct AskLog {
    lists: Lists,
    list: ListId,
    asks: Rc<RefCell<Vec<usize>>>,
    anon_heard: Rc<RefCell<u64>>,
    refaults_heard: Rc<RefCell<u64>>,
}

impl EvictionPolicy for AskLog {
    fn folio_added(&mut self, folio: &Folio) {
        *self.anon_heard.borrow_mut() += folio.anon as u64;
        *self.refaults_heard.borrow_mut() += folio.refault as u64;
        self.lists.add_tail(self.list, folio.id);
    }
    fn folio_accessed(&mut self, folio: &Folio, _: Access) {
        *self.anon_heard.borrow_mut() += folio.anon as u64;
    }
    fn folio_removed(&mut self, folio: &Folio, _: Removal) {
        *self.anon_heard.borrow_mut() += folio.anon as u64;
        self.lists.del(folio.id);
    }
    fn evict_folios(&mut self, _: MemcgId, nr: usize, _: &Freeable, out: &mut Vec<FolioId>) {
        self.asks.borrow_mut().push(nr);
        self.lists.iterate(self.list, nr, out, |_, _| pagelab::policy::seam::lists::Iter::Evict);
    }
}

/// `/c` of 2,048 pages under `machine.seam_fallback` with an [`AskLog`], on a machine that
/// stands for one `miniature` times larger (1.0: a full machine), after reading 5,000
/// pages four times over and writing 300 anon pages: the requests' sizes, the anon hooks heard, and
/// the refaults heard against the machine's `workingset_refault_file` (all of them `/c`'s).
fn asks(miniature: f64) -> (Vec<usize>, u64, (u64, u64)) {
    let mut text = cgroup_text(2048, 100_000, &[("r", "random")]);
    text = text.replace("policy = \"classic\"\n", &format!("policy = \"classic\"\nseam_fallback = true\nminiature = {miniature}\n"));
    text += "[[workload]]\nname = \"a\"\ncgroup = \"/c\"\nkind = \"anon-write\"\nsize = \"300p\"\nops = 0\n";
    let s = scenario(&text);
    let (log, anon, refaults) = (Rc::new(RefCell::new(Vec::new())), Rc::new(RefCell::new(0)), Rc::new(RefCell::new(0)));
    let make = |path: &str| {
        (path == "/c").then(|| {
            let mut lists = Lists::new();
            let list = lists.create();
            Box::new(AskLog { lists, list, asks: Rc::clone(&log), anon_heard: Rc::clone(&anon), refaults_heard: Rc::clone(&refaults) })
                as Box<dyn EvictionPolicy>
        })
    };
    let mut m = Machine::new(&s, |mm| s.machine.policy.seam_host(mm, Some((&make as pagelab::policy::registry::Factory, "ask-log")))).unwrap();
    for p in 0..300 {
        m.apply(1, common::touch(0, p, true));
    }
    for p in 0..20_000 {
        m.apply(0, read(0, p % 5000));
    }
    m.drain();
    m.check().unwrap();
    let asks = log.borrow().clone();
    let (heard, refaults_heard) = (*anon.borrow(), *refaults.borrow());
    (asks, heard, (refaults_heard, ev(&m, Ev::WorkingsetRefaultFile)))
}

#[test]
fn on_a_miniature_machine_cache_ext_asks_in_requests_of_the_full_machines_size() {
    // cache_ext asks for the inactive file target in requests of min(target, 32). A machine
    // 1/32 the size scales the target down, not the request: it makes 1/32 of the full
    // machine's requests, each as large as the full machine's.
    let (full, _, _) = asks(1.0);
    let (mini, _, _) = asks(1.0 / 32.0);
    let mean = |a: &[usize]| a.iter().sum::<usize>() as f64 / a.len().max(1) as f64;
    assert!(!full.is_empty() && !mini.is_empty(), "{} and {} requests", full.len(), mini.len());
    assert!(mean(&full) < 16.0, "the 2,048-page cgroup's own targets are small: {:.1}", mean(&full));
    assert!(mean(&mini) > 30.0, "the full machine's 65,536-page cgroup asks for 32 at a time: {:.1}", mean(&mini));
}

#[test]
fn under_seam_fallback_the_policy_hears_page_cache_folios_only() {
    // cache_ext's hooks are the page cache's: anon folios stay with the kernel's LRU.
    let (asks, anon, _) = asks(1.0);
    assert!(!asks.is_empty(), "reclaim asked the policy");
    assert_eq!(anon, 0, "no hook told of an anon folio");
}

#[test]
fn under_seam_fallback_the_policy_is_told_each_refault_in_folio_added() {
    // The seam's contract (`Folio::refault`) holds for a policy over the kernel's LRU too:
    // every file refault the cgroup counts reaches the policy as a refaulted folio_added.
    let (_, _, (heard, counted)) = asks(1.0);
    assert!(counted > 0, "the random reads refault");
    assert_eq!(heard, counted);
}
