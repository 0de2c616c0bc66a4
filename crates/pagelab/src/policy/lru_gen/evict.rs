//! Eviction (mm/vmscan.c): the PID controller that picks the type and the tiers to protect,
//! sort_folio()/isolate_folio()/scan_folios() over the oldest generation, and evict_folios()
//! with its retry of clean folios.

use super::gen::{folio_gen, gen_of, PREFETCH_AHEAD, REFS_ALL, REFS_FLAGS_6_14};
use super::{LruGen, LvId, MAX_LRU_BATCH, MAX_NR_TIERS, MIN_LRU_BATCH, MIN_NR_GENS};
use crate::mm::folio::{pg, Pfn, MAX_ZONES};
use crate::mm::profile::Func;
use crate::mm::vmscan::{count_pgscan, count_reclaim, move_folios_to_lru, reclaim_batch, BatchRules, Epilogue, ReclaimStat, ScanControl, ALL_ZONES};
use crate::mm::vmstat::Ev;
use crate::mm::Mm;

/// `struct ctrl_pos`: a refault rate (refaulted / total) with a gain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtrlPos {
    pub refaulted: u64,
    pub total: u64,
    pub gain: u64,
}

/// Models mm/vmscan.c: positive_ctrl_err() (6.1/6.12): true when the process variable's
/// refault rate is not above the set point's (so `pv` need not be protected / may be
/// evicted); too few refaults (< MIN_LRU_BATCH) count as no error.
pub fn positive_ctrl_err(sp: CtrlPos, pv: CtrlPos) -> bool {
    pv.refaulted < MIN_LRU_BATCH
        || pv.refaulted as u128 * (sp.total + MIN_LRU_BATCH) as u128 * sp.gain as u128 <= (sp.refaulted + 1) as u128 * pv.total as u128 * pv.gain as u128
}

impl LruGen {
    /// Models mm/vmscan.c: read_ctrl_pos() (6.1/6.12, one history slot): averages plus the
    /// current generation's counters; tiers above 0 count protected folios in the total.
    ///
    /// 7.3 (6.14 on) also counts tier 0's protected folios, and `tier == MAX_NR_TIERS` sums
    /// every tier (get_type_to_scan()).
    pub fn read_ctrl_pos(&self, k: LvId, ty: usize, tier: usize, gain: u64) -> CtrlPos {
        let lv = self.lrugen(k);
        let (mut refaulted, mut total) = (0, 0);
        for t in tier % MAX_NR_TIERS..=tier.min(MAX_NR_TIERS - 1) {
            refaulted += lv.avg_refaulted[ty][t] + lv.refaulted[ty][t];
            total += lv.avg_total[ty][t] + lv.evicted[ty][t] + lv.protected_in(ty, t);
        }
        CtrlPos { refaulted, total, gain }
    }

