//! Reclaim that every policy shares (mm/vmscan.c): the scan_control, direct and memcg limit
//! reclaim, kswapd's balance_pgdat(), the walk over the memcgs of a reclaim target,
//! shrink_folio_list() with its reference checks, unmapping, swap-out and writeback, and the
//! putback of survivors. The list-specific parts (what to isolate, how to age) belong to the
//! policies.

use crate::kernel::{DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::mm::folio::{pg, Pfn};
use crate::mm::hooks::Policy;
use crate::mm::mapping::{Entry, Shadow};
use crate::mm::memcontrol::{FedStat, MemcgId, ROOT_MEMCG};
use crate::mm::page_alloc::{free_folio, zonelist_nodes};
use crate::mm::profile::Func;
use crate::mm::swap_state::add_to_swap;
use crate::mm::vmstat::{Ev, Reclaimer};
use crate::mm::workingset::shrink_shadow_nodes;
use crate::mm::{Actor, Mm, WritebackDone};

pub const DEACTIVATE_ANON: u8 = 1;
pub const DEACTIVATE_FILE: u8 = 2;

/// What shrink_folio_list() saw (`struct reclaim_stat`) and the per-node sums of a cycle
/// (`sc->nr`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReclaimStat {
    pub nr_dirty: u64,
    pub nr_unqueued_dirty: u64,
    pub nr_congested: u64,
    pub nr_writeback: u64,
    pub nr_immediate: u64,
    pub nr_pageout: u64,
    pub nr_activate: [u64; 2],
    pub nr_ref_keep: u64,
    pub nr_unmap_fail: u64,
    pub nr_taken: u64,
    pub nr_file_taken: u64,
}

impl ReclaimStat {
    /// Adds one reclaim batch (a shrink_inactive_list() call) to the node's sums (`sc->nr`):
    /// `taken` folios isolated, `file_taken` of them file folios.
    pub fn add_cycle(&mut self, s: &ReclaimStat, taken: u64, file_taken: u64) {
        self.nr_dirty += s.nr_dirty;
        self.nr_congested += s.nr_congested;
        self.nr_unqueued_dirty += s.nr_unqueued_dirty;
        self.nr_writeback += s.nr_writeback;
        self.nr_immediate += s.nr_immediate;
        self.nr_taken += taken;
        self.nr_file_taken += file_taken;
    }
}

/// `struct scan_control`.
#[derive(Clone, Debug)]
pub struct ScanControl {
    pub nr_to_reclaim: u64,
    /// The memcg whose limit is reclaimed, or the root for global reclaim.
    pub target: MemcgId,
    pub reclaimer: Reclaimer,
    pub priority: u32,
    pub initial_priority: u32,
    pub may_writepage: bool,
    pub may_unmap: bool,
    pub may_swap: bool,
    pub may_deactivate: u8,
    pub force_deactivate: bool,
    pub skipped_deactivate: bool,
    pub memcg_low_reclaim: bool,
    pub memcg_low_skipped: bool,
    /// 6.12: walk every memcg instead of resuming the shared iterator.
    pub memcg_full_walk: bool,
    pub cache_trim_mode: bool,
    pub cache_trim_mode_failed: bool,
    pub no_cache_trim_mode: bool,
    pub file_is_tiny: bool,
    pub anon_cost: u64,
    pub file_cost: u64,
    pub nr_scanned: u64,
    pub nr_reclaimed: u64,
    pub nr: ReclaimStat,
    /// MGLRU 6.1: reclaimed pages when kswapd last aged (`sc->last_reclaimed`).
    pub last_reclaimed: u64,
    /// MGLRU 6.1: whether kswapd should age memcgs (`sc->memcgs_need_aging`).
    pub memcgs_need_aging: bool,
    /// `sc->reclaim_idx`: the highest zone whose folios may be reclaimed; folios of zones
    /// above it are skipped (`ALL_ZONES`: every zone, user pages' and memcg reclaim's).
    pub reclaim_idx: usize,
    /// 6.12: the `swappiness=` of a memory.reclaim write (`sc->proactive_swappiness`),
    /// which this reclaim uses instead of vm.swappiness ([`ScanControl::swappiness`]).
    pub proactive_swappiness: Option<u32>,
    /// The node being reclaimed (shrink_node()'s `pgdat`): whose lruvecs a policy with lists
    /// per node ([`crate::mm::hooks::Caps::lists_per_node`]) shrinks, and whose reclaim flags
    /// shrink_node() sets. 0 on a machine of one node.
    pub nid: usize,
}

/// [`ScanControl::reclaim_idx`] of reclaim for user pages (gfp_zone() of GFP_HIGHUSER_MOVABLE)
/// and of memcg reclaim: no zone is skipped.
pub const ALL_ZONES: usize = usize::MAX;

impl ScanControl {
    pub fn new(target: MemcgId, reclaimer: Reclaimer, nr_to_reclaim: u64) -> ScanControl {
        ScanControl {
            nr_to_reclaim,
            target,
            reclaimer,
            priority: DEF_PRIORITY,
            initial_priority: DEF_PRIORITY,
            may_writepage: true,
            may_unmap: true,
            may_swap: true,
            may_deactivate: 0,
            force_deactivate: false,
            skipped_deactivate: false,
            memcg_low_reclaim: false,
            memcg_low_skipped: false,
            memcg_full_walk: false,
            cache_trim_mode: false,
            cache_trim_mode_failed: false,
            no_cache_trim_mode: false,
            file_is_tiny: false,
            anon_cost: 0,
            file_cost: 0,
            nr_scanned: 0,
            nr_reclaimed: 0,
            nr: ReclaimStat::default(),
            last_reclaimed: 0,
            memcgs_need_aging: false,
            reclaim_idx: ALL_ZONES,
            proactive_swappiness: None,
            nid: 0,
        }
    }

    /// Models mm/vmscan.c: sc_swappiness() (6.12; 6.1.192 reads mem_cgroup_swappiness()
    /// alone, which on cgroup v2 is vm.swappiness): a memory.reclaim write's
    /// `swappiness=` when it gave one, vm.swappiness otherwise.
    #[inline]
    pub fn swappiness(&self, mm: &Mm) -> u32 {
        self.proactive_swappiness.unwrap_or(mm.cfg.tunables.swappiness)
    }

    /// `cgroup_reclaim()`: reclaim on behalf of a memcg limit rather than the node.
    #[inline]
    pub fn cgroup_reclaim(&self) -> bool {
        self.target != ROOT_MEMCG
    }

    #[inline]
    pub fn is_kswapd(&self) -> bool {
        self.reclaimer == Reclaimer::Kswapd
    }
}

/// Per-node reclaim state (`struct pglist_data` flags and kswapd).
#[derive(Clone, Debug, Default)]
pub struct NodeState {
    pub kswapd_failures: u32,
    /// PGDAT_DIRTY / PGDAT_WRITEBACK.
    pub dirty: bool,
    pub writeback: bool,
    /// Boxed: a step takes the run's state out and puts it back, which moves a pointer
    /// rather than the whole scan_control.
    pub kswapd: Option<Box<Balance>>,
    /// kswapd's short sleep after a balanced run (kswapd_try_to_sleep()'s HZ/10): when it
    /// ends, if kswapd is in it.
    pub nap_until: Option<u64>,
    /// 6.12: where the shared memcg iterator of each reclaim root stopped.
    pub memcg_cursor: Vec<(MemcgId, usize)>,
    /// LRUVEC_CONGESTED of reclaim targets (memcgs) whose dirty pages all await writeback.
    congested: Vec<MemcgId>,
    /// `pgdat->kswapd_highest_zoneidx`: the highest zone a wake-up asked for since kswapd
    /// last read it (`None`: MAX_NR_ZONES, no wake-up).
    pub kswapd_wake_classzone: Option<usize>,
    /// `pgdat->kswapd_order`: the highest order a wake-up asked for since kswapd last read it
    /// (7.3's large readahead folios, [`crate::kernel::Kernel::large_folio_allocated_at_its_order`];
    /// 0 otherwise).
    pub kswapd_wake_order: u32,
    /// kswapd()'s own `highest_zoneidx`: its last run's classzone, which the next run keeps
    /// unless a wake-up gave another (`None`: the highest zone).
    pub kswapd_classzone: Option<usize>,
    /// The classzone kswapd's short sleep checks the node's balance for.
    pub nap_classzone: usize,
    /// NR_ISOLATED_ANON / NR_ISOLATED_FILE over time, with several CPUs ([`Isolated`]).
    pub isolated: Isolated,
}

/// The node's isolated folios over time (`NR_ISOLATED_ANON`, `NR_ISOLATED_FILE`), on a
/// machine of several CPUs: each batch the classic LRU takes off a list (shrink_inactive_list(),
/// shrink_active_list(); MGLRU does not count its isolations here, 6.1 and 6.12 alike) is a
/// span from its isolation to its putback. An operation runs whole, so a batch of another
/// actor that began earlier and ends later is already on the list when a direct reclaimer
/// looks ([`too_many_isolated`]); spans that end before the scheduler's horizon are dropped.
#[derive(Clone, Debug, Default)]
pub struct Isolated {
    /// `[anon, file]`: (isolated at, put back at, folios).
    spans: [Vec<(u64, u64, u64)>; 2],
    /// The length of a list after its last pruning (prune again at twice that).
    kept: [usize; 2],
    /// Direct reclaimers throttled by [`too_many_isolated`], and their sleep.
    pub throttled: u64,
    pub throttled_ns: u64,
    /// Of them, those still over the limit when they woke, which gave the list up.
    pub gave_up: u64,
}

impl Isolated {
    /// `folios` of the anon or `file` lists isolated from `from` to `to`.
    pub fn record(&mut self, file: bool, from: u64, to: u64, folios: u64, horizon: u64) {
        let f = file as usize;
        if folios == 0 || to <= from {
            return;
        }
        self.spans[f].push((from, to, folios));
        if self.spans[f].len() > 2 * self.kept[f].max(16) {
            self.spans[f].retain(|s| s.1 > horizon);
            self.kept[f] = self.spans[f].len();
        }
    }

