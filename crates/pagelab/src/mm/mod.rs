//! The kernel's memory management, one module per kernel file (mm/vmscan.c, mm/workingset.c,
//! mm/memcontrol.c, mm/swap.c, ...): the rules call each other as the kernel's do, and this
//! unit is fenced off from the rest of pagelab. It knows policies only through its own
//! hooks ([`hooks::Policy`], [`hooks::Caps`], [`hooks::Inspect`]) and the machine's configuration only through [`Config`]; it never
//! reads a scenario. [`time`] is pagelab's own: the virtual clock's cost model.
//!
//! This file itself holds the state every part of the model shares (the kernel spreads it over
//! `struct pglist_data`, `struct zone`, `struct mem_cgroup` and friends): page frames,
//! the address space, the zones and their watermarks, cgroups, swap, devices, the per-CPU
//! batches, tasks, the clock and the global counters. Policies keep their own list state and
//! receive `&mut Mm` for the rest.

pub mod compaction;
pub mod filemap;
pub mod folio;
pub mod hooks;
pub mod invariants;
pub mod mapping;
pub mod memcontrol;
pub mod memory;
pub mod miniature;
pub mod mmzone;
pub mod oom_kill;
pub mod page_alloc;
pub mod page_writeback;
pub mod pageblock;
pub mod profile;
pub mod readahead;
pub mod rmap;
pub mod swap;
pub mod swap_state;
pub mod swapfile;
pub mod time;
pub mod vmscan;
pub mod vmstat;
pub mod workingset;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::kernel::Kernel;
use crate::mm::folio::{pg, Folios, Pfn};
use crate::mm::mapping::{AddressSpace, Vpn};
use crate::mm::memcontrol::{MemcgId, Memcgs, StatItem};
use crate::mm::profile::Func;
use crate::mm::swapfile::Swap;
use crate::mm::time::{Costs, Device};
use crate::mm::vmstat::{Ev, Events, Lru};
use crate::mm::workingset::ShadowNodes;

/// The machine's tunables the model reads (sysctls, a mount option, the block device's
/// readahead): a part of the scenario's machine (`sim::scenario::MachineSpec::tunables`),
/// which [`Config`] holds as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunables {
    /// vm.swappiness (0..200).
    pub swappiness: u32,
    /// read_ahead_kb / 4: the readahead window (`ra_pages`).
    pub ra_pages: u64,
    /// vm.page-cluster: swap readahead window is 1 << page_cluster.
    pub page_cluster: u32,
    /// cgroup2 mount option memory_recursiveprot.
    pub memory_recursiveprot: bool,
    /// fault_around_bytes / 4096.
    pub fault_around_pages: u64,
    /// vm.dirty_ratio and vm.dirty_background_ratio (percent of dirtyable memory).
    pub dirty_ratio: u64,
    pub dirty_background_ratio: u64,
    /// vm.dirty_expire_centisecs and vm.dirty_writeback_centisecs, in ns.
    pub dirty_expire_ns: u64,
    pub dirty_writeback_ns: u64,
}

/// What the model reads of the machine it runs on: the scenario's kernel, tunables, costs and
/// refault model, each as the scenario gives it.
#[derive(Clone, Debug)]
pub struct Config {
    pub kernel: Kernel,
    pub tunables: Tunables,
    pub costs: Costs,
    /// `[workingset]`: the refault-distance model and its open choices.
    pub refault: crate::mm::workingset::RefaultSpec,
    /// `[mglru] fg`: MGLRU-FG (Kairui Song's RFC of May 2026) with its `fg_reset`, or off.
    pub mglru_fg: Option<crate::mm::swap::FgReset>,
    /// filemap_read()'s shortcuts for a one-page read (of a cached page, or of an uncached
    /// one without readahead); the tests turn them off to check that they change nothing.
    pub read_shortcuts: bool,
    /// `machine.seam_fallback`: a seam cgroup keeps the classic LRU under its policy and
    /// reclaim falls back to it, as cache_ext's kernel does.
    pub seam_fallback: bool,
}

/// Integer square root (lib/math/int_sqrt.c semantics: floor).
pub fn int_sqrt(x: u64) -> u64 {
    if x < 2 {
        return x;
    }
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

/// Who is running: a task of a workload, or a node's kswapd (6.1/6.12 kswapd(): one kthread
/// per pgdat, `pgdat->kswapd`). The kernel-thread work that is no node's (the flusher, a
/// cgroup write) runs as node 0's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor {
    Task(usize),
    /// The kswapd of node `nid`.
    Kswapd(usize),
}

