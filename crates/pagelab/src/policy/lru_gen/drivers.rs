//! The reclaim loops around eviction, per kernel version (mm/vmscan.c):
//! 6.1: lru_gen_shrink_lruvec() under the classic memcg walk, with its get_nr_to_scan(),
//! should_abort_scan() and kswapd aging in lru_gen_age_node();
//! 6.12: lru_gen_shrink_node() over the memcg LRU (shrink_many(), shrink_one(),
//! lru_gen_rotate_memcg()), set_initial_priority(), try_to_shrink_lruvec(), and memcg limit
//! reclaim through lru_gen_shrink_lruvec().

use super::{LruGen, LvId, MAX_LRU_BATCH, MIN_LRU_BATCH, MIN_NR_GENS};
use crate::kernel::DEF_PRIORITY;
use crate::mm::memcontrol::{MemcgId, ROOT_MEMCG};
use crate::mm::vmscan::ScanControl;
use crate::mm::Mm;
use pagelab_workload::Rng;

/// `MEMCG_NR_GENS` and `MEMCG_NR_BINS` (6.12).
const MEMCG_NR_GENS: usize = 3;
const MEMCG_NR_BINS: usize = 8;

/// Memcg LRU rotations (`MEMCG_LRU_*`). HEAD (soft-limit excess) and OLD (offlining) have no
/// cause in pagelab, which models neither soft limits nor memcg removal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(dead_code)]
enum Rotate {
    Nop,
    Head,
    Tail,
    Old,
    Young,
}

/// 6.12's memcg LRU of one node (`pgdat->memcg_lru`): generations of bins of the memcgs'
/// lruvecs on the node, reclaimed oldest first.
#[derive(Clone, Debug)]
pub struct MemcgLru {
    seq: u64,
    fifo: Vec<Vec<Vec<MemcgId>>>,
    gen: Vec<usize>,
    /// `lrugen->seg`: whether the memcg was last moved to a head or a tail.
    seg: Vec<Rotate>,
    nr: [usize; MEMCG_NR_GENS],
}

impl MemcgLru {
    /// Models mm/vmscan.c: lru_gen_online_memcg() (6.12/7.3) for every memcg: one random
    /// bin drawn per memcg, and its lruvec on every node goes to the tail of that bin of the
    /// node's current generation.
    pub fn per_node(n: usize, nodes: usize, rng: &mut Rng) -> Vec<MemcgLru> {
        let empty =
            MemcgLru { seq: 0, fifo: vec![vec![Vec::new(); MEMCG_NR_BINS]; MEMCG_NR_GENS], gen: vec![0; n], seg: vec![Rotate::Nop; n], nr: [0; MEMCG_NR_GENS] };
        let mut lrus = vec![empty; nodes];
        for memcg in 0..n {
            let bin = rng.below(MEMCG_NR_BINS as u64) as usize;
            for m in lrus.iter_mut() {
                m.fifo[0][bin].push(memcg as MemcgId);
                m.nr[0] += 1;
            }
        }
        lrus
    }

    /// Models mm/vmscan.c: lru_gen_rotate_memcg(): HEAD/TAIL keep the generation, OLD moves
    /// to the oldest, YOUNG to the next; a random bin each time. An emptied oldest
    /// generation advances the sequence.
    fn rotate(&mut self, memcg: MemcgId, op: Rotate, rng: &mut Rng) {
        let bin = rng.below(MEMCG_NR_BINS as u64) as usize;
        let old = self.gen[memcg as usize];
        let new = match op {
            Rotate::Old => (self.seq % MEMCG_NR_GENS as u64) as usize,
            Rotate::Young => ((self.seq + 1) % MEMCG_NR_GENS as u64) as usize,
            _ => old,
        };
        self.seg[memcg as usize] = if matches!(op, Rotate::Head | Rotate::Tail) { op } else { Rotate::Nop };
        for b in self.fifo[old].iter_mut() {
            b.retain(|&m| m != memcg);
        }
        if matches!(op, Rotate::Head | Rotate::Old) {
            self.fifo[new][bin].insert(0, memcg);
        } else {
            self.fifo[new][bin].push(memcg);
        }
        self.gen[memcg as usize] = new;
        self.nr[old] -= 1;
        self.nr[new] += 1;
        if self.nr[old] == 0 && old == (self.seq % MEMCG_NR_GENS as u64) as usize {
            self.seq += 1;
        }
    }
}

