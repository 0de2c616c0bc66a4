//! Generations: placement of folios (include/linux/mm_inline.h: lru_gen_add_folio(),
//! lru_gen_del_folio(), lru_gen_update_size()), moving folios between generations
//! (mm/vmscan.c: folio_update_gen(), folio_inc_gen()) and advancing the sequence numbers
//! (inc_min_seq(), try_to_inc_min_seq(), inc_max_seq()). 6.1.192 and 6.12.95 agree on all of
//! these (both carry the December 2023 "underprotected page cache" fix); 7.3.4 follows Yu
//! Zhao's 6.14 rework of tiers, placement and min_seq (`Kernel::lru_gen_workingset_top_tier`,
//! `Kernel::lru_gen_min_seq_independent`).

use super::{LruGen, LvId, MAX_NR_GENS, MAX_NR_TIERS, MIN_NR_GENS};
use crate::mm::folio::{pg, Pfn, MAX_ZONES};
use crate::mm::vmstat::Lru;
use crate::mm::Mm;

/// `lru_gen_from_seq()`.
#[inline]
pub fn gen_of(seq: u64) -> usize {
    (seq % MAX_NR_GENS as u64) as usize
}

/// The folio's generation from its flags (`folio_lru_gen()`), if it is on a generation list.
#[inline]
pub fn folio_gen(flags: u32) -> Option<usize> {
    let g = (flags & pg::GEN_MASK) >> pg::GEN_SHIFT;
    (g != 0).then(|| g as usize - 1)
}

#[inline]
pub(super) fn with_gen(flags: u32, gen: usize) -> u32 {
    (flags & !pg::GEN_MASK) | (((gen as u32) + 1) << pg::GEN_SHIFT)
}

/// The flags that hold a folio's access history: LRU_REFS_MASK | LRU_REFS_FLAGS.
pub const REFS_ALL: u32 = pg::REFS_MASK | pg::REFERENCED | pg::WORKINGSET;

/// Models include/linux/mm_inline.h: folio_lru_refs() (6.1/6.12): accesses through file
/// descriptors beyond the first: the LRU_REFS field plus PG_workingset (0..4).
#[inline]
pub fn folio_lru_refs(flags: u32) -> u32 {
    ((flags & pg::REFS_MASK) >> pg::REFS_SHIFT) + (flags & pg::WORKINGSET != 0) as u32
}

/// Models include/linux/mm_inline.h: lru_tier_from_refs(): order_base_2(refs + 1).
#[inline]
pub fn lru_tier_from_refs(refs: u32) -> usize {
    let n = refs + 1;
    (if n <= 1 { 0 } else { 32 - (n - 1).leading_zeros() }) as usize
}

use crate::mm::swap::{fg_refs, fg_tier, fg_with_refs, FG_REFS_REFERENCED, FG_REFS_WORKINGSET};
pub use crate::mm::swap::{folio_lru_refs_6_14, lru_gen_inc_refs, lru_gen_set_refs, REFS_FLAGS_6_14};

/// Models include/linux/mm_inline.h: lru_tier_from_refs(refs, workingset) of 7.3.4 (6.14 on):
/// a PG_workingset folio is in the top tier, the others in order_base_2(refs).
#[inline]
pub fn lru_tier_from_refs_6_14(refs: u32, workingset: bool) -> usize {
    if workingset {
        MAX_NR_TIERS - 1
    } else if refs == 0 {
        0
    } else {
        lru_tier_from_refs(refs - 1)
    }
}

/// The physical list a folio sits on: generation and type, plus one (0: none).
#[inline]
fn slot(gen: usize, ty: usize) -> u16 {
    (gen * 2 + ty + 1) as u16
}