    /// The folios isolated at `t`.
    pub fn at(&self, file: bool, t: u64) -> u64 {
        self.spans[file as usize].iter().filter(|s| s.0 <= t && t < s.1).map(|s| s.2).sum()
    }

    /// The first time after `t`, up to `until`, at which a putback brings the isolated folios
    /// to `limit` or fewer (`until` if none does).
    pub fn at_most_by(&self, file: bool, t: u64, limit: u64, until: u64) -> u64 {
        let mut ends: Vec<u64> = self.spans[file as usize].iter().map(|s| s.1).filter(|&e| e > t && e <= until).collect();
        ends.sort_unstable();
        ends.into_iter().find(|&e| self.at(file, e) <= limit).unwrap_or(until)
    }
}

impl NodeState {
    pub fn congested(&self, target: MemcgId) -> bool {
        self.congested.contains(&target)
    }
    pub fn set_congested(&mut self, target: MemcgId, on: bool) {
        if on && !self.congested(target) {
            self.congested.push(target);
        } else if !on {
            self.congested.retain(|&t| t != target);
        }
    }
}

/// `MAX_RECLAIM_RETRIES` consecutive kswapd runs that reclaimed nothing make the node hopeless.
const KSWAPD_FAILURES_HOPELESS: u32 = 16;

// ---- entry points -------------------------------------------------------------------------

/// Models mm/vmscan.c: try_to_free_pages() (6.1/6.12): direct reclaim of 32 pages for an
/// allocation. Returns pages reclaimed.
pub fn try_to_free_pages<P: Policy>(mm: &mut Mm, p: &mut P) -> u64 {
    let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Direct, SWAP_CLUSTER_MAX);
    do_try_to_free_pages(mm, p, &mut sc)
}

/// Models mm/vmscan.c: try_to_free_mem_cgroup_pages() (6.1/6.12): reclaim rooted at `memcg`
/// on behalf of its limit.
pub fn try_to_free_mem_cgroup_pages<P: Policy>(mm: &mut Mm, p: &mut P, memcg: MemcgId, nr_pages: u64, may_swap: bool) -> u64 {
    let mut sc = ScanControl::new(memcg, Reclaimer::Direct, nr_pages.max(SWAP_CLUSTER_MAX));
    sc.may_swap = may_swap;
    do_try_to_free_pages(mm, p, &mut sc)
}

/// Models mm/vmscan.c: try_to_free_mem_cgroup_pages() (6.1/6.12) called with
/// MEMCG_RECLAIM_MAY_SWAP | MEMCG_RECLAIM_PROACTIVE, as memory.reclaim does: reclaim rooted
/// at `memcg` that may swap, with 6.12's `swappiness=` in place of vm.swappiness. The
/// proactive flag's other effect, leaving vmpressure() out, has nothing to act on here.
/// pgscan/pgsteal count as direct reclaim's (the writer's): 6.1 and 6.12 have no
/// pgscan_proactive (7.3 has it, split from direct reclaim's; the model follows 6.1/6.12).
pub fn try_to_free_mem_cgroup_pages_proactive<P: Policy>(mm: &mut Mm, p: &mut P, memcg: MemcgId, nr_pages: u64, swappiness: Option<u32>) -> u64 {
    let mut sc = ScanControl::new(memcg, Reclaimer::Direct, nr_pages.max(SWAP_CLUSTER_MAX));
    sc.proactive_swappiness = swappiness;
    do_try_to_free_pages(mm, p, &mut sc)
}

/// Models mm/vmscan.c: consider_reclaim_throttle() (6.1/6.12, from shrink_zones() at every
/// priority): direct reclaim of the node (not kswapd, not cgroup reclaim) that has freed
/// nothing when it reaches priority 1 sleeps a jiffy, the only sleep between the allocator's
/// retries (5.16 took the writeback waits out of the page allocator). The wake-up of other
/// throttled reclaimers when this one is efficient has no one to wake in the model.
fn consider_reclaim_throttle<P: Policy>(mm: &mut Mm, p: &mut P, sc: &ScanControl) {
    if sc.is_kswapd() || sc.cgroup_reclaim() {
        return;
    }
    if sc.priority == 1 && sc.nr_reclaimed == 0 {
        reclaim_throttle(mm, p, Throttle::NoProgress);
    }
}

/// Models mm/vmscan.c: do_try_to_free_pages(): the priority loop and its retry passes.
pub fn do_try_to_free_pages<P: Policy>(mm: &mut Mm, p: &mut P, sc: &mut ScanControl) -> u64 {
    let start_scan_cost = mm.now();
    let task = match mm.actor {
        Actor::Task(t) if mm.tasks[t].reclaim_since.is_none() => Some(t),
        _ => None,
    };
    if let Some(t) = task {
        mm.tasks[t].reclaim_since = Some(start_scan_cost);
    }
    loop {
        if !sc.cgroup_reclaim() {
            mm.count(Ev::AllocStall, 1);
        }
        loop {
            sc.nr_scanned = 0;
            shrink_zones(mm, p, sc);
            consider_reclaim_throttle(mm, p, sc);
            if sc.nr_reclaimed >= sc.nr_to_reclaim {
                break;
            }
            if sc.priority < DEF_PRIORITY - 2 {
                sc.may_writepage = true;
            }
            if sc.priority == 0 {
                break;
            }
            sc.priority -= 1;
        }
        for nid in 0..reclaim_nodes(mm, p) {
            p.snapshot_refaults(mm, sc.target, nid);
            if sc.cgroup_reclaim() {
                mm.nodes[nid].reclaim.set_congested(sc.target, false);
            }
        }
        if sc.nr_reclaimed > 0 {
            break;
        }
        if mm.cfg.kernel.partial_memcg_walk() && !sc.memcg_full_walk {
            sc.priority = sc.initial_priority;
            sc.memcg_full_walk = true;
            continue;
        }
        if sc.skipped_deactivate {
            sc.priority = sc.initial_priority;
            sc.force_deactivate = true;
            sc.skipped_deactivate = false;
            continue;
        }
        if sc.memcg_low_skipped {
            sc.priority = sc.initial_priority;
            sc.force_deactivate = false;
            sc.memcg_low_reclaim = true;
            sc.memcg_low_skipped = false;
            continue;
        }
        break;
    }
    if let Actor::Task(t) = mm.actor {
        mm.tasks[t].reclaim_ns += mm.now() - start_scan_cost;
    }
    if let Some(t) = task {
        mm.tasks[t].reclaim_since = None;
    }
    sc.nr_reclaimed
}

/// The nodes a reclaim walks: every node for a policy with lists per node
/// ([`crate::mm::hooks::Caps::lists_per_node`]), node 0 alone for one whose lists span them.
#[inline]
fn reclaim_nodes<P: Policy>(mm: &Mm, p: &P) -> usize {
    if p.caps().lists_per_node {
        mm.nodes.len()
    } else {
        1
    }
}

/// Models mm/vmscan.c: shrink_zones() (6.1/6.12): direct and memcg limit reclaim shrink each
/// node of the zonelist once, in the zonelist's order from the reclaiming task's node
/// (numa_node_id(): node_zonelist() of try_to_free_pages() and, "to put equal pressure on all
/// the nodes", of try_to_free_mem_cgroup_pages()), without stopping between nodes when the
/// target is met (shrink_node()'s own loop stops within a node). A memcg's limit reclaim so
/// takes from every node's lruvec of the memcg. One node: shrink_node() of node 0.
pub fn shrink_zones<P: Policy>(mm: &mut Mm, p: &mut P, sc: &mut ScanControl) {
    let n = reclaim_nodes(mm, p);
    for nid in zonelist_nodes(mm.numa_node_id(), n) {
        sc.nid = nid;
        shrink_node(mm, p, sc);
    }
    sc.nid = 0;
}

/// Models mm/vmscan.c: shrink_node() (the classic driver of 6.1/6.12): one pass of the
/// policy over the node, then kswapd's dirty/writeback flags and the failure count.
pub fn shrink_node<P: Policy>(mm: &mut Mm, p: &mut P, sc: &mut ScanControl) {
    if p.shrink_node_is_all(sc) {
        // 6.12.95: MGLRU's root reclaim is lru_gen_shrink_node() alone (which resets
        // kswapd_failures itself): it neither clears sc->nr nor sets or reads the node's
        // dirty, writeback and congestion flags, and never throttles here. 7.3.4 clears
        // sc->nr first, which its evict_folios() now fills.
        if mm.cfg.kernel.lru_gen_evict_handles_writeback() {
            sc.nr = ReclaimStat::default();
        }
        p.shrink_node(mm, sc);
        return;
    }
    sc.nr = ReclaimStat::default();
    let reclaimed_before = sc.nr_reclaimed;
    p.shrink_node(mm, sc);
    if sc.is_kswapd() {
        if sc.nr.nr_writeback > 0 && sc.nr.nr_writeback == sc.nr.nr_taken {
            mm.nodes[sc.nid].reclaim.writeback = true;
        }
        // 7.3 has no PGDAT_DIRTY ([`Kernel::reclaim_never_writes_file_folios`]).
        if sc.nr.nr_unqueued_dirty == sc.nr.nr_file_taken && !mm.cfg.kernel.reclaim_never_writes_file_folios() {
            mm.nodes[sc.nid].reclaim.dirty = true;
        }
        // Pages cycle through the LRU faster than they are written: stall.
        if sc.nr.nr_immediate > 0 {
            reclaim_throttle(mm, p, Throttle::Writeback);
        }
    }
    // All dirty pages seen were already queued for writeback: the target is congested.
    if (sc.is_kswapd() || sc.cgroup_reclaim()) && sc.nr.nr_dirty > 0 && sc.nr.nr_dirty == sc.nr.nr_congested {
        mm.nodes[sc.nid].reclaim.set_congested(sc.target, true);
    }
    if !sc.is_kswapd() && mm.nodes[sc.nid].reclaim.congested(sc.target) {
        reclaim_throttle(mm, p, Throttle::Congested);
    }
    if sc.cache_trim_mode && sc.nr_reclaimed == reclaimed_before {
        sc.cache_trim_mode_failed = true;
    }
    if sc.nr_reclaimed > reclaimed_before {
        mm.nodes[sc.nid].reclaim.kswapd_failures = 0;
    }
}

