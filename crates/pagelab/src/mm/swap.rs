//! LRU batching and LRU cost accounting (mm/swap.c): the per-CPU lru_add and activate
//! batches, folio_mark_accessed(), and lru_note_cost().

use crate::kernel::SWAP_CLUSTER_MAX;
use crate::mm::folio::{pg, Pfn};
use crate::mm::hooks::Policy;
use crate::mm::memcontrol::{MemcgId, StatItem};
use crate::mm::vmstat::Lru;
use crate::mm::Mm;

/// The lru_add and activate batches of the CPUs other than the running one, when the
/// machine has several (`machine.cpus` ≥ 2); the running CPU's are [`Mm::lru_add_batch`] and
/// [`Mm::activate_batch`], so the one-CPU model and the hot path see one batch as before.
///
/// Models the per-CPU `cpu_fbatches` of mm/swap.c (6.1, 6.12): a folio waits in the batch
/// of the CPU that added it, and only that CPU drains it (when the batch fills, or when a
/// task on it calls lru_add_drain(), as reclaim does); a folio in another CPU's batch is
/// invisible to reclaim and to __lru_cache_activate_folio(), which searches the local batch.
#[derive(Debug)]
pub struct PerCpuBatches {
    /// The CPU whose batches are in `Mm`'s fields.
    cpu: u32,
    lru_add: Vec<Vec<Pfn>>,
    activate: Vec<Vec<Pfn>>,
    /// Each CPU's per-CPU free lists of each zone, by CPU then zone, while it is not the
    /// running CPU ([`crate::mm::page_alloc::ParkedPages`]); empty when built without them.
    pub pcp: Vec<Vec<crate::mm::page_alloc::ParkedPages>>,
    /// By frame, how many times it waits in the CPUs' activation batches, the running one's
    /// included (a folio may be queued on several CPUs): reclaim's test of the batches'
    /// reference is one lookup, not a search of every CPU's batch. Grown to the highest frame
    /// queued so far.
    activate_refs: Vec<u16>,
}

impl PerCpuBatches {
    pub fn new(cpus: u32) -> PerCpuBatches {
        PerCpuBatches {
            cpu: 0,
            lru_add: vec![Vec::new(); cpus as usize],
            activate: vec![Vec::new(); cpus as usize],
            pcp: Vec::new(),
            activate_refs: Vec::new(),
        }
    }

    /// The CPU whose batches and lists are `Mm`'s (the running one).
    pub fn cpu(&self) -> u32 {
        self.cpu
    }

    /// Whether `pfn` waits in some CPU's activation batch, the running one's included.
    #[inline]
    pub fn in_some_activate_batch(&self, pfn: Pfn) -> bool {
        self.activate_refs.get(pfn as usize).is_some_and(|&n| n > 0)
    }

    /// `pfn` joined the running CPU's activation batch.
    fn queued_for_activation(&mut self, pfn: Pfn) {
        let i = pfn as usize;
        if i >= self.activate_refs.len() {
            self.activate_refs.resize(i + 1, 0);
        }
        self.activate_refs[i] += 1;
    }

    /// The running CPU's activation batch, `batch`, was drained.
    fn activation_drained(&mut self, batch: &[Pfn]) {
        for &pfn in batch {
            self.activate_refs[pfn as usize] -= 1;
        }
    }
}

/// Whether `pfn` waits in any CPU's activation batch (which holds a reference to it).
#[inline]
pub fn in_activate_batch(mm: &Mm, pfn: Pfn) -> bool {
    match mm.percpu.as_ref() {
        Some(pc) => pc.in_some_activate_batch(pfn),
        None => !mm.activate_batch.is_empty() && mm.activate_batch.contains(&pfn),
    }
}

