//! MGLRU's shadow entries and refaults (mm/workingset.c: lru_gen_eviction(),
//! lru_gen_refault(), lru_gen_test_recent()), and the refault-distance variant of seed 000.

use super::gen::{folio_lru_refs, gen_of, lru_tier_from_refs, REFS_ALL};
use super::LruGen;
use crate::mm::folio::{pg, Pfn};
use crate::mm::mapping::Shadow;
use crate::mm::memcontrol::MemcgId;
use crate::mm::vmstat::{by_type, Ev};
use crate::mm::workingset::{count_workingset, workingset_age_nonresident};
use crate::mm::Mm;

/// Bits of a token holding refs (LRU_REFS_WIDTH).
const REFS_WIDTH: u32 = 2;

impl LruGen {
    /// Models mm/workingset.c: lru_gen_eviction() (6.1/6.12): the shadow holds the oldest
    /// generation's sequence number and the folio's refs, charged to the folio's own memcg;
    /// the eviction counts in its tier. With `refault_distance` the shadow holds the
    /// memcg's nonresident clock instead, which each eviction advances.
    pub fn eviction(&mut self, mm: &mut Mm, pfn: Pfn) -> Shadow {
        let f = *mm.folios.get(pfn);
        let ty = f.lru_type();
        let memcg = f.memcg;
        let refs = folio_lru_refs(f.flags);
        let tier = lru_tier_from_refs(refs);
        self.lv[memcg as usize].evicted[ty][tier] += 1;
        let low = refs.saturating_sub(1) as u64;
        let stamp = if self.refault_distance {
            let age = mm.memcgs.get(memcg).lruvec.nonresident_age;
            workingset_age_nonresident(mm, memcg, 1);
            age
        } else {
            self.lv[memcg as usize].min_seq[ty]
        };
        Shadow::pack((stamp << REFS_WIDTH) | low, memcg, refs != 0)
    }

