//! kcompactd after a boosted kswapd run (mm/compaction.c: wakeup_kcompactd(),
//! kcompactd_node_suitable(), kcompactd_do_work(), compact_zone() of 6.1.192 and 6.12.95,
//! which agree on everything modeled here), on a machine with non-movable pageblocks
//! (`machine.nonmovable`; without them nothing here runs).
//!
//! Why it matters: a boosted balance_pgdat() wakes kcompactd at its end. Its migrate scanner,
//! in MIGRATE_SYNC_LIGHT, walks pageblocks of every type from the zone's start, so it also
//! moves out the movable pages that fallbacks left in unmovable and reclaimable blocks; their
//! frames merge back into the large free chunks that the next fallback claims, and boosts the
//! zone again. Without it the model's non-movable free chunks fragment, and 6.12.95 stops
//! boosting (it claims, and boosts, only from a chunk of order 4 or more).
//!
//! What is modeled: the wake-up's conditions (a zone up to the classzone with no free chunk
//! of a pageblock above min, free pages above low + compact_gap(), and a fragmentation index
//! above vm.extfrag_threshold); deferral after runs that complete without a free pageblock;
//! the two scanners, their positions kept between runs, the migrate scanner taking LRU pages
//! not under writeback from blocks of every type, the free scanner taking the movable blocks'
//! free pages from the zone's end down while the zone stays above its min watermark; the run
//! ending when the scanners meet or, at a pageblock boundary, once a free chunk of a
//! pageblock exists; the per-CPU lists drained after a run that completes;
//! and the pageblock skip bits, which make later runs pass over the blocks earlier ones
//! found nothing in (and which kcompactd alone never clears).
//!
//! Proactive compaction (6.1 on, [`kcompactd_timeout`]): when kcompactd's 500 ms sleep times
//! out with no work requested and kswapd asleep, and the node's fragmentation score is above
//! 90, it compacts every zone whole, ignoring the skip bits (it still sets them), until each
//! zone's score is at most 80; a pass that did not lower the node's score makes kcompactd
//! sleep 64 times as long. The free scanner passes over a block that is one free chunk of a
//! pageblock or more (suitable_migration_target()), in both kinds of run.
//!
//! What is not: the free scanner's fast search of the free lists (fast_isolate_freepages():
//! the model's free scanner walks block by block, so it scans more pages), direct compaction
//! (order-0 allocations never compact), kcompactd's CPU time, and where a migrated page goes
//! on its LRU: the kernel puts the new folio back at the head of its list
//! (folio_putback_lru()), the model keeps the page where it was, with its flags. The free
//! pages on the per-CPU lists are the last ones freed, which compaction does not see.

use crate::mm::folio::{pg, Pfn};
use crate::mm::pageblock::{PAGEBLOCK_ORDER, PAGEBLOCK_PAGES};
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use std::collections::HashSet;

/// `COMPACT_MAX_DEFER_SHIFT`.
const COMPACT_MAX_DEFER_SHIFT: u32 = 6;
/// `COMPACT_CLUSTER_MAX`: pages isolated per migration batch.
const COMPACT_CLUSTER_MAX: usize = 32;
/// `PAGE_ALLOC_COSTLY_ORDER`.
const PAGE_ALLOC_COSTLY_ORDER: u32 = 3;
/// vm.extfrag_threshold's default.
const EXTFRAG_THRESHOLD: i64 = 500;
/// vm.compaction_proactiveness's default (sysctl_compaction_proactiveness).
const COMPACTION_PROACTIVENESS: u64 = 20;

/// One zone's compaction state (struct zone's compact_* fields).
#[derive(Clone, Debug, Default)]
struct ZoneCompaction {
    defer_shift: u32,
    considered: u64,
    order_failed: u32,
    /// compact_cached_migrate_pfn / compact_cached_free_pfn (physical frames); `None`: the
    /// zone's start and its last pageblock.
    cached_migrate: Option<Pfn>,
    cached_free: Option<Pfn>,
    /// The pageblock skip bits (PB_migrate_skip), by physical block number: set on a block the
    /// migrate scanner finished without isolating a page or the free scanner finished, and
    /// passed over by both scanners from then on. `__reset_isolation_suitable()` clears them
    /// only after a direct compaction met the other scanner (`compact_blockskip_flush`), which
    /// order-0 allocations never run, so kcompactd's bits stay.
    skip: Vec<bool>,
}

