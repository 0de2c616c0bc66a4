//! The access stream of one task: phases in order, each a sequence of operations drawn from
//! its distribution. The simulator and the in-guest runner iterate the same [`JobStream`].

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use crate::app_cache::{self, AppCache, Lookup};
use crate::dist::{Distribution, Sampler};
use crate::lsm::{declarations, Layout, LsmObjects, LsmState, Mix, OpKind, Retry};
use crate::rng::Rng;
use crate::search::{SearchCursor, SearchSpec};
use crate::spec::{Access, Advice, Kind, TraceSpec, Workload};
use crate::ycsb::MyYcsbLatest;

/// The name of a job's application cache region among its objects (crate::app_cache).
pub const APP_CACHE_OBJECT: &str = "app_cache";

/// What one access of a trace does (pagelab-trace's access kinds, which this crate does
/// not depend on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    Read,
    Write,
    /// The first touch of anonymous memory: a fill of the prefill (a write elsewhere).
    Touch,
    /// The trace does not say: the phase's kind decides (and `read_ratio` for the rw kinds).
    Plain,
    /// The page leaves its file (a deletion or truncation): an `Access::Truncate` of it.
    Drop,
}

/// One access of a trace as a phase replays it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceAccess {
    /// Which of the trace's objects (0 unless the trace names several files, as an iolog).
    pub object: u32,
    pub page: u64,
    pub npages: u32,
    pub kind: TraceKind,
    /// The access's time in the trace (ns from the trace's own origin), if it has one.
    pub time_ns: Option<u64>,
}

/// The accesses of a trace as a phase replays them: page indices within its objects.
pub trait TraceAccesses: Send {
    /// The next access, or `None` at the end of the trace (or at an error, which
    /// [`TraceAccesses::take_error`] then gives).
    fn next_access(&mut self) -> Option<TraceAccess>;
    /// The error that ended the accesses, if one did, taken from the trace (for
    /// [`JobStream::take_trace_error`]).
    fn take_error(&mut self) -> Option<String> {
        None
    }
}

/// Opens the trace of a phase (`job` of the workload) for [`JobStream::with_traces`].
/// Its arguments: the trace, the job, the pages of the phase's object.
pub type TraceOpener<'a> = dyn Fn(&TraceSpec, u32, u64) -> Result<Box<dyn TraceAccesses>, String> + 'a;

/// When an access of a paced trace (`pace = "trace"`) is due: `after_ns` after the phase's
/// first access, by the trace's times; `first` marks that first access, whose issue time is
/// the origin of the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due {
    pub after_ns: u64,
    pub first: bool,
}

/// A phase's open trace; clones share it.
#[derive(Clone)]
struct TraceCursor(Arc<Mutex<Box<dyn TraceAccesses>>>);

impl std::fmt::Debug for TraceCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceCursor")
    }
}

/// An object a task touches: a file (shared with every task that names the same file) or a
/// private anonymous region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectDecl {
    /// Files: the file name seen by every task. Anonymous regions: the region's name in its task.
    pub name: String,
    pub anon: bool,
    pub pages: u64,
    /// An anonymous region shared by every task that declares it under the same name (a
    /// shared application cache's region: the tasks are threads of one process).
    pub shared: bool,
}

/// One operation: a read or write of `npages` consecutive pages of an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// Index into the task's [`JobStream::objects`].
    pub object: u32,
    pub page: u64,
    pub npages: u32,
    pub write: bool,
    pub access: Access,
    pub advice: Advice,
    /// The first touch of anonymous memory before the accesses proper (`prefill`).
    pub fill: bool,
    /// Modeled CPU time the task thinks before this operation.
    pub think_ns: u64,
    /// A paced trace's access: not issued before it is due.
    pub due: Option<Due>,
    /// More operations of the same workload operation follow this one (an application
    /// cache's blocks after the first: crate::app_cache). A `lockstep` counts the workload's
    /// operations, each ending with its last part.
    pub more: bool,
}

impl Op {
    /// The deletion of `npages` pages of `object` from `page` on (an `Access::Truncate`
    /// operation: the file's pages leave the page cache with their shadow entries).
    pub fn truncate(object: u32, page: u64, npages: u32) -> Op {
        Op { object, page, npages, write: false, access: Access::Truncate, advice: Advice::Normal, fill: false, think_ns: 0, due: None, more: false }
    }
}

