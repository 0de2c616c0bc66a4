//! What a trace holds (`pagelab trace-stats`): accesses, distinct pages, reads and writes,
//! one-hit wonders, the share of the most popular pages, the popularity curve, a histogram
//! of reuse distances and, on request, an access heatmap.
//!
//! The trace is read twice. The first pass counts each page's accesses, and the accesses
//! each spatial sampling rate would keep. The second computes reuse distances, the number of
//! distinct other pages accessed between two accesses to a page (the LRU stack distance: an
//! access with distance d hits in an LRU cache of more than d pages), with a Fenwick tree
//! over access positions. That is exact while the trace has at most [`EXACT_ACCESSES`]
//! accesses; a longer one is sampled as SHARDS does (Waldspurger et al., FAST '15): only the
//! pages whose hash falls below a threshold, rate R = 2^−k with the smallest k that keeps at
//! most [`EXACT_ACCESSES`] accesses, each distance and count scaled by 1/R.

use std::collections::HashMap;
use std::path::Path;

use crate::access::{AccessStream, Kind, Spec};
use crate::TraceError;

/// Traces with at most this many accesses get exact reuse distances.
pub const EXACT_ACCESSES: u64 = 1 << 24;
/// Points of the popularity curve (log-spaced ranks).
const CURVE_POINTS: usize = 256;
/// Per-page tables stay flat arrays while pages stay below this; sparse above.
const DENSE_PAGES: u64 = 1 << 26;

/// A reuse-distance bucket: distances `min..=max` (distinct pages in between) and the
/// accesses that had one (scaled by 1/R when sampled).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReuseBucket {
    pub min: u64,
    pub max: u64,
    pub accesses: f64,
}

/// The statistics of one trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceStats {
    pub accesses: u64,
    pub requests: u64,
    pub skipped: u64,
    pub distinct_pages: u64,
    /// One more than the largest page index.
    pub page_bound: u64,
    pub reads: u64,
    pub writes: u64,
    pub touches: u64,
    /// Accesses whose format does not say read or write.
    pub plain: u64,
    /// Pages accessed exactly once.
    pub one_hit_wonders: u64,
    /// Shares of the accesses that go to the most accessed 1% and 10% of the pages (at least
    /// one page each).
    pub top_1pct_share: f64,
    pub top_10pct_share: f64,
    /// The trace's first and last times (ns), if its records have times.
    pub time_span_ns: Option<(u64, u64)>,
    /// (rank from 1, accesses of the page of that rank), at log-spaced ranks, the last page
    /// included.
    pub popularity: Vec<(u64, u64)>,
    /// The accesses of reuse: first accesses to a page (infinite distance), and the others
    /// by power-of-two distance buckets.
    pub cold: f64,
    pub reuse: Vec<ReuseBucket>,
    /// The sampling rate of the reuse distances (1: exact).
    pub reuse_rate: f64,
    /// On request: accesses by (time bin, page bin); bins of equal accesses (time) and of
    /// equal pages, `heatmap[t][p]`.
    pub heatmap: Option<Vec<Vec<u64>>>,
}

/// A per-page table: flat while the pages stay small, a hash map beyond.
enum PageTable {
    Dense(Vec<u32>),
    Sparse(HashMap<u32, u32>),
}

impl PageTable {
    fn new() -> PageTable {
        PageTable::Dense(Vec::new())
    }

    #[inline]
    fn get_mut(&mut self, page: u32) -> &mut u32 {
        if let PageTable::Dense(v) = self {
            if (page as u64) >= DENSE_PAGES {
                let sparse: HashMap<u32, u32> = v.iter().enumerate().filter(|(_, &c)| c != 0).map(|(p, &c)| (p as u32, c)).collect();
                *self = PageTable::Sparse(sparse);
            }
        }
        match self {
            PageTable::Dense(v) => {
                if page as usize >= v.len() {
                    v.resize((page as usize + 1).next_power_of_two(), 0);
                }
                &mut v[page as usize]
            }
            PageTable::Sparse(m) => m.entry(page).or_insert(0),
        }
    }

    fn values(&self) -> Vec<u32> {
        match self {
            PageTable::Dense(v) => v.iter().copied().filter(|&c| c != 0).collect(),
            PageTable::Sparse(m) => m.values().copied().filter(|&c| c != 0).collect(),
        }
    }
}

/// The hash that decides which pages SHARDS samples: its leading zeros (k of them or more:
/// sampled at rate 2^−k).
#[inline]
fn level(page: u32) -> u32 {
    crate::mix64(page as u64 ^ 0x9E37_79B9_7F4A_7C15).leading_zeros()
}

/// A Fenwick tree of counts over positions 1..=n.
struct Fenwick(Vec<u32>);

impl Fenwick {
    fn add(&mut self, mut i: usize, up: bool) {
        while i < self.0.len() {
            self.0[i] = if up { self.0[i] + 1 } else { self.0[i] - 1 };
            i += i & i.wrapping_neg();
        }
    }
    fn prefix(&self, mut i: usize) -> u64 {
        let mut s = 0u64;
        while i > 0 {
            s += self.0[i] as u64;
            i -= i & i.wrapping_neg();
        }
        s
    }
}

