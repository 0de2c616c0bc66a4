//! MGLRU's shadow entries and refaults (mm/workingset.c: lru_gen_eviction(),
//! lru_gen_refault(), lru_gen_test_recent()), and the Kairui refault-distance models applied
//! to MGLRU (`[workingset] refault_model`; Kairui Song's refault-distance rework).

use super::gen::{lru_tier_from_refs, lru_tier_from_refs_6_14, REFS_ALL};
use super::{LruGen, LvId, MAX_NR_GENS, MIN_NR_GENS};
use crate::mm::folio::{pg, Pfn};
use crate::mm::mapping::Shadow;
use crate::mm::memcontrol::MemcgId;
use crate::mm::swap::{fg_refs, fg_tier, fg_with_refs, FG_REFS_MAX, FG_REFS_WORKINGSET};
use crate::mm::vmstat::{by_type, Ev};
use crate::mm::workingset::{
    count_workingset, kairui_v3_recent, workingset_age_nonresident, LruCounts, MglruActivate, MglruPid, MglruPlacement, MglruRefs, RefaultModel,
};
use crate::mm::Mm;

/// Bits of a token holding refs (LRU_REFS_WIDTH).
const REFS_WIDTH: u32 = 2;
/// The bits of a token left for the stamp.
const STAMP_MASK: u64 = Shadow::EVICTION_MASK >> REFS_WIDTH;

/// What a Kairui model decided about one refault, before the folio is placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KairuiRefault {
    /// Evictions since the shadow was made (the model's clock).
    pub distance: u64,
    /// Evicted within the current oldest generation's eviction window.
    pub in_window: bool,
    /// Passed the model's distance test (otherwise nothing more happens).
    pub qualified: bool,
    /// Below half the type's LRU (`total / MIN_NR_GENS`).
    pub short: bool,
    /// The refs the shadow gives back, and their tier.
    pub refs: u32,
    pub tier: usize,
}

impl LruGen {
    /// Models mm/workingset.c: lru_gen_eviction() (6.1/6.12/7.3): the shadow holds the oldest
    /// generation's sequence number of the folio's lruvec and the folio's refs, charged to the
    /// folio's own memcg on its node (pack_shadow()'s memcg and pgdat); the eviction counts in
    /// its tier. Under a Kairui model the sequence number gives way
    /// to an eviction stamp ([`LruGen::kairui_v3_token`], [`LruGen::kairui_2026_token`]).
    pub fn eviction(&mut self, mm: &mut Mm, pfn: Pfn) -> Shadow {
        let f = *mm.folios.get(pfn);
        let ty = f.lru_type();
        let memcg = f.memcg;
        let (k, _) = Self::folio_lruvec(mm, pfn);
        let (refs, tier, _) = self.refs_tier(f.flags);
        // By the folio's pages (`delta = folio_nr_pages()`).
        self.lrugen_mut(k).evicted[ty][tier] += f.nr_pages();
        let shadow = match self.refault.model {
            RefaultModel::Mainline => {
                // MGLRU-FG [I]: its count (up to 7) is cut to 7.3's four refs, so the token
                // keeps 7.3's two bits; W (folio_test_workingset()) is count >= 2.
                let refs = if self.fg.is_some() { refs.min(4) } else { refs };
                let low = refs.saturating_sub(1) as u64;
                // 7.3: the shadow's workingset bit is PG_workingset; 6.1/6.12: refs != 0.
                let w = if self.kernel.lru_gen_refault_workingset() { f.test(pg::WORKINGSET) } else { refs != 0 };
                Shadow::pack((self.lrugen(k).min_seq[ty] << REFS_WIDTH) | low, memcg, w)
            }
            RefaultModel::KairuiV3 => self.kairui_v3_token(mm, k, ty, refs),
            RefaultModel::Kairui2026 => self.kairui_2026_token(mm, k, ty, refs),
        };
        shadow.on_node(k.nid)
    }

    /// Advances the per-type eviction counters of lruvec `k` and its ancestors' lruvecs on
    /// the same node (parent_lruvec()); returns the reading before (27/32's lru_eviction():
    /// [DEV] a fetch-add).
    fn count_eviction(&mut self, mm: &Mm, k: LvId, ty: usize) -> u64 {
        let before = self.lrugen(k).evictions[ty];
        let mut cur = Some(k.memcg);
        while let Some(c) = cur {
            self.lrugen_mut(LvId::new(c, k.nid)).evictions[ty] += 1;
            cur = mm.memcgs.get(c).parent;
        }
        before
    }

