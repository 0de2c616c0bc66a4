//! `struct folio`: one compact record per page frame, and the LRU lists that hold them
//! (include/linux/list.h as include/linux/mm_inline.h uses it).
//!
//! Most folios are order 0, one frame. A large folio (7.3's page cache,
//! [`crate::kernel::Kernel::large_folio_readahead`]) is its head frame, which holds the flags
//! and the order ([`pg::ORDER_MASK`]) and is what lists, counters and the address space name,
//! plus 2^order − 1 tail frames ([`pg::TAIL`]) that name the head. The frames need not be
//! contiguous: pagelab takes them one at a time from the free lists (fragmentation and
//! compaction are not modeled for large folios).
//!
//! Page frames are numbered densely (`Pfn`). A list keeps the kernel's semantics — add at the
//! head, add at the tail, delete anywhere, reclaim from the tail — but stores its members in a
//! ring of frame numbers with tombstones for deletions, not in pointers threaded through the
//! folios: a scan reads the next frames' numbers from contiguous memory and can prefetch
//! several folios ahead (Kairui Song's lru_gen scan prefetch (2024), made deep), and a deletion touches no neighbour.

use std::collections::VecDeque;

/// A page frame number: an index into [`Folios`].
pub type Pfn = u32;
/// The end of a list, or "no page".
pub const NIL: u32 = u32::MAX;

/// Folio flag bits (include/linux/page-flags.h), plus the MGLRU generation and refs fields
/// that the kernel keeps in `folio->flags` too.
pub mod pg {
    pub const LRU: u32 = 1 << 0;
    pub const ACTIVE: u32 = 1 << 1;
    pub const REFERENCED: u32 = 1 << 2;
    pub const WORKINGSET: u32 = 1 << 3;
    /// Rotate to the inactive tail once writeback ends.
    pub const RECLAIM: u32 = 1 << 4;
    pub const DIRTY: u32 = 1 << 5;
    pub const WRITEBACK: u32 = 1 << 6;
    /// Anonymous (or shmem) memory: lives on the anon LRU, reclaimed by swapping.
    pub const SWAPBACKED: u32 = 1 << 7;
    pub const SWAPCACHE: u32 = 1 << 8;
    /// Mapped by a page table (an mmap'd file page or anonymous memory).
    pub const MAPPED: u32 = 1 << 9;
    /// The accessed bit of the mapping PTE: set by loads and stores, seen only by reclaim.
    pub const YOUNG: u32 = 1 << 10;
    pub const READAHEAD: u32 = 1 << 11;
    pub const UNEVICTABLE: u32 = 1 << 12;
    /// Mapped only through VMAs without recency (VM_SEQ_READ/VM_RAND_READ).
    pub const NORECENCY: u32 = 1 << 13;
    /// Waiting in the per-CPU lru_add batch: allocated but not yet on an LRU list.
    pub const IN_LRU_ADD: u32 = 1 << 14;
    /// Taken off its LRU list by reclaim (isolate_lru_folios/isolate_folio).
    pub const ISOLATED: u32 = 1 << 15;
    /// MGLRU generation + 1 (0 = not on an MGLRU list): LRU_GEN_MASK, 3 bits.
    pub const GEN_SHIFT: u32 = 16;
    pub const GEN_MASK: u32 = 0b111 << GEN_SHIFT;
    /// MGLRU refs beyond PG_referenced/PG_workingset: LRU_REFS_MASK, 2 bits.
    pub const REFS_SHIFT: u32 = 19;
    pub const REFS_MASK: u32 = 0b11 << REFS_SHIFT;
    /// PG_locked for a read in flight: the page is in the cache but not yet uptodate.
    pub const LOCKED: u32 = 1 << 21;
    /// A reference held by the operation in progress (a read's folio batch, a fault's page):
    /// reclaim may isolate the folio but cannot free it (__remove_mapping()'s refcount freeze
    /// fails).
    pub const PINNED: u32 = 1 << 22;
    /// Of the mappings without recency, a sequential one (VM_SEQ_READ: MADV_SEQUENTIAL);
    /// NORECENCY without it is a random one (VM_RAND_READ). 6.1's folio_referenced_one()
    /// tells them apart.
    pub const SEQ_READ: u32 = 1 << 23;
    /// PG_dropbehind (include/linux/page-flags.h, 6.14+): the folio is not kept after the
    /// read that copies it (a seam policy's `admit_folio` said no).
    pub const DROPBEHIND: u32 = 1 << 24;
    /// The third bit of MGLRU-FG's access count (`[mglru] fg`; the LRU_REFS field holds its
    /// two low bits: [`crate::mm::swap::fg_refs`]). Unused otherwise.
    pub const REFS_HI: u32 = 1 << 30;
    /// A tail frame of a large folio (PageTail): not a folio of its own. Its `pos` names the
    /// head frame, its `swap` the next tail frame ([`NIL`](super::NIL) after the last), its
    /// `vpn` the page it stands for; the head's `swap` names the first tail.
    pub const TAIL: u32 = 1 << 25;
    /// folio_order() of a head frame (0 for an order-0 folio): 4 bits, orders up to
    /// MAX_PAGECACHE_ORDER (9 with 4 KiB pages).
    pub const ORDER_SHIFT: u32 = 26;
    pub const ORDER_MASK: u32 = 0b1111 << ORDER_SHIFT;
}

/// One page frame: 20 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Folio {
    pub flags: u32,
    /// Where the folio sits in its list's ring (meaningful while it is on a list).
    pub pos: u32,
    /// The virtual page (file index or anon address) this frame holds.
    pub vpn: u32,
    /// The swap slot of a swap-cache page.
    pub swap: u32,
    /// The memcg the page is charged to.
    pub memcg: u16,
    /// Which of its lruvec's lists the folio sits on, for policies with several lists a
    /// folio's flags do not name (MGLRU: generation and type, plus one; 0 = none).
    pub lru_slot: u16,
}

impl Folio {
    const FREE: Folio = Folio { flags: 0, pos: NIL, vpn: NIL, swap: NIL, memcg: 0, lru_slot: 0 };

