//! pagelab-workload: the page-access streams pagelab replays.
//!
//! A scenario's `[[workload]]` tables become [`Workload`]s; each job of a workload is a
//! [`JobStream`], an iterator of [`Op`]s. The same code drives the simulator and the runner
//! that performs the accesses inside a real kernel, so both see the same pages in the same
//! order.

pub mod app_cache;
pub mod dist;
pub mod exact;
pub mod gen;
pub mod lsm;
pub mod rng;
pub mod schema;
pub mod search;
pub mod size;
pub mod spec;
pub mod ycsb;

pub use app_cache::{AppCache, AppCacheSpec, AppCacheToml, AppPolicy};
pub use dist::{Distribution, Sampler};
pub use gen::{is_compaction_thread, job_file_name, JobStream, ObjectDecl, Op, SharedAppCache, SharedLsm};
pub use gen::{Due, TraceAccess, TraceAccesses, TraceKind};
pub use rng::Rng;
pub use search::{FileSizes, SearchSpec};
pub use size::{parse_duration_ns, parse_size, size_text, PAGE_SIZE};
pub use spec::{Access, Advice, CpuList, Kind, Lockstep, LockstepToml, Phase, PhaseToml, SpecError, TraceSpec, Workload, WorkloadToml};

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(toml_fields: impl FnOnce(&mut WorkloadToml)) -> Result<Workload, SpecError> {
        let mut t = WorkloadToml { cgroup: Some("/t".into()), ..Default::default() };
        t.defaults.kind = Some(Kind::FileRead);
        t.defaults.file_size = Some("1M".into());
        toml_fields(&mut t);
        t.resolve(0)
    }

    #[test]
    fn a_workload_without_cgroup_or_kind_is_refused_by_key() {
        let e = workload(|t| t.cgroup = None).unwrap_err();
        assert_eq!(e.key, "cgroup");
        let e = workload(|t| t.defaults.kind = None).unwrap_err();
        assert_eq!(e.key, "kind");
        let e = workload(|t| t.defaults.block_size = Some("3k".into())).unwrap_err();
        assert_eq!(e.key, "block_size");
    }

    #[test]
    fn block_size_sets_pages_per_op_and_aligns_offsets() {
        let w = workload(|t| {
            t.defaults.block_size = Some("16k".into());
            t.defaults.ops = Some(100);
        })
        .unwrap();
        let ops: Vec<Op> = JobStream::new(&w, 0).collect();
        assert_eq!(ops.len(), 100);
        assert!(ops.iter().all(|o| o.npages == 4 && o.page % 4 == 0 && o.page + 4 <= 256));
    }

    #[test]
    fn anon_prefill_touches_every_page_once_before_the_accesses() {
        let w = workload(|t| {
            t.defaults.kind = Some(Kind::AnonWrite);
            t.defaults.file_size = None;
            t.defaults.size = Some("40k".into());
            t.defaults.ops = Some(5);
        })
        .unwrap();
        let ops: Vec<Op> = JobStream::new(&w, 0).collect();
        assert_eq!(ops.len(), 15);
        let fills: Vec<u64> = ops.iter().take_while(|o| o.fill).map(|o| o.page).collect();
        assert_eq!(fills, (0..10).collect::<Vec<_>>());
        assert!(ops[10..].iter().all(|o| !o.fill && o.write && o.access == Access::Anon));
    }

    #[test]
    fn phases_run_in_order_and_share_objects_by_name() {
        let p1 = PhaseToml { kind: Some(Kind::AnonWrite), size: Some("8k".into()), file: Some("heap".into()), ops: Some(0), ..Default::default() };
        let mut p2 = p1.clone();
        p2.kind = Some(Kind::AnonRead);
        p2.ops = Some(3);
        let w = workload(|t| {
            t.defaults.kind = None;
            t.defaults.file_size = None;
            t.phase = vec![p1, p2];
        })
        .unwrap();
        let s = JobStream::new(&w, 0);
        assert_eq!(s.objects().len(), 1);
        let ops: Vec<Op> = s.collect();
        // Two fills (8k), then three reads; the second phase does not fill again.
        assert_eq!(ops.iter().filter(|o| o.fill).count(), 2);
        assert_eq!(ops.iter().filter(|o| !o.write).count(), 3);
    }

    #[test]
    fn jobs_get_their_own_files_and_streams() {
        let w = workload(|t| {
            t.jobs = Some(2);
            t.defaults.ops = Some(50);
        })
        .unwrap();
        let a = JobStream::new(&w, 0);
        let b = JobStream::new(&w, 1);
        assert_eq!(a.objects()[0].name, "workload0.0");
        assert_eq!(b.objects()[0].name, "workload0.1");
        let pa: Vec<u64> = a.map(|o| o.page).collect();
        let pb: Vec<u64> = b.map(|o| o.page).collect();
        assert_ne!(pa, pb);
    }

    #[test]
    fn same_seed_same_stream() {
        let w = workload(|t| {
            t.defaults.distribution = Some("zipf:0.9".into());
            t.defaults.ops = Some(1000);
        })
        .unwrap();
        let a: Vec<Op> = JobStream::new(&w, 0).collect();
        let b: Vec<Op> = JobStream::new(&w, 0).collect();
        assert_eq!(a, b);
    }

    fn app_cached(size: &str, block: &str, f: impl FnOnce(&mut WorkloadToml)) -> Workload {
        workload(|t| {
            t.app_cache =
                Some(AppCacheToml { size: Some(size.into()), policy: None, block: Some(block.into()), memory_block: None, shared: None, miss_think: None });
            f(t)
        })
        .unwrap()
    }

    #[test]
    fn the_app_cache_filters_re_reads() {
        // Two sequential passes over a 64 KiB file through a cache that holds all of it: the
        // first pass reads each block from the file and stores it into a slot, the second
        // only loads the slots.
        let w = app_cached("64k", "4k", |t| {
            t.defaults.file_size = Some("64k".into());
            t.defaults.distribution = Some("seq".into());
            t.defaults.ops = Some(32);
        });
        let s = JobStream::new(&w, 0);
        let region = s.objects().iter().position(|o| o.anon && o.name == gen::APP_CACHE_OBJECT).unwrap() as u32;
        assert_eq!(s.objects()[region as usize].pages, 16);
        let ops: Vec<Op> = s.collect();
        let (first, second) = ops.split_at(32);
        for (b, pair) in first.chunks(2).enumerate() {
            assert_eq!((pair[0].access, pair[0].page, pair[0].write), (Access::Buffered, b as u64, false), "miss {b} reads the file");
            assert_eq!((pair[1].access, pair[1].object, pair[1].write), (Access::Anon, region, true), "then stores a slot");
        }
        assert_eq!(second.len(), 16, "a hit is one operation");
        assert!(second.iter().all(|o| o.access == Access::Anon && o.object == region && !o.write), "re-reads touch the cache, not the file");
        let stored: Vec<u64> = first.iter().filter(|o| o.write).map(|o| o.page).collect();
        let loaded: Vec<u64> = second.iter().map(|o| o.page).collect();
        assert_eq!(stored, loaded, "a hit loads the slot its miss stored");
    }

    #[test]
    fn a_miss_pays_its_miss_think_before_its_store_and_marks_its_parts() {
        // 16k reads through 4k blocks with a 64us decompression a miss: the first pass misses
        // every block (its read, then its store after the decompression), the second hits;
        // every part but an operation's last says more follow.
        let w = app_cached("64k", "4k", |t| {
            t.defaults.file_size = Some("64k".into());
            t.defaults.block_size = Some("16k".into());
            t.defaults.distribution = Some("seq".into());
            t.defaults.think = Some("5us".into());
            t.defaults.ops = Some(8);
            t.app_cache.as_mut().unwrap().miss_think = Some("64us".into());
        });
        let ops: Vec<Op> = JobStream::new(&w, 0).collect();
        assert_eq!(ops.len(), 4 * 8 + 4 * 4, "4 reads of 4 misses, then 4 of 4 hits");
        for (i, part) in ops[..32].chunks(8).enumerate() {
            let thinks: Vec<u64> = part.iter().map(|o| o.think_ns).collect();
            assert_eq!(thinks, [5_000, 64_000, 0, 64_000, 0, 64_000, 0, 64_000], "read {i}: the workload's think, then each store's");
            assert!(part[..7].iter().all(|o| o.more) && !part[7].more, "read {i}");
        }
        for part in ops[32..].chunks(4) {
            assert_eq!(part.iter().map(|o| o.think_ns).collect::<Vec<_>>(), [5_000, 0, 0, 0], "a hit costs the workload's think only");
            assert!(part[..3].iter().all(|o| o.more) && !part[3].more);
        }
    }

    #[test]
    fn an_app_cache_smaller_than_the_loop_rereads_the_file_under_lru_and_not_all_under_mru() {
        let run = |policy: &str| {
            let mut w = app_cached("32k", "4k", |t| {
                t.defaults.file_size = Some("64k".into());
                t.defaults.distribution = Some("seq".into());
                t.defaults.ops = Some(160);
            });
            w.app_cache.as_mut().unwrap().policy = AppPolicy::parse(policy).unwrap();
            let ops: Vec<Op> = JobStream::new(&w, 0).collect();
            ops.iter().filter(|o| o.access == Access::Buffered).count()
        };
        // A loop over twice the cache: LRU misses every time, MRU keeps half the loop.
        assert_eq!(run("lru"), 160);
        assert!(run("mru") < 120, "mru read {} blocks from the file", run("mru"));
    }

    #[test]
    fn a_read_larger_than_the_cache_block_is_cut_into_blocks_and_writes_go_through() {
        let w = app_cached("1M", "4k", |t| {
            t.defaults.kind = Some(Kind::FileRw);
            t.defaults.file_size = Some("64k".into());
            t.defaults.block_size = Some("16k".into());
            t.defaults.ops = Some(200);
        });
        let s = JobStream::new(&w, 0);
        let ops: Vec<Op> = s.collect();
        let file_reads: Vec<&Op> = ops.iter().filter(|o| o.access == Access::Buffered && !o.write).collect();
        assert!(file_reads.iter().all(|o| o.npages == 1), "misses read one cache block each");
        assert!(file_reads.len() <= 16, "each block is read from the file at most once: {}", file_reads.len());
        let writes = ops.iter().filter(|o| o.access == Access::Buffered && o.write).count();
        assert!(writes > 50 && ops.iter().all(|o| !o.write || o.access != Access::Buffered || o.npages == 4), "writes go to the file whole");
    }

    #[test]
    fn an_app_cache_needs_file_reads_and_a_process_that_lives() {
        let mut t = WorkloadToml { cgroup: Some("/t".into()), ..Default::default() };
        t.defaults.kind = Some(Kind::AnonWrite);
        t.defaults.size = Some("1M".into());
        t.app_cache = Some(AppCacheToml { size: Some("1M".into()), ..Default::default() });
        assert_eq!(t.resolve(0).unwrap_err().key, "app_cache");
        t.defaults.kind = Some(Kind::FileRead);
        t.lifetime_ops = Some(10);
        assert_eq!(t.resolve(0).unwrap_err().key, "lifetime_ops");
        t.lifetime_ops = None;
        t.app_cache.as_mut().unwrap().policy = Some("arc".into());
        assert_eq!(t.resolve(0).unwrap_err().key, "app_cache.policy");
    }

    fn search(files: u64, sizes: &str, passes: u64, jobs: u32) -> Workload {
        let mut t = WorkloadToml { cgroup: Some("/t".into()), name: Some("rg".into()), jobs: Some(jobs), ..Default::default() };
        t.defaults.kind = Some(Kind::Search);
        t.defaults.files = Some(files);
        t.defaults.file_sizes = Some(sizes.into());
        t.defaults.passes = Some(passes);
        t.resolve(0).unwrap()
    }

    #[test]
    fn a_search_pass_reads_every_file_once() {
        let w = search(2000, "linux", 2, 1);
        let s = JobStream::new(&w, 0);
        let objects = s.objects().to_vec();
        assert_eq!(objects.len(), 2000);
        let total: u64 = objects.iter().map(|o| o.pages).sum();
        let ops: Vec<Op> = s.collect();
        // Each pass: every page of every file exactly once, each file whole and in order
        // before the next, in 64 KiB reads, the files in the same order both passes.
        let per_pass: u64 = objects.iter().map(|o| o.pages.div_ceil(16)).sum();
        assert_eq!(ops.len() as u64, 2 * per_pass);
        let mut order = Vec::new();
        for pass in ops.chunks(per_pass as usize) {
            let mut next_page = vec![0u64; objects.len()];
            let mut files = Vec::new();
            for o in pass {
                assert!(o.access == Access::Buffered && !o.write && o.npages <= 16);
                let f = o.object as usize;
                assert_eq!(o.page, next_page[f], "file {f} read in order");
                if o.page == 0 {
                    assert!(files.last().is_none_or(|&l: &usize| next_page[l] == objects[l].pages), "the previous file was read whole");
                    files.push(f);
                }
                next_page[f] += o.npages as u64;
            }
            assert_eq!(next_page.iter().sum::<u64>(), total);
            assert!(next_page.iter().zip(&objects).all(|(n, o)| *n == o.pages), "every file read whole once");
            order.push(files);
        }
        assert_eq!(order[0], order[1]);
        assert_eq!(order[0].len(), 2000);
    }

    #[test]
    fn search_threads_share_the_tree_and_read_each_file_once_between_them() {
        let w = search(300, "12k", 1, 3);
        let mut seen: Vec<String> = Vec::new();
        for job in 0..3 {
            let s = JobStream::new(&w, job);
            let names: Vec<String> = s.objects().iter().map(|o| o.name.clone()).collect();
            assert!(s.objects().iter().all(|o| !o.anon && o.pages == 3));
            let ops: Vec<Op> = s.collect();
            assert_eq!(ops.len(), names.len(), "one 64k read of each 12k file");
            seen.extend(names);
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 300);
        assert!(seen.iter().all(|n| n.starts_with("rg/")), "files shared by name, not per job");
    }

    #[test]
    fn a_search_through_an_app_cache_reads_each_file_once_in_ten_passes() {
        let mut w = search(100, "8k", 10, 1);
        w.app_cache = Some(AppCacheToml { size: Some("1M".into()), ..Default::default() }.resolve().unwrap());
        let ops: Vec<Op> = JobStream::new(&w, 0).collect();
        assert_eq!(ops.iter().filter(|o| o.access == Access::Buffered).count(), 200, "each 4k block of 100 files once");
        assert_eq!(ops.iter().filter(|o| o.access == Access::Anon && !o.write).count(), 9 * 200);
    }

    #[test]
    fn a_search_refuses_keys_that_do_not_apply() {
        let mut t = WorkloadToml { cgroup: Some("/t".into()), ..Default::default() };
        t.defaults.kind = Some(Kind::Search);
        t.defaults.file_size = Some("1M".into());
        assert_eq!(t.resolve(0).unwrap_err().key, "file_size");
        t.defaults.file_size = None;
        t.defaults.files = Some(0);
        assert_eq!(t.resolve(0).unwrap_err().key, "files");
        t.defaults.files = None;
        t.defaults.file_sizes = Some("huge".into());
        assert_eq!(t.resolve(0).unwrap_err().key, "file_sizes");
        t.defaults.kind = Some(Kind::FileRead);
        t.defaults.file_sizes = None;
        t.defaults.file_size = Some("1M".into());
        t.defaults.passes = Some(3);
        assert_eq!(t.resolve(0).unwrap_err().key, "passes");
    }

    fn lsm(db: &str, ycsb: &str, ops: u64) -> Workload {
        let mut t = WorkloadToml { cgroup: Some("/t".into()), name: Some("db".into()), ..Default::default() };
        t.defaults.kind = Some(Kind::Lsm);
        t.defaults.ops = Some(ops);
        t.defaults.lsm = Some(lsm::LsmToml { db_size: Some(db.into()), ycsb: Some(ycsb.into()), ..Default::default() });
        t.resolve(0).unwrap()
    }

    #[test]
    fn an_lsm_workload_declares_its_tables_log_and_caches() {
        let w = lsm("1G", "c", 2000);
        let s = JobStream::new(&w, 0);
        let l = lsm::Layout::new(w.phases[0].lsm.as_ref().unwrap());
        let tables: u64 = l.tables.iter().sum();
        let files: Vec<&ObjectDecl> = s.objects().iter().filter(|o| !o.anon).collect();
        assert_eq!(files.len() as u64, tables + lsm::L0_TRIGGER as u64 + 1, "every table, L0's four and the log");
        assert!(files.iter().all(|o| o.name.starts_with("db/")));
        let anon: Vec<&str> = s.objects().iter().filter(|o| o.anon).map(|o| o.name.as_str()).collect();
        assert_eq!(anon, ["lsm_memtable", "lsm_block_cache", "lsm_table_cache"]);
        let ops: Vec<Op> = s.collect();
        // YCSB-C: gets only; each reads at least the memtable and one data block.
        assert!(ops.len() >= 2 * 2000, "{} operations", ops.len());
        assert_eq!(ops.iter().filter(|o| !o.more).count(), 2000, "a YCSB operation's last part ends it (the task's workload_ops)");
        assert!(ops.iter().all(|o| !o.write || o.access == Access::Anon), "no file is written by reads");
        assert!(ops.iter().all(|o| o.access != Access::Truncate), "nor deleted");
    }

    #[test]
    fn the_jobs_of_an_lsm_workload_are_threads_of_one_store() {
        // My-YCSB's 8 client threads share one LevelDB (leveldb_client.cpp: every client's
        // `db` is the factory's): one block cache, one table cache. A 2M store fits the 8M
        // block cache whole: once thread 0 has read every block, thread 1 reads no file page,
        // where a thread with caches of its own would read the store again.
        let mut t = WorkloadToml { cgroup: Some("/t".into()), name: Some("db".into()), jobs: Some(2), ..Default::default() };
        t.defaults.kind = Some(Kind::Lsm);
        t.defaults.ops = Some(20_000);
        t.defaults.distribution = Some("uniform".into());
        t.defaults.lsm = Some(lsm::LsmToml { db_size: Some("2M".into()), ycsb: Some("c".into()), ..Default::default() });
        let w = t.resolve(0).unwrap();
        let file_reads = |ops: &mut dyn Iterator<Item = Op>, n: usize| ops.take(n).filter(|o| o.access == Access::Buffered).count();
        let (mut a, mut b) = (JobStream::new(&w, 0), JobStream::new(&w, 1));
        // The store's regions are one per process, shared by its threads, named after it.
        let anon: Vec<(&str, bool)> = a.objects().iter().filter(|o| o.anon).map(|o| (o.name.as_str(), o.shared)).collect();
        assert_eq!(anon, [("lsm_memtable.db", true), ("lsm_block_cache.db", true), ("lsm_table_cache.db", true)]);
        assert_eq!(a.objects(), b.objects(), "declared alike, so the store's object indices hold for both");
        // Own stores first: thread 1 reads the store although thread 0 read all of it.
        let (mut a2, mut b2) = (a.clone(), b.clone());
        assert!(file_reads(&mut a2, 60_000) > 0);
        assert!(file_reads(&mut b2, 10_000) > 0, "a store of its own reads its blocks again");
        // One store: the same threads share it.
        let stores = a.lsm_stores();
        assert_eq!(stores.len(), 1);
        b.share_lsm_stores(&stores);
        assert!(file_reads(&mut a, 60_000) > 0);
        let blocks = a.with_lsm(|l| l.block_cache.misses).unwrap();
        assert_eq!(file_reads(&mut b, 10_000), 0, "thread 0's reads filled the caches for thread 1");
        assert_eq!(b.with_lsm(|l| l.block_cache.misses), Some(blocks), "one cache: thread 1 missed nothing");
    }

    /// A 64 MiB store with 64 KiB memtables, YCSB mix `ycsb` on uniform keys, one client
    /// thread and LevelDB's compaction thread.
    fn store_with_a_thread(ycsb: &str) -> Workload {
        let mut t = WorkloadToml { cgroup: Some("/t".into()), name: Some("db".into()), jobs: Some(2), ..Default::default() };
        t.defaults.kind = Some(Kind::Lsm);
        t.defaults.ops = Some(3_000);
        t.defaults.distribution = Some("uniform".into());
        t.defaults.lsm = Some(lsm::LsmToml {
            db_size: Some("64M".into()),
            ycsb: Some(ycsb.into()),
            write_buffer_size: Some("64K".into()),
            compaction_thread: Some(true),
            ..Default::default()
        });
        t.resolve(0).unwrap()
    }

    #[test]
    fn an_lsm_stores_compaction_thread_does_the_flushes_and_ends_with_its_clients() {
        // LevelDB's background thread (db/db_impl.cc): the writers fill memtables, the thread
        // writes them as L0 tables; it sleeps while nothing waits and ends with the clients.
        let w = store_with_a_thread("a");
        assert!(!is_compaction_thread(&w, 0) && is_compaction_thread(&w, 1));
        let (mut client, mut bg) = (JobStream::new(&w, 0), JobStream::new(&w, 1));
        bg.share_lsm_stores(&client.lsm_stores());
        let wal = client.with_lsm(|l| l.objects.wal).unwrap();
        let table_writes = |ops: &[Op]| ops.iter().filter(|o| o.write && o.access != Access::Anon && o.object != wal).count();
        // Before any write the thread only sleeps, one poll at a time.
        let idle = bg.next().unwrap();
        assert_eq!((idle.think_ns, idle.access), (gen::COMPACTOR_POLL_NS, Access::Anon));
        // The client writes its log and no table until it finds the memtable full while the
        // last full one waits for its flush (LevelDB's imm_): then it waits, polling.
        let polls = |op: &Op| op.think_ns == gen::COMPACTOR_POLL_NS;
        let mut writes = Vec::new();
        let stall = loop {
            let op = client.next().expect("the client waits before its operations run out");
            if polls(&op) {
                break op;
            }
            writes.push(op);
        };
        assert_eq!(table_writes(&writes), 0, "the client writes its log, no table");
        assert!(stall.more && stall.access == Access::Anon, "the wait is a part of the write");
        assert_eq!(client.with_lsm(|l| l.background_state().unwrap().flushes_waiting), Some(1), "one full memtable waits");
        assert!(polls(&client.next().unwrap()), "it waits while the thread has not flushed");
        // The thread flushes, and the client's write goes on.
        let work: Vec<Op> = std::iter::from_fn(|| bg.next()).take_while(|o| !polls(o)).collect();
        assert!(table_writes(&work) > 0, "the thread writes the L0 table");
        assert_eq!(client.with_lsm(|l| (l.flushes, l.background_state().unwrap().flushes_waiting)), Some((1, 0)));
        assert!(!polls(&client.next().unwrap()), "the write goes on");
        // Side by side to the end: every full memtable is flushed, and the thread ends.
        for op in client.by_ref() {
            assert!(op.think_ns == 0 || polls(&op));
            bg.next();
        }
        assert!(bg.by_ref().count() < 1_000_000, "the thread ends with its client");
        let (flushes, waiting, stalls) =
            client.with_lsm(|l| (l.flushes, l.background_state().unwrap().flushes_waiting, l.background_state().unwrap().write_stalls)).unwrap();
        assert!(flushes >= 2 && waiting == 0 && stalls >= 2, "{flushes} flushes, {waiting} waiting, {stalls} polls");
    }

    #[test]
    fn with_a_compaction_thread_a_read_modify_write_reads_before_its_write_waits() {
        // My-YCSB's read-modify-write is a Get, then a Put; LevelDB's MakeRoomForWrite()
        // holds back only the Put.
        let w = store_with_a_thread("f");
        let (mut client, mut bg) = (JobStream::new(&w, 0), JobStream::new(&w, 1));
        bg.share_lsm_stores(&client.lsm_stores());
        let mut operation = Vec::new();
        loop {
            let op = client.next().expect("the client waits before its operations run out");
            if op.think_ns == gen::COMPACTOR_POLL_NS {
                break;
            }
            operation.push(op);
            if !operation.last().unwrap().more {
                operation.clear();
            }
        }
        assert!(!operation.is_empty(), "the waiting operation did something first");
        let (wal, memtable) = client.with_lsm(|l| (l.objects.wal, l.objects.memtable)).unwrap();
        let put = |o: &Op| o.write && (o.object == wal || o.object == memtable);
        assert!(!operation.iter().any(put), "its read, and no log or memtable write yet: {operation:?}");
        assert!(operation.iter().any(|o| o.access == Access::Anon), "the get looked at the memtable");
    }

    #[test]
    fn my_ycsb_latest_is_refused_outside_an_lsm_store_by_its_key() {
        let e = workload(|t| t.defaults.distribution = Some("my-ycsb-latest".into())).unwrap_err();
        assert_eq!(e.key, "distribution");
        assert!(e.to_string().contains("kind = \"lsm\""), "{e}");
        let mut t = WorkloadToml { cgroup: Some("/t".into()), name: Some("db".into()), ..Default::default() };
        t.defaults.kind = Some(Kind::Lsm);
        t.defaults.ops = Some(10);
        t.defaults.distribution = Some("my-ycsb-latest".into());
        t.defaults.lsm = Some(lsm::LsmToml { db_size: Some("64M".into()), ycsb: Some("d".into()), ..Default::default() });
        let w = t.resolve(0).unwrap();
        let ops: Vec<Op> = JobStream::new(&w, 0).collect();
        assert!(ops.iter().any(|o| o.write && o.access == Access::Buffered), "its first operation inserts: a log write");
    }

    #[test]
    fn a_compaction_thread_needs_a_client_job() {
        let mut t = WorkloadToml { cgroup: Some("/t".into()), name: Some("db".into()), jobs: Some(1), ..Default::default() };
        t.defaults.kind = Some(Kind::Lsm);
        t.defaults.ops = Some(10);
        t.defaults.lsm = Some(lsm::LsmToml { db_size: Some("64M".into()), ycsb: Some("a".into()), compaction_thread: Some(true), ..Default::default() });
        let e = t.resolve(0).unwrap_err().to_string();
        assert!(e.contains("lsm.compaction_thread") && e.contains("at least 2"), "{e}");
    }

    #[test]
    fn my_ycsbs_scan_threads_only_scan_and_the_other_threads_read_in_place_of_scans() {
        // My-YCSB's leveldb-scan branch (cache_ext's GET-SCAN benchmark): the first
        // scan_worker_count threads are do_only_scans; every other thread's mix has its scans
        // moved to reads (core/workload.cpp, ZipfianWorkload::next_op()). YCSB-E: 95% scans
        // and 5% inserts; a scan's preads carry `scan_fadvise`, a get's do not.
        let workload = |scan_threads: Option<u32>, jobs: u32| {
            let mut t = WorkloadToml { cgroup: Some("/t".into()), name: Some("db".into()), jobs: Some(jobs), ..Default::default() };
            t.defaults.kind = Some(Kind::Lsm);
            t.defaults.ops = Some(400);
            t.defaults.lsm = Some(lsm::LsmToml {
                db_size: Some("256M".into()),
                ycsb: Some("e".into()),
                scan_threads,
                scan_fadvise: Some(Advice::Sequential),
                ..Default::default()
            });
            t.resolve(0)
        };
        // (file reads with the scan hint, other file reads, file writes) of job `job`.
        let counts = |w: &Workload, job: u32| {
            let ops: Vec<Op> = JobStream::new(w, job).collect();
            let reads = |hinted: bool| ops.iter().filter(|o| o.access == Access::Buffered && !o.write && (o.advice == Advice::Sequential) == hinted).count();
            (reads(true), reads(false), ops.iter().filter(|o| o.write && o.access == Access::Buffered).count())
        };
        let pools = workload(Some(1), 2).unwrap();
        let (scan_reads, other_reads, writes) = counts(&pools, 0);
        assert!(scan_reads > 0 && other_reads == 0 && writes == 0, "thread 0 only scans: {scan_reads}, {other_reads}, {writes}");
        let (scan_reads, other_reads, writes) = counts(&pools, 1);
        assert!(scan_reads == 0 && other_reads > 0 && writes > 0, "thread 1 gets and inserts: {scan_reads}, {other_reads}, {writes}");
        let mixed = workload(None, 2).unwrap();
        let (scan_reads, _, writes) = counts(&mixed, 1);
        assert!(scan_reads > 0 && writes > 0, "without scan threads every thread runs YCSB-E's mix");
        assert_eq!(workload(Some(2), 2).unwrap_err().key, "lsm.scan_threads", "no thread left for the gets");
    }

    #[test]
    fn an_lsm_workload_writes_its_log_on_updates() {
        let w = lsm("256M", "a", 4000);
        let s = JobStream::new(&w, 0);
        let wal = s.objects().iter().position(|o| o.name == "db/wal.log").unwrap() as u32;
        let ops: Vec<Op> = s.collect();
        let appends = ops.iter().filter(|o| o.object == wal && o.write).count();
        assert!((1700..2300).contains(&appends), "half the operations update: {appends}");
    }

    #[test]
    fn an_lsm_workload_refuses_what_does_not_apply() {
        let mut t = WorkloadToml { cgroup: Some("/t".into()), ..Default::default() };
        t.defaults.kind = Some(Kind::Lsm);
        t.defaults.ops = Some(10);
        assert_eq!(t.resolve(0).unwrap_err().key, "lsm");
        t.defaults.lsm = Some(lsm::LsmToml { db_size: Some("1G".into()), ..Default::default() });
        t.defaults.file_size = Some("1G".into());
        assert_eq!(t.resolve(0).unwrap_err().key, "file_size");
        t.defaults.file_size = None;
        t.defaults.lsm.as_mut().unwrap().ycsb = Some("z".into());
        assert_eq!(t.resolve(0).unwrap_err().key, "lsm.ycsb");
        t.defaults.lsm.as_mut().unwrap().ycsb = None;
        t.app_cache = Some(AppCacheToml { size: Some("1M".into()), ..Default::default() });
        assert_eq!(t.resolve(0).unwrap_err().key, "app_cache");
    }

    #[test]
    fn a_tree_or_store_too_large_for_its_jobs_is_refused_by_its_key() {
        let mut t = WorkloadToml { cgroup: Some("/t".into()), jobs: Some(4096), ..Default::default() };
        t.defaults.kind = Some(Kind::Search);
        t.defaults.files = Some(1_000_000);
        assert_eq!(t.resolve(0).unwrap_err().key, "files");
        t.jobs = Some(4);
        assert!(t.resolve(0).is_ok());
        t.defaults.kind = Some(Kind::Lsm);
        t.defaults.files = None;
        t.defaults.ops = Some(1);
        t.defaults.lsm = Some(lsm::LsmToml { db_size: Some("4T".into()), ..Default::default() });
        assert_eq!(t.resolve(0).unwrap_err().key, "lsm.db_size", "two million tables");
        t.defaults.lsm = Some(lsm::LsmToml { db_size: Some("1T".into()), ..Default::default() });
        t.jobs = Some(64);
        assert_eq!(t.resolve(0).unwrap_err().key, "lsm.db_size", "half a million tables for each of 64 jobs");
    }
}
