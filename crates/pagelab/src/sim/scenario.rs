//! Scenario files (TOML): the machine, its cgroups and the workloads, validated into a
//! [`Scenario`]. Every error names the file, the line when it can be found, the key and the
//! problem.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::Deserialize;

use crate::kernel::Kernel;
use crate::mm::memcontrol::{MemcgSpec, RstatMode, PAGE_COUNTER_MAX};
use crate::mm::swapfile::DeviceKind;
use crate::mm::time::{Costs, DeviceCost};
use pagelab_workload::{parse_duration_ns, parse_size, Workload, WorkloadToml, PAGE_SIZE};

use crate::mm::workingset::{MglruActivate, MglruPid, MglruPlacement, MglruRefs, RefaultModel, RefaultSpec};
pub use crate::policy::lru_gen::MglruToml;
pub use crate::policy::PolicyKind;

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

use pagelab_workload::schema::{CgroupToml, MachineToml, Text};

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
}

/// The validated machine.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineSpec {
    pub memory_pages: u64,
    pub kernel: Kernel,
    pub policy: PolicyKind,
    pub swap_device: DeviceKind,
    pub swap_pages: u64,
    pub storage: DeviceKind,
    pub swappiness: u32,
    pub ra_pages: u64,
    pub page_cluster: u32,
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
    /// `machine.nonmovable`: per zone name, its non-movable pageblocks and their free chunks
    /// by order (empty: every pageblock movable).
    pub nonmovable: Vec<(String, u64, [u64; crate::mm::pageblock::NR_ORDERS])>,
    /// vm.watermark_boost_factor.
    pub watermark_boost_factor: u64,
    /// `machine.zone_watermarks`: per zone name, the watermarks and lowmem reserves a running
    /// kernel shows (empty: computed from min_free_kbytes and the managed pages).
    pub zone_watermarks: Vec<(String, crate::mm::mmzone::ZoneWatermarks)>,
    pub reserved_pages: u64,
    pub kernel_used_pages: u64,
    pub shmem_pages: u64,
    pub shmem_active_pages: u64,
    pub dirty_ratio: u64,
    pub dirty_background_ratio: u64,
    pub dirty_expire_ns: u64,
    pub dirty_writeback_ns: u64,
    pub memory_recursiveprot: bool,
    pub fault_around_pages: u64,
    pub rstat: RstatMode,
    /// The period of the periodic rstat flush, ns (FLUSH_TIME; the oracle scales it to the
    /// emulated guest's clock).
    pub rstat_flush_ns: u64,
    pub refault_flush: crate::mm::memcontrol::RefaultFlush,
    pub update_path_flush: bool,
    /// `machine.miniature`: the sampling rate of a miniature simulation (1: a full machine).
    pub miniature: f64,
}

/// A validated scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub machine: MachineSpec,
    pub mglru: MglruToml,
    /// `[workingset]` (and its alias `[mglru] refault_distance`), resolved.
    pub workingset: RefaultSpec,
    pub costs: Costs,
    pub swap_cost: DeviceCost,
    pub storage_cost: DeviceCost,
    pub report_interval_ns: u64,
    pub cgroups: Vec<MemcgSpec>,
    pub workloads: Vec<Workload>,
    /// The seam policies of `[machine] policy` and `[[cgroup]] policy`.
    pub seam: crate::policy::registry::SeamSpec,
    /// `[sample]`: the scenario is a miniature of the one its file describes (every size
    /// below is already scaled).
    pub sample: Option<crate::sim::sample::SampleSpec>,
    /// Each workload's CPU set with `machine.cpus` ≥ 2 (`None` otherwise).
    pub workload_cpus: Vec<Option<crate::sched::CpuSet>>,
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
        let s = build(raw, name, &located)?;
        let mut s = crate::sim::trace_workload::size_traces(s, file, &located)?;
        s.overrides = overrides.to_vec();
        s.resolved_toml = toml::to_string(&doc).unwrap_or_default();
        Ok(s)
    }
}

/// Workloads share a file by naming it (`file = "shared"`): each must give it the same size,
/// or nothing would say which size applies.
fn check_shared_files(workloads: &[Workload], err: &dyn Fn(&str, String) -> ScenarioError) -> Result<(), ScenarioError> {
    let mut sizes: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
    for (i, w) in workloads.iter().enumerate() {
        for p in w.phases.iter().filter(|p| !p.kind.is_anon() && p.trace.is_none()) {
            match sizes.get(p.object.as_str()) {
                Some(&(j, pages)) if j != i && pages != p.object_pages => {
                    let other = &workloads[j];
                    let e = err(&format!("workload[{j}].file_size"), String::new());
                    let at = e.line.map_or(String::new(), |l| format!(" (line {l})"));
                    return Err(err(
                        &format!("workload[{i}].file_size"),
                        format!(
                            "workload `{}` gives the shared file `{}` {} pages, workload `{}`{at} gave it {pages}: give both the same size",
                            w.name, p.object, p.object_pages, other.name
                        ),
                    ));
                }
                Some(_) => {}
                None => {
                    sizes.insert(&p.object, (i, p.object_pages));
                }
            }
        }
    }
    Ok(())
}

/// Each workload's `cpus` as a CPU set of the machine's `machine.cpus` (every CPU when
/// unset); a workload's `cpus` needs a machine of several CPUs.
fn cpu_sets(workloads: &[Workload], cpus: Option<u32>, err: &dyn Fn(&str, String) -> ScenarioError) -> Result<Vec<Option<crate::sched::CpuSet>>, ScenarioError> {
    use crate::sched::CpuSet;
    use pagelab_workload::CpuList;
    workloads
        .iter()
        .enumerate()
        .map(|(i, w)| match (cpus, &w.cpus) {
            (Some(n @ 2..), list) => match list {
                None => Ok(Some(CpuSet::all(n))),
                Some(CpuList::Count(c)) => CpuSet::first(*c, n).map(Some),
                Some(CpuList::List(l)) => CpuSet::parse(l, n).map(Some),
            }
            .map_err(|e| err(&format!("workload[{i}].cpus"), e)),
            (_, Some(_)) => Err(err(&format!("workload[{i}].cpus"), "needs machine.cpus = 2 or more: without it every task has a CPU of its own".into())),
            (_, None) => Ok(None),
        })
        .collect()
}

/// `lockstep = { leader, ratio }`: the leader is another workload, with one job or as many
/// as the follower (job i follows job i), and following leads nowhere back to the follower.
fn check_lockstep(workloads: &[Workload], names: &BTreeMap<String, usize>, err: &dyn Fn(&str, String) -> ScenarioError) -> Result<(), ScenarioError> {
    for (i, w) in workloads.iter().enumerate() {
        let Some(l) = &w.lockstep else { continue };
        let key = format!("workload[{i}].lockstep.leader");
        let Some(&li) = names.get(&l.leader) else {
            return Err(err(&key, format!("no workload is named `{}`", l.leader)));
        };
        if li == i {
            return Err(err(&key, "a workload cannot follow itself".into()));
        }
        let leader = &workloads[li];
        if leader.jobs != 1 && leader.jobs != w.jobs {
            return Err(err(
                &key,
                format!("`{}` has {} jobs and this workload {}: a leader has one job, or as many as its follower", l.leader, leader.jobs, w.jobs),
            ));
        }
        let mut chain = vec![w.name.as_str()];
        let mut at = li;
        loop {
            chain.push(&workloads[at].name);
            if at == i {
                return Err(err(&key, format!("lockstep goes round in a circle: {}", chain.join(" → "))));
            }
            match &workloads[at].lockstep {
                Some(next) => at = names[&next.leader],
                None => break,
            }
            if chain.len() > workloads.len() + 1 {
                break;
            }
        }
    }
    Ok(())
}

