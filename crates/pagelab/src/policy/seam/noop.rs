//! NOOP: cache_ext's no-op policy (SOSP '25 §6.3.2, Table 4), which "defers to the default
//! kernel eviction policy while still maintaining cache_ext data structures". It keeps the
//! registry of its cgroup's folios (cache_ext's valid-folios table) and leaves every choice
//! to the kernel's classic LRU ([`EvictionPolicy::defers_eviction`]), so a run with it differs
//! from the default only in what its hooks cost (`[time] cache_ext_hook_ns`).

use super::{Access, EvictionPolicy, Folio, FolioId, Freeable, Removal};
use crate::mm::memcontrol::MemcgId;

/// The registry: one bit per folio id, set while the policy holds the folio.
#[derive(Default)]
pub struct Noop {
    held: Vec<u64>,
    count: u64,
}

impl Noop {
    pub fn new() -> Noop {
        Noop::default()
    }

    fn set(&mut self, id: FolioId, on: bool) {
        let (w, b) = (id as usize / 64, id % 64);
        if w >= self.held.len() {
            if !on {
                return;
            }
            self.held.resize(w + 1, 0);
        }
        let was = self.held[w] >> b & 1 != 0;
        if was != on {
            self.held[w] ^= 1 << b;
            if on {
                self.count += 1;
            } else {
                self.count -= 1;
            }
        }
    }
}

impl EvictionPolicy for Noop {
    fn folio_added(&mut self, folio: &Folio) {
        self.set(folio.id, true);
    }

    fn folio_accessed(&mut self, _folio: &Folio, _how: Access) {}

    fn folio_removed(&mut self, folio: &Folio, _why: Removal) {
        self.set(folio.id, false);
    }

    /// Never called: the kernel evicts.
    fn evict_folios(&mut self, _cgroup: MemcgId, _nr: usize, _freeable: &Freeable, _out: &mut Vec<FolioId>) {}

    fn defers_eviction(&self) -> bool {
        true
    }

    fn state_bytes(&self) -> u64 {
        (self.held.capacity() * 8) as u64
    }

    fn state(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({ "registered": self.count }))
    }
}
