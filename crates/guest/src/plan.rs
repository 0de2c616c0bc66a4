//! What a scenario asks of the guest: the kernel knobs to set, the swap device, the cgroups,
//! the files the data disk must hold and the tasks to run.
//!
//! The guest reads the scenario leniently: keys only the model uses (`reserved`, `[time]`,
//! `[mglru]`, ...) are ignored here; `pagelab oracle` has already validated the whole file
//! with the model's own parser. Workload tables go through `pagelab-workload`, the code the
//! simulator uses, so both sides build identical [`JobStream`]s.

use std::fmt;

use pagelab_workload::{parse_duration_ns, parse_size, JobStream, Workload, WorkloadToml, PAGE_SIZE};
use serde::Deserialize;

/// A problem with the scenario, located by file, line and key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanError {
    pub file: String,
    pub line: Option<usize>,
    pub key: String,
    pub message: String,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if !self.key.is_empty() {
            write!(f, ": `{}`", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for PlanError {}

// `[machine]` and `[[cgroup]]` are the model's own types (one schema for both).
use pagelab_workload::schema::{CgroupToml, MachineToml};

/// `[oracle]`: added by `pagelab oracle --sysctl` to the guest's copy of the scenario only
/// (the model has no such table): kernel knobs the model does not have a key for.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OracleToml {
    #[serde(default)]
    sysctl: std::collections::BTreeMap<String, toml::Value>,
}

#[derive(Debug, Default, Deserialize)]
struct ScenarioToml {
    #[serde(default)]
    oracle: OracleToml,
    #[serde(default)]
    machine: MachineToml,
    #[serde(default)]
    cgroup: Vec<CgroupToml>,
    #[serde(default)]
    workload: Vec<WorkloadToml>,
}

/// The policy the scenario asks for: `/sys/kernel/mm/lru_gen/enabled` is set accordingly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyChoice {
    Classic,
    Mglru,
}

/// The swap device the guest sets up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwapKind {
    None,
    /// A virtio disk marked rotational (swap clusters and cluster readahead).
    Disk,
    /// A virtio disk marked non-rotational (SWP_SOLIDSTATE: VMA readahead).
    Ssd,
    /// zram (the swap cache bypass for synchronous IO).
    Zram,
}

/// A kernel knob written before the workload: `path` = `value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    pub path: String,
    pub value: String,
}

/// The machine-level part of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachinePlan {
    pub policy: PolicyChoice,
    pub swap: SwapKind,
    pub swap_bytes: u64,
    /// The data disk is rotational (`storage = "disk"`) or not (`ssd`).
    pub storage_rotational: bool,
    /// Mount cgroup2 with `memory_recursiveprot`.
    pub memory_recursiveprot: bool,
    swappiness: Option<u32>,
    read_ahead_kb: Option<u64>,
    page_cluster: Option<u32>,
    min_free_kbytes: Option<u64>,
    watermark_scale_factor: Option<u64>,
    percpu_pagelist_high_fraction: Option<u64>,
    watermark_boost_factor: Option<u64>,
    dirty_ratio: Option<u64>,
    dirty_background_ratio: Option<u64>,
    dirty_expire_cs: Option<u64>,
    dirty_writeback_cs: Option<u64>,
    fault_around_kb: Option<u64>,
    /// `[oracle] sysctl`: (dotted sysctl name, value).
    pub sysctls: Vec<(String, String)>,
}

/// A cgroup to create, its limits as the kernel's files take them ("max" or bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cgroup {
    pub path: String,
    pub max: Option<String>,
    pub high: Option<String>,
    pub low: Option<String>,
    pub min: Option<String>,
}

/// A file the data disk holds, at its largest size over every task that names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileDecl {
    pub name: String,
    pub pages: u64,
}

/// One task: job `job` of workload `workload`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskPlan {
    pub workload: usize,
    pub job: u32,
    /// As the model names it in its report (`name` or `name.job`).
    pub name: String,
    pub cgroup: String,
    pub hold: bool,
    pub start_ns: u64,
    pub runtime_ns: Option<u64>,
    pub op_interval_ns: u64,
}

/// Everything the guest does for a scenario.
#[derive(Clone, Debug)]
pub struct Plan {
    pub machine: MachinePlan,
    pub cgroups: Vec<Cgroup>,
    pub workloads: Vec<Workload>,
    pub tasks: Vec<TaskPlan>,
    pub files: Vec<FileDecl>,
    /// The phases' traces, read whole: (workload, phase, accesses).
    pub traces: Vec<crate::trace::PhaseTrace>,
}