/// The scenario text with `--set` overrides applied, re-serialized as TOML: what `pagelab
/// oracle` hands to its in-guest runner so the guest and the model read the same values.
/// Errors are located in `text` as [`Scenario::parse`] locates them.
pub fn with_overrides(text: &str, file: &str, overrides: &[String]) -> Result<String, ScenarioError> {
    let err = |line: Option<usize>, key: &str, message: String| ScenarioError { file: file.to_string(), line, key: key.to_string(), message };
    let mut doc: toml::Table = text.parse::<toml::Table>().map_err(|e| err(e.span().map(|s| line_of(text, s.start)), "", e.message().to_string()))?;
    for o in overrides {
        apply_override(&mut doc, o).map_err(|m| err(None, o.split('=').next().unwrap_or(""), m))?;
    }
    toml::to_string(&doc).map_err(|e| err(None, "", format!("cannot re-serialize: {e}")))
}

/// The key `--set` override `o` sets, in the deserializer's spelling: list entries (named
/// or numbered in the override) by index, `workload.fio-zipf.ops` → `workload[0].ops`.
fn override_key(doc: &toml::Table, o: &str) -> Option<String> {
    let parts = split_key(o.split_once('=')?.0.trim());
    let mut out = String::new();
    let mut cur = Some(doc);
    let mut i = 0;
    while i < parts.len() {
        let name = parts[i];
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(name);
        let v = cur.and_then(|t| t.get(name));
        cur = match v.and_then(|v| v.as_array()) {
            Some(list) if i + 1 < parts.len() => {
                i += 1;
                let entry = parts[i];
                let idx = entry
                    .parse::<usize>()
                    .ok()
                    .or_else(|| list.iter().position(|e| ["name", "path"].iter().any(|k| e.get(k).and_then(|v| v.as_str()) == Some(entry))))?;
                out.push_str(&format!("[{idx}]"));
                list.get(idx).and_then(|e| e.as_table())
            }
            _ => v.and_then(|v| v.as_table()),
        };
        i += 1;
    }
    Some(out)
}

/// Tables read partly through a flattened struct lose the name of a mistyped key there: a
/// workload's phase defaults (its own `ops`, `kind`, `distribution`...) and `[time]`'s CPU
/// costs are reported at `workload[N]` or `time`. Finds the key of that table which the
/// flattened struct alone refuses.
fn bad_flattened_key(doc: &toml::Table, key: &str) -> Option<String> {
    fn refused<T: serde::de::DeserializeOwned>(table: &toml::Table) -> Option<String> {
        table.iter().find_map(|(k, v)| {
            let alone = toml::Value::Table(toml::Table::from_iter([(k.clone(), v.clone())]));
            match T::deserialize(alone) {
                Err(e) if !e.message().starts_with("unknown field") => Some(k.clone()),
                _ => None,
            }
        })
    }
    if key == "time" {
        return refused::<Costs>(doc.get("time")?.as_table()?);
    }
    let index: usize = key.strip_prefix("workload[")?.strip_suffix(']')?.parse().ok()?;
    refused::<pagelab_workload::PhaseToml>(doc.get("workload")?.as_array()?.get(index)?.as_table()?)
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Finds the line of a dotted key such as `workload[1].distribution` or `machine.memory`.
fn locate(text: &str, key: &str) -> Option<usize> {
    let mut parts: Vec<&str> = key.split('.').collect();
    let leaf = parts.pop()?;
    let mut from = 0usize;
    // The names so far: a nested table's header spells its whole path (`[[workload.phase]]`).
    let mut names: Vec<&str> = Vec::new();
    for part in &parts {
        let (name, index) = match part.split_once('[') {
            Some((n, i)) => (n, i.trim_end_matches(']').parse::<usize>().ok()),
            None => (*part, None),
        };
        names.push(name);
        let path = names.join(".");
        let header = match index {
            Some(_) => format!("[[{path}]]"),
            None => format!("[{path}]"),
        };
        let mut found = None;
        let mut count = 0;
        for (i, line) in text.lines().enumerate().skip(from) {
            if line.trim() == header {
                if index.is_none_or(|n| count == n) {
                    found = Some(i);
                    break;
                }
                count += 1;
            }
        }
        match found {
            Some(i) => from = i,
            None => {
                // An inline table (`swap = { ... }`) or an array-of-tables entry: look for the
                // leaf after the parent key instead.
                if let Some(i) = text.lines().enumerate().skip(from).find(|(_, l)| l.trim_start().starts_with(name)) {
                    from = i.0;
                }
            }
        }
    }
    let leaf_name = leaf.split('[').next().unwrap_or(leaf);
    // The key is a table of its own (`[time.storage]` missing a field): its header.
    if !leaf.contains('[') {
        let header = format!("[{}]", names.iter().copied().chain([leaf_name]).collect::<Vec<_>>().join("."));
        if let Some((i, _)) = text.lines().enumerate().skip(from).find(|(_, l)| l.trim() == header) {
            return Some(i + 1);
        }
    }
    text.lines()
        .enumerate()
        .skip(from)
        .find(|(_, l)| {
            let t = l.trim_start();
            t.starts_with(leaf_name) && t[leaf_name.len()..].trim_start().starts_with('=')
                || t.contains(&format!("{leaf_name} ="))
                || t.contains(&format!("{leaf_name}="))
        })
        .map(|(i, _)| i + 1)
        .or(if parts.is_empty() { None } else { Some(from + 1) })
}

/// Applies `a.b.c=value`; list entries are addressed by index (`workload.0.ops`) or by their
/// `name`/`path` (`workload.fio-zipf.ops`, `cgroup./test.max`).
fn apply_override(doc: &mut toml::Table, o: &str) -> Result<(), String> {
    let (key, value) = o.split_once('=').ok_or_else(|| format!("`{o}`: --set takes key=value"))?;
    let mut value = parse_override_value(value.trim())?;
    // A kernel version on the command line is its text (`--set machine.kernel=6.10` is 6.10,
    // not the number 6.1); in a file, a number is refused (see `from_doc`).
    if key.trim() == "machine.kernel" && matches!(value, toml::Value::Float(_) | toml::Value::Integer(_)) {
        value = toml::Value::String(o.split_once('=').map_or("", |(_, v)| v).trim().to_string());
    }
    let parts: Vec<&str> = split_key(key.trim());
    if parts.is_empty() {
        return Err(format!("`{o}`: empty key"));
    }
    // Work on a copy so a failed override leaves the document unchanged.
    let mut root = toml::Value::Table(doc.clone());
    let mut cur = &mut root;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        cur = match cur {
            toml::Value::Table(t) => {
                if last {
                    t.insert(part.to_string(), value.clone());
                    break;
                }
                t.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            toml::Value::Array(a) => {
                let idx = match part.parse::<usize>() {
                    Ok(n) => n,
                    Err(_) => a
                        .iter()
                        .position(|e| e.get("name").and_then(|v| v.as_str()) == Some(part) || e.get("path").and_then(|v| v.as_str()) == Some(part))
                        .ok_or_else(|| format!("`{key}`: no entry named `{part}`"))?,
                };
                if last {
                    return Err(format!("`{key}`: cannot replace a whole list entry"));
                }
                a.get_mut(idx).ok_or_else(|| format!("`{key}`: there is no entry {idx}"))?
            }
            _ => return Err(format!("`{key}`: `{part}` is inside a value, not a table")),
        };
    }
    match root {
        toml::Value::Table(t) => *doc = t,
        _ => unreachable!("the root stays a table"),
    }
    Ok(())
}

/// Splits `cgroup./a/b.max` into ["cgroup", "/a/b", "max"]: a part that starts with '/'
/// runs to the next '.'.
fn split_key(key: &str) -> Vec<&str> {
    key.split('.').filter(|s| !s.is_empty()).collect()
}

/// A `--set` value: TOML, or else a bare string. It is one line: the rest of a value with a
/// line break used to be dropped silently (`--set 'k=1<newline>j=2'` set k only).
fn parse_override_value(v: &str) -> Result<toml::Value, String> {
    if v.contains(['\n', '\r']) {
        return Err(format!("`{}`: a --set value is one line (this one holds a line break)", v.escape_debug()));
    }
    Ok(match format!("v = {v}").parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").unwrap_or(toml::Value::String(v.to_string())),
        Err(_) => toml::Value::String(v.to_string()),
    })
}

/// Pages as a size for messages (`512M`, or pages when not whole MiB).
fn size_text(pages: u64) -> String {
    if pages.is_multiple_of(256) {
        format!("{}M", pages / 256)
    } else {
        format!("{pages} pages")
    }
}

