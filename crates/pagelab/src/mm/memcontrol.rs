//! Memory cgroups (mm/memcontrol.c, mm/page_counter.c): the cgroup tree, hierarchical
//! charging with the per-CPU stock, memory.max/high/low/min, effective protection, the
//! lruvec of each cgroup, and memory.stat with rstat's flush staleness.

use crate::kernel::{Kernel, MEMCG_CHARGE_BATCH, RSTAT_FLUSH_NS};
use crate::mm::vmstat::{Ev, Events, Lru};

/// A memcg, by index; the root is 0. The kernel's memcg id is the index + 1.
pub type MemcgId = u16;
pub const ROOT_MEMCG: MemcgId = 0;

/// "No limit" for a page counter.
pub const PAGE_COUNTER_MAX: u64 = u64::MAX / 2;

/// The per-memcg reclaim state of the node's lruvec (`struct lruvec` minus the lists, which
/// belong to the policy): exact list sizes, the IO costs, and the nonresident clock.
#[derive(Clone, Debug, Default)]
pub struct Lruvec {
    /// `lru_zone_size`: exact pages per list, local to this memcg (not hierarchical).
    pub lru_size: [u64; 5],
    /// The part of `lru_size` in each zone below the highest (the classic LRU keeps it, for
    /// lruvec_lru_size() of reclaim limited to lower zones); the highest zone's share is the
    /// rest.
    pub lower_zone_lru_size: [[u64; crate::mm::folio::MAX_ZONES]; 5],
    pub anon_cost: u64,
    pub file_cost: u64,
    /// mm/workingset.c's clock of evictions and activations (hierarchical by propagation).
    pub nonresident_age: u64,
    /// snapshot_refaults(): WORKINGSET_ACTIVATE_{ANON,FILE} at the end of the last reclaim.
    pub refaults: [u64; 2],
    /// 5.7's `zone_reclaim_stat`: recent_scanned/recent_rotated per type.
    pub recent_scanned: [u64; 2],
    pub recent_rotated: [u64; 2],
    /// lruvec->lru_lock, contended only on a machine of several CPUs ([`crate::mm::Mm::lru_lock_on`]).
    pub lru_lock: crate::locking::SpinLock,
}

/// Items of memory.stat that reclaim and dirty throttling read through rstat (`lruvec_page_state`,
/// `memcg_page_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatItem {
    Lru(Lru),
    WorkingsetActivateAnon,
    WorkingsetActivateFile,
    /// NR_FILE_DIRTY: folio_account_dirtied(), folio_clear_dirty_for_io(),
    /// folio_account_cleaned(); read by the dirty throttling of a cgroup's writeback
    /// (mem_cgroup_wb_stats()).
    FileDirty,
    /// NR_WRITEBACK: __folio_start_writeback(), __folio_end_writeback(); read with
    /// NR_FILE_DIRTY.
    Writeback,
}

impl StatItem {
    // Inlined: callers pass constant items, so the index folds to a constant.
    #[inline]
    fn index(self) -> usize {
        match self {
            StatItem::Lru(l) => l as usize,
            StatItem::WorkingsetActivateAnon => 5,
            StatItem::WorkingsetActivateFile => 6,
            StatItem::FileDirty => 7,
            StatItem::Writeback => 8,
        }
    }
}
const NR_RSTAT: usize = 9;

/// memcg statistics that reclaim never reads, kept only as the updates they feed to the
/// rstat flush thresholds: the kernel calls memcg_rstat_updated() for every memcg stat and
/// event update (6.1 and 6.12.95 mm/memcontrol.c: __mod_memcg_state(),
/// __mod_memcg_lruvec_state(), __count_memcg_events()), so a page-cache miss and its
/// eviction feed about nine units, not only the two of the LRU sizes. Each variant names
/// the kernel item; which one is updated does not matter to the flush.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FedStat {
    /// PGPGIN / PGPGOUT: one a charged / uncharged folio (6.1 only: [`Kernel::memcg_counts_pgpgin`]).
    PgpgIn,
    PgpgOut,
    /// NR_FILE_PAGES: __filemap_add_folio(), filemap_unaccount_folio().
    FilePages,
    /// NR_ANON_MAPPED / NR_FILE_MAPPED: the first map and the last unmap of a page
    /// (page_add_new_anon_rmap(), page_add_file_rmap(), page_remove_rmap()).
    Mapped,
    /// NR_SWAPCACHE: add_to_swap_cache(), __delete_from_swap_cache().
    SwapCache,
    /// MEMCG_SWAP: __mem_cgroup_try_charge_swap(), __mem_cgroup_uncharge_swap().
    Swap,
}

/// The event counters memory.stat shows that the model counts (mm/memcontrol.c:
/// memcg_vm_event_stat[], 6.1 and 6.12), in the order the report and a controller's cgroup
/// read list them.
pub const MEMORY_STAT_EVENTS: [Ev; 16] = [
    Ev::PgFault,
    Ev::PgMajFault,
    Ev::PgRefill,
    Ev::PgActivate,
    Ev::PgDeactivate,
    Ev::WorkingsetRefaultAnon,
    Ev::WorkingsetRefaultFile,
    Ev::WorkingsetActivateAnon,
    Ev::WorkingsetActivateFile,
    Ev::WorkingsetRestoreAnon,
    Ev::WorkingsetRestoreFile,
    Ev::WorkingsetNodeReclaim,
    Ev::PgScanKswapd,
    Ev::PgScanDirect,
    Ev::PgStealKswapd,
    Ev::PgStealDirect,
];

/// memory.events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemcgEvents {
    pub low: u64,
    pub high: u64,
    pub max: u64,
    pub oom: u64,
    pub oom_kill: u64,
}

/// One memory cgroup.
#[derive(Clone, Debug)]
pub struct Memcg {
    pub id: MemcgId,
    pub path: String,
    pub parent: Option<MemcgId>,
    pub children: Vec<MemcgId>,
    pub max: u64,
    pub high: u64,
    pub low: u64,
    pub min: u64,
    /// page_counter usage: pages charged here and below, per-CPU stock included.
    pub usage: u64,
    /// Swap slots charged here and below (memory.swap.current).
    pub swap_usage: u64,
    /// Effective protection computed by mem_cgroup_calculate_protection().
    pub emin: u64,
    pub elow: u64,
    /// Node 0's lruvec (`memcg->nodeinfo[0]->lruvec`), kept inline: a one-node machine's
    /// only one, on every hot path.
    pub lruvec: Lruvec,
    /// The lruvecs of nodes 1 and up (`memcg->nodeinfo[nid]->lruvec`); empty on one node.
    pub node_lruvecs: Vec<Lruvec>,
    /// Local (non-hierarchical) event counters; memory.stat shows the subtree sums.
    pub events: Events,
    pub memory_events: MemcgEvents,
    /// Exact local values of the rstat items, and the hierarchical values as of the last
    /// flush (what reclaim reads).
    rstat_local: [i64; NR_RSTAT],
    rstat_flushed: [i64; NR_RSTAT],
    /// 6.12: updates pending in this subtree (memcg->vmstats->stats_updates).
    rstat_pending: u64,
}