/// The running actor is now on `cpu`: its batches and per-CPU free lists become `Mm`'s and
/// the previous CPU's are parked.
pub fn this_cpu(mm: &mut Mm, cpu: u32) {
    let Some(pc) = mm.percpu.as_mut() else { return };
    if pc.cpu == cpu {
        return;
    }
    let (old, new) = (pc.cpu as usize, cpu as usize);
    std::mem::swap(&mut mm.lru_add_batch, &mut pc.lru_add[old]);
    std::mem::swap(&mut mm.activate_batch, &mut pc.activate[old]);
    std::mem::swap(&mut mm.lru_add_batch, &mut pc.lru_add[new]);
    std::mem::swap(&mut mm.activate_batch, &mut pc.activate[new]);
    pc.cpu = cpu;
    let mut lists = std::mem::take(&mut pc.pcp);
    if !lists.is_empty() {
        crate::mm::page_alloc::switch_pcp(mm, &mut lists, old, new);
    }
    mm.memcgs.this_cpu(cpu);
    if let Some(pc) = mm.percpu.as_mut() {
        pc.pcp = lists;
    }
}

/// Models mm/swap.c: lru_add_drain_all() (6.1, 6.12): every CPU's batches drained. The model
/// calls it before it frees folios that may wait in another CPU's batch (a task's exit): the
/// kernel's batch holds a reference and the folio is freed when that CPU drains it; the model
/// drains first and frees at once.
pub fn lru_add_drain_all<P: Policy>(mm: &mut Mm, p: &mut P) {
    let cpus = mm.percpu.as_ref().map_or(0, |pc| pc.lru_add.len() as u32);
    let home = mm.percpu.as_ref().map_or(0, |pc| pc.cpu);
    for cpu in (0..cpus).filter(|&c| c != home) {
        this_cpu(mm, cpu);
        lru_add_drain(mm, p);
    }
    this_cpu(mm, home);
    lru_add_drain(mm, p);
}

/// Models mm/swap.c: folio_add_lru() (6.1/6.12): the folio waits in this CPU's lru_add batch,
/// invisible to reclaim, until the batch fills (PAGEVEC_SIZE entries) or is drained. With
/// MGLRU on, a folio added while the task faults on a VMA with recency is marked active, so
/// it lands in the youngest generation.
///
/// 7.3 (6.14 on, [`Kernel::lru_gen_workingset_top_tier`]) activates only a PG_workingset folio
/// added in a fault and marks the others accessed (folio_mark_accessed()) unless already
/// PG_referenced, so lru_gen_folio_seq() puts them in the second oldest generation.
///
/// [`Kernel::lru_gen_workingset_top_tier`]: crate::kernel::Kernel::lru_gen_workingset_top_tier
// Always inlined: every page-cache miss adds through it (a large folio's add is a call site of
// its own, which must not cost the order-0 sites their inlining).
#[inline(always)]
pub fn folio_add_lru<P: Policy>(mm: &mut Mm, p: &mut P, pfn: Pfn) {
    if p.caps().activates_folios_added_in_fault {
        if let Some(t) = mm.current_task() {
            if mm.tasks[t].in_lru_fault {
                let v7_3 = mm.cfg.kernel.lru_gen_workingset_top_tier();
                if !v7_3 || (mm.folios.test(pfn, pg::WORKINGSET) && !mm.folios.test(pfn, pg::UNEVICTABLE)) {
                    mm.folios.set(pfn, pg::ACTIVE);
                } else if !mm.folios.test(pfn, pg::UNEVICTABLE) && !mm.folios.test(pfn, pg::REFERENCED) {
                    folio_mark_accessed(mm, p, pfn);
                }
            }
        }
    }
    mm.folios.set(pfn, pg::IN_LRU_ADD);
    mm.lru_add_batch.push(pfn);
    // A large folio is not held in the per-CPU batch: it drains the batch at once
    // (__folio_batch_add_and_move()'s folio_may_be_lru_cached(), 6.1 to 7.3).
    if mm.lru_add_batch.len() >= mm.cfg.kernel.pagevec_size() || mm.folios.nr_pages(pfn) > 1 {
        drain_lru_add(mm, p);
    }
}

