//! The page cache and page tables in one flat index: every page of every file and anonymous
//! region has a virtual page number (`Vpn`) whose entry says where the page is: resident in
//! a frame, evicted with a shadow entry (include/linux/xarray.h value entries), swapped out,
//! or never touched.

use pagelab_host::sparse::Table;

use crate::mm::folio::Pfn;

/// A virtual page: the index of one page of one object in [`AddressSpace`].
pub type Vpn = u32;

/// Pages per xarray node (`XA_CHUNK_SIZE`, 1 << XA_CHUNK_SHIFT): objects start on a node
/// boundary so that node = vpn >> 6, as with a file's own xarray.
pub const XA_CHUNK_SHIFT: u32 = 6;

/// A shadow entry (mm/workingset.c: pack_shadow()): the eviction timestamp or MGLRU token,
/// the memcg the eviction was charged to, and whether the page was in the workingset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shadow(u64);

impl Shadow {
    /// Bits of eviction clock a shadow keeps (the kernel keeps 36 on 64-bit with
    /// NODES_SHIFT 10; pagelab keeps more, so its clock never wraps in a run).
    pub const EVICTION_BITS: u32 = 44;
    pub const EVICTION_MASK: u64 = (1 << Self::EVICTION_BITS) - 1;

    pub fn pack(eviction: u64, memcg: u16, workingset: bool) -> Shadow {
        Shadow(((eviction & Self::EVICTION_MASK) << 17) | ((memcg as u64) << 1) | workingset as u64)
    }
    pub fn eviction(self) -> u64 {
        (self.0 >> 17) & Self::EVICTION_MASK
    }
    pub fn memcg(self) -> u16 {
        (self.0 >> 1) as u16
    }
    pub fn workingset(self) -> bool {
        self.0 & 1 != 0
    }
    /// Bits of node id a shadow keeps, above the eviction clock (the kernel's NODES_SHIFT):
    /// [`Shadow::MAX_NODES`] nodes.
    const NODE_SHIFT: u32 = Self::EVICTION_BITS + 17;
    pub const MAX_NODES: usize = 1 << (64 - Self::NODE_SHIFT);
    /// The shadow with the node the folio was evicted from (pack_shadow()'s `pgdat`); node 0
    /// leaves it as it was.
    pub fn on_node(self, nid: usize) -> Shadow {
        Shadow(self.0 | ((nid as u64) << Self::NODE_SHIFT))
    }
    /// The node of the eviction (unpack_shadow()'s `pgdat`).
    pub fn nid(self) -> usize {
        (self.0 >> Self::NODE_SHIFT) as usize
    }
    pub(crate) fn raw(self) -> u64 {
        self.0
    }
    pub(crate) fn from_raw(v: u64) -> Shadow {
        Shadow(v)
    }
}

/// What an address-space slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    Empty,
    /// Anonymous memory read before it was written: mapped to the shared zero page.
    ZeroPage,
    Resident(Pfn),
    Shadow(Shadow),
    /// Anonymous memory on swap at this slot (its shadow lives in the swap space).
    Swapped(u32),
}

const TAG_BITS: u32 = 2;
const TAG_RESIDENT: u64 = 1;
const TAG_SHADOW: u64 = 2;
const TAG_SWAP: u64 = 3;
const ZERO_PAGE: u64 = 1 << TAG_BITS;

impl Entry {
    #[inline]
    fn encode(self) -> u64 {
        match self {
            Entry::Empty => 0,
            Entry::ZeroPage => ZERO_PAGE,
            Entry::Resident(p) => ((p as u64) << TAG_BITS) | TAG_RESIDENT,
            Entry::Shadow(s) => (s.raw() << TAG_BITS) | TAG_SHADOW,
            Entry::Swapped(slot) => ((slot as u64) << TAG_BITS) | TAG_SWAP,
        }
    }
    #[inline]
    fn decode(v: u64) -> Entry {
        match v & 3 {
            TAG_RESIDENT => Entry::Resident((v >> TAG_BITS) as Pfn),
            TAG_SHADOW => Entry::Shadow(Shadow(v >> TAG_BITS)),
            TAG_SWAP => Entry::Swapped((v >> TAG_BITS) as u32),
            _ if v == ZERO_PAGE => Entry::ZeroPage,
            _ => Entry::Empty,
        }
    }
}

/// A file or an anonymous region.
#[derive(Clone, Debug)]
pub struct Object {
    pub name: String,
    pub anon: bool,
    pub base: Vpn,
    pub pages: u32,
    /// The task that owns an anonymous region.
    pub owner: Option<usize>,
    /// A file's `mapping->i_pages` lock (`xa_lock_irq()`), contended only on a machine of
    /// several CPUs ([`crate::mm::Mm::i_pages_lock`]).
    pub i_pages: crate::locking::SpinLock,
}

/// All objects and the entry of each of their pages. The entries are a flat table while it
/// is small and a sparse one beyond ([`Table`]): then memory grows with the pages touched, so
/// a file of many TiB read a little costs little.
#[derive(Clone, Debug, Default)]
pub struct AddressSpace {
    /// In order of `base` (objects are only appended).
    pub objects: Vec<Object>,
    entries: Table<u64>,
}