/// When a refault flushes memcg statistics before reading the workingset size (Shakeel Butt's 2021 "memcg: flush lruvec stats in the refault").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefaultFlush {
    /// The pinned kernel's rule: 6.1 mem_cgroup_flush_stats_delayed(), 6.12
    /// mem_cgroup_flush_stats_ratelimited() — both only when the periodic flush is late.
    Kernel,
    /// mem_cgroup_flush_stats(): flush when the update threshold is exceeded — the refault
    /// flush of Shakeel Butt's 2021 patch ("memcg: flush lruvec stats in the refault").
    Threshold,
    /// Flush the whole tree on every refault: exact sizes, at the highest cost.
    Always,
    /// Never flush for a refault: only the periodic and reclaim flushes publish statistics.
    Never,
}

/// How reclaim sees memcg statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RstatMode {
    /// As the kernel: values as of the last flush (periodic every 2 s, or threshold-driven).
    Kernel,
    /// Always exact: for experiments that isolate the effect of rstat staleness.
    Exact,
}

/// The cgroup tree plus the state shared by all cgroups (per-CPU stock, rstat flushing).
#[derive(Clone, Debug)]
pub struct Memcgs {
    pub cg: Vec<Memcg>,
    /// Pre-order: a parent before its children (mem_cgroup_iter order).
    pub preorder: Vec<MemcgId>,
    /// Each memcg's subtree in pre-order (the tree is fixed once built).
    subtrees: Vec<Vec<MemcgId>>,
    /// Per-CPU charge stock of the running CPU: the cached memcg and its pre-charged pages.
    stock: Option<(MemcgId, u64)>,
    /// On a machine of several CPUs (`machine.cpus` ≥ 2), every CPU's stock while it is not
    /// the running one (the running CPU's slot is `None`); empty otherwise.
    parked_stocks: Vec<Option<(MemcgId, u64)>>,
    /// The CPU whose stock is `stock`.
    stock_cpu: u32,
    pub rstat_mode: RstatMode,
    kernel: Kernel,
    /// 6.1: per-CPU update count and the global flush threshold.
    percpu_updates: u64,
    flush_threshold: u64,
    pub last_flush_ns: u64,
    /// The periodic flush's period (FLUSH_TIME unless the scenario sets `rstat_flush`).
    pub flush_period_ns: u64,
    pub nr_flushes: u64,
    /// Units fed to memcg_rstat_updated() (the sum of |update|) but those still in
    /// `percpu_updates`: [`Memcgs::rstat_updates`] adds them.
    rstat_updates_settled: u64,
    /// Memcgs visited by flushes (the work of flushing).
    pub flushed_memcgs: u64,
    pub nr_cpus: u64,
    /// 6.12's mem_cgroup_unprotected(): the reclaim target's own protection is ignored
    /// ([`crate::kernel::Kernel::reclaim_target_is_unprotected`]).
    pub target_unprotected: bool,
    pub refault_flush: RefaultFlush,
    /// Flush from the update path once the threshold is exceeded (5.15-rc1's async flush,
    /// before the 2021 refault-flush patch).
    update_path_flush: bool,
    /// What `percpu_updates` may reach before memcg_rstat_updated() leaves its common case:
    /// the per-CPU batch on 6.1 without the update-path flush (an addition and a test),
    /// else 0, so that every update takes the general path (fixed by the kernel and
    /// `update_path_flush`).
    percpu_fast_limit: u64,
    /// Refaults whose recency decision differs from the one exact statistics would give.
    pub stale_refault_decisions: u64,
}

/// A cgroup as declared by the scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemcgSpec {
    pub path: String,
    pub max: u64,
    pub high: u64,
    pub low: u64,
    pub min: u64,
}

impl Memcgs {
    /// Builds the tree; `specs` are non-root cgroups in any order, each parent declared.
    pub fn new(kernel: Kernel, specs: &[MemcgSpec], rstat_mode: RstatMode) -> Result<Memcgs, String> {
        let root = Memcg::new(ROOT_MEMCG, "/".into(), None, PAGE_COUNTER_MAX, PAGE_COUNTER_MAX, 0, 0);
        let mut m = Memcgs {
            cg: vec![root],
            preorder: Vec::new(),
            subtrees: Vec::new(),
            stock: None,
            parked_stocks: Vec::new(),
            stock_cpu: 0,
            rstat_mode,
            kernel,
            percpu_updates: 0,
            flush_threshold: 0,
            last_flush_ns: 0,
            flush_period_ns: RSTAT_FLUSH_NS,
            nr_flushes: 0,
            rstat_updates_settled: 0,
            flushed_memcgs: 0,
            nr_cpus: 1,
            target_unprotected: false,
            refault_flush: RefaultFlush::Kernel,
            update_path_flush: false,
            percpu_fast_limit: if kernel.memcg_stats_flush_per_subtree() { 0 } else { MEMCG_CHARGE_BATCH },
            stale_refault_decisions: 0,
        };
        let mut sorted: Vec<&MemcgSpec> = specs.iter().collect();
        sorted.sort_by_key(|s| s.path.matches('/').count());
        for s in sorted {
            let parent_path = match s.path.rfind('/') {
                Some(0) => "/",
                Some(i) => &s.path[..i],
                None => return Err(format!("cgroup path `{}` must start with /", s.path)),
            };
            let parent = m.find(parent_path).ok_or_else(|| format!("cgroup `{}` needs its parent `{parent_path}` declared too", s.path))?;
            if m.find(&s.path).is_some() {
                return Err(format!("cgroup `{}` is declared twice", s.path));
            }
            if m.cg.len() >= u16::MAX as usize {
                return Err("too many cgroups".into());
            }
            let id = m.cg.len() as MemcgId;
            m.cg.push(Memcg::new(id, s.path.clone(), Some(parent), s.max, s.high, s.low, s.min));
            m.cg[parent as usize].children.push(id);
        }
        m.subtrees = (0..m.cg.len()).map(|c| m.walk_subtree(c as MemcgId)).collect();
        m.preorder = m.subtrees[ROOT_MEMCG as usize].clone();
        Ok(m)
    }

    /// Gives every memcg one lruvec per node of a machine of `nr_nodes` nodes (6.1, 6.12
    /// mem_cgroup_alloc(): alloc_mem_cgroup_per_node_info() for each node).
    pub fn set_nodes(&mut self, nr_nodes: usize) {
        for c in &mut self.cg {
            c.node_lruvecs = vec![Lruvec::default(); nr_nodes.saturating_sub(1)];
        }
    }

    pub fn find(&self, path: &str) -> Option<MemcgId> {
        self.cg.iter().find(|c| c.path == path).map(|c| c.id)
    }

