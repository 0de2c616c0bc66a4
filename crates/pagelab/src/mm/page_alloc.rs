//! The page allocator's slow path as reclaim sees it (mm/page_alloc.c): watermark checks,
//! waking kswapd, direct reclaim and its retries, and the OOM killer as the last resort.

use crate::kernel::MAX_RECLAIM_RETRIES;
use crate::mm::folio::{pg, Pfn};
use crate::mm::memcontrol::FedStat;
use crate::mm::oom_kill::out_of_memory;
use crate::mm::vmscan::{try_to_free_pages, wakeup_kswapd};
use crate::mm::Mm;
use crate::policy::Policy;

/// How hard an allocation may try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gfp {
    /// GFP_HIGHUSER_MOVABLE: reclaim, retry, and invoke the OOM killer.
    User,
    /// readahead_gfp_mask(): __GFP_NORETRY, one round of direct reclaim and then give up.
    NoRetry,
}

/// Models mm/page_alloc.c: __alloc_pages() for one order-0 page: the low-watermark fast
/// path, then __alloc_pages_slowpath(): wake kswapd, try the min watermark, direct reclaim,
/// should_reclaim_retry() and __alloc_pages_may_oom(). `None` means the allocation failed
/// (NoRetry) or the allocating task was killed.
pub fn alloc_page<P: Policy>(mm: &mut Mm, p: &mut P, gfp: Gfp) -> Option<Pfn> {
    if mm.nr_free() > mm.zone.wmark_low {
        return mm.folios.alloc();
    }
    wakeup_kswapd(mm);
    let mut no_progress = 0;
    loop {
        if mm.nr_free() > mm.zone.wmark_min {
            return mm.folios.alloc();
        }
        let reclaimed = try_to_free_pages(mm, p);
        if mm.nr_free() > mm.zone.wmark_min {
            return mm.folios.alloc();
        }
        if gfp == Gfp::NoRetry {
            return None;
        }
        if reclaimed == 0 {
            no_progress += 1;
        } else {
            no_progress = 0;
        }
        if no_progress > MAX_RECLAIM_RETRIES {
            out_of_memory(mm, p, None);
            no_progress = 0;
            if current_killed(mm) {
                return None;
            }
            // Nothing left to kill: dip below the watermark rather than spin (the kernel's
            // OOM reserves).
            if mm.tasks.iter().all(|t| t.killed || t.rss_anon + t.swapents == 0) {
                return mm.folios.alloc();
            }
        }
    }
}

fn current_killed(mm: &Mm) -> bool {
    mm.current_task().is_some_and(|t| mm.tasks[t].killed)
}

/// Models the free of a page (mem_cgroup_uncharge() + free_unref_page()): uncharge its
/// memcg, drop the page-state counts and return the frame.
pub fn free_folio(mm: &mut Mm, pfn: Pfn) {
    let memcg = mm.folio_memcg(pfn);
    mm.memcgs.uncharge_counters(memcg, 1);
    mm.page_counts(pfn, -1);
    let flags = mm.folios.get(pfn).flags;
    if flags & pg::SWAPBACKED == 0 {
        mm.memcgs.stat_updated(memcg, FedStat::FilePages, 1);
        if flags & pg::DIRTY != 0 {
            mm.nr_dirty -= 1;
            mm.memcgs.stat_updated(memcg, FedStat::FileDirty, 1);
        }
    }
    if flags & pg::MAPPED != 0 {
        mm.memcgs.stat_updated(memcg, FedStat::Mapped, 1);
    }
    if mm.cfg.kernel.memcg_counts_pgpgin() {
        mm.memcgs.stat_updated(memcg, FedStat::PgpgOut, 1);
    }
    mm.folios.free(pfn);
}