/// The node's kcompactd (pgdat->kcompactd_*).
#[derive(Clone, Debug)]
pub struct Kcompactd {
    zones: Vec<ZoneCompaction>,
    max_order: u32,
    highest_zoneidx: usize,
    /// For the report and tests: pages migrated (pgmigrate_success).
    pub migrated: u64,
    /// Timeouts kcompactd still sleeps through after a proactive pass that did not lower the
    /// node's fragmentation score (its timeout is then default_timeout <<
    /// COMPACT_MAX_DEFER_SHIFT: 63 more of the model's 500 ms ticks); a run of
    /// kcompactd_do_work() sets the default timeout again.
    proactive_wait: u32,
    /// For the report and tests: proactive passes (compact_node() with `proactive`).
    pub proactive_passes: u64,
}

impl Kcompactd {
    /// The timeouts kcompactd still sleeps through after a proactive pass without progress.
    pub fn proactive_wait(&self) -> u32 {
        self.proactive_wait
    }

    pub fn new(zones: usize) -> Kcompactd {
        Kcompactd {
            zones: vec![ZoneCompaction::default(); zones],
            max_order: 0,
            highest_zoneidx: zones - 1,
            migrated: 0,
            proactive_wait: 0,
            proactive_passes: 0,
        }
    }
}

/// compaction_suit_allocation_order()'s answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Suit {
    /// The allocation would succeed already.
    Success,
    /// Too little free memory to compact, or failure would not be fragmentation's.
    Skipped,
    Continue,
}

/// How compact_zone() ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A free chunk of the requested order exists.
    Success,
    /// The scanners met after a run over the whole zone.
    Complete,
    /// The scanners met after a run that started where the last one stopped.
    PartialSkipped,
    /// The free scanner found no target (the zone at its min watermark).
    Contended,
}

/// Models mm/compaction.c: wakeup_kcompactd() (6.1, 6.12) with kcompactd asleep, as it is
/// whenever the model wakes it (it runs to the end at once): note the order and classzone,
/// and run kcompactd_do_work() if some zone up to the classzone is suitable.
pub fn wakeup_kcompactd(mm: &mut Mm, order: u32, classzone: usize) {
    if order == 0 {
        return;
    }
    let Some(pb) = mm.pageblocks.as_mut() else { return };
    let k = &mut pb.kcompactd;
    k.max_order = k.max_order.max(order);
    k.highest_zoneidx = k.highest_zoneidx.min(classzone);
    if kcompactd_node_suitable(mm) {
        kcompactd_do_work(mm);
    }
}

/// Models kcompactd()'s timeout (every HPAGE_FRAG_CHECK_INTERVAL_MSEC; mm/compaction.c of 6.1
/// and 6.12.95, which agree here). A wake-up that found no zone suitable still set
/// kcompactd_max_order, so kcompactd_work_requested() holds when its sleep times out, and it
/// runs kcompactd_do_work(), which judges each zone again. With no work requested it compacts
/// proactively if should_proactive_compact_node() says so (6.1 on), and sleeps 64 times as
/// long after a pass that did not lower the node's fragmentation score.
pub fn kcompactd_timeout(mm: &mut Mm) {
    let Some(pb) = mm.pageblocks.as_mut() else { return };
    let k = &mut pb.kcompactd;
    if k.proactive_wait > 0 {
        // The longer sleep: only a wake-up (kcompactd_do_work() at once) ends it early.
        k.proactive_wait -= 1;
        return;
    }
    if k.max_order > 0 {
        kcompactd_do_work(mm);
        return;
    }
    if !should_proactive_compact_node(mm) {
        return;
    }
    let before = fragmentation_score_node(mm);
    for z in 0..mm.nodes[0].zones.z.len() {
        let (start, end) = mm.folios.zone_span(z);
        if end > start {
            compact_zone_proactively(mm, z);
        }
    }
    let after = fragmentation_score_node(mm);
    let k = &mut mm.pageblocks.as_mut().expect("kcompactd runs with pageblocks").kcompactd;
    k.proactive_passes += 1;
    if after >= before {
        k.proactive_wait = (1 << COMPACT_MAX_DEFER_SHIFT) - 1;
    }
}