/// Models mm/vmscan.c: shrink_node_memcgs(): visit the memcgs under the reclaim target in
/// pre-order, skip the protected ones, shrink each lruvec and its shadow nodes. 6.1 always
/// walks them all; 6.12 resumes a shared iterator and stops once the target is met (except
/// for kswapd and full-walk retries).
pub fn shrink_node_memcgs<P: Policy>(mm: &mut Mm, p: &mut P, sc: &mut ScanControl) {
    let n = mm.memcgs.subtree(sc.target).len();
    let partial = mm.cfg.kernel.partial_memcg_walk() && !sc.is_kswapd() && !sc.memcg_full_walk;
    let start = if partial { memcg_cursor(mm, sc.nid, sc.target) % n } else { 0 };
    for i in start..n {
        let memcg = mm.memcgs.subtree(sc.target)[i];
        mm.cond_resched(p);
        mm.memcgs.calculate_protection(sc.target, memcg, mm.cfg.tunables.memory_recursiveprot);
        if mm.memcgs.below_min(Some(sc.target), memcg) {
            continue;
        } else if mm.memcgs.below_low(Some(sc.target), memcg) {
            if !sc.memcg_low_reclaim {
                sc.memcg_low_skipped = true;
                continue;
            }
            mm.memcgs.get_mut(memcg).memory_events.low += 1;
        }
        p.shrink_lruvec(mm, memcg, sc);
        shrink_slab(mm, memcg, sc.priority);
        if partial && sc.nr_reclaimed >= sc.nr_to_reclaim {
            set_memcg_cursor(mm, sc.nid, sc.target, i + 1);
            return;
        }
    }
    if partial {
        set_memcg_cursor(mm, sc.nid, sc.target, 0);
    }
}

/// The node's memcg iterator of `root` (`mem_cgroup_per_node->iter`, one per node).
fn memcg_cursor(mm: &Mm, nid: usize, root: MemcgId) -> usize {
    mm.nodes[nid].reclaim.memcg_cursor.iter().find(|(r, _)| *r == root).map_or(0, |&(_, c)| c)
}

fn set_memcg_cursor(mm: &mut Mm, nid: usize, root: MemcgId, at: usize) {
    match mm.nodes[nid].reclaim.memcg_cursor.iter_mut().find(|(r, _)| *r == root) {
        Some(e) => e.1 = at,
        None => mm.nodes[nid].reclaim.memcg_cursor.push((root, at)),
    }
}

/// Why reclaim stalls (`enum vmscan_throttle_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Throttle {
    /// Until SWAP_CLUSTER_MAX pages finish writeback, or HZ/10.
    Writeback,
    /// One jiffy.
    Congested,
    /// One jiffy (direct reclaim that freed nothing by priority 1).
    NoProgress,
    /// HZ/50, or until the isolated folios of the anon or `file` lists of node `nid` fall to
    /// the limit ([`too_many_isolated`]).
    Isolated { file: bool, nid: usize },
}

/// Models mm/vmscan.c: reclaim_throttle() (6.1/6.12) for the current actor: sleep until the
/// reason clears or the timeout passes, completing the writeback that finished meanwhile.
pub fn reclaim_throttle<P: Policy>(mm: &mut Mm, p: &mut P, why: Throttle) {
    const JIFFY: u64 = 4_000_000;
    let now = mm.now();
    let until = match why {
        Throttle::Congested | Throttle::NoProgress => now + JIFFY,
        Throttle::Isolated { file, nid } => {
            let until = mm.nodes[nid].reclaim.isolated.at_most_by(file, now, isolated_limit(mm, nid, file), now + 5 * JIFFY);
            mm.nodes[nid].reclaim.isolated.throttled += 1;
            mm.nodes[nid].reclaim.isolated.throttled_ns += until - now;
            until
        }
        Throttle::Writeback => {
            let timeout = now + 25 * JIFFY;
            let mut ends: Vec<u64> = mm.writeback.iter().map(|r| r.0.at).collect();
            let k = SWAP_CLUSTER_MAX as usize;
            if ends.len() >= k {
                let (_, kth, _) = ends.select_nth_unstable(k - 1);
                (*kth).clamp(now, timeout)
            } else {
                timeout
            }
        }
    };
    mm.wait_until(until);
    crate::mm::page_writeback::complete_writeback(mm, p, until);
}

/// The most folios of the anon or `file` lists node `nid` may have isolated before a direct
/// reclaimer waits: its inactive folios, an eighth of them for reclaim that may do IO and
/// enter the filesystem (every reclaim in pagelab: user pages' and page cache's allocations
/// are GFP_HIGHUSER_MOVABLE, which has __GFP_IO and __GFP_FS; only GFP_NOIO/GFP_NOFS callers
/// get the whole inactive list).
/// The inactive folios are the node's own (node_page_state(pgdat, NR_INACTIVE_*)).
fn isolated_limit(mm: &Mm, nid: usize, file: bool) -> u64 {
    let lru = if file { crate::mm::vmstat::Lru::InactiveFile } else { crate::mm::vmstat::Lru::InactiveAnon };
    let inactive = if mm.nodes.len() == 1 { mm.node_lru_size(lru) } else { mm.pgdat_lru_size(nid, lru) };
    inactive >> 3
}

/// Models mm/vmscan.c: too_many_isolated() (6.1, 6.12): whether node `sc.nid` has more folios of
/// the anon or `file` lists isolated than [`isolated_limit`] allows. kswapd never waits;
/// cgroup reclaim does as well, since writeback_throttling_sane() exempts it only on cgroup
/// v1 and pagelab's memcgs are cgroup v2's. Only a machine of several CPUs has other
/// reclaimers' isolations at the same time ([`Isolated`]); without `machine.cpus` ≥ 2 this
/// is never true.
pub fn too_many_isolated(mm: &Mm, file: bool, sc: &ScanControl) -> bool {
    if sc.is_kswapd() || mm.sched.is_none() {
        return false;
    }
    mm.nodes[sc.nid].reclaim.isolated.at(file, mm.now()) > isolated_limit(mm, sc.nid, file)
}

/// Models the start of mm/vmscan.c: shrink_inactive_list() (6.1, 6.12): while too many folios
/// are isolated ([`too_many_isolated`]), a direct reclaimer sleeps once
/// (reclaim_throttle(VMSCAN_THROTTLE_ISOLATED)); still too many after it, it gives the list up
/// and reclaims nothing from it this time. Returns whether to go on. The sleep is inside the
/// caller's memstall (__perform_reclaim(), the memcg charge's reclaim), so PSI counts it.
pub fn throttle_isolated<P: Policy>(mm: &mut Mm, p: &mut P, file: bool, sc: &ScanControl) -> bool {
    if !too_many_isolated(mm, file, sc) {
        return true;
    }
    reclaim_throttle(mm, p, Throttle::Isolated { file, nid: sc.nid });
    if too_many_isolated(mm, file, sc) {
        mm.nodes[sc.nid].reclaim.isolated.gave_up += 1;
        return false;
    }
    true
}

/// Records `folios` of the anon or `file` lists of node `nid` isolated from `from` until now
/// ([`Isolated`]), with several CPUs: the classic LRU's NR_ISOLATED_* of the node add at
/// isolation and subtract at putback.
pub fn note_isolated(mm: &mut Mm, nid: usize, file: bool, from: u64, folios: u64) {
    let Some(sched) = mm.sched.as_ref() else { return };
    let horizon = sched.horizon;
    let to = mm.now();
    mm.nodes[nid].reclaim.isolated.record(file, from, to, folios, horizon);
}

/// Models mm/vmscan.c: shrink_slab(): pagelab's only shrinker is the shadow-node one.
pub fn shrink_slab(mm: &mut Mm, memcg: MemcgId, priority: u32) {
    shrink_shadow_nodes(mm, memcg, priority);
}

/// Counts a pgscan/pgsteal/pgrefill event: always for the memcg, globally only for node
/// reclaim (cgroup reclaim is left out of /proc/vmstat's copy in 6.1-6.12), or for both
/// when they are node statistics (7.3: [`Kernel::reclaim_counters_are_node_stats`]).
///
/// [`Kernel::reclaim_counters_are_node_stats`]: crate::kernel::Kernel::reclaim_counters_are_node_stats
#[inline]
pub fn count_reclaim(mm: &mut Mm, memcg: MemcgId, sc: &ScanControl, e: Ev, n: u64) {
    if !sc.cgroup_reclaim() || mm.cfg.kernel.reclaim_counters_are_node_stats() {
        mm.count(e, n);
    }
    mm.count_memcg(memcg, e, n);
}

// ---- one reclaim batch ----------------------------------------------------------------------

