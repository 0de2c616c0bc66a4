//! The page cache (mm/filemap.c): allocating and charging new pages, inserting them in place
//! of shadow entries, and the buffered read and write paths.

use crate::mm::folio::{pg, Pfn};
use crate::mm::hooks::Policy;
use crate::mm::mapping::{Entry, Vpn};
use crate::mm::memcontrol::{try_charge_memcg, FedStat, MemcgId};
use crate::mm::page_alloc::{alloc_page, Gfp};
use crate::mm::page_writeback::{balance_dirty_pages_ratelimited, folio_mark_dirty};
use crate::mm::profile::Func;
use crate::mm::readahead::{page_cache_async_ra, page_cache_sync_ra, FileRef, RaState};
use crate::mm::swap::folio_add_lru;
use crate::mm::vmstat::Ev;
use crate::mm::Mm;

/// Allocates a page for `vpn` and charges it to `memcg` (filemap_alloc_folio() or
/// vma_alloc_folio(), then mem_cgroup_charge()). None if the allocation failed or the
/// allocating task was killed.
// Inlined into filemap_add_folio(), which every page-cache miss goes through.
#[inline(always)]
pub fn new_folio<P: Policy>(mm: &mut Mm, p: &mut P, memcg: MemcgId, vpn: Vpn, anon: bool, gfp: Gfp) -> Option<Pfn> {
    let pfn = alloc_page(mm, p, gfp)?;
    {
        let f = mm.folios.get_mut(pfn);
        f.vpn = vpn;
        f.memcg = memcg;
        f.flags = if anon { pg::SWAPBACKED } else { 0 };
    }
    mm.page_counts(pfn, 1);
    if try_charge_memcg(mm, p, memcg, 1).is_err() {
        mm.page_counts(pfn, -1);
        crate::mm::page_alloc::free_unref_page(mm, pfn);
        return None;
    }
    if mm.cfg.kernel.memcg_counts_pgpgin() {
        mm.memcgs.stat_updated(memcg, FedStat::PgpgIn, 1);
    }
    Some(pfn)
}

/// The memcg new page cache is charged to: the current task's (`mem_cgroup_charge(folio,
/// NULL, gfp)` charges the active memcg).
fn current_memcg(mm: &Mm) -> MemcgId {
    mm.current_task().map_or(crate::mm::memcontrol::ROOT_MEMCG, |t| mm.tasks[t].memcg)
}

/// Models mm/filemap.c: filemap_add_folio() (6.1/6.12): a new page takes the place of
/// whatever the slot held; a shadow entry makes it a refault unless the page is being
/// written (`__GFP_WRITE`). The page then waits in the lru_add batch.
pub fn filemap_add_folio<P: Policy>(mm: &mut Mm, p: &mut P, vpn: Vpn, for_write: bool, gfp: Gfp) -> Option<Pfn> {
    let memcg = current_memcg(mm);
    let pfn = new_folio(mm, p, memcg, vpn, false, gfp)?;
    mm.i_pages_lock("__filemap_add_folio", vpn, 1);
    mm.memcgs.stat_updated(memcg, FedStat::FilePages, 1);
    let old = mm.space.replace(vpn, Entry::Resident(pfn));
    if let Entry::Shadow(_) = old {
        mm.file_nodes.shadow_replaced_by_page(vpn, memcg);
    } else {
        mm.file_nodes.page_added(vpn, memcg);
        if mm.pageblocks.is_some() {
            xa_node_slabs(mm);
        }
    }
    if let Entry::Shadow(s) = old {
        if !for_write {
            p.workingset_refault(mm, pfn, s);
        }
    }
    if !p.admit_folio(mm, pfn, !for_write) {
        mm.folios.set(pfn, pg::DROPBEHIND);
    }
    folio_add_lru(mm, p, pfn);
    Some(pfn)
}

