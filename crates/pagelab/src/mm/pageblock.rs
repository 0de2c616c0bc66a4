//! Pageblocks that are not MIGRATE_MOVABLE, the free pages in them, and watermark boosting
//! (mm/page_alloc.c: __rmqueue_fallback() and steal_suitable_fallback() of 6.1,
//! __rmqueue_claim(), try_to_steal_block() and __rmqueue_steal() of 6.12.95,
//! boost_watermark() of both).
//!
//! The model allocates only movable pages, from free frames it does not otherwise tell apart.
//! The kernel keeps its own unmovable and reclaimable pages (slab, page tables) in pageblocks
//! of those types, and the free pages left in them are on other free lists than the movable
//! ones. When a movable allocation finds its lists empty it falls back to them, and the
//! fallback raises the zone's watermarks by a pageblock (the boost), which wakes kswapd to
//! reclaim page cache only, past the high watermark. `machine.nonmovable` gives, per zone,
//! the pageblocks of those types and their free pages by order as /proc/pagetypeinfo lists
//! them; without it every pageblock is movable and nothing here runs.
//!
//! What is modeled: a buddy allocator over those pageblocks' free pages (splits and merges by
//! order), the fallback rules of both kernels for order-0 movable allocations, the claim of a
//! block that is at least half free or movable, the boost and its wake-up of kswapd, and of
//! the kernel's own allocations over the run the one that grows with the workload: the page
//! cache's xarray nodes, whose reclaimable slabs come off these blocks' free lists
//! ([`xa_node_slabs_follow_the_nodes`]; measured in the guest: +1,568 nodes, +224 slab pages
//! in mixed-anon-file, docs/journal/2026-11-29-kernel-slab-pool.md). What is not: the other
//! kernel allocations (page tables, inodes, dentries, buffer heads: the blocks' other pages
//! stay the kernel's), the swap cache's xarray nodes, per-CPU lists of the other migratetypes (a page freed in such a block goes straight back to
//! its buddy lists), and ALLOC_NOFRAGMENT (a machine with ZONE_NORMAL). A boost of a lower zone
//! wakes kswapd for that zone alone (its classzone, mm/vmscan.rs), which only the classic LRU
//! models, so under other policies only the highest zone may have such blocks.

use crate::kernel::Kernel;
use crate::mm::folio::Pfn;

/// `pageblock_order`: 2 MiB pageblocks on x86-64.
pub const PAGEBLOCK_ORDER: u32 = 9;
/// `pageblock_nr_pages`.
pub const PAGEBLOCK_PAGES: u64 = 1 << PAGEBLOCK_ORDER;
/// `NR_PAGE_ORDERS` (MAX_ORDER 10 on 6.1 counts orders 0..=10 as well).
pub const NR_ORDERS: usize = 11;

/// One zone's non-movable pageblocks as the scenario gives them.
#[derive(Clone, Debug, PartialEq)]
pub struct ZoneLayout {
    /// The zone's index.
    pub zone: usize,
    /// Pageblocks of type unmovable or reclaimable.
    pub blocks: u64,
    /// Free chunks in them, by order (pagetypeinfo's two rows added up).
    pub free: [u64; NR_ORDERS],
    /// Their other frames that are free pages on the per-CPU lists (the guest's census), if
    /// known.
    pub pcp: Option<u64>,
}

/// The free pages of one zone's non-movable pageblocks, as the buddy allocator holds them.
#[derive(Clone, Debug, Default)]
struct Buddy {
    /// Heads of free chunks, by order.
    lists: [Vec<Pfn>; NR_ORDERS],
    nr_free: u64,
}

/// Where a fallback took its pages from, for the caller's counts and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Fallback {
    /// Frames moved to the movable free lists (the caller's frame stack).
    pub frames: u64,
    /// The zone's watermarks were boosted.
    pub boosted: bool,
    /// A whole pageblock became movable.
    pub claimed: bool,
}

/// Where one slab's pages came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlabPages {
    /// A chunk of a non-movable block (physical frame of its head).
    Nonmovable(Pfn),
    /// Frames off the movable free lists (model frame numbers), when the non-movable blocks
    /// had no chunk of the slab's order.
    Movable([Pfn; RADIX_TREE_NODE_SLAB_PAGES as usize]),
}

/// `radix_tree_node` objects per slab: 576-byte nodes (64 slots) in order-1 slabs. mm/slub.c:
/// calculate_order() asks for at least `4 * (fls(nr_cpus) + 1)` = 8 objects on a one-CPU
/// guest, 8 × 576 bytes needs order 1, which holds 14 (the guest's /proc/slabinfo: 14
/// objects, 2 pages per slab).
pub const RADIX_TREE_NODES_PER_SLAB: u64 = 14;
/// Pages per `radix_tree_node` slab (order 1).
pub const RADIX_TREE_NODE_SLAB_PAGES: u64 = 2;
/// mm/slub.c: MIN_PARTIAL, the empty slabs a node's partial list keeps before
/// discard_slab() frees one (`min_partial` of a 576-byte cache: ilog2(576) / 2 = 4, raised to 5).
pub const SLUB_MIN_PARTIAL: u64 = 5;

