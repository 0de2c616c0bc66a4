//! The exact LRU keyed by object id: the recency list threaded through the slots of its
//! own hash table.

use pagelab_trace::{mix64, prefetch};

use super::table_size;

const EMPTY: u32 = u32::MAX;

/// One slot of the open-addressed table, which is also the LRU list node of its object:
/// `prev`/`next` are slot numbers (`EMPTY` in `prev` marks a free slot), the sentinel is the
/// slot just past the hashed range.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Slot {
    key: u64,
    prev: u32,
    next: u32,
}

const FREE: Slot = Slot { key: 0, prev: EMPTY, next: EMPTY };

/// Exact LRU over object ids: linear probing over a power-of-two table kept at most a
/// quarter full (an eighth while small: `table_size`), ids scrambled by [`mix64`],
/// backward-shift deletion (no tombstones, so probe lengths stay short however long the
/// trace), the recency list threaded through the slots. Moving an entry during a deletion
/// re-points its two list neighbours, so list order never changes behind the policy's back.
pub struct KeyedLru {
    slots: Vec<Slot>,
    /// Hashed slots (`slots.len() - 1`; the last slot is the sentinel).
    size: usize,
    shift: u32,
    capacity: u64,
    resident: u64,
    evictions: u64,
}

impl KeyedLru {
    pub fn new(capacity: u64) -> KeyedLru {
        let mut c = KeyedLru { slots: Vec::new(), size: 0, shift: 0, capacity, resident: 0, evictions: 0 };
        // Sized for the capacity, up to 2^20 objects at first; larger caches grow as they fill.
        c.rebuild(table_size(capacity.min(1 << 20)));
        c
    }

    /// Slot `i`. Every index used is below `slots.len()`: a masked home or probe position,
    /// the sentinel, or a list link, which always names a slot (checked by [`KeyedLru::check`]
    /// in the tests and here in debug builds).
    #[inline(always)]
    fn at(&self, i: usize) -> &Slot {
        debug_assert!(i < self.slots.len());
        // SAFETY: see above; `i < slots.len()` holds for every index this type computes.
        unsafe { self.slots.get_unchecked(i) }
    }

    #[inline(always)]
    fn at_mut(&mut self, i: usize) -> &mut Slot {
        debug_assert!(i < self.slots.len());
        // SAFETY: as for `at`.
        unsafe { self.slots.get_unchecked_mut(i) }
    }

