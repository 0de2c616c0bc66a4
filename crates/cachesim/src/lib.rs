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

use pagelab_trace::{prefetch, PageSource, TraceError};

mod arc;
mod clock;
mod fifo;
pub mod keyed;
mod lfu;
mod list;
mod lru;
mod online;
mod opt;
mod ring;
mod s3fifo;
mod sieve;

pub use arc::Arc;
pub use clock::Clock;
pub use fifo::Fifo;
pub use lfu::Lfu;
pub use lru::Lru;
pub use online::{access_online, Mru, Online};
pub use opt::{next_access, Opt};
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
        PolicyKind::Sieve,
        PolicyKind::S3Fifo,
        PolicyKind::Arc,
        PolicyKind::Mru,
        PolicyKind::Lfu,
        PolicyKind::Opt,
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

    /// One line on what it does (`pagelab policies`).
    pub fn description(self) -> &'static str {
        match self {
            PolicyKind::Lru => "exact LRU: evict the least recently used page",
            PolicyKind::Fifo => "first in, first out; hits change nothing",
            PolicyKind::Clock => "CLOCK: FIFO with one reference bit (second chance)",
            PolicyKind::Opt => "Belady's MIN with the trace's future (a bound)",
            PolicyKind::Sieve => "SIEVE (NSDI '24): FIFO with a visited bit and a hand that keeps survivors in place",
            PolicyKind::S3Fifo => "S3-FIFO (SOSP '23): small, main and ghost FIFOs, as libCacheSim runs it",
            PolicyKind::Arc => "ARC (FAST '03): recency and frequency lists with ghosts and an adaptive target",
            PolicyKind::Mru => "MRU: evict the most recently used page (cache_ext's scan policy)",
            PolicyKind::Lfu => "LFU: evict the least frequently used page, least recent on a tie",
        }
    }

    /// Its parameters and where they are set ("" for none).
    pub fn params(self) -> &'static str {
        match self {
            PolicyKind::S3Fifo | PolicyKind::Arc => "sized by the cache: the cgroup's memory.max (machine) or the capacity (trace)",
            _ => "",
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
