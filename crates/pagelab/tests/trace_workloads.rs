//! Workloads driven by a trace (`[[workload]] trace = "PATH"`): the text format's `T`, `R`
//! and `W` lines as operations, sizes from the trace, and the errors.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pagelab::Scenario;
use pagelab_workload::{JobStream, Op};

fn dir() -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace-workloads-test");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A scenario file next to its trace (the trace named relative to it).
fn scenario(name: &str, trace: &str, workload: &str) -> Result<Scenario, pagelab::scenario::ScenarioError> {
    let d = dir();
    std::fs::write(d.join(format!("{name}.txt")), trace).unwrap();
    let text = format!(
        "[machine]\nmemory = \"64M\"\nswap = {{ device = \"zram\", size = \"256M\" }}\n\n[[cgroup]]\npath = \"/db\"\nmax = \"16M\"\n\n[[workload]]\nname = \"db\"\ncgroup = \"/db\"\ntrace = \"{name}.txt\"\n{workload}"
    );
    let path = d.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    Scenario::load(&path, &[])
}

fn ops(s: &Scenario) -> Vec<Op> {
    let error = Arc::new(Mutex::new(None));
    let st = JobStream::with_traces(&s.workloads[0], 0, &|t, _, pages| pagelab::trace_workload::open(&error, t, pages)).unwrap();
    let v = st.collect();
    assert!(error.lock().unwrap().is_none());
    v
}

#[test]
fn t_lines_are_the_anon_prefill_in_their_order_and_w_lines_write_one_access_each() {
    // The stream, smaller: T for every page in a shuffled order, then writes.
    let pages = 1000u64;
    let order: Vec<u64> = (0..pages).map(|i| (i * 7919) % pages).collect();
    let writes = [981u64, 516, 3, 981, 0];
    let mut trace: String = order.iter().map(|p| format!("T {p}\n")).collect();
    trace += &writes.iter().map(|p| format!("W {p}\n")).collect::<String>();
    trace += "R 17\n5\n";
    let s = scenario("anon", &trace, "kind = \"anon-read\"\n").unwrap();
    // The object's size comes from the trace: one more than its largest page.
    assert_eq!(s.workloads[0].phases[0].object_pages, pages);
    let ops = ops(&s);
    let fills: Vec<u64> = ops.iter().take_while(|o| o.fill).map(|o| o.page).collect();
    assert_eq!(fills, order, "the prefill is the T lines, in order");
    assert!(ops[..pages as usize].iter().all(|o| o.write && o.think_ns == 0));
    let rest: Vec<(u64, bool, bool)> = ops[pages as usize..].iter().map(|o| (o.page, o.write, o.fill)).collect();
    // W writes, R reads, a bare page takes the kind's default (anon-read: a read).
    assert_eq!(
        rest,
        vec![(981, true, false), (516, true, false), (3, true, false), (981, true, false), (0, true, false), (17, false, false), (5, false, false)]
    );
    assert_eq!(s.workloads[0].phases[0].ops, 7, "ops counts the accesses after the prefill");
}

#[test]
fn an_anon_trace_under_a_memcg_limit_swaps_to_zram() {
    // 8192 pages (32 MiB) touched, then written again, in a 16 MiB memcg: half must go to zram.
    let pages = 8192u64;
    let mut trace: String = (0..pages).map(|p| format!("T {p}\n")).collect();
    trace += &(0..pages).map(|p| format!("W {p}\n")).collect::<String>();
    let s = scenario("swap", &trace, "kind = \"anon-rw\"\n").unwrap();
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    assert_eq!(r.fill_ops, pages);
    assert_eq!(r.ops, pages);
    assert!(r.vmstat["pswpout"] > 0 && r.vmstat["pswpin"] > 0, "{:?}", r.vmstat);
}

#[test]
fn a_file_trace_reads_and_writes_as_its_lines_say() {
    let s = scenario("file", "R 0\nW 1\n2\nT 3\n", "kind = \"file-write\"\nsize = \"64k\"\n").unwrap();
    assert_eq!(s.workloads[0].phases[0].object_pages, 16, "a given size stays");
    let got: Vec<(u64, bool, bool)> = ops(&s).iter().map(|o| (o.page, o.write, o.fill)).collect();
    // For a file, T is a write, not a fill; a bare page is the kind's (file-write: a write).
    assert_eq!(got, vec![(0, false, false), (1, true, false), (2, true, false), (3, true, false)]);
}

#[test]
fn ops_shortens_a_trace_and_runtime_limits_apply() {
    let s = scenario("short", "R 0\nR 1\nR 2\nR 3\n", "kind = \"anon-read\"\nops = 2\n").unwrap();
    assert_eq!(ops(&s).iter().filter(|o| !o.fill).count(), 2);
}

#[test]
fn bad_traces_and_keys_are_named() {
    let e = scenario("big", "R 0\nR 40\n", "kind = \"anon-read\"\nsize = \"16k\"\n").unwrap_err().to_string();
    assert!(e.contains("page 40 is beyond the object's 4 pages"), "{e}");
    let e = scenario("bad", "R 0\nQ 1\n", "kind = \"anon-read\"\n").unwrap_err().to_string();
    assert!(e.contains("bad.txt: line 2: unknown operation `Q`") && e.contains("workload[0].trace"), "{e}");
    let e = scenario("dist", "R 0\n", "kind = \"anon-read\"\ndistribution = \"zipf:0.9\"\n").unwrap_err();
    assert_eq!(e.key, "workload[0].distribution");
    let e = scenario("fmt", "R 0\n", "kind = \"anon-read\"\ntrace_format = \"oracleGeneral\"\n").unwrap_err();
    assert_eq!(e.key, "workload[0].trace_format");
    let e = scenario("missing", "R 0\n", "kind = \"anon-read\"\n").map(|_| ()).and_then(|_| {
        let d = dir();
        std::fs::remove_file(d.join("missing.txt")).unwrap();
        Scenario::load(&d.join("missing.toml"), &[]).map(|_| ())
    });
    assert!(e.unwrap_err().to_string().contains("missing.txt: cannot open"));
}
