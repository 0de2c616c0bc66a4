//! Aging (mm/vmscan.c): when to create a generation (should_run_aging()), the page-table walk
//! over every task of the memcg that promotes young mapped pages to the youngest generation
//! (try_to_inc_max_seq(), walk_pmd_range(), walk_pte_range()) with the Bloom filters that
//! skip sparse page tables, and the look-around from the eviction path
//! (lru_gen_look_around()).

use super::gen::{folio_gen, gen_of};
use super::{LruGen, LvId, MIN_LRU_BATCH, MIN_NR_GENS};
use crate::mm::folio::{pg, Pfn};
use crate::mm::mapping::{Entry, Vpn};
use crate::mm::profile::Func;
use crate::mm::{Actor, Mm};

/// PTEs per page table (a PMD covers this many pages).
const PTRS_PER_PTE: u32 = 512;
/// Bits of each Bloom filter (BLOOM_FILTER_SHIFT 15).
const BLOOM_BITS: u32 = 1 << 15;
/// folio_activate() batches below this size in 6.1's look-around (PAGEVEC_SIZE).
const LOOK_AROUND_BATCH_6_1: usize = 15;

/// Models mm/vmscan.c: suitable_to_scan(): at least one young PTE per cache line of PTEs
/// (8 on x86) on average.
fn suitable_to_scan(total: u32, young: u32) -> bool {
    young * 8 >= total
}