/// Models the page allocator's side of the page cache's xarray nodes (6.1.x, 6.12.95,
/// 7.3.4 agree): lib/radix-tree.c: radix_tree_init() creates the `radix_tree_node` cache
/// with SLAB_RECLAIM_ACCOUNT, so mm/slub.c: allocate_slab() takes its slabs with
/// __GFP_RECLAIMABLE (MIGRATE_RECLAIMABLE pageblocks' free lists); lib/xarray.c:
/// xas_create() allocates a node when the first slot of a 64-page range is stored
/// (filemap_add_folio() -> __filemap_add_folio()), and a node is freed when its last entry
/// goes (xas_delete_node(); the shadow shrinker's shadow_lru_isolate()). SLUB takes a new
/// slab when its slabs are full, and frees an empty one (discard_slab()) once the partial
/// list holds [`SLUB_MIN_PARTIAL`].
///
/// Given the file address space's nodes in use (`nodes`), returns how many slabs the cache
/// needs now, starting from `slabs`: one more when the nodes outgrow them, one fewer when
/// more than [`SLUB_MIN_PARTIAL`] slabs' worth of objects are free. Simplification: the
/// model packs the nodes (a free slab exists as soon as the count allows it); the kernel's
/// freed nodes are scattered over the slabs, so its slabs empty later.
pub fn xa_node_slabs_follow_the_nodes(nodes: u64, slabs: u64) -> u64 {
    let needed = nodes.div_ceil(RADIX_TREE_NODES_PER_SLAB);
    if needed > slabs {
        needed
    } else if slabs > needed + SLUB_MIN_PARTIAL {
        needed + SLUB_MIN_PARTIAL
    } else {
        slabs
    }
}

/// 6.12's rmqueue_bulk() remembers, across one refill, where the previous page came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmqueueMode {
    Normal,
    Claim,
    Steal,
}

/// The machine's non-movable pageblocks and the zones' boosts.
#[derive(Clone, Debug)]
pub struct Pageblocks {
    /// Per pageblock (frame number >> 9): not MIGRATE_MOVABLE.
    nonmovable: Vec<bool>,
    /// Per pageblock: frames the kernel itself holds (never freed in the model), and those on
    /// the per-CPU lists ([`Pageblocks::pcp_held`]).
    kernel_frames: Vec<u32>,
    /// Per zone: the physical frames of its non-movable blocks that are free pages on the
    /// running CPU's per-CPU lists (`machine.nonmovable.Z.pcp`), the next to leave last.
    pcp_held: Vec<Vec<Pfn>>,
    /// Whether the layout says what the per-CPU lists hold (`machine.nonmovable.Z.pcp`):
    /// [`Kernel::pcp_drain_follows_the_pageblock`] runs only then. Without it, the rule would
    /// model lists that hold no frame of these blocks, which 6.12's do at the start (about
    /// 400 in a census boot), and the pool they fill would freeze below the kernel's
    /// (docs/journal/2026-11-30-non-movable-pool.md).
    pub pcp_lists_known: bool,
    /// Per frame of a non-movable block: the order of the free chunk it heads, or NOT_FREE.
    order_at: std::collections::HashMap<Pfn, u8>,
    buddy: Vec<Buddy>,
    /// vm.watermark_boost_factor.
    pub boost_factor: u64,
    /// Per zone: the watermark boost, and ZONE_BOOSTED_WATERMARK.
    pub watermark_boost: Vec<u64>,
    pub boosted_flag: Vec<bool>,
    /// Per zone: the watermarks without the boost (`_watermark[]`): min, low, high.
    pub base_marks: Vec<[u64; 3]>,
    /// Per zone: pages managed (boost_watermark() skips zones of less than four pageblocks).
    managed: Vec<u64>,
    /// Per zone: whether the scenario gave it non-movable pageblocks.
    laid_out: Vec<bool>,
    /// Where each frame sits: the model names a page by its frame number for its whole life,
    /// but compaction moves pages (mm/migrate.c), so the pageblocks and the buddy lists here
    /// are kept in physical frame numbers, and `phys[pfn]` / `frame_at[phys]` translate.
    /// A migration exchanges the physical places of the page and its free target.
    phys: Vec<Pfn>,
    frame_at: Vec<Pfn>,
    /// kcompactd's state (mm/compaction.rs).
    pub kcompactd: crate::mm::compaction::Kcompactd,
    /// The page cache's xarray-node slabs the model holds ([`xa_node_slabs_follow_the_nodes`]),
    /// newest last.
    slabs: Vec<SlabPages>,
    /// Events for the report: fallbacks, boosts, claims.
    pub fallbacks: u64,
    pub boosts: u64,
    pub claims: u64,
}

