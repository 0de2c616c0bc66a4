//! Operation latency: each task's operations timed on its modeled clock (from the end of its
//! think time to its return to user space) into a log-linear histogram, reported per task,
//! per workload and per series interval.

use pagelab::Report;

fn run(text: &str) -> Report {
    let s = pagelab::Scenario::parse(text, "latency.toml", "latency", &[]).unwrap_or_else(|e| panic!("{e}"));
    pagelab::run(&s, |_, _| {}).unwrap()
}

/// `hot` rereads a 1M file that stays cached, thinking 1 ms between reads; `cold` (two jobs)
/// reads a 64M file at random in a 16M cgroup, so most of its reads wait for the disk.
const TWO: &str = r#"
[machine]
memory = "256M"
[[cgroup]]
path = "/cold"
max = "16M"
[[workload]]
name = "hot"
cgroup = "/"
kind = "file-read"
file_size = "1M"
distribution = "seq"
ops = 4000
think = "1ms"
[[workload]]
name = "cold"
cgroup = "/cold"
kind = "file-read"
file_size = "64M"
distribution = "uniform"
ops = 3000
jobs = 2
"#;

#[test]
fn a_task_waiting_for_the_disk_has_the_longer_latency_and_think_time_is_not_latency() {
    let r = run(TWO);
    let task =
        |n: &str| r.tasks.iter().find(|t| t.name.starts_with(n)).unwrap_or_else(|| panic!("{n}: {:?}", r.tasks.iter().map(|t| &t.name).collect::<Vec<_>>()));
    let (hot, cold) = (task("hot").latency.clone().unwrap(), task("cold").latency.clone().unwrap());
    for l in [&hot, &cold] {
        assert!(l.p50_ns <= l.p99_ns && l.p99_ns <= l.p999_ns && l.p999_ns <= l.max_ns, "{l:?}");
    }
    // Every operation is timed, fills included.
    assert_eq!(hot.ops, task("hot").ops + task("hot").fill_ops);
    // The hot task's reads hit the page cache after the first pass: microseconds, not the
    // 1 ms it thinks between them.
    assert!(hot.p50_ns < 100_000, "{hot:?}");
    // Most of the cold task's reads miss: its median is a disk read, above the hot one's 99th.
    assert!(cold.p50_ns > hot.p99_ns, "cold {cold:?} hot {hot:?}");
    assert!(cold.p50_ns as f64 >= 0.5 * task("cold").io_wait_s * 1e9 / task("cold").ops as f64, "{cold:?}");
    // The workload's figure merges its two jobs.
    let w = &r.workload_latency["cold"];
    let jobs: Vec<_> = r.tasks.iter().filter(|t| t.name.starts_with("cold")).collect();
    assert_eq!(jobs.len(), 2);
    assert_eq!(w.ops, jobs.iter().map(|t| t.latency.as_ref().unwrap().ops).sum::<u64>());
    assert_eq!(w.max_ns, jobs.iter().map(|t| t.latency.as_ref().unwrap().max_ns).max().unwrap());
}

#[test]
fn the_series_latency_covers_every_operation_once() {
    let r = run(TWO);
    let in_series: u64 = r.series.iter().filter_map(|p| p.latency.as_ref()).map(|l| l.ops).sum();
    let all: u64 = r.tasks.iter().filter_map(|t| t.latency.as_ref()).map(|l| l.ops).sum();
    assert_eq!(in_series, all);
    assert!(r.series.iter().filter(|p| p.latency.is_some()).count() > 1, "several intervals");
    let max = r.series.iter().filter_map(|p| p.latency.as_ref()).map(|l| l.max_ns).max().unwrap();
    let task_max = r.tasks.iter().filter_map(|t| t.latency.as_ref()).map(|l| l.max_ns).max().unwrap();
    assert!(max <= task_max && max as f64 >= task_max as f64 * 8.0 / 9.0, "{max} {task_max}");
}