    #[inline]
    pub fn test(&self, f: u32) -> bool {
        self.flags & f != 0
    }
    #[inline]
    pub fn is_file_lru(&self) -> bool {
        self.flags & pg::SWAPBACKED == 0
    }
    /// folio_order(): 0 but for a large folio's head.
    #[inline(always)]
    pub fn order(&self) -> u32 {
        (self.flags & pg::ORDER_MASK) >> pg::ORDER_SHIFT
    }
    /// folio_nr_pages(): the pages the folio spans (1 << its order).
    #[inline(always)]
    pub fn nr_pages(&self) -> u64 {
        1 << self.order()
    }
    /// The LRU type: 0 anon, 1 file (`folio_is_file_lru`).
    #[inline]
    pub fn lru_type(&self) -> usize {
        self.is_file_lru() as usize
    }
}

/// All page frames of the machine and the buddy allocator's free lists, one per zone (at
/// most [`MAX_ZONES`]). Zone `z` holds the frames from the start of zone `z` (`zone_start[z]`,
/// 0 for the first) up to the next zone's start (mm/mmzone.h: a zone is a range of page frame
/// numbers).
#[derive(Clone, Debug)]
pub struct Folios {
    /// The frames handed out so far and every frame below them: the table grows as the
    /// allocator first hands out a frame past its end, so a machine's declared memory costs
    /// host memory only where it is used (every frame past the end is free).
    pub f: Vec<Folio>,
    /// When the read of a PG_locked frame completes: written as a readahead inserts a frame,
    /// read while the frame is PG_locked. Chunked (1,024 frames a chunk, allocated on its
    /// first write) and grown as frames are first written, so it costs what the frames read
    /// into cost, not the frames below them or the machine's declared memory.
    read_done: pagelab_host::sparse::Sparse<u64>,
    /// Why the tables could not grow to a frame the allocator was about to hand out (the
    /// host could not give the memory); the run ends with this error.
    failure: Option<String>,
    /// The most frames the tables may cover: all of them but in tests, which stand for a
    /// host too small for the run this way.
    host_limit: u32,
    /// The machine's frames, handed out or not.
    frames: u32,
    /// Per zone, the frames freed since boot, the next to be handed out last.
    free: Vec<Vec<Pfn>>,
    /// Per zone, the top of the free stack held apart from `free` (above it: the next to be
    /// handed out last): on a machine of several CPUs, the running CPU's per-CPU list, so that
    /// a change of CPU swaps the list rather than moving its frames
    /// ([`Folios::split_top`], [`Folios::top_mut`]). The free stack is `fresh`, `free` and
    /// `top`, in that order, whatever the split: every operation here sees that one stack.
    /// Always empty on a machine of one CPU.
    top: Vec<VecDeque<Pfn>>,
    /// Frames [`Folios::split_top`] moved between `free` and `top`, since boot.
    split_moves: u64,
    /// Per zone, the frames never handed out, `lo..hi`: below every frame of `free` in the
    /// order frames are handed out, lowest first (the list the zone began with, kept as a
    /// range so that it costs nothing per frame).
    fresh: Vec<(Pfn, Pfn)>,
    /// The first frame of zones 1 and 2, `Pfn::MAX` where there is no such zone: a frame's
    /// zone is then the number of these it is at or above, with no loop.
    zone_start: [Pfn; MAX_ZONES - 1],
    /// The first frame of the highest zone of node 0 (0 with one zone).
    top_start: Pfn,
    /// The first frame of node 1, `Pfn::MAX` on a machine of one node: node 0's zones are
    /// those `zone_start` tells apart, every frame from here on is another node's.
    remote_start: Pfn,
    /// The zones of node 0; each node after it has one zone, the zones after node 0's in node
    /// order.
    node0_zones: usize,
    /// The first frame of each zone, lowest first (all nodes' zones).
    starts: Vec<Pfn>,
}

/// The most zones a machine has (ZONE_DMA, ZONE_DMA32, ZONE_NORMAL).
pub const MAX_ZONES: usize = 3;

impl Folios {
    /// `frames` page frames in one zone, all free; the lowest numbers are handed out first.
    /// The whole table at once: the tests that build one address frames directly.
    pub fn new(frames: u32) -> Self {
        let mut f = Self::try_zoned(&[frames]).expect("a test machine's frames fit");
        if frames > 0 {
            assert!(f.cover(frames - 1), "a test machine's frames fit");
        }
        f
    }

    /// Zones of `sizes` page frames each (lowest zone first), all free, or an error if the
    /// host cannot hold the frames. Each zone hands out its lowest numbers first.
    pub fn try_zoned(sizes: &[u32]) -> Result<Self, String> {
        Self::try_nodes(sizes, &[])
    }

    /// The frames of a machine of several nodes: node 0's zones of `node0` frames each, then
    /// each further node's one zone of `others` frames each, in pfn order (a node is a range of
    /// page frame numbers, `node_start_pfn`). Each zone hands out its lowest numbers first.
    pub fn try_nodes(node0: &[u32], others: &[u32]) -> Result<Self, String> {
        let sizes: Vec<u32> = node0.iter().chain(others).copied().collect();
        let frames: u32 = sizes.iter().try_fold(0u32, |a, &n| a.checked_add(n)).ok_or("more page frames than 2^32: the machine is too large")?;
        assert!(!node0.is_empty() && node0.len() <= MAX_ZONES, "1 to {MAX_ZONES} zones on node 0");
        let (mut fresh, mut zone_start, mut start, mut starts) = (Vec::new(), [Pfn::MAX; MAX_ZONES - 1], 0, Vec::new());
        let mut remote_start = Pfn::MAX;
        for (z, &n) in sizes.iter().enumerate() {
            if z > 0 && z < node0.len() {
                zone_start[z - 1] = start;
            }
            if z == node0.len() {
                remote_start = start;
            }
            starts.push(start);
            fresh.push((start, start + n));
            start += n;
        }
        let top_start = zone_start.iter().rev().copied().find(|&z| z != Pfn::MAX).unwrap_or(0);
        Ok(Folios {
            f: Vec::new(),
            read_done: pagelab_host::sparse::Sparse::new(0, 0),
            failure: None,
            host_limit: u32::MAX,
            frames,
            free: vec![Vec::new(); sizes.len()],
            top: vec![VecDeque::new(); sizes.len()],
            split_moves: 0,
            fresh,
            zone_start,
            top_start,
            remote_start,
            node0_zones: node0.len(),
            starts,
        })
    }

