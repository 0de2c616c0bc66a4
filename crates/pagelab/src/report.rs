//! What a run reports: /proc/vmstat, memory.stat and memory.events of every cgroup, the
//! counters per report interval, modeled time and throughput. Reports only read the
//! counters the simulator kept; they never reach into its state.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::mm::folio::{pg, NIL};
use crate::mm::vmstat::{memcg_unit, vmstat_unit, Ev, Events, Lru};
use crate::mm::{Mm, OomKill};
use crate::policy::Policy;
use crate::sim::scenario::Scenario;
use crate::sim::Machine;

/// The counters of one report interval: event deltas and gauges at its end.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeriesPoint {
    pub t_s: f64,
    pub ops: u64,
    /// Each task's operations in the interval, by task name: a query's throughput over
    /// time when several tasks share the machine.
    pub task_ops: BTreeMap<String, u64>,
    /// Each task's workload operations in the interval, for the tasks whose operation is
    /// several of their `ops` (a YCSB operation on an lsm store, a read through an
    /// application cache: the tasks' `workload_ops`), by task name; absent without them.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub task_workload_ops: BTreeMap<String, u64>,
    pub vmstat: BTreeMap<String, u64>,
    /// The policy's state at the end of the interval (`Policy::state()`; MGLRU: the
    /// generations of every memcg).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_state: Option<serde_json::Value>,
    /// The modeled latency of the operations that ended in the interval, all tasks together
    /// (`max_ns` to within 1/8); absent when none did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<crate::hist::Latency>,
    /// The system's memory pressure at the end of the interval (`/proc/pressure/memory`:
    /// `total_us` in µs, the averages in percent; [`crate::sched::psi`]).
    pub pressure: crate::sched::psi::Pressure,
    /// Each cgroup's `memory.pressure` at the end of the interval, by path (the root's is the
    /// system's and left out); absent without cgroups.
    #[serde(rename = "memory.pressure", skip_serializing_if = "BTreeMap::is_empty")]
    pub memory_pressure: BTreeMap<String, crate::sched::psi::Pressure>,
    /// Each cgroup's memory.current at the end of the interval in bytes, by path (the root
    /// left out); absent without cgroups.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub memory_current: BTreeMap<String, u64>,
}

/// What a miniature scenario's report adds: its rate and seed, and the operations the tasks
/// drew that touched no sampled page (with `ops`, the full scenario's operations).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SampleReport {
    pub rate: f64,
    pub seed: u64,
    /// The fraction of the scenario's pages the sample kept, which every size was scaled by.
    pub scale: f64,
    pub dropped_ops: u64,
    /// The pages of the miniature's files and anonymous regions together.
    pub kept_pages: u64,
}

/// One task's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskReport {
    pub name: String,
    pub cgroup: String,
    pub ops: u64,
    pub fill_ops: u64,
    /// With an application cache, whose hits and misses are operations of their own in
    /// `ops`, or an lsm store, whose YCSB operations are several each: the workload's
    /// operations (a read of several cache blocks, a get or a scan, counts once).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload_ops: Option<u64>,
    /// Processes that replaced an exited one (`lifetime_ops`).
    pub respawns: u64,
    pub elapsed_s: f64,
    pub ops_per_s: f64,
    pub io_wait_s: f64,
    /// With `machine.cpus` set: time the task was runnable without a CPU (schedstat's
    /// run-queue wait): on one CPU while kswapd had it, on several while its CPUs ran others.
    /// Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_wait_s: Option<f64>,
    /// With `machine.cpus` ≥ 2: the task's CPU time, and of it the time spinning on locks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock_spin_s: Option<f64>,
    /// With `machine.cpus` ≥ 2: its operations that ran on another CPU than the one before
    /// (schedstat's `nr_migrations`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub migrations: Option<u64>,
    pub reclaim_s: f64,
    pub oom_killed: bool,
    /// `pace = "trace"`: how far the task fell behind its trace's times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pace: Option<PaceReport>,
    /// `lockstep`: how long the task waited for its partner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lockstep: Option<LockstepReport>,
    /// Its operations' modeled latency (fills included), from the end of the think time to
    /// the return to user space; absent when it did none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<crate::hist::Latency>,
}

/// How a paced task kept to its trace's times: how many accesses were issued after their
/// time in the trace, and how far behind (modeled seconds).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PaceReport {
    pub accesses: u64,
    pub late: u64,
    pub behind_max_s: f64,
    pub behind_mean_s: f64,
    /// How far behind the last paced access was issued.
    pub behind_end_s: f64,
}

/// A task in lockstep: its leader (a follower), and how often and how long it waited (a
/// follower for its leader's accesses, a leader for its followers' prefills).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LockstepReport {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leader: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    pub followers: Vec<String>,
    pub waits: u64,
    pub wait_s: f64,
}

/// The node's memory as the model set it up: managed pages and watermarks added up over its
/// zones (for checks against /proc/zoneinfo).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZoneReport {
    pub managed: u64,
    pub min_free_kbytes: u64,
    pub min: u64,
    pub low: u64,
    pub high: u64,
}

/// One zone as the model set it up (/proc/zoneinfo's names; `protection` is its lowmem
/// reserve against user allocations).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZoneInfo {
    pub name: &'static str,
    pub managed: u64,
    pub min: u64,
    pub low: u64,
    pub high: u64,
    pub protection: u64,
}

/// The version of the reports' and tables' layout (`provenance.schema_version`, and the
/// Parquet files' `pagelab.schema_version`): raised when a key changes meaning or goes.
/// Reports without `provenance` predate it.
pub const SCHEMA_VERSION: u32 = 1;

/// What made a report (docs/tables.md, "Provenance"): pagelab's version, the layout's, the
/// `--set` overrides and the scenario as it ran, with a hash to tell runs apart at a glance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Provenance {
    pub pagelab_version: &'static str,
    pub schema_version: u32,
    /// The `--set` overrides in order (a sweep's point: the fixed ones, then its values).
    pub set: Vec<String>,
    /// `fnv1a64:` and the 64-bit FNV-1a hash of `scenario`, in hex.
    pub scenario_hash: String,
    /// The scenario file with the overrides applied, as TOML.
    pub scenario: String,
}

impl Provenance {
    /// The provenance of a run of `s`.
    pub fn of(s: &Scenario) -> Provenance {
        Provenance {
            pagelab_version: env!("CARGO_PKG_VERSION"),
            schema_version: SCHEMA_VERSION,
            set: s.overrides.clone(),
            scenario_hash: scenario_hash(&s.resolved_toml),
            scenario: s.resolved_toml.clone(),
        }
    }
}

/// The provenance of a plain cache's trace replay, which has no scenario: the versions and
/// the `--set` overrides.
pub fn plain_provenance(set: &[String]) -> serde_json::Value {
    serde_json::json!({"pagelab_version": env!("CARGO_PKG_VERSION"), "schema_version": SCHEMA_VERSION, "set": set})
}