/// The two 15-bit keys of a page table (get_item_key(): a hash of its address).
fn bloom_keys(pmd: u32) -> [u32; 2] {
    let h = (pmd as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 34; // 30 bits
    [(h as u32) & (BLOOM_BITS - 1), ((h >> 15) as u32) & (BLOOM_BITS - 1)]
}

/// Page-table walk statistics (the mm_stats of lru_gen_full): leaf total, leaf old, leaf
/// young, non-leaf total, found, added.
pub const MM_STATS: usize = 6;

impl LruGen {
    /// Models mm/vmscan.c: should_run_aging() (6.1; 6.12 computes nr_to_scan unshifted and
    /// returns early with fewer than three generations): whether to create a generation, and
    /// the pages eligible to scan.
    // The loops run over the LRU types from the first one reclaim may touch (file only when
    // it cannot swap), as the kernel's own loops do; an iterator would hide that start.
    #[allow(clippy::needless_range_loop)]
    pub fn should_run_aging(&self, k: LvId, can_swap: bool, priority: u32) -> (bool, u64) {
        let lv = self.lrugen(k);
        let max_seq = lv.max_seq;
        let min_seq = lv.min_seq;
        let eligible_min = min_seq[(!can_swap) as usize];
        if self.kernel.lru_gen_aging_test_first() && eligible_min + MIN_NR_GENS as u64 > max_seq {
            return (true, 0);
        }
        let (mut old, mut young, mut total) = (0u64, 0u64, 0u64);
        for ty in (!can_swap) as usize..2 {
            for seq in min_seq[ty]..=max_seq {
                let size = lv.nr_pages[gen_of(seq)][ty].max(0) as u64;
                total += size;
                if seq == max_seq {
                    young += size;
                } else if seq + MIN_NR_GENS as u64 == max_seq {
                    old += size;
                }
            }
        }
        let nr_to_scan = if self.kernel.lru_gen_aging_test_first() { total } else { total >> priority };
        let need = if eligible_min + MIN_NR_GENS as u64 > max_seq {
            true
        } else if eligible_min + (MIN_NR_GENS as u64) < max_seq {
            false
        } else {
            young * MIN_NR_GENS as u64 > total || old * (MIN_NR_GENS as u64 + 2) < total
        };
        (need, nr_to_scan)
    }

    /// Models mm/vmscan.c: try_to_inc_max_seq() (6.1/6.12/7.3, one walker at a time) of
    /// lruvec `k`: with page-table walks enabled, walk every task of the memcg for the
    /// lruvec's node, then create the lruvec's generation. Fails when another walk already
    /// covered `max_seq` (the lruvec's `mm_state.seq`).
    pub fn try_to_inc_max_seq(&mut self, mm: &mut Mm, k: LvId, max_seq: u64, can_swap: bool) -> bool {
        if max_seq <= self.lrugen(k).mm_seq {
            return false;
        }
        if self.walks {
            self.walk_mms(mm, k, max_seq, can_swap);
        }
        self.lrugen_mut(k).mm_seq = max_seq;
        self.inc_max_seq(mm, k, can_swap);
        true
    }

    /// Models mm/vmscan.c: should_skip_mm()'s node test (6.1/6.12/7.3): `mm->lru_gen.bitmap`
    /// has a bit per node, all set when the task runs (lru_gen_use_mm()); a walk for node
    /// `nid` takes a task whose bit is set and clears it, so each node's walk sees a task
    /// once after it ran. The memcg's `mm_list` is one for all nodes, each node's lruvec
    /// keeping its own place in it (`mm_state`).
    fn mm_used_since_walk(&mut self, mm: &mut Mm, t: usize, nid: usize) -> bool {
        if self.mm_bitmap.len() <= t {
            self.mm_bitmap.resize(mm.tasks.len(), 0);
        }
        if mm.tasks[t].ran {
            mm.tasks[t].ran = false;
            self.mm_bitmap[t] = !0;
        }
        let bit = 1u64 << (nid % 64);
        let used = self.mm_bitmap[t] & bit != 0;
        self.mm_bitmap[t] &= !bit;
        used
    }

    /// Models iterate_mm_list() + walk_mm() for one full pass of lruvec `k` (6.1/6.12/7.3):
    /// the tasks of the memcg that ran since the node's last walk (6.1 also skips tasks with
    /// fewer than 64 eligible pages). The Bloom filter of the next generation is cleared
    /// only when the pass takes a task (iterate_mm_list(): `mm && first`); a pass that takes
    /// none, as a second aging before the task runs again, leaves that filter as the walk
    /// two generations back filled it.
    fn walk_mms(&mut self, mm: &mut Mm, k: LvId, max_seq: u64, can_swap: bool) {
        // reset_bloom_filter() of the next generation comes with the first task the pass
        // takes (iterate_mm_list(): `mm && first`).
        let mut first = true;
        for t in 0..mm.tasks.len() {
            if mm.tasks[t].memcg != k.memcg || mm.tasks[t].killed || !self.mm_used_since_walk(mm, t, k.nid) {
                continue;
            }
            let mut objects: Vec<usize> = mm.tasks[t].mapped_files.clone();
            if can_swap {
                objects.extend(mm.tasks[t].anon_objects.iter().copied());
            }
            if self.kernel.lru_gen_walk_skips_small_mms() {
                let anon = mm.tasks[t].rss_anon * can_swap as u64;
                let eligible = anon + Self::mapped_file_pages(mm, &mm.tasks[t].mapped_files, MIN_LRU_BATCH.saturating_sub(anon));
                if eligible < MIN_LRU_BATCH {
                    continue;
                }
            }
            if first {
                self.bloom_reset(k, max_seq + 1);
                first = false;
            }
            for obj in objects {
                let (base, pages) = (mm.space.objects[obj].base, mm.space.objects[obj].pages);
                self.walk_range(mm, k, base, base + pages, max_seq);
            }
        }
    }

    /// MM_FILEPAGES of a task (pagelab keeps no per-task file RSS): its mapped pages of the
    /// files it mapped, counted up to `enough`.
    fn mapped_file_pages(mm: &Mm, files: &[usize], enough: u64) -> u64 {
        let mut n = 0;
        for &o in files {
            let (base, pages) = (mm.space.objects[o].base, mm.space.objects[o].pages);
            let (mut next, end) = (base as u64, base as u64 + pages as u64);
            while let Some(v) = mm.space.next_touched(next, end) {
                if n >= enough {
                    return n;
                }
                next = v as u64 + 1;
                n += mm.space.resident(v).is_some_and(|p| mm.folios.test(p, pg::MAPPED)) as u64;
            }
        }
        n
    }

    /// Models mm/vmscan.c: walk_pmd_range() over a mapping: page tables whose PMD was not
    /// accessed since the last walk (cap 0x0004) or that the Bloom filter of `max_seq` does
    /// not hold are skipped; suitable ones carry over to the next generation's filter.
    fn walk_range(&mut self, mm: &mut Mm, k: LvId, start: Vpn, end: Vpn, max_seq: u64) {
        let mut pmd_start = start;
        while pmd_start < end {
            let pmd = pmd_start / PTRS_PER_PTE;
            let pmd_end = ((pmd + 1) * PTRS_PER_PTE).min(end);
            self.lrugen_mut(k).mm_stats[3] += 1;
            let accessed = mm.test_clear_pmd_young(pmd_start);
            let skip = (self.pmd_young && !accessed) || !self.bloom_test(k, max_seq, pmd);
            if !skip {
                self.lrugen_mut(k).mm_stats[4] += 1;
                if self.walk_pte_range(mm, k, pmd_start, pmd_end, max_seq) {
                    self.lrugen_mut(k).mm_stats[5] += 1;
                    self.bloom_add(k, max_seq + 1, pmd);
                }
            }
            pmd_start = pmd_end;
        }
    }

    /// Models mm/vmscan.c: walk_pte_range() (6.1/6.12/7.3): clear the young bit of every young
    /// mapped page of the lruvec (its memcg, on its node: get_pfn_folio() passes over a folio
    /// of another node, young bit and all) and give it the youngest generation
    /// (folio_update_gen()). Returns whether the table was dense enough in young pages to walk
    /// next time.
    fn walk_pte_range(&mut self, mm: &mut Mm, k: LvId, start: Vpn, end: Vpn, max_seq: u64) -> bool {
        let new_gen = gen_of(max_seq);
        let (mut total, mut young) = (0u32, 0u32);
        for vpn in start..end {
            total += 1;
            let Entry::Resident(pfn) = mm.space.get(vpn) else { continue };
            let f = *mm.folios.get(pfn);
            if !f.test(pg::MAPPED) || f.test(pg::NORECENCY) {
                continue;
            }
            if !f.test(pg::YOUNG) {
                self.lrugen_mut(k).mm_stats[1] += 1;
                continue;
            }
            if f.memcg != k.memcg || mm.folio_nid(pfn) != k.nid {
                continue;
            }
            mm.folios.clear(pfn, pg::YOUNG);
            young += 1;
            self.lrugen_mut(k).mm_stats[2] += 1;
            self.promote(mm, pfn, new_gen);
        }
        self.lrugen_mut(k).mm_stats[0] += total as u64;
        // Each PTE read costs a load; each young one the walk clears and promotes costs a
        // scanned folio's work (its cold struct page, the PTE's atomic test-and-clear,
        // folio_update_gen()'s cmpxchg of the flags).
        let cost = mm.cfg.costs.touch_ns * total as u64 + mm.cfg.costs.scan_page_ns * young as u64;
        mm.cpu_in(Func::WalkPageRange, cost);
        suitable_to_scan(total, young)
    }

    /// folio_update_gen() to the youngest generation, with the size bookkeeping.
    fn promote(&mut self, mm: &mut Mm, pfn: Pfn, new_gen: usize) {
        let ty = mm.folios.get(pfn).lru_type();
        let (k, _) = Self::folio_lruvec(mm, pfn);
        if let Some(old) = self.folio_update_gen(mm, pfn, new_gen) {
            if old != new_gen {
                let nr = mm.folios.nr_pages(pfn) as i64;
                self.update_size(mm, k, ty, Some(old), Some(new_gen), nr);
            }
        }
    }

    /// Models mm/vmscan.c: lru_gen_look_around() (6.1/6.12): reclaim found `pfn` young
    /// through its PTE; look at up to 64 neighbouring PTEs in the same page table and
    /// mapping, clearing young bits and promoting the young pages of the same lruvec
    /// (folio_lruvec() of the trigger: its memcg and node; get_pfn_folio() skips the others).
    /// Without
    /// a walk context (everyone but kswapd) they are activated through folio_activate() —
    /// in 6.1 only when fewer than 15 — else their generation is updated in place. In 6.1
    /// the window's loop meets the triggering folio still young and, it being isolated, sets
    /// its PG_referenced; 6.12 cleared the trigger before and counts it as young without
    /// looking (see [`folio_referenced`](crate::mm::vmscan::folio_referenced)).
    pub fn look_around(&mut self, mm: &mut Mm, pfn: Pfn) {
        let f = *mm.folios.get(pfn);
        let (k, _) = Self::folio_lruvec(mm, pfn);
        let vpn = f.vpn;
        let obj = mm.space.object_of(vpn);
        let (vma_start, vma_end) = (mm.space.objects[obj].base, mm.space.objects[obj].base + mm.space.objects[obj].pages);
        let pmd = vpn / PTRS_PER_PTE;
        let mut start = (pmd * PTRS_PER_PTE).max(vma_start);
        let mut end = ((pmd + 1) * PTRS_PER_PTE).min(vma_end);
        let half = MIN_LRU_BATCH as u32 / 2;
        if end - start > MIN_LRU_BATCH as u32 {
            if vpn - start < half {
                end = start + MIN_LRU_BATCH as u32;
            } else if end - vpn < half {
                start = end - MIN_LRU_BATCH as u32;
            } else {
                start = vpn - half;
                end = vpn + half;
            }
        }
        if self.kernel.lru_gen_look_around_always_activates() && end - start <= 1 {
            return;
        }
        let max_seq = self.lrugen(k).max_seq;
        let new_gen = gen_of(max_seq);
        // 6.12 cleared the trigger's young bit before the window and counts it as the first
        // young PTE; 6.1 meets it in the window.
        let first = self.kernel.lru_gen_look_around_clears_its_trigger_first() as u32;
        let (mut total, mut young) = (0u32, first);
        let mut marked: Vec<Pfn> = Vec::new();
        let v7_3 = self.kernel.lru_gen_workingset_top_tier();
        for v in start..end {
            total += 1;
            let Entry::Resident(p) = mm.space.get(v) else { continue };
            let nf = *mm.folios.get(p);
            if !nf.test(pg::MAPPED) || !nf.test(pg::YOUNG) || nf.memcg != k.memcg || mm.folio_nid(p) != k.nid {
                continue;
            }
            mm.folios.clear(p, pg::YOUNG);
            young += 1;
            if v7_3 {
                // walk_update_folio() decides each young folio after the window.
                marked.push(p);
                continue;
            }
            match folio_gen(nf.flags) {
                None => mm.folios.set(p, pg::REFERENCED),
                Some(g) if g != new_gen => marked.push(p),
                Some(_) => {}
            }
        }
        if suitable_to_scan(total, young) {
            self.bloom_add(k, max_seq, pmd);
        }
        let walk = matches!(mm.actor, Actor::Kswapd(_));
        if v7_3 {
            for p in marked {
                self.walk_update_folio(mm, p, new_gen, walk);
            }
            return;
        }
        let activate = !walk && (self.kernel.lru_gen_look_around_always_activates() || marked.len() < LOOK_AROUND_BATCH_6_1);
        for p in marked {
            if activate {
                crate::mm::swap::folio_activate(mm, self, p);
            } else {
                self.promote(mm, p, new_gen);
            }
        }
    }

    /// Models mm/vmscan.c: walk_update_folio() of 7.3.4 (6.14 on) for a young folio the
    /// look-around found: with a walk context (kswapd) folio_update_gen(); without,
    /// lru_gen_set_refs() and, when it promotes a folio on the lists outside the youngest
    /// generation, folio_activate().
    fn walk_update_folio(&mut self, mm: &mut Mm, pfn: Pfn, new_gen: usize, walk: bool) {
        if walk {
            self.promote(mm, pfn, new_gen);
        } else if super::gen::lru_gen_set_refs(mm, pfn) && folio_gen(mm.folios.get(pfn).flags).is_some_and(|g| g != new_gen) {
            crate::mm::swap::folio_activate(mm, self, pfn);
        }
    }

    /// The Bloom filter of `seq` (two filters, by seq % 2); a filter not yet created tests
    /// positive for everything.
    fn bloom_test(&self, k: LvId, seq: u64, pmd: u32) -> bool {
        match &self.lrugen(k).bloom[(seq % 2) as usize] {
            None => true,
            Some(bits) => bloom_keys(pmd).iter().all(|&k| bits[(k / 64) as usize] & (1 << (k % 64)) != 0),
        }
    }

    fn bloom_add(&mut self, k: LvId, seq: u64, pmd: u32) {
        if let Some(bits) = &mut self.lrugen_mut(k).bloom[(seq % 2) as usize] {
            for k in bloom_keys(pmd) {
                bits[(k / 64) as usize] |= 1 << (k % 64);
            }
        }
    }

    /// Models reset_bloom_filter(): (create and) clear the filter of `seq` of lruvec `k`
    /// (the Bloom filters are the lruvec's `mm_state.filters`, 6.1/6.12/7.3).
    fn bloom_reset(&mut self, k: LvId, seq: u64) {
        let slot = &mut self.lrugen_mut(k).bloom[(seq % 2) as usize];
        match slot {
            Some(bits) => bits.iter_mut().for_each(|w| *w = 0),
            None => *slot = Some(vec![0u64; (BLOOM_BITS / 64) as usize]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_young_pte_per_cache_line_is_suitable() {
        assert!(suitable_to_scan(512, 64));
        assert!(!suitable_to_scan(512, 63));
    }

    #[test]
    fn bloom_keys_stay_in_range() {
        for pmd in [0, 1, 7, 1 << 20, u32::MAX] {
            assert!(bloom_keys(pmd).iter().all(|&k| k < BLOOM_BITS));
        }
    }
}
