//! Records per second of the trace readers: `cargo bench -p pagelab-trace --bench read`.
//! Writes a 10 M-record Zipf-like oracleGeneral trace (plain and zstd) and its dense form to
//! a temporary directory, then prints the best of three reads of each.

use std::time::Instant;

use pagelab_trace::*;

fn best<F: FnMut() -> u64>(mut f: F) -> (u64, f64) {
    let mut best = f64::MAX;
    let mut n = 0;
    for _ in 0..3 {
        let t = Instant::now();
        n = f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    (n, best)
}

fn main() {
    let n: usize = std::env::var("TRACE_BENCH_RECORDS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000_000);
    let dir = std::env::temp_dir().join(format!("pagelab-trace-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut x = pagelab_host::xorshift::XorShift64::new(88172645463325252);
    let ids: Vec<u64> = (0..n)
        .map(|_| {
            // ~1 M objects, skewed.
            let r = x.next_f64();
            ((r * r * r * 1e6) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        })
        .collect();
    let recs = with_next_access(&ids, 4096);
    let (plain, zst, dense) = (dir.join("t.oracleGeneral"), dir.join("t.oracleGeneral.zst"), dir.join("t.dense"));
    write_oracle(&plain, recs.iter().copied(), None).unwrap();
    write_oracle(&zst, recs.iter().copied(), Some(3)).unwrap();
    drop(recs);
    convert(&plain, &dense).unwrap();
    println!("{:<44} {:>12}", "reader", "M records/s");
    let row = |name: &str, (k, s): (u64, f64)| {
        assert_eq!(k, n as u64);
        println!("{name:<44} {:>12.1}", k as f64 / s / 1e6);
    };
    row(
        "oracleGeneral raw batches (plain)",
        best(|| {
            let mut r = OracleReader::open(&plain).unwrap();
            let mut k = 0u64;
            let mut sum = 0u64;
            while let Some(b) = r.next_batch().unwrap() {
                for rec in b.chunks_exact(ORACLE_RECORD) {
                    sum = sum.wrapping_add(Record::parse(rec).obj_id);
                    k += 1;
                }
            }
            std::hint::black_box(sum);
            k
        }),
    );
    for (name, path) in [("oracleGeneral -> dense pages (plain)", &plain), ("oracleGeneral -> dense pages (zstd)", &zst)] {
        row(
            name,
            best(|| {
                let mut s = OracleSource::open(path, false).unwrap();
                let mut k = 0;
                while let Some(b) = s.next_batch().unwrap() {
                    k += b.len() as u64;
                }
                k
            }),
        );
    }
    row(
        "oracleGeneral -> dense pages, threaded (plain)",
        best(|| {
            let mut s = open(&plain, Format::OracleGeneral, false, false).unwrap();
            let mut k = 0;
            while let Some(b) = s.next_batch().unwrap() {
                k += b.len() as u64;
            }
            k
        }),
    );
    row(
        "dense format",
        best(|| {
            let mut s = DenseReader::open(&dense).unwrap();
            let mut k = 0;
            let mut sum = 0u64;
            while let Some(b) = s.next_batch().unwrap() {
                k += b.len() as u64;
                sum = sum.wrapping_add(b.iter().map(|&p| p as u64).sum::<u64>());
            }
            std::hint::black_box(sum);
            k
        }),
    );
    std::fs::remove_dir_all(&dir).ok();
}
