//! Issue 40: memory follows the pages a run touches and the report's size, never declared
//! sizes or modeled time; inputs that used to hang end.

use pagelab::mm::vmstat::Ev;
use pagelab::sim::machine::SERIES_POINTS;
use pagelab::Report;

fn run(text: &str) -> Report {
    let s = pagelab::Scenario::parse(text, "bounds.toml", "bounds", &[]).unwrap();
    pagelab::run(&s, |_, _| {}).unwrap()
}

/// The series' deltas add up to the run's totals however it was coarsened.
fn assert_series_adds_up(r: &Report) {
    let ops: u64 = r.series.iter().map(|p| p.ops).sum();
    assert_eq!(ops, r.ops, "the series' operations add up to the run's");
    for k in Ev::ALL.iter().map(|e| e.name()).filter(|k| r.vmstat.contains_key(*k)) {
        let sum: u64 = r.series.iter().map(|p| p.vmstat[k]).sum();
        assert_eq!(sum, r.vmstat[k], "the series' {k} adds up to the run's");
    }
    assert!(r.vmstat["pgfault"] > 0 || r.vmstat["pgpgin"] > 0, "the run did something");
    assert!(r.series.windows(2).all(|w| w[0].t_s < w[1].t_s), "points in time order");
    assert_eq!(r.series.last().unwrap().t_s, r.elapsed_s, "the last point ends the run");
}

fn slow_reader(ops: u64, pacing: &str) -> String {
    format!(
        r#"
[machine]
memory = "64M"

[[workload]]
name = "slow"
cgroup = "/"
kind = "file-read"
file_size = "16M"
distribution = "random"
ops = {ops}
seed = 3
{pacing}
"#
    )
}