/// With non-movable pageblocks (`machine.nonmovable`): the slabs of the page cache's xarray
/// nodes follow the nodes in use ([`xa_node_slabs_follow_the_nodes`]), taken from the
/// highest zone's non-movable free lists (none when that zone has no layout) ([`Pageblocks::alloc_slab`]), or, when
/// those have no chunk of two pages, off its movable free lists (the kernel's
/// __rmqueue_fallback() would also claim that block: not modeled). Their pages are the
/// kernel's from then on. Nodes that empty elsewhere (truncation, the shadow shrinker) give
/// their slabs back at the next insertion.
///
/// [`xa_node_slabs_follow_the_nodes`]: crate::mm::pageblock::xa_node_slabs_follow_the_nodes
/// [`Pageblocks::alloc_slab`]: crate::mm::pageblock::Pageblocks::alloc_slab
#[inline(never)]
pub fn xa_node_slabs(mm: &mut Mm) {
    use crate::mm::pageblock::{xa_node_slabs_follow_the_nodes, RADIX_TREE_NODE_SLAB_PAGES as SLAB};
    let Mm { pageblocks, folios, file_nodes, nodes, kernel_pages, .. } = mm;
    let Some(pb) = pageblocks.as_mut() else { return };
    let Some(z) = pb.slab_zone(nodes[0].zones.top()) else { return };
    let have = pb.nr_slabs();
    let want = xa_node_slabs_follow_the_nodes(file_nodes.nr_nodes(), have);
    for _ in have..want {
        if pb.alloc_slab(z).is_none() {
            // The per-CPU lists' count must stay within the free frames.
            if folios.nr_free_in(z) < nodes[0].zones.z[z].pcp.count.max(0) as u64 + SLAB {
                return;
            }
            match (folios.alloc_from(z), folios.alloc_from(z)) {
                (Some(a), Some(b)) => pb.slab_from_movable([a, b]),
                (a, _) => {
                    // The host could not cover a never-used frame (Folios::failure says why).
                    if let Some(pfn) = a {
                        folios.free(pfn);
                    }
                    return;
                }
            }
        }
        *kernel_pages += SLAB;
    }
    for _ in want..have {
        if let Some(frames) = pb.free_slab(z) {
            for pfn in frames {
                folios.free(pfn);
            }
        }
        *kernel_pages -= SLAB;
    }
}