    /// Free frames in all zones.
    pub fn nr_free(&self) -> u64 {
        (0..self.free.len()).map(|z| self.nr_free_in(z)).sum()
    }

    /// Free frames in zone `z`.
    #[inline]
    pub fn nr_free_in(&self, z: usize) -> u64 {
        let (lo, hi) = self.fresh[z];
        self.free[z].len() as u64 + self.top[z].len() as u64 + (hi - lo) as u64
    }

    /// The zone a frame belongs to (page_zone()).
    #[inline]
    pub fn zone_of(&self, pfn: Pfn) -> usize {
        if pfn >= self.remote_start {
            return self.remote_zone_of(pfn);
        }
        (pfn >= self.zone_start[0]) as usize + (pfn >= self.zone_start[1]) as usize
    }

    /// The zone of a frame of a node after node 0 (each has one zone).
    #[cold]
    fn remote_zone_of(&self, pfn: Pfn) -> usize {
        self.starts.partition_point(|&s| s <= pfn) - 1
    }

    /// The node a frame belongs to (page_to_nid(): `folio_nid()`), on a machine whose nodes
    /// after node 0 have one zone each.
    #[inline]
    pub fn node_of(&self, pfn: Pfn) -> usize {
        if pfn < self.remote_start {
            0
        } else {
            self.remote_zone_of(pfn) + 1 - self.node0_zones
        }
    }

    /// The zones of the machine, all nodes'.
    pub fn nr_zones(&self) -> usize {
        self.fresh.len()
    }

    /// Whether a frame belongs to a zone below its node's highest (one comparison: the
    /// classic LRU counts those per zone for reclaim restricted to lower zones; the nodes
    /// after node 0 have one zone).
    #[inline(always)]
    pub fn below_top_zone(&self, pfn: Pfn) -> bool {
        pfn < self.top_start
    }

    /// Bytes of the frame table, the read completions and the free lists.
    pub fn state_bytes(&self) -> u64 {
        let lists = self.free.iter().map(|l| l.capacity() * 4).sum::<usize>() + self.top.iter().map(|l| l.capacity() * 4).sum::<usize>();
        (self.f.capacity() * std::mem::size_of::<Folio>() + lists) as u64 + self.read_done.state_bytes()
    }

    /// When the read of frame `pfn` completes (0 if it was never read into).
    #[inline]
    pub fn read_done(&self, pfn: Pfn) -> u64 {
        let i = pfn as usize;
        if i < self.read_done.len() {
            self.read_done.get(i)
        } else {
            0
        }
    }

    /// Records when the read of frame `pfn` completes. The index grows (doubling) to cover
    /// it; its chunk gets memory on its first write.
    #[inline]
    pub fn set_read_done(&mut self, pfn: Pfn, done: u64) {
        let i = pfn as usize;
        if i >= self.read_done.len() {
            self.read_done.grow((i + 1).max(self.read_done.len() * 2).min(self.frames as usize));
        }
        self.read_done.set(i, done);
    }

    pub fn frames(&self) -> u64 {
        self.frames as u64
    }

    /// Takes a free frame of zone `z` (the buddy allocator's hot path).
    #[inline]
    pub fn alloc_from(&mut self, z: usize) -> Option<Pfn> {
        if let Some(pfn) = self.top[z].pop_back() {
            return Some(pfn);
        }
        match self.free[z].pop() {
            Some(pfn) => Some(pfn),
            None => self.alloc_fresh(z),
        }
    }

    /// A never-used frame of zone `z`, the lowest; none if the zone has none left or the host
    /// cannot hold the tables for it ([`Folios::failure`] then says why).
    #[inline]
    fn alloc_fresh(&mut self, z: usize) -> Option<Pfn> {
        let (lo, hi) = self.fresh[z];
        if lo >= hi || (lo as usize >= self.f.len() && !self.cover(lo)) {
            return None;
        }
        self.fresh[z].0 += 1;
        Some(lo)
    }

    /// Grows the frame table to hold `pfn`, the new frames free. Its length at least doubles,
    /// so the calls (each of which advises the table for huge pages, a system call) are
    /// logarithmic in the frames handed out, not one per frame. Memory the host cannot give (an allocation that fails, or more
    /// than it has available) leaves the tables as they were, records why in
    /// [`Folios::failure`] and returns false, where Rust's allocator would abort.
    #[cold]
    fn cover(&mut self, pfn: Pfn) -> bool {
        let need = pfn as usize + 1;
        let want = need.max(self.f.len() * 2).min(self.frames as usize);
        // Doubled, or failing that just this frame; the doubled size's error is the telling one.
        let grown = self.try_cover(want).or_else(|e| self.try_cover(need).map_err(|_| e));
        if let Err(e) = grown {
            let (frames, mib) = (self.f.len(), (self.f.len() * std::mem::size_of::<Folio>()) >> 20);
            self.failure.get_or_insert(format!(
                "the run touches more page frames than this host can hold: {e} (the model holds {frames} frames of the machine in {mib} MiB, {} bytes a frame)",
                std::mem::size_of::<Folio>()
            ));
            return false;
        }
        true
    }

    /// [`Folios::cover`]'s growth to `n` frames, or why the host cannot hold them.
    fn try_cover(&mut self, n: usize) -> Result<(), String> {
        if n > self.host_limit as usize {
            return Err(format!("the frame table: {n} frames are past this host's limit of {}", self.host_limit));
        }
        pagelab_host::hugevec::try_grow(&mut self.f, n, Folio::FREE, "the frame table")
    }

    /// Why the tables could not grow to a frame the allocator was to hand out, if they could
    /// not: the run must end with this error.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Stands for a host that can hold the tables of only `frames` frames (tests).
    #[doc(hidden)]
    pub fn limit_host_frames(&mut self, frames: u32) {
        self.host_limit = frames;
    }

