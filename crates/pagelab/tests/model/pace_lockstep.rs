//! `pace = "trace"` (each access of a trace at its time in the trace) and `lockstep` (a
//! follower that waits for its leader's accesses): the times and the interleaving, exactly.

use std::path::{Path, PathBuf};

use pagelab::policy::classic::Classic;
use pagelab::sim::Machine;
use pagelab::Scenario;

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pace-lockstep-test").join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn load(name: &str, files: &[(&str, &str)], text: &str) -> Scenario {
    let d = dir(name);
    for (f, body) in files {
        std::fs::write(d.join(f), body).unwrap();
    }
    std::fs::write(d.join("s.toml"), text).unwrap();
    Scenario::load(&d.join("s.toml"), &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// Steps the machine to the end; every access done, in order: (task, its access count, the
/// task's clock when the access ended).
fn run_steps(s: &Scenario) -> (Machine<Classic>, Vec<(usize, u64, u64)>) {
    let mut m = Machine::new(s, |mm| Classic::new(mm.memcgs.cg.len())).unwrap();
    let mut done: Vec<u64> = m.tasks.iter().map(|t| t.ops).collect();
    let mut seq = Vec::new();
    while m.step() {
        for (t, task) in m.tasks.iter().enumerate() {
            if task.ops != done[t] {
                assert_eq!(task.ops, done[t] + 1, "one access per step");
                done[t] = task.ops;
                seq.push((t, task.ops, m.mm.tasks[t].clock));
            }
        }
    }
    m.finish();
    (m, seq)
}

const MS: u64 = 1_000_000;

#[test]
fn paced_accesses_are_issued_at_their_trace_times_from_the_first() {
    // Times in ms: the first access at the workload's start (2 s), the others that long after.
    let trace = "t,key\n5000,a\n5100,b\n5250,c\n5250,a\n6000,b\n";
    let text = "[machine]\nmemory = \"64M\"\n[[workload]]\nname = \"p\"\ncgroup = \"/\"\nkind = \"file-read\"\nstart = \"2s\"\n\
                trace = \"t.csv\"\ntrace_format = \"csv:time=1,id=2,time-unit=ms,header\"\npace = \"trace\"\n";
    let s = load("paced", &[("t.csv", trace)], text);
    let (m, seq) = run_steps(&s);
    let due = [0u64, 100, 250, 250, 1000].map(|d| 2000 * MS + d * MS);
    assert_eq!(seq.len(), 5);
    for (i, &(_, _, end)) in seq.iter().enumerate() {
        // Each access ends after it is due and, the model being fast, well before the next.
        assert!(end > due[i] && end < due[i] + MS, "access {i} ended at {end}, due {}", due[i]);
    }
    let p = m.tasks[0].pacing.as_deref().unwrap();
    // The fourth is due with the third: late by the third's duration, and only it.
    assert_eq!((p.accesses, p.late), (5, 1));
    assert!(p.behind_max_ns > 0 && p.behind_max_ns == seq[2].2 - due[2], "{p:?}");
    assert_eq!(p.behind_last_ns, 0);
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    let pr = r.tasks[0].pace.as_ref().unwrap();
    assert_eq!((pr.accesses, pr.late), (5, 1));
    assert!(r.table().contains("pace: p issued 1 of 5 accesses after their trace time"));
    // Without pace the same trace runs back to back, and the report says nothing of pacing.
    let s = load("unpaced", &[("t.csv", trace)], &text.replace("pace = \"trace\"\n", ""));
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    assert!(r.elapsed_s < 2.1 && r.tasks[0].pace.is_none(), "{}", r.elapsed_s);
    assert!(!serde_json::to_string(&r).unwrap().contains("\"pace\""));
}

#[test]
fn a_model_slower_than_its_trace_reports_how_far_it_fell_behind() {
    // 101 accesses 1 µs apart, each taking over 1 ms of think time: access i is issued
    // about i ms late.
    let trace: String = (0..=100).map(|i| format!("{i},k{}\n", i % 7)).collect();
    let text = "[machine]\nmemory = \"64M\"\n[[workload]]\nname = \"slow\"\ncgroup = \"/\"\nkind = \"file-read\"\nthink = \"1ms\"\n\
                trace = \"t.csv\"\ntrace_format = \"csv:time=1,id=2,time-unit=us\"\npace = \"trace\"\n";
    let s = load("behind", &[("t.csv", &trace)], text);
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    let p = r.tasks[0].pace.as_ref().unwrap();
    assert_eq!((p.accesses, p.late), (101, 100));
    // The last is issued after 100 accesses of at least 1 ms each, due 100 µs after the first.
    assert!(p.behind_end_s >= 0.1 - 100e-6 && p.behind_end_s < 0.11, "{p:?}");
    assert_eq!(p.behind_max_s, p.behind_end_s, "it only falls further behind");
}

#[test]
fn an_iologs_backward_times_count_as_the_latest_time_before_them() {
    // fio's threads may log out of order: a time before the previous one is due with it.
    let log = "fio version 3 iolog\n0 f add\n100 f read 0 4096\n150 f read 4096 4096\n120 f read 8192 4096\n400 f read 0 4096\n";
    let text = "[machine]\nmemory = \"64M\"\n[[workload]]\nname = \"io\"\ncgroup = \"/\"\nkind = \"file-read\"\ntrace = \"t.iolog\"\ntrace_format = \"iolog\"\npace = \"trace\"\n";
    let s = load("iolog", &[("t.iolog", log)], text);
    let st = pagelab_workload::JobStream::with_traces(&s.workloads[0], 0, &|t, _, p| pagelab::trace_workload::open(t, p)).unwrap();
    let due: Vec<(u64, bool)> = st.map(|o| o.due.map(|d| (d.after_ns, d.first)).unwrap()).collect();
    assert_eq!(due, vec![(0, true), (50_000, false), (50_000, false), (300_000, false)]);
}

/// A leader and a follower reading one cached page, each access taking its think time
/// (and a little more): the leader 3 ms, the follower 1 ms.
fn pair(name: &str, ratio: &str, leader_ops: u64, follower_ops: u64) -> Scenario {
    let text = format!(
        "[machine]\nmemory = \"64M\"\n\
         [[workload]]\nname = \"lead\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile = \"f\"\nfile_size = \"4k\"\nops = {leader_ops}\nthink = \"3ms\"\n\
         [[workload]]\nname = \"follow\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile = \"f\"\nfile_size = \"4k\"\nops = {follower_ops}\nthink = \"1ms\"\n\
         lockstep = {{ leader = \"lead\", ratio = {ratio} }}\n"
    );
    load(name, &[], &text)
}

/// The fewest leader accesses d with d × ratio ≥ j.
fn needed(j: u64, ratio: f64) -> u64 {
    (0..).find(|&d| d as f64 * ratio >= j as f64).unwrap()
}

/// Checks the rule on the steps: follower access j (0-based) starts only after the leader's
/// access `needed(j)` ended, so it ends at least its think time later.
fn check_rule(seq: &[(usize, u64, u64)], ratio: f64) {
    let lead_end: Vec<u64> = seq.iter().filter(|s| s.0 == 0).map(|s| s.2).collect();
    let mut lead_done = 0;
    for &(t, n, end) in seq {
        if t == 0 {
            lead_done = n;
            continue;
        }
        let (j, d) = (n - 1, needed(n - 1, ratio));
        assert!(lead_done >= d, "follower access {j} before leader access {d}");
        if d > 0 {
            assert!(end >= lead_end[d as usize - 1] + MS, "follower access {j} ended at {end}, leader's {d} at {}", lead_end[d as usize - 1]);
        }
    }
}

#[test]
fn a_follower_waits_for_its_leaders_accesses_at_ratio_two() {
    let s = pair("ratio2", "2", 6, 12);
    let (m, seq) = run_steps(&s);
    let order: String = seq.iter().map(|&(t, n, _)| format!("{}{} ", if t == 0 { 'L' } else { 'F' }, n - 1)).collect();
    // F0 free; F1 and F2 after L0; F3 and F4 after L1; ...: the leader's 3 ms let the
    // follower do two 1 ms accesses, then it waits.
    assert_eq!(order.trim(), "F0 L0 F1 L1 F2 F3 L2 F4 F5 L3 F6 F7 L4 F8 F9 L5 F10 F11");
    check_rule(&seq, 2.0);
    let l = &m.locks[1];
    assert!(l.waits >= 5 && l.wait_ns > 0, "{} waits", l.waits);
    assert_eq!(m.tasks[1].ops, 12);
}

#[test]
fn a_follower_at_ratio_one_half_waits_for_two_leader_accesses_each() {
    let s = pair("ratio-half", "0.5", 8, 4);
    let (_, seq) = run_steps(&s);
    let order: String = seq.iter().map(|&(t, n, _)| format!("{}{} ", if t == 0 { 'L' } else { 'F' }, n - 1)).collect();
    // F1 may start when L1 ends, the moment L2 starts: on equal clocks the first task (the
    // leader) goes first, so L2 is stepped before F1.
    assert_eq!(order.trim(), "F0 L0 L1 L2 F1 L3 L4 F2 L5 L6 F3 L7");
    check_rule(&seq, 0.5);
}

#[test]
fn a_follower_ends_with_its_leader_and_a_leader_waits_for_the_followers_prefill() {
    // The leader does 3 accesses; the follower, at ratio 1, can do accesses 0 to 3 only.
    let s = pair("ends", "1", 3, 10);
    let (m, seq) = run_steps(&s);
    check_rule(&seq, 1.0);
    assert_eq!((m.tasks[0].ops, m.tasks[1].ops), (3, 4));
    assert!(m.tasks[1].done);
    // An anonymous follower touches 2000 pages first; the leader's first access follows.
    let text = "[machine]\nmemory = \"64M\"\n\
                [[workload]]\nname = \"lead\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"4k\"\nops = 2\n\
                [[workload]]\nname = \"follow\"\ncgroup = \"/\"\nkind = \"anon-read\"\nsize = \"8000k\"\nops = 2\nlockstep = { leader = \"lead\" }\n";
    let s = load("prefill", &[], text);
    let mut m = Machine::new(&s, |mm| Classic::new(mm.memcgs.cg.len())).unwrap();
    let mut prefill_end = None;
    let mut lead_first = None;
    while m.step() {
        if prefill_end.is_none() && m.tasks[1].fill_ops == 2000 {
            prefill_end = Some(m.mm.tasks[1].clock);
        }
        if lead_first.is_none() && m.tasks[0].ops == 1 {
            assert_eq!(m.tasks[1].fill_ops, 2000, "the leader's first access after the follower's prefill");
            lead_first = Some(m.mm.tasks[0].clock);
        }
    }
    assert!(lead_first.unwrap() > prefill_end.unwrap());
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    let l = r.tasks[0].lockstep.as_ref().unwrap();
    assert_eq!((l.followers.clone(), l.waits), (vec!["follow".to_string()], 1), "the leader waited once, for the prefill");
    assert_eq!(r.tasks[1].lockstep.as_ref().unwrap().leader.as_deref(), Some("lead"));
}

#[test]
fn lockstep_errors_name_the_key() {
    let base = "[machine]\nmemory = \"64M\"\n[[workload]]\nname = \"a\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"4k\"\nLA\n\
                [[workload]]\nname = \"b\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"4k\"\nLB\n";
    for (la, lb, key, msg) in [
        ("", "lockstep = { leader = \"c\" }", "workload[1].lockstep.leader", "no workload is named `c`"),
        ("", "lockstep = { leader = \"b\" }", "workload[1].lockstep.leader", "cannot follow itself"),
        ("lockstep = { leader = \"b\" }", "lockstep = { leader = \"a\" }", "workload[0].lockstep.leader", "circle: a → b → a"),
        ("", "lockstep = { leader = \"a\", ratio = 0 }", "workload[1].lockstep.ratio", "positive"),
        ("jobs = 2", "lockstep = { leader = \"a\" }", "workload[1].lockstep.leader", "`a` has 2 jobs"),
        ("", "lockstep = { ratio = 2 }", "workload[1].lockstep.leader", "missing"),
    ] {
        let e = Scenario::parse(&base.replace("LA", la).replace("LB", lb), "s.toml", "s", &[]).unwrap_err();
        assert!(e.key == key && e.message.contains(msg), "{la} / {lb}: {e}");
    }
}
