//! LFU: evicts the page with the fewest accesses since it entered the cache, the least
//! recently used of those on a tie (cache_ext's LFU keeps a frequency per folio the same
//! way; libCacheSim's `LFU` breaks ties the same way). Counts are forgotten on eviction.

use std::collections::BTreeSet;

use pagelab_host::hugevec::filled as huge_vec;

use crate::online::{access_online, Online};
use crate::Cache;

/// Per page: (accesses, the tick of its last access) while cached; an ordered set of them
/// picks the victim. O(log n) per operation.
pub struct Lfu {
    capacity: u64,
    /// Per page: (count, tick); count 0: not cached.
    key: Vec<(u32, u64)>,
    order: BTreeSet<(u32, u64, u32)>,
    tick: u64,
    evictions: u64,
}

impl Lfu {
    pub fn new(capacity: u64, pages_hint: usize) -> Lfu {
        Lfu { capacity, key: huge_vec(pages_hint, (0, 0)), order: BTreeSet::new(), tick: 0, evictions: 0 }
    }

    /// One access; true on a hit.
    pub fn access(&mut self, page: u32) -> bool {
        let capacity = self.capacity;
        access_online(self, page, capacity)
    }

    fn grow(&mut self, page: u32) {
        if page as usize >= self.key.len() {
            self.key.resize((page as usize + 1).max(self.key.len() * 2), (0, 0));
        }
    }
}

impl Online for Lfu {
    fn contains(&self, page: u32) -> bool {
        self.key.get(page as usize).is_some_and(|k| k.0 != 0)
    }
    fn hit(&mut self, page: u32) {
        let (n, t) = self.key[page as usize];
        self.order.remove(&(n, t, page));
        self.tick += 1;
        let k = (n.saturating_add(1), self.tick);
        self.key[page as usize] = k;
        self.order.insert((k.0, k.1, page));
    }
    fn insert(&mut self, page: u32) {
        self.grow(page);
        self.tick += 1;
        self.key[page as usize] = (1, self.tick);
        self.order.insert((1, self.tick, page));
    }
    fn evict(&mut self) -> Option<u32> {
        let (_, _, page) = self.order.pop_first()?;
        self.key[page as usize] = (0, 0);
        self.evictions += 1;
        Some(page)
    }
    fn len(&self) -> u64 {
        self.order.len() as u64
    }
}

impl Cache for Lfu {
    fn access_batch(&mut self, pages: &[u32], _next: Option<&[i64]>) -> u64 {
        pages.iter().map(|&p| !self.access(p) as u64).sum()
    }
    fn evictions(&self) -> u64 {
        self.evictions
    }
    fn resident(&self) -> u64 {
        self.order.len() as u64
    }
    fn state_bytes(&self) -> u64 {
        (self.key.capacity() * 16 + self.order.len() * 24) as u64
    }
    fn check(&self) -> Result<(), String> {
        let n = self.key.iter().filter(|k| k.0 != 0).count();
        if n != self.order.len() {
            return Err(format!("{n} pages counted, {} ordered", self.order.len()));
        }
        Ok(())
    }
}
