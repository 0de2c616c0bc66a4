//! The plain caches' speed and memory: `cargo bench -p pagelab-cachesim --bench cachesim`.
//!
//! Speed: M accesses/s of each policy on in-memory Zipf traces (10 M accesses over 1 M
//! pages, alpha 0.8 and 1.0, capacity 1% and 10% of the pages), best of three.
//! Memory: bytes of state per simulated page at 1 M and 10 M pages (capacity 10%), for the
//! policy alone and with the id map an oracleGeneral trace needs (the dense format needs
//! none; nor do the caches keyed by object id that oracleGeneral input runs).

use std::time::Instant;

use pagelab_cachesim::keyed::{KeyedCache, KeyedLru, KeyedRing};
use pagelab_cachesim::{new_cache, next_access, PolicyKind};
use pagelab_host::xorshift::XorShift64;
use pagelab_trace::mix64;

fn xorshift(x: &mut XorShift64) -> f64 {
    x.next_f64()
}

/// Zipf(alpha) ranks over `n` pages by inverting the CDF, ranks scattered over the pages.
fn zipf(requests: usize, n: usize, alpha: f64, seed: u64) -> Vec<u32> {
    let mut cdf = Vec::with_capacity(n);
    let mut acc = 0.0;
    for r in 1..=n {
        acc += (r as f64).powf(-alpha);
        cdf.push(acc);
    }
    let mut x = XorShift64::new(seed | 1);
    (0..requests)
        .map(|_| {
            let u = xorshift(&mut x) * acc;
            let r = cdf.partition_point(|&c| c <= u).min(n - 1);
            ((r as u64).wrapping_mul(0x9E37_79B9) % n as u64) as u32
        })
        .collect()
}

/// A scattered 64-bit object id for a page, as trace generators make them.
fn object_id(page: u32) -> u64 {
    (page as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// A cache keyed by object id (what oracleGeneral input runs) for `policy`.
fn keyed(policy: PolicyKind, cap: u64) -> Box<dyn KeyedCache> {
    match policy {
        PolicyKind::Lru => Box::new(KeyedLru::new(cap)),
        PolicyKind::Fifo => Box::new(KeyedRing::fifo(cap)),
        _ => Box::new(KeyedRing::clock(cap)),
    }
}

/// Misses of a keyed cache over `keys`, prefetching as a trace replay does.
fn keyed_misses(c: &mut dyn KeyedCache, keys: &[u64]) -> u64 {
    let hashes: Vec<u64> = keys.iter().map(|&k| mix64(k)).collect();
    let mut misses = 0;
    for (i, (&k, &h)) in keys.iter().zip(&hashes).enumerate() {
        if let Some(&ahead) = hashes.get(i + pagelab_cachesim::keyed::AHEAD) {
            c.prefetch(ahead);
        }
        misses += !c.access_hashed(k, h) as u64;
    }
    misses
}

const KEYED: [PolicyKind; 3] = [PolicyKind::Lru, PolicyKind::Fifo, PolicyKind::Clock];

fn main() {
    let requests: usize = std::env::var("CACHESIM_BENCH_REQUESTS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000_000);
    let n = 1_000_000;
    println!("{:<8} {:>6} {:<6} {:>10} {:>10}", "trace", "cache", "policy", "miss ratio", "M acc/s");
    for alpha in [0.8, 1.0] {
        let t = zipf(requests, n, alpha, 42);
        let next = next_access(&t);
        for frac in [0.01, 0.1] {
            let cap = (n as f64 * frac) as u64;
            for p in PolicyKind::ALL {
                let mut best = f64::MAX;
                let mut misses = 0;
                for _ in 0..3 {
                    let mut c = new_cache(p, cap, n);
                    let start = Instant::now();
                    misses = t.chunks(1 << 16).zip(next.chunks(1 << 16)).map(|(b, nx)| c.access_batch(b, Some(nx))).sum::<u64>();
                    best = best.min(start.elapsed().as_secs_f64());
                }
                println!("zipf{alpha:<4} {:>5}% {:<6} {:>10.4} {:>10.1}", frac * 100.0, p.name(), misses as f64 / t.len() as f64, t.len() as f64 / best / 1e6);
            }
            // The caches keyed by 64-bit object ids (what oracleGeneral input runs), no id
            // map (through a `dyn`, so a little slower than a trace replay).
            let keys: Vec<u64> = t.iter().map(|&p| object_id(p)).collect();
            for p in KEYED {
                let mut best = f64::MAX;
                let mut misses = 0;
                for _ in 0..3 {
                    let mut c = keyed(p, cap);
                    let start = Instant::now();
                    misses = keyed_misses(c.as_mut(), &keys);
                    best = best.min(start.elapsed().as_secs_f64());
                }
                let name = format!("{} (keyed)", p.name());
                println!("zipf{alpha:<4} {:>5}% {:<6} {:>10.4} {:>10.1}", frac * 100.0, name, misses as f64 / t.len() as f64, t.len() as f64 / best / 1e6);
            }
        }
    }
    println!();
    println!("{:<8} {:>10} {:>14} {:>22}", "policy", "pages", "bytes/page", "with the id map");
    for pages in [1usize << 20, 10 << 20] {
        // Every page once, then random accesses: the arrays reach their full size.
        let mut x = XorShift64::new(7);
        let t: Vec<u32> = (0..pages as u32).chain((0..pages).map(|_| (xorshift(&mut x) * pages as f64) as u32)).collect();
        let next = next_access(&t);
        let mut map = pagelab_trace::IdMap::default();
        for p in 0..pages as u64 {
            map.get_or_insert(p.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        }
        for p in PolicyKind::ALL {
            let mut c = new_cache(p, pages as u64 / 10, pages);
            for (b, nx) in t.chunks(1 << 16).zip(next.chunks(1 << 16)) {
                c.access_batch(b, Some(nx));
            }
            let b = c.state_bytes() as f64 / pages as f64;
            println!("{:<8} {:>10} {:>14.2} {:>22.2}", p.name(), pages, b, b + map.state_bytes() as f64 / pages as f64);
        }
        for p in KEYED {
            let mut c = keyed(p, pages as u64 / 10);
            for &q in &t {
                c.access_hashed(object_id(q), mix64(object_id(q)));
            }
            let name = format!("{} (keyed)", p.name());
            println!("{:<8} {:>10} {:>14.2} {:>22}", name, pages, c.state_bytes() as f64 / pages as f64, "needs none");
        }
    }
}
