//! Controllers: userspace agents that watch cgroups' memory.pressure and statistics and write
//! their control files while the workloads run — senpai (Meta's TMO proactive reclaim,
//! [`Senpai`]), systemd-oomd's kill on memory pressure ([`Oomd`]), or a caller's own (the
//! Python package's controller classes implement [`Controller`] too).
//!
//! ## The contract a controller sees
//!
//! * **It ticks at modeled times.** [`Controller::tick`] runs every
//!   [`Controller::interval_ns`] of modeled time, first at one interval (not at 0), as a timed
//!   event of the machine: after IO completions, the flushers, kswapd and the `[[event]]`
//!   writes due at the same time, before the series' sample. The same scenario and seed give
//!   the same ticks and actions on any host and thread count.
//! * **It reads a snapshot taken at the tick** ([`CgroupStats`], every declared cgroup and the
//!   root): memory.current, memory.high, memory.max, memory.swap.current, the memory.stat
//!   keys that need no walk over the pages (the LRU sizes, the workingset and reclaim
//!   events), memory.events, and memory.pressure as a read of the file at that moment shows
//!   it (the same read as a series point), plus the live tasks.
//! * **It acts by returning [`Act`]s**, performed after the tick, in order, each through the
//!   path a process's write takes: memory.reclaim (mm/memcontrol.c: memory_reclaim(), with
//!   6.12's `swappiness=`), memory.high (memory_high_write()), memory.max
//!   (memory_max_write()), or a SIGKILL to every live task of the cgroup's subtree
//!   ([`kill`](crate::mm::oom_kill::kill_cgroup)). [`Action::Hold`] writes nothing and is
//!   reported (senpai's back-off in reclaim mode).
//! * **Who pays.** The writer is a process outside the workloads, as an `[[event]]`'s is:
//!   its reclaim counts as direct reclaim's, its CPU as no task's; the time the write took is
//!   reported.
//! * **Every action is in the report** (`controller_actions`: time, controller, cgroup,
//!   action, value, bytes asked and reclaimed, tasks killed, outcome and the controller's
//!   note), and in the text report's summary.
//! * **A controller that fails** ([`Controller::failure`], a Python exception) acts no more,
//!   and the run ends with its error.

use crate::mm::memcontrol::{MemcgId, WriteKind, PAGE_COUNTER_MAX};
use crate::mm::vmstat::Lru;
use crate::mm::Mm;
use crate::sched::psi::Pressure;

/// How the scenario reads a duration (`"1s"`, `"500ms"`): a caller's controller's interval too.
pub use pagelab_workload::parse_duration_ns;

const PAGE: u64 = pagelab_workload::PAGE_SIZE;

/// A cgroup as a controller reads it at a tick. Sizes in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct CgroupStats {
    pub memcg: MemcgId,
    pub path: String,
    /// memory.current.
    pub current: u64,
    /// memory.high and memory.max (`None`: "max").
    pub high: Option<u64>,
    pub max: Option<u64>,
    pub swap_current: u64,
    /// memory.stat's keys that need no walk over the pages, in memory_stat_format()'s order.
    pub stat: Vec<(&'static str, u64)>,
    /// memory.events: low, high, max, oom, oom_kill.
    pub events: [(&'static str, u64); 5],
    /// memory.pressure as read at the tick.
    pub pressure: Pressure,
    /// Tasks of the cgroup's subtree that are alive (not exited, not killed).
    pub live_tasks: u64,
}

/// What a controller does to a cgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// A write to memory.reclaim, memory.high or memory.max.
    Write(WriteKind),
    /// SIGKILL to every live task of the cgroup's subtree.
    Kill,
    /// Nothing written: a decision not to act, reported with its note.
    Hold,
}

impl Action {
    /// The name the report gives the action.
    pub fn name(self) -> &'static str {
        match self {
            Action::Write(k) => k.file(),
            Action::Kill => "kill",
            Action::Hold => "hold",
        }
    }
}

/// An action on one cgroup, with the controller's reason.
#[derive(Clone, Debug, PartialEq)]
pub struct Act {
    pub memcg: MemcgId,
    pub action: Action,
    pub note: String,
}

/// A controller: see the module's contract.
pub trait Controller {
    /// How the report names it (`senpai /app`, a Python class's name).
    fn name(&self) -> String;
    /// Modeled time between ticks, at least 1 ms.
    fn interval_ns(&self) -> u64;
    /// One tick at `now_ns`, reading `cgroups` (the root first, then the declared cgroups in
    /// declaration order); returns what to do, in order.
    fn tick(&mut self, now_ns: u64, cgroups: &[CgroupStats]) -> Vec<Act>;
    /// Why the controller stopped (a Python exception); `None` while it works.
    fn failure(&self) -> Option<String> {
        None
    }
}

/// What an action did, for the report.
#[derive(Clone, Debug, PartialEq)]
pub struct ActOutcome {
    pub at_ns: u64,
    pub controller: String,
    pub act: Act,
    pub result: crate::mm::memcontrol::WriteResult,
    /// Kill: the tasks killed and the resident pages their exit freed.
    pub killed_tasks: u64,
    pub freed_pages: u64,
    pub taken_ns: u64,
}

