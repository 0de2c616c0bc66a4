//! The page allocator as reclaim sees it (mm/page_alloc.c): watermark checks, the per-CPU
//! free lists whose pages those checks do not see, waking kswapd, direct reclaim and its
//! retries, and the OOM killer as the last resort.

use crate::kernel::{Kernel, MAX_RECLAIM_RETRIES};
use crate::mm::folio::{pg, Pfn};
use crate::mm::hooks::Policy;
use crate::mm::memcontrol::{FedStat, MemcgId};
use crate::mm::oom_kill::out_of_memory;
use crate::mm::vmscan::{try_to_free_pages, wake_all_kswapds, wakeup_kswapd};
use crate::mm::Mm;

/// How hard an allocation may try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gfp {
    /// GFP_HIGHUSER_MOVABLE: reclaim, retry, and invoke the OOM killer.
    User,
    /// readahead_gfp_mask(): __GFP_NORETRY, one round of direct reclaim and then give up.
    NoRetry,
}

/// Which watermark an allocation must keep (ALLOC_WMARK_LOW on the fast path,
/// ALLOC_WMARK_MIN in the slow path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wmark {
    Min,
    Low,
}

/// Models mm/page_alloc.c: __alloc_pages() for one order-0 page: the low-watermark fast
/// path, then __alloc_pages_slowpath(): wake kswapd, try the min watermark, direct reclaim
/// (__alloc_pages_direct_reclaim(): after reclaim that made progress, one more try, and one
/// after draining the per-CPU lists), should_reclaim_retry() and __alloc_pages_may_oom().
/// `None` means the allocation failed (NoRetry) or the allocating task was killed.
// The fast path is inlined into every allocation (always: a large folio's frames are a call
// site of their own, which must not cost the order-0 sites their inlining); the slow path is
// out of line.
#[inline(always)]
pub fn alloc_page<P: Policy>(mm: &mut Mm, p: &mut P, gfp: Gfp) -> Option<Pfn> {
    if let Some(pfn) = get_page_from_freelist(mm, Wmark::Low) {
        return Some(pfn);
    }
    alloc_pages_slowpath(mm, p, gfp)
}

/// __alloc_pages_slowpath(), as [`alloc_page`] describes it.
#[inline(never)]
fn alloc_pages_slowpath<P: Policy>(mm: &mut Mm, p: &mut P, gfp: Gfp) -> Option<Pfn> {
    if wake_all_kswapds(mm, 0) {
        kswapd_preempts_its_waker(mm, p);
    } else {
        kswapd_takes_its_turn(mm, p);
    }
    let mut no_progress = 0;
    loop {
        if let Some(pfn) = get_page_from_freelist(mm, Wmark::Min) {
            return Some(pfn);
        }
        // __alloc_pages_direct_reclaim(): the task is stalled on memory for
        // __perform_reclaim(), not for the retry of the free lists after it.
        let stall = mm.memstall_enter();
        let reclaimed = try_to_free_pages(mm, p);
        mm.memstall_leave(stall);
        // A task killed while its reclaim yielded (several CPUs) takes no page: its exit has
        // freed its memory (the slow path's tsk_is_oom_victim() exit, 6.1/6.12).
        if current_killed(mm) {
            return None;
        }
        if reclaimed > 0 {
            if let Some(pfn) = get_page_from_freelist(mm, Wmark::Min) {
                return Some(pfn);
            }
            // Pages freed by reclaim may sit on the per-CPU lists, out of the watermarks' sight.
            drain_all_pages(mm);
            if let Some(pfn) = get_page_from_freelist(mm, Wmark::Min) {
                return Some(pfn);
            }
        }
        if gfp == Gfp::NoRetry {
            return None;
        }
        if reclaimed == 0 {
            no_progress += 1;
        } else {
            no_progress = 0;
        }
        if no_progress > MAX_RECLAIM_RETRIES {
            out_of_memory(mm, p, None);
            no_progress = 0;
            if current_killed(mm) {
                return None;
            }
            // Nothing left to kill: dip below the watermark rather than spin (the kernel's
            // OOM reserves).
            if mm.tasks.iter().all(|t| t.killed || t.rss_anon + t.swapents == 0) {
                return (0..mm.folios.nr_zones()).rev().find_map(|z| rmqueue(mm, z));
            }
        }
    }
}

/// Models mm/page_alloc.c: __alloc_pages() of a large readahead folio of `order` (7.3.4,
/// [`crate::kernel::Kernel::large_folio_allocated_at_its_order`]; readahead_gfp_mask(), so
/// __GFP_NORETRY): one request for the whole folio, its frames from one zone. The fast path
/// takes them from the first zone that keeps its low watermark with `(1 << order) - 1` pages
/// taken off (__zone_watermark_ok()). Else __alloc_pages_slowpath(): kswapd is woken with the
/// order ([`crate::mm::vmscan::wakeup_kswapd_order`]), the min watermark is tried, then one
/// direct reclaim and a last try (after a drain of the per-CPU lists), and the allocation
/// fails: __GFP_NORETRY does not loop, and page_cache_ra_order() reads the rest of its
/// window in order 0. Not modeled: the free-area test (a free block of the order: pagelab
/// keeps no buddy orders), direct compaction (tried first for orders above
/// PAGE_ALLOC_COSTLY_ORDER), and direct reclaim at the order (should_continue_reclaim()'s
/// reclaim for compaction): the direct reclaim here is order 0's.
#[inline(never)]
pub fn alloc_pages_order<P: Policy>(mm: &mut Mm, p: &mut P, order: u32) -> Option<Vec<Pfn>> {
    if let Some(frames) = take_frames(mm, order, Wmark::Low) {
        return Some(frames);
    }
    if wake_all_kswapds(mm, order) {
        kswapd_preempts_its_waker(mm, p);
    } else {
        kswapd_takes_its_turn(mm, p);
    }
    if let Some(frames) = take_frames(mm, order, Wmark::Min) {
        return Some(frames);
    }
    let stall = mm.memstall_enter();
    let reclaimed = try_to_free_pages(mm, p);
    mm.memstall_leave(stall);
    if reclaimed > 0 {
        if let Some(frames) = take_frames(mm, order, Wmark::Min) {
            return Some(frames);
        }
        drain_all_pages(mm);
        return take_frames(mm, order, Wmark::Min);
    }
    None
}

/// get_page_from_freelist() for `order`: the zones from the highest down, the first whose free
/// pages less `(1 << order) - 1` stay above `mark` plus its lowmem reserve gives every frame.
fn take_frames(mm: &mut Mm, order: u32, mark: Wmark) -> Option<Vec<Pfn>> {
    let nr = 1u64 << order;
    for z in (0..mm.folios.nr_zones()).rev() {
        let free = mm.zone_free(z);
        let autotuned = mm.cfg.kernel.pcp_high_autotuned();
        let zone = mm.zone_mut(z);
        // 6.12's ZONE_BELOW_HIGH, as zone_allows() notes it.
        if autotuned && free <= zone.wmark_high + zone.lowmem_reserve {
            zone.below_high = true;
        }
        let mark = match mark {
            Wmark::Min => zone.wmark_min,
            Wmark::Low => zone.wmark_low,
        };
        if free.saturating_sub(nr - 1) <= mark + zone.lowmem_reserve {
            continue;
        }
        let mut frames = Vec::with_capacity(nr as usize);
        while (frames.len() as u64) < nr {
            match rmqueue(mm, z) {
                Some(pfn) => frames.push(pfn),
                None => break,
            }
        }
        if frames.len() as u64 == nr {
            return Some(frames);
        }
        for pfn in frames {
            free_unref_page(mm, pfn);
        }
    }
    None
}