/// Models mm/filemap.c: filemap_add_folio() of a large folio (7.3,
/// [`Kernel::large_folio_readahead`]: page_cache_ra_order() -> ra_alloc_folio()): a folio of
/// `order` at `vpn`, the first page of an aligned range whose slots hold no page (the caller
/// checked; __filemap_add_folio() fails with -EEXIST otherwise). Every slot of the range
/// then names the folio, as the kernel's multi-index entry does; a shadow in the range (the
/// last one, as xas_for_each_conflict() leaves `old`) makes the folio a refault, counted by
/// its pages. Memory is accounted by pages: NR_FILE_PAGES, the memcg charge, the zones' free
/// pages.
///
/// Simplification: the folio's 2^order frames are taken one at a time from the free lists
/// (the per-CPU lists, then the buddy lists, as order-0 pages are), not as one aligned block
/// of the buddy allocator: fragmentation and compaction are not modeled for large folios, and
/// an allocation fails only when single frames run out. A failure frees what was taken and
/// returns None, and the caller falls back to order-0 pages (page_cache_ra_order()'s
/// fallback).
///
/// [`Kernel::large_folio_readahead`]: crate::kernel::Kernel::large_folio_readahead
pub fn filemap_add_large_folio<P: Policy>(mm: &mut Mm, p: &mut P, vpn: Vpn, order: u32, gfp: Gfp) -> Option<Pfn> {
    debug_assert!(order > 0 && order <= 9);
    let nr = 1u64 << order;
    let memcg = current_memcg(mm);
    let frames = if mm.cfg.kernel.large_folio_allocated_at_its_order() {
        crate::mm::page_alloc::alloc_pages_order(mm, p, order)?
    } else {
        let mut frames = Vec::with_capacity(nr as usize);
        for _ in 0..nr {
            match alloc_page(mm, p, gfp) {
                Some(pfn) => frames.push(pfn),
                None => {
                    for pfn in frames {
                        crate::mm::page_alloc::free_unref_page(mm, pfn);
                    }
                    return None;
                }
            }
        }
        frames
    };
    let head = frames[0];
    {
        let f = mm.folios.get_mut(head);
        f.vpn = vpn;
        f.memcg = memcg;
        f.flags = order << pg::ORDER_SHIFT;
        f.swap = frames.get(1).copied().unwrap_or(crate::mm::folio::NIL);
    }
    mm.page_counts(head, nr as i64);
    if try_charge_memcg(mm, p, memcg, nr).is_err() {
        mm.page_counts(head, -(nr as i64));
        mm.folios.get_mut(head).flags = 0;
        for pfn in frames {
            crate::mm::page_alloc::free_unref_page(mm, pfn);
        }
        return None;
    }
    for k in 1..frames.len() {
        let f = mm.folios.get_mut(frames[k]);
        f.flags = pg::TAIL;
        f.pos = head;
        f.vpn = vpn + k as Vpn;
        f.memcg = memcg;
        f.swap = frames.get(k + 1).copied().unwrap_or(crate::mm::folio::NIL);
    }
    if mm.cfg.kernel.memcg_counts_pgpgin() {
        mm.memcgs.stat_updated(memcg, FedStat::PgpgIn, nr);
    }
    mm.memcgs.stat_updated(memcg, FedStat::FilePages, nr);
    // One xas_store() of the multi-index entry under the lock.
    mm.i_pages_lock("__filemap_add_folio", vpn, 1);
    let mut shadow = None;
    for k in 0..nr as Vpn {
        let old = mm.space.replace(vpn + k, Entry::Resident(head));
        if let Entry::Shadow(s) = old {
            mm.file_nodes.shadow_replaced_by_page(vpn + k, memcg);
            shadow = Some(s);
        } else {
            mm.file_nodes.page_added(vpn + k, memcg);
        }
    }
    if mm.pageblocks.is_some() {
        xa_node_slabs(mm);
    }
    if let Some(s) = shadow {
        p.workingset_refault(mm, head, s);
    }
    if !p.admit_folio(mm, head, true) {
        mm.folios.set(head, pg::DROPBEHIND);
    }
    folio_add_lru(mm, p, head);
    Some(head)
}

/// Models mm/filemap.c: page_cache_delete() (6.1, 6.12, 7.3): the folio leaves every slot of
/// its range, which holds `shadow` after it (one shadow over a large folio's range: a later
/// add of a smaller folio anywhere in the range finds it) or nothing.
// Always inlined: every eviction's path; a large folio's range is out of line.
#[inline(always)]
pub fn page_cache_delete(mm: &mut Mm, pfn: Pfn, shadow: Option<crate::mm::mapping::Shadow>) {
    let f = mm.folios.get(pfn);
    let (vpn, memcg) = (f.vpn, f.memcg);
    if f.order() > 0 {
        return page_cache_delete_range(mm, pfn, shadow);
    }
    delete_slot(mm, vpn, memcg, shadow);
}

/// [`page_cache_delete`] of a large folio: every slot of its range.
#[inline(never)]
fn page_cache_delete_range(mm: &mut Mm, pfn: Pfn, shadow: Option<crate::mm::mapping::Shadow>) {
    let f = *mm.folios.get(pfn);
    for k in 0..f.nr_pages() as Vpn {
        delete_slot(mm, f.vpn + k, f.memcg, shadow);
    }
}

/// One slot of [`page_cache_delete`]: the shadow takes the page's place, or nothing does.
#[inline(always)]
fn delete_slot(mm: &mut Mm, vpn: Vpn, memcg: MemcgId, shadow: Option<crate::mm::mapping::Shadow>) {
    match shadow {
        Some(s) => {
            mm.space.set(vpn, Entry::Shadow(s));
            mm.file_nodes.page_replaced_by_shadow(vpn, memcg);
        }
        None => {
            mm.space.set(vpn, Entry::Empty);
            mm.file_nodes.page_removed(vpn);
        }
    }
}

