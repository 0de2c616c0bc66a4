//! The simulated machine and its clock: builds the model from a scenario, then runs the
//! tasks of the workloads against it, interleaved by their virtual clocks, with kswapd, the
//! rstat flusher, the writeback flusher and IO completions as timed events.
//!
//! This file holds the [`Machine`] and its [`Task`]s and what a caller asks of a machine
//! (its objects, its elapsed time, its state's size). The rest, by concern:
//!
//! - [`build`]: [`Machine::new`], the model laid out from a scenario;
//! - [`events`]: the event loop ([`Machine::run`], [`Machine::step`], `next_task`,
//!   `run_due_events`, `step_task`, `begin_op`/`end_op`) and the timed events;
//! - [`ops`]: where a task's operations come from ([`OpSource`], a trace's [`PageOps`] and
//!   its [`TraceStatus`]);
//! - [`lockstep`]: `lockstep` pairs of tasks and `pace = "trace"`;
//! - [`series`]: the counters' samples over time ([`Sample`]).

use std::collections::VecDeque;
use std::sync::Arc;

use pagelab_workload::Op;

use crate::mm::memcontrol::MemcgId;
use crate::mm::readahead::{FileRef, RaState};
use crate::mm::Mm;
use crate::policy::Policy;
use crate::sim::sample::SampledObject;

mod build;
mod control;
mod events;
mod lockstep;
mod ops;
mod resched;
mod series;

use events::TaskQueue;

pub use build::anon_object_name;
pub use control::MAX_CONTROL_RECORDS;
pub use lockstep::{LockTask, Pacing};
pub use ops::{OpSource, OpStream, PageOps, TraceStatus};
pub use series::{Sample, SERIES_POINTS};

/// How many operations a task fetches ahead for prefetching.
const LOOKAHEAD: usize = 4;

/// One object as a task sees it.
#[derive(Clone, Copy, Debug)]
struct TaskObject {
    file: FileRef,
    anon: bool,
}

/// A running job of a workload: its access stream and per-file state.
pub struct Task {
    pub workload: usize,
    pub job: u32,
    stream: OpSource,
    objects: Vec<TaskObject>,
    /// A miniature scenario's sample of each of `objects` (empty for a full machine).
    samples: Vec<Option<Arc<SampledObject>>>,
    ra: Vec<RaState>,
    /// The next operations, fetched ahead so their page state can be prefetched.
    ahead: VecDeque<Op>,
    pub ops: u64,
    pub fill_ops: u64,
    /// A miniature scenario's operations that touched no sampled page.
    pub dropped_ops: u64,
    /// The workload's operations done: `ops`, except that an operation an application cache
    /// cut into parts counts once, when its last part ends (`Op::more`). `lockstep` counts these.
    pub steps: u64,
    /// Processes that replaced the task's earlier one (`lifetime_ops`).
    pub respawns: u64,
    pub done: bool,
    /// Waiting for another task (`lockstep`): not runnable until that task unblocks it.
    waiting: bool,
    pub start_ns: u64,
    pub end_ns: u64,
    /// `pace = "trace"`: how the task kept to its trace's times.
    pub pacing: Option<Box<Pacing>>,
    /// When the operation under way began: the task's clock after its think time.
    op_start: u64,
    /// Suspended in a reclaim at a cond_resched() point: a flow holds its operation's call
    /// stack (`resched.rs`).
    parked: bool,
    /// Its operations' modeled latencies (fills included): from the end of the think time
    /// to the return to user space, so waits for a CPU, IO and memory.high throttling count.
    pub latency: crate::hist::Histogram,
}

/// The model of one scenario under one policy.
pub struct Machine<P: Policy> {
    pub mm: Mm,
    pub policy: P,
    pub tasks: Vec<Task>,
    /// The series: at most [`SERIES_POINTS`] samples, see [`Machine::sample`].
    pub samples: Vec<Sample>,
    /// Memory pressure at the end of the run, by cgroup (index = memcg id, 0 the system):
    /// what `/proc/pressure/memory` and each `memory.pressure` read then.
    pub pressure: Vec<crate::sched::psi::Pressure>,
    /// The report interval; it doubles each time the series is coarsened.
    interval: u64,
    next_sample: u64,
    /// The end of the last interval left out of the series because nothing changed in it.
    idle_until: Option<u64>,
    next_flush: u64,
    next_wb: u64,
    /// The next vmstat_update(); `u64::MAX` on kernels where it does nothing the model has.
    next_vmstat: u64,
    next_kcompactd: u64,
    /// The earliest of `next_vmstat`, `next_kcompactd`, `next_write_at` and
    /// `next_control_at`: one comparison per operation.
    next_timer: u64,
    /// `[[event]]`: the cgroup writes, in time order; the next to run and its time
    /// (`u64::MAX` when none is left).
    writes: Vec<Write>,
    next_write: usize,
    next_write_at: u64,
    /// What each cgroup write that ran did, in the order they ran.
    pub write_outcomes: Vec<WriteOutcome>,
    /// `[[controller]]`s and the caller's: each with its next tick; the earliest of those
    /// (`u64::MAX` when there is none).
    controllers: Vec<control::Slot>,
    next_control_at: u64,
    /// What the controllers' actions did, in the order they ran: the first
    /// [`MAX_CONTROL_RECORDS`] of them; the rest are counted in `control_left_out`.
    pub control_outcomes: Vec<crate::sim::controller::ActOutcome>,
    pub control_left_out: u64,
    /// Every task's operation latencies together: the series' per-interval percentiles are
    /// the differences of its snapshots.
    pub latency: crate::hist::Histogram,
    total_ops: u64,
    done_ops: u64,
    /// A miniature scenario's sampled pages, all objects together (0 for a full machine).
    pub sampled_pages: u64,
    /// Per task: keep its memory when it is done (`hold = true`).
    hold: Vec<bool>,
    /// Per workload: the timing limits of its tasks.
    workloads: Vec<WorkloadTiming>,
    /// Per task, its `lockstep` pairs; empty when no workload has `lockstep`.
    pub locks: Vec<LockTask>,
    /// With many tasks, the runnable ones by clock ([`Machine::next_task`]).
    queue: Option<TaskQueue>,
    /// A run whose reclaims yield at cond_resched(): the state of the loop that passes from
    /// flow to flow (`resched.rs`).
    relay: resched::Relay,
}

