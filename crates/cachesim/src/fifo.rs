//! FIFO: first in, first out (libCacheSim's `FIFO`).

use pagelab_host::hugevec::filled as huge_vec;

use crate::{batch_with_prefetch, Cache, Online};

use crate::ring::Ring;

/// FIFO: a ring of the resident pages in insertion order; hits change nothing.
pub struct Fifo {
    ring: Ring,
    capacity: usize,
    resident: Vec<bool>,
    evictions: u64,
}

impl Fifo {
    pub fn new(capacity: u64, pages_hint: usize) -> Fifo {
        let capacity = capacity as usize;
        Fifo { ring: Ring::with_capacity(capacity.min(pages_hint.max(1024))), capacity, resident: huge_vec(pages_hint, false), evictions: 0 }
    }

    #[cold]
    fn grow(&mut self, p: usize) {
        self.resident.resize((p + 1).max(self.resident.len() * 2), false);
    }

    /// One access; true on a hit. A miss in a full cache is [`Online::evict`] then
    /// [`Online::insert`], in one step: the new page takes the victim's slot.
    #[inline(always)]
    pub fn access(&mut self, page: u32) -> bool {
        let p = page as usize;
        if p >= self.resident.len() {
            self.grow(p);
        }
        if self.resident[p] {
            return true;
        }
        if self.capacity == 0 {
            return false;
        }
        if self.ring.len < self.capacity {
            self.ring.push_back(page);
        } else {
            let victim = self.ring.replace_front(page);
            self.resident[victim as usize] = false;
            self.evictions += 1;
        }
        self.resident[p] = true;
        false
    }
}

impl Online for Fifo {
    fn contains(&self, page: u32) -> bool {
        self.resident.get(page as usize).copied().unwrap_or(false)
    }
    fn hit(&mut self, _page: u32) {}
    fn insert(&mut self, page: u32) {
        if page as usize >= self.resident.len() {
            self.grow(page as usize);
        }
        self.ring.push_back(page);
        self.resident[page as usize] = true;
    }
    fn evict(&mut self) -> Option<u32> {
        let victim = self.ring.pop_front()?;
        self.resident[victim as usize] = false;
        self.evictions += 1;
        Some(victim)
    }
    fn len(&self) -> u64 {
        self.ring.len as u64
    }
}

impl Cache for Fifo {
    fn access_batch(&mut self, pages: &[u32], _next: Option<&[i64]>) -> u64 {
        batch_with_prefetch(self, pages, |c, q| c.resident.get(q as usize), |c, p| c.access(p))
    }
    fn evictions(&self) -> u64 {
        self.evictions
    }
    fn resident(&self) -> u64 {
        self.ring.len as u64
    }
    fn state_bytes(&self) -> u64 {
        (self.ring.capacity() * 4 + self.resident.capacity()) as u64
    }
    fn check(&self) -> Result<(), String> {
        let n = self.resident.iter().filter(|&&r| r).count();
        if n != self.ring.len || self.ring.iter().any(|p| !self.resident[p as usize]) {
            return Err("ring and resident flags disagree".into());
        }
        Ok(())
    }
}