/// Models mm/filemap.c: filemap_end_dropbehind_read() (7.3; PG_dropbehind is 6.14+, the
/// kernel cache_ext's `admit_folio` marks): after a buffered read copied a folio that was
/// not admitted, the folio leaves the page cache if it is clean, not under writeback, not
/// mapped and its lock can be taken (its read completed; reclaim does not hold it);
/// otherwise it stays marked and a later read tries again. It leaves as
/// folio_unmap_invalidate() removes a folio: no shadow entry (__filemap_remove_folio(folio,
/// NULL)), so a later read of the page is a new miss, not a refault; the policy hears
/// `folio_removed(Freed)`.
#[inline(never)]
pub fn filemap_end_dropbehind_read<P: Policy>(mm: &mut Mm, p: &mut P, pfn: Pfn) {
    let flags = mm.folios.get(pfn).flags;
    if flags & (pg::DIRTY | pg::WRITEBACK | pg::MAPPED | pg::ISOLATED | pg::PINNED) != 0 || !folio_trylock(mm, pfn) {
        return;
    }
    mm.folios.clear(pfn, pg::DROPBEHIND);
    if flags & pg::IN_LRU_ADD != 0 {
        // Still in this CPU's lru_add batch: the batch is drained first, so the folio leaves
        // its LRU as any other does.
        crate::mm::swap::lru_add_drain(mm, p);
    }
    if mm.folios.test(pfn, pg::LRU) {
        p.lru_del(mm, pfn);
    }
    // folio_unmap_invalidate() -> __filemap_remove_folio() under the i_pages lock.
    let vpn = mm.folios.get(pfn).vpn;
    mm.i_pages_lock("filemap_remove_folio", vpn, 1);
    page_cache_delete(mm, pfn, None);
    crate::mm::page_alloc::free_folio(mm, pfn);
}

/// Models folio_trylock() for a page whose read may still be in flight: a read that has
/// completed by now unlocks it.
pub fn folio_trylock(mm: &mut Mm, pfn: Pfn) -> bool {
    if !mm.folios.test(pfn, pg::LOCKED) {
        return true;
    }
    if mm.folios.read_done(pfn) > mm.now() {
        return false;
    }
    mm.folios.clear(pfn, pg::LOCKED);
    true
}

/// A page whose read is still in flight (PG_locked until the IO completes): wait for it.
pub fn wait_on_folio_read(mm: &mut Mm, pfn: Pfn) {
    if mm.folios.test(pfn, pg::LOCKED) {
        let done = mm.folios.read_done(pfn);
        wait_for_read(mm, pfn, done);
        mm.folios.clear(pfn, pg::LOCKED);
    }
}

/// Models mm/filemap.c: folio_wait_bit_common()'s thrashing test (6.1, 6.12): a task that
/// waits for the read of a page with PG_workingset (a refault of a page that was in the
/// workingset when it was evicted: the shadow's workingset bit) is in a memstall while it
/// waits; the wait for a first read, or a refault of a page evicted inactive, is not.
/// filemap_read_folio() and swap_read_folio() (mm/page_io.c) make the same test for the
/// reads they issue. `pfn`'s read completes at `done`.
pub fn wait_for_read(mm: &mut Mm, pfn: Pfn, done: u64) {
    if mm.folios.test(pfn, pg::WORKINGSET) {
        let stall = mm.memstall_enter();
        mm.wait_until(done);
        mm.memstall_leave(stall);
    } else {
        mm.wait_until(done);
    }
}

/// The page at `index` of `f` if it is cached.
fn cached(mm: &Mm, f: FileRef, index: u64) -> Option<Pfn> {
    mm.space.resident(f.base + index as Vpn)
}

