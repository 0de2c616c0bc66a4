//! Direct and memcg limit reclaim that yield at the kernel's cond_resched() points with
//! `machine.cpus` (issue 42, sim/machine/resched.rs): concurrent reclaimers share the first
//! long trip round a list, as the kernel's CPUs do, instead of one running it whole.

use super::common;
use pagelab::report::Report;

fn run(text: &str) -> Report {
    pagelab::run(&common::scenario(text), |_, _| {}).unwrap()
}

/// Two tasks on two CPUs writing 24M of anonymous memory each, in order, under one 32M
/// limit: they reach it together, and every page on the inactive list has one young PTE
/// from its fault, so 6.1's first memcg reclaim must go round the whole list (look twice)
/// before it frees anything.
fn two_writers(policy: &str) -> String {
    format!(
        r#"
[machine]
memory = "256M"
kernel = "6.1"
policy = "{policy}"
cpus = 2
swap = {{ device = "ramdisk", size = "128M" }}

[[cgroup]]
path = "/a"
max = "32M"

[[workload]]
name = "w"
cgroup = "/a"
jobs = 2
kind = "anon-write"
size = "24M"
distribution = "seq"
prefill = false
ops = 6144
seed = 1
"#
    )
}

fn longest_ops_ms(r: &Report) -> Vec<f64> {
    r.tasks.iter().map(|t| t.latency.as_ref().map_or(0.0, |l| l.max_ns as f64 / 1e6)).collect()
}

#[test]
fn two_tasks_reclaiming_under_one_limit_share_the_first_long_pass() {
    // Run whole, the first reclaim (8.5 ms) was one task's alone and the other's next
    // reclaim found the list's tail already referenced: its longest operation was 0.18 ms.
    // Yielding between shrink_lruvec()'s rounds, both stall in the first pass (5.3 ms each).
    let r = run(&two_writers("classic"));
    let longest = longest_ops_ms(&r);
    let (lo, hi) = (longest.iter().cloned().fold(f64::MAX, f64::min), longest.iter().cloned().fold(0.0, f64::max));
    assert!(lo > 1.0 && lo * 2.0 > hi, "each task's longest operation is in the shared first pass: {longest:?}");
    assert!(r.tasks.iter().all(|t| t.reclaim_s > 0.0), "{:?}", r.tasks);
    // Each CPU burst of a suspended reclaim counts its part of the reclaim (no kswapd here,
    // no CPU waits): the CPUs' reclaim time is the tasks'. Booked to a reclaim's last burst
    // alone, capped by that burst's CPU time, it was 1.1 ms of 26.3.
    let cpus: f64 = r.sched.as_ref().expect("machine.cpus").cpu.iter().map(|c| c.reclaim_s).sum();
    let tasks: f64 = r.tasks.iter().map(|t| t.reclaim_s).sum();
    assert!((cpus - tasks).abs() <= tasks / 100.0, "CPUs {cpus} s, tasks {tasks} s");
}

#[test]
fn reclaims_that_yield_are_deterministic() {
    for policy in ["classic", "mglru"] {
        let (a, b) = (run(&two_writers(policy)), run(&two_writers(policy)));
        assert_eq!(a.vmstat, b.vmstat, "{policy}");
        assert_eq!(longest_ops_ms(&a), longest_ops_ms(&b), "{policy}");
        assert_eq!(a.elapsed_s, b.elapsed_s, "{policy}");
    }
}

/// Runs `m` and asks it to stop at its `k`-th progress report (every 4,096 operations).
fn run_stopped_at_report<P: pagelab::policy::Policy>(m: &mut pagelab::sim::Machine<P>, k: u32) {
    let token = pagelab::interrupt::StopToken::new();
    let mut reports = 0;
    pagelab::interrupt::scope(Some(token.clone()), || {
        m.run(|_| {
            reports += 1;
            if reports == k {
                token.stop();
            }
        })
    });
}

#[test]
fn a_run_stopped_with_reclaims_suspended_finishes_them() {
    // cond_resched() returns to the reclaim that called it: a run that stops (a stop asked
    // for at a progress report) while reclaims are suspended finishes each of them, without
    // yields, so none leaves its isolated folios off the lists. Classic's third report falls
    // while a task's reclaim is suspended: left there, its folios stay isolated.
    for k in 1..=3 {
        let mut m = common::classic(&two_writers("classic"));
        run_stopped_at_report(&mut m, k);
        m.check().unwrap_or_else(|e| panic!("classic, stopped at report {k}: {e}"));
        assert!(m.mm.resched.is_none(), "the hook does not outlive the run");
        let mut m = common::mglru(&two_writers("mglru"));
        run_stopped_at_report(&mut m, k);
        m.check().unwrap_or_else(|e| panic!("mglru, stopped at report {k}: {e}"));
    }
}

/// A controller that panics at its `k`-th tick after the cgroup first reached its limit.
struct PanicsInReclaim {
    k: u32,
}

impl pagelab::sim::controller::Controller for PanicsInReclaim {
    fn name(&self) -> String {
        "panics".into()
    }
    fn interval_ns(&self) -> u64 {
        1_000_000
    }
    fn tick(&mut self, _now_ns: u64, cgroups: &[pagelab::sim::controller::CgroupStats]) -> Vec<pagelab::sim::controller::Act> {
        let max_events = cgroups[1].events.iter().find(|(name, _)| *name == "max").map_or(0, |&(_, n)| n);
        if max_events > 0 {
            if self.k == 0 {
                panic!("a controller's panic");
            }
            self.k -= 1;
        }
        Vec::new()
    }
}

#[test]
fn a_panic_while_reclaims_are_suspended_reaches_the_caller_of_run() {
    // The controller ticks in the event loop's flow while both tasks' reclaims are
    // suspended in flows of their own: the panic reaches `run`'s caller, the suspended flows
    // are unwound on the way, and the machine's cond_resched() hook is gone.
    for k in 0..3 {
        let mut m = common::classic(&two_writers("classic"));
        m.add_controllers(vec![Box::new(PanicsInReclaim { k })]);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.run(|_| {})));
        let payload = r.expect_err("the controller panics");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"a controller's panic"));
        assert!(m.mm.resched.is_none());
    }
}

#[test]
fn the_report_counts_the_reclaims_that_left_their_cpu_at_cond_resched() {
    // sched.reclaim_yields: the two writers' reclaims leave their CPUs for each other in the
    // shared first pass; a lone writer has nobody to yield to.
    let two = run(&two_writers("classic"));
    let yields = two.sched.as_ref().expect("machine.cpus").reclaim_yields;
    assert!(yields > 0, "two reclaimers under one limit yield to each other");
    let one = run(&two_writers("classic").replace("jobs = 2", "jobs = 1"));
    assert_eq!(one.sched.as_ref().expect("machine.cpus").reclaim_yields, 0);
}
