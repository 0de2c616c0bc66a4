//! The classic active/inactive LRU (mm/vmscan.c with MGLRU off, mm/swap.c, mm/workingset.c):
//! two lists per type per memcg, two-touch promotion, deactivation driven by inactive_is_low()
//! and refaults, the anon/file balance of get_scan_count() (IO cost in 6.1/6.12, 5.7's
//! scanned/rotated ratios), and the refault-distance test.

use crate::mm::profile::Func;
use std::collections::VecDeque;

use crate::kernel::{Kernel, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::mm::folio::{pg, Folio, List, Pfn, MAX_ZONES};
use crate::mm::hooks::{Caps, Inspect, Policy};
use crate::mm::mapping::Shadow;
use crate::mm::memcontrol::{MemcgId, StatItem};
use crate::mm::swap::{folio_activate, lru_add_drain, lru_cache_activate_folio, lru_note_cost};
use crate::mm::vmscan::{
    count_reclaim, folio_referenced, move_folios_to_lru, note_isolated, reclaim_batch, shrink_node_memcgs, throttle_isolated, BatchRules, Epilogue,
    ReclaimStat, ScanControl, ALL_ZONES, DEACTIVATE_ANON, DEACTIVATE_FILE,
};
use crate::mm::vmstat::{Ev, Lru};
use crate::mm::workingset::{classic_eviction, classic_refault, workingset_activation};
use crate::mm::{int_sqrt, Mm};
use crate::policy::seam::{folio_of, Folio as SeamFolio};

/// Adds `delta` to the size of `lru` in the zone of `pfn`, a zone below the highest (of node
/// 0, the only node with several zones: its lruvec's).
#[inline]
fn lower_zone_lru_size_add(mm: &mut Mm, memcg: MemcgId, lru: Lru, pfn: Pfn, delta: i64) {
    let z = mm.folios.zone_of(pfn);
    let n = &mut mm.memcgs.get_mut(memcg).lruvec.lower_zone_lru_size[lru as usize][z];
    *n = n.wrapping_add_signed(delta);
}

/// isolate_lru_folios()'s verdict on one folio taken off the tail of `list`: a folio not on
/// the LRU (a 6.12 folio waiting for activation), or mapped when unmapping is not allowed,
/// rotates to the head; any other is isolated into `taken`. Returns the pages taken.
#[inline(always)]
fn isolate_or_rotate(mm: &mut Mm, list: &mut List, memcg: MemcgId, lru: Lru, pfn: Pfn, sc: &ScanControl, taken: &mut Vec<Pfn>) -> u64 {
    let fl = mm.folios.get(pfn).flags;
    if fl & pg::LRU == 0 || (!sc.may_unmap && fl & pg::MAPPED != 0) {
        mm.folios.list_add(list, pfn);
        return 0;
    }
    let f = mm.folios.get_mut(pfn);
    f.flags = (f.flags & !pg::LRU) | pg::ISOLATED;
    let nr = f.nr_pages();
    taken.push(pfn);
    if mm.folios.below_top_zone(pfn) {
        lower_zone_lru_size_add(mm, memcg, lru, pfn, -(nr as i64));
    }
    nr
}

/// How far ahead of the scan position isolation prefetches folios.
const PREFETCH_AHEAD: usize = 8;

/// The classic LRU: the five lists of every memcg's lruvec on every node.
#[derive(Clone, Debug)]
pub struct Classic {
    /// The lists of lruvec (memcg, nid) at `nid * nr_memcgs + memcg` ([`Classic::lv`]): node
    /// 0's are the memcgs' own indices, so a machine of one node has one set per memcg.
    lists: Vec<[List; 5]>,
    nr_memcgs: usize,
    /// A reusable buffer for isolated folios.
    scratch: Vec<Pfn>,
    /// A reusable buffer for folios isolation passes over (reclaim limited to lower zones).
    skipped: Vec<Pfn>,
    /// Memcgs whose folios another policy owns (a seam policy's cgroups, when the classic LRU
    /// is hosted by [`Ext`](crate::policy::seam::Ext)); empty when the classic LRU runs alone.
    foreign: Vec<bool>,
    /// Memcgs whose evictions are recorded in `evicted` for a policy that defers eviction
    /// to this LRU ([`Classic::set_told`]); empty when none.
    told: Vec<bool>,
    /// What those memcgs' reclaim evicted since [`Classic::take_evicted`], as each folio was
    /// when it left.
    evicted: Vec<SeamFolio>,
    /// A miniature machine's refaults at the end of its last reclaim runs, per memcg, oldest
    /// first (the window of
    /// [`Miniature::refault_window`](crate::mm::miniature::Miniature::refault_window)); empty on a full machine.
    refault_history: Vec<VecDeque<[u64; 2]>>,
}

/// The anon/file balance chosen by get_scan_count().
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanBalance {
    Equal,
    Fract,
    Anon,
    File,
}

impl Classic {
    pub fn new(nr_memcgs: usize) -> Classic {
        Classic {
            lists: (0..nr_memcgs).map(|_| Default::default()).collect(),
            nr_memcgs,
            scratch: Vec::with_capacity(SWAP_CLUSTER_MAX as usize),
            skipped: Vec::new(),
            foreign: Vec::new(),
            told: Vec::new(),
            evicted: Vec::new(),
            refault_history: vec![VecDeque::new(); nr_memcgs],
        }
    }

    /// The lists of a machine of `nr_nodes` nodes: one set per (memcg, node) lruvec
    /// (mem_cgroup_lruvec(memcg, pgdat), 6.1/6.12).
    pub fn with_nodes(mut self, nr_nodes: usize) -> Classic {
        self.lists.resize_with(self.nr_memcgs * nr_nodes.max(1), Default::default);
        self
    }

    /// The index of lruvec (`memcg`, `nid`) in [`Classic::lists`].
    #[inline(always)]
    fn lv(&self, memcg: MemcgId, nid: usize) -> usize {
        nid * self.nr_memcgs + memcg as usize
    }

    /// Leaves the folios of the memcgs marked `true` to another policy: a batched activation
    /// or the end of writeback of one of them is not the classic LRU's to handle.
    pub fn set_foreign(&mut self, foreign: Vec<bool>) {
        self.foreign = if foreign.iter().any(|&f| f) { foreign } else { Vec::new() };
    }

    /// Records the evictions of the memcgs marked `true`, for a seam policy that defers
    /// eviction to the classic LRU and hears `folio_removed` (policy/seam, "Deferring to the
    /// kernel").
    pub fn set_told(&mut self, told: Vec<bool>) {
        self.told = if told.iter().any(|&t| t) { told } else { Vec::new() };
    }

    /// The folios evicted from the recorded memcgs since the last call, oldest first.
    pub fn take_evicted(&mut self, out: &mut Vec<SeamFolio>) {
        out.append(&mut self.evicted);
    }

    /// Whether another policy owns this folio (see [`Classic::set_foreign`]).
    #[inline]
    fn is_foreign(&self, mm: &Mm, pfn: Pfn) -> bool {
        !self.foreign.is_empty() && self.foreign[mm.folio_memcg(pfn) as usize]
    }

    /// The list a folio belongs on (`folio_lru_list()`).
    fn folio_lru(mm: &Mm, pfn: Pfn) -> Lru {
        Self::folio_lru_of(mm.folios.get(pfn))
    }

    /// [`Classic::folio_lru`] of a folio already looked up.
    #[inline]
    fn folio_lru_of(f: &Folio) -> Lru {
        if f.test(pg::UNEVICTABLE) {
            Lru::Unevictable
        } else {
            Lru::of(f.is_file_lru(), f.test(pg::ACTIVE))
        }
    }

    /// Models include/linux/mm_inline.h: lruvec_add_folio() (`tail`: lruvec_add_folio_tail()),
    /// on folio_lruvec(): the lruvec of the folio's memcg on its frame's node (6.1/6.12).
    fn lruvec_add_folio(&mut self, mm: &mut Mm, pfn: Pfn, tail: bool) {
        let f = mm.folios.get(pfn);
        let (lru, memcg) = (Self::folio_lru_of(f), f.memcg);
        let nid = mm.folio_nid(pfn);
        let i = self.lv(memcg, nid);
        let list = &mut self.lists[i][lru as usize];
        if tail {
            mm.folios.list_add_tail(list, pfn);
        } else {
            mm.folios.list_add(list, pfn);
        }
        // Sizes count pages (folio_nr_pages(): a large folio of 7.3's page cache, one entry
        // on its list, counts all its pages; its zone is its head frame's).
        let nr = mm.folios.nr_pages(pfn) as i64;
        mm.update_lru_size_on(memcg, nid, lru, nr);
        if mm.folios.below_top_zone(pfn) {
            lower_zone_lru_size_add(mm, memcg, lru, pfn, nr);
        }
    }

    /// folio_mark_accessed()'s second access to an inactive, evictable folio: activate it (on
    /// its LRU, or in the per-CPU batch it waits in) and note the workingset activation.
    #[inline(never)]
    fn activate_on_second_access(&mut self, mm: &mut Mm, pfn: Pfn, flags: u32) {
        if flags & pg::LRU != 0 {
            folio_activate(mm, self, pfn);
        } else {
            lru_cache_activate_folio(mm, pfn);
        }
        mm.folios.clear(pfn, pg::REFERENCED);
        workingset_activation(mm, pfn);
    }

    /// Models include/linux/mm_inline.h: lruvec_del_folio().
    fn lruvec_del_folio(&mut self, mm: &mut Mm, pfn: Pfn) {
        let f = mm.folios.get(pfn);
        let (lru, memcg) = (Self::folio_lru_of(f), f.memcg);
        let nid = mm.folio_nid(pfn);
        let i = self.lv(memcg, nid);
        mm.folios.list_del(&mut self.lists[i][lru as usize], pfn);
        let nr = mm.folios.nr_pages(pfn) as i64;
        mm.update_lru_size_on(memcg, nid, lru, -nr);
        if mm.folios.below_top_zone(pfn) {
            lower_zone_lru_size_add(mm, memcg, lru, pfn, -nr);
        }
    }

    /// Models mm/vmscan.c: shrink_lruvec() with MGLRU off (6.1, 6.12, 7.3) from its scan
    /// loop on: `nr` left to scan of each list, `targets` get_scan_count()'s, and
    /// `nr_reclaimed` what this call reclaimed before the loop (0 but for cache_ext's
    /// fallback, [`crate::policy::seam::Ext`]), added to `sc.nr_reclaimed` at the end.
    pub fn shrink_lruvec_from(&mut self, mm: &mut Mm, memcg: MemcgId, sc: &mut ScanControl, mut nr: [u64; 4], targets: [u64; 4], mut nr_reclaimed: u64) {
        let nr_to_reclaim = sc.nr_to_reclaim;
        let proportional = !sc.cgroup_reclaim() && !sc.is_kswapd() && sc.priority == DEF_PRIORITY;
        while nr[Lru::InactiveAnon as usize] > 0 || nr[Lru::ActiveFile as usize] > 0 || nr[Lru::InactiveFile as usize] > 0 {
            for lru in Lru::EVICTABLE {
                let i = lru as usize;
                if nr[i] > 0 {
                    let n = nr[i].min(SWAP_CLUSTER_MAX);
                    nr[i] -= n;
                    nr_reclaimed += self.shrink_list(mm, memcg, lru, n, sc);
                }
            }
            mm.cond_resched(self);
            if nr_reclaimed < nr_to_reclaim || proportional {
                continue;
            }
            // The target is met: stop the type with less left to scan and scale the other
            // down to the same fraction of its original target.
            let nr_file = nr[2] + nr[3];
            let nr_anon = nr[0] + nr[1];
            if nr_file == 0 || nr_anon == 0 {
                break;
            }
            let (stop, other, percentage) =
                if nr_file > nr_anon { (0, 2, nr_anon * 100 / (targets[0] + targets[1] + 1)) } else { (2, 0, nr_file * 100 / (targets[2] + targets[3] + 1)) };
            nr[stop] = 0;
            nr[stop + 1] = 0;
            for l in [other, other + 1] {
                let scanned = targets[l] - nr[l];
                nr[l] = targets[l] * (100 - percentage) / 100;
                nr[l] -= nr[l].min(scanned);
            }
        }
        sc.nr_reclaimed += nr_reclaimed;
        if mm.swap.total() > 0 && Self::inactive_is_low(mm, memcg, Lru::InactiveAnon) {
            self.shrink_active_list(mm, memcg, Lru::ActiveAnon, SWAP_CLUSTER_MAX, sc);
        }
    }

    /// Models cache_ext's isolation of a policy's candidate (linux-cache-ext 7442a92, 6.6.8:
    /// mm/vmscan.c: page_cache_ext_isolate_folio(), then reclaim_pages()'s
    /// folio_clear_active()): an evictable folio on one of its memcg's lists leaves it, from
    /// wherever it is on the list, and loses PG_active. False if it is on no list.
    pub fn isolate_folio(&mut self, mm: &mut Mm, pfn: Pfn) -> bool {
        if mm.folios.get(pfn).flags & (pg::LRU | pg::ISOLATED | pg::UNEVICTABLE) != pg::LRU {
            return false;
        }
        self.lruvec_del_folio(mm, pfn);
        mm.folios.clear(pfn, pg::LRU | pg::ACTIVE);
        mm.folios.set(pfn, pg::ISOLATED);
        true
    }

    /// Models mm/swap.c: folio_putback_lru() of an isolated folio (reclaim_folio_list()'s
    /// survivors): back at the head of its list, active if reclaim activated it.
    pub fn putback_folio(&mut self, mm: &mut Mm, pfn: Pfn) {
        mm.folios.clear(pfn, pg::ISOLATED);
        mm.folios.set(pfn, pg::LRU);
        self.lruvec_add_folio(mm, pfn, false);
    }

    pub fn list_len(&self, memcg: MemcgId, lru: Lru) -> u64 {
        self.list_len_on(memcg, 0, lru)
    }

    /// The length of `lru` of lruvec (`memcg`, `nid`).
    pub fn list_len_on(&self, memcg: MemcgId, nid: usize, lru: Lru) -> u64 {
        self.lists[self.lv(memcg, nid)][lru as usize].len
    }

    /// The pages of a list from the most recently added to the oldest (for tests).
    pub fn list_pages(&self, mm: &Mm, memcg: MemcgId, lru: Lru) -> Vec<Pfn> {
        mm.folios.iter_list(&self.lists[self.lv(memcg, 0)][lru as usize]).collect()
    }

    /// Models mm/vmscan.c: isolate_lru_folios(): take up to `nr_to_scan` folios from the
    /// tail; folios not on the LRU (a 6.12 folio waiting for activation) or mapped when
    /// unmapping is not allowed rotate to the head. Returns the taken folios, oldest first,
    /// and the number scanned. Scanned and taken count pages (folio_nr_pages()): a large
    /// folio (7.3's page cache) counts all its pages towards `nr_to_scan`, so one order-5
    /// folio fills a SWAP_CLUSTER_MAX batch.
    fn isolate_lru_folios(&mut self, mm: &mut Mm, memcg: MemcgId, lru: Lru, nr_to_scan: u64, sc: &ScanControl) -> (Vec<Pfn>, u64) {
        if sc.reclaim_idx != ALL_ZONES {
            return self.isolate_lru_folios_of_lower_zones(mm, memcg, lru, nr_to_scan, sc);
        }
        let mut taken = std::mem::take(&mut self.scratch);
        taken.clear();
        let (mut scan, mut nr_taken) = (0, 0);
        let i = self.lv(memcg, sc.nid);
        let list = &mut self.lists[i][lru as usize];
        while scan < nr_to_scan {
            mm.folios.prefetch_from_tail(list, PREFETCH_AHEAD);
            let Some(pfn) = mm.folios.list_del_tail(list) else { break };
            scan += mm.folios.nr_pages(pfn);
            nr_taken += isolate_or_rotate(mm, list, memcg, lru, pfn, sc, &mut taken);
        }
        mm.update_lru_size_on(memcg, sc.nid, lru, -(nr_taken as i64));
        (taken, scan)
    }

    /// [`Self::isolate_lru_folios`] for reclaim limited to the zones up to `sc.reclaim_idx`
    /// (kswapd balancing a lower zone, 6.1/6.12): folios of higher zones are passed over,
    /// counted as scanned and as pgskip of their zone but not towards `nr_to_scan`, and go
    /// to the head of the list in the order met, which disturbs the LRU order as the kernel's
    /// splice does.
    #[inline(never)]
    fn isolate_lru_folios_of_lower_zones(&mut self, mm: &mut Mm, memcg: MemcgId, lru: Lru, nr_to_scan: u64, sc: &ScanControl) -> (Vec<Pfn>, u64) {
        let mut taken = std::mem::take(&mut self.scratch);
        taken.clear();
        let mut skipped = std::mem::take(&mut self.skipped);
        skipped.clear();
        let (mut scan, mut total_scan, mut nr_taken) = (0, 0, 0);
        let i = self.lv(memcg, sc.nid);
        let list = &mut self.lists[i][lru as usize];
        while scan < nr_to_scan {
            let Some(pfn) = mm.folios.list_del_tail(list) else { break };
            let nr = mm.folios.nr_pages(pfn);
            total_scan += nr;
            if mm.folios.zone_of(pfn) > sc.reclaim_idx {
                skipped.push(pfn);
                continue;
            }
            scan += nr;
            nr_taken += isolate_or_rotate(mm, list, memcg, lru, pfn, sc, &mut taken);
        }
        // By the zone's index in the lruvec's node (machine zone less the node's first).
        let first = mm.node_zones(sc.nid).start;
        let mut pgskip = [0u64; MAX_ZONES];
        for &pfn in &skipped {
            mm.folios.list_add(list, pfn);
            pgskip[mm.folios.zone_of(pfn) - first] += mm.folios.nr_pages(pfn);
        }
        for (z, &n) in pgskip.iter().enumerate() {
            if n > 0 {
                let ev = mm.nodes[sc.nid].zones.z[z].pgskip;
                mm.count(ev, n);
            }
        }
        self.skipped = skipped;
        mm.update_lru_size_on(memcg, sc.nid, lru, -(nr_taken as i64));
        (taken, total_scan)
    }

    /// Models mm/vmscan.c: lruvec_lru_size() (6.1/6.12): the pages of a list of lruvec
    /// (`memcg`, `nid`) in the zones up to `reclaim_idx` (a node after the first has
    /// ZONE_NORMAL alone, above every lower classzone of node 0).
    #[inline]
    fn lruvec_lru_size(mm: &Mm, memcg: MemcgId, nid: usize, lru: Lru, reclaim_idx: usize) -> u64 {
        let lv = mm.memcgs.get(memcg).lruvec_of(nid);
        if reclaim_idx >= mm.nodes[0].zones.top() {
            return lv.lru_size[lru as usize];
        }
        if nid > 0 {
            return 0;
        }
        lv.lower_zone_lru_size[lru as usize][..=reclaim_idx].iter().sum()
    }

    /// Models mm/vmscan.c: inactive_is_low() on the rstat counters of the lruvec. (A
    /// miniature machine takes the ratio of the full machine's lists, mm/miniature.rs.)
    // Inlined: kswapd asks it two or three times per priority step.
    #[inline]
    pub fn inactive_is_low(mm: &Mm, memcg: MemcgId, inactive_lru: Lru) -> bool {
        let active_lru = if inactive_lru == Lru::InactiveAnon { Lru::ActiveAnon } else { Lru::ActiveFile };
        let inactive = mm.memcgs.page_state(memcg, StatItem::Lru(inactive_lru));
        let active = mm.memcgs.page_state(memcg, StatItem::Lru(active_lru));
        let gb = mm.unscaled(inactive + active) >> (30 - 12);
        let ratio = if gb > 0 { int_sqrt(10 * gb) } else { 1 };
        inactive * ratio < active
    }

    /// Models mm/vmscan.c: prepare_scan_count() (6.1), prepare_scan_control() (6.12) and the
    /// equivalent start of 5.7's shrink_node(): may_deactivate, cache_trim_mode, file_is_tiny.
    pub(crate) fn prepare_scan_count(mm: &mut Mm, sc: &mut ScanControl) {
        let target = sc.target;
        let now = mm.now();
        if mm.cfg.kernel.prepare_scan_flush_ratelimited() {
            mm.memcgs.flush_stats_ratelimited(target, now)
        } else {
            mm.memcgs.flush_stats(target, now)
        }
        let lv = mm.memcgs.get(target).lruvec_of(sc.nid);
        sc.anon_cost = lv.anon_cost;
        sc.file_cost = lv.file_cost;
        let refaults = lv.refaults;
        if sc.force_deactivate {
            sc.may_deactivate = DEACTIVATE_ANON | DEACTIVATE_FILE;
        } else {
            let io_cost = mm.cfg.kernel.io_cost_balance();
            let anon_refaulted = io_cost && mm.memcgs.page_state(target, StatItem::WorkingsetActivateAnon) != refaults[0];
            let deactivate_anon = anon_refaulted || Self::inactive_is_low(mm, target, Lru::InactiveAnon);
            let file_refaulted = mm.memcgs.page_state(target, StatItem::WorkingsetActivateFile) != refaults[1];
            let deactivate_file = file_refaulted || Self::inactive_is_low(mm, target, Lru::InactiveFile);
            sc.may_deactivate = (deactivate_anon as u8 * DEACTIVATE_ANON) | (deactivate_file as u8 * DEACTIVATE_FILE);
        }
        let file = mm.memcgs.page_state(target, StatItem::Lru(Lru::InactiveFile));
        sc.cache_trim_mode = (mm.unscaled(file) >> sc.priority) != 0 && sc.may_deactivate & DEACTIVATE_FILE == 0 && !sc.no_cache_trim_mode;
        if !sc.cgroup_reclaim() {
            // The cheap tests first: without inactive anon pages (every trace replay) the file
            // and free page sums are never needed.
            let nid = sc.nid;
            let anon = mm.pgdat_lru_size(nid, Lru::InactiveAnon);
            sc.file_is_tiny = sc.may_deactivate & DEACTIVATE_ANON == 0 && (mm.unscaled(anon) >> sc.priority) != 0 && {
                let file = mm.pgdat_lru_size(nid, Lru::ActiveFile) + mm.pgdat_lru_size(nid, Lru::InactiveFile);
                file + mm.node_free(nid) <= mm.nodes[nid].zones.high_wmarks()
            };
        }
    }

    /// Models mm/vmscan.c: get_scan_count(): how many pages of each list to scan at this
    /// priority. 6.1/6.12 balance anon against file by the IO costs recorded at the reclaim
    /// root; 5.7 by the scanned/rotated ratios of this lruvec.
    pub fn get_scan_count(mm: &mut Mm, memcg: MemcgId, sc: &mut ScanControl) -> ([u64; 4], ScanBalance) {
        let (mut nr, balance) = Self::get_scan_count_full(mm, memcg, sc);
        // A miniature machine scans R of what the full machine would (mm/miniature.rs).
        if let Some(m) = mm.miniature.as_mut() {
            for lru in Lru::EVICTABLE {
                nr[lru as usize] = m.scale(nr[lru as usize]);
            }
        }
        (nr, balance)
    }

    /// [`Classic::get_scan_count`] as the full machine counts it: on a miniature machine,
    /// the targets of the lists R times longer, before they are scaled back.
    // Each branch is one of the kernel's rules with its own reason, kept apart even where two
    // reach the same balance.
    #[allow(clippy::if_same_then_else)]
    pub fn get_scan_count_full(mm: &mut Mm, memcg: MemcgId, sc: &mut ScanControl) -> ([u64; 4], ScanBalance) {
        let swappiness = sc.swappiness(mm) as u64;
        let balance = if !sc.may_swap || !mm.can_swap() {
            ScanBalance::File
        } else if sc.cgroup_reclaim() && swappiness == 0 {
            ScanBalance::File
        } else if sc.priority == 0 && swappiness != 0 {
            ScanBalance::Equal
        } else if sc.file_is_tiny {
            ScanBalance::Anon
        } else if sc.cache_trim_mode {
            ScanBalance::File
        } else {
            ScanBalance::Fract
        };
        let (fraction, denominator) = if balance == ScanBalance::Fract {
            if mm.cfg.kernel.io_cost_balance() {
                scan_fraction_by_cost(sc.anon_cost, sc.file_cost, swappiness)
            } else {
                scan_fraction_by_rotation(mm.memcgs.get_mut(memcg).lruvec_of_mut(sc.nid), swappiness)
            }
        } else {
            ([0, 0], 1)
        };
        let (min, low) = mm.memcgs.protection(sc.target, memcg);
        let usage = mm.memcgs.get(memcg).usage;
        let mut nr = [0u64; 4];
        for lru in Lru::EVICTABLE {
            let file = lru.is_file();
            let size = Self::lruvec_lru_size(mm, memcg, sc.nid, lru, sc.reclaim_idx);
            let scan = if min > 0 || low > 0 {
                let protection = if !sc.memcg_low_reclaim && low > min {
                    sc.memcg_low_skipped = true;
                    low
                } else {
                    min
                };
                let cgroup_size = usage.max(protection);
                let scan = size - (size as u128 * protection as u128 / (cgroup_size as u128 + 1)) as u64;
                mm.unscaled(scan).max(SWAP_CLUSTER_MAX)
            } else {
                mm.unscaled(size)
            };
            let scan = scan >> sc.priority;
            nr[lru as usize] = match balance {
                ScanBalance::Equal => scan,
                ScanBalance::Fract => (scan as u128 * fraction[file as usize] as u128 / denominator as u128) as u64,
                ScanBalance::File => {
                    if file {
                        scan
                    } else {
                        0
                    }
                }
                ScanBalance::Anon => {
                    if file {
                        0
                    } else {
                        scan
                    }
                }
            };
        }
        (nr, balance)
    }

    /// Models mm/vmscan.c: shrink_list().
    fn shrink_list(&mut self, mm: &mut Mm, memcg: MemcgId, lru: Lru, nr: u64, sc: &mut ScanControl) -> u64 {
        if lru.is_active() {
            if sc.may_deactivate & (1 << lru.is_file() as u8) != 0 {
                self.shrink_active_list(mm, memcg, lru, nr, sc);
            } else {
                sc.skipped_deactivate = true;
            }
            return 0;
        }
        self.shrink_inactive_list(mm, memcg, lru, nr, sc)
    }

    /// Models mm/vmscan.c: shrink_inactive_list() (6.1/6.12; 5.7's reclaim_stat): isolate
    /// from the tail, then the shared [`reclaim_batch`] with the classic epilogue
    /// ([`ClassicEpilogue`]).
    fn shrink_inactive_list(&mut self, mm: &mut Mm, memcg: MemcgId, lru: Lru, nr_to_scan: u64, sc: &mut ScanControl) -> u64 {
        let file = lru.is_file();
        if !throttle_isolated(mm, self, file, sc) {
            return 0;
        }
        lru_add_drain(mm, self);
        let isolated_at = mm.now();
        let (mut list, nr_scanned) = self.isolate_lru_folios(mm, memcg, lru, nr_to_scan, sc);
        let nr_taken = crate::mm::vmscan::list_pages(mm, &list);
        let mut scanned = [0; 2];
        scanned[file as usize] = nr_scanned;
        let mut epilogue = ClassicEpilogue { memcg, nid: sc.nid, file, nr_scanned };
        let reclaimed = reclaim_batch(mm, self, memcg, sc, &mut list, BatchRules::shrink_inactive_list(scanned), &mut epilogue);
        note_isolated(mm, sc.nid, file, isolated_at, nr_taken);
        self.scratch = list;
        reclaimed
    }

    /// Models mm/vmscan.c: shrink_active_list(): deactivate what is not a referenced
    /// executable file page (pagelab maps no executables, so every page is deactivated).
    fn shrink_active_list(&mut self, mm: &mut Mm, memcg: MemcgId, lru: Lru, nr_to_scan: u64, sc: &mut ScanControl) {
        let file = lru.is_file();
        lru_add_drain(mm, self);
        let isolated_at = mm.now();
        let (list, nr_scanned) = self.isolate_lru_folios(mm, memcg, lru, nr_to_scan, sc);
        // isolate_lru_folios() runs under the lruvec's lock, in proportion to what it scanned.
        mm.lru_lock_on("shrink_active_list", memcg, sc.nid, nr_scanned);
        count_reclaim(mm, memcg, sc, Ev::PgRefill, nr_scanned);
        let scan_cost = mm.cfg.costs.scan_page_ns * list.len() as u64;
        mm.cpu_in(Func::IsolateLruFolios, scan_cost);
        let mut referenced = 0;
        for &pfn in &list {
            if folio_referenced(mm, self, pfn) != 0 {
                referenced += mm.folios.nr_pages(pfn);
            }
            let f = mm.folios.get_mut(pfn);
            f.flags = (f.flags & !pg::ACTIVE) | pg::WORKINGSET;
        }
        // move_folios_to_lru() under the lock again.
        mm.lru_lock_on("shrink_active_list", memcg, sc.nid, list.len() as u64);
        move_folios_to_lru(mm, self, &list);
        // Pages, as move_folios_to_lru() returns them.
        let nr_deactivated = crate::mm::vmscan::list_pages(mm, &list);
        note_isolated(mm, sc.nid, file, isolated_at, nr_deactivated);
        mm.count_both(memcg, Ev::PgDeactivate, nr_deactivated);
        if mm.cfg.kernel.scan_rotate_ratios() {
            let rs = mm.memcgs.get_mut(memcg).lruvec_of_mut(sc.nid);
            rs.recent_scanned[file as usize] += nr_deactivated;
            rs.recent_rotated[file as usize] += referenced;
        }
        self.scratch = list;
    }
}

/// The classic LRU's part of a [`reclaim_batch`] in mm/vmscan.c: shrink_inactive_list()
/// (6.1/6.12; 5.7's reclaim_stat): one list of one type, scanned `nr_scanned`.
pub struct ClassicEpilogue {
    pub memcg: MemcgId,
    /// The node of the lruvec shrunk.
    pub nid: usize,
    pub file: bool,
    pub nr_scanned: u64,
}

impl Epilogue<Classic> for ClassicEpilogue {
    /// 5.7's reclaim_stat: `recent_scanned` += the folios taken.
    fn before_shrink(&mut self, mm: &mut Mm, _: &mut Classic, list: &[Pfn]) {
        if mm.cfg.kernel.scan_rotate_ratios() {
            mm.memcgs.get_mut(self.memcg).lruvec_of_mut(self.nid).recent_scanned[self.file as usize] += list.len() as u64;
        }
    }

    /// 5.7's `recent_rotated` += the activated survivors; then mm/vmscan.c:
    /// move_folios_to_lru() (6.1/6.12): activated ones to the active list, the rest to the
    /// inactive head.
    fn putback(&mut self, mm: &mut Mm, p: &mut Classic, list: &mut Vec<Pfn>) {
        if mm.cfg.kernel.scan_rotate_ratios() {
            let rotated = list.iter().filter(|&&pfn| mm.folios.test(pfn, pg::ACTIVE)).count() as u64;
            mm.memcgs.get_mut(self.memcg).lruvec_of_mut(self.nid).recent_rotated[self.file as usize] += rotated;
        }
        move_folios_to_lru(mm, p, list);
        list.clear();
    }

    /// Models mm/swap.c: lru_note_cost() (6.1/6.12) as shrink_inactive_list() calls it: the
    /// pages written and the pages scanned but not reclaimed.
    fn note_cost(&mut self, mm: &mut Mm, reclaimed: u64, stat: &ReclaimStat) {
        lru_note_cost(mm, self.memcg, self.nid, self.file, stat.nr_pageout, self.nr_scanned - reclaimed);
    }
}

/// get_scan_count()'s SCAN_FRACT for 5.8+: the list with the lower recorded cost gets the
/// larger share; the `total +` terms damp the ratio.
pub fn scan_fraction_by_cost(anon_cost: u64, file_cost: u64, swappiness: u64) -> ([u64; 2], u64) {
    let total = anon_cost + file_cost;
    let anon = total + anon_cost;
    let file = total + file_cost;
    let total = anon + file;
    let ap = swappiness * (total + 1) / (anon + 1);
    let fp = (200 - swappiness) * (total + 1) / (file + 1);
    ([ap, fp], (ap + fp).max(1))
}

/// 5.7's get_scan_count() SCAN_FRACT: pressure inversely proportional to the share of
/// recently scanned pages that were rotated (recently referenced), halving the history when
/// it exceeds a quarter of the list.
fn scan_fraction_by_rotation(lv: &mut crate::mm::memcontrol::Lruvec, swappiness: u64) -> ([u64; 2], u64) {
    let anon = lv.lru_size[Lru::ActiveAnon as usize] + lv.lru_size[Lru::InactiveAnon as usize];
    let file = lv.lru_size[Lru::ActiveFile as usize] + lv.lru_size[Lru::InactiveFile as usize];
    for (ty, size) in [(0, anon), (1, file)] {
        if lv.recent_scanned[ty] > size / 4 {
            lv.recent_scanned[ty] /= 2;
            lv.recent_rotated[ty] /= 2;
        }
    }
    let ap = swappiness * (lv.recent_scanned[0] + 1) / (lv.recent_rotated[0] + 1);
    let fp = (200 - swappiness) * (lv.recent_scanned[1] + 1) / (lv.recent_rotated[1] + 1);
    ([ap, fp], ap + fp + 1)
}

impl Policy for Classic {
    fn caps(&self) -> Caps {
        Caps { reclaims_by_zone: true, large_folios: true, lists_per_node: true, reclaim_yields: true, ..Caps::DEFAULT }
    }

    fn name(&self) -> &'static str {
        "classic"
    }

    /// Models mm/swap.c: lru_add_fn() and the putback of move_folios_to_lru(); 5.7 also
    /// fed each new page to its reclaim_stat (update_page_reclaim_stat()).
    fn lru_add(&mut self, mm: &mut Mm, pfn: Pfn) {
        self.lruvec_add_folio(mm, pfn, false);
    }

    fn lru_del(&mut self, mm: &mut Mm, pfn: Pfn) {
        self.lruvec_del_folio(mm, pfn);
        mm.folios.clear(pfn, pg::LRU);
    }

    /// Models mm/swap.c: folio_mark_accessed() with MGLRU off (identical in 5.7, 6.1 and
    /// 6.12): the first access sets PG_referenced, the second activates.
    /// (The common cases, a first access or one to an active folio, inline; the activation
    /// out of line.)
    #[inline]
    fn mark_accessed(&mut self, mm: &mut Mm, pfn: Pfn) {
        let flags = mm.folios.get(pfn).flags;
        if flags & pg::REFERENCED == 0 {
            mm.folios.set(pfn, pg::REFERENCED);
        } else if flags & (pg::UNEVICTABLE | pg::ACTIVE) == 0 {
            self.activate_on_second_access(mm, pfn, flags);
        }
    }

    /// Models mm/swap.c: folio_activate_fn().
    fn activate(&mut self, mm: &mut Mm, pfn: Pfn) {
        if self.is_foreign(mm, pfn) {
            return;
        }
        let f = *mm.folios.get(pfn);
        if f.test(pg::ACTIVE) || f.test(pg::UNEVICTABLE) {
            return;
        }
        self.lruvec_del_folio(mm, pfn);
        mm.folios.set(pfn, pg::ACTIVE);
        self.lruvec_add_folio(mm, pfn, false);
        mm.count_both(f.memcg, Ev::PgActivate, f.nr_pages());
        if mm.cfg.kernel.scan_rotate_ratios() {
            let nid = mm.folio_nid(pfn);
            let rs = mm.memcgs.get_mut(f.memcg).lruvec_of_mut(nid);
            rs.recent_scanned[f.lru_type()] += 1;
            rs.recent_rotated[f.lru_type()] += 1;
        }
    }

    /// Models mm/swap.c: lru_move_tail_fn(): to the tail of the inactive list.
    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn) {
        if self.is_foreign(mm, pfn) {
            return;
        }
        self.lruvec_del_folio(mm, pfn);
        mm.folios.clear(pfn, pg::ACTIVE);
        self.lruvec_add_folio(mm, pfn, true);
    }

    /// Models mm/workingset.c: workingset_eviction() (6.1/6.12), under __remove_mapping();
    /// the folio is recorded first when its memcg's policy defers to this LRU.
    fn workingset_eviction(&mut self, mm: &mut Mm, pfn: Pfn, target: MemcgId) -> Shadow {
        if !self.told.is_empty() && self.told[mm.folio_memcg(pfn) as usize] {
            self.evicted.push(folio_of(mm, pfn));
        }
        classic_eviction(mm, pfn, target)
    }

    fn workingset_refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow) {
        classic_refault(mm, pfn, shadow);
    }

    /// Models mm/vmscan.c: shrink_lruvec() with MGLRU off.
    fn shrink_lruvec(&mut self, mm: &mut Mm, memcg: MemcgId, sc: &mut ScanControl) {
        let (nr, _) = Self::get_scan_count(mm, memcg, sc);
        self.shrink_lruvec_from(mm, memcg, sc, nr, nr, 0);
    }

    /// Models mm/vmscan.c: shrink_node() with MGLRU off: prepare_scan_count(), then the
    /// walk over the target's memcgs.
    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        Self::prepare_scan_count(mm, sc);
        shrink_node_memcgs(mm, self, sc);
    }

    /// Models mm/vmscan.c: kswapd_age_node() with MGLRU off: deactivate anon pages of every
    /// memcg when the root's inactive anon list is low.
    fn kswapd_age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        if mm.swap.total() == 0 || !Self::inactive_is_low(mm, crate::mm::memcontrol::ROOT_MEMCG, Lru::InactiveAnon) {
            return;
        }
        for memcg in mm.memcgs.preorder.clone() {
            self.shrink_active_list(mm, memcg, Lru::ActiveAnon, SWAP_CLUSTER_MAX, sc);
        }
    }

    /// Models mm/vmscan.c: snapshot_refaults() (6.1/6.12) of the target's lruvec on node `nid`.
    fn snapshot_refaults(&mut self, mm: &mut Mm, target: MemcgId, nid: usize) {
        let anon = mm.memcgs.page_state(target, StatItem::WorkingsetActivateAnon);
        let file = mm.memcgs.page_state(target, StatItem::WorkingsetActivateFile);
        let mut refaults = [anon, file];
        // A miniature machine's run is R times shorter than the full machine's: it compares
        // against the refaults of a window of runs as long as one full run
        // (mm/miniature.rs).
        if let Some(m) = mm.miniature.as_ref() {
            let history = &mut self.refault_history[target as usize];
            history.push_back(refaults);
            if history.len() > m.refault_window() {
                history.pop_front();
            }
            refaults = history[0];
        }
        mm.memcgs.get_mut(target).lruvec_of_mut(nid).refaults = refaults;
    }
}

