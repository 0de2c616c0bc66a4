//! Not a kernel rule: the corrections that let a machine R times smaller than the one it
//! stands for behave as that machine would, in a miniature simulation (`pagelab curve
//! --sample R`, Waldspurger et al., USENIX ATC '17). Everything else in the miniature machine
//! is the kernel's, on R of the pages in R of the memory.
//!
//! Three of the classic LRU's rules are not scale-free, and one of cache_ext's. A miniature
//! machine that follows the first two literally keeps its active file list about twice as
//! large (relative to its memory) as the full machine does, and misses 2–4 points less at a
//! few thousand pages (docs/curve.md):
//!
//! * `get_scan_count()` scans `lru_size >> priority` pages of a list: an integer that rounds
//!   down, so a list R times shorter is scanned less than R times as much, and at kswapd's
//!   high priorities not at all. The miniature machine takes the full machine's count (of
//!   the list R times longer) and scales it back by R, rounding up or down at random with
//!   the probability that keeps its mean ([`Miniature::scale`]).
//! * `prepare_scan_count()` lets reclaim deactivate file pages only if a refault activated
//!   one since the last reclaim run (`snapshot_refaults()`). A kswapd run reclaims up to the
//!   high watermark, R times fewer pages in the miniature machine, so a run holds R times
//!   fewer refaults and more runs see none. The miniature machine compares against the
//!   refaults of round(1/R) runs ago ([`Miniature::refault_window`]), a window as long in the
//!   trace as one run of the full machine.
//! * `inactive_is_low()` wants an inactive list at least sqrt(10 × GiB) times smaller than
//!   the active one, GiB the size of both lists: 1 below 1 GiB, 3 at 1 GiB, 9 at 8 GiB. The
//!   miniature machine takes the full machine's ratio, from its lists' unscaled size.
//! * cache_ext's reclaim under its kernel-LRU fallback (`machine.seam_fallback`) asks the
//!   policy for get_scan_count()'s inactive-file target in requests of up to 32 candidates.
//!   A target scaled by R would make the requests R times smaller, and cache_ext's sampling
//!   policies choose worse in small requests (docs/journal/2026-11-30-cache-ext-requests.md).
//!   The miniature machine makes R of the full machine's requests, each of the full
//!   machine's size (policy/seam/host.rs: `CacheExtCall`).

/// A miniature simulation's scale and its deterministic rounding stream.
#[derive(Clone, Debug)]
pub struct Miniature {
    rate: f64,
    /// 1/R, so the per-scan arithmetic multiplies (and truncates rather than calling libm's
    /// round and floor, which baseline x86-64 has no instruction for).
    inverse: f64,
    draws: u64,
}

impl Miniature {
    /// The corrections for a machine `rate` times the size of the one it stands for; none
    /// at rate 1, where the machine is the full one.
    pub fn new(rate: f64) -> Option<Miniature> {
        (rate > 0.0 && rate < 1.0).then_some(Miniature { rate, inverse: 1.0 / rate, draws: 0 })
    }

    /// The full machine's count of pages for `n` of the miniature machine's.
    pub fn unscale(&self, n: u64) -> u64 {
        (n as f64 * self.inverse + 0.5) as u64
    }

    /// `n` pages of the full machine brought back to the miniature machine: `n × R`, rounded
    /// up with the probability of its fraction (so its mean is exact), from a counter hashed
    /// by `mix64`: the same run gives the same draws.
    pub fn scale(&mut self, n: u64) -> u64 {
        let x = n as f64 * self.rate;
        let whole = x as u64;
        self.draws += 1;
        let u = (pagelab_trace::mix64(self.draws) >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        whole + (u < x - whole as f64) as u64
    }

    /// How many of the miniature machine's reclaim runs span one of the full machine's:
    /// round(1/R).
    pub fn refault_window(&self) -> usize {
        (self.inverse + 0.5) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_correction_at_rate_one() {
        assert!(Miniature::new(1.0).is_none());
    }

    #[test]
    fn scaled_counts_keep_their_mean_and_round_to_neighbours() {
        let mut m = Miniature::new(0.1).unwrap();
        let draws: Vec<u64> = (0..100_000).map(|_| m.scale(7)).collect();
        assert!(draws.iter().all(|&d| d == 0 || d == 1));
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        assert!((mean - 0.7).abs() < 0.01, "mean {mean}");
        assert_eq!(m.scale(40), 4);
    }

    #[test]
    fn the_same_miniature_draws_the_same_counts() {
        let (mut a, mut b) = (Miniature::new(0.01).unwrap(), Miniature::new(0.01).unwrap());
        for n in 0..1000 {
            assert_eq!(a.scale(n), b.scale(n));
        }
    }

    #[test]
    fn unscaling_and_the_window_follow_the_rate() {
        let m = Miniature::new(0.1).unwrap();
        assert_eq!(m.unscale(963), 9630);
        assert_eq!(m.refault_window(), 10);
        assert_eq!(Miniature::new(0.03).unwrap().refault_window(), 33);
    }
}