/// Models mm/filemap.c: filemap_read() for `npages` pages at `index` (one pread call):
/// filemap_get_pages() with sync and async readahead, the single-page read of
/// filemap_create_folio(), and folio_mark_accessed() once for each folio of a batch, the
/// first one not if the previous read ended in it (pos_same_folio(), 6.1 to 7.3: for order-0
/// pages, the page the previous read ended in; 7.3's large folios are marked once per read
/// call that reaches them).
///
/// The common hit, a one-page read of a cached, unlocked page that starts no readahead, is
/// taken here, inlined into the caller's loop: the general path would do exactly this, in
/// more steps.
#[inline(always)]
pub fn filemap_read<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState, index: u64, npages: u64) -> bool {
    if npages == 1 && index < f.pages && mm.cfg.read_shortcuts {
        if let Some(pfn) = mm.space.resident(f.base + index as Vpn) {
            if !mm.folios.test(pfn, pg::READAHEAD | pg::LOCKED) {
                mm.cpu_in(Func::FilemapRead, mm.cfg.costs.syscall_ns);
                copy_one_page(mm, p, f, ra, pfn, index);
                return true;
            }
        }
    }
    filemap_read_slow(mm, p, f, ra, index, npages)
}

/// filemap_read() but for the common hit.
#[inline(never)]
fn filemap_read_slow<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState, index: u64, npages: u64) -> bool {
    let (syscall_ns, copy_page_ns) = (mm.cfg.costs.syscall_ns, mm.cfg.costs.copy_page_ns);
    if npages == 1 && index < f.pages && mm.cfg.read_shortcuts && (ra.random || ra.ra_pages == 0) && mm.space.resident(f.base + index as Vpn).is_none() {
        // The common miss without readahead: force_page_cache_ra() of this one page and a
        // wait for its read, which the general path below takes in more steps.
        mm.cpu_in(Func::FilemapRead, syscall_ns);
        return read_one_missing_page(mm, p, f, ra, index);
    }
    mm.cpu_in(Func::FilemapRead, syscall_ns);
    let end = (index + npages).min(f.pages);
    // Where the read has got to (filemap_read()'s `last_pos`, in pages): 6.1 stores it in
    // ra->prev_pos after every copy, 6.12 only when the read ends (below).
    let at_end = mm.cfg.kernel.read_sets_prev_pos_at_end();
    let mut last = ra.prev_valid.then_some(ra.prev_index);
    let mut idx = index;
    let ok = 'read: {
        while idx < end {
            let mut batch_end = read_batch_end(mm, f, idx, end);
            if batch_end == idx {
                let io = page_cache_sync_ra(mm, p, f, ra, idx, end - idx);
                if io.pages > 0 {
                    // filemap_update_page() waits on the first page of the batch.
                    match cached(mm, f, idx) {
                        Some(pfn) => wait_for_read(mm, pfn, io.done),
                        None => mm.wait_until(io.done),
                    }
                }
                batch_end = read_batch_end(mm, f, idx, end);
                if batch_end == idx {
                    // filemap_create_folio(): read just this page.
                    let Some(pfn) = filemap_add_folio(mm, p, f.base + idx as Vpn, false, Gfp::User) else {
                        break 'read false;
                    };
                    read_folio(mm, pfn);
                    batch_end = idx + 1;
                }
            }
            let last_pfn = mm.space.resident(f.base + (batch_end - 1) as Vpn).expect("batch pages are cached");
            if mm.folios.test(last_pfn, pg::READAHEAD) {
                // The async readahead starts at the marked folio's first page (its index).
                let last_page = folio_index(mm, f, last_pfn);
                // The batch holds references: async readahead's allocations cannot free it.
                set_pinned(mm, f, idx, batch_end, true);
                page_cache_async_ra(mm, p, f, ra, last_page, end - last_page);
                set_pinned(mm, f, idx, batch_end, false);
            }
            let mut prev_pfn = None;
            for i in idx..batch_end {
                let Some(pfn) = mm.space.resident(f.base + i as Vpn) else { break 'read false };
                wait_on_folio_read(mm, pfn);
                // Once per folio of the batch; the first folio not if the previous read
                // ended in it (pos_same_folio()).
                if prev_pfn != Some(pfn) {
                    let same_as_previous = i == idx && last.is_some_and(|l| l == i + 1 || (l > 0 && in_folio(mm, f, pfn, l - 1)));
                    if !same_as_previous {
                        crate::mm::swap::folio_mark_accessed(mm, p, pfn);
                    }
                }
                prev_pfn = Some(pfn);
                mm.cpu_in(Func::CopyPage, copy_page_ns);
                // After the folio's last page the batch copies (filemap_read()'s put_folios).
                if mm.folios.test(pfn, pg::DROPBEHIND) && (i + 1 == batch_end || folio_index(mm, f, pfn) + mm.folios.nr_pages(pfn) == i + 1) {
                    filemap_end_dropbehind_read(mm, p, pfn);
                }
                last = Some(i + 1);
                if !at_end {
                    ra.prev_index = i + 1;
                    ra.prev_valid = true;
                }
            }
            idx = batch_end;
        }
        true
    };
    if let Some(l) = last {
        ra.prev_index = l;
        ra.prev_valid = true;
    }
    ok
}

