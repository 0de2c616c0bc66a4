//! `kind = "lsm"`: an LSM-tree key-value store over files, as LevelDB lays one out and reads
//! it, driven by YCSB's operation mixes.
//!
//! **The store.** `lsm = { db_size = "100G", ycsb = "c" }` describes a database of
//! `db_size` bytes of records (`value_size` 1000 bytes, YCSB's 10 fields of 100, and a
//! `key_size` of 24 bytes, `user` and YCSB's hashed number; My-YCSB, which cache_ext ran,
//! writes 16-byte keys and 200-byte values) in SST files of `table_size` (2 MiB,
//! LevelDB's `max_file_size`, include/leveldb/options.h), each of 4 KiB data blocks
//! (`block_size`), a Bloom filter block (`bloom_bits_per_key` = 10: LevelDB ships no
//! filter by default, `NewBloomFilterPolicy(10)` is what its documentation and benchmarks
//! use; `bloom_bits_per_key = 0` is LevelDB's default `Options::filter_policy = nullptr`,
//! no filter block), an index block (one entry per data block) and a footer page. The levels are
//! LevelDB's steady state after a load: L1 holds 10 MiB, each level below ten times more
//! (db/version_set.cc: MaxBytesForLevel()), and the last level the rest; L0 and the memtable
//! are empty of the loaded keys. (`l1_size`, 10 MiB, scales L1 down with a store scaled
//! down, keeping its levels' ratios to the data and to the cgroup.) Each key lives in one
//! level, chosen by a hash of the key in proportion to the levels' sizes, and each level's
//! tables split the key range evenly.
//!
//! **A get** (LevelDB's DBImpl::Get, Version::Get): the memtable (a load of one page of its
//! anonymous region), then the L0 tables newest first, then each level from L1 down to the
//! first that holds a version of the key, its own or where its last write put it (below,
//! "Where a get finds a written key"): the table whose range
//! holds the key is looked up in the **table cache** (`max_open_files` 1000, less LevelDB's
//! 10 for other files: 990 open tables, LRU), whose entries hold each open table's index and
//! filter in anonymous memory; a table not open is opened, reading its footer, index block
//! and filter block with pread (Table::Open, ReadMeta) and storing them in its slot. The
//! filter answers (deterministically per key and table: a Bloom filter's false positives,
//! at its rate for `bloom_bits_per_key`, `(1 − e^{−k/b})^k` with LevelDB's `k = ⌊b·ln 2⌋`
//! probes; without a filter every table looked at passes). On a positive, the data block
//! the index names goes through the **block cache**
//! (`block_cache` 8 MiB, LevelDB's default when none is given, LRU of 4 KiB blocks in
//! anonymous memory: crate::app_cache) and is read with pread on a miss. The get stops at
//! the key's place; a false positive reads a data block and goes on.
//!
//! **A scan** (YCSB's SCAN, a DBIter over a merging iterator): seeks every level, then reads
//! forward `1..=max_scan` records (uniform, YCSB's `maxscanlength` 100), or always
//! `scan_length` (My-YCSB's `scan_length: 100`): in each level the data blocks its records
//! span from the key's place to the first record past the scan, in order, through the table
//! and block caches, crossing into the next table where a table ends ([`LsmState::scan`]).
//! The kernel's readahead sees consecutive preads.
//!
//! **Updates.** YCSB's update writes the record; `update_reads = true` reads it first, as
//! My-YCSB's LevelDB client does (leveldb_client.cpp: do_update() calls
//! do_read_modify_write(), a Get and a Put).
//!
//! **Threads.** The jobs of an lsm workload (`jobs = 8`, My-YCSB's `nr_thread`) are the client
//! threads of one store, as My-YCSB's clients all use its factory's one `leveldb::DB`: one
//! memtable and log, one set of levels, flushes and compactions, one block cache and one
//! table cache (crates/workload's gen.rs: `SharedLsm`). Its anonymous regions are the
//! process's (named after the store: `lsm_block_cache.<store>`), so the tasks are threads of
//! one process. An operation's cache decisions are made when the simulator draws its first
//! part, in the deterministic order it draws the jobs' operations; the flush or compaction a
//! write or a get triggers runs in that task, or with `compaction_thread` on LevelDB's
//! background thread, the workload's last job ([`LsmState::background`]). With one job the store and its regions are as
//! before (`lsm_block_cache`, the job's own). `scan_threads = N` makes the first N jobs scan
//! only and the others read where the mix scans ([`Mix::of_thread`]: My-YCSB's leveldb-scan
//! branch, which cache_ext's GET-SCAN benchmark runs); `scan_fadvise` is the hint a scan's
//! preads carry. A YCSB operation's parts are one operation of its task (`Op::more` on all
//! but the last: the report's `workload_ops`).
//!
//! **Writes** (update, insert, the write of read-modify-write): appended to the log (the
//! `wal` file, written page by page) and stored into the memtable (anonymous memory). A
//! memtable of `write_buffer_size` (4 MiB, LevelDB's default) is **flushed** (DBImpl::CompactMemTable()): written
//! as an L0 table 64 KiB at a time (PosixWritableFile's buffer) and opened to verify it, and
//! the log is replaced (the old one deleted). Four L0 tables (kL0_CompactionTrigger) are
//! **compacted** into L1, and the same bytes are then pushed down every level, one table
//! and the tables of the level below that overlap it at a time, round-robin over the level
//! (the compaction pointer): the steady state of a store whose levels keep their sizes. A
//! compaction reads its inputs in order through the table cache but not the block cache
//! (`fill_cache = false`), **deletes** them (an `Access::Truncate` operation: their pages
//! and shadow entries leave the page cache, the kernel's truncate_inode_pages_range()) and
//! writes its outputs. Since the layout is fixed, an output reuses the file of the input
//! it replaces; a new file number keeps the caches from finding a deleted file's entries
//! (LevelDB's new file numbers).
//!
//! **Where a get finds a written key** ([`Placement`], lsm/place.rs): in memory until its
//! memtable's flush, then in that L0 table, then a level lower at each compaction of the
//! table holding it, until its own level. A get stops at the first place that holds it.
//!
//! **With `compaction_thread`** the thread flushes a waiting memtable first, then does the
//! size compaction of the level with the highest score (L0's tables over four, a level's
//! bytes over its size: [`LsmState::pick_compaction`]), then a seek compaction, one
//! compaction a piece of work. The writers are held back as LevelDB's MakeRoomForWrite()
//! holds them: a write is delayed 1 ms at 8 L0 tables, and a writer that needs a new
//! memtable waits while the last full one is not flushed or L0 holds 12 tables.
//!
//! **Left out**: without `compaction_thread`, a background thread (compactions run in the
//! triggering task, in one burst, where LevelDB overlaps them with the foreground, and L0
//! is compacted at four tables); with it, the wait is a poll every
//! [`crate::gen::COMPACTOR_POLL_NS`] (LevelDB wakes the writer with a signal; a
//! read-modify-write waits after its read, before its write), and the thread looks for a
//! waiting memtable between compactions (LevelDB: after every key); a level's compactions
//! go round-robin over its tables (the compaction pointer) and push their bytes down one
//! level at a time; trivial moves; compression (a block is one page); the manifest;
//! iterator pinning.
//!
//! **YCSB mixes** (`ycsb`, YCSB's workloads/workload[a-f]): a 50% reads, 50% updates; b 95/5;
//! c reads only; d 95% reads of the `latest` keys, 5% inserts; e 95% scans, 5% inserts;
//! f 50% reads, 50% read-modify-writes. Keys are drawn by the phase's `distribution`,
//! default YCSB's `scrambled-zipfian` (`latest` for d); `distribution = "uniform"` gives the
//! uniform mixes. Key k is the k-th in sorted order.
//!
//! **Memory**: no state per key or per declared page. Per table, one object of the task (a
//! name and size, about 50 bytes: 51,200 tables for 100 GiB) and one slot entry; the caches'
//! tables grow with the blocks and tables they hold (crate::app_cache).

mod compact;
mod place;

use std::collections::VecDeque;

use serde::Deserialize;

pub use compact::{Background, Retry};
pub use place::{Found, Placement};

use crate::app_cache::{self, AppCache, AppCacheSpec, AppPolicy, Lookup};
use crate::gen::Op;
use crate::rng::Rng;
use crate::size::{parse_size, PAGE_SIZE};
use crate::spec::{Access, Advice};

/// LevelDB's `max_open_files` default less the ten it keeps for other files
/// (`kNumNonTableCacheFiles`, db/db_impl.cc).
const NON_TABLE_FILES: u64 = 10;
/// The memtable's and the log's size by default: LevelDB's `write_buffer_size` (4 MiB).
const WRITE_BUFFER: u64 = 4 << 20;
/// A record's bytes in a block besides key and value (varint lengths, sequence and type).
const RECORD_OVERHEAD: u64 = 12;
/// An index entry's bytes besides the separator key (the block handle, lengths).
const INDEX_ENTRY_OVERHEAD: u64 = 12;
/// L1's size by default; each level below holds ten times more (MaxBytesForLevel(), a
/// constant in LevelDB: `l1_size` only scales a store down with its ratios).
const L1_BYTES: u64 = 10 << 20;
/// LevelDB's kNumLevels.
const LEVELS: usize = 7;
/// At most this many tables in a store: each is an object of the model (about 60 bytes in
/// the generator, and its pages' entries in the model's address space).
pub const MAX_TABLES: u64 = 1 << 20;

/// The `lsm` table as written.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LsmToml {
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub db_size: Option<String>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub value_size: Option<String>,
    pub ycsb: Option<String>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub table_size: Option<String>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub block_cache: Option<String>,
    pub max_open_files: Option<u64>,
    pub bloom_bits_per_key: Option<u32>,
    pub max_scan: Option<u64>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub key_size: Option<String>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub write_buffer_size: Option<String>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub l1_size: Option<String>,
    pub scan_length: Option<u64>,
    pub update_reads: Option<bool>,
    pub unaligned_blocks: Option<bool>,
    pub seek_compaction: Option<bool>,
    pub compaction_thread: Option<bool>,
    pub allowed_seeks_min: Option<u64>,
    pub scan_threads: Option<u32>,
    pub scan_fadvise: Option<Advice>,
}

/// YCSB's operation mix: fractions of reads, updates, inserts, scans and read-modify-writes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mix {
    pub letter: char,
    pub read: f64,
    pub update: f64,
    pub insert: f64,
    pub scan: f64,
    pub rmw: f64,
}