/// `fnv1a64:` and the FNV-1a hash of `text` (64 bits, hex): the same on every machine.
pub fn scenario_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

/// A run's report; `pagelab run --json` writes it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// What made it: versions, overrides and the scenario.
    pub provenance: Provenance,
    pub scenario: String,
    pub kernel: String,
    pub policy: String,
    pub vmstat: BTreeMap<String, u64>,
    pub memcg: BTreeMap<String, BTreeMap<String, u64>>,
    /// Pressure stall information at the end of the run: `{"memory": {"some": .., "full":
    /// ..}}`, each line `total_us` (µs stalled) and `avg10`/`avg60`/`avg300` (percent), as
    /// `/proc/pressure/memory` ([`crate::sched::psi`]).
    pub pressure: BTreeMap<String, crate::sched::psi::Pressure>,
    /// Each cgroup's `memory.pressure` at the end of the run, by path (the root's is the
    /// system's).
    #[serde(rename = "memory.pressure")]
    pub memory_pressure: BTreeMap<String, crate::sched::psi::Pressure>,
    pub series: Vec<SeriesPoint>,
    pub elapsed_s: f64,
    pub ops: u64,
    pub fill_ops: u64,
    pub throughput_ops_s: f64,
    pub tasks: Vec<TaskReport>,
    /// Each workload's operations' modeled latency, its tasks (jobs) together, by name.
    pub workload_latency: BTreeMap<String, crate::hist::Latency>,
    /// Each workload's application cache (`app_cache`), its jobs together, by name: the
    /// blocks its lookups hit and missed; absent without one.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub app_cache: BTreeMap<String, AppCacheReport>,
    /// Each lsm workload's store (`kind = "lsm"`, its jobs' one store), by name: its
    /// flushes and compactions; absent without one.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub lsm: BTreeMap<String, LsmReport>,
    pub oom_kills: Vec<OomKill>,
    /// `[[event]]`: each write to a cgroup's memory.reclaim, memory.high or memory.max, in
    /// time order, with what it asked for, reclaimed and took; absent without events.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cgroup_events: Vec<CgroupEventReport>,
    /// What the controllers did (`[[controller]]`, Python's), in the order they did it;
    /// absent without controllers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub controller_actions: Vec<ControllerActionReport>,
    /// Controller actions past the first [`crate::sim::MAX_CONTROL_RECORDS`], counted and
    /// not kept (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub controller_actions_left_out: u64,
    pub zone: ZoneReport,
    pub zones: Vec<ZoneInfo>,
    /// Every node's kswapd's CPU time, summed (each node's is in `nodes`).
    pub kswapd_cpu_s: f64,
    pub rstat_flushes: u64,
    /// Memcgs visited by rstat flushes.
    pub rstat_flushed_memcgs: u64,
    /// Refaults judged differently than exact statistics would have judged them.
    pub stale_refault_decisions: u64,
    /// The policy's state at the end of the run, any policy's: `{"policy": <name>, "state":
    /// <Policy::state()>}`, plus MGLRU's debugfs views (`"debugfs"`: the
    /// /sys/kernel/debug/lru_gen text, `"debugfs_full"`: lru_gen_full).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_state: Option<serde_json::Value>,
    /// A miniature scenario's run (`[sample]`): every count above is the miniature's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<SampleReport>,
    /// With `machine.nonmovable`: movable allocations' fallbacks to the other pageblocks
    /// (the kernel's mm_page_alloc_extfrag events), the watermark boosts they made, and the
    /// pageblocks they claimed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pageblocks: Option<PageblockReport>,
    /// `[report] profile` (`pagelab run --profile`): the CPU time by the kernel function that
    /// spent it, the tasks' and kswapd's apart, largest first (`mm::profile`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<Vec<crate::mm::profile::ProfileLine>>,
    /// The devices' queues (`[time.storage]`/`[time.swap]` `queue_depth`, or `machine.cpus`
    /// ≥ 2): requests, those that waited for a tag and how long, and the time in use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub devices: Option<BTreeMap<String, crate::block::QueueStat>>,
    /// With `machine.cpus` ≥ 2: what each CPU did, kswapd's waits, and the contended locks
    /// ([`crate::sched`], [`crate::locking`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sched: Option<SchedReport>,
    /// With two nodes or more (`[[machine.node]]`): each node's memory and allocations
    /// ([`NodeReport`]); absent on a machine of one node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<NodeReport>>,
    /// What the run warns about, each once (a seam policy whose candidates the kernel mostly
    /// could not take, with the seam's counts); absent when there is nothing to say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A lock whose calendar overflowed ([`crate::locking`]'s contract): its waits after the
/// sections it forgot are approximate, which the run says rather than hides.
fn lock_warnings(mm: &Mm) -> Vec<String> {
    let Some(r) = SchedReport::of(mm, 1) else { return Vec::new() };
    r.locks
        .iter()
        .filter(|(_, l)| l.forgotten > 0)
        .map(|(name, l)| {
            format!(
                "{name}: {} busy spans dropped from a full lock calendar ({} kept at most; the actors' clocks spread {:.3} s apart): the waits after them are approximate",
                l.forgotten, l.calendar_peak, r.horizon_lag_max_s
            )
        })
        .collect()
}

/// Each workload's tasks' latency histograms merged, by workload name (workloads whose tasks
/// did no operation are left out).
fn workload_latency<P: Policy>(s: &Scenario, m: &Machine<P>) -> BTreeMap<String, crate::hist::Latency> {
    let mut by = vec![crate::hist::Histogram::default(); s.workloads.len()];
    for t in &m.tasks {
        if let Some(h) = by.get_mut(t.workload) {
            h.merge(&t.latency);
        }
    }
    s.workloads.iter().zip(&by).filter_map(|(w, h)| Some((w.name.clone(), h.latency()?))).collect()
}

/// A workload's application cache in a [`Report`]: the cache blocks its jobs' reads found
/// (a load of the cache's anonymous region) and missed (a read of the file), counted as the
/// generator decides them, which is up to the simulator's lookahead (4 operations a task)
/// before the operations run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct AppCacheReport {
    pub hits: u64,
    pub misses: u64,
    /// hits / (hits + misses), 0 without lookups.
    pub hit_ratio: f64,
}