impl LruGen {
    /// Models lru_gen_shrink_lruvec() of lruvec `k` — 6.1: the eviction loop for one memcg's
    /// lruvec on the node under any reclaim; 6.12: memcg limit reclaim only
    /// (try_to_shrink_lruvec(), then a YOUNG rotation in the node's memcg LRU if it aged).
    pub fn lru_gen_shrink_lruvec(&mut self, mm: &mut Mm, k: LvId, sc: &mut ScanControl) {
        crate::mm::swap::lru_add_drain(mm, self);
        if self.kernel.lru_gen_memcg_lru() {
            if self.try_to_shrink_lruvec(mm, k, sc) {
                self.memcg_lru[k.nid].rotate(k.memcg, Rotate::Young, &mut self.rng);
            }
            return;
        }
        let reclaimed = sc.nr_reclaimed;
        let max_seq_at_start = self.lrugen(k).max_seq;
        self.need_swapping = false;
        let mut need_aging = false;
        let mut scanned = 0;
        loop {
            let swappiness = if sc.may_swap {
                self.get_swappiness(mm, sc)
            } else if !sc.cgroup_reclaim() && self.get_swappiness(mm, sc) > 0 {
                1
            } else {
                0
            };
            let nr_to_scan = self.get_nr_to_scan_6_1(mm, k, sc, swappiness, &mut need_aging);
            if nr_to_scan == 0 {
                return;
            }
            let delta = self.evict_folios(mm, k, sc, swappiness, MAX_LRU_BATCH);
            if delta == 0 {
                return;
            }
            scanned += delta;
            if scanned >= nr_to_scan {
                break;
            }
            if self.should_abort_scan_6_1(mm, k, max_seq_at_start, sc) {
                break;
            }
            mm.cond_resched(self);
        }
        if sc.nr_reclaimed - reclaimed >= MIN_LRU_BATCH && !need_aging {
            sc.memcgs_need_aging = false;
        }
    }

    /// Models mm/vmscan.c: get_nr_to_scan() of 6.1: nothing for protected memcgs; with
    /// aging needed, age (not at DEF_PRIORITY, and kswapd leaves it to lru_gen_age_node()).
    fn get_nr_to_scan_6_1(&mut self, mm: &mut Mm, k: LvId, sc: &ScanControl, swappiness: u64, need_aging: &mut bool) -> u64 {
        let memcg = k.memcg;
        if mm.memcgs.below_min(Some(sc.target), memcg) || (mm.memcgs.below_low(Some(sc.target), memcg) && !sc.memcg_low_reclaim) {
            return 0;
        }
        let can_swap = swappiness != 0;
        let (need, nr_to_scan) = self.should_run_aging(k, can_swap, sc.priority);
        *need_aging = need;
        if !need {
            return nr_to_scan;
        }
        if sc.priority != DEF_PRIORITY {
            if sc.is_kswapd() {
                return 0;
            }
            let max_seq = self.lrugen(k).max_seq;
            if self.try_to_inc_max_seq(mm, k, max_seq, can_swap) {
                return nr_to_scan;
            }
        }
        let lv = self.lrugen(k);
        if lv.min_seq[(!can_swap) as usize] + MIN_NR_GENS as u64 <= lv.max_seq {
            nr_to_scan
        } else {
            0
        }
    }