/// The memory side of a task (`struct task_struct` + `struct mm_struct`).
#[derive(Clone, Debug)]
pub struct TaskMm {
    pub name: String,
    /// The task whose process this one is a thread of: itself, or the task that owns the
    /// anonymous region it shares (a shared application cache). The threads of a process
    /// share its `mm`: its page-table walks, its OOM kill, its exit after the last thread.
    pub process: usize,
    pub memcg: MemcgId,
    /// The task's virtual clock.
    pub clock: u64,
    /// MM_ANONPAGES and MM_FILEPAGES: resident pages mapped by the task.
    pub rss_anon: u64,
    pub rss_file: u64,
    /// MM_SWAPENTS.
    pub swapents: u64,
    /// current->memcg_nr_pages_over_high.
    pub nr_pages_over_high: u64,
    /// current->in_lru_fault: in a page fault on a VMA with recency (MGLRU placement).
    pub in_lru_fault: bool,
    pub killed: bool,
    /// Modeled time spent in reclaim (direct and memcg) and waiting for IO.
    pub reclaim_ns: u64,
    /// Inside do_try_to_free_pages() since this time (its time is added to `reclaim_ns` when
    /// it returns): a reclaim suspended at cond_resched() counts its part so far in the CPU
    /// burst that ends there ([`Mm::usage`]).
    pub reclaim_since: Option<u64>,
    pub io_wait_ns: u64,
    /// On one CPU: time runnable while kswapd had the CPU.
    pub cpu_wait_ns: u64,
    /// CPU time the task charged (its operations, faults and reclaim, lock spins included).
    pub cpu_ns: u64,
    /// The anonymous regions the task owns (object indices).
    pub anon_objects: Vec<usize>,
    /// The VMA's swap readahead state (`vma->swap_readahead_info`).
    pub swap_ra: crate::mm::swap_state::SwapRaState,
    /// Files the task has mapped (object indices), for page-table walks.
    pub mapped_files: Vec<usize>,
    /// The task ran since the last page-table walk (`mm->lru_gen.bitmap`).
    pub ran: bool,
    /// Reads in flight at most (the workload's `iodepth`; 1: each read waits for its IO).
    pub iodepth: u32,
    /// The completion times of the task's reads in flight (at most `iodepth`).
    pub in_flight: BinaryHeap<Reverse<u64>>,
}

/// A pending IO completion: writeback of a page ends at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct WritebackDone {
    pub at: u64,
    pub pfn: Pfn,
    /// The vpn written, to recognise a frame reused since.
    pub vpn: Vpn,
}

/// A kill by the OOM killer.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct OomKill {
    pub time_s: f64,
    pub task: String,
    /// The cgroup whose limit was hit, or "/" for a system-wide OOM.
    pub constraint: String,
    pub freed_pages: u64,
}

/// Frames [`Mm::prefetch_frames`] fetches ahead of an operation over several pages: about
/// the loads a core keeps in flight (its line-fill buffers), and twice a WiredTiger leaf's 8
/// pages; a longer run's later frames would be evicted before they are used.
pub const PREFETCH_FRAMES: u64 = 16;

/// The shared state.
pub struct Mm {
    pub cfg: Config,
    pub folios: Folios,
    pub space: AddressSpace,
    /// The NUMA nodes (`NODE_DATA(nid)`), each with its zones, reclaim state and kswapd; a
    /// machine without `[[machine.node]]` has one, node 0.
    pub nodes: Vec<crate::mm::mmzone::Node>,
    /// Each CPU's node (`cpu_to_node()`) on a machine of several nodes with the CPU model;
    /// empty otherwise.
    pub cpu_node: Vec<u8>,
    pub memcgs: Memcgs,
    pub swap: Swap,
    pub swap_dev: Device,
    pub file_dev: Device,
    /// /proc/vmstat event counters.
    pub events: Events,
    pub actor: Actor,
    pub tasks: Vec<TaskMm>,
    /// The per-CPU lru_add and activate folio batches (mm/swap.c cpu_fbatches), one CPU.
    pub lru_add_batch: Vec<Pfn>,
    pub activate_batch: Vec<Pfn>,
    /// Several CPUs: the other CPUs' batches.
    pub percpu: Option<Box<crate::mm::swap::PerCpuBatches>>,
    pub file_nodes: ShadowNodes,
    pub swap_nodes: ShadowNodes,
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    pub nr_mapped: u64,
    pub nr_file_pages: u64,
    pub nr_anon_pages: u64,
    pub nr_swapcached: u64,
    pub writeback: BinaryHeap<Reverse<WritebackDone>>,
    pub oom_kills: Vec<OomKill>,
    /// Pages the kernel itself holds (never reclaimable in the model).
    pub kernel_pages: u64,
    /// swapin_nr_pages()'s global state for cluster readahead.
    pub swap_ra_global: crate::mm::swap_state::SwapRaState,
    /// A reusable buffer for the pages one readahead inserts.
    pub ra_scratch: Vec<Pfn>,
    /// Dirty page-cache pages in the order they were dirtied, queued on their cgroup's
    /// writeback (for the flusher).
    pub dirty_fifo: crate::mm::page_writeback::DirtyQueues,
    /// Accessed bits of the page-middle directories (one per 512 pages): set by any access
    /// through page tables, cleared by MGLRU's page-table walks (non-leaf PMD young).
    pub pmd_young: Vec<u64>,
    /// The flusher was asked to write everything (reclaim) or to background writeback.
    pub wb_pending_all: bool,
    pub wb_pending_background: bool,
    /// Cgroups whose own writeback was started for their dirty limits (cgroup writeback's
    /// wb_start_background_writeback() on a memcg's wb).
    pub wb_pending_memcgs: Vec<MemcgId>,
    /// A miniature simulation's corrections (`machine.miniature`); `None` for a full machine.
    pub miniature: Option<crate::mm::miniature::Miniature>,
    /// `machine.cpus = 1`: kswapd shares the task's CPU; `None`: kswapd has its own.
    pub one_cpu: Option<crate::mm::time::OneCpu>,
    /// CPU time by the kernel function that spent it (`pagelab run --profile`).
    pub profile: crate::mm::profile::Profile,
    /// `machine.cpus` ≥ 2: the CPUs the tasks and kswapd share ([`crate::sched`]), and with
    /// them contended locks; `None`: every actor has a CPU of its own and no lock waits.
    pub sched: Option<Box<crate::sched::Sched>>,
    /// `pcpu_drain_mutex` of mm/page_alloc.c: the span of modeled time of the last
    /// [`crate::mm::page_alloc::drain_all_pages`] on a machine of several CPUs.
    pub pcpu_drain: crate::mm::page_alloc::DrainMutex,
    /// Memory pressure stall information of the system and every cgroup
    /// ([`crate::sched::psi`]): the tasks are actors `0..n`, node `nid`'s kswapd is actor `n + nid`.
    pub psi: crate::sched::psi::Psi,
    /// `machine.nonmovable`: the pageblocks that are not movable and the watermark boosts;
    /// `None`: every pageblock is movable.
    pub pageblocks: Option<Box<crate::mm::pageblock::Pageblocks>>,
    /// A run of several CPUs whose policy's reclaim can be suspended: the machine's way in at
    /// the kernel's cond_resched() points of a task's reclaim ([`Mm::cond_resched`]);
    /// `None`: a reclaim runs whole.
    pub resched: Option<Resched>,
    /// current->tlb_ubc: the reclaimer's deferred TLB flush ([`crate::mm::rmap`]).
    pub tlb_ubc: crate::mm::rmap::TlbUbc,
}