/// Models folio_batch_move_lru(lru_add_fn): every batched folio joins its lruvec.
fn drain_lru_add<P: Policy>(mm: &mut Mm, p: &mut P) {
    let batch = std::mem::take(&mut mm.lru_add_batch);
    lock_lruvecs(mm, &batch);
    for &pfn in &batch {
        let f = mm.folios.get_mut(pfn);
        f.flags = (f.flags & !pg::IN_LRU_ADD) | pg::LRU;
        p.lru_add(mm, pfn);
        if mm.cfg.kernel.scan_rotate_ratios() {
            update_page_reclaim_stat(mm, pfn);
        }
    }
    mm.lru_add_batch = batch;
    mm.lru_add_batch.clear();
}

/// Models the locking of mm/swap.c: folio_batch_move_lru() (6.1, 6.12): the batch's folios
/// move under their lruvec's lru_lock, taken once for each run of folios of one lruvec
/// (folio_lruvec_relock_irqsave() keeps the lock while the next folio's lruvec is the same).
/// With one CPU, or none modeled, no lock is contended and nothing happens.
fn lock_lruvecs(mm: &mut Mm, batch: &[Pfn]) {
    if mm.sched.is_none() {
        return;
    }
    let mut i = 0;
    while i < batch.len() {
        let (memcg, nid) = (mm.folios.get(batch[i]).memcg, mm.folio_nid(batch[i]));
        let run = batch[i..].iter().take_while(|&&f| mm.folios.get(f).memcg == memcg && mm.folio_nid(f) == nid).count();
        mm.lru_lock_on("folio_batch_move_lru", memcg, nid, run as u64);
        i += run;
    }
}

/// Models 5.7's mm/swap.c: update_page_reclaim_stat() for a page joining the LRU: it
/// counts as scanned, and as rotated if it starts out active.
fn update_page_reclaim_stat(mm: &mut Mm, pfn: Pfn) {
    let f = *mm.folios.get(pfn);
    let nid = mm.folio_nid(pfn);
    let rs = mm.memcgs.get_mut(f.memcg).lruvec_of_mut(nid);
    rs.recent_scanned[f.lru_type()] += 1;
    if f.test(pg::ACTIVE) {
        rs.recent_rotated[f.lru_type()] += 1;
    }
}

/// Models mm/swap.c: lru_add_drain(): flush this CPU's batches.
pub fn lru_add_drain<P: Policy>(mm: &mut Mm, p: &mut P) {
    if !mm.lru_add_batch.is_empty() {
        drain_lru_add(mm, p);
    }
    if !mm.activate_batch.is_empty() {
        drain_activate(mm, p);
    }
}

/// Models mm/swap.c: folio_mark_accessed(): the policy decides (the classic two-touch
/// promotion, or MGLRU's access counting for tiers).
#[inline]
pub fn folio_mark_accessed<P: Policy>(mm: &mut Mm, p: &mut P, pfn: Pfn) {
    p.mark_accessed(mm, pfn);
}

/// Models mm/swap.c: folio_activate() (6.1.192, 6.12.95): queue an inactive LRU folio for
/// activation. It stays on its LRU list, PG_lru set, while it waits: both kernels clear
/// PG_lru only when the batch is drained (folio_batch_move_lru()), so reclaim may isolate a
/// queued folio meanwhile. (Mainline 6.12 cleared it at enqueue; Debian's 6.12.95 carries the
/// stable series' return to clearing it at drain.)
pub fn folio_activate<P: Policy>(mm: &mut Mm, p: &mut P, pfn: Pfn) {
    let f = mm.folios.get(pfn);
    if !f.test(pg::LRU) || f.test(pg::ACTIVE) || f.test(pg::UNEVICTABLE) {
        return;
    }
    let large = f.nr_pages() > 1;
    mm.activate_batch.push(pfn);
    if let Some(pc) = mm.percpu.as_mut() {
        pc.queued_for_activation(pfn);
    }
    if mm.activate_batch.len() >= mm.cfg.kernel.pagevec_size() || large {
        drain_activate(mm, p);
    }
}

/// Models folio_batch_move_lru(folio_activate_fn): a folio reclaim isolated meanwhile
/// (PG_lru clear) is skipped.
fn drain_activate<P: Policy>(mm: &mut Mm, p: &mut P) {
    let batch = std::mem::take(&mut mm.activate_batch);
    if let Some(pc) = mm.percpu.as_mut() {
        pc.activation_drained(&batch);
    }
    lock_lruvecs(mm, &batch);
    for &pfn in &batch {
        if !mm.folios.test(pfn, pg::LRU) {
            continue;
        }
        mm.folios.set(pfn, pg::LRU);
        p.activate(mm, pfn);
    }
    mm.activate_batch = batch;
    mm.activate_batch.clear();
}

