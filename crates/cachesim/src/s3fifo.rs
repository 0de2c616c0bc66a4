//! S3-FIFO (Yang et al., SOSP '23), as libCacheSim's `S3FIFO` runs it: a small FIFO (10% of
//! the cache) that new pages enter, a main FIFO (the rest) run as a CLOCK with 2-bit
//! counters, and a ghost FIFO of page ids only (90% of the cache's size) remembering what
//! left the small queue unused.
//!
//! * A hit counts the page's accesses (saturating at 3; nothing else moves).
//! * A miss on a ghost page inserts it into main; any other miss into small — except while
//!   the small queue is full and nothing has ever been evicted, when it goes to main.
//! * Eviction takes from main when main is over its size or small is empty, else from
//!   small. From small: a page accessed twice since it entered moves to main (count reset),
//!   otherwise it leaves the cache for the ghost; repeated until one page has left. From
//!   main: a page with accesses goes back in at the head with its count (at most 3) minus
//!   one, otherwise it leaves; repeated likewise.
//!
//! Sizes follow libCacheSim's bytes with 4 KiB pages, so a cache of fewer than 11 pages
//! (whose small queue cannot hold one page) caches nothing, as there.

use std::collections::VecDeque;

use pagelab_host::hugevec::filled as huge_vec;

use crate::{batch_with_prefetch, Cache, Online, NONE};

/// Where a page is: the low two bits of its state byte.
const ABSENT: u8 = 0;
const SMALL: u8 = 1;
const MAIN: u8 = 2;
const GHOST: u8 = 3;
const WHERE: u8 = 0b11;
/// Its access count, in the next two bits.
const FREQ_SHIFT: u8 = 2;
const FREQ_MAX: u8 = 3;
/// A page must have been accessed this often in small to move to main.
const MOVE_TO_MAIN: u8 = 2;
const PAGE_BYTES: u64 = 4096;

pub struct S3Fifo {
    /// Pages the cache holds.
    capacity: u64,
    /// The small queue's size in bytes: it is full once its pages' bytes reach it.
    small_bytes: u64,
    /// Pages main and the ghost may hold before they must give one up.
    main_cap: u64,
    ghost_cap: u64,
    /// Whether a page can enter the cache at all (libCacheSim inserts into small only an
    /// object smaller than the small queue).
    admits: bool,
    small: VecDeque<u32>,
    main: VecDeque<u32>,
    /// The ghost queue: a doubly linked list through `ghost[page + 1] = [newer, older]`
    /// (node 0 the sentinel: `[oldest, newest]`), so that a ghost hit removes its page
    /// wherever it is.
    ghost: Vec<[u32; 2]>,
    ghost_len: u64,
    state: Vec<u8>,
    has_evicted: bool,
    evictions: u64,
}

impl S3Fifo {
    pub fn new(capacity: u64, pages_hint: usize) -> S3Fifo {
        // libCacheSim sizes the queues in bytes with a double multiply; so do we.
        let bytes = capacity * PAGE_BYTES;
        let small_bytes = (bytes as f64 * 0.10) as u64;
        let ghost_bytes = (bytes as f64 * 0.90) as u64;
        let mut ghost = huge_vec(pages_hint + 1, [NONE, NONE]);
        ghost[0] = [0, 0];
        S3Fifo {
            capacity,
            small_bytes,
            main_cap: (bytes - small_bytes) / PAGE_BYTES,
            ghost_cap: ghost_bytes / PAGE_BYTES,
            admits: PAGE_BYTES < small_bytes,
            small: VecDeque::new(),
            main: VecDeque::new(),
            ghost,
            ghost_len: 0,
            state: huge_vec(pages_hint, ABSENT),
            has_evicted: false,
            evictions: 0,
        }
    }

    #[cold]
    fn grow(&mut self, page: u32) {
        let want = (page as usize + 1).max(self.state.len() * 2);
        self.state.resize(want, ABSENT);
        self.ghost.resize(want + 1, [NONE, NONE]);
    }

    fn cached(&self) -> u64 {
        (self.small.len() + self.main.len()) as u64
    }

    /// One access; true on a hit.
    #[inline(always)]
    pub fn access(&mut self, page: u32) -> bool {
        if page as usize >= self.state.len() {
            self.grow(page);
        }
        let p = page as usize;
        let s = self.state[p];
        let place = s & WHERE;
        if place == SMALL || place == MAIN {
            let freq = (s >> FREQ_SHIFT).min(FREQ_MAX - 1) + 1;
            self.state[p] = place | (freq << FREQ_SHIFT);
            return true;
        }
        let ghost_hit = place == GHOST;
        if ghost_hit {
            self.ghost_remove(page);
        }
        if !self.admits {
            self.state[p] = ABSENT;
            return false;
        }
        while self.cached() + 1 > self.capacity {
            self.evict_one();
        }
        self.enqueue(page, ghost_hit);
        false
    }

    /// A missed page enters main if it was a ghost (or while small is full and nothing has
    /// been evicted yet), else small.
    #[inline(always)]
    fn enqueue(&mut self, page: u32, ghost_hit: bool) {
        if ghost_hit || (!self.has_evicted && self.small.len() as u64 * PAGE_BYTES >= self.small_bytes) {
            self.main.push_back(page);
            self.state[page as usize] = MAIN;
        } else {
            self.small.push_back(page);
            self.state[page as usize] = SMALL;
        }
    }

