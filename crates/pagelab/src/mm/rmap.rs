//! The reclaimer's deferred TLB flush (mm/rmap.c, 6.1, 6.12, 7.3): try_to_unmap() under
//! reclaim (TTU_BATCH_FLUSH) leaves the TLB entries of an `mm` that another CPU has loaded
//! to one flush per batch, and that flush waits for every CPU running the `mm` to take an
//! IPI and flush (x86: arch_tlbbatch_flush() → flush_tlb_multi(), which skips lazy-TLB
//! CPUs, and waits in smp_call_function_many_cond()).

use crate::mm::Mm;

/// current->tlb_ubc: whether a flush is pending, and whether an unmapped PTE was dirty
/// (a writable entry that could race with the page's write-out).
#[derive(Clone, Copy, Debug, Default)]
pub struct TlbUbc {
    pub flush_required: bool,
    pub writable: bool,
}

/// Whether a CPU other than the reclaimer's runs the `mm` that maps the anon page `vpn`:
/// a task of its process whose last CPU is another. A page no task owns (the page cache)
/// and a machine of one CPU need no remote flush. The model takes a task's last CPU as
/// running its `mm`; the kernel skips a CPU that has switched to a kernel thread since
/// (lazy TLB), which this does not see.
fn mm_runs_elsewhere(mm: &Mm, vpn: u32) -> bool {
    let Some(sched) = mm.sched.as_deref() else { return false };
    let (Some(owner), Some(here)) = (crate::mm::vmscan::owner_task(mm, vpn), sched.current_cpu()) else { return false };
    let process = mm.tasks[owner].process;
    (0..mm.tasks.len()).any(|t| mm.tasks[t].process == process && sched.tasks[t].last.is_some_and(|cpu| cpu != here))
}

/// Models mm/rmap.c: set_tlb_ubc_flush_pending() behind should_defer_flush() (6.1, 6.12,
/// 7.3): try_to_unmap() of a page whose `mm` another CPU runs defers that CPU's flush to
/// the batch; a dirty PTE marks the batch writable. A page whose `mm` runs only here is
/// flushed locally at once, at no modeled cost.
pub fn set_tlb_ubc_flush_pending(mm: &mut Mm, vpn: u32, dirty: bool) {
    if mm_runs_elsewhere(mm, vpn) {
        mm.tlb_ubc.flush_required = true;
        mm.tlb_ubc.writable |= dirty;
    }
}

/// Models mm/rmap.c: try_to_unmap_flush() (6.1, 6.12, 7.3): the pending flush, one IPI
/// round trip that the reclaimer waits for on its CPU (`[time.cpu] tlb_flush_ipi_ns`).
pub fn try_to_unmap_flush(mm: &mut Mm) {
    if !mm.tlb_ubc.flush_required {
        return;
    }
    mm.tlb_ubc = TlbUbc::default();
    mm.cpu_in(crate::mm::profile::Func::Other, mm.cfg.costs.cpu.tlb_flush_ipi_ns);
}

/// Models mm/rmap.c: try_to_unmap_flush_dirty() (6.1, 6.12, 7.3): shrink_folio_list()
/// flushes before it writes a page out if a dirty PTE is pending, so no CPU writes the page
/// through a stale entry during its IO.
pub fn try_to_unmap_flush_dirty(mm: &mut Mm) {
    if mm.tlb_ubc.writable {
        try_to_unmap_flush(mm);
    }
}