/// An lsm workload's store in a [`Report`] (pagelab_workload's lsm.rs), as its generator
/// left it: the compactions are counted when they are made, which is up to the simulator's
/// lookahead before their operations run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LsmReport {
    /// Memtables written as L0 tables.
    pub flushes: u64,
    /// Compactions, each one table (or L0) and its overlapping tables of the level below.
    pub compactions: u64,
    /// Seek compactions begun (LevelDB's allowed_seeks run out); a part of `compactions`.
    pub seek_compactions: u64,
    /// With `compaction_thread`: the most full memtables that waited for their flush at
    /// once (1: LevelDB's `imm_`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub most_flushes_waiting: Option<u32>,
    /// With `compaction_thread`: the writers' waits for a flush (MakeRoomForWrite(): the
    /// memtable full and the last full one not yet flushed), in polls of 100 µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_stalls: Option<u64>,
    /// With `compaction_thread`: the writes delayed 1 ms at 8 L0 tables or more
    /// (MakeRoomForWrite()'s slowdown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_slowdowns: Option<u64>,
    /// With `compaction_thread`: the size compactions owed at the end of the run (the
    /// levels over their sizes, in tables to push down).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compactions_owed: Option<u64>,
}

/// Each lsm workload's store, by name (its first job's: the jobs share one store).
fn lsm<P: Policy>(s: &Scenario, m: &Machine<P>) -> BTreeMap<String, LsmReport> {
    let mut by: Vec<Option<LsmReport>> = vec![None; s.workloads.len()];
    for t in &m.tasks {
        let Some(slot) = by.get_mut(t.workload).filter(|r| r.is_none()) else { continue };
        *slot = t.lsm_counts();
    }
    s.workloads.iter().zip(by).filter_map(|(w, r)| Some((w.name.clone(), r?))).collect()
}

/// Each workload's application cache's hits and misses, its jobs summed, by name.
fn app_cache<P: Policy>(s: &Scenario, m: &Machine<P>) -> BTreeMap<String, AppCacheReport> {
    let mut by: Vec<Option<AppCacheReport>> = vec![None; s.workloads.len()];
    for t in &m.tasks {
        let (Some((hits, misses)), Some(r)) = (t.app_cache_counts(), by.get_mut(t.workload)) else { continue };
        let r = r.get_or_insert_with(AppCacheReport::default);
        r.hits += hits;
        r.misses += misses;
    }
    s.workloads
        .iter()
        .zip(by)
        .filter_map(|(w, r)| {
            let mut r = r?;
            r.hit_ratio = if r.hits + r.misses > 0 { r.hits as f64 / (r.hits + r.misses) as f64 } else { 0.0 };
            Some((w.name.clone(), r))
        })
        .collect()
}

/// One `[[event]]` in a [`Report`]: the write, the bytes it asked reclaim for (memory.reclaim:
/// the request; memory.high and memory.max: the usage above the new value when written),
/// the bytes reclaimed, the modeled time the write took, and its result: `ok`, `EAGAIN`
/// (memory.reclaim reclaimed less than asked: the kernel's write fails with it) or `not_run`
/// (due after the run's end).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CgroupEventReport {
    pub at_s: f64,
    pub cgroup: String,
    pub file: &'static str,
    /// What was written, in bytes (memory.high/memory.max: `null` for "max").
    pub value_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swappiness: Option<u32>,
    pub asked_bytes: u64,
    pub reclaimed_bytes: u64,
    pub taken_s: f64,
    pub result: &'static str,
}

impl CgroupEventReport {
    fn of(s: &Scenario, outcomes: &[crate::sim::WriteOutcome], mm: &Mm) -> Vec<CgroupEventReport> {
        use crate::mm::memcontrol::{WriteKind, PAGE_COUNTER_MAX};
        const PAGE: u64 = pagelab_workload::PAGE_SIZE;
        let value = |kind: WriteKind| match kind {
            WriteKind::Reclaim { pages, .. } => Some(pages * PAGE),
            WriteKind::High(p) | WriteKind::Max(p) => (p != PAGE_COUNTER_MAX).then_some(p * PAGE),
        };
        let swappiness = |kind: WriteKind| match kind {
            WriteKind::Reclaim { swappiness, .. } => swappiness,
            _ => None,
        };
        let ran = outcomes.iter().map(|o| CgroupEventReport {
            at_s: o.at_ns as f64 / 1e9,
            cgroup: mm.memcgs.get(o.memcg).path.clone(),
            file: o.kind.file(),
            value_bytes: value(o.kind),
            swappiness: swappiness(o.kind),
            asked_bytes: o.result.asked_pages * PAGE,
            reclaimed_bytes: o.result.reclaimed_pages * PAGE,
            taken_s: o.taken_ns as f64 / 1e9,
            result: if o.result.eagain { "EAGAIN" } else { "ok" },
        });
        let not_run = s.events.iter().skip(outcomes.len()).map(|e| CgroupEventReport {
            at_s: e.at_ns as f64 / 1e9,
            cgroup: e.cgroup.clone(),
            file: e.kind.file(),
            value_bytes: value(e.kind),
            swappiness: swappiness(e.kind),
            asked_bytes: 0,
            reclaimed_bytes: 0,
            taken_s: 0.0,
            result: "not_run",
        });
        ran.chain(not_run).collect()
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One action of a controller (crate::sim::controller): when, who, on which cgroup, what
/// (`memory.reclaim`, `memory.high`, `memory.max`, `kill` or `hold`), and what it did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ControllerActionReport {
    pub at_s: f64,
    pub controller: String,
    pub cgroup: String,
    pub action: &'static str,
    /// What was written, in bytes (memory.high/memory.max: `null` for "max"; kill and hold:
    /// `null`).
    pub value_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swappiness: Option<u32>,
    pub asked_bytes: u64,
    pub reclaimed_bytes: u64,
    pub killed_tasks: u64,
    pub freed_bytes: u64,
    pub taken_s: f64,
    /// `ok`, or `EAGAIN` (memory.reclaim could not reclaim the amount).
    pub result: &'static str,
    /// The controller's reason (senpai: the stall it saw against its target).
    pub note: String,
}

impl ControllerActionReport {
    fn of(outcomes: &[crate::sim::controller::ActOutcome], mm: &Mm) -> Vec<ControllerActionReport> {
        use crate::mm::memcontrol::{WriteKind, PAGE_COUNTER_MAX};
        use crate::sim::controller::Action;
        const PAGE: u64 = pagelab_workload::PAGE_SIZE;
        outcomes
            .iter()
            .map(|o| {
                let (value_bytes, swappiness) = match o.act.action {
                    Action::Write(WriteKind::Reclaim { pages, swappiness }) => (Some(pages * PAGE), swappiness),
                    Action::Write(WriteKind::High(p) | WriteKind::Max(p)) => ((p != PAGE_COUNTER_MAX).then_some(p * PAGE), None),
                    Action::Kill | Action::Hold => (None, None),
                };
                ControllerActionReport {
                    at_s: o.at_ns as f64 / 1e9,
                    controller: o.controller.clone(),
                    cgroup: mm.memcgs.get(o.act.memcg).path.clone(),
                    action: o.act.action.name(),
                    value_bytes,
                    swappiness,
                    asked_bytes: o.result.asked_pages * PAGE,
                    reclaimed_bytes: o.result.reclaimed_pages * PAGE,
                    killed_tasks: o.killed_tasks,
                    freed_bytes: o.freed_pages * PAGE,
                    taken_s: o.taken_ns as f64 / 1e9,
                    result: if o.result.eagain { "EAGAIN" } else { "ok" },
                    note: o.act.note.clone(),
                }
            })
            .collect()
    }

