//! Access distributions over the blocks of an object.
//!
//! `zipf:θ` (θ < 1) and `pareto:h` follow fio's own generators (lib/zipf.c, Gray's
//! approximation of Zipf and fio's Pareto power law), including fio's scattering of ranks over
//! the file with a golden-ratio multiply plus a random offset, so a pagelab "fio zipf" job has
//! the popularity profile fio's has. `zipf:θ` with θ ≥ 1, which fio refuses, uses exact
//! rejection-inversion sampling (Hörmann & Derflinger), the method memtier's `Z` pattern uses.
//!
//! fio's scatter is not a permutation unless the block count is a power of two: at θ = 0.9
//! over 49,152 pages, 400,000 draws touch only about 20,000 distinct pages, and the top
//! 10,000 pages take 89% of the accesses where an exact Zipf(0.9) gives them 78%.
//! `zipf-exact:θ` is that exact Zipf ([`crate::exact`]): P(rank k) ∝ k^−θ for k = 1..N,
//! drawn by inverse CDF, ranks placed by a permutation (`scatter = false`: rank k is block
//! k − 1). `scrambled-zipfian`, `zipfian` and `latest` are YCSB's generators
//! ([`crate::ycsb`]).

use crate::rng::Rng;

/// fio's `GOLDEN_RATIO_64`, used to scatter popularity ranks over the blocks.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
/// fio sums at most this many terms of the zeta function.
const ZIPF_MAX_TERMS: u64 = 10_000_000;

#[derive(Clone, Debug, PartialEq)]
pub enum Distribution {
    /// Block `i mod n` for the i-th access: streaming, and looping when ops exceed the blocks.
    Sequential,
    Uniform,
    Zipf(f64),
    Pareto(f64),
    /// Normal around the middle block with this standard deviation in percent of the blocks.
    Normal(f64),
    /// A fraction `hot` of the blocks receives a fraction `prob` of the accesses.
    HotCold {
        hot: f64,
        prob: f64,
    },
    /// An exact Zipf: P(rank k) ∝ k^−θ for k = 1..N, by inverse CDF.
    ZipfExact(f64),
    /// YCSB's ScrambledZipfianGenerator (constant 0.99, FNV-64 scrambling).
    ScrambledZipfian,
    /// YCSB's ZipfianGenerator (constant 0.99), unscrambled: block 0 the most popular.
    YcsbZipfian,
    /// YCSB's SkewedLatestGenerator: the last block the most popular.
    Latest,
    /// My-YCSB's ZipfianWorkload (constant 0.99 over the blocks themselves, FNV-1 scrambling,
    /// the two hottest ranks unscrambled).
    MyYcsbZipfian,
    /// My-YCSB's LatestWorkload, an lsm store's only (crate::ycsb::MyYcsbLatest): each
    /// client thread reads behind its own inserts.
    MyYcsbLatest,
    /// TPC-C's non-uniform random NURand(A, 0, n−1) over the blocks (TPC-C 5.11, clause
    /// 2.1.6): `((random(0, A) | random(0, n−1)) + C) mod n`, with C drawn once per task.
    NuRand(u64),
}