/// A job's application cache: its own, or one shared with other jobs (crate::app_cache,
/// "Shared").
#[derive(Clone, Debug)]
enum AppHandle {
    Own(AppCache),
    Shared(SharedAppCache),
}

/// An application cache the jobs naming it share, and the ids of the files they read
/// through it (by name, in the order the jobs registered them). Built by the consumer
/// ([`SharedAppCache::new`]) and given to each sharing job ([`JobStream::share_app_cache`]).
#[derive(Clone, Debug)]
pub struct SharedAppCache(Arc<Mutex<(AppCache, HashMap<String, u32>)>>);

impl SharedAppCache {
    pub fn new(spec: &crate::app_cache::AppCacheSpec) -> SharedAppCache {
        SharedAppCache(Arc::new(Mutex::new((AppCache::new(spec), HashMap::new()))))
    }

    /// The cache's hits and misses so far, all its jobs together.
    pub fn counts(&self) -> (u64, u64) {
        let g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        (g.0.hits, g.0.misses)
    }
}

/// An lsm phase's store that the workload's jobs share: they are the client threads of one
/// LevelDB (crate::lsm, "Threads"). Made by the first job ([`JobStream::lsm_stores`]) and
/// given to the others ([`JobStream::share_lsm_stores`]).
#[derive(Clone, Debug)]
pub struct SharedLsm(Arc<Mutex<LsmState>>);

/// A phase's store: the job's own, or the one its workload's jobs share.
#[derive(Clone, Debug)]
enum LsmHandle {
    Own(Box<LsmState>),
    Shared(SharedLsm),
}

impl LsmHandle {
    fn with<R>(&mut self, f: impl FnOnce(&mut LsmState) -> R) -> R {
        match self {
            LsmHandle::Own(s) => f(s),
            LsmHandle::Shared(s) => f(&mut s.0.lock().unwrap_or_else(|e| e.into_inner())),
        }
    }

    fn read<R>(&self, f: impl FnOnce(&LsmState) -> R) -> R {
        match self {
            LsmHandle::Own(s) => f(s),
            LsmHandle::Shared(s) => f(&s.0.lock().unwrap_or_else(|e| e.into_inner())),
        }
    }
}

/// The operations of one job (task) of a workload.
#[derive(Clone, Debug)]
pub struct JobStream {
    objects: Vec<ObjectDecl>,
    phases: Vec<PhaseState>,
    current: usize,
    rng: Rng,
    /// The largest block (pages) each object is read or written in ([`JobStream::largest_block`]).
    largest: Vec<u64>,
    /// The application cache and its region's object, if the workload has one.
    app: Option<(AppHandle, u32)>,
    /// The id each object has in the application cache's keys: its index for a job's own
    /// cache, the file's id among the sharers' files for a shared one.
    app_keys: Vec<u32>,
    /// This job's hits and misses in its application cache (blocks).
    app_hits: u64,
    app_misses: u64,
    /// Operations an application cache made of the last one, still to come.
    pending: VecDeque<Op>,
    /// The workload's next operation, drawn before the application cache filters the present
    /// one so that the cache can prefetch its entry ([`JobStream::peek_op`]).
    peeked: Option<Op>,
}

#[derive(Clone, Debug)]
struct PhaseState {
    object: u32,
    access: Access,
    advice: Advice,
    kind: Kind,
    block_pages: u64,
    object_pages: u64,
    read_ratio: f64,
    think_ns: u64,
    fill_left: u64,
    fill_next: u64,
    ops_left: u64,
    sampler: Option<Sampler>,
    spec_index: usize,
    /// The trace this phase replays (none: the phase has no trace, or no opener was given,
    /// and has no operations beyond its prefill).
    trace: Option<TraceCursor>,
    is_trace: bool,
    /// The task's objects the trace's objects are (one, or an iolog's files).
    trace_objects: Vec<u32>,
    /// `pace = "trace"`: the time of the phase's first access, once it was read, and the
    /// latest time so far (a time before it counts as it: times do not go backwards).
    pace: bool,
    pace_first: Option<u64>,
    pace_last: u64,
    /// A search phase's files and place (crate::search).
    search: Option<SearchCursor>,
    /// An lsm phase's store, the job's mix on it and its operations still to come.
    lsm: Option<LsmPhase>,
}

