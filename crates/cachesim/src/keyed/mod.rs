//! Plain caches keyed by a trace's own 64-bit object ids, with state for the cached objects
//! only.
//!
//! A plain cache never needs to know a page it does not hold, so an oracleGeneral trace run
//! against `lru`, `fifo` or `clock` skips the id map (which holds every object of the trace,
//! 32–51 bytes each, and costs a cache miss per record once it outgrows the CPU's caches):
//! the tables below hold at most `capacity` objects, whatever the trace's footprint, and a
//! trace of any length streams through them in memory bounded by the cache size. (`opt`
//! needs every object's future and keeps the id map.)
//!
//! * [`KeyedLru`]: exact LRU, the recency list threaded through its table's slots.
//! * [`KeyedRing`]: FIFO and CLOCK, a ring of the cached objects and an index from object id
//!   to ring position.

mod lru;
mod ring;

pub use lru::KeyedLru;
pub use ring::KeyedRing;

use std::path::Path;

use pagelab_trace::{obj_id, obj_size, stored_hash, OracleReader, TraceError, ORACLE_RECORD};

use crate::{PolicyKind, Stats};

/// A plain cache over object ids, as a trace replay drives it.
pub trait KeyedCache {
    /// Starts prefetching what an access to the object with this [`mix64`](pagelab_trace::mix64) will probe.
    fn prefetch(&self, hash: u64);
    /// One access to `key` whose [`mix64`](pagelab_trace::mix64) is `hash`; true on a hit.
    fn access_hashed(&mut self, key: u64, hash: u64) -> bool;
    fn evictions(&self) -> u64;
    fn state_bytes(&self) -> u64;
}

/// Hashed slots for `objects`: at most an eighth full while that takes at most 2^18 slots
/// (4 MiB), at most a quarter full beyond. Short clusters make probes and deletions cheap
/// (a half-full table took 1.3x the time of a quarter-full one at a 1% cache, a quarter-full
/// 1.1x that of an eighth-full one), but a sparser large table falls out of the CPU's caches
/// (an eighth-full table of 2^20 slots took 1.4–1.8x the time at a 10% cache).
pub(crate) fn table_size(objects: u64) -> usize {
    let sparse = ((objects as usize).max(8) * 8).next_power_of_two();
    if sparse <= 1 << 18 {
        sparse
    } else {
        ((objects as usize) * 4).next_power_of_two()
    }
}

/// How many records ahead the home slot is prefetched.
pub const AHEAD: usize = 24;

/// Whether `policy` runs keyed by object id (`lru`, `fifo`, `clock`; the others use the
/// id map).
pub fn handles(policy: PolicyKind) -> bool {
    matches!(policy, PolicyKind::Lru | PolicyKind::Fifo | PolicyKind::Clock)
}

/// Replays an oracleGeneral trace against a plain cache of `capacity` pages keyed by object
/// id; `None` for `opt`, which needs the id map. Returns the statistics (with `pages`
/// unknown: no id map is kept) and the number of zero-size records.
pub fn run(path: &Path, policy: PolicyKind, capacity: u64) -> Option<Result<(Stats, u64), TraceError>> {
    let replay_one: Replay = match policy {
        PolicyKind::Lru => |r, p, c| replay(r, KeyedLru::new(c), p, c),
        PolicyKind::Fifo => |r, p, c| replay(r, KeyedRing::fifo(c), p, c),
        PolicyKind::Clock => |r, p, c| replay(r, KeyedRing::clock(c), p, c),
        PolicyKind::Opt | PolicyKind::Sieve | PolicyKind::S3Fifo | PolicyKind::Arc | PolicyKind::Mru | PolicyKind::Lfu => return None,
    };
    Some(OracleReader::open_hashing(path).and_then(|r| replay_one(r, policy, capacity)))
}

type Replay = fn(OracleReader, PolicyKind, u64) -> Result<(Stats, u64), TraceError>;

/// The ids' hashes come with the records, computed by the reading thread.
fn replay(mut reader: OracleReader, mut cache: impl KeyedCache, policy: PolicyKind, capacity: u64) -> Result<(Stats, u64), TraceError> {
    let (mut ops, mut misses, mut zero) = (0u64, 0u64, 0u64);
    while let Some(raw) = reader.next_batch()? {
        let (records, _) = raw.as_chunks::<ORACLE_RECORD>();
        for (k, r) in records.iter().enumerate() {
            if let Some(ahead) = records.get(k + AHEAD) {
                cache.prefetch(stored_hash(ahead));
            }
            zero += (obj_size(r) == 0) as u64;
            misses += !cache.access_hashed(obj_id(r), stored_hash(r)) as u64;
        }
        ops += records.len() as u64;
    }
    let stats =
        Stats { policy: policy.name(), capacity, ops, hits: ops - misses, misses, evictions: cache.evictions(), pages: None, state_bytes: cache.state_bytes() };
    Ok((stats, zero))
}