    #[inline(always)]
    fn sentinel(&self) -> u32 {
        self.size as u32
    }

    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        (hash >> self.shift) as usize
    }

    /// Starts prefetching the home slot of an object (`hash`: its [`mix64`]), which an
    /// access will soon probe.
    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        prefetch(self.at(self.home(hash)));
    }

    /// The slot holding `key`, or the free slot ending its probe sequence.
    #[inline(always)]
    fn find(&self, key: u64, hash: u64) -> (usize, bool) {
        let mask = self.size - 1;
        let mut i = self.home(hash);
        loop {
            let s = self.at(i);
            if s.prev == EMPTY {
                return (i, false);
            }
            if s.key == key {
                return (i, true);
            }
            i = (i + 1) & mask;
        }
    }

    /// One access; true on a hit.
    #[inline(always)]
    pub fn access(&mut self, key: u64) -> bool {
        self.access_hashed(key, mix64(key))
    }

    /// One access to `key` whose [`mix64`] is `hash`; true on a hit.
    #[inline(always)]
    pub fn access_hashed(&mut self, key: u64, hash: u64) -> bool {
        let (i, hit) = self.find(key, hash);
        if hit {
            let head = self.sentinel() as usize;
            if self.at(head).next as usize != i {
                self.unlink(i);
                self.link_head(i);
            }
            return true;
        }
        if self.capacity == 0 {
            return false;
        }
        let i = if self.resident == self.capacity {
            self.evict_tail();
            self.evictions += 1;
            self.find(key, hash).0 // the deletion may have shifted the probe sequence
        } else {
            self.resident += 1;
            if self.resident as usize * 4 > self.size {
                self.rebuild(self.size * 2);
                self.find(key, hash).0
            } else {
                i
            }
        };
        self.at_mut(i).key = key;
        self.link_head(i);
        false
    }

    #[inline(always)]
    fn unlink(&mut self, i: usize) {
        let Slot { prev, next, .. } = *self.at(i);
        self.at_mut(prev as usize).next = next;
        self.at_mut(next as usize).prev = prev;
    }

    #[inline(always)]
    fn link_head(&mut self, i: usize) {
        let s = self.sentinel();
        let head = self.at(s as usize).next;
        self.at_mut(i).prev = s;
        self.at_mut(i).next = head;
        self.at_mut(head as usize).prev = i as u32;
        self.at_mut(s as usize).next = i as u32;
    }

    /// Removes the least recent object: unlinks it, then closes the gap its slot leaves in
    /// the probe sequences by shifting later entries of the cluster back.
    #[inline(always)]
    fn evict_tail(&mut self) {
        let s = self.sentinel() as usize;
        let mut gap = self.at(s).prev as usize;
        self.unlink(gap);
        // The next victims are known: warm the slot that becomes the tail after the next
        // eviction (the new tail itself was just touched by the unlink).
        let new_tail = self.at(s).prev as usize;
        prefetch(self.at(self.at(new_tail).prev as usize));
        let mask = self.size - 1;
        let mut j = gap;
        loop {
            j = (j + 1) & mask;
            let e = *self.at(j);
            if e.prev == EMPTY {
                break;
            }
            // `e` may move into the gap if its home is not cyclically within (gap, j].
            let home = self.home(mix64(e.key));
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(gap) & mask) {
                *self.at_mut(gap) = e;
                self.at_mut(e.prev as usize).next = gap as u32;
                self.at_mut(e.next as usize).prev = gap as u32;
                gap = j;
            }
        }
        *self.at_mut(gap) = FREE;
    }

    /// A new table of `size` hashed slots with the resident objects re-inserted in their
    /// recency order.
    fn rebuild(&mut self, size: usize) {
        assert!(size < EMPTY as usize, "more than 2^30 resident objects");
        let mut order = Vec::with_capacity(self.resident as usize);
        if self.size > 0 {
            let s = self.sentinel();
            let mut i = self.slots[s as usize].prev;
            while i != s {
                order.push(self.slots[i as usize].key);
                i = self.slots[i as usize].prev;
            }
        }
        self.slots = pagelab_host::hugevec::filled(size + 1, FREE);
        self.size = size;
        self.shift = 64 - size.trailing_zeros();
        let s = self.sentinel();
        self.slots[s as usize] = Slot { key: 0, prev: s, next: s };
        for key in order {
            let (i, _) = self.find(key, mix64(key));
            self.slots[i].key = key;
            self.link_head(i);
        }
    }

    pub fn resident(&self) -> u64 {
        self.resident
    }

    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    pub fn state_bytes(&self) -> u64 {
        (self.slots.capacity() * std::mem::size_of::<Slot>()) as u64
    }

    /// The resident objects from most to least recent (tests).
    pub fn order(&self) -> Vec<u64> {
        let s = self.sentinel();
        let mut v = Vec::new();
        let mut i = self.slots[s as usize].next;
        while i != s {
            v.push(self.slots[i as usize].key);
            i = self.slots[i as usize].next;
        }
        v
    }

    /// Checks the list and the table agree and every object is reachable from its home
    /// slot without crossing a free slot (tests).
    pub fn check(&self) -> Result<(), String> {
        // The links name slots in range and agree both ways: what makes `at` sound.
        let s = self.sentinel() as usize;
        for (i, slot) in self.slots.iter().enumerate().filter(|&(i, slot)| i == s || slot.prev != EMPTY) {
            let (prev, next) = (slot.prev as usize, slot.next as usize);
            if prev >= self.slots.len() || next >= self.slots.len() {
                return Err(format!("slot {i}: link out of range ({prev}, {next})"));
            }
            if self.slots[next].prev as usize != i || self.slots[prev].next as usize != i {
                return Err(format!("slot {i}: its neighbours do not link back"));
            }
        }
        let order = self.order();
        if order.len() as u64 != self.resident {
            return Err(format!("list has {} objects, resident {}", order.len(), self.resident));
        }
        let used = self.slots[..self.size].iter().filter(|s| s.prev != EMPTY).count();
        if used != order.len() {
            return Err(format!("{used} slots used, {} objects on the list", order.len()));
        }
        for &k in &order {
            if !self.find(k, mix64(k)).1 {
                return Err(format!("object {k} on the list but not found from its home slot"));
            }
        }
        Ok(())
    }
}

impl super::KeyedCache for KeyedLru {
    #[inline(always)]
    fn prefetch(&self, hash: u64) {
        KeyedLru::prefetch(self, hash)
    }
    #[inline(always)]
    fn access_hashed(&mut self, key: u64, hash: u64) -> bool {
        KeyedLru::access_hashed(self, key, hash)
    }
    fn evictions(&self) -> u64 {
        KeyedLru::evictions(self)
    }
    fn state_bytes(&self) -> u64 {
        KeyedLru::state_bytes(self)
    }
}
