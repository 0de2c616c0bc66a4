//! Workingset detection (mm/workingset.c): the nonresident clock, shadow entries of the
//! classic LRU, the refault-distance test, and the shadow-node shrinker that bounds how many
//! shadow entries are kept. MGLRU's eviction tokens live in `policy::lru_gen`.

use pagelab_host::sparse::Table;

use crate::mm::folio::{pg, Pfn, NIL};
use crate::mm::mapping::{Entry, Shadow, XA_CHUNK_SHIFT};
use crate::mm::memcontrol::{MemcgId, StatItem};
use crate::mm::swap::lru_note_cost_refault;
use crate::mm::vmstat::{by_type, Ev, Lru};
use crate::mm::Mm;

/// Models mm/workingset.c: workingset_age_nonresident() (6.1/6.12): advance the clock of the
/// lruvec and of every ancestor, so each level's clock counts its whole subtree.
pub fn workingset_age_nonresident(mm: &mut Mm, memcg: MemcgId, nr: u64) {
    let mut cur = Some(memcg);
    while let Some(c) = cur {
        let cg = mm.memcgs.get_mut(c);
        cg.lruvec.nonresident_age += nr;
        cur = cg.parent;
    }
}

/// Models mm/workingset.c: workingset_activation() (6.1/6.12): a page promoted by
/// folio_mark_accessed() ages its own lruvec's clock.
pub fn workingset_activation(mm: &mut Mm, pfn: Pfn) {
    let memcg = mm.folio_memcg(pfn);
    workingset_age_nonresident(mm, memcg, 1);
}

/// Models mm/workingset.c: workingset_eviction() for the classic LRU (6.1/6.12): the shadow
/// records the clock of the reclaim target's lruvec, which the eviction then ages.
pub fn classic_eviction(mm: &mut Mm, pfn: Pfn, target: MemcgId) -> Shadow {
    let eviction = mm.memcgs.get(target).lruvec.nonresident_age;
    workingset_age_nonresident(mm, target, 1);
    Shadow::pack(eviction, target, mm.folios.test(pfn, pg::WORKINGSET))
}

/// The counters of a refault: which type, and the memcg that now owns the page.
fn refault_events(file: bool) -> (Ev, Ev, Ev) {
    (
        by_type(file, Ev::WorkingsetRefaultAnon, Ev::WorkingsetRefaultFile),
        by_type(file, Ev::WorkingsetActivateAnon, Ev::WorkingsetActivateFile),
        by_type(file, Ev::WorkingsetRestoreAnon, Ev::WorkingsetRestoreFile),
    )
}

/// Counts a workingset event on the page's memcg and node (mod_lruvec_state()).
pub fn count_workingset(mm: &mut Mm, memcg: MemcgId, e: Ev, nr: u64) {
    mm.count_both(memcg, e, nr);
    match e {
        Ev::WorkingsetActivateAnon => mm.memcgs.mod_state(memcg, StatItem::WorkingsetActivateAnon, nr as i64),
        Ev::WorkingsetActivateFile => mm.memcgs.mod_state(memcg, StatItem::WorkingsetActivateFile, nr as i64),
        _ => {}
    }
}

/// The workingset size a refault is compared with, from the eviction lruvec's statistics as
/// reclaim sees them, and exactly (for the count of decisions the staleness changed): active
/// file pages, plus inactive file for anon refaults, plus anon when swap is available (5.7:
/// active file only). Returns (as seen, exact).
fn refault_workingset_sizes(mm: &Mm, memcg: MemcgId, file: bool) -> (u64, u64) {
    let mut lrus = [Lru::ActiveFile; 4];
    let mut n = 1;
    if mm.cfg.kernel.anon_workingset() {
        if !file {
            lrus[n] = Lru::InactiveFile;
            n += 1;
        }
        // 6.1 asks whether the page's new memcg has swap, 6.12 the eviction memcg; pagelab
        // has no swap.max, so both read the device's free slots.
        if mm.can_swap() {
            lrus[n] = Lru::ActiveAnon;
            n += 1;
            if file {
                lrus[n] = Lru::InactiveAnon;
                n += 1;
            }
        }
    }
    lrus[..n]
        .iter()
        .fold((0, 0), |(seen, exact), &lru| (seen + mm.memcgs.page_state(memcg, StatItem::Lru(lru)), exact + mm.memcgs.exact_state(memcg, StatItem::Lru(lru))))
}

