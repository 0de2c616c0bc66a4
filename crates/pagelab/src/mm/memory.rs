//! Page faults and accesses through page tables (mm/memory.c, mm/filemap.c: filemap_fault(),
//! filemap_map_pages()): anonymous memory, swap-in, and mmap'd files with fault-around.

use crate::kernel::Kernel;
use crate::mm::folio::{pg, Pfn};
use crate::mm::hooks::Policy;
use crate::mm::mapping::{Entry, Vpn};
use crate::mm::memcontrol::FedStat;
use crate::mm::page_alloc::Gfp;
use crate::mm::page_writeback::folio_mark_dirty;
use crate::mm::profile::Func;
use crate::mm::readahead::{do_async_mmap_readahead, do_sync_mmap_readahead, FileRef, RaState};
use crate::mm::swap_state::{folio_free_swap, swap_cache_hit, swapin};
use crate::mm::vmstat::Ev;
use crate::mm::Mm;
use crate::Advice;

/// Enters handle_mm_fault(): counts the fault and notes whether the VMA has recency
/// (`lru_gen_enter_fault()`).
fn fault_begin(mm: &mut Mm, t: usize, advice: Advice) {
    let memcg = mm.tasks[t].memcg;
    mm.count_both(memcg, Ev::PgFault, 1);
    mm.tasks[t].in_lru_fault = advice == Advice::Normal;
    let c = mm.cfg.costs.minor_fault_ns;
    mm.cpu_in(Func::HandleMmFault, c);
}

fn fault_end(mm: &mut Mm, t: usize) {
    mm.tasks[t].in_lru_fault = false;
}

fn count_major(mm: &mut Mm, t: usize) {
    let memcg = mm.tasks[t].memcg;
    mm.count_both(memcg, Ev::PgMajFault, 1);
}

/// Installs a PTE for `pfn`: mapped and young (x86 creates PTEs with the accessed bit set).
/// A large folio (7.3's page cache) has one mapped and one young bit: mapping any of its pages
/// maps it whole and counts NR_FILE_MAPPED by its pages (a simplification: the kernel maps
/// the folio's pages that fault-around reaches, and counts each).
fn map_page(mm: &mut Mm, pfn: Pfn, advice: Advice) {
    let vpn = mm.folios.get(pfn).vpn;
    mm.set_pmd_young(vpn);
    let f = mm.folios.get_mut(pfn);
    let newly = f.flags & pg::MAPPED == 0;
    f.flags |= pg::MAPPED | pg::YOUNG;
    match advice {
        Advice::Normal => {}
        Advice::Random => f.flags |= pg::NORECENCY,
        Advice::Sequential => f.flags |= pg::NORECENCY | pg::SEQ_READ,
    }
    let file = f.flags & pg::SWAPBACKED == 0;
    if newly {
        let (memcg, nr) = (f.memcg, f.nr_pages());
        mm.memcgs.stat_updated(memcg, FedStat::Mapped, nr);
        if file {
            mm.nr_mapped += nr;
        }
    }
}

/// A load or store of one page of anonymous memory by task `t`. Returns false if the task
/// was killed meanwhile.
pub fn anon_access<P: Policy>(mm: &mut Mm, p: &mut P, t: usize, vpn: Vpn, write: bool, advice: Advice) -> bool {
    match mm.space.get(vpn) {
        Entry::Resident(pfn) if mm.folios.test(pfn, pg::MAPPED) => {
            mm.set_pmd_young(vpn);
            let f = mm.folios.get_mut(pfn);
            f.flags |= pg::YOUNG;
            if write && f.flags & pg::SWAPCACHE != 0 && f.flags & pg::DIRTY == 0 {
                // A clean swap-cache page is mapped read-only: the first store takes a
                // write-protect fault that reuses the page (do_wp_page()).
                fault_begin(mm, t, advice);
                mm.folios.set(pfn, pg::DIRTY);
                fault_end(mm, t);
            }
            let c = mm.cfg.costs.touch_ns;
            mm.cpu_in(Func::HandleMmFault, c);
            true
        }
        Entry::Resident(pfn) => {
            // do_swap_page() finds the page in the swap cache: a minor fault.
            fault_begin(mm, t, advice);
            swap_cache_hit(mm, t, pfn);
            map_page(mm, pfn, advice);
            finish_swapin(mm, p, pfn, write);
            fault_end(mm, t);
            true
        }
        Entry::Swapped(slot) => {
            fault_begin(mm, t, advice);
            count_major(mm, t);
            let ok = match swapin(mm, p, t, vpn, slot) {
                Some(pfn) => {
                    map_page(mm, pfn, advice);
                    finish_swapin(mm, p, pfn, write);
                    true
                }
                None => false,
            };
            fault_end(mm, t);
            ok && !mm.tasks[t].killed
        }
        Entry::ZeroPage if !write => {
            let c = mm.cfg.costs.touch_ns;
            mm.cpu_in(Func::HandleMmFault, c);
            true
        }
        Entry::Empty if !write => {
            // do_anonymous_page() for a read: map the shared zero page.
            fault_begin(mm, t, advice);
            mm.space.set(vpn, Entry::ZeroPage);
            fault_end(mm, t);
            true
        }
        _ => {
            // do_anonymous_page() for a write, or do_wp_page() copying the zero page.
            fault_begin(mm, t, advice);
            let ok = new_anon_page(mm, p, t, vpn, advice);
            fault_end(mm, t);
            ok
        }
    }
}