impl Pageblocks {
    /// An empty layout over `frames` frames and `zones` zones.
    pub fn new(frames: u64, marks: Vec<[u64; 3]>, managed: Vec<u64>, boost_factor: u64) -> Pageblocks {
        let blocks = frames.div_ceil(PAGEBLOCK_PAGES) as usize;
        let zones = marks.len();
        Pageblocks {
            nonmovable: vec![false; blocks],
            kernel_frames: vec![0; blocks],
            pcp_held: vec![Vec::new(); zones],
            pcp_lists_known: false,
            order_at: Default::default(),
            buddy: vec![Buddy::default(); zones],
            boost_factor,
            watermark_boost: vec![0; zones],
            boosted_flag: vec![false; zones],
            base_marks: marks,
            managed,
            laid_out: vec![false; zones],
            phys: (0..frames as Pfn).collect(),
            frame_at: (0..frames as Pfn).collect(),
            kcompactd: crate::mm::compaction::Kcompactd::new(zones),
            slabs: Vec::new(),
            fallbacks: 0,
            boosts: 0,
            claims: 0,
        }
    }

    /// Lays out `layout` in the pageblocks `first_block..first_block + layout.blocks`. Chunks of
    /// a pageblock or more are whole free blocks; the smaller ones are spread over the other
    /// blocks one at a time, largest first, each aligned to its size (the kernel's own pages
    /// are scattered over its blocks, so a block is rarely half free and claimed at the first
    /// fallback). Every other frame of the blocks is the kernel's, but for `layout.pcp` of
    /// them, free on a per-CPU list ([`Pageblocks::lay_out_pcp`]). Returns the frames that
    /// are not free (the kernel's and the per-CPU lists'), or an error when they do not fit.
    pub fn lay_out(&mut self, first_block: u64, layout: &ZoneLayout) -> Result<u64, String> {
        let z = layout.zone;
        self.laid_out[z] = true;
        let misfit = || format!("the free chunks do not fit in {} pageblocks", layout.blocks);
        let mut next_whole = first_block;
        for order in (PAGEBLOCK_ORDER as usize..NR_ORDERS).rev() {
            let blocks = 1u64 << (order - PAGEBLOCK_ORDER as usize);
            for _ in 0..layout.free[order] {
                next_whole = next_whole.next_multiple_of(blocks);
                if next_whole + blocks > first_block + layout.blocks {
                    return Err(misfit());
                }
                self.insert(z, (next_whole * PAGEBLOCK_PAGES) as Pfn, order);
                next_whole += blocks;
            }
        }
        // The blocks left, each with the next free frame to use.
        let mut fill: Vec<(u64, u64)> = (next_whole..first_block + layout.blocks).map(|b| (b, b * PAGEBLOCK_PAGES)).collect();
        let mut turn = 0;
        for order in (0..PAGEBLOCK_ORDER as usize).rev() {
            let size = 1u64 << order;
            for _ in 0..layout.free[order] {
                // The next block, in turn, with room for the chunk.
                let found = (0..fill.len()).map(|i| (turn + i) % fill.len().max(1)).find(|&i| {
                    let (b, at) = fill[i];
                    at.next_multiple_of(size) + size <= (b + 1) * PAGEBLOCK_PAGES
                });
                let Some(i) = found else { return Err(misfit()) };
                let at = fill[i].1.next_multiple_of(size);
                self.insert(z, at as Pfn, order);
                fill[i].1 = at + size;
                turn = i + 1;
            }
        }
        if let Some(n) = layout.pcp {
            self.pcp_lists_known = true;
            self.lay_out_pcp(z, &fill, n).ok_or_else(|| format!("{n} frames on per-CPU lists do not fit beside the free chunks"))?;
        }
        let (lo, hi) = (first_block * PAGEBLOCK_PAGES, (first_block + layout.blocks) * PAGEBLOCK_PAGES);
        let mut free = vec![0u64; layout.blocks as usize];
        for (&head, &order) in &self.order_at {
            let (start, end) = (head as u64, head as u64 + (1u64 << order));
            if start >= lo && end <= hi {
                for b in start / PAGEBLOCK_PAGES..end.div_ceil(PAGEBLOCK_PAGES) {
                    let (from, to) = (start.max(b * PAGEBLOCK_PAGES), end.min((b + 1) * PAGEBLOCK_PAGES));
                    free[(b - first_block) as usize] += to - from;
                }
            }
        }
        let mut kernel = 0;
        for (i, f) in free.into_iter().enumerate() {
            let b = first_block as usize + i;
            self.nonmovable[b] = true;
            self.kernel_frames[b] = (PAGEBLOCK_PAGES - f) as u32;
            kernel += PAGEBLOCK_PAGES - f;
        }
        Ok(kernel)
    }

