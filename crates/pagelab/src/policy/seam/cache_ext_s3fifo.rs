//! cache_ext's S3-FIFO (policies/cache_ext_s3fifo.bpf.c and cache_ext_s3fifo.c of
//! cache-ext/cache_ext 0d2eeca, the SOSP '25 artifact, on linux-cache-ext 7442a92), ported
//! line by line onto the seam's [`Lists`], with its sizes and rules:
//!
//! * two lists, small and main, and a ghost of the evicted pages' identities holding as many
//!   entries as the cgroup has pages (`cache_size`, the cgroup's size over the page size,
//!   which also sizes `ghost_map`);
//! * a folio is added at the tail of main if its page is in the ghost (the entry goes),
//!   else at the tail of small, with a frequency of 0; an access adds 1, up to 3;
//! * eviction works on small when its approximate size is at least `cache_size / 15` or main
//!   holds at most twice as many, else on main:
//!   - **small**, walked from the head: a folio not uptodate, off the LRU, dirty or under
//!     writeback, or read more than once since it was added, moves to the tail of main (only
//!     the last is marked as in main); any other is handed over (and moves to small's tail);
//!   - **main**, walked from the head up to four times, with the thresholds 0, 1, 2, 3 until
//!     the request is met: a folio not freeable now moves to the tail; any other loses one
//!     of its frequency and is handed over if that falls below the threshold, else moves to
//!     the tail (a walk meets the moved folios again, up to `max_iter`);
//! * each folio that leaves (evicted, or removed from the page cache otherwise) enters the
//!   ghost, and its list's approximate size goes down by one.
//!
//! The two sizes are the program's approximations: a walk on small moves every folio it
//! continues past to main's count, but a folio moved without being marked in main counts
//! against small again when it leaves, so small's count can fall below 0; its test against
//! `cache_size / 15` compares the signed count as an unsigned one (C's conversion), so a
//! negative count sends eviction to small, whose walk then resets it to 0.
//!
//! What differs from the BPF program, and why:
//! * every page-cache folio of the cgroup is the policy's (cache_ext watches the files of
//!   one directory, `is_folio_relevant()`); anonymous folios are not listed and leave no
//!   ghost entry (as in [`super::cache_ext_fifo`]); the ghost is keyed by the page's
//!   identity ([`Folio::key`]: cache_ext's inode and index);
//! * the ghost is a FIFO of `cache_size` entries: `ghost_map` is a per-CPU
//!   `BPF_MAP_TYPE_LRU_HASH` that the program only updates and deletes (never looks up), so
//!   its entries leave in insertion order; the kernel's per-CPU split of the entries and its
//!   batched eviction are not modeled;
//! * a kept candidate coming back (the seam's `folio_added` with [`Folio::putback`]) is not
//!   added again: cache_ext's kernel calls `folio_added` only when a folio enters the page
//!   cache;
//! * the walks stop at the request's `nr` candidates (cache_ext's fill the array of 32).

use std::collections::VecDeque;

use super::lists::{Iter, IterateOpts, ListId, Lists, Place};
use super::{Access, Cgroup, EvictionPolicy, Folio, FolioId, Freeable, Removal};
use crate::mm::memcontrol::MemcgId;

/// s3fifo_folio_accessed()'s cap on a folio's frequency.
const MAX_FREQ: i64 = 3;

/// `struct folio_metadata`.
#[derive(Clone, Copy, Default)]
struct Meta {
    present: bool,
    freq: i64,
    in_main: bool,
}

/// `ghost_map`: the identities of evicted pages, at most `cap`, the oldest leaving first.
#[derive(Default)]
struct Ghost {
    cap: usize,
    /// Per page key: the sequence number of its live entry (0: none).
    stamp: Vec<u64>,
    /// Entries in insertion order; an entry whose stamp is no longer its key's is stale.
    queue: VecDeque<(u32, u64)>,
    seq: u64,
    live: usize,
}

