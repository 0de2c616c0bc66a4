//! The eviction seam: a small, cache_ext-shaped interface for page-cache eviction policies,
//! and the kernel-level [`Policy`](crate::policy::Policy) that hosts them ([`Ext`]).
//!
//! cache_ext (SOSP '25, a patched Linux 6.6.8) lets each memory cgroup run its own eviction
//! policy written against five hooks: `policy_init(memcg)`, `folio_added`, `folio_accessed`,
//! `folio_removed` and `evict_folios(ctx, memcg)`, which proposes up to 32 candidates; the
//! kernel validates every candidate and does everything else (isolation, writeback,
//! unmapping, accounting). Its upstream proposal (LSF/MM/BPF 2026) adds a sixth,
//! `admit_folio(folio)`. [`EvictionPolicy`] is that interface; [`Ext`] is the kernel around
//! it, written once for every seam policy; [`lists`] are cache_ext's list helpers for
//! writing one:
//!
//! * on `shrink_lruvec()` for a memcg with a seam policy it asks for up to SWAP_CLUSTER_MAX
//!   candidates at a time, validates each (a folio that is resident, on the LRU, not isolated
//!   and charged to this memcg; anything else is skipped and counted as an invalid candidate),
//!   isolates the valid ones and runs the shared
//!   [`shrink_folio_list()`](crate::mm::vmscan::shrink_folio_list), so swap-out of anon
//!   candidates, unmapping, the pgscan/pgsteal accounting (pagelab's: cache_ext's path
//!   counts neither) and the shadow entries happen as for the kernel's own LRUs;
//! * **the candidates are reclaimed as reclaim_pages() reclaims a list** (mm/vmscan.c:
//!   reclaim_pages() → reclaim_folio_list(), 6.1, 6.12, 7.3; cache_ext's 6.6.8
//!   __page_cache_ext_isolate_and_reclaim() calls it): shrink_folio_list() fills statistics
//!   that are dropped, so a dirty file candidate outside kswapd is activated with PG_reclaim
//!   and **nothing wakes the flushers for it**, and the seam's batches feed none of the
//!   node's dirty, writeback and congestion flags or throttling (`sc->nr`); the references are
//!   checked in 6.1 (and 6.6.8) and ignored in 6.12 and 7.3
//!   ([`Kernel::reclaim_pages_ignores_references`](crate::kernel::Kernel::reclaim_pages_ignores_references));
//! * a policy that returns no candidate, or only bad ones, ends the batch loop: reclaim makes
//!   no progress at that priority, the kernel's priority loop runs out, and the kernel's own
//!   fallback follows (memcg OOM or a forced charge, the global OOM killer) — never a hang;
//! * the folios the kernel keeps (locked, under writeback, dirty without IO allowed, swap
//!   full, pinned, or referenced mapped pages that folio_check_references() keeps or
//!   activates) go back to the LRU at once, and to the policy when the shrink_lruvec() call
//!   ends: the kernel's putback puts them at the head of the LRU, out of the rest of the
//!   pass's reach, and the seam's equivalent is **a kept candidate is not offered again in
//!   the same call**. Without it a policy that ranks a folio under read IO first (MRU, LFU
//!   on readahead pages) proposed it again and again while no modeled time passed;
//! * **the work of a reclaim call is bounded whatever a policy returns**: each request asks
//!   for at most the budget left, only that many ids are looked at (the rest count as
//!   invalid), and invalid or kept candidates spend the budget as freed ones do;
//! * the counts (requests, candidates, invalid, empty, evicted, kept and, of those,
//!   kept_locked: kept because their read was in flight) are in the report's policy state,
//!   and **a policy whose candidates are mostly kept gets one warning with the counts**
//!   (the report's `warnings`, printed by the command line, raised as a Python warning).
//!
//! ## The contract a policy sees
//!
//! * Ownership: a seam policy owns **every evictable folio of its cgroup, file and anon**.
//!   cache_ext itself handles page cache only and leaves anon to the kernel's LRU; pagelab
//!   hands a seam cgroup's anon pages to the same policy (reclaim swaps an anon candidate
//!   out as it would off the inactive anon list), so one policy decides for the whole
//!   cgroup. A policy that wants cache_ext's split can return file candidates only
//!   ([`Folio::anon`]).
//! * `folio_added` when the folio joins its memcg's LRU: at the drain of the per-CPU lru_add
//!   batch (mm/swap.c: folio_batch_move_lru(lru_add_fn)), which is where a folio becomes
//!   visible to reclaim. (cache_ext calls it earlier, in __filemap_add_folio(), when the
//!   folio enters the page cache; the seam waits until the folio can be a candidate.)
//! * `folio_accessed(Read)` for folio_mark_accessed() (a buffered read), `Write` for a
//!   buffered write to a cached folio, `ReclaimReferenced` when reclaim found the folio's
//!   mapping young (folio_referenced() in folio_check_references()). Loads and stores through
//!   page tables are invisible to the kernel until reclaim looks at the accessed bit, and so
//!   to the policy. cache_ext's hook runs first thing in folio_mark_accessed(), whatever
//!   PG_lru says (its 6.6.8 patch, cache-ext/linux-cache-ext 7442a92, mm/swap.c), so **an
//!   access while the folio still waits in the lru_add batch is reported too**, right after
//!   its `folio_added` (with [`Folio::task`] the inserting task): the read that inserted a
//!   page marks it accessed before the batch drains, and a policy that counts accesses
//!   counts that read, as cache_ext's sampling LFU does (a page read once has 2, one read
//!   ahead and never read 1). The plain caches ([`adapters`]) opt out
//!   ([`EvictionPolicy::hears_early_accesses`]): in their trace form a miss is an insertion
//!   without a hit.
//! * `evict_folios(cgroup, nr)` hands candidates **over**: from then on the folio is the
//!   kernel's. Each candidate then either leaves (`folio_removed(Evicted)`) or comes back
//!   (`folio_added` with [`Folio::putback`] set, followed by `folio_accessed(ReclaimReferenced)`
//!   if reclaim found it referenced). A policy may therefore forget a candidate as it returns
//!   it (the plain caches do: their eviction removes the victim).
//! * **`evict_folios` sees which folios the kernel could free now** ([`Freeable`]): cache_ext's
//!   policies read a candidate's flags as they choose (policies/cache_ext_sampling.bpf.c:
//!   bpf_lfu_score_fn(), cache_ext_lhd.bpf.c: bpf_lhd_score_fn(), the FIFO and S3-FIFO
//!   callbacks), and give a folio not uptodate, off the LRU, dirty or under writeback the
//!   score `INT64_MAX` (or pass over it), so a run of samples hands over a clean folio
//!   whenever it holds one. A dirty or writeback folio proposed anyway is kept by the kernel
//!   (mm/vmscan.c: shrink_folio_list(), 6.6.8 as 6.1/6.12: outside kswapd, or under
//!   writeback, it is marked PG_reclaim and activated) and stays where the policy's list
//!   has it (cache_ext's putback does not call `folio_added`; here the putback's
//!   `folio_added` finds it still listed).
//! * `folio_removed(Evicted)` for every freed candidate, `Freed` for a folio that leaves for
//!   another reason (its task exited or was OOM-killed). `folio_removed` may name a folio the
//!   policy already forgot.
//!
//! ## Admission (the sixth hook)
//!
//! cache_ext's upstream proposal (include/linux/cache_ext.h: `admit_folio`, "should this
//! newly inserted folio be cached at all?") marks a folio the policy refuses dropbehind:
//! it is read once and dropped instead of polluting the cache. pagelab models it so:
//!
//! * **`admit_folio` is asked once per folio, when a read inserts it in the page cache**
//!   (filemap_add_folio() for a buffered read, its readahead and a fault's read; not for a
//!   write), after the refault check ([`Folio::refault`] and [`Folio::workingset`] are
//!   known) and before the folio waits in the lru_add batch. Readahead pages are asked one
//!   by one as readahead inserts them; their reads are submitted as usual.
//! * **A refused folio is inserted, read and charged as any other** (it is in the page cache
//!   while its read is in flight, joins the LRU and is told to the policy by `folio_added`),
//!   and marked PG_dropbehind.
//! * **It leaves when a buffered read has copied it** (7.3's
//!   mm/filemap.c: filemap_end_dropbehind_read(), after the copy): if it is clean, not under
//!   writeback, not mapped, and its read is complete, it is removed as
//!   folio_unmap_invalidate() removes a folio — **no shadow entry**, so reading it again is
//!   a new miss, not a refault, and no `workingset_*` counter moves — and the policy hears
//!   `folio_removed(Freed)`. A readahead page leaves when the read that reaches it has
//!   copied it; until then it stays cached (and reclaim can evict it as any other).
//! * **A fault keeps it**: a fault that finds or inserts the folio clears the mark (the
//!   kernel's non-dontcache lookup does), since the page is about to be mapped.
//! * The default admits everything, so a policy without the hook behaves as before; the
//!   seam counts refusals (`not_admitted` in the policy state).
//!
//! ## Deferring to the kernel
//!
//! cache_ext measures its own overhead with a no-op policy that "defers to the default
//! kernel eviction policy while still maintaining cache_ext data structures" (SOSP '25
//! §6.3.2, Table 4). A policy whose [`EvictionPolicy::defers_eviction`] is true gets that:
//!
//! * **its cgroup keeps the kernel's classic LRU** (mm/vmscan.c, 6.1/6.12 with MGLRU off, as
//!   cache_ext's evaluation runs it): the same lists, scans and choices as a cgroup without a
//!   seam policy, so every counter is the classic LRU's;
//! * **the policy hears the same hooks** as a seam policy, for page-cache folios only
//!   (cache_ext's hooks are the page cache's; anon memory stays with the kernel's LRU):
//!   `folio_added` when a folio joins the LRU (then the reads made while it waited in the
//!   lru_add batch, as for a seam policy), `folio_accessed(Read | Write)` for
//!   folio_mark_accessed() and a buffered write, `folio_removed(Evicted)` for each folio the
//!   classic LRU's reclaim removed (__remove_mapping(), where cache_ext's removal hook runs;
//!   told when that shrink_lruvec() call ends) and `Freed` for one freed otherwise;
//! * `evict_folios` is never called.
//!
//! ## cache_ext's kernel LRU under the policy (`machine.seam_fallback`)
//!
//! cache_ext's kernel does not take a cgroup's folios off the kernel's LRU: its
//! shrink_lruvec() (linux-cache-ext 7442a92, 6.6.8) asks the policy first and falls back to
//! the kernel's own scan when the policy freed 80% or less of the target. With
//! `machine.seam_fallback = true` every evicting seam policy runs that way (off, the default,
//! the seam owns its cgroup's folios as above):
//!
//! * **the cgroup keeps the classic LRU** and the policy hears the hooks as a deferring
//!   policy does (the reads made while a folio waited in the lru_add batch right after its
//!   `folio_added`);
//! * **reclaim asks the policy for get_scan_count()'s inactive-file target**, in requests of
//!   up to 32 until the target is spent (cache_ext's loop does not stop at the reclaim
//!   goal; on a miniature machine, R of the full machine's requests, each of its size:
//!   mm/miniature.rs); a candidate must be a page-cache folio of the cgroup on its LRU,
//!   active or inactive, and is reclaimed as reclaim_pages() reclaims a list, the survivors put back
//!   on the classic LRU and given back to the policy when the call ends;
//! * **more than 80% of the target freed ends the call; otherwise the classic loop runs** on
//!   the rest of the targets (the report's `fallbacks` counts those calls), starting from
//!   the policy's count, which the patch then adds to the reclaimed pages a second time;
//!   what the classic LRU evicts the policy hears as `folio_removed(Evicted)`.
//!
//! ## What a hook costs
//!
//! Each hook call on a cgroup with a seam policy (deferring or not) charges
//! `[time] cache_ext_hook_ns` of CPU to whoever runs it (the task, or kswapd in reclaim), in
//! the profile as `cache_ext_hook`: cache_ext's work per event, the BPF call into the policy
//! and the framework's valid-folio registry (a hash-table insert, lookup or delete). The
//! default is 0, so a seam policy's hooks cost nothing unless a scenario sets it; `pagelab
//! calibrate` measures the registry's part on the user's host (not the BPF call itself).
//!
//! ## Refaults and the workingset
//!
//! A seam cgroup keeps the kernel's shadow entries and refault detection of the classic LRU
//! (mm/workingset.c: workingset_eviction() / workingset_refault(), 6.1/6.12), so
//! `workingset_refault_*`, `workingset_activate_*` and `workingset_restore_*` count as the
//! kernel counts them, and a policy is told through [`Folio::refault`] (the page replaced a
//! shadow entry) and [`Folio::workingset`] (the refault distance was within the workingset,
//! the kernel would have activated it); so is a deferring policy, or one over the kernel's
//! LRU (`machine.seam_fallback`), of its page-cache folios. The policy's folios are all
//! accounted on the inactive lists (memory.stat shows them as `inactive_file`/`inactive_anon`), so the workingset size
//! the refault distance is compared with (refault_workingset_sizes()) holds no active pages,
//! and `workingset_activate_*` counts fewer refaults than under the classic LRU. cache_ext's
//! policies do not see shadow entries; a policy that ignores the two flags behaves as there.