/// Models mm/workingset.c: workingset_refault() for the classic LRU, 6.1 and 6.12 (the
/// `workingset_test_recent()` split of 6.12 folded in), and 5.7's file-only variant.
///
/// Called before the page joins the LRU: a recent refault sets PG_active, so the page is
/// added to the active list. Returns whether the refault was judged recent.
pub fn classic_refault(mm: &mut Mm, pfn: Pfn, shadow: Shadow) -> bool {
    let kernel = mm.cfg.kernel;
    let file = mm.folios.get(pfn).is_file_lru();
    if !kernel.anon_workingset() && !file {
        return false; // anon workingset detection came with 5.9
    }
    let memcg = mm.folio_memcg(pfn);
    let eviction_memcg = shadow.memcg();
    let (refault_ev, activate_ev, restore_ev) = refault_events(file);
    count_workingset(mm, memcg, refault_ev, 1);

    let now = mm.now();
    let flushed_before = mm.memcgs.flushed_memcgs;
    mm.memcgs.flush_for_refault(eviction_memcg, now);
    let flush_work = mm.memcgs.flushed_memcgs - flushed_before;
    mm.cpu(flush_work * mm.cfg.costs.rstat_flush_memcg_ns);
    let age = mm.memcgs.get(eviction_memcg).lruvec.nonresident_age;
    let distance = age.wrapping_sub(shadow.eviction()) & Shadow::EVICTION_MASK;
    let (workingset, exact_workingset) = refault_workingset_sizes(mm, eviction_memcg, file);
    let recent = distance <= workingset;
    if recent != (distance <= exact_workingset) {
        mm.memcgs.stale_refault_decisions += 1;
    }
    if !recent {
        return false;
    }
    mm.folios.set(pfn, pg::ACTIVE);
    workingset_age_nonresident(mm, memcg, 1);
    count_workingset(mm, memcg, activate_ev, 1);
    if shadow.workingset() && kernel.anon_workingset() {
        mm.folios.set(pfn, pg::WORKINGSET);
        lru_note_cost_refault(mm, memcg, file);
        count_workingset(mm, memcg, restore_ev, 1);
    }
    true
}

// ---- shadow nodes ------------------------------------------------------------------------

/// One xarray node's bookkeeping, in one 24-byte record so that an update touches one
/// cache line. Which slots hold shadows is a bitmap, so that freeing a node visits its
/// shadows only (a node the shrinker frees holds a few shadows among 64 slots).
#[derive(Clone, Copy, Debug)]
struct Node {
    /// Slots that hold shadow entries (their count is xa_node->nr_values).
    shadows: u64,
    prev: u32,
    next: u32,
    /// The memcg whose list_lru holds the node.
    owner: MemcgId,
    /// Entries that are pages.
    present: u8,
    on_list: bool,
}

impl Default for Node {
    fn default() -> Node {
        Node { shadows: 0, prev: NIL, next: NIL, owner: 0, present: 0, on_list: false }
    }
}

impl Node {
    fn is_empty(&self) -> bool {
        self.shadows == 0 && self.present == 0
    }
}

/// The slot of `index` within its node, as a bit.
#[inline]
fn slot_bit(index: u32) -> u64 {
    1 << (index & ((1 << XA_CHUNK_SHIFT) - 1))
}

/// The xarray nodes of one address space (files, or the swap space), with the list_lru of
/// nodes that hold only shadow entries (mm/workingset.c: shadow_nodes).
#[derive(Clone, Debug, Default)]
pub struct ShadowNodes {
    /// Flat, or sparse for a huge address space (memory then grows with the nodes used).
    nodes: Table<Node>,
    /// Per memcg: (head = oldest, tail = newest, length).
    lists: Vec<(u32, u32, u64)>,
    deferred: Vec<u64>,
}

impl ShadowNodes {
    pub fn new(nodes: usize, memcgs: usize) -> ShadowNodes {
        ShadowNodes { nodes: Table::new(nodes, Node::default()), lists: vec![(NIL, NIL, 0); memcgs], deferred: vec![0; memcgs] }
    }

    /// Covers `nodes` nodes (the address space grew); the new ones are empty.
    pub fn grow(&mut self, nodes: usize) {
        self.nodes.grow(nodes);
    }

    /// Bytes of the node tables.
    pub fn state_bytes(&self) -> u64 {
        self.nodes.state_bytes()
    }

    /// workingset_nodes: nodes holding only shadows.
    pub fn nr_shadow_nodes(&self) -> u64 {
        self.lists.iter().map(|l| l.2).sum()
    }