    /// Models mm/vmscan.c: get_tier_idx(): protect the tiers whose refault rate (gain 2)
    /// exceeds tier 0's (gain 1); returns the highest tier to evict.
    /// 7.3 (6.14 on, [`Kernel::lru_gen_type_by_all_tiers`]) uses gains 2:3.
    ///
    /// [`Kernel::lru_gen_type_by_all_tiers`]: crate::kernel::Kernel::lru_gen_type_by_all_tiers
    pub fn get_tier_idx(&self, k: LvId, ty: usize) -> usize {
        let (sp_gain, pv_gain) = if self.kernel.lru_gen_type_by_all_tiers() { (2, 3) } else { (1, 2) };
        let sp = self.read_ctrl_pos(k, ty, 0, sp_gain);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(k, ty, tier, pv_gain);
            if !positive_ctrl_err(sp, pv) {
                break;
            }
            tier += 1;
        }
        tier - 1
    }

    /// Models mm/vmscan.c: get_type_to_scan(): evict file unless its tier-0 refault rate,
    /// weighted by 200 - swappiness against anon's swappiness, is the higher; also picks
    /// the tier against the other type's tier 0.
    pub fn get_type_to_scan(&self, k: LvId, swappiness: u64) -> (usize, usize) {
        if self.kernel.lru_gen_type_by_all_tiers() {
            return (self.get_type_to_scan_6_14(k, swappiness), self.get_tier_idx(k, 0));
        }
        let gain = [swappiness, 200 - swappiness];
        let sp = self.read_ctrl_pos(k, 0, 0, gain[0]);
        let pv = self.read_ctrl_pos(k, 1, 0, gain[1]);
        let ty = positive_ctrl_err(sp, pv) as usize;
        let sp = self.read_ctrl_pos(k, 1 - ty, 0, gain[1 - ty]);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(k, ty, tier, gain[ty]);
            if !positive_ctrl_err(sp, pv) {
                break;
            }
            tier += 1;
        }
        (ty, tier - 1)
    }

    /// Models mm/vmscan.c: get_type_to_scan() of 7.3.4 (6.14 on,
    /// [`Kernel::lru_gen_type_by_all_tiers`]): file below swappiness 2, anon at 200, else
    /// anon unless its refault rate summed over all tiers (gain swappiness) is above file's
    /// (gain 200 - swappiness).
    ///
    /// [`Kernel::lru_gen_type_by_all_tiers`]: crate::kernel::Kernel::lru_gen_type_by_all_tiers
    pub fn get_type_to_scan_6_14(&self, k: LvId, swappiness: u64) -> usize {
        if swappiness <= 1 {
            return 1;
        }
        if swappiness >= 200 {
            return 0;
        }
        let sp = self.read_ctrl_pos(k, 0, MAX_NR_TIERS, swappiness);
        let pv = self.read_ctrl_pos(k, 1, MAX_NR_TIERS, 200 - swappiness);
        positive_ctrl_err(sp, pv) as usize
    }

    /// Models mm/vmscan.c: sort_folio() (6.1/6.12 with the Dec-2023 fix): a folio the walk
    /// promoted moves to its generation's list; a folio in a protected tier (or with the
    /// maximal refs) moves to min_seq + 1 and counts as protected (6.1 also counts it in
    /// workingset_activate); a folio of a zone above `reclaim_idx` moves to the next
    /// generation; a folio locked, under writeback or dirty (file) moves to the next
    /// generation with PG_reclaim. True: handled, not to be isolated.
    fn sort_folio(&mut self, mm: &mut Mm, pfn: Pfn, tier_idx: usize, reclaim_idx: usize) -> bool {
        let f = *mm.folios.get(pfn);
        let ty = f.lru_type();
        let memcg = f.memcg;
        let (k, _) = Self::folio_lruvec(mm, pfn);
        let gen = folio_gen(f.flags).expect("a folio on a generation list has a generation");
        let min_gen = gen_of(self.lrugen(k).min_seq[ty]);
        if gen != min_gen {
            self.relink(mm, pfn, gen, false);
            return true;
        }
        let (_, tier, lazy) = self.refs_tier(f.flags);
        if tier > tier_idx || lazy {
            let v7_3 = self.kernel.lru_gen_workingset_top_tier();
            let new_gen = self.folio_inc_gen(mm, pfn, false);
            // 7.3 moves it to the head of the next generation (list_move), 6.12 to the tail.
            self.relink(mm, pfn, new_gen, !v7_3);
            // By the folio's pages (`delta = folio_nr_pages()`).
            if !(v7_3 && lazy) {
                *self.lrugen_mut(k).protected_mut(ty, tier) += f.nr_pages();
            }
            if !self.kernel.lru_gen_counts_every_refault() {
                let e = if ty == 1 { Ev::WorkingsetActivateFile } else { Ev::WorkingsetActivateAnon };
                crate::mm::workingset::count_workingset(mm, memcg, e, f.nr_pages());
            }
            return true;
        }
        // Ineligible: a folio of a zone above the reclaim's highest zone (kswapd balancing a
        // lower zone) moves to the next generation's tail.
        if reclaim_idx != ALL_ZONES && mm.folios.zone_of(pfn) > reclaim_idx {
            let new_gen = self.folio_inc_gen(mm, pfn, false);
            self.relink(mm, pfn, new_gen, true);
            return true;
        }
        // 7.3 (7.2's dirty handling) lets such folios through to shrink_folio_list().
        if self.kernel.lru_gen_evict_handles_writeback() {
            return false;
        }
        let locked = f.test(pg::LOCKED) && !crate::mm::filemap::folio_trylock(mm, pfn);
        if locked || f.test(pg::WRITEBACK) || (ty == 1 && f.test(pg::DIRTY)) {
            let new_gen = self.folio_inc_gen(mm, pfn, true);
            self.relink(mm, pfn, new_gen, false);
            return true;
        }
        false
    }

    /// Models mm/vmscan.c: isolate_folio(): 6.1 needs may_writepage (and __GFP_IO) to take a
    /// dirty folio or anon not yet in the swap cache; 6.12 only __GFP_IO. An unreferenced
    /// folio loses its access history; PG_reclaim and PG_referenced are cleared. A folio
    /// whose PG_lru a per-CPU batch holds (6.12's folio_activate()) fails
    /// folio_test_clear_lru() and is skipped.
    fn isolate_folio(&mut self, mm: &mut Mm, pfn: Pfn, sc: &ScanControl) -> bool {
        let f = *mm.folios.get(pfn);
        if !f.test(pg::LRU) {
            return false;
        }
        if !self.kernel.lru_gen_isolate_needs_io_only() {
            if !sc.may_unmap && f.test(pg::MAPPED) {
                return false;
            }
            let needs_io = f.test(pg::DIRTY) || (!f.is_file_lru() && !f.test(pg::SWAPCACHE));
            if !sc.may_writepage && needs_io {
                return false;
            }
        }
        {
            // 7.3 (6.14 on) clears only the LRU_REFS field of an unreferenced folio and keeps
            // PG_reclaim and PG_referenced for shrink_folio_list().
            let v7_3 = self.kernel.lru_gen_workingset_top_tier();
            let fm = mm.folios.get_mut(pfn);
            if v7_3 {
                if fm.flags & pg::REFERENCED == 0 {
                    fm.flags &= !pg::REFS_MASK;
                }
                fm.flags &= !pg::LRU;
            } else {
                if fm.flags & pg::REFERENCED == 0 {
                    fm.flags &= !REFS_ALL;
                }
                fm.flags &= !(pg::RECLAIM | pg::REFERENCED | pg::LRU);
            }
            fm.flags |= pg::ISOLATED;
        }
        self.del_folio(mm, pfn, true);
        true
    }

    /// Models mm/vmscan.c: scan_folios() (6.1/6.12): walk the oldest generation of `ty`, one
    /// zone's list at a time from its tail, sorting or isolating folios, until 64 are
    /// isolated or the 4096 budget is spent. Folios that can be neither go back to the head
    /// of their zone's list. The zones are taken in turn from `sc->reclaim_idx` downwards,
    /// then from the highest zone down to the one above reclaim_idx (the kernel's
    /// `(reclaim_idx + i) % MAX_NR_ZONES`). Reclaim for user pages has reclaim_idx
    /// ZONE_MOVABLE, above every zone a machine has, so the highest zone comes first and
    /// ZONE_DMA last; a lower zone's folios of the generation are reached only once the
    /// higher zones' lists of the generation are empty (or the higher zone's list gives too
    /// few folios). kswapd balancing a lower zone (its classzone) takes that zone first, and
    /// sort_folio() moves the higher zones' folios on to the next generation. Counts pgscan
    /// (isolated) and pgrefill (sorted). Returns the folios scanned, or 0 if none could be
    /// isolated with budget left.
    ///
    /// `nr_to_scan` bounds the folios looked at: MAX_LRU_BATCH up to 6.12, the loop's batch
    /// (at most MIN_LRU_BATCH) in 7.3, whose scan_folios() also returns what it scanned
    /// whether or not it isolated anything ([`Kernel::lru_gen_scan_budget_up_front`]).
    ///
    /// [`Kernel::lru_gen_scan_budget_up_front`]: crate::kernel::Kernel::lru_gen_scan_budget_up_front
    #[allow(clippy::too_many_arguments)]
    fn scan_folios(&mut self, mm: &mut Mm, k: LvId, sc: &ScanControl, ty: usize, tier: usize, out: &mut Vec<Pfn>, nr_to_scan: u64) -> u64 {
        if self.nr_gens(k, ty) == MIN_NR_GENS as u64 {
            return 0;
        }
        let gen = gen_of(self.lrugen(k).min_seq[ty]);
        let (mut scanned, mut sorted, mut isolated) = (0u64, 0u64, 0u64);
        let mut remaining = nr_to_scan.min(MAX_LRU_BATCH);
        let mut parked = Vec::new();
        let first = sc.reclaim_idx.min(MAX_ZONES - 1);
        for zone in (0..=first).rev().chain((first + 1..MAX_ZONES).rev()) {
            let mut skipped_zone = 0u64;
            while let Some(pfn) = self.lrugen(k).lists[gen][ty][zone].tail() {
                if self.prefetch {
                    mm.folios.prefetch_from_tail(&self.lrugen(k).lists[gen][ty][zone], PREFETCH_AHEAD);
                }
                // Pages (folio_nr_pages()), but `remaining` counts folios, as scan_folios() does.
                let delta = mm.folios.nr_pages(pfn);
                scanned += delta;
                if self.sort_folio(mm, pfn, tier, sc.reclaim_idx) {
                    sorted += delta;
                } else if self.isolate_folio(mm, pfn, sc) {
                    out.push(pfn);
                    isolated += delta;
                } else {
                    // Parked off the list, then spliced back at the head (list_move to `moved`).
                    self.unlink(mm, pfn);
                    parked.push(pfn);
                    skipped_zone += delta;
                }
                remaining -= 1;
                self.scanned_locked += 1;
                if remaining == 0 || isolated.max(skipped_zone) >= MIN_LRU_BATCH {
                    break;
                }
            }
            // The parked folios go back to the head, the last parked first in line.
            for pfn in parked.drain(..) {
                self.relink_parked(mm, pfn, gen, ty);
            }
            if remaining == 0 || isolated >= MIN_LRU_BATCH {
                break;
            }
        }
        // Isolated folios pay their scan in shrink_folio_list(), as the classic LRU's do; here
        // only the ones sorted or skipped without leaving the generation lists.
        let cost = mm.cfg.costs.scan_page_ns * (scanned - isolated);
        mm.cpu_in(Func::ScanFolios, cost);
        // pgscan here, where the kernel counts it for MGLRU (the batch's Pgscan::AtIsolation).
        let mut by_type = [0; 2];
        by_type[ty] = isolated;
        count_pgscan(mm, k.memcg, sc, by_type);
        count_reclaim(mm, k.memcg, sc, Ev::PgRefill, sorted);
        if isolated > 0 || remaining == 0 || self.kernel.lru_gen_scan_budget_up_front() {
            scanned
        } else {
            0
        }
    }

    /// Puts a parked folio back at the head of its list.
    fn relink_parked(&mut self, mm: &mut Mm, pfn: Pfn, gen: usize, ty: usize) {
        mm.folios.get_mut(pfn).lru_slot = (gen * 2 + ty + 1) as u16;
        let (k, zone) = Self::folio_lruvec(mm, pfn);
        mm.folios.list_add(&mut self.lrugen_mut(k).lists[gen][ty][zone], pfn);
    }

    /// Models mm/vmscan.c: isolate_folios(): pick the type (file when swappiness is 0 or 1,
    /// anon when it is 200 or anon's oldest generation is older, else the PID controller)
    /// and fall back to the other type when nothing could be scanned. Returns (scanned, type).
    ///
    /// 7.3 ([`Kernel::lru_gen_scan_budget_up_front`]) stops once a type isolated something,
    /// and falls back to the other type only when nothing was scanned: a type scanned without
    /// isolation is scanned again. Returns the total scanned.
    ///
    /// [`Kernel::lru_gen_scan_budget_up_front`]: crate::kernel::Kernel::lru_gen_scan_budget_up_front
    fn isolate_folios(&mut self, mm: &mut Mm, k: LvId, sc: &ScanControl, swappiness: u64, out: &mut Vec<Pfn>, nr_to_scan: u64) -> (u64, usize) {
        let min_seq = self.lrugen(k).min_seq;
        let mut tier = None;
        let mut ty = if self.kernel.lru_gen_type_by_all_tiers() {
            // 7.3: get_type_to_scan() always; the tier per type (get_tier_idx()).
            self.get_type_to_scan_6_14(k, swappiness)
        } else if swappiness == 0 {
            1
        } else if min_seq[0] < min_seq[1] {
            0
        } else if swappiness == 1 {
            1
        } else if swappiness == 200 {
            0
        } else {
            let (t, tier_idx) = self.get_type_to_scan(k, swappiness);
            tier = Some(tier_idx);
            t
        };
        let mut scanned = 0;
        let budget_up_front = self.kernel.lru_gen_scan_budget_up_front();
        for _ in (swappiness == 0) as usize..2 {
            let t = tier.unwrap_or_else(|| self.get_tier_idx(k, ty));
            let before = out.len();
            let this = self.scan_folios(mm, k, sc, ty, t, out, nr_to_scan);
            if budget_up_front {
                scanned += this;
                if out.len() > before {
                    break;
                }
                if this == 0 {
                    ty = 1 - ty;
                }
                tier = None;
                continue;
            }
            scanned = this;
            if scanned > 0 {
                break;
            }
            ty = 1 - ty;
            tier = None;
        }
        (scanned, ty)
    }

    /// Models mm/vmscan.c: evict_folios() (6.1/6.12) of lruvec `k` (the memcg's on the node
    /// reclaim shrinks): isolate, drop empty generations (one lruvec lock section, held for
    /// every folio scan_folios() looked at: sorted, isolated or skipped; 6.1, 6.12 and 7.3),
    /// reclaim with the shared [`reclaim_batch`] (shrink_folio_list(), pgsteal) and
    /// [`MglruEpilogue`]: survivors that are active, referenced, mapped, locked, dirty or
    /// under writeback go to the youngest generation, clean ones get one more try. Returns
    /// the folios scanned (0: nothing more to do here).
    ///
    /// 7.3 ([`Kernel::lru_gen_scan_budget_up_front`]) scans at most `nr_to_scan` folios, drops
    /// empty generations before isolating and again after a scan, and returns what it
    /// scanned even with only MIN_NR_GENS generations left.
    ///
    /// [`Kernel::lru_gen_scan_budget_up_front`]: crate::kernel::Kernel::lru_gen_scan_budget_up_front
    pub fn evict_folios(&mut self, mm: &mut Mm, k: LvId, sc: &mut ScanControl, swappiness: u64, nr_to_scan: u64) -> u64 {
        let mut list = std::mem::take(&mut self.scratch);
        list.clear();
        self.scanned_locked = 0;
        let scanned;
        let ty;
        if self.kernel.lru_gen_scan_budget_up_front() {
            self.try_to_inc_min_seq(k, swappiness != 0);
            (scanned, ty) = self.isolate_folios(mm, k, sc, swappiness, &mut list, nr_to_scan);
            if scanned > 0 {
                self.try_to_inc_min_seq(k, swappiness != 0);
            }
        } else {
            let (mut s, t) = self.isolate_folios(mm, k, sc, swappiness, &mut list, nr_to_scan);
            s += self.try_to_inc_min_seq(k, swappiness != 0) as u64;
            if self.nr_gens(k, (swappiness == 0) as usize) == MIN_NR_GENS as u64 {
                s = 0;
            }
            (scanned, ty) = (s, t);
        }
        // The isolation ran under the lruvec's lock, for every folio scan_folios() looked at,
        // whether it isolated anything or not.
        mm.lru_lock_on("evict_folios", k.memcg, sc.nid, self.scanned_locked);
        if list.is_empty() {
            self.scratch = list;
            return scanned;
        }
        let handles_writeback = self.kernel.lru_gen_evict_handles_writeback();
        let mut epilogue = MglruEpilogue { skip_retry: false, handles_writeback };
        loop {
            // 7.3 feeds the dirty state back after the isolating pass, not after the retry.
            let rules = if handles_writeback && !epilogue.skip_retry { BatchRules::evict_folios_7_2() } else { BatchRules::evict_folios() };
            let reclaimed = reclaim_batch(mm, self, k.memcg, sc, &mut list, rules, &mut epilogue);
            sc.nr_reclaimed += reclaimed;
            if list.is_empty() {
                break;
            }
            epilogue.skip_retry = true;
        }
        if ty == 0 {
            self.need_swapping = true;
        }
        self.scratch = list;
        scanned
    }
}