impl LruGen {
    /// A folio's refs and tier, and whether it is being lazily promoted (all its access
    /// bits set: sort_folio() protects it whatever the tier, and 7.3 does not count it as
    /// protected): 6.12's folio_lru_refs()/lru_tier_from_refs(refs) (lazy: refs == 4, or 2 with
    /// one refs bit, `[mglru] refs_width`) or 7.3's
    /// ([`Kernel::lru_gen_workingset_top_tier`]; lazy: refs + workingset == 5).
    ///
    /// MGLRU-FG: its count and [`fg_tier`]; nothing is lazily promoted (06/32 [R]: the
    /// promotion "happens at access time and not eviction time").
    ///
    /// [`Kernel::lru_gen_workingset_top_tier`]: crate::kernel::Kernel::lru_gen_workingset_top_tier
    #[inline]
    pub fn refs_tier(&self, flags: u32) -> (u32, usize, bool) {
        if self.fg.is_some() {
            let refs = fg_refs(flags);
            return (refs, fg_tier(refs), false);
        }
        if self.kernel.lru_gen_workingset_top_tier() {
            let refs = folio_lru_refs_6_14(flags);
            let ws = flags & pg::WORKINGSET != 0;
            (refs, lru_tier_from_refs_6_14(refs, ws), refs + ws as u32 == (1 << 2) + 1)
        } else {
            // sort_folio()'s `refs == BIT(LRU_REFS_WIDTH)` ([`LruGen::refs_width`]).
            let refs = folio_lru_refs(flags);
            (refs, lru_tier_from_refs(refs), refs == 1 << self.refs_width)
        }
    }

    /// Models include/linux/mm_inline.h: lru_gen_folio_seq() of 7.3.4 (6.14 on): PG_active
    /// goes to max_seq (with PG_workingset) or max_seq - 1; reclaim's putback of a rotated folio
    /// to the oldest generation; anon not in the swap cache and dirty/writeback folios marked
    /// for reclaim to max_seq - 1; the rest to the second oldest of four generations when
    /// PG_workingset or PG_referenced, else the oldest; never below min_seq.
    ///
    /// MGLRU-FG RFC (May 2026) [DEV] 7e29194b's lru_gen_folio_seq(): the same, but only a
    /// workingset folio (count >= LRU_REFS_WORKINGSET: PG_workingset in pagelab's view of the
    /// count) goes to the second oldest; a folio accessed once goes to the oldest.
    pub(super) fn folio_seq_6_14(&self, flags: u32, ty: usize, k: LvId, reclaiming: bool) -> u64 {
        let lv = self.lrugen(k);
        let t = |b: u32| flags & b != 0;
        let gen = if t(pg::ACTIVE) {
            MIN_NR_GENS as u64 - t(pg::WORKINGSET) as u64
        } else if reclaiming {
            MAX_NR_GENS as u64
        } else if (ty == 0 && !t(pg::SWAPCACHE)) || (t(pg::RECLAIM) && (t(pg::DIRTY) || t(pg::WRITEBACK))) {
            MIN_NR_GENS as u64
        } else if self.fg.is_some() {
            MAX_NR_GENS as u64 - t(pg::WORKINGSET) as u64
        } else {
            MAX_NR_GENS as u64 - (t(pg::WORKINGSET) || t(pg::REFERENCED)) as u64
        };
        (lv.max_seq + 1 - gen).max(lv.min_seq[ty])
    }

    /// Models include/linux/mm_inline.h: lru_gen_is_active(): the two youngest generations
    /// count as active in the LRU size statistics.
    #[inline]
    pub fn is_active(&self, k: LvId, gen: usize) -> bool {
        let max = self.lrugen(k).max_seq;
        gen == gen_of(max) || gen == gen_of(max - 1)
    }

    /// Models include/linux/mm_inline.h: lru_gen_update_size(): the generation sizes and the
    /// active/inactive statistics of lruvec `k`, by the folio's `nr` pages (folio_nr_pages():
    /// 7.3's large page-cache folios count all their pages).
    // Inlined: every caller passes a constant shape of `old` and `new`, which folds the match
    // (plain #[inline] left it a call of ~60 instructions per page added or evicted).
    #[inline(always)]
    pub fn update_size(&mut self, mm: &mut Mm, k: LvId, ty: usize, old: Option<usize>, new: Option<usize>, nr: i64) {
        let lv = self.lrugen_mut(k);
        if let Some(o) = old {
            lv.nr_pages[o][ty] -= nr;
        }
        if let Some(n) = new {
            lv.nr_pages[n][ty] += nr;
        }
        let inactive = Lru::of(ty == 1, false);
        let active = Lru::of(ty == 1, true);
        let (memcg, nid) = (k.memcg, k.nid);
        match (old, new) {
            (None, Some(n)) => mm.update_lru_size_on(memcg, nid, if self.is_active(k, n) { active } else { inactive }, nr),
            (Some(o), None) => mm.update_lru_size_on(memcg, nid, if self.is_active(k, o) { active } else { inactive }, -nr),
            (Some(o), Some(n)) => {
                if !self.is_active(k, o) && self.is_active(k, n) {
                    mm.update_lru_size_on(memcg, nid, inactive, -nr);
                    mm.update_lru_size_on(memcg, nid, active, nr);
                }
            }
            (None, None) => {}
        }
    }