/// The first page index of the folio `pfn` of file `f` (folio->index).
#[inline(always)]
fn folio_index(mm: &Mm, f: FileRef, pfn: Pfn) -> u64 {
    (mm.folios.get(pfn).vpn - f.base) as u64
}

/// Whether page `index` of `f` lies in the folio `pfn` (pos_same_folio() in pages).
#[inline(always)]
pub(crate) fn in_folio(mm: &Mm, f: FileRef, pfn: Pfn, index: u64) -> bool {
    let first = folio_index(mm, f, pfn);
    index >= first && index < first + mm.folios.nr_pages(pfn)
}

/// The end of a one-page read whose page is cached and read: folio_mark_accessed() unless
/// the previous read ended in this folio (pos_same_folio(): for order 0, in this page), then
/// the copy to user space.
#[inline]
fn copy_one_page<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState, pfn: Pfn, index: u64) {
    debug_assert!(in_folio(mm, f, pfn, index));
    let same = ra.prev_valid && (ra.prev_index == index + 1 || (ra.prev_index > 0 && mm.folios.nr_pages(pfn) > 1 && in_folio(mm, f, pfn, ra.prev_index - 1)));
    if !same {
        crate::mm::swap::folio_mark_accessed(mm, p, pfn);
    }
    mm.cpu_in(Func::CopyPage, mm.cfg.costs.copy_page_ns);
    if mm.folios.test(pfn, pg::DROPBEHIND) {
        filemap_end_dropbehind_read(mm, p, pfn);
    }
    ra.prev_index = index + 1;
    ra.prev_valid = true;
}

/// filemap_read() of one uncached page without readahead, step for step what the general
/// path does: do_page_cache_ra() inserts the page (a `__GFP_NORETRY` allocation; if that
/// fails, filemap_create_folio() tries again with the full allocation) and submits its read;
/// the task waits for it. The page is never seen locked: nothing runs between the insertion
/// and the end of the wait, and the wait ends with the read complete.
fn read_one_missing_page<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState, index: u64) -> bool {
    let vpn = f.base + index as Vpn;
    let pfn = match filemap_add_folio(mm, p, vpn, false, Gfp::NoRetry) {
        Some(pfn) => pfn,
        None => match filemap_add_folio(mm, p, vpn, false, Gfp::User) {
            Some(pfn) => pfn,
            None => return false,
        },
    };
    if mm.reads_async() {
        read_folio_async(mm, pfn);
    } else {
        read_folio(mm, pfn);
    }
    copy_one_page(mm, p, f, ra, pfn, index);
    true
}