    /// Puts zone `z`'s never-used frames on its free list as the list it began with held
    /// them (below the freed ones), for the callers that need the list itself.
    fn list_fresh(&mut self, z: usize) {
        self.settle_top(z);
        let (lo, hi) = std::mem::take(&mut self.fresh[z]);
        if lo < hi {
            // Walks of a listed zone's free frames read their table entries.
            if hi as usize > self.f.len() && !self.cover(hi - 1) {
                self.fresh[z] = (lo, hi);
                return;
            }
            let freed = std::mem::take(&mut self.free[z]);
            let list = &mut self.free[z];
            list.reserve_exact((hi - lo) as usize + freed.len());
            list.extend((lo..hi).rev());
            list.extend(freed);
        }
    }

    /// Lists every zone's never-used frames (boot-time setup of non-movable pageblocks, whose
    /// free-list walks need the frames one by one).
    pub fn list_all_fresh(&mut self) {
        for z in 0..self.fresh.len() {
            self.list_fresh(z);
        }
    }

    /// Takes the free frames `lo..hi` of zone `z` off its free list (boot-time layout of the
    /// pageblocks that are not movable); returns how many were free.
    pub fn take_range(&mut self, z: usize, lo: Pfn, hi: Pfn) -> u64 {
        self.list_fresh(z);
        let before = self.free[z].len();
        self.free[z].retain(|&p| p < lo || p >= hi);
        (before - self.free[z].len()) as u64
    }

    /// Clears a frame's state without putting it on a free list, for frames whose free list
    /// is elsewhere (a non-movable pageblock's); returns its zone.
    #[inline]
    pub fn release(&mut self, pfn: Pfn) -> usize {
        self.f[pfn as usize] = Folio::FREE;
        self.zone_of(pfn)
    }

    /// The frames of zone `z`: `start..end`.
    pub fn zone_span(&self, z: usize) -> (Pfn, Pfn) {
        (self.starts[z], self.starts.get(z + 1).copied().unwrap_or(self.frames))
    }