    /// Models include/linux/mm_inline.h: lru_gen_add_folio() (6.1 and 6.12 with the Dec-2023
    /// fix): active folios go to max_seq; anon not in the swap cache and folios under
    /// writeback for reclaim to max_seq - 1; the rest to the oldest generation when reclaim
    /// puts them back or only three generations exist, else to min_seq + 1. Reclaim adds at
    /// the tail, everyone else at the head. The lruvec is folio_lruvec()'s: the folio's memcg
    /// on its frame's node ([`LruGen::folio_lruvec`]).
    pub fn add_folio(&mut self, mm: &mut Mm, pfn: Pfn, reclaiming: bool) {
        let f = *mm.folios.get(pfn);
        let ty = f.lru_type();
        let (k, zone) = Self::folio_lruvec(mm, pfn);
        let lv = self.lrugen(k);
        let seq = if self.kernel.lru_gen_workingset_top_tier() {
            self.folio_seq_6_14(f.flags, ty, k, reclaiming)
        } else if f.test(pg::ACTIVE) {
            lv.max_seq
        } else if (ty == 0 && !f.test(pg::SWAPCACHE)) || (f.test(pg::RECLAIM) && (f.test(pg::DIRTY) || f.test(pg::WRITEBACK))) {
            lv.max_seq - 1
        } else if reclaiming || lv.min_seq[ty] + MIN_NR_GENS as u64 >= lv.max_seq {
            lv.min_seq[ty]
        } else {
            lv.min_seq[ty] + 1
        };
        let gen = gen_of(seq);
        {
            let fm = mm.folios.get_mut(pfn);
            fm.flags = with_gen(fm.flags & !pg::ACTIVE, gen);
            fm.lru_slot = slot(gen, ty);
        }
        let nr = mm.folios.nr_pages(pfn) as i64;
        self.update_size(mm, k, ty, None, Some(gen), nr);
        let list = &mut self.lrugen_mut(k).lists[gen][ty][zone];
        if reclaiming {
            mm.folios.list_add_tail(list, pfn);
        } else {
            mm.folios.list_add(list, pfn);
        }
    }

    /// Models include/linux/mm_inline.h: lru_gen_del_folio(): off its list; a folio leaving
    /// an active generation other than for reclaim gets PG_active back.
    // Inlined: isolation calls it for every evicted folio with `reclaiming` constant.
    #[inline]
    pub fn del_folio(&mut self, mm: &mut Mm, pfn: Pfn, reclaiming: bool) -> bool {
        let f = *mm.folios.get(pfn);
        let Some(gen) = folio_gen(f.flags) else { return false };
        let ty = f.lru_type();
        let (k, _) = Self::folio_lruvec(mm, pfn);
        let active = !reclaiming && self.is_active(k, gen);
        {
            let fm = mm.folios.get_mut(pfn);
            fm.flags = (fm.flags & !pg::GEN_MASK) | if active { pg::ACTIVE } else { 0 };
        }
        self.update_size(mm, k, ty, Some(gen), None, f.nr_pages() as i64);
        self.unlink(mm, pfn);
        true
    }

    /// Takes a folio off the physical list it sits on.
    #[inline]
    pub(super) fn unlink(&mut self, mm: &mut Mm, pfn: Pfn) {
        let f = *mm.folios.get(pfn);
        let s = f.lru_slot as usize;
        debug_assert!(s > 0, "pfn {pfn} is on no generation list");
        let (gen, ty) = ((s - 1) / 2, (s - 1) % 2);
        let (k, zone) = Self::folio_lruvec(mm, pfn);
        mm.folios.list_del(&mut self.lrugen_mut(k).lists[gen][ty][zone], pfn);
        mm.folios.get_mut(pfn).lru_slot = 0;
    }

    /// Moves a folio to the head (or tail) of the list of `gen`.
    pub(super) fn relink(&mut self, mm: &mut Mm, pfn: Pfn, gen: usize, tail: bool) {
        self.unlink(mm, pfn);
        let f = mm.folios.get_mut(pfn);
        let ty = f.lru_type();
        f.lru_slot = slot(gen, ty);
        let (k, zone) = Self::folio_lruvec(mm, pfn);
        let list = &mut self.lrugen_mut(k).lists[gen][ty][zone];
        if tail {
            mm.folios.list_add_tail(list, pfn);
        } else {
            mm.folios.list_add(list, pfn);
        }
    }