#[test]
fn idle_intervals_cost_no_series_points() {
    // Five reads 20,000 modeled seconds apart: 100,000 report intervals, all but a few idle.
    let r = run(&slow_reader(5, r#"think = "20000s""#));
    assert!(r.elapsed_s > 80_000.0, "{}", r.elapsed_s);
    // Per read at most: the interval it ends, and the end of the idle run before it.
    assert!(r.series.len() <= 2 * 5 + 2, "{} points for 5 reads", r.series.len());
    assert_series_adds_up(&r);
    // An idle run is one point with every delta zero, so the point after it covers one interval.
    let idle = r.series.iter().filter(|p| p.ops == 0 && p.vmstat["pgfault"] == 0).count();
    assert!(idle >= 4, "the idle runs are recorded as points: {idle}");
    for w in r.series.windows(2).filter(|w| w[1].ops > 0 && w[0].ops == 0) {
        assert!(w[1].t_s - w[0].t_s <= 1.0 + 1e-9, "a read's point covers one interval after an idle run: {} -> {}", w[0].t_s, w[1].t_s);
    }
}

#[test]
fn a_long_busy_run_is_coarsened_to_the_cap() {
    // One read a second for 3 x SERIES_POINTS seconds: every interval has a read.
    let ops = 3 * SERIES_POINTS as u64;
    let r = run(&slow_reader(ops, "rate_iops = 1"));
    assert!(r.series.len() <= SERIES_POINTS, "{} points", r.series.len());
    assert!(r.series.len() >= SERIES_POINTS / 2, "coarsened no more than needed: {} points", r.series.len());
    assert_series_adds_up(&r);
    // Twice merged: the points are 4 s apart, each with 4 reads.
    let mid = &r.series[r.series.len() / 2 - 1..r.series.len() / 2 + 1];
    assert_eq!(mid[1].t_s - mid[0].t_s, 4.0);
    assert_eq!(mid[1].ops, 4);
}

#[test]
fn an_oom_killed_anon_region_of_a_tebibyte_frees_only_what_it_touched() {
    // exit_mmap() of a 1T region in a 64M cgroup: it used to write every page's entry, 2 GiB
    // of table, and abort when the host could not give it.
    let text = r#"
[machine]
memory = "256M"

[[cgroup]]
path = "/small"
max = "64M"

[[workload]]
name = "big"
cgroup = "/small"
kind = "anon-write"
size = "1T"
distribution = "random"
ops = 40000
seed = 1
"#;
    let s = crate::common::scenario(text);
    let mut m = crate::common::classic(text);
    m.run(|_| {});
    let r = Report::collect(&s, &m);
    assert_eq!(r.oom_kills.len(), 1, "the region outgrows its cgroup: {:?}", r.oom_kills);
    assert!(r.tasks[0].oom_killed);
    // What the table holds grows with the 16k pages touched (at most one 8 KiB chunk each),
    // not with the region's 256 Mi pages.
    let touched = 16_384u64;
    assert!(m.mm.space.state_bytes() < 1_200_000 + touched * 8192, "{} bytes of address space", m.mm.space.state_bytes());
    assert!(m.mm.space.state_bytes() < 512 << 20, "{} bytes of address space", m.mm.space.state_bytes());
}

#[test]
fn a_follower_with_a_vanishing_ratio_waits_for_its_leaders_end() {
    // ratio 1e-20: follower access 1 needs 1e20 leader accesses, past u64; it used to count
    // its way through 2^64 candidates. Now it waits for the leader, which ends, and so does it.
    let text = r#"
[machine]
memory = "64M"

[[workload]]
name = "lead"
cgroup = "/"
kind = "file-read"
file = "f"
file_size = "4k"
ops = 50

[[workload]]
name = "follow"
cgroup = "/"
kind = "file-read"
file = "f"
file_size = "4k"
ops = 50
lockstep = { leader = "lead", ratio = 1e-20 }
"#;
    let r = run(text);
    assert_eq!(r.tasks[0].ops, 50);
    assert_eq!(r.tasks[1].ops, 1, "access 0 needs no leader access, access 1 more than the leader does");
}

/// Many tasks of every pacing: rate limits, think and start times, lockstep pairs, shared
/// and private files, anonymous memory under a small cgroup.
fn crowd(n: usize) -> String {
    let mut text = String::from("[machine]\nmemory = \"128M\"\n[[cgroup]]\npath = \"/a\"\nmax = \"32M\"\n");
    for i in 0..n {
        let pacing = match i % 5 {
            0 => "rate_iops = 2000".to_string(),
            1 => "think = \"30us\"".to_string(),
            2 => "start = \"3ms\"".to_string(),
            3 => format!("lockstep = {{ leader = \"w{}\", ratio = 2 }}", i - 1),
            _ => String::new(),
        };
        let (kind, size, cgroup) = if i % 3 == 0 { ("anon-rw", "size = \"4M\"", "/a") } else { ("file-read", "file_size = \"2M\"", "/") };
        let file = if i % 4 == 1 { "file = \"shared\"\n" } else { "" };
        text += &format!(
            "[[workload]]\nname = \"w{i}\"\ncgroup = \"{cgroup}\"\nkind = \"{kind}\"\n{size}\n{file}distribution = \"random\"\nops = {}\nseed = {i}\n{pacing}\n",
            200 + 37 * i
        );
    }
    text
}

#[test]
fn choosing_the_next_task_from_a_heap_runs_as_the_scan_does() {
    // Machine::next_task: the least (clock, task) pair, by a scan up to 16 tasks and from a
    // heap beyond (2,000 tasks scanned for every operation took 6 s, 10,000 over 60 s).
    let text = crowd(40);
    let s = crate::common::scenario(&text);
    let run = |heap: bool| {
        let mut m = crate::common::classic(&text);
        m.choose_tasks_by_heap(heap);
        m.run(|_| {});
        serde_json::to_string(&Report::collect(&s, &m)).unwrap()
    };
    let (scan, heap) = (run(false), run(true));
    assert!(scan.contains("\"lockstep\":{"), "the crowd has lockstep pairs");
    assert_eq!(scan, heap);
}

#[test]
fn a_large_machine_keeps_no_free_list_entry_per_frame_it_never_used() {
    // 16G: 4 Mi frames. The free lists held a 4-byte entry for each (16 MiB); never-used
    // frames are a range now, and the lists hold only frames freed since boot.
    let text = r#"
[machine]
memory = "16G"

[[workload]]
name = "reader"
cgroup = "/"
kind = "file-read"
file_size = "8M"
distribution = "random"
ops = 2000
seed = 1
"#;
    let mut m = crate::common::classic(text);
    m.run(|_| {});
    let f = &m.mm.folios;
    assert!(f.frames() >= 4 << 20, "{} frames", f.frames());
    let lists = f.state_bytes() - f.f.capacity() as u64 * 20;
    assert!(lists < 1 << 20, "{lists} bytes of free lists for {} frames", f.frames());
    assert!(f.nr_free() > 4_000_000 && m.mm.nr_file_pages > 1000, "free {}, file {}", f.nr_free(), m.mm.nr_file_pages);
}

#[test]
fn read_completions_cost_the_frames_read_into_not_the_declared_memory() {
    // 20k random reads of a 64M file in a 192M cgroup on a 64G machine (bench/memory_bench.py's
    // case). The read completions were a flat table of 8 bytes a declared frame below 128 GiB,
    // 128 MiB here before a page was touched; they are chunks of the frames read into now, and
    // the whole model's state is the frame table (20 bytes a frame up to the highest frame
    // handed out, about 2 Mi of them) and little else.
    let text = r#"
[machine]
memory = "64G"

[[cgroup]]
path = "/app"
max = "192M"

[[workload]]
name = "reader"
cgroup = "/app"
kind = "file-read"
file_size = "64M"
distribution = "random"
ops = 20000
seed = 1
"#;
    let mut m = crate::common::classic(text);
    m.run(|_| {});
    assert!(m.mm.nr_file_pages > 10_000, "{} file pages", m.mm.nr_file_pages);
    let frame_table = m.mm.folios.f.capacity() as u64 * 20;
    assert!(m.state_bytes() < frame_table + (8 << 20), "{} bytes of state, {frame_table} of them the frame table", m.state_bytes());
    assert!(m.state_bytes() < 64 << 20, "{} bytes of state", m.state_bytes());
}
