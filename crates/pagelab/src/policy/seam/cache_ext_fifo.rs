//! cache_ext's FIFO (policies/cache_ext_fifo.bpf.c of cache-ext/cache_ext 0d2eeca, the
//! SOSP '25 artifact, on linux-cache-ext 7442a92), ported line by line onto the seam's
//! [`Lists`]: one list; a folio joins its tail when it is added; accesses change nothing;
//! eviction walks the list from the head (the oldest folio) with
//! `bpf_cache_ext_list_iterate` and hands over every folio it meets that is uptodate, on the
//! LRU, clean and not under writeback, passing over the others where they stand.
//!
//! What differs from the BPF program, and why:
//! * every page-cache folio of the cgroup is the policy's (cache_ext watches the files of
//!   one directory, `is_folio_relevant()`); anonymous folios are not listed, as cache_ext's
//!   hooks never see them, so the cgroup's anon memory is never a candidate (the seam has
//!   no kernel LRU beside the policy: under swap, such a cgroup does not swap);
//! * the walk stops at the request's `nr` candidates (cache_ext's fills its array of 32
//!   whatever the request; the seam takes no more than it asked for);
//! * `fifo_folio_evicted()` is empty because cache_ext's kernel drops the node itself when
//!   the folio leaves the page cache; here the policy drops it.
//!
//! The plain `fifo` (pagelab-cachesim's trace algorithm behind [`super::adapters`]) differs:
//! it hands over the oldest folio whatever its state, so a dirty one is kept by the kernel
//! (and moves to the plain cache's back), where this one passes over it and stays in order.

use super::lists::{Iter, ListId, Lists};
use super::{Access, Cgroup, EvictionPolicy, Folio, FolioId, Freeable, Removal};
use crate::mm::memcontrol::MemcgId;

/// cache_ext's FIFO for one cgroup.
pub struct CacheExtFifo {
    lists: Lists,
    main_list: ListId,
}

impl Default for CacheExtFifo {
    fn default() -> Self {
        CacheExtFifo::new()
    }
}

impl CacheExtFifo {
    /// fifo_init(): the one list (`main_list`).
    pub fn new() -> CacheExtFifo {
        let mut lists = Lists::new();
        let main_list = lists.create();
        CacheExtFifo { lists, main_list }
    }
}

impl EvictionPolicy for CacheExtFifo {
    fn init(&mut self, _cgroup: &Cgroup) {}

    /// fifo_folio_added(): to the list's tail, for a page-cache folio (cache_ext's hook runs
    /// in __filemap_add_folio() only: anon is not the policy's). A kept candidate coming back
    /// is still listed: the add fails and it keeps its place.
    fn folio_added(&mut self, folio: &Folio) {
        if !folio.anon {
            self.lists.add_tail(self.main_list, folio.id);
        }
    }

    /// cache_ext's FIFO has no `folio_accessed`.
    fn folio_accessed(&mut self, _folio: &Folio, _how: Access) {}

    /// fifo_folio_evicted() (empty: cache_ext's kernel drops the node, here the policy).
    fn folio_removed(&mut self, folio: &Folio, _why: Removal) {
        self.lists.del(folio.id);
    }

    /// fifo_evict_folios(): `bpf_cache_ext_list_iterate()` from the head with
    /// bpf_fifo_evict_cb(), which passes over a folio not uptodate, off the LRU, dirty or
    /// under writeback ([`Freeable::now`]) and evicts any other.
    fn evict_folios(&mut self, _cgroup: MemcgId, nr: usize, freeable: &Freeable, out: &mut Vec<FolioId>) {
        self.lists.iterate(self.main_list, nr, out, |_, id| if freeable.now(id) { Iter::Evict } else { Iter::Continue });
    }

    fn state_bytes(&self) -> u64 {
        self.lists.state_bytes()
    }

    fn state(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({ "listed": self.lists.len(self.main_list) }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::folio::pg;
    use crate::policy::seam::tests::{folio, folios};

    #[test]
    fn cache_ext_fifo_skips_a_dirty_folio_and_hands_over_the_next_clean_one() {
        let mut p = CacheExtFifo::new();
        for id in 0..4 {
            p.folio_added(&folio(id));
        }
        let f = folios(&[pg::LRU, pg::LRU | pg::DIRTY, pg::LRU | pg::WRITEBACK, pg::LRU]);
        let mut out = Vec::new();
        p.evict_folios(0, 2, &Freeable::new(&f, 0), &mut out);
        assert_eq!(out, [0, 3], "the dirty (1) and writeback (2) folios are passed over");
        assert_eq!(p.lists.iter(p.main_list).collect::<Vec<_>>(), [0, 1, 2, 3], "nothing moves");
    }

    #[test]
    fn cache_ext_fifo_skips_a_folio_under_read_and_one_off_the_lru() {
        let mut p = CacheExtFifo::new();
        for id in 0..3 {
            p.folio_added(&folio(id));
        }
        let mut f = folios(&[pg::LRU | pg::LOCKED, 0, pg::LRU]);
        f.set_read_done(0, 10);
        let mut out = Vec::new();
        p.evict_folios(0, 3, &Freeable::new(&f, 5), &mut out);
        assert_eq!(out, [2]);
    }

    #[test]
    fn cache_ext_fifo_lists_page_cache_folios_only() {
        let mut p = CacheExtFifo::new();
        p.folio_added(&Folio { anon: true, ..folio(0) });
        p.folio_added(&folio(1));
        let f = folios(&[pg::LRU; 2]);
        let mut out = Vec::new();
        p.evict_folios(0, 2, &Freeable::new(&f, 0), &mut out);
        assert_eq!(out, [1]);
    }

    #[test]
    fn cache_ext_fifo_ignores_accesses_and_evicts_in_insertion_order() {
        let mut p = CacheExtFifo::new();
        for id in 0..3 {
            p.folio_added(&folio(id));
        }
        p.folio_accessed(&folio(0), Access::Read);
        let f = folios(&[pg::LRU; 3]);
        let mut out = Vec::new();
        p.evict_folios(0, 1, &Freeable::new(&f, 0), &mut out);
        assert_eq!(out, [0]);
    }
}