/// On one CPU (`machine.cpus = 1`) under CFS (Kernel::kswapd_preempts_its_waker(): 5.7,
/// 6.1): the kswapd this allocation woke takes the CPU at once and keeps it until its
/// balance_pgdat() run ends or it has run one sched_slice() (kernel/sched/fair.c: 6 ms of
/// latency shared by two runnable tasks, [`crate::mm::time::CFS_SLICE_NS`], scaled to the
/// guest's clock as the rstat flush is), when check_preempt_tick() hands the CPU back. The
/// allocating task waits that long. What is left of the run shares the CPU
/// ([`crate::mm::time::OneCpu`]). One CPU is one node's: the kswapd is node 0's.
#[inline(never)]
fn kswapd_preempts_its_waker<P: Policy>(mm: &mut Mm, p: &mut P) {
    let Some(t) = mm.current_task() else { return };
    let Some(cpu) = mm.one_cpu.as_mut() else { return };
    let slice = if mm.cfg.kernel.kswapd_preempts_its_waker() {
        crate::mm::time::CFS_SLICE_NS * mm.memcgs.flush_period_ns / crate::kernel::RSTAT_FLUSH_NS
    } else if let Some(e) = cpu.eevdf() {
        // EEVDF (the `machine.eevdf_turns` experiment): only with lag kept from its last sleep.
        let now = mm.tasks[t].clock;
        match e.kswapd_woken(now) {
            0 => return,
            run => run,
        }
    } else {
        return;
    };
    kswapd_runs_for(mm, p, t, slice);
}

/// On one CPU under EEVDF ([`crate::mm::time::Eevdf`], 6.12 and 7.3), in the slow path of
/// an allocation that finds kswapd already awake and waiting for the CPU: the task has been
/// in the kernel since its operation began, and the scheduler's turns go on meanwhile
/// (kernel/sched/fair.c: update_curr() at the tick ends the task's slice; pick_eevdf() picks
/// kswapd when it is eligible). If kswapd's turn has begun by the task's clock
/// ([`crate::mm::time::Eevdf::kswapd_turn_in_op`]), kswapd runs it now and the task waits.
/// Without this, a long operation (an 8 MiB read-around of 2,048 allocations, 7.3's guest
/// default) ran to its end before kswapd's next step, and its allocations reclaimed directly.
/// The slow path is where the model looks: a turn that began while the task was in the fast
/// path is taken at its next slow path.
#[inline(never)]
fn kswapd_takes_its_turn<P: Policy>(mm: &mut Mm, p: &mut P) {
    let Some(t) = mm.current_task() else { return };
    let now = mm.tasks[t].clock;
    if mm.nodes[0].reclaim.kswapd.is_none() || mm.nodes[0].kswapd_clock > now {
        return;
    }
    let Some(e) = mm.one_cpu.as_mut().and_then(|c| c.eevdf()) else { return };
    let run = e.kswapd_turn_in_op(now);
    if run > 0 {
        kswapd_runs_for(mm, p, t, run);
    }
}

/// kswapd runs its steps for `slice` of CPU (or until it sleeps) while task `t` waits.
fn kswapd_runs_for<P: Policy>(mm: &mut Mm, p: &mut P, t: usize, slice: u64) {
    let cpu_start = mm.nodes[0].kswapd_cpu_ns;
    mm.nodes[0].kswapd_clock = mm.nodes[0].kswapd_clock.max(mm.tasks[t].clock);
    while mm.nodes[0].reclaim.kswapd.is_some() && mm.nodes[0].kswapd_cpu_ns - cpu_start < slice {
        let before = mm.nodes[0].kswapd_clock;
        crate::mm::vmscan::kswapd_step(mm, p, 0);
        // Every step costs at least a microsecond, as in the event loop.
        if mm.nodes[0].kswapd_clock == before {
            mm.nodes[0].kswapd_clock += 1_000;
        }
    }
    let ran = mm.nodes[0].kswapd_cpu_ns - cpu_start;
    let task = &mut mm.tasks[t];
    task.clock += ran;
    task.cpu_wait_ns += ran;
    if let Some(e) = mm.one_cpu.as_mut().and_then(|c| c.eevdf()) {
        e.preempted_for(ran);
        if mm.nodes[0].reclaim.kswapd.is_none() {
            e.kswapd_sleeps();
        }
    }
}

/// Models mm/page_alloc.c: get_page_from_freelist() for an order-0 user page: the zones
/// from the highest down (the zonelist), taking from the first that keeps more than its
/// `mark` plus its lowmem reserve free (zone_watermark_fast(); pages on the per-CPU lists
/// are not free pages to it) and has a page.
// Always inlined: the allocator's fast path is this one call.
#[inline(always)]
fn get_page_from_freelist(mm: &mut Mm, mark: Wmark) -> Option<Pfn> {
    if mm.nodes.len() > 1 {
        return numa_zonelist(mm, mark);
    }
    // The highest zone serves nearly every allocation: try it before the loop.
    let top = mm.nodes[0].zones.z.len() - 1;
    if zone_allows(mm, top, mark) {
        if let Some(pfn) = rmqueue(mm, top) {
            return Some(pfn);
        }
    }
    lower_zones(mm, top, mark)
}

/// Models get_page_from_freelist() on a machine of several nodes (mm/page_alloc.c, 6.1 and
/// 6.12), with the local mempolicy (the preferred node is the allocating task's own,
/// numa_node_id()): the zonelist holds the local node's zones, highest first, then each other
/// node's in the order build_zonelists() gives them (find_next_best_node() by distance; with
/// every remote node at one distance, the nodes above the local one come first and those
/// below it after, each in node order: local, local + 1, …, wrapping). The first zone that
/// keeps its watermark and has a page gives it, and zone_statistics() counts where it came
/// from. zone_reclaim_mode is 0 (its default): no node reclaim before falling back.
#[inline(never)]
fn numa_zonelist(mm: &mut Mm, mark: Wmark) -> Option<Pfn> {
    let local = mm.numa_node_id();
    for nid in zonelist_nodes(local, mm.nodes.len()) {
        for z in mm.node_zones(nid).rev() {
            if zone_allows(mm, z, mark) {
                if let Some(pfn) = rmqueue(mm, z) {
                    zone_statistics(mm, local, nid, local);
                    return Some(pfn);
                }
            }
        }
    }
    None
}

/// The nodes of a zonelist built for node `local` on a machine of `n` nodes, in the order
/// build_zonelists() gives them (6.1, 6.12; 7.3.4 alike) with every remote node at one
/// distance (find_next_best_node()): local, local + 1, …, wrapping. The allocator, the
/// kswapd wake-ups and direct reclaim walk the nodes in this order.
pub fn zonelist_nodes(local: usize, n: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |k| (local + k) % n)
}

/// Models mm/page_alloc.c: zone_statistics() (6.1, 6.12) for one page of node `nid` for an
/// allocation that preferred node `preferred`, on a CPU of node `cpu_nid`: numa_hit on the
/// page's node when it is the preferred one, else numa_miss there and numa_foreign on the
/// preferred node; numa_local or numa_other on the page's node by whether it is the CPU's.
#[inline]
fn zone_statistics(mm: &mut Mm, preferred: usize, nid: usize, cpu_nid: usize) {
    use crate::mm::mmzone::NumaStat;
    if nid == preferred {
        mm.nodes[nid].numa[NumaStat::Hit as usize] += 1;
    } else {
        mm.nodes[nid].numa[NumaStat::Miss as usize] += 1;
        mm.nodes[preferred].numa[NumaStat::Foreign as usize] += 1;
    }
    let stat = if nid == cpu_nid { NumaStat::Local } else { NumaStat::Other };
    mm.nodes[nid].numa[stat as usize] += 1;
}