/// Models mm/memory.c: fault_around_bytes_set() (6.1, 6.12), the debugfs knob
/// `fault_around_bytes` (the scenario's `fault_around_kb` in KiB): more than PTRS_PER_PTE
/// (512 on x86-64) pages is refused with -EINVAL; less than a page is a page; the rest is
/// rounded down to a power of two. The default is 64 KiB: 16 pages.
fn fault_around_pages(kb: Option<u64>) -> Result<u64, String> {
    const PTRS_PER_PTE: u64 = 512;
    let Some(kb) = kb else { return Ok(16) };
    let bytes = kb.checked_mul(1024).filter(|b| b / PAGE_SIZE <= PTRS_PER_PTE).ok_or_else(|| {
        format!("{kb}: the kernel refuses more than PTRS_PER_PTE = {PTRS_PER_PTE} pages ({} KiB; fault_around_bytes_set() returns -EINVAL)", PTRS_PER_PTE * 4)
    })?;
    let bytes = bytes.max(PAGE_SIZE);
    Ok((1u64 << (63 - bytes.leading_zeros())) / PAGE_SIZE)
}

/// The sysctl `vm.watermark_scale_factor` takes 1 to 3000: its entry in mm/page_alloc.c's
/// table (6.1 and 6.12) bounds it by SYSCTL_ONE and SYSCTL_THREE_THOUSAND and
/// proc_dointvec_minmax() refuses the rest with -EINVAL. The default is 10.
fn watermark_scale_factor(v: Option<u64>) -> Result<u64, String> {
    match v.unwrap_or(10) {
        f @ 1..=3000 => Ok(f),
        f => Err(format!("{f}: the sysctl takes 1 to 3000 (the kernel refuses other values with -EINVAL)")),
    }
}

fn pages(text: &str) -> Result<u64, String> {
    Ok(parse_size(text)? / PAGE_SIZE)
}