pub mod adapters;
pub mod cache_ext_fifo;
pub mod cache_ext_mru;
pub mod cache_ext_s3fifo;
mod host;
pub mod lhd;
pub mod lists;
pub mod noop;
pub mod random;
pub mod sampling_lfu;

pub use host::{effective_max, folio_of, Ext, SeamStats};

use crate::mm::folio::{pg, Folios};
use crate::mm::memcontrol::MemcgId;

/// Which of a cgroup's folios the kernel could free at once, as `evict_folios` sees them
/// (the module's contract).
pub struct Freeable<'a> {
    folios: &'a Folios,
    /// The modeled time of the request (a read completes at [`Folios::read_done`]).
    now: u64,
}

impl<'a> Freeable<'a> {
    /// The folios' current flags at time `now`, as the host reads them at eviction.
    pub(crate) fn new(folios: &'a Folios, now: u64) -> Freeable<'a> {
        Freeable { folios, now }
    }

    /// Models the state test of cache_ext's score and iteration callbacks
    /// (policies/cache_ext_sampling.bpf.c: bpf_lfu_score_fn(), cache_ext_lhd.bpf.c:
    /// bpf_lhd_score_fn(); cache_ext 0d2eeca on linux-cache-ext 7442a92, 6.6.8): the folio
    /// is uptodate (no read in flight: PG_locked is cleared lazily here, so a completed read
    /// counts as done), on the LRU, clean and not under writeback. An id that names no folio
    /// is not freeable.
    pub fn now(&self, id: FolioId) -> bool {
        self.uptodate_on_lru(id) && self.folios.f[id as usize].flags & (pg::DIRTY | pg::WRITEBACK) == 0
    }

    /// The first half of [`Freeable::now`], the test cache_ext_mru.bpf.c: iterate_mru()
    /// makes (cache_ext 0d2eeca): the folio is uptodate (no read in flight) and on the LRU,
    /// dirty or not. An id that names no folio is neither.
    pub fn uptodate_on_lru(&self, id: FolioId) -> bool {
        let Some(f) = self.folios.f.get(id as usize) else { return false };
        let reading = f.flags & pg::LOCKED != 0 && self.folios.read_done(id) > self.now;
        f.flags & pg::LRU != 0 && !reading
    }
}

/// A folio's identity while it is resident: its page frame number. A policy's candidates are
/// these ids.
pub type FolioId = u32;

/// What a policy sees of a folio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Folio {
    /// Stable while the folio is resident (the page frame).
    pub id: FolioId,
    /// The page's identity across residencies: the same file page (or anon page) has the same
    /// key when it comes back (pagelab's virtual page number).
    pub key: u32,
    /// Anonymous memory (swap-backed); otherwise page cache.
    pub anon: bool,
    /// The file or anonymous region (pagelab's object index) and the page's index in it.
    pub object: u32,
    pub index: u64,
    /// The memcg the folio is charged to.
    pub memcg: MemcgId,
    pub dirty: bool,
    pub mapped: bool,
    /// PG_referenced (set by reclaim when it found a mapping young).
    pub referenced: bool,
    /// The folio replaced a shadow entry (a refault).
    pub refault: bool,
    /// The refault distance said the folio belongs to the workingset.
    pub workingset: bool,
    /// The folio comes back from reclaim (a candidate the kernel kept).
    pub putback: bool,
    /// The task (an index into [`Cgroup::tasks`]; [`NO_TASK`] if none is known) that
    /// touched the folio: in `folio_accessed(Read | Write)` the task that read or wrote
    /// it; everywhere else the task that brought the page in (the reader whose read or
    /// readahead inserted it — a readahead page names the task whose read started the
    /// readahead —, the writer, the faulting task; an anonymous page's owner).
    pub task: u32,
}

