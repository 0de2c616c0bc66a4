//! The swap cache and swap-in (mm/swap_state.c, mm/memory.c: do_swap_page()): slots for
//! pages being swapped out, swap-in with cluster or VMA readahead, and the bypass of the swap
//! cache on synchronous devices (zram).

use crate::mm::folio::{pg, Pfn};
use crate::mm::hooks::Policy;
use crate::mm::mapping::{Entry, Vpn, XA_CHUNK_SHIFT};
use crate::mm::memcontrol::{FedStat, MemcgId};
use crate::mm::profile::Func;
use crate::mm::vmstat::Ev;
use crate::mm::Mm;

/// Models mm/swap_state.c: add_to_swap(): give an anon folio a swap slot and put it in the
/// swap cache, dirty (to be written). Fails when swap is full.
pub fn add_to_swap(mm: &mut Mm, pfn: Pfn) -> bool {
    let (vpn, memcg) = {
        let f = mm.folios.get(pfn);
        (f.vpn, f.memcg)
    };
    let Some(slot) = mm.swap.alloc(vpn) else { return false };
    // folio_alloc_swap() from this CPU's swap slots cache, then add_to_swap_cache().
    mm.swap_slot_lock(true);
    mm.swap_cache_lock("add_to_swap_cache", slot, 1);
    // The swap cache's nodes cover the slots the map covers (both grow with use).
    mm.swap_nodes.grow(mm.swap.covered().div_ceil(1 << XA_CHUNK_SHIFT));
    charge_swap(mm, memcg, 1);
    let f = mm.folios.get_mut(pfn);
    f.swap = slot;
    f.flags |= pg::SWAPCACHE | pg::DIRTY;
    mm.swap_nodes.page_added(slot, memcg);
    mm.nr_swapcached += 1;
    mm.memcgs.stat_updated(memcg, FedStat::SwapCache, 1);
    true
}

/// mem_cgroup_try_charge_swap() / mem_cgroup_uncharge_swap(): memory.swap.current.
fn charge_swap(mm: &mut Mm, memcg: MemcgId, delta: i64) {
    let chain: Vec<MemcgId> = mm.memcgs.ancestors(memcg).collect();
    for c in chain {
        let u = &mut mm.memcgs.get_mut(c).swap_usage;
        *u = (*u as i64 + delta) as u64;
    }
    mm.memcgs.stat_updated(memcg, FedStat::Swap, delta.unsigned_abs());
}

/// Models mm/swapfile.c: folio_free_swap(): drop a resident page's slot; the page is no
/// longer backed by swap and must be written again to be reclaimed.
pub fn folio_free_swap(mm: &mut Mm, pfn: Pfn) {
    let f = *mm.folios.get(pfn);
    if !f.test(pg::SWAPCACHE) {
        return;
    }
    // delete_from_swap_cache() under the swap cache's lock, then put_swap_folio().
    mm.swap_cache_lock("delete_from_swap_cache", f.swap, 1);
    mm.swap_nodes.page_removed(f.swap);
    release_slot(mm, f.swap);
    let fm = mm.folios.get_mut(pfn);
    fm.flags &= !pg::SWAPCACHE;
    fm.flags |= pg::DIRTY;
    fm.swap = crate::mm::folio::NIL;
    mm.nr_swapcached -= 1;
    let memcg = fm.memcg;
    mm.memcgs.stat_updated(memcg, FedStat::SwapCache, 1);
}

/// Frees a slot whose page is not resident (swap_free() of a swap PTE).
pub fn free_swap_entry(mm: &mut Mm, slot: u32) {
    if mm.swap.shadow(slot).is_some() {
        mm.swap_nodes.shadow_removed(slot);
    }
    release_slot(mm, slot);
}

fn release_slot(mm: &mut Mm, slot: u32) {
    // free_swap_slot(): into this CPU's swap slots cache's returned slots.
    mm.swap_slot_lock(false);
    let owner_memcg = mm.swap.owner(slot).map(|vpn| slot_memcg(mm, vpn));
    mm.swap.free_slot(slot);
    if let Some(m) = owner_memcg {
        charge_swap(mm, m, -1);
    }
}