    /// The text report's lines: per controller and action, the count, the bytes reclaimed
    /// and the tasks killed, then every kill.
    fn summary(actions: &[ControllerActionReport]) -> String {
        use std::fmt::Write;
        let mut by: BTreeMap<(&str, &str), (u64, u64, u64, u64)> = BTreeMap::new();
        for a in actions {
            let e = by.entry((&a.controller, a.action)).or_default();
            e.0 += 1;
            e.1 += a.reclaimed_bytes;
            e.2 += a.killed_tasks;
            e.3 += (a.result == "EAGAIN") as u64;
        }
        let mut out = String::new();
        for ((c, action), (n, reclaimed, killed, eagain)) in by {
            let _ = write!(out, "controller {c}: {n} x {action}");
            if reclaimed > 0 || action == "memory.reclaim" {
                let _ = write!(out, ", reclaimed {} B", thousands(reclaimed));
            }
            if eagain > 0 {
                let _ = write!(out, ", {eagain} EAGAIN");
            }
            if killed > 0 {
                let _ = write!(out, ", {killed} tasks killed");
            }
            out.push('\n');
        }
        for a in actions.iter().filter(|a| a.action == "kill") {
            let _ = writeln!(
                out,
                "controller {} killed {} at {:.3} s: {} tasks, {} B freed ({})",
                a.controller,
                a.cgroup,
                a.at_s,
                a.killed_tasks,
                thousands(a.freed_bytes),
                a.note
            );
        }
        out
    }
}

/// One node of a machine of several (the report's `nodes`): its zones, managed and free
/// pages at the end, and its NUMA allocation events as /sys/devices/system/node/nodeN/numastat
/// counts them (mm/vmstat.c, zone_statistics(), 6.1 and 6.12).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeReport {
    pub node: usize,
    pub zones: Vec<&'static str>,
    pub managed: u64,
    pub free: u64,
    pub numa_hit: u64,
    pub numa_miss: u64,
    pub numa_foreign: u64,
    pub numa_local: u64,
    pub numa_other: u64,
    /// Pages scanned and reclaimed from the node's lruvecs by its kswapd and by direct and
    /// memcg reclaim ([`crate::mm::mmzone::Node::pgscan`]).
    pub pgscan_kswapd: u64,
    pub pgscan_direct: u64,
    pub pgsteal_kswapd: u64,
    pub pgsteal_direct: u64,
    /// The node's pages on the LRU lists, all memcgs' lruvecs on it (the node's
    /// nr_inactive_anon … nr_unevictable summed).
    pub lru_pages: u64,
    pub kswapd_cpu_s: f64,
}

impl NodeReport {
    /// Each node's report, on a machine of two nodes or more.
    pub fn of(mm: &crate::mm::Mm) -> Option<Vec<NodeReport>> {
        use crate::mm::mmzone::NumaStat;
        (mm.nodes.len() > 1).then(|| {
            mm.nodes
                .iter()
                .enumerate()
                .map(|(nid, n)| NodeReport {
                    node: nid,
                    zones: n.zones.z.iter().map(|z| z.name).collect(),
                    managed: n.zones.managed(),
                    free: mm.node_zones(nid).map(|z| mm.zone_free(z)).sum(),
                    numa_hit: n.numa[NumaStat::Hit as usize],
                    numa_miss: n.numa[NumaStat::Miss as usize],
                    numa_foreign: n.numa[NumaStat::Foreign as usize],
                    numa_local: n.numa[NumaStat::Local as usize],
                    numa_other: n.numa[NumaStat::Other as usize],
                    pgscan_kswapd: n.pgscan[0],
                    pgscan_direct: n.pgscan[1],
                    pgsteal_kswapd: n.pgsteal[0],
                    pgsteal_direct: n.pgsteal[1],
                    lru_pages: crate::mm::vmstat::Lru::ALL.iter().map(|&l| mm.pgdat_lru_size(nid, l)).sum(),
                    kswapd_cpu_s: n.kswapd_cpu_ns as f64 / 1e9,
                })
                .collect()
        })
    }
}

/// The report's `sched` section (`machine.cpus` ≥ 2).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchedReport {
    pub cpus: u32,
    /// Per CPU, in seconds of modeled time: busy, and of it reclaim and lock spinning.
    pub cpu: Vec<CpuReport>,
    /// Of all CPUs' time over the run: busy, in reclaim, spinning on locks (0 to 1).
    pub busy_share: f64,
    pub reclaim_share: f64,
    pub lock_spin_share: f64,
    /// The kswapds' time runnable without a CPU, and their steps that waited (every node's
    /// kswapd, summed).
    pub kswapd_runq_wait_s: f64,
    pub kswapd_waits: u64,
    /// Bursts (the CPUs' `runs`) that ran on another CPU than their actor's burst before,
    /// tasks' and kswapds' (schedstat's `nr_migrations`, summed).
    pub migrations: u64,
    /// Each lock class, summed over its instances: `lru_lock` (every lruvec's), `i_pages`
    /// (every file's mapping), `swap_lock` (the swap device's `si->lock`), `swap_cache`
    /// (every swap cache address space's), `zone_lock` (every zone's).
    pub locks: BTreeMap<String, crate::locking::LockSummary>,
    /// The furthest a lock request ran ahead of the scheduler's horizon (the slowest actor's
    /// clock): the span a lock's calendar covers.
    pub horizon_lag_max_s: f64,
    /// Times a task's direct or memcg reclaim left its CPU at a cond_resched() point for an
    /// actor whose clock was earlier, and went on later where it stopped.
    pub reclaim_yields: u64,
    /// Direct reclaimers that too_many_isolated() made sleep (reclaim_throttle()'s
    /// VMSCAN_THROTTLE_ISOLATED, which the kernel traces as mm_vmscan_throttled).
    pub isolated_throttle: IsolatedThrottle,
}

/// The report's `sched.isolated_throttle` ([`crate::mm::vmscan::too_many_isolated`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IsolatedThrottle {
    /// Sleeps, and their time in seconds.
    pub sleeps: u64,
    pub sleep_s: f64,
    /// Sleeps after which the node still had too many isolated, so the list was skipped.
    pub gave_up: u64,
}

/// One CPU's time in a [`SchedReport`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CpuReport {
    pub busy_s: f64,
    pub reclaim_s: f64,
    pub lock_spin_s: f64,
    pub runs: u64,
}