/// Models fragmentation_score_wmark() (6.1, 6.12.95; 7.3.4's leeway gives the same at the
/// default proactiveness): a proactive pass starts above the high mark (90) and ends each
/// zone at the low one (80).
fn fragmentation_score_wmark(low: bool) -> u64 {
    let wmark_low = (100 - COMPACTION_PROACTIVENESS).max(5);
    if low {
        wmark_low
    } else {
        (wmark_low + 10).min(100)
    }
}

/// Models should_proactive_compact_node() (6.1, 6.12.95): proactive compaction on, kswapd not
/// running (kswapd_is_running(): in balance_pgdat(), not asleep), and the node's score above
/// the high mark.
fn should_proactive_compact_node(mm: &Mm) -> bool {
    mm.cfg.kernel.compacts_proactively() && mm.nodes[0].reclaim.kswapd.is_none() && fragmentation_score_node(mm) > fragmentation_score_wmark(false)
}

/// Models fragmentation_score_zone() (6.1, 6.12.95): extfrag_for_order() at
/// COMPACTION_HPAGE_ORDER (9 on x86-64, the pageblock order), 0 to 100.
pub fn fragmentation_score_zone(mm: &Mm, z: usize) -> u64 {
    ZoneMap::of(mm, z).extfrag_for_pageblock_order()
}

/// Models fragmentation_score_node() (6.1, 6.12.95): each zone's score (extfrag_for_order()
/// at COMPACTION_HPAGE_ORDER, 9 on x86-64) weighted by its pages over the node's pages + 1
/// (fragmentation_score_zone_weighted(); the model's zones have their managed pages, where
/// the kernel weighs the present ones).
pub fn fragmentation_score_node(mm: &Mm) -> u64 {
    let zones = &mm.nodes[0].zones.z;
    let node: u64 = zones.iter().map(|z| z.managed).sum();
    (0..zones.len())
        .filter(|&z| {
            let (start, end) = mm.folios.zone_span(z);
            end > start
        })
        .map(|z| zones[z].managed * fragmentation_score_zone(mm, z) / (node + 1))
        .sum()
}

/// Models kcompactd_node_suitable(): a zone up to kcompactd's classzone where compaction for
/// its order would run.
fn kcompactd_node_suitable(mm: &Mm) -> bool {
    let k = &mm.pageblocks.as_ref().expect("kcompactd runs with pageblocks").kcompactd;
    (0..=k.highest_zoneidx).any(|z| compaction_suit_allocation_order(mm, z, k.max_order, k.highest_zoneidx) == Suit::Continue)
}

/// Models kcompactd_do_work(): compact each zone up to the classzone that is not deferred and
/// is suitable; a success resets the deferral, a run that met the other scanner drains the
/// zone's per-CPU lists and defers the next ones.
fn kcompactd_do_work(mm: &mut Mm) {
    mm.count(Ev::CompactDaemonWake, 1);
    let (order, highest) = {
        let k = &mm.pageblocks.as_ref().expect("kcompactd runs with pageblocks").kcompactd;
        (k.max_order, k.highest_zoneidx)
    };
    for z in 0..=highest {
        if compaction_deferred(zone_state(mm, z), order) {
            continue;
        }
        if compaction_suit_allocation_order(mm, z, order, z) != Suit::Continue {
            continue;
        }
        let outcome = compact_zone(mm, z);
        match outcome {
            Outcome::Success => compaction_defer_reset(zone_state(mm, z), order),
            Outcome::Complete | Outcome::PartialSkipped => {
                crate::mm::page_alloc::drain_pages_zone(mm, z);
                defer_compaction(zone_state(mm, z), order);
            }
            Outcome::Contended => {}
        }
    }
    let k = &mut mm.pageblocks.as_mut().expect("kcompactd runs with pageblocks").kcompactd;
    // kcompactd(): back from a run, it sleeps the default timeout again.
    k.proactive_wait = 0;
    if k.max_order <= order {
        k.max_order = 0;
    }
    if k.highest_zoneidx >= highest {
        k.highest_zoneidx = k.zones.len() - 1;
    }
}

fn zone_state(mm: &mut Mm, z: usize) -> &mut ZoneCompaction {
    &mut mm.pageblocks.as_mut().expect("kcompactd runs with pageblocks").kcompactd.zones[z]
}

