//! The simulated machine and its clock: builds the model from a scenario, then runs the
//! tasks of the workloads against it, interleaved by their virtual clocks, with kswapd, the
//! rstat flusher, the writeback flusher and IO completions as timed events.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use pagelab_trace::{PageSource, TraceError};
use pagelab_workload::{Access, Due, JobStream, Op};

use crate::mm::folio::Folios;
use crate::mm::mapping::AddressSpace;
use crate::mm::memcontrol::{MemcgId, Memcgs};
use crate::mm::readahead::{FileRef, RaState};
use crate::mm::swap_state::SwapRaState;
use crate::mm::swapfile::Swap;
use crate::mm::time::Device;
use crate::mm::vmscan::{kswapd_next, kswapd_step, NodeState};
use crate::mm::vmstat::Events;
use crate::mm::workingset::ShadowNodes;
use crate::mm::{Actor, Config, Mm, TaskMm};
use crate::policy::Policy;
use crate::sim::sample::SampledObject;
use crate::sim::scenario::Scenario;

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

/// How many operations a task fetches ahead for prefetching.
const LOOKAHEAD: usize = 4;

/// One object as a task sees it.
#[derive(Clone, Copy, Debug)]
struct TaskObject {
    file: FileRef,
    anon: bool,
}

/// Where a task's operations come from: its workload's generator, or a trace's pages
/// replayed from outside the scenario ([`Machine::set_ops`]).
pub enum OpSource {
    Job(JobStream),
    Pages(PageOps),
    /// Operations given in full (a fio iolog's).
    List(std::vec::IntoIter<Op>),
    /// Operations streamed from elsewhere (a trace's accesses, read as they are needed).
    Stream(Box<dyn OpStream>),
}

/// A stream of operations from outside the workload generators (see [`OpSource::Stream`]).
pub trait OpStream: Send {
    fn next_op(&mut self) -> Option<Op>;
    /// Operations still to come, as far as known (for progress reports).
    fn remaining(&self) -> u64;
}

impl OpSource {
    /// Operations still to come (for progress reports).
    pub fn remaining(&self) -> u64 {
        match self {
            OpSource::Job(s) => s.remaining(),
            OpSource::Pages(p) => p.remaining,
            OpSource::List(l) => l.len() as u64,
            OpSource::Stream(s) => s.remaining(),
        }
    }
}

impl Iterator for OpSource {
    type Item = Op;

    #[inline]
    fn next(&mut self) -> Option<Op> {
        match self {
            OpSource::Job(s) => s.next(),
            OpSource::Pages(p) => p.next(),
            OpSource::List(l) => l.next(),
            OpSource::Stream(s) => s.next_op(),
        }
    }
}

/// What the caller learns of a replayed trace: its pages and zero-size records so far, and
/// the read error that ended it, if one did.
#[derive(Debug, Default)]
pub struct TraceStatus {
    pub pages_seen: u64,
    pub zero_size_records: u64,
    pub error: Option<TraceError>,
}

/// A trace's page indices as operations: each a copy of one template operation with its
/// `page` set. The pages arrive in batches and each operation is built in place, with no
/// dynamic call per operation. A read error ends the operations and is kept in `status` for
/// the caller.
pub struct PageOps {
    src: Box<dyn PageSource>,
    buf: Vec<u32>,
    pos: usize,
    op: Op,
    remaining: u64,
    status: Arc<Mutex<TraceStatus>>,
    /// The trace's file, for errors.
    path: std::path::PathBuf,
    /// Whether the trace's page count is known before it is read (else the file grows as
    /// the trace reveals pages).
    sized: bool,
    /// Pages the trace has shown so far: every page in `buf` is below it.
    pages_seen: u64,
}

impl PageOps {
    pub fn new(src: Box<dyn PageSource>, op: Op, path: &std::path::Path, status: Arc<Mutex<TraceStatus>>) -> PageOps {
        let remaining = src.len_hint().unwrap_or(0);
        let sized = src.pages().is_some();
        let pages_seen = src.pages().unwrap_or(0);
        PageOps { src, buf: Vec::new(), pos: 0, op, remaining, status, path: path.to_path_buf(), sized, pages_seen }
    }

    /// Ends the operations with an error about the trace.
    fn fail(&mut self, msg: String) {
        self.status.lock().expect("trace status").error = Some(TraceError { path: self.path.clone(), offset: None, msg });
        self.buf.clear();
        self.pos = 0;
        self.remaining = 0;
    }

    #[inline]
    fn next(&mut self) -> Option<Op> {
        let page = self.next_page()?;
        Some(Op { page, ..self.op })
    }

    /// The next page of the trace.
    #[inline]
    fn next_page(&mut self) -> Option<u64> {
        if self.pos == self.buf.len() && !self.refill() {
            return None;
        }
        let page = self.buf[self.pos] as u64;
        self.pos += 1;
        self.remaining = self.remaining.saturating_sub(1);
        Some(page)
    }

    /// The page `k` operations after the one `next` returned last, if it is in this batch.
    #[inline]
    fn peek(&self, k: usize) -> Option<u32> {
        self.buf.get(self.pos + k).copied()
    }

    /// The next batch of pages; false at the end of the trace or at a read error.
    #[cold]
    fn refill(&mut self) -> bool {
        self.buf.clear();
        self.pos = 0;
        let read = self.src.next_batch();
        let mut status = self.status.lock().expect("trace status");
        match read {
            Ok(Some(b)) => self.buf.extend_from_slice(b),
            Ok(None) => {}
            Err(e) => status.error = Some(e),
        }
        self.pages_seen = self.pages_seen.max(self.src.pages_seen());
        status.pages_seen = self.pages_seen;
        status.zero_size_records = self.src.zero_size_records();
        !self.buf.is_empty()
    }
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
    /// Processes that replaced the task's earlier one (`lifetime_ops`).
    pub respawns: u64,
    pub done: bool,
    /// Waiting for another task (`lockstep`): not runnable until that task unblocks it.
    waiting: bool,
    pub start_ns: u64,
    pub end_ns: u64,
    /// `pace = "trace"`: how the task kept to its trace's times.
    pub pacing: Option<Box<Pacing>>,
}

/// How a task kept to its paced trace's times (`pace = "trace"`): each access is issued at
/// its due time (the phase's first access, plus its time in the trace after the first's) or,
/// when the task is behind, as soon as it can.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pacing {
    /// When the current paced phase's first access was issued.
    origin: u64,
    /// Paced accesses issued.
    pub accesses: u64,
    /// Accesses issued after their due time.
    pub late: u64,
    pub behind_max_ns: u64,
    pub behind_sum_ns: u128,
    /// How far behind the last paced access was issued.
    pub behind_last_ns: u64,
}