/// The rest of get_page_from_freelist()'s zonelist, below `top`.
#[inline(never)]
fn lower_zones(mm: &mut Mm, top: usize, mark: Wmark) -> Option<Pfn> {
    for z in (0..top).rev() {
        if zone_allows(mm, z, mark) {
            if let Some(pfn) = rmqueue(mm, z) {
                return Some(pfn);
            }
        }
    }
    None
}

/// The watermark test of get_page_from_freelist() for zone `z`. 6.12 first notes whether
/// the zone is below its high watermark (ZONE_BELOW_HIGH, which stops its per-CPU lists from
/// growing); a zone above it passes without the second test.
#[inline(always)]
fn zone_allows(mm: &mut Mm, z: usize, mark: Wmark) -> bool {
    let free = mm.zone_free(z);
    let autotuned = mm.cfg.kernel.pcp_high_autotuned();
    let zone = mm.zone_mut(z);
    if autotuned && !zone.below_high {
        if free > zone.wmark_high + zone.lowmem_reserve {
            return true;
        }
        zone.below_high = true;
    }
    let mark = match mark {
        Wmark::Min => zone.wmark_min,
        Wmark::Low => zone.wmark_low,
    };
    free > mark + zone.lowmem_reserve
}

/// Models mm/page_alloc.c: rmqueue_pcplist() (6.1, 6.12; 7.3.4 alike): take the page from
/// the running CPU's list of zone `z` (with `machine.cpus` ≥ 2, the scheduler's CPU: the
/// zone's [`PerCpuPages`] is that CPU's, [`switch_pcp`]), refilling an empty list from the
/// zone's buddy lists first (rmqueue_bulk(), which checks no watermark, under zone->lock),
/// and count it in the zone's PGALLOC. Another CPU's list is not looked at: a page freed there
/// waits for that CPU or a drain.
#[inline(always)]
fn rmqueue(mm: &mut Mm, z: usize) -> Option<Pfn> {
    if mm.pageblocks.is_some() {
        return rmqueue_with_fallback(mm, z);
    }
    let kernel = mm.cfg.kernel;
    let buddy = mm.movable_free(z);
    let zone = mm.zone_mut(z);
    let empty = zone.pcp.count == 0;
    if !zone.pcp.take_one(kernel, zone.below_high, buddy) {
        return None;
    }
    if empty {
        // rmqueue_bulk() took the refill, and the page just taken, under zone->lock.
        let refill = zone.pcp.count as u64 + 1;
        mm.zone_lock("rmqueue_bulk", z, refill);
    }
    let zone = mm.zone(z);
    let ev = zone.pgalloc;
    mm.count(ev, 1);
    mm.folios.alloc_from(z)
}

/// [`rmqueue`] on a machine with non-movable pageblocks (`machine.nonmovable`): a refill that
/// finds the movable lists short takes the rest from the other migratetypes
/// (rmqueue_bulk() -> __rmqueue() -> the fallbacks of [`crate::mm::pageblock`]), which may
/// boost the zone's watermarks; after the page is taken, a zone flagged
/// ZONE_BOOSTED_WATERMARK has its flag cleared and kswapd woken (rmqueue(), 6.1/6.12).
#[inline(never)]
fn rmqueue_with_fallback(mm: &mut Mm, z: usize) -> Option<Pfn> {
    use crate::mm::pageblock::RmqueueMode;
    let kernel = mm.cfg.kernel;
    let buddy = mm.movable_free(z);
    let Mm { nodes, pageblocks, folios, .. } = mm;
    let zones = &mut nodes[0].zones;
    let pb = pageblocks.as_mut().expect("called with pageblocks");
    let zone = &mut zones.z[z];
    let empty = zone.pcp.count == 0;
    let mut boosted = false;
    let taken = zone.pcp.take_one_or(kernel, zone.below_high, buddy, |short| {
        let (mut mode, mut got, mut frames) = (RmqueueMode::Normal, 0, Vec::new());
        while got < short {
            let Some(f) = pb.fallback(kernel, z, &mut mode, &mut frames) else { break };
            got += f.frames as i64;
            boosted |= f.boosted;
        }
        // rmqueue_bulk() lists the pages in the order __rmqueue() returned them, the movable
        // lists' first: the frames of the fallback go below them, and what the refill does not
        // take stays on the movable lists. The order matters to the drain rule only, and is
        // modeled with it (`pcp_lists_known`); without it the frames go on top.
        if pb.pcp_lists_known {
            folios.push_bottom(z, &frames);
        } else {
            folios.push_free(z, &frames);
        }
        got
    });
    if boosted {
        // boost_watermark() with ALLOC_KSWAPD (user allocations may wake kswapd).
        pb.boosted_flag[z] = true;
        apply_boost(zones, pb, z);
    }
    if !taken {
        return None;
    }
    let refill = zones.z[z].pcp.count as u64 + 1;
    if empty {
        mm.zone_lock("rmqueue_bulk", z, refill);
    }
    let ev = mm.zone(z).pgalloc;
    mm.count(ev, 1);
    let pfn = mm.folios.alloc_from(z);
    let pb = mm.pageblocks.as_mut().expect("called with pageblocks");
    if std::mem::take(&mut pb.boosted_flag[z]) {
        // Pageblocks are modeled on a machine of one node: zone `z` is node 0's.
        wakeup_kswapd(mm, 0, z);
    }
    pfn
}

/// The watermarks of zone `z` with its boost (wmark_pages(): `_watermark[] + watermark_boost`).
pub fn apply_boost(zones: &mut crate::mm::mmzone::Zones, pb: &crate::mm::pageblock::Pageblocks, z: usize) {
    let [min, low, high] = pb.marks(z);
    let zone = &mut zones.z[z];
    (zone.wmark_min, zone.wmark_low, zone.wmark_high) = (min, low, high);
}

/// Models mm/page_alloc.c: drain_all_pages() (6.1, 6.12; 7.3.4 alike): every page on every
/// CPU's per-CPU lists goes back to the buddy lists. Since 5.19 (__drain_all_pages() with
/// drain_pages_zone(cpu, zone) under the list's own pcp->lock) the caller drains the other
/// CPUs' lists itself, one free_pcppages_bulk() under zone->lock per CPU and zone that holds
/// pages, so the caller pays every one of those holds.
///
/// On a machine of several CPUs, a drain that finds another in progress does nothing
/// (__drain_all_pages() of 6.1, 6.12 and 7.3.4 with no zone: `mutex_trylock(&pcpu_drain_mutex)`
/// fails and it returns): the caller goes on to its retry of the free lists, as the
/// allocator's slow path does after either. In progress means the caller's clock lies in the
/// modeled span of the last drain, from its start to its last zone->lock release
/// ([`DrainMutex`]). The model's 5.7 follows the same rule.
pub fn drain_all_pages(mm: &mut Mm) {
    let multi_cpu = mm.sched.is_some();
    let start = mm.now();
    if multi_cpu && mm.pcpu_drain.busy_at(start) {
        return;
    }
    drain_all_lists(mm);
    if multi_cpu {
        let end = mm.now();
        mm.pcpu_drain = DrainMutex { from: start, until: end };
    }
}

