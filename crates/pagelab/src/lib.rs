//! pagelab: a page-level model of Linux page reclaim.
//!
//! Data flows one way, and the directories say so:
//!
//! - [`mm`]: the kernel's memory management, one module per kernel file (vmscan, workingset,
//!   memcontrol, swap, ...), fenced as one unit;
//! - [`policy`]: the kernel's two LRU policies (classic, MGLRU), the cache_ext-shaped eviction
//!   seam with its plain caches, and the registry that names them;
//! - [`sim`]: a [`Scenario`] (workloads from `pagelab-workload`) builds a [`sim::Machine`],
//!   whose event loop feeds operations to `mm`;
//! - [`lab`]: what users do with runs: experiments, comparisons, sweeps, curves, trace replays;
//! - [`report`]: the counters of a finished run, under the kernel's names;
//! - [`sched`] and [`locking`]: the machine under `mm` when it has several CPUs (the kernel's
//!   kernel/sched and kernel/locking): CPUs the tasks and kernel threads share, and locks
//!   that are held for the work done under them; [`block`]: the devices' queues (blk-mq's
//!   tags).
//!
//! Every rule that models the kernel names the kernel function it follows and the versions
//! (5.7, 6.1, 6.12) whose behaviour it reproduces.

pub mod block;
pub mod error;
pub mod hist;
pub mod kernel;
pub mod lab;
pub mod locking;
pub mod mm;
pub mod policy;
pub mod report;
pub mod sched;
pub mod sim;

pub use error::RunError;
pub use kernel::Kernel;
pub use lab::{compare, curve, experiments, replay, replay_access, size, sweep, tables, trace_stats};
pub use pagelab_host::interrupt;
pub use pagelab_workload::Advice;
pub use report::Report;
pub use sim::run::{run, run_with, Outcome, RunOptions};
pub use sim::scenario::{PolicyKind, Scenario, ScenarioError};
pub use sim::{scenario, trace_workload};