    /// Puts `n` frames of zone `z`'s blocks `fill` (each block with its first frame past its
    /// free chunks) on the per-CPU lists, from the top of each block down, a block at a time
    /// in turn. Which frames the kernel's lists hold is not measured (the census counts them
    /// per block at most); the top of the blocks keeps them off the free chunks' buddies, so
    /// they merge with one another when a drain frees them. None when they do not fit.
    fn lay_out_pcp(&mut self, z: usize, fill: &[(u64, u64)], n: u64) -> Option<()> {
        let mut next: Vec<u64> = fill.iter().map(|&(b, _)| (b + 1) * PAGEBLOCK_PAGES).collect();
        let mut held = Vec::with_capacity(n as usize);
        while (held.len() as u64) < n {
            let before = held.len();
            for (i, &(_, floor)) in fill.iter().enumerate() {
                if (held.len() as u64) < n && next[i] > floor {
                    next[i] -= 1;
                    held.push(next[i] as Pfn);
                }
            }
            if held.len() == before {
                return None;
            }
        }
        // The last laid out leaves first.
        held.reverse();
        self.pcp_held[z] = held;
        Some(())
    }

    /// Frames of zone `z`'s non-movable blocks still on the per-CPU lists.
    pub fn nr_pcp_held(&self, z: usize) -> u64 {
        self.pcp_held[z].len() as u64
    }

    /// Models mm/page_alloc.c: free_pcppages_bulk() for up to `n` of the frames of zone `z`'s
    /// non-movable blocks on the per-CPU lists (6.1, 6.12, 7.3): each goes to the free lists
    /// of its block's migratetype as the block is now (get_pfnblock_migratetype() on 6.12 and
    /// 7.3; 6.1's listed migratetype, the block's when the page was freed, is the same unless
    /// a claim changed the block since). A non-movable block's frame joins its buddy lists;
    /// the frames of a block claimed since are returned (the model's page numbers), for the
    /// movable lists. Returns how many left the lists, and those.
    pub fn return_pcp(&mut self, z: usize, n: u64) -> (u64, Vec<Pfn>) {
        let keep = self.pcp_held[z].len().saturating_sub(n as usize);
        let gone = self.pcp_held[z].split_off(keep);
        let mut movable = Vec::new();
        for &phys in &gone {
            let block = (phys as u64 >> PAGEBLOCK_ORDER) as usize;
            self.kernel_frames[block] -= 1;
            if self.nonmovable[block] {
                self.free_phys(z, phys);
            } else {
                movable.push(self.frame_at[phys as usize]);
            }
        }
        (gone.len() as u64, movable)
    }

    /// Slabs of the page cache's xarray nodes held ([`xa_node_slabs_follow_the_nodes`]).
    pub fn nr_slabs(&self) -> u64 {
        self.slabs.len() as u64
    }

    /// Models mm/page_alloc.c: __rmqueue_smallest() for one order-1 reclaimable slab
    /// allocation (6.1, 6.12, 7.3): the smallest free chunk of at least that order on zone
    /// `z`'s non-movable lists (the model keeps the unmovable and reclaimable lists as one),
    /// split by expand(), the upper halves back on the lists; the frames become the kernel's.
    /// None when no chunk is that large: the kernel then falls back to the movable lists
    /// (__rmqueue_fallback(), which for a reclaimable allocation also claims the block), which
    /// the caller models by taking movable frames, without the claim.
    pub fn alloc_slab(&mut self, z: usize) -> Option<Pfn> {
        let order = RADIX_TREE_NODE_SLAB_PAGES.trailing_zeros() as usize;
        let from = (order..NR_ORDERS).find(|&o| !self.buddy[z].lists[o].is_empty())?;
        let pfn = *self.buddy[z].lists[from].last().expect("a chunk of this order");
        self.remove(z, pfn, from);
        for o in (order..from).rev() {
            self.insert(z, pfn + (1 << o), o);
        }
        self.kernel_frames[(pfn as u64 >> PAGEBLOCK_ORDER) as usize] += RADIX_TREE_NODE_SLAB_PAGES as u32;
        self.slabs.push(SlabPages::Nonmovable(pfn));
        Some(pfn)
    }

    /// A slab taken off the movable free lists (`frames`, model frame numbers).
    pub fn slab_from_movable(&mut self, frames: [Pfn; RADIX_TREE_NODE_SLAB_PAGES as usize]) {
        self.slabs.push(SlabPages::Movable(frames));
    }

    /// Frees the newest slab (discard_slab() -> __free_pages()): a chunk of a block that is
    /// still non-movable goes back to its buddy lists; otherwise (the block was claimed for
    /// movable pages since, or the slab came off the movable lists) its frames, as model
    /// frame numbers, are returned for the caller to put on the movable free lists.
    pub fn free_slab(&mut self, z: usize) -> Option<Vec<Pfn>> {
        match self.slabs.pop()? {
            SlabPages::Nonmovable(pfn) => {
                let block = (pfn as u64 >> PAGEBLOCK_ORDER) as usize;
                self.kernel_frames[block] -= RADIX_TREE_NODE_SLAB_PAGES as u32;
                let frames = pfn..pfn + RADIX_TREE_NODE_SLAB_PAGES as Pfn;
                if !self.nonmovable[block] {
                    return Some(frames.map(|p| self.frame_at[p as usize]).collect());
                }
                for p in frames {
                    self.free_phys(z, p);
                }
                None
            }
            SlabPages::Movable(frames) => Some(frames.to_vec()),
        }
    }