impl Mix {
    pub fn of(letter: char) -> Option<Mix> {
        let m = |read, update, insert, scan, rmw| Some(Mix { letter, read, update, insert, scan, rmw });
        match letter {
            'a' => m(0.5, 0.5, 0.0, 0.0, 0.0),
            'b' => m(0.95, 0.05, 0.0, 0.0, 0.0),
            'c' => m(1.0, 0.0, 0.0, 0.0, 0.0),
            'd' => m(0.95, 0.0, 0.05, 0.0, 0.0),
            'e' => m(0.0, 0.0, 0.05, 0.95, 0.0),
            'f' => m(0.5, 0.0, 0.0, 0.0, 0.5),
            _ => None,
        }
    }

    /// The operation the uniform draw `u` picks.
    pub fn kind(&self, u: f64) -> OpKind {
        let bounds = [(self.read, OpKind::Read), (self.update, OpKind::Update), (self.insert, OpKind::Insert), (self.scan, OpKind::Scan)];
        let mut sum = 0.0;
        for (share, kind) in bounds {
            sum += share;
            if u < sum {
                return kind;
            }
        }
        OpKind::ReadModifyWrite
    }

    /// The mix thread `job` runs with `scan_threads` scan threads, as My-YCSB's leveldb-scan
    /// branch runs its threads (core/worker.cpp: the first `scan_worker_count` threads are
    /// `do_only_scans`; core/workload.cpp, ZipfianWorkload::next_op()): a scan thread only
    /// scans; every other thread reads where the mix scans.
    pub fn of_thread(self, job: u32, scan_threads: u32) -> Mix {
        match (scan_threads, job < scan_threads) {
            (0, _) => self,
            (_, true) => Mix { read: 0.0, update: 0.0, insert: 0.0, scan: 1.0, rmw: 0.0, ..self },
            (_, false) => Mix { read: self.read + self.scan, scan: 0.0, ..self },
        }
    }
}

/// A YCSB operation ([`Mix::kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
    /// The write of an update or a read-modify-write on its own, after its read
    /// (crate::gen runs the two apart, so that the write alone waits for the thread).
    Put,
}

/// A validated `lsm` table.
#[derive(Clone, Debug, PartialEq)]
pub struct LsmSpec {
    pub db_bytes: u64,
    pub value_bytes: u64,
    pub key_bytes: u64,
    pub mix: Mix,
    pub table_bytes: u64,
    pub block_cache_bytes: u64,
    pub max_open_files: u64,
    pub bloom_bits_per_key: u32,
    pub max_scan: u64,
    /// The memtable's and the log's bytes (`write_buffer_size`).
    pub write_buffer_bytes: u64,
    /// L1's bytes; each level below ten times more.
    pub l1_bytes: u64,
    /// Every scan reads this many records (My-YCSB's `scan_length`), in place of YCSB's
    /// uniform `1..=max_scan`.
    pub scan_length: Option<u64>,
    /// An update reads the record first (My-YCSB's LevelDB client: `do_update()` is
    /// `do_read_modify_write()`).
    pub update_reads: bool,
    /// Blocks lie at their byte offsets, as LevelDB's TableBuilder writes them (a block of a
    /// little over 4 KiB and its 5-byte trailer right after the previous one), so a block's
    /// pread spans the pages its bytes do: two for a data block, mostly. False: every block
    /// is a page of its own (the model before; one page a data block read).
    pub unaligned_blocks: bool,
    /// LevelDB's seek compactions (db/version_set.cc, LevelDB 1.23): every table starts with
    /// `allowed_seeks = max(100, file_size / 16 KiB)`; a get that consults more than one
    /// table charges the first it consulted (Version::Get() and UpdateStats()), and a table
    /// whose count reaches zero is compacted into the level below. False: no seek
    /// compactions (the model before).
    pub seek_compaction: bool,
    /// LevelDB's background compaction thread (db/db_impl.cc, LevelDB 1.23): the workload's
    /// last job is that thread, not a client. A writer that fills the memtable starts a new
    /// log and leaves the flush to it; it takes flushes first, then L0's compaction, then
    /// the table seek accounting marked ([`LsmState::background`]). False: flushes and
    /// compactions run in the task that triggered them (the model before).
    pub compaction_thread: bool,
    /// The fewest seeks a table is allowed (LevelDB's 100, a constant). A store scaled down
    /// scales it with its tables, so that a seek compaction moves as many bytes per get as
    /// the full store's (ycsb-paper.toml: 3, for 128 of the paper's 2 MiB tables at 1/32).
    pub allowed_seeks_min: u64,
    /// The first `scan_threads` jobs only scan; the others run the mix with its scans as
    /// reads (My-YCSB's leveldb-scan branch, [`Mix::of_thread`]). 0: every job runs the mix.
    pub scan_threads: u32,
    /// The hint a scan's preads carry (My-YCSB's `ENABLE_SCAN_FADVISE`, which sets the
    /// iterator's `is_scan` in cache_ext's LevelDB); `None`: the phase's `fadvise`.
    pub scan_advice: Option<Advice>,
}

impl LsmToml {
    /// Validates the table; errors are (key under `lsm`, message).
    pub fn resolve(&self) -> Result<LsmSpec, (&'static str, String)> {
        let size = |k: &'static str, v: &Option<String>, default: u64| -> Result<u64, (&'static str, String)> {
            match v {
                Some(t) => parse_size(t).map_err(|m| (k, m)),
                None => Ok(default),
            }
        };
        let db_bytes = size("db_size", &self.db_size, 0)?;
        if self.db_size.is_none() {
            return Err(("db_size", "missing: how large is the database? (\"100G\")".into()));
        }
        if db_bytes > 1 << 44 {
            return Err(("db_size", "is larger than 16T, pagelab's address space".into()));
        }
        let value_bytes = size("value_size", &self.value_size, 1000)?;
        if value_bytes == 0 || value_bytes > 64 << 20 {
            return Err(("value_size", "must be between 1 byte and 64M".into()));
        }
        let letter = self.ycsb.as_deref().unwrap_or("c").to_ascii_lowercase();
        let mix = letter
            .strip_prefix("workload")
            .unwrap_or(&letter)
            .chars()
            .next()
            .filter(|_| letter.trim_start_matches("workload").len() == 1)
            .and_then(Mix::of)
            .ok_or(("ycsb", format!("`{letter}`: use one of YCSB's workloads a, b, c, d, e, f")))?;
        let table_bytes = size("table_size", &self.table_size, 2 << 20)?;
        if !(16 << 10..=1 << 30).contains(&table_bytes) {
            return Err(("table_size", "must be between 16k and 1G".into()));
        }
        let block_cache_bytes = size("block_cache", &self.block_cache, 8 << 20)?;
        if block_cache_bytes < PAGE_SIZE {
            return Err(("block_cache", "must hold at least one 4 KiB block".into()));
        }
        if block_cache_bytes / PAGE_SIZE > u32::MAX as u64 / 2 {
            return Err(("block_cache", "is larger than pagelab's 8 TiB limit per object".into()));
        }
        let max_open_files = self.max_open_files.unwrap_or(1000);
        if max_open_files <= NON_TABLE_FILES || max_open_files > 1 << 24 {
            return Err(("max_open_files", format!("must be between {} and 16777216 (LevelDB keeps {NON_TABLE_FILES} for other files)", NON_TABLE_FILES + 1)));
        }
        let bloom_bits_per_key = self.bloom_bits_per_key.unwrap_or(10);
        if bloom_bits_per_key > 64 {
            return Err(("bloom_bits_per_key", "must be between 0 (no filter, LevelDB's default) and 64".into()));
        }
        let key_bytes = size("key_size", &self.key_size, 24)?;
        if key_bytes == 0 || key_bytes > 64 << 10 {
            return Err(("key_size", "must be between 1 byte and 64k".into()));
        }
        let max_scan = self.max_scan.unwrap_or(100);
        if max_scan == 0 || max_scan > 1 << 20 {
            return Err(("max_scan", "must be between 1 and 1048576".into()));
        }
        if let Some(n) = self.scan_length {
            if self.max_scan.is_some() {
                return Err(("scan_length", "fixes every scan's length: leave out `max_scan` (YCSB's uniform 1..=max_scan)".into()));
            }
            if n == 0 || n > 1 << 20 {
                return Err(("scan_length", "must be between 1 and 1048576".into()));
            }
        }
        if self.scan_fadvise.is_some() && mix.scan == 0.0 && self.scan_threads.unwrap_or(0) == 0 {
            return Err(("scan_fadvise", format!("applies to scans: YCSB-{} has none and no job scans (`scan_threads`)", mix.letter.to_ascii_uppercase())));
        }
        let write_buffer_bytes = size("write_buffer_size", &self.write_buffer_size, WRITE_BUFFER)?;
        if !(PAGE_SIZE..=1 << 30).contains(&write_buffer_bytes) || write_buffer_bytes % PAGE_SIZE != 0 {
            return Err(("write_buffer_size", "must be whole 4 KiB pages, between 4k and 1G".into()));
        }
        let l1_bytes = size("l1_size", &self.l1_size, L1_BYTES)?;
        if !(table_bytes..=1 << 40).contains(&l1_bytes) {
            return Err(("l1_size", "must hold at least one table (table_size) and at most 1T".into()));
        }
        if self.allowed_seeks_min.is_some_and(|n| !(1..=1 << 30).contains(&n)) {
            return Err(("allowed_seeks_min", "must be between 1 and 2^30 (LevelDB's is 100)".into()));
        }
        let spec = LsmSpec {
            db_bytes,
            value_bytes,
            key_bytes,
            mix,
            table_bytes,
            block_cache_bytes,
            max_open_files,
            bloom_bits_per_key,
            max_scan,
            write_buffer_bytes,
            l1_bytes,
            scan_length: self.scan_length,
            update_reads: self.update_reads.unwrap_or(false),
            unaligned_blocks: self.unaligned_blocks.unwrap_or(false),
            seek_compaction: self.seek_compaction.unwrap_or(false),
            compaction_thread: self.compaction_thread.unwrap_or(false),
            allowed_seeks_min: self.allowed_seeks_min.unwrap_or(100),
            scan_threads: self.scan_threads.unwrap_or(0),
            scan_advice: self.scan_fadvise,
        };
        if spec.records() == 0 {
            return Err(("db_size", "holds not one record".into()));
        }
        let tables: u64 = Layout::new(&spec).tables.iter().sum();
        if tables > MAX_TABLES {
            return Err(("db_size", format!("makes {tables} tables of table_size: at most {MAX_TABLES} (each is a file of the model)")));
        }
        Ok(spec)
    }
}

