//! Memory pressure stall information (kernel/sched/psi.c, 6.1/6.12): each memstall section
//! the model has, and the aggregation into `some`, `full` and the running averages.

use crate::common;
use common::*;

use pagelab::mm::folio::pg;
use pagelab::mm::vmstat::Ev;
use pagelab::sched::psi::{calc_load, decay_factor, Psi};

/// One task of a 16M machine reading pages of a 20,000-page file one at a time.
fn reader(kernel: &str) -> pagelab::sim::Machine<pagelab::policy::classic::Classic> {
    classic(&one_file_scenario("16M", kernel, "classic", 20_000))
}

/// Task 0's (memstall, reclaim, io wait) time so far.
fn times<P: pagelab::policy::Policy>(m: &pagelab::sim::Machine<P>) -> (u64, u64, u64) {
    (m.mm.psi.stalled_ns(0), m.mm.tasks[0].reclaim_ns, m.mm.tasks[0].io_wait_ns)
}

#[test]
fn direct_reclaim_is_a_memstall_in_try_to_free_pages() {
    // mm/page_alloc.c: __alloc_pages_direct_reclaim() (6.1, 6.12) wraps __perform_reclaim()
    // in psi_memstall_enter()/leave(). With every watermark at all of memory, each
    // allocation reclaims directly; the pages are read once, so no read is a refault, and
    // the task's stall is exactly its time in try_to_free_pages().
    for kernel in ["6.1", "6.12"] {
        let mut m = reader(kernel);
        for zone in &mut m.mm.nodes[0].zones.z {
            zone.wmark_min = zone.managed;
            zone.wmark_low = zone.managed;
            zone.wmark_high = zone.managed;
        }
        for p in 0..6000 {
            m.apply(0, read(0, p));
        }
        assert!(ev(&m, Ev::AllocStall) > 1000, "{kernel}: allocations stall ({})", ev(&m, Ev::AllocStall));
        assert_eq!(ev(&m, Ev::WorkingsetRefaultFile), 0, "{kernel}");
        let (stalled, reclaim, io) = times(&m);
        assert!(reclaim > 0 && io > 0, "{kernel}");
        assert_eq!(stalled, reclaim, "{kernel}: the memstall is the direct reclaim, not the reads");
    }
}

#[test]
fn a_refault_read_is_a_memstall_and_a_first_read_is_not() {
    // mm/filemap.c: filemap_read_folio() and folio_wait_bit_common() (6.1, 6.12) stall the
    // reader of a page with PG_workingset: a refault of a page that was in the workingset
    // (active) when it was evicted. A first read, and the refault of a page evicted from the
    // inactive list, wait for the disk without a memstall. (On 6.12 this machine restores
    // no PG_workingset on refault, workingset_restore_file stays 0, so 6.1 shows the rule;
    // the sections are the same code on both.)
    for kernel in ["6.1"] {
        let mut m = reader(kernel);
        // Pages 0..3000 read twice (active, more than the active list may keep), the rest of
        // the file streams through once.
        for p in 0..3000 {
            m.apply(0, read(0, p));
            m.apply(0, read(0, 19_999));
            m.apply(0, read(0, p));
        }
        let first = times(&m);
        m.apply(0, read(0, 6000));
        let after = times(&m);
        assert!(after.2 > first.2, "{kernel}: a first read waits for the disk");
        assert_eq!(after.0 - first.0, after.1 - first.1, "{kernel}: a first read is no memstall beyond its reclaim");
        for p in 3000..5000 {
            m.apply(0, read(0, p));
        }
        // Refaults of the evicted pages, old hot ones and streamed ones: those that come
        // back with PG_workingset (evicted active, and recent enough for workingset_refault()
        // to activate them) stall for their read; the others do not.
        // 6.12 judges refaults on flushed statistics: let the periodic flush run first.
        let now = m.mm.tasks[0].clock;
        m.mm.memcgs.periodic_flush(now);
        let evicted: Vec<u64> = (0..3000).rev().chain(3000..5000).filter(|&p| pfn_of(&m, 0, 0, p).is_none()).collect();
        let (mut stalled, mut plain) = (0, 0);
        for p in evicted {
            let before = times(&m);
            m.apply(0, read(0, p));
            let after = times(&m);
            let (stall, reclaim, io) = (after.0 - before.0, after.1 - before.1, after.2 - before.2);
            assert!(io > 0, "{kernel}: page {p} is read from disk");
            let pfn = pfn_of(&m, 0, 0, p).expect("just read");
            if m.mm.folios.test(pfn, pg::WORKINGSET) {
                assert!(stall >= reclaim + io, "{kernel}: page {p}: the wait for the read is a stall ({stall} < {reclaim} + {io})");
                stalled += 1;
            } else {
                assert_eq!(stall, reclaim, "{kernel}: page {p}: a refault without PG_workingset is no memstall");
                plain += 1;
            }
        }
        assert!(stalled > 0 && plain > 0, "{kernel}: {stalled} workingset refaults, {plain} others");
    }
}