impl Plan {
    /// Parses scenario text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Plan, PlanError> {
        let err = |key: &str, message: String| PlanError { file: file.to_string(), line: locate(text, key), key: key.to_string(), message };
        let raw: ScenarioToml = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            PlanError { file: file.to_string(), line, key: String::new(), message: e.message().to_string() }
        })?;
        let m = &raw.machine;
        let policy = match m.policy.as_deref().unwrap_or("classic") {
            "classic" => PolicyChoice::Classic,
            "mglru" => PolicyChoice::Mglru,
            other => return Err(err("machine.policy", format!("`{other}`: use \"classic\" or \"mglru\""))),
        };
        let swap_t = m.swap.as_ref();
        let swap = match swap_t.and_then(|s| s.device.as_deref()).unwrap_or("none") {
            "none" => SwapKind::None,
            "disk" => SwapKind::Disk,
            "ssd" => SwapKind::Ssd,
            "zram" => SwapKind::Zram,
            "ramdisk" => return Err(err("machine.swap.device", "`ramdisk` swap is not reproduced in the guest (use disk, ssd or zram)".into())),
            other => return Err(err("machine.swap.device", format!("`{other}`: use none, disk, ssd or zram"))),
        };
        let swap_bytes = match (swap, swap_t.and_then(|s| s.size.as_deref())) {
            (SwapKind::None, _) => 0,
            (_, Some(s)) => parse_size(s).map_err(|e| err("machine.swap.size", e))?,
            (_, None) => return Err(err("machine.swap.size", "missing: a swap device needs a size".into())),
        };
        let storage_rotational = match m.storage.as_deref().unwrap_or("ssd") {
            "disk" => true,
            "ssd" | "ramdisk" => false,
            other => return Err(err("machine.storage", format!("`{other}`: use disk or ssd"))),
        };
        let cs = |key: &str, v: &Option<String>| -> Result<Option<u64>, PlanError> {
            v.as_deref().map(|s| parse_duration_ns(s).map(|ns| ns / 10_000_000).map_err(|e| err(key, e))).transpose()
        };
        let machine = MachinePlan {
            policy,
            swap,
            swap_bytes,
            storage_rotational,
            memory_recursiveprot: m.memory_recursiveprot.unwrap_or(false),
            swappiness: m.swappiness,
            read_ahead_kb: m.read_ahead_kb,
            page_cluster: m.page_cluster,
            min_free_kbytes: m.min_free_kbytes,
            watermark_scale_factor: m.watermark_scale_factor,
            percpu_pagelist_high_fraction: m.percpu_pagelist_high_fraction,
            watermark_boost_factor: m.watermark_boost_factor,
            dirty_ratio: m.dirty_ratio,
            dirty_background_ratio: m.dirty_background_ratio,
            dirty_expire_cs: cs("machine.dirty_expire", &m.dirty_expire)?,
            dirty_writeback_cs: cs("machine.dirty_writeback", &m.dirty_writeback)?,
            fault_around_kb: m.fault_around_kb,
            sysctls: Vec::new(),
        };
        let mut machine = machine;
        for (k, v) in &raw.oracle.sysctl {
            if k.is_empty() || k.contains('/') || k.contains("..") || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-') {
                return Err(err("oracle.sysctl", format!("`{k}` is not a sysctl name (e.g. vm.watermark_boost_factor)")));
            }
            let v = match v {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            machine.sysctls.push((k.clone(), v));
        }

        let mut cgroups = Vec::new();
        for (i, c) in raw.cgroup.iter().enumerate() {
            let key = |k: &str| format!("cgroup[{i}].{k}");
            let path = c.path.clone().ok_or_else(|| err(&key("path"), "missing".into()))?;
            if !path.starts_with('/') || path == "/" || path.ends_with('/') || path.contains("//") || path.contains("..") {
                return Err(err(&key("path"), format!("`{path}` must look like /name or /parent/name")));
            }
            let parent = &path[..path.rfind('/').unwrap_or(0)];
            if !parent.is_empty() && !cgroups.iter().any(|c: &Cgroup| c.path == parent) {
                return Err(err(&key("path"), format!("the parent `{parent}` must be declared before `{path}`")));
            }
            let limit = |k: &str, v: &Option<String>| -> Result<Option<String>, PlanError> {
                match v.as_deref() {
                    None => Ok(None),
                    Some("max") => Ok(Some("max".into())),
                    Some(s) => parse_size(s).map(|b| Some(b.to_string())).map_err(|e| err(&key(k), e)),
                }
            };
            cgroups.push(Cgroup { max: limit("max", &c.max)?, high: limit("high", &c.high)?, low: limit("low", &c.low)?, min: limit("min", &c.min)?, path });
        }

        if raw.workload.is_empty() {
            return Err(err("workload", "the scenario has no [[workload]]".into()));
        }
        let mut workloads = Vec::new();
        for (i, w) in raw.workload.iter().enumerate() {
            let wl = w.resolve(i).map_err(|e| err(&format!("workload[{i}].{}", e.key), e.message))?;
            if wl.app_cache.as_ref().is_some_and(|a| a.shared.is_some()) {
                return Err(err(
                    &format!("workload[{i}].app_cache.shared"),
                    "the oracle's guest runs each job as a process of its own and cannot share an application cache between them (run the scenario in the model)".into(),
                ));
            }
            if wl.lockstep.is_some() {
                return Err(err(
                    &format!("workload[{i}].lockstep"),
                    "the oracle's guest does not run workloads in lockstep yet (run the scenario in the model)".into(),
                ));
            }
            if wl.cgroup != "/" && !cgroups.iter().any(|c| c.path == wl.cgroup) {
                return Err(err(&format!("workload[{i}].cgroup"), format!("cgroup `{}` is not declared", wl.cgroup)));
            }
            if cgroups.iter().any(|c| c.path.starts_with(&format!("{}/", wl.cgroup)) && wl.cgroup != "/") {
                return Err(err(
                    &format!("workload[{i}].cgroup"),
                    format!("`{}` has child cgroups; cgroup v2 allows tasks only in leaves (and the root)", wl.cgroup),
                ));
            }
            workloads.push(wl);
        }

        // Traces: sized as the simulator sizes them, then read whole (crate::trace).
        pagelab_trace::workload::size_traces(&mut workloads, file, &err)?;
        let traces = crate::trace::preload_all(&workloads).map_err(|(k, m)| err(&k, m))?;

        // Tasks and files in the order the simulator creates them.
        let mut tasks = Vec::new();
        let mut files: Vec<FileDecl> = Vec::new();
        for (wi, w) in workloads.iter().enumerate() {
            for job in 0..w.jobs {
                let st = JobStream::new(w, job);
                for o in st.objects().iter().filter(|o| !o.anon) {
                    if o.name.is_empty() || o.name.contains('/') || o.name.starts_with('.') || o.name.contains(char::is_whitespace) {
                        return Err(err(
                            &format!("workload[{wi}].file"),
                            format!("`{}` cannot be a file name on the guest's disk (no '/', spaces or leading '.')", o.name),
                        ));
                    }
                    match files.iter_mut().find(|f| f.name == o.name) {
                        Some(f) => f.pages = f.pages.max(o.pages),
                        None => files.push(FileDecl { name: o.name.clone(), pages: o.pages }),
                    }
                }
                tasks.push(TaskPlan {
                    workload: wi,
                    job,
                    name: if w.jobs > 1 { format!("{}.{}", w.name, job) } else { w.name.clone() },
                    cgroup: w.cgroup.clone(),
                    hold: w.hold,
                    start_ns: w.start_ns,
                    runtime_ns: w.runtime_ns,
                    op_interval_ns: w.op_interval_ns,
                });
            }
        }
        Ok(Plan { machine, cgroups, workloads, tasks, files, traces })
    }

    /// The operation stream of task `t`, as the simulator builds it (its traces replayed
    /// from memory).
    pub fn stream(&self, t: usize) -> JobStream {
        let tp = &self.tasks[t];
        let w = &self.workloads[tp.workload];
        let open = |spec: &pagelab_workload::TraceSpec, _: u32, _: u64| -> Result<Box<dyn pagelab_workload::TraceAccesses>, String> {
            let read = self.traces.iter().find(|t| t.workload == tp.workload && w.phases[t.phase].trace.as_ref() == Some(spec));
            read.map(|t| t.accesses.replay()).ok_or_else(|| format!("{}: not read by the plan", spec.path))
        };
        JobStream::with_traces(w, tp.job, &open).expect("every trace of the plan is read when it is parsed")
    }

    /// The accesses the plan's traces hold, all phases together.
    pub fn trace_accesses(&self) -> usize {
        self.traces.iter().map(|t| t.accesses.len()).sum()
    }

    /// Bytes the data disk needs for the files.
    pub fn data_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.pages * PAGE_SIZE).sum()
    }

    /// Workload keys that the guest follows in its own clock, which under emulation runs far
    /// slower than the model's cost model assumes: counters of such runs are not comparable.
    pub fn timing_warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for w in &self.workloads {
            let mut keys = Vec::new();
            if w.runtime_ns.is_some() {
                keys.push("runtime");
            }
            if w.op_interval_ns > 0 {
                keys.push("rate_iops");
            }
            if w.start_ns > 0 {
                keys.push("start");
            }
            if w.phases.iter().any(|p| p.think_ns > 0) {
                keys.push("think");
            }
            if !keys.is_empty() {
                out.push(format!(
                    "workload `{}` uses {}: the guest applies these in its own (emulated) time, so its operations do not line up in time with the model's",
                    w.name,
                    keys.join(", ")
                ));
            }
        }
        out
    }
}

