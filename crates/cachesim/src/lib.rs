//! pagelab-cachesim: plain page caches over dense page indices, the reference policies the
//! kernel models are compared with.
//!
//! Every access is a read of one page that fills the cache on a miss, the semantics of
//! libCacheSim with one object per page: a cache of `capacity` pages holds at most that
//! many, and a miss in a full cache evicts one page first. State lives in flat arrays
//! indexed by the dense page index ([`pagelab_trace::IdMap`] gives them), lists are linked
//! by index, and the arrays grow as new pages appear, so a trace is simulated in one pass.
//!
//! * [`Lru`]: exact LRU (libCacheSim's `LRU`; its miss ratio is equal, access for access).
//! * [`Fifo`]: first in, first out (libCacheSim's `FIFO`).
//! * [`Clock`]: one reference bit per page (libCacheSim's `Clock` with 1-bit counters).
//! * [`Opt`]: Belady's MIN with the oracle's next-access times.
//! * [`Sieve`]: SIEVE (libCacheSim's `Sieve`, equal access for access).
//! * [`S3Fifo`]: S3-FIFO as libCacheSim's `S3FIFO` runs it (equal access for access).
//! * [`Arc`]: ARC as the paper gives it (libCacheSim's `ARC` moves its target in bytes; see
//!   the module).

use pagelab_host::hugevec::filled as huge_vec;
use pagelab_trace::{prefetch, PageSource, TraceError};

mod arc;
pub mod keyed;
mod lfu;
mod online;
mod s3fifo;
mod sieve;

pub use arc::Arc;
pub use lfu::Lfu;
pub use online::{access_online, Mru, Online};
pub use s3fifo::S3Fifo;
pub use sieve::Sieve;

/// A plain cache policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    Lru,
    Fifo,
    Clock,
    Opt,
    Sieve,
    S3Fifo,
    Arc,
    Mru,
    Lfu,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 9] = [
        PolicyKind::Lru,
        PolicyKind::Fifo,
        PolicyKind::Clock,
        PolicyKind::Opt,
        PolicyKind::Sieve,
        PolicyKind::S3Fifo,
        PolicyKind::Arc,
        PolicyKind::Mru,
        PolicyKind::Lfu,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Lru => "lru",
            PolicyKind::Fifo => "fifo",
            PolicyKind::Clock => "clock",
            PolicyKind::Opt => "opt",
            PolicyKind::Sieve => "sieve",
            PolicyKind::S3Fifo => "s3fifo",
            PolicyKind::Arc => "arc",
            PolicyKind::Mru => "mru",
            PolicyKind::Lfu => "lfu",
        }
    }

    pub fn parse(s: &str) -> Option<PolicyKind> {
        PolicyKind::ALL.into_iter().find(|p| p.name() == s)
    }

    /// Whether the policy needs each access's next-access time.
    pub fn needs_future(self) -> bool {
        self == PolicyKind::Opt
    }
}

/// The outcome of a run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Stats {
    pub policy: &'static str,
    pub capacity: u64,
    pub ops: u64,
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    /// Distinct pages of the trace (unknown for [`keyed::run`], which keeps no id map).
    pub pages: Option<u64>,
    /// Bytes of the policy's state at the end.
    pub state_bytes: u64,
}

impl Stats {
    pub fn miss_ratio(&self) -> f64 {
        if self.ops == 0 {
            0.0
        } else {
            self.misses as f64 / self.ops as f64
        }
    }
}

/// A plain page cache.
pub trait Cache {
    /// Simulates the accesses of a batch in order (`next`: their next-access times, for
    /// policies that need them); returns the misses.
    fn access_batch(&mut self, pages: &[u32], next: Option<&[i64]>) -> u64;
    fn evictions(&self) -> u64;
    fn resident(&self) -> u64;
    fn state_bytes(&self) -> u64;
    /// Checks the structure (tests).
    fn check(&self) -> Result<(), String>;
}

const NONE: u32 = u32::MAX;
/// How many accesses ahead per-page state is prefetched.
const AHEAD: usize = 12;