/// Models compaction_deferred(): after failures, skip the next 2^defer_shift attempts.
fn compaction_deferred(st: &mut ZoneCompaction, order: u32) -> bool {
    if order < st.order_failed {
        return false;
    }
    let limit = 1u64 << st.defer_shift;
    st.considered += 1;
    if st.considered >= limit {
        st.considered = limit;
        return false;
    }
    true
}

/// Models defer_compaction().
fn defer_compaction(st: &mut ZoneCompaction, order: u32) {
    st.considered = 0;
    st.defer_shift = (st.defer_shift + 1).min(COMPACT_MAX_DEFER_SHIFT);
    st.order_failed = st.order_failed.min(order);
}

/// Models compaction_defer_reset() for kcompactd (no allocation succeeded).
fn compaction_defer_reset(st: &mut ZoneCompaction, order: u32) {
    if order >= st.order_failed {
        st.order_failed = order + 1;
    }
}

/// Models compaction_restarting(): deferred to the limit and the limit reached, so the next
/// run starts over from the zone's ends.
fn compaction_restarting(st: &ZoneCompaction, order: u32) -> bool {
    order >= st.order_failed && st.defer_shift == COMPACT_MAX_DEFER_SHIFT && st.considered >= 1 << st.defer_shift
}

/// Models compaction_suit_allocation_order() (6.12; 6.1's compaction_suitable() with its
/// alloc_flags 0 decides the same): success if an allocation of `order` would pass the min
/// watermark, skipped unless the zone is above low + compact_gap() (twice the order's pages)
/// and, for costly orders, the fragmentation index says a failure would be fragmentation's.
fn compaction_suit_allocation_order(mm: &Mm, z: usize, order: u32, classzone: usize) -> Suit {
    let map = ZoneMap::of(mm, z);
    let free = mm.zone_free(z);
    let zone = &mm.nodes[0].zones.z[z];
    let reserve = mm.nodes[0].zones.lowmem_reserve(z, classzone);
    // __zone_watermark_ok() for a high order: the free pages less the request's, above the
    // mark and reserve, and a free chunk of the order.
    let need = 1u64 << order;
    if free.saturating_sub(need - 1) > zone.wmark_min + reserve && map.largest_free_order() >= Some(order) {
        return Suit::Success;
    }
    let mark = if order > PAGE_ALLOC_COSTLY_ORDER { zone.wmark_low } else { zone.wmark_min } + 2 * need;
    if free <= mark + reserve {
        return Suit::Skipped;
    }
    if order > PAGE_ALLOC_COSTLY_ORDER {
        let index = map.fragmentation_index(order);
        if (0..=EXTFRAG_THRESHOLD).contains(&index) {
            return Suit::Skipped;
        }
    }
    Suit::Continue
}

/// A zone's free frames as the buddy allocator holds them, in physical frame numbers: the
/// free pages of the movable lists (the frame free list less the per-CPU lists' share, the
/// last frames freed) and the non-movable blocks' free chunks. Bits of whole pageblocks.
struct ZoneMap {
    start: Pfn,
    end: Pfn,
    /// The first pageblock's first frame (`start` rounded down).
    base: Pfn,
    words: Vec<u64>,
}

const WORDS_PER_BLOCK: usize = (PAGEBLOCK_PAGES / 64) as usize;

impl ZoneMap {
    fn of(mm: &Mm, z: usize) -> ZoneMap {
        let pb = mm.pageblocks.as_ref().expect("compaction runs with pageblocks");
        let (start, end) = mm.folios.zone_span(z);
        let base = start & !(PAGEBLOCK_PAGES as Pfn - 1);
        let blocks = (end - base).div_ceil(PAGEBLOCK_PAGES as Pfn) as usize;
        let mut map = ZoneMap { start, end, base, words: vec![0; blocks * WORDS_PER_BLOCK] };
        let listed = mm.folios.nr_free_in(z) as usize;
        let on_buddy = listed.saturating_sub(mm.nodes[0].zones.z[z].pcp.count.max(0) as usize);
        for pfn in mm.folios.free_list(z).take(on_buddy) {
            map.set(pb.phys_of(pfn));
        }
        for (head, order) in pb.chunks(z) {
            for p in head..head + (1 << order) {
                map.set(p);
            }
        }
        map
    }