fn build(raw: ScenarioToml, name: &str, err: &dyn Fn(&str, String) -> ScenarioError) -> Result<Scenario, ScenarioError> {
    let m = raw.machine.ok_or_else(|| err("machine", "missing the [machine] table".into()))?;
    let memory_pages =
        pages(m.memory.as_deref().ok_or_else(|| err("machine.memory", "missing: how much RAM?".into()))?).map_err(|e| err("machine.memory", e))?;
    if memory_pages < 256 {
        return Err(err("machine.memory", "must be at least 1M".into()));
    }
    if memory_pages > u32::MAX as u64 / 2 {
        return Err(err("machine.memory", "is larger than pagelab's 8 TiB limit".into()));
    }
    let kernel_text = m.kernel.as_ref().map_or("6.1".to_string(), Text::text);
    let kernel = Kernel::parse(&kernel_text).map_err(|e| err("machine.kernel", e))?;
    let (policy, seam_machine) = crate::policy::registry::machine_policy(m.policy.as_deref()).map_err(|e| err("machine.policy", e))?;
    if policy == PolicyKind::Mglru && !kernel.has_lru_gen() {
        return Err(err("machine.policy", "MGLRU needs kernel 6.1 or 6.12 (5.7 predates it)".into()));
    }
    let swap = m.swap.unwrap_or_default();
    let swap_device = DeviceKind::parse(swap.device.as_deref().unwrap_or("none")).map_err(|e| err("machine.swap.device", e))?;
    let swap_pages = match (&swap.size, swap_device) {
        (_, DeviceKind::None) => 0,
        (Some(s), _) => {
            let p = pages(s).map_err(|e| err("machine.swap.size", e))?;
            // Swap slots are numbered in 32 bits (the map costs memory for the slots used,
            // not for this size), so a device holds at most 2^32 - 2 pages.
            if p > u32::MAX as u64 - 2 {
                return Err(err("machine.swap.size", format!("`{s}` is more than the model's largest swap device, 16T (2^32 - 2 pages)")));
            }
            p
        }
        (None, _) => return Err(err("machine.swap.size", "missing: a swap device needs a size".into())),
    };
    let storage = DeviceKind::parse(m.storage.as_deref().unwrap_or("ssd")).map_err(|e| err("machine.storage", e))?;
    if matches!(storage, DeviceKind::None | DeviceKind::Zram) {
        return Err(err("machine.storage", "files need a disk, ssd or ramdisk".into()));
    }
    let swappiness = m.swappiness.unwrap_or(60);
    if swappiness > 200 {
        return Err(err("machine.swappiness", "must be between 0 and 200".into()));
    }
    let page_cluster = m.page_cluster.unwrap_or(3);
    if page_cluster > 10 {
        return Err(err("machine.page_cluster", "must be between 0 and 10".into()));
    }
    let opt_pages = |key: &str, v: &Option<String>| -> Result<u64, ScenarioError> { v.as_deref().map_or(Ok(0), |s| pages(s).map_err(|e| err(key, e))) };
    let reserved_pages = opt_pages("machine.reserved", &m.reserved)?;
    let kernel_used_pages = opt_pages("machine.kernel_used", &m.kernel_used)?;
    let shmem_pages = opt_pages("machine.shmem", &m.shmem)?;
    let shmem_active_pages = opt_pages("machine.shmem_active", &m.shmem_active)?;
    if shmem_active_pages > shmem_pages {
        return Err(err("machine.shmem_active", format!("{shmem_active_pages} pages is more than machine.shmem ({shmem_pages} pages)")));
    }
    if reserved_pages + kernel_used_pages + shmem_pages + 256 > memory_pages {
        // Blame the largest of the three, the one most likely mistyped.
        let parts = [("machine.reserved", reserved_pages), ("machine.kernel_used", kernel_used_pages), ("machine.shmem", shmem_pages)];
        let (key, _) = parts.iter().rev().max_by_key(|(_, p)| *p).expect("three parts");
        let sizes: Vec<String> = parts.iter().filter(|(_, p)| *p > 0).map(|(k, p)| format!("{} {}", k.trim_start_matches("machine."), size_text(*p))).collect();
        return Err(err(
            key,
            format!("{} of machine.memory's {} leave less than 1M for the page cache and processes", sizes.join(" + "), size_text(memory_pages)),
        ));
    }
    let percent = |key: &str, v: Option<u64>, default: u64| -> Result<u64, ScenarioError> {
        let v = v.unwrap_or(default);
        if v > 100 {
            return Err(err(key, "is a percentage (0..100)".into()));
        }
        Ok(v)
    };
    let duration = |key: &str, v: &Option<String>, default: u64| -> Result<u64, ScenarioError> {
        v.as_deref().map_or(Ok(default), |s| parse_duration_ns(s).map_err(|e| err(key, e)))
    };
    let rstat = match m.rstat.as_deref().unwrap_or("kernel") {
        "kernel" => RstatMode::Kernel,
        "exact" => RstatMode::Exact,
        other => return Err(err("machine.rstat", format!("`{other}`: use \"kernel\" or \"exact\""))),
    };
    let refault_flush = {
        use crate::mm::memcontrol::RefaultFlush as F;
        match m.refault_flush.as_deref().unwrap_or("kernel") {
            "kernel" => F::Kernel,
            "threshold" => F::Threshold,
            "always" => F::Always,
            "never" => F::Never,
            other => return Err(err("machine.refault_flush", format!("`{other}`: use kernel, threshold, always or never"))),
        }
    };
    let machine = MachineSpec {
        refault_flush,
        update_path_flush: m.update_path_flush.unwrap_or(false),
        miniature: match m.miniature {
            None => 1.0,
            Some(r) if r > 0.0 && r <= 1.0 => r,
            Some(r) => return Err(err("machine.miniature", format!("{r}: a sampling rate is in (0, 1]"))),
        },
        memory_pages,
        kernel,
        policy,
        swap_device,
        swap_pages,
        storage,
        swappiness,
        ra_pages: m.read_ahead_kb.unwrap_or(128) / 4,
        page_cluster,
        min_free_kbytes: m.min_free_kbytes,
        watermark_scale_factor: watermark_scale_factor(m.watermark_scale_factor).map_err(|e| err("machine.watermark_scale_factor", e))?,
        cpus: match m.cpus {
            None => None,
            Some(n @ 1..=crate::sched::MAX_CPUS) => Some(n),
            Some(n) => {
                return Err(err(
                    "machine.cpus",
                    format!("{n}: a machine has 1 to {} CPUs (leave it unset for a CPU of its own for every task and kswapd)", crate::sched::MAX_CPUS),
                ))
            }
        },
        eevdf_turns: match (m.eevdf_turns, m.cpus) {
            (Some(true), Some(1)) | (None | Some(false), _) => m.eevdf_turns.unwrap_or(true),
            (Some(true), _) => return Err(err("machine.eevdf_turns", "true needs machine.cpus = 1: the turns are those of one CPU".to_string())),
        },
        zones: match m.zones.as_deref() {
            None | Some("x86-64") => crate::mm::mmzone::ZoneLayout::X86_64,
            Some("one") => crate::mm::mmzone::ZoneLayout::One,
            Some(z) => {
                return Err(err(
                    "machine.zones",
                    format!("`{z}`: the layouts are `x86-64` (ZONE_DMA, ZONE_DMA32, ZONE_NORMAL above 4 GiB) and `one` (a single zone)"),
                ))
            }
        },
        nonmovable: nonmovable(m.nonmovable.as_ref(), memory_pages).map_err(|(k, e)| err(&k, e))?,
        watermark_boost_factor: m.watermark_boost_factor.unwrap_or(15_000),
        zone_watermarks: zone_watermarks(m.zone_watermarks.as_ref(), memory_pages).map_err(|(k, e)| err(&k, e))?,
        percpu_pagelist_high_fraction: match m.percpu_pagelist_high_fraction.unwrap_or(0) {
            f @ (0 | 8..) => f,
            f => return Err(err("machine.percpu_pagelist_high_fraction", format!("{f}: the sysctl takes 0 (the default) or at least 8"))),
        },
        reserved_pages,
        kernel_used_pages,
        shmem_pages,
        shmem_active_pages,
        dirty_ratio: percent("machine.dirty_ratio", m.dirty_ratio, 20)?,
        dirty_background_ratio: percent("machine.dirty_background_ratio", m.dirty_background_ratio, 10)?,
        dirty_expire_ns: duration("machine.dirty_expire", &m.dirty_expire, 30_000_000_000)?,
        dirty_writeback_ns: duration("machine.dirty_writeback", &m.dirty_writeback, 5_000_000_000)?.max(1_000_000),
        memory_recursiveprot: m.memory_recursiveprot.unwrap_or(false),
        fault_around_pages: fault_around_pages(m.fault_around_kb).map_err(|e| err("machine.fault_around_kb", e))?,
        rstat,
        rstat_flush_ns: {
            let ns = duration("machine.rstat_flush", &m.rstat_flush, crate::kernel::RSTAT_FLUSH_NS)?;
            if ns < 1_000_000 {
                return Err(err("machine.rstat_flush", "must be at least 1ms".into()));
            }
            ns
        },
    };

    let mut cgroups = Vec::new();
    let mut seam = crate::policy::registry::SeamSpec { machine: seam_machine, cgroups: Vec::new() };
    for (i, c) in raw.cgroup.iter().enumerate() {
        let key = |k: &str| format!("cgroup[{i}].{k}");
        let path = c.path.clone().ok_or_else(|| err(&key("path"), "missing".into()))?;
        if !path.starts_with('/') || path == "/" || path.ends_with('/') || path.contains("//") {
            return Err(err(&key("path"), format!("`{path}` must look like /name or /parent/name")));
        }
        let limit = |k: &str, v: &Option<String>, default: u64| -> Result<u64, ScenarioError> {
            match v.as_deref() {
                None => Ok(default),
                Some("max") => Ok(PAGE_COUNTER_MAX),
                Some(s) => pages(s).map_err(|e| err(&key(k), e)),
            }
        };
        cgroups.push(MemcgSpec {
            path,
            max: limit("max", &c.max, PAGE_COUNTER_MAX)?,
            high: limit("high", &c.high, PAGE_COUNTER_MAX)?,
            low: limit("low", &c.low, 0)?,
            min: limit("min", &c.min, 0)?,
        });
        if let Some(name) = &c.policy {
            if let Some(p) = crate::policy::registry::cgroup_policy(name, policy).map_err(|e| err(&key("policy"), e))? {
                seam.cgroups.push((cgroups.last().expect("just pushed").path.clone(), p));
            }
        }
    }
    crate::mm::memcontrol::Memcgs::new(kernel, &cgroups, rstat).map_err(|e| {
        // The tree's errors name a cgroup's path: blame its [[cgroup]] entry (the last one
        // with that path, which for a duplicate is the second), not a workload's `cgroup =`.
        let named = e.split('`').nth(1).unwrap_or("");
        match cgroups.iter().rposition(|c| c.path == named) {
            Some(i) => err(&format!("cgroup[{i}].path"), e),
            None => err("cgroup", e),
        }
    })?;

    if raw.workload.is_empty() {
        return Err(err("workload", "the scenario has no [[workload]]".into()));
    }
    let mut workloads = Vec::new();
    let mut names = BTreeMap::new();
    for (i, w) in raw.workload.iter().enumerate() {
        let wl = w.resolve(i).map_err(|e| err(&format!("workload[{i}].{}", e.key), e.message))?;
        if wl.cgroup != "/" && !cgroups.iter().any(|c| c.path == wl.cgroup) {
            return Err(err(
                &format!("workload[{i}].cgroup"),
                format!("cgroup `{}` is not declared (add a [[cgroup]] with path = \"{}\")", wl.cgroup, wl.cgroup),
            ));
        }
        for (key, name) in [("name", &wl.name), ("cgroup", &wl.cgroup)] {
            if name.chars().any(char::is_control) {
                let message = format!("\"{}\" holds a control character: names are printed in reports and on terminals", name.escape_debug());
                return Err(err(&format!("workload[{i}].{key}"), message));
            }
        }
        if let Some(prev) = names.insert(wl.name.clone(), i) {
            return Err(err(&format!("workload[{i}].name"), format!("`{}` is also the name of workload[{prev}]", wl.name)));
        }
        workloads.push(wl);
    }
    check_lockstep(&workloads, &names, err)?;
    check_shared_files(&workloads, err)?;
    let workload_cpus = cpu_sets(&workloads, machine.cpus, err)?;

    let time = raw.time.unwrap_or_default();
    let report = raw.report.unwrap_or_default();
    let report_interval_ns = match report.interval.as_deref() {
        Some(s) => parse_duration_ns(s).map_err(|e| err("report.interval", e))?,
        None => 1_000_000_000,
    };
    if report_interval_ns < 1_000_000 {
        return Err(err("report.interval", "must be at least 1ms".into()));
    }
    let mglru = raw.mglru.unwrap_or_default();
    let workingset = resolve_workingset(raw.workingset.unwrap_or_default(), &mglru, kernel, err)?;
    let mut scenario = Scenario {
        name: name.to_string(),
        mglru,
        workingset,
        costs: time.costs,
        swap_cost: time.swap.unwrap_or_else(|| DeviceCost::default_for(swap_device)),
        storage_cost: time.storage.unwrap_or_else(|| DeviceCost::default_for(storage)),
        report_interval_ns,
        machine,
        cgroups,
        workloads,
        workload_cpus,
        seam,
        sample: None,
        overrides: Vec::new(),
        resolved_toml: String::new(),
    };
    if let Some(sample) = raw.sample {
        let rate = match sample.rate {
            Some(r) if r > 0.0 && r <= 1.0 => r,
            Some(r) => return Err(err("sample.rate", format!("{r}: a sampling rate is in (0, 1]"))),
            None => return Err(err("sample.rate", "missing: the fraction of the pages to simulate, in (0, 1]".into())),
        };
        let seed = sample.seed.unwrap_or(1);
        let scale = realized_rate(&scenario.workloads, rate, seed).map_err(|e| err("sample.rate", e))?;
        miniaturize(&mut scenario, crate::sim::sample::SampleSpec { rate, seed, scale }, m.miniature.is_none(), err)?;
    }
    Ok(scenario)
}

