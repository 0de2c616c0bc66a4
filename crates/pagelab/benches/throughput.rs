//! Simulated accesses per second of the kernel models on a fixed Zipf workload.
//!
//! `cargo bench -p pagelab --bench throughput` prints, per policy, the median of five runs
//! (in rounds that alternate the policies) and the ratio to the first row, so figures taken in
//! the same session compare fairly. `mglru-noprefetch` is MGLRU without Kairui Song's lru_gen scan prefetch (2024).

use std::time::Instant;

/// `policy` is a policy name, or `mglru-noprefetch` for MGLRU without the prefetch in its
/// generation scans (Kairui Song's 2024 lru_gen prefetch patch).
fn scenario(policy: &str, ops: u64) -> pagelab::Scenario {
    let (policy, extra) = match policy.strip_suffix("-noprefetch") {
        Some(p) => (p, "\n[mglru]\nprefetch = false\n"),
        None => (policy, ""),
    };
    let text = format!(
        r#"
[machine]
memory = "1G"
kernel = "6.1"
policy = "{policy}"
swap = {{ device = "ssd", size = "1G" }}

[[workload]]
name = "zipf"
cgroup = "/"
kind = "file-read"
file_size = "4G"
distribution = "zipf:0.9"
fadvise = "random"
ops = {ops}
seed = 1
{extra}"#
    );
    pagelab::Scenario::parse(&text, "bench", "zipf-0.9-1G-of-4G", &[]).expect("bench scenario")
}

fn main() {
    let ops = std::env::var("PAGELAB_BENCH_OPS").ok().and_then(|v| v.parse().ok()).unwrap_or(4_000_000u64);
    let policies: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let policies = if policies.is_empty() { ["classic", "mglru", "mglru-noprefetch"].map(String::from).to_vec() } else { policies };
    println!("zipf 0.9 buffered reads, 4G file, 1G memory, {ops} accesses; median of 5 runs");
    println!("{:<18} {:>10} {:>12} {:>10} {:>10}", "policy", "seconds", "M acc/s", "ratio", "miss %");
    // Rounds alternate the policies, so a machine busy with other work slows them alike.
    let scenarios: Vec<pagelab::Scenario> = policies.iter().map(|p| scenario(p, ops)).collect();
    let mut times = vec![Vec::new(); policies.len()];
    let mut miss = vec![0.0; policies.len()];
    let mut failed = vec![None; policies.len()];
    for _ in 0..5 {
        for (i, s) in scenarios.iter().enumerate() {
            if failed[i].is_some() {
                continue;
            }
            let t0 = Instant::now();
            match pagelab::run(s, |_, _| {}) {
                Ok(r) => miss[i] = r.vmstat["pgpgin"] as f64 / 4.0 / ops as f64 * 100.0,
                Err(e) => {
                    failed[i] = Some(e.to_string());
                    continue;
                }
            }
            times[i].push(t0.elapsed().as_secs_f64());
        }
    }
    let mut base = None;
    for (i, policy) in policies.iter().enumerate() {
        if let Some(e) = &failed[i] {
            println!("{policy:<10} skipped: {e}");
            continue;
        }
        let times = &mut times[i];
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let med = times[times.len() / 2];
        let rate = ops as f64 / med / 1e6;
        let base_rate = *base.get_or_insert(rate);
        println!("{:<18} {:>10.3} {:>12.2} {:>10.2} {:>10.1}", policy, med, rate, rate / base_rate, miss[i]);
    }
}
