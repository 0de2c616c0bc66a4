//! The virtual clock's cost model: CPU time per access, per fault and per scanned page, and
//! the latency and bandwidth of each storage device. Every figure can be overridden from the
//! scenario's `[time]` table; the defaults are round numbers for a current server.

use serde::{Deserialize, Serialize};

use crate::mm::swapfile::DeviceKind;

/// CPU costs in nanoseconds.
///
/// Where each default comes from (issue 42: a bundled measurement or a cited published
/// figure) is said on its field and tabled in docs/scenarios.md, "Where the `[time]` defaults
/// come from"; docs/journal/2026-11-29-time-defaults-provenance.md has the reading. Four of
/// the eight kernel costs have a measurement or a published figure; `scan_page_ns`,
/// `reclaim_page_ns`, `rmap_walk_ns` and `rstat_flush_memcg_ns` have none published per page
/// or per memcg (shared/reference/field-survey-2026.md, Q4) and stay pagelab's estimates,
/// each with the published anchor it can be checked against. `pagelab calibrate` times the
/// host kernel's own work for `syscall_ns`, `minor_fault_ns`, `reclaim_page_ns` and
/// `rstat_flush_memcg_ns`, and bounds `scan_page_ns` + `rmap_walk_ns`
/// (docs/journal/2026-11-30-host-kernel-costs.md); no default was changed from its figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Costs {
    /// A read()/write() system call: entry, exit and the page-cache lookup (filemap_read()'s
    /// filemap_get_pages(), 6.1 and 6.12). Default 600 ns. Source for the entry and exit: a
    /// null system call (`syscall(SYS_getpid)`) measured at about 300 ns on a Skylake desktop
    /// and about 500 ns on a Ryzen 9 3900X under Linux 5.11, against about 100 ns before the
    /// 2018 page-table-isolation and Spectre mitigations (blog.i0.pm, "what a syscall actually
    /// costs you" and "what does a syscall actually cost?": one machine each, not a survey).
    /// `pagelab calibrate` measures the whole key on the user's host (a 1-byte `pread()` of a
    /// cached page) and a null system call beside it; the development host, a loaded 2-vCPU
    /// virtual machine on Linux 6.18, measured 237 to 1,139 ns and 114 to 151 ns (docs/journal/2026-11-30-host-kernel-costs.md).
    pub syscall_ns: u64,
    /// Copying one 4 KiB page between the page cache and the user buffer
    /// (copy_folio_to_iter() from filemap_read(), 6.1 and 6.12). Default 250 ns, 4 KiB at about
    /// 16 GB/s; measured: `pagelab calibrate` times it on the user's host (a page memcpy
    /// between buffers larger than the last-level cache). On the development host, a 2-vCPU
    /// virtual machine under load, it measured 510 to 839 ns
    /// (docs/journal/2026-11-29-machine-costs.md): a nested-paging guest's cold misses, kept
    /// apart from the default until a bare-metal figure is taken.
    pub copy_page_ns: u64,
    /// A load or store through a present page-table entry. Default 5 ns: a load that hits the
    /// L2 cache, 14 cycles on Intel's Skylake server cores (Intel 64 and IA-32 Architectures
    /// Optimization Reference Manual, Skylake Server microarchitecture's cache parameters; L1 is
    /// 4 to 5 cycles), 4.7 ns at 3 GHz. A DRAM miss (about 80 to 100 ns) is not charged: the
    /// model has no CPU caches.
    pub touch_ns: u64,
    /// A page fault that does not wait for IO (zero-fill, page-cache hit, swap-cache hit):
    /// handle_mm_fault() to do_anonymous_page() or filemap_map_pages()/filemap_fault(), 6.1
    /// and 6.12. Default 700 ns. Source: an anonymous zero-fill fault timed with rdtsc on
    /// Linux 6.6, an 11th-generation Core i7 at 3.2 GHz: 575 ns at least, 1,013 ns median over
    /// 100 faults (ddumbying.vercel.app, "Page fault latency measurement"; one machine, a
    /// blog). Seed 002's will-it-scale page_fault figures (Shakeel Butt, 2021) are throughputs
    /// of unstated task counts and give no time per fault. `pagelab calibrate` measures an
    /// anonymous zero-fill fault on the user's host (the figure it sets) and a file-backed one
    /// (16 pages a fault by fault-around) beside it; the development host, a loaded 2-vCPU
    /// virtual machine on Linux 6.18, measured 1,179 to 2,266 ns and 3,050 to 6,418 ns (docs/journal/2026-11-30-host-kernel-costs.md).
    pub minor_fault_ns: u64,
    /// Reclaim's CPU time per page scanned; also MGLRU's page-table walk per young PTE it
    /// clears and promotes (walk_pte_range(): the folio's struct, the test-and-clear,
    /// folio_update_gen()), beside `touch_ns` per PTE read. Default 120 ns: pagelab's
    /// estimate. No per-page figure for isolate_lru_folios()/shrink_folio_list() is published
    /// (field-survey-2026.md, Q4); the anchors are profile shares (seed 004's kswapd profiles).
    /// `pagelab calibrate` prints an upper bound on it plus `rmap_walk_ns` (see there).
    pub scan_page_ns: u64,
    /// Reclaim's CPU time per page freed (remove from the mapping, free: __remove_mapping()
    /// and free_unref_page_list() on 6.1, free_unref_folios() on 6.12). Default 350 ns: pagelab's estimate, no
    /// published per-page figure (field-survey-2026.md, Q4). `pagelab calibrate` measures it on
    /// the user's host: `posix_fadvise(POSIX_FADV_DONTNEED)` of clean unmapped page-cache pages
    /// (mapping_evict_folio(): __remove_mapping() without a shadow, the free), per page; the
    /// development host, a loaded 2-vCPU virtual machine on Linux 6.18, measured 185 to 427 ns
    /// (docs/journal/2026-11-30-host-kernel-costs.md).
    pub reclaim_page_ns: u64,
    /// One reverse-map walk of a mapped page (folio_referenced() or try_to_unmap(): lock the
    /// anon_vma or i_mmap, search its interval tree, walk the page table down to the PTE).
    /// The multi-gen LRU's posted kswapd profile (Yu Zhao, 2022) has the classic LRU spending 40% in page_vma_mapped_walk.
    /// Default 400 ns: pagelab's estimate. No per-walk figure is published; the anchor is that
    /// profile's ratio (seed 004's client benchmark: Chrome OS MemoryPressure, 5.18-rc1 on a
    /// Snapdragon 7c with 4 GiB and zram, not its memcached run): page_vma_mapped_walk
    /// 40.53% against lzo1x_1_do_compress's 20.37% of kswapd's cycles, 19.40% against
    /// 35.99% with the multi-gen LRU, for a `--profile` run of a like scenario to be compared
    /// with (not yet done). `pagelab calibrate` bounds it: `madvise(MADV_PAGEOUT)` of clean
    /// page-cache pages mapped once, less the `reclaim_page_ns` figure, bounds `scan_page_ns` +
    /// `rmap_walk_ns` from above; the development host measured 879 to 1,148 ns, so a walk of a
    /// page mapped once is at most about 640 ns there, and 400 is consistent (docs/journal/2026-11-30-host-kernel-costs.md).
    pub rmap_walk_ns: u64,
    /// An rstat flush's CPU time per memcg it visits (with one CPU): cgroup_rstat_flush()'s
    /// per-cgroup call of mem_cgroup_css_rstat_flush() (mm/memcontrol.c, 6.1 and 6.12). Default 300 ns:
    /// pagelab's estimate. No per-memcg figure is published; seed 002 (Shakeel Butt, 2021)
    /// gives only end-to-end will-it-scale page_fault gains of 10 to 15% from moving the flush
    /// into the refault path. `pagelab calibrate` measures one flush of the process's own memcg
    /// on the user's host (a `memory.stat` read that flushes, less one that does not); the
    /// development host, a loaded 2-vCPU virtual machine on Linux 6.18, measured 9,092 to
    /// 32,995 ns, fixed costs included: not a per-memcg figure (docs/journal/2026-11-30-host-kernel-costs.md).
    pub rstat_flush_memcg_ns: u64,
    /// cache_ext's work per hook call on a cgroup with a seam policy (policy/seam, "What a
    /// hook costs"): the BPF call into the policy and the framework's valid-folio registry
    /// (a hash-table insert, lookup or delete). Default 0: the hooks are not charged, as
    /// before this key existed. `pagelab calibrate` measures the registry's part on the
    /// user's host (a hash table with a bucket per page, entries of cold folios); the BPF
    /// call itself is not measured, so that figure is a lower bound.
    pub cache_ext_hook_ns: u64,
    /// The workload's own CPU time per operation, outside the kernel (its loop, its random
    /// numbers, its checksums). 0 by default; the oracle sets its guest program's.
    pub op_ns: u64,
    /// `[time.cpu]`: the costs of the machine with several CPUs (`machine.cpus` ≥ 2).
    pub cpu: CpuCosts,
}

