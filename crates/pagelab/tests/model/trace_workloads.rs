//! Workloads driven by a trace (`[[workload]] trace = "PATH"`): the text format's `T`, `R`
//! and `W` lines as operations, sizes from the trace, the other formats, the files an iolog
//! names, and the errors.

use std::path::{Path, PathBuf};

use pagelab::policy::classic::Classic;
use pagelab::sim::Machine;
use pagelab::Scenario;
use pagelab_workload::{JobStream, Op};

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace-workloads-test").join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A scenario file in its own directory, with its trace `traces/NAME.txt` named relative to
/// it, a 64 MiB machine with zram, and the cgroup /db limited to 16 MiB.
fn scenario(name: &str, trace: &str, workload: &str) -> Result<Scenario, pagelab::scenario::ScenarioError> {
    let d = dir(name);
    std::fs::create_dir_all(d.join("traces")).unwrap();
    std::fs::write(d.join(format!("traces/{name}.txt")), trace).unwrap();
    let text = format!(
        "[machine]\nmemory = \"64M\"\nswap = {{ device = \"zram\", size = \"256M\" }}\n\n[[cgroup]]\npath = \"/db\"\nmax = \"16M\"\n\n[[workload]]\nname = \"db\"\ncgroup = \"/db\"\ntrace = \"traces/{name}.txt\"\n{workload}"
    );
    let path = d.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    Scenario::load(&path, &[])
}

/// The operations of job `job` of workload `w`.
fn job_ops(s: &Scenario, w: usize, job: u32) -> Vec<Op> {
    let mut st = JobStream::with_traces(&s.workloads[w], job, &|t, _, pages| pagelab::trace_workload::open(t, pages)).unwrap();
    let v = st.by_ref().collect();
    assert!(st.take_trace_error().is_none());
    v
}

fn ops(s: &Scenario) -> Vec<Op> {
    job_ops(s, 0, 0)
}

#[test]
fn the_issues_stream_prefills_every_page_in_t_order_then_writes_one_access_per_w_line() {
    // `T 0` ... `T 49151`, then `W 9813`, `W 18516`, ...: an anon workload that first
    // touches every page in that order, then write-accesses the listed pages.
    let pages = 49_152u64;
    let writes: Vec<u64> = (0..20_000u64).map(|k| (9813 + 8703 * k) % pages).collect();
    assert_eq!(writes[..2], [9813, 18516]);
    let mut trace: String = (0..pages).map(|p| format!("T {p}\n")).collect();
    trace += &writes.iter().map(|p| format!("W {p}\n")).collect::<String>();
    let s = scenario("issue", &trace, "kind = \"anon-rw\"\n").unwrap();
    assert_eq!(s.workloads[0].phases[0].object_pages, pages, "the size comes from the trace");
    let ops = ops(&s);
    assert_eq!(ops.len() as u64, pages + writes.len() as u64);
    let (fills, rest) = ops.split_at(pages as usize);
    assert!(fills.iter().enumerate().all(|(i, o)| o.fill && o.write && o.page == i as u64 && o.npages == 1 && o.think_ns == 0));
    assert!(rest.iter().zip(&writes).all(|(o, &w)| !o.fill && o.write && o.page == w && o.npages == 1));
    // Run it: 192 MiB of anonymous memory under a 16 MiB limit swaps to zram, and every W
    // line is one operation.
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    assert_eq!((r.fill_ops, r.ops), (pages, writes.len() as u64));
    assert!(r.vmstat["pswpout"] >= pages - 4096 && r.vmstat["pswpin"] > 0, "{:?}", r.vmstat);
}