    /// Where the kernel's slabs are taken: the highest zone (`top`, the first of the
    /// allocation's zonelist), when the scenario gave it non-movable pageblocks; a zone
    /// without them has its reclaimable blocks in the kernel's pages, which the model leaves.
    pub fn slab_zone(&self, top: usize) -> Option<usize> {
        self.laid_out.get(top).copied().unwrap_or(false).then_some(top)
    }

    /// Whether zone `z` has non-movable pageblocks of the scenario's.
    pub fn has_blocks_in(&self, z: usize) -> bool {
        self.laid_out[z]
    }

    /// Free pages in zone `z`'s non-movable blocks (part of NR_FREE_PAGES).
    #[inline]
    pub fn nr_free(&self, z: usize) -> u64 {
        self.buddy[z].nr_free
    }

    /// Whether page `pfn` lies in a non-movable pageblock (get_pfnblock_migratetype()).
    #[inline]
    pub fn is_nonmovable(&self, pfn: Pfn) -> bool {
        self.is_nonmovable_phys(self.phys[pfn as usize])
    }

    /// Whether physical frame `phys` lies in a non-movable pageblock.
    #[inline]
    pub fn is_nonmovable_phys(&self, phys: Pfn) -> bool {
        self.nonmovable.get((phys >> PAGEBLOCK_ORDER) as usize).copied().unwrap_or(false)
    }

    /// The physical frame of page `pfn`.
    #[inline]
    pub fn phys_of(&self, pfn: Pfn) -> Pfn {
        self.phys[pfn as usize]
    }

    /// The page (model frame number) at physical frame `phys`.
    #[inline]
    pub fn page_at(&self, phys: Pfn) -> Pfn {
        self.frame_at[phys as usize]
    }

    /// A migration (mm/migrate.c: migrate_folio()): page `a`'s contents move to the frame
    /// where page `b` is, and `b` (a free page) takes `a`'s old frame.
    pub fn exchange(&mut self, a: Pfn, b: Pfn) {
        let (pa, pb) = (self.phys[a as usize], self.phys[b as usize]);
        self.phys.swap(a as usize, b as usize);
        self.frame_at[pa as usize] = b;
        self.frame_at[pb as usize] = a;
    }

