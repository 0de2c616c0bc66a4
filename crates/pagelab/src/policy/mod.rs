//! The replacement policy behind one small trait.
//!
//! The kernel keeps two LRU implementations side by side in mm/vmscan.c and mm/workingset.c:
//! the classic active/inactive lists and the multi-generational LRU. pagelab puts each behind
//! [`Policy`]: a policy owns its lists and decides what to scan; the shared machinery
//! (allocation, charging, shrink_folio_list, swap, writeback, counters) lives in the core and
//! calls the policy at the kernel's own hook points. A new policy is one file.

use crate::mm::folio::Pfn;
use crate::mm::mapping::Shadow;
use crate::mm::memcontrol::MemcgId;
use crate::mm::vmscan::ScanControl;
use crate::mm::Mm;

pub mod classic;
pub mod lru_gen;
pub mod registry;
pub mod seam;

/// Which kernel policy a machine runs (`[machine] policy`); the seam's policies run under
/// `Classic`'s driver, per cgroup (see [`registry`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyKind {
    Classic,
    Mglru,
}

impl PolicyKind {
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Classic => "classic",
            PolicyKind::Mglru => "mglru",
        }
    }
}

/// A page replacement policy: the hooks where the kernel's two LRUs differ.
pub trait Policy {
    /// The policy's name in reports.
    fn name(&self) -> &'static str;

    // ---- capabilities: what the shared code (mm/swap.c, mm/vmscan.c) must do for this
    // policy where the kernel asks `lru_gen_enabled()` ----

    /// mm/swap.c: folio_add_lru() (6.1/6.12) with MGLRU on marks a folio added while the task
    /// faults on a VMA with recency active, so it lands in the youngest generation.
    fn activates_folios_added_in_fault(&self) -> bool {
        false
    }

    /// mm/vmscan.c: isolate_lru_folios() (6.1/6.12) passes over the folios of zones above the
    /// reclaim's highest zone (kswapd balancing a lower zone, woken by that zone's boost).
    /// The classic LRU keeps per-zone list sizes for it and MGLRU per-zone generation lists
    /// (whose sort_folio() moves such folios on a generation); a policy that does neither
    /// cannot run on a machine whose lower zones have non-movable pageblocks.
    fn reclaims_by_zone(&self) -> bool {
        false
    }

    /// mm/rmap.c: folio_referenced_one() (6.1/6.12) with MGLRU on hands a young PTE to
    /// lru_gen_look_around() ([`Policy::referenced_young`]).
    fn uses_lru_gen_lookaround(&self) -> bool {
        false
    }

    /// mm/vmscan.c: shrink_folio_list() (6.1/6.12) with MGLRU on keeps a mapped folio whose
    /// PG_referenced says folio_update_gen() tried to promote it, before any other check.
    fn keeps_promoted_mapped_folios(&self) -> bool {
        false
    }

    /// mm/vmscan.c: move_folios_to_lru() (6.1/6.12): putting back an active folio ages the
    /// nonresident clock (workingset_age_nonresident()); MGLRU's putback does not.
    fn putback_ages_nonresident(&self) -> bool {
        true
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

    /// End of a reclaim cycle (`snapshot_refaults()`).
    fn snapshot_refaults(&mut self, _mm: &mut Mm, _target: MemcgId) {}

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
