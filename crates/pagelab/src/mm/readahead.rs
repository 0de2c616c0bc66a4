//! File readahead (mm/readahead.c, and the mmap fault side of mm/filemap.c): the on-demand
//! window of each open file, as 6.1 and 6.12 grow it.

use crate::mm::folio::pg;
use crate::mm::hooks::Policy;
use crate::mm::mapping::{Entry, Vpn};
use crate::mm::page_alloc::Gfp;
use crate::mm::Mm;

/// `struct file_ra_state` of one task's open file, plus the in-flight read of the last
/// readahead (pages reach the page cache at once but are only uptodate when the IO ends).
#[derive(Clone, Debug, Default)]
pub struct RaState {
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    /// `prev_pos` in pages: one past the last page read (`ra->prev_pos >> PAGE_SHIFT`).
    pub prev_index: u64,
    /// Whether any read happened yet (prev_pos starts at -1 in the kernel).
    pub prev_valid: bool,
    pub mmap_miss: u32,
    /// FMODE_RANDOM (POSIX_FADV_RANDOM) or readahead switched off.
    pub random: bool,
    pub ra_pages: u64,
    /// `ra->order` (7.3, [`crate::kernel::Kernel::large_folio_readahead`]): the folio order
    /// the next window is read in; 0 on the kernels without large page-cache folios.
    pub order: u32,
}

/// MAX_PAGECACHE_ORDER with 4 KiB pages (min(MAX_XAS_ORDER, PREFERRED_MAX_PAGECACHE_ORDER =
/// HPAGE_PMD_ORDER)): mapping_max_folio_order() of an ext4 file with 4 KiB blocks (7.3).
pub const MAX_PAGECACHE_ORDER: u32 = 9;

/// `MMAP_LOTSAMISS`.
const MMAP_LOTSAMISS: u32 = 100;

/// The file being read: its first vpn and size in pages.
#[derive(Clone, Copy, Debug)]
pub struct FileRef {
    pub base: Vpn,
    pub pages: u64,
}

impl FileRef {
    #[inline]
    fn vpn(self, index: u64) -> Vpn {
        self.base + index as Vpn
    }
    #[inline]
    pub fn cached(self, mm: &Mm, index: u64) -> bool {
        index < self.pages && mm.space.resident(self.vpn(index)).is_some()
    }
}

/// Models mm/readahead.c: get_init_ra_size().
pub fn get_init_ra_size(size: u64, max: u64) -> u64 {
    let newsize = size.max(1).next_power_of_two();
    if newsize <= max / 32 {
        newsize * 4
    } else if newsize <= max / 4 {
        newsize * 2
    } else {
        max
    }
}

/// Models mm/readahead.c: get_next_ra_size().
pub fn get_next_ra_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

/// Models mm/filemap.c: page_cache_prev_miss(): the first index at or below `index` that is
/// not cached, scanning at most `max_scan` entries (the last one scanned if all are cached);
/// -1 stands for the kernel's ULONG_MAX, "cached all the way back to the start of the file".
fn page_cache_prev_miss(mm: &Mm, f: FileRef, index: u64, max_scan: u64) -> i64 {
    let mut i = index as i64;
    for n in 0..max_scan {
        if i < 0 || !f.cached(mm, i as u64) || n + 1 == max_scan {
            return i;
        }
        i -= 1;
    }
    i
}

/// Models mm/filemap.c: page_cache_next_miss(): the first index from `index` on, within
/// `max_scan`, that holds no page. When every one does, 6.1.192 returns the last index it
/// looked at and 6.12.95 the index just past the scan
/// ([`crate::kernel::Kernel::next_miss_past_the_scan`]), so 6.12's readahead, finding a full
/// window cached after a marker, reads nothing.
fn page_cache_next_miss(mm: &Mm, f: FileRef, index: u64, max_scan: u64) -> u64 {
    if let Some(gap) = (index..index + max_scan).find(|&i| !f.cached(mm, i)) {
        return gap;
    }
    if mm.cfg.kernel.next_miss_past_the_scan() {
        index + max_scan
    } else {
        index + max_scan.saturating_sub(1)
    }
}

