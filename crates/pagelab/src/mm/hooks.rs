//! The hooks the memory-management core calls into a reclaim policy.
//!
//! The kernel keeps two LRU implementations side by side in mm/vmscan.c and mm/workingset.c
//! (the classic active/inactive lists and the multi-generational LRU) and branches between
//! them where it asks `lru_gen_enabled()`. pagelab puts each behind these hooks:
//!
//! - [`Policy`]: the branch points. A policy owns its lists and decides what to scan and
//!   what a refault means; the shared machinery (allocation, charging, shrink_folio_list(),
//!   swap, writeback, counters) lives in `mm/` and calls the policy where the kernel calls
//!   into one LRU or the other.
//! - [`Caps`]: the few places where the shared code itself behaves differently for MGLRU,
//!   one value per policy instead of a method each.
//! - [`Inspect`]: what a policy shows of itself (its invariants, its state, its debugfs text,
//!   its warnings), for reports and tests only.
//!
//! The implementations are `policy::classic::Classic`, `policy::lru_gen::LruGen` and the
//! seam host `policy::seam::host::Ext`, which adapts a researcher's `EvictionPolicy`.

use crate::mm::folio::Pfn;
use crate::mm::mapping::Shadow;
use crate::mm::memcontrol::MemcgId;
use crate::mm::vmscan::ScanControl;
use crate::mm::Mm;

/// What the shared code (mm/swap.c, mm/vmscan.c, mm/rmap.c) does differently for a policy
/// where the kernel asks `lru_gen_enabled()`: the policy's answers, fixed for a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// mm/swap.c: folio_add_lru() (6.1/6.12) with MGLRU on marks a folio added while the task
    /// faults on a VMA with recency active, so it lands in the youngest generation.
    pub activates_folios_added_in_fault: bool,
    /// mm/vmscan.c: isolate_lru_folios() (6.1/6.12) passes over the folios of zones above the
    /// reclaim's highest zone (kswapd balancing a lower zone, woken by that zone's boost).
    /// The classic LRU keeps per-zone list sizes for it and MGLRU per-zone generation lists
    /// (whose sort_folio() moves such folios on a generation); a policy that does neither
    /// cannot run on a machine whose lower zones have non-movable pageblocks.
    pub reclaims_by_zone: bool,
    /// mm/rmap.c: folio_referenced_one() (6.1/6.12) with MGLRU on hands a young PTE to
    /// lru_gen_look_around() ([`Policy::referenced_young`]).
    pub uses_lru_gen_lookaround: bool,
    /// mm/vmscan.c: shrink_folio_list() (6.1/6.12) with MGLRU on keeps a mapped folio whose
    /// PG_referenced says folio_update_gen() tried to promote it, before any other check.
    pub keeps_promoted_mapped_folios: bool,
    /// mm/vmscan.c: move_folios_to_lru() (6.1/6.12): putting back an active folio ages the
    /// nonresident clock (workingset_age_nonresident()); MGLRU's putback does not.
    pub putback_ages_nonresident: bool,
    /// Whether the policy counts a folio by its pages (folio_nr_pages()) in its list sizes,
    /// isolation and eviction, so that 7.3's readahead may give it large page-cache folios
    /// ([`Kernel::large_folio_readahead`](crate::kernel::Kernel::large_folio_readahead)). A
    /// policy that does not (the eviction seam's) gets order-0 folios on every kernel: its
    /// mappings behave as ones without large-folio support.
    pub large_folios: bool,
    /// Whether the policy keeps its lists per (memcg, node) lruvec, as the kernel does
    /// (folio_lruvec(): a folio is on the lruvec of its frame's node), so that reclaim shrinks
    /// each node's lruvecs in turn (shrink_zones(), 6.1/6.12). A policy whose lists span the
    /// nodes (one list set per memcg) is reclaimed as one node: node 0's pass takes from all.
    pub lists_per_node: bool,
    /// Whether a task's reclaim in the policy may be suspended at cond_resched()
    /// ([`crate::mm::Mm::cond_resched`]) and resumed later from another flow of the event
    /// loop (a stackful coroutine), as a run of several CPUs does. The kernel's LRUs may; a
    /// seam policy may not (its host can call into Python, which keeps its own stack of
    /// frames per thread), so its reclaims run whole.
    pub reclaim_yields: bool,
}

impl Caps {
    /// The answers of a policy on the classic LRU's shared paths that keeps no per-zone
    /// lists (a seam policy); the classic LRU adds `reclaims_by_zone`.
    pub const DEFAULT: Caps = Caps {
        activates_folios_added_in_fault: false,
        reclaims_by_zone: false,
        uses_lru_gen_lookaround: false,
        keeps_promoted_mapped_folios: false,
        putback_ages_nonresident: true,
        large_folios: false,
        lists_per_node: false,
        reclaim_yields: false,
    };

    /// MGLRU's answers, with `lru_gen_enabled()`.
    pub const LRU_GEN: Caps = Caps {
        activates_folios_added_in_fault: true,
        reclaims_by_zone: true,
        uses_lru_gen_lookaround: true,
        keeps_promoted_mapped_folios: true,
        putback_ages_nonresident: false,
        large_folios: true,
        lists_per_node: true,
        reclaim_yields: true,
    };
}