/// The modeled span of the last [`drain_all_pages`] on a machine of several CPUs, during which
/// `pcpu_drain_mutex` is held (mm/page_alloc.c, 6.1, 6.12, 7.3.4).
#[derive(Clone, Copy, Debug, Default)]
pub struct DrainMutex {
    from: u64,
    until: u64,
}

impl DrainMutex {
    /// Whether a drain that starts at `t` finds the mutex held (its trylock fails).
    pub fn busy_at(&self, t: u64) -> bool {
        self.from <= t && t < self.until
    }
}

/// [`drain_all_pages`]'s work: the running CPU's lists, then the other CPUs'.
fn drain_all_lists(mm: &mut Mm) {
    for z in 0..mm.folios.nr_zones() {
        // free_pcppages_bulk() of the whole list under zone->lock.
        let gone = drain_pages_zone(mm, z);
        if gone > 0 {
            mm.zone_lock("drain_all_pages", z, gone);
        }
    }
    let Some(mut pc) = mm.percpu.take() else { return };
    for cpu in pc.pcp.iter_mut() {
        for (z, list) in cpu.iter_mut().enumerate() {
            if list.frames.is_empty() {
                continue;
            }
            // The running CPU's list is empty now: the frames go on top of the buddy lists.
            let movable = parked_to_block_lists(mm, z, list.frames.make_contiguous());
            mm.folios.push_top(z, 0, &movable);
            let n = list.frames.len() as u64;
            list.frames.clear();
            list.pcp.count = 0;
            mm.zone_lock("drain_all_pages", z, n);
        }
    }
    mm.percpu = Some(pc);
}

/// The per-CPU list of one zone of a CPU that is not the running one, on a machine of
/// several CPUs (`machine.cpus` ≥ 2): its state and its frames, in the order the list hands
/// them out (the last first). The running CPU's lists are the zones' own [`PerCpuPages`],
/// whose frames are the top of the zone's free stack, so the one-CPU model and the hot path
/// see one list per zone as before. A parked list's frames are off the free stack: no other
/// CPU's allocation finds them, and NR_FREE_PAGES (every watermark check) does not count them.
#[derive(Clone, Debug)]
pub struct ParkedPages {
    pub pcp: PerCpuPages,
    pub frames: std::collections::VecDeque<Pfn>,
}

/// Models the per-CPU `zone->per_cpu_pageset` of 6.1 and 6.12 (7.3.4 alike): `cpus` CPUs,
/// each with a list per zone, sized by [`PerCpuPages::new_split`] over the CPUs of the
/// zone's node (`cpu_node`, empty on one node: every CPU). The zones' own lists become CPU
/// 0's (resized), the others start empty. Returns the other CPUs' lists, by CPU then zone
/// (CPU 0's entries unused until it is parked).
pub fn setup_zone_pagesets(mm: &mut Mm, cpus: u32, high_fraction: u64) -> Vec<Vec<ParkedPages>> {
    let kernel = mm.cfg.kernel;
    let mut lists = Vec::new();
    for z in 0..mm.folios.nr_zones() {
        let nid = mm.zone_nid(z);
        let local = if mm.cpu_node.is_empty() { cpus as u64 } else { mm.cpu_node.iter().filter(|&&n| n as usize == nid).count() as u64 };
        let nr_split = if local == 0 { cpus as u64 } else { local };
        let zone = mm.zone_mut(z);
        zone.pcp = PerCpuPages::new_split(kernel, zone.managed, zone.wmark_low, high_fraction, nr_split);
        lists.push(ParkedPages { pcp: zone.pcp.clone(), frames: Default::default() });
    }
    vec![lists; cpus as usize]
}

/// The running actor moves from CPU `old` to CPU `new`: each zone's list of `old` is parked
/// with its frames (the top of the free stack) and `new`'s takes its place, its frames back
/// on top of the free stack.
///
/// The frames do not move: the top of the free stack is held apart
/// ([`crate::mm::folio::Folios::split_top`]), and the lists swap places with it. The split
/// costs what the list's count moved away from the frames held since the last switch (the
/// refills and bulk frees of the time between), so a switch is O(zones), not O(pages listed).
// `z` indexes the zones of two CPUs' lists and the machine's, not one slice.
#[allow(clippy::needless_range_loop)]
pub fn switch_pcp(mm: &mut Mm, lists: &mut [Vec<ParkedPages>], old: usize, new: usize) {
    for z in 0..mm.folios.nr_zones() {
        let count = mm.zone(z).pcp.count.max(0) as usize;
        mm.folios.split_top(z, count);
        let parked = &mut lists[old][z];
        // The running CPU's slot holds an empty buffer: it becomes the held top's, the held
        // frames the slot's (the buffers are kept and reused: no allocation once warm).
        debug_assert!(parked.frames.is_empty());
        std::mem::swap(mm.folios.top_mut(z), &mut parked.frames);
        parked.pcp = mm.zone(z).pcp.clone();
        // Short only when the host could not hold a never-used frame's table.
        parked.pcp.count = parked.frames.len() as i64;
        let next = &mut lists[new][z];
        std::mem::swap(mm.folios.top_mut(z), &mut next.frames);
        mm.zone_mut(z).pcp = next.pcp.clone();
        // The slot of the running CPU holds nothing until it is parked again.
        next.pcp.count = 0;
    }
}

/// Models mm/page_alloc.c: free_pcppages_bulk() (6.12.95, 7.3.4) for the running CPU's list
/// of zone `z`, which has just given back the `n` frames below its top `keep` (a bulk free
/// past `high`, a drain, decay_pcp_high()): each goes to the free lists of its pageblock's
/// migratetype (get_pfnblock_migratetype()), so a frame a refill stole from an unmovable or
/// reclaimable block and did not hand out goes back to that block's lists
/// ([`Kernel::pcp_drain_follows_the_pageblock`]; 6.1's stay on the movable lists). Opt-in:
/// only with a layout that says what the lists hold (`Pageblocks::pcp_lists_known`).
fn pcp_bulk_to_block_lists(mm: &mut Mm, z: usize, keep: usize, n: usize) {
    if n == 0 || !drains_to_block_lists(mm) {
        return;
    }
    let Mm { pageblocks, folios, .. } = mm;
    let pb = pageblocks.as_mut().expect("checked above");
    for pfn in folios.take_below_top(z, keep, n, |p| pb.is_nonmovable(p)) {
        pb.free(z, pfn);
    }
}

/// Models mm/page_alloc.c: drain_pages_zone() for the running CPU (6.1, 6.12, 7.3): its list
/// of zone `z` given back whole (free_pcppages_bulk()), with the frames of the non-movable
/// blocks it holds ([`return_held_pcp`]). Returns the pages given back.
pub fn drain_pages_zone(mm: &mut Mm, z: usize) -> u64 {
    let count = std::mem::take(&mut mm.zone_mut(z).pcp.count).max(0) as u64;
    pcp_bulk_to_block_lists(mm, z, 0, count as usize);
    count + return_held_pcp(mm, z, u64::MAX, 0)
}

/// Whether a list's drain sends each frame to its pageblock's lists: the kernel's rule
/// ([`Kernel::pcp_drain_follows_the_pageblock`]) with a layout that says what the lists hold
/// (`Pageblocks::pcp_lists_known`).
fn drains_to_block_lists(mm: &Mm) -> bool {
    mm.cfg.kernel.pcp_drain_follows_the_pageblock() && mm.pageblocks.as_ref().is_some_and(|pb| pb.pcp_lists_known)
}

