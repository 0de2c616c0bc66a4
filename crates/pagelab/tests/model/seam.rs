//! The eviction seam: plain caches behind it evict as their trace-mode twins, per-cgroup
//! policies under the classic LRU, and policies that return bad candidates.

use crate::common;

use std::cell::RefCell;
use std::rc::Rc;

use common::{read, scenario};
use pagelab::kernel::{Kernel, SWAP_CLUSTER_MAX};
use pagelab::mm::memcontrol::MemcgId;
use pagelab::mm::vmstat::Ev;
use pagelab::policy::seam::adapters::PlainPolicy;
use pagelab::policy::seam::{Access, Cgroup, EvictionPolicy, Ext, Folio, FolioId, Freeable, Removal};
use pagelab::policy::Policy;
use pagelab::sim::Machine;
use pagelab_cachesim::{new_online, Online, PolicyKind as Plain};

/// One file of `file_pages` pages read by a task in `/c`, whose memory.max is `limit` pages;
/// the machine is large enough that only the cgroup's limit reclaims.
fn limited(kernel: &str, policy: &str, limit: u64, file_pages: u64) -> String {
    format!(
        r#"
[machine]
memory = "256M"
kernel = "{kernel}"
policy = "{policy}"
[[cgroup]]
path = "/c"
max = "{limit}p"
[[workload]]
name = "r"
cgroup = "/c"
kind = "file-read"
file_size = "{file_pages}p"
fadvise = "random"
ops = 0
"#
    )
}

/// Wraps a policy and logs the page index of every folio reclaim evicts.
struct Recorder {
    inner: Box<dyn EvictionPolicy>,
    evicted: Rc<RefCell<Vec<u64>>>,
}

impl EvictionPolicy for Recorder {
    fn init(&mut self, cgroup: &Cgroup) {
        self.inner.init(cgroup)
    }
    fn folio_added(&mut self, folio: &Folio) {
        self.inner.folio_added(folio)
    }
    fn folio_accessed(&mut self, folio: &Folio, how: Access) {
        self.inner.folio_accessed(folio, how)
    }
    fn folio_removed(&mut self, folio: &Folio, why: Removal) {
        if why == Removal::Evicted {
            self.evicted.borrow_mut().push(folio.index);
        }
        self.inner.folio_removed(folio, why)
    }
    fn evict_folios(&mut self, cgroup: MemcgId, nr: usize, freeable: &Freeable, out: &mut Vec<FolioId>) {
        self.inner.evict_folios(cgroup, nr, freeable, out)
    }
    fn hears_early_accesses(&self) -> bool {
        self.inner.hears_early_accesses()
    }
}

/// A machine whose cgroup `/c` runs `policy` (logged into `log`), the rest the classic LRU.
fn machine_with(text: &str, policy: impl FnOnce() -> Box<dyn EvictionPolicy>, log: Rc<RefCell<Vec<u64>>>) -> Machine<Ext> {
    let s = scenario(text);
    let policy = RefCell::new(Some(policy()));
    Machine::new(&s, |mm| {
        let make = |path: &str| -> Option<Box<dyn EvictionPolicy>> {
            if path != "/c" {
                return None;
            }
            let inner = policy.borrow_mut().take()?;
            Some(Box::new(Recorder { inner, evicted: log.clone() }))
        };
        s.machine.policy.seam_host(mm, Some((&make, "test")))
    })
    .unwrap()
}

/// A reproducible trace over `pages` pages: a hot tenth read half the time, the rest
/// uniformly, never the same page twice in a row (the kernel does not mark a page accessed
/// again when a read continues in the page the previous read ended in).
fn trace(pages: u64, n: usize, seed: u64) -> Vec<u64> {
    let mut x = pagelab_host::xorshift::XorShift64::new(seed);
    let mut next = || x.next_u64();
    let mut out: Vec<u64> = Vec::with_capacity(n);
    while out.len() < n {
        let r = next();
        let p = if r % 2 == 0 { (r >> 8) % (pages / 10) } else { (r >> 8) % pages };
        if out.last() != Some(&p) {
            out.push(p);
        }
    }
    out
}

