//! ARC (Megiddo and Modha, FAST '03): two LRU lists of cached pages, T1 (seen once
//! recently) and T2 (seen at least twice), each with a ghost list of pages it evicted, B1
//! and B2, and a target size `p` for T1 that ghost hits move: a hit in B1 says T1 is too
//! small (p grows by max(|B2| / |B1|, 1) pages), a hit in B2 that T2 is (p shrinks by
//! max(|B1| / |B2|, 1)). The ratios are whole numbers (integer division), as in
//! libCacheSim and most implementations.
//!
//! libCacheSim 0.3.5's `ARC` keeps `p` in bytes but moves it by the same page ratio, so with
//! 4 KiB pages its target moves 1/4096 of a page per ghost hit; `Arc::with_step(cap, hint,
//! 1)` reproduces it exactly (the Python tests hold the two equal), `Arc::new` is the
//! paper's ARC.

use pagelab_host::hugevec::filled as huge_vec;

use crate::{batch_with_prefetch, Cache, Online, NONE};

/// The four lists; a page is on at most one (`NOWHERE`: none).
const T1: u8 = 0;
const T2: u8 = 1;
const B1: u8 = 2;
const B2: u8 = 3;
const NOWHERE: u8 = 4;
/// The lists' sentinels are nodes 0..4; page `p` is node `p + 4`.
const FIRST_PAGE_NODE: usize = 4;
/// `p` counts 1/4096ths of a page, so that libCacheSim's byte-granular target fits too.
const PAGE_UNITS: u64 = 4096;

pub struct Arc {
    capacity: u64,
    /// Per node: [towards the head (most recent), towards the tail]; a sentinel holds
    /// [tail, head] of its list.
    link: Vec<[u32; 2]>,
    list: Vec<u8>,
    len: [u64; 4],
    /// T1's target size, in 1/4096ths of a page.
    p: u64,
    /// How far one unit of ghost-hit ratio moves `p` (PAGE_UNITS: one page).
    step: u64,
    evictions: u64,
    /// The machine's form: the last insertion was a B2 hit (REPLACE's tie rule).
    last_hit_in_b2: bool,
}

impl Arc {
    /// The paper's ARC.
    pub fn new(capacity: u64, pages_hint: usize) -> Arc {
        Arc::with_step(capacity, pages_hint, PAGE_UNITS)
    }

    /// ARC whose target moves `step` 4096ths of a page per unit of ghost-hit ratio.
    pub fn with_step(capacity: u64, pages_hint: usize, step: u64) -> Arc {
        let mut link = huge_vec(pages_hint + FIRST_PAGE_NODE, [NONE, NONE]);
        for (l, sentinel) in link.iter_mut().take(FIRST_PAGE_NODE).enumerate() {
            *sentinel = [l as u32, l as u32];
        }
        Arc { capacity, link, list: huge_vec(pages_hint, NOWHERE), len: [0; 4], p: 0, step, evictions: 0, last_hit_in_b2: false }
    }

    #[cold]
    fn grow(&mut self, page: u32) {
        let want = (page as usize + 1).max(self.list.len() * 2);
        self.list.resize(want, NOWHERE);
        self.link.resize(want + FIRST_PAGE_NODE, [NONE, NONE]);
    }

    /// One access; true on a hit.
    #[inline(always)]
    pub fn access(&mut self, page: u32) -> bool {
        if page as usize >= self.list.len() {
            self.grow(page);
        }
        let c = self.capacity;
        match self.list[page as usize] {
            T1 | T2 => {
                self.remove(page);
                self.push_head(T2, page);
                return true;
            }
            B1 => {
                let delta = (self.len[B2 as usize] / self.len[B1 as usize]).max(1) * self.step;
                self.p = (self.p + delta).min(c * PAGE_UNITS);
                self.replace(false);
                self.remove(page);
            }
            B2 => {
                let delta = (self.len[B1 as usize] / self.len[B2 as usize]).max(1) * self.step;
                self.p = self.p.saturating_sub(delta);
                self.replace(true);
                self.remove(page);
            }
            _ => {
                if c == 0 {
                    return false;
                }
                while self.len[T1 as usize] + self.len[T2 as usize] + 1 > c {
                    self.make_room();
                }
                self.push_head(T1, page);
                return false;
            }
        }
        // A ghost hit: REPLACE made room; the page returns to T2.
        self.push_head(T2, page);
        false
    }

    /// Case IV of the paper: a page seen in no list needs room in a full cache.
    fn make_room(&mut self) {
        let [t1, t2, b1, b2] = self.len;
        let c = self.capacity;
        if t1 + b1 + 1 > c {
            if t1 < c {
                self.drop_tail(B1);
                self.replace(false);
            } else {
                self.drop_tail(T1);
                self.evictions += 1;
            }
        } else {
            if t1 + b1 + t2 + b2 >= 2 * c {
                self.drop_tail(B2);
            }
            self.replace(false);
        }
    }

    /// REPLACE: evict T1's least recent page to B1 if T1 exceeds its target (or meets it
    /// and the page that missed was in B2), else T2's to B2.
    fn replace(&mut self, hit_in_b2: bool) -> u32 {
        let t1 = self.len[T1 as usize] * PAGE_UNITS;
        let from_t1 = t1 > 0 && (t1 > self.p || (t1 == self.p && hit_in_b2));
        let (from, to) = if from_t1 || self.len[T2 as usize] == 0 { (T1, B1) } else { (T2, B2) };
        let victim = self.link[from as usize][0] - FIRST_PAGE_NODE as u32;
        self.remove(victim);
        self.push_head(to, victim);
        self.evictions += 1;
        victim
    }