    /// The model's clock for refaults of type `ty` in `memcg`: v3's nonresident age, which
    /// under MGLRU only evictions advance (of both types: v3 1/6 has one counter), or 2026's
    /// per-type eviction counter ([DEV] 7e29194b; the posted 23/32 has one `evictions`, but
    /// its MGLRU test compares with one type's lists).
    pub(super) fn refault_clock(&self, k: LvId, ty: usize) -> u64 {
        let e = self.lrugen(k).evictions;
        match self.refault.model {
            RefaultModel::Kairui2026 => e[ty],
            _ => e[0] + e[1],
        }
    }

    /// RFC v3 6/6, reconstructed [I] (reference §2.3, §6.2): the token keeps v3's refs
    /// (refs - 1, and W = refs != 0) and holds the folio memcg's nonresident age instead of
    /// min_seq; the eviction then ages the clock of the memcg and its ancestors (1/6: on
    /// eviction only). Bucketing starts above 2^34 pages and is not modeled.
    fn kairui_v3_token(&mut self, mm: &mut Mm, k: LvId, ty: usize, refs: u32) -> Shadow {
        let stamp = self.refault_clock(k, ty);
        self.count_eviction(mm, k, ty);
        // The kernel's own field, kept in step (the classic policy_state shows it): the
        // lruvec's, on the folio's node.
        workingset_age_nonresident(mm, k.memcg, k.nid, 1);
        Shadow::pack(((stamp & STAMP_MASK) << REFS_WIDTH) | refs.saturating_sub(1) as u64, k.memcg, refs != 0)
    }

    /// 2026 30/32 [R]: the token is refs above an eviction timestamp; [DEV] 7e29194b: the
    /// timestamp is the type's eviction counter before this eviction, refs are stored halved
    /// with W = refs & 1. (Bit positions differ from the kernel's; at pagelab's sizes only the
    /// values matter.)
    fn kairui_2026_token(&mut self, mm: &mut Mm, k: LvId, ty: usize, refs: u32) -> Shadow {
        let stamp = self.count_eviction(mm, k, ty);
        Shadow::pack(((stamp & STAMP_MASK) << REFS_WIDTH) | (refs >> 1) as u64, k.memcg, refs & 1 != 0)
    }