impl Ghost {
    /// folio_in_ghost(): whether `key` has an entry, which goes.
    fn take(&mut self, key: u32) -> bool {
        match self.stamp.get_mut(key as usize) {
            Some(s) if *s != 0 => {
                *s = 0;
                self.live -= 1;
                true
            }
            _ => false,
        }
    }

    /// bpf_map_update_elem(&ghost_map, …, BPF_ANY): a new entry for `key` (a present one
    /// starts again), the oldest leaving once there are more than `cap`.
    fn insert(&mut self, key: u32) {
        if self.cap == 0 {
            return;
        }
        let k = key as usize;
        if k >= self.stamp.len() {
            self.stamp.resize((k + 1).max(self.stamp.len() * 2), 0);
        }
        self.live += (self.stamp[k] == 0) as usize;
        self.seq += 1;
        self.stamp[k] = self.seq;
        self.queue.push_back((key, self.seq));
        while self.live > self.cap {
            let (old, s) = self.queue.pop_front().expect("a live entry is queued");
            if self.stamp[old as usize] == s {
                self.stamp[old as usize] = 0;
                self.live -= 1;
            }
        }
        if self.queue.len() > 2 * self.cap + 64 {
            let stamp = &self.stamp;
            self.queue.retain(|&(k, s)| stamp[k as usize] == s);
        }
    }
}

/// cache_ext's S3-FIFO for one cgroup.
pub struct CacheExtS3Fifo {
    lists: Lists,
    main_list: ListId,
    small_list: ListId,
    meta: Vec<Meta>,
    ghost: Ghost,
    /// `cache_size`: the cgroup's size in pages.
    cache_size: u64,
    small_list_size: i64,
    main_list_size: i64,
}

impl CacheExtS3Fifo {
    /// s3fifo_init(): the two lists; `cache_size` is the machine's memory until
    /// [`EvictionPolicy::init`] gives the cgroup's.
    pub fn new(machine_pages: u64) -> CacheExtS3Fifo {
        let mut lists = Lists::new();
        let main_list = lists.create();
        let small_list = lists.create();
        let mut s =
            CacheExtS3Fifo { lists, main_list, small_list, meta: Vec::new(), ghost: Ghost::default(), cache_size: 0, small_list_size: 0, main_list_size: 0 };
        s.size(machine_pages);
        s
    }

    /// cache_ext_s3fifo.c: `cache_size` and `ghost_map`'s max_entries from the cgroup's size.
    fn size(&mut self, pages: u64) {
        self.cache_size = pages;
        self.ghost.cap = pages as usize;
    }

    fn meta_mut(&mut self, id: FolioId) -> &mut Meta {
        let i = id as usize;
        if i >= self.meta.len() {
            self.meta.resize((i + 1).max(self.meta.len() * 2), Meta::default());
        }
        &mut self.meta[i]
    }

    /// evict_small(): walk small; what it continues past goes to main's tail, what it evicts
    /// to small's tail; the sizes move by the folios continued past.
    fn evict_small(&mut self, nr: usize, freeable: &Freeable, out: &mut Vec<FolioId>) {
        let opts = IterateOpts { continue_list: Some(self.main_list), continue_place: Place::Tail, evict_list: None, evict_place: Place::Tail };
        let meta = &mut self.meta;
        let mut continued = 0;
        self.lists.iterate_extended(self.small_list, opts, nr, out, |_, id| {
            let verdict = small_verdict(meta, freeable, id);
            continued += (verdict == Iter::Continue) as i64;
            verdict
        });
        let old = self.small_list_size;
        self.small_list_size -= continued;
        if old < 0 {
            self.small_list_size = 0;
        }
        let old = self.main_list_size;
        self.main_list_size += continued;
        if old < 0 {
            self.main_list_size = continued;
        }
    }