/// The memcg a swapped page of `vpn` is charged to: its owning task's (swap_cgroup records
/// the memcg at swap-out; pagelab's tasks never change cgroup).
fn slot_memcg(mm: &Mm, vpn: Vpn) -> MemcgId {
    crate::mm::vmscan::owner_task(mm, vpn).map_or(crate::mm::memcontrol::ROOT_MEMCG, |t| mm.tasks[t].memcg)
}

/// Per-task swap readahead state: the previous fault and window (`swap_readahead_info` of
/// the VMA, or swapin_nr_pages()'s globals for cluster readahead), and readahead hits.
#[derive(Clone, Copy, Debug, Default)]
pub struct SwapRaState {
    pub prev: u64,
    pub win: u32,
    pub hits: u32,
}

/// Models mm/swap_state.c: __swapin_nr_pages() (6.1/6.12).
pub fn swapin_nr_pages(prev: u64, cur: u64, hits: u32, max_pages: u32, prev_win: u32) -> u32 {
    let mut pages = hits + 2;
    if pages == 2 {
        if cur != prev.wrapping_add(1) && cur != prev.wrapping_sub(1) {
            pages = 1;
        }
    } else {
        let mut roundup = 4;
        while roundup < pages {
            roundup <<= 1;
        }
        pages = roundup;
    }
    pages = pages.min(max_pages);
    pages.max(prev_win / 2)
}

/// A page being brought in from swap (`__read_swap_cache_async()`): allocate, charge to the
/// owner's memcg, refault test against the slot's shadow, add to the swap cache and the LRU,
/// and count the read. Returns the frame, or None when memory could not be had.
///
/// Every page, the faulting one and its readahead alike, is allocated with the fault's
/// GFP_HIGHUSER_MOVABLE: do_swap_page() hands that mask to swapin_readahead(), and
/// swap_vma_readahead()/swap_cluster_readahead() (6.1/6.12) pass it on unchanged, so a
/// readahead page under pressure goes through the whole reclaim ladder (unlike the page
/// cache's readahead_gfp_mask(), which adds __GFP_NORETRY).
fn read_swap_page<P: Policy>(mm: &mut Mm, p: &mut P, vpn: Vpn, slot: u32, readahead: bool) -> Option<Pfn> {
    let memcg = slot_memcg(mm, vpn);
    let pfn = crate::mm::filemap::new_folio(mm, p, memcg, vpn, true, crate::mm::page_alloc::Gfp::User)?;
    let shadow = mm.swap.take_shadow(slot);
    if shadow.is_some() {
        mm.swap_nodes.shadow_replaced_by_page(slot, memcg);
    } else {
        mm.swap_nodes.page_added(slot, memcg);
    }
    {
        let f = mm.folios.get_mut(pfn);
        f.swap = slot;
        f.flags |= pg::SWAPCACHE;
    }
    mm.nr_swapcached += 1;
    if !mm.swap.kind.synchronous_io() || mm.cfg.kernel.sync_swapin_through_swap_cache() {
        // A synchronous device's swap-in bypasses the swap cache up to 6.12 (pagelab passes
        // through it without the NR_SWAPCACHE update); 7.3's swapin_sync() adds it.
        mm.memcgs.stat_updated(memcg, FedStat::SwapCache, 1);
        // add_to_swap_cache() under the swap cache's lock.
        mm.swap_cache_lock("add_to_swap_cache", slot, 1);
    }
    mm.space.set(vpn, Entry::Resident(pfn));
    if let Some(t) = crate::mm::vmscan::owner_task(mm, vpn) {
        mm.tasks[t].swapents -= 1;
        mm.tasks[t].rss_anon += 1;
    }
    if let Some(s) = shadow {
        p.workingset_refault(mm, pfn, s);
    }
    crate::mm::swap::folio_add_lru(mm, p, pfn);
    mm.count(Ev::PswpIn, 1);
    if !(mm.swap_dev.kind.synchronous_io() && mm.cfg.kernel.sync_swap_skips_bio()) {
        mm.count(Ev::PgpgIn, 4);
    }
    if readahead {
        mm.folios.set(pfn, pg::READAHEAD);
        mm.count(Ev::SwapRa, 1);
    }
    Some(pfn)
}