/// Where [`Mm::cond_resched`] calls the machine: `yield_now(ctx, mm, policy)` suspends the
/// running flow of the event loop, and the machine lets the actors whose clocks are earlier
/// than the task's run before the task goes on (sim/machine's `resched.rs`). `ctx` is the
/// address of the running flow's yielder, kept as a number so that `Mm` stays `Send`.
#[derive(Clone, Copy, Debug)]
pub struct Resched {
    pub ctx: usize,
    pub yield_now: fn(usize, &mut Mm, *mut ()),
}

impl Mm {
    /// Models include/linux/sched.h: cond_resched() (6.1/6.12) where vmscan.c calls it in a
    /// task's reclaim: between shrink_lruvec()'s rounds of SWAP_CLUSTER_MAX a list, between
    /// MGLRU's evict_folios() batches (lru_gen_shrink_lruvec() of 6.1, try_to_shrink_lruvec()
    /// of 6.12) and before each memcg of shrink_node_memcgs(). With several CPUs the kernel's
    /// other CPUs run meanwhile; the machine, which runs one actor at a time, suspends the
    /// task here when another actor's clock is earlier and resumes it when its own is the
    /// earliest again, so that concurrent reclaimers take their batches from the same lists
    /// in time order (issue 42). kswapd's steps are events of their own and do not yield.
    /// The policy `p` is handed over so that nothing of it is assumed unchanged across the
    /// call.
    #[inline(always)]
    pub fn cond_resched<P>(&mut self, p: &mut P) {
        if let (Some(r), Actor::Task(_)) = (self.resched, self.actor) {
            (r.yield_now)(r.ctx, self, p as *mut P as *mut ());
        }
    }

    /// The full machine's count of pages for `n` of this machine's (`n` itself unless the
    /// machine is a miniature).
    #[inline]
    pub fn unscaled(&self, n: u64) -> u64 {
        self.miniature.as_ref().map_or(n, |m| m.unscale(n))
    }

    /// The current actor's time.
    #[inline]
    pub fn now(&self) -> u64 {
        match self.actor {
            Actor::Task(t) => self.tasks[t].clock,
            Actor::Kswapd(nid) => self.nodes[nid].kswapd_clock,
        }
    }

    /// Charges CPU time to the current actor, booked to no kernel function in particular.
    #[inline]
    pub fn cpu(&mut self, ns: u64) {
        self.cpu_in(Func::Other, ns);
    }

    /// Charges CPU time to the current actor, booked to kernel function `f` in the profile.
    #[inline]
    pub fn cpu_in(&mut self, f: Func, ns: u64) {
        match self.actor {
            Actor::Task(t) => {
                let task = &mut self.tasks[t];
                task.clock += ns;
                task.cpu_ns += ns;
                self.profile.tasks[f as usize] += ns;
            }
            Actor::Kswapd(nid) => {
                self.nodes[nid].kswapd_clock += ns;
                self.nodes[nid].kswapd_cpu_ns += ns;
                self.profile.kswapd[f as usize] += ns;
            }
        }
    }