#[test]
fn memory_high_penalty_sleep_is_a_memstall() {
    // mm/memcontrol.c: mem_cgroup_handle_over_high() (6.1, 6.12) sleeps its penalty in a
    // memstall, and reclaim_high()'s reclaim is one too. Anonymous memory with no swap
    // cannot be reclaimed, so the task sleeps; it does no IO, so its waits are the sleeps.
    for kernel in ["6.1", "6.12"] {
        let mut m = classic(&format!(
            r#"
[machine]
memory = "64M"
kernel = "{kernel}"
[[cgroup]]
path = "/h"
high = "4M"
[[workload]]
name = "heap"
cgroup = "/h"
kind = "anon-rw"
size = "8M"
distribution = "seq"
ops = 2048
"#
        ));
        while m.step() {}
        m.finish();
        let h = m.mm.memcgs.find("/h").unwrap();
        assert!(m.mm.memcgs.get(h).memory_events.high > 0, "{kernel}");
        let (stalled, reclaim, slept) = times(&m);
        assert!(slept > 0, "{kernel}: the penalty sleeps");
        assert_eq!(stalled, reclaim + slept, "{kernel}: reclaim and the sleep are the stall");
        // The cgroup's pressure, and the system's, show it.
        let p = &m.pressure;
        assert!(p[h as usize].some.total_us > 0 && p[0].some.total_us > 0, "{kernel}");
    }
}

#[test]
fn a_cgroup_sees_the_stalls_of_its_descendants_and_not_its_siblings() {
    // psi_group_change() walks a task's cgroup and every ancestor: /p/a's stalls count in
    // /p/a, /p and the system; /p/b, which never stalls, shows none.
    let text = r#"
[machine]
memory = "64M"
kernel = "6.12"
[[cgroup]]
path = "/p"
[[cgroup]]
path = "/p/a"
high = "4M"
[[cgroup]]
path = "/p/b"
[[workload]]
name = "heap"
cgroup = "/p/a"
kind = "anon-rw"
size = "8M"
distribution = "seq"
ops = 2048
[[workload]]
name = "calm"
cgroup = "/p/b"
kind = "anon-rw"
size = "1M"
distribution = "uniform"
ops = 20000
"#;
    let mut m = classic(text);
    while m.step() {}
    m.finish();
    let id = |path: &str| m.mm.memcgs.find(path).unwrap() as usize;
    let p = &m.pressure;
    assert!(p[id("/p/a")].some.total_us > 0);
    assert_eq!(p[id("/p")].some.total_us, p[id("/p/a")].some.total_us, "/p's only stalled task is /p/a's (and /p/b's CPU is never stalled)");
    assert_eq!(p[id("/p/b")].some.total_us, 0);
    assert_eq!(m.mm.psi.stalled_ns(1), 0, "the calm task never stalls");
    let report = pagelab::Report::collect(&scenario(text), &m);
    assert_eq!(report.memory_pressure["/p/a"], p[id("/p/a")]);
    assert_eq!(report.pressure["memory"], p[0]);
}

#[test]
fn kswapd_balancing_is_a_memstall_of_the_system_only() {
    // mm/vmscan.c: balance_pgdat() (6.1, 6.12) runs in a memstall; kswapd is a kernel
    // thread of the root cgroup, so its stall shows in /proc/pressure/memory and in no
    // cgroup's memory.pressure. A stream of first reads in /s keeps kswapd busy; the
    // stream's own stalls are its few direct reclaims.
    let mut m = classic(
        r#"
[machine]
memory = "64M"
kernel = "6.1"
[[cgroup]]
path = "/s"
[[workload]]
name = "stream"
cgroup = "/s"
kind = "file-read"
file_size = "400M"
distribution = "seq"
ops = 60000
"#,
    );
    while m.step() {}
    m.finish();
    assert!(ev(&m, Ev::PageOutRun) > 0 && ev(&m, Ev::PgStealKswapd) > 0);
    let kswapd = m.mm.tasks.len();
    assert!(m.mm.psi.stalled_ns(kswapd) > 0, "kswapd stalls while it balances");
    let s = m.mm.memcgs.find("/s").unwrap() as usize;
    // /s has one task on its CPU: its pressure is that task's own stall time (less the
    // periods it ran under a jiffy, which weigh nothing).
    assert!(m.pressure[s].some.total_us <= m.mm.psi.stalled_ns(0) / 1000 + 1);
    assert!(
        m.pressure[0].some.total_us > m.pressure[s].some.total_us,
        "kswapd's balancing adds to the system's pressure: {:?} vs {:?}",
        m.pressure[0].some,
        m.pressure[s].some
    );
}