    /// Models mm/vmscan.c: folio_update_gen(): the page-table walk or look-around found the
    /// folio young: give it generation `gen` (the list move waits for sort_folio()) and wipe
    /// its access history; a folio off the lists (isolated) gets PG_referenced instead.
    /// Returns the old generation.
    ///
    /// 7.3 ([`Kernel::lru_gen_workingset_top_tier`]) promotes only on the second access: a
    /// folio with neither PG_referenced nor PG_workingset gets PG_referenced and stays; the
    /// others get the generation, PG_workingset, and LRU_REFS_FLAGS cleared. An isolated
    /// folio is left alone.
    ///
    /// [`Kernel::lru_gen_workingset_top_tier`]: crate::kernel::Kernel::lru_gen_workingset_top_tier
    ///
    /// MGLRU-FG RFC (May 2026) [I]: 7.3's rule read through the count (the RFC's page-table
    /// side was not retrieved): an unreferenced folio gets count 1 and stays; the others get the
    /// generation and count LRU_REFS_WORKINGSET, what PG_workingset alone is in the count.
    pub fn folio_update_gen(&mut self, mm: &mut Mm, pfn: Pfn, gen: usize) -> Option<usize> {
        let f = mm.folios.get_mut(pfn);
        if self.fg.is_some() {
            if fg_refs(f.flags) == 0 {
                f.flags = fg_with_refs(f.flags, FG_REFS_REFERENCED);
                return None;
            }
            let old = folio_gen(f.flags)?;
            f.flags = fg_with_refs(with_gen(f.flags, gen), FG_REFS_WORKINGSET);
            return Some(old);
        }
        if self.kernel.lru_gen_workingset_top_tier() {
            if f.flags & (pg::REFERENCED | pg::WORKINGSET) == 0 {
                f.flags = (f.flags & !pg::REFS_MASK) | pg::REFERENCED;
                return None;
            }
            let old = folio_gen(f.flags)?;
            f.flags = with_gen(f.flags & !REFS_FLAGS_6_14, gen) | pg::WORKINGSET;
            return Some(old);
        }
        let Some(old) = folio_gen(f.flags) else {
            f.flags |= pg::REFERENCED;
            return None;
        };
        f.flags = with_gen(f.flags & !REFS_ALL, gen);
        Some(old)
    }

    /// Models mm/vmscan.c: folio_inc_gen(): move a folio of the oldest generation to the next
    /// one, wiping its access history (and setting PG_reclaim for reclaim); a folio the walk
    /// already promoted keeps its generation. Returns the generation to list it on.
    ///
    /// MGLRU-FG RFC (May 2026) [DEV] 7e29194b's tier comment: "a promotion / protect will reset
    /// a folio with higher referenced count to LRU_REFS_WORKINGSET" (a lower count stays).
    pub fn folio_inc_gen(&mut self, mm: &mut Mm, pfn: Pfn, reclaiming: bool) -> usize {
        let f = *mm.folios.get(pfn);
        let ty = f.lru_type();
        let (k, _) = Self::folio_lruvec(mm, pfn);
        let old_gen = gen_of(self.lrugen(k).min_seq[ty]);
        if let Some(cur) = folio_gen(f.flags) {
            if cur != old_gen {
                return cur;
            }
        }
        let new_gen = (old_gen + 1) % MAX_NR_GENS;
        {
            // 7.3 keeps PG_workingset and has no PG_reclaim case (its sort_folio() sends no
            // folio waiting for writeback here).
            let v7_3 = self.kernel.lru_gen_workingset_top_tier();
            let fm = mm.folios.get_mut(pfn);
            if self.fg.is_some() {
                let refs = fg_refs(fm.flags).min(FG_REFS_WORKINGSET);
                fm.flags = fg_with_refs(with_gen(fm.flags, new_gen), refs);
            } else {
                let (clear, reclaim) = if v7_3 { (REFS_FLAGS_6_14, false) } else { (REFS_ALL, reclaiming) };
                fm.flags = with_gen(fm.flags & !clear, new_gen) | if reclaim { pg::RECLAIM } else { 0 };
            }
        }
        let nr = mm.folios.nr_pages(pfn) as i64;
        self.update_size(mm, k, ty, Some(old_gen), Some(new_gen), nr);
        new_gen
    }