    /// The CPU the current actor spends submitting `pages` of IO to the data disk
    /// (`DeviceCost::cpu_page_ns`).
    #[inline]
    pub fn file_io_cpu(&mut self, pages: u64) {
        self.cpu_in(Func::SubmitBio, self.file_dev.cost.cpu_page_ns * pages);
    }

    /// The CPU the current actor spends submitting `pages` of IO to the swap device.
    #[inline]
    pub fn swap_io_cpu(&mut self, pages: u64) {
        self.cpu_in(Func::SubmitBio, self.swap_dev.cost.cpu_page_ns * pages);
    }

    /// The CPU the current actor spends on one read request of `pages` from the data disk
    /// (`DeviceCost::cpu_page_ns` per page, `cpu_read_request_ns` per request).
    #[inline]
    pub fn file_read_cpu(&mut self, pages: u64) {
        let c = &self.file_dev.cost;
        self.cpu_in(Func::SubmitBio, c.cpu_page_ns * pages + c.cpu_read_request_ns);
    }

    /// The CPU the current actor spends on one read request of `pages` from the swap device.
    #[inline]
    pub fn swap_read_cpu(&mut self, pages: u64) {
        let c = &self.swap_dev.cost;
        self.cpu_in(Func::SubmitBio, c.cpu_page_ns * pages + c.cpu_read_request_ns);
    }

    /// What `who` has used so far, for the scheduler's bursts ([`crate::sched::Sched::begin`]):
    /// a task's CPU and reclaim time; all of a kswapd's CPU is reclaim.
    pub fn usage(&self, who: crate::sched::Who) -> crate::sched::Usage {
        match who {
            crate::sched::Who::Task(t) => {
                let tm = &self.tasks[t];
                crate::sched::Usage { cpu_ns: tm.cpu_ns, reclaim_ns: tm.reclaim_ns + tm.reclaim_since.map_or(0, |s| tm.clock - s) }
            }
            crate::sched::Who::Kswapd(nid) => crate::sched::Usage { cpu_ns: self.nodes[nid].kswapd_cpu_ns, reclaim_ns: self.nodes[nid].kswapd_cpu_ns },
        }
    }

    /// Submits `pages` of IO to the data disk now and returns when it completes. On a machine
    /// of several CPUs a synchronous device (brd) does the transfer on the submitter's CPU
    /// before the submission returns ([`Device::on_cpu`]): the time is the actor's CPU time
    /// and the IO is complete when it gets back. Otherwise the device's queue decides.
    pub fn submit_file(&mut self, pages: u64, write: bool) -> u64 {
        if self.sched.is_some() && self.file_dev.kind.synchronous_io() {
            let ns = self.file_dev.on_cpu(pages, write);
            self.cpu_in(Func::SyncDeviceIo, ns);
            return self.now();
        }
        let now = self.now();
        self.file_dev.submit(now, pages, write)
    }

    /// Whether swap IO runs on the submitter's CPU with no device queue (a synchronous swap
    /// device on a machine of several CPUs: [`Device::on_cpu`]).
    #[inline]
    pub fn swap_on_cpu(&self) -> bool {
        self.sched.is_some() && self.swap_dev.kind.synchronous_io()
    }

    /// Whether the current actor submits its reads without waiting for each: a task with an
    /// `iodepth` above 1.
    #[inline]
    pub fn reads_async(&self) -> bool {
        matches!(self.actor, Actor::Task(t) if self.tasks[t].iodepth > 1)
    }

    /// The current task submits an asynchronous read (io_uring's or libaio's submission, as
    /// fio's `iodepth` keeps them): with `iodepth` reads already in flight it first waits for
    /// the earliest to complete (fio reaps a completion before it submits again). Returns
    /// nothing; [`Mm::read_submitted`] records the new read's completion.
    pub fn read_slot(&mut self) {
        let Actor::Task(t) = self.actor else { return };
        let now = self.tasks[t].clock;
        let task = &mut self.tasks[t];
        while task.in_flight.peek().is_some_and(|&Reverse(done)| done <= now) {
            task.in_flight.pop();
        }
        if task.in_flight.len() >= task.iodepth as usize {
            let Reverse(first) = task.in_flight.pop().expect("iodepth reads are in flight");
            self.wait_until(first);
        }
    }

    /// The current task's asynchronous read completes at `done`.
    pub fn read_submitted(&mut self, done: u64) {
        if let Actor::Task(t) = self.actor {
            self.tasks[t].in_flight.push(Reverse(done));
        }
    }

    /// The current task waits for all its reads in flight (fio's end of a job).
    pub fn reap_reads(&mut self) {
        let Actor::Task(t) = self.actor else { return };
        let last = self.tasks[t].in_flight.drain().map(|Reverse(d)| d).max();
        if let Some(done) = last {
            self.wait_until(done);
        }
    }