/// Models the search of mm/swap.c: __lru_cache_activate_folio() (6.1, 6.12): a folio still
/// waiting in this CPU's lru_add batch is activated in place (no pgactivate event).
pub fn lru_cache_activate_folio(mm: &mut Mm, pfn: Pfn) {
    // With several CPUs the folio may wait in another CPU's batch, which is not searched.
    let local = mm.percpu.is_none() || mm.lru_add_batch.contains(&pfn);
    if local && mm.folios.test(pfn, pg::IN_LRU_ADD) {
        mm.folios.set(pfn, pg::ACTIVE);
    }
}

/// Models mm/swap.c: lru_note_cost(): 6.12 charges `nr_io` IOs at SWAP_CLUSTER_MAX each
/// plus `nr_rotated` rotations; 6.1 charges the written pages only. Every ancestor pays too,
/// and each level halves both costs once they exceed a quarter of its LRU pages. The costs are
/// those of the lruvecs on node `nid` (the LRU pages compared are the memcg's, every node's).
pub fn lru_note_cost(mm: &mut Mm, memcg: MemcgId, nid: usize, file: bool, nr_io: u64, nr_rotated: u64) {
    let cost = if mm.cfg.kernel.cost_counts_rotations() { nr_io * SWAP_CLUSTER_MAX + nr_rotated } else { nr_io };
    let mut cur = Some(memcg);
    while let Some(c) = cur {
        // Each level's costs are updated under that lruvec's lru_lock, taken and dropped
        // level by level (6.1, 6.12): one line's update held.
        mm.lru_lock_on("lru_note_cost", c, nid, 1);
        let lrusize: u64 = Lru::EVICTABLE.iter().map(|&l| mm.memcgs.page_state(c, StatItem::Lru(l))).sum();
        let lv = mm.memcgs.get_mut(c).lruvec_of_mut(nid);
        if file {
            lv.file_cost += cost;
        } else {
            lv.anon_cost += cost;
        }
        if lv.file_cost + lv.anon_cost > lrusize / 4 {
            lv.file_cost /= 2;
            lv.anon_cost /= 2;
        }
        cur = mm.memcgs.get(c).parent;
    }
}

/// Models workingset_refault()'s cost of a restored workingset page: 6.12
/// lru_note_cost_refault() counts one IO (32 units), 6.1 lru_note_cost_folio() one page.
pub fn lru_note_cost_refault(mm: &mut Mm, memcg: MemcgId, nid: usize, file: bool, nr: u64) {
    lru_note_cost(mm, memcg, nid, file, nr, 0);
}

// ---- MGLRU access bits of 7.3 (the 6.14 rework), for mm/vmscan.rs and policy/lru_gen ----

/// `LRU_REFS_FLAGS` of 7.3 (6.14 on): the LRU_REFS field and PG_referenced; PG_workingset
/// stays when they are cleared.
pub const REFS_FLAGS_6_14: u32 = pg::REFS_MASK | pg::REFERENCED;

/// Models include/linux/mm_inline.h: folio_lru_refs() of 7.3.4 (6.14 on): no access counted
/// without PG_referenced; otherwise PG_referenced's one plus the LRU_REFS field (1..4).
#[inline]
pub fn folio_lru_refs_6_14(flags: u32) -> u32 {
    if flags & pg::REFERENCED == 0 {
        return 0;
    }
    ((flags & pg::REFS_MASK) >> pg::REFS_SHIFT) + 1
}

/// Models mm/folio.c: lru_gen_inc_refs() of 7.3.4 (6.14 on) on a folio's flags: the first
/// access sets PG_referenced (clearing the LRU_REFS field), the next ones count the field up
/// to its maximum, and the one after sets PG_workingset.
#[inline]
pub fn lru_gen_inc_refs(flags: u32) -> u32 {
    if flags & pg::REFERENCED == 0 {
        (flags & !pg::REFS_MASK) | pg::REFERENCED
    } else if flags & pg::REFS_MASK == pg::REFS_MASK {
        flags | pg::WORKINGSET
    } else {
        flags + (1 << pg::REFS_SHIFT)
    }
}

