//! Belady's MIN (OPT) with the trace's next-access times.

use pagelab_host::hugevec::filled as huge_vec;

use crate::Cache;

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
    pub(crate) heap: std::collections::BinaryHeap<(u64, u32)>,
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