/// The trace-mode algorithm driven as the kernel drives the seam: a missed page waits in the
/// per-CPU lru_add batch (PAGEVEC_SIZE pages; a plain cache does not hear the accesses made
/// while it waits, as a trace-mode miss is an insertion without a hit) and joins
/// the policy when the batch fills or reclaim drains it; a miss with `limit` pages charged
/// reclaims one batch of SWAP_CLUSTER_MAX victims. The read of a missed page is an access
/// the policy sees only if the page's own insertion drained the batch. Returns the evicted
/// pages in order.
fn kernel_driven(kind: Plain, limit: u64, pagevec: usize, accesses: &[u64]) -> Vec<u64> {
    let mut c = new_online(kind, limit, 1024).unwrap();
    let mut pending: Vec<u32> = Vec::new();
    let mut charged = 0u64;
    let mut evicted = Vec::new();
    let drain = |c: &mut Box<dyn Online + Send>, pending: &mut Vec<u32>| {
        for p in pending.drain(..) {
            c.insert(p);
        }
    };
    for &a in accesses {
        let p = a as u32;
        if pending.contains(&p) {
            continue;
        }
        if c.contains(p) {
            c.hit(p);
            continue;
        }
        if charged == limit {
            drain(&mut c, &mut pending);
            for _ in 0..SWAP_CLUSTER_MAX {
                evicted.push(c.evict().unwrap() as u64);
                charged -= 1;
            }
        }
        charged += 1;
        pending.push(p);
        if pending.len() == pagevec {
            // The page that fills the batch joins with it before the read marks it
            // accessed, so that access is seen.
            drain(&mut c, &mut pending);
            c.hit(p);
        }
    }
    evicted
}

const PLAIN: [Plain; 8] = [Plain::Lru, Plain::Fifo, Plain::Clock, Plain::Sieve, Plain::S3Fifo, Plain::Arc, Plain::Mru, Plain::Lfu];

/// With one file read at random (no readahead), no anon and memory.max of N pages, a plain
/// cache behind the seam evicts exactly the pages its trace-mode algorithm evicts, once the
/// kernel's own batching is applied: (1) reclaim at the limit frees SWAP_CLUSTER_MAX (32)
/// pages at once, the seam's batch for a memcg charge (try_charge_memcg() ->
/// try_to_free_mem_cgroup_pages(), nr_to_reclaim = 32), instead of one page per miss; (2)
/// a new page joins the policy when the per-CPU lru_add batch drains (15 pages on 6.1, 31
/// on 6.12, or at reclaim), and a plain cache does not hear a read of it before then
/// (a trace-mode miss is an insertion without a hit, so only the read right after a draining
/// insertion is an extra hit). Nothing else
/// differs: the memcg charge batch (64 pages of per-CPU stock) does not move the point where
/// reclaim starts, and every candidate is clean, unmapped and unlocked, so each is freed.
#[test]
fn plain_policies_behind_the_seam_evict_as_their_trace_twins() {
    let (limit, file_pages) = (200u64, 600u64);
    for kernel in ["6.1", "6.12"] {
        let pagevec = Kernel::parse(kernel).unwrap().pagevec_size();
        let accesses = trace(file_pages, 6000, 0x9e37_79b9);
        for kind in PLAIN {
            let log = Rc::new(RefCell::new(Vec::new()));
            let text = limited(kernel, "classic", limit, file_pages);
            let mut m = machine_with(&text, || Box::new(PlainPolicy::new(kind, 65536)), log.clone());
            for &a in &accesses {
                m.apply(0, read(0, a));
            }
            m.check().unwrap();
            let expected = kernel_driven(kind, limit, pagevec, &accesses);
            let got = log.borrow().clone();
            assert!(expected.len() > 1000, "{kind:?}: the trace must evict a lot ({})", expected.len());
            assert_eq!(got.len(), expected.len(), "{kind:?} on {kernel}: number of evictions");
            if let Some(i) = got.iter().zip(&expected).position(|(a, b)| a != b) {
                panic!("{kind:?} on {kernel}: eviction {i} is page {} in the machine, {} in the trace-mode twin", got[i], expected[i]);
            }
            let stats = m.policy.stats(1).unwrap();
            assert_eq!(stats.invalid, 0);
            assert_eq!(stats.evicted, expected.len() as u64);
        }
    }
}

