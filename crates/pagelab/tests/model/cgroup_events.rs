//! `[[event]]`: writes to a cgroup's memory.reclaim, memory.high and memory.max at a time
//! (mm/memcontrol.c: memory_reclaim(), memory_high_write(), memory_max_write(), 6.1.192 and
//! 6.12.95).

use pagelab::report::CgroupEventReport;
use pagelab::Report;

const MIB: u64 = 1 << 20;

/// /app reads an 8M file twice at 1,000 reads a second (about 4 s), beside 8M of anonymous
/// memory it touched first; `events` are appended as they are.
fn app(kernel: &str, swap: bool, events: &str) -> String {
    let swap = if swap { r#"swap = { device = "zram", size = "64M" }"# } else { "" };
    format!(
        r#"
[machine]
memory = "256M"
kernel = "{kernel}"
{swap}
[[cgroup]]
path = "/app"
[[workload]]
name = "heap"
cgroup = "/app"
kind = "anon-rw"
size = "8M"
distribution = "seq"
ops = 2048
hold = true
[[workload]]
name = "reader"
cgroup = "/app"
kind = "file-read"
file_size = "8M"
distribution = "seq"
ops = 4096
rate_iops = 1000
{events}
"#
    )
}

fn run(text: &str) -> Report {
    let s = pagelab::Scenario::parse(text, "events.toml", "events", &[]).unwrap_or_else(|e| panic!("{e}"));
    pagelab::run(&s, |_, _| {}).unwrap()
}

fn only_event(r: &Report) -> &CgroupEventReport {
    assert_eq!(r.cgroup_events.len(), 1, "{:?}", r.cgroup_events);
    &r.cgroup_events[0]
}

fn parse_err(text: &str) -> String {
    pagelab::Scenario::parse(text, "events.toml", "events", &[]).unwrap_err().to_string()
}

#[test]
fn memory_reclaim_reclaims_what_it_is_asked_as_direct_reclaim_of_the_writer() {
    for kernel in ["6.1", "6.12"] {
        let quiet = run(&app(kernel, false, ""));
        let r = run(&app(kernel, false, "[[event]]\nat = \"3s\"\ncgroup = \"/app\"\nreclaim = \"4M\"\n"));
        let e = only_event(&r);
        assert_eq!((e.file, e.result, e.asked_bytes), ("memory.reclaim", "ok", 4 * MIB), "{kernel}: {e:?}");
        // The loop stops once the amount is reached; a round may overshoot by its last batch.
        assert!(e.reclaimed_bytes >= 4 * MIB && e.reclaimed_bytes <= 8 * MIB, "{kernel}: {e:?}");
        assert!(e.taken_s > 0.0, "{kernel}: reclaim takes modeled time: {e:?}");
        // 6.1/6.12 count proactive reclaim as the writer's direct reclaim (7.3 has
        // pgsteal_proactive), in the cgroup's memory.stat: cgroup reclaim stays out of
        // /proc/vmstat's pgsteal_direct.
        let app = |r: &Report, k: &str| r.memcg["/app"][k];
        assert_eq!(app(&quiet, "pgsteal_direct"), 0, "{kernel}");
        assert!(app(&r, "pgsteal_direct") >= 1024, "{kernel}: {}", app(&r, "pgsteal_direct"));
        assert_eq!(app(&r, "pgsteal_direct") * 4096, e.reclaimed_bytes, "{kernel}");
        assert_eq!(app(&r, "pgsteal_kswapd"), app(&quiet, "pgsteal_kswapd"), "{kernel}");
        // Without swap only the file can go, and the second pass reads part of it again.
        assert!(r.vmstat["pgpgin"] > quiet.vmstat["pgpgin"], "{kernel}");
    }
}

#[test]
fn memory_reclaim_returns_eagain_when_the_cgroup_cannot_give_the_amount() {
    for kernel in ["6.1", "6.12"] {
        // 16M of /app's 8M file and 8M heap, no swap: at most the file can go.
        let r = run(&app(kernel, false, "[[event]]\nat = \"3s\"\ncgroup = \"/app\"\nreclaim = \"64M\"\n"));
        let e = only_event(&r);
        assert_eq!((e.result, e.asked_bytes), ("EAGAIN", 64 * MIB), "{kernel}: {e:?}");
        assert!(e.reclaimed_bytes > 0 && e.reclaimed_bytes <= 8 * MIB, "{kernel}: {e:?}");
    }
}

#[test]
fn memory_reclaim_swappiness_chooses_between_anon_and_file_on_6_12() {
    // A 1M file beside the 8M heap: 4M can come only from anon.
    let with = |s: &str| {
        run(&app("6.12", true, &format!("[[event]]\nat = \"3s\"\ncgroup = \"/app\"\nreclaim = \"4M\"\n{s}\n"))
            .replace("file_size = \"8M\"", "file_size = \"1M\""))
    };
    let (file_only, default, anon_only) = (with("swappiness = 0"), with(""), with("swappiness = 200"));
    assert_eq!(only_event(&file_only).swappiness, Some(0));
    // sc_swappiness(): 0 keeps cgroup reclaim off anon, so the write fails with EAGAIN.
    assert_eq!(file_only.vmstat["pswpout"], 0);
    assert_eq!(only_event(&file_only).result, "EAGAIN");
    // vm.swappiness (60) and 200 swap the heap out to reach the amount.
    for r in [&default, &anon_only] {
        assert!(r.vmstat["pswpout"] >= 512, "{}", r.vmstat["pswpout"]);
        assert_eq!(only_event(r).result, "ok");
    }
    // 200 gives file no weight: less of the file is reclaimed than at 60.
    assert!(anon_only.vmstat["pgsteal_file"] < default.vmstat["pgsteal_file"], "{} {}", anon_only.vmstat["pgsteal_file"], default.vmstat["pgsteal_file"]);
}

#[test]
fn memory_reclaim_swappiness_is_refused_on_6_1_whose_memory_reclaim_lacks_it() {
    let e = parse_err(&app("6.1", true, "[[event]]\nat = \"3s\"\ncgroup = \"/app\"\nreclaim = \"4M\"\nswappiness = 10\n"));
    assert!(e.contains("event[0].swappiness") && e.contains("6.1") && e.contains("events.toml:"), "{e}");
    let e = parse_err(&app("6.12", true, "[[event]]\nat = \"3s\"\ncgroup = \"/app\"\nreclaim = \"4M\"\nswappiness = 201\n"));
    assert!(e.contains("event[0].swappiness") && e.contains("0..200"), "{e}");
}

#[test]
fn memory_high_write_reclaims_the_usage_down_to_the_new_value() {
    for kernel in ["6.1", "6.12"] {
        let r = run(&app(kernel, true, "[[event]]\nat = \"3s\"\ncgroup = \"/app\"\nhigh = \"6M\"\n"));
        let e = only_event(&r);
        assert_eq!((e.file, e.result, e.value_bytes), ("memory.high", "ok", Some(6 * MIB)), "{kernel}: {e:?}");
        // About 16M charged: the write asks for the excess and reclaims at least it.
        assert!(e.asked_bytes >= 8 * MIB && e.reclaimed_bytes >= e.asked_bytes, "{kernel}: {e:?}");
        // After the write the reader charges pages over high: its returns to user space reclaim.
        assert!(r.memcg["/app"]["memory.events.high"] > 0, "{kernel}: {:?}", r.memcg["/app"]);
    }
}

#[test]
fn memory_max_write_below_what_cannot_be_reclaimed_ooms_the_cgroup() {
    for kernel in ["6.1", "6.12"] {
        // No swap: the 8M heap cannot be reclaimed, so a 2M memory.max ends in the OOM killer.
        let r = run(&app(kernel, false, "[[event]]\nat = \"3s\"\ncgroup = \"/app\"\nmax = \"2M\"\n"));
        let e = only_event(&r);
        assert_eq!((e.file, e.result), ("memory.max", "ok"), "{kernel}: {e:?}");
        assert_eq!(r.oom_kills.len(), 1, "{kernel}: {:?}", r.oom_kills);
        assert_eq!((r.oom_kills[0].task.as_str(), r.oom_kills[0].constraint.as_str()), ("heap", "/app"), "{kernel}");
        assert!((r.oom_kills[0].time_s - 3.0).abs() < 0.1, "{kernel}: {:?}", r.oom_kills);
    }
}

#[test]
fn an_event_after_the_run_is_reported_as_not_run() {
    let r = run(&app("6.12", false, "[[event]]\nat = \"60min\"\ncgroup = \"/app\"\nreclaim = \"4M\"\n"));
    assert_eq!(only_event(&r).result, "not_run");
    assert_eq!(r.vmstat["pgsteal_direct"], 0);
}

#[test]
fn bad_events_are_refused_by_key_and_line() {
    let cases = [
        ("[[event]]\nat = \"3s\"\ncgroup = \"/app\"\nreclam = \"4M\"\n", "event[0].reclam"),
        ("[[event]]\nat = \"3s\"\ncgroup = \"/nope\"\nreclaim = \"4M\"\n", "event[0].cgroup"),
        ("[[event]]\nat = \"3s\"\ncgroup = \"/\"\nhigh = \"4M\"\n", "event[0].cgroup"),
        ("[[event]]\ncgroup = \"/app\"\nreclaim = \"4M\"\n", "event[0].at"),
        ("[[event]]\nat = \"soon\"\ncgroup = \"/app\"\nreclaim = \"4M\"\n", "event[0].at"),
        ("[[event]]\nat = \"3s\"\ncgroup = \"/app\"\nreclaim = \"4M\"\nhigh = \"4M\"\n", "one of `reclaim`, `high` and `max`"),
        ("[[event]]\nat = \"3s\"\ncgroup = \"/app\"\n", "writes nothing"),
        ("[[event]]\nat = \"3s\"\ncgroup = \"/app\"\nreclaim = \"12\"\n", "less than a page"),
        ("[[event]]\nat = \"3s\"\ncgroup = \"/app\"\nhigh = \"4M\"\nswappiness = 10\n", "goes with `reclaim`"),
        ("[[event]]\nat = \"3s\"\ncgroup = \"/app\"\nmax = \"lots\"\n", "event[0].max"),
    ];
    for (event, want) in cases {
        let e = parse_err(&app("6.12", false, event));
        assert!(e.contains(want) && e.starts_with("events.toml:"), "{event:?}: {e}");
    }
}

/// A 64M file read once at 1,000 reads a second; `reclaim` written to /app at 14 s.
fn streaming(kernel: &str, reclaim: &str) -> CgroupEventReport {
    let r = run(&format!(
        r#"
[machine]
memory = "256M"
kernel = "{kernel}"
[[cgroup]]
path = "/app"
[[workload]]
name = "reader"
cgroup = "/app"
kind = "file-read"
file_size = "64M"
distribution = "seq"
ops = 16384
rate_iops = 1000
[[event]]
at = "14s"
cgroup = "/app"
reclaim = "{reclaim}"
"#
    ));
    only_event(&r).clone()
}

#[test]
fn memory_reclaim_on_6_12_asks_a_quarter_of_what_is_left_and_overshoots_less() {
    for amount in ["1M", "4M"] {
        let (old, new) = (streaming("6.1", amount), streaming("6.12", amount));
        let over = |e: &CgroupEventReport| e.reclaimed_bytes - e.asked_bytes;
        // 6.1 asks for all that is left, and the priority loop's last pass overshoots by
        // whole list fractions; 6.12 asks for a quarter at a time (at least a batch).
        assert!(over(&new) < over(&old), "{amount}: 6.12 {new:?}, 6.1 {old:?}");
        assert!(over(&new) <= 64 * 4096, "{amount}: {new:?}");
    }
}

#[test]
fn the_lists_and_counts_stay_consistent_through_every_write() {
    let events = "[[event]]\nat = \"1s\"\ncgroup = \"/app\"\nreclaim = \"6M\"\n[[event]]\nat = \"2s\"\ncgroup = \"/app\"\nhigh = \"6M\"\n\
                  [[event]]\nat = \"3s\"\ncgroup = \"/app\"\nmax = \"10M\"\n[[event]]\nat = \"3500ms\"\ncgroup = \"/app\"\nhigh = \"max\"\n";
    for kernel in ["6.1", "6.12"] {
        let text = app(kernel, true, events);
        let mut classic = crate::common::classic(&text);
        while classic.step() {
            classic.check().unwrap_or_else(|e| panic!("classic {kernel}: {e}"));
        }
        assert_eq!(classic.write_outcomes.len(), 4, "classic {kernel}");
        let mut mglru = crate::common::mglru(&text);
        while mglru.step() {
            mglru.check().unwrap_or_else(|e| panic!("mglru {kernel}: {e}"));
        }
        assert_eq!(mglru.write_outcomes.len(), 4, "mglru {kernel}");
        let app = mglru.mm.memcgs.find("/app").unwrap();
        assert_eq!(mglru.mm.memcgs.get(app).max, 2560, "memory.max stays as written (10M)");
    }
}
