//! Eviction lists, cache_ext-shaped: the list helpers (kfuncs) cache_ext gives its BPF
//! policies, for a seam policy in Rust (and, through the Python module, in Python), so that
//! cache_ext's policies port line by line.
//!
//! Modeled on cache_ext's mm/page_cache_ext_ds.c (the SOSP '25 6.6.8 patch):
//! `bpf_cache_ext_ds_registry_new_list`, `bpf_cache_ext_list_add` / `_add_tail` / `_move` /
//! `_del`, `bpf_cache_ext_list_iterate` / `_iterate_extended` (a callback per node that
//! continues, stops or evicts) and `bpf_cache_ext_list_sample` (batch scoring: the lowest
//! score of each run of `sample_size` nodes).
//!
//! ## The contract
//!
//! * **A policy holds several lists** ([`Lists::create`]), one [`Lists`] per cgroup (the
//!   seam makes one policy instance per cgroup, as cache_ext's registry is per memcg). A
//!   list is a doubly linked list of folio ids; the head is where iteration starts.
//! * **A folio is on at most one list.** [`Lists::add`] / [`Lists::add_tail`] fail (false)
//!   for a folio already on a list, as cache_ext's do; [`Lists::move_to`] and
//!   [`Lists::del`] fail for a folio on no list. Each operation is O(1).
//! * **Candidates stay on their list until the policy deletes them.** A folio that
//!   [`Lists::iterate`], [`Lists::sample`] or [`Lists::lowest`] returns is *handed over*
//!   (the seam's contract: it is the kernel's until it comes back); it keeps its place but
//!   is skipped by every later walk. It comes back through the policy's `folio_added`
//!   (a candidate the kernel kept, [`super::Folio::putback`]): the policy's `add_tail`
//!   there fails because the folio is still listed, as in cache_ext, where a kept folio
//!   is never added again, and the failed add returns the folio to the walks where it
//!   stands. A freed candidate reaches `folio_removed`, where the policy calls
//!   [`Lists::del`] (cache_ext's kernel drops the node itself on eviction).
//! * **A walk is bounded**: [`Lists::iterate`] visits at most [`MAX_ITER`] + 1 nodes
//!   (cache_ext's `max_iter` of 4096 in cache_ext_list_iterate() and
//!   cache_ext_list_iterate_extended(), linux-cache-ext 7442a92) and stops once `nr`
//!   candidates are chosen; [`Lists::sample`] scores at most `sample_size * nr` nodes.
//! * **A handed-over node still counts in a walk**: it takes its index and counts against
//!   the bound, but is not offered to the callback and does not move. cache_ext's kernel
//!   walks the isolated (or kept, not yet back on the LRU) folio's node like any other, and
//!   the callbacks of the ported policies pass over a folio off the LRU; so an index such as
//!   cache_ext_mru.bpf.c's 200 counts it.
//! * **Determinism**: walks go in list order; ties in a score keep the node nearer the
//!   head (cache_ext's strict `<`).
//! * **Memory** grows with the largest folio id listed (12 bytes a folio), never with a
//!   declared size.

use super::FolioId;

/// A list's handle ([`Lists::create`]).
pub type ListId = u32;

/// cache_ext's `max_iter` (mm/cache_ext_ds.c: cache_ext_list_iterate(), linux-cache-ext
/// 7442a92): a walk visits at most this many nodes plus one.
pub const MAX_ITER: usize = 4096;

const NONE: u32 = u32::MAX;
/// The bit of `on` that marks a handed-over folio.
const HANDED: u32 = 1 << 31;

/// What an iteration callback decides for a node (cache_ext's
/// `CACHE_EXT_CONTINUE_ITER`, `CACHE_EXT_STOP_ITER`, `CACHE_EXT_EVICT_NODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Iter {
    Continue,
    Stop,
    Evict,
}