    /// Models mm/vmscan.c: should_abort_scan() of 6.1: direct reclaim stops after aging
    /// twice, or once the target is met and anon was evicted; kswapd continues until its
    /// target; both stop below priority 10 once every zone is above its low (direct) or
    /// high (kswapd) watermark (the zones of the node reclaimed, `lruvec_pgdat()`).
    fn should_abort_scan_6_1(&mut self, mm: &Mm, k: LvId, seq: u64, sc: &mut ScanControl) -> bool {
        if !sc.is_kswapd() {
            if self.lrugen(k).max_seq - seq > 1 {
                return true;
            }
            if sc.nr_reclaimed >= sc.nr_to_reclaim && self.need_swapping {
                return true;
            }
            if sc.cgroup_reclaim() {
                return false;
            }
        } else if sc.nr_reclaimed - sc.last_reclaimed < sc.nr_to_reclaim {
            return false;
        }
        if sc.priority > DEF_PRIORITY - 2 {
            return false;
        }
        let kswapd = sc.is_kswapd();
        let unsafe_zone = mm.node_zones(k.nid).any(|i| {
            let z = mm.zone(i);
            let mark = if kswapd { z.wmark_high } else { z.wmark_low };
            mark > mm.zone_free(i)
        });
        if unsafe_zone {
            return false;
        }
        sc.nr_reclaimed += MIN_LRU_BATCH;
        true
    }