impl LsmSpec {
    fn record_bytes(&self) -> u64 {
        self.key_bytes + self.value_bytes + RECORD_OVERHEAD
    }

    /// The L0 table files: four without `compaction_thread` (the model compacts L0 at four
    /// in the writer's task), twelve with it (LevelDB's thread compacts L0 when its score is
    /// the highest, and the writers stop at [`L0_STOP`]).
    pub fn l0_files(&self) -> usize {
        if self.compaction_thread {
            L0_STOP
        } else {
            L0_TRIGGER
        }
    }

    /// The records of the database.
    pub fn records(&self) -> u64 {
        self.db_bytes / self.record_bytes()
    }

    /// The default key distribution of the mix (YCSB's `requestdistribution`).
    pub fn default_distribution(&self) -> &'static str {
        if self.mix.letter == 'd' {
            "latest"
        } else {
            "scrambled-zipfian"
        }
    }
}

/// The tables' layout: levels, tables per level, pages of each part of a table.
#[derive(Clone, Debug)]
pub struct Layout {
    pub records: u64,
    /// Data blocks per table, records per data block.
    pub data_blocks: u64,
    pub records_per_block: u64,
    pub filter_pages: u64,
    pub index_pages: u64,
    /// Tables per level, from L1 (levels without tables left out at the end).
    pub tables: Vec<u64>,
    /// Each level's share of the keys, cumulated, from L1 (the last is 1).
    cumulative: Vec<f64>,
    /// A filter's false-positive rate.
    pub false_positive: f64,
    /// The shape of an L0 table: a flushed memtable (`write_buffer_size` of records).
    pub l0: Shape,
    /// The shape of a table of L1 and below.
    main: Shape,
}

/// A table file's parts, in file order: data blocks, filter block, index block, footer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub data_blocks: u64,
    pub filter_pages: u64,
    pub index_pages: u64,
    /// With `unaligned_blocks`: the bytes of the file's parts, each block with its trailer,
    /// laid end to end ([`Bytes`]); `None`: every block starts a page.
    pub bytes: Option<Bytes>,
}

/// A table's parts in bytes, as LevelDB's TableBuilder (table/table_builder.cc) and
/// Footer (table/format.h) lay them out: the data blocks, the filter block (with a filter
/// policy), the metaindex block, the index block, each followed by its 5-byte trailer
/// (kBlockTrailerSize: type and CRC), then the 48-byte footer (Footer::kEncodedLength).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bytes {
    /// A data block with its trailer: its records, its restart array (a restart point every
    /// 16 records, LevelDB's block_restart_interval, 4 bytes each, and their count) and 5.
    pub data_block: u64,
    pub filter: u64,
    pub metaindex: u64,
    pub index: u64,
}

/// LevelDB's kBlockTrailerSize.
const BLOCK_TRAILER: u64 = 5;
/// LevelDB's Footer::kEncodedLength.
const FOOTER: u64 = 48;

/// The pages `len` bytes at byte `offset` span: (first page, pages).
fn span(offset: u64, len: u64) -> (u64, u64) {
    let first = offset / PAGE_SIZE;
    (first, (offset + len.max(1) - 1) / PAGE_SIZE + 1 - first)
}

impl Shape {
    fn of(records: u64, records_per_block: u64, s: &LsmSpec) -> Shape {
        let data_blocks = records.div_ceil(records_per_block).max(1);
        let records = data_blocks * records_per_block;
        let mut shape = Shape {
            data_blocks,
            // No filter policy: TableBuilder writes no filter block (table_builder.cc).
            filter_pages: match s.bloom_bits_per_key {
                0 => 0,
                b => (records * b as u64).div_ceil(8 * PAGE_SIZE).max(1),
            },
            index_pages: (data_blocks * (s.key_bytes + INDEX_ENTRY_OVERHEAD)).div_ceil(PAGE_SIZE).max(1),
            bytes: None,
        };
        if s.unaligned_blocks {
            let restarts = (records_per_block.div_ceil(16) + 1) * 4;
            let b = Bytes {
                data_block: records_per_block * s.record_bytes() + restarts + BLOCK_TRAILER,
                // The filter's bits, a 4-byte offset per 2 KiB of data (FilterBlockBuilder's
                // kFilterBase), the offsets' start and base lg, and the trailer.
                filter: match s.bloom_bits_per_key {
                    0 => 0,
                    bits => (records * bits as u64).div_ceil(8) + 1 + 4 * (data_blocks * PAGE_SIZE).div_ceil(2048) + 5 + BLOCK_TRAILER,
                },
                // Empty, or one entry naming the filter ("filter.leveldb.BuiltinBloomFilter2").
                metaindex: if s.bloom_bits_per_key == 0 { 8 } else { 8 + 3 + 34 + 4 } + BLOCK_TRAILER,
                index: data_blocks * (s.key_bytes + INDEX_ENTRY_OVERHEAD) + 4 + BLOCK_TRAILER,
            };
            shape.filter_pages = b.filter.div_ceil(PAGE_SIZE);
            shape.index_pages = b.index.div_ceil(PAGE_SIZE);
            shape.bytes = Some(b);
        }
        shape
    }
    pub fn pages(&self) -> u64 {
        match self.bytes {
            Some(b) => (self.data_blocks * b.data_block + b.filter + b.metaindex + b.index + FOOTER).div_ceil(PAGE_SIZE),
            None => self.data_blocks + self.filter_pages + self.index_pages + 1,
        }
    }
    /// The file's size in bytes (a page a part without `unaligned_blocks`).
    pub fn file_bytes(&self) -> u64 {
        match self.bytes {
            Some(b) => self.data_blocks * b.data_block + b.filter + b.metaindex + b.index + FOOTER,
            None => self.pages() * PAGE_SIZE,
        }
    }
    /// LevelDB's allowed_seeks of a new table of this shape (VersionSet::Builder::Apply(),
    /// db/version_set.cc, LevelDB 1.23): a seek costs about as much as compacting 16 KiB,
    /// and at least `min` seeks are allowed (LevelDB's 100; `lsm.allowed_seeks_min`).
    pub fn allowed_seeks(&self, min: u64) -> u64 {
        (self.file_bytes() / 16384).max(min)
    }
    /// The pages an open table keeps: its filter and index blocks.
    pub fn meta_pages(&self) -> u64 {
        match self.bytes {
            Some(b) => (b.filter + b.index).div_ceil(PAGE_SIZE).max(1),
            None => self.filter_pages + self.index_pages,
        }
    }
    /// The pages the pread of data block `block` spans (Table::BlockReader(), ReadBlock():
    /// the block and its trailer).
    pub fn data_span(&self, block: u64) -> (u64, u64) {
        match self.bytes {
            Some(b) => span(block * b.data_block, b.data_block),
            None => (block, 1),
        }
    }
    /// The pages of the footer's pread (Table::Open(): the file's last 48 bytes).
    pub fn footer_span(&self) -> (u64, u64) {
        match self.bytes {
            Some(b) => span(self.data_blocks * b.data_block + b.filter + b.metaindex + b.index, FOOTER),
            None => (self.pages() - 1, 1),
        }
    }
    /// The pages of the index block's pread.
    pub fn index_span(&self) -> (u64, u64) {
        match self.bytes {
            Some(b) => span(self.data_blocks * b.data_block + b.filter + b.metaindex, b.index),
            None => (self.data_blocks + self.filter_pages, self.index_pages),
        }
    }
    /// The preads of Table::ReadMeta() with a filter policy: the metaindex block, then the
    /// filter block (aligned: the filter block alone). None without a filter.
    pub fn filter_spans(&self) -> Option<[(u64, u64); 2]> {
        if self.filter_pages == 0 {
            return None;
        }
        Some(match self.bytes {
            Some(b) => {
                let filter = self.data_blocks * b.data_block;
                [span(filter + b.filter, b.metaindex), span(filter, b.filter)]
            }
            None => [(self.data_blocks, self.filter_pages), (self.data_blocks, 0)],
        })
    }
    /// The most pages one pread of the table spans.
    fn largest_read(&self) -> u64 {
        match self.bytes {
            Some(_) => [self.data_span(0).1 + 1, self.index_span().1 + 1, self.filter_pages + 1].into_iter().max().unwrap_or(1),
            None => self.index_pages.max(self.filter_pages),
        }
    }
}

impl Layout {
    pub fn new(s: &LsmSpec) -> Layout {
        let records = s.records();
        // LevelDB's BlockBuilder ends a block once it reaches `block_size`: a block holds
        // ⌈4096 / record⌉ records (a little over 4 KiB; here one page), and a table ends
        // once it reaches `max_file_size`.
        let records_per_block = PAGE_SIZE.div_ceil(s.record_bytes());
        let shape = Shape::of((s.table_bytes / s.record_bytes()).max(1), records_per_block, s);
        let Shape { data_blocks, filter_pages, index_pages, .. } = shape;
        let per_table = data_blocks * records_per_block;
        let l0 = Shape::of((s.write_buffer_bytes / s.record_bytes()).max(1), records_per_block, s);
        let mut tables = Vec::new();
        let mut left = records.div_ceil(per_table);
        let mut cap = s.l1_bytes;
        while left > 0 {
            let t = if tables.len() + 1 == LEVELS - 1 { left } else { (cap / s.table_bytes).max(1).min(left) };
            tables.push(t);
            left -= t;
            cap = cap.saturating_mul(10);
        }
        let total: u64 = tables.iter().sum();
        let mut acc = 0.0;
        let cumulative = tables
            .iter()
            .map(|&t| {
                acc += t as f64 / total as f64;
                acc
            })
            .collect::<Vec<_>>();
        // Without a filter (Table::InternalGet() with no filter_data) every table looked at
        // reads its data block: a "false positive" of 1.
        let false_positive = match s.bloom_bits_per_key {
            0 => 1.0,
            b => {
                let b = b as f64;
                let k = ((b * std::f64::consts::LN_2) as u64).clamp(1, 30) as f64;
                (1.0 - (-k / b).exp()).powf(k)
            }
        };
        Layout { records, data_blocks, records_per_block, filter_pages, index_pages, tables, cumulative, false_positive, l0, main: shape }
    }

