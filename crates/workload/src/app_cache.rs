//! An application's own cache in anonymous memory in front of its file reads: a database's
//! buffer pool (WiredTiger's cache, InnoDB's buffer pool, PostgreSQL's shared_buffers).
//!
//! `app_cache = { size = "5G", policy = "lru", block = "4k" }` on a workload puts one in
//! front of every buffered file read of each of its jobs. A read is cut into cache blocks;
//! for each block in turn:
//!
//! * a **hit** is a load of the block's slot in the cache's anonymous region (no file read);
//! * a **miss** reads that block from the file (the pread the workload would have done,
//!   widened to the whole cache block, as a buffer pool reads whole pages), then stores it
//!   into a slot: a free one while the cache fills, else the slot of the policy's victim.
//!
//! The kernel sees only the resulting operations: the file reads of the misses and the loads
//! and stores of the region, which is charged, reclaimed and swapped as any anonymous memory
//! of the task (a swapped-out slot is swapped back in by its next hit, as a buffer pool's page
//! would be).
//!
//! What it keeps: the hit/miss decisions of the policy, per block, deterministic from the
//! stream; the slot a block lives in, so that a hit touches the same anonymous page as the
//! store that filled it. What it leaves out: the cache's own metadata and hash tables (a few
//! bytes per block, not pages the kernel would reclaim apart), eviction of dirty pages
//! (writes go through to the file, as `O_DIRECT`-less write-through: a cached block a write
//! covers is stored into, a block not cached is not allocated), read-ahead inside the
//! application (InnoDB's linear read-ahead), and pinned pages. Mmap and anonymous phases
//! pass by it.
//!
//! **Per process.** A buffer pool belongs to a process: each job of the workload (a process
//! of its own in pagelab, with its own anonymous regions) gets its own cache of `size`.
//!
//! **Shared.** `shared = "NAME"`: every job of every workload naming the same cache uses one
//! cache and one region, as the client threads of one server (mongod) share its WiredTiger
//! cache. The jobs are then threads of one process (crates/pagelab: `TaskMm::process`); the
//! cache's keys are the files' names, so workloads reading one file share its blocks. The
//! decisions are made in the order the simulator draws the jobs' operations, which is
//! deterministic.
//!
//! **Sizes.** `block` is what a miss reads from the file, `memory_block` (default `block`)
//! what the block takes in the cache: WiredTiger reads a leaf as written (24k of a 32k leaf
//! once its field names are compressed away, examples/seeds/README.md "000") and holds it
//! decompressed, so `size` counts blocks of `memory_block`. `miss_think` is the CPU time a
//! miss costs beyond its read (the leaf's decompression), spent after the read and before
//! the store; a hit costs the workload's `think` only.
//!
//! **Policies**: `lru` (InnoDB's and shared_buffers' goal; WiredTiger approximates it), `fifo`,
//! `clock` (PostgreSQL's clock sweep, with one reference bit rather than its usage count up
//! to 5) and `mru`. They decide over the cache's slots exactly as crates/cachesim's `Lru`,
//! `Fifo`, `Clock` and `Mru` decide over pages (a test replays the same keys through both).
//! They are written here, over slot numbers, rather than taken from crates/cachesim: this
//! crate is also built into the oracle's static in-guest runner, which must not link
//! cachesim's trace readers (zstd's C library, rayon).
//!
//! **Memory**: the tables grow with the slots filled and the blocks read, never with the
//! declared size: per slot filled, its key (8 bytes) and its list links (8 bytes for lru/mru,
//! 1 for clock, none for fifo); per file, 4 bytes for each block up to the highest one read
//! (the key → slot table, flat up to 256 MiB and sparse beyond, as pagelab's per-page tables:
//! `pagelab_host::sparse::Table`). A 5 GiB cache of 4 KiB blocks costs at most about 21 MiB
//! for its slots, and a file read to its end 1 MiB of table per GiB of 4 KiB blocks (seed
//! 000's two collections, 47.5 GiB of 24k blocks: 8 MiB).

use pagelab_host::prefetch;
use pagelab_host::sparse::Table;
use serde::Deserialize;

use crate::size::{parse_size, PAGE_SIZE};

