//! Scenario files (TOML): the machine, its cgroups and the workloads, validated into a
//! [`Scenario`]. Every error names the file, the line when it can be found, the key and the
//! problem.
//!
//! This file holds the types (the file's tables as read, the validated [`MachineSpec`] and
//! [`Scenario`], [`ScenarioError`]) and reading a file. The rest, by concern:
//!
//! - [`overrides`]: `--set key=value` ([`with_overrides`]) and locating a key's line in the
//!   file for errors;
//! - [`build`]: validating the tables into a [`Scenario`], each table by a function of its own.

use std::fmt;
use std::path::Path;

use serde::Deserialize;

use crate::kernel::Kernel;
use crate::mm::memcontrol::{MemcgSpec, RstatMode};
use crate::mm::swapfile::DeviceKind;
use crate::mm::time::{Costs, DeviceCost};
use pagelab_workload::{Workload, WorkloadToml};

use crate::mm::workingset::RefaultSpec;
pub use crate::policy::lru_gen::MglruToml;
pub use crate::policy::PolicyKind;

mod build;
mod overrides;
#[cfg(test)]
mod tests;

pub use overrides::with_overrides;
use overrides::{apply_override, bad_flattened_key, line_of, locate, override_key};

/// A problem with a scenario, located as precisely as pagelab can.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: String,
    pub line: Option<usize>,
    pub key: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.key.is_empty()) {
            (Some(l), false) => write!(f, "{}:{}: `{}`: {}", self.file, l, self.key, self.message),
            (Some(l), true) => write!(f, "{}:{}: {}", self.file, l, self.message),
            (None, false) => write!(f, "{}: `{}`: {}", self.file, self.key, self.message),
            (None, true) => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

use pagelab_workload::schema::{CgroupToml, MachineToml};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TimeToml {
    /// Not an `Option`: a flattened `Option` turns a mistyped cost into `None`, silently.
    #[serde(flatten)]
    costs: Costs,
    swap: Option<DeviceCost>,
    storage: Option<DeviceCost>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportToml {
    interval: Option<String>,
    profile: Option<bool>,
}

/// `[workingset]`: the refault-distance model (mm/workingset.rs: [`RefaultModel`]) and the
/// choices the Kairui series leaves open, each defaulting per model.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkingsetToml {
    refault_model: Option<String>,
    putback_ages_nonresident: Option<bool>,
    mglru_placement: Option<String>,
    mglru_refs: Option<String>,
    mglru_pid: Option<String>,
    mglru_activate: Option<String>,
}

/// `[sample]`: run a miniature of the scenario (`crate::sim::sample`): `rate` R of every
/// object's pages in R of every size, the pages chosen by a spatial hash salted by `seed`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SampleToml {
    rate: Option<f64>,
    seed: Option<u64>,
}

/// `[[event]]`: a write to a cgroup's control file at a time: `reclaim` (memory.reclaim,
/// with 6.12's `swappiness`), `high` (memory.high) or `max` (memory.max), one per event.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EventToml {
    at: Option<String>,
    cgroup: Option<String>,
    reclaim: Option<String>,
    swappiness: Option<i64>,
    high: Option<String>,
    max: Option<String>,
}

/// `[[controller]]`: a controller of a cgroup (`kind = "senpai"` or `"oomd"`), one schema for
/// both kinds; a key of the other kind is refused by name (crate::sim::controller has the
/// defaults and their sources).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ControllerToml {
    kind: Option<String>,
    cgroup: Option<String>,
    interval: Option<String>,
    // senpai
    mode: Option<String>,
    tick: Option<String>,
    pressure: Option<String>,
    max_probe: Option<f64>,
    max_backoff: Option<f64>,
    coeff_probe: Option<f64>,
    coeff_backoff: Option<f64>,
    min_size: Option<String>,
    max_size: Option<String>,
    swappiness: Option<i64>,
    // oomd
    limit: Option<String>,
    duration: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioToml {
    machine: Option<MachineToml>,
    #[serde(default)]
    cgroup: Vec<CgroupToml>,
    #[serde(default)]
    workload: Vec<WorkloadToml>,
    time: Option<TimeToml>,
    report: Option<ReportToml>,
    mglru: Option<MglruToml>,
    sample: Option<SampleToml>,
    workingset: Option<WorkingsetToml>,
    #[serde(default)]
    event: Vec<EventToml>,
    #[serde(default)]
    controller: Vec<ControllerToml>,
}