    /// Models mm/vmscan.c: lru_gen_age_node() of the node kswapd balances (`sc.nid`) — 6.1:
    /// kswapd ages every memcg's lruvec on the node that needs it (not on the first priority
    /// iteration of a run) and, with min_ttl_ms set, OOM-kills when no lruvec is reclaimable;
    /// 6.12: no aging here, only set_initial_priority() and the min_ttl_ms check.
    pub fn lru_gen_age_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        if self.kernel.lru_gen_ages_in_get_nr_to_scan() {
            self.set_initial_priority(mm, sc);
            let mut reclaimable = self.min_ttl_ns == 0;
            for i in 0..mm.memcgs.preorder.len() {
                let memcg = mm.memcgs.preorder[i];
                mm.memcgs.calculate_protection(ROOT_MEMCG, memcg, mm.cfg.tunables.memory_recursiveprot);
                if !reclaimable {
                    reclaimable = self.lruvec_is_reclaimable(mm, LvId::new(memcg, sc.nid), sc);
                }
            }
            if !reclaimable {
                crate::mm::oom_kill::out_of_memory(mm, self, None);
            }
            return;
        }
        sc.last_reclaimed = sc.nr_reclaimed;
        if !sc.memcgs_need_aging {
            sc.memcgs_need_aging = true;
            return;
        }
        let mut success = false;
        for i in 0..mm.memcgs.preorder.len() {
            let memcg = mm.memcgs.preorder[i];
            if self.age_lruvec(mm, LvId::new(memcg, sc.nid), sc) {
                success = true;
            }
        }
        if !success && self.min_ttl_ns > 0 {
            crate::mm::oom_kill::out_of_memory(mm, self, None);
        }
    }

    /// Models mm/vmscan.c: age_lruvec() of 6.1.
    fn age_lruvec(&mut self, mm: &mut Mm, k: LvId, sc: &ScanControl) -> bool {
        let memcg = k.memcg;
        let swappiness = self.get_swappiness(mm, sc);
        mm.memcgs.calculate_protection(ROOT_MEMCG, memcg, mm.cfg.tunables.memory_recursiveprot);
        if mm.memcgs.below_min(None, memcg) {
            return false;
        }
        let (need_aging, nr_to_scan) = self.should_run_aging(k, swappiness != 0, sc.priority);
        if self.min_ttl_ns > 0 {
            let lv = self.lrugen(k);
            let birth = lv.timestamps[super::gen_of(lv.min_seq[1])];
            if birth + self.min_ttl_ns > mm.now() {
                return false;
            }
            if nr_to_scan == 0 && sc.priority != DEF_PRIORITY {
                return false;
            }
        }
        if need_aging {
            let max_seq = self.lrugen(k).max_seq;
            self.try_to_inc_max_seq(mm, k, max_seq, swappiness != 0);
        }
        true
    }

    /// Models mm/vmscan.c: lruvec_is_sizable() (6.12).
    fn lruvec_is_sizable(&self, mm: &Mm, k: LvId, sc: &ScanControl) -> bool {
        let can_swap = self.get_swappiness(mm, sc) != 0;
        let lv = self.lrugen(k);
        let mut total = 0u64;
        for ty in (!can_swap) as usize..2 {
            for seq in lv.min_seq[ty]..=lv.max_seq {
                total += lv.nr_pages[super::gen_of(seq)][ty].max(0) as u64;
            }
        }
        (total >> sc.priority) != 0
    }

    /// Models mm/vmscan.c: lruvec_is_reclaimable() (6.12): not protected, sizable, and its
    /// oldest file generation older than min_ttl_ms.
    fn lruvec_is_reclaimable(&self, mm: &Mm, k: LvId, sc: &ScanControl) -> bool {
        if mm.memcgs.below_min(None, k.memcg) || !self.lruvec_is_sizable(mm, k, sc) {
            return false;
        }
        let lv = self.lrugen(k);
        lv.timestamps[super::gen_of(lv.min_seq[1])] + self.min_ttl_ns < mm.now()
    }

    /// Models mm/vmscan.c: set_initial_priority() (6.12): reclaim of at least 64 pages starts
    /// at the priority that scans about that many of the node's inactive pages
    /// (node_page_state(pgdat): every memcg's lruvec on the node reclaimed), within [6, 12].
    fn set_initial_priority(&self, mm: &Mm, sc: &mut ScanControl) {
        if sc.priority != DEF_PRIORITY || sc.nr_to_reclaim < MIN_LRU_BATCH {
            return;
        }
        let mut reclaimable = mm.pgdat_lru_size(sc.nid, crate::mm::vmstat::Lru::InactiveFile);
        if mm.can_swap() {
            reclaimable += mm.pgdat_lru_size(sc.nid, crate::mm::vmstat::Lru::InactiveAnon);
        }
        let fls = |x: u64| 64 - x.leading_zeros() as i64;
        let priority = fls(reclaimable) - 1 - fls(sc.nr_to_reclaim - 1);
        sc.priority = priority.clamp(DEF_PRIORITY as i64 / 2, DEF_PRIORITY as i64) as u32;
    }

    /// Models mm/vmscan.c: get_nr_to_scan() of 6.12: -1 for a memcg below memory.min or
    /// after aging succeeded (stop this memcg), 0 if aging failed.
    fn get_nr_to_scan_6_12(&mut self, mm: &mut Mm, k: LvId, sc: &ScanControl, can_swap: bool) -> i64 {
        mm.memcgs.calculate_protection(sc.target, k.memcg, mm.cfg.tunables.memory_recursiveprot);
        if mm.memcgs.below_min(Some(sc.target), k.memcg) {
            return -1;
        }
        let (need, nr_to_scan) = self.should_run_aging(k, can_swap, sc.priority);
        if !need || sc.priority == DEF_PRIORITY {
            return (nr_to_scan >> sc.priority) as i64;
        }
        let max_seq = self.lrugen(k).max_seq;
        if self.try_to_inc_max_seq(mm, k, max_seq, can_swap) {
            -1
        } else {
            0
        }
    }

    /// Models mm/vmscan.c: should_abort_scan() of 6.12: only root reclaim stops, once its
    /// target is met or, for kswapd, once every zone passes high + 64 with its lowmem
    /// reserve (zone_watermark_ok()), the zones of the node reclaimed — which x86-64's ZONE_DMA
    /// rarely does while kswapd runs:
    /// the allocator leaves it near low + reserve, and a run returns it only its share of
    /// the pages reclaimed, so kswapd then stops at its target.
    fn should_abort_scan_6_12(&self, mm: &Mm, sc: &ScanControl) -> bool {
        if sc.cgroup_reclaim() {
            return false;
        }
        if sc.nr_reclaimed >= sc.nr_to_reclaim {
            return true;
        }
        sc.is_kswapd()
            && mm.node_zones(sc.nid).all(|i| {
                let z = mm.zone(i);
                mm.zone_free(i) > z.wmark_high + MIN_LRU_BATCH + z.lowmem_reserve
            })
    }

    /// Models mm/vmscan.c: try_to_shrink_lruvec() (6.12) of lruvec `k`. Returns whether aging
    /// succeeded.
    fn try_to_shrink_lruvec(&mut self, mm: &mut Mm, k: LvId, sc: &mut ScanControl) -> bool {
        if self.kernel.lru_gen_scan_budget_up_front() {
            return self.try_to_shrink_lruvec_7_3(mm, k, sc);
        }
        let swappiness = self.get_swappiness(mm, sc);
        let mut scanned = 0;
        loop {
            let nr_to_scan = self.get_nr_to_scan_6_12(mm, k, sc, swappiness != 0);
            if nr_to_scan <= 0 {
                return nr_to_scan < 0;
            }
            let delta = self.evict_folios(mm, k, sc, swappiness, MAX_LRU_BATCH);
            if delta == 0 {
                return false;
            }
            scanned += delta;
            if scanned >= nr_to_scan as u64 || self.should_abort_scan_6_12(mm, sc) {
                return false;
            }
            mm.cond_resched(self);
        }
    }

    /// Models mm/vmscan.c: get_nr_to_scan() of 7.3.4: the lruvec's evictable pages
    /// (lruvec_evictable_size(): every generation of the types reclaim may take), scaled by
    /// memory.min/low as the classic LRU scales (apply_proportional_protection()), shifted by
    /// the priority. No aging here (7.2).
    fn get_nr_to_scan_7_3(&self, mm: &Mm, k: LvId, sc: &mut ScanControl, can_swap: bool) -> u64 {
        let memcg = k.memcg;
        let lv = self.lrugen(k);
        let mut evictable = 0u64;
        for ty in (!can_swap) as usize..2 {
            for seq in lv.min_seq[ty]..=lv.max_seq {
                evictable += lv.nr_pages[super::gen_of(seq)][ty].max(0) as u64;
            }
        }
        let (min, low) = mm.memcgs.protection(sc.target, memcg);
        if min > 0 || low > 0 {
            let protection = if !sc.memcg_low_reclaim && low > min {
                sc.memcg_low_skipped = true;
                low
            } else {
                min
            };
            let cgroup_size = mm.memcgs.get(memcg).usage.max(protection);
            let scan = evictable - (evictable as u128 * protection as u128 / (cgroup_size as u128 + 1)) as u64;
            evictable = scan.max(crate::kernel::SWAP_CLUSTER_MAX);
        }
        evictable >> sc.priority
    }

    /// Models mm/vmscan.c: should_run_aging() of 7.3.4: age when fewer than MIN_NR_GENS
    /// generations are evictable; at the default priority never otherwise; below it, when
    /// exactly MIN_NR_GENS are.
    fn should_run_aging_7_3(&self, k: LvId, can_swap: bool, priority: u32) -> bool {
        let lv = self.lrugen(k);
        let min_seq = lv.min_seq[(!can_swap) as usize..].iter().copied().min().unwrap_or(lv.max_seq);
        if min_seq + MIN_NR_GENS as u64 > lv.max_seq {
            return true;
        }
        priority != DEF_PRIORITY && min_seq + MIN_NR_GENS as u64 == lv.max_seq
    }

    /// Models mm/vmscan.c: try_to_shrink_lruvec() of 7.3.4 ([`Kernel::lru_gen_scan_budget_up_front`]):
    /// the budget computed once; each turn checks memory.min, ages when should_run_aging()
    /// asks (without leaving), evicts at most MIN_LRU_BATCH folios, and stops when nothing
    /// was scanned, when should_abort_scan() says so, or, for root reclaim, after the batch
    /// that followed aging. Returns whether the memcg should rotate (below min, or aging
    /// created a generation).
    ///
    /// [`Kernel::lru_gen_scan_budget_up_front`]: crate::kernel::Kernel::lru_gen_scan_budget_up_front
    fn try_to_shrink_lruvec_7_3(&mut self, mm: &mut Mm, k: LvId, sc: &mut ScanControl) -> bool {
        let swappiness = self.get_swappiness(mm, sc);
        let can_swap = swappiness != 0;
        let (mut need_rotate, mut should_age) = (false, false);
        mm.memcgs.calculate_protection(sc.target, k.memcg, mm.cfg.tunables.memory_recursiveprot);
        let mut nr_to_scan = self.get_nr_to_scan_7_3(mm, k, sc, can_swap);
        while nr_to_scan > 0 {
            if mm.memcgs.below_min(Some(sc.target), k.memcg) {
                need_rotate = true;
                break;
            }
            if self.should_run_aging_7_3(k, can_swap, sc.priority) {
                let max_seq = self.lrugen(k).max_seq;
                if self.try_to_inc_max_seq(mm, k, max_seq, can_swap) {
                    need_rotate = true;
                }
                should_age = true;
            }
            let delta = self.evict_folios(mm, k, sc, swappiness, nr_to_scan.min(MIN_LRU_BATCH));
            if delta == 0 || self.should_abort_scan_6_12(mm, sc) || (!sc.cgroup_reclaim() && should_age) {
                break;
            }
            nr_to_scan = nr_to_scan.saturating_sub(delta);
            mm.cond_resched(self);
        }
        need_rotate
    }

    /// Models mm/vmscan.c: shrink_one() (6.12) of lruvec `k`; its place in the memcg LRU is
    /// its node's (`lruvec->lrugen.seg`).
    fn shrink_one(&mut self, mm: &mut Mm, k: LvId, sc: &mut ScanControl) -> Rotate {
        let memcg = k.memcg;
        mm.memcgs.calculate_protection(ROOT_MEMCG, memcg, mm.cfg.tunables.memory_recursiveprot);
        if mm.memcgs.below_min(None, memcg) {
            return Rotate::Young;
        }
        if mm.memcgs.below_low(None, memcg) {
            if self.memcg_lru[k.nid].seg[memcg as usize] != Rotate::Tail {
                return Rotate::Tail;
            }
            mm.memcgs.get_mut(memcg).memory_events.low += 1;
        }
        let success = self.try_to_shrink_lruvec(mm, k, sc);
        crate::mm::vmscan::shrink_slab(mm, memcg, sc.priority);
        if success {
            return Rotate::Young;
        }
        if self.lruvec_is_sizable(mm, k, sc) {
            return Rotate::Nop;
        }
        if self.memcg_lru[k.nid].seg[memcg as usize] != Rotate::Tail {
            Rotate::Tail
        } else {
            Rotate::Young
        }
    }

    /// Models mm/vmscan.c: shrink_many() (6.12/7.3) of the node reclaimed (`sc.nid`): the
    /// oldest generation of the node's memcg LRU, bin by bin from a random one, until
    /// should_abort_scan().
    fn shrink_many(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        let nid = sc.nid;
        let gen = (self.memcg_lru[nid].seq % MEMCG_NR_GENS as u64) as usize;
        let first = self.rng.below(MEMCG_NR_BINS as u64) as usize;
        for i in 0..MEMCG_NR_BINS {
            let bin = (first + i) % MEMCG_NR_BINS;
            let members = self.memcg_lru[nid].fifo[gen][bin].clone();
            for memcg in members {
                if self.memcg_lru[nid].gen[memcg as usize] != gen {
                    continue;
                }
                let op = self.shrink_one(mm, LvId::new(memcg, nid), sc);
                if op != Rotate::Nop {
                    self.memcg_lru[nid].rotate(memcg, op, &mut self.rng);
                }
                if self.should_abort_scan_6_12(mm, sc) {
                    return;
                }
            }
        }
    }

    /// Models mm/vmscan.c: lru_gen_shrink_node() (6.12 root reclaim) of node `sc.nid`: nothing
    /// when writeback or unmapping is forbidden (boosted kswapd); kswapd counts this call's
    /// reclaim from 0.
    pub fn lru_gen_shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl) {
        let reclaimed = sc.nr_reclaimed;
        if sc.may_writepage && sc.may_unmap {
            crate::mm::swap::lru_add_drain(mm, self);
            self.set_initial_priority(mm, sc);
            if sc.is_kswapd() {
                sc.nr_reclaimed = 0;
            }
            self.shrink_many(mm, sc);
            if sc.is_kswapd() {
                sc.nr_reclaimed += reclaimed;
            }
        }
        if sc.nr_reclaimed > reclaimed {
            mm.nodes[sc.nid].reclaim.kswapd_failures = 0;
        }
    }
}