#[test]
fn t_lines_are_the_prefill_in_their_order_and_r_w_and_bare_lines_one_access_each() {
    let pages = 1000u64;
    let order: Vec<u64> = (0..pages).map(|i| (i * 7919) % pages).collect();
    let writes = [981u64, 516, 3, 981, 0];
    let mut trace: String = order.iter().map(|p| format!("T {p}\n")).collect();
    trace += &writes.iter().map(|p| format!("W {p}\n")).collect::<String>();
    trace += "R 17\n5\n";
    let s = scenario("anon", &trace, "kind = \"anon-read\"\nthink = \"1us\"\n").unwrap();
    assert_eq!(s.workloads[0].phases[0].object_pages, pages);
    let ops = ops(&s);
    let fills: Vec<u64> = ops.iter().take_while(|o| o.fill).map(|o| o.page).collect();
    assert_eq!(fills, order, "the prefill is the T lines, in order");
    assert!(ops[..pages as usize].iter().all(|o| o.write && o.think_ns == 0), "fills do not think");
    let rest: Vec<(u64, bool, bool, u64)> = ops[pages as usize..].iter().map(|o| (o.page, o.write, o.fill, o.think_ns)).collect();
    // W writes, R reads, a bare page takes the kind's default (anon-read: a read).
    let want = [(981, true), (516, true), (3, true), (981, true), (0, true), (17, false), (5, false)];
    assert_eq!(rest, want.iter().map(|&(p, w)| (p, w, false, 1000)).collect::<Vec<_>>());
    assert_eq!(s.workloads[0].phases[0].ops, 7, "ops counts the accesses after the prefill");
}

#[test]
fn bare_pages_of_an_rw_kind_follow_read_ratio() {
    let trace: String = (0..200).map(|p| format!("{p}\n")).collect();
    for (ratio, writes) in [(1.0, 0), (0.0, 200)] {
        let s = scenario("rw", &trace, &format!("kind = \"file-rw\"\nread_ratio = {ratio}\n")).unwrap();
        assert_eq!(ops(&s).iter().filter(|o| o.write).count(), writes);
    }
    let s = scenario("rw", &trace, "kind = \"anon-rw\"\n").unwrap();
    let w = ops(&s).iter().filter(|o| o.write).count();
    assert!(w > 60 && w < 140, "half of 200 plain accesses write: {w}");
}

#[test]
fn a_file_trace_reads_and_writes_as_its_lines_say_and_a_given_size_stays() {
    let s = scenario("file", "R 0\nW 1\n2\nT 3\n", "kind = \"file-write\"\nsize = \"64k\"\n").unwrap();
    assert_eq!(s.workloads[0].phases[0].object_pages, 16, "a given size stays");
    let got: Vec<(u64, bool, bool)> = ops(&s).iter().map(|o| (o.page, o.write, o.fill)).collect();
    // For a file, T is a write, not a fill; a bare page is the kind's (file-write: a write).
    assert_eq!(got, vec![(0, false, false), (1, true, false), (2, true, false), (3, true, false)]);
}

#[test]
fn a_trace_that_changed_after_loading_ends_its_task_and_the_run_returns_the_error() {
    // The trace's feed keeps the error that ended its accesses and the run takes it from the
    // task's stream (nothing shared between the feed and the machine).
    let s = scenario("changed", "R 0\nR 1\nR 2\n", "kind = \"file-read\"\nsize = \"64k\"\n").unwrap();
    std::fs::write(dir("changed").join("traces/changed.txt"), "R 0\nR 99\nR 2\n").unwrap();
    let e = pagelab::run(&s, |_, _| {}).unwrap_err();
    assert!(matches!(e, pagelab::RunError::Trace(_)), "a trace read error: {e:?}");
    let e = e.to_string();
    assert!(e.contains("changed.txt") && e.contains("page 99 is beyond the object's 16 pages"), "{e}");
    let mut m = Machine::new(&s, |mm| Classic::new(mm.memcgs.cg.len())).unwrap();
    m.run(|_| {});
    assert_eq!(m.tasks[0].ops, 1, "the accesses end at the bad page");
    assert!(m.take_trace_error().is_some_and(|e| e.contains("page 99")));
    assert!(m.take_trace_error().is_none(), "taken once");
}

#[test]
fn ops_shortens_a_trace_jobs_replay_it_each_and_start_and_hold_apply() {
    let s = scenario("short", "R 0\nR 1\nR 2\nR 3\n", "kind = \"anon-read\"\nops = 2\n").unwrap();
    assert_eq!(ops(&s).iter().filter(|o| !o.fill).count(), 2);
    let s = scenario("jobs", "T 0\nT 1\nR 0\nR 1\nR 0\n", "kind = \"anon-read\"\njobs = 3\nstart = \"2s\"\nhold = true\n").unwrap();
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    assert_eq!((r.ops, r.fill_ops), (9, 6), "three jobs, each the whole trace");
    assert!(r.tasks.iter().all(|t| t.ops == 3));
    assert!(r.elapsed_s >= 2.0, "they start at 2 s: {}", r.elapsed_s);
    // hold: the tasks keep their memory to the end.
    assert_eq!(r.memcg["/db"]["anon"], 6 * 4096, "{:?}", r.memcg["/db"]);
}