    /// Models mm/vmscan.c: reset_ctrl_pos() with NR_HIST_GENS = 1 (neither Debian kernel sets
    /// CONFIG_LRU_GEN_STATS): fold the current generation's counters into the averages (the
    /// controller's integral term, factor 1/2) and clear them.
    pub fn reset_ctrl_pos(&mut self, k: LvId, ty: usize, carryover: bool) {
        if !carryover {
            return; // with one history slot only carry-overs clear anything
        }
        if self.refault.model != crate::mm::workingset::RefaultModel::Mainline {
            // min_seq is about to advance: a new eviction window starts (Kairui models).
            let clock = self.refault_clock(k, ty);
            self.lrugen_mut(k).window_start[ty] = clock;
        }
        let lv = self.lrugen_mut(k);
        for tier in 0..MAX_NR_TIERS {
            lv.avg_refaulted[ty][tier] = (lv.avg_refaulted[ty][tier] + lv.refaulted[ty][tier]) / 2;
            let protected = lv.protected_in(ty, tier);
            lv.avg_total[ty][tier] = (lv.avg_total[ty][tier] + lv.evicted[ty][tier] + protected) / 2;
            lv.refaulted[ty][tier] = 0;
            lv.evicted[ty][tier] = 0;
            *lv.protected_mut(ty, tier) = 0;
        }
    }

    /// Models mm/vmscan.c: inc_min_seq(): move every folio left in the oldest generation of
    /// `ty` to the next one, zone by zone (prefetching ahead as Kairui Song's 2024 lru_gen prefetch patch proposes), then
    /// advance min_seq.
    pub fn inc_min_seq(&mut self, mm: &mut Mm, k: LvId, ty: usize, can_swap: bool) {
        if ty != 0 || can_swap {
            let old_gen = gen_of(self.lrugen(k).min_seq[ty]);
            for zone in 0..MAX_ZONES {
                while let Some(pfn) = self.lrugen(k).lists[old_gen][ty][zone].tail() {
                    if self.prefetch {
                        mm.folios.prefetch_from_tail(&self.lrugen(k).lists[old_gen][ty][zone], PREFETCH_AHEAD);
                    }
                    if self.kernel.lru_gen_workingset_top_tier() {
                        // 7.3: the folios moved count as protected in their tier, except
                        // the workingset being lazily promoted.
                        let (_, tier, lazy) = self.refs_tier(mm.folios.get(pfn).flags);
                        if !lazy {
                            *self.lrugen_mut(k).protected_mut(ty, tier) += mm.folios.nr_pages(pfn);
                        }
                    }
                    let new_gen = self.folio_inc_gen(mm, pfn, false);
                    self.relink(mm, pfn, new_gen, true);
                }
            }
        }
        self.reset_ctrl_pos(k, ty, true);
        self.lrugen_mut(k).min_seq[ty] += 1;
    }

    /// Models mm/vmscan.c: try_to_inc_min_seq(): drop empty oldest generations, keeping at
    /// least MIN_NR_GENS, anon's minimum no older than file's... and file's no newer than
    /// the new anon minimum allows when swapping. Returns whether anything moved.
    // The loops run over the LRU types from the first one reclaim may touch (file only when
    // it cannot swap), as the kernel's own loops do; an iterator would hide that start.
    #[allow(clippy::needless_range_loop)]
    ///
    /// 7.3 ([`Kernel::lru_gen_min_seq_independent`]) moves each type's min_seq on its own:
    /// when one would pass max_seq - MIN_NR_GENS while the other is behind that, it stops
    /// there; nothing is done when no type advanced.
    ///
    /// [`Kernel::lru_gen_min_seq_independent`]: crate::kernel::Kernel::lru_gen_min_seq_independent
    pub fn try_to_inc_min_seq(&mut self, k: LvId, can_swap: bool) -> bool {
        if self.kernel.lru_gen_min_seq_independent() {
            return self.try_to_inc_min_seq_6_14(k, can_swap);
        }
        let lv = self.lrugen(k);
        let mut min_seq = lv.min_seq;
        for ty in (!can_swap) as usize..2 {
            while min_seq[ty] + MIN_NR_GENS as u64 <= lv.max_seq {
                if lv.lists[gen_of(min_seq[ty])][ty].iter().any(|l| !l.is_empty()) {
                    break;
                }
                min_seq[ty] += 1;
            }
        }
        if can_swap {
            min_seq[0] = min_seq[0].min(min_seq[1]);
            min_seq[1] = min_seq[0].max(lv.min_seq[1]);
        }
        let mut success = false;
        for ty in (!can_swap) as usize..2 {
            if min_seq[ty] == self.lrugen(k).min_seq[ty] {
                continue;
            }
            self.reset_ctrl_pos(k, ty, true);
            self.lrugen_mut(k).min_seq[ty] = min_seq[ty];
            success = true;
        }
        success
    }