// The reclaim batch: what the classic LRU's shrink_inactive_list(), MGLRU's evict_folios() and
// the eviction seam's shrink_seam_lruvec() do once a policy has isolated its folios, written
// once ([`reclaim_batch`]).
//
// ## The contract a caller sees
//
// * The caller isolates: `list` holds folios it took off its LRU (PG_lru clear, PG_isolated
//   set, the lru sizes already lowered), in the order shrink_folio_list() is to see them. What
//   to isolate and how (the classic tail, MGLRU's type, tier and sort_folio(), the seam's
//   validated candidates) is the caller's.
// * The batch does, in this order: the pgscan counts ([`Pgscan`]); nothing more when `list` is
//   empty; [`Epilogue::before_shrink`]; [`shrink_folio_list()`]; [`Epilogue::putback`];
//   the pgsteal counts, by the type each folio had when it was isolated; [`Epilogue::note_cost`];
//   the flusher wake-up and the `sc->nr` sums ([`DirtyFeedback`]). It returns the pages
//   reclaimed; adding them to `sc.nr_reclaimed` is the caller's (the classic LRU adds them in
//   shrink_lruvec(), MGLRU per batch, the seam per call).
// * Every difference between the callers is an argument: [`BatchRules`] names the kernel's
//   differences in counting (where pgscan is counted, whether the dirty state reaches the
//   flushers and `sc->nr`), and the [`Epilogue`] is each policy's own bookkeeping around the
//   shared part. An Epilogue has no default methods: a policy that records no cost says so in
//   its `note_cost`, rather than by leaving it out.
// * After [`Epilogue::putback`], `list` holds the survivors the epilogue did not put back (MGLRU's
//   clean folios for its one retry); the classic LRU and the seam put every survivor back and
//   leave it empty.
//
// libCacheSim's shared eviction helpers are the model: one routine per step that every
// algorithm calls, with the algorithm's choices passed in.

/// Where a batch's pgscan is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pgscan {
    /// In the batch, before shrink_folio_list(): `[anon, file]` folios scanned. Models
    /// mm/vmscan.c: shrink_inactive_list() (6.1, 6.12), which counts every folio it scanned,
    /// taken or rotated (`nr_scanned`); the seam counts the candidates it took.
    Here([u64; 2]),
    /// Counted where the folios were isolated: mm/vmscan.c: scan_folios() (6.1, 6.12) counts
    /// pgscan as MGLRU isolates, next to pgrefill, through [`count_pgscan`]; evict_folios()'s
    /// retry of clean folios counts none. The isolation's lock section is the caller's too:
    /// evict_folios() (6.1, 6.12, 7.3) holds the lruvec's lock for every folio scan_folios()
    /// looks at, and its retry of clean folios isolates nothing, so takes no such section.
    AtIsolation,
}

/// What a batch does with the dirty and writeback state shrink_folio_list() reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirtyFeedback {
    /// Models mm/vmscan.c: shrink_inactive_list() (6.1, 6.12): wake the flushers
    /// (wakeup_flusher_threads(WB_REASON_VMSCAN)) when every taken folio was dirty and not
    /// queued for writeback, and add the batch's reclaim_stat to `sc->nr`, which
    /// shrink_node() and kswapd read to throttle and to mark the node dirty or under
    /// writeback.
    WakeFlusherAndAccount,
    /// Models mm/vmscan.c: evict_folios() (6.1.192, 6.12.95): neither (later 6.12 stable
    /// releases add both; pagelab follows 6.12.95); and 7.3.4's retry of clean folios.
    Ignore,
    /// Models mm/vmscan.c: handle_reclaim_writeback() as 7.3.4's evict_folios() calls it
    /// after its isolating pass (7.2, [`Kernel::lru_gen_evict_handles_writeback`]): the
    /// flushers woken as above and the batch added to `sc->nr`, with `taken` but no
    /// `file_taken` (7.3 keeps no such sum).
    ///
    /// [`Kernel::lru_gen_evict_handles_writeback`]: crate::kernel::Kernel::lru_gen_evict_handles_writeback
    HandleReclaimWriteback,
    /// Models mm/vmscan.c: reclaim_folio_list() (6.1, 6.12, 7.3; cache_ext's 6.6.8 eviction
    /// calls it through reclaim_pages()): shrink_folio_list() fills a local reclaim_stat that
    /// is dropped, so nothing wakes the flushers and `sc->nr` is untouched.
    Dropped,
}

/// The named differences between the callers of [`reclaim_batch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchRules {
    pub pgscan: Pgscan,
    pub dirty: DirtyFeedback,
    /// shrink_folio_list()'s `ignore_references`: folio_check_references() is skipped.
    pub ignore_references: bool,
    /// The kernel function whose lruvec lock sections these are (the lock's `by_function`).
    pub caller: &'static str,
}

impl BatchRules {
    /// The classic LRU's shrink_inactive_list(): pgscan of `scanned` (`[anon, file]`), flusher
    /// and `sc->nr` fed.
    pub fn shrink_inactive_list(scanned: [u64; 2]) -> BatchRules {
        BatchRules { pgscan: Pgscan::Here(scanned), dirty: DirtyFeedback::WakeFlusherAndAccount, ignore_references: false, caller: "shrink_inactive_list" }
    }

    /// cache_ext's eviction (its 6.6.8 patch's __page_cache_ext_isolate_and_reclaim()): the
    /// seam's candidates, `scanned` (`[anon, file]`) counted here as pagelab counts them, go to
    /// reclaim_pages(): the statistics dropped ([`DirtyFeedback::Dropped`]) and the
    /// references ignored where `kernel`'s reclaim_folio_list() ignores them.
    pub fn reclaim_pages(scanned: [u64; 2], kernel: crate::kernel::Kernel) -> BatchRules {
        let ignore_references = kernel.reclaim_pages_ignores_references();
        BatchRules { pgscan: Pgscan::Here(scanned), dirty: DirtyFeedback::Dropped, ignore_references, caller: "shrink_inactive_list" }
    }

    /// MGLRU's evict_folios(): pgscan counted by scan_folios(), dirty state not fed back.
    pub fn evict_folios() -> BatchRules {
        BatchRules { pgscan: Pgscan::AtIsolation, dirty: DirtyFeedback::Ignore, ignore_references: false, caller: "evict_folios" }
    }

    /// 7.3's evict_folios() on its isolating pass: pgscan counted by scan_folios(), the dirty
    /// state fed back by handle_reclaim_writeback().
    pub fn evict_folios_7_2() -> BatchRules {
        BatchRules { pgscan: Pgscan::AtIsolation, dirty: DirtyFeedback::HandleReclaimWriteback, ignore_references: false, caller: "evict_folios" }
    }
}

/// A policy's own bookkeeping around a [`reclaim_batch`]: the visible argument where the
/// callers differ. Every method is required (see the contract above).
pub trait Epilogue<P: Policy> {
    /// The isolated folios, before shrink_folio_list() sees them (the classic LRU's 5.7
    /// `recent_scanned`, the seam's record of what the policy handed over).
    fn before_shrink(&mut self, mm: &mut Mm, p: &mut P, list: &[Pfn]);
    /// The survivors of shrink_folio_list(), in order, PG_active set on those it activated:
    /// put back what goes back (move_folios_to_lru(), MGLRU's sort of survivors, the seam's
    /// `folio_removed`/putback), leaving in `list` only what the caller retries.
    fn putback(&mut self, mm: &mut Mm, p: &mut P, list: &mut Vec<Pfn>);
    /// After the pgsteal counts: the cost the policy records of the batch (the classic LRU's
    /// lru_note_cost()); `reclaimed` pages were freed.
    fn note_cost(&mut self, mm: &mut Mm, reclaimed: u64, stat: &ReclaimStat);
}

/// Counts a batch's pgscan: `pgscan_{kswapd,direct,khugepaged}` of the memcg (and globally
/// for node reclaim), `pgscan_anon` and `pgscan_file`; `scanned` is `[anon, file]`. Models the
/// pgscan counts of mm/vmscan.c: shrink_inactive_list() and scan_folios() (6.1, 6.12).
#[inline]
pub fn count_pgscan(mm: &mut Mm, memcg: MemcgId, sc: &ScanControl, scanned: [u64; 2]) {
    count_reclaim(mm, memcg, sc, sc.reclaimer.pgscan(), scanned[0] + scanned[1]);
    mm.nodes[sc.nid].pgscan[!sc.is_kswapd() as usize] += scanned[0] + scanned[1];
    mm.count(Ev::PgScanAnon, scanned[0]);
    mm.count(Ev::PgScanFile, scanned[1]);
}

/// Counts a batch's pgsteal as [`count_pgscan`] counts pgscan; `stolen` is `[anon, file]`.
/// Models the pgsteal counts of mm/vmscan.c: shrink_inactive_list() and evict_folios() (6.1,
/// 6.12).
#[inline]
fn count_pgsteal(mm: &mut Mm, memcg: MemcgId, sc: &ScanControl, stolen: [u64; 2]) {
    count_reclaim(mm, memcg, sc, sc.reclaimer.pgsteal(), stolen[0] + stolen[1]);
    mm.nodes[sc.nid].pgsteal[!sc.is_kswapd() as usize] += stolen[0] + stolen[1];
    mm.count(Ev::PgStealAnon, stolen[0]);
    mm.count(Ev::PgStealFile, stolen[1]);
}

/// The file pages of `list` (a large folio counts its pages, as the kernel's nr_taken does).
fn file_folios(mm: &Mm, list: &[Pfn]) -> u64 {
    list.iter().map(|&pfn| mm.folios.get(pfn)).filter(|f| f.is_file_lru()).map(|f| f.nr_pages()).sum()
}

/// The pages of `list`: folio_nr_pages() summed (the folios with order-0 pages only).
pub fn list_pages(mm: &Mm, list: &[Pfn]) -> u64 {
    list.iter().map(|&pfn| mm.folios.nr_pages(pfn)).sum()
}