/// `[time.cpu]`: what the kernel's work costs on a machine of several CPUs, where it is held
/// under locks that other CPUs wait for ([`crate::locking`]). Read only with `machine.cpus`
/// ≥ 2. Each default names its source; `pagelab calibrate` measures both on the user's host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CpuCosts {
    /// Moving one folio onto or off an LRU list under `lruvec->lru_lock`: the list splice,
    /// the flag updates and the per-lruvec size update of lruvec_add_folio(), for a folio
    /// struct not in the CPU's cache. Default: `pagelab calibrate`'s figure for a cold
    /// 64-byte struct moved between two doubly-linked lists (238 to 249 ns over three runs),
    /// measured on the project's development host, a 2-CPU virtual machine
    /// (docs/journal/2026-11-29-machine-costs.md); run it on yours. Those runs also timed the
    /// linking of the lists, about a tenth of the figure, which calibrate now leaves out
    /// (docs/journal/2026-11-30-fio-gain-mechanisms.md). The kernel's units differ by what it
    /// finds in the cache: a cold folio isolated from a list's tail costs about this, a folio
    /// the CPU has just touched (an lru_add, a putback) far less; the same key is charged for
    /// all of them.
    pub lru_move_ns: u64,
    /// A contended lock's handoff: its cache line's transfer from the releasing CPU to the
    /// next waiter's. Default: 42 ns, the modified-line core-to-core intervention latency
    /// Intel's Memory Latency Checker reports within one socket of a Xeon E5-2660 v4 (John
    /// McCalpin, Intel developer forum, "Core-to-Core Communication Latency in Skylake/Kaby
    /// Lake", topic 700477); `pagelab calibrate` measures this host's.
    pub lock_handoff_ns: u64,
    /// One store into a mapping's xarray under its `i_pages` lock, per folio: a page-cache
    /// insert (`__filemap_add_folio()`) or delete (`__filemap_remove_folio()`,
    /// `__remove_mapping()`, truncation's `delete_from_page_cache_batch()`), and the same for
    /// the swap cache (`add_to_swap_cache()`, `__delete_from_swap_cache()`): the walk to the
    /// leaf node, the slot and the node's count, in nodes not in the CPU's cache. Default:
    /// `pagelab calibrate`'s figure for a store at a random index of a radix tree of 64-slot
    /// nodes over 4 Mi slots, measured on the project's development host
    /// (docs/journal/2026-11-29-machine-locks.md); run it on yours.
    pub xa_store_ns: u64,
    /// One page moved between a zone's buddy free lists and a per-CPU list under
    /// `zone->lock`, by `rmqueue_bulk()` (a refill) or `free_pcppages_bulk()` (a drain): the
    /// list unlink and link of a `struct page` not in the CPU's cache, the same operation
    /// `lru_move_ns` times. Default: `lru_move_ns`'s `pagelab calibrate` figure (a cold
    /// 64-byte struct moved between two lists); `pagelab calibrate` writes the two alike.
    pub zone_move_ns: u64,
    /// One swap slot taken or given back under the swap device's lock (`si->lock`, held
    /// by `get_swap_pages()` for a refill of the per-CPU swap slots cache and by
    /// `swapcache_free_entries()` for a drain of its returned slots): the swap map's byte
    /// and the cluster's count under the cluster's own lock (`lock_cluster()`, uncontended
    /// inside `si->lock`). Default: two uncontended atomic read-modify-writes on one cache
    /// line (the cluster lock's lock and unlock), `pagelab calibrate`'s one-thread `fetch_add`
    /// figure on the development host, doubled (docs/journal/2026-11-29-machine-locks.md).
    pub swap_slot_ns: u64,
    /// The reclaimer's wait for one batched TLB flush on the other CPUs that run the `mm`
    /// of a page it unmapped (try_to_unmap_flush(): an IPI to each, the remote flush, the
    /// acknowledgement; [`crate::mm::rmap`]). Default 0: not charged; no hardware figure
    /// is bundled. The oracle's TCG guest measured about 2 to 4 ms a flush (kswapd on its
    /// own vCPU, 73 % of its samples in smp_call_function_many_cond(); emulated IPIs, not
    /// a hardware cost: docs/journal/2026-11-30-two-cpu-direct-reclaim.md).
    pub tlb_flush_ipi_ns: u64,
}