/// The `app_cache` table as written.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppCacheToml {
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub size: Option<String>,
    pub policy: Option<String>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub block: Option<String>,
    /// A block's size in the cache when it differs from its size in the file (default
    /// `block`): WiredTiger reads a leaf as it is on disk and holds it decompressed.
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub memory_block: Option<String>,
    /// One cache shared by every job of every workload that names it (the threads of one
    /// server process): see the module's "Shared".
    pub shared: Option<String>,
    /// CPU time a miss costs after its read, before the block is stored (decompression).
    pub miss_think: Option<String>,
}

/// The policy choosing a victim slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppPolicy {
    Lru,
    Fifo,
    Clock,
    Mru,
}

impl AppPolicy {
    pub const NAMES: &'static str = "lru, fifo, clock, mru";

    pub fn parse(text: &str) -> Option<AppPolicy> {
        Some(match text {
            "lru" => AppPolicy::Lru,
            "fifo" => AppPolicy::Fifo,
            "clock" => AppPolicy::Clock,
            "mru" => AppPolicy::Mru,
            _ => return None,
        })
    }
}

/// A validated application cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppCacheSpec {
    /// Blocks the cache holds.
    pub slots: u64,
    /// Pages per block in the file (what a miss reads).
    pub block_pages: u64,
    /// Pages per block in the cache (a slot of its region).
    pub slot_pages: u64,
    pub policy: AppPolicy,
    /// The name of the cache the jobs naming it share; `None`: one cache per job.
    pub shared: Option<String>,
    /// Modeled CPU time (ns) before a miss's store: the block's decompression.
    pub miss_think_ns: u64,
}

impl AppCacheSpec {
    /// Pages of the cache's anonymous region.
    pub fn pages(&self) -> u64 {
        self.slots * self.slot_pages
    }
}

impl AppCacheToml {
    /// Validates the table; errors are (key under `app_cache`, message).
    pub fn resolve(&self) -> Result<AppCacheSpec, (&'static str, String)> {
        let size = self.size.as_deref().ok_or(("size", "missing: how large is the application's cache? (\"5G\")".to_string()))?;
        let bytes = parse_size(size).map_err(|m| ("size", m))?;
        let block = match &self.block {
            Some(b) => parse_size(b).map_err(|m| ("block", m))?,
            None => PAGE_SIZE,
        };
        if block == 0 || block % PAGE_SIZE != 0 {
            return Err(("block", "must be a positive multiple of 4k".into()));
        }
        if block > 64 << 20 {
            return Err(("block", "is larger than 64M, more than any buffer pool's page".into()));
        }
        let slot = match &self.memory_block {
            Some(b) => parse_size(b).map_err(|m| ("memory_block", m))?,
            None => block,
        };
        if slot == 0 || slot % PAGE_SIZE != 0 {
            return Err(("memory_block", "must be a positive multiple of 4k".into()));
        }
        if slot > 64 << 20 {
            return Err(("memory_block", "is larger than 64M, more than any buffer pool's page".into()));
        }
        let slots = bytes / slot;
        if slots == 0 {
            return Err(("size", format!("{size} holds no block of {} bytes", slot)));
        }
        let block_pages = block / PAGE_SIZE;
        let slot_pages = slot / PAGE_SIZE;
        if slots * slot_pages > u32::MAX as u64 / 2 {
            return Err(("size", "is larger than pagelab's 8 TiB limit per object".into()));
        }
        let policy = match self.policy.as_deref() {
            None => AppPolicy::Lru,
            Some(p) => AppPolicy::parse(p).ok_or(("policy", format!("`{p}`: use one of {}", AppPolicy::NAMES)))?,
        };
        let shared = match &self.shared {
            None => None,
            Some(n) if n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) => {
                return Err(("shared", format!("`{n}`: name the shared cache with letters, digits, `-`, `_` or `.`")))
            }
            Some(n) => Some(n.clone()),
        };
        let miss_think_ns = match &self.miss_think {
            None => 0,
            Some(t) => crate::size::parse_duration_ns(t).map_err(|m| ("miss_think", m))?,
        };
        Ok(AppCacheSpec { slots, block_pages, slot_pages, policy, shared, miss_think_ns })
    }
}

const NONE: u32 = u32::MAX;

/// The cache's key of block `block` of file `file` (files numbered densely from 0, a block
/// index below 2^32): `file << 32 | block`, as [`Index`] splits it.
#[inline]
pub fn key(file: u32, block: u64) -> u64 {
    debug_assert!(block <= u32::MAX as u64, "block {block} of file {file} does not fit a cache key");
    ((file as u64) << 32) | block
}