    pub fn nr_on_list(&self, memcg: MemcgId) -> u64 {
        self.lists[memcg as usize].2
    }

    /// A page entered the node; a node that had no entries is charged to `memcg` (the
    /// xa_node is allocated, and accounted, by whoever fills it first).
    #[inline]
    pub fn page_added(&mut self, index: u32, memcg: MemcgId) {
        let n = (index >> XA_CHUNK_SHIFT) as usize;
        let node = &mut self.nodes[n];
        if node.is_empty() {
            node.owner = memcg;
        }
        node.present += 1;
        self.update(n);
    }
    #[inline]
    pub fn page_removed(&mut self, index: u32) {
        let n = (index >> XA_CHUNK_SHIFT) as usize;
        self.nodes[n].present -= 1;
        self.update(n);
    }
    /// A shadow entry was stored; a node that had no entries is charged to `memcg`.
    #[inline]
    pub fn shadow_added(&mut self, index: u32, memcg: MemcgId) {
        let n = (index >> XA_CHUNK_SHIFT) as usize;
        let node = &mut self.nodes[n];
        if node.is_empty() {
            node.owner = memcg;
        }
        node.shadows |= slot_bit(index);
        self.update(n);
    }
    #[inline]
    pub fn shadow_removed(&mut self, index: u32) {
        let n = (index >> XA_CHUNK_SHIFT) as usize;
        self.nodes[n].shadows &= !slot_bit(index);
        self.update(n);
    }
    /// An evicted page left its shadow in its slot: page_removed() then shadow_added(),
    /// with one list update.
    #[inline]
    pub fn page_replaced_by_shadow(&mut self, index: u32, memcg: MemcgId) {
        let n = (index >> XA_CHUNK_SHIFT) as usize;
        let node = &mut self.nodes[n];
        node.present -= 1;
        if node.is_empty() {
            node.owner = memcg;
        }
        node.shadows |= slot_bit(index);
        self.update(n);
    }
    /// A refaulting page took its shadow's slot: shadow_removed() then page_added(), with
    /// one list update.
    #[inline]
    pub fn shadow_replaced_by_page(&mut self, index: u32, memcg: MemcgId) {
        let n = (index >> XA_CHUNK_SHIFT) as usize;
        self.nodes[n].shadows &= !slot_bit(index);
        if self.nodes[n].is_empty() {
            // Off the old owner's list before the node changes hands.
            if self.nodes[n].on_list {
                self.unlink(n);
            }
            self.nodes[n].owner = memcg;
        }
        self.nodes[n].present += 1;
        self.update(n);
    }

    /// Models workingset_update_node(): a node is on the list iff all its entries are shadows.
    #[inline]
    fn update(&mut self, n: usize) {
        let node = self.nodes[n];
        let shadow_only = node.shadows != 0 && node.present == 0;
        if shadow_only && !node.on_list {
            self.link(n);
        } else if !shadow_only && node.on_list {
            self.unlink(n);
        }
    }

    fn link(&mut self, n: usize) {
        let m = self.nodes[n].owner as usize;
        let (head, tail, len) = self.lists[m];
        self.nodes[n].prev = tail;
        self.nodes[n].next = NIL;
        if tail == NIL {
            self.lists[m] = (n as u32, n as u32, len + 1);
        } else {
            self.nodes[tail as usize].next = n as u32;
            self.lists[m] = (head, n as u32, len + 1);
        }
        self.nodes[n].on_list = true;
    }

    fn unlink(&mut self, n: usize) {
        let Node { owner, prev: p, next: nx, .. } = self.nodes[n];
        let l = &mut self.lists[owner as usize];
        if p == NIL {
            l.0 = nx;
        } else {
            self.nodes[p as usize].next = nx;
        }
        if nx == NIL {
            l.1 = p;
        } else {
            self.nodes[nx as usize].prev = p;
        }
        l.2 -= 1;
        self.nodes[n].on_list = false;
    }

    /// Empties a shadow-only node: takes it off its list and returns the first index of
    /// each of its shadows, as a bitmap relative to the node's first index.
    fn take_shadows(&mut self, n: usize) -> u64 {
        debug_assert!(self.nodes[n].on_list && self.nodes[n].present == 0);
        let shadows = std::mem::take(&mut self.nodes[n].shadows);
        self.unlink(n);
        shadows
    }

    fn oldest(&self, memcg: MemcgId) -> Option<usize> {
        let h = self.lists[memcg as usize].0;
        (h != NIL).then_some(h as usize)
    }
}

/// Which address space a node list belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    File,
    Swap,
}