impl Default for CpuCosts {
    fn default() -> Self {
        CpuCosts {
            lru_move_ns: LRU_MOVE_NS,
            lock_handoff_ns: 42,
            xa_store_ns: XA_STORE_NS,
            zone_move_ns: LRU_MOVE_NS,
            swap_slot_ns: SWAP_SLOT_NS,
            tlb_flush_ipi_ns: 0,
        }
    }
}

/// `[time.cpu] xa_store_ns`'s default: see [`CpuCosts::xa_store_ns`].
pub const XA_STORE_NS: u64 = 240;

/// `[time.cpu] swap_slot_ns`'s default: see [`CpuCosts::swap_slot_ns`].
pub const SWAP_SLOT_NS: u64 = 10;

/// `[time.cpu] lru_move_ns`'s default: see [`CpuCosts::lru_move_ns`].
pub const LRU_MOVE_NS: u64 = 240;

impl Default for Costs {
    fn default() -> Self {
        Costs {
            syscall_ns: 600,
            copy_page_ns: 250,
            touch_ns: 5,
            minor_fault_ns: 700,
            scan_page_ns: 120,
            reclaim_page_ns: 350,
            rmap_walk_ns: 400,
            rstat_flush_memcg_ns: 300,
            cache_ext_hook_ns: 0,
            op_ns: 0,
            cpu: CpuCosts::default(),
        }
    }
}

