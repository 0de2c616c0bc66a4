//! `zipf-exact:θ`: P(rank k) = k^−θ / Σ_{i=1..N} i^−θ exactly, for k = 1..N, drawn by
//! inverse CDF (a uniform draw times the total, found by binary search in the cumulative
//! sums), with ranks placed on blocks by a permutation ([`Permutation`]) so that every
//! block can be drawn and each has exactly one rank's probability.
//!
//! The cumulative sums take 8 bytes a block; they are computed once per (N, θ) and shared by
//! every job and sweep point that needs them while any of them lives. Above
//! [`TABLE_MAX_BLOCKS`] blocks (a 128 MiB table) the ranks are drawn by rejection-inversion
//! (Hörmann & Derflinger), whose draws have the same exact distribution in constant memory.
//! θ = 0 is the uniform distribution.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use crate::rng::Rng;

/// The most blocks whose cumulative sums are tabled for the inverse CDF.
pub const TABLE_MAX_BLOCKS: u64 = 1 << 24;

/// The cumulative sums Σ_{i=1..k} i^−θ for k = 1..N, shared per (N, θ) while in use.
fn cumulative(n: u64, theta: f64) -> Arc<Vec<f64>> {
    type Tables = Mutex<HashMap<(u64, u64), Weak<Vec<f64>>>>;
    static TABLES: OnceLock<Tables> = OnceLock::new();
    let tables = TABLES.get_or_init(Default::default);
    let key = (n, theta.to_bits());
    let mut t = tables.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = t.get(&key).and_then(Weak::upgrade) {
        return c;
    }
    // Tables no sampler holds any more go (the map keeps only live ones and this one).
    t.retain(|_, w| w.strong_count() > 0);
    let mut sum = 0.0f64;
    let c: Arc<Vec<f64>> = Arc::new(
        (1..=n)
            .map(|k| {
                sum += (k as f64).powf(-theta);
                sum
            })
            .collect(),
    );
    t.insert(key, Arc::downgrade(&c));
    c
}

/// The exact probability of rank `k` (1-based) of Zipf(θ) over `n` ranks.
pub fn probability(n: u64, theta: f64, k: u64) -> f64 {
    let c = cumulative(n, theta);
    (k as f64).powf(-theta) / c[n as usize - 1]
}

/// A bijection of `[0, n)`: an invertible mix of `⌈log2 n⌉`-bit numbers (multiplications
/// by odd constants, additions and xor-shifts, all modulo the power of two), applied again
/// while the result is not below `n` (cycle walking, under two rounds on average). Being a
/// bijection of the power-of-two range, walking its cycles maps `[0, n)` onto itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Permutation {
    n: u64,
    bits: u32,
    mask: u64,
    keys: [u64; 3],
}

impl Permutation {
    pub fn new(n: u64, rng: &mut Rng) -> Permutation {
        assert!(n > 0, "a permutation of at least one element");
        let bits = (64 - (n - 1).leading_zeros()).max(1);
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        Permutation { n, bits, mask, keys: [rng.next_u64(), rng.next_u64(), rng.next_u64()] }
    }

    #[inline]
    fn mix(&self, mut x: u64) -> u64 {
        const ODD: [u64; 3] = [0x9E37_79B9_7F4A_7C15, 0xBF58_476D_1CE4_E5B9, 0x94D0_49BB_1331_11EB];
        let shift = self.bits / 2 + 1;
        for (m, k) in ODD.iter().zip(self.keys) {
            x = (x.wrapping_mul(*m).wrapping_add(k)) & self.mask;
            x ^= x >> shift;
        }
        x
    }

    /// The image of `x < n`.
    #[inline]
    pub fn apply(&self, x: u64) -> u64 {
        debug_assert!(x < self.n);
        let mut y = self.mix(x);
        while y >= self.n {
            y = self.mix(y);
        }
        y
    }
}

/// The sampler of `zipf-exact:θ` over `n` blocks.
#[derive(Clone, Debug)]
pub struct ExactZipf {
    n: u64,
    how: How,
    perm: Option<Permutation>,
}

#[derive(Clone, Debug)]
enum How {
    Uniform,
    Table(Arc<Vec<f64>>),
    Rejection(crate::dist::RejectionInversionZipf),
}

impl ExactZipf {
    /// `scatter`: place ranks by a permutation drawn from `rng`; else rank k is block k − 1.
    pub fn new(n: u64, theta: f64, scatter: bool, rng: &mut Rng) -> ExactZipf {
        let perm = scatter.then(|| Permutation::new(n, rng));
        let how = if theta == 0.0 {
            How::Uniform
        } else if n <= TABLE_MAX_BLOCKS {
            How::Table(cumulative(n, theta))
        } else {
            How::Rejection(crate::dist::RejectionInversionZipf::new(n, theta))
        };
        ExactZipf { n, how, perm }
    }