/// Runs `access` over a batch, prefetching the per-page state `slot` names for the access
/// `AHEAD` places later (the next pages are known: they are in the batch). Returns misses.
#[inline(always)]
fn batch_with_prefetch<C, T>(c: &mut C, pages: &[u32], slot: impl Fn(&C, u32) -> Option<&T>, access: impl Fn(&mut C, u32) -> bool) -> u64 {
    let mut misses = 0;
    for (k, &p) in pages.iter().enumerate() {
        if let Some(&q) = pages.get(k + AHEAD) {
            if let Some(r) = slot(c, q) {
                prefetch(r);
            }
        }
        misses += !access(c, p) as u64;
    }
    misses
}

/// Exact LRU: a doubly linked list of the resident pages through `link[page + 1] =
/// [prev, next]`, with node 0 as the sentinel (`link[0] = [least recent, most recent]`);
/// `[NONE, NONE]` for a page not in the cache. Eight bytes per page.
pub struct Lru {
    capacity: u32,
    size: u32,
    link: Vec<[u32; 2]>,
    evictions: u64,
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
    fn evict_end(&mut self, end: usize) -> Option<u32> {
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

/// Unlinks the node between `prev` and `next` of a list linked through `link[node] = [prev,
/// next]` (node 0 the sentinel).
#[inline(always)]
fn unlink_node(link: &mut [[u32; 2]], prev: u32, next: u32) {
    link[prev as usize][1] = next;
    link[next as usize][0] = prev;
}

/// Links node `i` in at the head (after the sentinel).
#[inline(always)]
fn link_head(link: &mut [[u32; 2]], i: usize) {
    let head = link[0][1];
    link[i] = [0, head];
    link[head as usize][0] = i as u32;
    link[0][1] = i as u32;
}

/// Unlinks the node at `end` of a non-empty list (0: the tail, 1: the head) and marks it
/// absent; returns it.
#[inline(always)]
fn unlink_end(link: &mut [[u32; 2]], end: usize) -> u32 {
    let victim = link[0][end];
    let [prev, next] = link[victim as usize];
    unlink_node(link, prev, next);
    link[victim as usize] = [NONE, NONE];
    victim
}

/// The pages of a list linked through `link[node] = [towards the head, towards the tail]`,
/// from its head to its tail: `sentinel` is the list's own node (`[tail, head]`), and page
/// `p` is node `p + first_node`. For checks and tests, not hot paths.
fn list_pages(link: &[[u32; 2]], sentinel: u32, first_node: u32) -> Vec<u32> {
    let mut v = Vec::new();
    let mut i = link[sentinel as usize][1];
    while i != sentinel {
        v.push(i - first_node);
        i = link[i as usize][1];
    }
    v
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

/// A queue of pages in a ring: while full, the front leaves and a new page takes its slot at
/// the back in one store (the trace replays' cache is always full once warm); below that it
/// grows like a `Vec` (the machine's cache has no fixed size).
#[derive(Default)]
struct Ring {
    buf: Vec<u32>,
    head: usize,
    len: usize,
}

impl Ring {
    fn with_capacity(n: usize) -> Ring {
        Ring { buf: Vec::with_capacity(n), head: 0, len: 0 }
    }

    #[inline(always)]
    fn next(&self, i: usize) -> usize {
        if i + 1 == self.buf.len() {
            0
        } else {
            i + 1
        }
    }

    #[inline(always)]
    fn push_back(&mut self, x: u32) {
        if self.len == self.buf.len() {
            if self.head != 0 {
                self.buf.rotate_left(self.head);
                self.head = 0;
            }
            self.buf.push(x);
        } else {
            let i = (self.head + self.len) % self.buf.len();
            self.buf[i] = x;
        }
        self.len += 1;
    }

    #[inline(always)]
    fn front(&self) -> Option<u32> {
        (self.len > 0).then(|| self.buf[self.head])
    }

    #[inline(always)]
    fn pop_front(&mut self) -> Option<u32> {
        let x = self.front()?;
        self.head = self.next(self.head);
        self.len -= 1;
        Some(x)
    }

    /// Moves the front page to the back.
    #[inline(always)]
    fn rotate(&mut self) {
        if self.len == self.buf.len() {
            self.head = self.next(self.head);
        } else if let Some(x) = self.pop_front() {
            self.push_back(x);
        }
    }

    /// The front page leaves and `x` enters at the back (a full ring: one store).
    #[inline(always)]
    fn replace_front(&mut self, x: u32) -> u32 {
        if self.len < self.buf.len() {
            let v = self.pop_front().expect("a page to replace");
            self.push_back(x);
            return v;
        }
        let v = std::mem::replace(&mut self.buf[self.head], x);
        self.head = self.next(self.head);
        v
    }

    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len).map(|k| self.buf[(self.head + k) % self.buf.len()])
    }

    fn capacity(&self) -> usize {
        self.buf.capacity()
    }
}

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

const ABSENT: u64 = 0;
const NEVER: u64 = u64::MAX;

/// Belady's MIN: on a miss in a full cache, evict the resident page whose next access is
/// farthest (never accessed again first). A max-heap of (next access, page) with lazy
/// deletion: an entry is live while the page's recorded next access equals it.
pub struct Opt {
    capacity: usize,
    size: usize,
    /// Per page: ABSENT, or its next access as vtime + 1 (NEVER for none).
    next: Vec<u64>,
    heap: std::collections::BinaryHeap<(u64, u32)>,
    evictions: u64,
}

impl Opt {
    pub fn new(capacity: u64, pages_hint: usize) -> Opt {
        Opt { capacity: capacity as usize, size: 0, next: huge_vec(pages_hint, ABSENT), heap: Default::default(), evictions: 0 }
    }

