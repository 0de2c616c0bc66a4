//! Dirty page-cache pages and their writeback (mm/page-writeback.c, fs/fs-writeback.c): the
//! dirty limits that throttle writers, the flusher threads, and the end of writeback that
//! rotates pages reclaim was waiting for.

use std::cmp::Reverse;
use std::collections::VecDeque;

use crate::mm::folio::{pg, Pfn};
use crate::mm::hooks::Policy;
use crate::mm::mapping::Vpn;
use crate::mm::memcontrol::{MemcgId, StatItem, ROOT_MEMCG};
use crate::mm::vmscan::start_writeback;
use crate::mm::vmstat::{Ev, Lru};
use crate::mm::Mm;

/// One dirtied folio awaiting the flusher: its place in the order of all dirtyings, and
/// the folio as it was (a freed and reused frame no longer matches).
#[derive(Clone, Copy, Debug)]
struct Dirtied {
    seq: u64,
    pfn: Pfn,
    vpn: Vpn,
    at: u64,
}

/// Which writeback a flusher run serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wb {
    /// Every cgroup's dirty pages, oldest first, as one stream (reclaim's wake-up, the
    /// global dirty limits, dirty_expire).
    All,
    /// One cgroup's own writeback (its bdi_writeback), for its dirty limits.
    Memcg(MemcgId),
}

/// Models cgroup writeback's per-memcg `bdi_writeback` (fs/fs-writeback.c,
/// mm/backing-dev.c; 6.1, 6.12, 7.3): each cgroup's dirty pages wait on its own writeback,
/// oldest first, so its dirty limits write its own pages. A sequence number over all the
/// queues keeps the order of the dirtyings for the writeback of every cgroup at once. (The
/// kernel queues inodes, owned by the cgroup that dirties most of them; pagelab queues
/// folios, on the cgroup each is charged to.)
#[derive(Clone, Debug, Default)]
pub struct DirtyQueues {
    queues: Vec<VecDeque<Dirtied>>,
    next_seq: u64,
}

impl DirtyQueues {
    /// Queues a folio dirtied at `at` on `memcg`'s writeback.
    pub fn push(&mut self, memcg: MemcgId, pfn: Pfn, vpn: Vpn, at: u64) {
        let i = memcg as usize;
        if self.queues.len() <= i {
            self.queues.resize_with(i + 1, VecDeque::new);
        }
        self.queues[i].push_back(Dirtied { seq: self.next_seq, pfn, vpn, at });
        self.next_seq += 1;
    }

    /// The queue whose front was dirtied first.
    fn oldest(&self) -> Option<usize> {
        self.queues.iter().enumerate().filter_map(|(i, q)| q.front().map(|d| (d.seq, i))).min().map(|(_, i)| i)
    }

    fn pop(&mut self, wb: Wb) -> Option<Dirtied> {
        let i = match wb {
            Wb::All => self.oldest()?,
            Wb::Memcg(m) => m as usize,
        };
        self.queues.get_mut(i)?.pop_front()
    }

    /// How many entries, in the order of their dirtying, come before the first one dirtied
    /// after `deadline` (stale entries included).
    fn dirtied_by(&self, deadline: u64) -> u64 {
        let mut cursor = vec![0usize; self.queues.len()];
        let mut n = 0;
        loop {
            let next = self.queues.iter().zip(&cursor).enumerate().filter_map(|(i, (q, &c))| q.get(c).map(|d| (d.seq, i))).min();
            let Some((_, i)) = next else { return n };
            if self.queues[i][cursor[i]].at > deadline {
                return n;
            }
            cursor[i] += 1;
            n += 1;
        }
    }

    /// The cgroups with queued folios (stale entries included).
    fn memcgs(&self) -> impl Iterator<Item = MemcgId> + '_ {
        self.queues.iter().enumerate().filter(|(_, q)| !q.is_empty()).map(|(i, _)| i as MemcgId)
    }
}

/// Models mm/page-writeback.c: folio_mark_dirty() for a page-cache page.
pub fn folio_mark_dirty(mm: &mut Mm, pfn: Pfn) {
    if mm.folios.test(pfn, pg::DIRTY) {
        return;
    }
    mm.folios.set(pfn, pg::DIRTY);
    // A large folio (7.3's page cache) is dirty as a whole: NR_FILE_DIRTY counts its pages.
    let nr = mm.folios.nr_pages(pfn);
    let memcg = mm.folio_memcg(pfn);
    mm.account_dirty(memcg, nr as i64);
    let (vpn, now) = (mm.folios.get(pfn).vpn, mm.now());
    mm.dirty_fifo.push(memcg, pfn, vpn, now);
}

