//! Application models as workloads (crates/workload: `app_cache`, `kind = "search"`): what
//! the kernel sees of them.

use crate::common;
use common::*;

/// A 256M machine and a cgroup of `max` running one workload of `body`.
fn app_scenario(swap: bool, max: &str, body: &str) -> String {
    let swap = if swap { "swap = { device = \"zram\", size = \"256M\" }" } else { "" };
    format!(
        r#"
[machine]
memory = "256M"
kernel = "6.12"
policy = "classic"
{swap}
[[cgroup]]
path = "/db"
max = "{max}"
[[workload]]
name = "db"
cgroup = "/db"
seed = 3
hold = true
{body}
"#
    )
}

fn run(text: &str) -> pagelab::Report {
    pagelab::run(&scenario(text), |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_app_cache_filters_re_reads() {
    // Two sequential passes over an 8M file through an 8M buffer pool in a 12M cgroup
    // without swap: the pool's anonymous memory stays, so reclaim takes the file's pages.
    // The second pass finds every block in the pool and touches its slot: no file page is
    // read again, so none refaults although the page cache lost them.
    let body = r#"kind = "file-read"
file_size = "8M"
distribution = "seq"
ops = 4096
app_cache = { size = "8M", policy = "lru", block = "4k" }"#;
    let r = run(&app_scenario(false, "12M", body));
    let cg = &r.memcg["/db"];
    assert!(r.vmstat["pgsteal_file"] > 500, "reclaim took the file's pages: {}", r.vmstat["pgsteal_file"]);
    assert_eq!(r.vmstat["workingset_refault_file"], 0, "the second pass read nothing from the file");
    assert!(cg["anon"] >= 8 << 20, "the pool holds the file's blocks: anon {}", cg["anon"]);
    // 2048 misses (a read and a store each), then 2048 hits.
    assert_eq!(r.tasks[0].ops, 3 * 2048);

    // Without the pool the same reads in a cgroup too small for the file refault.
    let plain = run(&app_scenario(false, "4M", "kind = \"file-read\"\nfile_size = \"8M\"\ndistribution = \"seq\"\nops = 4096"));
    assert!(plain.vmstat["workingset_refault_file"] + plain.vmstat["pgpgin"] / 4 > 2048, "the control re-reads the file");
}

#[test]
fn an_app_cache_is_anonymous_and_can_be_swapped() {
    // A 16M pool over a 32M file in a 12M cgroup with zram: the pool cannot stay resident,
    // and reclaim swaps its slots out as any anonymous memory; hits on them swap them in.
    let body = |cache: bool| {
        format!(
            "kind = \"file-read\"\nfile_size = \"32M\"\ndistribution = \"zipf:0.9\"\nops = 30000\n{}",
            if cache { "app_cache = { size = \"16M\", policy = \"lru\" }" } else { "" }
        )
    };
    let r = run(&app_scenario(true, "12M", &body(true)));
    assert!(r.vmstat["pswpout"] > 100, "the pool's pages were swapped out: {}", r.vmstat["pswpout"]);
    assert!(r.vmstat["pswpin"] > 0, "and hits swapped them back in");
    assert!(r.memcg["/db"]["anon"] > 0);
    let plain = run(&app_scenario(true, "12M", &body(false)));
    assert_eq!(plain.vmstat["pswpout"], 0, "without the pool the workload has no anonymous memory to swap");
}

#[test]
fn a_search_pass_reads_every_file_once() {
    // 500 files of 8 KiB, one pass, a cgroup that holds them all: every page is read from
    // the disk exactly once (no readahead beyond a file's end), and nothing is reclaimed.
    let body = "kind = \"search\"\nfiles = 500\nfile_sizes = \"8k\"\npasses = 1";
    let r = run(&app_scenario(false, "64M", body));
    assert_eq!(r.vmstat["pgpgin"], 500 * 8, "KiB read: every file's 8 KiB once");
    assert_eq!(r.tasks[0].ops, 500, "one 64k read per file");
    assert_eq!(r.vmstat["pgsteal_file"], 0);
    // A second pass finds them all cached.
    let twice = run(&app_scenario(false, "64M", &body.replace("passes = 1", "passes = 2")));
    assert_eq!(twice.vmstat["pgpgin"], 500 * 8);
    assert_eq!(twice.tasks[0].ops, 1000);
}

#[test]
fn an_lsm_store_runs_its_gets_through_its_caches() {
    // YCSB-C over a 512M store in a 64M cgroup: the tables' index and filter blocks and the
    // block cache are anonymous memory of the task, the data blocks page cache.
    let body = "kind = \"lsm\"\nlsm = { db_size = \"512M\", ycsb = \"c\" }\nops = 20000";
    let r = run(&app_scenario(false, "64M", body));
    let cg = &r.memcg["/db"];
    // The block cache (8M) filled, and the open tables' index and filter blocks.
    assert!(cg["anon"] >= 8 << 20, "anon {}", cg["anon"]);
    assert!(r.vmstat["pgpgin"] > 0 && cg["file"] > 0);
    assert!(r.tasks[0].ops > 2 * 20000, "each get is several accesses: {}", r.tasks[0].ops);
}

#[test]
fn truncate_inode_pages_range_removes_a_files_pages_and_shadow_entries() {
    // mm/truncate.c: truncate_inode_pages_range() (6.1, 6.12): a deleted file's pages leave
    // the page cache (uncharged, freed) and its shadow entries go with them, so reading it
    // again is not a refault.
    use pagelab_workload::{Access, Advice, Op};
    let truncate = |page: u64, npages: u32| Op {
        object: 0,
        page,
        npages,
        write: false,
        access: Access::Truncate,
        advice: Advice::Normal,
        fill: false,
        think_ns: 0,
        due: None,
    };
    let mut m = classic(&one_file_scenario("64M", "6.12", "classic", 4096));
    for p in 0..64 {
        m.apply(0, read(0, p));
    }
    let file_pages = m.mm.nr_file_pages;
    m.apply(0, truncate(0, 32));
    assert!((0..32).all(|p| pfn_of(&m, 0, 0, p).is_none()), "the range left the page cache");
    assert!((32..64).all(|p| pfn_of(&m, 0, 0, p).is_some()), "the rest stayed");
    assert_eq!(m.mm.nr_file_pages, file_pages - 32);
    // A dirty page goes too, and with it its dirty count.
    m.apply(0, Op { write: true, ..read(0, 40) });
    let dirty = m.mm.nr_dirty;
    m.apply(0, truncate(40, 1));
    assert_eq!(m.mm.nr_dirty, dirty - 1);

    // Evicted pages leave shadows; truncation deletes them: a re-read is no refault.
    let mut m = classic(&one_file_scenario("64M", "6.12", "classic", 40_000));
    for p in 0..40_000 {
        m.apply(0, read(0, p));
    }
    let evicted = (0..1000).filter(|&p| pfn_of(&m, 0, 0, p).is_none()).count();
    assert!(evicted > 900, "the file's start was evicted: {evicted}");
    let refaults = ev(&m, pagelab::mm::vmstat::Ev::WorkingsetRefaultFile);
    m.apply(0, truncate(0, 1000));
    for p in 0..1000 {
        m.apply(0, read(0, p));
    }
    assert_eq!(ev(&m, pagelab::mm::vmstat::Ev::WorkingsetRefaultFile), refaults, "no shadow was left to refault on");
}

#[test]
fn compaction_invalidates_its_input_files_pages() {
    // YCSB-A updates on a 64M store: every 4 MiB of them is an L0 table, every four L0
    // tables a compaction that reads its inputs and deletes them. The generator's stream,
    // applied to the machine one operation at a time: each deleted L0 table had pages in the
    // page cache just before its deletion and has none after it.
    use pagelab_workload::Access;
    let body = |ops: u64| format!("kind = \"lsm\"\nlsm = {{ db_size = \"64M\", ycsb = \"a\" }}\nops = {ops}");
    let mut m = classic(&app_scenario(false, "1G", &body(0)));
    let w = scenario(&app_scenario(false, "1G", &body(40_000))).workloads[0].clone();
    let mut st = pagelab_workload::JobStream::new(&w, 0);
    let l0: Vec<usize> = st.objects().iter().enumerate().filter(|(_, o)| o.name.starts_with("db/L0/")).map(|(i, _)| i).collect();
    assert_eq!(l0.len(), 4);
    let resident =
        |m: &pagelab::sim::Machine<pagelab::policy::classic::Classic>, o: usize| (0..m.object(0, o).1).filter(|&p| pfn_of(m, 0, o, p).is_some()).count();
    let mut deleted = 0;
    for op in st.by_ref() {
        let was = (op.access == Access::Truncate && l0.contains(&(op.object as usize))).then(|| resident(&m, op.object as usize));
        m.apply(0, op);
        if let Some(before) = was {
            assert!(before > 1000, "the L0 table was in the page cache: {before} pages");
            assert_eq!(resident(&m, op.object as usize), 0, "and left it with its deletion");
            deleted += 1;
        }
    }
    assert!(deleted >= 4, "{deleted} L0 tables deleted");
}