/// The outcome of a readahead: pages read and when their IO completes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RaIo {
    pub pages: u64,
    pub done: u64,
}

/// Models mm/readahead.c: page_cache_sync_ra() (6.1 through ondemand_readahead(), 6.12 its
/// own rules) for a read of `req` pages at `index` that found nothing cached.
pub fn page_cache_sync_ra<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState, index: u64, req: u64) -> RaIo {
    if ra.random || ra.ra_pages == 0 {
        let req = if ra.ra_pages == 0 { 1 } else { req };
        return force_page_cache_ra(mm, p, f, ra, index, req);
    }
    let max = ra.ra_pages;
    let prev_index = if ra.prev_valid { ra.prev_index } else { u64::MAX };
    let near_prev = index.wrapping_sub(prev_index) <= 1;
    if mm.cfg.kernel.sync_readahead_initial_or_context() {
        if index == 0 || req > max || near_prev {
            ra.start = index;
            ra.size = get_init_ra_size(req, max);
            ra.async_size = if ra.size > req { ra.size - req } else { ra.size / 2 };
            ra.order = 0;
            return ra_submit(mm, p, f, ra);
        }
        let miss = page_cache_prev_miss(mm, f, index - 1, max);
        let mut contig = (index as i64 - miss - 1) as u64;
        if contig <= req {
            return do_page_cache_ra(mm, p, f, index, req, 0);
        }
        if miss < 0 {
            // cached back to the start of the file: a stream from the beginning
            contig *= 2;
        }
        ra.start = index;
        ra.size = (contig + req).min(max);
        ra.async_size = 1;
        ra.order = 0;
        return ra_submit(mm, p, f, ra);
    }
    ondemand_readahead(mm, p, f, ra, index, req, false)
}

/// Models mm/readahead.c: page_cache_async_ra(): a read hit a PG_readahead page.
pub fn page_cache_async_ra<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState, index: u64, req: u64) -> RaIo {
    if ra.ra_pages == 0 {
        return RaIo::default();
    }
    let vpn = f.vpn(index);
    if let Some(pfn) = mm.space.resident(vpn) {
        if mm.folios.test(pfn, pg::WRITEBACK) {
            return RaIo::default();
        }
        mm.folios.clear(pfn, pg::READAHEAD);
    }
    if large_folios(mm, p) {
        return page_cache_async_ra_7_3(mm, p, f, ra, index, req);
    }
    if mm.cfg.kernel.async_readahead_expected_index_only() {
        let max = ra.ra_pages;
        let expected = ra.start + ra.size - ra.async_size;
        if index == expected {
            ra.start += ra.size;
            ra.size = ra.size.max(get_next_ra_size(ra.size, max));
            ra.async_size = ra.size;
            return ra_submit(mm, p, f, ra);
        }
        return async_context(mm, p, f, ra, index, req);
    }
    ondemand_readahead(mm, p, f, ra, index, req, true)
}

/// Models mm/readahead.c: page_cache_async_ra() (7.3.4) past the marker's own tests, for a
/// read that hit the PG_readahead folio starting at `index` (its first page: the kernel's
/// readahead_index()). The expected index is rounded down to the folio's size; each async
/// readahead raises `ra->order` by 2 and trims the window's end to a multiple of 2^min(order,
/// ffs(max) - 1) pages; page_cache_ra_order() then reads the window.
fn page_cache_async_ra_7_3<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState, index: u64, req: u64) -> RaIo {
    let max = ra.ra_pages;
    let nr = mm.space.resident(f.vpn(index)).map_or(1, |pfn| mm.folios.nr_pages(pfn));
    let expected = (ra.start + ra.size - ra.async_size) & !(nr - 1);
    if index == expected {
        ra.start += ra.size;
        ra.size = ra.size.max(get_next_ra_size(ra.size, max));
    } else {
        let start = page_cache_next_miss(mm, f, index + 1, max);
        if start == 0 || start - index > max {
            return RaIo::default();
        }
        ra.start = start;
        ra.size = get_next_ra_size(start - index + req, max);
    }
    ra.order += 2;
    let align = 1u64 << ra.order.min(max.trailing_zeros());
    let end = ra.start + ra.size;
    let aligned_end = end & !(align - 1);
    if aligned_end > ra.start {
        ra.size -= end - aligned_end;
    }
    ra.async_size = ra.size;
    page_cache_ra_order(mm, p, f, ra)
}

