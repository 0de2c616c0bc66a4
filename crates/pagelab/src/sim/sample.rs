//! Not a kernel rule: a miniature scenario (`[sample] rate = R`, which `pagelab curve
//! SCENARIO --vary ... --sample R` sets), after miniature simulation (Waldspurger et al.,
//! USENIX ATC '17): the machine runs R of every object's pages in R of every size.
//!
//! Each object (a file, by name, so every task sharing it samples the same pages; an
//! anonymous region, by its task's name) is cut into *units* of its largest block size, and
//! a spatial hash keeps each unit with probability R. The kept units are renumbered densely,
//! in order, so the miniature object is the sample's pages: a sequential stream over the
//! full object stays sequential over the miniature one (readahead sees what it would see),
//! and an operation of a block keeps all of its pages or none (its count of pages, and so
//! its cost, stays that of the full machine's operation). An operation that touches no kept
//! unit is dropped with its think time, so the miniature task does R of the operations in
//! about R of the modeled time; the scenario's clocks (the flusher's period, dirty expiry,
//! the rstat flush, report intervals, `start`, `runtime`) are scaled by R to match
//! ([`crate::sim::scenario`]).

use pagelab_workload::Op;

/// The spatial hash: key `key` is in the sample of rate `rate` and seed `seed`. The same key
/// is always in or out, whatever else is sampled.
pub fn sampled(key: u64, rate: f64, seed: u64) -> bool {
    let h = pagelab_trace::mix64(key ^ pagelab_trace::mix64(seed.wrapping_add(0x9E37_79B9_7F4A_7C15)));
    ((h >> 11) as f64) < rate * (1u64 << 53) as f64
}

/// The rate and hash seed of a miniature scenario, and the scale it was built at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleSpec {
    /// R: the probability that the hash keeps a unit.
    pub rate: f64,
    pub seed: u64,
    /// The fraction of the scenario's pages the hash kept (R within sampling noise): every
    /// size and clock is scaled by it and the counts back by its inverse, so a miniature
    /// file is to the miniature memory exactly what the full file is to the full memory
    /// (SHARDS' adjustment; without it a cliff, a file just fitting in memory, falls on
    /// either side by the noise of which pages the hash kept).
    pub scale: f64,
}

/// The miniature of the objects `objects` (name, pages, largest block): the pages the hash
/// keeps of all of them together, or the first object of which it keeps none.
pub fn kept_pages<'a>(objects: impl IntoIterator<Item = (&'a str, u64, u64)>, rate: f64, seed: u64) -> Result<u64, String> {
    let spec = SampleSpec { rate, seed, scale: rate };
    let mut kept = 0;
    for (name, pages, block) in objects {
        match SampledObject::new(name, pages, block, spec).kept_pages() {
            0 => return Err(empty(name, pages, block, spec)),
            k => kept += k,
        }
    }
    Ok(kept)
}

/// The error for an object of which the hash keeps no page.
pub fn empty(name: &str, pages: u64, block: u64, spec: SampleSpec) -> String {
    format!(
        "sample.rate = {} (seed {}): no page of `{name}` ({pages} pages, sampled in blocks of {block}) is in the sample: raise sample.rate",
        spec.rate, spec.seed
    )
}

/// One object's sample: which of its units are kept, and where each kept unit's pages land
/// in the miniature object.
#[derive(Debug)]
pub struct SampledObject {
    unit: u64,
    pages: u64,
    /// Bit `u % 64` of word `u / 64`: unit `u` is kept.
    kept: Vec<u64>,
    /// Kept units in the words before word `i`.
    before: Vec<u64>,
}

impl SampledObject {
    /// Samples the `pages` pages of the object named `name` in units of `unit` pages. Costs a
    /// hash and under two bits per unit, once.
    pub fn new(name: &str, pages: u64, unit: u64, spec: SampleSpec) -> SampledObject {
        let unit = unit.max(1);
        let units = pages.div_ceil(unit);
        let salt = pagelab_trace::mix64(fnv1a(name.as_bytes()));
        let mut kept = vec![0u64; units.div_ceil(64) as usize];
        for u in 0..units {
            if sampled(salt.wrapping_add(u), spec.rate, spec.seed) {
                kept[(u / 64) as usize] |= 1 << (u % 64);
            }
        }
        let mut before = Vec::with_capacity(kept.len());
        let mut n = 0;
        for w in &kept {
            before.push(n);
            n += w.count_ones() as u64;
        }
        SampledObject { unit, pages, kept, before }
    }

    fn is_kept(&self, u: u64) -> bool {
        self.kept.get((u / 64) as usize).is_some_and(|w| w >> (u % 64) & 1 == 1)
    }