    /// The shape of a table of L1 and below.
    pub fn shape(&self) -> Shape {
        self.main
    }

    /// Pages of a table file: data blocks, filter block, index block, footer.
    pub fn table_pages(&self) -> u64 {
        self.shape().pages()
    }

    /// The most pages one read or write of the store moves: a table's index block, or 64 KiB
    /// of a table being written.
    pub fn largest_io(&self) -> u64 {
        [WRITE_PAGES, self.main.largest_read(), self.l0.largest_read()].into_iter().max().unwrap_or(1)
    }

    /// Pages of a table cache slot: the largest open table's filter and index blocks.
    pub fn slot_pages(&self) -> u64 {
        self.shape().meta_pages().max(self.l0.meta_pages())
    }

    /// The level (0-based from L1) holding `key`.
    pub fn level_of(&self, key: u64) -> usize {
        let h = (mix64(key ^ 0x4C53_4D00) >> 11) as f64 / (1u64 << 53) as f64;
        self.cumulative.iter().position(|&c| h < c).unwrap_or(self.cumulative.len() - 1)
    }

    /// The table of `level` whose key range holds `key`, and the data block of it.
    pub fn table_and_block(&self, key: u64, level: usize) -> (u64, u64) {
        let t = self.tables[level] as u128;
        let scaled = key as u128 * t;
        let table = (scaled / self.records as u128) as u64;
        let within = scaled % self.records as u128;
        let block = (within * self.data_blocks as u128 / self.records as u128) as u64;
        (table, block)
    }

    /// Whether the filter of `level`'s table passes `key`, which another level holds: a
    /// Bloom filter's false positive, the same every time for the key and table.
    fn false_positive(&self, key: u64, level: usize) -> bool {
        ((mix64(key.wrapping_add((level as u64 + 1) << 56)) >> 11) as f64 / (1u64 << 53) as f64) < self.false_positive
    }
}

fn mix64(key: u64) -> u64 {
    let h = key.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (h ^ (h >> 31)).wrapping_mul(0x94D0_49BB_1331_11EB)
}

/// The objects an LSM phase touches, as its job declared them.
#[derive(Clone, Debug)]
pub struct LsmObjects {
    /// Per level, the object index of each table.
    pub tables: Vec<Vec<u32>>,
    /// The L0 tables' objects ([`LsmSpec::l0_files`] of them, reused).
    pub l0: Vec<u32>,
    pub wal: u32,
    pub memtable: u32,
    pub block_cache: u32,
    pub table_cache: u32,
}