/// What a job keeps of an lsm phase (crate::lsm).
#[derive(Clone, Debug)]
struct LsmPhase {
    store: LsmHandle,
    /// The YCSB mix this job runs on the store (crate::lsm::Mix::of_thread).
    mix: Mix,
    /// The operations the job's last YCSB operation made, still to come.
    queue: VecDeque<Op>,
    /// The job is the store's background compaction thread (`lsm.compaction_thread`).
    compactor: bool,
    /// With `distribution = "my-ycsb-latest"`: the thread's inserts (crate::ycsb::MyYcsbLatest).
    latest: Option<MyYcsbLatest>,
    /// The operation to try again once the queued parts are done: held back by the store's
    /// thread (crate::lsm::LsmState::client_operation).
    stalled: Option<Retry>,
}

/// How long LevelDB's compaction thread, with nothing to do, sleeps before it looks again:
/// the model's stand-in for its wait on `background_work_finished_signal_`, which a writer
/// or a get's seek accounting signals (MaybeScheduleCompaction()).
pub const COMPACTOR_POLL_NS: u64 = 100_000;

/// Marks `queue`'s operations as the parts of one operation of the task (`Op::more`): every
/// one but the last, or every one when the operation goes on after them (`ends` false).
fn one_operation(queue: &mut VecDeque<Op>, ends: bool) {
    let n = queue.len();
    queue.iter_mut().enumerate().for_each(|(i, o)| o.more = !ends || i + 1 < n);
}

/// Whether job `job` of `w` is an lsm store's background compaction thread: the last job of
/// a workload of several whose store has `compaction_thread`.
pub fn is_compaction_thread(w: &Workload, job: u32) -> bool {
    w.jobs > 1 && job + 1 == w.jobs && w.phases.iter().any(|p| p.lsm.as_ref().is_some_and(|l| l.compaction_thread))
}

/// The file name job `job` of workload `w` uses for `object`: fio names per-job files
/// `name.N.0`; pagelab uses `name.N` unless the files are shared.
pub fn job_file_name(w: &Workload, object: &str, job: u32) -> String {
    if w.jobs == 1 || w.shared_file {
        object.to_string()
    } else {
        format!("{object}.{job}")
    }
}

impl JobStream {
    /// The error that ended one of the job's traces, if one did (the first phase's of
    /// several), taken from it: a run reports it once the job is done.
    pub fn take_trace_error(&mut self) -> Option<String> {
        self.phases.iter().filter_map(|p| p.trace.as_ref()).find_map(|t| t.0.lock().unwrap_or_else(|e| e.into_inner()).take_error())
    }

    /// The stream of job `job` of `w`. A phase that replays a trace needs
    /// [`JobStream::with_traces`]; here it has no operations beyond its prefill.
    pub fn new(w: &Workload, job: u32) -> Self {
        Self::build(w, job, None).expect("no trace to open")
    }

    /// The stream of job `job` of `w`, its phases' traces opened by `open`.
    pub fn with_traces(w: &Workload, job: u32, open: &TraceOpener) -> Result<Self, String> {
        Self::build(w, job, Some(open))
    }