    #[inline]
    pub fn get(&self, id: MemcgId) -> &Memcg {
        &self.cg[id as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, id: MemcgId) -> &mut Memcg {
        &mut self.cg[id as usize]
    }

    /// `id` and its descendants in pre-order (mem_cgroup_iter's walk).
    #[inline]
    pub fn subtree(&self, id: MemcgId) -> &[MemcgId] {
        &self.subtrees[id as usize]
    }

    fn walk_subtree(&self, id: MemcgId) -> Vec<MemcgId> {
        let mut out = Vec::new();
        let mut stack = vec![id];
        while let Some(c) = stack.pop() {
            out.push(c);
            for &ch in self.cg[c as usize].children.iter().rev() {
                stack.push(ch);
            }
        }
        out
    }

    /// `id` and its ancestors up to the root (parent_lruvec() chain).
    pub fn ancestors(&self, id: MemcgId) -> impl Iterator<Item = MemcgId> + '_ {
        let mut cur = Some(id);
        std::iter::from_fn(move || {
            let c = cur?;
            cur = self.cg[c as usize].parent;
            Some(c)
        })
    }

    pub fn is_descendant(&self, id: MemcgId, ancestor: MemcgId) -> bool {
        self.ancestors(id).any(|a| a == ancestor)
    }

    // ---- charging -------------------------------------------------------------------

    /// Models mm/memcontrol.c: consume_stock() (6.1/6.12): take a page from the per-CPU stock.
    pub fn consume_stock(&mut self, memcg: MemcgId, nr: u64) -> bool {
        match &mut self.stock {
            Some((c, n)) if *c == memcg && *n >= nr => {
                *n -= nr;
                true
            }
            _ => false,
        }
    }

    /// Models mm/page_counter.c: page_counter_try_charge(): charge the whole ancestor chain,
    /// failing at the first level that would exceed memory.max; returns that level.
    pub fn try_charge_counters(&mut self, memcg: MemcgId, nr: u64) -> Result<(), MemcgId> {
        let mut cur = Some(memcg);
        while let Some(c) = cur {
            let cg = &mut self.cg[c as usize];
            if cg.usage + nr > cg.max {
                // Undo the levels below the one that failed.
                let mut undo = Some(memcg);
                while let Some(u) = undo.filter(|&u| u != c) {
                    self.cg[u as usize].usage -= nr;
                    undo = self.cg[u as usize].parent;
                }
                return Err(c);
            }
            cg.usage += nr;
            cur = cg.parent;
        }
        Ok(())
    }

    /// Models page_counter_charge(): charge past the limits (the force path).
    pub fn force_charge(&mut self, memcg: MemcgId, nr: u64) {
        let mut cur = Some(memcg);
        while let Some(c) = cur {
            self.cg[c as usize].usage += nr;
            cur = self.cg[c as usize].parent;
        }
    }

    /// Models page_counter_uncharge() along the chain.
    pub fn uncharge_counters(&mut self, memcg: MemcgId, nr: u64) {
        let mut cur = Some(memcg);
        while let Some(c) = cur {
            let cg = &mut self.cg[c as usize];
            debug_assert!(cg.usage >= nr, "memcg {} usage underflow", cg.path);
            cg.usage = cg.usage.saturating_sub(nr);
            cur = cg.parent;
        }
    }

    /// Models mm/memcontrol.c: refill_stock()/__refill_stock(): keep surplus charge cached;
    /// a stock of another memcg is drained first, and a stock above the batch is drained.
    pub fn refill_stock(&mut self, memcg: MemcgId, nr: u64) {
        if !matches!(self.stock, Some((c, _)) if c == memcg) {
            self.drain_stock();
            self.stock = Some((memcg, 0));
        }
        let over = {
            let (_, n) = self.stock.as_mut().expect("stock set above");
            *n += nr;
            *n > MEMCG_CHARGE_BATCH
        };
        if over {
            self.drain_stock();
        }
    }

    /// Models drain_stock(): give the cached pre-charge back.
    pub fn drain_stock(&mut self) {
        if let Some((c, n)) = self.stock.take() {
            if n > 0 {
                self.uncharge_counters(c, n);
            }
        }
    }

    /// Models mm/memcontrol.c: drain_all_stock(root) (6.1, 6.12): the running CPU's stock is
    /// drained, and every other CPU's whose cached memcg is `root` or below it. The model
    /// drains the running CPU's whatever memcg it caches (as the one-CPU model always did;
    /// the kernel tests it like the others), and the other CPUs' at once, where the kernel
    /// queues their drain_local_stock() as work on each (schedule_work_on()), done when that
    /// CPU next runs its kworker. 7.3.4 caches up to NR_MEMCG_STOCK (7) memcgs per CPU and
    /// drains those below `root`; the model keeps 6.1/6.12's one memcg per CPU.
    pub fn drain_all_stock(&mut self, root: MemcgId) {
        self.drain_stock();
        for cpu in 0..self.parked_stocks.len() {
            if let Some((c, n)) = self.parked_stocks[cpu] {
                if self.is_descendant(c, root) {
                    self.parked_stocks[cpu] = None;
                    if n > 0 {
                        self.uncharge_counters(c, n);
                    }
                }
            }
        }
    }

    /// A machine of `cpus` CPUs (≥ 2): each keeps its own stock (memcg_stock_pcp, 6.1/6.12).
    pub fn set_cpus(&mut self, cpus: u32) {
        self.parked_stocks = vec![None; cpus as usize];
    }

    /// The running CPU is now `cpu`: its stock becomes the one charges use, the previous
    /// CPU's is parked.
    pub fn this_cpu(&mut self, cpu: u32) {
        if self.parked_stocks.is_empty() || cpu == self.stock_cpu {
            return;
        }
        self.parked_stocks[self.stock_cpu as usize] = self.stock.take();
        self.stock = self.parked_stocks[cpu as usize].take();
        self.stock_cpu = cpu;
    }

    /// Pages cached in the per-CPU stocks for `memcg`, every CPU's (counted in its usage).
    pub fn stock_pages(&self, memcg: MemcgId) -> u64 {
        std::iter::once(&self.stock).chain(&self.parked_stocks).flatten().filter(|&&(c, _)| c == memcg).map(|&(_, n)| n).sum()
    }

    /// Models mem_cgroup_margin() (6.1, memory only).
    pub fn margin(&self, memcg: MemcgId) -> u64 {
        let c = &self.cg[memcg as usize];
        c.max.saturating_sub(c.usage)
    }

    // ---- protection -----------------------------------------------------------------

    /// Models mm/memcontrol.c: mem_cgroup_calculate_protection() and effective_protection()
    /// (6.1 and 6.12 agree): emin/elow of `memcg` under reclaim rooted at `root`. Values of
    /// the reclaim root itself are left as they were, as in the kernel.
    pub fn calculate_protection(&mut self, root: MemcgId, memcg: MemcgId, recursive: bool) {
        if memcg == root {
            return;
        }
        let usage = self.cg[memcg as usize].usage;
        if usage == 0 {
            return;
        }
        let parent = self.cg[memcg as usize].parent.expect("non-root memcg has a parent");
        if parent == root {
            let c = &mut self.cg[memcg as usize];
            c.emin = c.min;
            c.elow = c.low;
            return;
        }
        let p = &self.cg[parent as usize];
        let parent_usage = p.usage;
        let (children_min, children_low) = p.children.iter().fold((0, 0), |(m, l), &ch| {
            let c = &self.cg[ch as usize];
            (m + c.usage.min(c.min), l + c.usage.min(c.low))
        });
        let (pemin, pelow) = (p.emin, p.elow);
        let c = &self.cg[memcg as usize];
        let emin = effective_protection(usage, parent_usage, c.min, pemin, children_min, recursive);
        let elow = effective_protection(usage, parent_usage, c.low, pelow, children_low, recursive);
        let c = &mut self.cg[memcg as usize];
        c.emin = emin;
        c.elow = elow;
    }