/// Without the kernel's batching (one eviction per miss at capacity, no lru_add batch) the
/// same algorithm objects are the trace replay's: the driver above with a batch of one is
/// `Cache::access`, miss for miss. Two trace forms act on a ghost hit before the evictions
/// that make room, which the machine cannot do (the kernel evicts before it tells the policy
/// about the page): ARC REPLACEs with the adapted target, S3-FIFO takes the page out of the
/// ghost queue first, so the evictions cannot push its ghost out (see cachesim's arc.rs and
/// s3fifo.rs). Those two are held to the kernel-driven form above only.
#[test]
fn the_seam_algorithms_are_the_trace_replays() {
    for kind in PLAIN {
        if matches!(kind, Plain::Arc | Plain::S3Fifo) {
            continue;
        }
        let accesses = trace(600, 20_000, 7);
        let pages: Vec<u32> = accesses.iter().map(|&a| a as u32).collect();
        let mut cache = pagelab_cachesim::new_cache(kind, 200, 1024);
        let misses_trace = cache.access_batch(&pages, None);
        let mut c = new_online(kind, 200, 1024).unwrap();
        let misses_online = pages.iter().filter(|&&p| !pagelab_cachesim::access_online(c.as_mut(), p, 200)).count() as u64;
        assert_eq!(misses_trace, misses_online, "{kind:?}");
    }
}

/// A looping scan 1.25x the cgroup's memory: the classic LRU evicts every page before it is
/// read again; MRU behind the seam keeps most of the loop.
fn loop_refaults(policy: &str) -> Machine<Ext> {
    let text = format!(
        r#"
[machine]
memory = "256M"
policy = "classic"
[[cgroup]]
path = "/a"
max = "400p"
policy = "{policy}"
[[cgroup]]
path = "/b"
max = "400p"
[[workload]]
name = "scan-a"
cgroup = "/a"
kind = "file-read"
file_size = "500p"
fadvise = "random"
ops = 0
[[workload]]
name = "scan-b"
cgroup = "/b"
kind = "file-read"
file_size = "500p"
fadvise = "random"
ops = 0
"#
    );
    let s = scenario(&text);
    let mut m = Machine::new(&s, |mm| s.machine.policy.seam_host(mm, None)).unwrap();
    for _ in 0..4 {
        for p in 0..500 {
            m.apply(0, read(0, p));
            m.apply(1, read(0, p));
        }
    }
    m.check().unwrap();
    m
}

#[test]
fn a_cgroup_policy_runs_beside_the_classic_lru_of_other_cgroups() {
    let m = loop_refaults("mru");
    let a = m.mm.memcgs.find("/a").unwrap();
    let b = m.mm.memcgs.find("/b").unwrap();
    let refaults = |memcg| m.mm.memcgs.get(memcg).events.get(Ev::WorkingsetRefaultFile);
    // The classic LRU refaults the whole loop after the first pass; MRU only the tail.
    assert_eq!(refaults(b), 3 * 500, "classic refaults every page of passes 2-4");
    assert!(refaults(a) < refaults(b) / 3, "mru {} vs classic {}", refaults(a), refaults(b));
    let stats = m.policy.stats(a).unwrap();
    assert!(stats.evicted > 0 && stats.invalid == 0);
    assert!(m.policy.stats(b).is_none(), "/b keeps the classic LRU");
    // Each cgroup stays within its limit and the classic LRU reclaimed /b.
    assert!(m.mm.memcgs.get(b).usage <= 400 && m.mm.memcgs.get(a).usage <= 400);
    assert!(m.mm.memcgs.get(b).events.get(Ev::PgStealDirect) > 0);
}

#[test]
fn mglru_with_a_cgroup_policy_is_refused_with_the_key() {
    let text = limited("6.1", "mglru", 100, 200).replace("max = \"100p\"", "max = \"100p\"\npolicy = \"lru\"");
    let e = pagelab::Scenario::parse(&text, "t.toml", "t", &[]).unwrap_err();
    assert_eq!(e.key, "cgroup[0].policy");
    assert!(e.message.contains("MGLRU"), "{e}");
    let e = pagelab::Scenario::parse(&limited("6.1", "nope", 100, 200), "t.toml", "t", &[]).unwrap_err();
    assert_eq!(e.key, "machine.policy");
    assert!(e.message.contains("s3fifo"), "{e}");
    let e = pagelab::Scenario::parse(&limited("6.1", "opt", 100, 200), "t.toml", "t", &[]).unwrap_err();
    assert!(e.message.contains("traces only"), "{e}");
}