/// The fraction of the workloads' pages (every file once, every task's anonymous regions)
/// that a sample at `rate` with hash seed `seed` keeps.
fn realized_rate(workloads: &[Workload], rate: f64, seed: u64) -> Result<f64, String> {
    // A file's size and block are the largest any task gives it, as the machine has them.
    let mut files: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut anon = Vec::new();
    for w in workloads {
        for job in 0..w.jobs {
            let st = pagelab_workload::JobStream::new(w, job);
            for (i, o) in st.objects().iter().enumerate() {
                let block = st.largest_block(i);
                if o.anon {
                    anon.push((crate::sim::machine::anon_object_name(&w.name, job, &o.name), o.pages, block));
                } else {
                    let f = files.entry(o.name.clone()).or_insert((0, 1));
                    *f = (f.0.max(o.pages), f.1.max(block));
                }
            }
        }
    }
    let objects: Vec<(&str, u64, u64)> = files.iter().map(|(n, &(p, b))| (n.as_str(), p, b)).chain(anon.iter().map(|(n, p, b)| (n.as_str(), *p, *b))).collect();
    let total: u64 = objects.iter().map(|o| o.1).sum();
    let kept = crate::sim::sample::kept_pages(objects, rate, seed)?;
    Ok(if total == 0 { rate } else { kept as f64 / total as f64 })
}

/// Not a kernel rule: scales scenario `s` to its miniature at `spec.scale` R (docs/curve.md):
/// every size of the machine and its cgroups by R, the full machine's min_free_kbytes by R
/// (the kernel derives it from the square root of memory, so a small machine computing its
/// own would keep proportionally more free), and the modeled clocks by R, since the
/// miniature's tasks do R of the operations (`crate::sim::sample`). The objects are sampled
/// when the machine is built. `correct`: apply the classic LRU's scale corrections
/// (`machine.miniature`, unless the file sets it).
fn miniaturize(
    s: &mut Scenario,
    spec: crate::sim::sample::SampleSpec,
    correct: bool,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    let r = spec.scale;
    let scale = |n: u64| (n as f64 * r).round() as u64;
    // A size that was not zero must not become zero: say so rather than drop it.
    let scale_size = |key: &str, n: u64| -> Result<u64, ScenarioError> {
        match scale(n) {
            0 if n > 0 => Err(err(key, format!("{n} pages scaled by the sample ({r:.4}) rounds to 0 pages: raise sample.rate"))),
            x => Ok(x),
        }
    };
    let scale_ns = |ns: u64| ((ns as f64 * r).round() as u64).max(1);
    let m = &mut s.machine;
    let full_managed = m.memory_pages - m.reserved_pages;
    let memory_pages = scale(m.memory_pages);
    if memory_pages < 256 {
        return Err(err(
            "sample.rate",
            format!(
                "machine.memory ({} pages) scaled by the sample ({r:.4}) is {memory_pages} pages, below the smallest machine (1M, 256 pages): raise sample.rate",
                m.memory_pages
            ),
        ));
    }
    let min_free = m.min_free_kbytes.unwrap_or_else(|| crate::mm::mmzone::calculate_min_free_kbytes(full_managed));
    m.min_free_kbytes = Some(((min_free as f64 * r).round() as u64).max(1));
    // A running kernel's watermarks and reserves are pages of the full machine: scaled as
    // min_free_kbytes is.
    for (_, w) in &mut m.zone_watermarks {
        (w.min, w.low, w.high) = (scale(w.min), scale(w.low), scale(w.high));
        if let Some(p) = w.protection.as_mut() {
            p.iter_mut().for_each(|v| *v = scale(*v));
        }
    }
    m.memory_pages = memory_pages;
    m.reserved_pages = scale(m.reserved_pages);
    m.kernel_used_pages = scale(m.kernel_used_pages);
    m.shmem_pages = scale(m.shmem_pages);
    m.shmem_active_pages = scale(m.shmem_active_pages).min(m.shmem_pages);
    m.swap_pages = scale_size("machine.swap.size", m.swap_pages)?;
    m.rstat_flush_ns = scale_ns(m.rstat_flush_ns);
    m.dirty_expire_ns = scale_ns(m.dirty_expire_ns);
    m.dirty_writeback_ns = scale_ns(m.dirty_writeback_ns);
    if correct {
        m.miniature = r;
    }
    s.report_interval_ns = scale_ns(s.report_interval_ns);
    for (i, c) in s.cgroups.iter_mut().enumerate() {
        for (k, v) in [("max", &mut c.max), ("high", &mut c.high), ("low", &mut c.low), ("min", &mut c.min)] {
            if *v != PAGE_COUNTER_MAX {
                *v = scale_size(&format!("cgroup[{i}].{k}"), *v)?;
            }
        }
    }
    for (i, w) in s.workloads.iter_mut().enumerate() {
        if let Some(j) = w.phases.iter().position(|p| p.trace.is_some()) {
            let key = if w.phases.len() == 1 { format!("workload[{i}].trace") } else { format!("workload[{i}].phase[{j}].trace") };
            return Err(err(
                &key,
                "a miniature scenario (sample.rate) does not sample a replayed trace: sample the trace itself with `pagelab curve TRACE --sample`".into(),
            ));
        }
        w.start_ns = (w.start_ns as f64 * r).round() as u64;
        w.runtime_ns = w.runtime_ns.map(scale_ns);
        if w.lifetime_ops > 0 {
            w.lifetime_ops = scale(w.lifetime_ops).max(1);
        }
    }
    s.sample = Some(spec);
    Ok(())
}

/// Resolves `[workingset]`: the model (or its alias `[mglru] refault_distance`, which names
/// kairui-v3: the rule the refault-distance rework was first written from), then each open choice, which
/// defaults per model and means nothing under mainline.
fn resolve_workingset(w: WorkingsetToml, mglru: &MglruToml, kernel: Kernel, err: &dyn Fn(&str, String) -> ScenarioError) -> Result<RefaultSpec, ScenarioError> {
    const MODEL: &str = "workingset.refault_model";
    let named = w.refault_model.as_deref().map(RefaultModel::parse).transpose().map_err(|e| err(MODEL, e))?;
    let alias = mglru.refault_distance.map(|on| if on { RefaultModel::KairuiV3 } else { RefaultModel::Mainline });
    let model = match (named, alias) {
        (Some(n), Some(a)) if n != a => {
            return Err(err(
                MODEL,
                format!(
                    "`{}` conflicts with `mglru.refault_distance = {}` (an alias for refault_model = \"{}\"); set one of the two",
                    n.name(),
                    mglru.refault_distance == Some(true),
                    a.name()
                ),
            ))
        }
        (n, a) => n.or(a).unwrap_or_default(),
    };
    if model != RefaultModel::Mainline && !kernel.anon_workingset() {
        return Err(err(MODEL, format!("`{}` pools anon with file and needs kernel 6.1 or 6.12", model.name())));
    }
    let mut spec = RefaultSpec::of(model);
    let choice = |key: &str, given: bool| -> Result<(), ScenarioError> {
        if given && model == RefaultModel::Mainline {
            return Err(err(&format!("workingset.{key}"), "applies only to a Kairui refault_model (\"kairui-v3\" or \"kairui-2026\")".into()));
        }
        Ok(())
    };
    choice("putback_ages_nonresident", w.putback_ages_nonresident.is_some())?;
    if let Some(v) = w.putback_ages_nonresident {
        spec.putback_ages_nonresident = v;
    }
    fn pick<T: Copy>(v: &str, options: &[(&str, T)]) -> Result<T, String> {
        options.iter().find(|(n, _)| *n == v.trim()).map(|&(_, t)| t).ok_or_else(|| {
            let names: Vec<String> = options.iter().map(|(n, _)| format!("\"{n}\"")).collect();
            format!("`{v}`: use {}", names.join(", "))
        })
    }
    if let Some(v) = &w.mglru_placement {
        choice("mglru_placement", true)?;
        let o = [("youngest", MglruPlacement::Youngest), ("lru-add", MglruPlacement::LruAdd), ("youngest-if-short", MglruPlacement::YoungestIfShort)];
        spec.mglru_placement = pick(v, &o).map_err(|e| err("workingset.mglru_placement", e))?;
    }
    if let Some(v) = &w.mglru_refs {
        choice("mglru_refs", true)?;
        let o = [("hot-restore", MglruRefs::HotRestore), ("shadow", MglruRefs::Shadow), ("workingset-bit", MglruRefs::WorkingsetBit)];
        spec.mglru_refs = pick(v, &o).map_err(|e| err("workingset.mglru_refs", e))?;
    }
    if let Some(v) = &w.mglru_pid {
        choice("mglru_pid", true)?;
        spec.mglru_pid = pick(v, &[("window", MglruPid::Window), ("current", MglruPid::Current)]).map_err(|e| err("workingset.mglru_pid", e))?;
    }
    if let Some(v) = &w.mglru_activate {
        choice("mglru_activate", true)?;
        spec.mglru_activate =
            pick(v, &[("qualified", MglruActivate::Qualified), ("short", MglruActivate::Short)]).map_err(|e| err("workingset.mglru_activate", e))?;
    }
    Ok(spec)
}