impl Distribution {
    /// Parses `seq`, `uniform`/`random`, `zipf:0.8`, `pareto:0.2`, `normal:10`/`gauss:10`,
    /// `hotcold:0.2:0.8`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim().to_ascii_lowercase();
        let (name, args) = match t.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (t.as_str(), None),
        };
        let num = |a: Option<&str>, what: &str| -> Result<f64, String> {
            let a = a.ok_or_else(|| format!("`{text}`: {name} needs a parameter, e.g. {name}:{what}"))?;
            a.parse::<f64>().map_err(|_| format!("`{text}`: `{a}` is not a number"))
        };
        let d = match name {
            "seq" | "sequential" | "loop" => Distribution::Sequential,
            "uniform" | "random" | "rand" => Distribution::Uniform,
            "zipf" => {
                let theta = num(args, "0.8")?;
                if theta.is_nan() || theta <= 0.0 || theta > 10.0 {
                    return Err(format!("`{text}`: zipf exponent must be in (0, 10]"));
                }
                Distribution::Zipf(theta)
            }
            "pareto" => {
                let h = num(args, "0.2")?;
                if !(h > 0.0 && h < 1.0) {
                    return Err(format!("`{text}`: pareto parameter must be in (0, 1)"));
                }
                Distribution::Pareto(h)
            }
            "normal" | "gauss" | "gaussian" => {
                // The README writes the deviation as `normal:σ%`; the percent sign is optional.
                let dev = num(args.map(|a| a.trim().trim_end_matches('%').trim()), "10")?;
                if !(dev > 0.0 && dev <= 100.0) {
                    return Err(format!("`{text}`: the deviation is a percentage in (0, 100]"));
                }
                Distribution::Normal(dev)
            }
            "zipf-exact" | "zipf_exact" => {
                let theta = num(args, "0.9")?;
                if theta.is_nan() || !(0.0..=10.0).contains(&theta) {
                    return Err(format!("`{text}`: the exact zipf exponent must be in [0, 10]"));
                }
                Distribution::ZipfExact(theta)
            }
            "scrambled-zipfian" | "scrambled_zipfian" | "ycsb-scrambled-zipfian" => Distribution::ScrambledZipfian,
            "zipfian" | "ycsb-zipfian" => Distribution::YcsbZipfian,
            "latest" | "ycsb-latest" | "skewed-latest" => Distribution::Latest,
            "my-ycsb-zipfian" | "my_ycsb_zipfian" => Distribution::MyYcsbZipfian,
            "my-ycsb-latest" | "my_ycsb_latest" => Distribution::MyYcsbLatest,
            "nurand" => {
                let a = args.ok_or_else(|| format!("`{text}`: nurand needs TPC-C's constant A, e.g. nurand:8191"))?;
                let v: u64 = a.trim().parse().map_err(|_| format!("`{text}`: `{a}` is not a whole number"))?;
                if v == 0 || v >= 1 << 40 {
                    return Err(format!("`{text}`: A must be in [1, 2^40)"));
                }
                Distribution::NuRand(v)
            }
            "hotcold" => {
                let a = args.ok_or_else(|| format!("`{text}`: use hotcold:HOT_FRACTION:HOT_PROBABILITY, e.g. hotcold:0.2:0.8"))?;
                let (h, p) = a.split_once(':').ok_or_else(|| format!("`{text}`: use hotcold:HOT_FRACTION:HOT_PROBABILITY, e.g. hotcold:0.2:0.8"))?;
                let hot: f64 = h.parse().map_err(|_| format!("`{text}`: `{h}` is not a number"))?;
                let prob: f64 = p.parse().map_err(|_| format!("`{text}`: `{p}` is not a number"))?;
                if !(hot > 0.0 && hot < 1.0 && (0.0..=1.0).contains(&prob)) {
                    return Err(format!("`{text}`: the hot fraction must be in (0, 1) and the probability in [0, 1]"));
                }
                Distribution::HotCold { hot, prob }
            }
            _ => {
                return Err(format!(
                "`{text}` is not a distribution (use seq, uniform, zipf:θ, zipf-exact:θ, scrambled-zipfian, zipfian, latest, my-ycsb-zipfian, my-ycsb-latest, pareto:h, normal:σ%, hotcold:f:p, nurand:A)"
            ))
            }
        };
        Ok(d)
    }
}

/// fio's zeta sum `1 + 2^-θ + ... + terms^-θ` (lib/zipf.c: zipf_update()), summed once per
/// process for each (terms, θ): it is the costliest part of setting up a sampler (one
/// `pow()` per block, up to 10 M), and every job of a workload, every point of a sweep
/// with the same file size and exponent needs the same sum. A cached sum is the same
/// sequential fold, so its bits are those of summing afresh.
fn zeta(terms: u64, theta: f64) -> f64 {
    type Sums = std::sync::Mutex<std::collections::HashMap<(u64, u64), f64>>;
    static SUMS: std::sync::OnceLock<Sums> = std::sync::OnceLock::new();
    let sums = SUMS.get_or_init(Default::default);
    let key = (terms, theta.to_bits());
    if let Some(&z) = sums.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return z;
    }
    let z = (1..=terms).map(|i| (i as f64).powf(-theta)).sum();
    sums.lock().unwrap_or_else(|e| e.into_inner()).insert(key, z);
    z
}