/// The validated machine.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineSpec {
    pub memory_pages: u64,
    pub kernel: Kernel,
    /// `[machine] policy` with the `[[cgroup]] policy` choices, resolved from the registry.
    pub policy: crate::policy::registry::MachinePolicy,
    pub swap_device: DeviceKind,
    pub swap_pages: u64,
    pub storage: DeviceKind,
    pub min_free_kbytes: Option<u64>,
    pub watermark_scale_factor: u64,
    /// vm.percpu_pagelist_high_fraction (0: the kernel's default).
    pub percpu_pagelist_high_fraction: u64,
    /// `machine.cpus`: `Some(1)` makes kswapd share the one task's CPU; `Some(n)`, n ≥ 2:
    /// the tasks and kswapd share n CPUs ([`crate::sched`]) and locks are contended.
    pub cpus: Option<u32>,
    /// `machine.eevdf_turns`: EEVDF's turns and wake-up preemption with `cpus = 1` on 6.12
    /// (default true; false: the CPU shared half and half, kswapd never preempting).
    pub eevdf_turns: bool,
    /// `machine.zones`: x86-64's zones, or one zone holding all memory.
    pub zones: crate::mm::mmzone::ZoneLayout,
    /// `machine.nonmovable`: per zone name, its non-movable pageblocks, their free chunks by
    /// order and their frames on the per-CPU lists if known (empty: every pageblock movable).
    pub nonmovable: Vec<(String, u64, [u64; crate::mm::pageblock::NR_ORDERS], Option<u64>)>,
    /// vm.watermark_boost_factor.
    pub watermark_boost_factor: u64,
    /// `machine.zone_watermarks`: per zone name, the watermarks and lowmem reserves a running
    /// kernel shows (empty: computed from min_free_kbytes and the managed pages).
    pub zone_watermarks: Vec<(String, crate::mm::mmzone::ZoneWatermarks)>,
    pub reserved_pages: u64,
    pub kernel_used_pages: u64,
    pub shmem_pages: u64,
    pub shmem_active_pages: u64,
    /// The sysctls and settings the model reads as the kernel would (`mm::Config` holds them).
    pub tunables: crate::mm::Tunables,
    pub rstat: RstatMode,
    /// The period of the periodic rstat flush, ns (FLUSH_TIME; the oracle scales it to the
    /// emulated guest's clock).
    pub rstat_flush_ns: u64,
    pub refault_flush: crate::mm::memcontrol::RefaultFlush,
    pub update_path_flush: bool,
    /// `machine.seam_fallback`: seam cgroups keep the classic LRU under their policy, as
    /// cache_ext's kernel does ([`crate::policy::seam::Ext`]).
    pub seam_fallback: bool,
    /// `machine.miniature`: the sampling rate of a miniature simulation (1: a full machine).
    pub miniature: f64,
    /// `[[machine.node]]`, validated (empty: no node table, one node of everything).
    pub nodes: Vec<NodeSpec>,
}

/// One NUMA node of `[[machine.node]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    /// Its memory, pages (the nodes' add up to `MachineSpec::memory_pages`).
    pub memory_pages: u64,
    /// Its CPUs with `machine.cpus` set (`None` without a CPU model).
    pub cpus: Option<crate::sched::CpuSet>,
}

/// A validated scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub machine: MachineSpec,
    pub mglru: MglruToml,
    /// `[workingset]` (and its alias `[mglru] refault_distance`), resolved.
    pub workingset: RefaultSpec,
    /// `[mglru] fg` and `fg_reset`, resolved: MGLRU-FG's reset, or None when it is off.
    pub mglru_fg: Option<crate::mm::swap::FgReset>,
    pub costs: Costs,
    pub swap_cost: DeviceCost,
    pub storage_cost: DeviceCost,
    pub report_interval_ns: u64,
    /// `[report] profile` (`pagelab run --profile`): the report has the CPU time by kernel
    /// function.
    pub report_profile: bool,
    pub cgroups: Vec<MemcgSpec>,
    pub workloads: Vec<Workload>,
    /// `[sample]`: the scenario is a miniature of the one its file describes (every size
    /// below is already scaled).
    pub sample: Option<crate::sim::sample::SampleSpec>,
    /// Each workload's CPU set with `machine.cpus` ≥ 2 (`None` otherwise).
    pub workload_cpus: Vec<Option<crate::sched::CpuSet>>,
    /// `[[event]]`: writes to cgroups' control files at given times, in time order (ties in
    /// the file's order).
    pub events: Vec<crate::mm::memcontrol::CgroupWrite>,
    /// `[[controller]]`: the controllers that watch cgroups and act on them, in the file's
    /// order (crate::sim::controller).
    pub controllers: Vec<crate::sim::controller::ControllerSpec>,
    /// The `--set` overrides applied to the file, in order (a report's `provenance.set`).
    pub overrides: Vec<String>,
    /// The scenario document with the overrides applied, as TOML (a report's
    /// `provenance.scenario`): what ran, rerunnable without the file.
    pub resolved_toml: String,
}