    /// Models include/linux/memcontrol.h: mem_cgroup_unprotected() (6.12.95): the root never
    /// counts as protected, and on 6.12 neither does the reclaim `target` itself (None: the
    /// kernel passes NULL). 6.1's mem_cgroup_below_min/low() take no target and exempt only
    /// the root, so a target's stale emin/elow can make it skip itself.
    fn unprotected(&self, target: Option<MemcgId>, memcg: MemcgId) -> bool {
        memcg == ROOT_MEMCG || (self.target_unprotected && target == Some(memcg))
    }

    /// Models include/linux/memcontrol.h: mem_cgroup_below_min() (6.1: of `memcg`; 6.12: of
    /// `memcg` under `target`).
    pub fn below_min(&self, target: Option<MemcgId>, memcg: MemcgId) -> bool {
        !self.unprotected(target, memcg) && self.cg[memcg as usize].emin >= self.cg[memcg as usize].usage
    }

    /// Models include/linux/memcontrol.h: mem_cgroup_below_low(), as [`Self::below_min`].
    pub fn below_low(&self, target: Option<MemcgId>, memcg: MemcgId) -> bool {
        !self.unprotected(target, memcg) && self.cg[memcg as usize].elow >= self.cg[memcg as usize].usage
    }

    /// Models mem_cgroup_protection(): (emin, elow) to apply to `memcg` under `root`.
    pub fn protection(&self, root: MemcgId, memcg: MemcgId) -> (u64, u64) {
        if root == memcg || memcg == ROOT_MEMCG {
            return (0, 0);
        }
        let c = &self.cg[memcg as usize];
        (c.emin, c.elow)
    }

    // ---- statistics (rstat) ---------------------------------------------------------

    /// Models __mod_lruvec_state() for the items reclaim reads, with memcg_rstat_updated().
    #[inline]
    pub fn mod_state(&mut self, memcg: MemcgId, item: StatItem, delta: i64) {
        self.cg[memcg as usize].rstat_local[item.index()] += delta;
        self.rstat_updated(memcg, delta.unsigned_abs());
    }

    /// Models the memcg_rstat_updated() of an update to a statistic reclaim does not read.
    #[inline]
    pub fn stat_updated(&mut self, memcg: MemcgId, _item: FedStat, nr: u64) {
        self.rstat_updated(memcg, nr);
    }

    /// Turns the flush from the update path on or off (`machine.update_path_flush`).
    pub fn set_update_path_flush(&mut self, on: bool) {
        self.update_path_flush = on;
        let count_only = !on && !self.kernel.memcg_stats_flush_per_subtree();
        self.percpu_fast_limit = if count_only { MEMCG_CHARGE_BATCH } else { 0 };
    }

    /// Every unit fed to memcg_rstat_updated() (the sum of |update|).
    pub fn rstat_updates(&self) -> u64 {
        self.rstat_updates_settled + self.percpu_updates
    }

    /// Models memcg_rstat_updated(): count pending updates towards the flush thresholds.
    // Inlined: a page-cache miss and its eviction make about eighteen of these updates, and
    // the common one (6.1's per-CPU count below its batch) is one test, an addition and a
    // comparison.
    #[inline]
    pub(crate) fn rstat_updated(&mut self, memcg: MemcgId, n: u64) {
        self.percpu_updates += n;
        if self.percpu_updates > self.percpu_fast_limit {
            self.rstat_updated_general(memcg, n);
        }
    }

    /// memcg_rstat_updated() past its common case: 6.1's full per-CPU batch, 6.12, or the
    /// update-path flush. `n` is already in `percpu_updates`.
    #[inline(never)]
    fn rstat_updated_general(&mut self, memcg: MemcgId, n: u64) {
        if self.percpu_fast_limit == MEMCG_CHARGE_BATCH {
            self.percpu_batch_full();
            return;
        }
        self.percpu_updates -= n;
        if self.kernel.memcg_stats_flush_per_subtree() {
            self.rstat_updates_settled += n;
            self.rstat_pending_updated(memcg, n);
        } else {
            self.percpu_updates += n;
            if self.percpu_updates > MEMCG_CHARGE_BATCH {
                self.percpu_batch_full();
            }
        }
        if self.update_path_flush {
            self.flush_from_update_path();
        }
    }

    /// memcg_rstat_updated() on 6.12: per-memcg counts, propagated to every ancestor in
    /// batches of 64. On 7.3 the walk up stops at the first memcg already past its flush
    /// threshold ([`Kernel::memcg_rstat_update_stops_at_flushable`]).
    #[inline]
    fn rstat_pending_updated(&mut self, memcg: MemcgId, n: u64) {
        let stop = self.kernel.memcg_rstat_update_stops_at_flushable();
        let limit = MEMCG_CHARGE_BATCH * self.nr_cpus;
        let mut cur = Some(memcg);
        while let Some(c) = cur {
            let cg = &mut self.cg[c as usize];
            if stop && cg.rstat_pending > limit {
                break;
            }
            cg.rstat_pending += n;
            cur = cg.parent;
        }
    }

    /// The stat updates `memcg` has pending since its last flush (`vmstats->stats_updates`;
    /// 6.12 and 7.3, where each memcg keeps its own).
    pub fn rstat_pending(&self, memcg: MemcgId) -> u64 {
        self.cg[memcg as usize].rstat_pending
    }

    /// memcg_rstat_updated() on 6.1 when the per-CPU count passes its batch: it goes to the
    /// global flush threshold.
    #[cold]
    #[inline(never)]
    fn percpu_batch_full(&mut self) {
        if self.flush_threshold <= self.nr_cpus {
            self.flush_threshold += self.percpu_updates / MEMCG_CHARGE_BATCH;
        }
        self.rstat_updates_settled += self.percpu_updates;
        self.percpu_updates = 0;
    }

    /// The flush from the update path of [`Memcgs::update_path_flush`].
    #[cold]
    #[inline(never)]
    fn flush_from_update_path(&mut self) {
        let now = self.last_flush_ns; // the async flush does not move the periodic clock
        self.flush_stats(ROOT_MEMCG, now);
    }

    /// The flush a refault does before reading the workingset size (`refault_flush`).
    pub fn flush_for_refault(&mut self, eviction_memcg: MemcgId, now: u64) {
        match self.refault_flush {
            RefaultFlush::Kernel => self.flush_stats_ratelimited(eviction_memcg, now),
            RefaultFlush::Threshold => {
                if self.kernel.memcg_stats_flush_per_subtree() {
                    self.flush_stats(eviction_memcg, now)
                } else {
                    self.flush_stats(ROOT_MEMCG, now)
                }
            }
            RefaultFlush::Always => self.flush_subtree(ROOT_MEMCG, now),
            RefaultFlush::Never => {}
        }
    }