    /// Free chunks of zone `z`'s non-movable blocks, by order (for compaction's view of the
    /// zone's free memory).
    pub fn chunks(&self, z: usize) -> impl Iterator<Item = (Pfn, usize)> + '_ {
        self.buddy[z].lists.iter().enumerate().flat_map(|(o, l)| l.iter().map(move |&p| (p, o)))
    }

    fn insert(&mut self, z: usize, pfn: Pfn, order: usize) {
        self.buddy[z].lists[order].push(pfn);
        self.buddy[z].nr_free += 1 << order;
        self.order_at.insert(pfn, order as u8);
    }

    fn remove(&mut self, z: usize, pfn: Pfn, order: usize) {
        let list = &mut self.buddy[z].lists[order];
        let i = list.iter().rposition(|&p| p == pfn).expect("a free chunk is on its order's list");
        list.swap_remove(i);
        self.buddy[z].nr_free -= 1 << order;
        self.order_at.remove(&pfn);
    }

    /// Models mm/page_alloc.c: __free_one_page() for a page of a non-movable block: merge
    /// with its free buddies, up to a pageblock.
    pub fn free(&mut self, z: usize, pfn: Pfn) {
        self.free_phys(z, self.phys[pfn as usize]);
    }

    /// [`Pageblocks::free`] of physical frame `pfn`.
    pub fn free_phys(&mut self, z: usize, pfn: Pfn) {
        let (mut pfn, mut order) = (pfn, 0usize);
        while order < PAGEBLOCK_ORDER as usize {
            let buddy = pfn ^ (1 << order);
            if self.order_at.get(&buddy) != Some(&(order as u8)) {
                break;
            }
            self.remove(z, buddy, order);
            pfn = pfn.min(buddy);
            order += 1;
        }
        self.insert(z, pfn, order);
    }

    /// The largest order with a free chunk in zone `z`, if any.
    fn largest(&self, z: usize) -> Option<usize> {
        (0..NR_ORDERS).rev().find(|&o| !self.buddy[z].lists[o].is_empty())
    }

    /// The smallest order with a free chunk in zone `z`, if any.
    fn smallest(&self, z: usize) -> Option<usize> {
        (0..NR_ORDERS).find(|&o| !self.buddy[z].lists[o].is_empty())
    }

    /// Models mm/page_alloc.c: boost_watermark() (6.1, 6.12): raise the zone's boost by a
    /// pageblock, up to watermark_boost_factor of its high watermark (at least a pageblock);
    /// not in a zone of less than four pageblocks, nor with the factor 0.
    pub fn boost_watermark(&mut self, z: usize) -> bool {
        if self.boost_factor == 0 || PAGEBLOCK_PAGES * 4 > self.managed[z] {
            return false;
        }
        let max_boost = self.base_marks[z][2] * self.boost_factor / 10_000;
        if max_boost == 0 {
            return false;
        }
        let max_boost = max_boost.max(PAGEBLOCK_PAGES);
        self.watermark_boost[z] = (self.watermark_boost[z] + PAGEBLOCK_PAGES).min(max_boost);
        self.boosts += 1;
        true
    }

    /// Moves the free chunk at `pfn` of `order` to the caller's movable stack: the chunk's
    /// frames, lowest last (the stack hands out its top first).
    fn take_chunk(&mut self, z: usize, pfn: Pfn, order: usize, out: &mut Vec<Pfn>) -> u64 {
        self.remove(z, pfn, order);
        out.extend((pfn..pfn + (1 << order)).rev().map(|p| self.frame_at[p as usize]));
        1 << order
    }

    /// Models move_freepages_block() + set_pageblock_migratetype() when a block is claimed:
    /// every free chunk of the block goes to the movable lists and the block becomes movable.
    fn claim_block(&mut self, z: usize, block: u64, out: &mut Vec<Pfn>) -> u64 {
        let moved = self.move_freepages_block(z, block, out);
        self.nonmovable[block as usize] = false;
        self.claims += 1;
        moved
    }

    /// Models move_freepages_block(): every free chunk of the block to the movable lists.
    fn move_freepages_block(&mut self, z: usize, block: u64, out: &mut Vec<Pfn>) -> u64 {
        let lo = (block * PAGEBLOCK_PAGES) as Pfn;
        let heads: Vec<(Pfn, usize)> = (lo..lo + PAGEBLOCK_PAGES as Pfn).filter_map(|p| self.order_at.get(&p).map(|&o| (p, o as usize))).collect();
        heads.into_iter().map(|(p, o)| self.take_chunk(z, p, o, out)).sum()
    }

    /// A free chunk of a pageblock or more: its blocks become movable whole
    /// (change_pageblock_range()), without a boost.
    fn take_whole_blocks(&mut self, z: usize, pfn: Pfn, order: usize, out: &mut Vec<Pfn>) -> Fallback {
        let frames = self.take_chunk(z, pfn, order, out);
        for b in (pfn as u64 >> PAGEBLOCK_ORDER)..((pfn as u64 + frames) >> PAGEBLOCK_ORDER) {
            self.nonmovable[b as usize] = false;
        }
        self.claims += 1;
        Fallback { frames, boosted: false, claimed: true }
    }

    /// Whether a block would be claimed: at least half of it free or movable, i.e. the
    /// kernel holds at most half (the model's non-free frames of the block are the kernel's
    /// or movable allocations', and either way free + movable = 512 - the kernel's).
    fn claimable(&self, block: u64) -> bool {
        PAGEBLOCK_PAGES - self.kernel_frames[block as usize] as u64 >= PAGEBLOCK_PAGES / 2
    }

    /// Models mm/page_alloc.c (6.1): __rmqueue_fallback() + steal_suitable_fallback() for an
    /// order-0 movable page: the largest free chunk of the other types, or, when it is too
    /// small to steal its block (below order 4), the smallest; the zone's watermarks are
    /// boosted unless the chunk is a pageblock or more (then its blocks are simply taken); a
    /// chunk of order 4 or more moves every free page of its block to the movable lists and
    /// claims the block if at least half of it is free or movable; a smaller one moves to the
    /// movable lists alone. The frames moved are pushed to `out`.
    pub fn fallback_6_1(&mut self, z: usize, out: &mut Vec<Pfn>) -> Option<Fallback> {
        let largest = self.largest(z)?;
        let can_steal = largest >= (PAGEBLOCK_ORDER / 2) as usize;
        let order = if can_steal { largest } else { self.smallest(z)? };
        let pfn = *self.buddy[z].lists[order].last().expect("a chunk of this order");
        self.fallbacks += 1;
        if order >= PAGEBLOCK_ORDER as usize {
            return Some(self.take_whole_blocks(z, pfn, order, out));
        }
        let boosted = self.boost_watermark(z);
        if can_steal {
            let block = pfn as u64 >> PAGEBLOCK_ORDER;
            if self.claimable(block) {
                let frames = self.claim_block(z, block, out);
                return Some(Fallback { frames, boosted, claimed: true });
            }
            // Every free page of the block goes to the movable lists, but the block keeps its
            // type: its pages come back to it when freed.
            let frames = self.move_freepages_block(z, block, out);
            return Some(Fallback { frames, boosted, claimed: false });
        }
        let frames = self.take_chunk(z, pfn, order, out);
        Some(Fallback { frames, boosted, claimed: false })
    }

    /// Models mm/page_alloc.c (6.12.95): __rmqueue() past an empty movable list, for one
    /// order-0 page: __rmqueue_claim() (from the largest order down to order 4, each chunk
    /// found boosts the zone and claims its block if at least half of it is free or movable;
    /// a chunk of a pageblock or more is taken whole, without a boost), then
    /// __rmqueue_steal() (one frame of the smallest chunk; the rest stays on its type's lists).
    /// `mode` carries rmqueue_bulk()'s memory of the last page's source.
    pub fn fallback_6_12(&mut self, z: usize, mode: &mut RmqueueMode, out: &mut Vec<Pfn>) -> Option<Fallback> {
        if *mode != RmqueueMode::Steal {
            let mut boosted = false;
            let mut order = self.largest(z)?;
            while order >= (PAGEBLOCK_ORDER / 2) as usize {
                if let Some(&pfn) = self.buddy[z].lists[order].last() {
                    self.fallbacks += 1;
                    if order >= PAGEBLOCK_ORDER as usize {
                        *mode = RmqueueMode::Normal;
                        return Some(Fallback { boosted, ..self.take_whole_blocks(z, pfn, order, out) });
                    }
                    boosted |= self.boost_watermark(z);
                    let block = pfn as u64 >> PAGEBLOCK_ORDER;
                    if self.claimable(block) {
                        let frames = self.claim_block(z, block, out);
                        *mode = RmqueueMode::Normal;
                        return Some(Fallback { frames, boosted, claimed: true });
                    }
                }
                order -= 1;
            }
            if boosted {
                // The claim failed but boosted: steal below, and report the boost.
                let f = self.steal_one(z, out)?;
                *mode = RmqueueMode::Steal;
                return Some(Fallback { boosted: true, ..f });
            }
        }
        let f = self.steal_one(z, out)?;
        *mode = RmqueueMode::Steal;
        Some(f)
    }

    /// __rmqueue_steal(): one frame of the smallest free chunk; the rest of the chunk goes
    /// back to its type's lists split by order (expand()).
    fn steal_one(&mut self, z: usize, out: &mut Vec<Pfn>) -> Option<Fallback> {
        let order = self.smallest(z)?;
        let pfn = *self.buddy[z].lists[order].last().expect("a chunk of this order");
        self.fallbacks += 1;
        self.remove(z, pfn, order);
        // expand(): the upper halves go back, the lowest frame is allocated.
        for o in (0..order).rev() {
            self.insert(z, pfn + (1 << o), o);
        }
        out.push(self.frame_at[pfn as usize]);
        Some(Fallback { frames: 1, boosted: false, claimed: false })
    }

    /// Per kernel: one fallback for an order-0 movable page.
    pub fn fallback(&mut self, kernel: Kernel, z: usize, mode: &mut RmqueueMode, out: &mut Vec<Pfn>) -> Option<Fallback> {
        if kernel.steals_single_pages_without_boost() {
            self.fallback_6_12(z, mode, out)
        } else {
            self.fallback_6_1(z, out)
        }
    }

    /// The boost of zone `z` changed: its watermarks are the base marks plus the boost
    /// (wmark_pages()).
    pub fn marks(&self, z: usize) -> [u64; 3] {
        let [min, low, high] = self.base_marks[z];
        let b = self.watermark_boost[z];
        [min + b, low + b, high + b]
    }

    /// Self-consistency for tests: every free chunk is aligned, in a non-movable block, and
    /// counted.
    pub fn check(&self) -> Result<(), String> {
        for (z, b) in self.buddy.iter().enumerate() {
            let mut n = 0;
            for (o, list) in b.lists.iter().enumerate() {
                for &p in list {
                    if p % (1 << o) != 0 {
                        return Err(format!("zone {z}: chunk {p} of order {o} is not aligned"));
                    }
                    if self.order_at.get(&p) != Some(&(o as u8)) {
                        return Err(format!("zone {z}: chunk {p} of order {o} is not indexed"));
                    }
                    n += 1 << o;
                }
            }
            if n != b.nr_free {
                return Err(format!("zone {z}: {n} free frames on the lists, {} counted", b.nr_free));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(free: &[(usize, u64)], blocks: u64) -> Pageblocks {
        let mut p = Pageblocks::new(8 * PAGEBLOCK_PAGES, vec![[100, 125, 150]], vec![8 * PAGEBLOCK_PAGES], 15_000);
        let mut f = [0; NR_ORDERS];
        for &(o, n) in free {
            f[o] = n;
        }
        p.lay_out(4, &ZoneLayout { zone: 0, blocks, free: f, pcp: None }).unwrap();
        p.check().unwrap();
        p
    }

    #[test]
    fn free_one_page_merges_buddies_up_to_a_pageblock() {
        let mut p = layout(&[(0, 1)], 1);
        let base = 4 * PAGEBLOCK_PAGES as Pfn;
        // The chunk of order 0 sits at the block's start; free its buddy and the pair's.
        p.free(0, base + 1);
        p.free(0, base + 3);
        p.free(0, base + 2);
        p.check().unwrap();
        assert_eq!(p.order_at.get(&base), Some(&2), "frames 0..4 merged into one chunk of order 2");
        assert_eq!(p.nr_free(0), 4);
    }

    #[test]
    fn boost_watermark_adds_a_pageblock_up_to_the_factor_of_high_and_skips_small_zones() {
        // high 150, factor 15000: max_boost = 225, raised to a pageblock (512).
        let mut p = layout(&[], 1);
        assert!(p.boost_watermark(0));
        assert_eq!(p.watermark_boost[0], 512);
        assert!(p.boost_watermark(0));
        assert_eq!(p.watermark_boost[0], 512, "capped at max(pageblock, 1.5 x high)");
        assert_eq!(p.marks(0), [612, 637, 662]);
        let mut small = Pageblocks::new(2047, vec![[100, 125, 150]], vec![2047], 15_000);
        assert!(!small.boost_watermark(0), "less than four pageblocks: no boost");
        let mut off = Pageblocks::new(8 * PAGEBLOCK_PAGES, vec![[100, 125, 150]], vec![8 * PAGEBLOCK_PAGES], 0);
        assert!(!off.boost_watermark(0), "vm.watermark_boost_factor = 0");
    }

    #[test]
    fn rmqueue_fallback_6_1_boosts_on_every_fallback_and_moves_a_small_chunk_whole() {
        // Chunks of order 2 and 1 only: too small to steal the block, so the smallest moves.
        let mut p = layout(&[(2, 1), (1, 1)], 1);
        let mut out = Vec::new();
        let f = p.fallback_6_1(0, &mut out).unwrap();
        assert_eq!(f, Fallback { frames: 2, boosted: true, claimed: false });
        let f = p.fallback_6_1(0, &mut out).unwrap();
        assert_eq!(f, Fallback { frames: 4, boosted: true, claimed: false });
        assert_eq!(p.fallback_6_1(0, &mut out), None);
        assert_eq!(out.len(), 6);
        assert!(p.is_nonmovable(out[0]), "the block keeps its type");
    }

    #[test]
    fn rmqueue_fallback_claims_a_block_at_least_half_free_and_takes_a_free_pageblock_whole() {
        // Order 8 + order 7: 384 of 512 frames free, so the block is claimed (6.1 and 6.12).
        for kernel in [Kernel::V6_1, Kernel::V6_12] {
            let mut p = layout(&[(8, 1), (7, 1)], 1);
            let (mut out, mut mode) = (Vec::new(), RmqueueMode::Normal);
            let f = p.fallback(kernel, 0, &mut mode, &mut out).unwrap();
            assert_eq!(f, Fallback { frames: 384, boosted: true, claimed: true }, "{kernel:?}");
            assert!(!p.is_nonmovable(out[0]));
            // A free pageblock is taken whole, without a boost.
            let mut p = layout(&[(9, 1)], 1);
            let f = p.fallback(kernel, 0, &mut mode, &mut out).unwrap();
            assert_eq!(f, Fallback { frames: 512, boosted: false, claimed: true }, "{kernel:?}");
        }
    }

    #[test]
    fn rmqueue_6_12_boosts_only_when_a_chunk_of_order_4_exists_and_steals_single_frames() {
        // Small chunks only: 6.12.95 steals one frame without a boost; 6.1 boosts.
        let mut p = layout(&[(3, 1)], 1);
        let (mut out, mut mode) = (Vec::new(), RmqueueMode::Normal);
        let f = p.fallback_6_12(0, &mut mode, &mut out).unwrap();
        assert_eq!(f, Fallback { frames: 1, boosted: false, claimed: false });
        assert_eq!(mode, RmqueueMode::Steal);
        assert_eq!(p.nr_free(0), 7, "the rest of the chunk stays on its type's lists");
        p.check().unwrap();
        // A chunk of order 4 in a block mostly the kernel's: boosted, not claimed, then stolen.
        let mut p = layout(&[(4, 1)], 1);
        let mut mode = RmqueueMode::Normal;
        let f = p.fallback_6_12(0, &mut mode, &mut out).unwrap();
        assert_eq!(f, Fallback { frames: 1, boosted: true, claimed: false });
        // rmqueue_bulk() remembers the steal: the next page does not try to claim (no boost).
        let boost = p.watermark_boost[0];
        p.watermark_boost[0] = 0;
        let f = p.fallback_6_12(0, &mut mode, &mut out).unwrap();
        assert_eq!((f.boosted, p.watermark_boost[0]), (false, 0));
        assert_eq!(boost, 512);
    }
}
