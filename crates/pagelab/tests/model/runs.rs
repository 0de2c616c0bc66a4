//! Whole runs: determinism, the issue's example, the OOM killer, and the read shortcuts' equivalence.

use crate::common;
use common::*;

use pagelab::mm::vmstat::Ev;

const EXAMPLE: &str = include_str!("../../../../examples/fio-zipf.toml");

fn run_json(text: &str, overrides: &[String]) -> String {
    let s = pagelab::Scenario::parse(text, "example.toml", "fio-zipf", overrides).unwrap();
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    serde_json::to_string(&r).unwrap()
}

#[test]
fn the_same_scenario_and_seed_give_identical_json() {
    let small = ["workload.fio-zipf.ops=20000".to_string()];
    let a = run_json(EXAMPLE, &small);
    let b = run_json(EXAMPLE, &small);
    assert_eq!(a, b);
    let other_seed = run_json(EXAMPLE, &[small[0].clone(), "workload.fio-zipf.seed=7".into()]);
    assert_ne!(a, other_seed, "the seed changes the accesses");
}

#[test]
fn the_issue_example_reports_every_listed_counter_plausibly() {
    let s = pagelab::Scenario::parse(EXAMPLE, "example.toml", "fio-zipf", &["workload.fio-zipf.ops=150000".into()]).unwrap();
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    for k in [
        "workingset_refault_file",
        "workingset_activate_file",
        "workingset_restore_file",
        "workingset_refault_anon",
        "workingset_activate_anon",
        "workingset_restore_anon",
        "pgscan_kswapd",
        "pgscan_direct",
        "pgsteal_kswapd",
        "pgsteal_direct",
        "pgscan_anon",
        "pgscan_file",
        "pgsteal_anon",
        "pgsteal_file",
        "pgactivate",
        "pgdeactivate",
        "pgrefill",
        "pgpgin",
        "pgpgout",
        "pswpin",
        "pswpout",
        "pgmajfault",
        "pgfault",
        "allocstall",
        "nr_inactive_anon",
        "nr_active_anon",
        "nr_inactive_file",
        "nr_active_file",
        "nr_free_pages",
    ] {
        assert!(r.vmstat.contains_key(k), "vmstat lacks {k}");
    }
    let t = &r.memcg["/test"];
    // The 720M file cannot fit the 192M limit: the cgroup is reclaimed, refaults happen,
    // and its usage ends at the limit.
    assert!(t["pgsteal"] > 0 && t["workingset_refault_file"] > 0);
    assert!(t["memory.current"] <= 192 << 20 && t["memory.current"] > 180 << 20, "{}", t["memory.current"]);
    assert!(r.vmstat["pgsteal_file"] <= r.vmstat["pgscan_file"]);
    assert_eq!(r.vmstat["pswpout"], 0, "a pure file workload does not swap");
    assert!(r.elapsed_s > 0.0 && r.throughput_ops_s > 0.0);
    assert!(!r.series.is_empty());
    let steal: u64 = r.series.iter().map(|p| p.vmstat["pgsteal_file"]).sum();
    assert_eq!(steal, r.vmstat["pgsteal_file"], "the series holds per-interval deltas that add up");
    for p in &r.series {
        assert_eq!(p.task_ops.values().sum::<u64>(), p.ops, "an interval's ops are its tasks' ops at {} s", p.t_s);
    }
    for t in &r.tasks {
        let per_interval: u64 = r.series.iter().map(|p| p.task_ops[&t.name]).sum();
        assert_eq!(per_interval, t.ops, "{}'s ops over the intervals add up to its total", t.name);
    }
}

#[test]
fn a_workload_larger_than_memory_plus_swap_meets_the_oom_killer() {
    let mut m = classic(
        r#"
[machine]
memory = "32M"
kernel = "6.1"
swap = { device = "zram", size = "8M" }
[[workload]]
name = "small"
cgroup = "/"
kind = "anon-write"
size = "4M"
distribution = "uniform"
ops = 20000
[[workload]]
name = "hog"
cgroup = "/"
kind = "anon-write"
size = "64M"
distribution = "seq"
ops = 1
"#,
    );
    while m.step() {}
    m.finish();
    m.check().unwrap();
    assert_eq!(m.mm.oom_kills.len(), 1, "{:?}", m.mm.oom_kills);
    assert_eq!(m.mm.oom_kills[0].task, "hog", "the largest task is the victim");
    assert_eq!(ev(&m, Ev::OomKill), 1);
    assert!(m.mm.tasks[1].killed && !m.mm.tasks[0].killed);
    assert_eq!(m.tasks[0].ops, 20000, "the other task runs to completion");
}