#[test]
fn a_machine_policy_from_the_registry_runs_every_cgroup() {
    let text = limited("6.12", "s3fifo", 200, 600).replace("ops = 0", "ops = 3000");
    let report = pagelab::run(&scenario(&text), |_, _| {}).unwrap();
    assert_eq!(report.policy, "s3fifo");
    let j = serde_json::to_value(&report).unwrap();
    assert!(j["vmstat"]["workingset_refault_file"].as_u64().unwrap() > 0, "refaults are detected behind the seam");
}

/// A policy that returns what it is told to.
struct Bad {
    answer: fn(&Folio, u64) -> Vec<FolioId>,
    seen: Vec<Folio>,
    calls: u64,
}

impl EvictionPolicy for Bad {
    fn folio_added(&mut self, folio: &Folio) {
        self.seen.push(*folio);
    }
    fn folio_accessed(&mut self, _folio: &Folio, _how: Access) {}
    fn folio_removed(&mut self, _folio: &Folio, _why: Removal) {}
    fn evict_folios(&mut self, _cgroup: MemcgId, _nr: usize, _freeable: &Freeable, out: &mut Vec<FolioId>) {
        self.calls += 1;
        if let Some(f) = self.seen.last() {
            out.extend((self.answer)(f, self.calls));
        }
    }
}

fn run_bad(answer: fn(&Folio, u64) -> Vec<FolioId>) -> Machine<Ext> {
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut m = machine_with(&limited("6.1", "classic", 100, 300), || Box::new(Bad { answer, seen: Vec::new(), calls: 0 }), log);
    for p in 0..300 {
        m.apply(0, read(0, p));
    }
    m.check().unwrap();
    m
}

#[test]
fn a_policy_returning_no_candidates_gets_the_kernels_oom_not_a_hang() {
    let m = run_bad(|_, _| Vec::new());
    let stats = m.policy.stats(1).unwrap();
    assert!(stats.empty > 0);
    assert_eq!(stats.evicted, 0);
    // Reclaim found nothing: the memcg OOM killer ran (and found no anon to kill).
    assert!(m.mm.memcgs.get(1).memory_events.oom > 0 || m.mm.memcgs.get(1).usage > 100);
}

#[test]
fn candidates_that_are_not_the_cgroups_folios_are_skipped_and_counted() {
    // Ids beyond memory, a free frame's id, and the same folio twice.
    let m = run_bad(|f, calls| vec![u32::MAX, f.id + 1_000_000, f.id, f.id, if calls % 2 == 0 { 0 } else { 1 }]);
    let stats = m.policy.stats(1).unwrap();
    assert!(stats.invalid >= 3 * stats.requests, "{stats:?}");
    assert!(stats.evicted > 0, "the valid candidate is evicted");
    assert_eq!(m.policy.failure(), None);
}

#[test]
fn candidates_of_another_cgroup_are_invalid() {
    let log = Rc::new(RefCell::new(Vec::new()));
    let text = limited("6.1", "classic", 100, 300).replace(
        "[[workload]]",
        "[[workload]]\nname = \"root\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"50p\"\nfadvise = \"random\"\nops = 0\n[[workload]]",
    );
    let mut m = machine_with(&text, || Box::new(Bad { answer: |_, _| (0..4096).collect(), seen: Vec::new(), calls: 0 }), log);
    for p in 0..50 {
        m.apply(0, read(0, p));
    }
    for p in 0..300 {
        m.apply(1, read(0, p));
    }
    m.check().unwrap();
    let stats = m.policy.stats(1).unwrap();
    assert!(stats.invalid > 0);
    // The root cgroup's pages are untouched: only /c's folios were taken.
    assert_eq!(m.mm.memcgs.get(0).events.get(Ev::PgStealDirect), 0);
    assert!(m.mm.memcgs.get(0).usage >= 50);
}