/// A sampler of block indices in `[0, n)` for one distribution and one object size.
#[derive(Clone, Debug)]
pub struct Sampler {
    n: u64,
    next_seq: u64,
    scatter: bool,
    rand_off: u64,
    kind: SamplerKind,
}

#[derive(Clone, Debug)]
enum SamplerKind {
    Sequential,
    Uniform,
    Gray { zeta2: f64, zetan: f64, alpha: f64, eta: f64 },
    RejectionInversion(RejectionInversionZipf),
    Pareto { pow: f64 },
    Normal { stddev: f64 },
    HotCold { hot_blocks: u64, prob: f64 },
    Exact(crate::exact::ExactZipf),
    Ycsb(crate::ycsb::YcsbSampler),
    NuRand { a: u64, c: u64 },
}

impl Sampler {
    /// `scatter` spreads popularity ranks over the object as fio does; without it rank r is
    /// block r (the hottest blocks are at the start).
    pub fn new(dist: &Distribution, n: u64, scatter: bool, rng: &mut Rng) -> Self {
        assert!(n > 0, "a sampler needs at least one block");
        let kind = match *dist {
            Distribution::Sequential => SamplerKind::Sequential,
            Distribution::Uniform => SamplerKind::Uniform,
            Distribution::Zipf(theta) if theta < 1.0 => {
                let zetan = zeta(n.min(ZIPF_MAX_TERMS), theta);
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                SamplerKind::Gray { zeta2, zetan, alpha, eta }
            }
            Distribution::Zipf(theta) => SamplerKind::RejectionInversion(RejectionInversionZipf::new(n, theta)),
            Distribution::Pareto(h) => SamplerKind::Pareto { pow: h.ln() / (1.0 - h).ln() },
            Distribution::Normal(dev) => SamplerKind::Normal { stddev: (n as f64 * dev / 100.0).max(1e-9) },
            Distribution::HotCold { hot, prob } => SamplerKind::HotCold { hot_blocks: ((n as f64 * hot).round() as u64).clamp(1, n), prob },
            // Built below, after the scatter offset is drawn.
            Distribution::ZipfExact(_) => SamplerKind::Uniform,
            Distribution::ScrambledZipfian => SamplerKind::Ycsb(crate::ycsb::YcsbSampler::scrambled(n)),
            Distribution::YcsbZipfian => SamplerKind::Ycsb(crate::ycsb::YcsbSampler::zipfian(n)),
            Distribution::Latest => SamplerKind::Ycsb(crate::ycsb::YcsbSampler::latest(n)),
            Distribution::MyYcsbZipfian => SamplerKind::Ycsb(crate::ycsb::YcsbSampler::my_ycsb(n)),
            Distribution::MyYcsbLatest => SamplerKind::Ycsb(crate::ycsb::YcsbSampler::my_ycsb_rank(n)),
            // Built below, after the scatter offset is drawn.
            Distribution::NuRand(_) => SamplerKind::Uniform,
        };
        // fio draws its scatter offset first, from the same generator.
        let rand_off = rng.next_u32() as u64;
        let kind = match *dist {
            Distribution::ZipfExact(theta) => SamplerKind::Exact(crate::exact::ExactZipf::new(n, theta, scatter, rng)),
            // TPC-C's C: a constant of the run, random in [0, A].
            Distribution::NuRand(a) => SamplerKind::NuRand { a, c: rng.below(a + 1) },
            _ => kind,
        };
        Sampler { n, next_seq: 0, scatter, rand_off, kind }
    }

    pub fn blocks(&self) -> u64 {
        self.n
    }

    #[inline]
    fn place(&self, rank: u64) -> u64 {
        if self.scatter {
            (rank.wrapping_mul(GOLDEN_RATIO_64).wrapping_add(self.rand_off)) % self.n
        } else {
            rank % self.n
        }
    }