    /// Removes the least recent page of a list from the lists altogether.
    fn drop_tail(&mut self, l: u8) {
        let victim = self.link[l as usize][0] - FIRST_PAGE_NODE as u32;
        self.remove(victim);
        self.list[victim as usize] = NOWHERE;
    }

    #[inline(always)]
    fn push_head(&mut self, l: u8, page: u32) {
        let (node, sentinel) = (page as usize + FIRST_PAGE_NODE, l as usize);
        let head = self.link[sentinel][1];
        self.link[node] = [sentinel as u32, head];
        self.link[head as usize][0] = node as u32;
        self.link[sentinel][1] = node as u32;
        self.list[page as usize] = l;
        self.len[l as usize] += 1;
    }

    #[inline(always)]
    fn remove(&mut self, page: u32) {
        let node = page as usize + FIRST_PAGE_NODE;
        let [towards_head, towards_tail] = self.link[node];
        self.link[towards_head as usize][1] = towards_tail;
        self.link[towards_tail as usize][0] = towards_head;
        self.link[node] = [NONE, NONE];
        self.len[self.list[page as usize] as usize] -= 1;
    }

    /// The pages of a list from most to least recent (tests).
    fn pages(&self, l: u8) -> Vec<u32> {
        crate::list::list_pages(&self.link, l as u32, FIRST_PAGE_NODE as u32)
    }

    /// T1, T2, B1 and B2, most recent first, and the target p in pages (tests).
    pub fn lists(&self) -> ([Vec<u32>; 4], f64) {
        ([self.pages(T1), self.pages(T2), self.pages(B1), self.pages(B2)], self.p as f64 / PAGE_UNITS as f64)
    }
}

/// The machine's form. The kernel evicts before it adds the page that needed the room, so the
/// ghost hit that would steer a REPLACE arrives after it: an insertion adapts the target `p`
/// (B1 hit: up, B2 hit: down) and moves the page to T2, a new page goes to T1 after the ghost
/// lists are trimmed as case IV trims them (|T1| + |B1| <= c, all four <= 2c); an eviction is
/// REPLACE (T1's least recent page to B1 while T1 exceeds its target, else T2's to B2).
impl Online for Arc {
    fn contains(&self, page: u32) -> bool {
        self.list.get(page as usize).is_some_and(|&l| l == T1 || l == T2)
    }
    fn hit(&mut self, page: u32) {
        self.remove(page);
        self.push_head(T2, page);
    }
    fn insert(&mut self, page: u32) {
        if page as usize >= self.list.len() {
            self.grow(page);
        }
        let c = self.capacity;
        match self.list[page as usize] {
            B1 => {
                let delta = (self.len[B2 as usize] / self.len[B1 as usize]).max(1) * self.step;
                self.p = (self.p + delta).min(c * PAGE_UNITS);
                self.remove(page);
                self.push_head(T2, page);
                self.last_hit_in_b2 = false;
            }
            B2 => {
                let delta = (self.len[B1 as usize] / self.len[B2 as usize]).max(1) * self.step;
                self.p = self.p.saturating_sub(delta);
                self.remove(page);
                self.push_head(T2, page);
                self.last_hit_in_b2 = true;
            }
            _ => {
                let [t1, t2, b1, b2] = self.len;
                if t1 + b1 >= c && b1 > 0 {
                    self.drop_tail(B1);
                } else if t1 + t2 + b1 + b2 >= 2 * c && b2 > 0 {
                    self.drop_tail(B2);
                }
                self.push_head(T1, page);
                self.last_hit_in_b2 = false;
            }
        }
    }
    fn evict(&mut self) -> Option<u32> {
        if self.len[T1 as usize] + self.len[T2 as usize] == 0 {
            return None;
        }
        let victim = self.replace(self.last_hit_in_b2);
        self.last_hit_in_b2 = false;
        Some(victim)
    }
    fn len(&self) -> u64 {
        self.len[T1 as usize] + self.len[T2 as usize]
    }
}

impl Cache for Arc {
    fn access_batch(&mut self, pages: &[u32], _next: Option<&[i64]>) -> u64 {
        batch_with_prefetch(self, pages, |c, q| c.link.get(q as usize + FIRST_PAGE_NODE), |c, p| c.access(p))
    }
    fn evictions(&self) -> u64 {
        self.evictions
    }
    fn resident(&self) -> u64 {
        self.len[T1 as usize] + self.len[T2 as usize]
    }
    fn state_bytes(&self) -> u64 {
        (self.link.capacity() * 8 + self.list.capacity()) as u64
    }
    fn check(&self) -> Result<(), String> {
        let (lists, _) = self.lists();
        for (l, pages) in lists.iter().enumerate() {
            if pages.len() as u64 != self.len[l] {
                return Err(format!("list {l} holds {} pages, its length says {}", pages.len(), self.len[l]));
            }
            if let Some(p) = pages.iter().find(|&&p| self.list[p as usize] != l as u8) {
                return Err(format!("page {p} is on list {l} but marked {}", self.list[*p as usize]));
            }
        }
        let [t1, t2, b1, b2] = self.len;
        let c = self.capacity;
        if t1 + t2 > c || t1 + b1 > c || t1 + t2 + b1 + b2 > 2 * c || self.p > c * PAGE_UNITS {
            return Err(format!("sizes break ARC's invariants: T1 {t1} T2 {t2} B1 {b1} B2 {b2}, c {c}, p {}", self.p));
        }
        Ok(())
    }
}
