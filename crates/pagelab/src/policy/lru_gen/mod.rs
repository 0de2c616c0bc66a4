//! The multi-generational LRU (mm/vmscan.c CONFIG_LRU_GEN, mm/workingset.c, mm/swap.c,
//! include/linux/mm_inline.h) as Debian's 6.1.192, 6.12.95 and 7.3.4 run it: per-lruvec
//! generations with tiers of fd accesses, a PID controller choosing what to evict, aging by
//! page-table walks and look-around, and the two kernels' reclaim drivers (6.1 reclaims each
//! memcg in turn; 6.12's root reclaim walks the memcg LRU).
//!
//! Files: `gen` (placement and sequence numbers), `evict` (controller, scanning, eviction),
//! `aging` (should_run_aging, page-table walks, Bloom filters, look-around), `workingset`
//! (shadows and refaults, and Kairui Song's refault-distance rework), `drivers` (per-version
//! reclaim loops and the memcg LRU), `debugfs` (/sys/kernel/debug/lru_gen).

mod aging;
mod debugfs;
mod drivers;
mod evict;
mod fg;
mod gen;
#[cfg(test)]
mod tests;
mod workingset;

pub use evict::{positive_ctrl_err, CtrlPos};
pub use gen::{folio_gen, folio_lru_refs, folio_lru_refs_6_14, gen_of, lru_gen_inc_refs, lru_gen_set_refs, lru_tier_from_refs, lru_tier_from_refs_6_14};

use crate::kernel::Kernel;
use crate::mm::folio::{pg, List, Pfn, MAX_ZONES};
use crate::mm::hooks::{Caps, Inspect, Policy};
use crate::mm::mapping::Shadow;
use crate::mm::memcontrol::MemcgId;
use crate::mm::vmscan::ScanControl;
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use pagelab_workload::Rng;
use serde::Deserialize;

/// MGLRU settings, the scenario's `[mglru]` table: the policy's own (the scenario schema
/// re-exports it).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MglruToml {
    /// /sys/kernel/mm/lru_gen/enabled capabilities: page-table walks (0x0002).
    pub walks: Option<bool>,
    /// ... and clearing young bits of non-leaf PMDs (0x0004).
    pub pmd_young: Option<bool>,
    /// /sys/kernel/mm/lru_gen/min_ttl_ms.
    pub min_ttl_ms: Option<u64>,
    /// Kairui Song's refault-distance rework: an alias for `[workingset] refault_model = "kairui-v3"` (true) or
    /// `"mainline"` (false).
    pub refault_distance: Option<bool>,
    /// pagelab's own prefetch in generation scans (Kairui Song's 2024 lru_gen prefetch patch).
    pub prefetch: Option<bool>,
    /// MGLRU-FG, Kairui Song's "frequency guided workingset promotion" (RFC 06/32, May 2026):
    /// access-time promotion of folios accessed past LRU_REFS_MAX, and an access count whose
    /// value 2 or more is the workingset. Needs kernel "7.3"; off by default.
    pub fg: Option<bool>,
    /// What MGLRU-FG resets a promoted folio's count to: "zero" (06/32's text, the default),
    /// "workingset" or "protected" (the development tree's two versions).
    pub fg_reset: Option<String>,
    /// The kernel build's `LRU_REFS_WIDTH`, 1 or 2 (the default): the bits of page->flags
    /// left for MGLRU's refs count, `min(MAX_NR_TIERS - 2, 64 - NR_PAGEFLAGS - the zone,
    /// node, generation and last-cpupid widths)` (include/linux/page-flags-layout.h). A
    /// distro config (NUMA balancing, 8192 CPUs, NODES_SHIFT 10) leaves 6.6's 26 page flags
    /// one bit, 6.12's 24 two. 6.1 and 6.12's rules only.
    pub refs_width: Option<u32>,
}

/// `MIN_NR_GENS`, `MAX_NR_GENS`, `MAX_NR_TIERS`.
pub const MIN_NR_GENS: usize = 2;
pub const MAX_NR_GENS: usize = 4;
pub const MAX_NR_TIERS: usize = 4;
/// `MIN_LRU_BATCH` (BITS_PER_LONG) and `MAX_LRU_BATCH`.
pub const MIN_LRU_BATCH: u64 = 64;
pub const MAX_LRU_BATCH: u64 = 4096;