/// Reads the trace twice and computes its statistics; `heatmap` = (time bins, page bins).
pub fn trace_stats(path: &Path, spec: &Spec, heatmap: Option<(usize, usize)>) -> Result<TraceStats, TraceError> {
    stats_within(path, spec, heatmap, EXACT_ACCESSES)
}

/// [`trace_stats`] with `budget` accesses for exact reuse distances.
fn stats_within(path: &Path, spec: &Spec, heatmap: Option<(usize, usize)>, budget: u64) -> Result<TraceStats, TraceError> {
    // Pass 1: per-page counts, kinds, times, and the accesses each sampling level keeps.
    let mut counts = PageTable::new();
    let mut by_level = [0u64; 65];
    let (mut plain, mut first_t, mut last_t) = (0u64, None, 0u64);
    let mut s = AccessStream::open(path, spec)?;
    while let Some((pages, kinds, times)) = s.next_accesses()? {
        if kinds.contains(&Kind::Drop) {
            let msg = "`D` lines (pages dropped from their file) are for the kernel models' replays; trace statistics count accesses only".to_string();
            return Err(TraceError { path: path.to_path_buf(), offset: None, msg });
        }
        for &p in pages {
            let c = counts.get_mut(p);
            *c = c.saturating_add(1);
            by_level[level(p) as usize] += 1;
        }
        plain += kinds.iter().filter(|&&k| k == Kind::Plain).count() as u64;
        if let (Some(&a), Some(&b)) = (times.first(), times.last()) {
            first_t.get_or_insert(a);
            last_t = b;
        }
    }
    let c = s.counts();
    let bound = s.bound();
    let timed = c.timed == c.accesses && c.accesses > 0;
    let mut per_page = counts.values();
    per_page.sort_unstable_by(|a, b| b.cmp(a));
    let distinct = per_page.len() as u64;
    let total = c.accesses.max(1) as f64;
    let top = |frac: f64| {
        let n = ((distinct as f64 * frac).ceil() as usize).max(1).min(per_page.len());
        per_page[..n].iter().map(|&x| x as u64).sum::<u64>() as f64 / total
    };
    let mut popularity = Vec::new();
    if distinct > 0 {
        let mut r = 1u64;
        let step = (distinct as f64).powf(1.0 / CURVE_POINTS as f64).max(1.0 + 1e-9);
        while r < distinct {
            popularity.push((r, per_page[r as usize - 1] as u64));
            r = ((r as f64 * step).ceil() as u64).max(r + 1);
        }
        popularity.push((distinct, per_page[distinct as usize - 1] as u64));
    }
    // The sampling level: the smallest k whose pages' accesses fit the exact budget.
    let kept = |k: usize| by_level[k..].iter().sum::<u64>();
    let k = (0..64).find(|&k| kept(k) <= budget).unwrap_or(64);
    let rate = 0.5f64.powi(k as i32);
    let sampled = kept(k) as usize;

    // Pass 2: reuse distances (and the heatmap).
    let mut tree = Fenwick(vec![0; sampled + 1]);
    let mut last = PageTable::new();
    let mut buckets = vec![0u64; 65];
    let (mut cold, mut pos, mut index) = (0u64, 0usize, 0u64);
    let mut map = heatmap.map(|(tb, pb)| (tb.max(1), pb.max(1), vec![vec![0u64; pb.max(1)]; tb.max(1)]));
    let mut s = AccessStream::open(path, spec)?;
    while let Some((pages, _, _)) = s.next_accesses()? {
        for &p in pages {
            if let Some((tb, pb, m)) = &mut map {
                let t = (index as u128 * *tb as u128 / c.accesses.max(1) as u128) as usize;
                let q = (p as u128 * *pb as u128 / bound.max(1) as u128) as usize;
                m[t.min(*tb - 1)][q.min(*pb - 1)] += 1;
            }
            index += 1;
            if (level(p) as usize) < k {
                continue;
            }
            pos += 1;
            if pos > sampled {
                // The trace changed between the passes.
                return Err(crate::err(path, None, "the trace changed while it was read"));
            }
            let l = last.get_mut(p);
            if *l == 0 {
                cold += 1;
            } else {
                let q = *l as usize;
                let d = tree.prefix(pos - 1) - tree.prefix(q);
                tree.add(q, false);
                // Scaled to the whole trace: the sampled pages stand for 1/R as many.
                let d = (d as f64 / rate) as u64;
                buckets[64 - d.leading_zeros() as usize] += 1;
            }
            tree.add(pos, true);
            *l = pos as u32;
        }
    }
    let reuse = buckets
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(b, &n)| {
            let (min, max) = if b == 0 { (0, 0) } else { (1u64 << (b - 1), (1u64 << (b - 1)).saturating_mul(2) - 1) };
            ReuseBucket { min, max, accesses: n as f64 / rate }
        })
        .collect();
    Ok(TraceStats {
        accesses: c.accesses,
        requests: c.requests,
        skipped: c.skipped,
        distinct_pages: distinct,
        page_bound: bound,
        reads: c.reads - plain,
        writes: c.writes,
        touches: c.touches,
        plain,
        one_hit_wonders: per_page.iter().filter(|&&x| x == 1).count() as u64,
        top_1pct_share: if distinct > 0 { top(0.01) } else { 0.0 },
        top_10pct_share: if distinct > 0 { top(0.10) } else { 0.0 },
        time_span_ns: if timed { first_t.map(|f| (f, last_t)) } else { None },
        popularity,
        cold: cold as f64 / rate,
        reuse,
        reuse_rate: rate,
        heatmap: map.map(|(_, _, m)| m),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_trace(lines: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let d = tempfile::Builder::new().prefix("pagelab-stats-test-").tempdir().unwrap();
        let p = d.path().join("t.txt");
        std::fs::write(&p, lines).unwrap();
        (d, p)
    }

    #[test]
    fn counts_kinds_one_hit_wonders_and_the_top_share() {
        // Page 0 ten times, pages 1..=9 once each (9 one-hit wonders), kinds mixed.
        let mut t = String::from("T 0\nW 0\nR 0\n");
        t += &"0\n".repeat(7);
        t += &(1..=9).map(|p| format!("R {p}\n")).collect::<String>();
        let (_d, p) = text_trace(&t);
        let s = trace_stats(&p, &Spec::Text, None).unwrap();
        assert_eq!((s.accesses, s.distinct_pages, s.page_bound), (19, 10, 10));
        assert_eq!((s.touches, s.writes, s.reads, s.plain), (1, 1, 10, 7));
        assert_eq!(s.one_hit_wonders, 9);
        // The top 1% and 10% of 10 pages are one page: page 0's 10 of 19 accesses.
        assert_eq!(s.top_1pct_share, 10.0 / 19.0);
        assert_eq!(s.top_10pct_share, 10.0 / 19.0);
        assert_eq!(s.popularity.first(), Some(&(1, 10)));
        assert_eq!(s.popularity.last(), Some(&(10, 1)));
        assert_eq!(s.time_span_ns, None);
    }

    #[test]
    fn reuse_distances_count_the_distinct_pages_between() {
        // a b c a: distance 2 (b, c); b b: 0; c: 2 (a, b); a: 2 (b, c) — each repeat of the
        // pages in between counts once.
        let (_d, p) = text_trace("1\n2\n3\n1\n2\n2\n3\n1\n");
        let s = trace_stats(&p, &Spec::Text, None).unwrap();
        assert_eq!((s.cold, s.reuse_rate), (3.0, 1.0));
        let got: Vec<(u64, u64, f64)> = s.reuse.iter().map(|b| (b.min, b.max, b.accesses)).collect();
        // a → 2, b → 2 (c, a), b → 0, c → 2 (a, b), a → 2 (b, c).
        assert_eq!(got, vec![(0, 0, 1.0), (2, 3, 4.0)]);
    }

    #[test]
    fn a_loop_over_n_pages_reuses_at_distance_n_minus_one_exactly() {
        let n = 1000u64;
        let t: String = (0..5 * n).map(|i| format!("{}\n", i % n)).collect();
        let (_d, p) = text_trace(&t);
        let s = trace_stats(&p, &Spec::Text, Some((10, 4))).unwrap();
        assert_eq!(s.cold, n as f64);
        assert_eq!(s.reuse, vec![ReuseBucket { min: 512, max: 1023, accesses: (4 * n) as f64 }]);
        let m = s.heatmap.unwrap();
        assert_eq!((m.len(), m[0].len()), (10, 4));
        // Each time bin is half a loop: 500 accesses, over the first or last pages.
        assert_eq!(m.iter().map(|r| r.iter().sum::<u64>()).collect::<Vec<_>>(), vec![500; 10]);
        assert_eq!(m[0], vec![250, 250, 0, 0]);
    }

    #[test]
    fn a_long_trace_is_sampled_and_scaled_back() {
        // A loop over 4096 pages, 4 rounds, with a budget of 2048 exact accesses: sampled
        // at 1/8 or less, the distances of about 4095 scale back to the same bucket, give
        // or take one, and the accesses to about the trace's.
        let n = 4096u64;
        let t: String = (0..4 * n).map(|i| format!("{}\n", i % n)).collect();
        let (_d, p) = text_trace(&t);
        let s = stats_within(&p, &Spec::Text, None, 2048).unwrap();
        assert!(s.reuse_rate <= 0.125, "{}", s.reuse_rate);
        let reused: f64 = s.reuse.iter().map(|b| b.accesses).sum();
        assert!((reused - 3.0 * n as f64).abs() < 0.25 * 3.0 * n as f64, "{reused}");
        assert!((s.cold - n as f64).abs() < 0.25 * n as f64, "{}", s.cold);
        assert!(s.reuse.iter().all(|b| b.min >= 2048 && b.max < 8192), "{:?}", s.reuse);
        // Everything else stays exact.
        assert_eq!((s.accesses, s.distinct_pages), (4 * n, n));
    }
}