/// One reclaim batch of `memcg`'s isolated folios in `list`: the part of mm/vmscan.c:
/// shrink_inactive_list() (6.1, 6.12) after isolate_lru_folios(), of evict_folios() (6.1.192,
/// 6.12.95) after isolate_folios(), and of cache_ext's shrink_lruvec() (6.6.8 patch) after the
/// candidates' validation: pgscan, shrink_folio_list(), putback, pgsteal, the policy's cost,
/// the flusher wake-up and `sc->nr`, with the callers' differences in `rules` and `epilogue`
/// (the contract above). Returns the pages reclaimed.
pub fn reclaim_batch<P: Policy, E: Epilogue<P>>(
    mm: &mut Mm,
    p: &mut P,
    memcg: MemcgId,
    sc: &mut ScanControl,
    list: &mut Vec<Pfn>,
    rules: BatchRules,
    epilogue: &mut E,
) -> u64 {
    if let Pgscan::Here(scanned) = rules.pgscan {
        count_pgscan(mm, memcg, sc, scanned);
    }
    // Pages, as the kernel's nr_taken (a large folio counts folio_nr_pages()); and the file
    // pages among them, in the same pass.
    let (nr_taken, file_taken) =
        list.iter().map(|&pfn| mm.folios.get(pfn)).fold((0, 0), |(all, file), f| (all + f.nr_pages(), file + if f.is_file_lru() { f.nr_pages() } else { 0 }));
    // The isolation that filled `list` held the lruvec's lock for every folio it scanned
    // (isolate_lru_folios()); several CPUs contend for it. MGLRU's caller took its own.
    if let Pgscan::Here(scanned) = rules.pgscan {
        mm.lru_lock_on(rules.caller, memcg, sc.nid, scanned[0] + scanned[1]);
    }
    if nr_taken == 0 {
        return 0;
    }
    // A folio's type does not change while it is isolated, so the survivors' types give the
    // freed folios' types.
    epilogue.before_shrink(mm, p, list);
    let mut stat = ReclaimStat::default();
    let reclaimed = shrink_folio_list(mm, p, list, sc, &mut stat, rules);
    let file_freed = file_taken - file_folios(mm, list);
    // The survivors go back under the lock (move_folios_to_lru(), MGLRU's putback).
    mm.lru_lock_on(rules.caller, memcg, sc.nid, list.len() as u64);
    epilogue.putback(mm, p, list);
    count_pgsteal(mm, memcg, sc, [reclaimed - file_freed, file_freed]);
    epilogue.note_cost(mm, reclaimed, &stat);
    if !matches!(rules.dirty, DirtyFeedback::Ignore | DirtyFeedback::Dropped) {
        if stat.nr_unqueued_dirty == nr_taken {
            crate::mm::page_writeback::wakeup_flusher_threads(mm);
        }
        let file_taken = if rules.dirty == DirtyFeedback::WakeFlusherAndAccount { file_taken } else { 0 };
        sc.nr.add_cycle(&stat, nr_taken, file_taken);
    }
    reclaimed
}

// ---- shrink_folio_list ----------------------------------------------------------------------

/// `enum folio_references`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FolioRef {
    Reclaim,
    ReclaimClean,
    Keep,
    Activate,
}

/// Models mm/rmap.c: folio_referenced() and folio_referenced_one() for pagelab's one
/// mapping per page: test and clear the young bit. Returns the number of referencing
/// mappings (0 or 1).
///
/// - 6.12 skips mappings without recency (VM_SEQ_READ, VM_RAND_READ) altogether: their
///   young bits stay.
/// - 6.1 clears their young bits, counts a VM_RAND_READ mapping's young PTE as a reference
///   and ignores a VM_SEQ_READ one's.
/// - With MGLRU a young PTE of a mapping with recency goes to the look-around, which
///   clears it (in 6.1 from inside its window, marking the isolated trigger PG_referenced;
///   in 6.12 before it looks, see [`Kernel::lru_gen_look_around_clears_its_trigger_first`]).
///
/// [`Kernel::lru_gen_look_around_clears_its_trigger_first`]: crate::kernel::Kernel::lru_gen_look_around_clears_its_trigger_first
pub fn folio_referenced<P: Policy>(mm: &mut Mm, p: &mut P, pfn: Pfn) -> u32 {
    let f = *mm.folios.get(pfn);
    if !f.test(pg::MAPPED) {
        return 0;
    }
    mm.cpu_in(Func::PageVmaMappedWalk, mm.cfg.costs.rmap_walk_ns);
    let norecency = f.test(pg::NORECENCY);
    if norecency && mm.cfg.kernel.rmap_skips_vmas_without_recency() {
        return 0;
    }
    if !f.test(pg::YOUNG) {
        return 0;
    }
    if !norecency && p.caps().uses_lru_gen_lookaround {
        if mm.cfg.kernel.lru_gen_look_around_clears_its_trigger_first() {
            mm.folios.clear(pfn, pg::YOUNG);
        }
        p.referenced_young(mm, pfn);
        // In 6.1 the window's loop cleared it (a window it skipped leaves it for
        // ptep_clear_flush_young(), which would count it once more; pagelab's window always
        // holds its trigger).
        mm.folios.clear(pfn, pg::YOUNG);
        return 1;
    }
    mm.folios.clear(pfn, pg::YOUNG);
    (!f.test(pg::SEQ_READ)) as u32
}

/// Models mm/vmscan.c: folio_check_references() (6.1/6.12; MGLRU uses it too before 6.14).
///
/// 7.3 (6.14 on, [`Kernel::lru_gen_workingset_top_tier`]): with MGLRU an unreferenced folio is
/// reclaimed (PG_referenced is neither tested nor cleared) and a referenced one is activated
/// when [`lru_gen_set_refs`](crate::mm::swap::lru_gen_set_refs) promotes it, else kept.
///
/// [`Kernel::lru_gen_workingset_top_tier`]: crate::kernel::Kernel::lru_gen_workingset_top_tier
pub fn folio_check_references<P: Policy>(mm: &mut Mm, p: &mut P, pfn: Pfn) -> FolioRef {
    let referenced_ptes = folio_referenced(mm, p, pfn);
    if p.caps().uses_lru_gen_lookaround && mm.cfg.kernel.lru_gen_workingset_top_tier() {
        if referenced_ptes == 0 {
            return FolioRef::Reclaim;
        }
        return if crate::mm::swap::lru_gen_set_refs(mm, pfn) { FolioRef::Activate } else { FolioRef::Keep };
    }
    let referenced_folio = mm.folios.test_clear(pfn, pg::REFERENCED);
    let f = *mm.folios.get(pfn);
    if referenced_ptes > 0 {
        mm.folios.set(pfn, pg::REFERENCED);
        if referenced_folio || referenced_ptes > 1 {
            return FolioRef::Activate;
        }
        return FolioRef::Keep;
    }
    if referenced_folio && f.is_file_lru() {
        return FolioRef::ReclaimClean;
    }
    FolioRef::Reclaim
}

/// What happened to one folio in shrink_folio_list().
enum Verdict {
    Freed,
    Activate,
    Keep,
}

/// How far ahead shrink_folio_list() prefetches the page-cache slots of the folios it will
/// evict.
const SHADOW_PREFETCH_AHEAD: usize = 4;

/// Models mm/vmscan.c: shrink_folio_list() (6.1/6.12, order-0 pages, no demotion tiers):
/// reclaims what it can from `list`; survivors stay in `list` in order, activated ones with
/// PG_active set. Returns pages reclaimed. `rules` are the caller's: whether references are
/// ignored, whether a dirty file folio it activates wakes the flushers.
pub fn shrink_folio_list<P: Policy>(mm: &mut Mm, p: &mut P, list: &mut Vec<Pfn>, sc: &mut ScanControl, stat: &mut ReclaimStat, rules: BatchRules) -> u64 {
    complete_writeback_in_reclaim(mm, p);
    let mut reclaimed = 0;
    let (scan_ns, reclaim_ns) = (mm.cfg.costs.scan_page_ns, mm.cfg.costs.reclaim_page_ns);
    // Survivors are compacted to the front of `list`, in order.
    let mut kept = 0;
    for i in 0..list.len() {
        let pfn = list[i];
        if let Some(&ahead) = list.get(i + SHADOW_PREFETCH_AHEAD) {
            // The page-cache slot that folio's shadow will be written to (a random place
            // in a large table) loads while this one is handled.
            mm.space.prefetch(mm.folios.get(ahead).vpn);
        }
        let mut survive = |list: &mut Vec<Pfn>| {
            list[kept] = pfn;
            kept += 1;
        };
        if !crate::mm::filemap::folio_trylock(mm, pfn) {
            survive(list);
            continue;
        }
        // Pages, as shrink_folio_list() counts (folio_nr_pages(): a large folio goes whole).
        let nr = mm.folios.nr_pages(pfn);
        sc.nr_scanned += nr;
        mm.cpu_in(Func::ShrinkFolioList, scan_ns);
        match shrink_one_folio(mm, p, pfn, sc, stat, rules) {
            Verdict::Freed => {
                reclaimed += nr;
                mm.cpu_in(Func::RemoveMapping, reclaim_ns);
            }
            Verdict::Activate => {
                if mm.folios.test(pfn, pg::SWAPCACHE) && mm.swap.full() {
                    crate::mm::swap_state::folio_free_swap(mm, pfn);
                }
                let f = mm.folios.get(pfn);
                let ty = f.lru_type();
                let memcg = f.memcg;
                mm.folios.set(pfn, pg::ACTIVE);
                stat.nr_activate[ty] += nr;
                mm.count_memcg(memcg, Ev::PgActivate, nr);
                survive(list);
            }
            Verdict::Keep => survive(list),
        }
    }
    // Before the freed folios go back to the allocator.
    crate::mm::rmap::try_to_unmap_flush(mm);
    mm.count(Ev::PgActivate, stat.nr_activate[0] + stat.nr_activate[1]);
    list.truncate(kept);
    reclaimed
}

/// Models the completion side of mm/page_io.c (the swap bio's end_io) and
/// mm/filemap.c: folio_end_writeback() (6.1/6.12), which run from the device's interrupt
/// whenever a write finishes, also in the middle of a reclaim pass: every write finished by
/// the reclaimer's clock is completed before it takes the next batch, so a page it wrote a
/// batch ago is already rotated to the inactive tail (folio_rotate_reclaimable()) and is
/// freed by a later isolation of the same pass, instead of waiting for the pass to end while
/// priority drops and ever more pages are written.
fn complete_writeback_in_reclaim<P: Policy>(mm: &mut Mm, p: &mut P) {
    let now = mm.now();
    crate::mm::page_writeback::complete_writeback(mm, p, now);
}