/// A cgroup's statistics for a controller at `at` (`pressure` read then, `live_tasks`
/// counted by the caller).
pub fn cgroup_stats(mm: &Mm, memcg: MemcgId, pressure: Pressure, live_tasks: u64) -> CgroupStats {
    let c = mm.memcgs.get(memcg);
    let limit = |p: u64| (p != PAGE_COUNTER_MAX).then_some(p * PAGE);
    let mut stat: Vec<(&'static str, u64)> = Lru::ALL.iter().map(|&l| (l.memcg_name(), mm.memcgs.hierarchical_lru(memcg, l) * PAGE)).collect();
    let e = mm.memcgs.hierarchical_events(memcg);
    for ev in crate::mm::memcontrol::MEMORY_STAT_EVENTS {
        stat.push((ev.name(), e.get(ev)));
    }
    let me = &c.memory_events;
    CgroupStats {
        memcg,
        path: c.path.clone(),
        current: c.usage * PAGE,
        high: limit(c.high),
        max: limit(c.max),
        swap_current: c.swap_usage * PAGE,
        stat,
        events: [("low", me.low), ("high", me.high), ("max", me.max), ("oom", me.oom), ("oom_kill", me.oom_kill)],
        pressure,
        live_tasks,
    }
}

/// Where senpai applies its pressure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenpaiMode {
    /// TMO's production mode: probe by writing memory.reclaim; back off by not reclaiming.
    Reclaim,
    /// senpai.py's mode: a memory.high limit lowered to probe and raised to back off.
    High,
}

/// `[[controller]] kind = "senpai"`, validated. Defaults: facebookincubator/senpai's
/// senpai.py (its argparse defaults: interval 6, pressure 10,000 µs, max_probe 0.01,
/// max_backoff 1.0, coeff_probe 10, coeff_backoff 20, min_size 100M, max_size 100G, and its
/// one-second loop), the mode TMO's (ASPLOS '22) memory.reclaim.
#[derive(Clone, Debug, PartialEq)]
pub struct SenpaiSpec {
    pub cgroup: String,
    pub mode: SenpaiMode,
    /// How often memory.pressure is read (senpai.py: `time.sleep(1)`).
    pub tick_ns: u64,
    /// Ticks between two probes (senpai.py `--interval`, in its 1 s ticks).
    pub interval_ticks: u64,
    /// The target: µs of `some` stall accumulated since the last adjustment
    /// (senpai.py `--pressure`).
    pub pressure_us: u64,
    pub max_probe: f64,
    pub max_backoff: f64,
    pub coeff_probe: f64,
    pub coeff_backoff: f64,
    /// Mode high: the limit's bounds, bytes.
    pub min_size: u64,
    pub max_size: u64,
    /// Mode reclaim: memory.reclaim's `swappiness=` (6.12).
    pub swappiness: Option<u32>,
}

/// `[[controller]] kind = "oomd"`, validated: systemd-oomd's ManagedOOMMemoryPressure=kill.
/// Defaults from systemd's src/oom/oomd-manager.h and oomd.conf(5): pressure is polled every
/// second (MEM_PRESSURE_INTERVAL_USEC), and a cgroup whose `full avg10` stays above
/// DefaultMemoryPressureLimit= 60% for DefaultMemoryPressureDurationSec= 30 s is killed.
#[derive(Clone, Debug, PartialEq)]
pub struct OomdSpec {
    pub cgroup: String,
    pub interval_ns: u64,
    /// In hundredths of a percent (6000: 60%).
    pub limit_pct_x100: u64,
    pub duration_ns: u64,
}

/// A `[[controller]]` table, validated.
#[derive(Clone, Debug, PartialEq)]
pub enum ControllerSpec {
    Senpai(SenpaiSpec),
    Oomd(OomdSpec),
}

impl ControllerSpec {
    pub fn cgroup(&self) -> &str {
        match self {
            ControllerSpec::Senpai(s) => &s.cgroup,
            ControllerSpec::Oomd(o) => &o.cgroup,
        }
    }

    /// The controller, acting on `memcg`.
    pub fn build(&self, memcg: MemcgId) -> Box<dyn Controller> {
        match self {
            ControllerSpec::Senpai(s) => Box::new(Senpai { spec: s.clone(), memcg, last_total_us: 0, cumulative_us: 0, grace: s.interval_ticks, limit: None }),
            ControllerSpec::Oomd(o) => Box::new(Oomd { spec: o.clone(), memcg, above_since: None }),
        }
    }
}