/// [`Folio::task`] when no task is known.
pub const NO_TASK: u32 = u32::MAX;

/// How a folio was accessed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A buffered read (folio_mark_accessed()).
    Read,
    /// A buffered write to a cached folio (generic_perform_write()).
    Write,
    /// Reclaim found a mapping of the folio young (folio_referenced()).
    ReclaimReferenced,
}

impl Access {
    /// Models where cache_ext's `folio_accessed` hook runs (linux-cache-ext 7442a92, 6.6.8):
    /// first thing in mm/swap.c: folio_mark_accessed(), which a buffered read calls; a
    /// buffered write does not (generic_perform_write(): ext4's and iomap's write_begin ask
    /// __filemap_get_folio() for FGP_WRITEBEGIN, without FGP_ACCESSED), nor does reclaim's
    /// folio_check_references(). The ported cache_ext policies count these accesses only.
    pub fn marks_accessed(self) -> bool {
        self == Access::Read
    }
}

/// Why a folio left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// Reclaim freed it (one of the policy's candidates).
    Evicted,
    /// It was freed outside reclaim (its task exited or was killed; truncation).
    Freed,
}

/// A cgroup as a policy's `init` sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cgroup {
    pub id: MemcgId,
    pub path: String,
    /// The effective memory.max in pages: the smallest of the cgroup's own and its
    /// ancestors', at most the machine's memory ([`host::effective_max`]).
    pub max: u64,
    /// The machine's tasks by [`Folio::task`]: each job's name (the workload's name, with
    /// `.N` for its job N when it has several jobs).
    pub tasks: Vec<String>,
}