/// Models mm/readahead.c: page_cache_ra_order() (7.3.4, ext4: large folios supported, minimum
/// order 0): the window `ra.start..ra.start + ra.size` in folios of `ra->order`, first capped
/// at [`MAX_PAGECACHE_ORDER`] and ilog2(ra->size) (and stored back), each smaller where its
/// index is not aligned to it (__ffs(index)) or it would reach past the window or the end of
/// the file. The folio holding the marker (start + size - async_size, rounded down to the
/// folio) gets PG_readahead; a window that reaches the end of the file gets none. A slot of
/// a folio's range already cached (-EEXIST) or a failed allocation stops the walk: the pages
/// inserted so far are read, and do_page_cache_ra() reads the rest of the window in order-0
/// pages. Every folio is tested against the shadow in its range.
fn page_cache_ra_order<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState) -> RaIo {
    let start = ra.start;
    let new_order = ra.order.min(MAX_PAGECACHE_ORDER).min(ra.size.max(1).ilog2());
    ra.order = new_order;
    if f.pages == 0 || start >= f.pages {
        return RaIo::default();
    }
    let (limit, mark) =
        if f.pages - 1 > (start + ra.size).saturating_sub(1) { (start + ra.size - 1, start + ra.size - ra.async_size) } else { (f.pages - 1, u64::MAX) };
    let mut inserted = std::mem::take(&mut mm.ra_scratch);
    inserted.clear();
    let mut index = start;
    let mut failed = false;
    while index <= limit {
        let mut order = new_order;
        if index & ((1 << order) - 1) != 0 {
            order = index.trailing_zeros();
        }
        while order > 0 && index + (1 << order) - 1 > limit {
            order -= 1;
        }
        let nr = 1u64 << order;
        if (index..index + nr).any(|i| matches!(mm.space.get(f.vpn(i)), Entry::Resident(_))) {
            failed = true;
            break;
        }
        let vpn = f.vpn(index);
        let added = if order == 0 {
            crate::mm::filemap::filemap_add_folio(mm, p, vpn, false, Gfp::NoRetry)
        } else {
            crate::mm::filemap::filemap_add_large_folio(mm, p, vpn, order, Gfp::NoRetry)
        };
        let Some(pfn) = added else {
            failed = true;
            break;
        };
        if mark != u64::MAX && index == mark & !(nr - 1) {
            mm.folios.set(pfn, pg::READAHEAD);
        }
        mm.folios.set(pfn, pg::LOCKED);
        mm.folios.set_read_done(pfn, u64::MAX);
        inserted.push(pfn);
        index += nr;
    }
    let mut io = read_pages(mm, &inserted);
    mm.ra_scratch = inserted;
    if failed && ra.size > index - start {
        let rest = do_page_cache_ra(mm, p, f, index, ra.size - (index - start), ra.async_size);
        io.pages += rest.pages;
        io.done = io.done.max(rest.done);
    }
    io
}

/// Models mm/readahead.c: read_pages() for folios just inserted: one read request for all
/// their pages, a memstall around its submission when one of them is a workingset refault
/// (ractl->_workingset); the folios stay locked until the read completes.
fn read_pages(mm: &mut Mm, inserted: &[crate::mm::folio::Pfn]) -> RaIo {
    let pages: u64 = inserted.iter().map(|&pfn| mm.folios.nr_pages(pfn)).sum();
    if pages == 0 {
        return RaIo::default();
    }
    submit_read(mm, inserted, pages)
}