/// senpai (facebookincubator/senpai's senpai.py; TMO, Weiner et al., ASPLOS '22): every
/// tick it adds the growth of the cgroup's `some` stall total to what it has seen since its
/// last adjustment. Past the target it backs off at once; otherwise, once `interval` ticks
/// have passed since the last adjustment, it probes. Both steps grow with the square of the
/// error: a probe of `max_probe × min(1, (target / (seen · coeff_probe))²)` of the
/// cgroup, a back-off of `max_backoff × min(1, (seen / (target · coeff_backoff))²)`.
pub struct Senpai {
    spec: SenpaiSpec,
    memcg: MemcgId,
    last_total_us: u64,
    cumulative_us: u64,
    grace: u64,
    /// Mode high: the limit it last wrote.
    limit: Option<u64>,
}

impl Senpai {
    /// Mode high: the limit scaled by `1 + factor` (reset to memory.current when someone
    /// else changed memory.high), within its bounds, in whole pages.
    fn scaled_limit(&self, cg: &CgroupStats, factor: f64) -> u64 {
        let base = match self.limit {
            Some(l) if cg.high == Some(l) => l,
            _ => cg.current,
        };
        let limit = (base as f64 * (1.0 + factor)) as u64;
        limit.clamp(self.spec.min_size, self.spec.max_size) / PAGE * PAGE
    }

    fn adjust(&mut self, cg: &CgroupStats, factor: f64, note: String) -> Act {
        self.cumulative_us = 0;
        self.grace = self.spec.interval_ticks.saturating_sub(1);
        let action = match self.spec.mode {
            SenpaiMode::High => {
                let limit = self.scaled_limit(cg, factor);
                self.limit = Some(limit);
                Action::Write(WriteKind::High(limit / PAGE))
            }
            SenpaiMode::Reclaim if factor < 0.0 => {
                let pages = ((cg.current as f64 * -factor) as u64) / PAGE;
                if pages == 0 {
                    Action::Hold
                } else {
                    Action::Write(WriteKind::Reclaim { pages, swappiness: self.spec.swappiness })
                }
            }
            SenpaiMode::Reclaim => Action::Hold,
        };
        Act { memcg: self.memcg, action, note }
    }
}

impl Controller for Senpai {
    fn name(&self) -> String {
        format!("senpai {}", self.spec.cgroup)
    }
    fn interval_ns(&self) -> u64 {
        self.spec.tick_ns
    }
    fn tick(&mut self, _now_ns: u64, cgroups: &[CgroupStats]) -> Vec<Act> {
        let Some(cg) = cgroups.iter().find(|c| c.memcg == self.memcg) else { return Vec::new() };
        let total = cg.pressure.some.total_us;
        self.cumulative_us += total.saturating_sub(self.last_total_us);
        self.last_total_us = total;
        let (seen, target) = (self.cumulative_us, self.spec.pressure_us);
        if seen > target {
            let err = seen as f64 / target as f64 / self.spec.coeff_backoff;
            let factor = (err * err * self.spec.max_backoff).min(self.spec.max_backoff);
            let note = format!("backoff {factor:.4}: some stall {seen} us > target {target} us");
            return vec![self.adjust(cg, factor, note)];
        }
        if self.grace > 0 {
            self.grace -= 1;
            return Vec::new();
        }
        let err = target as f64 / seen.max(1) as f64 / self.spec.coeff_probe;
        let factor = (err * err * self.spec.max_probe).min(self.spec.max_probe);
        let note = format!("probe {factor:.4}: some stall {seen} us <= target {target} us");
        vec![self.adjust(cg, -factor, note)]
    }
}

/// systemd-oomd's ManagedOOMMemoryPressure=kill (src/oom/oomd-manager.c): every poll it
/// reads the cgroup's `full avg10`; once it has been above the limit for the duration, the
/// cgroup is killed. pagelab kills the watched cgroup itself (systemd-oomd picks, among the
/// watched unit's cgroups, the one that reclaims the most; a leaf is its own choice) and
/// starts counting again after a kill.
pub struct Oomd {
    spec: OomdSpec,
    memcg: MemcgId,
    above_since: Option<u64>,
}

impl Controller for Oomd {
    fn name(&self) -> String {
        format!("oomd {}", self.spec.cgroup)
    }
    fn interval_ns(&self) -> u64 {
        self.spec.interval_ns
    }
    fn tick(&mut self, now_ns: u64, cgroups: &[CgroupStats]) -> Vec<Act> {
        let Some(cg) = cgroups.iter().find(|c| c.memcg == self.memcg) else { return Vec::new() };
        let avg10_x100 = (cg.pressure.full.avg10 * 100.0).round() as u64;
        if avg10_x100 <= self.spec.limit_pct_x100 {
            self.above_since = None;
            return Vec::new();
        }
        let since = *self.above_since.get_or_insert(now_ns);
        if now_ns - since < self.spec.duration_ns || cg.live_tasks == 0 {
            return Vec::new();
        }
        self.above_since = None;
        let note =
            format!("full avg10 {:.2}% > {:.2}% for {:.0} s", cg.pressure.full.avg10, self.spec.limit_pct_x100 as f64 / 100.0, (now_ns - since) as f64 / 1e9);
        vec![Act { memcg: self.memcg, action: Action::Kill, note }]
    }
}