/// An asynchronous buffered read of a page just inserted, as io_uring (and libaio) submit
/// one for a task with an `iodepth` above 1: the read request goes to the device and the
/// task goes on; the page stays locked (PG_locked) until the read completes, so an access
/// before then waits for it ([`wait_on_folio_read`]). The task waits only when `iodepth`
/// reads are already in flight ([`Mm::read_slot`]). Models io_uring's buffered read with
/// IOCB_WAITQ (6.1, 6.12: filemap_read() -> filemap_update_page() queues a wake-up on the
/// folio's lock instead of sleeping, and the request completes when the read unlocks it).
/// Simplifications: the copy to the user is charged at submission, and the workingset
/// memstall of a synchronous wait is not counted (nobody sleeps on the page).
fn read_folio_async(mm: &mut Mm, pfn: Pfn) {
    mm.read_slot();
    mm.file_read_cpu(1);
    let done = mm.submit_file(1, false);
    mm.count(Ev::PgpgIn, 4);
    if done > mm.now() {
        mm.folios.set(pfn, pg::LOCKED);
        mm.folios.set_read_done(pfn, done);
        mm.read_submitted(done);
    }
}

/// Models mm/filemap.c: filemap_read_folio() (6.1, 6.12) of a page just inserted: one read
/// request and the wait for it, a memstall from the submission to the end of the wait when
/// the page is a workingset refault.
pub fn read_folio(mm: &mut Mm, pfn: Pfn) {
    let stall = mm.folios.test(pfn, pg::WORKINGSET).then(|| mm.memstall_enter());
    mm.file_read_cpu(1);
    let done = mm.submit_file(1, false);
    mm.count(Ev::PgpgIn, 4);
    mm.wait_until(done);
    if let Some(stall) = stall {
        mm.memstall_leave(stall);
    }
}

fn set_pinned(mm: &mut Mm, f: FileRef, from: u64, to: u64, pinned: bool) {
    for i in from..to {
        if let Some(pfn) = mm.space.resident(f.base + i as Vpn) {
            if pinned {
                mm.folios.set(pfn, pg::PINNED);
            } else {
                mm.folios.clear(pfn, pg::PINNED);
            }
        }
    }
}

/// filemap_get_read_batch(): the run of cached pages from `idx`, ending after a folio that
/// is PG_readahead or still being read.
fn read_batch_end(mm: &mut Mm, f: FileRef, idx: u64, end: u64) -> u64 {
    let mut i = idx;
    while i < end {
        let Some(pfn) = mm.space.resident(f.base + i as Vpn) else { break };
        let fo = *mm.folios.get(pfn);
        // The whole folio (a large one spans several pages), or what the read wants of it.
        i = if fo.order() == 0 { i + 1 } else { ((fo.vpn - f.base) as u64 + fo.nr_pages()).min(end) };
        if fo.flags & pg::READAHEAD != 0 || !folio_trylock(mm, pfn) {
            break;
        }
    }
    i
}

/// Models mm/filemap.c: generic_perform_write() for whole pages: find or create each page
/// (write_begin never marks it accessed and never counts a refault), dirty it, and throttle
/// against the dirty limits.
pub fn filemap_write<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, index: u64, npages: u64) -> bool {
    let costs = mm.cfg.costs.clone();
    mm.cpu_in(Func::FilemapRead, costs.syscall_ns);
    let end = (index + npages).min(f.pages);
    // The cgroup whose writeback owns the file's dirty pages (the one that dirtied them).
    let mut wb_memcg = crate::mm::memcontrol::ROOT_MEMCG;
    for i in index..end {
        let vpn = f.base + i as Vpn;
        let pfn = match mm.space.resident(vpn) {
            Some(pfn) => {
                wait_on_folio_read(mm, pfn);
                pfn
            }
            None => match filemap_add_folio(mm, p, vpn, true, Gfp::User) {
                Some(pfn) => pfn,
                None => return false,
            },
        };
        mm.cpu_in(Func::CopyPage, costs.copy_page_ns);
        folio_mark_dirty(mm, pfn);
        wb_memcg = mm.folio_memcg(pfn);
        p.mark_written(mm, pfn);
    }
    balance_dirty_pages_ratelimited(mm, p, wb_memcg);
    true
}

