//! The plain caches as explicit operations, for a host that decides when to evict: the
//! kernel model's eviction seam runs the same algorithm objects as the trace replays, with
//! the cache size set by the cgroup's memory rather than by a capacity.
//!
//! A trace replay's access is [`access_online`]: a hit, or (in a full cache) an eviction
//! followed by the insertion; each cache's own `access` is that composition, inlined.
//! (S3-FIFO and ARC take a ghost hit out of the ghost queue before evicting, which their
//! `access` keeps; see their modules.)

use crate::{Cache, Lru};

/// A plain cache driven one operation at a time; pages are dense ids.
pub trait Online {
    /// Whether the page is cached.
    fn contains(&self, page: u32) -> bool;
    /// An access to a cached page.
    fn hit(&mut self, page: u32);
    /// A page that is not cached enters; the caller made room (no capacity check).
    fn insert(&mut self, page: u32);
    /// Chooses a victim and removes it from the cache (None when empty).
    fn evict(&mut self) -> Option<u32>;
    /// Pages cached.
    fn len(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One trace access through the operations: a hit, or evictions until there is room for one
/// more page in `capacity`, then the insertion. True on a hit.
pub fn access_online(c: &mut dyn Online, page: u32, capacity: u64) -> bool {
    if c.contains(page) {
        c.hit(page);
        return true;
    }
    if capacity == 0 {
        return false;
    }
    while c.len() >= capacity {
        if c.evict().is_none() {
            break;
        }
    }
    c.insert(page);
    false
}

/// MRU: evicts the most recently used page (cache_ext's MRU; the classic policy for a loop
/// larger than the cache). The LRU list, evicted from its other end.
pub struct Mru(pub(crate) Lru);

impl Mru {
    pub fn new(capacity: u64, pages_hint: usize) -> Mru {
        Mru(Lru::new(capacity, pages_hint))
    }

    /// One access; true on a hit.
    #[inline(always)]
    pub fn access(&mut self, page: u32) -> bool {
        let capacity = self.0.capacity as u64;
        access_online(self, page, capacity)
    }
}

impl Online for Mru {
    fn contains(&self, page: u32) -> bool {
        self.0.contains(page)
    }
    fn hit(&mut self, page: u32) {
        self.0.hit(page)
    }
    fn insert(&mut self, page: u32) {
        self.0.insert(page)
    }
    fn evict(&mut self) -> Option<u32> {
        self.0.evict_end(1)
    }
    fn len(&self) -> u64 {
        self.0.size as u64
    }
}

impl Cache for Mru {
    fn access_batch(&mut self, pages: &[u32], _next: Option<&[i64]>) -> u64 {
        pages.iter().map(|&p| !self.access(p) as u64).sum()
    }
    fn evictions(&self) -> u64 {
        self.0.evictions
    }
    fn resident(&self) -> u64 {
        self.0.size as u64
    }
    fn state_bytes(&self) -> u64 {
        self.0.state_bytes()
    }
    fn check(&self) -> Result<(), String> {
        self.0.check()
    }
}