impl MachinePlan {
    /// The knobs to write, for a data disk named `data_dev` (e.g. "vda"). Only what the
    /// scenario sets explicitly, and the policy, are written: pagelab's defaults are the
    /// kernel's.
    pub fn settings(&self, data_dev: &str) -> Vec<Setting> {
        let mut s = Vec::new();
        let mut set = |path: &str, value: String| s.push(Setting { path: path.to_string(), value });
        set("/sys/kernel/mm/lru_gen/enabled", if self.policy == PolicyChoice::Mglru { "y" } else { "n" }.into());
        set(&format!("/sys/block/{data_dev}/queue/rotational"), if self.storage_rotational { "1" } else { "0" }.into());
        // The vm sysctls a scenario sets, each written only when the scenario gives it.
        let vm_sysctls = [
            ("swappiness", self.swappiness.map(u64::from)),
            ("page-cluster", self.page_cluster.map(u64::from)),
            ("min_free_kbytes", self.min_free_kbytes),
            ("watermark_scale_factor", self.watermark_scale_factor),
            ("percpu_pagelist_high_fraction", self.percpu_pagelist_high_fraction),
            ("watermark_boost_factor", self.watermark_boost_factor),
            ("dirty_ratio", self.dirty_ratio),
            ("dirty_background_ratio", self.dirty_background_ratio),
            ("dirty_expire_centisecs", self.dirty_expire_cs),
            ("dirty_writeback_centisecs", self.dirty_writeback_cs),
        ];
        for (name, value) in vm_sysctls {
            if let Some(v) = value {
                set(&format!("/proc/sys/vm/{name}"), v.to_string());
            }
        }
        if let Some(v) = self.read_ahead_kb {
            set(&format!("/sys/block/{data_dev}/queue/read_ahead_kb"), v.to_string());
        }
        if let Some(v) = self.fault_around_kb {
            set("/sys/kernel/debug/fault_around_bytes", (v * 1024).to_string());
        }
        for (k, v) in &self.sysctls {
            set(&format!("/proc/sys/{}", k.replace('.', "/")), v.clone());
        }
        s
    }
}