/// Two actors in one group, on CPUs of their own (`shared` false) or both on CPU 0.
fn two(shared: bool) -> Psi {
    let cpus = if shared { [0, 0] } else { [0, 1] };
    Psi::new(1, vec![(vec![0], cpus[0]), (vec![0], cpus[1])], shared, 2_004_000_000, 4_000_000)
}

#[test]
fn full_needs_every_non_idle_task_stalled() {
    // kernel/sched/psi.c: test_states() (6.1, 6.12): on a CPU, `some` while a task is in a
    // memstall, `full` while one is and no task runs productively. Task 0 stalls over
    // [0, 1 s); task 1 runs over [0, 0.4 s), then sleeps (idle).
    let drive = |p: &mut Psi| {
        p.set_idle(0, 0, false);
        let f = p.memstall_enter(0, 0);
        p.set_idle(1, 0, false);
        p.op_ends(1, 400_000_000);
        p.op_ends_idle(1);
        p.memstall_leave(0, 1_000_000_000, f);
        p.op_ends(0, 1_000_000_000);
        p.op_ends_idle(0);
        p.read_all(1_500_000_000)[0]
    };
    let shared = drive(&mut two(true));
    assert_eq!(shared.some.total_us, 1_000_000);
    assert_eq!(shared.full.total_us, 600_000, "full only once task 1 stopped running");
    // On CPUs of their own, each CPU's task is all its CPU has: full is some, and the two
    // CPUs are weighed by their non-idle time (collect_percpu_times()):
    // (1 s · 250 jiffies + 0 · 100 jiffies) / 350 jiffies.
    let apart = drive(&mut two(false));
    assert_eq!(apart.full, apart.some);
    assert_eq!(apart.some.total_us, 1_000_000 * 250 / 350);
}

#[test]
fn a_sleep_inside_an_operation_is_not_productive() {
    // An IO wait is TSK_IOWAIT, not TSK_RUNNING: a stalled task beside one asleep on IO is
    // `full` pressure on their CPU.
    let mut p = two(true);
    p.set_idle(0, 0, false);
    let f = p.memstall_enter(0, 0);
    p.set_idle(1, 0, false);
    p.sleep(1, 0, 1_000_000_000);
    p.memstall_leave(0, 1_000_000_000, f);
    let r = p.read_all(1_000_000_000)[0];
    assert_eq!(r.full.total_us, 1_000_000);
}

#[test]
fn avg10_decays_as_calc_avgs() {
    // update_averages()/calc_avgs() (6.1, 6.12): every PSI period the averages move toward
    // the period's share by 1 - e^(-2 s / window), in FSHIFT fixed point. One task stalls
    // through the first period and is idle after.
    let period = 2_004_000_000;
    let mut p = Psi::new(1, vec![(vec![0], 0)], false, period, 4_000_000);
    p.set_idle(0, 0, false);
    let f = p.memstall_enter(0, 0);
    p.memstall_leave(0, period, f);
    p.op_ends(0, period);
    p.op_ends_idle(0);
    let e10 = decay_factor(10.0);
    let mut expect = calc_load(0, e10, 100 << 11);
    let first = p.read_all(period)[0].some.avg10;
    assert!((first - 100.0 * (1.0 - (-0.2f64).exp())).abs() < 0.05, "one full period: {first}");
    for k in 2..12u64 {
        expect = calc_load(expect, e10, 0);
        let got = p.read_all(k * period)[0].some.avg10;
        let want = (expect >> 11) as f64 + (((expect & 2047) * 100) >> 11) as f64 / 100.0;
        assert_eq!(got, want, "period {k}");
        // And it tracks the exponential decay it approximates.
        let ideal = 100.0 * (1.0 - (-0.2f64).exp()) * (-0.2 * (k - 1) as f64).exp();
        assert!((got - ideal).abs() < 0.1, "period {k}: {got} vs {ideal}");
    }
    assert_eq!(p.read_all(12 * period)[0].some.total_us, period / 1000);
}