    /// The current actor waits until `t` (an IO completion).
    pub fn wait_until(&mut self, t: u64) {
        match self.actor {
            Actor::Task(i) => {
                let task = &mut self.tasks[i];
                if t > task.clock {
                    self.psi.sleep(i, task.clock, t);
                    task.io_wait_ns += t - task.clock;
                    if let Some(cpu) = self.one_cpu.as_mut() {
                        cpu.task_waits(task.clock, t);
                    }
                    task.clock = t;
                }
            }
            Actor::Kswapd(nid) => self.nodes[nid].kswapd_clock = self.nodes[nid].kswapd_clock.max(t),
        }
    }

    /// Takes `memcg`'s lruvec->lru_lock on node `nid` to move `folios` folios on or off its lists, with
    /// several CPUs ([`crate::locking`]): the current actor spins until the lock is its own,
    /// then holds it for `[time.cpu] lru_move_ns` a folio, both on its CPU. Nothing without
    /// `machine.cpus` ≥ 2. Models spin_lock_irq(&lruvec->lru_lock) as 6.1 and 6.12 take it
    /// per batch (folio_batch_move_lru() relocks per lruvec run, shrink_inactive_list()
    /// and evict_folios() once per isolation and once per putback); on 5.7 the lock is the
    /// node's `pgdat->lru_lock`, shared by every memcg ([`Kernel::lru_lock_per_memcg`]).
    /// The lruvec is `memcg`'s on node `nid` (node `nid`'s `pgdat->lru_lock` on 5.7).
    pub fn lru_lock_on(&mut self, by: &'static str, memcg: MemcgId, nid: usize, folios: u64) {
        let hold = folios * self.cfg.costs.cpu.lru_move_ns;
        self.hold_lock(by, hold, Func::LruMove, |mm| {
            if mm.cfg.kernel.lru_lock_per_memcg() {
                &mut mm.memcgs.get_mut(memcg).lruvec_of_mut(nid).lru_lock
            } else {
                &mut mm.nodes[nid].lru_lock
            }
        });
    }

    /// The current actor takes `lock` at its clock to hold it for `hold` ns, with several
    /// CPUs ([`crate::locking`]): it spins until the lock is its own, then holds it, both on
    /// its CPU, the hold booked to `f`, the section counted under the kernel function `by`.
    /// Nothing without `machine.cpus` ≥ 2. The lock is reached through `lock_of`, as each lock
    /// lives in the structure it guards.
    #[inline]
    fn hold_lock(&mut self, by: &'static str, hold: u64, f: Func, lock_of: impl FnOnce(&mut Mm) -> &mut crate::locking::SpinLock) {
        if self.sched.is_none() {
            return;
        }
        let at = self.now();
        let handoff = self.cfg.costs.cpu.lock_handoff_ns;
        let Some(sched) = self.sched.as_mut() else { return };
        let (horizon, calendar) = (sched.horizon, sched.calendar);
        sched.horizon_lag_max_ns = sched.horizon_lag_max_ns.max(at.saturating_sub(horizon));
        let section = lock_of(self).lock_by(by, at, hold, handoff, horizon, calendar);
        if let Some(sched) = self.sched.as_mut() {
            sched.spun(section.spin);
        }
        self.cpu_in(Func::QueuedSpinLockSlowpath, section.spin);
        self.cpu_in(f, hold);
    }

    /// Takes the `i_pages` lock of the file holding `vpn` to store `folios` folios into its
    /// xarray or delete them from it, each for `[time.cpu] xa_store_ns`. Models
    /// xa_lock_irq(&mapping->i_pages) as 6.1 and 6.12 take it: once per folio by
    /// __filemap_add_folio() (a page-cache insert: a miss, each readahead folio) and by
    /// __remove_mapping() and filemap_remove_folio() (reclaim's and a drop's delete), and
    /// once per folio batch (`PAGEVEC_SIZE`) by truncation's delete_from_page_cache_batch().
    /// The lock is the file's own (`struct address_space`): tasks on one file contend, tasks
    /// on their own files do not.
    pub fn i_pages_lock(&mut self, by: &'static str, vpn: Vpn, folios: u64) {
        if self.sched.is_none() {
            return;
        }
        let hold = folios * self.cfg.costs.cpu.xa_store_ns;
        let object = self.space.object_of(vpn);
        self.hold_lock(by, hold, Func::XaStore, |mm| &mut mm.space.objects[object].i_pages);
    }

    /// Takes zone `z`'s `zone->lock` to move `pages` pages between its buddy lists and a
    /// per-CPU list, each for `[time.cpu] zone_move_ns`. Models spin_lock_irqsave(&zone->lock)
    /// as 6.1 and 6.12 take it once per refill of a per-CPU list (rmqueue_bulk(), the
    /// refill's size `pcp->batch`, or on 6.12 up to `batch << alloc_factor`) and once per
    /// bulk free (free_pcppages_bulk(), when a free lifts the list to its `high`, and for
    /// a drain: drain_all_pages() once per CPU whose list holds pages). The lock is the
    /// zone's own; each CPU has its own list of the zone ([`crate::mm::page_alloc::ParkedPages`]),
    /// so every CPU's refills and bulk frees take it.
    pub fn zone_lock(&mut self, by: &'static str, z: usize, pages: u64) {
        if self.sched.is_none() {
            return;
        }
        let hold = pages * self.cfg.costs.cpu.zone_move_ns;
        self.hold_lock(by, hold, Func::ZoneBulk, |mm| &mut mm.zone_mut(z).lock);
    }