/// [`pcp_bulk_to_block_lists`] for `frames` of another CPU's list of zone `z`: frees those of
/// non-movable blocks to their blocks' lists and returns the others, for the movable lists.
fn parked_to_block_lists<'a>(mm: &mut Mm, z: usize, frames: &'a [Pfn]) -> std::borrow::Cow<'a, [Pfn]> {
    if !drains_to_block_lists(mm) {
        return frames.into();
    }
    let pb = mm.pageblocks.as_mut().expect("drains_to_block_lists() checked it");
    let (gone, movable): (Vec<Pfn>, Vec<Pfn>) = frames.iter().partition(|&&p| pb.is_nonmovable(p));
    for pfn in gone {
        pb.free(z, pfn);
    }
    movable.into()
}

/// Gives back up to `n` of the frames of zone `z`'s non-movable blocks that sit on the
/// running CPU's per-CPU lists (`machine.nonmovable.Z.pcp`; [`Pageblocks::return_pcp`]):
/// those of a block claimed since go on the movable lists below the list's top `keep`
/// frames. Returns how many left. They are the kernel's frames no longer.
///
/// [`Pageblocks::return_pcp`]: crate::mm::pageblock::Pageblocks::return_pcp
fn return_held_pcp(mm: &mut Mm, z: usize, n: u64, keep: usize) -> u64 {
    let Some(pb) = mm.pageblocks.as_mut().filter(|pb| pb.nr_pcp_held(z) > 0) else { return 0 };
    let (gone, movable) = pb.return_pcp(z, n);
    mm.kernel_pages -= gone;
    mm.folios.push_top(z, keep, &movable);
    gone
}

/// Frames on the per-CPU lists of CPUs other than the running one.
pub fn parked_frames(mm: &Mm) -> u64 {
    mm.percpu.as_ref().map_or(0, |pc| pc.pcp.iter().flatten().map(|l| l.frames.len() as u64).sum())
}

/// Models the free of an order-0 page to the freeing CPU's list of its zone (6.1, 6.12;
/// 7.3.4's free_frozen_pages() alike: free_unref_page(), or
/// free_unref_folios()/free_unref_page_list() for a batch, which commit each page the same
/// way): the list takes it, and gives a bulk back to the buddy lists when it reaches its
/// `high` (free_unref_page_commit()). On 6.12 a bulk free that lifts the zone above its high
/// watermark (with its lowmem reserve: zone_watermark_ok() for ZONE_MOVABLE) clears
/// ZONE_BELOW_HIGH.
// Always inlined: its one caller on the eviction path is free_folio(), once per page.
#[inline(always)]
pub fn free_unref_page(mm: &mut Mm, pfn: Pfn) {
    if let Some(pb) = mm.pageblocks.as_mut().filter(|pb| pb.is_nonmovable(pfn)) {
        // A page of a non-movable pageblock goes back to its own type's lists
        // (get_pfnblock_migratetype()), which movable allocations reach only by falling back.
        let z = mm.folios.release(pfn);
        pb.free(z, pfn);
        return;
    }
    let z = mm.folios.free(pfn);
    let kernel = mm.cfg.kernel;
    let zone = mm.zone_mut(z);
    let (reclaim_active, below_high) = (zone.reclaim_active, zone.below_high);
    let before = zone.pcp.count;
    if zone.pcp.commit_free(kernel, reclaim_active, below_high) {
        // free_pcppages_bulk() gave the bulk back under zone->lock.
        let freed = (before + 1 - mm.zone(z).pcp.count).max(0) as u64;
        mm.zone_lock("free_pcppages_bulk", z, freed);
        let keep = mm.zone(z).pcp.count.max(0) as usize;
        pcp_bulk_to_block_lists(mm, z, keep, freed as usize);
        if below_high {
            let zone = mm.zone(z);
            let mark = zone.wmark_high + zone.lowmem_reserve;
            if mm.zone_free(z) > mark {
                mm.zone_mut(z).below_high = false;
            }
        }
    }
}

/// Models mm/vmstat.c: refresh_cpu_vm_stats() -> decay_pcp_high() (6.12, every
/// sysctl_stat_interval): in every zone, `high` sheds an eighth towards high_min and the list
/// gives back what it holds above it. 6.1 and 5.7 drain nothing there on a single node.
/// Every CPU does it for its own lists (each CPU's vmstat_update work): on a machine of
/// several CPUs the parked lists give back their oldest frames, below the running CPU's.
pub fn decay_pcp_high(mm: &mut Mm) {
    if mm.cfg.kernel.pcp_high_autotuned() {
        for z in 0..mm.folios.nr_zones() {
            // The list counts the non-movable blocks' frames it holds, and gives them back
            // first: decay_pcp_high() drains from pindex 0, the unmovable list.
            let held = mm.pageblocks.as_ref().map_or(0, |pb| pb.nr_pcp_held(z)) as i64;
            let before = mm.zone(z).pcp.count;
            mm.zone_mut(z).pcp.count += held;
            mm.zone_mut(z).pcp.decay_high();
            let drained = before + held - mm.zone(z).pcp.count;
            let back = held.min(drained.max(0));
            mm.zone_mut(z).pcp.count -= held - back;
            let after = mm.zone(z).pcp.count;
            pcp_bulk_to_block_lists(mm, z, after.max(0) as usize, (before - after).max(0) as usize);
            return_held_pcp(mm, z, back as u64, after.max(0) as usize);
        }
        let Some(mut pc) = mm.percpu.take() else { return };
        for cpu in pc.pcp.iter_mut() {
            for (z, list) in cpu.iter_mut().enumerate() {
                list.pcp.count = list.frames.len() as i64;
                list.pcp.decay_high();
                let gone = list.frames.len() - list.pcp.count.max(0) as usize;
                if gone > 0 {
                    let keep = mm.zone(z).pcp.count.max(0) as usize;
                    let movable = parked_to_block_lists(mm, z, &list.frames.make_contiguous()[..gone]);
                    mm.folios.push_top(z, keep, &movable);
                    list.frames.drain(..gone);
                }
            }
        }
        mm.percpu = Some(pc);
    }
}

fn current_killed(mm: &Mm) -> bool {
    mm.current_task().is_some_and(|t| mm.tasks[t].killed)
}

/// Models the free of a page (mem_cgroup_uncharge() + free_unref_page()): uncharge its
/// memcg, drop the page-state counts and return the frame. A large folio (7.3's page cache)
/// is uncharged and counted by its pages and its frames go back one by one, as they were
/// taken ([`crate::mm::filemap::filemap_add_large_folio`]'s simplification).
// Inlined into its callers: reclaim frees every evicted page through it.
#[inline]
pub fn free_folio(mm: &mut Mm, pfn: Pfn) {
    // One lookup of the folio: nothing here changes its memcg or flags before the free.
    let f = mm.folios.get(pfn);
    let (memcg, flags) = (f.memcg, f.flags);
    if flags & pg::ORDER_MASK != 0 {
        return free_large_folio(mm, pfn);
    }
    uncount_folio(mm, memcg, flags, 1);
    free_unref_page(mm, pfn);
}