/// Models mm/vmscan.c: folio_check_dirty_writeback() (6.1/6.12): the dirty and writeback
/// state reclaim's statistics (nr_dirty, nr_unqueued_dirty, nr_congested) see. Only file
/// folios report it; a swap-backed folio is neither dirty nor under writeback here, even
/// while it is being swapped out, so anon batches never mark the node dirty or congested.
pub fn folio_check_dirty_writeback(f: &crate::mm::folio::Folio) -> (bool, bool) {
    if !f.is_file_lru() {
        return (false, false);
    }
    (f.test(pg::DIRTY), f.test(pg::WRITEBACK))
}

fn shrink_one_folio<P: Policy>(mm: &mut Mm, p: &mut P, pfn: Pfn, sc: &mut ScanControl, stat: &mut ReclaimStat, rules: BatchRules) -> Verdict {
    let ignore_references = rules.ignore_references;
    let f = *mm.folios.get(pfn);
    if f.test(pg::UNEVICTABLE) {
        return Verdict::Activate;
    }
    if !sc.may_unmap && f.test(pg::MAPPED) {
        return Verdict::Keep;
    }
    // "folio_update_gen() tried to promote this page?": gone in 7.3 (6.14's rework).
    if p.caps().keeps_promoted_mapped_folios
        && !mm.cfg.kernel.lru_gen_workingset_top_tier()
        && !ignore_references
        && f.test(pg::MAPPED)
        && f.test(pg::REFERENCED)
    {
        return Verdict::Keep;
    }
    let (dirty, writeback) = folio_check_dirty_writeback(&f);
    let nr = f.nr_pages();
    if dirty || writeback {
        stat.nr_dirty += nr;
    }
    if dirty && !writeback {
        stat.nr_unqueued_dirty += nr;
    }
    if writeback && f.test(pg::RECLAIM) {
        stat.nr_congested += nr;
    }
    if f.test(pg::WRITEBACK) {
        if sc.is_kswapd() && f.test(pg::RECLAIM) && mm.nodes[sc.nid].reclaim.writeback {
            stat.nr_immediate += nr;
        } else {
            mm.folios.set(pfn, pg::RECLAIM);
            stat.nr_writeback += nr;
        }
        return Verdict::Activate;
    }
    let references = if ignore_references { FolioRef::Reclaim } else { folio_check_references(mm, p, pfn) };
    match references {
        FolioRef::Activate => return Verdict::Activate,
        FolioRef::Keep => {
            stat.nr_ref_keep += nr;
            return Verdict::Keep;
        }
        FolioRef::Reclaim | FolioRef::ReclaimClean => {}
    }
    let anon = f.test(pg::SWAPBACKED);
    if anon && !mm.folios.test(pfn, pg::SWAPCACHE) && !add_to_swap(mm, pfn) {
        return Verdict::Activate;
    }
    if mm.folios.test(pfn, pg::MAPPED) {
        try_to_unmap(mm, pfn);
    }
    if mm.folios.test(pfn, pg::DIRTY) {
        // 6.12: kswapd writes a PG_reclaim file folio of a PGDAT_DIRTY node; 7.3 never
        // writes a file folio from reclaim ([`Kernel::reclaim_never_writes_file_folios`]).
        if !anon
            && (mm.cfg.kernel.reclaim_never_writes_file_folios() || !sc.is_kswapd() || !mm.folios.test(pfn, pg::RECLAIM) || !mm.nodes[sc.nid].reclaim.dirty)
        {
            mm.count(Ev::NrVmscanImmediateReclaim, 1);
            mm.folios.set(pfn, pg::RECLAIM);
            return Verdict::Activate;
        }
        if references == FolioRef::ReclaimClean || !sc.may_writepage {
            return Verdict::Keep;
        }
        crate::mm::rmap::try_to_unmap_flush_dirty(mm);
        if in_cpu_batch(mm, pfn) {
            // pageout(): is_page_cache_freeable() sees the batch's reference; PAGE_KEEP.
            return Verdict::Keep;
        }
        pageout(mm, pfn);
        stat.nr_pageout += nr;
        if mm.folios.test(pfn, pg::WRITEBACK) || mm.folios.test(pfn, pg::DIRTY) {
            return Verdict::Keep;
        }
    }
    if mm.folios.test(pfn, pg::PINNED) || in_cpu_batch(mm, pfn) {
        // Someone holds a reference: the refcount freeze in __remove_mapping() fails.
        return Verdict::Keep;
    }
    remove_mapping(mm, p, pfn, sc.target);
    Verdict::Freed
}

/// A folio queued in a CPU's activation batch holds the batch's reference (6.1 leaves it
/// on the LRU, so reclaim can isolate it: MGLRU's look-around queues folios through
/// folio_activate() in the middle of an eviction pass).
#[inline]
fn in_cpu_batch(mm: &Mm, pfn: Pfn) -> bool {
    crate::mm::swap::in_activate_batch(mm, pfn)
}

/// Models mm/rmap.c: try_to_unmap(): the page leaves the page table (an anon PTE becomes a
/// swap entry, kept in the swap cache until the page is freed).
pub fn try_to_unmap(mm: &mut Mm, pfn: Pfn) {
    mm.cpu_in(Func::PageVmaMappedWalk, mm.cfg.costs.rmap_walk_ns);
    let (vpn, dirty) = (mm.folios.get(pfn).vpn, mm.folios.test(pfn, pg::DIRTY));
    if mm.folios.test(pfn, pg::SWAPBACKED) {
        crate::mm::rmap::set_tlb_ubc_flush_pending(mm, vpn, dirty);
    }
    let f = mm.folios.get_mut(pfn);
    f.flags &= !(pg::MAPPED | pg::YOUNG);
    let (file, memcg, nr) = (f.flags & pg::SWAPBACKED == 0, f.memcg, f.nr_pages());
    if file {
        mm.nr_mapped -= nr;
    }
    mm.memcgs.stat_updated(memcg, FedStat::Mapped, nr);
}

/// Models mm/vmscan.c: pageout(): write a dirty folio (swap_writepage() for anon, the
/// filesystem's writepage for file pages). Synchronous devices finish at once; others leave
/// the folio under writeback with PG_reclaim, to be rotated when the write completes.
pub fn pageout(mm: &mut Mm, pfn: Pfn) {
    let anon = mm.folios.test(pfn, pg::SWAPBACKED);
    mm.folios.clear(pfn, pg::DIRTY);
    mm.folios.set(pfn, pg::RECLAIM);
    mm.count(Ev::NrVmscanWrite, 1);
    if anon {
        mm.count(Ev::PswpOut, 1);
        let synchronous = mm.swap_dev.kind.synchronous_io();
        if !(synchronous && mm.cfg.kernel.sync_swap_skips_bio()) {
            mm.count(Ev::PgpgOut, 4);
        }
        mm.swap_io_cpu(1);
        let now = mm.now();
        let done = if mm.swap_on_cpu() { now + mm.swap_dev.on_cpu(1, true) } else { mm.swap_dev.submit(now, 1, true) };
        if synchronous {
            // zram and brd complete the bio before pageout() returns; zram compresses on
            // the reclaiming CPU. The folio still starts and ends writeback.
            mm.cpu_in(Func::SyncDeviceIo, done - now);
            let memcg = mm.folio_memcg(pfn);
            // NR_WRITEBACK up and down again: no change, two updates fed to rstat.
            mm.memcgs.rstat_updated(memcg, 2);
            mm.folios.clear(pfn, pg::RECLAIM);
        } else {
            start_writeback(mm, pfn, done);
        }
    } else {
        let nr = mm.folios.nr_pages(pfn);
        let memcg = mm.folio_memcg(pfn);
        mm.account_dirty(memcg, -(nr as i64));
        mm.count(Ev::PgpgOut, 4 * nr);
        mm.file_io_cpu(nr);
        let done = mm.submit_file(nr, true);
        start_writeback(mm, pfn, done);
    }
}

/// Marks a folio under writeback until `done`.
pub fn start_writeback(mm: &mut Mm, pfn: Pfn, done: u64) {
    mm.folios.set(pfn, pg::WRITEBACK);
    let nr = mm.folios.nr_pages(pfn);
    let memcg = mm.folio_memcg(pfn);
    mm.account_writeback(memcg, nr as i64);
    let vpn = mm.folios.get(pfn).vpn;
    mm.writeback.push(std::cmp::Reverse(WritebackDone { at: done, pfn, vpn }));
}

/// Models mm/vmscan.c: __remove_mapping() + the free: store the shadow entry the policy
/// gives, uncharge and free the frame. A clean large file folio (7.3) goes whole: one shadow
/// over its range, every frame freed.
pub fn remove_mapping<P: Policy>(mm: &mut Mm, p: &mut P, pfn: Pfn, target: MemcgId) {
    let f = *mm.folios.get(pfn);
    let anon = f.test(pg::SWAPBACKED);
    let keep_shadow = !anon || mm.cfg.kernel.anon_workingset();
    let shadow = if keep_shadow { Some(p.workingset_eviction(mm, pfn, target)) } else { None };
    if anon {
        let slot = f.swap;
        // __delete_from_swap_cache() under the swap cache's lock, the shadow stored there.
        mm.swap_cache_lock("__remove_mapping", slot, 1);
        mm.space.set(f.vpn, Entry::Swapped(slot));
        if let Some(s) = shadow {
            mm.swap.set_shadow(slot, Some(s));
            mm.swap_nodes.page_replaced_by_shadow(slot, f.memcg);
        } else {
            mm.swap_nodes.page_removed(slot);
        }
        mm.nr_swapcached -= 1;
        mm.memcgs.stat_updated(f.memcg, FedStat::SwapCache, 1);
        if let Some(t) = owner_task(mm, f.vpn) {
            mm.tasks[t].rss_anon -= 1;
            mm.tasks[t].swapents += 1;
        }
    } else {
        // One shadow over a large folio's whole range (page_cache_delete()), stored under the
        // file's i_pages lock.
        mm.i_pages_lock("__remove_mapping", f.vpn, 1);
        let s = shadow.unwrap_or(Shadow::pack(0, 0, false));
        crate::mm::filemap::page_cache_delete(mm, pfn, Some(s));
    }
    free_folio(mm, pfn);
}