    /// Takes the swap cache's lock of `slot` to store `folios` folios into its xarray or
    /// delete them from it, each for `[time.cpu] xa_store_ns`. Models
    /// xa_lock_irq(&address_space->i_pages) on the swap cache as 6.1 and 6.12 take it: once
    /// per folio by add_to_swap_cache() (a swap-out's add_to_swap(), a swap-in's read into
    /// the swap cache) and by __delete_from_swap_cache() (under __remove_mapping() for a
    /// reclaimed anon folio, and delete_from_swap_cache() when a swapped-in folio drops its
    /// slot). The swap cache is split into address spaces of SWAP_ADDRESS_SPACE_PAGES
    /// (2^14) slots, each with its own lock (`swapper_spaces[type][offset >> 14]`), so
    /// reclaimers on different 64 MiB of the device do not contend.
    pub fn swap_cache_lock(&mut self, by: &'static str, slot: u32, folios: u64) {
        if self.sched.is_none() {
            return;
        }
        let hold = folios * self.cfg.costs.cpu.xa_store_ns;
        self.hold_lock(by, hold, Func::XaStore, |mm| mm.swap.cache_lock(slot));
    }

    /// A swap slot taken (`alloc`) or given back through the current CPU's swap slots cache,
    /// which takes the swap device's lock (`si->lock`) for a whole batch: models
    /// mm/swap_slots.c (6.1, 6.12): folio_alloc_swap() takes a slot from this CPU's cache and
    /// refills an empty one by get_swap_pages() with SWAP_SLOTS_CACHE_SIZE (64) slots, which
    /// scan_swap_map_slots() takes under si->lock (6.12's cluster_alloc_swap_entry() from the
    /// CPU's percpu_cluster with `si->lock` still held, 6.1's scan_swap_map_try_ssd_cluster()
    /// likewise, each slot under its cluster's `ci->lock` nested inside, which therefore
    /// never contends); free_swap_slot() collects 64 returned slots before
    /// swapcache_free_entries() frees them under si->lock. Each slot holds it for `[time.cpu]
    /// swap_slot_ns`. Simplification: the batch is counted per CPU, but the slots themselves
    /// come from the device's one cursor ([`crate::mm::swapfile::Swap::alloc`]), so slot
    /// numbers, and every counter, are those of the machine without the cache. 7.3 has no
    /// swap slots cache (removed in 6.15) and is modeled as 6.12.
    pub fn swap_slot_lock(&mut self, alloc: bool) {
        let Some(cpu) = self.sched.as_ref().map(|s| s.current_cpu().unwrap_or(0)) else { return };
        if !self.swap.slots_cache_batch(cpu, alloc) {
            return;
        }
        let hold = crate::mm::swapfile::SWAP_SLOTS_CACHE_SIZE * self.cfg.costs.cpu.swap_slot_ns;
        self.hold_lock(if alloc { "folio_alloc_swap" } else { "free_swap_slot" }, hold, Func::SwapSlots, |mm| &mut mm.swap.lock);
    }

    /// Models kernel/sched/psi.c: psi_memstall_enter() (6.1, 6.12) for the current task: it
    /// is stalled on memory from now until [`Mm::memstall_leave`]. Returns the flag to hand
    /// back (set when the task was already in a stall: the inner section counts nothing).
    /// kswapd's stall is its whole balance_pgdat() run ([`Mm::kswapd_memstall`]), so a
    /// section inside it changes nothing either.
    #[inline]
    pub fn memstall_enter(&mut self) -> bool {
        match self.actor {
            Actor::Task(t) => self.psi.memstall_enter(t, self.tasks[t].clock),
            Actor::Kswapd(_) => true,
        }
    }

    /// Models kernel/sched/psi.c: psi_memstall_leave() (6.1, 6.12) with the flag
    /// [`Mm::memstall_enter`] returned.
    #[inline]
    pub fn memstall_leave(&mut self, nested: bool) {
        if let (Actor::Task(t), false) = (self.actor, nested) {
            self.psi.memstall_leave(t, self.tasks[t].clock, false);
        }
    }

    /// Models mm/vmscan.c: balance_pgdat()'s psi_memstall_enter()/leave() (6.1, 6.12):
    /// node `nid`'s kswapd is stalled on memory (`on`) from the start of a balancing run to
    /// its end, at its clock. A kswapd is a kernel thread of the root cgroup: its stall
    /// counts in the system's pressure only. Each node's kswapd is PSI actor `tasks + nid`.
    pub fn kswapd_memstall(&mut self, nid: usize, on: bool) {
        let k = self.tasks.len() + nid;
        let at = self.nodes[nid].kswapd_clock;
        if on {
            self.psi.set_idle(k, at, false);
            self.psi.memstall_enter(k, at);
        } else {
            self.psi.memstall_leave(k, at, false);
            self.psi.set_idle(k, at, true);
        }
    }

