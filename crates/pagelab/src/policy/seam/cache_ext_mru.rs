//! cache_ext's MRU (policies/cache_ext_mru.bpf.c of cache-ext/cache_ext 0d2eeca, the SOSP
//! '25 artifact, on linux-cache-ext 7442a92), ported line by line onto the seam's
//! [`Lists`]: one list; a folio joins its head when it is added and goes back to the head
//! when it is accessed (`bpf_cache_ext_list_move(…, false)`); eviction walks the list from
//! the head (the most recently used) with `bpf_cache_ext_list_iterate`: **within the first
//! 200 nodes of the walk it passes over a folio not uptodate or off the LRU, and from the
//! 200th node on it hands over anything**, dirty, under writeback or under read alike (the
//! kernel then keeps what it cannot free).
//!
//! What differs from the BPF program, and why:
//! * every page-cache folio of the cgroup is the policy's (cache_ext watches the files of
//!   one directory, `is_folio_relevant()`); anonymous folios are not listed (as in
//!   [`super::cache_ext_fifo`]);
//! * the walk stops at the request's `nr` candidates (cache_ext's fills its array of 32
//!   whatever the request; the seam takes no more than it asked for);
//! * a folio handed over earlier in the same reclaim call counts in the walk's 200 without
//!   being offered again (the seam's "a kept candidate is not offered again in the same
//!   call"). cache_ext's kernel offers it again: reclaim_pages() puts a kept candidate back
//!   with folio_putback_lru(), so once the per-CPU batch it waits in drains (15 folios in
//!   6.6.8) it is uptodate and on the LRU, the next batch of the same call hands it over at
//!   any index, and shrink_folio_list() keeps it again. With dirty folios at the head (the
//!   LSM's new tables), that call frees little, and linux-cache-ext 7442a92's
//!   shrink_lruvec() falls back to the kernel's own LRU scan when the policy freed 80% or
//!   less of its target, which `machine.seam_fallback` models (policy/seam/mod.rs). The seam
//!   still walks past the kept folios in a call, with or without the fallback (offering
//!   them again without the fallback ends Fig. 6's C and A in a memcg OOM kill within 2 s:
//!   docs/journal/2026-11-30-mru-harshness.md).
//!
//! The plain `mru` (pagelab-cachesim's trace algorithm behind [`super::adapters`]) hands
//! over the most recent folio whatever its state, from the first node on.

use super::lists::{Iter, ListId, Lists};
use super::{Access, Cgroup, EvictionPolicy, Folio, FolioId, Freeable, Removal};
use crate::mm::memcontrol::MemcgId;

/// iterate_mru()'s bound: within this many nodes of a walk a folio not uptodate or off the
/// LRU is passed over; from there on every folio is handed over.
pub const SKIP_WITHIN: usize = 200;

/// cache_ext's MRU for one cgroup.
pub struct CacheExtMru {
    lists: Lists,
    mru_list: ListId,
}

impl Default for CacheExtMru {
    fn default() -> Self {
        CacheExtMru::new()
    }
}

impl CacheExtMru {
    /// mru_init(): the one list (`mru_list`).
    pub fn new() -> CacheExtMru {
        let mut lists = Lists::new();
        let mru_list = lists.create();
        CacheExtMru { lists, mru_list }
    }
}

impl EvictionPolicy for CacheExtMru {
    fn init(&mut self, _cgroup: &Cgroup) {}

    /// mru_folio_added(): to the list's head (`bpf_cache_ext_list_add`), for a page-cache
    /// folio (anon is not the policy's: cache_ext's hook runs in __filemap_add_folio()). A
    /// kept candidate coming back is still listed: the add fails and it keeps its place.
    fn folio_added(&mut self, folio: &Folio) {
        if !folio.anon {
            self.lists.add(self.mru_list, folio.id);
        }
    }

    /// mru_folio_accessed(): back to the head, for the accesses cache_ext's hook hears
    /// ([`Access::marks_accessed`]: not a buffered write).
    fn folio_accessed(&mut self, folio: &Folio, how: Access) {
        if how.marks_accessed() {
            self.lists.move_to(self.mru_list, folio.id, false);
        }
    }

    /// mru_folio_evicted(): `bpf_cache_ext_list_del()`.
    fn folio_removed(&mut self, folio: &Folio, _why: Removal) {
        self.lists.del(folio.id);
    }

    /// mru_evict_folios(): `bpf_cache_ext_list_iterate()` from the head with iterate_mru():
    /// a folio not uptodate or off the LRU ([`Freeable::uptodate_on_lru`]) is passed over
    /// at an index below [`SKIP_WITHIN`]; every other folio is evicted.
    fn evict_folios(&mut self, _cgroup: MemcgId, nr: usize, freeable: &Freeable, out: &mut Vec<FolioId>) {
        self.lists.iterate(self.mru_list, nr, out, |idx, id| if idx < SKIP_WITHIN && !freeable.uptodate_on_lru(id) { Iter::Continue } else { Iter::Evict });
    }

    fn state_bytes(&self) -> u64 {
        self.lists.state_bytes()
    }

    fn state(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({ "listed": self.lists.len(self.mru_list) }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::folio::pg;
    use crate::policy::seam::tests::{folio, folios};

    /// An MRU holding folios 0..n, added in order (so n - 1 is at the head).
    fn mru(n: u32) -> CacheExtMru {
        let mut p = CacheExtMru::new();
        for id in 0..n {
            p.folio_added(&folio(id));
        }
        p
    }

    #[test]
    fn cache_ext_mru_hands_over_the_most_recently_added_or_accessed_folio() {
        let mut p = mru(4);
        p.folio_accessed(&folio(1), Access::Read);
        p.folio_accessed(&folio(2), Access::Write);
        let f = folios(&[pg::LRU; 4]);
        let mut out = Vec::new();
        p.evict_folios(0, 3, &Freeable::new(&f, 0), &mut out);
        assert_eq!(out, [1, 3, 2], "a read moves 1 to the head; a buffered write does not move 2");
    }

    #[test]
    fn cache_ext_mru_lists_page_cache_folios_only() {
        let mut p = mru(1);
        p.folio_added(&Folio { anon: true, ..folio(1) });
        let f = folios(&[pg::LRU; 2]);
        let mut out = Vec::new();
        p.evict_folios(0, 2, &Freeable::new(&f, 0), &mut out);
        assert_eq!(out, [0]);
    }

    #[test]
    fn cache_ext_mru_skips_folios_off_the_lru_or_under_read_but_not_dirty_ones() {
        let mut p = mru(4);
        let mut f = folios(&[pg::LRU, pg::LRU | pg::DIRTY, pg::LRU | pg::LOCKED, 0]);
        f.set_read_done(2, 10);
        let mut out = Vec::new();
        p.evict_folios(0, 2, &Freeable::new(&f, 5), &mut out);
        assert_eq!(out, [1, 0], "3 is off the LRU and 2 under read: passed over; 1 is dirty: handed over");
    }

    #[test]
    fn cache_ext_mru_evicts_anything_after_200_nodes() {
        // 300 folios, none on the LRU: the first 200 nodes are passed over, the 201st is
        // handed over (iterate_mru()'s `idx < 200`).
        const N: u32 = 300;
        let mut p = mru(N);
        let f = folios(&[0; N as usize]);
        let mut out = Vec::new();
        p.evict_folios(0, 2, &Freeable::new(&f, 0), &mut out);
        assert_eq!(out, [N - 1 - SKIP_WITHIN as u32, N - 2 - SKIP_WITHIN as u32]);
    }
}