    /// Models mm/workingset.c: lru_gen_refault() — 6.1: only a refault of the memcg's own
    /// lruvec whose shadow is from the current oldest generation counts (as
    /// workingset_refault; activations are counted by sort_folio()); 6.12: every refault of
    /// the same lruvec counts, and recent ones count as activations too. A recent refault
    /// feeds its tier's refault statistics; one in a fault, or of a page with refs >= 3, is
    /// restored with the maximal refs and PG_workingset. Under a Kairui model:
    /// [`LruGen::kairui_refault`].
    ///
    /// The lruvec that judges is the shadow's: its memcg on the node the folio was evicted
    /// from (unpack_shadow()'s pgdat), whose min_seq and tiers are read; a refault whose new
    /// folio is another lruvec's (another memcg, or a frame of another node) counts nothing
    /// (6.1: `pgdat != folio_pgdat(folio)` or another memcg id returns; 6.12 and 7.3:
    /// `lruvec != folio_lruvec(folio)`).
    pub fn refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow) {
        if self.refault.model != RefaultModel::Mainline {
            return self.kairui_refault(mm, pfn, shadow);
        }
        let f = *mm.folios.get(pfn);
        let ty = f.lru_type();
        let memcg = f.memcg;
        // Every count by the refaulting folio's pages (folio_nr_pages()).
        let nr = f.nr_pages();
        let Some(k) = Self::shadow_lruvec(mm, pfn, shadow) else { return };
        if self.kernel.lru_gen_refault_workingset() {
            return self.refault_7_3(mm, pfn, k, shadow);
        }
        let token = shadow.eviction();
        let recent = (token >> REFS_WIDTH) == self.lrugen(k).min_seq[ty] & STAMP_MASK;
        let refault_ev = by_type(ty == 1, Ev::WorkingsetRefaultAnon, Ev::WorkingsetRefaultFile);
        let v612 = self.kernel.lru_gen_counts_every_refault();
        if v612 {
            count_workingset(mm, memcg, refault_ev, nr);
        }
        if !recent {
            return;
        }
        let refs = (token & ((1 << REFS_WIDTH) - 1)) as u32 + shadow.workingset() as u32;
        let tier = lru_tier_from_refs(refs);
        self.lrugen_mut(k).refaulted[ty][tier] += nr;
        if v612 {
            count_workingset(mm, memcg, by_type(ty == 1, Ev::WorkingsetActivateAnon, Ev::WorkingsetActivateFile), nr);
        } else {
            count_workingset(mm, memcg, refault_ev, nr);
        }
        self.restore_if_hot(mm, pfn, memcg, ty, refs);
    }

    /// Models mm/workingset.c: lru_gen_refault() and lru_gen_test_recent() of 7.3.4
    /// ([`Kernel::lru_gen_refault_workingset`]): every refault of the shadow's own lruvec counts
    /// workingset_refault; a recent one (its min_seq within MAX_NR_GENS of max_seq) feeds the
    /// refault statistics of its tier (refs from the shadow plus one, the top tier for a
    /// workingset shadow). A workingset one gets PG_workingset and counts workingset_restore,
    /// and workingset_activate only in a page fault (where folio_add_lru() activates it); any
    /// other recent one gets refs - 1 in its LRU_REFS field.
    ///
    /// MGLRU-FG [I] (06/32's refault side was not retrieved): the same rule read through the
    /// count: the tier is [`fg_tier`] of the shadow's refs; a workingset refault gets at least
    /// count LRU_REFS_WORKINGSET (folio_set_workingset() of [DEV] mm_inline.h), any other
    /// recent one count refs - 1.
    ///
    /// [`Kernel::lru_gen_refault_workingset`]: crate::kernel::Kernel::lru_gen_refault_workingset
    fn refault_7_3(&mut self, mm: &mut Mm, pfn: Pfn, k: LvId, shadow: Shadow) {
        let f = *mm.folios.get(pfn);
        let ty = f.lru_type();
        let memcg = f.memcg;
        // Every count by the refaulting folio's pages (folio_nr_pages()).
        let nr = f.nr_pages();
        count_workingset(mm, memcg, by_type(ty == 1, Ev::WorkingsetRefaultAnon, Ev::WorkingsetRefaultFile), nr);
        let token = shadow.eviction();
        let max_seq = self.lrugen(k).max_seq & STAMP_MASK;
        if max_seq.abs_diff(token >> REFS_WIDTH) >= MAX_NR_GENS as u64 {
            return;
        }
        let refs = (token & ((1 << REFS_WIDTH) - 1)) as u32 + 1;
        let workingset = shadow.workingset();
        let fg = self.fg.is_some();
        let tier = if fg { fg_tier(refs) } else { lru_tier_from_refs_6_14(refs, workingset) };
        self.lrugen_mut(k).refaulted[ty][tier] += nr;
        if workingset {
            let in_fault = mm.current_task().is_some_and(|t| mm.tasks[t].in_lru_fault);
            if in_fault {
                count_workingset(mm, memcg, by_type(ty == 1, Ev::WorkingsetActivateAnon, Ev::WorkingsetActivateFile), nr);
            }
            if fg {
                let fm = mm.folios.get_mut(pfn);
                fm.flags = fg_with_refs(fm.flags, fg_refs(fm.flags).max(FG_REFS_WORKINGSET));
            } else {
                mm.folios.set(pfn, pg::WORKINGSET);
            }
            count_workingset(mm, memcg, by_type(ty == 1, Ev::WorkingsetRestoreAnon, Ev::WorkingsetRestoreFile), nr);
        } else {
            let fm = mm.folios.get_mut(pfn);
            fm.flags = if fg { fg_with_refs(fm.flags, refs - 1) } else { (fm.flags & !pg::REFS_MASK) | ((refs - 1) << pg::REFS_SHIFT) };
        }
    }

    /// The lruvec whose generations judge a refault: the shadow's memcg on the shadow's node,
    /// if that is the new folio's lruvec (folio_lruvec()); None otherwise.
    #[inline]
    fn shadow_lruvec(mm: &Mm, pfn: Pfn, shadow: Shadow) -> Option<LvId> {
        let (k, _) = Self::folio_lruvec(mm, pfn);
        (shadow.memcg() == k.memcg && shadow.nid() == k.nid).then_some(k)
    }

    /// The end of lru_gen_refault(): a refault in a page fault (a page pushed out while hot)
    /// or of a page accessed many times through file descriptors is restored.
    fn restore_if_hot(&mut self, mm: &mut Mm, pfn: Pfn, memcg: MemcgId, ty: usize, refs: u32) {
        let in_fault = mm.current_task().is_some_and(|t| mm.tasks[t].in_lru_fault);
        let nr = mm.folios.nr_pages(pfn);
        // lru_gen_refault()'s `refs >= BIT(LRU_REFS_WIDTH) - 1`: 3, or 1 with one refs bit.
        if in_fault || refs >= self.refs_max() {
            if self.fg.is_some() {
                // MGLRU-FG [I]: every refs bit set is the full count.
                let fm = mm.folios.get_mut(pfn);
                fm.flags = fg_with_refs(fm.flags, FG_REFS_MAX);
            } else {
                // set_mask_bits(LRU_REFS_MASK | PG_workingset): the build's refs bits.
                mm.folios.set(pfn, (self.refs_max() << pg::REFS_SHIFT) | pg::WORKINGSET);
            }
            count_workingset(mm, memcg, by_type(ty == 1, Ev::WorkingsetRestoreAnon, Ev::WorkingsetRestoreFile), nr);
        }
    }

    /// A refault under a Kairui refault-distance model. The kernel's order, as far as it is known:
    /// 1. v3 4/6 [R] (and every relative): a shadow of another memcg's lruvec is ignored and
    ///    counts nothing.
    /// 2. workingset_refault counts for every other refault (6.6, on which v3 is based).
    /// 3. The decision ([`LruGen::kairui_decide`]); a refault that does not qualify stops.
    /// 4. The PID statistics, the placement, the refs and the activation counter, each an
    ///    open choice of `[workingset]` ([`LruGen::kairui_feed_pid`], [`LruGen::kairui_place`],
    ///    [`LruGen::kairui_set_refs`], [`LruGen::kairui_counts_activation`]).
    fn kairui_refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow) {
        let f = *mm.folios.get(pfn);
        let ty = f.lru_type();
        let memcg = f.memcg;
        let Some(k) = Self::shadow_lruvec(mm, pfn, shadow) else { return };
        count_workingset(mm, memcg, by_type(ty == 1, Ev::WorkingsetRefaultAnon, Ev::WorkingsetRefaultFile), 1);
        let d = self.kairui_decide(mm, k, ty, shadow);
        if !d.qualified {
            return;
        }
        self.kairui_feed_pid(k, ty, &d);
        self.kairui_place(mm, pfn, &d);
        self.kairui_set_refs(mm, pfn, memcg, ty, &d, shadow.workingset());
        if self.kairui_counts_activation(&d) {
            count_workingset(mm, memcg, by_type(ty == 1, Ev::WorkingsetActivateAnon, Ev::WorkingsetActivateFile), 1);
        }
    }

    /// The distance test of a Kairui model on the memcg's lruvec, whose LRU statistics count
    /// the two youngest generations as active and the older ones as inactive
    /// (lru_gen_update_size(); 30/32: "the last two generation as the inactive LRU"), read as
    /// reclaim sees them after a rate-limited flush ([I]: the classic path's flush).
    /// - kairui-v3 (6/6 [I], reusing 2/6's helper): [`kairui_v3_recent`], anon pooled with
    ///   file only with swap.
    /// - kairui-2026 ([DEV] 7e29194b): qualified unless evicted before the current window
    ///   *and* farther than the type's whole LRU (`!recent && distance > total`).
    ///
    /// `in_window` is the window-based recency all relatives keep ([DEV] `distance <=` the
    /// evictions since min_seq last advanced); `short` is 7e29194b's activation threshold.
    pub fn kairui_decide(&self, mm: &mut Mm, k: LvId, ty: usize, shadow: Shadow) -> KairuiRefault {
        let memcg = k.memcg;
        let token = shadow.eviction();
        let now = self.refault_clock(k, ty);
        let distance = now.wrapping_sub(token >> REFS_WIDTH) & STAMP_MASK;
        let lv = self.lrugen(k);
        let in_window = distance <= now.wrapping_sub(lv.window_start[ty]);
        let time = mm.now();
        mm.memcgs.flush_for_refault(memcg, time);
        let (seen, exact) = LruCounts::of(mm, memcg);
        let file = ty == 1;
        let total = |c: &LruCounts| if file { c.active_file + c.inactive_file } else { c.active_anon + c.inactive_anon };
        let qualifies = |c: &LruCounts| match self.refault.model {
            RefaultModel::Kairui2026 => in_window || distance <= total(c),
            _ => kairui_v3_recent(distance, c, file),
        };
        let qualified = qualifies(&seen);
        if qualified != qualifies(&exact) {
            mm.memcgs.stale_refault_decisions += 1;
        }
        let low = (token & ((1 << REFS_WIDTH) - 1)) as u32;
        let refs = match self.refault.model {
            RefaultModel::Kairui2026 => (low << 1) + shadow.workingset() as u32,
            _ => low + shadow.workingset() as u32,
        };
        // MGLRU-FG: the 2026 token carries its whole count (refs >> 1 and W = refs & 1), and
        // the tier is the count's ([DEV] 7e29194b's lru_gen_refault() calls
        // lru_tier_from_refs() of the FG tree).
        let tier = if self.fg.is_some() { fg_tier(refs) } else { lru_tier_from_refs(refs) };
        KairuiRefault { distance, in_window, qualified, short: distance < total(&seen) / MIN_NR_GENS as u64, refs, tier }
    }

    /// `[workingset] mglru_pid` ([`MglruPid`]): a refault inside the current window is a
    /// refault of this generation's tier; an older one raises the averages both ways, so the
    /// tier's refault ratio stays at most 1 ([I] from v3 5/6 and every relative).
    fn kairui_feed_pid(&mut self, k: LvId, ty: usize, d: &KairuiRefault) {
        let current = self.refault.mglru_pid == MglruPid::Current;
        let lv = self.lrugen_mut(k);
        if d.in_window || current {
            lv.refaulted[ty][d.tier] += 1;
        } else {
            lv.avg_refaulted[ty][d.tier] += 1;
            lv.avg_total[ty][d.tier] += 1;
        }
    }

    /// `[workingset] mglru_placement` ([`MglruPlacement`]): PG_active makes lru_gen_add_folio()
    /// put the folio in max_seq; without it the folio goes where a new folio would.
    fn kairui_place(&mut self, mm: &mut Mm, pfn: Pfn, d: &KairuiRefault) {
        let activate = match self.refault.mglru_placement {
            MglruPlacement::Youngest => true,
            MglruPlacement::LruAdd => false,
            MglruPlacement::YoungestIfShort => d.short,
        };
        if activate {
            mm.folios.set(pfn, pg::ACTIVE);
        }
    }

    /// `[workingset] mglru_refs` ([`MglruRefs`]): which access history the folio gets back,
    /// and when workingset_restore counts.
    fn kairui_set_refs(&mut self, mm: &mut Mm, pfn: Pfn, memcg: MemcgId, ty: usize, d: &KairuiRefault, w: bool) {
        let restore_ev = by_type(ty == 1, Ev::WorkingsetRestoreAnon, Ev::WorkingsetRestoreFile);
        match self.refault.mglru_refs {
            MglruRefs::HotRestore => self.restore_if_hot(mm, pfn, memcg, ty, d.refs),
            MglruRefs::Shadow => {
                if d.refs != 0 {
                    // folio_set_lru_refs() in pagelab's flags: PG_referenced and PG_workingset
                    // are the first two accesses, the LRU_REFS field counts the rest; under
                    // MGLRU-FG the count itself ([DEV] 7e29194b).
                    let fm = mm.folios.get_mut(pfn);
                    fm.flags = if self.fg.is_some() {
                        fg_with_refs(fm.flags, d.refs.min(FG_REFS_MAX))
                    } else {
                        (fm.flags & !REFS_ALL) | pg::REFERENCED | pg::WORKINGSET | ((d.refs - 1).min(3) << pg::REFS_SHIFT)
                    };
                    count_workingset(mm, memcg, restore_ev, 1);
                }
            }
            MglruRefs::WorkingsetBit => {
                let fm = mm.folios.get_mut(pfn);
                fm.flags &= !REFS_ALL;
                if self.fg.is_some() {
                    fm.flags = fg_with_refs(fm.flags, if w { FG_REFS_WORKINGSET } else { 0 });
                }
                if w {
                    mm.folios.set(pfn, pg::WORKINGSET);
                    count_workingset(mm, memcg, restore_ev, 1);
                }
            }
        }
    }

    /// `[workingset] mglru_activate` ([`MglruActivate`]).
    fn kairui_counts_activation(&self, d: &KairuiRefault) -> bool {
        match self.refault.mglru_activate {
            MglruActivate::Qualified => true,
            MglruActivate::Short => d.short,
        }
    }
}