    /// The small and main queues, oldest first (tests).
    pub fn queues(&self) -> (Vec<u32>, Vec<u32>) {
        (self.small.iter().copied().collect(), self.main.iter().copied().collect())
    }

    /// Frees one page of the cache, from main or from small; returns it.
    fn evict_one(&mut self) -> Option<u32> {
        self.has_evicted = true;
        let victim = if self.main.len() as u64 > self.main_cap || self.small.is_empty() { self.evict_main() } else { self.evict_small() };
        self.evictions += 1;
        victim
    }

    fn evict_small(&mut self) -> Option<u32> {
        while let Some(page) = self.small.pop_front() {
            let freq = self.state[page as usize] >> FREQ_SHIFT;
            if freq >= MOVE_TO_MAIN {
                self.main.push_back(page);
                self.state[page as usize] = MAIN;
            } else {
                self.state[page as usize] = ABSENT;
                self.ghost_insert(page);
                return Some(page);
            }
        }
        // Everything in small moved to main: nothing has left the cache yet.
        self.evict_main()
    }

    fn evict_main(&mut self) -> Option<u32> {
        while let Some(page) = self.main.pop_front() {
            let freq = self.state[page as usize] >> FREQ_SHIFT;
            if freq >= 1 {
                self.main.push_back(page);
                self.state[page as usize] = MAIN | ((freq - 1) << FREQ_SHIFT);
            } else {
                self.state[page as usize] = ABSENT;
                return Some(page);
            }
        }
        None
    }

    /// The page enters the ghost at its newest end; the oldest ghosts leave to make room.
    fn ghost_insert(&mut self, page: u32) {
        if self.ghost_cap == 0 {
            return;
        }
        while self.ghost_len + 1 > self.ghost_cap {
            let oldest = self.ghost[0][0] - 1;
            self.ghost_remove(oldest);
            self.state[oldest as usize] = ABSENT;
        }
        let (node, newest) = (page as usize + 1, self.ghost[0][1]);
        self.ghost[node] = [0, newest];
        self.ghost[newest as usize][0] = node as u32;
        self.ghost[0][1] = node as u32;
        self.ghost_len += 1;
        self.state[page as usize] = GHOST;
    }

    fn ghost_remove(&mut self, page: u32) {
        let node = page as usize + 1;
        let [newer, older] = self.ghost[node];
        self.ghost[newer as usize][1] = older;
        self.ghost[older as usize][0] = newer;
        self.ghost[node] = [NONE, NONE];
        self.ghost_len -= 1;
    }
}

/// The machine's form: an insertion takes a ghost out of the ghost queue as the trace's miss
/// does, but after the evictions that made room (the kernel evicts before it adds the page),
/// so a ghost the evictions pushed out of the ghost queue is a plain miss. Every page enters
/// (the trace's `admits` rule for caches under 11 pages is not applied).
impl Online for S3Fifo {
    fn contains(&self, page: u32) -> bool {
        self.state.get(page as usize).is_some_and(|&s| matches!(s & WHERE, SMALL | MAIN))
    }
    fn hit(&mut self, page: u32) {
        let s = self.state[page as usize];
        let freq = (s >> FREQ_SHIFT).min(FREQ_MAX - 1) + 1;
        self.state[page as usize] = (s & WHERE) | (freq << FREQ_SHIFT);
    }
    fn insert(&mut self, page: u32) {
        if page as usize >= self.state.len() {
            self.grow(page);
        }
        let ghost_hit = self.state[page as usize] & WHERE == GHOST;
        if ghost_hit {
            self.ghost_remove(page);
        }
        self.enqueue(page, ghost_hit);
    }
    fn evict(&mut self) -> Option<u32> {
        if self.cached() == 0 {
            return None;
        }
        self.evict_one()
    }
    fn len(&self) -> u64 {
        self.cached()
    }
}

impl Cache for S3Fifo {
    fn access_batch(&mut self, pages: &[u32], _next: Option<&[i64]>) -> u64 {
        batch_with_prefetch(self, pages, |c, q| c.state.get(q as usize), |c, p| c.access(p))
    }
    fn evictions(&self) -> u64 {
        self.evictions
    }
    fn resident(&self) -> u64 {
        self.cached()
    }
    fn state_bytes(&self) -> u64 {
        (self.state.capacity() + self.ghost.capacity() * 8 + (self.small.capacity() + self.main.capacity()) * 4) as u64
    }
    fn check(&self) -> Result<(), String> {
        for (queue, place, name) in [(&self.small, SMALL, "small"), (&self.main, MAIN, "main")] {
            if let Some(&p) = queue.iter().find(|&&p| self.state[p as usize] & WHERE != place) {
                return Err(format!("page {p} is in the {name} queue but its state says otherwise"));
            }
        }
        let count = |place| self.state.iter().filter(|&&s| s & WHERE == place).count();
        if count(SMALL) != self.small.len() || count(MAIN) != self.main.len() {
            return Err("a page is in a queue twice, or marked cached outside the queues".into());
        }
        if count(GHOST) as u64 != self.ghost_len || self.ghost_len > self.ghost_cap {
            return Err(format!("{} ghosts marked, {} listed, room for {}", count(GHOST), self.ghost_len, self.ghost_cap));
        }
        if self.cached() > self.capacity {
            return Err(format!("{} pages cached in room for {}", self.cached(), self.capacity));
        }
        Ok(())
    }
}