impl SchedReport {
    fn of(mm: &Mm, elapsed_ns: u64) -> Option<SchedReport> {
        let sched = mm.sched.as_ref()?;
        let stats = &sched.cpus.stats;
        let total = (elapsed_ns as f64 * stats.len() as f64).max(1.0);
        let sum = |f: fn(&crate::sched::CpuStat) -> u64| stats.iter().map(f).sum::<u64>() as f64;
        use crate::locking::SpinLock;
        // A lock class: its instances' counts summed.
        let class = |locks: &mut dyn Iterator<Item = &SpinLock>| {
            let mut s = crate::locking::LockStat::default();
            locks.for_each(|l| s.merge(&l.stat));
            s
        };
        let memcg_lru_locks = mm.memcgs.cg.iter().flat_map(|m| m.lruvecs()).map(|l| &l.lru_lock);
        let lru = class(&mut memcg_lru_locks.chain(mm.nodes.iter().map(|n| &n.lru_lock)));
        let i_pages = class(&mut mm.space.objects.iter().map(|o| &o.i_pages));
        let swap_cache = class(&mut mm.swap.cache_locks().iter());
        let zone = class(&mut mm.nodes.iter().flat_map(|n| &n.zones.z).map(|z| &z.lock));
        Some(SchedReport {
            cpus: sched.cpus.len(),
            cpu: stats
                .iter()
                .map(|c| CpuReport {
                    busy_s: c.busy_ns as f64 / 1e9,
                    reclaim_s: c.reclaim_ns as f64 / 1e9,
                    lock_spin_s: c.lock_spin_ns as f64 / 1e9,
                    runs: c.runs,
                })
                .collect(),
            busy_share: sum(|c| c.busy_ns) / total,
            reclaim_share: sum(|c| c.reclaim_ns) / total,
            lock_spin_share: sum(|c| c.lock_spin_ns) / total,
            kswapd_runq_wait_s: sched.kswapd.iter().map(|k| k.runq_wait_ns).sum::<u64>() as f64 / 1e9,
            kswapd_waits: sched.kswapd.iter().map(|k| k.waits).sum(),
            migrations: sched.tasks.iter().chain(&sched.kswapd).map(|e| e.migrations).sum(),
            locks: BTreeMap::from([
                ("lru_lock".to_string(), lru.summary()),
                ("i_pages".to_string(), i_pages.summary()),
                ("swap_lock".to_string(), mm.swap.lock.stat.summary()),
                ("swap_cache".to_string(), swap_cache.summary()),
                ("zone_lock".to_string(), zone.summary()),
            ]),
            horizon_lag_max_s: sched.horizon_lag_max_ns as f64 / 1e9,
            reclaim_yields: sched.reclaim_yields,
            isolated_throttle: IsolatedThrottle {
                sleeps: mm.nodes.iter().map(|n| n.reclaim.isolated.throttled).sum(),
                sleep_s: mm.nodes.iter().map(|n| n.reclaim.isolated.throttled_ns).sum::<u64>() as f64 / 1e9,
                gave_up: mm.nodes.iter().map(|n| n.reclaim.isolated.gave_up).sum(),
            },
        })
    }
}

/// The report's `pageblocks` section.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PageblockReport {
    pub fallbacks: u64,
    pub boosts: u64,
    pub claims: u64,
}

/// The report's `policy_state` section: the policy's name and state, and its debugfs views
/// where it has them (MGLRU).
fn policy_state<P: Policy>(policy: &P, mm: &Mm) -> Option<serde_json::Value> {
    let mut out = serde_json::json!({ "policy": policy.name() });
    if let Some(state) = policy.state(mm) {
        out["state"] = state;
    }
    if let Some(text) = policy.debugfs(mm) {
        out["debugfs"] = text.into();
    }
    if let Some(text) = policy.debugfs_full(mm) {
        out["debugfs_full"] = text.into();
    }
    Some(out)
}

fn events_map(e: &Events) -> BTreeMap<String, u64> {
    Ev::ALL.iter().map(|&ev| (ev.name().to_string(), e.get(ev))).collect()
}

/// memory.stat (sizes in bytes, events in counts), memory.current, memory.swap.current and
/// memory.events of every cgroup, the root included.
fn memcg_stats(mm: &Mm) -> BTreeMap<String, BTreeMap<String, u64>> {
    // Per-memcg page kinds, local, from one walk over the frames.
    let n = mm.memcgs.cg.len();
    let (mut anon, mut file, mut dirty, mut wb, mut swapcached, mut mapped) =
        (vec![0u64; n], vec![0u64; n], vec![0u64; n], vec![0u64; n], vec![0u64; n], vec![0u64; n]);
    for f in &mm.folios.f {
        if f.vpn == NIL {
            continue;
        }
        let m = f.memcg as usize;
        if f.test(pg::SWAPBACKED) {
            anon[m] += 1;
            if f.test(pg::SWAPCACHE) {
                swapcached[m] += 1;
            }
        } else {
            file[m] += 1;
            if f.test(pg::DIRTY) {
                dirty[m] += 1;
            }
            if f.test(pg::MAPPED) {
                mapped[m] += 1;
            }
        }
        if f.test(pg::WRITEBACK) {
            wb[m] += 1;
        }
    }
    let mut out = BTreeMap::new();
    for c in &mm.memcgs.cg {
        let sub = mm.memcgs.subtree(c.id);
        let sum = |v: &[u64]| sub.iter().map(|&m| v[m as usize]).sum::<u64>() * 4096;
        let mut s = BTreeMap::new();
        s.insert("anon".to_string(), sum(&anon));
        s.insert("file".to_string(), sum(&file));
        s.insert("file_mapped".to_string(), sum(&mapped));
        s.insert("file_dirty".to_string(), sum(&dirty));
        s.insert("file_writeback".to_string(), sum(&wb));
        s.insert("swapcached".to_string(), sum(&swapcached));
        for lru in Lru::ALL {
            s.insert(lru.memcg_name().to_string(), mm.memcgs.hierarchical_lru(c.id, lru) * 4096);
        }
        let e = mm.memcgs.hierarchical_events(c.id);
        for ev in crate::mm::memcontrol::MEMORY_STAT_EVENTS {
            s.insert(ev.name().to_string(), e.get(ev));
        }
        s.insert("pgscan".into(), e.get(Ev::PgScanKswapd) + e.get(Ev::PgScanDirect));
        s.insert("pgsteal".into(), e.get(Ev::PgStealKswapd) + e.get(Ev::PgStealDirect));
        s.insert("memory.current".into(), c.usage * 4096);
        s.insert("memory.swap.current".into(), c.swap_usage * 4096);
        let me = &c.memory_events;
        s.insert("memory.events.low".into(), me.low);
        s.insert("memory.events.high".into(), me.high);
        s.insert("memory.events.max".into(), me.max);
        s.insert("memory.events.oom".into(), me.oom);
        s.insert("memory.events.oom_kill".into(), me.oom_kill);
        out.insert(c.path.clone(), s);
    }
    out
}