/// Models mm/truncate.c: truncate_inode_pages_range() (6.1, 6.12) over pages [`start`,
/// `end`) of file `f`: what deleting a file (its last link and opener gone:
/// truncate_inode_pages_final()) or truncating it does to its page cache. Each page leaves
/// the page cache (truncate_cleanup_folio(): its dirty state cancelled, folio_cancel_dirty();
/// then delete_from_page_cache_batch()/filemap_remove_folio(): off its LRU, uncharged,
/// freed) and each shadow entry of the range is deleted (truncate_folio_batch_exceptionals():
/// a deleted file's pages never refault). Returns the pages removed.
///
/// A large folio (7.3) the range reaches is removed whole (the kernel splits one the range
/// covers only in part; pagelab's truncations are whole files).
///
/// The kernel's first pass skips what it cannot lock and its second pass waits for it: a
/// page whose read is in flight is waited for here too; a page under writeback is removed
/// without the wait (folio_wait_writeback(): the model ends its writeback accounting now,
/// and the write's completion finds the page gone). Left out: a page isolated by reclaim at
/// that moment stays for reclaim to free (the kernel would wait for its lock), and a page
/// mapped into a task stays resident (the kernel unmaps it first: unmap_mapping_folio()).
pub fn truncate_inode_pages_range<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, start: u64, end: u64) -> u64 {
    let costs = mm.cfg.costs.clone();
    mm.cpu_in(Func::FilemapRead, costs.syscall_ns);
    // Every CPU's batches (lru_add_drain_all()): a batched folio would otherwise be freed
    // while its batch still names it (the kernel frees it when that CPU drains).
    crate::mm::swap::lru_add_drain_all(mm, p);
    let (mut next, stop) = (f.base as u64 + start.min(f.pages), f.base as u64 + end.min(f.pages));
    let mut removed = 0;
    // delete_from_page_cache_batch() takes the i_pages lock once per folio batch.
    let (batch_size, mut batched) = (mm.cfg.kernel.pagevec_size() as u64, 0u64);
    while let Some(vpn) = mm.space.next_touched(next, stop) {
        next = vpn as u64 + 1;
        match mm.space.get(vpn) {
            Entry::Resident(pfn) => {
                if mm.folios.test(pfn, pg::ISOLATED) || mm.folios.test(pfn, pg::MAPPED) {
                    continue;
                }
                wait_on_folio_read(mm, pfn);
                // A large folio goes whole, from the first of its pages the range reaches.
                let nr = mm.folios.nr_pages(pfn);
                if mm.folios.test(pfn, pg::WRITEBACK) {
                    mm.folios.clear(pfn, pg::WRITEBACK);
                    let memcg = mm.folio_memcg(pfn);
                    mm.account_writeback(memcg, -(nr as i64));
                }
                if mm.folios.test(pfn, pg::LRU) {
                    p.lru_del(mm, pfn);
                }
                next = mm.folios.get(pfn).vpn as u64 + nr;
                batched += 1;
                if batched == batch_size {
                    mm.i_pages_lock("delete_from_page_cache_batch", f.base, batched);
                    batched = 0;
                }
                page_cache_delete(mm, pfn, None);
                // Uncharges it and drops its file (and dirty) counts.
                crate::mm::page_alloc::free_folio(mm, pfn);
                removed += nr;
            }
            Entry::Shadow(_) => {
                mm.space.set(vpn, Entry::Empty);
                mm.file_nodes.shadow_removed(vpn);
            }
            _ => {}
        }
    }
    if batched > 0 {
        mm.i_pages_lock("delete_from_page_cache_batch", f.base, batched);
    }
    removed
}