/// A scenario's `[[event]]`, its cgroup looked up.
#[derive(Clone, Copy, Debug)]
struct Write {
    at_ns: u64,
    memcg: MemcgId,
    kind: crate::mm::memcontrol::WriteKind,
}

/// A cgroup write that ran: when, where, what, what it did and the modeled time the write
/// took (the writer's clock from `at_ns` to its return).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOutcome {
    pub at_ns: u64,
    pub memcg: MemcgId,
    pub kind: crate::mm::memcontrol::WriteKind,
    pub result: crate::mm::memcontrol::WriteResult,
    pub taken_ns: u64,
}

impl Task {
    /// The task's hits and misses in its workload's application cache so far (blocks), if
    /// it has one.
    pub fn app_cache_counts(&self) -> Option<(u64, u64)> {
        match &self.stream {
            OpSource::Job(st) => st.app_cache_counts(),
            _ => None,
        }
    }

    /// The task's lsm store's flushes and compactions so far, if its workload has one.
    pub fn lsm_counts(&self) -> Option<crate::report::LsmReport> {
        let OpSource::Job(st) = &self.stream else { return None };
        st.with_lsm(|l| crate::report::LsmReport {
            flushes: l.flushes,
            compactions: l.compactions,
            seek_compactions: l.seek_compactions,
            most_flushes_waiting: l.background_state().map(|b| b.most_flushes_waiting),
            write_stalls: l.background_state().map(|b| b.write_stalls),
            write_slowdowns: l.background_state().map(|b| b.write_slowdowns),
            compactions_owed: l.background_state().map(|_| l.compactions_owed()),
        })
    }

    /// The workload's operations the task did, where one is several of its `ops`: a read
    /// through an application cache, a YCSB operation on an lsm store.
    pub fn workload_ops(&self) -> Option<u64> {
        match &self.stream {
            OpSource::Job(st) if st.app_cache_counts().is_some() || st.with_lsm(|_| ()).is_some() => Some(self.steps),
            _ => None,
        }
    }
}

/// A workload's runtime, rate limit and process lifetime.
struct WorkloadTiming {
    runtime: Option<u64>,
    op_interval: u64,
    lifetime_ops: u64,
}

impl<P: Policy> Machine<P> {
    /// Operations the run will perform, fills included.
    pub fn total_ops(&self) -> u64 {
        self.total_ops
    }

    /// The first page (vpn) of object `object` of task `t`, and its size in pages.
    pub fn object(&self, t: usize, object: usize) -> (u32, u64) {
        let o = self.tasks[t].objects[object];
        (o.file.base, o.file.pages)
    }

    /// Flushes every CPU's LRU batches (`lru_add_drain_all()`).
    pub fn drain(&mut self) {
        crate::mm::swap::lru_add_drain_all(&mut self.mm, &mut self.policy);
    }

    /// Modeled time from the start to the end of the last task.
    pub fn elapsed_ns(&self) -> u64 {
        self.tasks.iter().map(|t| t.end_ns.max(t.start_ns)).max().unwrap_or(0)
    }

    /// The memcg a task runs in.
    pub fn task_memcg(&self, t: usize) -> MemcgId {
        self.mm.tasks[t].memcg
    }

    /// Bytes of simulation state: frames, address space, shadow nodes, swap map, read
    /// completions and the policy's lists.
    pub fn state_bytes(&self) -> u64 {
        let mm = &self.mm;
        mm.folios.state_bytes()
            + mm.space.state_bytes()
            + mm.file_nodes.state_bytes()
            + mm.swap_nodes.state_bytes()
            + mm.swap.state_bytes()
            + self.policy.state_bytes()
    }

    /// Checks the core's and the policy's invariants (for tests).
    pub fn check(&self) -> Result<(), String> {
        crate::mm::invariants::check(&self.mm)?;
        self.policy.check(&self.mm)
    }
}