    /// Models lruvec_page_state()/memcg_page_state(): the hierarchical value reclaim sees.
    // Inlined: reclaim reads half a dozen of these per pass, each a load once the item folds.
    #[inline]
    pub fn page_state(&self, memcg: MemcgId, item: StatItem) -> u64 {
        match self.rstat_mode {
            RstatMode::Kernel => self.cg[memcg as usize].rstat_flushed[item.index()].max(0) as u64,
            RstatMode::Exact => self.exact_state(memcg, item),
        }
    }

    /// The exact hierarchical value (what a flush would publish now).
    #[inline(never)]
    pub fn exact_state(&self, memcg: MemcgId, item: StatItem) -> u64 {
        let i = item.index();
        self.subtree(memcg).iter().map(|&c| self.cg[c as usize].rstat_local[i]).sum::<i64>().max(0) as u64
    }

    /// Flushes the subtree of `memcg`: publishes exact hierarchical values.
    fn flush_subtree(&mut self, memcg: MemcgId, now: u64) {
        let order = std::mem::take(&mut self.subtrees[memcg as usize]);
        for &c in order.iter().rev() {
            let mut v = self.cg[c as usize].rstat_local;
            for &ch in &self.cg[c as usize].children {
                for (a, b) in v.iter_mut().zip(self.cg[ch as usize].rstat_flushed.iter()) {
                    *a += b;
                }
            }
            let cg = &mut self.cg[c as usize];
            cg.rstat_flushed = v;
            cg.rstat_pending = 0;
        }
        self.flushed_memcgs += order.len() as u64;
        self.subtrees[memcg as usize] = order;
        if memcg == ROOT_MEMCG {
            self.last_flush_ns = now;
            self.flush_threshold = 0;
        }
        self.nr_flushes += 1;
    }

    /// The periodic flusher (flush_memcg_stats_dwork, every FLUSH_TIME = 2 s: `flush_period_ns`).
    pub fn periodic_flush(&mut self, now: u64) {
        self.flush_subtree(ROOT_MEMCG, now);
    }

    /// Models mem_cgroup_flush_stats() (6.1: global threshold; 6.12: the subtree's own).
    pub fn flush_stats(&mut self, memcg: MemcgId, now: u64) {
        if self.kernel.memcg_stats_flush_per_subtree() {
            if self.cg[memcg as usize].rstat_pending > MEMCG_CHARGE_BATCH * self.nr_cpus {
                self.flush_subtree(memcg, now);
            }
        } else {
            if self.flush_threshold > self.nr_cpus {
                self.flush_subtree(ROOT_MEMCG, now);
            }
        }
    }

    /// Models mem_cgroup_flush_stats_ratelimited() (6.12) / _delayed() (6.1): only when the
    /// periodic flusher is a full cycle late (more than 2·FLUSH_TIME since the last flush).
    pub fn flush_stats_ratelimited(&mut self, memcg: MemcgId, now: u64) {
        if now > self.last_flush_ns + 2 * self.flush_period_ns {
            if self.kernel.memcg_stats_flush_per_subtree() {
                self.flush_stats(memcg, now)
            } else {
                self.flush_stats(ROOT_MEMCG, now)
            }
        }
    }

    /// The subtree sums of the event counters (memory.stat shows hierarchical events).
    pub fn hierarchical_events(&self, memcg: MemcgId) -> Events {
        let mut e = Events::default();
        for &c in self.subtree(memcg) {
            e.add_all(&self.cg[c as usize].events);
        }
        e
    }

    /// Exact hierarchical LRU size (for memory.stat output).
    pub fn hierarchical_lru(&self, memcg: MemcgId, lru: Lru) -> u64 {
        self.subtree(memcg).iter().map(|&c| self.cg[c as usize].lru_pages(lru)).sum()
    }
}

impl Memcg {
    fn new(id: MemcgId, path: String, parent: Option<MemcgId>, max: u64, high: u64, low: u64, min: u64) -> Memcg {
        Memcg {
            id,
            path,
            parent,
            children: Vec::new(),
            max,
            high,
            low,
            min,
            usage: 0,
            swap_usage: 0,
            emin: 0,
            elow: 0,
            lruvec: Lruvec::default(),
            node_lruvecs: Vec::new(),
            events: Events::default(),
            memory_events: MemcgEvents::default(),
            rstat_local: [0; NR_RSTAT],
            rstat_flushed: [0; NR_RSTAT],
            rstat_pending: 0,
        }
    }
}

impl Memcg {
    /// Models include/linux/memcontrol.h: mem_cgroup_lruvec() (6.1, 6.12), this memcg's lruvec
    /// on node `nid`.
    #[inline]
    pub fn lruvec_of(&self, nid: usize) -> &Lruvec {
        if nid == 0 {
            &self.lruvec
        } else {
            &self.node_lruvecs[nid - 1]
        }
    }

    /// The memcg's pages on `lru`, every node's lruvec (`mem_cgroup_nr_lru_pages()`'s sum over
    /// nodes, 6.1 and 6.12).
    #[inline]
    pub fn lru_pages(&self, lru: Lru) -> u64 {
        self.lruvecs().map(|l| l.lru_size[lru as usize]).sum()
    }

    /// The memcg's lruvecs, node 0's first.
    pub fn lruvecs(&self) -> impl Iterator<Item = &Lruvec> {
        std::iter::once(&self.lruvec).chain(&self.node_lruvecs)
    }

    /// [`Memcg::lruvec_of`], to change.
    #[inline]
    pub fn lruvec_of_mut(&mut self, nid: usize) -> &mut Lruvec {
        if nid == 0 {
            &mut self.lruvec
        } else {
            &mut self.node_lruvecs[nid - 1]
        }
    }
}