/// The request read_pages() submits for `inserted` folios of `pages` pages in all (6.1, 6.12,
/// 7.3): submitting a batch that holds a workingset refault is a memstall
/// (ractl->_workingset, set as page_cache_ra_unbounded() inserts the folios), and the folios
/// stay locked (not uptodate) until the read completes.
#[inline]
fn submit_read(mm: &mut Mm, inserted: &[crate::mm::folio::Pfn], pages: u64) -> RaIo {
    let workingset = inserted.iter().any(|&pfn| mm.folios.test(pfn, pg::WORKINGSET));
    let stall = workingset.then(|| mm.memstall_enter());
    mm.file_read_cpu(pages);
    let done = mm.submit_file(pages, false);
    if let Some(stall) = stall {
        mm.memstall_leave(stall);
    }
    mm.count(crate::mm::vmstat::Ev::PgpgIn, 4 * pages);
    for &pfn in inserted {
        mm.folios.set_read_done(pfn, done);
    }
    RaIo { pages, done }
}

/// Whether readahead makes large folios: 7.3's rules
/// ([`crate::kernel::Kernel::large_folio_readahead`]) for a policy that counts folios by their
/// pages ([`crate::mm::hooks::Caps::large_folios`]).
#[inline]
fn large_folios<P: Policy>(mm: &Mm, p: &P) -> bool {
    mm.cfg.kernel.large_folio_readahead() && p.caps().large_folios
}

/// The "hit a marker without a matching window" case shared by both versions: restart
/// the window after the cached run that follows `index`.
fn async_context<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState, index: u64, req: u64) -> RaIo {
    let max = ra.ra_pages;
    let start = page_cache_next_miss(mm, f, index + 1, max);
    if start == 0 || start - index > max {
        return RaIo::default();
    }
    ra.start = start;
    ra.size = get_next_ra_size(start - index + req, max);
    ra.async_size = ra.size;
    ra_submit(mm, p, f, ra)
}

/// Models mm/readahead.c: ondemand_readahead() (6.1), for sync (`hit_marker` false) and
/// async reads.
fn ondemand_readahead<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState, index: u64, req: u64, hit_marker: bool) -> RaIo {
    let max = ra.ra_pages;
    let initial = |ra: &mut RaState| {
        ra.start = index;
        ra.size = get_init_ra_size(req, max);
        ra.async_size = if ra.size > req { ra.size - req } else { ra.size };
    };
    if index == 0 {
        initial(ra);
        return readit(mm, p, f, ra, index);
    }
    let expected = ra.start + ra.size - ra.async_size;
    if index == expected || index == ra.start + ra.size {
        ra.start += ra.size;
        ra.size = ra.size.max(get_next_ra_size(ra.size, max));
        ra.async_size = ra.size;
        return readit(mm, p, f, ra, index);
    }
    if hit_marker {
        return async_context(mm, p, f, ra, index, req);
    }
    if req > max {
        initial(ra);
        return readit(mm, p, f, ra, index);
    }
    let prev_index = if ra.prev_valid { ra.prev_index } else { u64::MAX };
    if index.wrapping_sub(prev_index) <= 1 {
        initial(ra);
        return readit(mm, p, f, ra, index);
    }
    // try_context_readahead()
    let head = page_cache_prev_miss(mm, f, index - 1, max);
    let mut size = (index as i64 - 1 - head) as u64;
    if size <= req {
        return do_page_cache_ra(mm, p, f, index, req, 0);
    }
    if size >= index {
        size *= 2;
    }
    ra.start = index;
    ra.size = (size + req).min(max);
    ra.async_size = 1;
    readit(mm, p, f, ra, index)
}