    fn build(w: &Workload, job: u32, open: Option<&TraceOpener>) -> Result<Self, String> {
        let mut objects: Vec<ObjectDecl> = Vec::new();
        // (name, anon) → index in `objects`: lookups only, never iterated.
        let mut index: HashMap<(String, bool), usize> = HashMap::new();
        let mut filled: Vec<bool> = Vec::new();
        let mut phases = Vec::new();
        let mut declare_named =
            |objects: &mut Vec<ObjectDecl>, filled: &mut Vec<bool>, name: String, anon: bool, pages: u64| match index.get(&(name.clone(), anon)) {
                Some(&idx) => {
                    let o: &mut ObjectDecl = &mut objects[idx];
                    o.pages = o.pages.max(pages);
                    idx
                }
                None => {
                    index.insert((name.clone(), anon), objects.len());
                    objects.push(ObjectDecl { name, anon, pages, shared: false });
                    filled.push(false);
                    objects.len() - 1
                }
            };
        for (i, p) in w.phases.iter().enumerate() {
            let anon = p.kind.is_anon();
            let search = p.search.as_ref().map(|s| {
                search_cursor(s, &p.object, p.block_pages, w.jobs, job, &mut |name, pages| declare_named(&mut objects, &mut filled, name, false, pages))
            });
            let lsm = p.lsm.as_ref().map(|spec| {
                let layout = Layout::new(spec);
                let (files, anon) = declarations(&p.object, spec, &layout);
                let mut ids = files.into_iter().map(|(n, pages)| declare_named(&mut objects, &mut filled, n, false, pages) as u32);
                let tables = layout.tables.iter().map(|&n| ids.by_ref().take(n as usize).collect()).collect();
                let l0 = ids.by_ref().take(spec.l0_files()).collect();
                let wal = ids.next().expect("the log is declared last");
                // The jobs are the threads of one store (crate::lsm, "Threads"): its anonymous
                // regions are the process's, one each, named after the store.
                let threads = w.jobs > 1;
                let [memtable, block_cache, table_cache] = anon.map(|(n, pages)| {
                    let name = if threads { format!("{n}.{}", p.object) } else { n.to_string() };
                    let idx = declare_named(&mut objects, &mut filled, name, true, pages);
                    objects[idx].shared = threads;
                    idx as u32
                });
                let mut state = LsmState::new(spec, layout, LsmObjects { tables, l0, wal, memtable, block_cache, table_cache }, p.advice);
                state.set_clients(w.jobs.saturating_sub(1));
                state.inserts_drawn = matches!(p.distribution, Distribution::MyYcsbZipfian | Distribution::MyYcsbLatest);
                let records = state.layout.records;
                let store = LsmHandle::Own(Box::new(state));
                let latest = (p.distribution == Distribution::MyYcsbLatest).then(|| MyYcsbLatest::new(records));
                LsmPhase {
                    store,
                    mix: spec.mix.of_thread(job, spec.scan_threads),
                    queue: VecDeque::new(),
                    compactor: is_compaction_thread(w, job),
                    latest,
                    stalled: None,
                }
            });
            let mut declare = |object: &str, pages: u64| {
                let name = if anon { object.to_string() } else { job_file_name(w, object, job) };
                declare_named(&mut objects, &mut filled, name, anon, pages)
            };
            // A trace that names its files (an iolog) touches those instead of the phase's
            // object.
            let trace_objects: Vec<u32> = match (&p.trace, &search) {
                (Some(t), _) if !t.files.is_empty() => t.files.iter().map(|(f, pages)| declare(f, *pages) as u32).collect(),
                // A search names no object of its own: its files were declared above.
                (_, Some(c)) => vec![c.files.first().map_or(0, |f| f.0)],
                // Nor does a store: its tables were.
                _ if lsm.is_some() => vec![lsm.as_ref().map_or(0, |l| l.store.read(|l| l.objects.wal))],
                _ => vec![declare(&p.object, p.object_pages) as u32],
            };
            let idx = trace_objects[0] as usize;
            let fill = if anon && p.prefill && !filled[idx] { p.object_pages } else { 0 };
            if anon && p.prefill {
                filled[idx] = true;
            }
            let ops = match &search {
                Some(c) => p.ops.min(p.search.as_ref().map_or(0, |s| s.passes).saturating_mul(c.ops_per_pass())),
                None => p.ops,
            };
            phases.push(PhaseState {
                object: idx as u32,
                access: p.kind.access(),
                advice: p.advice,
                kind: p.kind,
                block_pages: p.block_pages,
                object_pages: p.object_pages,
                read_ratio: p.read_ratio,
                think_ns: p.think_ns,
                fill_left: fill,
                fill_next: 0,
                ops_left: ops,
                sampler: None,
                spec_index: i,
                trace: match (&p.trace, open) {
                    (Some(t), Some(open)) => Some(TraceCursor(Arc::new(Mutex::new(open(t, job, p.object_pages)?)))),
                    _ => None,
                },
                is_trace: p.trace.is_some(),
                trace_objects,
                pace: p.trace.as_ref().is_some_and(|t| t.pace),
                pace_first: None,
                pace_last: 0,
                search,
                lsm,
            });
        }
        let app = w.app_cache.as_ref().map(|spec| {
            let name = match &spec.shared {
                Some(n) => format!("{APP_CACHE_OBJECT}.{n}"),
                None => APP_CACHE_OBJECT.to_string(),
            };
            let idx = declare_named(&mut objects, &mut filled, name, true, spec.pages());
            objects[idx].shared = spec.shared.is_some();
            (AppHandle::Own(AppCache::new(spec)), idx as u32)
        });
        let app_keys = (0..objects.len() as u32).collect();
        let mut largest = vec![1u64; objects.len()];
        for ph in phases.iter().filter(|p| !p.is_trace) {
            match (&ph.search, &ph.lsm) {
                (Some(c), _) => c.files.iter().for_each(|&(o, _)| largest[o as usize] = largest[o as usize].max(ph.block_pages)),
                (_, Some(l)) => l.store.read(|l| {
                    for &o in l.objects.tables.iter().flatten().chain(&l.objects.l0) {
                        largest[o as usize] = largest[o as usize].max(ph.block_pages);
                    }
                    let meta = l.layout.slot_pages();
                    let tc = l.objects.table_cache as usize;
                    largest[tc] = largest[tc].max(meta);
                }),
                (None, None) => largest[ph.object as usize] = largest[ph.object as usize].max(ph.block_pages),
            }
        }
        if let (Some((_, idx)), Some(spec)) = (&app, &w.app_cache) {
            largest[*idx as usize] = largest[*idx as usize].max(spec.slot_pages);
        }
        let rng = Rng::derive(w.seed, job as u64);
        let mut s = JobStream { objects, phases, current: 0, rng, largest, app, app_keys, app_hits: 0, app_misses: 0, pending: VecDeque::new(), peeked: None };
        // Build the samplers now, in phase order, so the random stream does not depend on
        // when a consumer first asks for an operation.
        let dists: Vec<_> = s.phases.iter().map(|p| w.phases[p.spec_index].distribution.clone()).collect();
        for (ph, dist) in s.phases.iter_mut().zip(dists) {
            let blocks = match &ph.lsm {
                Some(l) => l.store.read(|l| l.layout.records),
                None => ph.object_pages / ph.block_pages,
            };
            let scatter = w.phases[ph.spec_index].scatter;
            if !ph.is_trace && ph.search.is_none() {
                ph.sampler = Some(Sampler::new(&dist, blocks.max(1), scatter, &mut s.rng));
            }
        }
        Ok(s)
    }