/// [`free_folio`]'s counts of a folio of `nr` pages with `flags`, charged to `memcg`:
/// mem_cgroup_uncharge() and the page-state counts (NR_ANON_PAGES or NR_FILE_PAGES, dirty,
/// mapped, 6.1's memcg PGPGOUT), each by its pages.
// Always inlined: `nr` is the constant 1 on the order-0 path.
#[inline(always)]
fn uncount_folio(mm: &mut Mm, memcg: MemcgId, flags: u32, nr: u64) {
    mm.memcgs.uncharge_counters(memcg, nr);
    let count = if flags & pg::SWAPBACKED != 0 { &mut mm.nr_anon_pages } else { &mut mm.nr_file_pages };
    *count = count.wrapping_sub(nr);
    if flags & pg::SWAPBACKED == 0 {
        mm.memcgs.stat_updated(memcg, FedStat::FilePages, nr);
        if flags & pg::DIRTY != 0 {
            mm.account_dirty(memcg, -(nr as i64));
        }
    }
    if flags & pg::MAPPED != 0 {
        mm.memcgs.stat_updated(memcg, FedStat::Mapped, nr);
    }
    if mm.cfg.kernel.memcg_counts_pgpgin() {
        mm.memcgs.stat_updated(memcg, FedStat::PgpgOut, nr);
    }
}

/// [`free_folio`] of a large (file) folio: every count by its pages, then its frames, head
/// first and the tails in their chain's order.
#[inline(never)]
fn free_large_folio(mm: &mut Mm, pfn: Pfn) {
    let f = *mm.folios.get(pfn);
    uncount_folio(mm, f.memcg, f.flags, f.nr_pages());
    // The head names the first tail and each tail the next (`swap`): read before each free.
    let mut next = f.swap;
    free_unref_page(mm, pfn);
    while next != crate::mm::folio::NIL {
        let tail = next;
        next = mm.folios.get(tail).swap;
        free_unref_page(mm, tail);
    }
}

/// `CONFIG_PCP_BATCH_SCALE_MAX` (5 in Debian's 6.1 and 6.12 configs): refills and bulk frees
/// grow to at most 32 batches.
const PCP_BATCH_SCALE_MAX: u32 = 5;
/// `MIN_PERCPU_PAGELIST_HIGH_FRACTION`: 6.12's high_max is an eighth of the zone.
const MIN_PERCPU_PAGELIST_HIGH_FRACTION: u64 = 8;

/// One CPU's free lists for the zone (mm/page_alloc.c: struct per_cpu_pages, order 0,
/// movable pages: the only kind the model allocates). The running CPU's pages stay on the
/// frame free list, its top `count` frames; this counts how many of them are on the per-CPU
/// list, where NR_FREE_PAGES, and so every watermark check, does not see them. Without
/// `machine.cpus` (and with 1) the machine has one CPU's lists, as the oracle's one-CPU guests;
/// with several, each CPU has its own per zone ([`ParkedPages`], [`setup_zone_pagesets`]),
/// `high` split over the node's CPUs ([`PerCpuPages::new_split`]), and a page goes to the
/// list of the CPU that frees it and comes from the list of the CPU that allocates.
#[derive(Clone, Debug)]
pub struct PerCpuPages {
    /// Pages on the list.
    pub count: i64,
    /// The list's current limit (6.12: tuned between high_min and high_max).
    pub high: i64,
    high_min: i64,
    high_max: i64,
    batch: i64,
    /// 6.12: refills take `batch << alloc_factor`; doubled per refill, halved per free.
    alloc_factor: u32,
    /// 6.12: pages freed since the last allocations (halved per allocation), which size
    /// bulk frees and the decay of `high`.
    free_count: i64,
    /// 6.1: bulk frees take `batch << free_factor`; doubled per bulk free, halved per
    /// allocation.
    free_factor: u32,
}

impl PerCpuPages {
    /// Models mm/page_alloc.c: zone_set_pageset_high_and_batch() with zone_batchsize() and
    /// zone_highsize() for one CPU (6.1, 6.12), or pageset_set_batch() (5.7: high is six
    /// batches). `high_fraction` is vm.percpu_pagelist_high_fraction (0: the default, high
    /// from the low watermark; on 6.12 it also turns the tuning off).
    pub fn new(kernel: Kernel, managed: u64, wmark_low: u64, high_fraction: u64) -> PerCpuPages {
        PerCpuPages::new_split(kernel, managed, wmark_low, high_fraction, 1)
    }

    /// [`PerCpuPages::new`] for one of `nr_split_cpus` CPUs: zone_highsize() (6.1, 6.12; 7.3.4
    /// alike) splits the high value (the low watermark, or the zone over the fraction) over
    /// the online CPUs of the zone's node (all online CPUs for a node without any), at least
    /// four batches; zone_batchsize() does not depend on the CPUs. 5.7's six batches neither.
    pub fn new_split(kernel: Kernel, managed: u64, wmark_low: u64, high_fraction: u64, nr_split_cpus: u64) -> PerCpuPages {
        let batch = zone_batchsize(managed).max(1);
        let highsize = |fraction: u64| {
            // Fraction 0 is the default: the low watermark.
            let total = managed.checked_div(fraction).unwrap_or(wmark_low);
            ((total / nr_split_cpus.max(1)) as i64).max(batch << 2)
        };
        let (high_min, high_max) = if !kernel.pcp_limited_during_reclaim() {
            (6 * batch, 6 * batch)
        } else if !kernel.pcp_high_autotuned() || high_fraction != 0 {
            (highsize(high_fraction), highsize(high_fraction))
        } else {
            (highsize(0), highsize(MIN_PERCPU_PAGELIST_HIGH_FRACTION))
        };
        PerCpuPages { count: 0, high: high_min, high_min, high_max, batch, alloc_factor: 0, free_count: 0, free_factor: 0 }
    }

    /// Takes one page for an allocation (rmqueue_pcplist()), refilling an empty list with up
    /// to nr_pcp_alloc() of the `buddy` pages first. False when there is none to take.
    #[inline]
    fn take_one(&mut self, kernel: Kernel, below_high: bool, buddy: u64) -> bool {
        self.take_one_or(kernel, below_high, buddy, |_| 0)
    }

    /// [`PerCpuPages::take_one`], where `more(n)` supplies up to `n` pages the buddy lists
    /// lack (from other migratetypes' pageblocks) and returns how many it put there.
    #[inline(always)]
    fn take_one_or(&mut self, kernel: Kernel, below_high: bool, buddy: u64, more: impl FnOnce(i64) -> i64) -> bool {
        if kernel.pcp_high_autotuned() {
            self.free_count >>= 1;
        } else {
            self.free_factor >>= 1;
        }
        if self.count == 0 {
            let want = self.nr_pcp_alloc(kernel, below_high);
            let mut got = want.min(buddy as i64);
            if got < want {
                got += more(want - got).min(want - got);
            }
            self.count = got;
            if self.count == 0 {
                return false;
            }
        }
        self.count -= 1;
        true
    }

    /// Models mm/page_alloc.c: nr_pcp_alloc() (6.12): how many pages an empty list takes
    /// from the buddy lists: `batch << alloc_factor`, the factor doubling per refill without
    /// a free between, at most what fits under `high` (which grows by the refill while the
    /// zone is above its high watermark). 6.1 and 5.7 take one batch.
    fn nr_pcp_alloc(&mut self, kernel: Kernel, below_high: bool) -> i64 {
        if !kernel.pcp_high_autotuned() {
            return self.batch;
        }
        self.high = self.high.clamp(self.high_min, self.high_max);
        if self.high < self.batch {
            return 1;
        }
        let mut batch = self.batch << self.alloc_factor;
        if self.high_min != self.high_max && !below_high {
            self.high = (self.high + batch).min(self.high_max);
        }
        let max_nr_alloc = (self.high - self.count - self.batch).max(self.batch);
        if batch <= max_nr_alloc && self.alloc_factor < PCP_BATCH_SCALE_MAX {
            self.alloc_factor += 1;
        }
        batch = batch.min(max_nr_alloc);
        batch
    }