/// An IO device: latency per request and transfer time per page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceCost {
    pub read_latency_ns: u64,
    pub write_latency_ns: u64,
    pub page_transfer_ns: u64,
    /// CPU time per page of the actor that submits the IO (the block layer, the driver, and in
    /// a virtual machine the exits its virtio requests cost), beyond the latency it waits. 0
    /// by default; the oracle sets it for its guest's virtio disks from their measured CPU.
    #[serde(default)]
    pub cpu_page_ns: u64,
    /// CPU time per read request of the actor that submits it, beyond `cpu_page_ns`: what a
    /// request costs whatever its size (the fault or read path around it, the sleep on it and
    /// the completion's wake-up; in a virtual machine each of those costs exits). 0 by
    /// default; the oracle sets it for its guest's virtio swap disk, where each swap-in is a
    /// request of its own.
    #[serde(default)]
    pub cpu_read_request_ns: u64,
    /// Requests in flight at most (blk-mq's tags: [`crate::block`]); a request submitted with
    /// all taken waits for the first to complete. 0, the default: unlimited, every request's
    /// latency overlapping the others'.
    #[serde(default)]
    pub queue_depth: u32,
}

impl DeviceCost {
    pub fn default_for(kind: DeviceKind) -> DeviceCost {
        let (r, w, t) = match kind {
            DeviceKind::None => (0, 0, 0),
            DeviceKind::Disk => (4_000_000, 4_000_000, 25_000),
            DeviceKind::Ssd => (80_000, 30_000, 2_000),
            // zram compresses and decompresses on the CPU of the task that swaps.
            DeviceKind::Zram => (3_000, 8_000, 0),
            DeviceKind::Ramdisk => (1_000, 1_000, 400),
        };
        DeviceCost { read_latency_ns: r, write_latency_ns: w, page_transfer_ns: t, cpu_page_ns: 0, cpu_read_request_ns: 0, queue_depth: 0 }
    }
}

/// A device as a queue: requests wait for the previous transfer to finish.
#[derive(Clone, Debug)]
pub struct Device {
    pub kind: DeviceKind,
    pub cost: DeviceCost,
    busy_until: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    /// Read requests submitted (each costs its submitter `cpu_read_request_ns`).
    pub read_requests: u64,
    /// The requests in flight, with the queue's depth (`queue_depth`) and counts.
    pub tags: crate::block::Tags,
}

impl Device {
    pub fn new(kind: DeviceKind, cost: DeviceCost) -> Device {
        let tags = crate::block::Tags::new(cost.queue_depth);
        Device { kind, cost, busy_until: 0, pages_read: 0, pages_written: 0, read_requests: 0, tags }
    }

    /// A synchronous device's transfer of `pages` done on the submitter's CPU, on a machine
    /// of several CPUs: brd_submit_bio() copies the pages and zram compresses or decompresses
    /// them before submit_bio() returns (drivers/block/brd.c, zram_drv.c, 6.1 and 6.12), each
    /// CPU on its own, with no queue between them. Returns that CPU time (the request's
    /// latency and transfer); counted as [`Device::submit`] counts.
    pub fn on_cpu(&mut self, pages: u64, write: bool) -> u64 {
        self.count(pages, write);
        self.latency(write) + pages * self.cost.page_transfer_ns
    }

    fn latency(&self, write: bool) -> u64 {
        if write {
            self.cost.write_latency_ns
        } else {
            self.cost.read_latency_ns
        }
    }

    /// Counts a request of `pages`, as the device's figures keep them.
    fn count(&mut self, pages: u64, write: bool) {
        if write {
            self.pages_written += pages;
        } else {
            self.pages_read += pages;
            self.read_requests += 1;
        }
    }