/// How an iteration ended (cache_ext's `CACHE_EXT_DONE_ITER`, `CACHE_EXT_MAX_ITER_REACHED`,
/// `CACHE_EXT_EVICT_ARRAY_FILLED`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IterEnd {
    /// The list ended or the callback said stop.
    Done,
    /// [`MAX_ITER`] nodes were visited.
    MaxIter,
    /// `nr` candidates were chosen.
    Filled,
}

/// Where [`Lists::iterate_extended`] puts a node after its callback (cache_ext's
/// `CACHE_EXT_ITERATE_SKIP`, `_HEAD`, `_TAIL`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Place {
    /// Leave it where it is.
    #[default]
    Stay,
    Head,
    Tail,
}

/// The options of [`Lists::iterate_extended`] (cache_ext's `struct cache_ext_iterate_opts`):
/// where a node the callback continued past goes, and where an evicted one goes; `None`
/// as the list is the list being walked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IterateOpts {
    pub continue_list: Option<ListId>,
    pub continue_place: Place,
    pub evict_list: Option<ListId>,
    pub evict_place: Place,
}

#[derive(Clone, Copy, Debug)]
struct Head {
    first: u32,
    last: u32,
    len: u32,
}

/// A policy's eviction lists (one cgroup's registry). See the module for the contract.
#[derive(Debug, Default)]
pub struct Lists {
    heads: Vec<Head>,
    /// Per folio id: the list + 1 (0: on no list), with [`HANDED`] for a handed-over folio.
    on: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
}

impl Lists {
    pub fn new() -> Lists {
        Lists::default()
    }

    /// A new, empty list (cache_ext's `bpf_cache_ext_ds_registry_new_list`).
    pub fn create(&mut self) -> ListId {
        self.heads.push(Head { first: NONE, last: NONE, len: 0 });
        self.heads.len() as ListId - 1
    }

    /// The list `id` is on, if any.
    #[inline]
    pub fn list_of(&self, id: FolioId) -> Option<ListId> {
        match self.on.get(id as usize).map_or(0, |&o| o & !HANDED) {
            0 => None,
            l => Some(l - 1),
        }
    }

    /// The folio was handed over as a candidate and has not come back.
    #[inline]
    pub fn handed(&self, id: FolioId) -> bool {
        self.on.get(id as usize).is_some_and(|&o| o & HANDED != 0)
    }

    /// Folios on `list` (handed-over ones included).
    pub fn len(&self, list: ListId) -> usize {
        self.heads.get(list as usize).map_or(0, |h| h.len as usize)
    }

    pub fn is_empty(&self, list: ListId) -> bool {
        self.len(list) == 0
    }