    /// Models mm/page_alloc.c: free_unref_page_commit() for an order-0 page: the list takes
    /// the page and, at its limit (nr_pcp_high()), gives nr_pcp_free() pages back. True when
    /// it gave some back.
    #[inline]
    fn commit_free(&mut self, kernel: Kernel, reclaim_active: bool, below_high: bool) -> bool {
        self.count += 1;
        if kernel.pcp_high_autotuned() {
            self.alloc_factor >>= 1;
            if self.free_count < self.batch << PCP_BATCH_SCALE_MAX {
                self.free_count += 1;
            }
        }
        let high = self.nr_pcp_high(kernel, reclaim_active, below_high);
        if self.count < high {
            return false;
        }
        let n = self.nr_pcp_free(kernel, high);
        self.count -= n.min(self.count);
        true
    }

    /// Models mm/page_alloc.c: nr_pcp_high(): the limit a free is held to. 6.1 and 6.12 cap
    /// it at four batches while kswapd reclaims the zone (ZONE_RECLAIM_ACTIVE), 6.12 letting
    /// `high` itself shed the pages freed meanwhile; 6.12 also sheds them while the zone is
    /// below its high watermark (then the list keeps at most what it has), and otherwise
    /// raises `high` to hold a run of frees.
    #[inline]
    fn nr_pcp_high(&mut self, kernel: Kernel, reclaim_active: bool, below_high: bool) -> i64 {
        if !kernel.pcp_limited_during_reclaim() {
            return self.high;
        }
        if !kernel.pcp_high_autotuned() {
            return if reclaim_active { (self.batch << 2).min(self.high) } else { self.high };
        }
        self.high = self.high.clamp(self.high_min, self.high_max);
        let high = self.high;
        if high == 0 {
            return 0;
        }
        if reclaim_active {
            self.high = (high - self.free_count.max(self.batch)).max(self.high_min);
            return (self.batch << 2).min(self.high);
        }
        if self.high_min == self.high_max {
            return high;
        }
        if below_high {
            self.high = (high - self.free_count.max(self.batch)).max(self.high_min);
            return self.count.max(self.high_min);
        }
        if self.count >= high {
            let need_high = self.free_count + self.batch;
            if self.high < need_high {
                self.high = need_high.clamp(self.high_min, self.high_max);
            }
        }
        high
    }

    /// Models mm/page_alloc.c: nr_pcp_free(): how many pages a full list gives back, at
    /// least a batch and leaving at least one: 6.1 doubles the batch per bulk free without an
    /// allocation between (free_factor), 6.12 gives back the pages freed meanwhile
    /// (free_count); 5.7 one batch.
    fn nr_pcp_free(&mut self, kernel: Kernel, high: i64) -> i64 {
        if !kernel.pcp_limited_during_reclaim() {
            return self.batch;
        }
        if high < self.batch {
            return 1;
        }
        let (min_nr_free, max_nr_free) = (self.batch, high - self.batch);
        let n = if kernel.pcp_high_autotuned() {
            self.free_count
        } else {
            let n = self.batch << self.free_factor;
            if n < max_nr_free && self.free_factor < PCP_BATCH_SCALE_MAX {
                self.free_factor += 1;
            }
            n
        };
        // The kernel's clamp(): the upper bound wins when the bounds cross.
        n.max(min_nr_free).min(max_nr_free)
    }

    /// Models mm/page_alloc.c: decay_pcp_high() (6.12).
    fn decay_high(&mut self) {
        if self.high > self.high_min {
            self.high = (self.count - (self.batch << PCP_BATCH_SCALE_MAX)).max(self.high - (self.high >> 3)).max(self.high_min);
        }
        if self.count > self.high {
            self.count = self.high;
        }
    }
}

