//! Building a [`Machine`] from a scenario ([`Machine::new`]): the zones and their
//! watermarks, the memcg tree, the operation streams of every job, the address space (files
//! shared by name, each task's anonymous regions, shared memory), the tasks, the frames with
//! the kernel's own pages and non-movable pageblocks, the model's state ([`Mm`]), the policy,
//! and the timed events' first times.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use pagelab_workload::JobStream;

use super::events::{kcompactd_interval, vmstat_interval, TaskQueue, TASK_SCAN_MAX};
use super::lockstep::lock_tasks;
use super::ops::OpSource;
use super::{Machine, Task, TaskObject, WorkloadTiming, LOOKAHEAD};
use crate::mm::folio::Folios;
use crate::mm::mapping::AddressSpace;
use crate::mm::memcontrol::Memcgs;
use crate::mm::mmzone::Zones;
use crate::mm::readahead::{FileRef, RaState};
use crate::mm::swap_state::SwapRaState;
use crate::mm::swapfile::Swap;
use crate::mm::time::Device;
use crate::mm::vmstat::Events;
use crate::mm::workingset::ShadowNodes;
use crate::mm::{Actor, Config, Mm, TaskMm};
use crate::policy::Policy;
use crate::sim::sample::SampledObject;
use crate::sim::scenario::{MachineSpec, Scenario};

/// Fills the shmem object: swap-backed, unmapped, dirty pages charged to the root memcg,
/// added to the LRU as shmem_add_to_page_cache() + folio_add_lru() would. The first
/// `active` pages carry PG_active, as pages read twice since (folio_mark_accessed()) do: they
/// go to the active anon list, or under MGLRU to the youngest generation (lru_gen_add_folio()
/// of 6.1/6.12, which is also where lru_gen_change_state() moves active pages when MGLRU is
/// switched on at run time).
fn populate_shmem<P: Policy>(mm: &mut Mm, p: &mut P, obj: usize, active: u64) {
    let (base, pages) = (mm.space.objects[obj].base, mm.space.objects[obj].pages);
    for vpn in base..base + pages {
        let active = ((vpn - base) as u64) < active;
        let Some(pfn) = mm.folios.alloc() else { break };
        {
            let f = mm.folios.get_mut(pfn);
            f.vpn = vpn;
            f.memcg = crate::mm::memcontrol::ROOT_MEMCG;
            f.flags = crate::mm::folio::pg::SWAPBACKED | crate::mm::folio::pg::DIRTY;
            if active {
                f.flags |= crate::mm::folio::pg::ACTIVE;
            }
        }
        mm.page_counts(pfn, 1);
        mm.memcgs.force_charge(crate::mm::memcontrol::ROOT_MEMCG, 1);
        mm.space.set(vpn, crate::mm::mapping::Entry::Resident(pfn));
        crate::mm::swap::folio_add_lru(mm, p, pfn);
    }
    crate::mm::swap::lru_add_drain(mm, p);
}

/// The name of job `job`'s anonymous region `object` of workload `workload`.
pub fn anon_object_name(workload: &str, job: u32, object: &str) -> String {
    format!("{workload}.{job}:{object}")
}

/// An object of `pages` pages (`block`: its largest block) as the machine holds it: whole,
/// or in a miniature scenario its sample (an error if no page is in it).
fn sample_object(s: &Scenario, name: &str, pages: u64, block: u64) -> Result<(u64, Option<Arc<SampledObject>>), String> {
    let Some(spec) = s.sample else { return Ok((pages, None)) };
    let sample = SampledObject::new(name, pages, block, spec);
    match sample.kept_pages() {
        0 => Err(crate::sim::sample::empty(name, pages, block, spec)),
        kept => Ok((kept, Some(Arc::new(sample)))),
    }
}