/// Finds the line of a dotted key such as `workload[1].distribution`,
/// `workload[0].phase[1].ops` or `machine.swap.size`.
fn locate(text: &str, key: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut parts: Vec<&str> = key.split('.').collect();
    let leaf = parts.pop()?;
    let mut from = 0usize;
    let mut found_any = false;
    for part in &parts {
        let (name, index) = match part.split_once('[') {
            Some((n, i)) => (n, i.trim_end_matches(']').parse::<usize>().ok()),
            None => (*part, None),
        };
        let is_header = |l: &str| {
            let t = l.trim();
            let inner = match index {
                Some(_) => t.strip_prefix("[[").and_then(|t| t.strip_suffix("]]")),
                None => t.strip_prefix('[').and_then(|t| t.strip_suffix(']')),
            };
            inner.is_some_and(|h| h.trim().rsplit('.').next() == Some(name))
        };
        let mut count = 0;
        let mut hit = None;
        for (i, l) in lines.iter().enumerate().skip(from) {
            if is_header(l) {
                if index.is_none_or(|n| n == count) {
                    hit = Some(i);
                    break;
                }
                count += 1;
            }
        }
        if let Some(i) = hit {
            from = i;
            found_any = true;
        }
    }
    let leaf_name = leaf.split('[').next().unwrap_or(leaf);
    lines
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, l)| {
            let t = l.trim_start();
            (t.starts_with(leaf_name) && t[leaf_name.len()..].trim_start().starts_with('='))
                || t.contains(&format!(" {leaf_name} ="))
                || t.contains(&format!("{{{leaf_name} ="))
        })
        .map(|(i, _)| i + 1)
        .or(if found_any { Some(from + 1) } else { None })
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: &str = r#"
[machine]
memory = "256M"
kernel = "6.1"
reserved = "13359p"
policy = "mglru"
swap = { device = "zram", size = "512M" }
swappiness = 100
dirty_expire = "3s"