    /// Zone `z`'s free frames, the next to be handed out last ([`Folios::list_all_fresh`]
    /// must have listed the never-used ones).
    pub fn free_list(&self, z: usize) -> impl Iterator<Item = Pfn> + '_ {
        debug_assert!(self.fresh[z].0 == self.fresh[z].1, "never-used frames not listed");
        self.free[z].iter().chain(&self.top[z]).copied()
    }

    /// Takes the frames `gone` off zone `z`'s free list (free pages that compaction moved into
    /// a non-movable pageblock, whose own lists hold them now).
    pub fn unlist_free(&mut self, z: usize, gone: &std::collections::HashSet<Pfn>) {
        self.list_fresh(z);
        self.free[z].retain(|p| !gone.contains(p));
    }

    /// Puts free frames on zone `z`'s free list (taken from another free list: a fallback to
    /// a non-movable pageblock).
    pub fn push_free(&mut self, z: usize, frames: &[Pfn]) {
        self.list_fresh(z);
        self.free[z].extend_from_slice(frames);
    }

    /// Puts free frames at the bottom of zone `z`'s free stack, below every listed frame (the
    /// last handed out): rmqueue_bulk() lists a refill's fallback pages after the movable ones.
    pub fn push_bottom(&mut self, z: usize, frames: &[Pfn]) {
        self.list_fresh(z);
        self.free[z].splice(0..0, frames.iter().copied());
    }

    /// Takes off zone `z`'s free stack the frames among the `n` just below its top `keep` for
    /// which `off` holds, and returns them (frames that left a per-CPU list for the free lists
    /// of another migratetype).
    pub fn take_below_top(&mut self, z: usize, keep: usize, n: usize, off: impl Fn(Pfn) -> bool) -> Vec<Pfn> {
        self.list_fresh(z);
        let list = &mut self.free[z];
        let end = list.len().saturating_sub(keep);
        let window = end.saturating_sub(n)..end;
        if !list[window.clone()].iter().any(|&p| off(p)) {
            return Vec::new();
        }
        let (gone, stay): (Vec<Pfn>, Vec<Pfn>) = list[window.clone()].iter().partition(|&&p| off(p));
        list.splice(window, stay);
        gone
    }

    /// Takes the `n` frames of zone `z` that the allocator would hand out next (the top of its
    /// free stack: the listed frames from the last, then the never-used ones from the lowest),
    /// into `into` (emptied first) in stack order (the next to be handed out last). Fewer when
    /// the zone has fewer, or the host cannot hold the tables for a never-used one.
    /// [`Folios::push_top`] puts them back as they were. Only tests park frames this way;
    /// a change of CPU splits the top ([`Folios::split_top`]) and swaps it instead.
    #[cfg(test)]
    pub fn take_top(&mut self, z: usize, n: usize, into: &mut Vec<Pfn>) {
        self.settle_top(z);
        into.clear();
        let listed = self.free[z].len().min(n);
        while into.len() < n - listed {
            match self.alloc_fresh(z) {
                Some(pfn) => into.push(pfn),
                None => break,
            }
        }
        into.reverse();
        let at = self.free[z].len() - listed;
        into.extend_from_slice(&self.free[z][at..]);
        self.free[z].truncate(at);
    }

    /// Puts `frames` (in stack order) on top of zone `z`'s free stack, below its top `keep`
    /// listed frames (those of the running CPU's per-CPU list, which stay the next handed out).
    pub fn push_top(&mut self, z: usize, keep: usize, frames: &[Pfn]) {
        // Those `keep` frames may be all in `top`, in part, or none (below it, in `free`).
        let held = self.top[z].len();
        if keep >= held || keep == 0 {
            if keep == 0 && held > 0 {
                self.top[z].extend(frames.iter().copied());
                return;
            }
            return self.push_below(z, keep - held, frames);
        }
        // Below `keep` of the held frames: the rest of them go down to `free` first.
        self.lower_top(z, held - keep);
        self.free[z].extend_from_slice(frames);
    }

    /// [`Folios::push_top`] into `free`, below its top `keep` frames.
    fn push_below(&mut self, z: usize, keep: usize, frames: &[Pfn]) {
        let list = &mut self.free[z];
        if keep == 0 {
            list.extend_from_slice(frames);
            return;
        }
        let at = list.len().saturating_sub(keep);
        list.splice(at..at, frames.iter().copied());
    }

    /// Takes a free frame of node 0's highest zone that has one (boot-time allocations, tests).
    pub fn alloc(&mut self) -> Option<Pfn> {
        (0..self.node0_zones).rev().find_map(|z| self.alloc_from(z))
    }

    /// Returns a frame to its zone's free list, clearing its state; returns the zone.
    #[inline]
    pub fn free(&mut self, pfn: Pfn) -> usize {
        self.f[pfn as usize] = Folio::FREE;
        let z = self.zone_of(pfn);
        let top = &mut self.top[z];
        if top.is_empty() {
            self.free[z].push(pfn);
        } else {
            top.push_back(pfn);
        }
        z
    }

    /// Moves the `n` lowest frames held in zone `z`'s `top` down onto `free` (the stack is
    /// unchanged).
    fn lower_top(&mut self, z: usize, n: usize) {
        self.free[z].extend(self.top[z].drain(..n));
    }

    /// Moves every frame held in zone `z`'s `top` down onto `free`, for the operations that
    /// read or edit `free` as the whole stack (the stack is unchanged).
    #[inline]
    fn settle_top(&mut self, z: usize) {
        let n = self.top[z].len();
        if n > 0 {
            self.lower_top(z, n);
        }
    }

    /// Makes zone `z`'s `top` hold exactly the top `n` frames of its free stack (fewer when
    /// the zone has fewer, or the host cannot hold the tables for a never-used one): frames
    /// go down to `free` or come up from it (and from the never-used ones, as
    /// [`Folios::take_top`] takes them), so the cost is the difference, not `n`. The stack is
    /// unchanged. Returns how many frames moved.
    pub fn split_top(&mut self, z: usize, n: usize) -> usize {
        let held = self.top[z].len();
        if held > n {
            self.lower_top(z, held - n);
            self.split_moves += (held - n) as u64;
            return held - n;
        }
        if held == n {
            return 0;
        }
        let want = n - held;
        let listed = self.free[z].len().min(want);
        let at = self.free[z].len() - listed;
        let top = &mut self.top[z];
        for &pfn in self.free[z][at..].iter().rev() {
            top.push_front(pfn);
        }
        self.free[z].truncate(at);
        // Then, below all the listed frames, the never-used ones: they leave the stack's
        // bottom end lowest first, so each one taken lies below those taken before it.
        for _ in 0..want - listed {
            match self.alloc_fresh(z) {
                Some(pfn) => self.top[z].push_front(pfn),
                None => break,
            }
        }
        let moved = self.top[z].len() - held;
        self.split_moves += moved as u64;
        moved
    }

    /// Frames [`Folios::split_top`] has moved since boot: what the changes of CPU cost in
    /// frames (the difference between a list's count and its held frames, not the lists).
    pub fn split_moves(&self) -> u64 {
        self.split_moves
    }

    /// Zone `z`'s `top`, to swap with a parked per-CPU list (after [`Folios::split_top`]).
    pub fn top_mut(&mut self, z: usize) -> &mut VecDeque<Pfn> {
        &mut self.top[z]
    }

    /// folio_nr_pages() of the folio whose head is `pfn`.
    #[inline(always)]
    pub fn nr_pages(&self, pfn: Pfn) -> u64 {
        self.f[pfn as usize].nr_pages()
    }

    #[inline]
    pub fn get(&self, pfn: Pfn) -> &Folio {
        &self.f[pfn as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, pfn: Pfn) -> &mut Folio {
        &mut self.f[pfn as usize]
    }
    #[inline]
    pub fn test(&self, pfn: Pfn, flag: u32) -> bool {
        self.f[pfn as usize].flags & flag != 0
    }
    #[inline]
    pub fn set(&mut self, pfn: Pfn, flag: u32) {
        self.f[pfn as usize].flags |= flag;
    }
    #[inline]
    pub fn clear(&mut self, pfn: Pfn, flag: u32) {
        self.f[pfn as usize].flags &= !flag;
    }
    /// Clears `flag` and says whether it was set (`folio_test_clear_*`).
    #[inline]
    pub fn test_clear(&mut self, pfn: Pfn, flag: u32) -> bool {
        let f = &mut self.f[pfn as usize].flags;
        let was = *f & flag != 0;
        *f &= !flag;
        was
    }

    /// Models include/linux/list.h: list_add(), at the head (most recently added end).
    #[inline]
    pub fn list_add(&mut self, list: &mut List, pfn: Pfn) {
        let pos = list.push_front(pfn);
        list.len += 1;
        self.f[pfn as usize].pos = pos;
    }

    /// Models include/linux/list.h: list_add_tail(), at the tail (the end reclaim takes from).
    #[inline]
    pub fn list_add_tail(&mut self, list: &mut List, pfn: Pfn) {
        let pos = list.push_back(pfn);
        list.len += 1;
        self.f[pfn as usize].pos = pos;
    }

    /// Models include/linux/list.h: list_del().
    #[inline]
    pub fn list_del(&mut self, list: &mut List, pfn: Pfn) {
        let pos = self.f[pfn as usize].pos;
        let idx = pos.wrapping_sub(list.base);
        debug_assert!(idx < list.n && list.slot(pos) == pfn, "pfn {pfn} is not where its list says");
        if idx + 1 == list.n {
            // The tail (MGLRU's isolation takes folios there): a pop leaves the ring as the
            // tombstone and its trim would, the head being a member or the list empty.
            list.n -= 1;
            list.trim_back();
        } else {
            list.set_slot(pos, TOMBSTONE);
            list.trim();
        }
        list.len -= 1;
        self.f[pfn as usize].pos = NIL;
        if list.n as u64 > 2 * list.len + 64 {
            self.compact(list);
        }
    }

    /// list_del() of the list's tail (reclaim's isolation): a pop, no tombstone.
    #[inline]
    pub fn list_del_tail(&mut self, list: &mut List) -> Option<Pfn> {
        // Trimming keeps the last slot a member.
        let pfn = list.pop_back()?;
        list.len -= 1;
        self.f[pfn as usize].pos = NIL;
        list.trim_back();
        Some(pfn)
    }

    /// Rebuilds a list's ring without tombstones (amortised over the deletions that made them).
    fn compact(&mut self, list: &mut List) {
        let members: Vec<Pfn> = list.iter().filter(|&p| p != TOMBSTONE).collect();
        list.base = 0;
        list.n = 0;
        for (i, &p) in members.iter().enumerate() {
            list.push_back(p);
            self.f[p as usize].pos = i as u32;
        }
    }

    /// Hints the CPU to fetch a folio reclaim will handle soon.
    #[inline(always)]
    pub fn prefetch(&self, pfn: Pfn) {
        if let Some(f) = self.f.get(pfn as usize) {
            pagelab_host::prefetch(f);
        }
    }

    /// Prefetches the folio `ahead` places from the tail of `list` (the one a tail-first
    /// scan reaches `ahead` steps from now; tombstones and the list's end prefetch nothing).
    #[inline(always)]
    pub fn prefetch_from_tail(&self, list: &List, ahead: usize) {
        if ahead < list.n as usize {
            self.prefetch(list.slot(list.base.wrapping_add(list.n - 1 - ahead as u32)));
        }
    }

    /// Walks a list from head to tail (for checks and reports, not hot paths).
    pub fn iter_list<'a>(&'a self, list: &'a List) -> impl Iterator<Item = Pfn> + 'a {
        list.iter().filter(|&p| p != TOMBSTONE)
    }
}