/// Pressure by cgroup path, from a list indexed by memcg id.
fn by_cgroup(mm: &Mm, p: &[crate::sched::psi::Pressure]) -> BTreeMap<String, crate::sched::psi::Pressure> {
    mm.memcgs.cg.iter().zip(p).map(|(c, &p)| (c.path.clone(), p)).collect()
}

fn vmstat_now(mm: &Mm) -> BTreeMap<String, u64> {
    let mut v = events_map(&mm.events);
    for (k, val) in crate::mm::vmstat::gauges(mm) {
        v.insert(k.to_string(), val);
    }
    // The name for the single zone's allocation stalls.
    v.insert("allocstall".to_string(), mm.events.get(Ev::AllocStall));
    v
}

/// The `memory.stat` block of the text table: memory.current and memory.stat's keys in the
/// order mm/memcontrol.c: memory_stat_format() prints them (sizes, the workingset events,
/// pgscan/pgsteal, then memcg_vm_event_stat[]: 6.1 order, pgfault and pgmajfault first; 6.12
/// lists them after the pgscan_*/pgsteal_* split, which the text leaves to the JSON), then
/// memory.swap.current and memory.events.
const MEMORY_STAT_TEXT: [&str; 26] = [
    "memory.current",
    "anon",
    "file",
    "file_dirty",
    "file_writeback",
    "inactive_anon",
    "active_anon",
    "inactive_file",
    "active_file",
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
    "workingset_restore_file",
    "pgscan",
    "pgsteal",
    "pgfault",
    "pgmajfault",
    "pgrefill",
    "pgactivate",
    "pgdeactivate",
    "memory.swap.current",
    "memory.events.max",
    "memory.events.high",
    "memory.events.low",
    "memory.events.oom_kill",
];

/// `n` with a comma between each group of three digits: `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `x` rounded to `decimals` places, its whole part with thousands separators: `68,913.25`.
pub fn thousands_f64(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let text = format!("{:.decimals$}", x.abs());
    let (whole, frac) = text.split_once('.').map_or((text.as_str(), None), |(w, f)| (w, Some(f)));
    let sign = if x < 0.0 && text.bytes().any(|b| b.is_ascii_digit() && b != b'0') { "-" } else { "" };
    let whole = whole.parse::<u64>().map_or_else(|_| whole.to_string(), thousands);
    match frac {
        Some(f) => format!("{sign}{whole}.{f}"),
        None => format!("{sign}{whole}"),
    }
}

/// One `name value unit` line of the text table.
fn line(out: &mut String, name: &str, value: u64, unit: &str) {
    let value = thousands(value);
    let l = format!("  {name:<28} {value:>14} {unit}");
    let _ = writeln!(out, "{}", l.trim_end());
}

