//! Dirty page-cache pages and their writeback (mm/page-writeback.c, fs/fs-writeback.c): the
//! dirty limits that throttle writers, the flusher threads, and the end of writeback that
//! rotates pages reclaim was waiting for.

use std::cmp::Reverse;

use crate::mm::folio::{pg, Pfn};
use crate::mm::hooks::Policy;
use crate::mm::memcontrol::FedStat;
use crate::mm::vmscan::start_writeback;
use crate::mm::vmstat::{Ev, Lru};
use crate::mm::Mm;

/// Models mm/page-writeback.c: folio_mark_dirty() for a page-cache page.
pub fn folio_mark_dirty(mm: &mut Mm, pfn: Pfn) {
    if mm.folios.test(pfn, pg::DIRTY) {
        return;
    }
    mm.folios.set(pfn, pg::DIRTY);
    // A large folio (7.3's page cache) is dirty as a whole: NR_FILE_DIRTY counts its pages.
    let nr = mm.folios.nr_pages(pfn);
    mm.nr_dirty += nr;
    let memcg = mm.folio_memcg(pfn);
    mm.memcgs.stat_updated(memcg, FedStat::FileDirty, nr);
    let (vpn, now) = (mm.folios.get(pfn).vpn, mm.now());
    mm.dirty_fifo.push_back((pfn, vpn, now));
}

/// Models mm/page-writeback.c: global_dirtyable_memory() (6.1/6.12): free pages less
/// totalreserve_pages (each zone's high watermark and lowmem reserve), plus file LRU pages.
fn dirtyable(mm: &Mm) -> u64 {
    let file = mm.node_lru_size(Lru::ActiveFile) + mm.node_lru_size(Lru::InactiveFile);
    mm.nr_free().saturating_sub(mm.nodes.iter().map(|n| n.zones.totalreserve_pages()).sum::<u64>()) + file
}

/// (background threshold, dirty threshold) in pages (domain_dirty_limits()).
pub fn dirty_limits(mm: &Mm) -> (u64, u64) {
    let d = dirtyable(mm);
    (d * mm.cfg.tunables.dirty_background_ratio / 100, d * mm.cfg.tunables.dirty_ratio / 100)
}

/// Models mm/page-writeback.c: balance_dirty_pages_ratelimited(): above the background
/// threshold the flusher starts; above the midpoint of the two thresholds the writer waits
/// for writeback to bring the dirty count back down.
pub fn balance_dirty_pages_ratelimited<P: Policy>(mm: &mut Mm, p: &mut P) {
    let (bg, thresh) = dirty_limits(mm);
    let dirty = mm.nr_dirty + mm.nr_writeback;
    if dirty <= bg {
        return;
    }
    mm.wb_pending_background = true;
    let freerun = (bg + thresh) / 2;
    if dirty > freerun {
        // The writer is paused until the flusher has written the excess.
        let excess = dirty - freerun;
        let done = wb_writeback(mm, p, excess);
        mm.wait_until(done);
    }
}

/// Models fs/fs-writeback.c: wakeup_flusher_threads(WB_REASON_VMSCAN): write everything
/// dirty, on the flusher's next run.
pub fn wakeup_flusher_threads(mm: &mut Mm) {
    mm.wb_pending_all = true;
}

/// Models the flusher's wb_writeback(): write up to `nr` dirty pages, oldest first, as one
/// stream; returns when the last of them completes.
pub fn wb_writeback<P: Policy>(mm: &mut Mm, _p: &mut P, nr: u64) -> u64 {
    let now = mm.now();
    let mut done = now;
    let mut written = 0;
    while written < nr {
        let Some((pfn, vpn, _)) = mm.dirty_fifo.pop_front() else { break };
        let f = *mm.folios.get(pfn);
        if f.vpn != vpn || f.flags & pg::DIRTY == 0 || f.flags & pg::SWAPBACKED != 0 || f.flags & pg::WRITEBACK != 0 {
            continue; // cleaned, freed or reused since it was dirtied
        }
        mm.folios.clear(pfn, pg::DIRTY);
        let nr = f.nr_pages();
        mm.nr_dirty -= nr;
        let memcg = mm.folio_memcg(pfn);
        mm.memcgs.stat_updated(memcg, FedStat::FileDirty, nr);
        done = mm.file_dev.submit(now, nr, true);
        start_writeback(mm, pfn, done);
        mm.count(Ev::PgpgOut, 4 * nr);
        written += nr;
    }
    done
}

/// The periodic and on-demand flusher (wb_workfn()): background writeback down to the
/// background threshold, everything when reclaim asked, and pages dirty for longer than
/// dirty_expire on the periodic run.
pub fn flusher_run<P: Policy>(mm: &mut Mm, p: &mut P, periodic: bool) {
    if std::mem::take(&mut mm.wb_pending_all) {
        let n = mm.nr_dirty;
        wb_writeback(mm, p, n);
    }
    if std::mem::take(&mut mm.wb_pending_background) {
        let (bg, _) = dirty_limits(mm);
        let excess = (mm.nr_dirty + mm.nr_writeback).saturating_sub(bg);
        wb_writeback(mm, p, excess);
    }
    if periodic {
        let now = mm.now();
        let expire = mm.cfg.tunables.dirty_expire_ns;
        let old = mm.dirty_fifo.iter().take_while(|&&(_, _, at)| at + expire <= now).count() as u64;
        if old > 0 {
            wb_writeback(mm, p, old);
        }
    }
}

/// Models mm/filemap.c: folio_end_writeback(): the page is clean; if reclaim wanted it
/// (PG_reclaim), folio_rotate_reclaimable() moves it to where reclaim looks next.
pub fn folio_end_writeback<P: Policy>(mm: &mut Mm, p: &mut P, pfn: Pfn) {
    mm.folios.clear(pfn, pg::WRITEBACK);
    let nr = mm.folios.nr_pages(pfn);
    mm.nr_writeback -= nr;
    let memcg = mm.folio_memcg(pfn);
    mm.memcgs.stat_updated(memcg, FedStat::Writeback, nr);
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