    pub fn objects(&self) -> &[ObjectDecl] {
        &self.objects
    }

    /// The largest block (pages) any phase of this job reads or writes object `object` in:
    /// 1 for an object only a trace or a prefill touches.
    pub fn largest_block(&self, object: usize) -> u64 {
        self.largest.get(object).copied().unwrap_or(1)
    }

    /// This job's hits and misses (blocks) in its application cache so far, if the workload
    /// has one (of a shared cache: the lookups this job made).
    pub fn app_cache_counts(&self) -> Option<(u64, u64)> {
        self.app.as_ref().map(|_| (self.app_hits, self.app_misses))
    }

    /// Makes the job use `cache`, shared with the other jobs given it, in place of a cache of
    /// its own: its files get their ids among the sharers' by name. For a workload whose
    /// `app_cache` names `shared`, before the first operation.
    pub fn share_app_cache(&mut self, cache: &SharedAppCache) {
        let Some((handle, _)) = self.app.as_mut() else { return };
        let mut g = cache.0.lock().unwrap_or_else(|e| e.into_inner());
        for (i, o) in self.objects.iter().enumerate().filter(|(_, o)| !o.anon) {
            let next = g.1.len() as u32;
            self.app_keys[i] = *g.1.entry(o.name.clone()).or_insert(next);
        }
        *handle = AppHandle::Shared(cache.clone());
    }

    /// Index of the phase the next operation belongs to.
    pub fn phase_index(&self) -> usize {
        self.current
    }

