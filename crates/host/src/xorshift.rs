//! One small seeded generator for what needs reproducible pseudo-random numbers but is not a
//! workload: test and benchmark data, and the `random` seam policy. Marsaglia's xorshift64
//! (shifts 13, 7, 17): one state word, the same sequence on every machine. Workloads draw
//! from `pagelab_workload::rng` (xoshiro256++), whose streams the kernel guests replay.

/// Marsaglia's xorshift64 with shifts (13, 7, 17). A zero state stays zero, so
/// [`XorShift64::new`] takes the seed as it is (callers that may pass 0 set a bit first).
#[derive(Clone, Debug)]
pub struct XorShift64 {
    state: u64,
}

impl XorShift64 {
    pub fn new(seed: u64) -> XorShift64 {
        XorShift64 { state: seed }
    }

    /// The next state, which is also the value drawn.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        x
    }

    /// A uniform draw in [0, 1) from the top 53 bits of the next value.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::XorShift64;

    #[test]
    fn follows_marsaglias_13_7_17_sequence() {
        // The first values from seed 1, computed by hand from the three shifts.
        let mut r = XorShift64::new(1);
        let a = r.next_u64();
        assert_eq!(a, 1082269761);
        let mut x = a;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        assert_eq!(r.next_u64(), x);
        assert!(r.next_f64() < 1.0);
    }

    #[test]
    fn a_zero_seed_stays_zero() {
        let mut r = XorShift64::new(0);
        assert_eq!(r.next_u64(), 0);
    }
}