/// Models mm/memcontrol.c: effective_protection().
pub fn effective_protection(usage: u64, parent_usage: u64, setting: u64, parent_effective: u64, siblings_protected: u64, recursive: bool) -> u64 {
    let protected = usage.min(setting);
    if siblings_protected > parent_effective {
        return (protected as u128 * parent_effective as u128 / siblings_protected as u128) as u64;
    }
    let mut ep = protected;
    if recursive && parent_effective > siblings_protected && usage > protected {
        let unclaimed =
            (parent_effective - siblings_protected) as u128 * (usage - protected) as u128 / (parent_usage.saturating_sub(siblings_protected)).max(1) as u128;
        ep += unclaimed as u64;
    }
    ep
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(path: &str, max: u64, low: u64) -> MemcgSpec {
        MemcgSpec { path: path.into(), max, high: PAGE_COUNTER_MAX, low, min: 0 }
    }

    #[test]
    fn tree_needs_declared_parents_and_walks_in_preorder() {
        let e = Memcgs::new(Kernel::V6_1, &[spec("/a/b", 10, 0)], RstatMode::Kernel).unwrap_err();
        assert!(e.contains("parent `/a`"), "{e}");
        let m = Memcgs::new(Kernel::V6_1, &[spec("/a/b", 10, 0), spec("/a", 20, 0), spec("/c", 5, 0)], RstatMode::Kernel).unwrap();
        let paths: Vec<&str> = m.preorder.iter().map(|&c| m.get(c).path.as_str()).collect();
        assert_eq!(paths, ["/", "/a", "/a/b", "/c"]);
    }

    #[test]
    fn charging_fails_at_the_first_ancestor_over_its_limit_and_leaves_no_trace() {
        let mut m = Memcgs::new(Kernel::V6_1, &[spec("/a", 3, 0), spec("/a/b", 10, 0)], RstatMode::Kernel).unwrap();
        let b = m.find("/a/b").unwrap();
        let a = m.find("/a").unwrap();
        assert!(m.try_charge_counters(b, 3).is_ok());
        assert_eq!(m.try_charge_counters(b, 1), Err(a));
        assert_eq!((m.get(b).usage, m.get(a).usage, m.get(ROOT_MEMCG).usage), (3, 3, 3));
        m.uncharge_counters(b, 2);
        assert_eq!(m.get(a).usage, 1);
    }

    #[test]
    fn stock_keeps_surplus_and_drains_on_switch() {
        let mut m = Memcgs::new(Kernel::V6_1, &[spec("/a", 1000, 0), spec("/b", 1000, 0)], RstatMode::Kernel).unwrap();
        let (a, b) = (m.find("/a").unwrap(), m.find("/b").unwrap());
        m.try_charge_counters(a, 64).unwrap();
        m.refill_stock(a, 63);
        assert!(m.consume_stock(a, 1));
        assert!(!m.consume_stock(b, 1));
        m.refill_stock(b, 0);
        // Switching the stock to /b gives /a's 62 unused pages back.
        assert_eq!(m.get(a).usage, 2);
    }

    #[test]
    fn effective_protection_splits_overcommitted_parent_protection() {
        // Children claim 300 under a parent that has only 150 effective: each child's claim
        // is scaled by 150/300.
        assert_eq!(effective_protection(200, 400, 150, 150, 300, false), 75);
        // Within budget: protected = min(usage, setting).
        assert_eq!(effective_protection(200, 400, 150, 500, 300, false), 150);
        // Recursive protection hands the unclaimed rest out by unprotected usage.
        assert_eq!(effective_protection(200, 400, 100, 300, 100, true), 100 + 200 * 100 / 300);
    }

    #[test]
    fn the_ratelimited_flush_waits_two_periods_of_the_periodic_flusher() {
        for (period, late_at) in [(RSTAT_FLUSH_NS, 2 * RSTAT_FLUSH_NS + 1), (100_000_000, 200_000_001)] {
            let mut m = Memcgs::new(Kernel::V6_12, &[spec("/a", 1000, 0)], RstatMode::Kernel).unwrap();
            m.flush_period_ns = period;
            let a = m.find("/a").unwrap();
            m.periodic_flush(0);
            m.mod_state(a, StatItem::Lru(Lru::ActiveFile), 500);
            // Not late: the reader keeps the stale value.
            m.flush_stats_ratelimited(ROOT_MEMCG, late_at - 1);
            assert_eq!(m.page_state(ROOT_MEMCG, StatItem::Lru(Lru::ActiveFile)), 0, "period {period}");
            // A full cycle late: the threshold flush runs.
            m.flush_stats_ratelimited(ROOT_MEMCG, late_at);
            assert_eq!(m.page_state(ROOT_MEMCG, StatItem::Lru(Lru::ActiveFile)), 500, "period {period}");
        }
    }

    #[test]
    fn reclaim_sees_flushed_stats_until_a_flush() {
        let mut m = Memcgs::new(Kernel::V6_1, &[spec("/a", 1000, 0)], RstatMode::Kernel).unwrap();
        let a = m.find("/a").unwrap();
        m.mod_state(a, StatItem::Lru(Lru::ActiveFile), 50);
        assert_eq!(m.page_state(ROOT_MEMCG, StatItem::Lru(Lru::ActiveFile)), 0);
        assert_eq!(m.exact_state(ROOT_MEMCG, StatItem::Lru(Lru::ActiveFile)), 50);
        // 6.1 flushes once more than nr_cpus batches of 64 updates are pending.
        m.flush_stats(ROOT_MEMCG, 1);
        assert_eq!(m.page_state(ROOT_MEMCG, StatItem::Lru(Lru::ActiveFile)), 0);
        m.mod_state(a, StatItem::Lru(Lru::ActiveFile), 100);
        m.mod_state(a, StatItem::Lru(Lru::ActiveFile), 100);
        m.flush_stats(ROOT_MEMCG, 2);
        assert_eq!(m.page_state(ROOT_MEMCG, StatItem::Lru(Lru::ActiveFile)), 250);
        assert_eq!(m.page_state(a, StatItem::Lru(Lru::ActiveFile)), 250);
    }
}

// ---- charging with reclaim (the parts of mm/memcontrol.c that call into vmscan) ---------

use crate::mm::hooks::Policy;
use crate::mm::Mm;

/// The charge could not be made: the task was killed by the OOM killer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChargeFailed;

/// Models mm/memcontrol.c: try_charge_memcg() (6.1/6.12): the per-CPU stock, batch charges
/// of 64 pages, limit reclaim rooted at the ancestor over its memory.max with the retry
/// ladder, memcg OOM, and memory.high bookkeeping for the return to user space.
// Inlined for the root memcg's charge, which has no limit to test (every charge of a
// scenario without cgroups); the rest is out of line.
#[inline]
pub fn try_charge_memcg<P: Policy>(mm: &mut Mm, p: &mut P, memcg: MemcgId, nr: u64) -> Result<(), ChargeFailed> {
    if memcg == ROOT_MEMCG {
        mm.memcgs.force_charge(memcg, nr);
        return Ok(());
    }
    try_charge_memcg_limited(mm, p, memcg, nr)
}