impl Report {
    /// Collects the report of a finished run.
    pub fn collect<P: Policy>(s: &Scenario, m: &Machine<P>) -> Report {
        let mm = &m.mm;
        let elapsed = m.elapsed_ns();
        let elapsed_s = elapsed as f64 / 1e9;
        let mut series = Vec::new();
        let mut prev = Events::default();
        let mut prev_ops = 0;
        let mut prev_task_ops = vec![0; m.tasks.len()];
        let mut prev_task_steps = vec![0; m.tasks.len()];
        let mut prev_latency = crate::hist::Histogram::default();
        for smp in &m.samples {
            let mut delta = Events::default();
            for (i, d) in delta.0.iter_mut().enumerate() {
                *d = smp.events.0[i] - prev.0[i];
            }
            let mut v = events_map(&delta);
            for (k, val) in &smp.gauges {
                v.insert(k.to_string(), *val);
            }
            let task_ops = smp.task_ops.iter().zip(&prev_task_ops).enumerate().map(|(i, (now, before))| (mm.tasks[i].name.clone(), now - before)).collect();
            let task_workload_ops = smp
                .task_steps
                .iter()
                .zip(&prev_task_steps)
                .enumerate()
                .filter(|(i, _)| m.tasks[*i].workload_ops().is_some())
                .map(|(i, (now, before))| (mm.tasks[i].name.clone(), now - before))
                .collect();
            let latency = smp.latency.since(&prev_latency).latency();
            series.push(SeriesPoint {
                t_s: smp.t_ns as f64 / 1e9,
                ops: smp.ops - prev_ops,
                task_ops,
                task_workload_ops,
                vmstat: v,
                policy_state: smp.policy.clone(),
                latency,
                pressure: smp.pressure.first().copied().unwrap_or_default(),
                memory_pressure: by_cgroup(mm, &smp.pressure).into_iter().filter(|(path, _)| path != "/").collect(),
                memory_current: mm.memcgs.cg.iter().zip(&smp.current).filter(|(c, _)| c.path != "/").map(|(c, &p)| (c.path.clone(), p * 4096)).collect(),
            });
            prev_latency = smp.latency.clone();
            prev_task_ops.clone_from(&smp.task_ops);
            prev_task_steps.clone_from(&smp.task_steps);
            prev = smp.events.clone();
            prev_ops = smp.ops;
        }
        let ops: u64 = m.tasks.iter().map(|t| t.ops).sum();
        let fill_ops: u64 = m.tasks.iter().map(|t| t.fill_ops).sum();
        let tasks = m
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let tm = &mm.tasks[i];
                let el = (t.end_ns - t.start_ns) as f64 / 1e9;
                TaskReport {
                    name: tm.name.clone(),
                    cgroup: mm.memcgs.get(tm.memcg).path.clone(),
                    ops: t.ops,
                    fill_ops: t.fill_ops,
                    workload_ops: t.workload_ops(),
                    respawns: t.respawns,
                    elapsed_s: el,
                    ops_per_s: if el > 0.0 { t.ops as f64 / el } else { 0.0 },
                    io_wait_s: tm.io_wait_ns as f64 / 1e9,
                    cpu_wait_s: match (&mm.one_cpu, &mm.sched) {
                        (Some(_), _) => Some(tm.cpu_wait_ns as f64 / 1e9),
                        (None, Some(sched)) => Some(sched.tasks[i].runq_wait_ns as f64 / 1e9),
                        (None, None) => None,
                    },
                    cpu_s: mm.sched.as_ref().map(|_| tm.cpu_ns as f64 / 1e9),
                    lock_spin_s: mm.sched.as_ref().map(|s| s.tasks[i].lock_spin_ns as f64 / 1e9),
                    migrations: mm.sched.as_ref().map(|s| s.tasks[i].migrations),
                    reclaim_s: tm.reclaim_ns as f64 / 1e9,
                    oom_killed: tm.killed,
                    pace: t.pacing.as_deref().map(|p| PaceReport {
                        accesses: p.accesses,
                        late: p.late,
                        behind_max_s: p.behind_max_ns as f64 / 1e9,
                        behind_mean_s: if p.accesses == 0 { 0.0 } else { p.behind_sum_ns as f64 / p.accesses as f64 / 1e9 },
                        behind_end_s: p.behind_last_ns as f64 / 1e9,
                    }),
                    lockstep: m.locks.get(i).filter(|l| l.leader.is_some() || !l.followers.is_empty()).map(|l| LockstepReport {
                        leader: l.leader.map(|(t, _)| mm.tasks[t].name.clone()),
                        ratio: l.leader.map(|(_, r)| r),
                        followers: l.followers.iter().map(|&f| mm.tasks[f].name.clone()).collect(),
                        waits: l.waits,
                        wait_s: l.wait_ns as f64 / 1e9,
                    }),
                    latency: t.latency.latency(),
                }
            })
            .collect();
        Report {
            provenance: Provenance::of(s),
            scenario: s.name.clone(),
            kernel: s.machine.kernel.name().to_string(),
            policy: m.policy.name().to_string(),
            vmstat: vmstat_now(mm),
            memcg: memcg_stats(mm),
            pressure: BTreeMap::from([("memory".to_string(), m.pressure.first().copied().unwrap_or_default())]),
            memory_pressure: by_cgroup(mm, &m.pressure),
            series,
            elapsed_s,
            ops,
            fill_ops,
            throughput_ops_s: if elapsed_s > 0.0 { ops as f64 / elapsed_s } else { 0.0 },
            tasks,
            workload_latency: workload_latency(s, m),
            app_cache: app_cache(s, m),
            lsm: lsm(s, m),
            oom_kills: mm.oom_kills.clone(),
            cgroup_events: CgroupEventReport::of(s, &m.write_outcomes, mm),
            controller_actions: ControllerActionReport::of(&m.control_outcomes, mm),
            controller_actions_left_out: m.control_left_out,
            zone: ZoneReport {
                managed: mm.nodes[0].zones.managed(),
                min_free_kbytes: mm.nodes[0].zones.min_free_kbytes,
                min: mm.nodes[0].zones.z.iter().map(|z| z.wmark_min).sum(),
                low: mm.nodes[0].zones.z.iter().map(|z| z.wmark_low).sum(),
                high: mm.nodes[0].zones.high_wmarks(),
            },
            zones: mm.nodes[0]
                .zones
                .z
                .iter()
                .map(|z| ZoneInfo { name: z.name, managed: z.managed, min: z.wmark_min, low: z.wmark_low, high: z.wmark_high, protection: z.lowmem_reserve })
                .collect(),
            kswapd_cpu_s: mm.nodes.iter().map(|n| n.kswapd_cpu_ns).sum::<u64>() as f64 / 1e9,
            rstat_flushes: mm.memcgs.nr_flushes,
            rstat_flushed_memcgs: mm.memcgs.flushed_memcgs,
            stale_refault_decisions: mm.memcgs.stale_refault_decisions,
            policy_state: policy_state(&m.policy, mm),
            sample: s.sample.map(|spec| SampleReport {
                rate: spec.rate,
                seed: spec.seed,
                scale: spec.scale,
                dropped_ops: m.tasks.iter().map(|t| t.dropped_ops).sum(),
                kept_pages: m.sampled_pages,
            }),
            pageblocks: mm.pageblocks.as_ref().map(|p| PageblockReport { fallbacks: p.fallbacks, boosts: p.boosts, claims: p.claims }),
            sched: SchedReport::of(mm, m.elapsed_ns()),
            devices: (mm.sched.is_some() || mm.file_dev.cost.queue_depth > 0 || mm.swap_dev.cost.queue_depth > 0)
                .then(|| BTreeMap::from([("storage".to_string(), mm.file_dev.tags.stat.clone()), ("swap".to_string(), mm.swap_dev.tags.stat.clone())])),
            profile: s.report_profile.then(|| mm.profile.lines()),
            nodes: NodeReport::of(mm),
            warnings: {
                let mut w = m.policy.warnings(mm);
                w.extend(lock_warnings(mm));
                w
            },
        }
    }

    /// How the run ended for its tasks: the OOM kills, and the tasks that did not finish
    /// their work (OOM-killed). A sweep's or curve's row with either is not comparable with
    /// its neighbours: its counters stop where the task died.
    pub fn outcome(&self) -> (u64, u64) {
        (self.oom_kills.len() as u64, self.tasks.iter().filter(|t| t.oom_killed).count() as u64)
    }

    /// The counters a reclaim developer looks at first, as a plain table: each with the unit
    /// its kernel name hides (`pgpgin` KiB, `nr_*` pages, memory.stat sizes bytes). The
    /// names stay the kernel's, as in the JSON.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} — kernel {}, policy {}: {} ops in {:.3} s modeled ({} ops/s)",
            self.scenario,
            self.kernel,
            self.policy,
            thousands(self.ops),
            self.elapsed_s,
            thousands_f64(self.throughput_ops_s, 0)
        );
        for k in &self.oom_kills {
            let _ = writeln!(out, "OOM kill at {:.3} s: {} (constraint {}, {} pages freed)", k.time_s, k.task, k.constraint, k.freed_pages);
        }
        for e in &self.cgroup_events {
            let value = e.value_bytes.map_or("max".to_string(), |b| format!("{b}"));
            let swappiness = e.swappiness.map_or(String::new(), |s| format!(" swappiness={s}"));
            let _ = writeln!(
                out,
                "{} at {:.3} s: {} <- {value}{swappiness}: asked {} B, reclaimed {} B in {:.6} s ({})",
                e.cgroup, e.at_s, e.file, e.asked_bytes, e.reclaimed_bytes, e.taken_s, e.result
            );
        }
        out.push_str(&ControllerActionReport::summary(&self.controller_actions));
        if self.controller_actions_left_out > 0 {
            let _ = writeln!(
                out,
                "controllers: {} more actions, not kept (the report keeps the first {})",
                self.controller_actions_left_out,
                crate::sim::MAX_CONTROL_RECORDS
            );
        }
        for t in &self.tasks {
            if let Some(p) = &t.pace {
                let _ = writeln!(
                    out,
                    "pace: {} issued {} of {} accesses after their trace time, at most {:.6} s behind (mean {:.6} s, at the end {:.6} s)",
                    t.name, p.late, p.accesses, p.behind_max_s, p.behind_mean_s, p.behind_end_s
                );
            }
            if let Some(l) = &t.lockstep {
                let whom = match &l.leader {
                    Some(leader) => format!("behind {leader} (ratio {})", l.ratio.unwrap_or(1.0)),
                    None => format!("leading {}", l.followers.join(", ")),
                };
                let _ = writeln!(out, "lockstep: {} {whom} waited {} times, {:.6} s", t.name, l.waits, l.wait_s);
            }
        }
        let _ = writeln!(out, "\n/proc/vmstat");
        let keys = [
            "pgpgin",
            "pgpgout",
            "pswpin",
            "pswpout",
            "pgfault",
            "pgmajfault",
            "pgactivate",
            "pgdeactivate",
            "pgrefill",
            "pgscan_kswapd",
            "pgscan_direct",
            "pgsteal_kswapd",
            "pgsteal_direct",
            "pgscan_anon",
            "pgscan_file",
            "pgsteal_anon",
            "pgsteal_file",
            "pgrotated",
            "workingset_refault_anon",
            "workingset_refault_file",
            "workingset_activate_anon",
            "workingset_activate_file",
            "workingset_restore_anon",
            "workingset_restore_file",
            "workingset_nodereclaim",
            "allocstall_movable",
            "pageoutrun",
            "oom_kill",
            "nr_free_pages",
            "nr_inactive_anon",
            "nr_active_anon",
            "nr_inactive_file",
            "nr_active_file",
            "nr_dirty",
            "nr_writeback",
            "workingset_nodes",
        ];
        for k in keys {
            line(&mut out, k, self.vmstat.get(k).copied().unwrap_or(0), vmstat_unit(k));
        }
        if let Some(p) = self.pressure.get("memory") {
            let _ = writeln!(out, "\n/proc/pressure/memory");
            for l in p.text().lines() {
                let _ = writeln!(out, "  {l}");
            }
        }
        for (path, s) in &self.memcg {
            if path == "/" && self.memcg.len() > 1 {
                continue;
            }
            let _ = writeln!(out, "\nmemory.stat {path}");
            for k in MEMORY_STAT_TEXT {
                line(&mut out, k, s.get(k).copied().unwrap_or(0), memcg_unit(k));
            }
            if let Some(p) = self.memory_pressure.get(path).filter(|_| path != "/") {
                let _ = writeln!(out, "\nmemory.pressure {path}");
                for l in p.text().lines() {
                    let _ = writeln!(out, "  {l}");
                }
            }
        }
        if self.tasks.iter().any(|t| t.latency.is_some()) {
            let _ = writeln!(out, "\noperation latency (modeled){:<6} {:>12} {:>12} {:>12} {:>12}", "", "p50 µs", "p99 µs", "p99.9 µs", "max µs");
            let us = |ns: u64| format!("{:.1}", ns as f64 / 1e3);
            for t in &self.tasks {
                if let Some(l) = &t.latency {
                    let _ = writeln!(out, "{:<33} {:>12} {:>12} {:>12} {:>12}", t.name, us(l.p50_ns), us(l.p99_ns), us(l.p999_ns), us(l.max_ns));
                }
            }
        }
        if !self.tasks.is_empty() {
            let _ = writeln!(out, "\n{:<24} {:>10} {:>10} {:>12} {:>10} {:>10}", "task", "ops", "elapsed s", "ops/s", "io wait s", "reclaim s");
            for t in &self.tasks {
                let _ = writeln!(
                    out,
                    "{:<24} {:>10} {:>10.3} {:>12} {:>10.3} {:>10.3}{}",
                    t.name,
                    thousands(t.ops),
                    t.elapsed_s,
                    thousands_f64(t.ops_per_s, 0),
                    t.io_wait_s,
                    t.reclaim_s,
                    if t.oom_killed { "  OOM-killed" } else { "" }
                );
            }
        }
        if let Some(sc) = &self.sched {
            sc.table(&mut out, &self.tasks);
        }
        if let Some(lines) = &self.profile {
            let _ = writeln!(out, "\nCPU by kernel function (the tasks' and kswapd's own shares)");
            let _ = writeln!(out, "{:<34} {:>10} {:>8} {:>10} {:>8}", "function", "tasks s", "tasks", "kswapd s", "kswapd");
            for l in lines {
                let _ = writeln!(
                    out,
                    "{:<34} {:>10.4} {:>7.2}% {:>10.4} {:>7.2}%",
                    l.function,
                    l.tasks_s,
                    l.tasks_share * 100.0,
                    l.kswapd_s,
                    l.kswapd_share * 100.0
                );
            }
        }
        out
    }
}