#[test]
fn swap_io_to_zram_counts_pgpgin_and_pgpgout_from_6_12_on_only() {
    // 6.1's zram serves swap through rw_page, past the bio layer that counts pgpgin/pgpgout;
    // 6.12 submits a bio. A disk is counted by both. (pgpg* are in KiB: 4 a page.)
    let run = |kernel: &str, device: &str| {
        let mut m = classic(&format!(
            r#"
[machine]
memory = "64M"
kernel = "{kernel}"
swap = {{ device = "{device}", size = "128M" }}
[[workload]]
name = "heap"
cgroup = "/"
kind = "anon-rw"
size = "96M"
distribution = "uniform"
ops = 60000
"#
        ));
        while m.step() {}
        m.finish();
        m.check().unwrap();
        (ev(&m, Ev::PswpIn), ev(&m, Ev::PswpOut), ev(&m, Ev::PgpgIn), ev(&m, Ev::PgpgOut))
    };
    for kernel in ["6.1", "6.12"] {
        for device in ["zram", "ssd"] {
            let (pswpin, pswpout, pgpgin, pgpgout) = run(kernel, device);
            assert!(pswpin > 1000 && pswpout > 1000, "{kernel} {device}: {pswpin} {pswpout}");
            let counted = !(kernel == "6.1" && device == "zram");
            let want = if counted { (4 * pswpin, 4 * pswpout) } else { (0, 0) };
            assert_eq!((pgpgin, pgpgout), want, "{kernel} {device}");
        }
    }
}

#[test]
fn a_parallel_sweep_equals_the_same_sweep_on_one_thread() {
    let axes = [pagelab::sweep::Axis::parse("cgroup./test.max=16M,24M,32M").unwrap(), pagelab::sweep::Axis::parse("machine.kernel=6.1,6.12").unwrap()];
    let base = ["workload.fio-zipf.ops=15000".to_string()];
    let json = |threads| {
        pagelab::sweep::run(EXAMPLE, "example.toml", "fio-zipf", &base, &axes, threads, &|| {})
            .unwrap()
            .into_iter()
            .map(|(p, r)| (p.label(), serde_json::to_string(&r.unwrap()).unwrap()))
            .collect::<Vec<_>>()
    };
    let one = json(1);
    let many = json(4);
    assert_eq!(one.len(), 6);
    assert_eq!(one, many);
    assert_ne!(one[0].1, one[2].1, "the limit changes the run");
}

/// Runs `s` with filemap_read()'s one-page shortcuts on or off; the report as JSON.
fn run_with_shortcut<P: pagelab::policy::Policy>(s: &pagelab::Scenario, make: impl FnOnce(&pagelab::mm::Mm) -> P, shortcut: bool) -> String {
    run_tweaked(s, make, |mm| mm.cfg.read_shortcuts = shortcut)
}

/// Runs `s` after `tweak` has adjusted the machine; the report as JSON.
fn run_tweaked<P: pagelab::policy::Policy>(
    s: &pagelab::Scenario,
    make: impl FnOnce(&pagelab::mm::Mm) -> P,
    tweak: impl FnOnce(&mut pagelab::mm::Mm),
) -> String {
    let mut m = pagelab::sim::Machine::new(s, make).unwrap();
    tweak(&mut m.mm);
    m.run(|_| {});
    serde_json::to_string(&pagelab::Report::collect(s, &m)).unwrap()
}

/// file-zipf on a 16M machine for `ops` operations, with every zone's watermarks raised to
/// all of its memory, so every allocation stalls in direct reclaim; `tweak` changes the
/// machine further. The report's JSON.
fn starved_file_zipf(ops: u64, tweak: impl FnOnce(&mut pagelab::mm::Mm)) -> String {
    let text = include_str!("../../../../oracle/scenarios/file-zipf.toml");
    let overrides = [format!("workload.zipf.ops={ops}"), "machine.memory=16M".to_string()];
    let s = pagelab::Scenario::parse(text, "file-zipf", "file-zipf", &overrides).unwrap();
    let make = |mm: &pagelab::mm::Mm| pagelab::policy::classic::Classic::new(mm.memcgs.cg.len());
    run_tweaked(&s, make, |mm| {
        for zone in &mut mm.nodes[0].zones.z {
            zone.wmark_min = zone.managed;
            zone.wmark_low = zone.managed;
            zone.wmark_high = zone.managed;
        }
        tweak(mm);
    })
}