/// The `readit:` tail of 6.1's ondemand_readahead(): a sync read that starts a fresh
/// window whose whole size is lookahead gets the next window merged in.
fn readit<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState, index: u64) -> RaIo {
    let max = ra.ra_pages;
    if index == ra.start && ra.size == ra.async_size {
        let add = get_next_ra_size(ra.size, max);
        if ra.size + add <= max {
            ra.async_size = add;
            ra.size += add;
        } else {
            ra.size = max;
            ra.async_size = max >> 1;
        }
    }
    ra_submit(mm, p, f, ra)
}

/// page_cache_ra_order(): read the window. 6.1's and 6.12's ext4 has no large folios
/// (page_cache_ra_order() falls back to do_page_cache_ra()); 7.3's walks the window in folios
/// of `ra->order` ([`page_cache_ra_order`], [`crate::kernel::Kernel::large_folio_readahead`]).
fn ra_submit<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState) -> RaIo {
    if large_folios(mm, p) {
        return page_cache_ra_order(mm, p, f, ra);
    }
    do_page_cache_ra(mm, p, f, ra.start, ra.size, ra.async_size)
}

/// Models mm/readahead.c: force_page_cache_ra(): exactly the requested pages, in 2 MiB chunks.
fn force_page_cache_ra<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &RaState, index: u64, req: u64) -> RaIo {
    let nr = req.min(ra.ra_pages.max(1)).max(1);
    let mut io = RaIo::default();
    let mut i = index;
    let mut left = nr;
    while left > 0 {
        let chunk = left.min(512);
        let r = do_page_cache_ra(mm, p, f, i, chunk, 0);
        io.pages += r.pages;
        io.done = io.done.max(r.done);
        i += chunk;
        left -= chunk;
    }
    io
}

/// Models mm/readahead.c: do_page_cache_ra() + page_cache_ra_unbounded(): allocate and
/// insert every missing page of the window (each tested against its shadow entry), mark the
/// page `nr - lookahead` PG_readahead, and read them with one request.
pub fn do_page_cache_ra<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, index: u64, nr: u64, lookahead: u64) -> RaIo {
    if f.pages == 0 || index >= f.pages {
        return RaIo::default();
    }
    let nr = nr.min(f.pages - index);
    let mut inserted = std::mem::take(&mut mm.ra_scratch);
    inserted.clear();
    for i in 0..nr {
        let vpn = f.vpn(index + i);
        if matches!(mm.space.get(vpn), Entry::Resident(_)) {
            continue;
        }
        let Some(pfn) = crate::mm::filemap::filemap_add_folio(mm, p, vpn, false, Gfp::NoRetry) else { break };
        if lookahead > 0 && i == nr.wrapping_sub(lookahead) {
            mm.folios.set(pfn, pg::READAHEAD);
        }
        // Locked from insertion until the read completes, so reclaim leaves it alone.
        mm.folios.set(pfn, pg::LOCKED);
        mm.folios.set_read_done(pfn, u64::MAX);
        inserted.push(pfn);
    }
    let pages = inserted.len() as u64;
    if pages == 0 {
        mm.ra_scratch = inserted;
        return RaIo::default();
    }
    // Every folio here is order 0: one page each.
    let io = submit_read(mm, &inserted, pages);
    mm.ra_scratch = inserted;
    io
}

/// Models mm/filemap.c: do_sync_mmap_readahead() for a major fault at `index`.
pub fn do_sync_mmap_readahead<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState, index: u64, advice: crate::Advice) -> RaIo {
    use crate::Advice;
    if advice == Advice::Random || ra.ra_pages == 0 {
        return RaIo::default();
    }
    if advice == Advice::Sequential {
        let max = ra.ra_pages;
        return page_cache_sync_ra(mm, p, f, ra, index, max);
    }
    if ra.mmap_miss < MMAP_LOTSAMISS * 10 {
        ra.mmap_miss += 1;
    }
    if ra.mmap_miss > MMAP_LOTSAMISS {
        return RaIo::default();
    }
    // Read around the fault: a window centred on it, a quarter of it lookahead.
    ra.start = index.saturating_sub(ra.ra_pages / 2);
    ra.size = ra.ra_pages;
    ra.async_size = ra.ra_pages / 4;
    // 7.3 reads around in order-0 folios (ra->order = 0); the older kernels have no other.
    ra.order = 0;
    ra_submit(mm, p, f, ra)
}