/// Models mm/vmscan.c: lru_gen_set_refs() of 7.3.4 (6.14 on; no VM_EXEC mappings in pagelab):
/// reclaim's rmap walk found a young PTE. A folio with neither PG_referenced nor
/// PG_workingset gets PG_referenced (false: keep it where it is); one accessed before is
/// promoted: PG_workingset (and LRU_REFS_FLAGS cleared) once it has more than one access,
/// else one more access counted (folio_mark_accessed()). True: activate it.
///
/// Under MGLRU-FG (`[mglru] fg`) the count's rule: [`fg_set_refs`].
pub fn lru_gen_set_refs(mm: &mut Mm, pfn: Pfn) -> bool {
    if mm.cfg.mglru_fg.is_some() {
        return fg_set_refs(mm, pfn);
    }
    let f = mm.folios.get_mut(pfn);
    if f.flags & (pg::REFERENCED | pg::WORKINGSET) == 0 {
        f.flags = (f.flags & !pg::REFS_MASK) | pg::REFERENCED;
        return false;
    }
    if folio_lru_refs_6_14(f.flags) > 1 {
        f.flags = (f.flags & !REFS_FLAGS_6_14) | pg::WORKINGSET;
    } else if f.flags & pg::UNEVICTABLE == 0 {
        f.flags = lru_gen_inc_refs(f.flags);
    }
    true
}

// ---- MGLRU-FG's access count (`[mglru] fg`), for mm/vmscan.rs and policy/lru_gen ----
//
// Kairui Song, "[PATCH RFC 06/32] mm/mglru: frequency guided workingset promotion
// (MGLRU-FG)" (1 May 2026), on 7.3's MGLRU. Certainty as shared/reference/
// kairui-refault-distance.md labels it: [R] read in the posted patch (06/32's commit message,
// its first ~2,500 characters); [DEV] Kairui Song's development tree ryncsn/linux, named by
// commit; [I] inferred. docs/journal/2026-11-29-mglru-fg.md lists what was found.

/// The MGLRU-FG access count at which a folio counts as referenced ([DEV] 7e29194b
/// include/linux/mmzone.h: `LRU_REFS_REFERENCED`).
pub const FG_REFS_REFERENCED: u32 = 1;
/// ... as workingset: MGLRU-FG RFC (May 2026) 06/32 [R]: "all folios with a referenced times
/// count >= 2 (LRU_REFS_WORKINGSET)" are workingset.
pub const FG_REFS_WORKINGSET: u32 = 2;
/// ... to which [DEV] 01f703a6's folio_inc_lru_refs() resets a folio it promotes past
/// LRU_REFS_MAX (`LRU_REFS_PROTECTED`, 7e29194b's mmzone.h).
pub const FG_REFS_PROTECTED: u32 = 4;
/// The most accesses the count holds (`LRU_REFS_MAX`): 7 [I], from 06/32 [R] ("Each promotion
/// requires 8 accesses": the eighth access after a reset overflows the count) and [DEV]
/// 7e29194b's tier table, whose last row ("promotion candidate") is access 7.
pub const FG_REFS_MAX: u32 = 7;

/// The count's third bit; its two low bits are the LRU_REFS field.
const FG_REFS_HI: u32 = pg::REFS_HI;

/// What MGLRU-FG resets a folio's count to when an access past LRU_REFS_MAX promotes it
/// (`[mglru] fg_reset`): the sources disagree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FgReset {
    /// 0: 06/32 [R] ("each promotion resets the reference times count. Each promotion requires
    /// 8 accesses to occur"). The default.
    #[default]
    Zero,
    /// LRU_REFS_WORKINGSET (2): [DEV] 7e29194b's mmzone.h tier comment ("reset its referenced
    /// count to LRU_REFS_WORKINGSET").
    Workingset,
    /// LRU_REFS_PROTECTED (4): [DEV] 01f703a6's mm/swap.c folio_inc_lru_refs(), the code.
    Protected,
}