    pub fn current_task(&self) -> Option<usize> {
        match self.actor {
            Actor::Task(t) => Some(t),
            Actor::Kswapd(_) => None,
        }
    }

    /// NR_FREE_PAGES of the machine: free frames, less those on the per-CPU lists.
    #[inline]
    pub fn nr_free(&self) -> u64 {
        (0..self.folios.nr_zones()).map(|z| self.zone_free(z)).sum()
    }

    /// NR_FREE_PAGES of node `nid` (`sum_zone_node_page_state(nid, NR_FREE_PAGES)`).
    #[inline]
    pub fn node_free(&self, nid: usize) -> u64 {
        self.node_zones(nid).map(|z| self.zone_free(z)).sum()
    }

    /// NR_FREE_PAGES of zone `z` (by its index among all nodes' zones: node 0's zones first,
    /// at their index in the node, then one zone per further node).
    #[inline]
    pub fn zone_free(&self, z: usize) -> u64 {
        self.movable_free(z) + self.pageblocks.as_ref().map_or(0, |p| p.nr_free(z))
    }

    /// Free pages of zone `z` on the movable buddy lists (not on the per-CPU lists).
    #[inline]
    pub fn movable_free(&self, z: usize) -> u64 {
        self.folios.nr_free_in(z) - self.zone(z).pcp.count as u64
    }

    /// Zone `z` of the machine (by its index among all nodes' zones, as [`Mm::zone_free`]):
    /// node 0's zones keep their index in the node, each further node's one zone follows.
    #[inline(always)]
    pub fn zone(&self, z: usize) -> &crate::mm::mmzone::Zone {
        let (nid, i) = self.zone_place(z);
        &self.nodes[nid].zones.z[i]
    }

    /// [`Mm::zone`], to change.
    #[inline(always)]
    pub fn zone_mut(&mut self, z: usize) -> &mut crate::mm::mmzone::Zone {
        let (nid, i) = self.zone_place(z);
        &mut self.nodes[nid].zones.z[i]
    }

    /// Where machine zone `z` sits: (its node, its index in the node's zones).
    #[inline(always)]
    fn zone_place(&self, z: usize) -> (usize, usize) {
        let n0 = self.nodes[0].zones.z.len();
        if z < n0 {
            (0, z)
        } else {
            (z - n0 + 1, 0)
        }
    }

    /// The machine's zones of node `nid`, by their index among all nodes' zones
    /// (`pgdat->node_zones`).
    #[inline]
    pub fn node_zones(&self, nid: usize) -> std::ops::Range<usize> {
        let n0 = self.nodes[0].zones.z.len();
        if nid == 0 {
            0..n0
        } else {
            n0 + nid - 1..n0 + nid
        }
    }

    /// The node zone `z` belongs to (`zone_to_nid()`).
    #[inline]
    pub fn zone_nid(&self, z: usize) -> usize {
        self.zone_place(z).0
    }

    /// The current actor's node (numa_node_id(): the node of the CPU it runs on): a task's
    /// is its CPU's on a machine of several nodes with the CPU model, node 0 without it;
    /// a kswapd's is its own node (kswapd() binds itself to cpumask_of_node()).
    #[inline]
    pub fn numa_node_id(&self) -> usize {
        if self.nodes.len() == 1 {
            return 0;
        }
        match self.actor {
            Actor::Task(t) => match (&self.sched, self.cpu_node.is_empty()) {
                (Some(sched), false) => sched.tasks[t].last.map_or(0, |c| self.cpu_node[c as usize] as usize),
                _ => 0,
            },
            Actor::Kswapd(nid) => nid,
        }
    }

    /// Counts a global event (/proc/vmstat).
    #[inline]
    pub fn count(&mut self, e: Ev, n: u64) {
        self.events.add(e, n);
    }

    /// Counts a memcg event (memory.stat; local, summed up the tree when printed). Every memcg
    /// event is an rstat update (__count_memcg_events(), mod_lruvec_state()), but for OOM
    /// kills: the kernel counts OOM_KILL in /proc/vmstat and memory.events only.
    #[inline]
    pub fn count_memcg(&mut self, memcg: MemcgId, e: Ev, n: u64) {
        self.memcgs.get_mut(memcg).events.add(e, n);
        if e != Ev::OomKill {
            self.memcgs.rstat_updated(memcg, n);
        }
    }

    /// Counts both copies.
    #[inline]
    pub fn count_both(&mut self, memcg: MemcgId, e: Ev, n: u64) {
        self.count(e, n);
        self.count_memcg(memcg, e, n);
    }

    /// Models include/linux/mm_inline.h: update_lru_size(): the exact per-lruvec size and
    /// the rstat counter of the memcg.
    /// A policy whose lists span the nodes (the eviction seam: one list set per memcg) keeps
    /// its sizes in node 0's lruvec.
    #[inline]
    pub fn update_lru_size(&mut self, memcg: MemcgId, lru: Lru, delta: i64) {
        self.update_lru_size_on(memcg, 0, lru, delta);
    }