/// try_charge_memcg() below the root.
#[inline(never)]
fn try_charge_memcg_limited<P: Policy>(mm: &mut Mm, p: &mut P, memcg: MemcgId, nr: u64) -> Result<(), ChargeFailed> {
    let mut batch = nr.max(MEMCG_CHARGE_BATCH);
    let mut retries = crate::kernel::MAX_RECLAIM_RETRIES;
    let mut drained = false;
    loop {
        if mm.memcgs.consume_stock(memcg, nr) {
            return Ok(());
        }
        let over = match mm.memcgs.try_charge_counters(memcg, batch) {
            Ok(()) => {
                if batch > nr {
                    mm.memcgs.refill_stock(memcg, batch - nr);
                }
                note_over_high(mm, p, memcg, batch);
                return Ok(());
            }
            Err(over) => over,
        };
        if batch > nr {
            batch = nr;
            continue;
        }
        mm.memcgs.get_mut(over).memory_events.max += 1;
        // A memstall for the limit reclaim (psi_memstall_enter() around it, 6.1/6.12).
        let stall = mm.memstall_enter();
        let reclaimed = crate::mm::vmscan::try_to_free_mem_cgroup_pages(mm, p, over, nr, true);
        mm.memstall_leave(stall);
        // try_charge_memcg()'s task_is_dying() test (6.1/6.12): a task killed while its
        // reclaim yielded (several CPUs: another actor's OOM kill or cgroup kill) fails the
        // charge rather than charging pages its exit has already freed.
        if mm.current_task().is_some_and(|t| mm.tasks[t].killed) {
            return Err(ChargeFailed);
        }
        if mm.memcgs.margin(over) >= nr {
            continue;
        }
        if !drained {
            mm.memcgs.drain_all_stock(over);
            drained = true;
            continue;
        }
        if reclaimed > 0 && nr <= 8 {
            continue;
        }
        if retries > 0 {
            retries -= 1;
            continue;
        }
        if crate::mm::oom_kill::out_of_memory(mm, p, Some(over)) {
            if mm.current_task().is_some_and(|t| mm.tasks[t].killed) {
                return Err(ChargeFailed);
            }
            retries = crate::kernel::MAX_RECLAIM_RETRIES;
            continue;
        }
        // No victim: the charge is forced past the limit (the kernel's nomem path would fail
        // the fault and retry; pagelab lets the page in and keeps going).
        mm.memcgs.force_charge(memcg, nr);
        return Ok(());
    }
}

/// The tail of try_charge_memcg(): remember pages charged over memory.high, reclaiming at
/// once when more than a batch is pending.
fn note_over_high<P: Policy>(mm: &mut Mm, p: &mut P, memcg: MemcgId, batch: u64) {
    let Some(t) = mm.current_task() else { return };
    let over = mm.memcgs.ancestors(memcg).any(|c| {
        let cg = mm.memcgs.get(c);
        cg.usage > cg.high
    });
    if over {
        mm.tasks[t].nr_pages_over_high += batch;
        if mm.tasks[t].nr_pages_over_high > MEMCG_CHARGE_BATCH {
            mem_cgroup_handle_over_high(mm, p, t);
        }
    }
}

/// MEMCG_DELAY_PRECISION_SHIFT / MEMCG_DELAY_SCALING_SHIFT, HZ of the Debian kernels.
const DELAY_PRECISION_SHIFT: u32 = 20;
const DELAY_SCALING_SHIFT: u32 = 14;
const HZ: u64 = 250;

/// Models mm/memcontrol.c: calculate_overage().
fn calculate_overage(usage: u64, high: u64) -> u64 {
    if usage <= high {
        return 0;
    }
    let high = high.max(1);
    (((usage - high) as u128) << DELAY_PRECISION_SHIFT).checked_div(high as u128).unwrap_or(0) as u64
}

/// Models mm/memcontrol.c: mem_find_max_overage() + calculate_high_delay(): the throttling
/// penalty in jiffies for `nr_pages` charged over memory.high.
pub fn high_delay_jiffies(memcgs: &Memcgs, memcg: MemcgId, nr_pages: u64) -> u64 {
    let max_overage =
        memcgs.ancestors(memcg).take_while(|&c| c != ROOT_MEMCG).map(|c| calculate_overage(memcgs.get(c).usage, memcgs.get(c).high)).max().unwrap_or(0);
    if max_overage == 0 {
        return 0;
    }
    let penalty = ((max_overage as u128 * max_overage as u128 * HZ as u128) >> DELAY_PRECISION_SHIFT) >> DELAY_SCALING_SHIFT;
    (penalty * nr_pages as u128 / MEMCG_CHARGE_BATCH as u128) as u64
}

/// Models mm/memcontrol.c: mem_cgroup_handle_over_high() (on return to user space):
/// reclaim_high() at every level over memory.high, then sleep the penalty (capped at 2 s)
/// if reclaim could not bring the overage down.
pub fn mem_cgroup_handle_over_high<P: Policy>(mm: &mut Mm, p: &mut P, t: usize) {
    let nr_pages = std::mem::take(&mut mm.tasks[t].nr_pages_over_high);
    if nr_pages == 0 {
        return;
    }
    let memcg = mm.tasks[t].memcg;
    let mut retries = crate::kernel::MAX_RECLAIM_RETRIES;
    let mut in_retry = false;
    loop {
        let reclaimed = reclaim_high(mm, p, memcg, if in_retry { crate::kernel::SWAP_CLUSTER_MAX } else { nr_pages });
        let penalty = high_delay_jiffies(&mm.memcgs, memcg, nr_pages).min(2 * HZ);
        if penalty <= HZ / 100 {
            return;
        }
        if reclaimed > 0 || retries > 0 {
            if reclaimed == 0 {
                retries -= 1;
            }
            in_retry = true;
            continue;
        }
        // The penalty sleep is a memstall (psi_memstall_enter() around
        // schedule_timeout_killable(), 6.1/6.12).
        let now = mm.now();
        let stall = mm.memstall_enter();
        mm.wait_until(now + penalty * (1_000_000_000 / HZ));
        mm.memstall_leave(stall);
        return;
    }
}

/// Models mm/memcontrol.c: reclaim_high().
fn reclaim_high<P: Policy>(mm: &mut Mm, p: &mut P, memcg: MemcgId, nr_pages: u64) -> u64 {
    let chain: Vec<MemcgId> = mm.memcgs.ancestors(memcg).take_while(|&c| c != ROOT_MEMCG).collect();
    let mut reclaimed = 0;
    for c in chain {
        let cg = mm.memcgs.get(c);
        if cg.usage <= cg.high {
            continue;
        }
        mm.memcgs.get_mut(c).memory_events.high += 1;
        // Each level's reclaim is a memstall (6.1/6.12).
        let stall = mm.memstall_enter();
        reclaimed += crate::mm::vmscan::try_to_free_mem_cgroup_pages(mm, p, c, nr_pages, true);
        mm.memstall_leave(stall);
    }
    reclaimed
}

/// A write to a cgroup's control file at a moment of the run: a scenario's `[[event]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupWrite {
    pub at_ns: u64,
    /// The cgroup's path, as `[[cgroup]] path` declares it.
    pub cgroup: String,
    pub kind: WriteKind,
}

/// Which file a [`CgroupWrite`] writes, and what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteKind {
    /// memory.reclaim: pages to reclaim and 6.12's `swappiness=`.
    Reclaim { pages: u64, swappiness: Option<u32> },
    /// memory.high, pages (PAGE_COUNTER_MAX: "max").
    High(u64),
    /// memory.max, pages (PAGE_COUNTER_MAX: "max").
    Max(u64),
}

impl WriteKind {
    /// The control file written.
    pub fn file(self) -> &'static str {
        match self {
            WriteKind::Reclaim { .. } => "memory.reclaim",
            WriteKind::High(_) => "memory.high",
            WriteKind::Max(_) => "memory.max",
        }
    }
}