#[test]
fn a_policy_written_for_the_seam_runs_from_its_registry_line() {
    let text = limited("6.1", "random", 200, 600).replace("ops = 0", "ops = 4000");
    let report = pagelab::run(&scenario(&text), |_, _| {}).unwrap();
    assert_eq!(report.policy, "random");
    let j = serde_json::to_value(&report).unwrap();
    assert!(j["memcg"]["/c"]["pgsteal"].as_u64().unwrap() > 0);
}

/// The report's `policy_state` section is any policy's: the classic LRU shows its lruvecs'
/// lists and IO costs, MGLRU its generations and debugfs views, a seam policy its counts and
/// its own state (a plain cache: the pages it holds, which must equal the cgroup's file LRU).
#[test]
fn every_policy_fills_the_reports_policy_state() {
    let state_of = |policy: &str| {
        // 4000 reads: enough for a refault of a page evicted from the active list (a restore,
        // whose cost lru_note_cost_refault() notes) in this 64-page cgroup.
        let s = common::scenario(&limited("6.1", policy, 64, 200).replace("ops = 0", "ops = 4000"));
        let r = pagelab::run(&s, |_, _| {}).expect("run");
        let state = r.policy_state.clone().expect("a policy_state section");
        assert!(r.series.iter().all(|p| p.policy_state.is_some()), "{policy}: every series point carries the state");
        (state, r)
    };

    let (classic, r) = state_of("classic");
    assert_eq!(classic["policy"], "classic");
    let c = classic["state"]["lruvecs"].as_array().unwrap().iter().find(|l| l["memcg"] == "/c").expect("the /c lruvec");
    let file = c["lists"]["inactive_file"].as_u64().unwrap() + c["lists"]["active_file"].as_u64().unwrap();
    assert_eq!(file * 4096, r.memcg["/c"]["file"], "classic's lists are the cgroup's memory.stat file pages");
    assert!(r.memcg["/c"]["workingset_restore_file"] > 0, "a restore happened");
    assert!(c["file_cost"].as_u64().unwrap() > 0, "refaults of workingset pages note their cost (lru_note_cost_refault)");

    let (mglru, _) = state_of("mglru");
    assert_eq!(mglru["policy"], "mglru");
    assert!(mglru["debugfs"].as_str().unwrap().contains("memcg"), "MGLRU keeps its debugfs view");
    assert!(mglru["state"].as_array().unwrap().iter().any(|l| l["memcg"] == "/c" && !l["generations"].as_array().unwrap().is_empty()));

    let (s3fifo, r) = state_of("s3fifo");
    let seam = &s3fifo["state"]["seam"]["/c"];
    assert_eq!(seam["state"]["cached"].as_u64().unwrap() * 4096, r.memcg["/c"]["file"], "the plain cache holds exactly the cgroup's file pages");
    assert!(seam["counts"].is_object());
}

/// A sequential read with readahead in a cgroup of 2,048 pages run by `policy`: the policies
/// that propose the folios whose read is still in flight (MRU and LFU the newest, SIEVE
/// its unvisited new ones).
fn readahead_run(policy: &str) -> pagelab::Report {
    let text = format!(
        r#"
[machine]
memory = "256M"
kernel = "6.12"
policy = "classic"
[[cgroup]]
path = "/c"
max = "8M"
policy = "{policy}"
[[workload]]
name = "seq"
cgroup = "/c"
kind = "file-read"
file_size = "64M"
block_size = "4k"
distribution = "seq"
ops = 4000
seed = 1
"#
    );
    pagelab::run(&scenario(&text), |_, _| {}).unwrap()
}

fn seam_counts(r: &pagelab::Report, cgroup: &str) -> serde_json::Value {
    r.policy_state.as_ref().unwrap()["state"]["seam"][cgroup]["counts"].clone()
}

#[test]
fn a_kept_candidate_is_not_offered_again_in_the_same_call() {
    // Before the contract had this clause, a folio under read IO went back to the policy at
    // once and was proposed again in the next batch of the same call: SIEVE kept 1,214
    // candidates for each one it evicted here, MRU and LFU spun for minutes. Now each kept
    // folio costs at most one batch slot per reclaim call.
    for policy in ["sieve", "mru", "lfu"] {
        let r = readahead_run(policy);
        let c = seam_counts(&r, "/c");
        let (kept, evicted, locked) = (c["kept"].as_u64().unwrap(), c["evicted"].as_u64().unwrap(), c["kept_locked"].as_u64().unwrap());
        assert!(evicted >= 2000, "{policy}: {c}");
        assert!(kept <= 16 * evicted, "{policy}: {c}");
        assert!(locked <= kept, "{policy}: {c}");
    }
}