impl FgReset {
    pub const NAMES: &'static str = "\"zero\", \"workingset\" or \"protected\"";

    pub fn parse(text: &str) -> Result<FgReset, String> {
        match text.trim() {
            "zero" => Ok(FgReset::Zero),
            "workingset" => Ok(FgReset::Workingset),
            "protected" => Ok(FgReset::Protected),
            other => Err(format!("`{other}` is not an MGLRU-FG reset (use {})", FgReset::NAMES)),
        }
    }

    /// The count a promoted folio starts again from.
    pub fn refs(self) -> u32 {
        match self {
            FgReset::Zero => 0,
            FgReset::Workingset => FG_REFS_WORKINGSET,
            FgReset::Protected => FG_REFS_PROTECTED,
        }
    }
}

/// Models include/linux/mm_inline.h: folio_lru_refs() of the MGLRU-FG RFC (May 2026) [DEV]
/// 7e29194b: the folio's access count, 0..=LRU_REFS_MAX, one field (pagelab keeps it in the
/// LRU_REFS field and one more bit).
#[inline]
pub fn fg_refs(flags: u32) -> u32 {
    ((flags & pg::REFS_MASK) >> pg::REFS_SHIFT) | (((flags & FG_REFS_HI) != 0) as u32) << 2
}

/// Models include/linux/mm_inline.h: lru_refs_set_flags() of the MGLRU-FG RFC (May 2026)
/// [DEV] 7e29194b: the count replaces PG_referenced and PG_workingset, which the RFC derives
/// from it (folio_test_referenced(): count >= 1; folio_test_workingset(): count >= 2 [R]).
/// pagelab keeps the two flags as that view of the count, so the code that reads them
/// (readahead, PSI, the shadow's workingset bit) sees the RFC's meaning.
#[inline]
pub fn fg_with_refs(flags: u32, refs: u32) -> u32 {
    debug_assert!(refs <= FG_REFS_MAX, "MGLRU-FG count {refs} past LRU_REFS_MAX");
    let refs = refs.min(FG_REFS_MAX);
    let mut f = flags & !(pg::REFS_MASK | FG_REFS_HI | pg::REFERENCED | pg::WORKINGSET);
    f |= (refs & 3) << pg::REFS_SHIFT;
    if refs & 4 != 0 {
        f |= FG_REFS_HI;
    }
    if refs >= FG_REFS_REFERENCED {
        f |= pg::REFERENCED;
    }
    if refs >= FG_REFS_WORKINGSET {
        f |= pg::WORKINGSET;
    }
    f
}

/// Models include/linux/mm_inline.h: lru_tier_from_refs() of the MGLRU-FG RFC (May 2026)
/// [DEV] 7e29194b: tier 0 below LRU_REFS_WORKINGSET, else fls(refs - 1) (2: 1, 3-4: 2,
/// 5-7: 3).
#[inline]
pub fn fg_tier(refs: u32) -> usize {
    if refs < FG_REFS_WORKINGSET {
        0
    } else {
        (32 - (refs - 1).leading_zeros()) as usize
    }
}

/// Models mm/vmscan.c: lru_gen_set_refs() under the MGLRU-FG RFC (May 2026) [I]: 7.3's rule
/// read through the count: an unreferenced folio becomes referenced (1) and stays where it is;
/// a referenced one is promoted as workingset (2), which is what 7.3's PG_workingset with
/// LRU_REFS_FLAGS cleared means in the count. True: activate it.
pub fn fg_set_refs(mm: &mut Mm, pfn: Pfn) -> bool {
    let f = mm.folios.get_mut(pfn);
    let refs = fg_refs(f.flags);
    if refs == 0 {
        f.flags = fg_with_refs(f.flags, FG_REFS_REFERENCED);
        return false;
    }
    if f.flags & pg::UNEVICTABLE == 0 || refs >= FG_REFS_WORKINGSET {
        f.flags = fg_with_refs(f.flags, FG_REFS_WORKINGSET);
    }
    true
}