    /// evict_main_iter(): up to four walks of main, with the thresholds 0 to 3, until `nr`
    /// folios are handed over; every folio met moves to the tail.
    fn evict_main(&mut self, nr: usize, freeable: &Freeable, out: &mut Vec<FolioId>) {
        let opts = IterateOpts { continue_list: None, continue_place: Place::Tail, evict_list: None, evict_place: Place::Tail };
        let start = out.len();
        for threshold in 0..=MAX_FREQ {
            let taken = out.len() - start;
            if taken >= nr {
                break;
            }
            let meta = &mut self.meta;
            self.lists.iterate_extended(self.main_list, opts, nr - taken, out, |_, id| main_verdict(meta, freeable, id, threshold));
        }
    }
}

/// bpf_s3fifo_score_small_fn(): pass over (to main) a folio the kernel could not free now,
/// one without metadata, and one read more than once (marked in main); evict the others.
fn small_verdict(meta: &mut [Meta], freeable: &Freeable, id: FolioId) -> Iter {
    if !freeable.now(id) {
        return Iter::Continue;
    }
    match meta.get_mut(id as usize) {
        Some(m) if m.present => {
            if m.freq > 1 {
                m.in_main = true;
                Iter::Continue
            } else {
                Iter::Evict
            }
        }
        _ => Iter::Continue,
    }
}

/// bpf_s3fifo_score_main_iter_fn_N(): pass over a folio the kernel could not free now or
/// without metadata; any other loses one of its frequency and is evicted if that falls
/// below `threshold`.
fn main_verdict(meta: &mut [Meta], freeable: &Freeable, id: FolioId, threshold: i64) -> Iter {
    if !freeable.now(id) {
        return Iter::Continue;
    }
    match meta.get_mut(id as usize) {
        Some(m) if m.present => {
            m.freq -= 1;
            if m.freq < threshold {
                Iter::Evict
            } else {
                Iter::Continue
            }
        }
        _ => Iter::Continue,
    }
}

impl EvictionPolicy for CacheExtS3Fifo {
    /// The cgroup's size (cache_ext_s3fifo.c sets `cache_size` from `--cgroup_size`).
    fn init(&mut self, cgroup: &Cgroup) {
        self.size(cgroup.max);
    }

    /// s3fifo_folio_added(): to main's tail if the page is in the ghost (the entry goes),
    /// else to small's; frequency 0. Page-cache folios only (cache_ext's hooks never see
    /// anon: added, removed or in the ghost). A kept candidate coming back is still listed and
    /// stays where it is (cache_ext does not call `folio_added` for it).
    fn folio_added(&mut self, folio: &Folio) {
        if folio.anon {
            return;
        }
        if folio.putback && self.lists.list_of(folio.id).is_some() {
            // The add fails: the folio rejoins the walks where it stands (lists.rs).
            self.lists.add_tail(self.small_list, folio.id);
            return;
        }
        let in_main = self.ghost.take(folio.key);
        let list = if in_main {
            self.main_list_size += 1;
            self.main_list
        } else {
            self.small_list_size += 1;
            self.small_list
        };
        if !self.lists.add_tail(list, folio.id) {
            return;
        }
        *self.meta_mut(folio.id) = Meta { present: true, freq: 0, in_main };
    }

    /// s3fifo_folio_accessed(): one more, up to 3, for the accesses cache_ext's hook hears
    /// ([`Access::marks_accessed`]: not a buffered write).
    fn folio_accessed(&mut self, folio: &Folio, how: Access) {
        if !how.marks_accessed() {
            return;
        }
        if let Some(m) = self.meta.get_mut(folio.id as usize).filter(|m| m.present) {
            m.freq = (m.freq + 1).min(MAX_FREQ);
        }
    }

