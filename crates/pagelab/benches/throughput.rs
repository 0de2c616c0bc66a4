//! Simulated accesses per second of the kernel models on a fixed Zipf workload.
//!
//! `cargo bench -p pagelab --bench throughput` prints, per policy, the median of five runs
//! and the ratio to the first row, so figures taken in the same session compare fairly.

use std::time::Instant;

fn scenario(policy: &str, ops: u64) -> pagelab::Scenario {
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
"#
    );
    pagelab::Scenario::parse(&text, "bench", "zipf-0.9-1G-of-4G", &[]).expect("bench scenario")
}

fn main() {
    let ops = std::env::var("PAGELAB_BENCH_OPS").ok().and_then(|v| v.parse().ok()).unwrap_or(4_000_000u64);
    let policies: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let policies = if policies.is_empty() { vec!["classic".to_string(), "mglru".to_string()] } else { policies };
    println!("zipf 0.9 buffered reads, 4G file, 1G memory, {ops} accesses; median of 5 runs");
    println!("{:<10} {:>12} {:>12} {:>10} {:>10}", "policy", "seconds", "M acc/s", "ratio", "miss %");
    let mut base = None;
    for policy in policies {
        let s = scenario(&policy, ops);
        let mut times = Vec::new();
        let mut miss = 0.0;
        for _ in 0..5 {
            let t0 = Instant::now();
            match pagelab::run(&s, |_, _| {}) {
                Ok(r) => miss = r.vmstat["pgpgin"] as f64 / 4.0 / ops as f64 * 100.0,
                Err(e) => {
                    println!("{policy:<10} skipped: {e}");
                    break;
                }
            }
            times.push(t0.elapsed().as_secs_f64());
        }
        if times.is_empty() {
            continue;
        }
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let med = times[times.len() / 2];
        let rate = ops as f64 / med / 1e6;
        let base_rate = *base.get_or_insert(rate);
        println!("{:<10} {:>12.3} {:>12.2} {:>10.2} {:>10.1}", policy, med, rate, rate / base_rate, miss);
    }
}