impl SchedReport {
    /// The text report's CPU and lock block: the shares of all CPUs' time, each task's CPU
    /// and waits, and each lock class.
    fn table(&self, out: &mut String, tasks: &[TaskReport]) {
        let pct = |x: f64| format!("{:.1}%", x * 100.0);
        let _ = writeln!(
            out,
            "\n{} CPUs: busy {}, in reclaim {}, spinning on locks {}; kswapd waited {:.6} s for a CPU; {} migrations in {} bursts",
            self.cpus,
            pct(self.busy_share),
            pct(self.reclaim_share),
            pct(self.lock_spin_share),
            self.kswapd_runq_wait_s,
            self.migrations,
            self.cpu.iter().map(|c| c.runs).sum::<u64>()
        );
        let _ = writeln!(out, "{:<24} {:>10} {:>12} {:>12} {:>10}", "task", "cpu s", "runq wait s", "lock spin s", "migrations");
        for t in tasks {
            let (cpu, wait, spin) = (t.cpu_s.unwrap_or(0.0), t.cpu_wait_s.unwrap_or(0.0), t.lock_spin_s.unwrap_or(0.0));
            let _ = writeln!(out, "{:<24} {cpu:>10.3} {wait:>12.3} {spin:>12.6} {:>10}", t.name, t.migrations.unwrap_or(0));
        }
        for (name, l) in &self.locks {
            let _ = writeln!(
                out,
                "{name}: {} acquisitions, {} contended, wait {:.6} s (p50 {} ns, p99 {} ns), held {:.6} s",
                thousands(l.acquisitions),
                thousands(l.contended),
                l.wait_ns as f64 / 1e9,
                thousands(l.wait_p50_ns),
                thousands(l.wait_p99_ns),
                l.hold_ns as f64 / 1e9
            );
            if l.forgotten > 0 {
                let _ = writeln!(out, "  (warning: {} sections dropped from a full calendar; waits after them are approximate)", thousands(l.forgotten));
            }
        }
        let t = &self.isolated_throttle;
        if t.sleeps > 0 {
            let _ = writeln!(
                out,
                "too_many_isolated: {} direct-reclaim sleeps, {:.6} s, {} gave the list up",
                thousands(t.sleeps),
                t.sleep_s,
                thousands(t.gave_up)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_print_with_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(68913), "68,913");
        assert_eq!(thousands(201277440), "201,277,440");
        assert_eq!(thousands_f64(68913.0, 2), "68,913.00");
        assert_eq!(thousands_f64(33073.4, 0), "33,073");
        assert_eq!(thousands_f64(-1234.5, 1), "-1,234.5");
        assert_eq!(thousands_f64(-0.001, 2), "0.00");
    }
}