    /// Submits a request of `pages` at `now` and returns when it completes: it waits for a
    /// tag if the queue is full ([`crate::block::Tags::admit`]), its latency overlaps the
    /// other requests', and its transfer follows theirs.
    pub fn submit(&mut self, now: u64, pages: u64, write: bool) -> u64 {
        let admitted = self.tags.admit(now);
        let start = (admitted + self.latency(write)).max(self.busy_until);
        let done = start + pages * self.cost.page_transfer_ns;
        self.busy_until = done;
        self.tags.complete_at(admitted, done);
        self.count(pages, write);
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_queue_behind_each_other() {
        let mut d = Device::new(
            DeviceKind::Ssd,
            DeviceCost { read_latency_ns: 10, write_latency_ns: 20, page_transfer_ns: 5, cpu_page_ns: 0, cpu_read_request_ns: 0, queue_depth: 0 },
        );
        assert_eq!(d.submit(0, 2, false), 20);
        // The second request's latency overlaps; its transfer waits for the first.
        assert_eq!(d.submit(0, 1, false), 25);
        assert_eq!(d.submit(100, 1, true), 125);
        assert_eq!((d.pages_read, d.pages_written, d.read_requests), (3, 1, 2));
    }
}

/// kernel/sched/fair.c: sched_slice() of one of two runnable tasks of equal weight on one
/// CPU under CFS (5.7, 6.1): sysctl_sched_latency (6 ms; scaled by 1 + log2 of the CPUs,
/// i.e. 1) split between them.
pub const CFS_SLICE_NS: u64 = 3_000_000;

/// One CPU shared by kswapd and the tasks (`machine.cpus = 1`; the oracle's guests run with
/// one). Not a kernel rule: pagelab's approximation of the scheduler. A task's clock advances
/// through its own CPU time and its waits (IO, sleeps); the waits are the CPU's idle time,
/// which kswapd's steps use first. What a step needs beyond that idle time it shares with
/// the tasks, half each (CFS and EEVDF give two runnable tasks of equal weight equal time):
/// the step ends twice that much later and each task it overlaps loses that much CPU time.
/// With several tasks, any task's wait counts as idle time; the tasks' competition with each
/// other is not modeled. Without it kswapd runs beside the tasks, as if on a CPU of its own.
#[derive(Clone, Debug, Default)]
pub struct OneCpu {
    /// The task's waits not yet used by kswapd, in time order: (from, until).
    idle: std::collections::VecDeque<(u64, u64)>,
    /// `machine.eevdf_turns`: turns on the tick grid instead of half-and-half sharing.
    eevdf: Option<Eevdf>,
}

/// `machine.cpus = 1` on 6.12 (`machine.eevdf_turns`, on by default there;
/// docs/experiments/eevdf-one-cpu.md): kswapd (K) and the task (T) on one CPU as 6.12.95's
/// EEVDF treats two entities of equal weight, reduced to what decides kswapd's wake-up
/// preemption (kernel/sched/fair.c:
/// update_curr(), pick_eevdf(), dequeue_entity(), place_entity(),
/// check_preempt_wakeup_fair()).
/// - `d` is T's virtual runtime less K's while both are queued; K's lag is d / 2.
/// - Turns end at a tick once the runner has run a slice (update_curr() at the tick), and
///   the eligible entity runs next: K while d > 0, T while d < 0.
/// - T's waits: K runs alone. A T that slept ineligible (d > 0) stays queued, delayed, until
///   K's running makes it eligible, and its lag is then cut to 0 (DELAY_DEQUEUE, DELAY_ZERO);
///   an eligible T keeps its lag (PLACE_LAG).
/// - K's sleep: eligible (d > 0) it keeps its lag; otherwise it leaves with none.
/// - K's wake-up by the task: with a lag kept, K preempts and runs until the first tick a
///   slice on; without, T runs on to the next tick. A T picked less than a slice ago (back
///   from a wait, or from K's turn) keeps the CPU either way: its slice is protected
///   (RUN_TO_PARITY), which in a workload that waits for IO between short bursts of CPU is
///   nearly always.
#[derive(Clone, Debug)]
pub struct Eevdf {
    /// The tick, and the base slice, in the model's clock (scaled as the rstat flush is).
    tick: u64,
    slice: u64,
    /// The turns in progress while kswapd is awake.
    stretch: Option<Stretch>,
    /// kswapd's lag from its last sleep (0: none kept), in ns of virtual time.
    kept_lag: u64,
    /// When the task last got the CPU back (from a wait, or from kswapd's last turn): its
    /// slice is protected until it has run a slice since (RUN_TO_PARITY).
    task_picked_at: u64,
    /// PREEMPT_LAZY ([`crate::kernel::Kernel::fair_preemption_is_lazy`]): a reschedule of a
    /// task in the kernel takes effect at the next tick.
    lazy: bool,
}

#[derive(Clone, Copy, Debug)]
struct Stretch {
    /// vT - vK.
    d: i64,
    /// Whether kswapd holds the CPU, and since when its turn (or the task's) runs.
    kswapd_runs: bool,
    turn_began: u64,
    /// How far the turns have been played.
    at: u64,
    /// Whether kswapd's last CPU came from the task's waits (it ran alone).
    alone: bool,
    /// PREEMPT_LAZY: when a wake-up preemption flagged at kswapd's wake-up takes effect (the
    /// next tick).
    resched: Option<u64>,
}

/// EEVDF's base slice, sysctl_sched_base_slice (0.75 ms with one CPU).
pub const EEVDF_SLICE_NS: u64 = 750_000;
/// The guest's tick (HZ = 250).
pub const TICK_NS: u64 = 4_000_000;

impl Eevdf {
    /// `scale`: the model's clock per ns of the guest's (the oracle's rstat flush period over
    /// FLUSH_TIME), as a fraction `num / den`.
    pub fn new(num: u64, den: u64) -> Eevdf {
        Eevdf { tick: (TICK_NS * num / den).max(1), slice: (EEVDF_SLICE_NS * num / den).max(1), stretch: None, kept_lag: 0, task_picked_at: 0, lazy: false }
    }

    /// The same under PREEMPT_LAZY when `lazy` ([`Eevdf::lazy`]).
    pub fn with_lazy(self, lazy: bool) -> Eevdf {
        Eevdf { lazy, ..self }
    }

    /// The first tick at or after `at`.
    fn tick_at_or_after(&self, at: u64) -> u64 {
        at.div_ceil(self.tick) * self.tick
    }