/// `machine.nonmovable`, checked: known zone names, at most 11 orders, at least one block, and
/// free chunks that fit in the blocks and in the machine. The error is (key, message).
#[allow(clippy::type_complexity)]
fn nonmovable(
    t: Option<&std::collections::BTreeMap<String, pagelab_workload::schema::NonMovableToml>>,
    memory_pages: u64,
) -> Result<Vec<(String, u64, [u64; crate::mm::pageblock::NR_ORDERS])>, (String, String)> {
    use crate::mm::pageblock::{NR_ORDERS, PAGEBLOCK_PAGES};
    let mut out = Vec::new();
    for (zone, z) in t.into_iter().flatten() {
        let key = format!("machine.nonmovable.{zone}");
        if !["DMA", "DMA32", "Normal"].contains(&zone.as_str()) {
            return Err((key, format!("`{zone}`: the zones are DMA, DMA32 and Normal")));
        }
        if z.free.len() > NR_ORDERS {
            return Err((format!("{key}.free"), format!("{} orders: the buddy allocator has orders 0 to {}", z.free.len(), NR_ORDERS - 1)));
        }
        if z.blocks == 0 || z.blocks > memory_pages / PAGEBLOCK_PAGES {
            return Err((format!("{key}.blocks"), format!("{}: between 1 and the machine's {} pageblocks", z.blocks, memory_pages / PAGEBLOCK_PAGES)));
        }
        let mut free = [0; NR_ORDERS];
        let mut pages: u64 = 0;
        for (o, &n) in z.free.iter().enumerate() {
            free[o] = n;
            pages = pages.saturating_add(n.saturating_mul(1 << o));
        }
        if pages > z.blocks * PAGEBLOCK_PAGES {
            return Err((format!("{key}.free"), format!("{pages} free pages do not fit in {} pageblocks", z.blocks)));
        }
        out.push((zone.clone(), z.blocks, free));
    }
    Ok(out)
}

