//! Exact LRU (libCacheSim's `LRU`; its miss ratio is equal, access for access).

use pagelab_host::hugevec::filled as huge_vec;

use crate::{batch_with_prefetch, Cache, Online, NONE};

use crate::list::{link_head, list_pages, unlink_end, unlink_node};

/// Exact LRU: a doubly linked list of the resident pages through `link[page + 1] =
/// [prev, next]`, with node 0 as the sentinel (`link[0] = [least recent, most recent]`);
/// `[NONE, NONE]` for a page not in the cache. Eight bytes per page.
pub struct Lru {
    pub(crate) capacity: u32,
    pub(crate) size: u32,
    link: Vec<[u32; 2]>,
    pub(crate) evictions: u64,
}

impl Lru {
    pub fn new(capacity: u64, pages_hint: usize) -> Lru {
        let mut link = huge_vec(pages_hint + 1, [NONE, NONE]);
        link[0] = [0, 0];
        Lru { capacity: capacity.min(u32::MAX as u64 - 1) as u32, size: 0, link, evictions: 0 }
    }

    #[cold]
    fn grow(&mut self, page: u32) {
        let want = (page as usize + 2).max(self.link.len() * 2);
        let mut v = huge_vec(want, [NONE, NONE]);
        v[..self.link.len()].copy_from_slice(&self.link);
        self.link = v;
    }

    /// One access; true on a hit: [`Online::hit`], or room made with [`Online::evict`] and
    /// [`Online::insert`] (the same steps, with the list's size kept across the eviction).
    #[inline(always)]
    pub fn access(&mut self, page: u32) -> bool {
        if page as usize + 1 >= self.link.len() {
            self.grow(page);
        }
        let link = &mut self.link[..];
        let i = page as usize + 1;
        let [prev, next] = link[i];
        if prev != NONE {
            if prev != 0 {
                unlink_node(link, prev, next);
                link_head(link, i);
            }
            return true;
        }
        if self.capacity == 0 {
            return false;
        }
        if self.size == self.capacity {
            unlink_end(link, 0);
            self.evictions += 1;
        } else {
            self.size += 1;
        }
        link_head(link, i);
        false
    }

    #[inline(always)]
    fn push_head(&mut self, page: u32) {
        link_head(&mut self.link, page as usize + 1);
        self.size += 1;
    }

    /// Removes the page at `end` of the list (0: the least recent, 1: the most recent).
    #[inline(always)]
    pub(crate) fn evict_end(&mut self, end: usize) -> Option<u32> {
        if self.size == 0 {
            return None;
        }
        let victim = unlink_end(&mut self.link, end);
        self.size -= 1;
        self.evictions += 1;
        Some(victim - 1)
    }

    /// The resident pages from most to least recent (tests).
    pub fn order(&self) -> Vec<u32> {
        list_pages(&self.link, 0, 1)
    }
}

impl Online for Lru {
    fn contains(&self, page: u32) -> bool {
        self.link.get(page as usize + 1).is_some_and(|l| l[0] != NONE)
    }
    #[inline(always)]
    fn hit(&mut self, page: u32) {
        let i = page as usize + 1;
        let [prev, next] = self.link[i];
        if prev == 0 {
            return; // already the most recent
        }
        unlink_node(&mut self.link, prev, next);
        link_head(&mut self.link, i);
    }
    fn insert(&mut self, page: u32) {
        if page as usize + 1 >= self.link.len() {
            self.grow(page);
        }
        self.push_head(page);
    }
    fn evict(&mut self) -> Option<u32> {
        self.evict_end(0)
    }
    fn len(&self) -> u64 {
        self.size as u64
    }
}

impl Cache for Lru {
    fn access_batch(&mut self, pages: &[u32], _next: Option<&[i64]>) -> u64 {
        batch_with_prefetch(self, pages, |c, q| c.link.get(q as usize + 1), |c, p| c.access(p))
    }
    fn evictions(&self) -> u64 {
        self.evictions
    }
    fn resident(&self) -> u64 {
        self.size as u64
    }
    fn state_bytes(&self) -> u64 {
        (self.link.capacity() * 8) as u64
    }
    fn check(&self) -> Result<(), String> {
        let order = self.order();
        if order.len() != self.size as usize {
            return Err(format!("list has {} pages, size {}", order.len(), self.size));
        }
        let mut prev = 0u32;
        for &p in &order {
            if self.link[p as usize + 1][0] != prev {
                return Err(format!("page {p}: bad prev"));
            }
            prev = p + 1;
        }
        if self.link[0][0] != prev {
            return Err("sentinel's prev is not the tail".into());
        }
        let resident = self.link[1..].iter().filter(|l| l[0] != NONE).count();
        if resident != order.len() {
            return Err(format!("{resident} pages marked resident, {} on the list", order.len()));
        }
        Ok(())
    }
}