    /// Inside the task's operation, at its clock `now`, kswapd awake and waiting for the CPU:
    /// whether kswapd's turn has begun by `now`. It begins at the first tick at which the task
    /// has run a slice since it was picked (update_curr() → update_deadline(), RUN_TO_PARITY)
    /// with kswapd eligible (`d > 0`: the task has run more than kswapd since both were
    /// queued); the reschedule acts at once on a voluntary-preemption kernel (6.12: the
    /// allocation's might_resched()), at the next tick under PREEMPT_LAZY (7.3: sched_tick()
    /// upgrades the lazy flag). kswapd then takes the CPU from `now` and runs to the first tick
    /// at which it has run a slice and is owed nothing more (`d ≤ 0`; one tick later under
    /// PREEMPT_LAZY). Returns that run (0: the task keeps the CPU).
    pub fn kswapd_turn_in_op(&mut self, now: u64) -> u64 {
        let (tick, slice, lazy, picked) = (self.tick, self.slice, self.lazy, self.task_picked_at);
        let st = *self.stretch(now);
        if st.at >= now {
            return 0;
        }
        // kswapd's last turn ended where its steps did; the task has run since.
        let began = if st.kswapd_runs { st.at } else { st.turn_began }.max(picked);
        let eligible_from = (st.at as i64 - st.d + 1).max(0) as u64;
        let noticed = self.tick_at_or_after((st.at + 1).max(began + slice).max(eligible_from));
        let acts = match st.resched {
            Some(r) => r.min(noticed),
            None if lazy => noticed + tick,
            None => noticed,
        };
        if acts > now {
            return 0;
        }
        let d = st.d + (now - st.at) as i64;
        let end = self.tick_at_or_after(now + slice.max(d as u64)) + if lazy { tick } else { 0 };
        *self.stretch(now) = Stretch { d, kswapd_runs: true, turn_began: now, at: now, alone: false, resched: None };
        end - now
    }

    fn next_tick(&self, at: u64) -> u64 {
        (at / self.tick + 1) * self.tick
    }

    /// kswapd was woken by the task at `now`: the lag it kept, if any, makes it preempt. Returns
    /// how long kswapd runs before the task gets the CPU back (0: no preemption).
    pub fn kswapd_woken(&mut self, now: u64) -> u64 {
        let lag = std::mem::take(&mut self.kept_lag);
        // RUN_TO_PARITY: a task picked less than a slice ago keeps the CPU whatever the lag
        // (pick_eevdf() returns it while its deadline is the one it was picked with).
        let protected = now < self.task_picked_at + self.slice;
        if lag == 0 {
            self.stretch = Some(Stretch { d: 0, kswapd_runs: false, turn_began: 0, at: now, alone: false, resched: None });
            return 0;
        }
        if protected {
            // Placed with its lag, kswapd takes the CPU at the first tick after the task's
            // protected slice.
            self.stretch = Some(Stretch { d: 2 * lag as i64, kswapd_runs: false, turn_began: self.task_picked_at, at: now, alone: false, resched: None });
            return 0;
        }
        if self.lazy {
            // PREEMPT_LAZY: check_preempt_wakeup_fair() sets the lazy flag, which the next
            // tick makes a preemption ([`Eevdf::kswapd_turn_in_op`] takes it).
            let resched = Some(self.next_tick(now));
            self.stretch = Some(Stretch { d: 2 * lag as i64, kswapd_runs: false, turn_began: self.task_picked_at, at: now, alone: false, resched });
            return 0;
        }
        let run = self.next_tick(now + self.slice) - now;
        self.stretch = Some(Stretch { d: 2 * lag as i64, kswapd_runs: true, turn_began: now, at: now, alone: false, resched: None });
        run
    }

    /// After a preemption: kswapd ran `ran` of CPU from the stretch's start.
    pub fn preempted_for(&mut self, ran: u64) {
        if let Some(st) = self.stretch.as_mut() {
            st.resched = None;
            st.d -= ran as i64;
            st.at += ran;
            if st.d <= 0 {
                st.kswapd_runs = false;
                st.turn_began = st.at;
            }
        }
    }

    /// kswapd went to sleep: it keeps its lag only if it was eligible, with the task queued.
    pub fn kswapd_sleeps(&mut self) {
        if let Some(st) = self.stretch.take() {
            self.kept_lag = if !st.alone && st.d > 0 { st.d as u64 / 2 } else { 0 };
            if st.kswapd_runs && !st.alone {
                // The task takes the CPU back from kswapd's turn.
                self.task_picked_at = self.task_picked_at.max(st.at);
            }
        }
    }

    fn stretch(&mut self, at: u64) -> &mut Stretch {
        self.stretch.get_or_insert(Stretch { d: 0, kswapd_runs: false, turn_began: 0, at, alone: false, resched: None })
    }

    /// kswapd ran `used` alone, in the task's wait, up to `at`.
    fn ran_alone(&mut self, used: u64, at: u64) {
        let st = self.stretch(at);
        if st.d > 0 {
            st.d = (st.d - used as i64).max(0);
        }
        st.kswapd_runs = true;
        st.turn_began = at - used;
        st.at = at;
        st.alone = true;
    }

