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
fn an_lsm_store_without_a_filter_reads_a_data_block_in_every_level() {
    // LevelDB's default Options (no filter_policy), as cache_ext's My-YCSB opens its store:
    // a get reads the data block of every level's table down to the key's (Version::Get(),
    // Table::InternalGet()), so the same YCSB-C reads more from disk than with a 10-bit filter.
    let body = |bits: u32| format!("kind = \"lsm\"\nlsm = {{ db_size = \"512M\", ycsb = \"c\", bloom_bits_per_key = {bits} }}\nops = 5000");
    let with = run(&app_scenario(false, "64M", &body(10)));
    let without = run(&app_scenario(false, "64M", &body(0)));
    let (a, b) = (with.vmstat["pgpgin"], without.vmstat["pgpgin"]);
    assert!(b > a + a / 2, "pages read: {a} with a filter, {b} without");
    assert!(without.tasks[0].ops > with.tasks[0].ops, "more accesses a get without a filter");
}

#[test]
fn truncate_inode_pages_range_removes_a_files_pages_and_shadow_entries() {
    // mm/truncate.c: truncate_inode_pages_range() (6.1, 6.12): a deleted file's pages leave
    // the page cache (uncharged, freed) and its shadow entries go with them, so reading it
    // again is not a refault.
    use pagelab_workload::Op;
    let truncate = |page: u64, npages: u32| Op::truncate(0, page, npages);
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

/// Two workloads of `jobs` jobs each, in `/db`, reading one 8M file sequentially twice through
/// an 8M pool of theirs (`shared`: one pool, named `wt`, for all of them).
fn two_readers(shared: bool, jobs: u32) -> String {
    let cache = if shared { r#"app_cache = { size = "8M", block = "4k", shared = "wt" }"# } else { r#"app_cache = { size = "8M", block = "4k" }"# };
    let reader = |name: &str, seed: u32| {
        format!(
            r#"
[[workload]]
name = "{name}"
cgroup = "/db"
kind = "file-read"
file = "collection.wt"
file_size = "8M"
distribution = "seq"
jobs = {jobs}
shared_file = true
ops = 4096
seed = {seed}
hold = true
{cache}"#
        )
    };
    format!(
        r#"
[machine]
memory = "256M"
kernel = "6.12"
policy = "classic"
[[cgroup]]
path = "/db"
max = "200M"
{}{}"#,
        reader("stock", 1),
        reader("customers", 2)
    )
}

#[test]
fn a_shared_app_cache_is_one_pool_and_one_region_for_all_its_threads() {
    // Four threads (two workloads of two jobs) read the same 8M file twice. Each has a pool
    // of 8M of its own: every thread misses every block once, 4 × 2048 misses, and the
    // cgroup holds four pools. One shared pool: the file's 2048 blocks miss once in all,
    // every other lookup hits, and the cgroup holds one pool, its RSS the first thread's.
    let own = run(&two_readers(false, 2));
    let shared = run(&two_readers(true, 2));
    let misses = |r: &pagelab::Report| r.app_cache.values().map(|c| c.misses).sum::<u64>();
    let hits = |r: &pagelab::Report| r.app_cache.values().map(|c| c.hits).sum::<u64>();
    assert_eq!(misses(&own), 4 * 2048, "{:?}", own.app_cache);
    assert_eq!(hits(&own), 4 * 2048);
    assert_eq!(misses(&shared), 2048, "{:?}", shared.app_cache);
    assert_eq!(hits(&shared), 4 * 4096 - 2048, "4 threads × 4096 lookups, all but the first 2048 hits");
    let anon = |r: &pagelab::Report| r.memcg["/db"]["anon"];
    assert_eq!(anon(&own), 4 * (8 << 20), "four pools of 8M");
    assert_eq!(anon(&shared), 8 << 20, "one pool of 8M");
    // Each workload's jobs are summed in the report, keyed by its name.
    assert_eq!(shared.app_cache.keys().collect::<Vec<_>>(), ["customers", "stock"]);
    let c = &shared.app_cache["stock"];
    assert_eq!(c.hits + c.misses, 2 * 4096);
    assert!((c.hit_ratio - c.hits as f64 / (2.0 * 4096.0)).abs() < 1e-12);
    // A run without an application cache has no `app_cache` key.
    let plain = run(&app_scenario(false, "64M", "kind = \"file-read\"\nfile_size = \"1M\"\nops = 10"));
    assert!(plain.app_cache.is_empty());
    assert!(!serde_json::to_string(&plain).unwrap().contains("\"app_cache\""));
}

#[test]
fn the_threads_of_a_shared_app_cache_must_agree_on_cgroup_and_size() {
    let text = two_readers(true, 1);
    let resized = text.replacen(r#"size = "8M", block = "4k", shared"#, r#"size = "4M", block = "4k", shared"#, 1);
    let e = pagelab::run(&scenario(&resized), |_, _| {}).expect_err("refused");
    assert!(e.to_string().contains("app_cache.shared `wt` differs"), "{e}");
    let moved = text.replacen("cgroup = \"/db\"\nkind", "cgroup = \"/\"\nkind", 1);
    let e = pagelab::run(&scenario(&moved), |_, _| {}).expect_err("refused");
    assert!(e.to_string().contains("one cgroup"), "{e}");
}

#[test]
fn a_lockstep_counts_the_workloads_operations_not_the_app_caches_parts() {
    // A follower reading 64k (16 blocks of an app cache, a read and a store each on a miss)
    // once per 10 of its leader's reads: with the cache, the follower's workload operations
    // still wait for its leader's, whatever parts each was cut into.
    let text = r#"
[machine]
memory = "256M"
kernel = "6.12"
policy = "classic"
[[workload]]
name = "leader"
cgroup = "/"
kind = "file-read"
file = "a"
file_size = "4M"
distribution = "seq"
ops = 100
seed = 1
app_cache = { size = "1M", block = "4k", shared = "p" }
[[workload]]
name = "follower"
cgroup = "/"
kind = "file-read"
file = "b"
file_size = "4M"
block_size = "64k"
distribution = "seq"
ops = 1000
seed = 2
lockstep = { leader = "leader", ratio = 0.1 }
app_cache = { size = "1M", block = "4k", shared = "p" }
"#;
    let r = run(text);
    let task = |n: &str| r.tasks.iter().find(|t| t.name == n).unwrap();
    // The leader's 100 reads miss (a read and a store each): 200 operations, 100 its own.
    assert_eq!((task("leader").ops, task("leader").workload_ops), (200, Some(100)));
    // Its read j waits for the leader's read 10 j: reads 0 to 10, the last after the leader's
    // 100th, and no 11th (the leader ended). Counting the parts, it would stop within its
    // second read (the leader's 200 parts allow 20).
    assert_eq!(task("follower").workload_ops, Some(11), "{:?}", task("follower"));
    assert_eq!(task("follower").ops, 11 * 16 * 2);
}

#[test]
fn a_leaf_is_read_as_on_disk_and_held_as_in_memory() {
    // `block = "24k"`, `memory_block = "32k"`: a miss reads 6 pages of the file and stores 8
    // pages of the pool, which counts its size in 32k blocks (WiredTiger's leaves).
    let body = r#"kind = "file-read"
file_size = "2400k"
block_size = "24k"
distribution = "seq"
ops = 100
app_cache = { size = "3200k", block = "24k", memory_block = "32k" }"#;
    let r = run(&app_scenario(false, "64M", body));
    assert_eq!(r.vmstat["pgpgin"], 2400, "KiB read: each leaf's 24k once");
    assert_eq!(r.memcg["/db"]["anon"], (100 * 32) << 10, "100 leaves of 32k held");
    assert_eq!(r.app_cache["db"].misses, 100);
}

#[test]
fn the_jobs_of_an_lsm_workload_are_threads_of_one_store() {
    // My-YCSB's client threads share one LevelDB: one block cache, one table cache, one
    // memtable, in one process. A 2M store that the 8M block cache holds whole, read by four
    // threads: the cgroup holds one set of the store's regions, as it does for one thread
    // making all the gets (threads with stores of their own would hold four).
    let body =
        |jobs: u32, ops: u64| format!("kind = \"lsm\"\nlsm = {{ db_size = \"2M\", ycsb = \"c\" }}\ndistribution = \"uniform\"\njobs = {jobs}\nops = {ops}");
    let one = run(&app_scenario(false, "64M", &body(1, 40_000)));
    let four = run(&app_scenario(false, "64M", &body(4, 10_000)));
    let anon = |r: &pagelab::Report| r.memcg["/db"]["anon"];
    assert!(anon(&one) >= 2 << 20, "the block cache holds the store's blocks: {}", anon(&one));
    assert!(anon(&four) <= anon(&one) + (anon(&one) >> 4), "one set of regions: {} against {}", anon(&four), anon(&one));
}

#[test]
fn my_ycsbs_scan_thread_and_get_threads_are_tasks_counted_in_ycsb_operations() {
    // My-YCSB's leveldb-scan branch (cache_ext's GET-SCAN): thread 0 only scans, the others
    // get. Each thread is a task of its own, and its `workload_ops` are its YCSB operations,
    // where `ops` counts their parts (a scan of 100 records is many block reads).
    let body = "kind = \"lsm\"\nlsm = { db_size = \"64M\", ycsb = \"c\", scan_length = 100, scan_threads = 1 }\njobs = 3\nops = 300";
    let r = run(&app_scenario(false, "64M", body));
    let names: Vec<&str> = r.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["db.0", "db.1", "db.2"]);
    assert!(r.tasks.iter().all(|t| t.workload_ops == Some(300)), "{:?}", r.tasks.iter().map(|t| t.workload_ops).collect::<Vec<_>>());
    let parts = |i: usize| r.tasks[i].ops as f64 / 300.0;
    assert!(parts(0) > 4.0 * parts(1), "a scan is many parts, a get a few: {} against {}", parts(0), parts(1));
}

#[test]
fn an_lsm_stores_compaction_thread_is_a_task_of_its_own_that_the_report_counts() {
    // LevelDB's background thread (lsm.compaction_thread): the last job, `db.compaction`,
    // writes the memtables the clients fill; the report's `lsm` says what the store did.
    let body = "kind = \"lsm\"\nlsm = { db_size = \"64M\", ycsb = \"a\", write_buffer_size = \"64K\", compaction_thread = true }\ndistribution = \"uniform\"\njobs = 3\nops = 2000";
    let r = run(&app_scenario(false, "64M", body));
    let names: Vec<&str> = r.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["db.0", "db.1", "db.compaction"]);
    assert!(r.tasks[..2].iter().all(|t| t.workload_ops == Some(2000)));
    let lsm = r.lsm["db"];
    assert!(lsm.flushes > 0 && lsm.compactions > 0, "{lsm:?}");
    assert!(lsm.most_flushes_waiting.is_some_and(|n| n >= 1), "{lsm:?}");
    let plain = run(&app_scenario(false, "64M", &body.replace(", compaction_thread = true", "").replace("jobs = 3", "jobs = 2")));
    assert_eq!(plain.lsm["db"].most_flushes_waiting, None, "no thread, no queue");
    assert_eq!(plain.lsm["db"].flushes, lsm.flushes, "the same writes fill as many memtables");
}