/// `machine.zone_watermarks`, checked: known zone names, min <= low <= high, at least the
/// four classzones DMA, DMA32, Normal and Movable in `protection`, and nothing beyond the
/// machine's pages. The error is (key, message).
fn zone_watermarks(
    t: Option<&std::collections::BTreeMap<String, pagelab_workload::schema::ZoneWatermarksToml>>,
    memory_pages: u64,
) -> Result<Vec<(String, crate::mm::mmzone::ZoneWatermarks)>, (String, String)> {
    use crate::mm::mmzone::{ZoneWatermarks, CLASSZONES};
    let mut out = Vec::new();
    for (zone, z) in t.into_iter().flatten() {
        let key = format!("machine.zone_watermarks.{zone}");
        if !["DMA", "DMA32", "Normal"].contains(&zone.as_str()) {
            return Err((key, format!("`{zone}`: the zones are DMA, DMA32 and Normal")));
        }
        if !(z.min <= z.low && z.low <= z.high) {
            return Err((key, format!("min {}, low {}, high {}: the kernel keeps min <= low <= high", z.min, z.low, z.high)));
        }
        if z.high > memory_pages {
            return Err((format!("{key}.high"), format!("{} pages: more than the machine's {memory_pages}", z.high)));
        }
        let protection = match &z.protection {
            None => None,
            Some(p) if p.len() < CLASSZONES => {
                return Err((
                    format!("{key}.protection"),
                    format!("{} entries: /proc/zoneinfo lists one per classzone, at least DMA, DMA32, Normal and Movable", p.len()),
                ))
            }
            Some(p) => match p.iter().find(|&&v| v > memory_pages) {
                Some(v) => return Err((format!("{key}.protection"), format!("{v} pages: more than the machine's {memory_pages}"))),
                None => Some(std::array::from_fn(|i| p[i])),
            },
        };
        out.push((zone.clone(), ZoneWatermarks { min: z.min, low: z.low, high: z.high, protection }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const EXAMPLE: &str = r#"
[machine]
memory = "256M"
kernel = "6.1"
policy = "classic"
swap = { device = "disk", size = "1G" }

[[cgroup]]
path = "/test"
max = "192M"

[[workload]]
name = "fio-zipf"
cgroup = "/test"
kind = "file-read"
file_size = "720M"
block_size = "4k"
distribution = "zipf:0.8"
ops = 300000
seed = 42
"#;

    fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse(text, "s.toml", "s", &[])
    }

    /// Issue 40: a scenario path that never ends (/dev/zero) was read until memory ran out;
    /// invalid UTF-8 had no line or offset.
    #[test]
    fn scenario_files_are_bounded_and_utf8_errors_located() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.toml");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_SCENARIO_BYTES + 1).unwrap();
        let e = Scenario::read_text(&big).unwrap_err().to_string();
        assert!(e.contains("longer than 16 MiB, the limit of a scenario file"), "{e}");
        let e = Scenario::load(Path::new("/dev/zero"), &[]).unwrap_err().to_string();
        assert!(e.contains("/dev/zero: is a device"), "{e}");
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, b"[machine]\nmemory = \"1G\"\nname = \"a\xffb\"\n").unwrap();
        let e = Scenario::read_text(&bad).unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.to_string().contains("byte 0xff at byte offset 33 (column 10) is not valid UTF-8"), "{e}");
    }

    /// Issue 40 item 10: values that were silently accepted or changed.
    #[test]
    fn silently_accepted_values_are_refused() {
        // `kernel = 6.10`, a TOML float, ran 6.1.
        let e = parse(&EXAMPLE.replace("kernel = \"6.1\"", "kernel = 6.10")).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("machine.kernel", Some(4)), "{e}");
        assert!(e.message.contains("write the kernel as a string"), "{e}");
        // On the command line the version is its text: 6.12 and 6.1 work, 6.10 is not 6.1.
        let e = Scenario::parse(EXAMPLE, "s.toml", "s", &["machine.kernel=6.10".into()]).unwrap_err();
        assert!(e.to_string().contains("6.10") && e.to_string().contains("(from --set machine.kernel=6.10)"), "{e}");
        for k in ["6.1", "6.12"] {
            let s = Scenario::parse(EXAMPLE, "s.toml", "s", &[format!("machine.kernel={k}")]).unwrap();
            assert_eq!(s.machine.kernel, Kernel::parse(k).unwrap());
        }
        // A --set value's second line was dropped.
        let e = Scenario::parse(EXAMPLE, "s.toml", "s", &["machine.swappiness=10\nmachine.memory=\"1G\"".into()]).unwrap_err();
        assert!(e.to_string().contains("a --set value is one line"), "{e}");
        // watermark_scale_factor 0 or 100000 was clamped; the kernel takes 1..3000.
        for bad in [0, 3001, 100_000] {
            let e = parse(&EXAMPLE.replace("[machine]", &format!("[machine]\nwatermark_scale_factor = {bad}"))).unwrap_err();
            assert!(e.to_string().contains("the sysctl takes 1 to 3000"), "{bad}: {e}");
        }
        let s = parse(&EXAMPLE.replace("[machine]", "[machine]\nwatermark_scale_factor = 3000")).unwrap();
        assert_eq!(s.machine.watermark_scale_factor, 3000);
        // fault_around_kb: fault_around_bytes_set() rounds down to a power of two, takes at
        // least a page, refuses more than 512 pages.
        for (kb, pages) in [(None, 16), (Some(0), 1), (Some(4), 1), (Some(96), 16), (Some(2048), 512), (Some(2051), 512)] {
            assert_eq!(fault_around_pages(kb), Ok(pages), "{kb:?}");
        }
        for kb in [2052, 1 << 40, i64::MAX as u64] {
            let e = parse(&EXAMPLE.replace("[machine]", &format!("[machine]\nfault_around_kb = {kb}"))).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("more than PTRS_PER_PTE = 512 pages"), "{kb}: {e}");
        }
        // Two workloads sharing a file with different sizes.
        let two = format!("{EXAMPLE}\n[[workload]]\nname = \"b\"\ncgroup = \"/test\"\nkind = \"file-read\"\nfile = \"fio-zipf\"\nfile_size = \"360M\"\ndistribution = \"uniform\"\nops = 10\n");
        let e = parse(&two).unwrap_err();
        assert_eq!(e.key, "workload[1].file_size", "{e}");
        assert!(e.message.contains("workload `b` gives the shared file `fio-zipf` 92160 pages, workload `fio-zipf` (line 16) gave it 184320"), "{e}");
        assert!(parse(&two.replace("360M", "720M")).is_ok());
        // A name with a terminal escape.
        let e = parse(&EXAMPLE.replace("name = \"fio-zipf\"", "name = \"a\\u001b[2Jb\"")).unwrap_err();
        assert!(e.to_string().contains("\\u{1b}[2Jb\" holds a control character"), "{e}");
    }

    /// Issue 40 item 11: a partial `[time.storage]` reported its missing field at line 1.
    #[test]
    fn a_partial_table_is_located_at_its_header() {
        let text = format!("{EXAMPLE}\n[time.storage]\nread_latency_ns = 100\n");
        let e = parse(&text).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("time.storage", Some(22)), "{e}");
        assert!(e.message.contains("missing field"), "{e}");
    }

    /// Issue 40 item 11: a too-large kernel_used was blamed on machine.reserved.
    #[test]
    fn the_largest_reservation_is_blamed() {
        let e = parse(&EXAMPLE.replace("[machine]", "[machine]\nreserved = \"8M\"\nkernel_used = \"250M\"")).unwrap_err();
        assert_eq!(e.key, "machine.kernel_used", "{e}");
        assert!(e.message.contains("reserved 8M + kernel_used 250M of machine.memory's 256M"), "{e}");
    }

    #[test]
    fn the_issue_example_parses() {
        let s = parse(EXAMPLE).unwrap();
        assert_eq!(s.machine.memory_pages, 65536);
        assert_eq!(s.machine.swap_pages, 262144);
        assert_eq!(s.cgroups[0].max, 49152);
        assert_eq!(s.workloads[0].phases[0].object_pages, 184320);
    }

    #[test]
    fn unknown_keys_are_named_with_file_and_line() {
        let e = parse(&EXAMPLE.replace("memory = \"256M\"", "memroy = \"256M\"")).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(3)));
        assert!(e.to_string().contains("memroy"), "{e}");
        let e = parse(&EXAMPLE.replace("seed = 42", "seed = 42\nspeed = 3")).unwrap_err();
        assert!(e.key.starts_with("workload[0]"), "{e}");
        assert!(e.message.contains("speed"), "{e}");
    }

    #[test]
    fn zone_watermarks_are_checked_zone_order_of_the_marks_and_protection_entries() {
        let with = |v: &str| parse(&EXAMPLE.replace("memory = \"256M\"", &format!("memory = \"256M\"\nzone_watermarks = {v}")));
        let e = with("{ HIGHMEM = { min = 1, low = 2, high = 3 } }").unwrap_err();
        assert_eq!(e.key, "machine.zone_watermarks.HIGHMEM");
        let e = with("{ DMA = { min = 5, low = 2, high = 3 } }").unwrap_err();
        assert!(e.message.contains("min <= low <= high"), "{e}");
        let e = with("{ DMA = { min = 1, low = 2, high = 3, protection = [0, 176] } }").unwrap_err();
        assert_eq!(e.key, "machine.zone_watermarks.DMA.protection");
        let e = with("{ DMA = { min = 1, low = 2, high = 3, lo = 4 } }").unwrap_err();
        assert!(e.to_string().contains("lo"), "{e}");
        let s = with("{ DMA = { min = 34, low = 42, high = 50, protection = [0, 176, 176, 176, 176] } }").unwrap();
        let w = &s.machine.zone_watermarks[0];
        assert_eq!((w.0.as_str(), w.1.min, w.1.high, w.1.protection), ("DMA", 34, 50, Some([0, 176, 176, 176])));
    }

    #[test]
    fn nonmovable_pageblocks_are_checked_zone_orders_blocks_and_room() {
        let with = |v: &str| parse(&EXAMPLE.replace("memory = \"256M\"", &format!("memory = \"256M\"\nnonmovable = {v}")));
        let e = with("{ HIGHMEM = { blocks = 1, free = [1] } }").unwrap_err();
        assert_eq!(e.key, "machine.nonmovable.HIGHMEM");
        let e = with("{ DMA32 = { blocks = 1, free = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1] } }").unwrap_err();
        assert_eq!(e.key, "machine.nonmovable.DMA32.free");
        assert!(e.message.contains("orders 0 to 10"), "{e}");
        let e = with("{ DMA32 = { blocks = 0, free = [1] } }").unwrap_err();
        assert_eq!(e.key, "machine.nonmovable.DMA32.blocks");
        let e = with("{ DMA32 = { blocks = 1, free = [0, 0, 0, 0, 0, 0, 0, 0, 0, 2] } }").unwrap_err();
        assert!(e.message.contains("1024 free pages do not fit in 1 pageblocks"), "{e}");
        let e = with("{ DMA32 = { blocks = 1, free = [1], pages = 3 } }").unwrap_err();
        assert!(e.to_string().contains("pages"), "{e}");
        let s = with("{ DMA32 = { blocks = 14, free = [0, 2, 0, 1, 1, 2, 1, 0, 1, 2] } }").unwrap();
        assert_eq!(s.machine.nonmovable[0].0, "DMA32");
        assert_eq!(s.machine.nonmovable[0].2[9], 2);
        assert_eq!(s.machine.watermark_boost_factor, 15_000);
    }

    #[test]
    fn a_workloads_cpus_are_a_set_of_the_machines() {
        let with = |machine: &str, cpus: &str| {
            let text = EXAMPLE.replace("memory = \"256M\"", &format!("memory = \"256M\"\n{machine}"));
            let at = text.find("[[workload]]").unwrap() + "[[workload]]".len();
            parse(&format!("{}\ncpus = {cpus}{}", &text[..at], &text[at..]))
        };
        let s = with("cpus = 8", "\"2-3,5\"").unwrap();
        assert_eq!(s.workload_cpus[0].as_ref().unwrap().iter().collect::<Vec<_>>(), [2, 3, 5]);
        let s = with("cpus = 8", "2").unwrap();
        assert_eq!(s.workload_cpus[0].as_ref().unwrap().iter().collect::<Vec<_>>(), [0, 1]);
        let e = with("cpus = 8", "\"6-9\"").unwrap_err();
        assert_eq!(e.key, "workload[0].cpus");
        assert!(e.message.contains("CPU 8 does not exist"), "{e}");
        assert!(e.line.is_some(), "{e}");
        let e = with("", "2").unwrap_err();
        assert!(e.message.contains("needs machine.cpus"), "{e}");
        let e = with("cpus = 8", "0").unwrap_err();
        assert!(e.to_string().contains("from 1"), "{e}");
    }

    #[test]
    fn machine_knobs_outside_what_is_modeled_are_named() {
        let e = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\ncpus = 1025")).unwrap_err();
        assert_eq!(e.key, "machine.cpus");
        assert!(e.message.contains("1 to 1024"), "{e}");
        let s = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\ncpus = 4")).unwrap();
        assert_eq!(s.workload_cpus, vec![Some(crate::sched::CpuSet::all(4))], "a workload without `cpus` runs on every CPU");
        let e = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\npercpu_pagelist_high_fraction = 4")).unwrap_err();
        assert_eq!(e.key, "machine.percpu_pagelist_high_fraction");
        let s = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\ncpus = 1\npercpu_pagelist_high_fraction = 8")).unwrap();
        assert_eq!((s.machine.cpus, s.machine.percpu_pagelist_high_fraction), (Some(1), 8));
        let e = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\neevdf_turns = true")).unwrap_err();
        assert_eq!(e.key, "machine.eevdf_turns");
        assert!(e.message.contains("machine.cpus = 1"), "{e}");
        let s = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\ncpus = 1")).unwrap();
        assert!(s.machine.eevdf_turns, "on by default");
        let s = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\ncpus = 1\neevdf_turns = false")).unwrap();
        assert!(!s.machine.eevdf_turns);
        let e = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\nzones = \"numa\"")).unwrap_err();
        assert_eq!(e.key, "machine.zones");
        assert!(e.message.contains("`numa`") && e.message.contains("x86-64"), "{e}");
        let s = parse(&EXAMPLE.replace("memory = \"256M\"", "memory = \"256M\"\nzones = \"one\"")).unwrap();
        assert_eq!(s.machine.zones, crate::mm::mmzone::ZoneLayout::One);
    }

    #[test]
    fn bad_values_are_named() {
        let e = parse(&EXAMPLE.replace("\"192M\"", "\"192Q\"")).unwrap_err();
        assert_eq!(e.key, "cgroup[0].max");
        assert_eq!(e.line, Some(10));
        let e = parse(&EXAMPLE.replace("cgroup = \"/test\"", "cgroup = \"/nope\"")).unwrap_err();
        assert_eq!(e.key, "workload[0].cgroup");
        assert!(e.message.contains("not declared"), "{e}");
        let e = parse(&EXAMPLE.replace("cgroup = \"/test\"\n", "")).unwrap_err();
        assert_eq!(e.key, "workload[0].cgroup");
        let e = parse(&EXAMPLE.replace("zipf:0.8", "zipf")).unwrap_err();
        assert_eq!(e.key, "workload[0].distribution");
        assert_eq!(e.line, Some(18));
        let e = parse("[machine\nmemory=1").unwrap_err();
        assert_eq!(e.line, Some(1));
    }

    #[test]
    fn the_rstat_flush_period_defaults_to_flush_time_and_can_be_set() {
        assert_eq!(parse(EXAMPLE).unwrap().machine.rstat_flush_ns, 2_000_000_000);
        let s = Scenario::parse(EXAMPLE, "s.toml", "s", &["machine.rstat_flush=\"250ms\"".into()]).unwrap();
        assert_eq!(s.machine.rstat_flush_ns, 250_000_000);
        let e = Scenario::parse(EXAMPLE, "s.toml", "s", &["machine.rstat_flush=\"500us\"".into()]).unwrap_err();
        assert_eq!(e.key, "machine.rstat_flush");
    }

    #[test]
    fn with_overrides_gives_text_that_parses_to_the_overridden_scenario() {
        let o = vec!["machine.memory=512M".to_string(), "workload.fio-zipf.ops=10".to_string()];
        let text = with_overrides(EXAMPLE, "s.toml", &o).unwrap();
        let a = Scenario::parse(&text, "s.toml", "s", &[]).unwrap();
        let b = Scenario::parse(EXAMPLE, "s.toml", "s", &o).unwrap();
        assert_eq!(b.overrides, o, "a report's provenance.set");
        // The same scenario, given by text rather than by --set: only the record differs.
        assert_eq!(a, Scenario { overrides: Vec::new(), ..b });
        assert_eq!(a.workloads[0].phases[0].ops, 10);
    }

    #[test]
    fn the_refault_model_defaults_to_mainline_and_is_set_by_key_by_alias_or_by_set() {
        assert_eq!(parse(EXAMPLE).unwrap().workingset, RefaultSpec::default());
        assert_eq!(parse(EXAMPLE).unwrap().workingset.model, RefaultModel::Mainline);
        let with =
            |extra: &str, sets: &[&str]| Scenario::parse(&format!("{EXAMPLE}{extra}"), "s.toml", "s", &sets.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let s = with("[workingset]\nrefault_model = \"kairui-2026\"\n", &[]).unwrap();
        assert_eq!(s.workingset, RefaultSpec::of(RefaultModel::Kairui2026));
        let s = with("", &["workingset.refault_model=kairui-v3"]).unwrap();
        assert_eq!(s.workingset.model, RefaultModel::KairuiV3);
        // The alias names the variant seed 000's rule was written from.
        let s = with("[mglru]\nrefault_distance = true\n", &[]).unwrap();
        assert_eq!(s.workingset, RefaultSpec::of(RefaultModel::KairuiV3));
        assert!(with("[mglru]\nrefault_distance = true\n[workingset]\nrefault_model = \"kairui-v3\"\n", &[]).is_ok());
        let s = with("[workingset]\nrefault_model = \"kairui-v3\"\nmglru_placement = \"lru-add\"\nputback_ages_nonresident = true\n", &[]).unwrap();
        assert_eq!((s.workingset.mglru_placement, s.workingset.putback_ages_nonresident), (MglruPlacement::LruAdd, true));
    }

    #[test]
    fn refault_model_errors_name_the_file_line_and_keys() {
        let with = |extra: &str, sets: &[&str]| {
            Scenario::parse(&format!("{EXAMPLE}{extra}"), "s.toml", "s", &sets.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap_err()
        };
        // A conflict between the key and its alias names both.
        let e = with("[mglru]\nrefault_distance = true\n[workingset]\nrefault_model = \"kairui-2026\"\n", &[]);
        assert_eq!((e.key.as_str(), e.line), ("workingset.refault_model", Some(24)));
        assert!(e.message.contains("mglru.refault_distance") && e.message.contains("kairui-2026"), "{e}");
        let e = with("[mglru]\nrefault_distance = false\n", &["workingset.refault_model=kairui-v3"]);
        assert!(e.to_string().contains("mglru.refault_distance = false") && e.to_string().contains("--set workingset.refault_model=kairui-v3"), "{e}");
        let e = with("[workingset]\nrefault_model = \"kairui\"\n", &[]);
        assert_eq!((e.key.as_str(), e.line), ("workingset.refault_model", Some(22)));
        assert!(e.message.contains("kairui-v3"), "{e}");
        let e = with("[workingset]\nmglru_refs = \"shadow\"\n", &[]);
        assert_eq!(e.key, "workingset.mglru_refs");
        assert!(e.message.contains("Kairui"), "{e}");
        let e = with("[workingset]\nrefault_model = \"kairui-v3\"\nmglru_pid = \"both\"\n", &[]);
        assert_eq!((e.key.as_str(), e.line), ("workingset.mglru_pid", Some(23)));
        let e = with("[workingset]\nrefault_modle = \"kairui-v3\"\n", &[]);
        assert!(e.to_string().contains("refault_modle"), "{e}");
        let e = with("", &["machine.kernel=\"5.7\"", "workingset.refault_model=kairui-v3"]);
        assert_eq!(e.key, "workingset.refault_model");
    }

    #[test]
    fn overrides_reach_tables_and_named_list_entries() {
        let s = Scenario::parse(
            EXAMPLE,
            "s.toml",
            "s",
            &["machine.memory=512M".into(), "workload.fio-zipf.ops=10".into(), "cgroup./test.max=\"64M\"".into(), "machine.swappiness=100".into()],
        )
        .unwrap();
        assert_eq!(s.machine.memory_pages, 131072);
        assert_eq!(s.workloads[0].phases[0].ops, 10);
        assert_eq!(s.cgroups[0].max, 16384);
        assert_eq!(s.machine.swappiness, 100);
        let e = Scenario::parse(EXAMPLE, "s.toml", "s", &["workload.nope.ops=1".into()]).unwrap_err();
        assert!(e.message.contains("no entry named"), "{e}");
    }
}