/// `SHRINK_BATCH`.
const SHRINK_BATCH: u64 = 128;

/// Models mm/workingset.c: count_shadow_nodes() + scan_shadow_nodes() driven by
/// mm/vmscan.c: do_shrink_slab() with seeks = 0 (6.1/6.12): when a memcg's shadow-only
/// nodes exceed 1/8 of its LRU pages, free the oldest nodes with all their shadows.
pub fn shrink_shadow_nodes(mm: &mut Mm, memcg: MemcgId, priority: u32) {
    let lru_pages: u64 = mm.memcgs.get(memcg).lruvec.lru_size.iter().sum();
    let max_nodes = lru_pages >> (XA_CHUNK_SHIFT - 3);
    for space in [Space::File, Space::Swap] {
        let nodes = match space {
            Space::File => &mm.file_nodes,
            Space::Swap => &mm.swap_nodes,
        };
        let count = nodes.nr_on_list(memcg);
        if count <= max_nodes {
            continue;
        }
        let freeable = count - max_nodes;
        let deferred = nodes.deferred[memcg as usize];
        let mut total_scan = ((deferred >> priority) + freeable / 2).min(2 * freeable);
        let mut scanned = 0;
        while total_scan >= SHRINK_BATCH || total_scan >= freeable {
            let nr = SHRINK_BATCH.min(total_scan);
            let mut done = 0;
            while done < nr {
                let n = match space {
                    Space::File => mm.file_nodes.oldest(memcg),
                    Space::Swap => mm.swap_nodes.oldest(memcg),
                };
                let Some(n) = n else { break };
                reclaim_shadow_node(mm, space, n, memcg);
                done += 1;
            }
            mm.count(Ev::SlabsScanned, done);
            if done == 0 {
                break;
            }
            total_scan -= done.min(total_scan);
            scanned += done;
        }
        let nodes = match space {
            Space::File => &mut mm.file_nodes,
            Space::Swap => &mut mm.swap_nodes,
        };
        nodes.deferred[memcg as usize] = (deferred + freeable / 2).saturating_sub(scanned);
    }
}

/// Models mm/workingset.c: shadow_lru_isolate(): delete the node and every shadow in it.
fn reclaim_shadow_node(mm: &mut Mm, space: Space, n: usize, memcg: MemcgId) {
    let first = (n as u32) << XA_CHUNK_SHIFT;
    let mut shadows = match space {
        Space::File => mm.file_nodes.take_shadows(n),
        Space::Swap => mm.swap_nodes.take_shadows(n),
    };
    while shadows != 0 {
        let index = first + shadows.trailing_zeros();
        shadows &= shadows - 1;
        match space {
            Space::File => {
                debug_assert!(matches!(mm.space.get(index), Entry::Shadow(_)));
                mm.space.set(index, Entry::Empty);
            }
            Space::Swap => {
                let had = mm.swap.take_shadow(index);
                debug_assert!(had.is_some());
            }
        }
    }
    mm.count_both(memcg, Ev::WorkingsetNodeReclaim, 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_listed_only_while_it_holds_nothing_but_shadows() {
        let mut s = ShadowNodes::new(4, 2);
        s.page_added(0, 0);
        s.shadow_added(1, 1);
        assert_eq!(s.nr_shadow_nodes(), 0, "a page is still present");
        s.page_removed(0);
        assert_eq!(s.nr_on_list(0), 1, "the node belongs to the memcg of its first entry");
        s.shadow_added(64, 1);
        assert_eq!(s.nr_on_list(1), 1);
        s.page_added(65, 0);
        assert_eq!(s.nr_on_list(1), 0);
        s.shadow_removed(1);
        assert_eq!(s.nr_shadow_nodes(), 0);
    }

    #[test]
    fn a_refault_into_a_shadow_only_node_takes_it_off_its_owners_list() {
        let mut s = ShadowNodes::new(2, 2);
        s.shadow_added(3, 1);
        assert_eq!(s.nr_on_list(1), 1);
        // The page refaults into memcg 0: the node leaves memcg 1's list and becomes 0's.
        s.shadow_replaced_by_page(3, 0);
        assert_eq!(s.nr_shadow_nodes(), 0);
        s.page_replaced_by_shadow(3, 0);
        assert_eq!((s.nr_on_list(0), s.nr_on_list(1)), (1, 0));
        assert_eq!(s.take_shadows(0), 1 << 3, "the shrinker finds the one shadow");
        assert_eq!(s.nr_shadow_nodes(), 0);
    }
}