    /// The folios of `list` from head to tail (handed-over ones included).
    pub fn iter(&self, list: ListId) -> impl Iterator<Item = FolioId> + '_ {
        let mut at = self.heads.get(list as usize).map_or(NONE, |h| h.first);
        std::iter::from_fn(move || {
            if at == NONE {
                return None;
            }
            let id = at;
            at = self.next[id as usize];
            Some(id)
        })
    }

    /// Puts `id` at the head of `list` (cache_ext's `bpf_cache_ext_list_add`). False if the
    /// list does not exist or the folio is on a list already; a handed-over folio on a list
    /// comes back to the walks where it stands (see the module).
    pub fn add(&mut self, list: ListId, id: FolioId) -> bool {
        self.place(list, id, false)
    }

    /// Puts `id` at the tail of `list` (cache_ext's `bpf_cache_ext_list_add_tail`).
    pub fn add_tail(&mut self, list: ListId, id: FolioId) -> bool {
        self.place(list, id, true)
    }

    /// Moves a listed folio to the head or tail of `list` (cache_ext's
    /// `bpf_cache_ext_list_move`). False if the folio is on no list or the list does not
    /// exist.
    pub fn move_to(&mut self, list: ListId, id: FolioId, tail: bool) -> bool {
        if list as usize >= self.heads.len() || self.list_of(id).is_none() {
            return false;
        }
        let handed = self.on[id as usize] & HANDED;
        self.unlink(id);
        self.link(list, id, tail);
        self.on[id as usize] |= handed;
        true
    }

    /// Takes `id` off its list (cache_ext's `bpf_cache_ext_list_del`). False if it was on
    /// none.
    pub fn del(&mut self, id: FolioId) -> bool {
        if self.list_of(id).is_none() {
            return false;
        }
        self.unlink(id);
        true
    }

    /// Walks `list` from the head, calling `f(index, folio)` for each folio not handed over
    /// (cache_ext's `bpf_cache_ext_list_iterate`; a handed-over folio takes its index
    /// without a call): [`Iter::Evict`] appends it to `out` (at most `nr`), [`Iter::Stop`]
    /// ends the walk.
    pub fn iterate(&mut self, list: ListId, nr: usize, out: &mut Vec<FolioId>, f: impl FnMut(usize, FolioId) -> Iter) -> IterEnd {
        self.iterate_extended(list, IterateOpts::default(), nr, out, f)
    }

    /// [`Lists::iterate`] that also moves each node after its callback, as `opts` says
    /// (cache_ext's `bpf_cache_ext_list_iterate_extended`). A node moved to the tail of the
    /// list being walked is met again, as in cache_ext (the walk's bound still holds).
    pub fn iterate_extended(
        &mut self,
        list: ListId,
        opts: IterateOpts,
        nr: usize,
        out: &mut Vec<FolioId>,
        mut f: impl FnMut(usize, FolioId) -> Iter,
    ) -> IterEnd {
        let Some(h) = self.heads.get(list as usize) else { return IterEnd::Done };
        let valid = |l: Option<ListId>| l.is_none_or(|l| (l as usize) < self.heads.len());
        if !valid(opts.continue_list) || !valid(opts.evict_list) || nr == 0 {
            return IterEnd::Done;
        }
        let (cont, evict) = (opts.continue_list.unwrap_or(list), opts.evict_list.unwrap_or(list));
        let mut at = h.first;
        let mut taken = 0;
        let mut visited = 0;
        while at != NONE {
            let id = at;
            at = self.next[id as usize];
            if visited > MAX_ITER {
                return IterEnd::MaxIter;
            }
            visited += 1;
            if self.handed(id) {
                continue;
            }
            match f(visited - 1, id) {
                Iter::Continue => self.place_after(cont, id, opts.continue_place),
                Iter::Stop => return IterEnd::Done,
                Iter::Evict => {
                    out.push(id);
                    self.on[id as usize] |= HANDED;
                    self.place_after(evict, id, opts.evict_place);
                    taken += 1;
                    if taken == nr {
                        return IterEnd::Filled;
                    }
                }
            }
        }
        IterEnd::Done
    }

    /// Batch scoring by sampling (cache_ext's `bpf_cache_ext_list_sample`): takes the first
    /// `sample_size * nr` folios of `list` (not handed over), moves them to the tail in their
    /// order, and from each run of `sample_size` of them appends to `out` the one with the
    /// lowest `score` (the first on ties). Returns how many were appended.
    ///
    /// cache_ext returns nothing when the list holds fewer than `sample_size * nr` folios;
    /// here the runs are made of what there is (a last, shorter run included), so a small
    /// cgroup still gets candidates.
    pub fn sample(&mut self, list: ListId, sample_size: usize, nr: usize, out: &mut Vec<FolioId>, mut score: impl FnMut(FolioId) -> i64) -> usize {
        let sample_size = sample_size.max(1);
        let snipped = self.take_front(list, sample_size.saturating_mul(nr));
        let mut n = 0;
        for run in snipped.chunks(sample_size).take(nr) {
            let mut best = run[0];
            let mut min = score(best);
            for &id in &run[1..] {
                let s = score(id);
                if s < min {
                    min = s;
                    best = id;
                }
            }
            out.push(best);
            self.on[best as usize] |= HANDED;
            n += 1;
        }
        n
    }

    /// Batch scoring of a window: scores the first `scan` folios of `list` (not handed
    /// over) and appends the `nr` lowest-scored to `out`, lowest first (nearer the head on
    /// ties). Nothing moves. Returns how many were appended.
    pub fn lowest(&mut self, list: ListId, scan: usize, nr: usize, out: &mut Vec<FolioId>, mut score: impl FnMut(FolioId) -> i64) -> usize {
        let mut scored: Vec<(i64, usize, FolioId)> = Vec::new();
        let mut at = self.heads.get(list as usize).map_or(NONE, |h| h.first);
        while at != NONE && scored.len() < scan {
            let id = at;
            at = self.next[id as usize];
            if !self.handed(id) {
                scored.push((score(id), scored.len(), id));
            }
        }
        let k = nr.min(scored.len());
        if k == 0 {
            return 0;
        }
        scored.select_nth_unstable(k - 1);
        scored.truncate(k);
        scored.sort_unstable();
        for &(_, _, id) in &scored {
            out.push(id);
            self.on[id as usize] |= HANDED;
        }
        k
    }

    /// Bytes of state (for the memory benchmark).
    pub fn state_bytes(&self) -> u64 {
        ((self.on.capacity() + self.next.capacity() + self.prev.capacity()) * 4 + self.heads.capacity() * 12) as u64
    }

    /// The first `n` folios of `list` not handed over, moved to its tail in their order.
    fn take_front(&mut self, list: ListId, n: usize) -> Vec<FolioId> {
        let mut taken = Vec::new();
        let mut at = self.heads.get(list as usize).map_or(NONE, |h| h.first);
        while at != NONE && taken.len() < n {
            let id = at;
            at = self.next[id as usize];
            if !self.handed(id) {
                taken.push(id);
            }
        }
        for &id in &taken {
            self.unlink(id);
            self.link(list, id, true);
        }
        taken
    }

    fn place(&mut self, list: ListId, id: FolioId, tail: bool) -> bool {
        if list as usize >= self.heads.len() {
            return false;
        }
        if self.list_of(id).is_some() {
            // Already listed: a handed-over folio is back.
            self.on[id as usize] &= !HANDED;
            return false;
        }
        self.link(list, id, tail);
        true
    }

    fn place_after(&mut self, list: ListId, id: FolioId, place: Place) {
        if place != Place::Stay {
            let handed = self.on[id as usize] & HANDED;
            self.unlink(id);
            self.link(list, id, place == Place::Tail);
            self.on[id as usize] |= handed;
        }
    }

    fn link(&mut self, list: ListId, id: FolioId, tail: bool) {
        let i = id as usize;
        if i >= self.on.len() {
            let n = (i + 1).max(self.on.len() * 2);
            self.on.resize(n, 0);
            self.next.resize(n, NONE);
            self.prev.resize(n, NONE);
        }
        let h = &mut self.heads[list as usize];
        if tail {
            self.prev[i] = h.last;
            self.next[i] = NONE;
            if h.last == NONE {
                h.first = id;
            } else {
                self.next[h.last as usize] = id;
            }
            h.last = id;
        } else {
            self.next[i] = h.first;
            self.prev[i] = NONE;
            if h.first == NONE {
                h.last = id;
            } else {
                self.prev[h.first as usize] = id;
            }
            h.first = id;
        }
        h.len += 1;
        self.on[i] = list + 1;
    }

    fn unlink(&mut self, id: FolioId) {
        let i = id as usize;
        let list = (self.on[i] & !HANDED) - 1;
        let (p, n) = (self.prev[i], self.next[i]);
        let h = &mut self.heads[list as usize];
        if p == NONE {
            h.first = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            h.last = p;
        } else {
            self.prev[n as usize] = p;
        }
        h.len -= 1;
        self.on[i] = 0;
    }
}
