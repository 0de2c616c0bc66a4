//! FIFO and CLOCK keyed by object id: the cached objects in a ring, in insertion order, and
//! an index from object id to ring position.

use pagelab_trace::{mix64, prefetch};

use super::table_size;

const FREE: u32 = u32::MAX;
/// How many evictions ahead the victim's index slot is prefetched.
const VICTIMS_AHEAD: usize = 8;

/// One slot of the index: an object id and its ring position (`FREE`: an empty slot).
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Slot {
    key: u64,
    pos: u32,
}

const EMPTY_SLOT: Slot = Slot { key: 0, pos: FREE };

/// Object id → ring position: linear probing over a power-of-two table (sized by
/// [`table_size`], grown when a quarter full), ids scrambled by [`mix64`], backward-shift
/// deletion. Entries move when a deletion closes a gap; ring positions never do.
struct KeyIndex {
    slots: Vec<Slot>,
    shift: u32,
    len: u64,
}

impl KeyIndex {
    fn new(objects: u64) -> KeyIndex {
        let size = table_size(objects.min(1 << 20));
        KeyIndex { slots: pagelab_host::hugevec::filled(size, EMPTY_SLOT), shift: 64 - size.trailing_zeros(), len: 0 }
    }

    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        (hash >> self.shift) as usize
    }

    #[inline(always)]
    fn prefetch(&self, hash: u64) {
        prefetch(&self.slots[self.home(hash)]);
    }

    /// The slot holding `key`, or the free slot ending its probe sequence.
    #[inline(always)]
    fn find(&self, key: u64, hash: u64) -> (usize, bool) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(hash);
        loop {
            let s = &self.slots[i];
            if s.pos == FREE {
                return (i, false);
            }
            if s.key == key {
                return (i, true);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `key` (not present) at ring position `pos`.
    fn insert(&mut self, key: u64, hash: u64, pos: u32) {
        self.len += 1;
        if self.len * 4 > self.slots.len() as u64 {
            self.grow();
        }
        let (i, _) = self.find(key, hash);
        self.slots[i] = Slot { key, pos };
    }

    /// Removes `key` (present), closing the gap by shifting later entries of its cluster back.
    fn remove(&mut self, key: u64) {
        let (mut gap, found) = self.find(key, mix64(key));
        debug_assert!(found, "removing an object the index does not hold");
        self.len -= 1;
        let mask = self.slots.len() - 1;
        let mut j = gap;
        loop {
            j = (j + 1) & mask;
            let e = self.slots[j];
            if e.pos == FREE {
                break;
            }
            // `e` may move into the gap if its home is not cyclically within (gap, j].
            let home = self.home(mix64(e.key));
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(gap) & mask) {
                self.slots[gap] = e;
                gap = j;
            }
        }
        self.slots[gap] = EMPTY_SLOT;
    }

    #[cold]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        let size = old.len() * 2;
        self.slots = pagelab_host::hugevec::filled(size, EMPTY_SLOT);
        self.shift = 64 - size.trailing_zeros();
        for s in old.into_iter().filter(|s| s.pos != FREE) {
            let (i, _) = self.find(s.key, mix64(s.key));
            self.slots[i] = s;
        }
    }
}

/// FIFO (libCacheSim's `FIFO`) or CLOCK with one reference bit (its `Clock`), over object
/// ids: the same rules as [`crate::Fifo`] and [`crate::Clock`], which keep per-page arrays.
pub struct KeyedRing {
    index: KeyIndex,
    /// The cached objects in insertion order from `hand` on (a full ring wraps).
    ring: Vec<u64>,
    /// CLOCK's reference bit per ring position; empty for FIFO.
    referenced: Vec<bool>,
    clock: bool,
    capacity: usize,
    hand: usize,
    evictions: u64,
}

impl KeyedRing {
    pub fn fifo(capacity: u64) -> KeyedRing {
        KeyedRing::new(capacity, false)
    }

    pub fn clock(capacity: u64) -> KeyedRing {
        KeyedRing::new(capacity, true)
    }

    fn new(capacity: u64, clock: bool) -> KeyedRing {
        let capacity = capacity.min(u32::MAX as u64 - 1) as usize;
        KeyedRing { index: KeyIndex::new(capacity as u64), ring: Vec::new(), referenced: Vec::new(), clock, capacity, hand: 0, evictions: 0 }
    }

    /// One access; true on a hit.
    pub fn access(&mut self, key: u64) -> bool {
        self.access_hashed(key, mix64(key))
    }

    /// One access to `key` whose [`mix64`] is `hash`; true on a hit.
    #[inline(always)]
    pub fn access_hashed(&mut self, key: u64, hash: u64) -> bool {
        let (i, hit) = self.index.find(key, hash);
        if hit {
            if self.clock {
                self.referenced[self.index.slots[i].pos as usize] = true;
            }
            return true;
        }
        if self.capacity == 0 {
            return false;
        }
        let pos = if self.ring.len() < self.capacity {
            self.ring.push(key);
            if self.clock {
                self.referenced.push(false);
            }
            self.ring.len() - 1
        } else {
            self.evict()
        };
        self.ring[pos] = key;
        self.index.insert(key, hash, pos as u32);
        false
    }

    /// Frees the ring position at the hand: CLOCK first gives every referenced object it
    /// passes a second chance (clearing its bit), FIFO takes the oldest. Returns the position.
    fn evict(&mut self) -> usize {
        while self.clock && self.referenced[self.hand] {
            self.referenced[self.hand] = false;
            self.advance();
        }
        let pos = self.hand;
        self.index.remove(self.ring[pos]);
        self.evictions += 1;
        self.advance();
        // The objects after the hand are the next victims (for CLOCK, unless referenced):
        // warm the index slot a coming eviction will delete.
        let ahead = self.ring[(self.hand + VICTIMS_AHEAD) % self.capacity];
        self.index.prefetch(mix64(ahead));
        pos
    }

    #[inline(always)]
    fn advance(&mut self) {
        self.hand += 1;
        if self.hand == self.capacity {
            self.hand = 0;
        }
    }

    pub fn resident(&self) -> u64 {
        self.index.len
    }

    /// The cached objects from the hand on, with their reference bits (tests).
    pub fn order(&self) -> Vec<(u64, bool)> {
        let n = self.ring.len();
        (0..n).map(|k| (k + self.hand) % n.max(1)).map(|p| (self.ring[p], self.clock && self.referenced[p])).collect()
    }

    /// Checks that the index and the ring agree (tests).
    pub fn check(&self) -> Result<(), String> {
        if self.index.len != self.ring.len() as u64 {
            return Err(format!("index holds {} objects, ring {}", self.index.len, self.ring.len()));
        }
        for (p, &k) in self.ring.iter().enumerate() {
            match self.index.find(k, mix64(k)) {
                (i, true) if self.index.slots[i].pos as usize == p => {}
                _ => return Err(format!("object {k} at ring position {p} is not indexed there")),
            }
        }
        Ok(())
    }
}

impl super::KeyedCache for KeyedRing {
    #[inline(always)]
    fn prefetch(&self, hash: u64) {
        self.index.prefetch(hash)
    }
    #[inline(always)]
    fn access_hashed(&mut self, key: u64, hash: u64) -> bool {
        KeyedRing::access_hashed(self, key, hash)
    }
    fn evictions(&self) -> u64 {
        self.evictions
    }
    fn state_bytes(&self) -> u64 {
        (self.index.slots.capacity() * std::mem::size_of::<Slot>() + self.ring.capacity() * 8 + self.referenced.capacity()) as u64
    }
}