    /// s3fifo_folio_evicted() (cache_ext calls it for every folio leaving the page cache):
    /// the page enters the ghost; its list's size goes down; the metadata goes (and, in
    /// pagelab, the list node).
    fn folio_removed(&mut self, folio: &Folio, _why: Removal) {
        if folio.anon {
            return;
        }
        self.lists.del(folio.id);
        self.ghost.insert(folio.key);
        let Some(m) = self.meta.get_mut(folio.id as usize).filter(|m| m.present) else { return };
        if m.in_main {
            self.main_list_size -= 1;
        } else {
            self.small_list_size -= 1;
        }
        m.present = false;
    }

    /// s3fifo_evict_folios(): small when its size reaches `cache_size / 15` (compared as
    /// unsigned, as C converts the signed count) or main holds at most twice small's, else
    /// main.
    fn evict_folios(&mut self, _cgroup: MemcgId, nr: usize, freeable: &Freeable, out: &mut Vec<FolioId>) {
        if self.small_list_size as u64 >= self.cache_size / 15 || self.main_list_size <= 2 * self.small_list_size {
            self.evict_small(nr, freeable, out);
        } else {
            self.evict_main(nr, freeable, out);
        }
    }

    fn state_bytes(&self) -> u64 {
        let ghost = self.ghost.stamp.capacity() * 8 + self.ghost.queue.capacity() * 16;
        self.lists.state_bytes() + (self.meta.capacity() * std::mem::size_of::<Meta>() + ghost) as u64
    }

