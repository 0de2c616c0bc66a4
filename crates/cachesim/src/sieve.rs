//! SIEVE (Zhang et al., NSDI '24): a FIFO queue of the cached pages with one visited bit
//! each and a hand that sweeps from the oldest page towards the newest. A hit only sets the
//! bit; an eviction moves the hand past visited pages (clearing their bits) to the first
//! unvisited one and removes it, leaving the hand where it stopped. New pages enter at the
//! head, not in the victim's place as in CLOCK: survivors keep their order, and the pages
//! between the hand and the head are the newest ones, which the hand reaches last.

use pagelab_host::hugevec::filled as huge_vec;

use crate::{batch_with_prefetch, Cache, Online, NONE};

const ABSENT: u8 = 0;
const UNVISITED: u8 = 1;
const VISITED: u8 = 2;

/// SIEVE over dense page indices: the queue is a doubly linked list through
/// `link[page + 1] = [towards the head, towards the tail]` with node 0 as the sentinel
/// (`link[0] = [tail, head]`), and `state[page]` says whether the page is cached and
/// visited. Nine bytes per page. Equal to libCacheSim's `Sieve` access for access.
pub struct Sieve {
    capacity: u64,
    size: u64,
    link: Vec<[u32; 2]>,
    state: Vec<u8>,
    /// The node the next eviction starts from; 0: the tail (the first eviction, or the
    /// last one removed the head).
    hand: u32,
    evictions: u64,
}

impl Sieve {
    pub fn new(capacity: u64, pages_hint: usize) -> Sieve {
        let mut link = huge_vec(pages_hint + 1, [NONE, NONE]);
        link[0] = [0, 0];
        Sieve { capacity, size: 0, link, state: huge_vec(pages_hint, ABSENT), hand: 0, evictions: 0 }
    }

    #[cold]
    fn grow(&mut self, page: u32) {
        let want = (page as usize + 1).max(self.state.len() * 2);
        self.state.resize(want, ABSENT);
        self.link.resize(want + 1, [NONE, NONE]);
    }

    /// One access; true on a hit.
    #[inline(always)]
    pub fn access(&mut self, page: u32) -> bool {
        if page as usize >= self.state.len() {
            self.grow(page);
        }
        let p = page as usize;
        if self.state[p] != ABSENT {
            self.state[p] = VISITED;
            return true;
        }
        if self.capacity == 0 {
            return false;
        }
        if self.size == self.capacity {
            self.unlink_victim();
        } else {
            self.size += 1;
        }
        self.link_head(page);
        false
    }

    /// Links a new page in at the head, unvisited.
    #[inline(always)]
    fn link_head(&mut self, page: u32) {
        let p = page as usize;
        let (node, head) = (p + 1, self.link[0][1]);
        self.link[node] = [0, head];
        self.link[head as usize][0] = node as u32;
        self.link[0][1] = node as u32;
        self.state[p] = UNVISITED;
    }

    /// Moves the hand to the first unvisited page from where it stands towards the head
    /// (wrapping to the tail), clearing the bits it passes, and removes that page.
    #[inline(always)]
    fn unlink_victim(&mut self) -> u32 {
        let tail = self.link[0][0];
        let mut node = if self.hand == 0 { tail } else { self.hand };
        while self.state[node as usize - 1] == VISITED {
            self.state[node as usize - 1] = UNVISITED;
            node = match self.link[node as usize][0] {
                0 => tail,
                towards_head => towards_head,
            };
        }
        let [towards_head, towards_tail] = self.link[node as usize];
        self.hand = towards_head;
        self.link[towards_head as usize][1] = towards_tail;
        self.link[towards_tail as usize][0] = towards_head;
        self.link[node as usize] = [NONE, NONE];
        self.state[node as usize - 1] = ABSENT;
        self.evictions += 1;
        node - 1
    }

    /// The cached pages from the head (newest) to the tail (tests).
    pub fn order(&self) -> Vec<u32> {
        crate::list::list_pages(&self.link, 0, 1)
    }
}

impl Online for Sieve {
    fn contains(&self, page: u32) -> bool {
        self.state.get(page as usize).is_some_and(|&s| s != ABSENT)
    }
    fn hit(&mut self, page: u32) {
        self.state[page as usize] = VISITED;
    }
    fn insert(&mut self, page: u32) {
        if page as usize >= self.state.len() {
            self.grow(page);
        }
        self.link_head(page);
        self.size += 1;
    }
    fn evict(&mut self) -> Option<u32> {
        (self.size > 0).then(|| {
            self.size -= 1;
            self.unlink_victim()
        })
    }
    fn len(&self) -> u64 {
        self.size
    }
}

impl Cache for Sieve {
    fn access_batch(&mut self, pages: &[u32], _next: Option<&[i64]>) -> u64 {
        batch_with_prefetch(self, pages, |c, q| c.state.get(q as usize), |c, p| c.access(p))
    }
    fn evictions(&self) -> u64 {
        self.evictions
    }
    fn resident(&self) -> u64 {
        self.size
    }
    fn state_bytes(&self) -> u64 {
        (self.link.capacity() * 8 + self.state.capacity()) as u64
    }
    fn check(&self) -> Result<(), String> {
        let order = self.order();
        if order.len() as u64 != self.size {
            return Err(format!("queue has {} pages, size {}", order.len(), self.size));
        }
        let mut towards_head = 0u32;
        for &p in &order {
            if self.link[p as usize + 1][0] != towards_head {
                return Err(format!("page {p}: its link towards the head is wrong"));
            }
            if self.state[p as usize] == ABSENT {
                return Err(format!("page {p} is queued but not marked cached"));
            }
            towards_head = p + 1;
        }
        if self.link[0][0] != towards_head {
            return Err("the sentinel does not name the tail".into());
        }
        let cached = self.state.iter().filter(|&&s| s != ABSENT).count();
        if cached != order.len() {
            return Err(format!("{cached} pages marked cached, {} queued", order.len()));
        }
        if self.hand != 0 && self.state[self.hand as usize - 1] == ABSENT {
            return Err(format!("the hand rests on node {} which is not cached", self.hand));
        }
        Ok(())
    }
}