/// Models mm/filemap.c: do_async_mmap_readahead(): a fault found the page cached. It lowers
/// mmap_miss (a hit), except, on 7.3 ([`Kernel::mmap_miss_lowered_once_per_hit`]), for a
/// locked folio (its read still in flight: another fault's miss) or a VM_SEQ_READ mapping.
///
/// [`Kernel::mmap_miss_lowered_once_per_hit`]: crate::kernel::Kernel::mmap_miss_lowered_once_per_hit
pub fn do_async_mmap_readahead<P: Policy>(mm: &mut Mm, p: &mut P, f: FileRef, ra: &mut RaState, index: u64, advice: crate::Advice) -> RaIo {
    if advice == crate::Advice::Random || ra.ra_pages == 0 {
        return RaIo::default();
    }
    let lower = !mm.cfg.kernel.mmap_miss_lowered_once_per_hit()
        || (advice != crate::Advice::Sequential
            && !mm.space.resident(f.vpn(index)).is_some_and(|pfn| mm.folios.test(pfn, pg::LOCKED) && mm.folios.read_done(pfn) > mm.now()));
    if lower {
        ra.mmap_miss = ra.mmap_miss.saturating_sub(1);
    }
    let marked = mm.space.resident(f.vpn(index)).is_some_and(|pfn| mm.folios.test(pfn, pg::READAHEAD));
    if marked {
        let max = ra.ra_pages;
        return page_cache_async_ra(mm, p, f, ra, index, max);
    }
    RaIo::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_sizes_follow_the_kernel_table() {
        // read_ahead_kb = 128 (max 32 pages), as mm/readahead.c: get_init_ra_size() and
        // get_next_ra_size() compute it (6.1.192, 6.12.95): init(2) = 4 and init(4) = 8, not
        // 8 and 16 (the source doubles a small request only once).
        let init: Vec<u64> = [1, 2, 4, 8, 9, 32].iter().map(|&r| get_init_ra_size(r, 32)).collect();
        assert_eq!(init, [4, 4, 8, 16, 32, 32]);
        let next: Vec<u64> = [1, 4, 8, 16, 32].iter().map(|&c| get_next_ra_size(c, 32)).collect();
        assert_eq!(next, [4, 8, 16, 32, 32]);
    }

    #[test]
    fn page_cache_next_miss_past_a_cached_range_is_its_last_index_on_6_1_and_one_beyond_on_6_12() {
        use crate::policy::classic::Classic;
        use crate::sim::scenario::Scenario;
        use pagelab_workload::{Access, Advice, Op};
        for (kernel, past) in [("6.1", 0), ("6.12", 1)] {
            let text = format!(
                "[machine]\nmemory = \"64M\"\nkernel = \"{kernel}\"\n[[workload]]\nname = \"f\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"1M\"\nops = 0\n"
            );
            let s = Scenario::parse(&text, "t.toml", "t", &[]).unwrap();
            let mut m = crate::sim::Machine::new(&s, |mm| Classic::new(mm.memcgs.cg.len())).unwrap();
            // Random advice: no readahead, so exactly pages 0..64 are cached.
            for page in 0..64 {
                let op = Op {
                    object: 0,
                    page,
                    npages: 1,
                    write: false,
                    access: Access::Buffered,
                    advice: Advice::Random,
                    fill: false,
                    think_ns: 0,
                    due: None,
                    more: false,
                };
                m.apply(0, op);
            }
            let (base, pages) = m.object(0, 0);
            let f = FileRef { base, pages };
            assert_eq!(page_cache_next_miss(&m.mm, f, 8, 32), 8 + 31 + past, "{kernel}: no gap in 8..40");
            assert_eq!(page_cache_next_miss(&m.mm, f, 50, 32), 64, "{kernel}: the first gap");
        }
    }
}