/// The task owning the anonymous region of `vpn`.
pub fn owner_task(mm: &Mm, vpn: u32) -> Option<usize> {
    mm.space.objects[mm.space.object_of(vpn)].owner
}

/// Models mm/vmscan.c: move_folios_to_lru(): put survivors back; active ones age the
/// nonresident clock (unless the refault model counts evictions only). Returns pages moved.
pub fn move_folios_to_lru<P: Policy>(mm: &mut Mm, p: &mut P, list: &[Pfn]) -> u64 {
    for &pfn in list {
        mm.folios.clear(pfn, pg::ISOLATED);
        mm.folios.set(pfn, pg::LRU);
        p.lru_add(mm, pfn);
        if mm.folios.test(pfn, pg::ACTIVE) && p.caps().putback_ages_nonresident && mm.cfg.refault.putback_ages_nonresident {
            let memcg = mm.folio_memcg(pfn);
            crate::mm::workingset::workingset_age_nonresident(mm, memcg, mm.folio_nid(pfn), mm.folios.nr_pages(pfn));
        }
    }
    list_pages(mm, list)
}

// ---- kswapd -------------------------------------------------------------------------------

/// kswapd's balance_pgdat() in progress: the loop's state between steps.
#[derive(Clone, Debug)]
pub struct Balance {
    pub sc: ScanControl,
    /// The highest zone the run balances (`highest_zoneidx`).
    pub classzone: usize,
    /// Pages left to reclaim for the zones' watermark boosts (0: a normal run).
    pub nr_boost_reclaim: u64,
    /// Each zone's boost when the run started, taken off at its end.
    pub zone_boosts: Vec<u64>,
    /// `sc.order`: the order the run balances for, 0 once it has reclaimed compact_gap() of it.
    pub order: u32,
}

/// Models mm/vmscan.c: pgdat_watermark_boosted() (6.1/6.12): the watermarks of a zone of node
/// `nid` up to `classzone` (the node's own zone index) are boosted.
pub fn pgdat_watermark_boosted(mm: &Mm, nid: usize, classzone: usize) -> bool {
    let base = mm.node_zones(nid).start;
    mm.pageblocks.as_ref().is_some_and(|p| p.watermark_boost.iter().skip(base).take(classzone.saturating_add(1)).any(|&b| b > 0))
}

/// Models mm/vmscan.c: pgdat_balanced() (6.1/6.12) of node `nid` for order-0 allocations whose
/// highest zone is `classzone` (the node's own zone index; [`ALL_ZONES`] for user pages): the
/// node is balanced once *any* of its zones up to `classzone` keeps more than its high
/// watermark plus its lowmem reserve against that classzone free (zone_watermark_ok_safe()).
/// Only the node's own zones count: each node's kswapd balances its pgdat (7.3.4 alike).
pub fn pgdat_balanced(mm: &Mm, nid: usize, classzone: usize) -> bool {
    pgdat_balanced_order(mm, nid, classzone, 0)
}

/// [`pgdat_balanced`] at `order` (7.3.4's pgdat_balanced() -> zone_watermark_ok_safe() for a
/// kswapd woken by a large folio's allocation): a zone keeps its high watermark with the
/// folio's `(1 << order) - 1` pages taken off its free pages. The free-area test of
/// __zone_watermark_ok() (a free block of that order) is not modeled: pagelab keeps no buddy
/// orders.
pub fn pgdat_balanced_order(mm: &Mm, nid: usize, classzone: usize, order: u32) -> bool {
    let less = (1u64 << order) - 1;
    let zones = &mm.nodes[nid].zones;
    let base = mm.node_zones(nid).start;
    let top = zones.top();
    if classzone >= top {
        return zones.z.iter().enumerate().any(|(i, z)| mm.zone_free(base + i).saturating_sub(less) > z.wmark_high + z.lowmem_reserve);
    }
    (0..=classzone).any(|i| mm.zone_free(base + i).saturating_sub(less) > zones.z[i].wmark_high + zones.lowmem_reserve(i, classzone))
}

/// compact_gap() (include/linux/compaction.h): twice the pages of an order.
pub fn compact_gap(order: u32) -> u64 {
    2u64 << order
}

/// The classzone node `nid`'s kswapd's next run (or its sleep) goes by: the highest a wake-up
/// asked for since it last looked, else its last run's (kswapd_highest_zoneidx(), 6.1/6.12).
fn kswapd_next_classzone(mm: &Mm, nid: usize) -> usize {
    let node = &mm.nodes[nid];
    node.reclaim.kswapd_wake_classzone.or(node.reclaim.kswapd_classzone).unwrap_or(ALL_ZONES).min(node.zones.top())
}

/// Models set_reclaim_active()/clear_reclaim_active() (mm/vmscan.c, 6.1/6.12): a node's kswapd
/// flags every zone of its node it balances (up to its classzone) with ZONE_RECLAIM_ACTIVE
/// while balance_pgdat() runs.
fn set_reclaim_active(mm: &mut Mm, nid: usize, classzone: usize, active: bool) {
    for zone in mm.nodes[nid].zones.z.iter_mut().take(classzone.saturating_add(1)) {
        zone.reclaim_active = active;
    }
}

/// Models mm/vmscan.c: wakeup_kswapd() (6.1/6.12) of node `nid` for an allocation whose
/// highest zone is `classzone` (the node's own zone index; [`ALL_ZONES`] for user pages; a
/// boosted zone's own index when rmqueue() wakes kswapd for its boost): note the classzone
/// in the node's `kswapd_highest_zoneidx` for its kswapd's next run, even while it runs, then
/// wake it unless it is running or the node is balanced for that classzone or hopeless
/// (its own `kswapd_failures`; 7.3.4 asks kswapd_test_hopeless(pgdat), the same per-node
/// count). A wake-up during the kswapd's short sleep cuts it short
/// (kswapd_try_to_sleep(): KSWAPD_LOW_WMARK_HIT_QUICKLY). The allocator wakes the kswapd of
/// each node of its zonelist ([`wake_all_kswapds`]).
pub fn wakeup_kswapd(mm: &mut Mm, nid: usize, classzone: usize) {
    wakeup_kswapd_order(mm, nid, classzone, 0)
}

/// Models mm/page_alloc.c: wake_all_kswapds() (6.1/6.12; 7.3.4 alike): an allocation that
/// enters the slow path wakes the kswapd of every node its zonelist holds, each node once
/// ([`wakeup_kswapd_order`] of the node, which returns at once for a balanced one). The
/// zonelist of a user page holds every node, from the allocating task's own
/// (numa_node_id()) on, in the order get_page_from_freelist() tries them. Returns whether a
/// sleeping kswapd began to run.
pub fn wake_all_kswapds(mm: &mut Mm, order: u32) -> bool {
    let n = mm.nodes.len();
    let local = if n == 1 { 0 } else { mm.numa_node_id() };
    let mut woke = false;
    for nid in zonelist_nodes(local, n) {
        let asleep = mm.nodes[nid].reclaim.kswapd.is_none();
        wakeup_kswapd_order(mm, nid, ALL_ZONES, order);
        woke |= asleep && mm.nodes[nid].reclaim.kswapd.is_some();
    }
    woke
}

/// [`wakeup_kswapd`] for an allocation of `order` (7.3.4, a large readahead folio:
/// [`crate::kernel::Kernel::large_folio_allocated_at_its_order`]): the order is noted for
/// the kswapd's next run (`pgdat->kswapd_order` raised to it, even while it runs), and the
/// node is judged balanced at that order.
pub fn wakeup_kswapd_order(mm: &mut Mm, nid: usize, classzone: usize, order: u32) {
    let classzone = classzone.min(mm.nodes[nid].zones.top());
    let r = &mut mm.nodes[nid].reclaim;
    if r.kswapd_wake_classzone.is_none_or(|c| c < classzone) {
        r.kswapd_wake_classzone = Some(classzone);
    }
    if r.kswapd_wake_order < order {
        r.kswapd_wake_order = order;
    }
    if r.kswapd.is_some() || r.kswapd_failures >= KSWAPD_FAILURES_HOPELESS {
        return;
    }
    // A balanced node is woken all the same while its watermarks are boosted.
    if pgdat_balanced_order(mm, nid, classzone, order) && !pgdat_watermark_boosted(mm, nid, classzone) {
        return;
    }
    let now = mm.now();
    if mm.nodes[nid].reclaim.nap_until.take().is_some_and(|end| now < end) {
        mm.count(Ev::KswapdLowWmarkHitQuickly, 1);
    }
    mm.nodes[nid].kswapd_clock = mm.nodes[nid].kswapd_clock.max(now);
    start_balance(mm, nid);
}

/// kswapd_try_to_sleep()'s short sleep, HZ/10: a twentieth of the rstat flush period
/// (FLUSH_TIME, 2 * HZ), so it follows the oracle's scaling of that period to the guest's
/// clock.
fn kswapd_nap_ns(mm: &Mm) -> u64 {
    mm.memcgs.flush_period_ns / 20
}

/// Models the end of kswapd_try_to_sleep()'s short sleep (mm/vmscan.c, 6.1/6.12) for node
/// `nid`'s kswapd when no wake-up cut it short: a node still balanced lets its kswapd sleep
/// until woken; one that is not sends it back to balance_pgdat()
/// (KSWAPD_HIGH_WMARK_HIT_QUICKLY).
fn nap_ends(mm: &mut Mm, nid: usize, end: u64) {
    mm.nodes[nid].reclaim.nap_until = None;
    mm.nodes[nid].kswapd_clock = mm.nodes[nid].kswapd_clock.max(end);
    if !pgdat_balanced(mm, nid, mm.nodes[nid].reclaim.nap_classzone) && mm.nodes[nid].reclaim.kswapd_failures < KSWAPD_FAILURES_HOPELESS {
        mm.count(Ev::KswapdHighWmarkHitQuickly, 1);
        start_balance(mm, nid);
    }
}