/// `machine.nonmovable`: the non-movable pageblocks at the bottom of their zone, their free
/// chunks off the zone's movable free list and into the pageblocks' own buddy lists. Returns
/// the pageblocks (`None` without the key), the frames in them that are not free, and those
/// of them on the per-CPU lists (`pcp`: free, but not the kernel's).
///
/// Why the bottom: at boot every pageblock is movable and memory is freed in ascending order
/// to the tail of the free lists (memblock_free_all() -> __free_pages_core(), FPI_TO_TAIL),
/// while allocations take from the head, so the first unmovable allocations, and the blocks
/// they claim, are the zone's lowest. It matters to compaction, whose migrate scanner starts
/// at the zone's bottom and meets the free scanner long before the top.
fn lay_out_pageblocks(
    m: &crate::sim::scenario::MachineSpec,
    sizes: &[(&'static str, u64)],
    zones: &crate::mm::mmzone::Zones,
    folios: &mut Folios,
) -> Result<(Option<Box<crate::mm::pageblock::Pageblocks>>, u64, u64), String> {
    use crate::mm::pageblock::{Pageblocks, ZoneLayout, PAGEBLOCK_PAGES};
    if m.nonmovable.is_empty() {
        return Ok((None, 0, 0));
    }
    // The pageblocks' free-list walks take the frames one by one.
    folios.list_all_fresh();
    if let Some(e) = folios.failure() {
        return Err(format!("machine.nonmovable: {e}"));
    }
    let total: u64 = sizes.iter().map(|&(_, n)| n).sum();
    let marks = zones.z.iter().map(|z| [z.wmark_min, z.wmark_low, z.wmark_high]).collect();
    let managed = zones.z.iter().map(|z| z.managed).collect();
    let mut pb = Pageblocks::new(total, marks, managed, m.watermark_boost_factor);
    let (mut kernel, mut pcp_frames) = (0, 0);
    for (name, blocks, free, pcp) in &m.nonmovable {
        let key = format!("machine.nonmovable.{name}");
        let Some(z) = sizes.iter().position(|&(n, _)| n == name.as_str()) else {
            return Err(format!("{key}: this machine has no zone {name} (its zones: {})", sizes.iter().map(|s| s.0).collect::<Vec<_>>().join(", ")));
        };
        let start: u64 = sizes[..z].iter().map(|&(_, n)| n).sum();
        let first = start.div_ceil(PAGEBLOCK_PAGES);
        let end_block = first + blocks;
        if end_block * PAGEBLOCK_PAGES > start + sizes[z].1 {
            return Err(format!("{key}.blocks: {blocks} pageblocks do not fit in zone {name}"));
        }
        kernel += pb.lay_out(first, &ZoneLayout { zone: z, blocks: *blocks, free: *free, pcp: *pcp }).map_err(|e| format!("{key}: {e}"))?;
        pcp_frames += pcp.unwrap_or(0);
        folios.take_range(z, (first * PAGEBLOCK_PAGES) as crate::mm::folio::Pfn, (end_block * PAGEBLOCK_PAGES) as crate::mm::folio::Pfn);
    }
    Ok((Some(Box::new(pb)), kernel, pcp_frames))
}

/// The zones of machine `m`, node by node (`sizes`: each node's zones' frames), with the
/// watermarks `machine.zone_watermarks` gives.
fn zones(m: &MachineSpec, sizes: &[Vec<(&'static str, u64)>]) -> Result<Vec<Zones>, String> {
    if sizes.len() == 1 {
        let mut zones = Zones::new(m.kernel, &sizes[0], m.min_free_kbytes, m.watermark_scale_factor, m.percpu_pagelist_high_fraction);
        for (name, w) in &m.zone_watermarks {
            zones.set_watermarks(m.kernel, name, w, m.percpu_pagelist_high_fraction).map_err(|e| format!("machine.zone_watermarks.{name}: {e}"))?;
        }
        return Ok(vec![zones]);
    }
    // What a machine of one node has that its nodes do not yet: a running kernel's
    // watermarks by zone name, non-movable pageblocks (and with them kcompactd), a miniature.
    let one_node_only = [
        ("machine.zone_watermarks", !m.zone_watermarks.is_empty()),
        ("machine.nonmovable", !m.nonmovable.is_empty()),
        ("machine.miniature", m.miniature != 1.0),
    ];
    if let Some((key, _)) = one_node_only.iter().find(|(_, set)| *set) {
        return Err(format!("{key}: modeled on a machine of one node only; this one has {} ([[machine.node]])", sizes.len()));
    }
    let lowmem: u64 = sizes.iter().flatten().map(|&(_, n)| n).sum();
    Ok(sizes.iter().map(|s| Zones::of_node(m.kernel, s, lowmem, m.min_free_kbytes, m.watermark_scale_factor, m.percpu_pagelist_high_fraction)).collect())
}

/// The scenario's `[[event]]` writes with their cgroups looked up, in time order.
fn cgroup_writes(s: &Scenario, mm: &Mm) -> Result<Vec<super::Write>, String> {
    s.events
        .iter()
        .map(|e| match mm.memcgs.find(&e.cgroup) {
            Some(memcg) => Ok(super::Write { at_ns: e.at_ns, memcg, kind: e.kind }),
            None => Err(format!("[[event]] at {} ns writes to `{}`, which is not a cgroup of the scenario", e.at_ns, e.cgroup)),
        })
        .collect()
}

/// The scenario's `[[controller]]`s with their cgroups looked up, each due first one
/// interval into the run.
fn scenario_controllers(s: &Scenario, mm: &Mm) -> Result<Vec<super::control::Slot>, String> {
    s.controllers
        .iter()
        .map(|c| match mm.memcgs.find(c.cgroup()) {
            Some(memcg) => {
                let ctl = c.build(memcg);
                Ok(super::control::Slot { next_at: ctl.interval_ns().max(1_000_000), ctl })
            }
            None => Err(format!("[[controller]] watches `{}`, which is not a cgroup of the scenario", c.cgroup())),
        })
        .collect()
}

/// The memcg tree of the scenario's cgroups, flushed as the machine's rstat keys say.
fn memcgs(s: &Scenario) -> Result<Memcgs, String> {
    let m = &s.machine;
    let mut memcgs = Memcgs::new(m.kernel, &s.cgroups, m.rstat)?;
    memcgs.refault_flush = m.refault_flush;
    memcgs.set_update_path_flush(m.update_path_flush);
    memcgs.flush_period_ns = m.rstat_flush_ns;
    memcgs.target_unprotected = m.kernel.reclaim_target_is_unprotected();
    memcgs.set_nodes(m.nodes.len().max(1));
    Ok(memcgs)
}

/// Every job's operation stream, in task order, and the files they name.
struct Streams {
    /// (workload, job, stream) per task.
    jobs: Vec<(usize, u32, JobStream)>,
    /// Each file's pages and largest block (a miniature scenario's sampling unit): the
    /// largest any job gives it.
    files: BTreeMap<String, (u64, u64)>,
    /// The files in the order the jobs first name them.
    file_order: Vec<String>,
}

/// Opens the streams of every job of every workload (a trace's read error during the run
/// stays with its stream: [`Machine::take_trace_error`]).
fn job_streams(s: &Scenario) -> Result<Streams, String> {
    let mut out = Streams { jobs: Vec::new(), files: BTreeMap::new(), file_order: Vec::new() };
    // Shared application caches by name: the cache, and the workload that named it first.
    let mut shared: BTreeMap<&str, (pagelab_workload::SharedAppCache, usize)> = BTreeMap::new();
    for (wi, w) in s.workloads.iter().enumerate() {
        let share = match w.app_cache.as_ref().and_then(|a| a.shared.as_deref().map(|n| (a, n))) {
            None => None,
            Some((spec, name)) => {
                let (cache, first) = shared.entry(name).or_insert_with(|| (pagelab_workload::SharedAppCache::new(spec), wi));
                let f = &s.workloads[*first];
                if f.app_cache.as_ref() != Some(spec) {
                    return Err(format!("workload `{}`: app_cache.shared `{name}` differs from workload `{}`'s in size, block or policy: the threads of one process share one cache", w.name, f.name));
                }
                if f.cgroup != w.cgroup {
                    return Err(format!(
                        "workload `{}`: app_cache.shared `{name}` is in cgroup `{}` and workload `{}`'s in `{}`: the threads of one process are in one cgroup",
                        w.name, w.cgroup, f.name, f.cgroup
                    ));
                }
                Some(cache.clone())
            }
        };
        // An lsm workload's jobs are the client threads of one store (pagelab_workload's
        // lsm.rs, "Threads"): the first job's stores are every job's.
        let mut stores: Vec<pagelab_workload::SharedLsm> = Vec::new();
        for job in 0..w.jobs {
            let mut st = JobStream::with_traces(w, job, &|t, _, pages| crate::sim::trace_workload::open(t, pages))?;
            if let Some(cache) = &share {
                st.share_app_cache(cache);
            }
            if w.jobs > 1 {
                if job == 0 {
                    stores = st.lsm_stores();
                } else {
                    st.share_lsm_stores(&stores);
                }
            }
            for (i, o) in st.objects().iter().enumerate().filter(|(_, o)| !o.anon) {
                let block = st.largest_block(i);
                match out.files.get_mut(&o.name) {
                    Some((p, b)) => (*p, *b) = ((*p).max(o.pages), (*b).max(block)),
                    None => {
                        out.files.insert(o.name.clone(), (o.pages, block));
                        out.file_order.push(o.name.clone());
                    }
                }
            }
            out.jobs.push((wi, job, st));
        }
    }
    Ok(out)
}

/// A file of the address space: its object and, in a miniature scenario, its sample.
type FileObject = (usize, Option<Arc<SampledObject>>);

/// Adds the streams' files to the address space, shared by name, in the order they were named.
fn add_files(s: &Scenario, space: &mut AddressSpace, streams: &Streams) -> Result<BTreeMap<String, FileObject>, String> {
    let mut files = BTreeMap::new();
    for name in &streams.file_order {
        let (pages, block) = streams.files[name];
        let (pages, sample) = sample_object(s, name, pages, block)?;
        let id = space.add_object(name, false, pages as u32, None)?;
        files.insert(name.clone(), (id, sample));
    }
    Ok(files)
}

/// Task `t`'s objects (the files it shares, its own anonymous regions added to the address
/// space) with their samples, its anonymous objects, and the task whose process it is a
/// thread of (itself unless it shares a region another task declared first).
type TaskObjects = (Vec<TaskObject>, Vec<Option<Arc<SampledObject>>>, Vec<usize>, usize);

/// Shared anonymous regions (a shared application cache's) by name: the object and the task
/// that owns it.
type SharedRegions = BTreeMap<String, (usize, usize)>;

/// The objects of task `t`, job `job` of workload `w` (see [`TaskObjects`]).
fn task_objects(
    s: &Scenario,
    (t, w, job): (usize, &pagelab_workload::Workload, u32),
    st: &JobStream,
    space: &mut AddressSpace,
    files: &BTreeMap<String, FileObject>,
    shared: &mut SharedRegions,
) -> Result<TaskObjects, String> {
    let mut objects = Vec::new();
    let mut anon_objects = Vec::new();
    let mut samples = Vec::new();
    let mut process = t;
    for (i, o) in st.objects().iter().enumerate() {
        let id = if o.anon && o.shared {
            match shared.get(&o.name) {
                Some(&(id, owner)) => {
                    process = owner;
                    samples.push(None);
                    id
                }
                None => {
                    let (pages, sample) = sample_object(s, &o.name, o.pages, st.largest_block(i))?;
                    samples.push(sample);
                    let id = space.add_object(&o.name, true, pages as u32, Some(t))?;
                    anon_objects.push(id);
                    shared.insert(o.name.clone(), (id, t));
                    id
                }
            }
        } else if o.anon {
            let name = anon_object_name(&w.name, job, &o.name);
            let (pages, sample) = sample_object(s, &name, o.pages, st.largest_block(i))?;
            samples.push(sample);
            let id = space.add_object(&name, true, pages as u32, Some(t))?;
            anon_objects.push(id);
            id
        } else {
            let (id, sample) = &files[&o.name];
            samples.push(sample.clone());
            *id
        };
        let obj = &space.objects[id];
        objects.push(TaskObject { file: FileRef { base: obj.base, pages: obj.pages as u64 }, anon: o.anon });
    }
    Ok((objects, samples, anon_objects, process))
}

/// The model's side of job `job` of workload `w`: a process in the workload's memcg, its
/// clock at the workload's start.
fn task_mm(w: &pagelab_workload::Workload, job: u32, memcg: crate::mm::memcontrol::MemcgId, anon_objects: Vec<usize>, process: usize) -> TaskMm {
    TaskMm {
        process,
        name: if pagelab_workload::is_compaction_thread(w, job) {
            format!("{}.compaction", w.name)
        } else if w.jobs > 1 {
            format!("{}.{}", w.name, job)
        } else {
            w.name.clone()
        },
        memcg,
        clock: w.start_ns,
        rss_anon: 0,
        rss_file: 0,
        swapents: 0,
        nr_pages_over_high: 0,
        in_lru_fault: false,
        killed: false,
        reclaim_ns: 0,
        reclaim_since: None,
        io_wait_ns: 0,
        cpu_wait_ns: 0,
        cpu_ns: 0,
        anon_objects,
        swap_ra: SwapRaState::default(),
        mapped_files: Vec::new(),
        ran: false,
        iodepth: w.iodepth,
        in_flight: std::collections::BinaryHeap::new(),
    }
}

/// The tasks, one per job of every workload, and the model's side of each (their objects
/// added to the address space after the files).
fn tasks(s: &Scenario, memcgs: &Memcgs, space: &mut AddressSpace, streams: Streams) -> Result<(Vec<Task>, Vec<TaskMm>), String> {
    let files = add_files(s, space, &streams)?;
    let mut tasks = Vec::new();
    let mut task_mms = Vec::new();
    let mut shared = SharedRegions::new();
    for (t, (wi, job, st)) in streams.jobs.into_iter().enumerate() {
        let w = &s.workloads[wi];
        let memcg = memcgs.find(&w.cgroup).expect("validated by the scenario");
        let (objects, samples, anon_objects, process) = task_objects(s, (t, w, job), &st, space, &files, &mut shared)?;
        let ra = objects.iter().map(|o| RaState { ra_pages: if o.anon { 0 } else { s.machine.tunables.ra_pages }, ..RaState::default() }).collect();
        task_mms.push(task_mm(w, job, memcg, anon_objects, process));
        tasks.push(Task {
            workload: wi,
            job,
            stream: OpSource::Job(st),
            objects,
            samples: if s.sample.is_some() { samples } else { Vec::new() },
            ra,
            ahead: VecDeque::with_capacity(LOOKAHEAD + 1),
            ops: 0,
            fill_ops: 0,
            dropped_ops: 0,
            steps: 0,
            respawns: 0,
            done: false,
            waiting: false,
            start_ns: w.start_ns,
            end_ns: w.start_ns,
            pacing: None,
            op_start: 0,
            parked: false,
            latency: crate::hist::Histogram::default(),
        });
    }
    Ok((tasks, task_mms))
}

/// What the model reads of the scenario: its machine's kernel and tunables, its costs and
/// refault model.
fn config(s: &Scenario) -> Config {
    Config {
        kernel: s.machine.kernel,
        tunables: s.machine.tunables,
        costs: s.costs.clone(),
        refault: s.workingset,
        mglru_fg: s.mglru_fg,
        read_shortcuts: true,
        seam_fallback: s.machine.seam_fallback,
    }
}

/// The frames of the zones (`sizes`), the non-movable pageblocks laid out and the kernel's
/// own pages taken. Returns the frames, the pageblocks and the kernel's pages.
type Frames = (Folios, Option<Box<crate::mm::pageblock::Pageblocks>>, u64);

fn frames(m: &MachineSpec, sizes: &[Vec<(&'static str, u64)>], zones: &Zones) -> Result<Frames, String> {
    let frames: Vec<u32> = sizes[0].iter().map(|&(_, n)| n as u32).collect();
    let remote: Vec<u32> = sizes[1..].iter().flatten().map(|&(_, n)| n as u32).collect();
    let mut folios = Folios::try_nodes(&frames, &remote)?;
    let (pageblocks, not_free, pcp) = lay_out_pageblocks(m, &sizes[0], zones, &mut folios)?;
    // The kernel's own pages: memblock hands out memory from the top down. Those in the
    // non-movable pageblocks count as some of them. Their frames on the per-CPU lists are
    // not among them (`kernel_used` counts every per-CPU page free), but are held like the
    // kernel's until a drain gives them back to their blocks.
    let nonmovable_kernel = not_free - pcp;
    for _ in 0..m.kernel_used_pages.saturating_sub(nonmovable_kernel) {
        folios.alloc();
    }
    Ok((folios, pageblocks, m.kernel_used_pages.max(nonmovable_kernel) + pcp))
}

/// `machine.cpus` ≥ 2: the CPUs the tasks (each in its workload's CPU set) and the nodes'
/// kswapds (each on its node's CPUs; one node's on every CPU) share.
fn sched(s: &Scenario, tasks: &[Task]) -> Option<Box<crate::sched::Sched>> {
    use crate::sched::{CpuSet, Entity, Sched};
    let n = s.machine.cpus.filter(|&n| n >= 2)?;
    let set = |t: &Task| s.workload_cpus[t.workload].clone().unwrap_or_else(|| CpuSet::all(n));
    let nodes: Vec<CpuSet> = match s.machine.nodes.len() {
        0 | 1 => vec![CpuSet::all(n)],
        _ => s.machine.nodes.iter().map(|node| node.cpus.clone().unwrap_or_else(|| CpuSet::all(n))).collect(),
    };
    Some(Box::new(Sched::with_nodes(n, tasks.iter().map(|t| Entity::new(set(t))).collect(), nodes)))
}

/// The pressure accounting ([`crate::sched::psi`]): each task in its cgroup and those above,
/// each node's kswapd in the root's (actors `tasks + nid`); on CPUs of their own without
/// `machine.cpus`, else on CPU 0 until the scheduler grants another.
fn psi(m: &MachineSpec, chains: &[Vec<u16>], nr_groups: usize) -> crate::sched::psi::Psi {
    let nr_tasks = chains.len();
    let shared = m.cpus.is_some();
    let cpu = |a: usize| if shared { 0 } else { a as u32 };
    let mut actors: Vec<(Vec<u16>, u32)> = chains.iter().enumerate().map(|(t, c)| (c.clone(), cpu(t))).collect();
    for nid in 0..m.nodes.len().max(1) {
        actors.push((vec![crate::mm::memcontrol::ROOT_MEMCG], cpu(nr_tasks + nid)));
    }
    let (period, jiffy) = crate::sched::psi::Psi::period_for(m.rstat_flush_ns);
    crate::sched::psi::Psi::new(nr_groups, actors, shared, period, jiffy)
}

/// Each CPU's node on a machine of several nodes with the CPU model (`cpu_to_node()`);
/// empty otherwise.
fn cpu_nodes(m: &MachineSpec) -> Vec<u8> {
    let (Some(n), 2..) = (m.cpus, m.nodes.len()) else { return Vec::new() };
    let mut of = vec![0u8; n as usize];
    for (nid, node) in m.nodes.iter().enumerate() {
        for c in node.cpus.iter().flat_map(|set| set.iter()) {
            of[c as usize] = nid as u8;
        }
    }
    of
}

/// The model's state at boot: `space` laid out, the tasks' processes `tasks`, the frames of
/// the zones with the kernel's pages taken, nothing else allocated.
fn boot_mm(s: &Scenario, sizes: &[Vec<(&'static str, u64)>], zones: Vec<Zones>, memcgs: Memcgs, space: AddressSpace, tasks: Vec<TaskMm>) -> Result<Mm, String> {
    let m = &s.machine;
    let nr_memcgs = memcgs.cg.len();
    let swap = Swap::new(m.swap_device, m.swap_pages);
    // Grown with the swap map as slots are handed out (swap_state::add_to_swap).
    let swap_nodes = ShadowNodes::new(0, nr_memcgs);
    let file_nodes = ShadowNodes::new(space.nodes(), nr_memcgs);
    let cfg = config(s);
    let (folios, pageblocks, kernel_pages) = frames(m, sizes, &zones[0])?;
    let memcgs_chains: Vec<Vec<u16>> = tasks.iter().map(|t| memcgs.ancestors(t.memcg).collect()).collect();
    let mut mm = Mm {
        cfg,
        folios,
        space,
        nodes: zones.into_iter().map(crate::mm::mmzone::Node::new).collect(),
        cpu_node: cpu_nodes(m),
        memcgs,
        swap,
        swap_dev: Device::new(m.swap_device, s.swap_cost.clone()),
        file_dev: Device::new(m.storage, s.storage_cost.clone()),
        events: Events::default(),
        actor: Actor::Kswapd(0),
        tasks,
        one_cpu: (m.cpus == Some(1)).then(|| {
            let eevdf = (m.eevdf_turns && !m.kernel.kswapd_preempts_its_waker())
                .then(|| crate::mm::time::Eevdf::new(m.rstat_flush_ns, crate::kernel::RSTAT_FLUSH_NS).with_lazy(m.kernel.fair_preemption_is_lazy()));
            crate::mm::time::OneCpu::new(eevdf)
        }),
        sched: None,
        pcpu_drain: Default::default(),
        psi: psi(m, &memcgs_chains, nr_memcgs),
        profile: Default::default(),
        lru_add_batch: Vec::with_capacity(32),
        activate_batch: Vec::with_capacity(32),
        percpu: None,
        file_nodes,
        swap_nodes,
        nr_dirty: 0,
        nr_writeback: 0,
        nr_mapped: 0,
        nr_file_pages: 0,
        nr_anon_pages: 0,
        nr_swapcached: 0,
        writeback: Default::default(),
        oom_kills: Vec::new(),
        kernel_pages,
        pageblocks,
        resched: None,
        tlb_ubc: Default::default(),
        swap_ra_global: SwapRaState::default(),
        ra_scratch: Vec::with_capacity(64),
        dirty_fifo: Default::default(),
        pmd_young: Vec::new(),
        wb_pending_all: false,
        wb_pending_background: false,
        wb_pending_memcgs: Vec::new(),
        miniature: crate::mm::miniature::Miniature::new(m.miniature),
    };
    mm.pmd_young = vec![0; mm.space.len().div_ceil(512 * 64)];
    Ok(mm)
}

/// A lower zone's non-movable pageblocks need kswapd to reclaim that zone alone: refused for
/// a policy whose lists are not per zone.
fn check_policy_reclaims_zones<P: Policy>(mm: &Mm, policy: &P) -> Result<(), String> {
    let Some(pb) = mm.pageblocks.as_ref() else { return Ok(()) };
    if policy.caps().reclaims_by_zone {
        return Ok(());
    }
    match (0..mm.nodes[0].zones.top()).find(|&z| pb.has_blocks_in(z)) {
        Some(z) => Err(format!(
            "machine.nonmovable.{}: a lower zone's non-movable pageblocks need kswapd reclaiming that zone alone, which the {} policy does not model (its lists are not per zone); only the highest zone ({}) may have them",
            mm.nodes[0].zones.z[z].name,
            policy.name(),
            mm.nodes[0].zones.z[mm.nodes[0].zones.top()].name
        )),
        None => Ok(()),
    }
}

impl<P: Policy> Machine<P> {
    /// Builds the machine; `make_policy` receives the number of memcgs.
    pub fn new(s: &Scenario, make_policy: impl FnOnce(&Mm) -> P) -> Result<Machine<P>, String> {
        let m = &s.machine;
        let node_pages: Vec<u64> = if m.nodes.len() > 1 { m.nodes.iter().map(|n| n.memory_pages).collect() } else { vec![m.memory_pages] };
        if node_pages[0] <= m.reserved_pages {
            return Err(format!("machine.node[0].memory: node 0 holds the kernel's {} reserved pages and has no more", m.reserved_pages));
        }
        let sizes = crate::mm::mmzone::node_zone_sizes(m.zones, &node_pages, m.reserved_pages, m.miniature);
        let zones = zones(m, &sizes)?;
        let memcgs = memcgs(s)?;
        // Files are shared by name; anonymous regions belong to their task.
        let streams = job_streams(s)?;
        let mut space = AddressSpace::default();
        let (tasks, task_mms) = tasks(s, &memcgs, &mut space, streams)?;
        let sampled_pages = if s.sample.is_some() { space.objects.iter().map(|o| o.pages as u64).sum() } else { 0 };
        let shmem_object = if m.shmem_pages > 0 { Some(space.add_object("shmem", true, m.shmem_pages as u32, None)?) } else { None };
        let total_ops = tasks.iter().fold(0u64, |a, t| a.saturating_add(t.stream.remaining()));
        let mut mm = boot_mm(s, &sizes, zones, memcgs, space, task_mms)?;
        mm.sched = sched(s, &tasks);
        mm.percpu = mm.sched.as_ref().map(|sc| Box::new(crate::mm::swap::PerCpuBatches::new(sc.cpus.len())));
        if let Some(n) = mm.sched.as_ref().map(|sc| sc.cpus.len()) {
            let lists = crate::mm::page_alloc::setup_zone_pagesets(&mut mm, n, m.percpu_pagelist_high_fraction);
            if let Some(pc) = mm.percpu.as_mut() {
                pc.pcp = lists;
            }
            mm.memcgs.set_cpus(n);
        }
        let mut policy = make_policy(&mm);
        check_policy_reclaims_zones(&mm, &policy)?;
        if let Some(obj) = shmem_object {
            populate_shmem(&mut mm, &mut policy, obj, m.shmem_active_pages);
        }
        let interval = s.report_interval_ns;
        let next_vmstat = if m.kernel.pcp_high_autotuned() { vmstat_interval(s) } else { u64::MAX };
        let next_kcompactd = if m.nonmovable.is_empty() { u64::MAX } else { kcompactd_interval(m.rstat_flush_ns) };
        let writes = cgroup_writes(s, &mm)?;
        let next_write_at = writes.first().map_or(u64::MAX, |w| w.at_ns);
        let controllers = scenario_controllers(s, &mm)?;
        let next_control_at = controllers.iter().map(|c| c.next_at).min().unwrap_or(u64::MAX);
        Ok(Machine {
            queue: (tasks.len() > TASK_SCAN_MAX).then(|| TaskQueue::new(&mm)),
            relay: Default::default(),
            locks: lock_tasks(s, &tasks),
            hold: tasks.iter().map(|t| s.workloads[t.workload].hold).collect(),
            workloads: s
                .workloads
                .iter()
                .map(|w| WorkloadTiming { runtime: w.runtime_ns, op_interval: w.op_interval_ns, lifetime_ops: w.lifetime_ops })
                .collect(),
            mm,
            policy,
            tasks,
            samples: Vec::new(),
            pressure: Vec::new(),
            interval,
            next_sample: interval,
            idle_until: None,
            next_flush: m.rstat_flush_ns,
            next_wb: m.tunables.dirty_writeback_ns,
            next_vmstat,
            next_kcompactd,
            next_timer: next_vmstat.min(next_kcompactd).min(next_write_at).min(next_control_at),
            writes,
            next_write: 0,
            next_write_at,
            write_outcomes: Vec::new(),
            controllers,
            next_control_at,
            control_outcomes: Vec::new(),
            control_left_out: 0,
            latency: crate::hist::Histogram::default(),
            total_ops,
            done_ops: 0,
            sampled_pages,
        })
    }
}