/// Models mm/page-writeback.c: global_dirtyable_memory() (6.1/6.12): free pages less
/// totalreserve_pages (each zone's high watermark and lowmem reserve), plus file LRU pages.
fn dirtyable(mm: &Mm) -> u64 {
    let file = mm.node_lru_size(Lru::ActiveFile) + mm.node_lru_size(Lru::InactiveFile);
    mm.nr_free().saturating_sub(mm.nodes.iter().map(|n| n.zones.totalreserve_pages()).sum::<u64>()) + file
}

/// A dirty-throttling domain (mm/page-writeback.c: struct dirty_throttle_control): the
/// memory it may dirty, its dirty pages and its two thresholds, in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Domain {
    pub avail: u64,
    pub dirty: u64,
    /// Background writeback starts above it.
    pub bg_thresh: u64,
    /// Writers are throttled as the dirty pages near it.
    pub thresh: u64,
}

impl Domain {
    /// Models mm/page-writeback.c: domain_dirty_limits() for the ratio settings (6.1, 6.12,
    /// 7.3), in whole percent of `avail` (the kernel's per-4096 fixed point rounds a little
    /// lower; a byte setting, a real-time writer's boost and bg ≥ thresh are not modelled).
    fn new(mm: &Mm, avail: u64, dirty: u64) -> Domain {
        let t = &mm.cfg.tunables;
        Domain { avail, dirty, bg_thresh: avail * t.dirty_background_ratio / 100, thresh: avail * t.dirty_ratio / 100 }
    }

    /// Models mm/page-writeback.c: dirty_freerun_ceiling() (6.1, 6.12, 7.3): writers run
    /// free below the midpoint of the two thresholds.
    fn freerun(&self) -> u64 {
        (self.bg_thresh + self.thresh) / 2
    }
}

/// Models mm/page-writeback.c: the global domain as balance_dirty_pages() (dirty with
/// writeback) and wb_over_bg_thresh() (without) read it (6.1 in those functions; 6.12 and
/// 7.3 in domain_dirty_avail()).
pub fn global_domain(mm: &Mm, with_writeback: bool) -> Domain {
    let dirty = mm.nr_dirty + if with_writeback { mm.nr_writeback } else { 0 };
    Domain::new(mm, dirtyable(mm), dirty)
}

/// Models mm/memcontrol.c: mem_cgroup_wb_stats() (6.1, 6.12, 7.3): the cgroup's file LRU
/// pages, dirty pages and pages under writeback as rstat last published them (after the
/// version's flush: [`crate::kernel::Kernel::wb_stats_flush_ratelimited`]), and its headroom,
/// the least room under min(memory.max, memory.high) of it and its ancestors below the root.
fn mem_cgroup_wb_stats(mm: &mut Mm, memcg: MemcgId) -> (u64, u64, u64, u64) {
    let now = mm.now();
    if mm.cfg.kernel.wb_stats_flush_ratelimited() {
        mm.memcgs.flush_stats_ratelimited(memcg, now);
    } else {
        mm.memcgs.flush_stats(memcg, now);
    }
    let m = &mm.memcgs;
    let filepages = m.page_state(memcg, StatItem::Lru(Lru::InactiveFile)) + m.page_state(memcg, StatItem::Lru(Lru::ActiveFile));
    let headroom = m.ancestors(memcg).filter(|&a| a != ROOT_MEMCG).map(|a| {
        let c = m.get(a);
        c.max.min(c.high).saturating_sub(c.usage)
    });
    let headroom = headroom.min().unwrap_or(u64::MAX);
    (filepages, headroom, m.page_state(memcg, StatItem::FileDirty), m.page_state(memcg, StatItem::Writeback))
}