/// balance_pgdat()'s start (6.1/6.12) on node `nid` for the classzone its kswapd() read and
/// reset (kswapd_highest_zoneidx()): reclaim is limited to the node's zones up to it
/// (`reclaim_idx`) and to the node's lruvecs (`sc.nid`: the kswapd reclaims its own pgdat
/// only), and a boosted node first reclaims the boosts' worth of pages (nr_boost_reclaim, the
/// boosts of those zones added up).
fn start_balance(mm: &mut Mm, nid: usize) {
    mm.count(Ev::PageOutRun, 1);
    mm.kswapd_memstall(nid, true);
    let classzone = kswapd_next_classzone(mm, nid);
    mm.nodes[nid].reclaim.kswapd_wake_classzone = None;
    mm.nodes[nid].reclaim.kswapd_classzone = Some(classzone);
    // kswapd() reads and resets `pgdat->kswapd_order` for balance_pgdat()'s `sc.order`.
    let order = std::mem::take(&mut mm.nodes[nid].reclaim.kswapd_wake_order);
    let mut sc = ScanControl::new(ROOT_MEMCG, Reclaimer::Kswapd, 0);
    sc.may_writepage = true;
    sc.nid = nid;
    if classzone < mm.nodes[nid].zones.top() {
        sc.reclaim_idx = classzone;
    }
    let zones = mm.node_zones(nid);
    let mut zone_boosts = mm.pageblocks.as_ref().map(|p| p.watermark_boost[zones].to_vec()).unwrap_or_default();
    for b in zone_boosts.iter_mut().skip(classzone + 1) {
        *b = 0;
    }
    let nr_boost_reclaim = zone_boosts.iter().sum();
    mm.nodes[nid].reclaim.kswapd = Some(Box::new(Balance { sc, classzone, nr_boost_reclaim, zone_boosts, order }));
}

/// Whether node `nid`'s kswapd has work and when it can run next: a step of its run, or the
/// end of its short sleep.
#[inline]
pub fn kswapd_next(mm: &Mm, nid: usize) -> Option<u64> {
    let node = &mm.nodes[nid];
    match node.reclaim.kswapd {
        Some(_) => Some(node.kswapd_clock),
        None => node.reclaim.nap_until,
    }
}

/// The kswapd due first, of every node: when, and whose (ties: the lower node).
#[inline]
pub fn kswapd_due(mm: &Mm) -> Option<(u64, usize)> {
    if mm.nodes.len() == 1 {
        return kswapd_next(mm, 0).map(|at| (at, 0));
    }
    (0..mm.nodes.len()).filter_map(|nid| kswapd_next(mm, nid).map(|at| (at, nid))).min()
}

/// Runs one iteration of balance_pgdat()'s priority loop (mm/vmscan.c, 6.1/6.12) of node
/// `nid`'s kswapd: one kswapd_shrink_node() of its own node at the current priority. Ends the
/// run when the node is balanced or priority 1 is done, and starts another run if the node
/// is still unbalanced then (kswapd_try_to_sleep() declines to sleep).
pub fn kswapd_step<P: Policy>(mm: &mut Mm, p: &mut P, nid: usize) {
    let Some(mut bal) = mm.nodes[nid].reclaim.kswapd.take() else {
        if let Some(end) = mm.nodes[nid].reclaim.nap_until {
            nap_ends(mm, nid, end);
        }
        return;
    };
    let prev_actor = mm.actor;
    mm.actor = Actor::Kswapd(nid);
    // set_reclaim_active(): from balance_pgdat()'s start to its end.
    set_reclaim_active(mm, nid, bal.classzone, true);
    let sc = &mut bal.sc;
    let balanced = pgdat_balanced_order(mm, nid, bal.classzone, bal.order);
    if !balanced && bal.nr_boost_reclaim > 0 {
        // The node is out of balance even counting the boosts: restart as a normal run.
        bal.nr_boost_reclaim = 0;
        sc.priority = DEF_PRIORITY;
    }
    if balanced && bal.nr_boost_reclaim == 0 {
        finish_balance(mm, p, nid, &mut bal);
        mm.actor = prev_actor;
        return;
    }
    let boosting = bal.nr_boost_reclaim > 0;
    // Boosted reclaim neither writes nor swaps, and holds its priority at DEF_PRIORITY - 2.
    let hold_priority = boosting && sc.priority == DEF_PRIORITY - 2;
    if mm.pageblocks.is_some() {
        sc.may_writepage = !boosting;
        sc.may_swap = !boosting;
    }
    let reclaimed_before = sc.nr_reclaimed;
    p.kswapd_age_node(mm, sc);
    if sc.priority < DEF_PRIORITY - 2 {
        sc.may_writepage = true;
    }
    sc.nr_scanned = 0;
    // kswapd_shrink_node(): reclaim up to the high watermarks of the zones up to the
    // classzone at this priority, each counted as at least SWAP_CLUSTER_MAX.
    sc.nr_to_reclaim = mm.nodes[nid].zones.z.iter().take(bal.classzone + 1).map(|z| z.wmark_high.max(SWAP_CLUSTER_MAX)).sum();
    let scanned_target = sc.nr_to_reclaim;
    let reclaimed_in_call = sc.nr_reclaimed;
    shrink_node(mm, p, sc);
    // kswapd_shrink_node(): once the run has reclaimed compact_gap() of its order, the node
    // is judged at order 0 (fragmentation may leave no free block of that order).
    if bal.order > 0 && sc.nr_reclaimed >= compact_gap(bal.order) {
        bal.order = 0;
    }
    let progress = if mm.cfg.kernel.kswapd_progress_counts_reclaimed() {
        sc.nr_scanned.max(sc.nr_reclaimed - reclaimed_in_call) >= scanned_target
    } else {
        sc.nr_scanned >= scanned_target
    };
    let raise_priority = !progress && !hold_priority;
    let reclaimed = sc.nr_reclaimed - reclaimed_before;
    bal.nr_boost_reclaim -= bal.nr_boost_reclaim.min(reclaimed);
    if bal.nr_boost_reclaim > 0 && reclaimed == 0 {
        // Boosted reclaim that found nothing to reclaim gives up.
        if bal.sc.nr_reclaimed == 0 {
            mm.nodes[nid].reclaim.kswapd_failures += 1;
        }
        finish_balance(mm, p, nid, &mut bal);
        mm.actor = prev_actor;
        return;
    }
    let sc = &mut bal.sc;
    if raise_priority || reclaimed == 0 {
        if sc.priority <= 1 {
            if sc.nr_reclaimed == 0 {
                // 6.12: a run that reclaimed nothing because cache trimming found nothing
                // restarts once with cache_trim_mode off before counting a failure.
                if mm.cfg.kernel.balance_pgdat_retries_without_cache_trim() && sc.cache_trim_mode_failed && !sc.no_cache_trim_mode {
                    sc.no_cache_trim_mode = true;
                    sc.priority = DEF_PRIORITY;
                    mm.nodes[nid].reclaim.kswapd = Some(bal);
                    mm.actor = prev_actor;
                    return;
                }
                mm.nodes[nid].reclaim.kswapd_failures += 1;
            }
            finish_balance(mm, p, nid, &mut bal);
            mm.actor = prev_actor;
            return;
        }
        sc.priority -= 1;
    }
    mm.nodes[nid].reclaim.kswapd = Some(bal);
    mm.actor = prev_actor;
}

fn finish_balance<P: Policy>(mm: &mut Mm, p: &mut P, nid: usize, bal: &mut Balance) {
    // clear_reclaim_active(): balance_pgdat() returns.
    set_reclaim_active(mm, nid, bal.classzone, false);
    // A boosted run takes the boosts it started with off the zones, and wakes kcompactd to
    // defragment the pageblocks now that there is likely room.
    if let Some(pb) = mm.pageblocks.as_mut() {
        // Pageblocks are modeled on a machine of one node: its zones are node 0's.
        for (z, &b) in bal.zone_boosts.iter().enumerate() {
            if b > 0 {
                pb.watermark_boost[z] -= pb.watermark_boost[z].min(b);
                crate::mm::page_alloc::apply_boost(&mut mm.nodes[nid].zones, pb, z);
            }
        }
        if bal.zone_boosts.iter().any(|&b| b > 0) {
            crate::mm::compaction::wakeup_kcompactd(mm, crate::mm::pageblock::PAGEBLOCK_ORDER, bal.classzone);
        }
    }
    p.snapshot_refaults(mm, ROOT_MEMCG, nid);
    // kswapd_try_to_sleep() judges the node for the classzone of the next run: a wake-up's
    // during this one, else this run's.
    let classzone = kswapd_next_classzone(mm, nid);
    mm.nodes[nid].reclaim.nap_classzone = classzone;
    // kswapd(): the sleep is judged at the order a wake-up asked for during the run (0 on the
    // kernels and allocations without one).
    let order = mm.nodes[nid].reclaim.kswapd_wake_order;
    if pgdat_balanced_order(mm, nid, classzone, order) || mm.nodes[nid].reclaim.kswapd_failures >= KSWAPD_FAILURES_HOPELESS {
        // prepare_kswapd_sleep(): balanced, so clear the congestion flags and take the
        // short sleep.
        mm.nodes[nid].reclaim.dirty = false;
        mm.nodes[nid].reclaim.writeback = false;
        mm.nodes[nid].reclaim.set_congested(ROOT_MEMCG, false);
        mm.nodes[nid].reclaim.kswapd = None;
        mm.kswapd_memstall(nid, false);
        mm.nodes[nid].reclaim.nap_until = Some(mm.nodes[nid].kswapd_clock + kswapd_nap_ns(mm));
    } else {
        // kswapd_try_to_sleep() declines to sleep at all.
        mm.count(Ev::KswapdHighWmarkHitQuickly, 1);
        start_balance(mm, nid);
    }
}