/// The machine's timed events besides the tasks' operations. When two fall due at the same
/// time they run in this order (the derived `Ord`): IO completions first, so what they free
/// is seen by the periodic work after them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A page's writeback or swap-out IO completes (`folio_end_writeback()`).
    WritebackDone,
    /// The periodic rstat flush of memcg statistics (`flush_memcg_stats_dwork()`, every 2 s).
    RstatFlush,
    /// The writeback flusher's periodic run (`wb_workfn()`, every dirty_writeback_centisecs).
    Flusher,
    /// kswapd's next step (`balance_pgdat()`).
    Kswapd,
    /// The per-CPU vmstat refresh (`vmstat_update()`, every sysctl_stat_interval): on 6.12
    /// it decays the per-CPU free lists' `high` (decay_pcp_high()).
    VmstatUpdate,
    /// kcompactd's timeout (`HPAGE_FRAG_CHECK_INTERVAL_MSEC`, every 500 ms): a wake-up
    /// that found no zone suitable left it work to do then (machines with non-movable
    /// pageblocks only).
    Kcompactd,
    /// A sample of the counters for the run's series.
    Sample,
}

/// What a task of a `lockstep` pair waits for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Wait {
    #[default]
    Nothing,
    /// A leader: its followers' prefills.
    Prefill,
    /// A follower: the leader's access count to reach this.
    Leader(u64),
}

/// A task's part in `lockstep` pairs: as a follower (its leader and ratio) and as a leader
/// (its followers).
#[derive(Clone, Debug, Default)]
pub struct LockTask {
    /// The leader's task and the ratio R: before its access j the task waits until
    /// `leader_done × R ≥ j`.
    pub leader: Option<(usize, f64)>,
    pub followers: Vec<usize>,
    /// The task has fetched its first access (its prefill is over), and when.
    prefilled: bool,
    prefill_end: u64,
    /// A leader: its followers' prefills are over and its accesses began.
    started: bool,
    wait: Wait,
    /// A follower: (the leader's access count, when it reached it) for the leader's accesses
    /// that ended later than the follower's clock then.
    pending: VecDeque<(u64, u64)>,
    /// Times the task had to wait, and the modeled time it waited.
    pub waits: u64,
    pub wait_ns: u64,
}

/// One report interval of the counters.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub t_ns: u64,
    pub events: Events,
    pub gauges: BTreeMap<&'static str, u64>,
    pub ops: u64,
    /// Each task's operations so far, in task order.
    pub task_ops: Vec<u64>,
    /// The policy's own state (MGLRU: the generations).
    pub policy: Option<serde_json::Value>,
}

/// The model of one scenario under one policy.
pub struct Machine<P: Policy> {
    pub mm: Mm,
    pub policy: P,
    pub tasks: Vec<Task>,
    /// The series: at most [`SERIES_POINTS`] samples, see [`Machine::sample`].
    pub samples: Vec<Sample>,
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
    /// The earlier of `next_vmstat` and `next_kcompactd`: one comparison per operation.
    next_timer: u64,
    total_ops: u64,
    done_ops: u64,
    /// A miniature scenario's sampled pages, all objects together (0 for a full machine).
    pub sampled_pages: u64,
    /// Per task: keep its memory when it is done (`hold = true`).
    hold: Vec<bool>,
    /// Per workload: the timing limits of its tasks.
    workloads: Vec<WorkloadTiming>,
    /// The first error of a trace a workload replays, which ended its operations.
    pub trace_error: Arc<Mutex<Option<String>>>,
    /// Per task, its `lockstep` pairs; empty when no workload has `lockstep`.
    pub locks: Vec<LockTask>,
    /// With many tasks, the runnable ones by clock ([`Machine::next_task`]).
    queue: Option<TaskQueue>,
}

impl TaskQueue {
    fn new(mm: &Mm) -> TaskQueue {
        TaskQueue { heap: mm.tasks.iter().enumerate().map(|(t, tm)| std::cmp::Reverse((tm.clock, t))).collect(), queued: vec![true; mm.tasks.len()] }
    }
}

/// Machines with more tasks than this choose the next one from a heap, not by a scan.
const TASK_SCAN_MAX: usize = 16;

/// The tasks as a min-heap of (clock, task). Clocks only grow, so an entry's clock is at most
/// its task's: an entry whose clock is behind is refreshed when it reaches the top, and one
/// of a task that is done or waiting is dropped (and pushed again when the task wakes).
struct TaskQueue {
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize)>>,
    queued: Vec<bool>,
}

/// The most points a run's series keeps before neighbours merge ([`Machine::sample`]): an
/// hour at the default interval of 1 s.
pub const SERIES_POINTS: usize = 4096;