impl Inspect for Classic {
    /// Per lruvec: the list sizes, the IO costs that balance anon against file
    /// (`lru_note_cost()`), the nonresident clock and the refaults seen at the last reclaim
    /// (`snapshot_refaults()`).
    fn state(&self, mm: &Mm) -> Option<serde_json::Value> {
        let lruvecs: Vec<serde_json::Value> = mm
            .memcgs
            .preorder
            .iter()
            .map(|&memcg| {
                let cg = mm.memcgs.get(memcg);
                let lv = &cg.lruvec;
                let mut lists = serde_json::Map::new();
                for lru in Lru::ALL {
                    lists.insert(lru.vmstat_name().trim_start_matches("nr_").to_string(), lv.lru_size[lru as usize].into());
                }
                serde_json::json!({
                    "memcg": cg.path,
                    "lists": lists,
                    "anon_cost": lv.anon_cost,
                    "file_cost": lv.file_cost,
                    "nonresident_age": lv.nonresident_age,
                    "refaults_at_last_reclaim": { "anon": lv.refaults[0], "file": lv.refaults[1] },
                })
            })
            .collect();
        Some(serde_json::json!({ "lruvecs": lruvecs }))
    }

    fn state_bytes(&self) -> u64 {
        self.lists.iter().flat_map(|l| l.iter()).map(|l| l.state_bytes()).sum::<u64>() + self.scratch.capacity() as u64 * 4
    }