#[test]
fn the_read_miss_shortcut_falls_back_as_the_general_path_does() {
    // The min watermark raised to all of memory: every __GFP_NORETRY readahead allocation
    // fails after its round of direct reclaim, and each miss takes filemap_create_folio()'s
    // full allocation instead (reclaim retries, the OOM killer's verdict, the reserves).
    let starved = |shortcut: bool| starved_file_zipf(2000, |mm| mm.cfg.read_shortcuts = shortcut);
    let (on, off) = (starved(true), starved(false));
    let report: serde_json::Value = serde_json::from_str(&on).unwrap();
    let stalls = report["vmstat"]["allocstall"].as_u64().unwrap();
    assert!(stalls > 2000, "every miss should stall in direct reclaim, {stalls} stalls");
    assert!(on == off, "the shortcut's fallback changed the report");
}

#[test]
fn do_try_to_free_pages_counts_a_stall_under_the_zone_of_gfp_zone_movable_6_1_6_12() {
    // do_try_to_free_pages() counts ALLOCSTALL under sc->reclaim_idx = gfp_zone(gfp): a user
    // page (GFP_HIGHUSER_MOVABLE) stalls as allocstall_movable, never allocstall_normal.
    let json = starved_file_zipf(500, |_| {});
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let vmstat = &report["vmstat"];
    let stalls = vmstat["allocstall"].as_u64().unwrap();
    assert!(stalls > 0, "the starved machine should stall");
    assert_eq!(vmstat["allocstall_movable"].as_u64(), Some(stalls));
    assert_eq!(vmstat.get("allocstall_normal").and_then(|v| v.as_u64()).unwrap_or(0), 0);
}

#[test]
fn the_read_shortcuts_change_no_counter() {
    // Buffered reads with and without readahead (random misses take the miss shortcut),
    // loops, cgroup limits (charges that fail and reclaim), anon beside file.
    let scenarios = [
        ("fio-zipf", EXAMPLE),
        ("file-seq-stream", include_str!("../../../../oracle/scenarios/file-seq-stream.toml")),
        ("file-loop-scan", include_str!("../../../../oracle/scenarios/file-loop-scan.toml")),
        ("memcg-limit-zipf", include_str!("../../../../oracle/scenarios/memcg-limit-zipf.toml")),
        ("mixed-anon-file", include_str!("../../../../oracle/scenarios/mixed-anon-file.toml")),
        ("file-zipf", include_str!("../../../../oracle/scenarios/file-zipf.toml")),
        ("cgroups-parent-limit", include_str!("../../../../oracle/scenarios/cgroups-parent-limit.toml")),
    ];
    for (name, text) in scenarios {
        for overrides in [vec![], vec!["machine.policy=mglru".to_string(), "machine.kernel=6.12".to_string()]] {
            let s = pagelab::Scenario::parse(text, name, name, &overrides).unwrap();
            let (on, off) = match s.machine.policy.kind() {
                pagelab::PolicyKind::Classic => {
                    let make = |mm: &pagelab::mm::Mm| pagelab::policy::classic::Classic::new(mm.memcgs.cg.len());
                    (run_with_shortcut(&s, make, true), run_with_shortcut(&s, make, false))
                }
                pagelab::PolicyKind::Mglru => {
                    let make = |mm: &pagelab::mm::Mm| pagelab::policy::lru_gen::LruGen::new(mm, &s.mglru);
                    (run_with_shortcut(&s, make, true), run_with_shortcut(&s, make, false))
                }
            };
            assert!(on == off, "{name} {overrides:?}: the shortcuts changed the report");
        }
    }
}

#[test]
fn a_process_lifetime_frees_the_anonymous_memory_and_faults_it_in_again() {
    // 64 pages written at random, 4000 writes: one process touches every page once; four
    // processes of 1000 writes each start empty and touch them again (a fault per page per
    // process), and the memory ends with the last process's pages only.
    let text = |lifetime: &str| {
        format!(
            "[machine]\nmemory = \"256M\"\nkernel = \"6.1\"\n[[workload]]\nname = \"cc\"\ncgroup = \"/\"\nkind = \"anon-write\"\nsize = \"64p\"\ndistribution = \"uniform\"\nprefill = false\nops = 4000\n{lifetime}"
        )
    };
    let run = |t: String| pagelab::run(&pagelab::Scenario::parse(&t, "life.toml", "life", &[]).unwrap(), |_, _| {}).unwrap();
    let one = run(text(""));
    let four = run(text("lifetime_ops = 1000\n"));
    assert_eq!((one.tasks[0].respawns, four.tasks[0].respawns), (0, 3));
    assert_eq!(one.vmstat["pgfault"], 64);
    assert_eq!(four.vmstat["pgfault"], 4 * 64, "every process faults the 64 pages in anew");
    assert_eq!((one.ops, four.ops), (4000, 4000));
    let e = pagelab::Scenario::parse(&text("lifetime_ops = 0\n"), "life.toml", "life", &[]).unwrap_err().to_string();
    assert!(e.contains("lifetime_ops") && e.contains("at least 1"), "{e}");
}

