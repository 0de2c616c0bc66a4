//! Miniature scenarios (`[sample]`, sim/sample.rs): what scaling a scenario does to its sizes
//! and clocks, the errors for sizes that vanish, and a miniature's counts against the full
//! run's.

use pagelab::Scenario;

/// Two tasks in a cgroup: random reads of a file and random writes of anonymous memory, with
/// swap, a limit, dirty-page clocks and a runtime, so every scaled size is present.
fn scenario(sample: &str) -> String {
    format!(
        r#"
[machine]
memory = "256M"
kernel = "6.1"
policy = "classic"
swap = {{ device = "zram", size = "512M" }}
dirty_expire = "10s"
swappiness = 100
[[cgroup]]
path = "/db"
max = "128M"
low = "16M"
[[workload]]
name = "reader"
cgroup = "/db"
kind = "file-read"
file_size = "128M"
distribution = "uniform"
ops = 200000
seed = 1
[[workload]]
name = "heap"
cgroup = "/db"
kind = "anon-write"
size = "160M"
block_size = "16k"
distribution = "uniform"
ops = 60000
runtime = "100s"
start = "1s"
seed = 2
{sample}
"#
    )
}

fn parse(text: &str) -> Result<Scenario, String> {
    Scenario::parse(text, "mini.toml", "mini", &[]).map_err(|e| e.to_string())
}

#[test]
fn a_miniature_scales_every_size_and_clock_by_the_fraction_of_pages_it_kept() {
    let full = parse(&scenario("")).unwrap();
    let mini = parse(&scenario("[sample]\nrate = 0.25\nseed = 7")).unwrap();
    let spec = mini.sample.expect("a sample");
    assert_eq!((spec.rate, spec.seed), (0.25, 7));
    // The kept fraction is R within sampling noise (65,536 units here).
    assert!((spec.scale - 0.25).abs() < 0.01, "scale {}", spec.scale);
    let scaled = |n: u64| (n as f64 * spec.scale).round() as u64;
    let (f, m) = (&full.machine, &mini.machine);
    assert_eq!(m.memory_pages, scaled(f.memory_pages));
    assert_eq!(m.swap_pages, scaled(f.swap_pages));
    assert_eq!(mini.cgroups[0].max, scaled(full.cgroups[0].max));
    assert_eq!(mini.cgroups[0].low, scaled(full.cgroups[0].low));
    assert_eq!(m.tunables.dirty_expire_ns, (f.tunables.dirty_expire_ns as f64 * spec.scale).round() as u64);
    assert_eq!(m.rstat_flush_ns, (f.rstat_flush_ns as f64 * spec.scale).round() as u64);
    assert_eq!(mini.workloads[1].runtime_ns, full.workloads[1].runtime_ns.map(|r| (r as f64 * spec.scale).round() as u64));
    assert_eq!(mini.workloads[1].start_ns, (full.workloads[1].start_ns as f64 * spec.scale).round() as u64);
    // The full machine's min_free_kbytes, scaled (the kernel's grows as the square root of
    // memory), and the classic LRU's scale corrections on.
    let full_min = pagelab::mm::mmzone::calculate_min_free_kbytes(f.memory_pages - f.reserved_pages);
    assert_eq!(m.min_free_kbytes, Some((full_min as f64 * spec.scale).round() as u64));
    assert_eq!(m.miniature, spec.scale);
}

#[test]
fn at_rate_one_a_miniature_runs_the_full_scenario() {
    let full = pagelab::run(&parse(&scenario("")).unwrap(), |_, _| {}).unwrap();
    let same = pagelab::run(&parse(&scenario("[sample]\nrate = 1")).unwrap(), |_, _| {}).unwrap();
    let sample = same.sample.clone().expect("the report says it is a sample");
    assert_eq!((sample.scale, sample.dropped_ops), (1.0, 0));
    assert_eq!(same.vmstat, full.vmstat);
    assert_eq!((same.ops, same.elapsed_s), (full.ops, full.elapsed_s));
}

#[test]
fn a_miniatures_counts_scaled_back_are_near_the_full_runs() {
    let full = pagelab::run(&parse(&scenario("")).unwrap(), |_, _| {}).unwrap();
    assert!(full.vmstat["workingset_refault_file"] > 10_000 && full.vmstat["pswpout"] > 1_000, "the scenario reclaims both types");
    for seed in [1, 2] {
        let mini = pagelab::run(&parse(&scenario(&format!("[sample]\nrate = 0.25\nseed = {seed}"))).unwrap(), |_, _| {}).unwrap();
        let s = mini.sample.clone().unwrap();
        // Every drawn operation is either run or dropped: the full scenario's count.
        assert_eq!(mini.ops + s.dropped_ops, full.ops);
        for k in ["workingset_refault_file", "pgsteal_file", "pgsteal_anon", "pswpout"] {
            let est = mini.vmstat[k] as f64 / s.scale;
            let exact = full.vmstat[k] as f64;
            assert!((est - exact).abs() < 0.15 * exact, "{k}: miniature (seed {seed}) {est:.0} against {exact}");
        }
        let elapsed = mini.elapsed_s / s.scale;
        assert!((elapsed - full.elapsed_s).abs() < 0.1 * full.elapsed_s, "elapsed {elapsed} against {}", full.elapsed_s);
    }
}

#[test]
fn sizes_that_scale_to_nothing_are_errors_naming_their_key() {
    let tiny_swap = scenario("[sample]\nrate = 0.001").replace("size = \"512M\"", "size = \"1M\"");
    let e = parse(&tiny_swap).unwrap_err();
    // 256M at 0.001 is below the smallest machine before the swap is looked at.
    assert!(e.contains("`sample.rate`") && e.contains("below the smallest machine"), "{e}");
    let big = scenario("[sample]\nrate = 0.01").replace("memory = \"256M\"", "memory = \"1G\"");
    let e = parse(&big.replace("size = \"512M\"", "size = \"4k\"")).unwrap_err();
    assert!(e.contains("`machine.swap.size`") && e.contains("rounds to 0 pages"), "{e}");
    let e = parse(&big.replace("low = \"16M\"", "low = \"8k\"")).unwrap_err();
    assert!(e.contains("`cgroup[0].low`") && e.contains("rounds to 0 pages"), "{e}");
    let e = parse(&scenario("[sample]\nrate = 0")).unwrap_err();
    assert!(e.contains("`sample.rate`") && e.contains("(0, 1]"), "{e}");
    let e = parse(&scenario("[sample]\nseed = 3")).unwrap_err();
    assert!(e.contains("`sample.rate`") && e.contains("missing"), "{e}");
}

#[test]
fn an_object_the_sample_keeps_nothing_of_is_an_error_naming_it() {
    // A one-page file at R = 0.01 is kept with probability 0.01 (seed 1: not kept).
    let text = scenario("[sample]\nrate = 0.01").replace("memory = \"256M\"", "memory = \"1G\"").replace("file_size = \"128M\"", "file_size = \"4k\"");
    let e = parse(&text).unwrap_err();
    assert!(e.contains("no page of `reader") && e.contains("raise sample.rate"), "{e}");
}

#[test]
fn a_miniature_refuses_a_replayed_trace_and_says_how_to_sample_it() {
    let text = scenario("[sample]\nrate = 0.5").replace("distribution = \"uniform\"\nops = 200000", "trace = \"reads.csv\"\ntrace_format = \"csv\"");
    let e = parse(&text).unwrap_err();
    assert!(e.contains("`workload[0].trace`") && e.contains("pagelab curve TRACE --sample"), "{e}");
}