/// A lruvec of the policy, (memcg, node), as include/linux/memcontrol.h: mem_cgroup_lruvec(memcg,
/// pgdat) names it (6.1/6.12/7.3): the `struct lru_gen_folio`, the mm walk's `mm_state` and
/// the memcg LRU's place all live in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LvId {
    pub memcg: MemcgId,
    pub nid: usize,
}

impl LvId {
    /// The lruvec of `memcg` on node `nid`.
    #[inline(always)]
    pub fn new(memcg: MemcgId, nid: usize) -> LvId {
        LvId { memcg, nid }
    }
}

/// `struct lru_gen_folio` of one (memcg, node) lruvec (NR_HIST_GENS = 1).
#[derive(Clone, Debug)]
pub struct GenLruvec {
    pub max_seq: u64,
    pub min_seq: [u64; 2],
    /// Birth time (ns) of each generation.
    pub timestamps: [u64; MAX_NR_GENS],
    /// `folios[gen][type][zone]`: type 0 anon, 1 file; one list per zone of the lruvec's node
    /// (by the zone's index in the node: a node after the first has one zone), as the kernel
    /// keeps them (include/linux/mmzone.h: struct lru_gen_folio, 6.1/6.12), so a
    /// scan of the oldest generation takes the zones in turn (scan_folios()).
    lists: [[[List; MAX_ZONES]; 2]; MAX_NR_GENS],
    /// `nr_pages[gen][type]` (may dip below zero transiently in the kernel; exact here).
    pub nr_pages: [[i64; 2]; MAX_NR_GENS],
    pub avg_refaulted: [[u64; MAX_NR_TIERS]; 2],
    pub avg_total: [[u64; MAX_NR_TIERS]; 2],
    pub refaulted: [[u64; MAX_NR_TIERS]; 2],
    pub evicted: [[u64; MAX_NR_TIERS]; 2],
    pub protected: [[u64; MAX_NR_TIERS - 1]; 2],
    /// `protected[type][0]` of 7.3 (6.14's rework counts tier 0's protected folios too;
    /// 6.1/6.12 have no slot for it). Read through [`GenLruvec::protected_in`].
    pub protected_tier0: [u64; 2],
    /// `mm_state.seq` (the lruvec's walk state, 6.1/6.12/7.3): the last max_seq a page-table
    /// walk of this node finished for.
    mm_seq: u64,
    /// The two Bloom filters (None until a walk first creates one).
    bloom: [Option<Vec<u64>>; 2],
    /// Page-table walk statistics (lru_gen_full's LOYNFA).
    pub mm_stats: [u64; aging::MM_STATS],
    /// Kairui models: evictions of each type from this memcg and its descendants, on this node.
    pub evictions: [u64; 2],
    /// Kairui models: the refault clock when min_seq of each type last advanced (the start
    /// of the current oldest generation's eviction window).
    pub window_start: [u64; 2],
}

impl GenLruvec {
    /// The folios of `tier` protected in the current generation (`protected[hist][type][tier]`).
    #[inline]
    pub fn protected_in(&self, ty: usize, tier: usize) -> u64 {
        if tier == 0 {
            self.protected_tier0[ty]
        } else {
            self.protected[ty][tier - 1]
        }
    }

    #[inline]
    fn protected_mut(&mut self, ty: usize, tier: usize) -> &mut u64 {
        if tier == 0 {
            &mut self.protected_tier0[ty]
        } else {
            &mut self.protected[ty][tier - 1]
        }
    }

    /// Models mm/vmscan.c: lru_gen_init_lruvec(): max_seq 3, min_seq 0 (four generations),
    /// mm_state.seq 2.
    fn new(now: u64) -> GenLruvec {
        GenLruvec {
            max_seq: MIN_NR_GENS as u64 + 1,
            min_seq: [0, 0],
            timestamps: [now; MAX_NR_GENS],
            lists: Default::default(),
            nr_pages: [[0; 2]; MAX_NR_GENS],
            avg_refaulted: [[0; MAX_NR_TIERS]; 2],
            avg_total: [[0; MAX_NR_TIERS]; 2],
            refaulted: [[0; MAX_NR_TIERS]; 2],
            evicted: [[0; MAX_NR_TIERS]; 2],
            protected: [[0; MAX_NR_TIERS - 1]; 2],
            protected_tier0: [0; 2],
            mm_seq: MIN_NR_GENS as u64,
            bloom: [None, None],
            mm_stats: [0; aging::MM_STATS],
            evictions: [0; 2],
            window_start: [0; 2],
        }
    }
}