#[test]
fn a_csv_trace_maps_its_keys_to_pages_of_one_object() {
    let d = dir("formats");
    std::fs::write(d.join("kv.csv"), "time,key,op\n1,apple,get\n2,pear,set\n3,apple,get\n4,plum,get\n").unwrap();
    let text = "[machine]\nmemory = \"64M\"\n\n[[workload]]\nname = \"kv\"\ncgroup = \"/\"\nkind = \"anon-read\"\ntrace = \"kv.csv\"\ntrace_format = \"csv:time=1,id=2,op=3,header\"\n";
    std::fs::write(d.join("kv.toml"), text).unwrap();
    let s = Scenario::load(&d.join("kv.toml"), &[]).unwrap();
    assert_eq!(s.workloads[0].phases[0].object_pages, 3, "three distinct keys");
    let got: Vec<(u64, bool)> = ops(&s).iter().map(|o| (o.page, o.write)).collect();
    assert_eq!(got, vec![(0, false), (1, true), (0, false), (2, false)]);
}

#[test]
fn an_iologs_files_become_files_of_the_scenario_shared_by_name() {
    let d = dir("iolog");
    std::fs::write(d.join("db.iolog"), "fio version 2 iolog\ndata add\nidx add\ndata read 0 8192\nidx write 4096 4096\ndata read 40960 4096\n").unwrap();
    // A second workload reads `data` too: one file of 11 pages, shared.
    let text =
        "[machine]\nmemory = \"64M\"\n\n[[workload]]\nname = \"db\"\ncgroup = \"/\"\nkind = \"file-read\"\ntrace = \"db.iolog\"\ntrace_format = \"iolog\"\n\n\
                [[workload]]\nname = \"scan\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile = \"data\"\nfile_size = \"8k\"\ndistribution = \"seq\"\n";
    std::fs::write(d.join("io.toml"), text).unwrap();
    let s = Scenario::load(&d.join("io.toml"), &[]).unwrap();
    assert_eq!(s.workloads[0].phases[0].trace.as_ref().unwrap().files, vec![("data".to_string(), 11), ("idx".to_string(), 2)]);
    let got: Vec<(u32, u64, u32, bool)> = ops(&s).iter().map(|o| (o.object, o.page, o.npages, o.write)).collect();
    assert_eq!(got, vec![(0, 0, 2, false), (1, 1, 1, true), (0, 10, 1, false)]);
    let m = Machine::new(&s, |mm| Classic::new(mm.memcgs.cg.len())).unwrap();
    let files: Vec<(&str, u64)> = m.mm.space.objects.iter().map(|o| (o.name.as_str(), o.pages as u64)).collect();
    assert_eq!(files, vec![("data", 11), ("idx", 2)], "one `data`, sized for both workloads");
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    assert_eq!(r.tasks[0].ops, 3);
    // A given size covers every file; a file beyond it is named.
    let e = Scenario::parse(
        &text.replace("trace_format = \"iolog\"\n", "trace_format = \"iolog\"\nsize = \"16k\"\n"),
        d.join("io.toml").to_str().unwrap(),
        "io",
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("db.iolog: file `data`: page 10 is beyond the object's size, 4 pages (16384 bytes)"), "{e}");
    let e = Scenario::parse(&text.replace("kind = \"file-read\"\ntrace", "kind = \"anon-read\"\ntrace"), d.join("io.toml").to_str().unwrap(), "io", &[])
        .unwrap_err();
    assert_eq!(e.key, "workload[0].kind");
}