    /// kswapd needs `need` of CPU from `from`, the task runnable throughout: the turns on the
    /// tick grid. Returns when kswapd's need is met.
    fn share(&mut self, from: u64, mut need: u64) -> u64 {
        let (tick_of, slice) = (self.tick, self.slice);
        let next_tick = |at: u64| (at / tick_of + 1) * tick_of;
        let st = self.stretch(from);
        let resched = st.resched.take();
        if st.alone {
            // The task is back from its wait: a task with lag to spare preempts.
            st.alone = false;
            if st.d < 0 {
                st.kswapd_runs = false;
                st.turn_began = from;
            }
        }
        if from > st.at {
            // The task ran on before kswapd's step was taken up.
            if !st.kswapd_runs {
                st.d += (from - st.at) as i64;
            }
            st.at = from;
        }
        if resched.is_some() && !st.kswapd_runs {
            // PREEMPT_LAZY: the task's return to user space acts on the flag kswapd's wake-up
            // set (exit_to_user_mode()), before any tick.
            st.kswapd_runs = true;
            st.turn_began = st.at;
        }
        let mut at = st.at;
        while need > 0 {
            let tick = next_tick(at);
            if st.kswapd_runs {
                let run = need.min(tick - at);
                at += run;
                need -= run;
                st.d -= run as i64;
            } else {
                st.d += (tick - at) as i64;
                at = tick;
            }
            if at == tick && at - st.turn_began >= slice {
                let kswapd_next = st.d > 0 || (st.d == 0 && !st.kswapd_runs);
                if kswapd_next != st.kswapd_runs {
                    st.kswapd_runs = kswapd_next;
                    st.turn_began = at;
                }
            }
        }
        st.at = at;
        at
    }
}

impl OneCpu {
    /// One CPU whose turns follow [`Eevdf`] when `eevdf` is given.
    pub fn new(eevdf: Option<Eevdf>) -> OneCpu {
        OneCpu { idle: Default::default(), eevdf }
    }

    /// The EEVDF experiment's state, if it is on.
    pub fn eevdf(&mut self) -> Option<&mut Eevdf> {
        self.eevdf.as_mut()
    }

    /// The task waits from `from` to `until`.
    pub fn task_waits(&mut self, from: u64, until: u64) {
        if until > from {
            self.idle.push_back((from, until));
            if let Some(e) = self.eevdf.as_mut() {
                e.task_picked_at = until;
            }
        }
    }

    /// A kswapd step that started at `start` and used `cpu_ns` of CPU, with the task's clock
    /// at `task_now`: when the step ends on the shared CPU, and how much CPU time the task
    /// lost to it.
    pub fn kswapd_step(&mut self, start: u64, cpu_ns: u64, task_now: u64) -> (u64, u64) {
        let mut at = start;
        let mut need = cpu_ns;
        while need > 0 {
            let Some(&(from, until)) = self.idle.front() else { break };
            if until <= at {
                self.idle.pop_front();
                continue;
            }
            at = at.max(from);
            let used = need.min(until - at);
            at += used;
            need -= used;
            if let Some(e) = self.eevdf.as_mut() {
                e.ran_alone(used, at);
            }
            if at >= until {
                self.idle.pop_front();
            }
        }
        if need == 0 {
            return (at, 0);
        }
        // Both runnable from the task's present on.
        let from = at.max(task_now);
        match self.eevdf.as_mut() {
            Some(e) => (e.share(from, need), need),
            None => (from + 2 * need, need),
        }
    }
}

#[cfg(test)]
mod one_cpu_tests {
    use super::{Eevdf, OneCpu};