    /// [`Mm::update_lru_size`] of `memcg`'s lruvec on node `nid` (the classic LRU's lists are
    /// per (memcg, node), as the kernel's: folio_lruvec()). The rstat counter is the memcg's,
    /// all nodes'.
    #[inline]
    pub fn update_lru_size_on(&mut self, memcg: MemcgId, nid: usize, lru: Lru, delta: i64) {
        let l = &mut self.memcgs.get_mut(memcg).lruvec_of_mut(nid).lru_size[lru as usize];
        *l = (*l as i64 + delta) as u64;
        self.memcgs.mod_state(memcg, StatItem::Lru(lru), delta);
    }

    /// Models NR_FILE_DIRTY's node and memcg updates (folio_account_dirtied(),
    /// folio_clear_dirty_for_io(), folio_account_cleaned(); 6.1, 6.12, 7.3): `delta` pages of
    /// `memcg`.
    #[inline]
    pub fn account_dirty(&mut self, memcg: MemcgId, delta: i64) {
        self.nr_dirty = self.nr_dirty.wrapping_add_signed(delta);
        self.memcgs.mod_state(memcg, StatItem::FileDirty, delta);
    }

    /// Models NR_WRITEBACK's node and memcg updates (__folio_start_writeback(),
    /// __folio_end_writeback(); 6.1, 6.12, 7.3): `delta` pages of `memcg`.
    #[inline]
    pub fn account_writeback(&mut self, memcg: MemcgId, delta: i64) {
        self.nr_writeback = self.nr_writeback.wrapping_add_signed(delta);
        self.memcgs.mod_state(memcg, StatItem::Writeback, delta);
    }

    /// Machine-wide LRU size, every node's (the /proc/vmstat nr_* gauges).
    pub fn node_lru_size(&self, lru: Lru) -> u64 {
        self.memcgs.cg.iter().map(|c| c.lru_pages(lru)).sum()
    }

    /// Node `nid`'s LRU size (`node_page_state(pgdat, NR_LRU_BASE + lru)`): every memcg's
    /// lruvec on the node.
    pub fn pgdat_lru_size(&self, nid: usize, lru: Lru) -> u64 {
        self.memcgs.cg.iter().map(|c| c.lruvec_of(nid).lru_size[lru as usize]).sum()
    }

    /// The node of folio `pfn` (`folio_nid()`, `folio_pgdat()`).
    #[inline(always)]
    pub fn folio_nid(&self, pfn: Pfn) -> usize {
        self.folios.node_of(pfn)
    }

    /// The memcg a page is charged to.
    #[inline]
    pub fn folio_memcg(&self, pfn: Pfn) -> MemcgId {
        self.folios.get(pfn).memcg
    }

    /// Whether anon pages can be reclaimed for `memcg` (mem_cgroup_get_nr_swap_pages() > 0).
    pub fn can_swap(&self) -> bool {
        self.swap.free() > 0
    }

    /// Models get_swappiness()'s swap test: MGLRU needs at least MIN_LRU_BATCH free slots.
    pub fn swap_pages_free(&self) -> u64 {
        self.swap.free()
    }

    /// Hints the CPU to fetch the frames of the resident pages among the first
    /// [`PREFETCH_FRAMES`] of the `npages` from `vpn`, before an operation walks them one
    /// after another (no effect on results): their loads then overlap instead of each
    /// waiting for the last. The pages must lie inside their object.
    #[inline]
    pub fn prefetch_frames(&self, vpn: Vpn, npages: u64) {
        for v in vpn..vpn + npages.min(PREFETCH_FRAMES) as Vpn {
            if let Some(pfn) = self.space.resident(v) {
                self.folios.prefetch(pfn);
            }
        }
    }

    /// Marks the PMD covering `vpn` accessed.
    #[inline]
    pub fn set_pmd_young(&mut self, vpn: Vpn) {
        let i = (vpn >> 9) as usize;
        if let Some(w) = self.pmd_young.get_mut(i >> 6) {
            *w |= 1 << (i & 63);
        }
    }

    /// Tests and clears the accessed bit of the PMD covering `vpn`.
    pub fn test_clear_pmd_young(&mut self, vpn: Vpn) -> bool {
        let i = (vpn >> 9) as usize;
        match self.pmd_young.get_mut(i >> 6) {
            Some(w) => {
                let was = *w & (1 << (i & 63)) != 0;
                *w &= !(1 << (i & 63));
                was
            }
            None => false,
        }
    }

    /// Adds `nr` to a page-state gauge kept globally.
    pub fn page_counts(&mut self, pfn: Pfn, delta: i64) {
        let anon = self.folios.test(pfn, pg::SWAPBACKED);
        let c = if anon { &mut self.nr_anon_pages } else { &mut self.nr_file_pages };
        *c = (*c as i64 + delta) as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_sqrt_floors() {
        for (x, r) in [(0, 0), (1, 1), (3, 1), (4, 2), (99, 9), (100, 10), (1 << 40, 1 << 20)] {
            assert_eq!(int_sqrt(x), r);
        }
    }
}
