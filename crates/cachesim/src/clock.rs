//! CLOCK with one reference bit per page (libCacheSim's `Clock` with 1-bit counters).

use pagelab_host::hugevec::filled as huge_vec;

use crate::{batch_with_prefetch, Cache, Online};

use crate::ring::Ring;

/// CLOCK: the resident pages in a ring; a hit sets the page's reference bit; the hand (the
/// ring's front) clears set bits and evicts the first page without one, and the new page
/// takes its slot.
pub struct Clock {
    ring: Ring,
    capacity: usize,
    /// Per page: 0 not resident, 1 resident, 2 resident and referenced.
    state: Vec<u8>,
    evictions: u64,
}

impl Clock {
    pub fn new(capacity: u64, pages_hint: usize) -> Clock {
        let capacity = capacity as usize;
        Clock { ring: Ring::with_capacity(capacity.min(pages_hint.max(1024))), capacity, state: huge_vec(pages_hint, 0), evictions: 0 }
    }

    #[cold]
    fn grow(&mut self, p: usize) {
        self.state.resize((p + 1).max(self.state.len() * 2), 0);
    }

    /// Moves the hand past referenced pages (clearing their bits) to the victim, which it
    /// leaves at the front; the caller removes or replaces it.
    #[inline(always)]
    fn hand_to_victim(&mut self) -> Option<u32> {
        loop {
            let v = self.ring.front()?;
            if self.state[v as usize] == 2 {
                self.state[v as usize] = 1;
                self.ring.rotate();
            } else {
                self.state[v as usize] = 0;
                self.evictions += 1;
                return Some(v);
            }
        }
    }

    /// One access; true on a hit. A miss in a full cache is [`Online::evict`] then
    /// [`Online::insert`], in one step: the new page takes the victim's slot.
    #[inline(always)]
    pub fn access(&mut self, page: u32) -> bool {
        let p = page as usize;
        if p >= self.state.len() {
            self.grow(p);
        }
        if self.state[p] != 0 {
            self.state[p] = 2;
            return true;
        }
        if self.capacity == 0 {
            return false;
        }
        if self.ring.len < self.capacity {
            self.ring.push_back(page);
        } else {
            self.hand_to_victim();
            self.ring.replace_front(page);
        }
        self.state[p] = 1;
        false
    }
}

impl Online for Clock {
    fn contains(&self, page: u32) -> bool {
        self.state.get(page as usize).is_some_and(|&s| s != 0)
    }
    fn hit(&mut self, page: u32) {
        self.state[page as usize] = 2;
    }
    fn insert(&mut self, page: u32) {
        if page as usize >= self.state.len() {
            self.grow(page as usize);
        }
        self.ring.push_back(page);
        self.state[page as usize] = 1;
    }
    fn evict(&mut self) -> Option<u32> {
        let v = self.hand_to_victim()?;
        self.ring.pop_front();
        Some(v)
    }
    fn len(&self) -> u64 {
        self.ring.len as u64
    }
}

impl Cache for Clock {
    fn access_batch(&mut self, pages: &[u32], _next: Option<&[i64]>) -> u64 {
        batch_with_prefetch(self, pages, |c, q| c.state.get(q as usize), |c, p| c.access(p))
    }
    fn evictions(&self) -> u64 {
        self.evictions
    }
    fn resident(&self) -> u64 {
        self.ring.len as u64
    }
    fn state_bytes(&self) -> u64 {
        (self.ring.capacity() * 4 + self.state.capacity()) as u64
    }
    fn check(&self) -> Result<(), String> {
        let n = self.state.iter().filter(|&&r| r != 0).count();
        if n != self.ring.len || self.ring.iter().any(|p| self.state[p as usize] == 0) {
            return Err("ring and page states disagree".into());
        }
        Ok(())
    }
}