#[test]
fn a_policy_whose_candidates_are_mostly_kept_gets_one_warning_with_the_counts() {
    let r = readahead_run("mru");
    let c = seam_counts(&r, "/c");
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0];
    assert!(w.contains("cgroup /c") && w.contains(&format!("{} kept by the kernel", c["kept"])) && w.contains(&format!("{} evicted", c["evicted"])), "{w}");
    // LRU never proposes a folio whose read is in flight: nothing to warn about.
    let r = readahead_run("lru");
    assert_eq!(seam_counts(&r, "/c")["kept"], 0);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn the_work_of_a_reclaim_call_is_bounded_whatever_a_policy_returns() {
    // 100,000 ids a call, all invalid: each call looks at no more than it asked for.
    let m = run_bad(|_, _| vec![u32::MAX; 100_000]);
    let stats = m.policy.stats(1).unwrap();
    assert_eq!(stats.evicted, 0);
    assert!(stats.requests > 0);
    assert_eq!(stats.candidates, 100_000 * stats.requests);
    assert_eq!(stats.invalid, stats.candidates, "{stats:?}");
    // Only bad candidates end the call as no candidate does: one request a call. (Before,
    // the call went on batch after batch until the priority's budget was spent.)
    let none = run_bad(|_, _| Vec::new()).policy.stats(1).unwrap();
    assert_eq!(stats.requests, none.requests, "{stats:?} against {none:?}");
}

/// Records the `max` each cgroup's policy is initialised with.
struct SeesMax(Rc<RefCell<Vec<(String, u64)>>>);

impl EvictionPolicy for SeesMax {
    fn init(&mut self, cgroup: &Cgroup) {
        self.0.borrow_mut().push((cgroup.path.clone(), cgroup.max));
    }
    fn folio_added(&mut self, _folio: &Folio) {}
    fn folio_accessed(&mut self, _folio: &Folio, _how: Access) {}
    fn folio_removed(&mut self, _folio: &Folio, _why: Removal) {}
    fn evict_folios(&mut self, _cgroup: MemcgId, _nr: usize, _freeable: &Freeable, _out: &mut Vec<FolioId>) {}
}

#[test]
fn a_policy_sees_the_effective_limit_of_its_cgroup() {
    // Issue 40: a child without a limit of its own showed memory.max = 9223372036854775807,
    // so 2Q degraded to FIFO and s3fifo and arc sized their queues for that.
    let s = scenario(
        r#"
[machine]
memory = "256M"
kernel = "6.1"
policy = "classic"
[[cgroup]]
path = "/p"
max = "400p"
[[cgroup]]
path = "/p/child"
[[cgroup]]
path = "/p/tight"
max = "100p"
[[cgroup]]
path = "/p/loose"
max = "1G"
[[cgroup]]
path = "/free"
[[workload]]
name = "r"
cgroup = "/p/child"
kind = "file-read"
file_size = "10p"
ops = 0
"#,
    );
    let seen = Rc::new(RefCell::new(Vec::new()));
    let m = Machine::new(&s, |mm| {
        let make = |_: &str| -> Option<Box<dyn EvictionPolicy>> { Some(Box::new(SeesMax(seen.clone()))) };
        s.machine.policy.seam_host(mm, Some((&make, "test")))
    })
    .unwrap();
    let machine = m.mm.nodes[0].zones.managed();
    let max = |path: &str| seen.borrow().iter().find(|(p, _)| p == path).unwrap_or_else(|| panic!("{path} initialised")).1;
    assert_eq!(max("/p"), 400);
    assert_eq!(max("/p/child"), 400, "the nearest ancestor's limit");
    assert_eq!(max("/p/tight"), 100, "its own when tighter");
    assert_eq!(max("/p/loose"), 400, "a looser own limit does not hold: the parent's does");
    assert_eq!(max("/free"), machine, "no limit anywhere: the machine's memory");
    assert_eq!(max("/"), machine);
}