/// The key → slot map. A key is a (file, block) pair, `file << 32 | block`, and the files are
/// numbered densely from 0 (a job's objects, or the names a shared cache has seen), so the map
/// is a table per file of each block's slot (`NONE`: not cached), grown to the highest block
/// looked up. A lookup is one load while the table is flat, where a hash map's is a probe of
/// its control bytes and a load of its bucket, and an eviction's removal and insertion are
/// two stores.
#[derive(Clone, Debug, Default)]
struct Index {
    files: Vec<Table<u32>>,
}

impl Index {
    fn split(key: u64) -> (usize, usize) {
        ((key >> 32) as usize, (key & u32::MAX as u64) as usize)
    }

    /// `key`'s entry, if its table reaches it (for a lookup and for a prefetch).
    fn entry(&self, key: u64) -> Option<&u32> {
        let (file, block) = Index::split(key);
        self.files.get(file).and_then(|t| t.try_ref(block))
    }

    fn get(&self, key: u64) -> Option<u32> {
        self.entry(key).copied().filter(|&s| s != NONE)
    }

    /// Maps `key` to `slot` (`NONE`: unmaps it).
    fn set(&mut self, key: u64, slot: u32) {
        let (file, block) = Index::split(key);
        if file >= self.files.len() {
            self.files.resize_with(file + 1, || Table::new(0, NONE));
        }
        let table = &mut self.files[file];
        table.grow(block + 1);
        table.set(block, slot);
    }

    fn bytes(&self) -> u64 {
        (self.files.capacity() * std::mem::size_of::<Table<u32>>()) as u64 + self.files.iter().map(Table::state_bytes).sum::<u64>()
    }
}

/// The recency list of the slots: `link[slot + 1] = [prev, next]` (node 0 the sentinel,
/// `link[0] = [least recent, most recent]`), as crates/cachesim's `Lru` threads its pages.
#[derive(Clone, Debug)]
struct Recency {
    link: Vec<[u32; 2]>,
}

impl Recency {
    fn new() -> Recency {
        Recency { link: vec![[0, 0]] }
    }
    fn unlink(&mut self, node: u32) {
        let [prev, next] = self.link[node as usize];
        self.link[prev as usize][1] = next;
        self.link[next as usize][0] = prev;
    }
    fn push_most_recent(&mut self, node: u32) {
        let head = self.link[0][1];
        self.link[node as usize] = [0, head];
        self.link[head as usize][0] = node;
        self.link[0][1] = node;
    }
    fn touch(&mut self, slot: u32) {
        self.unlink(slot + 1);
        self.push_most_recent(slot + 1);
    }
    fn insert(&mut self, slot: u32) {
        if slot as usize + 1 >= self.link.len() {
            self.link.resize(slot as usize + 2, [NONE, NONE]);
        }
        self.push_most_recent(slot + 1);
    }
    /// Removes and returns the least (`end` 0) or most (`end` 1) recent slot.
    fn pop(&mut self, end: usize) -> u32 {
        let node = self.link[0][end];
        self.unlink(node);
        node - 1
    }
}

#[derive(Clone, Debug)]
enum Victims {
    Lru(Recency),
    Mru(Recency),
    /// Slots fill in order and a refilled slot goes to the back: first in is slot `hand`.
    Fifo {
        hand: u32,
    },
    /// One reference bit per slot, the hand sweeping them in slot order.
    Clock {
        referenced: Vec<bool>,
        hand: u32,
    },
}

/// What a block's lookup found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Cached in this slot.
    Hit(u32),
    /// Not cached: read it and store it into this slot.
    Miss(u32),
}

/// One job's application cache: which block each slot holds, and the policy's state.
#[derive(Clone, Debug)]
pub struct AppCache {
    spec: AppCacheSpec,
    map: Index,
    /// The key each filled slot holds.
    keys: Vec<u64>,
    victims: Victims,
    pub hits: u64,
    pub misses: u64,
}

impl AppCache {
    pub fn new(spec: &AppCacheSpec) -> AppCache {
        let victims = match spec.policy {
            AppPolicy::Lru => Victims::Lru(Recency::new()),
            AppPolicy::Mru => Victims::Mru(Recency::new()),
            AppPolicy::Fifo => Victims::Fifo { hand: 0 },
            AppPolicy::Clock => Victims::Clock { referenced: Vec::new(), hand: 0 },
        };
        AppCache { spec: spec.clone(), map: Index::default(), keys: Vec::new(), victims, hits: 0, misses: 0 }
    }