/// A slot of a deleted member.
const TOMBSTONE: u32 = NIL;

/// An LRU list: the most recently added folio at the head, the oldest at the tail.
///
/// Its members, head first, live in a ring whose size is a power of two: the slot of
/// position `p` (a folio's `pos`; positions wrap around, only differences matter) is
/// `p & (ring.len() - 1)`, so a deletion finds its slot from the position alone.
#[derive(Clone, Debug)]
pub struct List {
    /// The ring, whose length is always a power of two (one slot at first); deleted members
    /// leave tombstones until trimmed or compacted.
    ring: Vec<Pfn>,
    /// The position of the head slot.
    base: u32,
    /// Slots in use, tombstones included, from `base` on.
    n: u32,
    pub len: u64,
}

impl Default for List {
    fn default() -> List {
        List { ring: vec![TOMBSTONE], base: 0, n: 0, len: 0 }
    }
}

impl PartialEq for List {
    fn eq(&self, other: &List) -> bool {
        (self.base, self.n, self.len) == (other.base, other.n, other.len) && self.iter().eq(other.iter())
    }
}

impl Eq for List {}

impl List {
    /// The slot of position `pos`.
    #[inline(always)]
    fn slot(&self, pos: u32) -> Pfn {
        debug_assert!(self.ring.len().is_power_of_two());
        // SAFETY: the ring's length is a power of two, at least 1 (`default`, `grow`), so
        // the masked index is below it.
        unsafe { *self.ring.get_unchecked(pos as usize & (self.ring.len() - 1)) }
    }

    #[inline(always)]
    fn set_slot(&mut self, pos: u32, pfn: Pfn) {
        debug_assert!(self.ring.len().is_power_of_two());
        let mask = self.ring.len() - 1;
        // SAFETY: as for `slot`.
        unsafe { *self.ring.get_unchecked_mut(pos as usize & mask) = pfn }
    }

    /// Adds at the head; returns the new slot's position.
    #[inline]
    fn push_front(&mut self, pfn: Pfn) -> u32 {
        if self.n as usize == self.ring.len() {
            self.grow();
        }
        self.base = self.base.wrapping_sub(1);
        self.n += 1;
        self.set_slot(self.base, pfn);
        self.base
    }

    /// Adds at the tail; returns the new slot's position.
    #[inline]
    fn push_back(&mut self, pfn: Pfn) -> u32 {
        if self.n as usize == self.ring.len() {
            self.grow();
        }
        let pos = self.base.wrapping_add(self.n);
        self.n += 1;
        self.set_slot(pos, pfn);
        pos
    }

    #[inline]
    fn pop_back(&mut self) -> Option<Pfn> {
        if self.n == 0 {
            return None;
        }
        self.n -= 1;
        Some(self.slot(self.base.wrapping_add(self.n)))
    }