    #[inline]
    fn set(&mut self, phys: Pfn) {
        let i = (phys - self.base) as usize;
        self.words[i / 64] |= 1 << (i % 64);
    }

    #[inline]
    fn clear(&mut self, phys: Pfn) {
        let i = (phys - self.base) as usize;
        self.words[i / 64] &= !(1 << (i % 64));
    }

    #[inline]
    fn is_free(&self, phys: Pfn) -> bool {
        let i = (phys - self.base) as usize;
        self.words[i / 64] & (1 << (i % 64)) != 0
    }

    fn block_words(&self, b: usize) -> &[u64] {
        &self.words[b * WORDS_PER_BLOCK..(b + 1) * WORDS_PER_BLOCK]
    }

    fn block_full(&self, b: usize) -> bool {
        self.block_words(b).iter().all(|&w| w == u64::MAX)
    }

    /// Whether a whole pageblock is free: a free chunk of pageblock order or more.
    fn any_free_pageblock(&self) -> bool {
        (0..self.words.len() / WORDS_PER_BLOCK).any(|b| self.block_full(b))
    }

    /// The largest order of a free chunk, counting merges up to MAX_ORDER.
    fn largest_free_order(&self) -> Option<u32> {
        let (chunks, _) = self.chunks();
        chunks.iter().rposition(|&n| n > 0).map(|o| o as u32)
    }

    /// Free chunks by order as the buddy allocator merges them (aligned runs of free frames,
    /// each as large as alignment allows, up to MAX_ORDER), and the free frames.
    fn chunks(&self) -> ([u64; crate::mm::pageblock::NR_ORDERS], u64) {
        let mut by_order = [0u64; crate::mm::pageblock::NR_ORDERS];
        let mut free = 0;
        let blocks = self.words.len() / WORDS_PER_BLOCK;
        let mut b = 0;
        while b < blocks {
            // Two aligned free pageblocks merge into one chunk of order 10.
            let pair_aligned = ((self.base as u64 / PAGEBLOCK_PAGES) + b as u64).is_multiple_of(2);
            if pair_aligned && b + 1 < blocks && self.block_full(b) && self.block_full(b + 1) {
                by_order[PAGEBLOCK_ORDER as usize + 1] += 1;
                free += 2 * PAGEBLOCK_PAGES;
                b += 2;
                continue;
            }
            if self.block_full(b) {
                by_order[PAGEBLOCK_ORDER as usize] += 1;
                free += PAGEBLOCK_PAGES;
            } else {
                for &w in self.block_words(b) {
                    free += w.count_ones() as u64;
                    word_chunks(w, &mut by_order);
                }
                // Orders 7 and 8 span two and four words.
                let words = self.block_words(b);
                let full: Vec<bool> = words.iter().map(|&w| w == u64::MAX).collect();
                let f7: Vec<bool> = full.chunks(2).map(|c| c[0] && c[1]).collect();
                let f8: Vec<bool> = f7.chunks(2).map(|c| c[0] && c[1]).collect();
                let n7 = f7.iter().filter(|&&f| f).count() as u64;
                let n8 = f8.iter().filter(|&&f| f).count() as u64;
                // word_chunks() counted each full word as an order-6 chunk; merged ones are not.
                by_order[6] -= 2 * n7;
                by_order[7] += n7 - 2 * n8;
                by_order[8] += n8;
            }
            b += 1;
        }
        (by_order, free)
    }

    /// Models extfrag_for_order() at pageblock order (mm/vmstat.c, 6.1 and 6.12.95): the
    /// percentage of the free pages not in free chunks of a pageblock or more; 0 with no free
    /// pages.
    fn extfrag_for_pageblock_order(&self) -> u64 {
        let free: u64 = self.words.iter().map(|w| w.count_ones() as u64).sum();
        if free == 0 {
            return 0;
        }
        let blocks = (0..self.words.len() / WORDS_PER_BLOCK).filter(|&b| self.block_full(b)).count() as u64;
        (free - blocks * PAGEBLOCK_PAGES) * 100 / free
    }

    /// [`fragmentation_index`] of this zone.
    fn fragmentation_index(&self, order: u32) -> i64 {
        let (by_order, free) = self.chunks();
        fragmentation_index(&by_order, free, order)
    }
}