    /// One access whose next access is at `next_vtime` (-1 for never); true on a hit.
    pub fn access(&mut self, page: u32, next_vtime: i64) -> bool {
        let p = page as usize;
        if p >= self.next.len() {
            self.next.resize((p + 1).max(self.next.len() * 2), ABSENT);
        }
        let n = if next_vtime < 0 { NEVER } else { next_vtime as u64 + 1 };
        let hit = self.next[p] != ABSENT;
        if !hit {
            if self.capacity == 0 {
                return false;
            }
            if self.size == self.capacity {
                loop {
                    let (k, v) = self.heap.pop().expect("a full cache has live entries");
                    if self.next[v as usize] == k {
                        self.next[v as usize] = ABSENT;
                        self.evictions += 1;
                        break;
                    }
                }
            } else {
                self.size += 1;
            }
        }
        // A hit that keeps its next access (a trace that says "never" and yet comes back)
        // already has its live heap entry: a second one would survive every compaction.
        if !(hit && self.next[p] == n) {
            self.next[p] = n;
            self.heap.push((n, page));
        }
        if self.heap.len() > 2 * self.capacity + 1024 {
            let live: Vec<(u64, u32)> = self.heap.drain().filter(|&(k, v)| self.next[v as usize] == k).collect();
            self.heap = live.into();
        }
        hit
    }
}

impl Cache for Opt {
    fn access_batch(&mut self, pages: &[u32], next: Option<&[i64]>) -> u64 {
        let next = next.expect("OPT needs next-access times");
        pages.iter().zip(next).map(|(&p, &n)| !self.access(p, n) as u64).sum()
    }
    fn evictions(&self) -> u64 {
        self.evictions
    }
    fn resident(&self) -> u64 {
        self.size as u64
    }
    fn state_bytes(&self) -> u64 {
        (self.next.capacity() * 8 + self.heap.capacity() * 16) as u64
    }
    fn check(&self) -> Result<(), String> {
        let n = self.next.iter().filter(|&&n| n != ABSENT).count();
        if n != self.size {
            return Err(format!("{n} pages resident, size {}", self.size));
        }
        Ok(())
    }
}

/// The next-access time of every access of a trace held in memory (a backward pass), for
/// OPT over traces that do not carry them.
pub fn next_access(pages: &[u32]) -> Vec<i64> {
    let n = pages.iter().map(|&p| p as usize + 1).max().unwrap_or(0);
    let mut last = vec![-1i64; n];
    let mut out = vec![-1i64; pages.len()];
    for (i, &p) in pages.iter().enumerate().rev() {
        out[i] = last[p as usize];
        last[p as usize] = i as i64;
    }
    out
}

/// An online cache of the given policy (every policy but `opt`, which needs the future) for a
/// host that decides when to evict; `capacity` sizes the policies whose structure depends on
/// it (S3-FIFO's queues, ARC's target and ghosts).
pub fn new_online(policy: PolicyKind, capacity: u64, pages_hint: usize) -> Option<Box<dyn Online + Send>> {
    Some(match policy {
        PolicyKind::Lru => Box::new(Lru::new(capacity, pages_hint)),
        PolicyKind::Fifo => Box::new(Fifo::new(capacity, pages_hint)),
        PolicyKind::Clock => Box::new(Clock::new(capacity, pages_hint)),
        PolicyKind::Opt => return None,
        PolicyKind::Sieve => Box::new(Sieve::new(capacity, pages_hint)),
        PolicyKind::S3Fifo => Box::new(S3Fifo::new(capacity, pages_hint)),
        PolicyKind::Arc => Box::new(Arc::new(capacity, pages_hint)),
        PolicyKind::Mru => Box::new(Mru::new(capacity, pages_hint)),
        PolicyKind::Lfu => Box::new(Lfu::new(capacity, pages_hint)),
    })
}

/// A cache of the given policy and capacity (pages).
pub fn new_cache(policy: PolicyKind, capacity: u64, pages_hint: usize) -> Box<dyn Cache + Send> {
    match policy {
        PolicyKind::Lru => Box::new(Lru::new(capacity, pages_hint)),
        PolicyKind::Fifo => Box::new(Fifo::new(capacity, pages_hint)),
        PolicyKind::Clock => Box::new(Clock::new(capacity, pages_hint)),
        PolicyKind::Opt => Box::new(Opt::new(capacity, pages_hint)),
        PolicyKind::Sieve => Box::new(Sieve::new(capacity, pages_hint)),
        PolicyKind::S3Fifo => Box::new(S3Fifo::new(capacity, pages_hint)),
        PolicyKind::Arc => Box::new(Arc::new(capacity, pages_hint)),
        PolicyKind::Mru => Box::new(Mru::new(capacity, pages_hint)),
        PolicyKind::Lfu => Box::new(Lfu::new(capacity, pages_hint)),
    }
}

/// Runs a whole trace through a cache.
pub fn run(src: &mut dyn PageSource, policy: PolicyKind, capacity: u64) -> Result<Stats, TraceError> {
    let hint = src.pages().unwrap_or(1 << 16) as usize;
    let mut cache = new_cache(policy, capacity, hint);
    let (mut ops, mut misses) = (0u64, 0u64);
    if policy.needs_future() {
        if src.next_access().is_none() {
            // The trace does not carry next-access times: read it into memory first.
            let mut pages = Vec::new();
            while let Some(b) = src.next_batch()? {
                pages.extend_from_slice(b);
            }
            let next = next_access(&pages);
            ops = pages.len() as u64;
            misses = cache.access_batch(&pages, Some(&next));
            return Ok(stats(policy, capacity, ops, misses, src.pages_seen(), cache.as_ref()));
        }
        while let Some(b) = src.next_batch()? {
            let (b, n) = (b.to_vec(), src.next_access().map(|n| n.to_vec()));
            ops += b.len() as u64;
            misses += cache.access_batch(&b, n.as_deref());
        }
    } else {
        while let Some(b) = src.next_batch()? {
            ops += b.len() as u64;
            misses += cache.access_batch(b, None);
        }
    }
    Ok(stats(policy, capacity, ops, misses, src.pages_seen(), cache.as_ref()))
}

fn stats(policy: PolicyKind, capacity: u64, ops: u64, misses: u64, pages: u64, cache: &dyn Cache) -> Stats {
    Stats {
        policy: policy.name(),
        capacity,
        ops,
        hits: ops - misses,
        misses,
        evictions: cache.evictions(),
        pages: Some(pages),
        state_bytes: cache.state_bytes(),
    }
}

/// Runs every (policy, capacity) point over the trace `open` opens afresh for each, on
/// `threads` threads (0: all cores). Each point streams the trace itself, so results are
/// the same, in the same order, whatever the thread count.
pub fn sweep(
    open: &(dyn Fn() -> Result<Box<dyn PageSource>, TraceError> + Sync),
    points: &[(PolicyKind, u64)],
    threads: usize,
) -> Result<Vec<Stats>, TraceError> {
    use rayon::prelude::*;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
    pool.install(|| points.par_iter().map(|&(p, c)| run(open()?.as_mut(), p, c)).collect())
}

#[cfg(test)]
mod tests;