#[test]
fn bad_traces_and_keys_are_named() {
    let e = scenario("big", "R 0\nR 40\n", "kind = \"anon-read\"\nsize = \"16k\"\n").unwrap_err().to_string();
    assert!(e.contains("big.txt: page 40 is beyond the object's size, 4 pages (16384 bytes)") && e.contains("workload[0].trace"), "{e}");
    let e = scenario("bad", "R 0\nQ 1\n", "kind = \"anon-read\"\n").unwrap_err().to_string();
    assert!(e.contains("bad.txt: line 2: unknown operation `Q`") && e.contains("workload[0].trace"), "{e}");
    let e = scenario("dist", "R 0\n", "kind = \"anon-read\"\ndistribution = \"zipf:0.9\"\n").unwrap_err();
    assert_eq!(e.key, "workload[0].distribution");
    let e = scenario("fmt", "R 0\n", "kind = \"anon-read\"\ntrace_format = \"nosuch\"\n").unwrap_err();
    assert_eq!(e.key, "workload[0].trace_format");
    let e = scenario("pace", "R 0\n", "kind = \"anon-read\"\npace = \"trace\"\n").unwrap_err();
    assert!(e.key == "workload[0].pace" && e.message.contains("the format has no times"), "{e}");
    let e = scenario("pace2", "R 0\n", "kind = \"anon-read\"\npace = \"fast\"\n").unwrap_err();
    assert_eq!(e.key, "workload[0].pace");
    let d = dir("missing");
    std::fs::write(d.join("m.toml"), "[machine]\nmemory = \"64M\"\n[[workload]]\nname = \"m\"\ncgroup = \"/\"\nkind = \"anon-read\"\ntrace = \"gone.txt\"\n")
        .unwrap();
    let e = Scenario::load(&d.join("m.toml"), &[]).unwrap_err().to_string();
    assert!(e.contains(&format!("{}: cannot open", d.join("gone.txt").display())), "relative to the scenario's directory: {e}");
}

#[test]
fn the_readme_example_swaps_the_traced_heap_to_zram_and_paces_the_loader() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/byo/lockstep.toml");
    let s = Scenario::load(&path, &[]).unwrap();
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    let (db, loader) = (&r.tasks[0], &r.tasks[1]);
    // The trace: 8192 first touches, 24,000 reads and writes; the loader its 48,000 reads.
    assert_eq!((db.fill_ops, db.ops, loader.ops), (8192, 24_000, 48_000));
    // 32 MiB of heap under a 24 MiB limit goes partly to zram and comes back.
    assert!(r.memcg["/db"]["pgsteal"] > 0 && r.vmstat["pswpout"] > 0 && r.vmstat["workingset_refault_anon"] > 0, "{:?}", r.vmstat);
    // The loader keeps pace with the trace: it waits for the database, again and again.
    let l = loader.lockstep.as_ref().unwrap();
    assert!(l.waits > 1000 && l.wait_s > 0.0, "{l:?}");
    assert!(r.table().contains("lockstep: loader behind db (ratio 2)"));
}

#[test]
fn d_lines_are_truncations_of_a_file_kind_and_an_error_for_others() {
    use pagelab_workload::Access;
    let s = scenario("drops", "R 0\nR 1\nD 0\nR 0\n", "kind = \"file-read\"\nthink = \"1us\"\n").unwrap();
    let ops = ops(&s);
    let kinds: Vec<(u64, Access, u64)> = ops.iter().map(|o| (o.page, o.access, o.think_ns)).collect();
    // A deletion thinks no time, as a truncation the lsm model issues (the --trace replay's too).
    assert_eq!(kinds, [(0, Access::Buffered, 1000), (1, Access::Buffered, 1000), (0, Access::Truncate, 0), (0, Access::Buffered, 1000)]);
    assert!(ops.iter().all(|o| o.npages == 1 && !o.write));
    // Run: the dropped page is read from storage again (3 pages in all), not refaulted.
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    assert_eq!((r.vmstat["pgpgin"], r.vmstat["workingset_refault_file"]), (12, 0));
    for kind in ["anon-read", "mmap-read"] {
        let e = scenario(&format!("drops-{kind}"), "R 0\nD 0\n", &format!("kind = \"{kind}\"\n")).unwrap_err().to_string();
        assert!(e.contains("`D` lines") && e.contains("drops-") && e.contains("file-*"), "{kind}: {e}");
    }
}