/// A trace held in memory, as `pagelab run --trace` would stream it.
struct MemTrace(Vec<u32>, u64, bool);

impl pagelab_trace::PageSource for MemTrace {
    fn pages(&self) -> Option<u64> {
        Some(self.1)
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.0.len() as u64)
    }
    fn next_batch(&mut self) -> Result<Option<&[u32]>, pagelab_trace::TraceError> {
        let done = std::mem::replace(&mut self.2, true);
        Ok((!done).then_some(&self.0[..]))
    }
    fn pages_seen(&self) -> u64 {
        self.1
    }
}

/// Replays `pages` (a 6000-page file) as one-page reads on `m`: with `Machine::run`, or an
/// operation at a time with `Machine::step`; returns the report.
fn replay<P: pagelab::policy::Policy>(s: &pagelab::Scenario, mut m: pagelab::sim::Machine<P>, pages: &[u32], stepwise: bool) -> String {
    let read = pagelab_workload::Op {
        object: 0,
        page: 0,
        npages: 1,
        write: false,
        access: pagelab_workload::Access::Buffered,
        advice: pagelab_workload::Advice::Random,
        fill: false,
        think_ns: 0,
        due: None,
        more: false,
    };
    let ops = pagelab::sim::PageOps::new(Box::new(MemTrace(pages.to_vec(), 6000, false)), read, std::path::Path::new("mem"));
    m.set_ops(0, pagelab::sim::OpSource::Pages(ops)).unwrap();
    if stepwise {
        while m.step() {}
        m.finish();
    } else {
        m.run(|_| {});
    }
    serde_json::to_string(&pagelab::Report::collect(s, &m)).unwrap()
}

/// A trace whose second batch fails to read, after `zero` zero-size records.
struct FailingTrace(Vec<u32>, u32, u64);

impl pagelab_trace::PageSource for FailingTrace {
    fn pages(&self) -> Option<u64> {
        Some(100)
    }
    fn len_hint(&self) -> Option<u64> {
        None
    }
    fn next_batch(&mut self) -> Result<Option<&[u32]>, pagelab_trace::TraceError> {
        self.1 += 1;
        match self.1 {
            1 => Ok(Some(&self.0[..])),
            _ => Err(pagelab_trace::TraceError { path: "bad.og".into(), offset: Some(4096), msg: "a truncated record".into() }),
        }
    }
    fn pages_seen(&self) -> u64 {
        100
    }
    fn zero_size_records(&self) -> u64 {
        self.2
    }
}

#[test]
fn a_trace_replay_returns_its_trace_status_with_the_read_error_that_ended_it() {
    // The run hands back what the trace showed (no status shared with the caller): its pages,
    // its zero-size records and the read error, which ends the operations where it happened,
    // in the general loop and in the trace's own.
    let text = "[machine]\nmemory = \"16M\"\nkernel = \"6.1\"\n[[workload]]\nname = \"trace\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"100p\"\nfadvise = \"random\"\nops = 0\n";
    let s = pagelab::Scenario::parse(text, "trace.toml", "trace", &[]).unwrap();
    for think_ns in [0, 1000] {
        // A think time leaves Machine::run's loop for one-page reads for the general one.
        let read = pagelab_workload::Op {
            object: 0,
            page: 0,
            npages: 1,
            write: false,
            access: pagelab_workload::Access::Buffered,
            advice: pagelab_workload::Advice::Random,
            fill: false,
            think_ns,
            due: None,
            more: false,
        };
        let trace = FailingTrace((0..64).map(|i| i % 50).collect(), 0, 7);
        let ops = pagelab::sim::OpSource::Pages(pagelab::sim::PageOps::new(Box::new(trace), read, std::path::Path::new("bad.og")));
        let pagelab::Outcome { report, trace: status } = pagelab::run_with(&s, pagelab::RunOptions { ops: Some(ops), ..Default::default() }).unwrap();
        let status = status.expect("a trace's pages report their status");
        assert_eq!(report.ops, 64, "think {think_ns}: the operations end at the error");
        assert_eq!((status.pages_seen, status.zero_size_records), (100, 7), "think {think_ns}");
        let e = status.error.expect("the read error").to_string();
        assert!(e.contains("bad.og") && e.contains("4096") && e.contains("a truncated record"), "think {think_ns}: {e}");
    }
    // Operations that are not a trace's pages have no trace status.
    let list = pagelab::sim::OpSource::List(Vec::new().into_iter());
    assert!(pagelab::run_with(&s, pagelab::RunOptions { ops: Some(list), ..Default::default() }).unwrap().trace.is_none());
}

