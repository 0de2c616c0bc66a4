//! Validating a scenario file's tables into a [`Scenario`] ([`build`]): the machine
//! ([`machine`], its devices, its reserved memory and its knobs each by a function), the
//! cgroups, the workloads, the report interval and `[workingset]`, then, for `[sample]`, the
//! miniature. Each check names the key it blames.

use std::collections::BTreeMap;

use super::{ControllerToml, EventToml, MachineSpec, NodeSpec, Scenario, ScenarioError, ScenarioToml, TimeToml, WorkingsetToml};
use crate::kernel::Kernel;
use crate::mm::memcontrol::{CgroupWrite, MemcgSpec, RstatMode, WriteKind, PAGE_COUNTER_MAX};
use crate::mm::swap::FgReset;
use crate::mm::swapfile::DeviceKind;
use crate::mm::time::DeviceCost;
use crate::mm::workingset::{MglruActivate, MglruPid, MglruPlacement, MglruRefs, RefaultModel, RefaultSpec};
use crate::policy::lru_gen::MglruToml;
use crate::policy::registry::MachinePolicy;
use crate::sim::controller::{ControllerSpec, OomdSpec, SenpaiMode, SenpaiSpec};
use pagelab_workload::schema::{CgroupToml, MachineToml, Text};
use pagelab_workload::{parse_duration_ns, parse_size, Workload, WorkloadToml, PAGE_SIZE};

/// How a check blames a key: (key, message) to the located error.
type Err<'a> = &'a dyn Fn(&str, String) -> ScenarioError;

/// How a `[[controller]]` key holding a duration is read: (key, value, default) to ns.
type DurationKey<'a> = &'a dyn Fn(&str, &Option<String>, u64) -> Result<u64, ScenarioError>;