[[cgroup]]
path = "/p"
max = "128M"

[[cgroup]]
path = "/p/a"
low = "max"

[[workload]]
name = "zipf"
cgroup = "/p/a"
kind = "file-read"
file_size = "8M"
distribution = "zipf:0.9"
ops = 1000
jobs = 2

[[workload]]
name = "heap"
cgroup = "/"
kind = "anon-write"
size = "4M"
ops = 10
hold = true
"#;

    #[test]
    fn a_scenario_becomes_knobs_cgroups_files_and_tasks() {
        let p = Plan::parse(S, "s.toml").unwrap();
        assert_eq!(p.machine.policy, PolicyChoice::Mglru);
        assert_eq!((p.machine.swap, p.machine.swap_bytes), (SwapKind::Zram, 512 << 20));
        let set = p.machine.settings("vda");
        let get = |path: &str| set.iter().find(|s| s.path == path).map(|s| s.value.clone());
        assert_eq!(get("/sys/kernel/mm/lru_gen/enabled").as_deref(), Some("y"));
        assert_eq!(get("/proc/sys/vm/swappiness").as_deref(), Some("100"));
        assert_eq!(get("/proc/sys/vm/dirty_expire_centisecs").as_deref(), Some("300"));
        assert_eq!(get("/sys/block/vda/queue/rotational").as_deref(), Some("0"));
        assert_eq!(get("/proc/sys/vm/page-cluster"), None, "defaults are left to the kernel");
        assert_eq!(p.cgroups[0].max.as_deref(), Some("134217728"));
        assert_eq!(p.cgroups[1].low.as_deref(), Some("max"));
        // Two jobs, each with its own file, then the anonymous task.
        assert_eq!(p.files, vec![FileDecl { name: "zipf.0".into(), pages: 2048 }, FileDecl { name: "zipf.1".into(), pages: 2048 }]);
        let names: Vec<&str> = p.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["zipf.0", "zipf.1", "heap"]);
        assert!(p.tasks[2].hold);
        assert_eq!(p.stream(0).count(), 1000);
        assert_eq!(p.stream(2).count(), 1024 + 10, "prefill, then the writes");
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let e = Plan::parse(&S.replace("zipf:0.9", "zipf"), "s.toml").unwrap_err();
        assert_eq!(e.key, "workload[0].distribution");
        assert_eq!(e.line, Some(24));
        assert!(e.to_string().starts_with("s.toml:24: `workload[0].distribution`:"), "{e}");
        let e = Plan::parse(&S.replace("\"zram\"", "\"ramdisk\""), "s.toml").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("machine.swap.device", Some(7)));
        let e = Plan::parse(&S.replace("cgroup = \"/p/a\"", "cgroup = \"/p\""), "s.toml").unwrap_err();
        assert!(e.message.contains("only in leaves"), "{e}");
        let e = Plan::parse(&S.replace("path = \"/p\"\n", "path = \"/q\"\n"), "s.toml").unwrap_err();
        assert_eq!(e.key, "cgroup[1].path");
        let e = Plan::parse("[machine\n", "s.toml").unwrap_err();
        assert_eq!(e.line, Some(1));
        let e = Plan::parse(&S.replace("name = \"heap\"", "name = \"heap\"\nfile = \"a/b\"\nkind2 = 1"), "s.toml").unwrap_err();
        assert!(e.message.contains("kind2"), "{e}");
    }

    #[test]
    fn oracle_sysctls_are_written_under_proc_sys() {
        let p = Plan::parse(&format!("{S}\n[oracle]\nsysctl = {{ \"vm.watermark_boost_factor\" = 0 }}\n"), "s.toml").unwrap();
        let set = p.machine.settings("vda");
        assert!(set.contains(&Setting { path: "/proc/sys/vm/watermark_boost_factor".into(), value: "0".into() }), "{set:?}");
        let e = Plan::parse(&format!("{S}\n[oracle]\nsysctl = {{ \"../x\" = 0 }}\n"), "s.toml").unwrap_err();
        assert_eq!(e.key, "oracle.sysctl");
    }

    #[test]
    fn time_keys_are_flagged() {
        let p = Plan::parse(&S.replace("ops = 10\n", "ops = 10\nrate_iops = 100\n"), "s.toml").unwrap();
        let w = p.timing_warnings();
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("heap") && w[0].contains("rate_iops"), "{w:?}");
    }
}