/// Models mm/vmstat.c: fragmentation_index() for `order`, from the free chunks by order and the
/// free pages: -1000 if a chunk of the order exists, 0 without free chunks, else towards 1000
/// the more the free memory is split into small chunks.
fn fragmentation_index(by_order: &[u64], free: u64, order: u32) -> i64 {
    let total: u64 = by_order.iter().sum();
    if total == 0 {
        return 0;
    }
    if by_order[order as usize..].iter().any(|&n| n > 0) {
        return -1000;
    }
    1000 - ((1000 + free * 1000 / (1u64 << order)) / total) as i64
}

/// Counts the maximal aligned runs of set bits in one 64-frame word by order (0 to 6).
fn word_chunks(w: u64, by_order: &mut [u64]) {
    // full[k]: bit p (a multiple of 2^k) set when bits p..p+2^k are all set.
    let mut full = w;
    let mut prev = 0u64;
    for k in 0..=6u32 {
        let mask = multiples_of(1 << k);
        let here = (full & mask).count_ones() as u64;
        if k > 0 {
            // The chunks of order k-1 inside a chunk of order k are not maximal.
            by_order[k as usize - 1] = by_order[k as usize - 1] + prev - 2 * here;
        }
        prev = here;
        if k < 6 {
            full &= full >> (1 << k);
        }
    }
    by_order[6] += prev;
}

/// A word with the bits at multiples of `step` set.
fn multiples_of(step: u32) -> u64 {
    (0..64).step_by(step as usize).fold(0, |m, i| m | 1 << i)
}

/// Models compact_zone() for kcompactd (MIGRATE_SYNC_LIGHT, order `pageblock_order`): the
/// migrate scanner from where the last run stopped, a batch of up to COMPACT_CLUSTER_MAX
/// pages at a time (isolate_migratepages_block()), each moved to a free page the free scanner
/// takes from the zone's end down (isolate_freepages(), movable blocks only, while the zone
/// stays above its unboosted min watermark); finished when the scanners reach the same
/// pageblock, or at a pageblock boundary once a whole pageblock is free (__compact_finished():
/// kcompactd's migratetype is unmovable, which may take any free pageblock).
pub fn compact_zone(mm: &mut Mm, z: usize) -> Outcome {
    compact_zone_as(mm, z, false)
}

/// Models compact_zone() for a proactive pass (compact_node() with `proactive`, 6.1 and
/// 6.12.95): order -1 in MIGRATE_SYNC_LIGHT, the whole zone from both ends, the skip bits
/// ignored (and still set), finished when the scanners meet or, before any batch, once the
/// zone's fragmentation score is at most the low mark (__compact_finished()); no deferral and
/// no drain follow it.
pub fn compact_zone_proactively(mm: &mut Mm, z: usize) -> Outcome {
    compact_zone_as(mm, z, true)
}