/// A page replacement policy: the hooks where the kernel's two LRUs differ, named for the
/// kernel's branch points.
pub trait Policy: Inspect {
    /// The policy's name in reports.
    fn name(&self) -> &'static str;

    /// What the shared code must do for this policy where the kernel asks
    /// `lru_gen_enabled()` ([`Caps`]); the default is the trait's neutral answers.
    fn caps(&self) -> Caps {
        Caps::DEFAULT
    }

    /// A write to a cached folio (generic_perform_write()). The kernel's LRUs do not look at
    /// it (write_begin never marks the folio accessed); the eviction seam reports it.
    #[inline(always)]
    fn mark_written(&mut self, _mm: &mut Mm, _pfn: Pfn) {}

    /// The first error of a policy that cannot go on (a Python callback that raised): the run
    /// ends with it.
    fn failure(&self) -> Option<String> {
        None
    }

    /// A new page-cache folio was inserted (filemap_add_folio(), before it waits in the
    /// lru_add batch); `read` unless it is being written. Returns whether the folio is
    /// admitted: false marks it dropbehind (PG_dropbehind, 6.14+; cache_ext's `admit_folio`),
    /// and the buffered read that copies it drops it. The kernel's own LRUs admit everything.
    #[inline(always)]
    fn admit_folio(&mut self, _mm: &mut Mm, _pfn: Pfn, _read: bool) -> bool {
        true
    }

    /// A folio joins its lruvec (`lruvec_add_folio()`, at lru_add drain or putback).
    fn lru_add(&mut self, mm: &mut Mm, pfn: Pfn);

    /// A folio on an LRU list leaves it for good (unmap of a dying task, OOM kill).
    fn lru_del(&mut self, mm: &mut Mm, pfn: Pfn);

    /// A buffered read touched the folio (`folio_mark_accessed()`).
    fn mark_accessed(&mut self, mm: &mut Mm, pfn: Pfn);

    /// A batched activation reaches the lruvec (`folio_activate_fn()`).
    fn activate(&mut self, mm: &mut Mm, pfn: Pfn);

    /// Writeback of a PG_reclaim folio ended: move it where reclaim looks next
    /// (`lru_move_tail_fn()`).
    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn);

    /// Reclaim found a young PTE mapping the folio (`folio_referenced_one()`); MGLRU looks
    /// around it.
    fn referenced_young(&mut self, _mm: &mut Mm, _pfn: Pfn) {}

    /// The shadow entry a reclaimed folio leaves (`workingset_eviction()`).
    fn workingset_eviction(&mut self, mm: &mut Mm, pfn: Pfn, target: MemcgId) -> Shadow;

    /// A folio is being added in place of a shadow entry (`workingset_refault()`), before it
    /// joins the LRU.
    fn workingset_refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow);

    /// Reclaim from one memcg's lruvec (`shrink_lruvec()`).
    fn shrink_lruvec(&mut self, mm: &mut Mm, memcg: MemcgId, sc: &mut ScanControl);

    /// Whether [`Policy::shrink_node`] is all of `shrink_node()` for this reclaim: none of the
    /// classic driver's writeback, dirty and congestion bookkeeping follows it (6.12.95:
    /// MGLRU's root reclaim returns right after lru_gen_shrink_node()).
    fn shrink_node_is_all(&self, _sc: &ScanControl) -> bool {
        false
    }

    /// Reclaim from the node (`shrink_node()`); the default walks the memcgs of the target.
    fn shrink_node(&mut self, mm: &mut Mm, sc: &mut ScanControl)
    where
        Self: Sized,
    {
        crate::mm::vmscan::shrink_node_memcgs(mm, self, sc);
    }

    /// kswapd's aging before it shrinks (`kswapd_age_node()`).
    fn kswapd_age_node(&mut self, _mm: &mut Mm, _sc: &mut ScanControl) {}

    /// End of a reclaim cycle on node `nid` (`snapshot_refaults(target, pgdat)`).
    fn snapshot_refaults(&mut self, _mm: &mut Mm, _target: MemcgId, _nid: usize) {}
}

/// What a policy shows of itself, for reports and tests; reclaim never calls it.
pub trait Inspect {
    /// Checks the policy's invariants against the core state (for tests).
    fn check(&self, mm: &Mm) -> Result<(), String>;

    /// Bytes of state the policy keeps (for the memory benchmark).
    fn state_bytes(&self) -> u64 {
        0
    }

    /// The policy's own view for reports (MGLRU: the lru_gen debugfs file).
    fn debugfs(&self, _mm: &Mm) -> Option<String> {
        None
    }

    /// The detailed view (MGLRU: lru_gen_full).
    fn debugfs_full(&self, _mm: &Mm) -> Option<String> {
        None
    }

    /// The policy's own state as JSON, for the report's `policy_state` section at the end of
    /// the run and for each series interval: what a developer of this policy looks at (the
    /// classic LRU: list sizes, IO costs and the nonresident clock per lruvec; MGLRU: the
    /// generations and tiers; the seam: each cgroup's policy counts and its own state).
    fn state(&self, _mm: &Mm) -> Option<serde_json::Value> {
        None
    }

    /// What the run should warn about at its end, once each (the seam: a policy whose
    /// candidates the kernel mostly could not take); the report's `warnings`.
    fn warnings(&self, _mm: &Mm) -> Vec<String> {
        Vec::new()
    }
}
