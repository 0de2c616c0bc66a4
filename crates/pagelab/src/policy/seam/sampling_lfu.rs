//! cache_ext's sampling LFU (policies/cache_ext_sampling.bpf.c of cache-ext/cache_ext, the
//! SOSP '25 artifact), ported line by line onto the seam's [`Lists`]: one list; a folio is
//! added at its tail with an access count of 1; each access adds 1; eviction samples the
//! head of the list in runs of 20 folios and hands over the least-accessed folio of each run
//! ([`Lists::sample`], cache_ext's `bpf_cache_ext_list_sample`), the sampled folios moving to
//! the tail.
//!
//! What differs from the BPF program, and why:
//! * every folio of the cgroup is the policy's (the seam's ownership; cache_ext watches the
//!   files of one directory, `is_folio_relevant()`);
//! * `APP_TYPE` is `GENERIC_APP`, as built (the LevelDB bonus for a file's last page is off);
//! * a list shorter than 20 × the request is sampled in shorter runs (cache_ext returns no
//!   candidate then; see [`Lists::sample`]).

use super::lists::{ListId, Lists};
use super::{Access, Cgroup, EvictionPolicy, Folio, FolioId, Freeable, Removal};
use crate::mm::memcontrol::MemcgId;

/// cache_ext's `sampling_opts.sample_size`.
pub const SAMPLE_SIZE: usize = 20;

/// The sampling LFU of one cgroup.
#[derive(Default)]
pub struct SamplingLfu {
    lists: Lists,
    sampling_list: ListId,
    /// `folio_metadata_map`: per folio id, its accesses (0: no entry).
    accesses: Vec<u64>,
    /// The evicted folios by their access count ([`bucket`]), for the report's state.
    evicted_by_accesses: [u64; BUCKETS.len()],
}

/// The access-count buckets of the report's histograms: 1, 2, 3, 4–7, 8 or more.
const BUCKETS: [&str; 5] = ["1", "2", "3", "4-7", "8+"];

/// The bucket of an access count (a count of 0, no metadata, counts as 1).
fn bucket(accesses: u64) -> usize {
    match accesses {
        0..=3 => accesses.max(1) as usize - 1,
        4..=7 => 3,
        _ => 4,
    }
}

/// A histogram as the report shows it: bucket name to count.
fn histogram(h: &[u64; BUCKETS.len()]) -> serde_json::Value {
    BUCKETS.iter().zip(h).map(|(b, &n)| (b.to_string(), n.into())).collect::<serde_json::Map<_, _>>().into()
}

impl SamplingLfu {
    pub fn new() -> SamplingLfu {
        let mut s = SamplingLfu::default();
        s.sampling_list = s.lists.create();
        s
    }

    fn meta(&mut self, id: FolioId) -> &mut u64 {
        let i = id as usize;
        if i >= self.accesses.len() {
            self.accesses.resize((i + 1).max(self.accesses.len() * 2), 0);
        }
        &mut self.accesses[i]
    }
}

impl EvictionPolicy for SamplingLfu {
    /// sampling_init(): the list was created in [`SamplingLfu::new`] (one instance per
    /// cgroup).
    fn init(&mut self, _cgroup: &Cgroup) {}

    /// sampling_folio_added(): to the list's tail, with metadata `accesses = 1`. A kept
    /// candidate coming back is still listed: the add fails and nothing changes.
    fn folio_added(&mut self, folio: &Folio) {
        if !self.lists.add_tail(self.sampling_list, folio.id) {
            return;
        }
        *self.meta(folio.id) = 1;
    }

    /// sampling_folio_accessed(): one more access (an entry is created if missing), for the
    /// accesses cache_ext's hook hears ([`Access::marks_accessed`]: not a buffered write).
    fn folio_accessed(&mut self, folio: &Folio, how: Access) {
        if !how.marks_accessed() {
            return;
        }
        *self.meta(folio.id) += 1;
    }

    /// sampling_folio_evicted(): the metadata goes (and, in pagelab, the list node). An
    /// evicted folio's count goes to the report's histogram.
    fn folio_removed(&mut self, folio: &Folio, why: Removal) {
        self.lists.del(folio.id);
        if let Some(a) = self.accesses.get_mut(folio.id as usize) {
            if why == Removal::Evicted {
                self.evicted_by_accesses[bucket(*a)] += 1;
            }
            *a = 0;
        }
    }

    /// sampling_evict_folios(): `bpf_cache_ext_list_sample()` with a sample size of 20 and
    /// the access count as the score (`INT64_MAX` without metadata, or for a folio the
    /// kernel could not free now: [`Freeable::now`]).
    fn evict_folios(&mut self, _cgroup: MemcgId, nr: usize, freeable: &Freeable, out: &mut Vec<FolioId>) {
        let accesses = &self.accesses;
        let score = |id: FolioId| match accesses.get(id as usize).copied().unwrap_or(0) {
            0 => i64::MAX,
            _ if !freeable.now(id) => i64::MAX,
            a => a.min(i64::MAX as u64) as i64,
        };
        self.lists.sample(self.sampling_list, SAMPLE_SIZE, nr, out, score);
    }

    fn state_bytes(&self) -> u64 {
        self.lists.state_bytes() + self.accesses.capacity() as u64 * 8
    }

    fn state(&self) -> Option<serde_json::Value> {
        let mut listed = [0; BUCKETS.len()];
        for &a in self.accesses.iter().filter(|&&a| a > 0) {
            listed[bucket(a)] += 1;
        }
        Some(serde_json::json!({
            "listed": self.lists.len(self.sampling_list),
            "listed_by_accesses": histogram(&listed),
            "evicted_by_accesses": histogram(&self.evicted_by_accesses),
        }))
    }
}