    /// Doubles the ring, each slot moving to where its position now maps.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let size = (self.ring.len() * 2).max(16);
        assert!(size <= 1 << 32, "an LRU list of more than 2^32 slots");
        let mut ring = vec![TOMBSTONE; size];
        for p in self.positions() {
            ring[p as usize & (size - 1)] = self.slot(p);
        }
        self.ring = ring;
    }

    fn positions(&self) -> impl Iterator<Item = u32> {
        let base = self.base;
        (0..self.n).map(move |i| base.wrapping_add(i))
    }

    /// The slots head first, tombstones included.
    fn iter(&self) -> impl Iterator<Item = Pfn> + '_ {
        self.positions().map(|p| self.slot(p))
    }

    /// Drops tombstones at the tail, so the tail is a member.
    #[inline]
    fn trim_back(&mut self) {
        while self.tail() == Some(TOMBSTONE) {
            self.n -= 1;
        }
    }

    /// Bytes this list holds (its ring).
    pub fn state_bytes(&self) -> u64 {
        self.ring.capacity() as u64 * 4
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The oldest member, where reclaim takes from.
    #[inline]
    pub fn tail(&self) -> Option<Pfn> {
        (self.n > 0).then(|| self.slot(self.base.wrapping_add(self.n - 1)))
    }

    /// The most recently added member.
    #[inline]
    pub fn head(&self) -> Option<Pfn> {
        (self.n > 0).then(|| self.slot(self.base))
    }

    /// Drops tombstones at both ends, so head and tail are members.
    #[inline]
    fn trim(&mut self) {
        self.trim_back();
        while self.head() == Some(TOMBSTONE) {
            self.base = self.base.wrapping_add(1);
            self.n -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A free stack per zone of `sizes` frames numbered from 0 across the zones, each as a
    /// fresh zone hands them out (its lowest frame on top): the reference the tests compare
    /// `Folios` with.
    fn reference_stacks(sizes: &[u32]) -> Vec<Vec<Pfn>> {
        let mut start = 0;
        sizes
            .iter()
            .map(|&n| {
                let stack = (start..start + n).rev().collect();
                start += n;
                stack
            })
            .collect()
    }

    /// The free lists with never-used frames as a range hand out frames in the order the
    /// full lists did (a stack per zone that began with the zone's frames, lowest on top),
    /// through frees and a pageblock call that lists the range midway.
    #[test]
    fn never_used_frames_as_a_range_hand_out_the_full_lists_order() {
        let sizes = [16u32, 300, 700];
        let mut f = Folios::try_zoned(&sizes).unwrap();
        let mut reference = reference_stacks(&sizes);
        // The read completions' one shared chunk of defaults (8 KiB), and nothing else.
        assert_eq!(f.state_bytes(), 8192, "no frame table or free list per frame before one is handed out");
        let mut held: Vec<Pfn> = Vec::new();
        let mut x = 12345u64;
        for step in 0..5000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let z = (x >> 33) as usize % 3;
            if step == 2500 {
                f.push_free(1, &[]);
            }
            if !(x >> 40).is_multiple_of(3) || held.is_empty() {
                let got = f.alloc_from(z);
                assert_eq!(got, reference[z].pop(), "step {step}, zone {z}");
                held.extend(got);
            } else {
                let p = held.swap_remove((x >> 20) as usize % held.len());
                let z = f.free(p);
                reference[z].push(p);
            }
            assert_eq!(f.nr_free(), reference.iter().map(|l| l.len() as u64).sum::<u64>());
        }
        f.list_all_fresh();
        for (z, list) in reference.iter().enumerate() {
            assert_eq!(&f.free_list(z).collect::<Vec<_>>(), list);
        }
    }

    /// The top of a free stack held apart (a running CPU's per-CPU list: split_top(), swapped
    /// with parked lists) is still the top of the one stack: frees, allocations, pushes below
    /// a kept top and parked lists going and coming back hand out the frames a single stack
    /// per zone does, and a split that finds the held frames already right moves none.
    #[test]
    fn a_held_top_of_the_free_stack_hands_out_the_single_stacks_order() {
        let sizes = [40u32, 300, 700];
        let mut f = Folios::try_zoned(&sizes).unwrap();
        let mut reference = reference_stacks(&sizes);
        // Two parked lists a zone, each with its reference copy.
        let mut parked: Vec<Vec<(VecDeque<Pfn>, Vec<Pfn>)>> = vec![vec![Default::default(); 2]; 3];
        let mut held: Vec<Pfn> = Vec::new();
        let mut x = 777u64;
        let mut rnd = |m: usize| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize % m
        };
        for step in 0..20_000 {
            let z = rnd(3);
            let v = &mut reference[z];
            match rnd(10) {
                0..=3 => {
                    let got = f.alloc_from(z);
                    assert_eq!(got, v.pop(), "step {step}, zone {z}");
                    held.extend(got);
                }
                4..=6 if !held.is_empty() => {
                    let p = held.swap_remove(rnd(held.len()));
                    let z = f.free(p);
                    reference[z].push(p);
                }
                7 => {
                    // split_top(n) then the held frames swap with a parked list.
                    let (n, k) = (rnd(80), rnd(2));
                    f.split_top(z, n);
                    let n = n.min(v.len());
                    assert_eq!(f.top[z].len(), n, "step {step}");
                    assert!(f.top[z].iter().eq(&v[v.len() - n..]), "step {step}: the held frames are the stack's top");
                    assert_eq!(f.split_top(z, n), 0, "nothing to move once split");
                    // The held frames are parked, the parked list's frames held in their place.
                    let (list, list_ref) = &mut parked[z][k];
                    let taken = v.split_off(v.len() - n);
                    v.append(list_ref);
                    *list_ref = taken;
                    let mut slot = VecDeque::new();
                    std::mem::swap(f.top_mut(z), &mut slot);
                    std::mem::swap(f.top_mut(z), list);
                    std::mem::swap(list, &mut slot);
                    assert!(list.iter().eq(list_ref.iter()));
                }
                8 => {
                    // Below at most the listed frames (push_top()'s callers keep a per-CPU
                    // list's count, which the listed frames hold once it is split).
                    let (keep, n) = (rnd(60).min(f.free[z].len() + f.top[z].len()), rnd(5));
                    let (list, list_ref) = &mut parked[z][0];
                    let frames: Vec<Pfn> = list_ref.drain(..n.min(list_ref.len())).collect();
                    list.drain(..frames.len());
                    f.push_top(z, keep, &frames);
                    let at = v.len().saturating_sub(keep);
                    v.splice(at..at, frames);
                }
                _ => {
                    let mut into = Vec::new();
                    let n = rnd(30);
                    f.take_top(z, n, &mut into);
                    let n = n.min(v.len());
                    assert_eq!(into, v.split_off(v.len() - n), "step {step}");
                    f.push_top(z, 0, &into);
                    v.extend(into);
                }
            }
            for (z, v) in reference.iter().enumerate() {
                assert_eq!(f.nr_free_in(z), v.len() as u64, "step {step}, zone {z}");
            }
        }
        // The parked frames back, every zone's frames in the reference's order.
        for z in 0..3 {
            for (list, list_ref) in &mut parked[z] {
                f.push_top(z, 0, list.make_contiguous());
                reference[z].append(list_ref);
            }
        }
        f.list_all_fresh();
        for (z, list) in reference.iter().enumerate() {
            assert_eq!(&f.free_list(z).collect::<Vec<_>>(), list);
        }
    }

    #[test]
    fn lists_keep_order_and_length() {
        let mut f = Folios::new(8);
        let mut l = List::default();
        for p in 0..4 {
            f.list_add(&mut l, p);
        }
        f.list_add_tail(&mut l, 4);
        assert_eq!(f.iter_list(&l).collect::<Vec<_>>(), [3, 2, 1, 0, 4]);
        f.list_del(&mut l, 1);
        f.list_del(&mut l, 4);
        f.list_del(&mut l, 3);
        assert_eq!(f.iter_list(&l).collect::<Vec<_>>(), [2, 0]);
        assert_eq!((l.len, l.head(), l.tail()), (2, Some(2), Some(0)));
        f.list_del(&mut l, 2);
        f.list_del(&mut l, 0);
        assert!(l.is_empty());
        assert_eq!((l.head(), l.tail()), (None, None));
    }

    #[test]
    fn deleting_the_tail_skips_the_tombstones_before_it() {
        let mut f = Folios::new(8);
        let mut l = List::default();
        for p in 0..5 {
            f.list_add(&mut l, p);
        }
        f.list_del(&mut l, 1);
        assert_eq!(f.list_del_tail(&mut l), Some(0));
        assert_eq!((l.len, l.tail()), (3, Some(2)), "the tombstone of 1 is gone from the tail");
        f.list_add_tail(&mut l, 6);
        assert_eq!(f.iter_list(&l).collect::<Vec<_>>(), [4, 3, 2, 6]);
        let mut popped = Vec::new();
        while let Some(p) = f.list_del_tail(&mut l) {
            popped.push(p);
        }
        assert_eq!(popped, [6, 2, 3, 4]);
        assert!(l.is_empty());
    }

    #[test]
    fn many_deletions_in_the_middle_keep_order_and_compact() {
        let mut f = Folios::new(1000);
        let mut l = List::default();
        for p in 0..1000 {
            f.list_add_tail(&mut l, p);
        }
        for p in (0..1000).filter(|p| p % 7 != 0) {
            f.list_del(&mut l, p);
        }
        let want: Vec<u32> = (0..1000).filter(|p| p % 7 == 0).collect();
        assert_eq!(f.iter_list(&l).collect::<Vec<_>>(), want);
        assert!(l.n as u64 <= 2 * l.len + 64, "tombstones are compacted away");
        // Positions stay valid after compaction: more adds and deletes still work.
        f.list_add(&mut l, 1);
        f.list_del(&mut l, 7);
        f.list_add_tail(&mut l, 2);
        assert_eq!(l.head(), Some(1));
        assert_eq!(l.tail(), Some(2));
        assert_eq!(l.len, want.len() as u64 + 1);
    }

    #[test]
    fn positions_find_their_slots_after_the_ring_grows_and_wraps() {
        // Adds at both ends: positions wrap below 0 at the head while the ring doubles from
        // 1 slot to 256 under them; every deletion by position must still find its folio.
        let mut f = Folios::new(300);
        let mut l = List::default();
        let mut want = std::collections::VecDeque::new();
        for p in 0..200u32 {
            if p % 3 == 0 {
                f.list_add_tail(&mut l, p);
                want.push_back(p);
            } else {
                f.list_add(&mut l, p);
                want.push_front(p);
            }
        }
        assert!(l.ring.len().is_power_of_two() && l.ring.len() >= 200);
        for p in (0..200u32).filter(|p| p % 4 == 1) {
            f.list_del(&mut l, p);
            want.retain(|&q| q != p);
        }
        assert_eq!(f.iter_list(&l).collect::<Vec<_>>(), Vec::from(want.clone()));
        assert_eq!((l.head(), l.tail(), l.len), (want.front().copied(), want.back().copied(), want.len() as u64));
    }

    #[test]
    fn the_frame_table_grows_with_the_frames_handed_out_not_the_declared_memory() {
        // x86-64's zones of a 16 GiB machine: 3,840 + 782,336 frames below 4 GiB, the rest above.
        let (dma, dma32, normal) = (3_840u32, 782_336u32, (1u32 << 22) - 786_176);
        let mut f = Folios::try_zoned(&[dma, dma32, normal]).unwrap();
        assert_eq!(f.frames(), 1 << 22);
        assert!(f.f.is_empty());
        let got: Vec<Pfn> = (0..1000).map(|_| f.alloc_from(2).unwrap()).collect();
        // The highest zone hands out its lowest frames first, as before.
        assert_eq!(got[0], dma + dma32);
        assert_eq!(got[999], dma + dma32 + 999);
        // The table covers the frames below and the ones handed out, at most doubled.
        assert!(f.f.len() > got[999] as usize && f.f.len() <= 2 * (got[999] as usize + 1), "{}", f.f.len());
        assert!(f.f.iter().all(|x| x.vpn == Folio::FREE.vpn));
        // The read completions cost a chunk of 1,024 frames where one is written: not the
        // declared frames, nor the frames below the ones handed out.
        let before = f.state_bytes();
        for &p in &got {
            f.set_read_done(p, p as u64 + 1);
        }
        assert!(f.state_bytes() - before <= 3 * 8192 + 4 * (1 << 22) / 1024, "{} bytes", f.state_bytes() - before);
        assert_eq!((f.read_done(got[999]), f.read_done(got[0]), f.read_done(5), f.read_done((1 << 22) - 1)), (got[999] as u64 + 1, got[0] as u64 + 1, 0, 0));
        // A zone listed one frame at a time (pageblocks) is covered whole.
        f.list_all_fresh();
        assert_eq!(f.f.len(), 1 << 22);
        assert_eq!(f.zone_span(2), (dma + dma32, 1 << 22));
    }

    /// A host that cannot hold the tables for the next frame: the allocator hands out none,
    /// says why, and the tables and the frames handed out stay as they were (Rust's
    /// allocator would abort instead).
    #[test]
    fn frames_past_what_the_host_holds_are_refused_with_the_cause() {
        let mut f = Folios::try_zoned(&[16, 1 << 20]).unwrap();
        f.limit_host_frames(3000);
        let got: Vec<Pfn> = (0..2984).map_while(|_| f.alloc_from(1)).collect();
        assert_eq!((got.len(), f.failure()), (2984, None));
        assert_eq!(f.alloc_from(1), None);
        let e = f.failure().expect("the cause");
        assert!(e.contains("more page frames than this host can hold") && e.contains("3000"), "{e}");
        assert_eq!((f.f.len(), f.nr_free_in(1)), (3000, (1 << 20) - 2984));
        // The lower zone's frames, covered already, are still handed out.
        assert_eq!(f.alloc_from(0), Some(0));
    }

    #[test]
    fn alloc_and_free_recycle_frames() {
        let mut f = Folios::new(2);
        let a = f.alloc().unwrap();
        let b = f.alloc().unwrap();
        assert_eq!((a, b), (0, 1));
        assert!(f.alloc().is_none());
        f.set(a, pg::DIRTY);
        f.free(a);
        assert_eq!(f.nr_free(), 1);
        let again = f.alloc().unwrap();
        assert_eq!(f.get(again).flags, 0);
    }
}
