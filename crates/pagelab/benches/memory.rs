//! Bytes of simulation state per simulated page (footprint page), per policy, at 1 M and
//! 10 M pages of footprint with memory at 10% of it: `cargo bench -p pagelab --bench memory`.

use pagelab::sim::Machine;

fn scenario(policy: &str, pages: u64) -> pagelab::Scenario {
    let text = format!(
        r#"
[machine]
memory = "{}p"
kernel = "6.1"
policy = "{policy}"
[[workload]]
name = "zipf"
cgroup = "/"
kind = "file-read"
file_size = "{pages}p"
distribution = "zipf:0.9"
fadvise = "random"
ops = {}
"#,
        pages / 10,
        pages * 2
    );
    pagelab::Scenario::parse(&text, "bench", "memory", &[]).expect("bench scenario")
}

fn measure<P: pagelab::policy::Policy>(s: &pagelab::Scenario, make: impl FnOnce(&pagelab::mm::Mm) -> P) -> u64 {
    let mut m = Machine::new(s, make).expect("machine");
    m.run(|_| {});
    m.state_bytes()
}

fn main() {
    println!("{:<10} {:>12} {:>14} {:>16}", "policy", "footprint", "state MiB", "bytes per page");
    for pages in [1u64 << 20, 10 << 20] {
        let s = scenario("classic", pages);
        let bytes = measure(&s, |mm| pagelab::policy::classic::Classic::new(mm.memcgs.cg.len()));
        println!("{:<10} {:>12} {:>14.1} {:>16.2}", "classic", pages, bytes as f64 / (1 << 20) as f64, bytes as f64 / pages as f64);
        let s = scenario("mglru", pages);
        let bytes = measure(&s, |mm| pagelab::policy::lru_gen::LruGen::new(mm, &s.mglru));
        println!("{:<10} {:>12} {:>14.1} {:>16.2}", "mglru", pages, bytes as f64 / (1 << 20) as f64, bytes as f64 / pages as f64);
    }
}