    /// A block index.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let rank = match &self.how {
            How::Uniform => rng.below(self.n),
            How::Table(cdf) => {
                let total = *cdf.last().expect("at least one block");
                let x = rng.unit() * total;
                // The first rank whose cumulative sum exceeds x.
                cdf.partition_point(|&c| c <= x).min(cdf.len() - 1) as u64
            }
            How::Rejection(z) => z.sample(rng) - 1,
        };
        match &self.perm {
            Some(p) => p.apply(rank),
            None => rank,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chi-square statistic's critical value for `dof` degrees of freedom at the
    /// upper-tail probability whose normal quantile is `z` (Wilson–Hilferty).
    fn chi2_critical(dof: f64, z: f64) -> f64 {
        let a = 2.0 / (9.0 * dof);
        dof * (1.0 - a + z * a.sqrt()).powi(3)
    }

    #[test]
    fn a_million_draws_match_the_exact_probabilities_by_chi_square() {
        // Unscattered, so block k-1 is rank k. z = 3.09: a 1-in-1000 false alarm.
        for (n, theta) in [(1000u64, 0.9), (1000, 0.5), (200, 1.2)] {
            let mut rng = Rng::new(12345);
            let z = ExactZipf::new(n, theta, false, &mut rng);
            let mut h = vec![0u64; n as usize];
            let draws = 1_000_000u64;
            for _ in 0..draws {
                h[z.sample(&mut rng) as usize] += 1;
            }
            let chi2: f64 = (1..=n)
                .map(|k| {
                    let e = draws as f64 * probability(n, theta, k);
                    let o = h[k as usize - 1] as f64;
                    (o - e) * (o - e) / e
                })
                .sum();
            let crit = chi2_critical((n - 1) as f64, 3.09);
            assert!(chi2 < crit, "n={n} θ={theta}: chi-square {chi2:.1} over the 0.1% critical value {crit:.1}");
        }
    }

    #[test]
    fn the_top_ten_thousand_of_49152_pages_take_the_exact_share() {
        // The figure: an exact Zipf(0.9) over 49,152 pages gives its 10,000 most
        // popular pages Σ_{k≤10000} k^-0.9 / Σ_{k≤49152} k^-0.9 of the accesses, scattered
        // or not.
        let (n, theta) = (49_152u64, 0.9);
        let c = cumulative(n, theta);
        let want = c[9_999] / c[n as usize - 1];
        let mut rng = Rng::new(7);
        let z = ExactZipf::new(n, theta, true, &mut rng);
        // The blocks the 10,000 most popular ranks are placed on.
        let perm = z.perm.as_ref().expect("scattered");
        assert!(matches!(z.how, How::Table(_)));
        let mut hot = vec![false; n as usize];
        for r in 0..10_000 {
            hot[perm.apply(r) as usize] = true;
        }
        let draws = 400_000;
        let top = (0..draws).filter(|_| hot[z.sample(&mut rng) as usize]).count();
        let got = top as f64 / draws as f64;
        assert!((got - want).abs() < 0.005, "top-10000 share {got:.4}, exact {want:.4}");
    }

    #[test]
    fn the_scatter_is_a_permutation_for_any_size() {
        for n in [1u64, 2, 3, 7, 8, 9, 1000, 49_152, 65_537] {
            let p = Permutation::new(n, &mut Rng::new(n));
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = p.apply(x);
                assert!(y < n, "n={n}: {x} -> {y}");
                assert!(!seen[y as usize], "n={n}: {y} hit twice");
                seen[y as usize] = true;
            }
        }
    }

    #[test]
    fn the_cached_table_is_the_sum_of_powers() {
        let c = cumulative(5, 1.0);
        let want = [1.0, 1.5, 1.5 + 1.0 / 3.0, 1.5 + 1.0 / 3.0 + 0.25, 1.5 + 1.0 / 3.0 + 0.25 + 0.2];
        for (a, b) in c.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{a} {b}");
        }
        assert!(Arc::ptr_eq(&c, &cumulative(5, 1.0)), "shared while in use");
    }

    #[test]
    fn rejection_inversion_above_the_table_limit_draws_the_same_distribution() {
        // The same n both ways (the limit aside): the rejection sampler's histogram of the
        // first ranks matches the exact probabilities by chi-square.
        let (n, theta, draws) = (5000u64, 0.9, 1_000_000u64);
        let z = ExactZipf { n, how: How::Rejection(crate::dist::RejectionInversionZipf::new(n, theta)), perm: None };
        let mut rng = Rng::new(77);
        let head = 200usize;
        let mut h = vec![0u64; head + 1];
        for _ in 0..draws {
            h[(z.sample(&mut rng) as usize).min(head)] += 1;
        }
        let p_tail: f64 = 1.0 - (1..=head as u64).map(|k| probability(n, theta, k)).sum::<f64>();
        let chi2: f64 = (0..=head)
            .map(|i| {
                let e = draws as f64 * if i < head { probability(n, theta, i as u64 + 1) } else { p_tail };
                let o = h[i] as f64;
                (o - e) * (o - e) / e
            })
            .sum();
        let crit = chi2_critical(head as f64, 3.09);
        assert!(chi2 < crit, "chi-square {chi2:.1} over the 0.1% critical value {crit:.1}");
    }

    #[test]
    fn theta_zero_is_uniform() {
        let z = ExactZipf::new(10, 0.0, false, &mut Rng::new(1));
        let mut rng = Rng::new(2);
        let mut h = [0u32; 10];
        for _ in 0..100_000 {
            h[z.sample(&mut rng) as usize] += 1;
        }
        assert!(h.iter().all(|&c| (9_000..11_000).contains(&c)), "{h:?}");
    }
}