/// The MGLRU policy.
#[derive(Clone, Debug)]
pub struct LruGen {
    kernel: Kernel,
    /// The generations of lruvec (memcg, nid) at `nid * nr_memcgs + memcg` ([`LruGen::at`]):
    /// node 0's sit at the memcgs' own indices, so a machine of one node has one per memcg.
    pub lv: Vec<GenLruvec>,
    nr_memcgs: usize,
    /// Capabilities of /sys/kernel/mm/lru_gen/enabled: page-table walks (0x0002) and
    /// non-leaf PMD young bits (0x0004).
    walks: bool,
    pmd_young: bool,
    /// /sys/kernel/mm/lru_gen/min_ttl_ms, in ns.
    min_ttl_ns: u64,
    /// `[workingset]`: the refault model and its open choices.
    refault: crate::mm::workingset::RefaultSpec,
    /// pagelab's prefetch in generation scans (Kairui Song's 2024 lru_gen prefetch patch).
    prefetch: bool,
    /// `[mglru] fg`: MGLRU-FG's reset, or None when it is off ([`crate::mm::Config::mglru_fg`]).
    pub(super) fg: Option<crate::mm::swap::FgReset>,
    /// `[mglru] refs_width`: the build's `LRU_REFS_WIDTH` (1 or 2).
    pub(super) refs_width: u32,
    /// 6.1 evict_folios() evicted anon this pass (`need_swapping`).
    need_swapping: bool,
    /// 6.12's memcg LRU, one per node (`pgdat->memcg_lru`).
    memcg_lru: Vec<drivers::MemcgLru>,
    /// `mm->lru_gen.bitmap` of each task: the nodes whose walk has not yet seen the task since
    /// it last ran (lru_gen_use_mm() sets every bit, should_skip_mm() clears its node's).
    /// Filled from the task's `ran` when a walk finds it set.
    mm_bitmap: Vec<u64>,
    rng: Rng,
    scratch: Vec<Pfn>,
    /// The folios scan_folios() has looked at in this evict_folios() call (sorted, isolated
    /// or skipped), all under the lruvec's lock: the units of its isolation section.
    scanned_locked: u64,
}

impl LruGen {
    pub fn new(mm: &Mm, cfg: &MglruToml) -> LruGen {
        let n = mm.memcgs.cg.len();
        let nodes = mm.nodes.len().max(1);
        let mut rng = Rng::new(0x6c72_7567_656e); // the memcg LRU's random bins, deterministic
        let memcg_lru = drivers::MemcgLru::per_node(n, nodes, &mut rng);
        LruGen {
            kernel: mm.cfg.kernel,
            lv: (0..n * nodes).map(|_| GenLruvec::new(mm.now())).collect(),
            nr_memcgs: n,
            walks: cfg.walks.unwrap_or(true),
            pmd_young: cfg.pmd_young.unwrap_or(true),
            min_ttl_ns: cfg.min_ttl_ms.unwrap_or(0) * 1_000_000,
            refault: mm.cfg.refault,
            prefetch: cfg.prefetch.unwrap_or(true),
            fg: mm.cfg.mglru_fg,
            refs_width: cfg.refs_width.unwrap_or(2),
            need_swapping: false,
            memcg_lru,
            mm_bitmap: Vec::new(),
            rng,
            scratch: Vec::with_capacity(MIN_LRU_BATCH as usize),
            scanned_locked: 0,
        }
    }

    /// Models mm/vmscan.c: get_swappiness(): 0 without at least MIN_LRU_BATCH free swap
    /// slots (6.12 also when the reclaim may not swap).
    pub fn get_swappiness(&self, mm: &Mm, sc: &ScanControl) -> u64 {
        if self.kernel.lru_gen_swappiness_honours_may_swap() && !sc.may_swap {
            return 0;
        }
        if mm.swap_pages_free() < MIN_LRU_BATCH {
            return 0;
        }
        sc.swappiness(mm) as u64
    }

    /// The index of lruvec `k` in [`LruGen::lv`].
    #[inline(always)]
    pub fn at(&self, k: LvId) -> usize {
        k.nid * self.nr_memcgs + k.memcg as usize
    }