    /// The next block index.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        let n = self.n;
        match &self.kind {
            SamplerKind::Sequential => {
                let b = self.next_seq;
                self.next_seq = if b + 1 == n { 0 } else { b + 1 };
                b
            }
            SamplerKind::Uniform => rng.below(n),
            SamplerKind::Gray { zeta2, zetan, alpha, eta } => {
                // fio lib/zipf.c: zipf_next(), with a 32-bit uniform draw as fio's.
                let (alpha, eta) = (*alpha, *eta);
                let u = rng.next_u32() as f64 / u32::MAX as f64;
                let z = u * zetan;
                let v = if z < 1.0 {
                    1
                } else if z < *zeta2 {
                    2
                } else {
                    1 + (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                self.place(v - 1)
            }
            SamplerKind::RejectionInversion(z) => {
                let rank = z.sample(rng) - 1;
                self.place(rank)
            }
            SamplerKind::Pareto { pow } => {
                let u = rng.next_u32() as f64 / u32::MAX as f64;
                let v = ((n - 1) as f64 * u.powf(*pow)) as u64;
                self.place(v)
            }
            SamplerKind::Normal { stddev } => {
                let mean = n as f64 / 2.0;
                loop {
                    // Box-Muller; redraw values that fall outside the object.
                    let u1 = rng.unit().max(f64::MIN_POSITIVE);
                    let u2 = rng.unit();
                    let g = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                    let x = mean + g * stddev;
                    if x >= 0.0 && x < n as f64 {
                        let rank = x as u64;
                        return self.place(rank);
                    }
                }
            }
            SamplerKind::HotCold { hot_blocks, prob } => {
                let rank = if rng.unit() < *prob || *hot_blocks == n { rng.below(*hot_blocks) } else { hot_blocks + rng.below(n - hot_blocks) };
                self.place(rank)
            }
            // These place their ranks themselves (a permutation, YCSB's hash or none).
            SamplerKind::Exact(z) => z.sample(rng),
            SamplerKind::Ycsb(y) => y.sample(rng),
            // The blocks are the items in key order: NURand's skew is on their low bits, so
            // it is not scattered.
            SamplerKind::NuRand { a, c } => ((rng.below(a + 1) | rng.below(n)) + c) % n,
        }
    }
}

/// Exact Zipf sampling over ranks 1..=n with exponent s > 0 by rejection-inversion.
#[derive(Clone, Debug)]
pub(crate) struct RejectionInversionZipf {
    n: f64,
    s: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s_param: f64,
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

impl RejectionInversionZipf {
    pub(crate) fn new(n: u64, s: f64) -> Self {
        let mut z = RejectionInversionZipf { n: n as f64, s, h_integral_x1: 0.0, h_integral_n: 0.0, s_param: 0.0 };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(n as f64 + 0.5);
        z.s_param = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.s) * lx) * lx
    }
    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (helper1(t) * x).exp()
    }
    pub(crate) fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.unit() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s_param || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(dist: &Distribution, n: u64, draws: usize, scatter: bool) -> Vec<u64> {
        let mut rng = Rng::new(3);
        let mut s = Sampler::new(dist, n, scatter, &mut rng);
        let mut h = vec![0u64; n as usize];
        for _ in 0..draws {
            let b = s.next(&mut rng);
            assert!(b < n);
            h[b as usize] += 1;
        }
        h
    }

    #[test]
    fn parse_names_and_rejects_nonsense() {
        assert_eq!(Distribution::parse("zipf:0.8").unwrap(), Distribution::Zipf(0.8));
        assert_eq!(Distribution::parse("random").unwrap(), Distribution::Uniform);
        assert_eq!(Distribution::parse("hotcold:0.1:0.9").unwrap(), Distribution::HotCold { hot: 0.1, prob: 0.9 });
        assert!(Distribution::parse("zipf").unwrap_err().contains("needs a parameter"));
        assert!(Distribution::parse("pareto:2").is_err());
        assert!(Distribution::parse("bimodal").unwrap_err().contains("not a distribution"));
    }

    #[test]
    fn sequential_wraps_around() {
        let mut rng = Rng::new(1);
        let mut s = Sampler::new(&Distribution::Sequential, 3, false, &mut rng);
        let v: Vec<u64> = (0..7).map(|_| s.next(&mut rng)).collect();
        assert_eq!(v, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn zipf_ranks_follow_the_power_law() {
        // Without scatter rank r is block r: frequency(rank 1)/frequency(rank 2) ≈ 2^θ.
        for theta in [0.8, 1.0, 1.2] {
            let h = histogram(&Distribution::Zipf(theta), 1000, 400_000, false);
            let ratio = h[0] as f64 / h[1] as f64;
            let want = 2f64.powf(theta);
            assert!((ratio / want - 1.0).abs() < 0.08, "θ={theta}: ratio {ratio} want {want}");
            assert!(h[0] > h[9] && h[9] > h[99], "θ={theta} not decreasing");
        }
    }

    #[test]
    fn the_cached_zeta_sum_has_the_bits_of_a_fresh_one() {
        for (terms, theta) in [(1u64, 0.5), (1000, 0.8), (61_440, 0.5), (100_003, 0.99)] {
            let fresh: f64 = (1..=terms).map(|i| (i as f64).powf(-theta)).sum();
            assert_eq!(zeta(terms, theta).to_bits(), fresh.to_bits(), "{terms} {theta}");
            assert_eq!(zeta(terms, theta).to_bits(), fresh.to_bits(), "{terms} {theta}, cached");
        }
        assert_ne!(zeta(1000, 0.8), zeta(1001, 0.8));
        assert_ne!(zeta(1000, 0.8), zeta(1000, 0.7));
    }

    #[test]
    fn hotcold_puts_the_probability_on_the_hot_fraction() {
        let h = histogram(&Distribution::HotCold { hot: 0.2, prob: 0.8 }, 100, 100_000, false);
        let hot: u64 = h[..20].iter().sum();
        assert!((hot as f64 / 100_000.0 - 0.8).abs() < 0.01, "hot share {hot}");
    }

    /// TPC-C's NURand(A): the OR with random(0, A) sets the low bits of a uniform draw, so
    /// a residue v of the low 7 bits (A = 127) has probability 3^popcount(v) / 128² (each of
    /// its set bits comes from either draw or both, each clear bit from neither), shifted by
    /// C; sorted, the residues' shares must be those.
    #[test]
    fn nurand_skews_the_low_bits_as_tpc_c_defines_it() {
        let draws = 400_000;
        let h = histogram(&Distribution::NuRand(127), 1024, draws, false);
        let mut residue = [0u64; 128];
        for (b, &c) in h.iter().enumerate() {
            residue[b % 128] += c;
        }
        let mut got: Vec<f64> = residue.iter().map(|&c| c as f64 / draws as f64).collect();
        let mut want: Vec<f64> = (0u32..128).map(|v| 3f64.powi(v.count_ones() as i32) / 16384.0).collect();
        got.sort_by(f64::total_cmp);
        want.sort_by(f64::total_cmp);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 0.004 + 0.05 * w, "residue share {g} against {w}");
        }
        assert!((got[127] - 2187.0 / 16384.0).abs() < 0.005, "the hottest residue {}", got[127]);
    }

    #[test]
    fn nurand_needs_a_whole_positive_a() {
        assert_eq!(Distribution::parse("nurand:8191").unwrap(), Distribution::NuRand(8191));
        assert!(Distribution::parse("nurand").unwrap_err().contains("nurand:8191"));
        assert!(Distribution::parse("nurand:0").unwrap_err().contains("[1, 2^40)"));
        assert!(Distribution::parse("nurand:1.5").unwrap_err().contains("not a whole number"));
    }

    /// The README documents `normal:σ%`: the deviation with its percent sign parses as without.
    #[test]
    fn normal_accepts_the_readme_syntax_with_a_percent_sign() {
        assert_eq!(Distribution::parse("normal:10%").unwrap(), Distribution::parse("normal:10").unwrap());
        assert_eq!(Distribution::parse("gauss: 5 %").unwrap(), Distribution::Normal(5.0));
        assert!(Distribution::parse("normal:%").unwrap_err().contains("is not a number"));
    }

    #[test]
    fn normal_centres_on_the_middle() {
        let h = histogram(&Distribution::Normal(10.0), 1000, 100_000, false);
        let mid: u64 = h[400..600].iter().sum();
        // ±1σ holds 68% of a normal distribution.
        assert!((mid as f64 / 100_000.0 - 0.683).abs() < 0.02, "middle share {mid}");
    }

    #[test]
    fn scatter_keeps_every_draw_in_range_for_odd_sizes() {
        for n in [1u64, 7, 1_000_003] {
            let mut rng = Rng::new(9);
            let mut s = Sampler::new(&Distribution::Zipf(0.5), n, true, &mut rng);
            for _ in 0..10_000 {
                assert!(s.next(&mut rng) < n);
            }
        }
    }
}