    /// Models mm/workingset.c: lru_gen_refault() — 6.1: only a refault of the memcg's own
    /// lruvec whose shadow is from the current oldest generation counts (as
    /// workingset_refault; activations are counted by sort_folio()); 6.12: every refault of
    /// the same lruvec counts, and recent ones count as activations too. A recent refault
    /// feeds its tier's refault statistics; one in a fault, or of a page with refs >= 3, is
    /// restored with the maximal refs and PG_workingset.
    pub fn refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow) {
        if self.refault_distance {
            return self.refault_by_distance(mm, pfn, shadow);
        }
        let f = *mm.folios.get(pfn);
        let ty = f.lru_type();
        let memcg = f.memcg;
        if shadow.memcg() != memcg {
            return;
        }
        let token = shadow.eviction();
        let recent = (token >> REFS_WIDTH) == self.lv[memcg as usize].min_seq[ty] & (Shadow::EVICTION_MASK >> REFS_WIDTH);
        let refault_ev = by_type(ty == 1, Ev::WorkingsetRefaultAnon, Ev::WorkingsetRefaultFile);
        let v612 = self.kernel.lru_gen_counts_every_refault();
        if v612 {
            count_workingset(mm, memcg, refault_ev, 1);
        }
        if !recent {
            return;
        }
        let refs = (token & ((1 << REFS_WIDTH) - 1)) as u32 + shadow.workingset() as u32;
        let tier = lru_tier_from_refs(refs);
        self.lv[memcg as usize].refaulted[ty][tier] += 1;
        if v612 {
            count_workingset(mm, memcg, by_type(ty == 1, Ev::WorkingsetActivateAnon, Ev::WorkingsetActivateFile), 1);
        } else {
            count_workingset(mm, memcg, refault_ev, 1);
        }
        self.restore_if_hot(mm, pfn, memcg, ty, refs);
    }

    /// The end of lru_gen_refault(): a refault in a page fault (a page pushed out while hot)
    /// or of a page accessed many times through file descriptors is restored.
    fn restore_if_hot(&mut self, mm: &mut Mm, pfn: Pfn, memcg: MemcgId, ty: usize, refs: u32) {
        let in_fault = mm.current_task().is_some_and(|t| mm.tasks[t].in_lru_fault);
        if in_fault || refs >= 3 {
            mm.folios.set(pfn, pg::REFS_MASK | pg::WORKINGSET);
            count_workingset(mm, memcg, by_type(ty == 1, Ev::WorkingsetRestoreAnon, Ev::WorkingsetRestoreFile), 1);
        }
    }

    /// Seed 000 (Kairui Song, "Refault distance update with MGLRU support", RFC v3): the
    /// classic refault-distance test applied to MGLRU.
    ///
    /// The patch 6/6 diff is not in pagelab's notes; this follows the cover letter and the
    /// rule patch 1 gives the classic LRU, mapped onto generations as the series describes:
    /// the two youngest generations are "active", the older ones "inactive". The distance is
    /// the eviction memcg's nonresident clock (advanced by every MGLRU eviction) since the
    /// shadow was made. With `inactive = inactive file + (inactive anon if swap)` and
    /// `active = active file + (active anon if swap)`:
    /// if `active >= inactive`, the refault is recent iff `distance < inactive`; otherwise iff
    /// `distance < active + (file ? inactive anon : inactive file)`.
    /// Every matching refault counts as workingset_refault; a recent one is re-activated
    /// (placed in the youngest generation, whatever generation its shadow came from),
    /// counts as workingset_activate, and feeds its tier's refault statistics, so the
    /// controller sees it; a restore is counted as in lru_gen_refault().
    fn refault_by_distance(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow) {
        let f = *mm.folios.get(pfn);
        let ty = f.lru_type();
        let memcg = f.memcg;
        let eviction_memcg = shadow.memcg();
        count_workingset(mm, memcg, by_type(ty == 1, Ev::WorkingsetRefaultAnon, Ev::WorkingsetRefaultFile), 1);
        let stamp = shadow.eviction() >> REFS_WIDTH;
        let now = mm.memcgs.get(eviction_memcg).lruvec.nonresident_age;
        let distance = now.wrapping_sub(stamp) & (Shadow::EVICTION_MASK >> REFS_WIDTH);
        let (active, inactive_anon, inactive_file) = self.active_inactive(mm, eviction_memcg);
        let inactive = inactive_anon + inactive_file;
        let recent = if active >= inactive { distance < inactive } else { distance < active + if ty == 1 { inactive_anon } else { inactive_file } };
        if !recent {
            return;
        }
        let refs = (shadow.eviction() & ((1 << REFS_WIDTH) - 1)) as u32 + shadow.workingset() as u32;
        let tier = lru_tier_from_refs(refs);
        self.lv[memcg as usize].refaulted[ty][tier] += 1;
        {
            let fm = mm.folios.get_mut(pfn);
            fm.flags = (fm.flags & !REFS_ALL) | pg::ACTIVE;
        }
        count_workingset(mm, memcg, by_type(ty == 1, Ev::WorkingsetActivateAnon, Ev::WorkingsetActivateFile), 1);
        if shadow.workingset() {
            mm.folios.set(pfn, pg::WORKINGSET);
            count_workingset(mm, memcg, by_type(ty == 1, Ev::WorkingsetRestoreAnon, Ev::WorkingsetRestoreFile), 1);
        }
    }

    /// Pages in the two youngest generations (anon only with swap), and in the older ones
    /// of anon (with swap) and file, of a memcg's subtree.
    fn active_inactive(&self, mm: &Mm, memcg: MemcgId) -> (u64, u64, u64) {
        let swap = mm.can_swap();
        let (mut active, mut inactive_anon, mut inactive_file) = (0u64, 0u64, 0u64);
        for &m in mm.memcgs.subtree(memcg) {
            let lv = &self.lv[m as usize];
            for ty in 0..2 {
                if ty == 0 && !swap {
                    continue;
                }
                for seq in lv.min_seq[ty]..=lv.max_seq {
                    let n = lv.nr_pages[gen_of(seq)][ty].max(0) as u64;
                    if seq + 1 >= lv.max_seq {
                        active += n;
                    } else if ty == 0 {
                        inactive_anon += n;
                    } else {
                        inactive_file += n;
                    }
                }
            }
        }
        (active, inactive_anon, inactive_file)
    }
}
