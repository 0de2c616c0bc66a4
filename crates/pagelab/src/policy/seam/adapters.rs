//! The plain caches of `pagelab-cachesim` behind the seam: the same algorithm objects that
//! replay traces ([`pagelab_cachesim::Online`]), keyed by the page's identity
//! ([`Folio::key`]), so a page that comes back meets its ghost entry (S3-FIFO, ARC) as in a
//! trace.
//!
//! * An added folio is [`Online::insert`]ed (a putback after reclaim kept it, too: the
//!   algorithm let it go when it nominated it); an access is [`Online::hit`], but not the
//!   accesses made while the folio waited in the lru_add batch (the read that inserted it:
//!   in a trace, a miss).
//! * `evict_folios` runs [`Online::evict`] `nr` times: the victims leave the algorithm as
//!   they leave in a trace.
//! * A folio freed outside reclaim (its task exited) leaves the algorithm lazily: it stays as
//!   a dead entry until the algorithm evicts it (the adapter drops it then and evicts
//!   again); a page that comes back before then revives its entry as a hit.

use pagelab_cachesim::{new_online, Online, PolicyKind as Plain};

use super::{Access, Cgroup, EvictionPolicy, Folio, FolioId, Freeable, Removal};
use crate::mm::memcontrol::MemcgId;

const NO_FOLIO: u32 = u32::MAX;

/// A plain cache as a seam policy.
pub struct PlainPolicy {
    kind: Plain,
    /// The machine's memory in pages: the size of an unlimited cgroup's cache.
    machine_pages: u64,
    cache: Option<Box<dyn Online + Send>>,
    /// Per key: the folio holding the page, NO_FOLIO if none (a dead entry).
    folio: Vec<u32>,
}

impl PlainPolicy {
    pub fn new(kind: Plain, machine_pages: u64) -> PlainPolicy {
        PlainPolicy { kind, machine_pages, cache: None, folio: Vec::new() }
    }

    fn cache(&mut self) -> &mut (dyn Online + Send) {
        if self.cache.is_none() {
            self.cache = new_online(self.kind, self.machine_pages, 1 << 12);
        }
        self.cache.as_deref_mut().expect("an online policy")
    }

    fn set_folio(&mut self, key: u32, id: u32) {
        let k = key as usize;
        if k >= self.folio.len() {
            self.folio.resize((k + 1).max(self.folio.len() * 2), NO_FOLIO);
        }
        self.folio[k] = id;
    }
}

impl EvictionPolicy for PlainPolicy {
    /// The cache is sized by the cgroup's memory.max, or the machine's memory when
    /// unlimited (S3-FIFO's queues and ARC's target depend on it).
    fn init(&mut self, cgroup: &Cgroup) {
        let capacity = cgroup.max.min(self.machine_pages).max(1);
        self.cache = new_online(self.kind, capacity, 1 << 12);
    }

    fn folio_added(&mut self, folio: &Folio) {
        self.set_folio(folio.key, folio.id);
        let c = self.cache();
        if c.contains(folio.key) {
            c.hit(folio.key);
        } else {
            c.insert(folio.key);
        }
    }

    /// No: in a trace a miss is an insertion without a hit, so the read that inserted the
    /// page is not a hit either.
    fn hears_early_accesses(&self) -> bool {
        false
    }

    fn folio_accessed(&mut self, folio: &Folio, _how: Access) {
        let c = self.cache();
        if c.contains(folio.key) {
            c.hit(folio.key);
        }
    }

    fn folio_removed(&mut self, folio: &Folio, _why: Removal) {
        if self.folio.get(folio.key as usize) == Some(&folio.id) {
            self.folio[folio.key as usize] = NO_FOLIO;
        }
    }

    fn evict_folios(&mut self, _cgroup: MemcgId, nr: usize, _freeable: &Freeable, out: &mut Vec<FolioId>) {
        let start = out.len();
        while out.len() - start < nr {
            let Some(key) = self.cache().evict() else { break };
            let id = self.folio.get(key as usize).copied().unwrap_or(NO_FOLIO);
            if id != NO_FOLIO {
                self.folio[key as usize] = NO_FOLIO;
                out.push(id);
            }
        }
    }

    /// The pages the plain cache holds (its own count, which the host checks against the
    /// folios it handed over).
    fn state(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({ "cached": self.cache.as_ref().map_or(0, |c| c.len()) }))
    }

    fn state_bytes(&self) -> u64 {
        self.folio.capacity() as u64 * 4
    }
}