#[cfg(test)]
mod exact_and_ycsb_tests {
    use super::*;

    /// Distinct blocks drawn and the share of draws on the 10,000 most drawn blocks.
    fn distinct_and_top_share(d: &str, n: u64, draws: usize) -> (usize, f64) {
        let mut rng = Rng::new(2024);
        let mut s = Sampler::new(&Distribution::parse(d).unwrap(), n, true, &mut rng);
        let mut h = vec![0u64; n as usize];
        for _ in 0..draws {
            h[s.next(&mut rng) as usize] += 1;
        }
        h.sort_unstable_by(|a, b| b.cmp(a));
        (h.iter().filter(|&&c| c > 0).count(), h[..10_000].iter().sum::<u64>() as f64 / draws as f64)
    }

    #[test]
    fn fios_zipf_collides_where_zipf_exact_reaches_every_block() {
        // The figure: θ = 0.9 over 49,152 pages (not a power of two), 400,000 draws.
        // fio's scatter maps several ranks to one block and some blocks to none, so fewer
        // blocks are drawn and the hottest 10,000 take more than the exact share.
        let (n, draws) = (49_152u64, 400_000);
        let (fio_distinct, fio_top) = distinct_and_top_share("zipf:0.9", n, draws);
        let (exact_distinct, exact_top) = distinct_and_top_share("zipf-exact:0.9", n, draws);
        let c: f64 = (1..=n).map(|k| (k as f64).powf(-0.9)).sum();
        let want: f64 = (1..=10_000u64).map(|k| (k as f64).powf(-0.9)).sum::<f64>() / c;
        eprintln!("zipf:0.9 {fio_distinct} distinct, top 10k {fio_top:.3}; zipf-exact:0.9 {exact_distinct} distinct, top 10k {exact_top:.3} (exact {want:.3})");
        // The 10,000 most drawn blocks of a sample take a little more than the 10,000 most
        // probable ranks (some lucky blocks of the tail make the cut).
        assert!(exact_top >= want && exact_top - want < 0.02, "zipf-exact's top-10,000 share {exact_top:.3}, exact {want:.3}");
        assert!(fio_top > exact_top + 0.05 && fio_distinct * 2 < exact_distinct, "fio: {fio_distinct} blocks, top share {fio_top:.3}");
        // And fio's scatter cannot reach every block at all: its image of all n ranks.
        let s = Sampler::new(&Distribution::Zipf(0.9), n, true, &mut Rng::new(1));
        let mut hit = vec![false; n as usize];
        (0..n).for_each(|r| hit[s.place(r) as usize] = true);
        assert!(hit.iter().any(|h| !h), "a permutation only for a power-of-two block count");
    }