    /// Operations still to come, fills included.
    pub fn remaining(&self) -> u64 {
        let drawn = self.pending.len() as u64 + self.peeked.is_some() as u64;
        self.phases[self.current.min(self.phases.len())..]
            .iter()
            .fold(drawn, |a, p| a.saturating_add(p.ops_left).saturating_add(p.fill_left).saturating_add(p.lsm.as_ref().map_or(0, |l| l.queue.len() as u64)))
    }

    /// `f` of the store of the job's last lsm phase (its caches' hits and misses), if it has
    /// one; of a shared store, all its threads' together.
    pub fn with_lsm<R>(&self, f: impl FnOnce(&LsmState) -> R) -> Option<R> {
        self.phases.iter().rev().find_map(|p| p.lsm.as_ref()).map(|l| l.store.read(f))
    }

    /// Makes the stores of the job's lsm phases shareable and returns them, in phase order:
    /// the first job's, given to its workload's other jobs ([`JobStream::share_lsm_stores`]).
    pub fn lsm_stores(&mut self) -> Vec<SharedLsm> {
        let mut out = Vec::new();
        for ph in &mut self.phases {
            if let Some(mut l) = ph.lsm.take() {
                let shared = match l.store {
                    LsmHandle::Own(s) => SharedLsm(Arc::new(Mutex::new(*s))),
                    LsmHandle::Shared(s) => s,
                };
                out.push(shared.clone());
                l.store = LsmHandle::Shared(shared);
                ph.lsm = Some(l);
            }
        }
        out
    }

    /// Makes the job's lsm phases use `stores` (another job of the same workload's
    /// [`JobStream::lsm_stores`]) in place of stores of their own: the jobs are the client
    /// threads of one LevelDB. Their objects are declared alike (the same files and the
    /// same shared regions in the same order), so the stores' object indices hold for each.
    /// Before the first operation.
    pub fn share_lsm_stores(&mut self, stores: &[SharedLsm]) {
        let mut stores = stores.iter();
        for l in self.phases.iter_mut().filter_map(|p| p.lsm.as_mut()) {
            if let Some(s) = stores.next() {
                l.store = LsmHandle::Shared(s.clone());
            }
        }
    }

    /// The operations the application cache makes of `op`, a buffered access of a file
    /// (crate::app_cache): the first is returned, the others queued.
    #[cold]
    fn through_app_cache(&mut self, op: Op) -> Op {
        let (handle, region) = self.app.as_mut().expect("called with a cache");
        let region = *region;
        let mut guard;
        let cache = match handle {
            AppHandle::Own(c) => c,
            AppHandle::Shared(s) => {
                guard = s.0.lock().unwrap_or_else(|e| e.into_inner());
                &mut guard.0
            }
        };
        let file_id = self.app_keys[op.object as usize];
        let cb = cache.spec().block_pages;
        let sp = cache.spec().slot_pages;
        let miss_think = cache.spec().miss_think_ns;
        let file_pages = self.objects[op.object as usize].pages;
        let first = op.page / cb;
        let last = (op.page + (op.npages.max(1) as u64) - 1) / cb;
        let anon = |slot: u32, write: bool| Op {
            object: region,
            page: slot as u64 * sp,
            npages: sp as u32,
            write,
            access: Access::Anon,
            advice: Advice::Normal,
            fill: false,
            think_ns: 0,
            due: None,
            more: false,
        };
        if op.write {
            // Write-through: the file is written as before; a cached block it covers is
            // stored into as well, a block not cached is not allocated.
            for b in first..=last {
                let key = app_cache::key(file_id, b);
                if cache.slot_of(key).is_some() {
                    if let Lookup::Hit(slot) = cache.lookup(key) {
                        self.app_hits += 1;
                        self.pending.push_back(anon(slot, true));
                    }
                }
            }
            let n = self.pending.len();
            for (i, o) in self.pending.iter_mut().enumerate() {
                o.more = i + 1 < n;
            }
            return Op { more: n > 0, ..op };
        }
        for b in first..=last {
            let key = app_cache::key(file_id, b);
            match cache.lookup(key) {
                Lookup::Hit(slot) => {
                    self.app_hits += 1;
                    self.pending.push_back(anon(slot, false))
                }
                Lookup::Miss(slot) => {
                    self.app_misses += 1;
                    let page = b * cb;
                    let npages = cb.min(file_pages.saturating_sub(page)).max(1) as u32;
                    self.pending.push_back(Op { page, npages, think_ns: 0, due: None, ..op });
                    self.pending.push_back(Op { think_ns: miss_think, ..anon(slot, true) });
                }
            }
        }
        if let Some(next) = self.peeked.filter(|n| n.access == Access::Buffered && !n.fill) {
            cache.prefetch(app_cache::key(self.app_keys[next.object as usize], next.page / cb));
        }
        let n = self.pending.len();
        for (i, o) in self.pending.iter_mut().enumerate() {
            o.more = i + 1 < n;
        }
        let mut head = self.pending.pop_front().expect("at least one block");
        head.think_ns = op.think_ns;
        head.due = op.due;
        head
    }
}