/// A workload's runtime, rate limit and process lifetime.
struct WorkloadTiming {
    runtime: Option<u64>,
    op_interval: u64,
    lifetime_ops: u64,
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

/// The tasks' `lockstep` pairs: job j of a follower follows job j of its leader, or job 0
/// of a leader with one job. Empty when no workload has `lockstep`.
fn lock_tasks(s: &Scenario, tasks: &[Task]) -> Vec<LockTask> {
    if s.workloads.iter().all(|w| w.lockstep.is_none()) {
        return Vec::new();
    }
    let task_of = |wi: usize, job: u32| tasks.iter().position(|t| t.workload == wi && t.job == job);
    let mut locks = vec![LockTask::default(); tasks.len()];
    for (t, task) in tasks.iter().enumerate() {
        let Some(l) = &s.workloads[task.workload].lockstep else { continue };
        let li = s.workloads.iter().position(|w| w.name == l.leader).expect("the scenario checked the leader");
        let job = if s.workloads[li].jobs == 1 { 0 } else { task.job };
        let leader = task_of(li, job).expect("the scenario checked the leader's jobs");
        locks[t].leader = Some((leader, l.ratio));
        locks[leader].followers.push(t);
    }
    locks
}

/// The fewest leader accesses `d` with `d × ratio ≥ j`; `u64::MAX` (never: the follower waits
/// for its leader's end) when that is beyond 2^53, where a tiny ratio such as 1e-20 would
/// overflow the count and step through 2^64 candidates.
fn leader_accesses_needed(j: u64, ratio: f64) -> u64 {
    let estimate = (j as f64 / ratio).ceil();
    if estimate >= (1u64 << 53) as f64 {
        return u64::MAX;
    }
    // Within 2^53 the estimate is off by floating-point rounding only: a step or two below.
    let mut d = estimate as u64;
    while d > 0 && (d - 1) as f64 * ratio >= j as f64 {
        d -= 1;
    }
    while (d as f64) * ratio < j as f64 {
        d += 1;
    }
    d
}

/// sysctl_stat_interval (HZ): half FLUSH_TIME, so it follows the oracle's scaling of the
/// rstat flush period to the guest's clock.
fn vmstat_interval(s: &Scenario) -> u64 {
    s.machine.rstat_flush_ns / 2
}

/// kcompactd's timeout, HPAGE_FRAG_CHECK_INTERVAL_MSEC (500 ms): a quarter of FLUSH_TIME, so
/// it follows the oracle's scaling of the rstat flush period to the guest's clock.
fn kcompactd_interval(rstat_flush_ns: u64) -> u64 {
    rstat_flush_ns / 4
}

/// `machine.nonmovable`: the non-movable pageblocks at the bottom of their zone, their free
/// chunks off the zone's movable free list and into the pageblocks' own buddy lists. Returns
/// the pageblocks (`None` without the key) and the kernel's frames in them.
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
) -> Result<(Option<Box<crate::mm::pageblock::Pageblocks>>, u64), String> {
    use crate::mm::pageblock::{Pageblocks, ZoneLayout, PAGEBLOCK_PAGES};
    if m.nonmovable.is_empty() {
        return Ok((None, 0));
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
    let mut kernel = 0;
    for (name, blocks, free) in &m.nonmovable {
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
        kernel += pb.lay_out(first, &ZoneLayout { zone: z, blocks: *blocks, free: *free }).map_err(|e| format!("{key}: {e}"))?;
        folios.take_range(z, (first * PAGEBLOCK_PAGES) as crate::mm::folio::Pfn, (end_block * PAGEBLOCK_PAGES) as crate::mm::folio::Pfn);
    }
    Ok((Some(Box::new(pb)), kernel))
}

impl<P: Policy> Machine<P> {
    /// Builds the machine; `make_policy` receives the number of memcgs.
    pub fn new(s: &Scenario, make_policy: impl FnOnce(&Mm) -> P) -> Result<Machine<P>, String> {
        let m = &s.machine;
        let managed = m.memory_pages - m.reserved_pages;
        let sizes = crate::mm::mmzone::zone_sizes(m.zones, m.memory_pages, managed, m.miniature);
        let mut zones = crate::mm::mmzone::Zones::new(m.kernel, &sizes, m.min_free_kbytes, m.watermark_scale_factor, m.percpu_pagelist_high_fraction);
        for (name, w) in &m.zone_watermarks {
            zones.set_watermarks(m.kernel, name, w, m.percpu_pagelist_high_fraction).map_err(|e| format!("machine.zone_watermarks.{name}: {e}"))?;
        }
        let mut memcgs = Memcgs::new(m.kernel, &s.cgroups, m.rstat)?;
        memcgs.refault_flush = m.refault_flush;
        memcgs.set_update_path_flush(m.update_path_flush);
        memcgs.flush_period_ns = m.rstat_flush_ns;
        memcgs.target_unprotected = m.kernel.reclaim_target_is_unprotected();
        let mut space = AddressSpace::default();

        // Files are shared by name; anonymous regions belong to their task.
        let trace_error = Arc::new(Mutex::new(None));
        let mut streams = Vec::new();
        // Each file's pages and largest block (a miniature scenario's sampling unit).
        let mut files: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        let mut file_order = Vec::new();
        for (wi, w) in s.workloads.iter().enumerate() {
            for job in 0..w.jobs {
                let st = JobStream::with_traces(w, job, &|t, _, pages| crate::sim::trace_workload::open(&trace_error, t, pages))?;
                for (i, o) in st.objects().iter().enumerate().filter(|(_, o)| !o.anon) {
                    let block = st.largest_block(i);
                    match files.get_mut(&o.name) {
                        Some((p, b)) => (*p, *b) = ((*p).max(o.pages), (*b).max(block)),
                        None => {
                            files.insert(o.name.clone(), (o.pages, block));
                            file_order.push(o.name.clone());
                        }
                    }
                }
                streams.push((wi, job, st));
            }
        }
        let mut file_ids = BTreeMap::new();
        let mut file_samples = BTreeMap::new();
        for name in &file_order {
            let (pages, block) = files[name];
            let (pages, sample) = sample_object(s, name, pages, block)?;
            let id = space.add_object(name, false, pages as u32, None)?;
            file_ids.insert(name.clone(), id);
            file_samples.insert(name.clone(), sample);
        }
        let mut tasks = Vec::new();
        let mut task_mms = Vec::new();
        for (t, (wi, job, st)) in streams.into_iter().enumerate() {
            let w = &s.workloads[wi];
            let memcg = memcgs.find(&w.cgroup).expect("validated by the scenario");
            let mut objects = Vec::new();
            let mut anon_objects = Vec::new();
            let mut samples = Vec::new();
            for (i, o) in st.objects().iter().enumerate() {
                let id = if o.anon {
                    let name = anon_object_name(&w.name, job, &o.name);
                    let (pages, sample) = sample_object(s, &name, o.pages, st.largest_block(i))?;
                    samples.push(sample);
                    let id = space.add_object(&name, true, pages as u32, Some(t))?;
                    anon_objects.push(id);
                    id
                } else {
                    samples.push(file_samples[&o.name].clone());
                    file_ids[&o.name]
                };
                let obj = &space.objects[id];
                objects.push(TaskObject { file: FileRef { base: obj.base, pages: obj.pages as u64 }, anon: o.anon });
            }
            let ra = objects.iter().map(|o| RaState { ra_pages: if o.anon { 0 } else { m.ra_pages }, ..RaState::default() }).collect();
            task_mms.push(TaskMm {
                name: if w.jobs > 1 { format!("{}.{}", w.name, job) } else { w.name.clone() },
                memcg,
                clock: w.start_ns,
                rss_anon: 0,
                rss_file: 0,
                swapents: 0,
                nr_pages_over_high: 0,
                in_lru_fault: false,
                killed: false,
                reclaim_ns: 0,
                io_wait_ns: 0,
                cpu_wait_ns: 0,
                cpu_ns: 0,
                anon_objects,
                swap_ra: SwapRaState::default(),
                mapped_files: Vec::new(),
                ran: false,
            });
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
                respawns: 0,
                done: false,
                waiting: false,
                start_ns: w.start_ns,
                end_ns: w.start_ns,
                pacing: None,
            });
        }
        let sampled_pages = if s.sample.is_some() { space.objects.iter().map(|o| o.pages as u64).sum() } else { 0 };
        let shmem_object = if m.shmem_pages > 0 { Some(space.add_object("shmem", true, m.shmem_pages as u32, None)?) } else { None };
        let total_ops = tasks.iter().fold(0u64, |a, t| a.saturating_add(t.stream.remaining()));
        let nr_memcgs = memcgs.cg.len();
        let swap = Swap::new(m.swap_device, m.swap_pages);
        // Grown with the swap map as slots are handed out (swap_state::add_to_swap).
        let swap_nodes = ShadowNodes::new(0, nr_memcgs);
        let file_nodes = ShadowNodes::new(space.nodes(), nr_memcgs);
        let cfg = Config {
            kernel: m.kernel,
            swappiness: m.swappiness,
            ra_pages: m.ra_pages,
            page_cluster: m.page_cluster,
            memory_recursiveprot: m.memory_recursiveprot,
            fault_around_pages: m.fault_around_pages,
            dirty_ratio: m.dirty_ratio,
            dirty_background_ratio: m.dirty_background_ratio,
            dirty_expire_ns: m.dirty_expire_ns,
            dirty_writeback_ns: m.dirty_writeback_ns,
            costs: s.costs.clone(),
            refault: s.workingset,
            read_shortcuts: true,
        };
        let frames: Vec<u32> = sizes.iter().map(|&(_, n)| n as u32).collect();
        let mut folios = Folios::try_zoned(&frames)?;
        let (pageblocks, nonmovable_kernel) = lay_out_pageblocks(m, &sizes, &zones, &mut folios)?;
        // The kernel's own pages: memblock hands out memory from the top down. Those in the
        // non-movable pageblocks count as some of them.
        for _ in 0..m.kernel_used_pages.saturating_sub(nonmovable_kernel) {
            folios.alloc();
        }
        let mut mm = Mm {
            cfg,
            folios,
            space,
            zones,
            memcgs,
            swap,
            swap_dev: Device::new(m.swap_device, s.swap_cost.clone()),
            file_dev: Device::new(m.storage, s.storage_cost.clone()),
            events: Events::default(),
            actor: Actor::Kswapd,
            tasks: task_mms,
            kswapd_clock: 0,
            kswapd_cpu_ns: 0,
            one_cpu: (s.machine.cpus == Some(1)).then(|| {
                let eevdf = (s.machine.eevdf_turns && !s.machine.kernel.kswapd_preempts_its_waker())
                    .then(|| crate::mm::time::Eevdf::new(s.machine.rstat_flush_ns, crate::kernel::RSTAT_FLUSH_NS));
                crate::mm::time::OneCpu::new(eevdf)
            }),
            sched: s.machine.cpus.filter(|&n| n >= 2).map(|n| {
                let set = |t: &Task| s.workload_cpus[t.workload].clone().unwrap_or_else(|| crate::sched::CpuSet::all(n));
                Box::new(crate::sched::Sched::new(n, tasks.iter().map(|t| crate::sched::Entity::new(set(t))).collect()))
            }),
            lru_add_batch: Vec::with_capacity(32),
            activate_batch: Vec::with_capacity(32),
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
            kernel_pages: m.kernel_used_pages.max(nonmovable_kernel),
            pageblocks,
            node: NodeState::default(),
            swap_ra_global: SwapRaState::default(),
            ra_scratch: Vec::with_capacity(64),
            dirty_fifo: VecDeque::new(),
            pmd_young: Vec::new(),
            wb_pending_all: false,
            wb_pending_background: false,
            miniature: crate::mm::miniature::Miniature::new(m.miniature),
        };
        mm.pmd_young = vec![0; mm.space.len().div_ceil(512 * 64)];
        let mut policy = make_policy(&mm);
        if let Some(pb) = mm.pageblocks.as_ref() {
            if !policy.caps().reclaims_by_zone {
                if let Some(z) = (0..mm.zones.top()).find(|&z| pb.has_blocks_in(z)) {
                    return Err(format!(
                        "machine.nonmovable.{}: a lower zone's non-movable pageblocks need kswapd reclaiming that zone alone, which the {} policy does not model (its lists are not per zone); only the highest zone ({}) may have them",
                        mm.zones.z[z].name,
                        policy.name(),
                        mm.zones.z[mm.zones.top()].name
                    ));
                }
            }
        }
        if let Some(obj) = shmem_object {
            populate_shmem(&mut mm, &mut policy, obj, m.shmem_active_pages);
        }
        let interval = s.report_interval_ns;
        let hold = tasks.iter().map(|t| s.workloads[t.workload].hold).collect();
        let workloads =
            s.workloads.iter().map(|w| WorkloadTiming { runtime: w.runtime_ns, op_interval: w.op_interval_ns, lifetime_ops: w.lifetime_ops }).collect();
        let locks = lock_tasks(s, &tasks);
        let next_vmstat = if s.machine.kernel.pcp_high_autotuned() { vmstat_interval(s) } else { u64::MAX };
        let next_kcompactd = if s.machine.nonmovable.is_empty() { u64::MAX } else { kcompactd_interval(s.machine.rstat_flush_ns) };
        Ok(Machine {
            queue: (tasks.len() > TASK_SCAN_MAX).then(|| TaskQueue::new(&mm)),
            locks,
            trace_error,
            hold,
            workloads,
            mm,
            policy,
            tasks,
            samples: Vec::new(),
            interval,
            next_sample: interval,
            idle_until: None,
            next_flush: s.machine.rstat_flush_ns,
            next_wb: s.machine.dirty_writeback_ns,
            next_vmstat,
            next_kcompactd,
            next_timer: next_vmstat.min(next_kcompactd),
            total_ops,
            done_ops: 0,
            sampled_pages,
        })
    }

    /// Operations the run will perform, fills included.
    pub fn total_ops(&self) -> u64 {
        self.total_ops
    }

    /// Replaces task `t`'s operations with `ops`, e.g. a trace's accesses: the task's
    /// objects stay those its workload declared.
    pub fn set_ops(&mut self, t: usize, ops: OpSource) -> Result<(), String> {
        if self.locks.get(t).is_some_and(|l| l.leader.is_some() || !l.followers.is_empty()) {
            return Err("a task in lockstep replays its own workload's operations".into());
        }
        if let OpSource::Pages(p) = &ops {
            let file = self.tasks[t].objects.get(p.op.object as usize).ok_or("the trace's object is not one of the task's")?.file;
            let id = self.mm.space.object_of(file.base);
            if !p.sized && id + 1 != self.mm.space.objects.len() {
                return Err(format!(
                    "a trace of unknown size needs its file `{}` last in the address space (read it in two passes)",
                    self.mm.space.objects[id].name
                ));
            }
        }
        let n = ops.remaining();
        let old = std::mem::replace(&mut self.tasks[t].stream, ops);
        self.total_ops = self.total_ops.saturating_sub(old.remaining()).saturating_add(n);
        Ok(())
    }

    /// A trace read as it streams (an oracleGeneral trace mapped on the fly) reveals its
    /// file's size only at its end, so the file, the last object of the address space, grows
    /// as new pages appear: to at least `pages`, at least doubling so the copies stay linear.
    /// Nothing in the model reads beyond the pages the trace has touched (the reads are
    /// single pages without readahead), so the counters equal those of a file sized for the
    /// whole trace from the start; a test compares the two.
    #[cold]
    #[inline(never)]
    fn grow_trace_file(&mut self, t: usize, object: usize, pages: u64) -> bool {
        let file = self.tasks[t].objects[object].file;
        let id = self.mm.space.object_of(file.base);
        let want = pages.max(file.pages.saturating_mul(2)).min(u32::MAX as u64 - 1 - file.base as u64);
        let grown = if want < pages {
            Err(format!("the trace has {pages} distinct pages, more than pagelab's 16 TiB address space holds"))
        } else {
            self.mm.space.grow_last_object(id, want as u32)
        };
        if let Err(e) = grown {
            if let OpSource::Pages(p) = &mut self.tasks[t].stream {
                p.fail(e);
            }
            return false;
        }
        self.mm.file_nodes.grow(self.mm.space.nodes());
        self.mm.pmd_young.resize(self.mm.space.len().div_ceil(512 * 64), 0);
        for o in self.tasks.iter_mut().flat_map(|task| task.objects.iter_mut()).filter(|o| o.file.base == file.base) {
            o.file.pages = want;
        }
        true
    }

    /// Runs every task to completion; `progress` is called now and then with the operations
    /// done so far.
    pub fn run(&mut self, mut progress: impl FnMut(u64)) {
        if let Some(read) = self.single_trace_of_reads() {
            self.run_trace_reads(read, &mut progress);
        } else {
            let mut since_report = 0u64;
            while self.step() {
                since_report += 1;
                if since_report >= 4096 {
                    progress(self.done_ops);
                    since_report = 0;
                    if pagelab_host::interrupt::requested() || self.mm.folios.failure().is_some() {
                        break;
                    }
                }
            }
        }
        self.finish();
        progress(self.done_ops);
    }

    /// The operation template of a machine whose one task replays a trace as one-page
    /// buffered reads (`pagelab run --trace` with a kernel model), with no time limit, rate
    /// or process lifetime: the case [`Machine::run_trace_reads`] runs.
    fn single_trace_of_reads(&self) -> Option<Op> {
        let [task] = &self.tasks[..] else { return None };
        let OpSource::Pages(p) = &task.stream else { return None };
        let w = &self.workloads[task.workload];
        let op = p.op;
        let plain_read = op.access == Access::Buffered && !op.write && op.npages == 1 && !op.fill;
        (plain_read && !task.done && w.runtime.is_none() && w.op_interval == 0 && w.lifetime_ops == 0).then_some(op)
    }

    /// What `while self.step() {}` does for a single task replaying a trace of one-page
    /// buffered reads, call for call (`next_op()`, the events due, `filemap_read()`, the
    /// memory.high and writeback checks), without choosing a task, testing limits that are
    /// not set and dispatching on the operation's kind for every access; a test holds the
    /// two loops' reports equal.
    fn run_trace_reads(&mut self, read: Op, progress: &mut impl FnMut(u64)) {
        const T: usize = 0;
        let object = read.object as usize;
        let mut file = self.tasks[T].objects[object].file;
        // The file's read state is the loop's own until it ends (nothing else reads it).
        let mut ra = std::mem::take(&mut self.tasks[T].ra[object]);
        ra.random = read.advice == pagelab_workload::Advice::Random;
        let mut since_report = 0u64;
        loop {
            // next_op(): the page, the file grown to cover it, the coming pages prefetched.
            let OpSource::Pages(pages) = &mut self.tasks[T].stream else { unreachable!("a trace of reads") };
            let Some(page) = pages.next_page() else { break };
            if pages.pages_seen > file.pages {
                let seen = pages.pages_seen;
                if !self.grow_trace_file(T, object, seen) {
                    break;
                }
                file = self.tasks[T].objects[object].file;
            } else {
                if let Some(next) = pages.peek(0) {
                    if let Some(pfn) = self.mm.space.resident(file.base + next) {
                        self.mm.folios.prefetch(pfn);
                    }
                }
                if let Some(ahead) = pages.peek(LOOKAHEAD - 1) {
                    self.mm.space.prefetch(file.base + ahead);
                }
            }
            if self.mm.tasks[T].killed {
                break;
            }
            self.begin_op(T, read.think_ns);
            let ok = crate::mm::filemap::filemap_read(&mut self.mm, &mut self.policy, file, &mut ra, page, 1);
            if !self.end_op(T, ok) {
                break;
            }
            self.tasks[T].ops += 1;
            since_report += 1;
            if since_report >= 4096 {
                progress(self.done_ops);
                since_report = 0;
                if pagelab_host::interrupt::requested() || self.mm.folios.failure().is_some() {
                    break;
                }
            }
        }
        self.tasks[T].ra[object] = ra;
        self.finish_task(T);
    }

    /// Chooses the next task from a heap (`true`) or by a scan, whatever the number of tasks
    /// (for tests: the two choose alike).
    #[doc(hidden)]
    pub fn choose_tasks_by_heap(&mut self, heap: bool) {
        self.queue = heap.then(|| TaskQueue::new(&self.mm));
    }

    /// Performs one operation of the task whose clock is earliest; false when all are done.
    pub fn step(&mut self) -> bool {
        match self.next_task() {
            Some(t) => {
                self.step_task(t);
                true
            }
            None => match self.tasks.iter().position(|task| !task.done && task.waiting) {
                // Nothing can run and a task still waits (its partner is gone): it ends.
                Some(t) => {
                    self.tasks[t].waiting = false;
                    self.finish_task(t);
                    true
                }
                None => false,
            },
        }
    }

    /// After the last operation: run the events up to the end and take the last sample.
    pub fn finish(&mut self) {
        let end = self.elapsed_ns();
        self.run_events_until(end);
        self.sample(end, true);
    }

    /// The runnable task with the earliest clock (ties: the first).
    ///
    /// With more than [`TASK_SCAN_MAX`] tasks, from the heap: the first valid entry at its top
    /// is the least (clock, task) pair, the one the scan finds, since every runnable task
    /// has an entry whose clock is at most its own.
    fn next_task(&mut self) -> Option<usize> {
        if let Some(q) = self.queue.as_mut() {
            while let Some(&std::cmp::Reverse((at, t))) = q.heap.peek() {
                if self.tasks[t].done || self.tasks[t].waiting {
                    q.heap.pop();
                    q.queued[t] = false;
                    continue;
                }
                let clock = self.mm.tasks[t].clock;
                if clock != at {
                    q.heap.pop();
                    q.heap.push(std::cmp::Reverse((clock, t)));
                    continue;
                }
                return Some(t);
            }
            return None;
        }
        let mut best: Option<(u64, usize)> = None;
        for (t, task) in self.tasks.iter().enumerate() {
            if task.done || task.waiting {
                continue;
            }
            let c = self.mm.tasks[t].clock;
            if best.is_none_or(|(bc, _)| c < bc) {
                best = Some((c, t));
            }
        }
        best.map(|(_, t)| t)
    }

    /// Whether any event is due by `now`: the test every operation makes first, so it is
    /// kept to a few comparisons (most operations find nothing due).
    #[inline(always)]
    fn event_due(&self, now: u64) -> bool {
        self.next_flush <= now
            || self.next_wb <= now
            || self.next_sample <= now
            || self.next_timer <= now
            || kswapd_next(&self.mm).is_some_and(|k| k <= now)
            || self.mm.writeback.peek().is_some_and(|std::cmp::Reverse(w)| w.at <= now)
    }

    /// Runs kswapd, the flushers, IO completions and samples due by `now`, in time order.
    #[inline(always)]
    fn run_events_until(&mut self, now: u64) {
        if self.event_due(now) {
            self.run_due_events(now);
        }
    }

    #[inline(never)]
    fn run_due_events(&mut self, now: u64) {
        while let Some((at, event)) = self.next_due_event(now) {
            match event {
                Event::WritebackDone => crate::mm::page_writeback::complete_writeback(&mut self.mm, &mut self.policy, at),
                Event::RstatFlush => {
                    self.mm.memcgs.periodic_flush(at);
                    self.next_flush += self.mm.memcgs.flush_period_ns;
                }
                Event::Flusher => {
                    self.with_kernel_clock(at, |m| crate::mm::page_writeback::flusher_run(&mut m.mm, &mut m.policy, true));
                    self.next_wb += self.mm.cfg.dirty_writeback_ns;
                }
                Event::Kswapd => {
                    self.kswapd_takes_cpu();
                    let before = self.mm.kswapd_clock;
                    let cpu_before = self.mm.kswapd_cpu_ns;
                    kswapd_step(&mut self.mm, &mut self.policy);
                    if let Some(sched) = self.mm.sched.as_mut() {
                        let cpu = self.mm.kswapd_cpu_ns;
                        sched.end(crate::sched::Burst { cpu_ns: cpu, reclaim_ns: cpu, lock_spin_ns: 0 });
                    }
                    self.share_the_cpu(before, cpu_before, now);
                    if self.mm.node.kswapd.is_none() {
                        if let Some(e) = self.mm.one_cpu.as_mut().and_then(|c| c.eevdf()) {
                            e.kswapd_sleeps();
                        }
                    }
                    // Every step costs at least a microsecond, so kswapd cannot stall time.
                    if self.mm.kswapd_clock == before {
                        self.mm.kswapd_clock += 1_000;
                    }
                }
                Event::VmstatUpdate => {
                    crate::mm::page_alloc::decay_pcp_high(&mut self.mm);
                    self.next_vmstat += self.mm.memcgs.flush_period_ns / 2;
                    self.next_timer = self.next_vmstat.min(self.next_kcompactd);
                }
                Event::Kcompactd => {
                    self.with_kernel_clock(at, |m| crate::mm::compaction::kcompactd_timeout(&mut m.mm));
                    self.next_kcompactd += kcompactd_interval(self.mm.memcgs.flush_period_ns);
                    self.next_timer = self.next_vmstat.min(self.next_kcompactd);
                }
                Event::Sample => {
                    self.sample(at, false);
                    // The next multiple of the interval (which `sample` may have doubled).
                    self.next_sample = (at / self.interval).saturating_add(1).saturating_mul(self.interval);
                }
            }
        }
    }

    /// The earliest event due by `now`, ties broken in [`Event`]'s order (a time of
    /// `u64::MAX` means never).
    // Every kswapd step passes through here: the candidates are visited in `Event` order and
    // only a strictly earlier time replaces the best, which gives the least (time, event)
    // pair without building an iterator chain.
    fn next_due_event(&self, now: u64) -> Option<(u64, Event)> {
        let mut best: Option<(u64, Event)> = None;
        let mut consider = |at: u64, event: Event| {
            if at <= now && at != u64::MAX && best.is_none_or(|(b, _)| at < b) {
                best = Some((at, event));
            }
        };
        if let Some(std::cmp::Reverse(w)) = self.mm.writeback.peek() {
            consider(w.at, Event::WritebackDone);
        }
        consider(self.next_flush, Event::RstatFlush);
        consider(self.next_wb, Event::Flusher);
        if let Some(k) = kswapd_next(&self.mm) {
            consider(k, Event::Kswapd);
        }
        consider(self.next_vmstat, Event::VmstatUpdate);
        consider(self.next_kcompactd, Event::Kcompactd);
        consider(self.next_sample, Event::Sample);
        best
    }

    /// Several CPUs: kswapd, due to run a step of balancing, waits for a CPU of its node.
    fn kswapd_takes_cpu(&mut self) {
        use crate::sched::{Burst, Who};
        let Some(sched) = self.mm.sched.as_mut() else { return };
        if self.mm.node.kswapd.is_none() {
            // Not balancing: the nap's end is a timer, not CPU work.
            return;
        }
        let g = sched.acquire(Who::Kswapd, self.mm.kswapd_clock);
        self.mm.kswapd_clock = g.start;
        let cpu = self.mm.kswapd_cpu_ns;
        sched.begin(Who::Kswapd, g, Burst { cpu_ns: cpu, reclaim_ns: cpu, lock_spin_ns: 0 });
    }

    /// `machine.cpus = 1`: the kswapd step that began at `start` takes its CPU time from the
    /// task's waits first, then half of the CPU from the task's present `now` on.
    fn share_the_cpu(&mut self, start: u64, cpu_before: u64, now: u64) {
        let Some(cpu) = self.mm.one_cpu.as_mut() else { return };
        let cpu_ns = self.mm.kswapd_cpu_ns - cpu_before;
        let waited = (self.mm.kswapd_clock - start).saturating_sub(cpu_ns);
        let (end, lost) = cpu.kswapd_step(start, cpu_ns, now);
        self.mm.kswapd_clock = self.mm.kswapd_clock.max(end + waited);
        if lost > 0 {
            for (t, task) in self.tasks.iter().enumerate() {
                if !task.done && self.mm.tasks[t].clock <= end {
                    self.mm.tasks[t].clock += lost;
                    self.mm.tasks[t].cpu_wait_ns += lost;
                }
            }
        }
    }

    /// Runs `f` as a kernel thread at time `at` (the flusher).
    fn with_kernel_clock(&mut self, at: u64, f: impl FnOnce(&mut Self)) {
        let saved = (self.mm.actor, self.mm.kswapd_clock);
        self.mm.actor = Actor::Kswapd;
        self.mm.kswapd_clock = at;
        f(self);
        self.mm.actor = saved.0;
        self.mm.kswapd_clock = saved.1;
    }

    /// Performs the next operation of task `t`.
    fn step_task(&mut self, t: usize) {
        let w = &self.workloads[self.tasks[t].workload];
        if w.runtime.is_some_and(|r| self.mm.tasks[t].clock >= self.tasks[t].start_ns + r) {
            return self.finish_task(t);
        }
        if w.op_interval > 0 {
            // rate_iops: the next operation starts no earlier than its slot.
            let n = self.tasks[t].ops + self.tasks[t].fill_ops;
            let slot = self.tasks[t].start_ns + n * w.op_interval;
            let c = &mut self.mm.tasks[t].clock;
            *c = (*c).max(slot);
        }
        let op = match self.next_op(t) {
            Some(op) if !self.mm.tasks[t].killed => op,
            _ => return self.finish_task(t),
        };
        if !self.locks.is_empty() && !op.fill && !self.lockstep_admits(t) {
            // It waits (or ended with its leader): the access stays next.
            self.tasks[t].ahead.push_front(op);
            return;
        }
        if let Some(due) = op.due {
            self.pace(t, due);
        }
        let lifetime = self.workloads[self.tasks[t].workload].lifetime_ops;
        if lifetime > 0 && !op.fill && self.tasks[t].ops == lifetime * (self.tasks[t].respawns + 1) {
            self.respawn(t);
        }
        self.apply(t, op);
    }

    /// The task's next operation. The ones after it are fetched ahead (a trace's are read
    /// in its buffer) and their page state prefetched in two stages (the page-cache entry
    /// LOOKAHEAD operations ahead, the frame one ahead), so the memory the simulator is about
    /// to touch is in cache when it gets there.
    #[inline]
    fn next_op(&mut self, t: usize) -> Option<Op> {
        let task = &mut self.tasks[t];
        if let OpSource::Pages(pages) = &mut task.stream {
            // A trace's operations are already in a buffer: look ahead in it, no queue.
            let op = pages.next()?;
            let (seen, file) = (pages.pages_seen, task.objects[op.object as usize].file);
            if seen > file.pages && !self.grow_trace_file(t, op.object as usize, seen) {
                return None;
            }
            let task = &mut self.tasks[t];
            let OpSource::Pages(pages) = &mut task.stream else { unreachable!("matched above") };
            let base = file.base;
            if let Some(page) = pages.peek(0) {
                if let Some(pfn) = self.mm.space.resident(base + page) {
                    self.mm.folios.prefetch(pfn);
                }
            }
            if let Some(page) = pages.peek(LOOKAHEAD - 1) {
                self.mm.space.prefetch(base + page);
            }
            return Some(op);
        }
        while task.ahead.len() <= LOOKAHEAD {
            match task.stream.next() {
                Some(op) if task.samples.is_empty() => task.ahead.push_back(op),
                // A miniature scenario: the operation on the sampled pages, if it has any.
                Some(op) => match task.samples[op.object as usize].as_ref().and_then(|s| s.map(op)) {
                    Some(op) => task.ahead.push_back(op),
                    None => task.dropped_ops += !op.fill as u64,
                },
                None => break,
            }
        }
        let op = task.ahead.pop_front()?;
        let vpn_of = |o: &Op| task.objects[o.object as usize].file.base + o.page as u32;
        if let Some(o) = task.ahead.front() {
            if let Some(pfn) = self.mm.space.resident(vpn_of(o)) {
                self.mm.folios.prefetch(pfn);
            }
        }
        if let Some(o) = task.ahead.get(LOOKAHEAD - 1) {
            self.mm.space.prefetch(vpn_of(o));
        }
        Some(op)
    }

    /// Before an operation of task `t`: the events due by its clock run, then the task
    /// thinks for `think_ns` (a sleep), gets a CPU ([`Machine::take_cpu`], with several) and
    /// runs.
    #[inline(always)]
    fn begin_op(&mut self, t: usize, think_ns: u64) {
        let now = self.mm.tasks[t].clock;
        self.run_events_until(now);
        self.mm.actor = Actor::Task(t);
        let task = &mut self.mm.tasks[t];
        if let Some(cpu) = self.mm.one_cpu.as_mut() {
            cpu.task_waits(task.clock, task.clock + think_ns);
        }
        task.clock += think_ns;
        if self.mm.sched.is_some() {
            self.take_cpu(t);
        }
        let op_ns = self.mm.cfg.costs.op_ns;
        self.mm.cpu(op_ns);
        self.mm.tasks[t].ran = true;
    }

    /// Several CPUs: task `t`, runnable at its clock, waits for a CPU of its set. The events
    /// due meanwhile (kswapd's steps among them, which take CPUs too) run before it asks again.
    #[inline(never)]
    fn take_cpu(&mut self, t: usize) {
        use crate::sched::{Burst, Who};
        loop {
            let at = self.mm.tasks[t].clock;
            self.run_events_until(at);
            self.mm.actor = Actor::Task(t);
            let g = self.mm.sched.as_mut().expect("several CPUs").acquire(Who::Task(t), at);
            let sched = if g.wait > 0 && self.event_due(g.start) {
                self.mm.tasks[t].clock = g.start;
                self.mm.sched.as_mut().expect("several CPUs").tasks[t].runq_wait_ns += g.wait;
                continue;
            } else {
                self.mm.sched.as_mut().expect("several CPUs")
            };
            let task = &mut self.mm.tasks[t];
            task.clock = g.start;
            sched.begin(Who::Task(t), g, Burst { cpu_ns: task.cpu_ns, reclaim_ns: task.reclaim_ns, lock_spin_ns: 0 });
            return;
        }
    }

    /// After an operation of task `t` (`ok`: it completed): memory.high throttling on the
    /// way back to user space and the dirty-page flusher's wake-up. Returns whether the task
    /// goes on (it failed or was killed otherwise).
    #[inline(always)]
    fn end_op(&mut self, t: usize, ok: bool) -> bool {
        if self.mm.tasks[t].nr_pages_over_high > 0 {
            crate::mm::memcontrol::mem_cgroup_handle_over_high(&mut self.mm, &mut self.policy, t);
        }
        if self.mm.wb_pending_all || self.mm.wb_pending_background {
            crate::mm::page_writeback::flusher_run(&mut self.mm, &mut self.policy, false);
        }
        if let Some(sched) = self.mm.sched.as_mut() {
            let task = &self.mm.tasks[t];
            sched.end(crate::sched::Burst { cpu_ns: task.cpu_ns, reclaim_ns: task.reclaim_ns, lock_spin_ns: 0 });
        }
        self.done_ops += 1;
        ok && !self.mm.tasks[t].killed
    }

    /// Performs `op` for task `t` now, outside its stream (tests and trace replay use this);
    /// events due by the task's clock run first.
    pub fn apply(&mut self, t: usize, op: Op) {
        self.begin_op(t, op.think_ns);
        let obj = self.tasks[t].objects[op.object as usize];
        let ok = match op.access {
            Access::Buffered => {
                let ra = &mut self.tasks[t].ra[op.object as usize];
                // posix_fadvise(POSIX_FADV_RANDOM) sets FMODE_RANDOM on the file.
                ra.random = op.advice == pagelab_workload::Advice::Random;
                if op.write {
                    crate::mm::filemap::filemap_write(&mut self.mm, &mut self.policy, obj.file, op.page, op.npages as u64)
                } else {
                    crate::mm::filemap::filemap_read(&mut self.mm, &mut self.policy, obj.file, ra, op.page, op.npages as u64)
                }
            }
            Access::Mmap => {
                let mut ok = true;
                for i in 0..op.npages as u64 {
                    let ra = &mut self.tasks[t].ra[op.object as usize];
                    ok &= crate::mm::memory::file_mmap_access(&mut self.mm, &mut self.policy, t, obj.file, ra, op.page + i, op.write, op.advice);
                }
                ok
            }
            Access::Anon => {
                let mut ok = true;
                for i in 0..op.npages as u64 {
                    let vpn = obj.file.base + (op.page + i) as u32;
                    ok &= crate::mm::memory::anon_access(&mut self.mm, &mut self.policy, t, vpn, op.write, op.advice);
                }
                ok
            }
        };
        if !self.end_op(t, ok) {
            return self.finish_task(t);
        }
        if op.fill {
            self.tasks[t].fill_ops += 1;
        } else {
            self.tasks[t].ops += 1;
            if !self.locks.is_empty() && !self.locks[t].followers.is_empty() {
                self.leader_did(t);
            }
        }
    }

    /// `pace = "trace"`: the task issues the access when it is due, or now if it is late.
    fn pace(&mut self, t: usize, due: Due) {
        let clock = self.mm.tasks[t].clock;
        let p = self.tasks[t].pacing.get_or_insert_with(Default::default);
        if due.first {
            p.origin = clock;
        }
        let at = p.origin.saturating_add(due.after_ns);
        p.accesses += 1;
        if clock < at {
            self.mm.tasks[t].clock = at;
            p.behind_last_ns = 0;
        } else {
            let behind = clock - at;
            p.late += (behind > 0) as u64;
            p.behind_max_ns = p.behind_max_ns.max(behind);
            p.behind_sum_ns += behind as u128;
            p.behind_last_ns = behind;
        }
    }

    /// `lockstep`, before task `t`'s next access (not a fill): the task's prefill is over;
    /// a leader waits until its followers' prefills are; a follower waits, before its access
    /// j, until its leader has done `d` accesses with `d × ratio ≥ j` (from the time the
    /// leader's access `d` ended), and ends when its leader ended without them. Returns
    /// whether the access goes ahead now.
    fn lockstep_admits(&mut self, t: usize) -> bool {
        if !self.locks[t].prefilled {
            self.prefill_over(t);
        }
        if !self.locks[t].started && !self.locks[t].followers.is_empty() {
            if self.locks[t].followers.iter().any(|&f| !self.locks[f].prefilled) {
                self.lock_wait(t, Wait::Prefill);
                return false;
            }
            self.start_leader(t);
        }
        let Some((leader, ratio)) = self.locks[t].leader else { return true };
        let need = leader_accesses_needed(self.tasks[t].ops, ratio);
        if self.tasks[leader].ops >= need {
            // When the leader's access `need` ended (no entry: by the follower's clock).
            let pending = &mut self.locks[t].pending;
            while pending.front().is_some_and(|&(n, _)| n < need) {
                pending.pop_front();
            }
            if let Some(&(n, at)) = pending.front() {
                if n == need {
                    self.lock_until(t, at);
                }
            }
            true
        } else if self.tasks[leader].done {
            let end = self.tasks[leader].end_ns;
            self.lock_until(t, end);
            self.finish_task(t);
            false
        } else {
            self.lock_wait(t, Wait::Leader(need));
            false
        }
    }

    /// Task `t` waits (is not runnable) for `w`.
    fn lock_wait(&mut self, t: usize, w: Wait) {
        self.locks[t].wait = w;
        self.tasks[t].waiting = true;
    }

    /// Task `t` stops waiting at `at` (its clock moves there if behind).
    fn lock_until(&mut self, t: usize, at: u64) {
        let clock = &mut self.mm.tasks[t].clock;
        if at > *clock {
            let l = &mut self.locks[t];
            l.waits += 1;
            l.wait_ns += at - *clock;
            *clock = at;
        }
    }

    fn lock_wake(&mut self, t: usize, at: u64) {
        self.locks[t].wait = Wait::Nothing;
        self.tasks[t].waiting = false;
        self.lock_until(t, at);
        if let Some(q) = self.queue.as_mut().filter(|q| !q.queued[t]) {
            q.queued[t] = true;
            q.heap.push(std::cmp::Reverse((self.mm.tasks[t].clock, t)));
        }
    }

    /// Task `t` fetched its first access (or ended): its leader may begin.
    fn prefill_over(&mut self, t: usize) {
        self.locks[t].prefilled = true;
        self.locks[t].prefill_end = self.mm.tasks[t].clock;
        if let Some((leader, _)) = self.locks[t].leader {
            if self.locks[leader].wait == Wait::Prefill && self.locks[leader].followers.iter().all(|&f| self.locks[f].prefilled) {
                self.start_leader(leader);
            }
        }
    }

    /// A leader begins its accesses when the last of its followers' prefills ended.
    fn start_leader(&mut self, l: usize) {
        let at = self.locks[l].followers.iter().map(|&f| self.locks[f].prefill_end).max().unwrap_or(0);
        self.locks[l].started = true;
        self.lock_wake(l, at);
    }

    /// Leader `l` finished an access: followers waiting for it go on from now; the others
    /// keep when it ended, if that is later than their clock.
    fn leader_did(&mut self, l: usize) {
        let (n, at) = (self.tasks[l].ops, self.mm.tasks[l].clock);
        for i in 0..self.locks[l].followers.len() {
            let f = self.locks[l].followers[i];
            match self.locks[f].wait {
                Wait::Leader(need) if n >= need => self.lock_wake(f, at),
                _ if !self.tasks[f].done && self.mm.tasks[f].clock < at => self.locks[f].pending.push_back((n, at)),
                _ => {}
            }
        }
    }

    /// Task `t` ended: a leader waiting for its prefill may begin, and its followers waiting
    /// for an access it will not do end with it.
    fn lockstep_ended(&mut self, t: usize) {
        if !self.locks[t].prefilled {
            self.prefill_over(t);
        }
        let end = self.tasks[t].end_ns;
        for i in 0..self.locks[t].followers.len() {
            let f = self.locks[t].followers[i];
            if matches!(self.locks[f].wait, Wait::Leader(_)) && !self.tasks[f].done {
                self.locks[f].wait = Wait::Nothing;
                self.tasks[f].waiting = false;
                self.lock_until(f, end);
                self.finish_task(f);
            }
        }
    }

    /// `lifetime_ops`: before its next operation, the task's process exits (exit_mmap() frees
    /// its anonymous memory and swap; the page cache it read stays) and a new one, in the same
    /// memcg, carries on with the job's operations from an empty address space, as the
    /// processes of a build do.
    #[cold]
    fn respawn(&mut self, t: usize) {
        self.mm.actor = Actor::Task(t);
        crate::mm::oom_kill::exit_mmap(&mut self.mm, &mut self.policy, t);
        self.tasks[t].respawns += 1;
    }

    /// A task is done: it exits, and its anonymous memory goes with it (exit_mmap()).
    fn finish_task(&mut self, t: usize) {
        let task = &mut self.tasks[t];
        task.done = true;
        task.end_ns = self.mm.tasks[t].clock;
        self.mm.actor = Actor::Task(t);
        if !self.mm.tasks[t].killed && !self.hold[t] {
            crate::mm::oom_kill::exit_mmap(&mut self.mm, &mut self.policy, t);
        }
        if !self.locks.is_empty() {
            self.lockstep_ended(t);
        }
    }

    /// The first page (vpn) of object `object` of task `t`, and its size in pages.
    pub fn object(&self, t: usize, object: usize) -> (u32, u64) {
        let o = self.tasks[t].objects[object];
        (o.file.base, o.file.pages)
    }

    /// Flushes the per-CPU LRU batches (`lru_add_drain()`), as reclaim would.
    pub fn drain(&mut self) {
        crate::mm::swap::lru_add_drain(&mut self.mm, &mut self.policy);
    }

    /// Modeled time from the start to the end of the last task.
    pub fn elapsed_ns(&self) -> u64 {
        self.tasks.iter().map(|t| t.end_ns.max(t.start_ns)).max().unwrap_or(0)
    }

    /// Takes the sample that ends a report interval at `at`, keeping the series bounded by
    /// two rules that no bundled scenario reaches (pagelab's own, not the kernel's):
    ///
    /// - An interval in which nothing changed (the same counters, gauges, operations and
    ///   policy state as the last point) is left out; a run of such intervals is kept as one
    ///   point at its end, with every delta zero, so the point after it covers one interval
    ///   again. Idle modeled time costs no memory.
    /// - When the series holds [`SERIES_POINTS`] points and another one is due, every pair of
    ///   neighbouring points merges into one (the later's time, gauges and policy state; the
    ///   deltas add up, since a sample holds running totals) and the interval doubles.
    ///
    /// The last sample (`last`, at the end of the run) is always kept.
    fn sample(&mut self, at: u64, last: bool) {
        if self.samples.last().is_some_and(|s| s.t_ns >= at) {
            return;
        }
        let task_ops: Vec<u64> = self.tasks.iter().map(|t| t.ops).collect();
        let gauges = crate::mm::vmstat::gauges(&self.mm);
        let policy = self.policy.state(&self.mm);
        let unchanged = |s: &Sample| s.events == self.mm.events && s.task_ops == task_ops && s.gauges == gauges && s.policy == policy;
        if !last && self.samples.last().is_some_and(unchanged) {
            self.idle_until = Some(at);
            return;
        }
        if let Some(idle) = self.idle_until.take() {
            let mut gap_end = self.samples.last().expect("an idle interval follows a point").clone();
            gap_end.t_ns = idle;
            self.push_sample(gap_end);
        }
        let ops = task_ops.iter().sum();
        self.push_sample(Sample { t_ns: at, events: self.mm.events.clone(), gauges, ops, task_ops, policy });
    }

    fn push_sample(&mut self, s: Sample) {
        if self.samples.len() >= SERIES_POINTS {
            let mut i = 0;
            self.samples.retain(|_| {
                i += 1;
                i % 2 == 0
            });
            self.interval = self.interval.saturating_mul(2);
        }
        self.samples.push(s);
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