/// MGLRU's part of a [`reclaim_batch`] in mm/vmscan.c: evict_folios() (6.1.192, 6.12.95).
pub struct MglruEpilogue {
    /// The one retry of clean survivors is running: every survivor now goes back.
    pub skip_retry: bool,
    /// 7.3's putback ([`Kernel::lru_gen_evict_handles_writeback`]).
    ///
    /// [`Kernel::lru_gen_evict_handles_writeback`]: crate::kernel::Kernel::lru_gen_evict_handles_writeback
    pub handles_writeback: bool,
}

impl MglruEpilogue {
    /// The survivors of evict_folios() in 7.3.4 (7.2's rework): any survivor that is not
    /// active, mapped, dirty or under writeback gets one retry (none on the retry); the others
    /// go back through move_folios_to_lru(), PG_active (and LRU_REFS_FLAGS cleared) only for
    /// those lru_gen_folio_seq() would put in the oldest generation.
    fn putback_7_2(&mut self, mm: &mut Mm, p: &mut LruGen, list: &mut Vec<Pfn>) {
        let mut clean = Vec::new();
        let mut kept = Vec::with_capacity(list.len());
        for &pfn in list.iter() {
            let f = *mm.folios.get(pfn);
            if !self.skip_retry && !f.test(pg::ACTIVE) && !f.test(pg::MAPPED) && !f.test(pg::DIRTY) && !f.test(pg::WRITEBACK) {
                clean.push(pfn);
                continue;
            }
            let ty = f.lru_type();
            let (k, _) = LruGen::folio_lruvec(mm, pfn);
            if p.folio_seq_6_14(f.flags, ty, k, false) == p.lrugen(k).min_seq[ty] {
                let fm = mm.folios.get_mut(pfn);
                fm.flags = if p.fg.is_some() {
                    // MGLRU-FG [I]: clearing LRU_REFS_FLAGS keeps PG_workingset, which is
                    // count LRU_REFS_WORKINGSET (or 0 for a folio below it).
                    let refs = crate::mm::swap::fg_refs(fm.flags);
                    let kept = if refs >= crate::mm::swap::FG_REFS_WORKINGSET { crate::mm::swap::FG_REFS_WORKINGSET } else { 0 };
                    crate::mm::swap::fg_with_refs(fm.flags, kept) | pg::ACTIVE
                } else {
                    (fm.flags & !REFS_FLAGS_6_14) | pg::ACTIVE
                };
            }
            kept.push(pfn);
        }
        move_folios_to_lru(mm, p, &kept);
        list.clear();
        list.extend_from_slice(&clean);
    }
}