impl Iterator for JobStream {
    type Item = Op;

    #[inline]
    fn next(&mut self) -> Option<Op> {
        if let Some(op) = self.pending.pop_front() {
            return Some(op);
        }
        let op = match self.peeked.take() {
            Some(op) => op,
            None => self.next_op()?,
        };
        if self.app.is_some() && op.access == Access::Buffered && !op.fill {
            self.peeked = self.peek_op();
            return Some(self.through_app_cache(op));
        }
        Some(op)
    }
}

impl JobStream {
    /// The operation after the present one, drawn early when that changes nothing: in a
    /// phase whose operations come from its sampler (the job's own random stream), with
    /// operations left, so the draw neither ends the phase nor reads a store or a trace
    /// that other jobs share. Otherwise `None`, and it is drawn in its turn.
    fn peek_op(&mut self) -> Option<Op> {
        let ph = self.phases.get(self.current)?;
        let own = ph.fill_left == 0 && ph.ops_left > 0 && ph.lsm.is_none() && !ph.is_trace && ph.search.is_none();
        own.then(|| self.next_op()).flatten()
    }

    /// The compaction thread's next operation (crate::lsm, `compaction_thread`): the first of
    /// its next piece of work, or a sleep of [`COMPACTOR_POLL_NS`] touching the memtable
    /// while the clients run and nothing waits; `None` once they are done.
    fn compactor_op(l: &mut LsmPhase) -> Option<Op> {
        let (work, idle) = l.store.with(|s| (s.background(&mut l.queue), s.clients_running().then(|| s.idle_op())));
        if work {
            // A piece of work is one operation of the thread.
            one_operation(&mut l.queue, true);
            return l.queue.pop_front();
        }
        idle.map(|op| Op { think_ns: COMPACTOR_POLL_NS, ..op })
    }

    /// The first part of a try of a client's YCSB operation (crate::lsm::LsmState::client_operation),
    /// its other parts queued. An operation to try again after them is kept (`stalled`), and
    /// then its parts all go on (`more`).
    fn lsm_operation(l: &mut LsmPhase, try_: Retry, think_ns: u64, rng: &mut Rng) -> Op {
        let queue = &mut l.queue;
        l.stalled = l.store.with(|s| s.client_operation(try_, rng, queue));
        one_operation(queue, l.stalled.is_none());
        let mut op = queue.pop_front().expect("an operation touches memory");
        op.think_ns += think_ns;
        op
    }