    /// The generations of lruvec `k` (`lruvec->lrugen`).
    #[inline(always)]
    pub fn lrugen(&self, k: LvId) -> &GenLruvec {
        &self.lv[self.at(k)]
    }

    /// [`LruGen::lrugen`], to change.
    #[inline(always)]
    pub fn lrugen_mut(&mut self, k: LvId) -> &mut GenLruvec {
        let i = self.at(k);
        &mut self.lv[i]
    }

    /// The nodes the policy keeps lruvecs for.
    #[inline]
    pub fn nr_nodes(&self) -> usize {
        self.lv.len() / self.nr_memcgs.max(1)
    }

    /// Models include/linux/memcontrol.h: folio_lruvec() (6.1/6.12/7.3): the lruvec of the
    /// folio's memcg on its frame's node, and the index of the folio's zone among that node's
    /// zones (the lists it sits on: node 0 keeps its zones' indices, a node after the first
    /// has one zone).
    #[inline(always)]
    pub fn folio_lruvec(mm: &Mm, pfn: Pfn) -> (LvId, usize) {
        let memcg = mm.folios.get(pfn).memcg;
        let nid = mm.folio_nid(pfn);
        let zone = if nid == 0 { mm.folios.zone_of(pfn) } else { 0 };
        (LvId::new(memcg, nid), zone)
    }

    /// The folios of a generation's lists of `memcg`'s lruvec on node 0, the highest zone's
    /// first, each head first (for tests and debugfs).
    pub fn gen_pages(&self, mm: &Mm, memcg: MemcgId, gen: usize, ty: usize) -> Vec<Pfn> {
        self.gen_pages_on(mm, LvId::new(memcg, 0), gen, ty)
    }

    /// [`LruGen::gen_pages`] of lruvec `k`.
    pub fn gen_pages_on(&self, mm: &Mm, k: LvId, gen: usize, ty: usize) -> Vec<Pfn> {
        self.lrugen(k).lists[gen][ty].iter().rev().flat_map(|l| mm.folios.iter_list(l)).collect()
    }

    /// The LRU_REFS field's top, `BIT(LRU_REFS_WIDTH) - 1` (include/linux/mm_inline.h, 6.1
    /// and 6.12): 3, or 1 with one refs bit ([`LruGen::refs_width`]).
    #[inline]
    pub(super) fn refs_max(&self) -> u32 {
        (1 << self.refs_width) - 1
    }

    /// Models mm/swap.c: folio_inc_refs() (6.1/6.12): the first fd access sets
    /// PG_referenced, the second PG_workingset, later ones count up the LRU_REFS field to 3.
    /// 7.3 counts the field first and sets PG_workingset last ([`lru_gen_inc_refs`],
    /// [`Kernel::lru_gen_workingset_top_tier`]).
    ///
    /// Under MGLRU-FG: folio_inc_lru_refs() ([`LruGen::fg_inc_lru_refs`]).
    fn folio_inc_refs(&mut self, mm: &mut Mm, pfn: Pfn) {
        if let Some(reset) = self.fg {
            return self.fg_inc_lru_refs(mm, pfn, reset);
        }
        let f = mm.folios.get_mut(pfn);
        if f.flags & pg::UNEVICTABLE != 0 {
            return;
        }
        if self.kernel.lru_gen_workingset_top_tier() {
            f.flags = lru_gen_inc_refs(f.flags);
            return;
        }
        if f.flags & pg::REFERENCED == 0 {
            f.flags |= pg::REFERENCED;
        } else if f.flags & pg::WORKINGSET == 0 {
            f.flags |= pg::WORKINGSET;
        } else if (f.flags & pg::REFS_MASK) >> pg::REFS_SHIFT < self.refs_max() {
            f.flags += 1 << pg::REFS_SHIFT;
        }
    }
}

impl Policy for LruGen {
    fn caps(&self) -> Caps {
        Caps::LRU_GEN
    }