/// The files (name, pages) and the anonymous regions (name, pages) of an LSM phase.
pub type Declarations = (Vec<(String, u64)>, [(&'static str, u64); 3]);

/// Object names and sizes of an LSM phase, in declaration order: the tables (level by level),
/// the L0 tables, the log, then the anonymous regions (memtable, block cache, table cache).
pub fn declarations(root: &str, s: &LsmSpec, l: &Layout) -> Declarations {
    let mut files = Vec::with_capacity(l.tables.iter().sum::<u64>() as usize + s.l0_files() + 1);
    for (level, &n) in l.tables.iter().enumerate() {
        for t in 0..n {
            files.push((format!("{root}/L{}/{t:06}.ldb", level + 1), l.table_pages()));
        }
    }
    for t in 0..s.l0_files() {
        files.push((format!("{root}/L0/{t:06}.ldb"), l.l0.pages()));
    }
    files.push((format!("{root}/wal.log"), s.write_buffer_bytes / PAGE_SIZE));
    let anon = [
        ("lsm_memtable", s.write_buffer_bytes / PAGE_SIZE),
        ("lsm_block_cache", s.block_cache_bytes / PAGE_SIZE),
        ("lsm_table_cache", table_cache_slots(s, l) * l.slot_pages()),
    ];
    (files, anon)
}

/// Open tables the table cache holds: `max_open_files` less LevelDB's ten, at most every table.
fn table_cache_slots(s: &LsmSpec, l: &Layout) -> u64 {
    (s.max_open_files - NON_TABLE_FILES).min(l.tables.iter().sum::<u64>() + s.l0_files() as u64).max(1)
}

/// LevelDB's kL0_CompactionTrigger: L0 is compacted into L1 once it holds this many tables.
pub const L0_TRIGGER: usize = 4;
/// L0 tables at which LevelDB 1.23 delays each write by 1 ms (kL0_SlowdownWritesTrigger).
pub const L0_SLOWDOWN: usize = 8;
/// L0 tables at which LevelDB 1.23 stops a writer that needs a new memtable
/// (kL0_StopWritesTrigger).
pub const L0_STOP: usize = 12;
/// LevelDB's delay of a write at [`L0_SLOWDOWN`] L0 tables (MakeRoomForWrite():
/// SleepForMicroseconds(1000)).
pub const SLOWDOWN_NS: u64 = 1_000_000;
/// LevelDB's PosixWritableFile buffer (kWritableFileBufferSize): tables are written 64 KiB
/// at a time.
const WRITE_PAGES: u64 = 16;

/// An LSM phase's state: its layout, objects, caches and log position.
#[derive(Clone, Debug)]
pub struct LsmState {
    pub spec: LsmSpec,
    pub layout: Layout,
    pub objects: LsmObjects,
    pub block_cache: AppCache,
    pub table_cache: AppCache,
    advice: Advice,
    /// Bytes written to the log and the memtable since the last flush.
    unflushed: u64,
    /// YCSB's insert counter: inserted keys go past the loaded ones (drawn only by `latest`).
    pub inserted: u64,
    /// The clients insert the key they drew, a loaded one (My-YCSB's workloads: its
    /// ZipfianWorkload and LatestWorkload), not a new key past the loaded ones (YCSB's).
    pub inserts_drawn: bool,
    /// L0 tables holding data (the first `l0_live` of `objects.l0`, oldest first).
    l0_live: usize,
    /// Each table object's file number (LevelDB's): a new one, `next_file_number`, when the
    /// file is deleted, so that the caches' entries of a deleted file are never found again.
    /// Numbered densely, they key the caches' per-file tables (crate::app_cache's `Index`)
    /// without a table per number never used.
    file_number: Vec<u32>,
    next_file_number: u32,
    /// Each level's compaction pointer (VersionSet::compact_pointer_): the next table.
    cursor: Vec<u64>,
    pub flushes: u64,
    pub compactions: u64,
    /// With `seek_compaction`: each table object's seeks left (LevelDB's allowed_seeks).
    allowed_seeks: Vec<u64>,
    /// Seek compactions done (a part of `compactions`).
    pub seek_compactions: u64,
    /// With `compaction_thread`: the work waiting for it.
    bg: Option<Background>,
    /// Each level's size compactions owed to the level below ([`LsmState::push_down`]).
    owed: Vec<u64>,
    /// The memtable's generation: memtables begun before it ([`Placement`]).
    generation: u64,
    /// Where the written keys' newest versions lie ([`Placement`]).
    pub placement: Placement,
}

impl LsmState {
    pub fn new(spec: &LsmSpec, layout: Layout, objects: LsmObjects, advice: Advice) -> LsmState {
        let block_cache = AppCache::new(&AppCacheSpec {
            slots: spec.block_cache_bytes / PAGE_SIZE,
            block_pages: 1,
            slot_pages: 1,
            policy: AppPolicy::Lru,
            shared: None,
            miss_think_ns: 0,
        });
        let table_cache = AppCache::new(&AppCacheSpec {
            slots: table_cache_slots(spec, &layout),
            block_pages: layout.slot_pages(),
            slot_pages: layout.slot_pages(),
            policy: AppPolicy::Lru,
            shared: None,
            miss_think_ns: 0,
        });
        let max_object = objects.tables.iter().flatten().chain(&objects.l0).copied().max().unwrap_or(0);
        let cursor = vec![0; layout.tables.len()];
        let layout_levels = layout.tables.len();
        let mut allowed_seeks = vec![0; max_object as usize + 1];
        if spec.seek_compaction {
            for &o in objects.tables.iter().flatten() {
                allowed_seeks[o as usize] = layout.shape().allowed_seeks(spec.allowed_seeks_min);
            }
            for &o in &objects.l0 {
                allowed_seeks[o as usize] = layout.l0.allowed_seeks(spec.allowed_seeks_min);
            }
        }
        LsmState {
            spec: spec.clone(),
            layout,
            objects,
            block_cache,
            table_cache,
            advice,
            unflushed: 0,
            inserted: 0,
            inserts_drawn: false,
            l0_live: 0,
            file_number: (0..=max_object).collect(),
            next_file_number: max_object + 1,
            cursor,
            flushes: 0,
            compactions: 0,
            allowed_seeks,
            seek_compactions: 0,
            bg: spec.compaction_thread.then(Background::default),
            owed: vec![0; layout_levels],
            generation: 0,
            placement: Placement::default(),
        }
    }

    /// The table cache's key of a table: its file number.
    fn table_key(&self, object: u32) -> u64 {
        self.file_number[object as usize] as u64
    }

    /// The block cache's key of a data block: its file's number and the block (crate::app_cache's
    /// key of a file's block).
    fn block_key(&self, object: u32, block: u64) -> u64 {
        app_cache::key(self.file_number[object as usize], block)
    }

    fn read(&self, object: u32, page: u64, npages: u64) -> Op {
        Op {
            object,
            page,
            npages: npages as u32,
            write: false,
            access: Access::Buffered,
            advice: self.advice,
            fill: false,
            think_ns: 0,
            due: None,
            more: false,
        }
    }

    fn anon(object: u32, page: u64, npages: u64, write: bool) -> Op {
        Op { object, page, npages: npages as u32, write, access: Access::Anon, advice: Advice::Normal, fill: false, think_ns: 0, due: None, more: false }
    }

    /// The table's open entry: a load of its slot in the table cache, or (not open) its
    /// footer, index block and filter block read, then stored into a slot.
    fn open_table(&mut self, object: u32, shape: Shape, out: &mut VecDeque<Op>) {
        let slot_pages = self.layout.slot_pages();
        let meta = shape.meta_pages();
        match self.table_cache.lookup(self.table_key(object)) {
            Lookup::Hit(slot) => out.push_back(Self::anon(self.objects.table_cache, slot as u64 * slot_pages, meta, false)),
            Lookup::Miss(slot) => {
                let (page, n) = shape.footer_span();
                out.push_back(self.read(object, page, n));
                let (page, n) = shape.index_span();
                out.push_back(self.read(object, page, n));
                // Table::ReadMeta() reads nothing more without a filter policy.
                for (page, n) in shape.filter_spans().into_iter().flatten().filter(|&(_, n)| n > 0) {
                    out.push_back(self.read(object, page, n));
                }
                out.push_back(Self::anon(self.objects.table_cache, slot as u64 * slot_pages, meta, true));
            }
        }
    }

    /// A data block through the block cache.
    fn data_block(&mut self, object: u32, shape: Shape, block: u64, out: &mut VecDeque<Op>) {
        match self.block_cache.lookup(self.block_key(object, block)) {
            Lookup::Hit(slot) => out.push_back(Self::anon(self.objects.block_cache, slot as u64, 1, false)),
            Lookup::Miss(slot) => {
                let (page, n) = shape.data_span(block);
                out.push_back(self.read(object, page, n));
                out.push_back(Self::anon(self.objects.block_cache, slot as u64, 1, true));
            }
        }
    }

    fn memtable_page(&self, key: u64) -> u64 {
        mix64(key) % (self.spec.write_buffer_bytes / PAGE_SIZE)
    }

    /// A point get of `key` (DBImpl::Get(), Version::Get()): the memtable, then the L0
    /// tables newest first, then each level down to the first that holds a version of the
    /// key: where its last write put it ([`Placement`]), or its own level.
    pub fn get(&mut self, key: u64, out: &mut VecDeque<Op>) {
        out.push_back(Self::anon(self.objects.memtable, self.memtable_page(key), 1, false));
        let key = key % self.layout.records;
        let (l0_from, stop) = match self.placement.find(key, self.l0_live) {
            Found::Memory => return,
            Found::L0(i) => (i, None),
            Found::Level(level) => (0, Some(level)),
            Found::Home => (0, Some(self.layout.level_of(key))),
        };
        self.seek_l0(key, l0_from, stop.is_none(), false, out);
        let files = self.l0_live - l0_from + stop.map_or(0, |l| l + 1);
        let Some(stop) = stop else {
            self.charge_seek(key, files, out);
            return;
        };
        let shape = self.layout.shape();
        for level in 0..=stop {
            let (table, block) = self.layout.table_and_block(key, level);
            let object = self.objects.tables[level][table as usize];
            self.open_table(object, shape, out);
            if level == stop || self.layout.false_positive(key, level) {
                self.data_block(object, shape, block, out);
            }
        }
        self.charge_seek(key, files, out);
    }

    /// The L0 tables a get or a scan looks at, newest first down to the one of index `to`:
    /// every one overlaps the key. A get reads a data block where the filter passes (a false
    /// positive) and in table `to` if the key is there (`in_to`); a scan's iterator seeks
    /// every table's block.
    fn seek_l0(&mut self, key: u64, to: usize, in_to: bool, scan: bool, out: &mut VecDeque<Op>) {
        let shape = self.layout.l0;
        for i in (to..self.l0_live).rev() {
            let object = self.objects.l0[i];
            self.open_table(object, shape, out);
            if scan || (i == to && in_to) || self.layout.false_positive(key, LEVELS + i) {
                let block = (key as u128 * shape.data_blocks as u128 / self.layout.records as u128) as u64;
                self.data_block(object, shape, block, out);
            }
        }
    }

    /// A scan of `len` records from `key` (My-YCSB's do_scan(): a DB iterator seeked to the
    /// key, then `Next()` `len` times), as LevelDB 1.23's iterators read blocks
    /// (db/db_iter.cc, table/merger.cc, table/two_level_iterator.cc): the merging iterator
    /// seeks every level, so each level's iterator reads the data block holding its first
    /// record at or after the key; each `Next()` advances only the level that yielded the
    /// record, which reads its next block once it steps past a block's last record, and its
    /// next table once past a table's. After the scan every level's iterator rests on its
    /// first record at or after the key `len` places on, so a level reads the blocks its
    /// records span from the key's place to that one (not a count rounded from the key's
    /// block start): in key coordinates, the blocks from the key's to the end key's.
    pub fn scan(&mut self, key: u64, len: u64, out: &mut VecDeque<Op>) {
        out.push_back(Self::anon(self.objects.memtable, self.memtable_page(key), 1, false));
        let key = key % self.layout.records;
        self.seek_l0(key, 0, false, true, out);
        let shape = self.layout.shape();
        let (records, data_blocks) = (self.layout.records as u128, self.layout.data_blocks);
        let end = (key as u128 + len as u128).min(records - 1);
        for level in 0..self.layout.tables.len() {
            let tables = self.layout.tables[level];
            // A key's block among the level's blocks, tables in order (table_and_block()'s
            // table and block as one index).
            let at = |k: u128| (k * tables as u128 * data_blocks as u128 / records) as u64;
            let (first, last) = (at(key as u128), at(end).min(tables * data_blocks - 1));
            let mut open = None;
            for g in first..=last {
                let (table, block) = (g / data_blocks, g % data_blocks);
                let object = self.objects.tables[level][table as usize];
                if open != Some(table) {
                    self.open_table(object, shape, out);
                    open = Some(table);
                }
                self.data_block(object, shape, block, out);
            }
        }
    }

    /// A write (update, insert) of `key` (`None`: a key past the loaded ones, which no get
    /// asks for): appended to the log, stored into the memtable ([`Placement::write`]); a
    /// full memtable is flushed (DBImpl::MakeRoomForWrite()).
    ///
    /// With `compaction_thread` the room is made before the write, as LevelDB's
    /// MakeRoomForWrite() makes it: a full memtable becomes the one waiting for the thread,
    /// in a new log, unless one waits already ([`LsmState::write_stalled`]: the caller first
    /// waits). Without it the writer flushes a memtable it filled.
    pub fn write(&mut self, key: Option<u64>, out: &mut VecDeque<Op>) {
        if let Some(bg) = self.bg.as_mut().filter(|_| self.unflushed >= self.spec.write_buffer_bytes) {
            bg.flushes_waiting += 1;
            bg.most_flushes_waiting = bg.most_flushes_waiting.max(bg.flushes_waiting);
            self.new_log(out);
        }
        if let Some(key) = key {
            self.placement.write(key % self.layout.records, self.generation);
        }
        let page = (self.unflushed / PAGE_SIZE) % (self.spec.write_buffer_bytes / PAGE_SIZE);
        self.unflushed += self.spec.record_bytes();
        out.push_back(Op { write: true, ..self.read(self.objects.wal, page, 1) });
        out.push_back(Self::anon(self.objects.memtable, page, 1, true));
        if self.bg.is_none() && self.unflushed >= self.spec.write_buffer_bytes {
            self.flush(out);
        }
    }

    /// One YCSB operation `kind` on `key`, drawn by the caller (`rng`: a scan's length).
    /// An insert writes `key` when the clients insert the key they drew
    /// ([`LsmState::inserts_drawn`]), else a key past the loaded ones.
    pub fn operation(&mut self, kind: OpKind, key: u64, rng: &mut Rng, out: &mut VecDeque<Op>) {
        match kind {
            OpKind::Read => self.get(key, out),
            OpKind::Update => {
                if self.spec.update_reads {
                    self.get(key, out);
                }
                self.write(Some(key), out);
            }
            OpKind::Insert => {
                self.inserted += 1;
                self.write(self.inserts_drawn.then_some(key), out);
            }
            OpKind::Scan => {
                let len = match self.spec.scan_length {
                    Some(n) => n,
                    None => 1 + rng.below(self.spec.max_scan),
                };
                let from = out.len();
                self.scan(key, len, out);
                if let Some(advice) = self.spec.scan_advice {
                    out.iter_mut().skip(from).filter(|o| o.access == Access::Buffered).for_each(|o| o.advice = advice);
                }
            }
            OpKind::ReadModifyWrite => {
                self.get(key, out);
                self.write(Some(key), out);
            }
            OpKind::Put => self.write(Some(key), out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(db: &str, ycsb: &str) -> LsmSpec {
        LsmToml { db_size: Some(db.into()), ycsb: Some(ycsb.into()), ..Default::default() }.resolve().unwrap()
    }

    /// A state whose objects are numbered as `declarations` gives them.
    fn state(s: &LsmSpec) -> LsmState {
        let layout = Layout::new(s);
        let mut next = 0u32;
        let tables = layout
            .tables
            .iter()
            .map(|&n| {
                (0..n)
                    .map(|_| {
                        next += 1;
                        next - 1
                    })
                    .collect()
            })
            .collect();
        let l0 = (next..next + s.l0_files() as u32).collect();
        let next = next + s.l0_files() as u32;
        let objects = LsmObjects { tables, l0, wal: next, memtable: next + 1, block_cache: next + 2, table_cache: next + 3 };
        LsmState::new(s, layout, objects, Advice::Normal)
    }

    #[test]
    fn the_levels_follow_leveldbs_sizes() {
        let s = spec("100G", "c");
        let l = Layout::new(&s);
        // 10 MiB, 100 MiB, 1000 MiB, 10000 MiB of 2 MiB tables, the rest in L5.
        assert_eq!(&l.tables[..4], &[5, 50, 500, 5000]);
        assert_eq!(l.tables.len(), 5);
        let bytes: u64 = l.tables.iter().sum::<u64>() * (2 << 20);
        assert!((100 << 30..(100 << 30) + (4 << 20) * 10).contains(&bytes), "{bytes}");
        // 1036-byte records: 4 a block, 506 blocks a table; a 10-bit Bloom filter per key.
        assert_eq!((l.records_per_block, l.data_blocks, l.filter_pages), (4, 506, 1));
        assert!((l.false_positive - 0.0084).abs() < 0.0005, "{}", l.false_positive);
        // The levels' shares of the keys follow their tables.
        let n = 200_000u64;
        let in_l5 = (0..n).filter(|&k| l.level_of(k * 7919) == 4).count() as f64 / n as f64;
        let want = l.tables[4] as f64 / l.tables.iter().sum::<u64>() as f64;
        assert!((in_l5 - want).abs() < 0.01, "{in_l5} vs {want}");
    }

    #[test]
    fn a_get_finds_a_written_key_in_memory_then_in_its_l0_table_then_a_level_down() {
        // LevelDB 1.23: DBImpl::Get() looks at the memtables, Version::Get() at the L0
        // tables newest first, then at each level, and stops where the key is.
        let s = spec("1G", "a");
        let mut st = state(&s);
        // Below L2, in an L2 table far from the first ones the first compactions push down.
        let tables_l2 = st.layout.tables[1];
        let key = (0..st.layout.records).find(|&k| st.layout.level_of(k) >= 2 && st.layout.table_and_block(k, 1).0 >= tables_l2 * 4 / 5).unwrap();
        // The tables a get reads from, in order.
        let data_reads = |st: &LsmState, ops: &VecDeque<Op>| -> Vec<u32> {
            let tables: Vec<u32> = st.objects.tables.iter().flatten().chain(&st.objects.l0).copied().collect();
            let mut read: Vec<u32> = ops.iter().filter(|o| o.access == Access::Buffered && !o.write && tables.contains(&o.object)).map(|o| o.object).collect();
            read.dedup();
            read
        };
        let mut ops = VecDeque::new();
        st.write(Some(key), &mut ops);
        let mut get = VecDeque::new();
        st.get(key, &mut get);
        assert!(get.iter().all(|o| o.access == Access::Anon), "in the memtable: no table looked at");
        while st.flushes == 0 {
            st.write(None, &mut ops);
        }
        get.clear();
        st.get(key, &mut get);
        assert_eq!(data_reads(&st, &get), vec![st.objects.l0[0]], "in its L0 table, and no further");
        while st.compactions == 0 {
            st.write(None, &mut ops);
        }
        get.clear();
        st.get(key, &mut get);
        let (table, _) = st.layout.table_and_block(key, 1);
        assert_eq!(st.placement.find(key, st.l0_live), Found::Level(1), "L0's compaction, then its L1 table's, carried it to L2");
        assert_eq!(data_reads(&st, &get).last(), Some(&st.objects.tables[1][table as usize]), "the get stops at L2, above its own level");
        assert!(data_reads(&st, &get).iter().all(|o| !st.objects.tables[2..].iter().flatten().any(|t| t == o)));
    }

    #[test]
    fn a_get_reads_the_filter_index_and_data_block_of_the_right_table() {
        let s = spec("1G", "c");
        let mut st = state(&s);
        let l = st.layout.clone();
        // A key of the last level: every level above is looked at, the last read.
        let key = (0..).find(|&k| l.level_of(k) == l.tables.len() - 1 && (0..l.tables.len() - 1).all(|lv| !l.false_positive(k, lv))).unwrap();
        let mut ops = VecDeque::new();
        st.get(key, &mut ops);
        let ops: Vec<Op> = ops.into();
        assert_eq!((ops[0].object, ops[0].access), (st.objects.memtable, Access::Anon), "the memtable first");
        let mut i = 1;
        for level in 0..l.tables.len() {
            // The table whose key range holds the key: [t·N/T, (t+1)·N/T).
            let t = l.tables[level];
            let table = (0..t)
                .find(|&j| (j as u128 * l.records as u128).div_ceil(t as u128) <= key as u128 && key as u128 * t as u128 / l.records as u128 == j as u128)
                .unwrap();
            let object = st.objects.tables[level][table as usize];
            let reads: Vec<(u32, u64, u32)> = ops[i..i + 3].iter().map(|o| (o.object, o.page, o.npages)).collect();
            let footer = l.table_pages() - 1;
            assert_eq!(
                reads,
                vec![(object, footer, 1), (object, l.data_blocks + l.filter_pages, l.index_pages as u32), (object, l.data_blocks, l.filter_pages as u32)],
                "level {level}: footer, index and filter of table {table}"
            );
            assert!(ops[i..i + 3].iter().all(|o| o.access == Access::Buffered && !o.write));
            assert_eq!((ops[i + 3].object, ops[i + 3].write), (st.objects.table_cache, true), "the open table is kept");
            i += 4;
        }
        // Then the data block of the key's table at its level.
        let last = l.tables.len() - 1;
        let (table, block) = l.table_and_block(key, last);
        assert!(block < l.data_blocks);
        let object = st.objects.tables[last][table as usize];
        assert_eq!((ops[i].object, ops[i].page, ops[i].access), (object, block, Access::Buffered));
        assert_eq!((ops[i + 1].object, ops[i + 1].write), (st.objects.block_cache, true));
        assert_eq!(ops.len(), i + 2);

        // The same get again: the tables are open, the block cached: no file is read.
        let mut again = VecDeque::new();
        st.get(key, &mut again);
        assert!(again.iter().all(|o| o.access == Access::Anon && !o.write), "{again:?}");
        assert_eq!(again.len(), 1 + l.tables.len() + 1);
    }

    #[test]
    fn the_block_cache_filters_re_reads() {
        let s = spec("1G", "c");
        let mut st = state(&s);
        let mut rng = Rng::new(1);
        let mut ops = VecDeque::new();
        let keys: Vec<u64> = (0..500).map(|_| rng.below(st.layout.records)).collect();
        for &k in &keys {
            st.get(k, &mut ops);
        }
        let first = ops.iter().filter(|o| o.access == Access::Buffered && o.page < st.layout.data_blocks).count();
        ops.clear();
        for &k in &keys {
            st.get(k, &mut ops);
        }
        // 500 blocks fit the 8 MiB cache: the second round reads no data block.
        assert!(first >= 500);
        assert_eq!(ops.iter().filter(|o| o.access == Access::Buffered).count(), 0);
    }

    #[test]
    fn a_scan_reads_consecutive_blocks_of_each_level() {
        let s = spec("1G", "e");
        let mut st = state(&s);
        let mut ops = VecDeque::new();
        st.scan(12_345, 100, &mut ops);
        // The largest level holds most of the 100 records, 4 a block.
        let t = &st.layout.tables;
        let big = (0..t.len()).max_by_key(|&l| t[l]).unwrap();
        let (table, block) = st.layout.table_and_block(12_345, big);
        let object = st.objects.tables[big][table as usize];
        let pages: Vec<u64> = ops.iter().filter(|o| o.object == object && o.page < st.layout.data_blocks).map(|o| o.page).collect();
        let share = t[big] as f64 / t.iter().sum::<u64>() as f64;
        assert!(pages.len() as f64 >= (100.0 * share / 4.0).floor(), "{share}: {pages:?}");
        assert_eq!(pages, (block..block + pages.len() as u64).collect::<Vec<_>>());
    }

    fn my_ycsb(db: &str, f: impl FnOnce(&mut LsmToml)) -> LsmSpec {
        let mut t = LsmToml {
            db_size: Some(db.into()),
            ycsb: Some("e".into()),
            key_size: Some("16".into()),
            value_size: Some("200".into()),
            bloom_bits_per_key: Some(0),
            ..Default::default()
        };
        f(&mut t);
        t.resolve().unwrap()
    }

    #[test]
    fn a_scan_reads_the_blocks_its_records_span_from_the_keys_place() {
        // LevelDB's iterator reads, in each level, the block holding the first record at or
        // after the key, then every block up to the one holding its first record past the
        // scan: about len·share/records_per_block + 1 blocks, whatever the key's place in its
        // block (a count rounded up from the block's start reads one fewer).
        let s = my_ycsb("1G", |_| ());
        let l = Layout::new(&s);
        let big = (0..l.tables.len()).max_by_key(|&v| l.tables[v]).unwrap();
        let span = 100.0 * l.tables[big] as f64 * l.data_blocks as f64 / l.records as f64;
        let mut rng = Rng::new(5);
        let (n, mut total) = (2000, 0usize);
        for _ in 0..n {
            let key = rng.below(l.records - 200);
            // A store with empty caches, so every block the scan touches is read.
            let mut st = state(&s);
            let mut ops = VecDeque::new();
            st.scan(key, 100, &mut ops);
            let objects = &st.objects.tables[big];
            let level: Vec<u64> = ops
                .iter()
                .filter(|o| o.access == Access::Buffered && o.page < l.data_blocks && objects.contains(&o.object))
                .map(|o| objects.iter().position(|&x| x == o.object).unwrap() as u64 * l.data_blocks + o.page)
                .collect();
            let (t, b) = l.table_and_block(key, big);
            assert_eq!(level[0], t * l.data_blocks + b, "the seek reads the key's block");
            assert!(level.windows(2).all(|w| w[1] == w[0] + 1), "then the next ones in order");
            total += level.len();
        }
        let mean = total as f64 / n as f64;
        assert!((mean - (span + 1.0)).abs() < 0.1, "{mean} blocks a scan in the largest level, {span:.2} + 1 expected");
    }

    #[test]
    fn my_ycsbs_scans_read_scan_length_records_every_time() {
        // My-YCSB's ycsb_e.yaml: `scan_length: 100`, which every scan operation takes
        // (core/workload.cpp), where YCSB draws 1..=maxscanlength.
        let fixed = my_ycsb("256M", |t| t.scan_length = Some(100));
        let drawn = my_ycsb("256M", |_| ());
        let mut rng = Rng::new(9);
        let mut differs = 0;
        for key in (0..50u64).map(|i| i * 7_919) {
            let scan = |spec: &LsmSpec, rng: &mut Rng| {
                let mut ops = VecDeque::new();
                state(spec).operation(spec.mix.kind(0.5), key, rng, &mut ops);
                ops
            };
            let mut want = VecDeque::new();
            state(&fixed).scan(key, 100, &mut want);
            assert_eq!(scan(&fixed, &mut rng), want, "key {key}: 100 records");
            differs += (scan(&drawn, &mut rng) != want) as u32;
        }
        assert!(differs > 40, "YCSB's drawn lengths differ from 100: {differs} of 50");
        let e = LsmToml { db_size: Some("1G".into()), scan_length: Some(100), max_scan: Some(50), ..Default::default() }.resolve().unwrap_err();
        assert_eq!(e.0, "scan_length");
        let e = LsmToml { db_size: Some("1G".into()), scan_length: Some(0), ..Default::default() }.resolve().unwrap_err();
        assert_eq!(e.0, "scan_length");
    }

    #[test]
    fn my_ycsbs_update_is_a_read_modify_write() {
        // leveldb_client.cpp: do_update() is do_read_modify_write(), a Get then a Put.
        let spec = |reads| LsmToml { db_size: Some("256M".into()), ycsb: Some("a".into()), update_reads: reads, ..Default::default() }.resolve().unwrap();
        let mut rng = Rng::new(3);
        // YCSB-A's updates are u in [0.5, 1).
        let ops = |s: &LsmSpec, rng: &mut Rng| {
            let mut ops = VecDeque::new();
            state(s).operation(s.mix.kind(0.7), 4_242, rng, &mut ops);
            ops
        };
        let (plain, rmw) = (ops(&spec(None), &mut rng), ops(&spec(Some(true)), &mut rng));
        let mut get = VecDeque::new();
        state(&spec(Some(true))).get(4_242, &mut get);
        assert!(plain.iter().all(|o| o.write), "YCSB's update only writes: {plain:?}");
        assert_eq!(Vec::from(rmw), get.into_iter().chain(plain).collect::<Vec<_>>(), "the get, then the same write");
    }

    #[test]
    fn a_bad_lsm_table_is_refused_by_its_key() {
        let t = |f: &dyn Fn(&mut LsmToml)| {
            let mut t = LsmToml { db_size: Some("1G".into()), ..Default::default() };
            f(&mut t);
            t.resolve().map(|_| ()).map_err(|e| e.0)
        };
        assert_eq!(t(&|t| t.db_size = None), Err("db_size"));
        assert_eq!(t(&|t| t.ycsb = Some("g".into())), Err("ycsb"));
        assert_eq!(t(&|t| t.ycsb = Some("workloadb".into())), Ok(()));
        assert_eq!(t(&|t| t.max_open_files = Some(10)), Err("max_open_files"));
        assert_eq!(t(&|t| t.db_size = Some("1k".into())), Err("db_size"));
        assert_eq!(t(&|t| t.table_size = Some("4k".into())), Err("table_size"));
        assert_eq!(t(&|t| t.table_size = Some("16k".into())), Ok(()), "1/128 of LevelDB's 2 MiB tables");
        assert_eq!(t(&|t| t.bloom_bits_per_key = Some(65)), Err("bloom_bits_per_key"));
        assert_eq!(t(&|t| t.bloom_bits_per_key = Some(0)), Ok(()));
        assert_eq!(t(&|t| t.key_size = Some("0".into())), Err("key_size"));
        assert_eq!(t(&|t| t.key_size = Some("65k".into())), Err("key_size"));
        assert_eq!(t(&|t| t.key_size = Some("16".into())), Ok(()));
        assert_eq!(t(&|t| t.scan_fadvise = Some(Advice::Sequential)), Err("scan_fadvise"), "YCSB-C has no scans");
        assert_eq!(
            t(&|t| {
                t.scan_fadvise = Some(Advice::Sequential);
                t.scan_threads = Some(1);
            }),
            Ok(())
        );
    }

    #[test]
    fn my_ycsbs_records_are_a_16_byte_key_and_a_200_byte_value() {
        let s = LsmToml { db_size: Some("1G".into()), key_size: Some("16".into()), value_size: Some("200".into()), ..Default::default() }.resolve().unwrap();
        let l = Layout::new(&s);
        // 16 + 200 + 12 = 228 bytes a record: a 4 KiB block ends at its 18th.
        assert_eq!(l.records_per_block, 18);
        assert_eq!(l.records, (1u64 << 30) / 228);
    }

    #[test]
    fn without_a_filter_a_get_reads_a_data_block_in_every_level_down_to_the_keys() {
        // LevelDB's default Options (filter_policy = nullptr), as cache_ext's My-YCSB opens
        // its store: Version::Get() looks in each level's table whose range holds the key,
        // and Table::InternalGet() reads that table's data block, found or not.
        let s = LsmToml { db_size: Some("1G".into()), bloom_bits_per_key: Some(0), ..Default::default() }.resolve().unwrap();
        let mut st = state(&s);
        let l = st.layout.clone();
        assert_eq!((l.filter_pages, l.false_positive), (0, 1.0));
        let last = l.tables.len() - 1;
        let key = (0..).find(|&k| l.level_of(k) == last).unwrap();
        let mut ops = VecDeque::new();
        st.get(key, &mut ops);
        let ops: Vec<Op> = ops.into();
        for level in 0..=last {
            let (table, block) = l.table_and_block(key, level);
            let object = st.objects.tables[level][table as usize];
            let reads: Vec<(u64, u32)> = ops.iter().filter(|o| o.object == object && o.access == Access::Buffered).map(|o| (o.page, o.npages)).collect();
            // Table::Open(): the footer and the index block, no filter block; then the data block.
            assert_eq!(reads, vec![(l.table_pages() - 1, 1), (l.data_blocks, l.index_pages as u32), (block, 1)], "level {level}");
        }
        let file_reads = ops.iter().filter(|o| o.access == Access::Buffered).count();
        assert_eq!(file_reads, 3 * (last + 1), "nothing else is read");
        // With the default 10-bit filter the same key reads one data block, at its level
        // (unless a filter errs).
        let mut with = state(&spec("1G", "c"));
        let mut ops = VecDeque::new();
        with.get(key, &mut ops);
        let data = ops.iter().filter(|o| o.access == Access::Buffered && o.npages == 1 && o.page < with.layout.data_blocks).count();
        assert!(data <= 2, "{data}");
    }

    #[test]
    fn unaligned_blocks_a_pread_spans_the_pages_of_the_blocks_bytes() {
        // LevelDB writes blocks end to end (a block of just over 4 KiB, then its 5-byte
        // trailer), so ReadBlock()'s pread of a data block starts inside a page and spans two;
        // a table's index block and footer share its last page. The paper's records and
        // pagelab's 1/32 tables (ycsb-paper.toml): 18 records of 228 bytes, 12 bytes of
        // restarts, 5 of trailer: 4,121 bytes a block, 16 blocks a 64 KiB table.
        let s = my_ycsb("3200M", |t| {
            t.ycsb = Some("c".into());
            t.table_size = Some("64K".into());
            t.l1_size = Some("320K".into());
            t.unaligned_blocks = Some(true);
        });
        let l = Layout::new(&s);
        let shape = l.shape();
        let b = shape.bytes.expect("unaligned");
        assert_eq!((l.records_per_block, b.data_block, shape.data_blocks), (18, 4121, 16));
        // 16 blocks (65,936 bytes), an empty metaindex (13), an index of 16 entries of 28 bytes
        // and its restart count and trailer (457), the footer (48): 66,454 bytes, 17 pages.
        assert_eq!(shape.pages(), 17);
        assert_eq!((shape.footer_span(), shape.index_span()), ((16, 1), (16, 1)));
        let spans: Vec<(u64, u64)> = (0..shape.data_blocks).map(|i| shape.data_span(i)).collect();
        assert_eq!(spans[0], (0, 2), "block 0: bytes 0..4121");
        assert_eq!(spans[1], (1, 2), "block 1: bytes 4121..8242");
        assert_eq!(spans[15], (15, 2), "block 15: bytes 61815..65936");
        assert!(spans.iter().all(|&(_, n)| n == 2), "{spans:?}");
        // A get reads them so: footer and index of each table it opens, the key's block.
        let mut st = state(&s);
        let last = l.tables.len() - 1;
        let key = (0..).find(|&k| l.level_of(k) == last).unwrap();
        let mut ops = VecDeque::new();
        st.get(key, &mut ops);
        let (table, block) = l.table_and_block(key, last);
        let object = st.objects.tables[last][table as usize];
        let reads: Vec<(u64, u32)> = ops.iter().filter(|o| o.object == object && o.access == Access::Buffered).map(|o| (o.page, o.npages)).collect();
        assert_eq!(reads, vec![(16, 1), (16, 1), (spans[block as usize].0, 2)]);
        // The aligned layout (the default) keeps a page a block.
        let aligned = Layout::new(&my_ycsb("3200M", |t| t.table_size = Some("64K".into())));
        assert_eq!((aligned.shape().bytes, aligned.table_pages(), aligned.shape().data_span(3)), (None, 18, (3, 1)));
    }

    #[test]
    fn seek_compaction_compacts_the_first_table_a_get_consults_after_its_allowed_seeks() {
        // LevelDB 1.23 (db/version_set.cc): a table starts with max(100, size / 16 KiB)
        // allowed seeks; a get that consults a second table charges the first, and at zero
        // that table is compacted with the tables below it that its key range overlaps.
        let spec = |on| {
            my_ycsb("256M", |t| {
                t.ycsb = Some("c".into());
                t.seek_compaction = on;
            })
        };
        let (on, off) = (spec(Some(true)), spec(None));
        assert!(!off.seek_compaction, "off by default");
        let (mut st, mut plain) = (state(&on), state(&off));
        // Keys whose records lie below L1 and share one L1 table: each get charges it.
        let layout = st.layout.clone();
        let mut keys = (0..layout.records).filter(|&k| layout.level_of(k) >= 1 && layout.table_and_block(k, 0).0 == 0);
        let first = st.objects.tables[0][0];
        let allowed = st.layout.shape().allowed_seeks(100);
        assert_eq!((st.layout.shape().pages(), allowed), (516, 129), "a 2 MiB table, its index block and footer: 516 pages");
        let truncated = |ops: &VecDeque<Op>, o: u32| ops.iter().any(|op| op.object == o && op.access == Access::Truncate);
        for i in 1..=allowed {
            let key = keys.next().unwrap();
            let (mut ops, mut plain_ops) = (VecDeque::new(), VecDeque::new());
            st.get(key, &mut ops);
            plain.get(key, &mut plain_ops);
            assert!(!truncated(&plain_ops, first), "no seek compactions when off");
            if i < allowed {
                assert_eq!(ops, plain_ops, "get {i}: the same reads until the table's seeks run out");
                continue;
            }
            // The last allowed get compacts the L1 table and the L2 tables under its range: read,
            // deleted and written anew, each with its allowed seeks reset.
            assert_eq!(st.seek_compactions, 1);
            let (lo, hi) = (0, st.layout.tables[1].div_ceil(st.layout.tables[0]));
            for &o in std::iter::once(&first).chain(&st.objects.tables[1][lo as usize..hi as usize]) {
                assert!(truncated(&ops, o), "table {o} deleted");
                assert!(ops.iter().any(|op| op.object == o && op.write), "table {o} written anew");
                assert_eq!(st.allowed_seeks[o as usize], allowed);
            }
            assert!(!truncated(&ops, st.objects.tables[0][1]), "the other L1 tables stay");
        }
        // A key in L1 itself consults one table: nothing charged.
        let l1_key = (0..).find(|&k| st.layout.level_of(k) == 0 && st.layout.table_and_block(k, 0).0 == 0).unwrap();
        st.get(l1_key, &mut VecDeque::new());
        assert_eq!(st.allowed_seeks[first as usize], allowed);
    }

    #[test]
    fn with_a_compaction_thread_a_get_marks_the_table_and_the_thread_compacts_it() {
        // LevelDB 1.23: UpdateStats() marks the table whose seeks ran out (one at a time,
        // Version::file_to_compact_); BackgroundCompaction() compacts it on its own thread.
        let spec = my_ycsb("256M", |t| {
            t.ycsb = Some("c".into());
            t.seek_compaction = Some(true);
            t.compaction_thread = Some(true);
        });
        let mut st = state(&spec);
        let layout = st.layout.clone();
        let keys: Vec<u64> = (0..layout.records).filter(|&k| layout.level_of(k) >= 1 && layout.table_and_block(k, 0).0 == 0).take(200).collect();
        let first = st.objects.tables[0][0];
        let allowed = layout.shape().allowed_seeks(spec.allowed_seeks_min) as usize;
        let truncated = |ops: &VecDeque<Op>, o: u32| ops.iter().any(|op| op.object == o && op.access == Access::Truncate);
        let mut idle = VecDeque::new();
        assert!(!st.background(&mut idle) && idle.is_empty(), "nothing to do before the seeks run out");
        for &key in &keys[..allowed + 5] {
            let mut ops = VecDeque::new();
            st.get(key, &mut ops);
            let file_writes = ops.iter().filter(|o| o.write && o.access != Access::Anon).count();
            assert!(!truncated(&ops, first) && file_writes == 0, "the get compacts nothing itself");
        }
        assert_eq!(st.seek_compactions, 0);
        let mut work = VecDeque::new();
        assert!(st.background(&mut work), "the marked table is the thread's work");
        assert_eq!(st.seek_compactions, 1);
        assert!(truncated(&work, first) && work.iter().any(|op| op.object == first && op.write), "read, deleted and written anew");
        assert_eq!(st.allowed_seeks[first as usize], allowed as u64);
        // Its bytes cascade down to the last level, one compaction a piece of work (a flush
        // could go between them), and then the thread has nothing left: one mark, one
        // seek compaction.
        let last = st.layout.tables.len() - 1;
        let (mut cascade, mut pieces) = (VecDeque::new(), 0);
        while st.background(&mut cascade) {
            pieces += 1;
        }
        assert!(last >= 2 && st.objects.tables[last].iter().any(|&o| truncated(&cascade, o)), "its bytes cascade down to the last level");
        assert_eq!(pieces, last - 1, "a compaction from each level from L2 on");
    }

    #[test]
    fn the_thread_compacts_the_level_with_the_highest_score_first() {
        // LevelDB 1.23's VersionSet::Finalize() and PickCompaction(): L0 scores its tables
        // over four, a level its bytes over its size; the highest score of 1 or more goes.
        let spec = my_ycsb("256M", |t| t.compaction_thread = Some(true));
        let mut st = state(&spec);
        let l1 = st.layout.tables[0];
        assert_eq!(st.pick_compaction(), None, "nothing over its size");
        st.l0_live = L0_TRIGGER - 1;
        assert_eq!(st.pick_compaction(), None, "three L0 tables score 0.75");
        st.l0_live = L0_TRIGGER;
        assert_eq!(st.pick_compaction(), Some(None), "four score 1: L0's compaction");
        st.owed[0] = l1;
        assert_eq!(st.pick_compaction(), Some(Some(0)), "L1 at twice its size scores 2");
        st.l0_live = 3 * L0_TRIGGER;
        assert_eq!(st.pick_compaction(), Some(None), "twelve L0 tables score 3");
        st.l0_live = 0;
        st.owed[0] = 0;
        // The deepest level with a level below: the last level is never over its size.
        let deep = st.layout.tables.len() - 2;
        st.owed[deep] = 1;
        assert_eq!(st.pick_compaction(), Some(Some(deep)), "a deep level one table over its size");
        let mut work = VecDeque::new();
        assert!(st.background(&mut work) && st.owed[deep] == 0, "the thread compacts it");
    }

    #[test]
    fn a_write_is_delayed_at_eight_l0_tables_and_a_writer_stops_at_twelve_for_a_new_memtable() {
        // LevelDB 1.23's MakeRoomForWrite(): a 1 ms delay at kL0_SlowdownWritesTrigger, a wait
        // at kL0_StopWritesTrigger when the memtable is full.
        let spec = my_ycsb("256M", |t| t.compaction_thread = Some(true));
        let mut st = state(&spec);
        assert_eq!(st.objects.l0.len(), L0_STOP, "twelve L0 files for the thread to fill");
        st.l0_live = L0_SLOWDOWN - 1;
        assert!(!st.write_slowed() && !st.write_stalled());
        st.l0_live = L0_SLOWDOWN;
        assert!(st.write_slowed() && !st.write_stalled(), "delayed, not stopped");
        st.l0_live = L0_STOP;
        assert!(!st.write_stalled(), "room in the memtable: the write goes in");
        let mut ops = VecDeque::new();
        while st.unflushed < st.spec.write_buffer_bytes {
            st.write(None, &mut ops);
        }
        assert!(st.write_stalled(), "a full memtable and twelve L0 tables: the writer waits");
        assert_eq!(st.background_state().unwrap().flushes_waiting, 0, "for L0, not for a flush");
        let mut work = VecDeque::new();
        assert!(st.background(&mut work) && st.l0_live == 0, "the thread compacts L0");
        assert!(!st.write_stalled(), "and the writer goes on");
    }

    #[test]
    fn with_a_compaction_thread_a_writer_leaves_the_flush_to_it() {
        // MakeRoomForWrite(): a writer that fills the memtable starts a new log; the thread
        // writes the full memtable as an L0 table (CompactMemTable()).
        let spec = my_ycsb("256M", |t| {
            t.ycsb = Some("a".into());
            t.compaction_thread = Some(true);
        });
        let mut st = state(&spec);
        let l0 = st.objects.l0[0];
        let mut writes = VecDeque::new();
        while st.background_state().unwrap().flushes_waiting == 0 {
            st.write(None, &mut writes);
        }
        assert!(writes.iter().any(|o| o.object == st.objects.wal && o.access == Access::Truncate), "the old log deleted");
        assert!(writes.iter().all(|o| o.object != l0), "the writer writes no table");
        assert_eq!(st.flushes, 0);
        let mut work = VecDeque::new();
        assert!(st.background(&mut work));
        assert!(work.iter().any(|o| o.object == l0 && o.write), "the thread writes the L0 table");
        assert_eq!((st.flushes, st.background_state().unwrap().flushes_waiting), (1, 0));
        st.set_clients(2);
        assert!(st.clients_running());
        st.client_done();
        st.client_done();
        assert!(!st.clients_running(), "the thread ends with the clients");
    }

    #[test]
    fn compaction_invalidates_its_input_files_pages() {
        let s = spec("256M", "a");
        let mut st = state(&s);
        let mut ops = VecDeque::new();
        while st.compactions == 0 {
            st.write(None, &mut ops);
        }
        assert_eq!(st.flushes, L0_TRIGGER as u64, "four memtables flushed, then L0 compacted");
        let ops: Vec<Op> = ops.into();
        let truncated = |o: u32| ops.iter().position(|op| op.object == o && op.access == Access::Truncate);
        let l0 = st.objects.l0.clone();
        let l1 = st.objects.tables[0].clone();
        for &o in l0.iter().chain(&l1) {
            let shape = if l0.contains(&o) { st.layout.l0 } else { st.layout.shape() };
            let t = truncated(o).unwrap_or_else(|| panic!("input {o} deleted"));
            assert_eq!((ops[t].page, ops[t].npages as u64), (0, shape.pages()), "the whole file");
            let read: Vec<u64> = ops[..t]
                .iter()
                .filter(|op| op.object == o && op.access == Access::Buffered && !op.write && op.page < shape.data_blocks)
                .map(|op| op.page)
                .collect();
            assert!(read.ends_with(&(0..shape.data_blocks).collect::<Vec<_>>()), "input {o} read in order before its deletion");
        }
        // L0's files are gone until the next flush; L1's are written again after the deletion.
        for &o in &l0 {
            assert!(ops[truncated(o).unwrap()..].iter().all(|op| op.object != o || op.access == Access::Truncate));
        }
        for &o in &l1 {
            assert!(ops[truncated(o).unwrap()..].iter().any(|op| op.object == o && op.write));
        }
        // A deleted table's cache entries are not found again: it is opened anew.
        let key = (0..).find(|&k| st.layout.level_of(k) == 0).unwrap();
        let mut get = VecDeque::new();
        st.get(key, &mut get);
        st.get(key, &mut get);
        let (table, _) = st.layout.table_and_block(key, 0);
        let object = st.objects.tables[0][table as usize];
        let footer_reads = get.iter().filter(|op| op.object == object && op.access == Access::Buffered && op.page == st.layout.table_pages() - 1).count();
        assert_eq!(footer_reads, 0, "the rewritten table was opened by its verification");
        assert!(
            get.iter().any(|op| op.object == object && op.access == Access::Buffered && op.page < st.layout.data_blocks),
            "its data block is not in the block cache"
        );
    }

    #[test]
    fn compactions_push_the_flushed_bytes_down_every_level() {
        let s = spec("1G", "a");
        let mut st = state(&s);
        let mut ops = VecDeque::new();
        while st.compactions == 0 {
            st.write(None, &mut ops);
            ops.clear();
        }
        // L0 into L1, then 8 tables' worth (4 memtables of 4 MiB over 2 MiB tables) from each
        // level but the last.
        let moved = (L0_TRIGGER as u64 * st.layout.l0.data_blocks).div_ceil(st.layout.data_blocks);
        assert_eq!(st.compactions, 1 + moved * (st.layout.tables.len() as u64 - 1));
    }

    #[test]
    fn a_deleted_table_takes_a_new_file_number_and_the_caches_index_stays_small() {
        // Compactions delete and rewrite tables; each rewritten file's blocks are keyed by its
        // new number, so the caches' key tables grow with the files, not with a key range a
        // rewrite (2^20 entries, 4 MiB, for each generation of a file before).
        let s = spec("256M", "a");
        let mut st = state(&s);
        let mut ops = VecDeque::new();
        let mut key = 0;
        while st.compactions < 20 {
            st.write(None, &mut ops);
            key = mix64(key + 1);
            st.get(key % st.layout.records, &mut ops);
            ops.clear();
        }
        let bytes = st.block_cache.state_bytes() + st.table_cache.state_bytes();
        assert!(bytes < 1 << 20, "{bytes} bytes of cache index after {} compactions", st.compactions);
    }
}