    pub fn spec(&self) -> &AppCacheSpec {
        &self.spec
    }

    /// Looks `key` up; a miss makes room and gives the slot the block is to be stored into.
    pub fn lookup(&mut self, key: u64) -> Lookup {
        if let Some(slot) = self.map.get(key) {
            self.hits += 1;
            match &mut self.victims {
                Victims::Lru(r) | Victims::Mru(r) => r.touch(slot),
                Victims::Fifo { .. } => {}
                Victims::Clock { referenced, .. } => referenced[slot as usize] = true,
            }
            return Lookup::Hit(slot);
        }
        self.misses += 1;
        let slot = if (self.keys.len() as u64) < self.spec.slots {
            self.keys.push(key);
            (self.keys.len() - 1) as u32
        } else {
            let victim = self.evict();
            self.map.set(self.keys[victim as usize], NONE);
            self.keys[victim as usize] = key;
            victim
        };
        self.map.set(key, slot);
        match &mut self.victims {
            Victims::Lru(r) | Victims::Mru(r) => r.insert(slot),
            Victims::Fifo { .. } => {}
            Victims::Clock { referenced, .. } => {
                if slot as usize >= referenced.len() {
                    referenced.push(false);
                } else {
                    referenced[slot as usize] = false;
                }
            }
        }
        Lookup::Miss(slot)
    }

    /// Hints the CPU to fetch what a lookup of `key` loads first (no effect on decisions):
    /// the key's entry in the table and, in a full LRU cache, the victim's links and key,
    /// which a miss reads.
    pub fn prefetch(&self, key: u64) {
        if let Some(entry) = self.map.entry(key) {
            prefetch(entry);
        }
        if let Victims::Lru(r) = &self.victims {
            let tail = r.link[0][0];
            if tail != 0 && self.keys.len() as u64 == self.spec.slots {
                prefetch(&r.link[tail as usize]);
                prefetch(&self.keys[tail as usize - 1]);
            }
        }
    }

    /// Whether `key` is cached, its slot (no policy update).
    pub fn slot_of(&self, key: u64) -> Option<u32> {
        self.map.get(key)
    }

    /// The policy's victim in a full cache, taken off its list.
    fn evict(&mut self) -> u32 {
        let n = self.spec.slots as u32;
        match &mut self.victims {
            Victims::Lru(r) => r.pop(0),
            Victims::Mru(r) => r.pop(1),
            Victims::Fifo { hand } => {
                let v = *hand;
                *hand = if v + 1 == n { 0 } else { v + 1 };
                v
            }
            Victims::Clock { referenced, hand } => loop {
                let h = *hand as usize;
                *hand = if *hand + 1 == n { 0 } else { *hand + 1 };
                if !std::mem::take(&mut referenced[h]) {
                    break h as u32;
                }
            },
        }
    }