    fn name(&self) -> &'static str {
        "mglru"
    }

    /// Models lru_add_fn() -> lruvec_add_folio() -> lru_gen_add_folio(reclaiming = false).
    fn lru_add(&mut self, mm: &mut Mm, pfn: Pfn) {
        self.add_folio(mm, pfn, false);
    }

    fn lru_del(&mut self, mm: &mut Mm, pfn: Pfn) {
        self.del_folio(mm, pfn, false);
        mm.folios.clear(pfn, pg::LRU | pg::ACTIVE);
    }

    fn mark_accessed(&mut self, mm: &mut Mm, pfn: Pfn) {
        self.folio_inc_refs(mm, pfn);
    }

    /// Models mm/swap.c: folio_activate_fn() with MGLRU: off the generation list, PG_active,
    /// back on (the youngest generation); counts pgactivate.
    fn activate(&mut self, mm: &mut Mm, pfn: Pfn) {
        let f = *mm.folios.get(pfn);
        if f.test(pg::ACTIVE) || f.test(pg::UNEVICTABLE) || folio_gen(f.flags).is_none() {
            return;
        }
        self.del_folio(mm, pfn, false);
        mm.folios.set(pfn, pg::ACTIVE);
        self.add_folio(mm, pfn, false);
        mm.count_both(f.memcg, Ev::PgActivate, f.nr_pages());
    }

    /// Models mm/swap.c: lru_move_tail_fn() with MGLRU: to the tail of the oldest generation.
    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        self.del_folio(mm, pfn, false);
        mm.folios.clear(pfn, pg::ACTIVE);
        self.add_folio(mm, pfn, true);
    }

    fn referenced_young(&mut self, mm: &mut Mm, pfn: Pfn) {
        self.look_around(mm, pfn);
    }

    fn workingset_eviction(&mut self, mm: &mut Mm, pfn: Pfn, _target: MemcgId) -> Shadow {
        self.eviction(mm, pfn)
    }

    fn workingset_refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow) {
        self.refault(mm, pfn, shadow);
    }

    /// The lruvec of `memcg` on the node reclaim shrinks (`sc.nid`).
    fn shrink_lruvec(&mut self, mm: &mut Mm, memcg: MemcgId, sc: &mut ScanControl) {
        self.lru_gen_shrink_lruvec(mm, LvId::new(memcg, sc.nid), sc);
    }

    /// mm/vmscan.c (6.12.95): shrink_node() gives root reclaim (`root_reclaim()`) to
    /// lru_gen_shrink_node() and returns; 6.1.192 has no such path (its MGLRU runs inside
    /// shrink_lruvec()).
    fn shrink_node_is_all(&self, sc: &ScanControl) -> bool {
        self.kernel.lru_gen_memcg_lru() && !sc.cgroup_reclaim()
    }

    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        if self.shrink_node_is_all(sc) {
            self.lru_gen_shrink_node(mm, sc);
        } else {
            crate::mm::vmscan::shrink_node_memcgs(mm, self, sc);
        }
    }

    fn kswapd_age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        self.lru_gen_age_node(mm, sc);
    }
}

impl Inspect for LruGen {
    fn state_bytes(&self) -> u64 {
        let lists: u64 = self.lv.iter().flat_map(|l| l.lists.iter().flatten().flatten()).map(|l| l.state_bytes()).sum();
        let bloom: u64 = self.lv.iter().flat_map(|l| l.bloom.iter()).map(|b| b.as_ref().map_or(0, |v| v.len() as u64 * 8)).sum();
        lists + bloom + (self.lv.len() * std::mem::size_of::<GenLruvec>()) as u64
    }