    /// The workload's next operation, before an application cache filters it.
    #[inline]
    fn next_op(&mut self) -> Option<Op> {
        loop {
            let ph = self.phases.get_mut(self.current)?;
            if ph.fill_left > 0 {
                ph.fill_left -= 1;
                let page = ph.fill_next;
                ph.fill_next += 1;
                return Some(Op {
                    object: ph.object,
                    page,
                    npages: 1,
                    write: true,
                    access: ph.access,
                    advice: ph.advice,
                    fill: true,
                    think_ns: 0,
                    due: None,
                    more: false,
                });
            }
            if let Some(op) = ph.lsm.as_mut().and_then(|l| l.queue.pop_front()) {
                return Some(op);
            }
            if let Some(l) = ph.lsm.as_mut().filter(|l| l.stalled.is_some()) {
                let again = l.stalled.take().expect("filtered");
                // Its think time went before its first try.
                return Some(Self::lsm_operation(l, again, 0, &mut self.rng));
            }
            if ph.ops_left == 0 {
                if let Some(l) = ph.lsm.as_mut().filter(|l| !l.compactor) {
                    l.store.with(|s| s.client_done());
                }
                self.current += 1;
                continue;
            }
            if let Some(l) = ph.lsm.as_mut().filter(|l| l.compactor) {
                match Self::compactor_op(l) {
                    Some(op) => return Some(op),
                    None => {
                        ph.ops_left = 0;
                        continue;
                    }
                }
            }
            if ph.is_trace {
                let next = ph.trace.as_ref().and_then(|t| t.0.lock().unwrap_or_else(|e| e.into_inner()).next_access());
                let Some(a) = next else {
                    ph.ops_left = 0;
                    continue;
                };
                let fill = a.kind == TraceKind::Touch && ph.access == Access::Anon;
                let write = match a.kind {
                    TraceKind::Read | TraceKind::Drop => false,
                    TraceKind::Write | TraceKind::Touch => true,
                    TraceKind::Plain => match ph.kind {
                        Kind::FileRw | Kind::AnonRw => self.rng.unit() >= ph.read_ratio,
                        k => k.default_read_ratio() == 0.0,
                    },
                };
                if !fill {
                    ph.ops_left -= 1;
                }
                let due = match (ph.pace, a.time_ns) {
                    (true, Some(t)) => {
                        let t = t.max(ph.pace_last);
                        ph.pace_last = t;
                        let first = ph.pace_first.is_none();
                        let t0 = *ph.pace_first.get_or_insert(t);
                        Some(Due { after_ns: t - t0, first })
                    }
                    _ => None,
                };
                return Some(Op {
                    object: ph.trace_objects.get(a.object as usize).copied().unwrap_or(ph.object),
                    page: a.page,
                    npages: a.npages,
                    write,
                    access: if a.kind == TraceKind::Drop { Access::Truncate } else { ph.access },
                    advice: ph.advice,
                    fill,
                    // A fill or a deletion is not an access of the application's: no think
                    // time (Op::truncate's 0).
                    think_ns: if fill || a.kind == TraceKind::Drop { 0 } else { ph.think_ns },
                    due,
                    more: false,
                });
            }
            ph.ops_left -= 1;
            if let Some(c) = ph.search.as_mut() {
                let Some((object, page, npages)) = c.next_read() else {
                    ph.ops_left = 0;
                    continue;
                };
                return Some(Op {
                    object,
                    page,
                    npages,
                    write: false,
                    access: Access::Buffered,
                    advice: ph.advice,
                    fill: false,
                    think_ns: ph.think_ns,
                    due: None,
                    more: false,
                });
            }
            let block = ph.sampler.as_mut().expect("sampler built in new()").next(&mut self.rng);
            if let Some(l) = ph.lsm.as_mut() {
                let u = self.rng.unit();
                let kind = l.mix.kind(u);
                let (kind, key) = match l.latest.as_mut().map(|c| c.next(kind == OpKind::Read, block)) {
                    Some((true, key)) => (OpKind::Read, key),
                    Some((false, key)) => (OpKind::Insert, key),
                    None => (kind, block),
                };
                return Some(Self::lsm_operation(l, Retry { kind, key, delayed: false }, ph.think_ns, &mut self.rng));
            }
            let write = match ph.kind {
                Kind::FileRw | Kind::AnonRw => self.rng.unit() >= ph.read_ratio,
                k => k.default_read_ratio() == 0.0,
            };
            return Some(Op {
                object: ph.object,
                page: block * ph.block_pages,
                npages: ph.block_pages as u32,
                write,
                access: ph.access,
                advice: ph.advice,
                fill: false,
                think_ns: ph.think_ns,
                due: None,
                more: false,
            });
        }
    }
}

/// The cursor of a search phase for job `job` of `jobs`, its files declared by `declare`
/// (name, pages → object index).
fn search_cursor(s: &SearchSpec, root: &str, block_pages: u64, jobs: u32, job: u32, declare: &mut dyn FnMut(String, u64) -> usize) -> SearchCursor {
    let files = s.files_of(root, job, jobs).into_iter().map(|(i, pages)| (declare(SearchSpec::file_name(root, i), pages as u64) as u32, pages)).collect();
    SearchCursor { files, block_pages, file: 0, page: 0 }
}