    fn check(&self, mm: &Mm) -> Result<(), String> {
        for (m, lists) in self.lists.iter().enumerate() {
            if !self.foreign.is_empty() && self.foreign[m] {
                continue;
            }
            for lru in Lru::ALL {
                let list = &lists[lru as usize];
                let (mut n, mut pages) = (0, 0);
                let mut lower = [0u64; MAX_ZONES];
                for pfn in mm.folios.iter_list(list) {
                    n += 1;
                    pages += mm.folios.nr_pages(pfn);
                    if mm.folios.below_top_zone(pfn) {
                        lower[mm.folios.zone_of(pfn)] += mm.folios.nr_pages(pfn);
                    }
                    let f = mm.folios.get(pfn);
                    if f.memcg as usize != m {
                        return Err(format!("pfn {pfn} of memcg {} on memcg {m}'s list", f.memcg));
                    }
                    if !f.test(pg::LRU) && mm.cfg.kernel < Kernel::V6_12 {
                        return Err(format!("pfn {pfn} on {lru:?} without PG_lru"));
                    }
                    if Self::folio_lru(mm, pfn) != lru {
                        return Err(format!("pfn {pfn} on {lru:?} but its flags say {:?}", Self::folio_lru(mm, pfn)));
                    }
                }
                if n != list.len {
                    return Err(format!("memcg {m} {lru:?}: list has {n} pages, length says {}", list.len));
                }
                if pages != mm.memcgs.get(m as MemcgId).lruvec.lru_size[lru as usize] {
                    return Err(format!("memcg {m} {lru:?}: lru_size disagrees with the list"));
                }
                let counted = mm.memcgs.get(m as MemcgId).lruvec.lower_zone_lru_size[lru as usize];
                if lower != counted {
                    return Err(format!("memcg {m} {lru:?}: the list holds {lower:?} pages in the lower zones, the sizes say {counted:?}"));
                }
            }
        }
        Ok(())
    }
}