    /// Kept units below unit `u`.
    fn units_before(&self, u: u64) -> u64 {
        let (w, b) = ((u / 64) as usize, u % 64);
        match self.kept.get(w) {
            Some(word) => self.before[w] + (word & ((1u64 << b) - 1)).count_ones() as u64,
            None => self.before.last().map_or(0, |&n| n + self.kept.last().map_or(0, |w| w.count_ones() as u64)),
        }
    }

    /// Kept pages below page `p` of the full object: where `p` lands in the miniature one
    /// (every kept unit but the object's last is whole).
    fn pages_before(&self, p: u64) -> u64 {
        let p = p.min(self.pages);
        let u = p / self.unit;
        self.units_before(u) * self.unit + if self.is_kept(u) { p % self.unit } else { 0 }
    }

    /// The miniature object's size, pages.
    pub fn kept_pages(&self) -> u64 {
        self.pages_before(self.pages)
    }

    /// `op` on the miniature object: its kept pages, renumbered, or `None` if it keeps none.
    pub fn map(&self, mut op: Op) -> Option<Op> {
        let start = self.pages_before(op.page);
        let n = self.pages_before(op.page + op.npages as u64) - start;
        if n == 0 {
            return None;
        }
        op.page = start;
        op.npages = n as u32;
        Some(op)
    }
}

/// FNV-1a: a stable hash of an object's name (the same on every machine and build).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pagelab_workload::{Access, Advice};

    fn op(page: u64, npages: u32) -> Op {
        Op { object: 0, page, npages, write: false, access: Access::Buffered, advice: Advice::Normal, fill: false, think_ns: 0, due: None, more: false }
    }

    #[test]
    fn at_rate_one_every_operation_is_itself() {
        let s = SampledObject::new("f", 1000, 8, SampleSpec { rate: 1.0, seed: 3, scale: 1.0 });
        assert_eq!(s.kept_pages(), 1000);
        for (p, n) in [(0, 8), (8, 8), (992, 8), (17, 3)] {
            assert_eq!(s.map(op(p, n)), Some(op(p, n)));
        }
    }

    #[test]
    fn units_are_kept_near_the_rate_and_stably_per_name_and_seed() {
        let spec = SampleSpec { rate: 0.1, seed: 1, scale: 0.1 };
        let a = SampledObject::new("file-a", 1_000_000, 1, spec);
        let kept = a.kept_pages() as f64 / 1e6;
        assert!((kept - 0.1).abs() < 0.003, "kept {kept}");
        let again = SampledObject::new("file-a", 1_000_000, 1, spec);
        assert_eq!(a.kept, again.kept);
        let other_name = SampledObject::new("file-b", 1_000_000, 1, spec);
        let other_seed = SampledObject::new("file-a", 1_000_000, 1, SampleSpec { rate: 0.1, seed: 2, scale: 0.1 });
        assert_ne!(a.kept, other_name.kept);
        assert_ne!(a.kept, other_seed.kept);
        // A sample at a lower rate is a subset of one at a higher rate (the hash's threshold).
        let half = SampledObject::new("file-a", 1_000_000, 1, SampleSpec { rate: 0.05, seed: 1, scale: 0.05 });
        assert!(half.kept.iter().zip(&a.kept).all(|(h, k)| h & !k == 0));
    }

    #[test]
    fn a_block_keeps_all_its_pages_or_none_and_kept_blocks_are_dense_and_in_order() {
        let s = SampledObject::new("f", 64 * 1000, 64, SampleSpec { rate: 0.2, seed: 9, scale: 0.2 });
        let mut next = 0;
        for b in 0..1000u64 {
            match s.map(op(b * 64, 64)) {
                Some(m) => {
                    assert_eq!((m.page, m.npages), (next, 64), "block {b}");
                    next += 64;
                }
                None => assert!(!s.is_kept(b)),
            }
        }
        assert_eq!(next, s.kept_pages());
        // A page inside a kept block lands inside its block's miniature pages.
        let b = (0..1000).find(|&b| s.is_kept(b)).unwrap();
        assert_eq!(s.map(op(b * 64 + 5, 1)).unwrap().page, s.pages_before(b * 64) + 5);
    }

    #[test]
    fn an_operation_across_units_keeps_the_kept_ones_contiguously() {
        let s = SampledObject::new("f", 4096, 4, SampleSpec { rate: 0.5, seed: 4, scale: 0.5 });
        let m = s.map(op(0, 4096)).unwrap();
        assert_eq!((m.page, m.npages as u64), (0, s.kept_pages()));
        // A partial last unit: an object of 4097 pages has a one-page unit at its end.
        let t = SampledObject::new("f", 4097, 4, SampleSpec { rate: 1.0, seed: 4, scale: 1.0 });
        assert_eq!(t.kept_pages(), 4097);
        assert_eq!(t.map(op(4096, 1)), Some(op(4096, 1)));
    }
}