/// Models mm/memory.c: do_swap_page() for a page not in the swap cache: synchronous devices
/// read the one page past the swap cache and free the slot (6.1/6.12; 7.3 reads it through
/// the swap cache and frees the slot after mapping it: should_try_to_free_swap() ->
/// folio_free_swap(),
/// [`Kernel::sync_swapin_through_swap_cache`](crate::kernel::Kernel::sync_swapin_through_swap_cache)); others go through
/// swapin_readahead() (cluster readahead around the slot on rotational devices, VMA readahead
/// around the address otherwise) and keep the slot in the swap cache. Returns the frame.
/// The read request goes to the device after its folios are allocated (a direct reclaim of
/// the allocation included) and its submitter's CPU is spent (swap_read_folio()'s
/// submit_bio(), 6.1/6.12/7.3), and the task waits for it from there.
pub fn swapin<P: Policy>(mm: &mut Mm, p: &mut P, t: usize, vpn: Vpn, slot: u32) -> Option<Pfn> {
    let now = mm.now();
    if mm.swap.kind.synchronous_io() {
        let pfn = read_swap_page(mm, p, vpn, slot, false)?;
        // swap_read_folio() (mm/page_io.c, 6.1/6.12): the read of a workingset refault,
        // done on the CPU here, is a memstall.
        let stall = mm.folios.test(pfn, pg::WORKINGSET).then(|| mm.memstall_enter());
        let done = if mm.swap_on_cpu() { now + mm.swap_dev.on_cpu(1, false) } else { mm.swap_dev.submit(now, 1, false) };
        mm.cpu_in(Func::SyncDeviceIo, done.saturating_sub(now)); // zram decompresses on the faulting CPU
        if let Some(stall) = stall {
            mm.memstall_leave(stall);
        }
        // The page never entered the swap cache: the slot goes at once.
        mm.swap_nodes.page_removed(slot);
        mm.nr_swapcached -= 1;
        let f = mm.folios.get_mut(pfn);
        f.flags &= !pg::SWAPCACHE;
        f.flags |= pg::DIRTY;
        f.swap = crate::mm::folio::NIL;
        let memcg = f.memcg;
        if mm.cfg.kernel.sync_swapin_through_swap_cache() {
            // folio_free_swap() takes the folio out of the swap cache: NR_SWAPCACHE -1.
            mm.memcgs.stat_updated(memcg, FedStat::SwapCache, 1);
            mm.swap_cache_lock("delete_from_swap_cache", slot, 1);
        }
        release_slot(mm, slot);
        return Some(pfn);
    }
    let max_pages = 1u32 << mm.cfg.tunables.page_cluster.min(5);
    let window: Vec<(Vpn, u32)> = if mm.swap.kind.rotational() { cluster_window(mm, t, slot, max_pages) } else { vma_window(mm, t, vpn, max_pages) };
    let mut pfn = None;
    let mut nr = 0;
    for (v, s) in window {
        if let Entry::Swapped(cur) = mm.space.get(v) {
            if cur != s {
                continue;
            }
            let ra = v != vpn;
            if let Some(got) = read_swap_page(mm, p, v, s, ra) {
                nr += 1;
                if !ra {
                    // do_swap_page() holds the page while the rest of the window is read.
                    mm.folios.set(got, pg::PINNED);
                    pfn = Some(got);
                }
            } else if !ra {
                return None;
            }
        }
    }
    // swap_read_folio() submits a workingset refault in a memstall, and do_swap_page()
    // waits for it in one (folio_wait_bit_common()).
    let stall = pfn.is_some_and(|got| mm.folios.test(got, pg::WORKINGSET)).then(|| mm.memstall_enter());
    mm.swap_read_cpu(nr.max(1));
    let done = mm.swap_dev.submit(mm.now(), nr.max(1), false);
    mm.wait_until(done);
    if let Some(stall) = stall {
        mm.memstall_leave(stall);
    }
    if let Some(got) = pfn {
        mm.folios.clear(got, pg::PINNED);
    }
    pfn
}