    fn check(&self, mm: &Mm) -> Result<(), String> {
        for (i, lv) in self.lv.iter().enumerate() {
            let (memcg, nid) = ((i % self.nr_memcgs) as MemcgId, i / self.nr_memcgs);
            // "memcg M" on node 0, "memcg M node N" after it.
            let m = if nid == 0 { format!("{memcg}") } else { format!("{memcg} node {nid}") };
            // seq_is_valid() (6.1-6.13): 2 <= file gens <= anon gens <= 4, i.e. anon's oldest
            // generation is never younger than file's.
            // 7.3 (6.14 on): each type keeps MIN_NR_GENS..=MAX_NR_GENS, in either order.
            let gens = [lv.max_seq - lv.min_seq[0] + 1, lv.max_seq - lv.min_seq[1] + 1];
            let valid = if self.kernel.lru_gen_min_seq_independent() {
                gens.iter().all(|&n| (MIN_NR_GENS as u64..=MAX_NR_GENS as u64).contains(&n))
            } else {
                gens[1] >= MIN_NR_GENS as u64 && gens[1] <= gens[0] && gens[0] <= MAX_NR_GENS as u64
            };
            if !valid {
                return Err(format!("memcg {m}: {} anon and {} file generations", gens[0], gens[1]));
            }
            let mut counted = [[0i64; 2]; MAX_NR_GENS];
            for (gen, lists) in lv.lists.iter().enumerate() {
                for (ty, zones) in lists.iter().enumerate() {
                    for (zone, list) in zones.iter().enumerate() {
                        let mut n = 0;
                        for pfn in mm.folios.iter_list(list) {
                            n += 1;
                            let f = mm.folios.get(pfn);
                            if f.memcg != memcg
                                || f.lru_type() != ty
                                || f.lru_slot as usize != gen * 2 + ty + 1
                                || Self::folio_lruvec(mm, pfn) != (LvId::new(memcg, nid), zone)
                            {
                                return Err(format!("pfn {pfn} on memcg {m} gen {gen} type {ty} zone {zone} does not belong there"));
                            }
                            let g = folio_gen(f.flags).ok_or(format!("pfn {pfn} on a generation list without a generation"))?;
                            let seq_ok = (lv.min_seq[ty]..=lv.max_seq).any(|s| gen_of(s) == g);
                            // An anon folio promoted by folio_update_gen() but still on its old
                            // list is left there when inc_min_seq() advances anon's min_seq
                            // without moving folios (swap not possible), as in the kernel; its
                            // flags may then name a retired generation until sort_folio() moves it.
                            // inc_min_seq() (6.1/6.12) also leaves the whole oldest anon list where it
                            // is, its folios still naming that generation, which becomes the youngest
                            // when max_seq next wraps onto it.
                            let list_live = (lv.min_seq[ty]..=lv.max_seq).any(|s| gen_of(s) == gen);
                            let left_behind = ty == 0 && (g != gen || !list_live);
                            if !seq_ok && !left_behind {
                                return Err(format!(
                                "pfn {pfn} in generation {g}, outside memcg {m}'s live generations (type {ty}, on list {gen}, min_seq {:?}, max_seq {}, flags {:#x})",
                                lv.min_seq, lv.max_seq, f.flags
                            ));
                            }
                            counted[g][ty] += f.nr_pages() as i64;
                            if f.test(pg::ACTIVE) {
                                return Err(format!("pfn {pfn} keeps PG_active on a generation list"));
                            }
                        }
                        if n != list.len {
                            return Err(format!("memcg {m} gen {gen} type {ty} zone {zone}: list length {} but {n} members", list.len));
                        }
                    }
                }
            }
            if counted != lv.nr_pages {
                return Err(format!("memcg {m}: nr_pages {:?} but the folios say {counted:?}", lv.nr_pages));
            }
            let (mut active, mut inactive) = ([0u64; 2], [0u64; 2]);
            for seq in lv.min_seq[0].min(lv.min_seq[1])..=lv.max_seq {
                for ty in 0..2 {
                    if seq < lv.min_seq[ty] {
                        continue;
                    }
                    let n = lv.nr_pages[gen_of(seq)][ty] as u64;
                    if seq + 1 >= lv.max_seq {
                        active[ty] += n;
                    } else {
                        inactive[ty] += n;
                    }
                }
            }
            // Left-behind anon folios (above) sit in a retired generation, which
            // lru_gen_is_active() never calls active.
            for (ty, inactive) in inactive.iter_mut().enumerate() {
                for g in 0..MAX_NR_GENS {
                    if !(lv.min_seq[ty]..=lv.max_seq).any(|s| gen_of(s) == g) {
                        *inactive += lv.nr_pages[g][ty] as u64;
                    }
                }
            }
            let sizes = mm.memcgs.get(memcg).lruvec_of(nid).lru_size;
            if sizes[0] != inactive[0] || sizes[1] != active[0] || sizes[2] != inactive[1] || sizes[3] != active[1] {
                return Err(format!("memcg {m}: LRU sizes {sizes:?} but generations give inactive {inactive:?} active {active:?}"));
            }
        }
        Ok(())
    }

    fn debugfs(&self, mm: &Mm) -> Option<String> {
        Some(self.lru_gen_debugfs(mm, false))
    }

    fn debugfs_full(&self, mm: &Mm) -> Option<String> {
        Some(self.lru_gen_debugfs(mm, true))
    }

    fn state(&self, mm: &Mm) -> Option<serde_json::Value> {
        Some(self.lru_gen_json(mm))
    }
}
