//! A log-linear histogram of nanoseconds: exact below 8, then 8 buckets per power of two, so
//! a quantile read from it is within 1/8 above the true value, at a few comparisons a
//! sample. The locks' wait times ([`crate::locking::LockStat`]) and the tasks' operation
//! latencies (the report's `latency`) both use it.

use serde::Serialize;

/// Buckets per power of two.
const SUB: u32 = 8;

/// Counts by log-linear bucket, and the largest sample.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Histogram {
    counts: Vec<u64>,
    max: u64,
}

impl Histogram {
    /// Counts one sample.
    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        let b = bucket(v);
        match self.counts.get_mut(b) {
            Some(c) => *c += 1,
            None => self.grow(b),
        }
        self.max = self.max.max(v);
    }

    /// The first sample of bucket `b` beyond the counts so far.
    #[cold]
    fn grow(&mut self, b: usize) {
        self.counts.resize(b + 1, 0);
        self.counts[b] = 1;
    }

    /// Adds another histogram's samples.
    pub fn merge(&mut self, o: &Histogram) {
        if self.counts.len() < o.counts.len() {
            self.counts.resize(o.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.max = self.max.max(o.max);
    }

    /// The samples recorded since `earlier`, a copy of this histogram taken before: the
    /// counts' difference. Its maximum is the top of its highest bucket (exact maxima are
    /// not kept per interval), at most this histogram's maximum.
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        let mut counts = self.counts.clone();
        for (a, b) in counts.iter_mut().zip(&earlier.counts) {
            *a -= b;
        }
        while counts.last() == Some(&0) {
            counts.pop();
        }
        let max = if counts.is_empty() { 0 } else { bucket_top(counts.len() - 1).min(self.max) };
        Histogram { counts, max }
    }

    /// Samples recorded (a sum over the buckets: recording stays one increment).
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The largest sample.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The value at quantile `q` (0..1): the upper bound of its bucket (within 1/8 of it),
    /// at most the largest sample; 0 without samples.
    pub fn quantile(&self, q: f64) -> u64 {
        let n = self.count();
        if n == 0 {
            return 0;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_top(b);
            }
        }
        bucket_top(self.counts.len().saturating_sub(1))
    }

    /// The report's figures; `None` without samples.
    pub fn latency(&self) -> Option<Latency> {
        let n = self.count();
        (n > 0).then(|| Latency {
            ops: n,
            p50_ns: self.quantile(0.5).min(self.max),
            p99_ns: self.quantile(0.99).min(self.max),
            p999_ns: self.quantile(0.999).min(self.max),
            max_ns: self.max,
        })
    }
}

/// Operations' modeled latency in a report: how many, the median, 99th and 99.9th
/// percentiles (each within 1/8 above the true value) and the largest, in ns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Latency {
    pub ops: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

/// The log-linear bucket of `v`: exact below 8, then 8 buckets per power of two.
#[inline(always)]
fn bucket(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let log = 63 - v.leading_zeros();
    let shift = log - 3;
    ((shift + 1) * SUB + ((v >> shift) as u32 - SUB)) as usize
}

/// The largest value of bucket `b`.
fn bucket_top(b: usize) -> u64 {
    let b = b as u32;
    if b < SUB {
        return b as u64;
    }
    let shift = b / SUB - 1;
    let low = ((SUB + b % SUB) as u64) << shift;
    low + (1u64 << shift) - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_within_an_eighth_of_the_samples() {
        let mut h = Histogram::default();
        for w in 1..=1000u64 {
            h.record(w * 100);
        }
        let (p50, p99, p999) = (h.quantile(0.5), h.quantile(0.99), h.quantile(0.999));
        assert!((50_000..=50_000 * 9 / 8).contains(&p50), "{p50}");
        assert!((99_000..=99_000 * 9 / 8).contains(&p99), "{p99}");
        assert!((99_900..=99_900 * 9 / 8).contains(&p999), "{p999}");
        assert_eq!((h.count(), h.max()), (1000, 100_000));
        for v in [0, 1, 7, 8, 9, 15, 16, 1000, u64::MAX / 2, u64::MAX] {
            assert!(bucket_top(bucket(v)) >= v && bucket_top(bucket(v)) - v <= v / 8, "{v}");
        }
    }

    #[test]
    fn an_interval_is_the_difference_of_two_snapshots() {
        let mut h = Histogram::default();
        for v in [10, 20, 30] {
            h.record(v);
        }
        let before = h.clone();
        for v in [1_000, 2_000] {
            h.record(v);
        }
        let d = h.since(&before);
        assert_eq!(d.count(), 2);
        assert!((1_000..=1_125).contains(&d.quantile(0.5)), "{}", d.quantile(0.5));
        assert!(d.max() >= 2_000 && d.max() <= 2_000, "{}", d.max());
        assert_eq!(h.since(&h).latency(), None);
        let mut m = before.clone();
        m.merge(&d);
        assert_eq!((m.count(), m.quantile(1.0)), (5, h.quantile(1.0)));
    }
}