/// The end of do_swap_page(): free the slot for a write fault or when swap is half full
/// (should_try_to_free_swap()); 5.7 also activated every swapped-in page.
fn finish_swapin<P: Policy>(mm: &mut Mm, p: &mut P, pfn: Pfn, write: bool) {
    if mm.folios.test(pfn, pg::SWAPCACHE) && (write || mm.swap.full()) {
        folio_free_swap(mm, pfn);
    }
    if write {
        mm.folios.set(pfn, pg::DIRTY);
    }
    if mm.cfg.kernel.anon_starts_active() {
        activate_page(mm, p, pfn);
    }
}

/// 5.7's activate_page(): activate on the LRU, or in place while in the lru_add batch.
fn activate_page<P: Policy>(mm: &mut Mm, p: &mut P, pfn: Pfn) {
    if mm.folios.test(pfn, pg::IN_LRU_ADD) {
        crate::mm::swap::lru_cache_activate_folio(mm, pfn);
    } else {
        crate::mm::swap::folio_activate(mm, p, pfn);
    }
}

/// Models mm/memory.c: do_anonymous_page() for a write: a new page, charged, mapped young
/// and added to the LRU (inactive since 5.9; 5.7 put new anon pages on the active list).
fn new_anon_page<P: Policy>(mm: &mut Mm, p: &mut P, t: usize, vpn: Vpn, advice: Advice) -> bool {
    let memcg = mm.tasks[t].memcg;
    let Some(pfn) = crate::mm::filemap::new_folio(mm, p, memcg, vpn, true, Gfp::User) else { return false };
    if mm.tasks[t].killed {
        crate::mm::page_alloc::free_folio(mm, pfn);
        return false;
    }
    mm.space.set(vpn, Entry::Resident(pfn));
    // MM_ANONPAGES of the process that owns the region (a thread's store counts there).
    let owner = crate::mm::vmscan::owner_task(mm, vpn).unwrap_or(t);
    mm.tasks[owner].rss_anon += 1;
    map_page(mm, pfn, advice);
    if mm.cfg.kernel.anon_starts_active() {
        mm.folios.set(pfn, pg::ACTIVE);
    }
    crate::mm::swap::folio_add_lru(mm, p, pfn);
    true
}