    #[test]
    fn the_exact_and_ycsb_names_parse_and_stay_in_range() {
        assert_eq!(Distribution::parse("zipf-exact:0.9").unwrap(), Distribution::ZipfExact(0.9));
        assert_eq!(Distribution::parse("scrambled-zipfian").unwrap(), Distribution::ScrambledZipfian);
        assert_eq!(Distribution::parse("latest").unwrap(), Distribution::Latest);
        assert_eq!(Distribution::parse("my-ycsb-zipfian").unwrap(), Distribution::MyYcsbZipfian);
        assert_eq!(Distribution::parse("zipfian").unwrap(), Distribution::YcsbZipfian);
        assert!(Distribution::parse("zipf-exact").unwrap_err().contains("needs a parameter"));
        assert!(Distribution::parse("zipf-exact:-1").is_err());
        for d in ["zipf-exact:0.9", "scrambled-zipfian", "latest", "zipfian", "my-ycsb-zipfian"] {
            let d = Distribution::parse(d).unwrap();
            for n in [1u64, 2, 7, 1000] {
                for scatter in [false, true] {
                    let mut rng = Rng::new(n);
                    let mut s = Sampler::new(&d, n, scatter, &mut rng);
                    assert!((0..2000).all(|_| s.next(&mut rng) < n), "{d:?} n={n}");
                }
            }
        }
    }
}