/// Models mm/page-writeback.c: the cgroup domain of cgroup writeback (6.1, 6.12, 7.3:
/// mdtc_valid(), mem_cgroup_wb_stats(), mdtc_calc_avail(), domain_dirty_limits()): what the
/// cgroup may dirty is its file pages plus whatever of its headroom the rest of the
/// machine's clean dirtyable memory could give it. `None` for the root cgroup, whose
/// writeback has only the global domain.
pub fn memcg_domain(mm: &mut Mm, memcg: MemcgId, global: &Domain, with_writeback: bool) -> Option<Domain> {
    if memcg == ROOT_MEMCG {
        return None;
    }
    let (filepages, headroom, dirty, writeback) = mem_cgroup_wb_stats(mm, memcg);
    let dirty = dirty + if with_writeback { writeback } else { 0 };
    let clean = filepages - filepages.min(dirty);
    let global_clean = global.avail - global.avail.min(global.dirty);
    let other_clean = global_clean - global_clean.min(clean);
    Some(Domain::new(mm, filepages + headroom.min(other_clean), dirty))
}

/// Models mm/page-writeback.c: balance_dirty_pages_ratelimited() for a write to a file whose
/// pages `memcg` dirtied (6.1, 6.12, 7.3), on every call (the kernel's ratelimit of a call
/// every 32 or so dirtied pages is not modelled). The global domain: above its background
/// threshold the flusher starts; above its freerun ceiling the writer waits for writeback
/// to bring the dirty count back down. A cgroup's domain (cgroup writeback) the same way
/// with its own writeback: above its freerun ceiling its background writeback starts and
/// the writer waits for it.
pub fn balance_dirty_pages_ratelimited<P: Policy>(mm: &mut Mm, p: &mut P, memcg: MemcgId) {
    let global = global_domain(mm, true);
    if global.dirty > global.bg_thresh {
        mm.wb_pending_background = true;
        if global.dirty > global.freerun() {
            // The writer is paused until the flusher has written the excess.
            let done = wb_writeback(mm, p, Wb::All, global.dirty - global.freerun());
            mm.wait_until(done);
        }
    }
    let Some(m) = memcg_domain(mm, memcg, &global, true) else { return };
    if m.dirty > m.freerun() {
        if !mm.wb_pending_memcgs.contains(&memcg) {
            mm.wb_pending_memcgs.push(memcg);
        }
        let done = wb_writeback(mm, p, Wb::Memcg(memcg), m.dirty - m.freerun());
        mm.wait_until(done);
    }
}

/// Models fs/fs-writeback.c: wakeup_flusher_threads(WB_REASON_VMSCAN): write everything
/// dirty, on the flusher's next run.
pub fn wakeup_flusher_threads(mm: &mut Mm) {
    mm.wb_pending_all = true;
}

/// Models the flusher's wb_writeback(): write up to `nr` dirty pages of `wb`, oldest first,
/// as one stream; returns when the last of them completes.
pub fn wb_writeback<P: Policy>(mm: &mut Mm, _p: &mut P, wb: Wb, nr: u64) -> u64 {
    let now = mm.now();
    let mut done = now;
    let mut written = 0;
    while written < nr {
        let Some(Dirtied { pfn, vpn, .. }) = mm.dirty_fifo.pop(wb) else { break };
        let f = *mm.folios.get(pfn);
        if f.vpn != vpn || f.flags & pg::DIRTY == 0 || f.flags & pg::SWAPBACKED != 0 || f.flags & pg::WRITEBACK != 0 {
            continue; // cleaned, freed or reused since it was dirtied
        }
        mm.folios.clear(pfn, pg::DIRTY);
        let nr = f.nr_pages();
        let memcg = mm.folio_memcg(pfn);
        mm.account_dirty(memcg, -(nr as i64));
        done = mm.file_dev.submit(now, nr, true);
        start_writeback(mm, pfn, done);
        mm.count(Ev::PgpgOut, 4 * nr);
        written += nr;
    }
    done
}

/// Models fs/fs-writeback.c: wb_check_background_flush() of a cgroup's writeback (6.1,
/// 6.12, 7.3), as far as its own domain asks (wb_over_bg_thresh()'s cgroup half: dirty pages
/// not yet under writeback above the cgroup's background threshold): write them down to it.
fn memcg_background_flush<P: Policy>(mm: &mut Mm, p: &mut P, memcg: MemcgId) {
    let global = global_domain(mm, false);
    if let Some(m) = memcg_domain(mm, memcg, &global, false) {
        if m.dirty > m.bg_thresh {
            wb_writeback(mm, p, Wb::Memcg(memcg), m.dirty - m.bg_thresh);
        }
    }
}