/// A load or store of page `index` of a file mapped shared by task `t`.
// The arguments are the fault's own (task, file, readahead state, page, kind, advice).
#[allow(clippy::too_many_arguments)]
pub fn file_mmap_access<P: Policy>(mm: &mut Mm, p: &mut P, t: usize, f: FileRef, ra: &mut RaState, index: u64, write: bool, advice: Advice) -> bool {
    let vpn = f.base + index as Vpn;
    if let Some(pfn) = mm.space.resident(vpn) {
        if mm.folios.test(pfn, pg::MAPPED) {
            mm.set_pmd_young(vpn);
            mm.folios.set(pfn, pg::YOUNG);
            if write && !mm.folios.test(pfn, pg::DIRTY) {
                // A clean shared page is mapped read-only for dirty tracking: the first
                // store faults into page_mkwrite (do_page_mkwrite() +
                // fault_dirty_shared_page(), which throttles against the dirty limits).
                fault_begin(mm, t, advice);
                folio_mark_dirty(mm, pfn);
                let memcg = mm.folio_memcg(pfn);
                crate::mm::page_writeback::balance_dirty_pages_ratelimited(mm, p, memcg);
                fault_end(mm, t);
            }
            let c = mm.cfg.costs.touch_ns;
            mm.cpu_in(Func::HandleMmFault, c);
            return true;
        }
    }
    let obj = mm.space.object_of(vpn);
    if !mm.tasks[t].mapped_files.contains(&obj) {
        mm.tasks[t].mapped_files.push(obj);
    }
    fault_begin(mm, t, advice);
    if !write && do_fault_around(mm, f, ra, index, advice, false) {
        fault_end(mm, t);
        return true;
    }
    let (ok, retry) = filemap_fault(mm, p, t, f, ra, index, advice);
    if ok && retry && fault_retry(mm, t, f, ra, index, write, advice) {
        fault_end(mm, t);
        return true;
    }
    if ok {
        let pfn = mm.space.resident(vpn).expect("filemap_fault leaves the page cached");
        map_page(mm, pfn, advice);
        if write {
            folio_mark_dirty(mm, pfn);
            let memcg = mm.folio_memcg(pfn);
            crate::mm::page_writeback::balance_dirty_pages_ratelimited(mm, p, memcg);
        }
    }
    fault_end(mm, t);
    ok
}

/// Models mm/memory.c: do_fault_around() + mm/filemap.c: filemap_map_pages(): map the
/// cached, uptodate pages of the 16-page block around a read fault that are not marked for
/// readahead, lowering mmap_miss for the pages found (6.1; 6.12 only for pages without
/// PG_workingset), or on 7.3 by one when the faulting page itself was mapped here, on a first
/// attempt (`tried` false: no FAULT_FLAG_TRIED), without PG_workingset, in a mapping without
/// VM_SEQ_READ ([`Kernel::mmap_miss_lowered_once_per_hit`]). Returns whether the faulting
/// page itself was mapped this way.
fn do_fault_around(mm: &mut Mm, f: FileRef, ra: &mut RaState, index: u64, advice: Advice, tried: bool) -> bool {
    let n = mm.cfg.tunables.fault_around_pages;
    if n <= 1 {
        return false;
    }
    let start = index & !(n - 1);
    let end = (start + n).min(f.pages);
    let mut mapped_target = false;
    let once_per_hit = mm.cfg.kernel.mmap_miss_lowered_once_per_hit();
    for i in start..end {
        let Some(pfn) = mm.space.resident(f.base + i as Vpn) else { continue };
        if mm.folios.test(pfn, pg::READAHEAD) || !crate::mm::filemap::folio_trylock(mm, pfn) {
            continue;
        }
        // 6.1 lowers mmap_miss for every page it finds; 6.12 only for pages not marked
        // workingset (filemap_map_folio_range()): refaulting pages keep read-around off.
        if !once_per_hit && (mm.cfg.kernel < Kernel::V6_12 || !mm.folios.test(pfn, pg::WORKINGSET)) {
            ra.mmap_miss = ra.mmap_miss.saturating_sub(1);
        }
        if mm.folios.test(pfn, pg::MAPPED) {
            continue;
        }
        map_page(mm, pfn, advice);
        if crate::mm::filemap::in_folio(mm, f, pfn, index) {
            mapped_target = true;
            // 7.3: only the folio that answered the fault (VM_FAULT_NOPAGE) lowers it, once.
            if once_per_hit && !tried && !mm.folios.test(pfn, pg::WORKINGSET) && advice != Advice::Sequential {
                ra.mmap_miss = ra.mmap_miss.saturating_sub(1);
            }
        }
    }
    mapped_target
}