impl Epilogue<LruGen> for MglruEpilogue {
    /// Nothing: the folios' type and tiers were chosen at isolation (isolate_folios()).
    fn before_shrink(&mut self, _: &mut Mm, _: &mut LruGen, _: &[Pfn]) {}

    /// The survivors of evict_folios() (6.1.192, 6.12.95): a folio under writeback or dirty
    /// that shrink_folio_list() marked for reclaim stays where sort_folio() will find it
    /// (PG_referenced restored if it was in the workingset); one that is active, referenced,
    /// mapped, locked, dirty or under writeback (or any on the retry) goes to the youngest
    /// generation (PG_active, tier bits cleared); a clean one stays in `list` for one retry.
    /// The others go back through move_folios_to_lru().
    fn putback(&mut self, mm: &mut Mm, p: &mut LruGen, list: &mut Vec<Pfn>) {
        if self.handles_writeback {
            return self.putback_7_2(mm, p, list);
        }
        let mut clean = Vec::new();
        let mut kept = Vec::with_capacity(list.len());
        for &pfn in list.iter() {
            let f = *mm.folios.get(pfn);
            if f.test(pg::RECLAIM) && (f.test(pg::DIRTY) || f.test(pg::WRITEBACK)) {
                if f.test(pg::WORKINGSET) {
                    mm.folios.set(pfn, pg::REFERENCED);
                }
                kept.push(pfn);
                continue;
            }
            let locked = f.test(pg::LOCKED);
            if self.skip_retry || f.test(pg::ACTIVE) || f.test(pg::REFERENCED) || f.test(pg::MAPPED) || locked || f.test(pg::DIRTY) || f.test(pg::WRITEBACK) {
                let fm = mm.folios.get_mut(pfn);
                fm.flags = (fm.flags & !REFS_ALL) | pg::ACTIVE;
                kept.push(pfn);
                continue;
            }
            clean.push(pfn);
        }
        move_folios_to_lru(mm, p, &kept);
        list.clear();
        list.extend_from_slice(&clean);
    }

    /// Nothing: evict_folios() calls no lru_note_cost(); MGLRU balances the types by the
    /// PID controller's refault rates (get_type_to_scan()), not by recorded costs.
    fn note_cost(&mut self, _: &mut Mm, _: u64, _: &ReclaimStat) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_controller_protects_only_what_refaults_more() {
        let sp = CtrlPos { refaulted: 100, total: 1000, gain: 1 };
        // Fewer than MIN_LRU_BATCH refaults: no error, evict.
        assert!(positive_ctrl_err(sp, CtrlPos { refaulted: 63, total: 64, gain: 2 }));
        // 10% vs 50% refault rate: the process variable refaults more, protect it.
        assert!(!positive_ctrl_err(sp, CtrlPos { refaulted: 500, total: 1000, gain: 2 }));
        // 10% vs 4%: evict.
        assert!(positive_ctrl_err(sp, CtrlPos { refaulted: 80, total: 2000, gain: 2 }));
    }
}