/// The periodic and on-demand flusher (wb_workfn()): background writeback down to the
/// background threshold, everything when reclaim asked, each cgroup's writeback down to its
/// own background threshold when it was started or on the periodic run, and pages dirty for
/// longer than dirty_expire on the periodic run.
pub fn flusher_run<P: Policy>(mm: &mut Mm, p: &mut P, periodic: bool) {
    if std::mem::take(&mut mm.wb_pending_all) {
        let n = mm.nr_dirty;
        wb_writeback(mm, p, Wb::All, n);
    }
    if std::mem::take(&mut mm.wb_pending_background) {
        let global = global_domain(mm, true);
        wb_writeback(mm, p, Wb::All, global.dirty.saturating_sub(global.bg_thresh));
    }
    let memcgs = if periodic { mm.dirty_fifo.memcgs().collect() } else { std::mem::take(&mut mm.wb_pending_memcgs) };
    for memcg in memcgs {
        memcg_background_flush(mm, p, memcg);
    }
    if periodic {
        mm.wb_pending_memcgs.clear();
        let old = mm.now().checked_sub(mm.cfg.tunables.dirty_expire_ns).map_or(0, |deadline| mm.dirty_fifo.dirtied_by(deadline));
        if old > 0 {
            wb_writeback(mm, p, Wb::All, old);
        }
    }
}

/// Models mm/filemap.c: folio_end_writeback(): the page is clean; if reclaim wanted it
/// (PG_reclaim), folio_rotate_reclaimable() moves it to where reclaim looks next.
pub fn folio_end_writeback<P: Policy>(mm: &mut Mm, p: &mut P, pfn: Pfn) {
    mm.folios.clear(pfn, pg::WRITEBACK);
    let nr = mm.folios.nr_pages(pfn);
    let memcg = mm.folio_memcg(pfn);
    mm.account_writeback(memcg, -(nr as i64));
    if mm.folios.test_clear(pfn, pg::RECLAIM) {
        let f = mm.folios.get(pfn);
        if f.flags & (pg::LRU) != 0 && f.flags & (pg::DIRTY | pg::UNEVICTABLE | pg::ISOLATED) == 0 {
            p.rotate_reclaimable(mm, pfn);
            mm.count(Ev::PgRotated, nr);
        }
    }
}

/// Completes every write that has finished by `now`.
pub fn complete_writeback<P: Policy>(mm: &mut Mm, p: &mut P, now: u64) {
    while let Some(Reverse(w)) = mm.writeback.peek().copied() {
        if w.at > now {
            break;
        }
        mm.writeback.pop();
        let f = mm.folios.get(w.pfn);
        if f.vpn == w.vpn && f.flags & pg::WRITEBACK != 0 {
            folio_end_writeback(mm, p, w.pfn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{DirtyQueues, Wb};

    fn queues() -> DirtyQueues {
        // Dirtied in this order: memcg 2, 0, 2, 1, 0 (pfn = order of dirtying), 10 ns apart.
        let mut q = DirtyQueues::default();
        for (i, memcg) in [2, 0, 2, 1, 0].into_iter().enumerate() {
            q.push(memcg, i as u32, i as u32, 10 * i as u64);
        }
        q
    }

    #[test]
    fn writeback_of_every_cgroup_takes_the_folios_in_the_order_they_were_dirtied() {
        let mut q = queues();
        let order: Vec<u32> = std::iter::from_fn(|| q.pop(Wb::All).map(|d| d.pfn)).collect();
        assert_eq!(order, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_cgroups_writeback_takes_only_its_own_folios_oldest_first() {
        let mut q = queues();
        let own: Vec<u32> = std::iter::from_fn(|| q.pop(Wb::Memcg(2)).map(|d| d.pfn)).collect();
        assert_eq!(own, [0, 2]);
        assert!(q.pop(Wb::Memcg(7)).is_none(), "a cgroup that dirtied nothing has nothing to write");
        let rest: Vec<u32> = std::iter::from_fn(|| q.pop(Wb::All).map(|d| d.pfn)).collect();
        assert_eq!(rest, [1, 3, 4]);
    }

    #[test]
    fn dirty_expire_counts_the_folios_dirtied_by_the_deadline_across_cgroups() {
        let q = queues();
        assert_eq!(q.dirtied_by(25), 3);
        assert_eq!(q.dirtied_by(40), 5);
        assert_eq!(q.memcgs().collect::<Vec<_>>(), [0, 1, 2]);
    }
}