    /// 7.3.4's try_to_inc_min_seq() (see [`LruGen::try_to_inc_min_seq`]).
    #[allow(clippy::needless_range_loop)]
    fn try_to_inc_min_seq_6_14(&mut self, k: LvId, can_swap: bool) -> bool {
        let lv = self.lrugen(k);
        let mut min_seq = lv.min_seq;
        let mut moved = false;
        for ty in (!can_swap) as usize..2 {
            while min_seq[ty] + MIN_NR_GENS as u64 <= lv.max_seq {
                if lv.lists[gen_of(min_seq[ty])][ty].iter().any(|l| !l.is_empty()) {
                    break;
                }
                min_seq[ty] += 1;
                moved = true;
            }
        }
        if !moved {
            return false;
        }
        if can_swap {
            let seq = lv.max_seq - MIN_NR_GENS as u64;
            if min_seq[0] > seq && min_seq[1] < seq {
                min_seq[0] = seq;
            } else if min_seq[1] > seq && min_seq[0] < seq {
                min_seq[1] = seq;
            }
        }
        let mut success = false;
        for ty in (!can_swap) as usize..2 {
            if min_seq[ty] <= self.lrugen(k).min_seq[ty] {
                continue;
            }
            self.reset_ctrl_pos(k, ty, true);
            self.lrugen_mut(k).min_seq[ty] = min_seq[ty];
            success = true;
        }
        success
    }

    /// Models mm/vmscan.c: inc_max_seq(): make room (a type with four generations loses its
    /// oldest, file first), move the previous youngest-but-one generation to the inactive
    /// statistics, stamp the new generation and advance max_seq.
    pub fn inc_max_seq(&mut self, mm: &mut Mm, k: LvId, can_swap: bool) {
        for ty in [1, 0] {
            if self.nr_gens(k, ty) == MAX_NR_GENS as u64 {
                self.inc_min_seq(mm, k, ty, can_swap);
            }
        }
        let lv = self.lrugen(k);
        let prev = gen_of(lv.max_seq - 1);
        let next = gen_of(lv.max_seq + 1);
        let deltas: [i64; 2] = [lv.nr_pages[prev][0] - lv.nr_pages[next][0], lv.nr_pages[prev][1] - lv.nr_pages[next][1]];
        for (ty, delta) in deltas.into_iter().enumerate() {
            if delta != 0 {
                mm.update_lru_size_on(k.memcg, k.nid, Lru::of(ty == 1, false), delta);
                mm.update_lru_size_on(k.memcg, k.nid, Lru::of(ty == 1, true), -delta);
            }
        }
        let now = mm.now();
        let lv = self.lrugen_mut(k);
        lv.timestamps[next] = now;
        lv.max_seq += 1;
    }

    /// `get_nr_gens()`.
    #[inline]
    pub fn nr_gens(&self, k: LvId, ty: usize) -> u64 {
        let lv = self.lrugen(k);
        lv.max_seq - lv.min_seq[ty] + 1
    }
}

/// How many folios ahead of the scan position pagelab's generation scans prefetch.
pub const PREFETCH_AHEAD: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_are_order_base_2_of_refs_plus_one() {
        let tiers: Vec<usize> = (0..=4).map(lru_tier_from_refs).collect();
        assert_eq!(tiers, [0, 1, 2, 2, 3]);
    }

    #[test]
    fn refs_count_the_field_and_pg_workingset() {
        assert_eq!(folio_lru_refs(0), 0);
        assert_eq!(folio_lru_refs(pg::WORKINGSET), 1);
        assert_eq!(folio_lru_refs(pg::WORKINGSET | (3 << pg::REFS_SHIFT)), 4);
        assert_eq!(folio_lru_refs(pg::REFERENCED), 0, "PG_referenced alone is the first access");
    }
}
