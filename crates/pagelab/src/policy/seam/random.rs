//! RANDOM: evicts a uniformly random folio of the cgroup (libCacheSim's `Random`; the
//! baseline of caching papers). The example of a seam policy written for the kernel model:
//! this file and one line in the registry (see docs/policies.md).

use super::{Access, EvictionPolicy, Folio, FolioId, Freeable, Removal};
use crate::mm::memcontrol::MemcgId;
use pagelab_host::xorshift::XorShift64;

/// The cgroup's folios in a vector (swap-remove on removal) and each one's place in it.
pub struct Random {
    folios: Vec<FolioId>,
    /// Per folio id: its index in `folios` + 1 (0: not held).
    slot: Vec<u32>,
    /// The generator: the same seed evicts the same folios.
    state: XorShift64,
}

impl Random {
    pub fn new(seed: u64) -> Random {
        Random { folios: Vec::new(), slot: Vec::new(), state: XorShift64::new(seed | 1) }
    }

    fn next(&mut self) -> u64 {
        self.state.next_u64()
    }

    fn take(&mut self, i: usize) -> FolioId {
        let id = self.folios.swap_remove(i);
        self.slot[id as usize] = 0;
        if let Some(&moved) = self.folios.get(i) {
            self.slot[moved as usize] = i as u32 + 1;
        }
        id
    }
}

impl EvictionPolicy for Random {
    fn folio_added(&mut self, folio: &Folio) {
        let id = folio.id as usize;
        if id >= self.slot.len() {
            self.slot.resize(id + 1, 0);
        }
        if self.slot[id] == 0 {
            self.folios.push(folio.id);
            self.slot[id] = self.folios.len() as u32;
        }
    }

    fn folio_accessed(&mut self, _folio: &Folio, _how: Access) {}

    fn folio_removed(&mut self, folio: &Folio, _why: Removal) {
        if let Some(&s) = self.slot.get(folio.id as usize) {
            if s != 0 {
                self.take(s as usize - 1);
            }
        }
    }

    fn evict_folios(&mut self, _cgroup: MemcgId, nr: usize, _freeable: &Freeable, out: &mut Vec<FolioId>) {
        for _ in 0..nr.min(self.folios.len()) {
            let i = (self.next() % self.folios.len() as u64) as usize;
            out.push(self.take(i));
        }
    }

    fn state_bytes(&self) -> u64 {
        (self.folios.capacity() * 4 + self.slot.capacity() * 4) as u64
    }
}