fn compact_zone_as(mm: &mut Mm, z: usize, proactive: bool) -> Outcome {
    let mut map = ZoneMap::of(mm, z);
    let (start, end) = (map.start, map.end);
    let last_block = (end - 1) & !(PAGEBLOCK_PAGES as Pfn - 1);
    let order = mm.pageblocks.as_ref().expect("compaction runs with pageblocks").kcompactd.max_order;
    let st = zone_state(mm, z);
    let (cached_migrate, cached_free) = (st.cached_migrate, st.cached_free);
    if !proactive && compaction_restarting(st, order) {
        st.cached_migrate = None;
        st.cached_free = None;
    }
    let (mut migrate, mut free_block) = if proactive {
        (start, last_block.max(start))
    } else {
        (st.cached_migrate.unwrap_or(start).max(start), st.cached_free.unwrap_or(last_block).max(start))
    };
    let whole_zone = migrate == start && free_block == last_block.max(start);
    let mut free_at: Option<Pfn> = None;
    let min_mark = mm.pageblocks.as_ref().expect("compaction runs with pageblocks").base_marks[z][0];
    let (mut scanned, mut free_scanned, mut isolated, mut migrated) = (0u64, 0u64, 0u64, 0u64);
    let mut unlisted = HashSet::new();
    let mut skip = std::mem::take(&mut zone_state(mm, z).skip);
    skip.resize(skip.len().max((end as usize).div_ceil(PAGEBLOCK_PAGES as usize)), false);
    let met = |migrate: Pfn, free_block: Pfn| free_block >> PAGEBLOCK_ORDER <= migrate >> PAGEBLOCK_ORDER;
    let outcome = 'run: loop {
        if met(migrate, free_block) {
            break if whole_zone { Outcome::Complete } else { Outcome::PartialSkipped };
        }
        if proactive {
            if map.extfrag_for_pageblock_order() <= fragmentation_score_wmark(true) {
                break Outcome::Success;
            }
        } else if migrate % PAGEBLOCK_PAGES as Pfn == 0 && map.any_free_pageblock() {
            break Outcome::Success;
        }
        // isolate_migratepages_block(): the rest of the migrate scanner's pageblock, up to a
        // batch.
        let block_end = ((migrate >> PAGEBLOCK_ORDER) + 1) << PAGEBLOCK_ORDER;
        let block_start = migrate % PAGEBLOCK_PAGES as Pfn == 0 || migrate == start;
        if block_start && !proactive && skip[(migrate >> PAGEBLOCK_ORDER) as usize] {
            // isolation_suitable(): a block marked skip is passed over.
            migrate = block_end;
            continue;
        }
        let mut batch = Vec::with_capacity(COMPACT_CLUSTER_MAX);
        while migrate < block_end.min(end) && batch.len() < COMPACT_CLUSTER_MAX {
            scanned += 1;
            if !map.is_free(migrate) {
                let pb = mm.pageblocks.as_ref().expect("compaction runs with pageblocks");
                let page = pb.page_at(migrate);
                if migratable(mm.folios.get(page).flags) {
                    batch.push(page);
                }
            }
            migrate += 1;
        }
        if migrate == end {
            migrate = block_end;
        }
        if migrate == block_end && batch.is_empty() {
            skip[((block_end - 1) >> PAGEBLOCK_ORDER) as usize] = true;
        }
        isolated += batch.len() as u64;
        for page in batch {
            // compaction_alloc() -> isolate_freepages().
            let Some(target) = isolate_free(mm, &map, z, migrate, &mut free_block, &mut free_at, &mut free_scanned, min_mark, &mut skip, !proactive) else {
                break 'run Outcome::Contended;
            };
            isolated += 1;
            let pb = mm.pageblocks.as_mut().expect("compaction runs with pageblocks");
            let (from, to) = (pb.phys_of(page), pb.phys_of(target));
            pb.exchange(page, target);
            map.clear(to);
            map.set(from);
            if pb.is_nonmovable_phys(from) {
                // The free page now sits in a non-movable block: on that type's lists.
                unlisted.insert(target);
                pb.free_phys(z, from);
            }
            migrated += 1;
        }
    };
    mm.folios.unlist_free(z, &unlisted);
    let st = zone_state(mm, z);
    st.skip = skip;
    if matches!(outcome, Outcome::Complete | Outcome::PartialSkipped) {
        // reset_cached_positions(): the next run starts anew.
        st.cached_migrate = None;
        st.cached_free = None;
    } else if proactive {
        // A pass that stopped early moves the cached positions only inwards
        // (update_cached_migrate(), update_pageblock_skip()).
        st.cached_migrate = Some(cached_migrate.unwrap_or(start).max(migrate));
        st.cached_free = Some(cached_free.unwrap_or(last_block).min(free_block));
    } else {
        st.cached_migrate = Some(migrate);
        st.cached_free = Some(free_block);
    }
    mm.pageblocks.as_mut().expect("compaction runs with pageblocks").kcompactd.migrated += migrated;
    mm.count(Ev::CompactMigrateScanned, scanned);
    mm.count(Ev::CompactFreeScanned, free_scanned);
    if !proactive || mm.cfg.kernel.proactive_compaction_counts_as_kcompactd() {
        mm.count(Ev::CompactDaemonMigrateScanned, scanned);
        mm.count(Ev::CompactDaemonFreeScanned, free_scanned);
    }
    mm.count(Ev::CompactIsolated, isolated);
    mm.count(Ev::PgmigrateSuccess, migrated);
    outcome
}

/// isolate_migratepages_block()'s test: a page on an LRU list, not taken by reclaim, not in
/// a per-CPU batch, and not under writeback or locked (MIGRATE_SYNC_LIGHT does not wait).
fn migratable(flags: u32) -> bool {
    flags & pg::LRU != 0 && flags & (pg::ISOLATED | pg::IN_LRU_ADD | pg::WRITEBACK | pg::LOCKED | pg::PINNED) == 0
}