/// Cluster readahead (swap_cluster_readahead()): the aligned block of slots around `slot`.
fn cluster_window(mm: &mut Mm, t: usize, slot: u32, max_pages: u32) -> Vec<(Vpn, u32)> {
    let ra = &mut mm.swap_ra_global;
    let win = if max_pages <= 1 { 1 } else { swapin_nr_pages(ra.prev, slot as u64, ra.hits, max_pages, ra.win) };
    if ra.hits == 0 {
        ra.prev = slot as u64;
    }
    ra.hits = 0;
    ra.win = win;
    let _ = t;
    let mask = win as u64 - 1;
    let start = (slot as u64 & !mask).max(1).min(slot as u64);
    let end = (slot as u64 | mask).min(mm.swap.total().saturating_sub(1));
    (start..=end).filter_map(|s| mm.swap.owner(s as u32).map(|v| (v, s as u32))).collect()
}

/// VMA readahead (swap_vma_readahead()): swapped neighbours of the faulting address within
/// the region and its 2 MiB PMD.
fn vma_window(mm: &mut Mm, t: usize, vpn: Vpn, max_pages: u32) -> Vec<(Vpn, u32)> {
    let obj = mm.space.object_of(vpn);
    let (base, pages) = (mm.space.objects[obj].base as u64, mm.space.objects[obj].pages as u64);
    let ra = &mut mm.tasks[t].swap_ra;
    let cur = vpn as u64;
    let win = if max_pages <= 1 { 1 } else { swapin_nr_pages(ra.prev, cur, ra.hits, max_pages, ra.win) };
    let prev = ra.prev;
    *ra = SwapRaState { prev: cur, win, hits: 0 };
    let slot_of = |mm: &Mm, v: u64| match mm.space.get(v as Vpn) {
        Entry::Swapped(s) => Some((v as Vpn, s)),
        _ => None,
    };
    if win == 1 {
        return slot_of(mm, cur).into_iter().collect();
    }
    let w = win as u64;
    let (lo, hi) = if cur == prev + 1 {
        (cur, cur + w)
    } else if prev == cur + 1 {
        ((cur + 1).saturating_sub(w), cur + 1)
    } else {
        let left = (w - 1) / 2;
        (cur.saturating_sub(left), cur + w - left)
    };
    let pmd = (cur - base) & !511;
    let start = lo.max(base).max(base + pmd);
    let end = hi.min(base + pages).min(base + pmd + 512);
    (start..end).filter_map(|v| slot_of(mm, v)).collect()
}

/// Models swap_cache_get_folio()'s readahead-hit accounting when a fault finds a page that
/// readahead brought in.
pub fn swap_cache_hit(mm: &mut Mm, t: usize, pfn: Pfn) {
    if mm.folios.test_clear(pfn, pg::READAHEAD) {
        mm.count(Ev::SwapRaHit, 1);
        if mm.swap.kind.rotational() {
            mm.swap_ra_global.hits += 1;
        } else {
            let ra = &mut mm.tasks[t].swap_ra;
            ra.hits = (ra.hits + 1).min(255);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swapin_window_grows_with_hits_and_sequential_faults() {
        assert_eq!(swapin_nr_pages(10, 50, 0, 8, 0), 1, "a random fault without hits reads one page");
        assert_eq!(swapin_nr_pages(10, 11, 0, 8, 0), 2, "a neighbour of the last fault reads two");
        assert_eq!(swapin_nr_pages(10, 50, 1, 8, 0), 4, "hits round up to at least four");
        assert_eq!(swapin_nr_pages(10, 50, 9, 8, 0), 8, "capped by page-cluster");
        assert_eq!(swapin_nr_pages(10, 50, 0, 8, 8), 4, "never below half the last window");
    }
}