    /// One CPU with EEVDF's turns at the guest's own clock (tick 4 ms, slice 0.75 ms).
    fn eevdf_cpu() -> OneCpu {
        OneCpu::new(Some(Eevdf::new(1, 1)))
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn eevdf_a_kswapd_woken_without_lag_waits_for_the_tick_then_alternates_whole_ticks() {
        let mut cpu = eevdf_cpu();
        assert_eq!(cpu.eevdf().unwrap().kswapd_woken(MS), 0, "no lag kept: no preemption");
        // 6 ms of kswapd from 1 ms: the task runs to the 4 ms tick, kswapd 4-8 ms, the task
        // 8-12 ms, kswapd 12-14 ms.
        assert_eq!(cpu.kswapd_step(MS, 6 * MS, MS), (14 * MS, 6 * MS));
    }

    #[test]
    fn eevdf_kswapd_keeps_its_lag_only_if_it_sleeps_eligible_and_then_preempts() {
        let mut cpu = eevdf_cpu();
        cpu.eevdf().unwrap().kswapd_woken(MS);
        // kswapd's turn starts at 4 ms, when the task has run 3 ms ahead: it finishes 1 ms in,
        // eligible, with lag (3 - 1) / 2 ms.
        assert_eq!(cpu.kswapd_step(MS, MS, MS), (5 * MS, MS));
        let e = cpu.eevdf().unwrap();
        e.kswapd_sleeps();
        assert_eq!(e.kept_lag, MS);
        // Woken at 9 ms, it preempts until the first tick 0.75 ms on: 12 ms.
        assert_eq!(e.kswapd_woken(9 * MS), 3 * MS);
        // Finishing 3.5 ms into its turn leaves it ineligible: no lag kept.
        let mut cpu = eevdf_cpu();
        cpu.eevdf().unwrap().kswapd_woken(MS);
        cpu.kswapd_step(MS, 7 * MS / 2, MS);
        let e = cpu.eevdf().unwrap();
        e.kswapd_sleeps();
        assert_eq!((e.kept_lag, e.kswapd_woken(20 * MS)), (0, 0));
    }

    #[test]
    fn eevdf_a_task_back_from_its_wait_less_than_a_slice_ago_keeps_the_cpu_run_to_parity() {
        let mut cpu = eevdf_cpu();
        cpu.eevdf().unwrap().kswapd_woken(MS);
        cpu.kswapd_step(MS, MS, MS);
        cpu.eevdf().unwrap().kswapd_sleeps();
        // kswapd kept lag, but the task came back from a wait at 9 ms: at 9.5 ms its slice
        // is protected, so kswapd waits, eligible, for the 12 ms tick, and 1 ms of work
        // ends at 13 ms.
        cpu.task_waits(8 * MS, 9 * MS);
        assert_eq!(cpu.eevdf().unwrap().kswapd_woken(9 * MS + MS / 2), 0);
        assert_eq!(cpu.kswapd_step(9 * MS + MS / 2, MS, 9 * MS + MS / 2), (13 * MS, MS));
    }

    #[test]
    fn eevdf_kswapd_that_finishes_in_the_tasks_wait_keeps_no_lag() {
        let mut cpu = eevdf_cpu();
        cpu.eevdf().unwrap().kswapd_woken(MS);
        cpu.task_waits(2 * MS, 10 * MS);
        assert_eq!(cpu.kswapd_step(2 * MS, MS, 10 * MS), (3 * MS, 0));
        let e = cpu.eevdf().unwrap();
        e.kswapd_sleeps();
        assert_eq!(e.kswapd_woken(20 * MS), 0);
    }

    #[test]
    fn eevdf_update_curr_ends_the_tasks_slice_inside_its_operation_and_kswapd_takes_its_turn() {
        let mut cpu = eevdf_cpu();
        let e = cpu.eevdf().unwrap();
        // Woken at 1 ms without lag: the task keeps the CPU; still at 3.9 ms (no tick yet).
        assert_eq!(e.kswapd_woken(MS), 0);
        assert_eq!(e.kswapd_turn_in_op(3 * MS + 9 * MS / 10), 0);
        // At the 4 ms tick the task has run a slice and kswapd is eligible: met at 4.5 ms,
        // kswapd runs to the first tick at which it has run a slice and is owed nothing
        // (it is owed 3.5 ms): 8 ms.
        assert_eq!(e.kswapd_turn_in_op(4 * MS + MS / 2), 7 * MS / 2);
    }

    #[test]
    fn eevdf_under_preempt_lazy_the_turn_waits_for_the_next_tick_and_a_wake_up_for_the_tick() {
        let mut cpu = OneCpu::new(Some(Eevdf::new(1, 1).with_lazy(true)));
        let e = cpu.eevdf().unwrap();
        assert_eq!(e.kswapd_woken(MS), 0);
        // The 4 ms tick sets the lazy flag; the 8 ms tick acts on it. kswapd, owed 7.5 ms, runs
        // to the 16 ms tick, and on to the next: 20 ms.
        assert_eq!(e.kswapd_turn_in_op(4 * MS + MS / 2), 0);
        assert_eq!(e.kswapd_turn_in_op(8 * MS + MS / 2), 20 * MS - 8 * MS - MS / 2);
        // With lag kept, the wake-up does not preempt at once: the next tick does.
        e.kept_lag = MS;
        e.stretch = None;
        assert_eq!(e.kswapd_woken(17 * MS), 0);
        assert!(e.kswapd_turn_in_op(19 * MS) == 0 && e.kswapd_turn_in_op(20 * MS + 1) > 0);
    }

    #[test]
    fn kswapd_on_one_cpu_runs_in_the_tasks_waits_first() {
        let mut cpu = OneCpu::default();
        cpu.task_waits(100, 150);
        cpu.task_waits(200, 260);
        // A 70 ns step from 90: 50 ns of the first wait, 20 of the second.
        assert_eq!(cpu.kswapd_step(90, 70, 300), (220, 0));
        // The next step uses the rest of the second wait, 40 ns.
        assert_eq!(cpu.kswapd_step(220, 40, 300), (260, 0));
    }

    #[test]
    fn kswapd_on_one_cpu_shares_the_cpu_once_the_waits_are_used() {
        let mut cpu = OneCpu::default();
        cpu.task_waits(100, 130);
        // 30 ns in the wait, then 50 ns more from the task's present (400) at half speed.
        assert_eq!(cpu.kswapd_step(100, 80, 400), (500, 50));
        // No waits left: from 600 on, all of it shared.
        assert_eq!(cpu.kswapd_step(600, 10, 400), (620, 10));
    }
}