/// A page-cache eviction policy behind the seam, one instance per memcg (cache_ext's
/// `struct cache_ext_ops`). See the module for the contract.
pub trait EvictionPolicy {
    /// The policy is attached to a cgroup (cache_ext's `policy_init(memcg)`).
    fn init(&mut self, _cgroup: &Cgroup) {}
    /// A folio the cgroup is reading was just inserted in the page cache: keep it after the
    /// read (true, the default) or not (cache_ext's `admit_folio`). See the module's
    /// "Admission".
    fn admit_folio(&mut self, _folio: &Folio) -> bool {
        true
    }
    /// A folio joined the cgroup's LRU (or came back from reclaim: [`Folio::putback`]).
    fn folio_added(&mut self, folio: &Folio);
    /// A folio the policy holds was accessed.
    fn folio_accessed(&mut self, folio: &Folio, how: Access);
    /// A folio left memory.
    fn folio_removed(&mut self, folio: &Folio, why: Removal);
    /// The accesses made while a folio waited in the per-CPU lru_add batch (the read that
    /// inserted it, mostly) are told right after its `folio_added`, as cache_ext's hook in
    /// folio_mark_accessed() sees them (true, the default); false drops them, for a cache
    /// whose trace form counts a miss as an insertion without a hit. See the module's
    /// contract.
    fn hears_early_accesses(&self) -> bool {
        true
    }
    /// Up to `nr` eviction candidates, appended to `out` (cache_ext's `evict_folios`);
    /// `freeable` says which folios the kernel could free now, as cache_ext's policies read
    /// their candidates' flags.
    fn evict_folios(&mut self, cgroup: MemcgId, nr: usize, freeable: &Freeable, out: &mut Vec<FolioId>);
    /// The policy leaves eviction to the kernel (cache_ext's no-op policy, SOSP '25 §6.3.2):
    /// its cgroup keeps the kernel's classic LRU, which decides what to evict, and the policy
    /// still hears `folio_added`, `folio_accessed` and `folio_removed` (and `admit_folio`),
    /// so that its bookkeeping costs what cache_ext's does. `evict_folios` is never called.
    /// See the module's "Deferring to the kernel".
    fn defers_eviction(&self) -> bool {
        false
    }
    /// Bytes of state (for the memory benchmark).
    fn state_bytes(&self) -> u64 {
        0
    }
    /// The policy's own state for the report's `policy_state` section (queue sizes, a
    /// learned parameter, ...), shown per cgroup; None shows only the seam's counts.
    fn state(&self) -> Option<serde_json::Value> {
        None
    }
    /// An error that stops the policy (a Python callback that raised); checked after each
    /// call that can fail.
    fn failure(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{Folio, FolioId, NO_TASK};
    use crate::mm::folio::Folios;

    /// The policy's view of folio `id`: a clean file page of memcg 0, page `id` of object 0.
    pub(crate) fn folio(id: FolioId) -> Folio {
        Folio {
            id,
            key: id,
            anon: false,
            object: 0,
            index: id as u64,
            memcg: 0,
            dirty: false,
            mapped: false,
            referenced: false,
            refault: false,
            workingset: false,
            putback: false,
            task: NO_TASK,
        }
    }

    /// Frames 0.. with these flags (the rest of each folio as [`Folios::new`] leaves it).
    pub(crate) fn folios(flags: &[u32]) -> Folios {
        let mut f = Folios::new(flags.len() as u32);
        for (i, &fl) in flags.iter().enumerate() {
            f.f[i].flags = fl;
        }
        f
    }
}