    /// Bytes of the cache's tables now (grows with the slots filled).
    pub fn state_bytes(&self) -> u64 {
        let lists = match &self.victims {
            Victims::Lru(r) | Victims::Mru(r) => r.link.capacity() * 8,
            Victims::Fifo { .. } => 0,
            Victims::Clock { referenced, .. } => referenced.capacity(),
        };
        (self.keys.capacity() * 8 + lists) as u64 + self.map.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use pagelab_cachesim::Online;

    fn spec(slots: u64, policy: AppPolicy) -> AppCacheSpec {
        AppCacheSpec { slots, block_pages: 1, slot_pages: 1, policy, shared: None, miss_think_ns: 0 }
    }

    /// The same hits and misses as crates/cachesim's cache of the same policy, key for key
    /// (cachesim's over dense page ids: here the blocks of a file other than the first,
    /// spread out in it).
    fn agrees_with_cachesim(policy: AppPolicy, mut reference: Box<dyn Online>) {
        let capacity = 50;
        let mut c = AppCache::new(&spec(capacity, policy));
        let mut rng = Rng::new(7);
        for i in 0..20_000 {
            // A hot set of 40 ids and a cold range of 400, so that every policy both hits and evicts.
            let id = if rng.unit() < 0.6 { rng.below(40) } else { 40 + rng.below(400) };
            let key = (3 << 32) | (id * 7919 % 100_003);
            let hit = matches!(c.lookup(key), Lookup::Hit(_));
            let want = pagelab_cachesim::access_online(reference.as_mut(), id as u32, capacity);
            assert_eq!(hit, want, "{policy:?}: access {i} to id {id}");
        }
        assert!(c.hits > 1000 && c.misses > 1000, "{policy:?}: {} hits, {} misses", c.hits, c.misses);
    }

    #[test]
    fn each_policy_decides_as_cachesims_cache_of_that_name() {
        agrees_with_cachesim(AppPolicy::Lru, Box::new(pagelab_cachesim::Lru::new(50, 0)));
        agrees_with_cachesim(AppPolicy::Fifo, Box::new(pagelab_cachesim::Fifo::new(50, 0)));
        agrees_with_cachesim(AppPolicy::Clock, Box::new(pagelab_cachesim::Clock::new(50, 0)));
        agrees_with_cachesim(AppPolicy::Mru, Box::new(pagelab_cachesim::Mru::new(50, 0)));
    }

    #[test]
    fn a_hit_gives_the_slot_its_miss_filled() {
        let mut c = AppCache::new(&spec(2, AppPolicy::Lru));
        assert_eq!(c.lookup(10), Lookup::Miss(0));
        assert_eq!(c.lookup(20), Lookup::Miss(1));
        assert_eq!(c.lookup(10), Lookup::Hit(0));
        // 20 is the least recent: 30 takes its slot.
        assert_eq!(c.lookup(30), Lookup::Miss(1));
        assert_eq!(c.slot_of(20), None);
        assert_eq!(c.lookup(30), Lookup::Hit(1));
    }

    #[test]
    fn the_tables_grow_with_the_blocks_read_not_the_size() {
        let mut c = AppCache::new(&spec(1 << 30, AppPolicy::Lru));
        for k in 0..1000 {
            c.lookup(k);
        }
        assert!(c.state_bytes() < 100_000, "{} bytes for 1000 blocks", c.state_bytes());
    }

    #[test]
    fn a_block_far_into_a_file_costs_a_sparse_index_not_a_table_to_it() {
        // The last block a key can name: a flat table up to it would be 16 GiB.
        let mut c = AppCache::new(&spec(64, AppPolicy::Lru));
        c.lookup((2 << 32) | (u32::MAX as u64 - 1));
        assert!(matches!(c.lookup((2 << 32) | (u32::MAX as u64 - 1)), Lookup::Hit(_)));
        assert!(c.state_bytes() < 32 << 20, "{} bytes for one block", c.state_bytes());
    }

    #[test]
    fn a_bad_app_cache_is_refused_by_its_key() {
        let t = |size: Option<&str>, policy: Option<&str>, block: Option<&str>| {
            AppCacheToml {
                size: size.map(Into::into),
                policy: policy.map(Into::into),
                block: block.map(Into::into),
                memory_block: None,
                shared: None,
                miss_think: None,
            }
            .resolve()
        };
        assert_eq!(t(None, None, None).unwrap_err().0, "size");
        assert_eq!(t(Some("4k"), None, Some("8k")).unwrap_err().0, "size");
        assert_eq!(t(Some("1M"), None, Some("3k")).unwrap_err().0, "block");
        assert_eq!(t(Some("1M"), Some("lfu2"), None).unwrap_err().0, "policy");
        let s = t(Some("1M"), Some("clock"), Some("16k")).unwrap();
        assert_eq!((s.slots, s.block_pages, s.policy, s.pages()), (64, 4, AppPolicy::Clock, 256));
        let wt = |memory_block: &str, shared: &str| {
            AppCacheToml {
                size: Some("1M".into()),
                block: Some("24k".into()),
                memory_block: Some(memory_block.into()),
                shared: Some(shared.into()),
                policy: None,
                miss_think: Some("64us".into()),
            }
            .resolve()
        };
        // WiredTiger's leaves: 24k read, 32k held: 1M holds 32 of them.
        let s = wt("32k", "wt1").unwrap();
        assert_eq!((s.slots, s.block_pages, s.slot_pages, s.pages(), s.shared.as_deref(), s.miss_think_ns), (32, 6, 8, 256, Some("wt1"), 64_000));
        assert_eq!(wt("5k", "wt1").unwrap_err().0, "memory_block");
        assert_eq!(wt("32k", "a b").unwrap_err().0, "shared");
        assert_eq!(wt("32k", "").unwrap_err().0, "shared");
    }
}