impl AddressSpace {
    /// Adds an object and returns its index; its pages start on a node boundary.
    pub fn add_object(&mut self, name: &str, anon: bool, pages: u32, owner: Option<usize>) -> Result<usize, String> {
        let base = self.entries.len() as u64;
        let span = (pages as u64).div_ceil(1 << XA_CHUNK_SHIFT) << XA_CHUNK_SHIFT;
        if base + span > (u32::MAX as u64) - 1 {
            return Err(format!("the scenario's files and memory exceed pagelab's 16 TiB address space (at `{name}`)"));
        }
        let id = self.objects.len();
        self.entries.try_grow((base + span) as usize, &format!("`{name}` ({pages} pages of address space)"))?;
        self.objects.push(Object { name: name.to_string(), anon, base: base as Vpn, pages, owner, i_pages: crate::locking::SpinLock::default() });
        Ok(id)
    }

    /// Grows the last object to `pages` (a replayed trace's file, whose size the trace
    /// reveals as it streams); the new pages are empty.
    pub fn grow_last_object(&mut self, id: usize, pages: u32) -> Result<(), String> {
        if id + 1 != self.objects.len() {
            return Err(format!("`{}` is not the last object of the address space and cannot grow", self.objects[id].name));
        }
        let base = self.objects[id].base as u64;
        let span = (pages as u64).div_ceil(1 << XA_CHUNK_SHIFT) << XA_CHUNK_SHIFT;
        if base + span > (u32::MAX as u64) - 1 {
            return Err(format!("`{}` outgrows pagelab's 16 TiB address space ({pages} pages)", self.objects[id].name));
        }
        let o = &mut self.objects[id];
        o.pages = o.pages.max(pages);
        self.entries.grow((base + span) as usize);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Bytes of the entry table (its index and the chunks written).
    pub fn state_bytes(&self) -> u64 {
        self.entries.state_bytes()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[inline]
    pub fn get(&self, vpn: Vpn) -> Entry {
        Entry::decode(self.entries.get(vpn as usize))
    }

    #[inline]
    pub fn set(&mut self, vpn: Vpn, e: Entry) {
        self.entries.set(vpn as usize, e.encode());
    }

    /// Stores `e` and returns what the slot held (one lookup for a get and a set).
    #[inline]
    pub fn replace(&mut self, vpn: Vpn, e: Entry) -> Entry {
        let slot = self.entries.get_mut(vpn as usize);
        let old = *slot;
        *slot = e.encode();
        Entry::decode(old)
    }

    /// The first page in `from..end` whose entry may not be [`Entry::Empty`]: the pages
    /// skipped were never touched (a sparse table's unwritten chunks). A walk over an
    /// object's pages with it costs what the object used, not its size.
    #[inline]
    pub fn next_touched(&self, from: u64, end: u64) -> Option<Vpn> {
        let v = self.entries.next_written(from as usize) as u64;
        (v < end).then_some(v as Vpn)
    }

    /// The page is resident: its frame.
    #[inline]
    pub fn resident(&self, vpn: Vpn) -> Option<Pfn> {
        let v = self.entries.get(vpn as usize);
        (v & 3 == TAG_RESIDENT).then_some((v >> TAG_BITS) as Pfn)
    }

    /// Hints the CPU to fetch the entry of `vpn` (the simulator looks ahead in the access
    /// stream; no effect on results).
    #[inline(always)]
    pub fn prefetch(&self, vpn: Vpn) {
        if let Some(e) = self.entries.try_ref(vpn as usize) {
            pagelab_host::prefetch(e);
        }
    }

    /// The object a page belongs to: the last one starting at or before it (objects are
    /// in order of their bases, and scenarios have few).
    #[inline]
    pub fn object_of(&self, vpn: Vpn) -> usize {
        self.objects.partition_point(|o| o.base <= vpn) - 1
    }

    /// Number of xarray nodes (for the shadow-node bookkeeping).
    pub fn nodes(&self) -> usize {
        self.entries.len() >> XA_CHUNK_SHIFT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip() {
        let s = Shadow::pack(0x0FFF_FFFF_FFFF, 0xBEEF, true);
        assert_eq!((s.eviction(), s.memcg(), s.workingset()), (0x0FFF_FFFF_FFFF, 0xBEEF, true));
        for e in [Entry::Empty, Entry::ZeroPage, Entry::Resident(7), Entry::Resident(u32::MAX - 1), Entry::Shadow(s), Entry::Swapped(123)] {
            assert_eq!(Entry::decode(e.encode()), e);
        }
    }

    #[test]
    fn objects_start_on_node_boundaries() {
        let mut a = AddressSpace::default();
        let f = a.add_object("f", false, 65, None).unwrap();
        let g = a.add_object("g", true, 1, Some(0)).unwrap();
        assert_eq!(a.objects[f].base, 0);
        assert_eq!(a.objects[g].base, 128);
        assert_eq!(a.object_of(64), f);
        assert_eq!(a.object_of(128), g);
    }

    #[test]
    fn only_the_last_object_grows_and_its_new_pages_are_empty() {
        let mut a = AddressSpace::default();
        let f = a.add_object("f", false, 10, None).unwrap();
        a.set(3, Entry::Resident(5));
        a.grow_last_object(f, 200).unwrap();
        assert_eq!((a.objects[f].pages, a.len(), a.nodes()), (200, 256, 4));
        assert_eq!((a.get(3), a.get(199)), (Entry::Resident(5), Entry::Empty));
        assert_eq!(a.object_of(255), f);
        let g = a.add_object("g", true, 1, Some(0)).unwrap();
        assert!(a.grow_last_object(f, 300).unwrap_err().contains("not the last object"));
        assert!(a.grow_last_object(g, u32::MAX - 1).unwrap_err().contains("address space"));
    }
}