/// What a write did: pages it asked reclaim for (memory.reclaim: the request; memory.high
/// and memory.max: the usage above the new limit) and pages reclaimed, and whether the
/// kernel's write returned an error (`EAGAIN`: memory.reclaim could not reclaim the amount).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WriteResult {
    pub asked_pages: u64,
    pub reclaimed_pages: u64,
    pub eagain: bool,
}

/// Performs a [`WriteKind`] on `memcg` as the writing process would (the caller sets the
/// actor and its clock).
pub fn cgroup_write<P: Policy>(mm: &mut Mm, p: &mut P, memcg: MemcgId, kind: WriteKind) -> WriteResult {
    match kind {
        WriteKind::Reclaim { pages, swappiness } => memory_reclaim(mm, p, memcg, pages, swappiness),
        WriteKind::High(high) => memory_high_write(mm, p, memcg, high),
        WriteKind::Max(max) => memory_max_write(mm, p, memcg, max),
    }
}

/// Models mm/memcontrol.c: memory_reclaim() (6.1.192, 6.12.95): proactive reclaim of
/// `nr_to_reclaim` pages from `memcg`'s subtree, in rounds of
/// try_to_free_mem_cgroup_pages() with MEMCG_RECLAIM_MAY_SWAP | MEMCG_RECLAIM_PROACTIVE
/// (6.12: a quarter of what is left a round, [`crate::kernel::Kernel::memory_reclaim_asks_a_quarter`],
/// and its `swappiness=`). A round that reclaims nothing spends one of MAX_RECLAIM_RETRIES;
/// before the last one the per-CPU LRU batches are drained (lru_add_drain_all()); a round
/// that reclaims nothing with no retry left ends the write with -EAGAIN, whatever earlier
/// rounds reclaimed.
pub fn memory_reclaim<P: Policy>(mm: &mut Mm, p: &mut P, memcg: MemcgId, nr_to_reclaim: u64, swappiness: Option<u32>) -> WriteResult {
    let quarter = mm.cfg.kernel.memory_reclaim_asks_a_quarter();
    let mut retries = crate::kernel::MAX_RECLAIM_RETRIES;
    let mut out = WriteResult { asked_pages: nr_to_reclaim, ..WriteResult::default() };
    while out.reclaimed_pages < nr_to_reclaim {
        // The final attempt: whatever sits in the per-CPU batches may become reclaimable.
        if retries == 0 {
            crate::mm::swap::lru_add_drain(mm, p);
        }
        let left = nr_to_reclaim - out.reclaimed_pages;
        let ask = if quarter { left / 4 } else { left };
        let reclaimed = crate::mm::vmscan::try_to_free_mem_cgroup_pages_proactive(mm, p, memcg, ask, swappiness);
        if reclaimed == 0 {
            if retries == 0 {
                out.eagain = true;
                return out;
            }
            retries -= 1;
        }
        out.reclaimed_pages += reclaimed;
    }
    out
}

/// Models mm/memcontrol.c: memory_high_write() (6.1.192, 6.12.95): memory.high takes the
/// new value at once; then, while the usage is above it, the per-CPU charge stock is drained
/// once and reclaim (may swap, not proactive) is asked for the excess, until a round
/// reclaims nothing with MAX_RECLAIM_RETRIES spent. The write never fails and never OOMs:
/// the task's own return to user space throttles it later.
pub fn memory_high_write<P: Policy>(mm: &mut Mm, p: &mut P, memcg: MemcgId, high: u64) -> WriteResult {
    mm.memcgs.get_mut(memcg).high = high;
    let mut retries = crate::kernel::MAX_RECLAIM_RETRIES;
    let mut drained = false;
    let mut out = WriteResult { asked_pages: mm.memcgs.get(memcg).usage.saturating_sub(high), ..WriteResult::default() };
    loop {
        let usage = mm.memcgs.get(memcg).usage;
        if usage <= high {
            return out;
        }
        if !drained {
            mm.memcgs.drain_all_stock(memcg);
            drained = true;
            continue;
        }
        let reclaimed = crate::mm::vmscan::try_to_free_mem_cgroup_pages(mm, p, memcg, usage - high, true);
        out.reclaimed_pages += reclaimed;
        if reclaimed == 0 {
            if retries == 0 {
                return out;
            }
            retries -= 1;
        }
    }
}

/// Models mm/memcontrol.c: memory_max_write() (6.1.192, 6.12.95): memory.max takes the new
/// value at once; then, while the usage is above it, the stock is drained once, reclaim is
/// asked for the excess (MAX_RECLAIM_RETRIES rounds that reclaim nothing are allowed), and
/// after those the cgroup OOMs (memory.events `oom`) and the OOM killer picks a victim in it
/// (mem_cgroup_out_of_memory()) until none is left to kill.
pub fn memory_max_write<P: Policy>(mm: &mut Mm, p: &mut P, memcg: MemcgId, max: u64) -> WriteResult {
    mm.memcgs.get_mut(memcg).max = max;
    let mut reclaims = crate::kernel::MAX_RECLAIM_RETRIES;
    let mut drained = false;
    let mut out = WriteResult { asked_pages: mm.memcgs.get(memcg).usage.saturating_sub(max), ..WriteResult::default() };
    loop {
        let usage = mm.memcgs.get(memcg).usage;
        if usage <= max {
            return out;
        }
        if !drained {
            mm.memcgs.drain_all_stock(memcg);
            drained = true;
            continue;
        }
        if reclaims > 0 {
            let reclaimed = crate::mm::vmscan::try_to_free_mem_cgroup_pages(mm, p, memcg, usage - max, true);
            out.reclaimed_pages += reclaimed;
            if reclaimed == 0 {
                reclaims -= 1;
            }
            continue;
        }
        // out_of_memory() counts the cgroup's `oom` event with the kill it makes; the write
        // counts it itself when there is no one left to kill.
        if !crate::mm::oom_kill::out_of_memory(mm, p, Some(memcg)) {
            mm.memcgs.get_mut(memcg).memory_events.oom += 1;
            return out;
        }
    }
}

#[cfg(test)]
mod high_tests {
    use super::*;

    #[test]
    fn high_delay_matches_the_kernel_table() {
        // mm/memcontrol.c's comment: high 100M, usage 101M → ~6 ms; 110M → ~639 ms (per 64 pages).
        let mb = 256; // pages per MiB
        let m = Memcgs::new(
            crate::kernel::Kernel::V6_1,
            &[MemcgSpec { path: "/a".into(), max: PAGE_COUNTER_MAX, high: 100 * mb, low: 0, min: 0 }],
            RstatMode::Kernel,
        )
        .unwrap();
        let mut m = m;
        let a = m.find("/a").unwrap();
        m.force_charge(a, 101 * mb);
        let ms = high_delay_jiffies(&m, a, MEMCG_CHARGE_BATCH) * 1000 / HZ;
        assert!((4..=8).contains(&ms), "101M: {ms} ms");
        m.force_charge(a, 9 * mb);
        let ms = high_delay_jiffies(&m, a, MEMCG_CHARGE_BATCH) * 1000 / HZ;
        assert!((600..=680).contains(&ms), "110M: {ms} ms");
    }
}