/// The largest scenario file pagelab reads (16 MiB; the bundled ones are a few KiB).
pub const MAX_SCENARIO_BYTES: u64 = 16 << 20;

impl Scenario {
    /// Reads and validates a scenario file, applying `--set key=value` overrides first.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = Scenario::read_text(path)?;
        let name = path.file_stem().map_or("scenario".into(), |s| s.to_string_lossy().into_owned());
        Scenario::parse(&text, &file, &name, overrides)
    }

    /// Reads a scenario file's text: at most [`MAX_SCENARIO_BYTES`] (a path that never ends,
    /// such as /dev/zero, is not read until memory runs out), UTF-8 (an invalid byte is named
    /// by its line and byte offset). A pipe (`<(...)`) is read; a directory is refused.
    pub fn read_text(path: &Path) -> Result<String, ScenarioError> {
        let file = path.display().to_string();
        let err = |line: Option<usize>, message: String| ScenarioError { file: file.clone(), line, key: String::new(), message };
        std::fs::metadata(path).map_err(|e| err(None, format!("cannot read: {e}")))?;
        let f = pagelab_trace::open_file(path, false).map_err(|e| err(None, e.msg))?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_SCENARIO_BYTES + 1), &mut bytes).map_err(|e| err(None, format!("cannot read: {e}")))?;
        if bytes.len() as u64 > MAX_SCENARIO_BYTES {
            return Err(err(None, format!("longer than {} MiB, the limit of a scenario file (is it the right file?)", MAX_SCENARIO_BYTES >> 20)));
        }
        String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let line_start = bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            err(Some(line), format!("not UTF-8 text: byte 0x{:02x} at byte offset {at} (column {}) is not valid UTF-8", bytes[at], at - line_start + 1))
        })
    }

    /// Parses scenario text; `file` names it in errors.
    pub fn parse(text: &str, file: &str, name: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        let doc: toml::Table = text.parse::<toml::Table>().map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start));
            ScenarioError { file: file.to_string(), line, key: String::new(), message: e.message().to_string() }
        })?;
        Self::from_doc(doc, text, file, name, overrides)
    }

    /// A scenario built as a TOML table by a program (a trace replay's machine and task),
    /// read as a file with that content would be; `file` names it in errors.
    pub fn from_table(doc: toml::Table, file: &str, name: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        Self::from_doc(doc, "", file, name, overrides)
    }

    /// The scenario of a parsed document; `text` (empty if none) locates keys in errors.
    fn from_doc(mut doc: toml::Table, text: &str, file: &str, name: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
        let err = |line: Option<usize>, key: &str, message: String| ScenarioError { file: file.to_string(), line, key: key.to_string(), message };
        for o in overrides {
            apply_override(&mut doc, o).map_err(|m| err(None, o.split('=').next().unwrap_or(""), m))?;
        }
        // A value a `--set` gave (the last one naming the key wins) is blamed on it, not on a
        // line of the file.
        let err = |line: Option<usize>, key: &str, message: String| match overrides.iter().rev().find(|o| override_key(&doc, o).as_deref() == Some(key)) {
            Some(o) => err(None, key, format!("{message} (from --set {o})")),
            None => err(line, key, message),
        };
        if let Some(toml::Value::Float(f)) = doc.get("machine").and_then(|m| m.get("kernel")) {
            let message = format!("{f} is a number: write the kernel as a string, e.g. kernel = \"6.12\" (as a TOML number, 6.10 would be 6.1)");
            return Err(err(locate(text, "machine.kernel"), "machine.kernel", message));
        }
        let de = toml::Value::Table(doc.clone());
        let raw: ScenarioToml = serde_path_to_error::deserialize(de).map_err(|e| {
            let mut key = e.path().to_string();
            let message = e.inner().message().to_string();
            // An unknown field is reported at its table: name the field itself.
            // (Some tables' paths already end in it.)
            if let Some(field) = message.strip_prefix("unknown field `").and_then(|m| m.split('`').next()) {
                if key == "." || key.is_empty() {
                    key = field.to_string();
                } else if key.rsplit('.').next() != Some(field) {
                    key = format!("{key}.{field}");
                }
            } else if let Some(field) = bad_flattened_key(&doc, &key) {
                key = format!("{key}.{field}");
            }
            err(locate(text, &key), &key, message)
        })?;
        let located = |key: &str, message: String| err(locate(text, key), key, message);
        let s = build::build(raw, name, &located)?;
        let mut s = crate::sim::trace_workload::size_traces(s, file, &located)?;
        s.overrides = overrides.to_vec();
        s.resolved_toml = toml::to_string(&doc).unwrap_or_default();
        Ok(s)
    }
}