    fn state(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "small_listed": self.lists.len(self.small_list),
            "main_listed": self.lists.len(self.main_list),
            "small_list_size": self.small_list_size,
            "main_list_size": self.main_list_size,
            "ghost": self.ghost.live,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::folio::pg;
    use crate::policy::seam::tests::{folio, folios};

    fn cgroup(max: u64) -> Cgroup {
        Cgroup { id: 0, path: "/c".into(), max, tasks: Vec::new() }
    }

    fn s3fifo(max: u64) -> CacheExtS3Fifo {
        let mut p = CacheExtS3Fifo::new(1 << 20);
        p.init(&cgroup(max));
        p
    }

    fn listed(p: &CacheExtS3Fifo, list: ListId) -> Vec<FolioId> {
        p.lists.iter(list).collect()
    }

    #[test]
    fn cache_ext_s3fifo_adds_a_page_found_in_the_ghost_to_main() {
        let mut p = s3fifo(100);
        p.folio_added(&folio(0));
        p.folio_removed(&folio(0), Removal::Evicted);
        // The same page (key 0) comes back in another frame.
        p.folio_added(&Folio { id: 5, ..folio(0) });
        p.folio_added(&folio(1));
        assert_eq!((listed(&p, p.main_list), listed(&p, p.small_list)), (vec![5], vec![1]));
        assert_eq!((p.main_list_size, p.small_list_size, p.ghost.live), (1, 1, 0), "the ghost entry went");
    }

    #[test]
    fn cache_ext_s3fifo_leaves_anon_folios_out_of_its_lists_and_ghost() {
        let mut p = s3fifo(100);
        let anon = Folio { anon: true, ..folio(0) };
        p.folio_added(&anon);
        p.folio_removed(&anon, Removal::Freed);
        assert_eq!((p.lists.list_of(0), p.small_list_size, p.ghost.live), (None, 0, 0));
    }

    #[test]
    fn cache_ext_s3fifo_ghost_holds_cache_size_entries_oldest_leaving_first() {
        let mut p = s3fifo(2);
        for id in 0..3 {
            p.folio_added(&folio(id));
            p.folio_removed(&folio(id), Removal::Freed);
        }
        assert!(!p.ghost.take(0), "the oldest entry left");
        assert!(p.ghost.take(1) && p.ghost.take(2));
    }

    #[test]
    fn cache_ext_s3fifo_small_walk_promotes_a_folio_read_twice_and_evicts_one_read_once() {
        let mut p = s3fifo(100);
        for id in 0..3 {
            p.folio_added(&folio(id));
        }
        for _ in 0..2 {
            p.folio_accessed(&folio(0), Access::Read);
        }
        p.folio_accessed(&folio(1), Access::Read);
        let f = folios(&[pg::LRU; 3]);
        let mut out = Vec::new();
        p.evict_folios(0, 1, &Freeable::new(&f, 0), &mut out);
        assert_eq!(out, [1], "freq 1 is not more than 1");
        assert_eq!(listed(&p, p.main_list), [0]);
        assert!(p.meta[0].in_main);
        assert_eq!(listed(&p, p.small_list), [2, 1], "the evicted folio moved to small's tail");
        assert_eq!((p.small_list_size, p.main_list_size), (2, 1));
    }

    #[test]
    fn cache_ext_s3fifo_small_walk_moves_a_dirty_folio_to_main_unmarked() {
        let mut p = s3fifo(100);
        for id in 0..2 {
            p.folio_added(&folio(id));
        }
        let f = folios(&[pg::LRU | pg::DIRTY, pg::LRU]);
        let mut out = Vec::new();
        p.evict_folios(0, 1, &Freeable::new(&f, 0), &mut out);
        assert_eq!((out, listed(&p, p.main_list)), (vec![1], vec![0]));
        assert!(!p.meta[0].in_main, "only a folio read twice is marked");
        // It leaves from main but counts against small: small's count falls below 0.
        p.folio_removed(&folio(1), Removal::Evicted);
        p.folio_removed(&folio(0), Removal::Evicted);
        assert_eq!((p.small_list_size, p.main_list_size), (-1, 1));
    }

    #[test]
    fn cache_ext_s3fifo_evicts_from_main_once_it_holds_more_than_twice_small() {
        // cache_size 1500: small's threshold is 100. Main gets 3 pages through the ghost,
        // small 1; main (3) > 2 x small (1) and small < 100: main is walked.
        let mut p = s3fifo(1500);
        for id in 0..3 {
            p.folio_added(&folio(id));
            p.folio_removed(&folio(id), Removal::Evicted);
        }
        for id in 0..3 {
            p.folio_added(&Folio { id: 10 + id, ..folio(id) });
        }
        p.folio_added(&folio(20));
        assert_eq!((p.main_list_size, p.small_list_size), (3, 1));
        let f = folios(&[pg::LRU; 21]);
        let mut out = Vec::new();
        p.evict_folios(0, 1, &Freeable::new(&f, 0), &mut out);
        assert_eq!(out, [10], "main's head, frequency 0 - 1 < 0");
    }

    #[test]
    fn cache_ext_s3fifo_main_walk_meets_a_folio_again_until_its_frequency_falls_below_0() {
        // Two main folios read 3 times: each visit takes one off and moves it to the tail;
        // the walk meets them again and evicts the first at -1, in the first pass.
        let mut p = s3fifo(1500);
        for id in 0..2 {
            p.folio_added(&folio(id));
            p.folio_removed(&folio(id), Removal::Evicted);
            p.folio_added(&folio(id));
            for _ in 0..4 {
                p.folio_accessed(&folio(id), Access::Read);
            }
        }
        assert_eq!(p.meta[0].freq, 3, "capped at 3");
        // Small must be below its share for main to be walked: it is empty (0 x 2 < 2).
        let f = folios(&[pg::LRU; 2]);
        let mut out = Vec::new();
        p.evict_folios(0, 1, &Freeable::new(&f, 0), &mut out);
        assert_eq!((out, p.meta[0].freq, p.meta[1].freq), (vec![0], -1, 0));
    }

    #[test]
    fn cache_ext_s3fifo_a_kept_candidate_is_not_added_again() {
        let mut p = s3fifo(100);
        p.folio_added(&folio(0));
        let f = folios(&[pg::LRU]);
        let mut out = Vec::new();
        p.evict_folios(0, 1, &Freeable::new(&f, 0), &mut out);
        assert_eq!(out, [0]);
        p.folio_added(&Folio { putback: true, ..folio(0) });
        assert_eq!((p.small_list_size, p.lists.handed(0)), (1, false));
    }
}