/// The validated scenario of the file's tables `raw`.
pub(super) fn build(raw: ScenarioToml, name: &str, err: Err) -> Result<Scenario, ScenarioError> {
    let m = raw.machine.ok_or_else(|| err("machine", "missing the [machine] table".into()))?;
    let mut machine = machine(&m, err)?;
    let cgroups = cgroups(&raw.cgroup, &mut machine, err)?;
    let workloads = workloads(&raw.workload, &cgroups, err)?;
    let workload_cpus = cpu_sets(&workloads, machine.cpus, err)?;
    let events = events(&raw.event, &cgroups, machine.kernel, err)?;
    if !events.is_empty() && raw.sample.is_some() {
        return Err(err("event", "a miniature ([sample]) does not scale [[event]] sizes yet: run the full scenario".into()));
    }
    let controllers = controllers(&raw.controller, &cgroups, machine.kernel, err)?;
    if !controllers.is_empty() && raw.sample.is_some() {
        return Err(err("controller", "a miniature ([sample]) does not scale [[controller]] sizes yet: run the full scenario".into()));
    }
    let time = raw.time.unwrap_or_default();
    check_costs(&time, err)?;
    let report_profile = raw.report.as_ref().and_then(|r| r.profile).unwrap_or(false);
    let report_interval_ns = report_interval(raw.report.and_then(|r| r.interval), err)?;
    let mglru = raw.mglru.unwrap_or_default();
    let workingset = resolve_workingset(raw.workingset.unwrap_or_default(), &mglru, machine.kernel, err)?;
    let mglru_fg = resolve_fg(&mglru, machine.kernel, workingset.model, err)?;
    check_refs_width(&mglru, machine.kernel, err)?;
    let mut scenario = Scenario {
        name: name.to_string(),
        mglru,
        workingset,
        mglru_fg,
        costs: time.costs,
        swap_cost: time.swap.unwrap_or_else(|| DeviceCost::default_for(machine.swap_device)),
        storage_cost: time.storage.unwrap_or_else(|| DeviceCost::default_for(machine.storage)),
        report_interval_ns,
        report_profile,
        machine,
        cgroups,
        workloads,
        workload_cpus,
        events,
        controllers,
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

/// `[machine]`, validated, its policy resolved ([`MachinePolicy::resolve`]).
fn machine(m: &MachineToml, err: Err) -> Result<MachineSpec, ScenarioError> {
    let memory_pages = memory(m, err)?;
    let kernel_text = m.kernel.as_ref().map_or("6.1".to_string(), Text::text);
    let kernel = Kernel::parse(&kernel_text).map_err(|e| err("machine.kernel", e))?;
    let policy = MachinePolicy::resolve(m.policy.as_deref()).map_err(|e| err("machine.policy", e))?;
    if policy == MachinePolicy::Mglru && !kernel.has_lru_gen() {
        return Err(err("machine.policy", "MGLRU needs kernel 6.1 or 6.12 (5.7 predates it)".into()));
    }
    let (swap_device, swap_pages, storage) = devices(m, err)?;
    let swappiness = m.swappiness.unwrap_or(60);
    if swappiness > 200 {
        return Err(err("machine.swappiness", "must be between 0 and 200".into()));
    }
    let page_cluster = m.page_cluster.unwrap_or(3);
    if page_cluster > 10 {
        return Err(err("machine.page_cluster", "must be between 0 and 10".into()));
    }
    let r = reservations(m, memory_pages, err)?;
    let rstat = match m.rstat.as_deref().unwrap_or("kernel") {
        "kernel" => RstatMode::Kernel,
        "exact" => RstatMode::Exact,
        other => return Err(err("machine.rstat", format!("`{other}`: use \"kernel\" or \"exact\""))),
    };
    let refault_flush = refault_flush(m, err)?;
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
    let machine = MachineSpec {
        refault_flush,
        update_path_flush: m.update_path_flush.unwrap_or(false),
        seam_fallback: m.seam_fallback.unwrap_or(false),
        miniature: miniature(m, err)?,
        memory_pages,
        kernel,
        policy,
        swap_device,
        swap_pages,
        storage,
        min_free_kbytes: m.min_free_kbytes,
        watermark_scale_factor: watermark_scale_factor(m.watermark_scale_factor).map_err(|e| err("machine.watermark_scale_factor", e))?,
        cpus: cpus(m, err)?,
        nodes: nodes(m, memory_pages, cpus(m, err)?, err)?,
        eevdf_turns: eevdf_turns(m, err)?,
        zones: zones(m, err)?,
        nonmovable: nonmovable(m.nonmovable.as_ref(), memory_pages).map_err(|(k, e)| err(&k, e))?,
        watermark_boost_factor: m.watermark_boost_factor.unwrap_or(15_000),
        zone_watermarks: zone_watermarks(m.zone_watermarks.as_ref(), memory_pages).map_err(|(k, e)| err(&k, e))?,
        percpu_pagelist_high_fraction: percpu_pagelist_high_fraction(m, err)?,
        reserved_pages: r.reserved,
        kernel_used_pages: r.kernel_used,
        shmem_pages: r.shmem,
        shmem_active_pages: r.shmem_active,
        tunables: crate::mm::Tunables {
            swappiness,
            ra_pages: m.read_ahead_kb.unwrap_or(128) / 4,
            page_cluster,
            dirty_ratio: percent("machine.dirty_ratio", m.dirty_ratio, 20)?,
            dirty_background_ratio: percent("machine.dirty_background_ratio", m.dirty_background_ratio, 10)?,
            dirty_expire_ns: duration("machine.dirty_expire", &m.dirty_expire, 30_000_000_000)?,
            dirty_writeback_ns: duration("machine.dirty_writeback", &m.dirty_writeback, 5_000_000_000)?.max(1_000_000),
            memory_recursiveprot: m.memory_recursiveprot.unwrap_or(false),
            fault_around_pages: fault_around_pages(m.fault_around_kb).map_err(|e| err("machine.fault_around_kb", e))?,
        },
        rstat,
        rstat_flush_ns: {
            let ns = duration("machine.rstat_flush", &m.rstat_flush, crate::kernel::RSTAT_FLUSH_NS)?;
            if ns < 1_000_000 {
                return Err(err("machine.rstat_flush", "must be at least 1ms".into()));
            }
            ns
        },
    };
    Ok(machine)
}

/// `machine.memory`, in pages: 1M to 8 TiB.
fn memory(m: &MachineToml, err: Err) -> Result<u64, ScenarioError> {
    let memory_pages =
        pages(m.memory.as_deref().ok_or_else(|| err("machine.memory", "missing: how much RAM?".into()))?).map_err(|e| err("machine.memory", e))?;
    if memory_pages < 256 {
        return Err(err("machine.memory", "must be at least 1M".into()));
    }
    if memory_pages > u32::MAX as u64 / 2 {
        return Err(err("machine.memory", "is larger than pagelab's 8 TiB limit".into()));
    }
    Ok(memory_pages)
}

/// `machine.swap` and `machine.storage`: the swap device and its pages, and the files' device.
fn devices(m: &MachineToml, err: Err) -> Result<(DeviceKind, u64, DeviceKind), ScenarioError> {
    let swap = m.swap.clone().unwrap_or_default();
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
    Ok((swap_device, swap_pages, storage))
}

/// The machine's memory taken before the workloads run, in pages.
struct Reservations {
    reserved: u64,
    kernel_used: u64,
    shmem: u64,
    shmem_active: u64,
}

/// `machine.reserved`, `kernel_used`, `shmem` and `shmem_active`: together they leave at
/// least 1M of the machine's `memory_pages`.
fn reservations(m: &MachineToml, memory_pages: u64, err: Err) -> Result<Reservations, ScenarioError> {
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
    Ok(Reservations { reserved: reserved_pages, kernel_used: kernel_used_pages, shmem: shmem_pages, shmem_active: shmem_active_pages })
}

/// `machine.refault_flush`.
fn refault_flush(m: &MachineToml, err: Err) -> Result<crate::mm::memcontrol::RefaultFlush, ScenarioError> {
    use crate::mm::memcontrol::RefaultFlush as F;
    Ok(match m.refault_flush.as_deref().unwrap_or("kernel") {
        "kernel" => F::Kernel,
        "threshold" => F::Threshold,
        "always" => F::Always,
        "never" => F::Never,
        other => return Err(err("machine.refault_flush", format!("`{other}`: use kernel, threshold, always or never"))),
    })
}

/// `machine.miniature`: a sampling rate in (0, 1], 1 (a full machine) unless given.
fn miniature(m: &MachineToml, err: Err) -> Result<f64, ScenarioError> {
    match m.miniature {
        None => Ok(1.0),
        Some(r) if r > 0.0 && r <= 1.0 => Ok(r),
        Some(r) => Err(err("machine.miniature", format!("{r}: a sampling rate is in (0, 1]"))),
    }
}

/// `machine.percpu_pagelist_high_fraction`: 0 (the default) or at least 8, as the sysctl
/// takes (mm/page_alloc.c: percpu_pagelist_high_fraction_sysctl_handler(), 6.1 and 6.12).
fn percpu_pagelist_high_fraction(m: &MachineToml, err: Err) -> Result<u64, ScenarioError> {
    match m.percpu_pagelist_high_fraction.unwrap_or(0) {
        f @ (0 | 8..) => Ok(f),
        f => Err(err("machine.percpu_pagelist_high_fraction", format!("{f}: the sysctl takes 0 (the default) or at least 8"))),
    }
}

/// The most a `[time]` figure may be: a second of CPU for one step of work, 100 s for a
/// device's latency, 65,536 requests in flight. Past these the modeled clocks would overflow
/// long before a run ends (a run then never ends); no machine is that slow.
const MAX_COST_NS: u64 = 1_000_000_000;
const MAX_LATENCY_NS: u64 = 100_000_000_000;
const MAX_QUEUE_DEPTH: u64 = 65_536;

/// Every `[time]` figure within its bound ([`MAX_COST_NS`], [`MAX_LATENCY_NS`],
/// [`MAX_QUEUE_DEPTH`]), each named by its key.
fn check_costs(time: &TimeToml, err: Err) -> Result<(), ScenarioError> {
    let mut figures: Vec<(String, u64)> = Vec::new();
    let mut add = |prefix: &str, value: toml::Value| {
        if let toml::Value::Table(t) = value {
            for (k, v) in t {
                if let toml::Value::Integer(n) = v {
                    figures.push((format!("{prefix}{k}"), n.max(0) as u64));
                }
            }
        }
    };
    add("time.", toml::Value::try_from(&time.costs).expect("costs serialize"));
    add("time.cpu.", toml::Value::try_from(&time.costs.cpu).expect("costs serialize"));
    if let Some(d) = &time.swap {
        add("time.swap.", toml::Value::try_from(d).expect("costs serialize"));
    }
    if let Some(d) = &time.storage {
        add("time.storage.", toml::Value::try_from(d).expect("costs serialize"));
    }
    for (key, n) in figures {
        let limit = if key.ends_with("queue_depth") {
            MAX_QUEUE_DEPTH
        } else if key.ends_with("latency_ns") {
            MAX_LATENCY_NS
        } else {
            MAX_COST_NS
        };
        if n > limit {
            return Err(err(&key, format!("{n} is more than {limit}: no machine is that slow, and the modeled clocks would overflow")));
        }
    }
    Ok(())
}

/// `machine.cpus`: unset, or 1 to [`crate::sched::MAX_CPUS`].
fn cpus(m: &MachineToml, err: Err) -> Result<Option<u32>, ScenarioError> {
    match m.cpus {
        None => Ok(None),
        Some(n @ 1..=crate::sched::MAX_CPUS) => Ok(Some(n)),
        Some(n) => Err(err(
            "machine.cpus",
            format!("{n}: a machine has 1 to {} CPUs (leave it unset for a CPU of its own for every task and kswapd)", crate::sched::MAX_CPUS),
        )),
    }
}

/// `[[machine.node]]`: each node's `memory` (required; the nodes' add up to `machine.memory`,
/// which stays the machine's one total that the other keys are checked against) and `cpus`
/// (with `machine.cpus` set: a list, or a count taking the next CPUs after the nodes before;
/// every CPU in exactly one node; a lone node's default is every CPU). Up to
/// [`crate::mm::mapping::Shadow::MAX_NODES`] nodes, under either LRU (the seam's lists are per
/// memcg: `sim::run` refuses it on two nodes).
fn nodes(m: &MachineToml, memory_pages: u64, cpus: Option<u32>, err: Err) -> Result<Vec<NodeSpec>, ScenarioError> {
    use crate::sched::CpuSet;
    use pagelab_workload::CpuList;
    let mut nodes = Vec::with_capacity(m.node.len());
    let mut owner: Vec<Option<usize>> = vec![None; cpus.unwrap_or(0) as usize];
    let mut next_cpu = 0u32;
    for (i, n) in m.node.iter().enumerate() {
        let key = |k: &str| format!("machine.node[{i}].{k}");
        let text = n.memory.as_deref().ok_or_else(|| err(&key("memory"), "missing: how much of machine.memory is on this node?".into()))?;
        let node_pages = pages(text).map_err(|e| err(&key("memory"), e))?;
        if node_pages < 256 {
            return Err(err(&key("memory"), "must be at least 1M".into()));
        }
        let set = match (cpus, &n.cpus) {
            (None, Some(_)) => return Err(err(&key("cpus"), "needs machine.cpus: without it every task has a CPU of its own".into())),
            (None, None) => None,
            (Some(total), None) if m.node.len() == 1 => Some(CpuSet::all(total)),
            (Some(_), None) => return Err(err(&key("cpus"), "missing: a machine of several nodes gives each node its CPUs (\"0-35\" or a count)".into())),
            (Some(total), Some(CpuList::Count(c))) => {
                let last = next_cpu.checked_add(*c).filter(|&e| *c > 0 && e <= total).ok_or_else(|| {
                    err(
                        &key("cpus"),
                        format!("{c} CPUs from CPU {next_cpu}: the machine has {total} (machine.cpus); a count takes the CPUs after the nodes before"),
                    )
                })?;
                Some(CpuSet::parse(&format!("{next_cpu}-{}", last - 1), total).map_err(|e| err(&key("cpus"), e))?)
            }
            (Some(total), Some(CpuList::List(l))) => Some(CpuSet::parse(l, total).map_err(|e| err(&key("cpus"), e))?),
        };
        if let Some(set) = &set {
            for c in set.iter() {
                if let Some(j) = owner[c as usize].replace(i) {
                    return Err(err(&key("cpus"), format!("CPU {c} is node {j}'s already: a CPU belongs to one node")));
                }
                next_cpu = next_cpu.max(c + 1);
            }
        }
        nodes.push(NodeSpec { memory_pages: node_pages, cpus: set });
    }
    if nodes.is_empty() {
        return Ok(nodes);
    }
    if let Some(c) = owner.iter().position(Option::is_none) {
        return Err(err("machine.node", format!("CPU {c} of machine.cpus is on no node: give every CPU to one node")));
    }
    let sum: u64 = nodes.iter().map(|n| n.memory_pages).sum();
    if sum != memory_pages {
        return Err(err(
            "machine.node",
            format!("the nodes' memory adds up to {}, machine.memory is {}: they must be equal", size_text(sum), size_text(memory_pages)),
        ));
    }
    if nodes.len() > crate::mm::mapping::Shadow::MAX_NODES {
        return Err(err(
            "machine.node",
            format!(
                "{} nodes: a shadow entry keeps the node of its eviction in 3 bits, so pagelab models at most {}",
                nodes.len(),
                crate::mm::mapping::Shadow::MAX_NODES
            ),
        ));
    }
    Ok(nodes)
}

/// Each workload's `cpus` as a CPU set of the machine's `machine.cpus` (every CPU when
/// unset); a workload's `cpus` needs a machine of several CPUs.
fn cpu_sets(workloads: &[Workload], cpus: Option<u32>, err: Err) -> Result<Vec<Option<crate::sched::CpuSet>>, ScenarioError> {
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

/// `machine.eevdf_turns`: true only with `cpus = 1` (default true).
fn eevdf_turns(m: &MachineToml, err: Err) -> Result<bool, ScenarioError> {
    match (m.eevdf_turns, m.cpus) {
        (Some(true), Some(1)) | (None | Some(false), _) => Ok(m.eevdf_turns.unwrap_or(true)),
        (Some(true), _) => Err(err("machine.eevdf_turns", "true needs machine.cpus = 1: the turns are those of one CPU".to_string())),
    }
}

/// `machine.zones`: `x86-64` (the default) or `one`.
fn zones(m: &MachineToml, err: Err) -> Result<crate::mm::mmzone::ZoneLayout, ScenarioError> {
    match m.zones.as_deref() {
        None | Some("x86-64") => Ok(crate::mm::mmzone::ZoneLayout::X86_64),
        Some("one") => Ok(crate::mm::mmzone::ZoneLayout::One),
        Some(z) => {
            Err(err("machine.zones", format!("`{z}`: the layouts are `x86-64` (ZONE_DMA, ZONE_DMA32, ZONE_NORMAL above 4 GiB) and `one` (a single zone)")))
        }
    }
}

/// `[[cgroup]]`: each path well formed, its limits, its seam policy (added to the machine's
/// policy, [`MachinePolicy::add_cgroup`]), and the tree they make accepted by the memcg model.
fn cgroups(raw: &[CgroupToml], machine: &mut MachineSpec, err: Err) -> Result<Vec<MemcgSpec>, ScenarioError> {
    let mut cgroups = Vec::new();
    for (i, c) in raw.iter().enumerate() {
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
            let path = &cgroups.last().expect("just pushed").path;
            machine.policy.add_cgroup(path, name).map_err(|e| err(&key("policy"), e))?;
        }
    }
    crate::mm::memcontrol::Memcgs::new(machine.kernel, &cgroups, machine.rstat).map_err(|e| {
        // The tree's errors name a cgroup's path: blame its [[cgroup]] entry (the last one
        // with that path, which for a duplicate is the second), not a workload's `cgroup =`.
        let named = e.split('`').nth(1).unwrap_or("");
        match cgroups.iter().rposition(|c| c.path == named) {
            Some(i) => err(&format!("cgroup[{i}].path"), e),
            None => err("cgroup", e),
        }
    })?;
    Ok(cgroups)
}

/// `[[workload]]`: at least one, each in a declared cgroup, named uniquely without control
/// characters, with its `lockstep` and shared files consistent with the others.
fn workloads(raw: &[WorkloadToml], cgroups: &[MemcgSpec], err: Err) -> Result<Vec<Workload>, ScenarioError> {
    if raw.is_empty() {
        return Err(err("workload", "the scenario has no [[workload]]".into()));
    }
    let mut workloads = Vec::new();
    let mut names = BTreeMap::new();
    for (i, w) in raw.iter().enumerate() {
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
    Ok(workloads)
}

/// `[[event]]`: each at a time (`at`), in a declared cgroup (not the root, whose
/// memory.high and memory.max do not exist), writing one of `reclaim`, `high`, `max`;
/// `swappiness` goes with `reclaim` on kernels whose memory_reclaim() parses it. Sorted by
/// time, ties kept in the file's order.
fn events(raw: &[EventToml], cgroups: &[MemcgSpec], kernel: Kernel, err: Err) -> Result<Vec<CgroupWrite>, ScenarioError> {
    let mut events = Vec::with_capacity(raw.len());
    for (i, e) in raw.iter().enumerate() {
        let key = |k: &str| format!("event[{i}].{k}");
        let at = e.at.as_deref().ok_or_else(|| err(&key("at"), "missing: when the write happens, e.g. at = \"30s\"".into()))?;
        let at_ns = parse_duration_ns(at).map_err(|m| err(&key("at"), m))?;
        let cgroup = e.cgroup.clone().ok_or_else(|| err(&key("cgroup"), "missing: the path of a declared [[cgroup]], e.g. cgroup = \"/app\"".into()))?;
        if !cgroups.iter().any(|c| c.path == cgroup) {
            let why = if cgroup == "/" { "the root cgroup has no memory.reclaim/high/max to write in the model" } else { "no [[cgroup]] has this path" };
            return Err(err(&key("cgroup"), format!("`{cgroup}`: {why}")));
        }
        let limit = |k: &str, v: &str| -> Result<u64, ScenarioError> {
            match v {
                "max" => Ok(PAGE_COUNTER_MAX),
                s => pages(s).map_err(|m| err(&key(k), m)),
            }
        };
        let kind = match (&e.reclaim, &e.high, &e.max) {
            (Some(r), None, None) => {
                let pages = pages(r).map_err(|m| err(&key("reclaim"), m))?;
                if pages == 0 {
                    return Err(err(&key("reclaim"), format!("`{r}` is less than a page: memory.reclaim takes a byte count of at least 4K")));
                }
                let swappiness = match e.swappiness {
                    None => None,
                    Some(_) if !kernel.memory_reclaim_takes_swappiness() => {
                        return Err(err(
                            &key("swappiness"),
                            format!(
                                "kernel {}'s memory.reclaim takes a byte count only (its memory_reclaim() refuses `swappiness=` with EINVAL; 6.12's parses it)",
                                kernel.name()
                            ),
                        ))
                    }
                    Some(s @ 0..=200) => Some(s as u32),
                    Some(s) => {
                        return Err(err(&key("swappiness"), format!("{s}: memory.reclaim takes swappiness=0..200 (the kernel refuses the rest with EINVAL)")))
                    }
                };
                WriteKind::Reclaim { pages, swappiness }
            }
            (None, Some(h), None) => WriteKind::High(limit("high", h)?),
            (None, None, Some(m)) => WriteKind::Max(limit("max", m)?),
            (None, None, None) => {
                return Err(err(&format!("event[{i}]"), "writes nothing: give one of reclaim = \"256M\", high = \"2G\" or max = \"3G\"".into()))
            }
            _ => {
                return Err(err(
                    &format!("event[{i}]"),
                    "one write an event: give only one of `reclaim`, `high` and `max` (two writes are two [[event]]s)".into(),
                ))
            }
        };
        if e.swappiness.is_some() && !matches!(kind, WriteKind::Reclaim { .. }) {
            return Err(err(&key("swappiness"), format!("goes with `reclaim` (memory.reclaim's swappiness=); {} takes a size only", kind.file())));
        }
        events.push(CgroupWrite { at_ns, cgroup, kind });
    }
    events.sort_by_key(|e| e.at_ns);
    Ok(events)
}

/// `[[controller]]` tables: `kind` and `cgroup` (a declared one, not the root), then the
/// kind's own keys, each checked; a key of the other kind is refused by name.
fn controllers(raw: &[ControllerToml], cgroups: &[MemcgSpec], kernel: Kernel, err: Err) -> Result<Vec<ControllerSpec>, ScenarioError> {
    let mut out = Vec::with_capacity(raw.len());
    for (i, c) in raw.iter().enumerate() {
        let key = |k: &str| format!("controller[{i}].{k}");
        let kind = c.kind.as_deref().ok_or_else(|| err(&key("kind"), "missing: `senpai` (proactive reclaim on PSI) or `oomd` (kill on PSI)".into()))?;
        let cgroup = c.cgroup.clone().ok_or_else(|| err(&key("cgroup"), "missing: the path of a declared [[cgroup]], e.g. cgroup = \"/app\"".into()))?;
        if !cgroups.iter().any(|m| m.path == cgroup) {
            let why = if cgroup == "/" { "the root cgroup has no memory.reclaim/high to write in the model" } else { "no [[cgroup]] has this path" };
            return Err(err(&key("cgroup"), format!("`{cgroup}`: {why}")));
        }
        let duration = |k: &str, v: &Option<String>, default: u64| -> Result<u64, ScenarioError> {
            let Some(v) = v else { return Ok(default) };
            let ns = parse_duration_ns(v).map_err(|m| err(&key(k), m))?;
            if ns < 1_000_000 {
                return Err(err(&key(k), format!("`{v}`: at least 1ms")));
            }
            Ok(ns)
        };
        let senpai_keys = [
            ("mode", c.mode.is_some()),
            ("tick", c.tick.is_some()),
            ("pressure", c.pressure.is_some()),
            ("max_probe", c.max_probe.is_some()),
            ("max_backoff", c.max_backoff.is_some()),
            ("coeff_probe", c.coeff_probe.is_some()),
            ("coeff_backoff", c.coeff_backoff.is_some()),
            ("min_size", c.min_size.is_some()),
            ("max_size", c.max_size.is_some()),
            ("swappiness", c.swappiness.is_some()),
        ];
        let oomd_keys = [("limit", c.limit.is_some()), ("duration", c.duration.is_some())];
        let refuse = |keys: &[(&str, bool)], other: &str| -> Result<(), ScenarioError> {
            match keys.iter().find(|(_, given)| *given) {
                Some((k, _)) => Err(err(&key(k), format!("is a key of kind = \"{other}\", not of kind = \"{kind}\""))),
                None => Ok(()),
            }
        };
        let spec = match kind {
            "senpai" => {
                refuse(&oomd_keys, "oomd")?;
                ControllerSpec::Senpai(senpai(c, &cgroup, kernel, &key, &duration, err)?)
            }
            "oomd" => {
                refuse(&senpai_keys, "senpai")?;
                ControllerSpec::Oomd(oomd(c, cgroup, &key, &duration, err)?)
            }
            other => return Err(err(&key("kind"), format!("`{other}`: a controller is kind = \"senpai\" or kind = \"oomd\""))),
        };
        out.push(spec);
    }
    Ok(out)
}

/// `kind = "oomd"`'s keys, defaulting to systemd-oomd's (crate::sim::controller::OomdSpec).
fn oomd(c: &ControllerToml, cgroup: String, key: &dyn Fn(&str) -> String, duration: DurationKey, err: Err) -> Result<OomdSpec, ScenarioError> {
    let limit_pct_x100 = match c.limit.as_deref() {
        None => 6000,
        Some(v) => match v.trim().strip_suffix('%').map(|n| n.trim().parse::<f64>()) {
            Some(Ok(p)) if (0.0..=100.0).contains(&p) => (p * 100.0).round() as u64,
            _ => return Err(err(&key("limit"), format!("`{v}`: a percentage of time from 0% to 100%, e.g. limit = \"60%\""))),
        },
    };
    let interval_ns = duration("interval", &c.interval, 1_000_000_000)?;
    let duration_ns = match &c.duration {
        None => 30_000_000_000,
        Some(v) => parse_duration_ns(v).map_err(|m| err(&key("duration"), m))?,
    };
    Ok(OomdSpec { cgroup, interval_ns, limit_pct_x100, duration_ns })
}

/// `kind = "senpai"`'s keys, defaulting to senpai.py's (crate::sim::controller::SenpaiSpec).
fn senpai(
    c: &ControllerToml,
    cgroup: &str,
    kernel: Kernel,
    key: &dyn Fn(&str) -> String,
    duration: DurationKey,
    err: Err,
) -> Result<SenpaiSpec, ScenarioError> {
    let mode = match c.mode.as_deref() {
        None | Some("reclaim") => SenpaiMode::Reclaim,
        Some("high") => SenpaiMode::High,
        Some(other) => return Err(err(&key("mode"), format!("`{other}`: `reclaim` (memory.reclaim, TMO's) or `high` (memory.high, senpai.py's)"))),
    };
    let tick_ns = duration("tick", &c.tick, 1_000_000_000)?;
    let interval_ns = duration("interval", &c.interval, 6_000_000_000)?;
    if interval_ns < tick_ns {
        return Err(err(&key("interval"), format!("{interval_ns} ns is shorter than the tick ({tick_ns} ns): senpai probes at most once a tick")));
    }
    let pressure_us = match &c.pressure {
        None => 10_000,
        Some(v) => match parse_duration_ns(v).map_err(|m| err(&key("pressure"), m))? / 1000 {
            0 => return Err(err(&key("pressure"), format!("`{v}`: the stall target is at least 1us"))),
            us => us,
        },
    };
    let fraction = |k: &str, v: Option<f64>, default: f64| -> Result<f64, ScenarioError> {
        match v {
            None => Ok(default),
            Some(f) if f > 0.0 && f <= 1.0 => Ok(f),
            Some(f) => Err(err(&key(k), format!("{f}: a fraction of the cgroup's memory in (0, 1]"))),
        }
    };
    let coeff = |k: &str, v: Option<f64>, default: f64| -> Result<f64, ScenarioError> {
        match v {
            None => Ok(default),
            Some(f) if f.is_finite() && f > 0.0 => Ok(f),
            Some(f) => Err(err(&key(k), format!("{f}: a coefficient greater than 0"))),
        }
    };
    let size = |k: &str, v: &Option<String>, default: u64| -> Result<u64, ScenarioError> {
        match v {
            None => Ok(default),
            Some(v) => parse_size(v).map_err(|m| err(&key(k), m)),
        }
    };
    let (min_size, max_size) = (size("min_size", &c.min_size, 100 << 20)?, size("max_size", &c.max_size, 100 << 30)?);
    if min_size > max_size {
        return Err(err(&key("min_size"), format!("{min_size} bytes is above max_size ({max_size} bytes)")));
    }
    if mode == SenpaiMode::Reclaim && (c.min_size.is_some() || c.max_size.is_some()) {
        let k = if c.min_size.is_some() { "min_size" } else { "max_size" };
        return Err(err(&key(k), "bounds memory.high: it goes with mode = \"high\" (mode \"reclaim\" writes memory.reclaim, which has no limit)".into()));
    }
    let swappiness = match c.swappiness {
        None => None,
        Some(_) if mode == SenpaiMode::High => {
            return Err(err(&key("swappiness"), "goes with mode = \"reclaim\" (memory.reclaim's swappiness=); memory.high takes a size only".into()))
        }
        Some(_) if !kernel.memory_reclaim_takes_swappiness() => {
            return Err(err(&key("swappiness"), format!("kernel {}'s memory.reclaim takes a byte count only (6.12's parses swappiness=)", kernel.name())))
        }
        Some(s @ 0..=200) => Some(s as u32),
        Some(s) => return Err(err(&key("swappiness"), format!("{s}: memory.reclaim takes swappiness=0..200"))),
    };
    Ok(SenpaiSpec {
        cgroup: cgroup.to_string(),
        mode,
        tick_ns,
        interval_ticks: (interval_ns / tick_ns).max(1),
        pressure_us,
        max_probe: fraction("max_probe", c.max_probe, 0.01)?,
        max_backoff: coeff("max_backoff", c.max_backoff, 1.0)?,
        coeff_probe: coeff("coeff_probe", c.coeff_probe, 10.0)?,
        coeff_backoff: coeff("coeff_backoff", c.coeff_backoff, 20.0)?,
        min_size,
        max_size,
        swappiness,
    })
}

/// `report.interval`: 1 s unless given, at least 1 ms.
fn report_interval(interval: Option<String>, err: Err) -> Result<u64, ScenarioError> {
    let report_interval_ns = match interval.as_deref() {
        Some(s) => parse_duration_ns(s).map_err(|e| err("report.interval", e))?,
        None => 1_000_000_000,
    };
    if report_interval_ns < 1_000_000 {
        return Err(err("report.interval", "must be at least 1ms".into()));
    }
    Ok(report_interval_ns)
}

/// Workloads share a file by naming it (`file = "shared"`): each must give it the same size,
/// or nothing would say which size applies.
fn check_shared_files(workloads: &[Workload], err: &dyn Fn(&str, String) -> ScenarioError) -> Result<(), ScenarioError> {
    let mut sizes: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
    for (i, w) in workloads.iter().enumerate() {
        // A search's tree and a store are not one file: their files are sized by themselves.
        for p in w.phases.iter().filter(|p| !p.kind.is_anon() && p.trace.is_none() && p.search.is_none() && p.lsm.is_none()) {
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
pub(super) fn fault_around_pages(kb: Option<u64>) -> Result<u64, String> {
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
                if o.anon && o.shared {
                    // A shared region is the process's, counted once.
                    if !anon.iter().any(|(n, _, _)| *n == o.name) {
                        anon.push((o.name.clone(), o.pages, block));
                    }
                } else if o.anon {
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
    if let [node] = &mut m.nodes[..] {
        node.memory_pages = memory_pages;
    }
    m.reserved_pages = scale(m.reserved_pages);
    m.kernel_used_pages = scale(m.kernel_used_pages);
    m.shmem_pages = scale(m.shmem_pages);
    m.shmem_active_pages = scale(m.shmem_active_pages).min(m.shmem_pages);
    m.swap_pages = scale_size("machine.swap.size", m.swap_pages)?;
    m.rstat_flush_ns = scale_ns(m.rstat_flush_ns);
    m.tunables.dirty_expire_ns = scale_ns(m.tunables.dirty_expire_ns);
    m.tunables.dirty_writeback_ns = scale_ns(m.tunables.dirty_writeback_ns);
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

/// Checks `[mglru] refs_width`, the build's `LRU_REFS_WIDTH`: 1 or 2, and only with the
/// 6.1 and 6.12 rules (7.3's tier rework and MGLRU-FG keep their own refs field).
fn check_refs_width(mglru: &MglruToml, kernel: Kernel, err: &dyn Fn(&str, String) -> ScenarioError) -> Result<(), ScenarioError> {
    match mglru.refs_width {
        None | Some(2) => Ok(()),
        Some(1) if matches!(kernel, Kernel::V6_1 | Kernel::V6_12) => Ok(()),
        Some(1) => Err(err("mglru.refs_width", format!("1 applies to the 6.1 and 6.12 rules, not kernel \"{}\"", kernel.name()))),
        Some(w) => Err(err("mglru.refs_width", format!("{w}: LRU_REFS_WIDTH is 1 or 2 (MAX_NR_TIERS - 2 at most)"))),
    }
}

/// Resolves `[mglru] fg` and `fg_reset` (MGLRU-FG, Kairui Song's RFC of May 2026): off by
/// default; on, it needs kernel "7.3" (the RFC applies to 2026's mm-unstable, which carries
/// 6.14's tier rework that 7.3 models) and a refault model the series ships with it
/// ("mainline", i.e. its first 21 patches, or "kairui-2026"). `fg_reset` needs `fg = true`.
fn resolve_fg(mglru: &MglruToml, kernel: Kernel, model: RefaultModel, err: &dyn Fn(&str, String) -> ScenarioError) -> Result<Option<FgReset>, ScenarioError> {
    let reset = mglru.fg_reset.as_deref().map(FgReset::parse).transpose().map_err(|e| err("mglru.fg_reset", e))?;
    if mglru.fg != Some(true) {
        if reset.is_some() {
            return Err(err("mglru.fg_reset", "applies only with `mglru.fg = true`".into()));
        }
        return Ok(None);
    }
    if kernel != Kernel::V7_3 {
        return Err(err(
            "mglru.fg",
            format!("MGLRU-FG (Kairui Song's RFC of May 2026) builds on 7.3's MGLRU: set machine.kernel = \"7.3\" (not \"{}\")", kernel.name()),
        ));
    }
    if model == RefaultModel::KairuiV3 {
        return Err(err(
            "mglru.fg",
            "MGLRU-FG ships with the 2026 refault-distance rework: use workingset.refault_model = \"mainline\" or \"kairui-2026\", not \"kairui-v3\"".into(),
        ));
    }
    Ok(Some(reset.unwrap_or_default()))
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
) -> Result<Vec<(String, u64, [u64; crate::mm::pageblock::NR_ORDERS], Option<u64>)>, (String, String)> {
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
        if let Some(pcp) = z.pcp.filter(|&n| n > z.blocks * PAGEBLOCK_PAGES - pages) {
            return Err((format!("{key}.pcp"), format!("{pcp} frames on per-CPU lists do not fit beside {pages} free pages in {} pageblocks", z.blocks)));
        }
        out.push((zone.clone(), z.blocks, free, z.pcp));
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