/// Models isolate_freepages() for one page: the free scanner's pageblock from its next frame
/// up, then the blocks below it, movable ones not marked skip (suitable_migration_target(),
/// isolation_suitable(); a proactive pass does not `honor_skip`) and not wholly one free
/// chunk (suitable_migration_target(): a free page of pageblock order or more is not a
/// target), a block scanned to its end marked skip, until it
/// reaches the migrate scanner's block; each page taken only while the zone stays above its
/// unboosted min watermark (__isolate_free_page()).
#[allow(clippy::too_many_arguments)]
fn isolate_free(
    mm: &Mm,
    map: &ZoneMap,
    z: usize,
    migrate: Pfn,
    free_block: &mut Pfn,
    free_at: &mut Option<Pfn>,
    scanned: &mut u64,
    min_mark: u64,
    skip: &mut [bool],
    honor_skip: bool,
) -> Option<Pfn> {
    let pb = mm.pageblocks.as_ref().expect("compaction runs with pageblocks");
    if mm.zone_free(z) <= min_mark + 1 {
        return None;
    }
    loop {
        if *free_block >> PAGEBLOCK_ORDER <= migrate >> PAGEBLOCK_ORDER {
            return None;
        }
        let block = (*free_block >> PAGEBLOCK_ORDER) as usize;
        let first = (*free_block - map.base) as usize / PAGEBLOCK_PAGES as usize;
        let whole_free = free_at.is_none() && map.block_full(first);
        let marked = honor_skip && skip[block];
        if !pb.is_nonmovable_phys(*free_block) && !marked && !whole_free {
            let block_end = (*free_block + PAGEBLOCK_PAGES as Pfn).min(map.end);
            let mut p = free_at.unwrap_or(*free_block).max(map.start);
            while p < block_end {
                *scanned += 1;
                if map.is_free(p) {
                    *free_at = Some(p + 1);
                    return Some(pb.page_at(p));
                }
                p += 1;
            }
            // The whole block scanned: update_pageblock_skip().
            skip[block] = true;
        }
        if *free_block < PAGEBLOCK_PAGES as Pfn {
            return None;
        }
        *free_block -= PAGEBLOCK_PAGES as Pfn;
        *free_at = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(words: &[u64]) -> [u64; crate::mm::pageblock::NR_ORDERS] {
        let mut by_order = [0; crate::mm::pageblock::NR_ORDERS];
        for &w in words {
            word_chunks(w, &mut by_order);
        }
        by_order
    }

    #[test]
    fn free_frames_count_as_the_largest_aligned_chunks_the_buddy_allocator_merges() {
        // Frames 0-3 (order 2), 5 (order 0), 6-7 (order 1), 8-15 (order 3).
        let w = 0b1111_1111_1110_1111u64;
        let c = count(&[w]);
        assert_eq!(&c[..4], &[1, 1, 1, 1]);
        assert_eq!(count(&[u64::MAX])[6], 1);
        assert_eq!(count(&[u64::MAX >> 1])[..6], [1, 1, 1, 1, 1, 1], "63 frames: one chunk of each order below 6");
    }

    #[test]
    fn fragmentation_index_is_near_1000_for_scattered_single_pages_and_low_for_few_large_chunks() {
        let mut by_order = [0u64; crate::mm::pageblock::NR_ORDERS];
        by_order[0] = 1024;
        // 1000 - (1000 + 1024 * 1000 / 512) / 1024 = 1000 - 2.
        assert_eq!(fragmentation_index(&by_order, 1024, 9), 998);
        let mut few = [0u64; crate::mm::pageblock::NR_ORDERS];
        few[8] = 4;
        // 1024 free pages in four chunks of 256: 1000 - 3000 / 4 = 250, below the threshold.
        assert_eq!(fragmentation_index(&few, 1024, 9), 250);
        few[9] = 1;
        assert_eq!(fragmentation_index(&few, 1536, 9), -1000, "a chunk of the order exists");
        assert_eq!(fragmentation_index(&[0; crate::mm::pageblock::NR_ORDERS], 0, 9), 0);
    }
}