/// Models mm/filemap.c: filemap_fault(): a cached page triggers async readahead when
/// marked; a missing one is a major fault that reads around it (or just it). Returns whether
/// the page is there, and whether the fault dropped the mmap lock to wait for IO (readahead
/// it started, or the page's read in flight), which makes it return VM_FAULT_RETRY.
fn filemap_fault<P: Policy>(mm: &mut Mm, p: &mut P, t: usize, f: FileRef, ra: &mut RaState, index: u64, advice: Advice) -> (bool, bool) {
    let vpn = f.base + index as Vpn;
    if let Some(pfn) = mm.space.resident(vpn) {
        // A fault's lookup (__filemap_get_folio() without FGP_DONTCACHE, 6.14+) keeps a page
        // that was not admitted: it is about to be mapped.
        mm.folios.clear(pfn, pg::DROPBEHIND);
        // The fault holds a reference on the page while readahead allocates.
        mm.folios.set(pfn, pg::PINNED);
        let io = do_async_mmap_readahead(mm, p, f, ra, index, advice);
        mm.folios.clear(pfn, pg::PINNED);
        let locked = mm.folios.test(pfn, pg::LOCKED) && mm.folios.read_done(pfn) > mm.now();
        crate::mm::filemap::wait_on_folio_read(mm, pfn);
        return (true, io.pages > 0 || locked);
    }
    count_major(mm, t);
    let io = do_sync_mmap_readahead(mm, p, f, ra, index, advice);
    if io.pages > 0 {
        // The fault waits for its own page's read (__folio_lock_or_retry()).
        match mm.space.resident(vpn) {
            Some(pfn) => crate::mm::filemap::wait_for_read(mm, pfn, io.done),
            None => mm.wait_until(io.done),
        }
    }
    if let Some(pfn) = mm.space.resident(vpn) {
        mm.folios.clear(pfn, pg::DROPBEHIND);
        crate::mm::filemap::wait_on_folio_read(mm, pfn);
        return (true, true);
    }
    let Some(pfn) = crate::mm::filemap::filemap_add_folio(mm, p, vpn, false, Gfp::User) else {
        return (false, false);
    };
    mm.folios.clear(pfn, pg::DROPBEHIND);
    crate::mm::filemap::read_folio(mm, pfn);
    (!mm.tasks[t].killed, true)
}

/// Models the retry of a file fault that returned VM_FAULT_RETRY (arch/x86/mm/fault.c:
/// do_user_addr_fault() calls handle_mm_fault() again with FAULT_FLAG_TRIED): the second
/// attempt starts over in do_read_fault(), so fault-around (do_fault_around() +
/// filemap_map_pages()) maps the uptodate pages around the fault that the read just brought
/// in, and lowers mmap_miss for them, before filemap_fault() finds the page cached. 6.1
/// counts PGFAULT at every entry to handle_mm_fault(), so a retried fault counts twice; 6.12
/// counts it once, on completion (mm_account_fault()). Returns whether fault-around mapped
/// the faulting page itself.
fn fault_retry(mm: &mut Mm, t: usize, f: FileRef, ra: &mut RaState, index: u64, write: bool, advice: Advice) -> bool {
    if !mm.cfg.kernel.pgfault_counted_on_completion() {
        let memcg = mm.tasks[t].memcg;
        mm.count_both(memcg, Ev::PgFault, 1);
    }
    !write && do_fault_around(mm, f, ra, index, advice, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::classic::Classic;
    use crate::sim::scenario::Scenario;
    use crate::sim::Machine;
    use pagelab_workload::{Access, Op};

    #[test]
    fn fault_around_keeps_mmap_miss_for_workingset_pages_on_6_12_only() {
        for (kernel, lowered) in [("6.1", 16), ("6.12", 4)] {
            let text = format!(
                "[machine]\nmemory = \"64M\"\nkernel = \"{kernel}\"\n\
                 [[workload]]\nname = \"m\"\ncgroup = \"/\"\nkind = \"mmap-read\"\nfile_size = \"64p\"\nops = 0\n"
            );
            let s = Scenario::parse(&text, "t.toml", "t", &[]).unwrap();
            let mut m = Machine::new(&s, |mm| Classic::new(mm.memcgs.cg.len())).unwrap();
            let op = Op {
                object: 0,
                page: 8,
                npages: 1,
                write: false,
                access: Access::Mmap,
                advice: Advice::Normal,
                fill: false,
                think_ns: 0,
                due: None,
                more: false,
            };
            m.apply(0, op); // reads 0..24 around page 8
            let (base, pages) = m.object(0, 0);
            for i in 0..16 {
                let pfn = m.mm.space.resident(base + i).unwrap();
                m.mm.folios.clear(pfn, pg::READAHEAD);
                if i >= 4 {
                    m.mm.folios.set(pfn, pg::WORKINGSET);
                }
            }
            let mut ra = RaState { mmap_miss: 50, ra_pages: 32, ..RaState::default() };
            do_fault_around(&mut m.mm, FileRef { base, pages }, &mut ra, 3, Advice::Normal, false);
            assert_eq!(50 - ra.mmap_miss, lowered, "{kernel}: filemap_map_pages() lowers mmap_miss by the pages it finds (6.12: without PG_workingset)");
        }
    }
}