/// Models mm/page_alloc.c: zone_batchsize(): about a quarter of a thousandth of the zone, at
/// most 64 pages, rounded to a power of two less one.
fn zone_batchsize(managed: u64) -> i64 {
    let batch = ((managed >> 10).min(256) / 4).max(1) as i64;
    let x = batch + batch / 2;
    (1i64 << (63 - x.leading_zeros())) - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The oracle guests' DMA32 zone: 50,098 managed pages, low watermark 521.
    fn guest_pcp(kernel: Kernel) -> PerCpuPages {
        PerCpuPages::new(kernel, 50_098, 521, 0)
    }

    #[test]
    fn zone_batchsize_is_a_power_of_two_less_one_of_a_quarter_of_a_thousandth() {
        assert_eq!(zone_batchsize(50_098), 15);
        assert_eq!(zone_batchsize(3_840), 0, "ZONE_DMA: the caller raises it to 1");
        assert_eq!(zone_batchsize(1 << 20), 63);
        assert_eq!(zone_batchsize(1 << 30), 63, "capped at 1 MiB of pages / 4");
    }

    #[test]
    fn zone_highsize_follows_the_low_watermark_and_6_12_tunes_up_to_an_eighth_of_the_zone() {
        let p = guest_pcp(Kernel::V6_1);
        assert_eq!((p.batch, p.high_min, p.high_max), (15, 521, 521));
        let p = guest_pcp(Kernel::V6_12);
        assert_eq!((p.high_min, p.high_max), (521, 50_098 / 8));
        // vm.percpu_pagelist_high_fraction fixes high and turns 6.12's tuning off.
        let p = PerCpuPages::new(Kernel::V6_12, 50_098, 521, 1000);
        assert_eq!((p.high_min, p.high_max), (60, 60), "at least four batches");
        let p = guest_pcp(Kernel::V5_7);
        assert_eq!((p.high_min, p.high_max), (90, 90), "5.7: six batches");
    }

    #[test]
    fn zone_highsize_splits_high_over_the_nodes_cpus_at_least_four_batches() {
        let p = PerCpuPages::new_split(Kernel::V6_1, 50_098, 521, 0, 4);
        assert_eq!((p.batch, p.high_min, p.high_max), (15, 130, 130));
        let p = PerCpuPages::new_split(Kernel::V6_1, 50_098, 521, 0, 36);
        assert_eq!(p.high, 60, "521 / 36 is below four batches");
        let p = PerCpuPages::new_split(Kernel::V6_12, 50_098, 521, 0, 4);
        assert_eq!((p.high_min, p.high_max), (130, 50_098 / 8 / 4));
        let p = PerCpuPages::new_split(Kernel::V5_7, 50_098, 521, 0, 4);
        assert_eq!(p.high, 90, "5.7: six batches whatever the CPUs");
    }

    #[test]
    fn nr_pcp_alloc_doubles_refills_without_frees_on_6_12_and_takes_one_batch_on_6_1() {
        let mut p = guest_pcp(Kernel::V6_12);
        let mut refills = Vec::new();
        for _ in 0..7 {
            let n = p.nr_pcp_alloc(Kernel::V6_12, false);
            refills.push(n);
            p.count = 0; // the refill is used up before the next
        }
        assert_eq!(refills, [15, 30, 60, 120, 240, 480, 480]);
        assert_eq!(p.high, 521 + 15 + 30 + 60 + 120 + 240 + 480 + 480, "high grows by each refill above the high watermark");
        // A free halves the factor.
        p.commit_free(Kernel::V6_12, false, false);
        assert_eq!(p.alloc_factor, 2);
        let mut p = guest_pcp(Kernel::V6_1);
        assert!((0..5).all(|_| p.nr_pcp_alloc(Kernel::V6_1, false) == 15));
    }

    #[test]
    fn nr_pcp_alloc_stops_raising_high_below_the_high_watermark_on_6_12() {
        let mut p = guest_pcp(Kernel::V6_12);
        for _ in 0..6 {
            p.nr_pcp_alloc(Kernel::V6_12, true);
            p.count = 0;
        }
        assert_eq!(p.high, 521);
        // At most what fits under high, less a batch.
        p.count = 100;
        assert_eq!(p.nr_pcp_alloc(Kernel::V6_12, true), 521 - 100 - 15);
    }

    #[test]
    fn nr_pcp_high_holds_the_list_to_four_batches_while_kswapd_reclaims() {
        for kernel in [Kernel::V6_1, Kernel::V6_12] {
            let mut p = guest_pcp(kernel);
            let mut gave_back = 0;
            for _ in 0..200 {
                if p.commit_free(kernel, true, false) {
                    gave_back += 1;
                }
                assert!(p.count < 60, "{kernel:?}: {} pages held during reclaim", p.count);
            }
            assert!(gave_back > 0);
            let mut p = guest_pcp(kernel);
            for _ in 0..200 {
                p.commit_free(kernel, false, false);
            }
            assert_eq!(p.count, 200, "{kernel:?}: without reclaim the list holds up to high");
        }
    }

    #[test]
    fn nr_pcp_high_sheds_what_was_freed_below_the_high_watermark_on_6_12() {
        let mut p = guest_pcp(Kernel::V6_12);
        p.high = 3000;
        for _ in 0..100 {
            p.commit_free(Kernel::V6_12, false, true);
        }
        assert!(p.high < 3000 - 100 * 15 + 1, "high {} sheds at least a batch per free", p.high);
        assert!(p.high >= 521);
        // Above the high watermark, a run of frees raises high to hold it and a batch, the
        // run counted up to 32 batches.
        let mut p = PerCpuPages::new(Kernel::V6_12, 50_098, 100, 0);
        for _ in 0..600 {
            p.commit_free(Kernel::V6_12, false, false);
        }
        assert!(p.high > 100 && p.high <= 480 + 15, "high {}", p.high);
        let mut p = guest_pcp(Kernel::V6_12);
        for _ in 0..600 {
            p.commit_free(Kernel::V6_12, false, false);
        }
        assert_eq!(p.high, 521, "a run never needs more than the guest's high_min");
    }

    #[test]
    fn nr_pcp_free_doubles_bulk_frees_on_6_1_and_gives_back_the_run_of_frees_on_6_12() {
        let mut p = guest_pcp(Kernel::V6_1);
        let bulks: Vec<i64> = (0..4).map(|_| p.nr_pcp_free(Kernel::V6_1, 521)).collect();
        assert_eq!(bulks, [15, 30, 60, 120]);
        let mut p = guest_pcp(Kernel::V6_12);
        p.free_count = 200;
        assert_eq!(p.nr_pcp_free(Kernel::V6_12, 521), 200);
        p.free_count = 3;
        assert_eq!(p.nr_pcp_free(Kernel::V6_12, 521), 15, "at least a batch");
        p.free_count = 600;
        assert_eq!(p.nr_pcp_free(Kernel::V6_12, 521), 521 - 15, "leaving a batch");
    }

    #[test]
    fn decay_pcp_high_sheds_an_eighth_and_drains_down_to_it() {
        let mut p = guest_pcp(Kernel::V6_12);
        p.high = 4000;
        p.count = 3900;
        p.decay_high();
        assert_eq!(p.high, 4000 - 500);
        assert_eq!(p.count, 3500);
        // Never below high_min.
        p.high = 530;
        p.count = 0;
        p.decay_high();
        assert_eq!(p.high, 521);
    }

    /// A machine of 4 CPUs and one zone whose CPUs 1 and 2 each park 40 free pages on their
    /// per-CPU lists; the running actor is task 0 at `clock`.
    fn four_cpus_with_parked_pages(m: &mut crate::sim::Machine<crate::policy::classic::Classic>, clock: u64) {
        for cpu in [1, 2] {
            let pc = m.mm.percpu.as_mut().expect("machine.cpus sets up the other CPUs' lists");
            let list = &mut pc.pcp[cpu][0];
            let mut frames = Vec::new();
            m.mm.folios.take_top(0, 40, &mut frames);
            list.frames = frames.into();
            list.pcp.count = list.frames.len() as i64;
        }
        m.mm.actor = crate::mm::Actor::Task(0);
        m.mm.tasks[0].clock = clock;
    }

    /// Models mm/page_alloc.c: __drain_all_pages() with no zone (6.1, 6.12, 7.3.4): a drain
    /// that finds pcpu_drain_mutex held returns without draining. The first drain takes
    /// zone->lock once per CPU list that holds pages, for each of its pages; a second one
    /// that starts within the first's span finds the lists as they are, one that starts at
    /// its end drains them.
    #[test]
    fn drain_all_pages_does_nothing_while_another_drain_holds_the_mutex() {
        use crate::policy::classic::Classic;
        use crate::sim::scenario::Scenario;
        let text = "[machine]\nmemory = \"64M\"\nkernel = \"6.1\"\ncpus = 4\nzones = \"one\"\n\
                    [time.cpu]\nzone_move_ns = 100\nlock_handoff_ns = 0\n\
                    [[workload]]\nname = \"f\"\ncgroup = \"/\"\nkind = \"file-read\"\nfile_size = \"1M\"\nops = 0\n";
        let s = Scenario::parse(text, "t.toml", "t", &[]).unwrap_or_else(|e| panic!("{e}"));
        let mut m = crate::sim::Machine::new(&s, |mm| Classic::new(mm.memcgs.cg.len())).unwrap();
        let parked = |m: &crate::sim::Machine<Classic>| parked_frames(&m.mm);
        let acquisitions = |m: &crate::sim::Machine<Classic>| m.mm.zone(0).lock.stat.total.acquisitions;
        four_cpus_with_parked_pages(&mut m, 1_000);
        assert_eq!(parked(&m), 80);
        let free = m.mm.nr_free();
        drain_all_pages(&mut m.mm);
        assert_eq!((parked(&m), acquisitions(&m)), (0, 2), "one free_pcppages_bulk() per list");
        assert_eq!(m.mm.nr_free(), free + 80);
        let end = m.mm.tasks[0].clock;
        assert_eq!(end, 1_000 + 80 * 100, "the drainer held zone->lock for each page");
        // Another CPU's drain within that span: the trylock fails.
        four_cpus_with_parked_pages(&mut m, end - 1);
        drain_all_pages(&mut m.mm);
        assert_eq!((parked(&m), acquisitions(&m)), (80, 2), "a drain in progress: nothing drained");
        assert_eq!(m.mm.tasks[0].clock, end - 1, "and nothing held");
        // At the span's end the mutex is free again.
        m.mm.tasks[0].clock = end;
        drain_all_pages(&mut m.mm);
        assert_eq!((parked(&m), acquisitions(&m)), (0, 4));
    }
}