#[test]
fn the_trace_replay_loop_equals_the_general_one() {
    // `Machine::run` replays a single task's one-page reads in a loop of its own; stepping
    // the machine one operation at a time must give the same report, under reclaim, with a
    // memcg limit and memory.high (throttling), under both policies.
    let mut x = pagelab_host::xorshift::XorShift64::new(11);
    let pages: Vec<u32> = (0..40_000)
        .map(|_| {
            let r = x.next_f64();
            (r * r * 6000.0) as u32
        })
        .collect();
    let cgroups = ["/", "/t"];
    for (cg, policy, kernel) in [(cgroups[0], "classic", "6.1"), (cgroups[1], "classic", "6.1"), (cgroups[0], "mglru", "6.12"), (cgroups[1], "mglru", "6.1")] {
        let text = format!(
            "[machine]\nmemory = \"16M\"\nkernel = \"{kernel}\"\npolicy = \"{policy}\"\n[[cgroup]]\npath = \"/t\"\nmax = \"12M\"\nhigh = \"10M\"\n[[workload]]\nname = \"trace\"\ncgroup = \"{cg}\"\nkind = \"file-read\"\nfile_size = \"6000p\"\nfadvise = \"random\"\nops = 0\n"
        );
        let s = pagelab::Scenario::parse(&text, "trace.toml", "trace", &[]).unwrap();
        let report = |stepwise: bool| -> String {
            match s.machine.policy.kind() {
                pagelab::PolicyKind::Classic => {
                    replay(&s, pagelab::sim::Machine::new(&s, |mm| pagelab::policy::classic::Classic::new(mm.memcgs.cg.len())).unwrap(), &pages, stepwise)
                }
                pagelab::PolicyKind::Mglru => {
                    replay(&s, pagelab::sim::Machine::new(&s, |mm| pagelab::policy::lru_gen::LruGen::new(mm, &s.mglru)).unwrap(), &pages, stepwise)
                }
            }
        };
        let (looped, stepped) = (report(false), report(true));
        let v: serde_json::Value = serde_json::from_str(&looped).unwrap();
        assert_eq!(v["ops"], 40_000, "{cg} {policy}");
        assert!(v["vmstat"]["workingset_refault_file"].as_u64().unwrap() > 0, "{cg} {policy}: no reclaim");
        if cg == "/t" {
            assert!(v["memcg"]["/t"]["memory.events.high"].as_u64().unwrap() > 0, "{policy}: memory.high never crossed");
        }
        assert!(looped == stepped, "{cg} {policy} {kernel}: the replay loop changed the report");
    }
}

#[test]
fn a_run_with_nonmovable_pageblocks_samples_each_zones_free_pages_boosted_high_and_nonmovable_free_pages() {
    // What the oracle's guest samples from /proc/zoneinfo and /proc/pagetypeinfo, for
    // oracle/samples.py --model; without the layout the series keeps its usual gauges.
    let text = |layout: &str| one_file_scenario("128M", "6.12", "classic", 80_000).replace("[machine]\n", &format!("[machine]\n{layout}"));
    let with = pagelab::run(&scenario(&text("nonmovable = { DMA32 = { blocks = 2, free = [8, 8, 8, 8] } }\n")), |_, _| {}).unwrap();
    let last = with.series.last().expect("a series");
    for key in ["zone_free_dma", "zone_high_dma", "nonmovable_free_dma", "zone_free_dma32", "zone_high_dma32", "nonmovable_free_dma32"] {
        assert!(last.vmstat.contains_key(key), "the series lacks {key}");
    }
    assert!(last.vmstat["nonmovable_free_dma32"] <= 8 * (1 + 2 + 4 + 8), "at most the layout's free pages");
    assert!(last.vmstat["zone_free_dma32"] >= last.vmstat["nonmovable_free_dma32"], "the zone's free pages include them");
    let without = pagelab::run(&scenario(&text("")), |_, _| {}).unwrap();
    assert!(!without.series.last().expect("a series").vmstat.contains_key("zone_free_dma32"));
}
