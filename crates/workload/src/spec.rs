//! Workload descriptions as they appear in a scenario's `[[workload]]` tables, and their
//! validation into a [`Workload`] the generator can run.

use serde::Deserialize;

use crate::app_cache::{AppCacheSpec, AppCacheToml};
use crate::dist::Distribution;
use crate::lsm::{Layout, LsmSpec, LsmToml};
use crate::search::{FileSizes, SearchSpec, LINUX_FILES, MAX_FILES};
use crate::size::{parse_duration_ns, parse_size, PAGE_SIZE};

/// How a phase reaches its pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Buffered `pread` of a file (page cache, `folio_mark_accessed`, readahead).
    FileRead,
    /// Buffered `pwrite` of a file (dirty page cache, writeback).
    FileWrite,
    /// Buffered reads and writes mixed by `read_ratio`.
    FileRw,
    /// Loads through a shared file mapping (page faults, PTE young bits).
    MmapRead,
    /// Stores through a shared file mapping (dirty through the page table).
    MmapWrite,
    /// Loads from private anonymous memory (after it was first touched).
    AnonRead,
    /// Stores to private anonymous memory.
    AnonWrite,
    /// Loads and stores to anonymous memory mixed by `read_ratio`.
    AnonRw,
    /// A ripgrep-like search: passes over a tree of files, each read whole and in order
    /// (crate::search).
    Search,
    /// An LSM-tree key-value store (LevelDB's layout) under YCSB's mixes (crate::lsm).
    Lsm,
}

impl Kind {
    pub fn is_anon(self) -> bool {
        matches!(self, Kind::AnonRead | Kind::AnonWrite | Kind::AnonRw)
    }
    pub fn is_mmap(self) -> bool {
        matches!(self, Kind::MmapRead | Kind::MmapWrite)
    }
    pub fn access(self) -> Access {
        if self.is_anon() {
            Access::Anon
        } else if self.is_mmap() {
            Access::Mmap
        } else {
            Access::Buffered
        }
    }
    /// Fraction of operations that read, before `read_ratio` is applied.
    pub fn default_read_ratio(self) -> f64 {
        match self {
            Kind::FileRead | Kind::MmapRead | Kind::AnonRead | Kind::Search | Kind::Lsm => 1.0,
            Kind::FileWrite | Kind::MmapWrite | Kind::AnonWrite => 0.0,
            Kind::FileRw | Kind::AnonRw => 0.5,
        }
    }
}

/// The path by which an operation touches memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// read(2)/write(2) through the page cache.
    Buffered,
    /// Loads and stores through a shared file mapping.
    Mmap,
    /// Loads and stores to private anonymous memory.
    Anon,
    /// Pages `[page, page + npages)` of a file leave the page cache, resident pages and
    /// shadow entries alike: the file was deleted (or that range truncated or hole-punched).
    /// The kernel's truncate_inode_pages_range(); the in-guest runner punches the range
    /// (`fallocate(FALLOC_FL_PUNCH_HOLE)`), which keeps the file's size for later writes.
    Truncate,
}

/// `posix_fadvise`/`madvise` access hints, which switch readahead and the page-table recency
/// rules (`VM_RAND_READ`/`VM_SEQ_READ`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Advice {
    #[default]
    Normal,
    Random,
    Sequential,
}

/// The fields a phase may set; top-level workload fields are the defaults of every phase.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseToml {
    pub kind: Option<Kind>,
    /// Name of the file or anonymous region; files with the same name are one file.
    pub file: Option<String>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub file_size: Option<String>,
    /// Alias of `file_size`, more natural for anonymous memory.
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub size: Option<String>,
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub block_size: Option<String>,
    pub distribution: Option<String>,
    pub ops: Option<u64>,
    pub read_ratio: Option<f64>,
    pub fadvise: Option<Advice>,
    pub madvise: Option<Advice>,
    /// Spread popular blocks over the object as fio does (default true).
    pub scatter: Option<bool>,
    /// Touch every page of anonymous memory once, in order, before the accesses (default true).
    pub prefill: Option<bool>,
    /// Modeled CPU time the task spends between two operations, e.g. "2us".
    pub think: Option<String>,
    /// A trace whose accesses this phase replays, in order, instead of drawing them from a
    /// distribution (see docs/workloads.md).
    pub trace: Option<String>,
    /// The trace's format: text (the default), lcs, csv:COLUMNS, blkparse, msr,
    /// oracleGeneral, dense, iolog.
    pub trace_format: Option<String>,
    /// `"trace"`: each access of the trace is issued no earlier than its time in the trace
    /// (from the phase's first access); `"none"` (the default): back to back.
    pub pace: Option<String>,
    /// `kind = "search"`: the files of the tree (default 86,572, Linux 6.12's).
    pub files: Option<u64>,
    /// `kind = "search"`: the files' sizes, `"linux"` (the default) or one size for all.
    #[serde(default, deserialize_with = "crate::size::size_text")]
    pub file_sizes: Option<String>,
    /// `kind = "search"`: passes over the tree (default 10).
    pub passes: Option<u64>,
    /// `kind = "lsm"`: the store and its YCSB mix (`{ db_size = "100G", ycsb = "c" }`).
    pub lsm: Option<LsmToml>,
}

/// One `[[workload]]` table as written.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadToml {
    pub name: Option<String>,
    pub cgroup: Option<String>,
    pub seed: Option<u64>,
    /// Number of identical tasks (fio's numjobs); each gets its own seed stream.
    pub jobs: Option<u32>,
    /// With several jobs, share one file instead of one file per job (fio's filename=).
    pub shared_file: Option<bool>,
    /// Modeled time before the first operation, e.g. "5s".
    pub start: Option<String>,
    /// Keep the task's memory after its last operation (an idle process) instead of exiting.
    pub hold: Option<bool>,
    /// Stop after this much modeled time, e.g. "30s" (fio's time_based runtime); operations
    /// repeat until then unless `ops` bounds them.
    pub runtime: Option<String>,
    /// At most this many operations per modeled second (fio's rate_iops).
    pub rate_iops: Option<u64>,
    /// Each job's process exits after this many operations and a new one takes its place,
    /// without the old one's anonymous memory: the short-lived processes of a build.
    pub lifetime_ops: Option<u64>,
    /// Run in lockstep behind another workload: before its access j (from 0) this one waits
    /// until the leader has done `j / ratio` accesses (see docs/workloads.md).
    pub lockstep: Option<LockstepToml>,
    /// The CPUs the workload's tasks run on, with `machine.cpus` ≥ 2: a CPU list
    /// (`"0-35"`, `"0,2,4-7"`, as `taskset -c` and fio's `cpus_allowed` take one) or a count N
    /// (the first N CPUs). Every CPU by default.
    pub cpus: Option<CpuList>,
    /// An application cache in anonymous memory in front of the file reads
    /// (`{ size = "5G", policy = "lru", block = "4k" }`, crate::app_cache).
    pub app_cache: Option<AppCacheToml>,
    /// Reads in flight at most (fio's `iodepth` with an asynchronous engine, io_uring or
    /// libaio): a read that misses is submitted and the task goes on, waiting only when this
    /// many are in flight. 1, the default: each read waits for its IO.
    pub iodepth: Option<u32>,
    #[serde(flatten)]
    pub defaults: PhaseToml,
    #[serde(default)]
    pub phase: Vec<PhaseToml>,
}

/// A workload's `cpus` as written: a count or a CPU list (checked against the machine by the
/// scenario).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuList {
    Count(u32),
    List(String),
}

impl<'de> Deserialize<'de> for CpuList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = CpuList;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a CPU count (4) or a CPU list (\"0-35\", \"0,2,4-7\")")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<CpuList, E> {
                u32::try_from(v).ok().filter(|&n| n > 0).map(CpuList::Count).ok_or_else(|| E::custom(format!("{v} CPUs: give a count from 1")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<CpuList, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(-1))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<CpuList, E> {
                Ok(CpuList::List(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// `lockstep = { leader = "NAME", ratio = R }` as written.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockstepToml {
    pub leader: Option<String>,
    pub ratio: Option<f64>,
}

/// A follower's coupling to its leader: before its access j (0-based) the follower waits
/// until `leader_done × ratio ≥ j`; the leader begins its accesses after the follower's
/// prefill.
#[derive(Clone, Debug, PartialEq)]
pub struct Lockstep {
    pub leader: String,
    pub ratio: f64,
}

/// A validated phase.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    pub kind: Kind,
    pub object: String,
    pub object_pages: u64,
    pub block_pages: u64,
    pub distribution: Distribution,
    pub ops: u64,
    pub read_ratio: f64,
    pub advice: Advice,
    pub scatter: bool,
    pub prefill: bool,
    pub think_ns: u64,
    /// The trace this phase replays instead of drawing from `distribution`.
    pub trace: Option<TraceSpec>,
    /// `kind = "search"`: the tree and its passes (the phase's `object` names the tree).
    pub search: Option<SearchSpec>,
    /// `kind = "lsm"`: the store (the phase's `object` names its directory).
    pub lsm: Option<LsmSpec>,
}

/// A trace a phase replays: its path (as written; the scenario resolves it against its own
/// directory), its format, and whether the object's size was given (else the scenario sets
/// `object_pages` from the trace).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceSpec {
    pub path: String,
    pub format: String,
    pub sized: bool,
    /// The files the trace names, with their pages (an iolog's; the scenario fills them in):
    /// the phase touches these instead of its own object.
    pub files: Vec<(String, u64)>,
    /// `pace = "trace"`.
    pub pace: bool,
}

/// A validated workload: one or more identical tasks running their phases in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub name: String,
    pub cgroup: String,
    pub seed: u64,
    pub jobs: u32,
    pub shared_file: bool,
    pub start_ns: u64,
    /// The task stays alive, holding its memory, after its last operation.
    pub hold: bool,
    /// The task stops issuing operations this long after its start.
    pub runtime_ns: Option<u64>,
    /// Operations after which a job's process is replaced by a fresh one (0: never).
    pub lifetime_ops: u64,
    /// Minimum modeled time between the starts of two operations (from rate_iops).
    pub op_interval_ns: u64,
    /// The workload this one runs in lockstep behind, if any.
    pub lockstep: Option<Lockstep>,
    /// `cpus`, as written: the scenario resolves it against `machine.cpus`.
    pub cpus: Option<CpuList>,
    /// The application cache each job keeps in front of its file reads.
    pub app_cache: Option<AppCacheSpec>,
    /// Reads in flight at most (`iodepth`, 1 to [`MAX_IODEPTH`]; 1: synchronous).
    pub iodepth: u32,
    pub phases: Vec<Phase>,
}

/// The largest `iodepth` (fio's own limit is 65535; io_uring's rings hold 32768 entries).
pub const MAX_IODEPTH: u32 = 65_536;

/// A problem with one key of a workload table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct SpecError {
    /// Dotted key relative to the workload table, e.g. `phase[1].distribution`.
    pub key: String,
    pub message: String,
}

/// At most this many files (a search's tree, a store's tables) over a workload's jobs: each
/// job lays them out.
const MAX_JOB_FILES: u64 = 1 << 24;

fn err(key: impl Into<String>, message: impl Into<String>) -> SpecError {
    SpecError { key: key.into(), message: message.into() }
}

impl WorkloadToml {
    /// Validates the table; `index` names it when it has no `name`.
    pub fn resolve(&self, index: usize) -> Result<Workload, SpecError> {
        let name = self.name.clone().unwrap_or_else(|| format!("workload{index}"));
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(err("name", "must be a non-empty word without spaces"));
        }
        let cgroup = self.cgroup.clone().ok_or_else(|| err("cgroup", "missing: every workload runs in a cgroup (use \"/\" for the root)"))?;
        let jobs = self.jobs.unwrap_or(1);
        if jobs == 0 || jobs > 4096 {
            return Err(err("jobs", "must be between 1 and 4096"));
        }
        let start_ns = match &self.start {
            Some(s) => parse_duration_ns(s).map_err(|m| err("start", m))?,
            None => 0,
        };
        let runtime_ns = match &self.runtime {
            Some(s) => Some(parse_duration_ns(s).map_err(|m| err("runtime", m))?),
            None => None,
        };
        let op_interval_ns = match self.rate_iops {
            Some(0) => return Err(err("rate_iops", "must be at least 1")),
            Some(r) => 1_000_000_000 / r,
            None => 0,
        };
        let lifetime_ops = match self.lifetime_ops {
            Some(0) => return Err(err("lifetime_ops", "must be at least 1 (leave it out for processes that live to the end)")),
            Some(n) => n,
            None => 0,
        };
        let lockstep = match &self.lockstep {
            None => None,
            Some(l) => {
                let leader = l.leader.clone().ok_or_else(|| err("lockstep.leader", "missing: the name of the workload to follow"))?;
                let ratio = l.ratio.unwrap_or(1.0);
                if !(ratio.is_finite() && ratio > 0.0) {
                    return Err(err("lockstep.ratio", "must be a positive number (the follower's accesses per access of the leader)"));
                }
                Some(Lockstep { leader, ratio })
            }
        };
        let unbounded = runtime_ns.is_some();
        let phases = if self.phase.is_empty() {
            vec![resolve_phase(&self.defaults, &PhaseToml::default(), &name, "", unbounded)?]
        } else {
            if self.defaults.ops.is_some() && self.phase.iter().all(|p| p.ops.is_some()) {
                return Err(err("ops", "is set both for the workload and for every phase; set it in one place"));
            }
            self.phase
                .iter()
                .enumerate()
                .map(|(i, p)| resolve_phase(&self.defaults, p, &name, &format!("phase[{i}]."), unbounded))
                .collect::<Result<Vec<_>, _>>()?
        };
        // Each job lays out a search's whole tree and declares a store's every table.
        for (i, p) in phases.iter().enumerate() {
            let per_job = match (&p.search, &p.lsm) {
                (Some(s), _) => s.files,
                (_, Some(l)) => crate::lsm::Layout::new(l).tables.iter().sum(),
                _ => 0,
            };
            if per_job.saturating_mul(jobs as u64) > MAX_JOB_FILES {
                let at = if self.phase.is_empty() { String::new() } else { format!("phase[{i}].") };
                return Err(err(
                    format!("{at}{}", if p.search.is_some() { "files" } else { "lsm.db_size" }),
                    format!("{per_job} files for each of {jobs} jobs: at most {MAX_JOB_FILES} in all (fewer jobs or files)"),
                ));
            }
        }
        let thread_phase = phases.iter().position(|p| p.lsm.as_ref().is_some_and(|l| l.compaction_thread));
        if let Some(i) = thread_phase.filter(|_| jobs < 2) {
            let at = if self.phase.is_empty() { String::new() } else { format!("phase[{i}].") };
            return Err(err(
                format!("{at}lsm.compaction_thread"),
                "the compaction thread is the workload's last job: `jobs` must be at least 2 (one client thread and it)",
            ));
        }
        let clients = jobs - thread_phase.is_some() as u32;
        if let Some((i, n)) = phases.iter().enumerate().find_map(|(i, p)| p.lsm.as_ref().map(|l| (i, l.scan_threads)).filter(|&(_, n)| n >= clients)) {
            let at = if self.phase.is_empty() { String::new() } else { format!("phase[{i}].") };
            return Err(err(
                format!("{at}lsm.scan_threads"),
                format!("{n} of the workload's {clients} client jobs: leave at least one job to run the mix's gets (raise `jobs`)"),
            ));
        }
        let app_cache = match &self.app_cache {
            None => None,
            Some(t) => Some(resolve_app_cache(t, &phases, lifetime_ops)?),
        };
        let iodepth = match self.iodepth {
            None => 1,
            Some(n @ 1..=MAX_IODEPTH) => n,
            Some(n) => return Err(err("iodepth", format!("{n}: give 1 (each read waits for its IO) to {MAX_IODEPTH}"))),
        };
        if iodepth > 1 && !phases.iter().any(|p| matches!(p.kind, Kind::FileRead | Kind::FileRw)) {
            return Err(err("iodepth", "applies to buffered file reads (file-read, file-rw): the workload has none"));
        }
        Ok(Workload {
            iodepth,
            app_cache,
            name,
            cgroup,
            seed: self.seed.unwrap_or(1),
            jobs,
            shared_file: self.shared_file.unwrap_or(false),
            start_ns,
            hold: self.hold.unwrap_or(false),
            runtime_ns,
            lifetime_ops,
            op_interval_ns,
            lockstep,
            cpus: self.cpus.clone(),
            phases,
        })
    }
}

/// The workload's `app_cache`, which needs file reads to filter and a process that lives.
fn resolve_app_cache(t: &AppCacheToml, phases: &[Phase], lifetime_ops: u64) -> Result<AppCacheSpec, SpecError> {
    let spec = t.resolve().map_err(|(k, m)| err(format!("app_cache.{k}"), m))?;
    if !phases.iter().any(|p| p.kind.access() == Access::Buffered && p.kind != Kind::FileWrite) {
        return Err(err("app_cache", "the workload reads no file: an application cache filters buffered file reads (file-read, file-rw, search)"));
    }
    if phases.iter().any(|p| p.kind == Kind::Lsm) {
        return Err(err("app_cache", "an lsm workload keeps its own block cache (lsm.block_cache): leave out `app_cache`"));
    }
    if lifetime_ops > 0 {
        return Err(err("lifetime_ops", "a process that is replaced loses its application cache: leave out `lifetime_ops` or `app_cache`"));
    }
    if phases.iter().any(|p| p.kind.is_anon() && p.object == crate::gen::APP_CACHE_OBJECT) {
        return Err(err("file", format!("`{}` is the application cache's region: give the anonymous region another name", crate::gen::APP_CACHE_OBJECT)));
    }
    Ok(spec)
}

/// `unbounded`: the workload runs for a time, so a phase without `ops` repeats until then.
fn resolve_phase(d: &PhaseToml, p: &PhaseToml, name: &str, prefix: &str, unbounded: bool) -> Result<Phase, SpecError> {
    macro_rules! pick {
        ($f:ident) => {
            p.$f.clone().or_else(|| d.$f.clone())
        };
    }
    let key = |k: &str| format!("{prefix}{k}");
    let kind = pick!(kind).ok_or_else(|| {
        err(key("kind"), "missing (one of file-read, file-write, file-rw, mmap-read, mmap-write, anon-read, anon-write, anon-rw, search, lsm)")
    })?;
    if kind == Kind::Search {
        return resolve_search(d, p, name, prefix, unbounded);
    }
    if kind == Kind::Lsm {
        return resolve_lsm(d, p, name, prefix, unbounded);
    }
    for (k, set) in [("files", pick!(files).is_some()), ("file_sizes", pick!(file_sizes).is_some()), ("passes", pick!(passes).is_some())] {
        if set {
            return Err(err(key(k), "applies to kind = \"search\""));
        }
    }
    if pick!(lsm).is_some() {
        return Err(err(key("lsm"), "applies to kind = \"lsm\""));
    }
    let trace_path = pick!(trace);
    let size_text = match (pick!(file_size), pick!(size)) {
        (Some(_), Some(_)) if p.file_size.is_some() && p.size.is_some() => return Err(err(key("size"), "give either file_size or size, not both")),
        (Some(f), _) => f,
        (None, Some(s)) => s,
        // A trace gives the size itself (the scenario reads it).
        (None, None) if trace_path.is_some() => "4k".to_string(),
        (None, None) => return Err(err(key("file_size"), "missing: how large is the object this phase touches?")),
    };
    let sized = pick!(file_size).is_some() || pick!(size).is_some();
    let bytes = parse_size(&size_text).map_err(|m| err(key("file_size"), m))?;
    let object_pages = bytes.div_ceil(PAGE_SIZE);
    if object_pages == 0 {
        return Err(err(key("file_size"), "must be at least one page"));
    }
    if object_pages > u32::MAX as u64 / 2 {
        return Err(err(key("file_size"), "is larger than pagelab's 8 TiB limit per object"));
    }
    let block = match pick!(block_size) {
        Some(b) => parse_size(&b).map_err(|m| err(key("block_size"), m))?,
        None => PAGE_SIZE,
    };
    if block == 0 || block % PAGE_SIZE != 0 {
        return Err(err(key("block_size"), "must be a positive multiple of 4k"));
    }
    let block_pages = block / PAGE_SIZE;
    if block_pages > object_pages {
        return Err(err(key("block_size"), "is larger than the object"));
    }
    let distribution = match pick!(distribution) {
        Some(t) => match Distribution::parse(&t).map_err(|m| err(key("distribution"), m))? {
            Distribution::MyYcsbLatest => {
                return Err(err(
                    key("distribution"),
                    "my-ycsb-latest draws an lsm store's keys (each thread reads behind its own inserts): use it with kind = \"lsm\"",
                ))
            }
            d => d,
        },
        None => Distribution::Uniform,
    };
    let ops = pick!(ops).unwrap_or(if unbounded { u64::MAX } else { object_pages / block_pages });
    let read_ratio = pick!(read_ratio).unwrap_or(kind.default_read_ratio());
    if !(0.0..=1.0).contains(&read_ratio) {
        return Err(err(key("read_ratio"), "must be between 0 and 1"));
    }
    if (p.read_ratio.is_some() || d.read_ratio.is_some()) && !matches!(kind, Kind::FileRw | Kind::AnonRw) {
        return Err(err(key("read_ratio"), "only applies to file-rw and anon-rw"));
    }
    let advice = match (kind.access(), pick!(fadvise), pick!(madvise)) {
        (Access::Buffered, f, None) => f.unwrap_or_default(),
        (Access::Mmap | Access::Anon | Access::Truncate, None, m) => m.unwrap_or_default(),
        (Access::Buffered, _, Some(_)) => return Err(err(key("madvise"), "applies to mmap and anon kinds; use fadvise")),
        (_, Some(_), _) => return Err(err(key("fadvise"), "applies to buffered file kinds; use madvise")),
    };
    let think_ns = think_ns(pick!(think), &key)?;
    let object = pick!(file).unwrap_or_else(|| name.to_string());
    let trace = match trace_path {
        None if pick!(trace_format).is_some() => return Err(err(key("trace_format"), "applies to a `trace`; this phase has none")),
        None => None,
        Some(path) => {
            if pick!(distribution).is_some() {
                return Err(err(key("distribution"), "a trace gives the accesses: leave out `distribution` (or `trace`)"));
            }
            if block_pages != 1 {
                return Err(err(key("block_size"), "a trace's accesses are single 4 KiB pages: leave out `block_size`"));
            }
            let pace = match pick!(pace).as_deref() {
                None | Some("none") => false,
                Some("trace") => true,
                Some(other) => {
                    return Err(err(key("pace"), format!("`{other}`: use \"trace\" (each access at its time in the trace) or \"none\" (back to back)")))
                }
            };
            let format = pick!(trace_format).unwrap_or_else(|| "text".into());
            if matches!(format.as_str(), "iolog" | "fio-iolog") {
                if kind.is_anon() {
                    return Err(err(key("kind"), "an iolog reads and writes files: use a file or mmap kind"));
                }
                if pick!(file).is_some() {
                    return Err(err(key("file"), "an iolog names its files itself: leave out `file`"));
                }
            }
            Some(TraceSpec { path, format, sized, files: Vec::new(), pace })
        }
    };
    if trace.is_none() && pick!(pace).is_some() {
        return Err(err(key("pace"), "applies to a `trace`; this phase has none"));
    }
    // A trace's phase runs to the end of the trace unless `ops` stops it sooner; its `T`
    // lines are the prefill unless `prefill = true` asks for one in page order first.
    let ops = if trace.is_some() { pick!(ops).unwrap_or(u64::MAX) } else { ops };
    let prefill = pick!(prefill).unwrap_or(kind.is_anon() && trace.is_none());
    Ok(Phase {
        trace,
        kind,
        object,
        object_pages,
        block_pages,
        distribution,
        ops,
        read_ratio,
        advice,
        scatter: pick!(scatter).unwrap_or(true),
        prefill,
        think_ns,
        search: None,
        lsm: None,
    })
}

/// A `kind = "search"` phase (crate::search): a tree of files, read whole in passes.
fn resolve_search(d: &PhaseToml, p: &PhaseToml, name: &str, prefix: &str, unbounded: bool) -> Result<Phase, SpecError> {
    macro_rules! pick {
        ($f:ident) => {
            p.$f.clone().or_else(|| d.$f.clone())
        };
    }
    let key = |k: &str| format!("{prefix}{k}");
    if pick!(lsm).is_some() {
        return Err(err(key("lsm"), "applies to kind = \"lsm\""));
    }
    for (k, set) in [
        ("file_size", pick!(file_size).is_some() || pick!(size).is_some()),
        ("distribution", pick!(distribution).is_some()),
        ("read_ratio", pick!(read_ratio).is_some()),
        ("madvise", pick!(madvise).is_some()),
        ("trace", pick!(trace).is_some()),
        ("trace_format", pick!(trace_format).is_some()),
        ("pace", pick!(pace).is_some()),
        ("prefill", pick!(prefill).is_some()),
        ("scatter", pick!(scatter).is_some()),
    ] {
        if set {
            let why = if k == "file_size" { "a search's files take their sizes from `files` and `file_sizes`" } else { "does not apply to kind = \"search\"" };
            return Err(err(key(k), why));
        }
    }
    let files = pick!(files).unwrap_or(LINUX_FILES);
    if files == 0 || files > MAX_FILES {
        return Err(err(key("files"), format!("must be between 1 and {MAX_FILES}")));
    }
    let sizes = match pick!(file_sizes) {
        Some(t) => FileSizes::parse(&t).map_err(|m| err(key("file_sizes"), m))?,
        None => FileSizes::Linux,
    };
    if let FileSizes::Fixed(b) = sizes {
        if b.div_ceil(PAGE_SIZE) > u32::MAX as u64 / 2 {
            return Err(err(key("file_sizes"), "is larger than pagelab's 8 TiB limit per object"));
        }
    }
    let passes = match pick!(passes) {
        Some(0) => return Err(err(key("passes"), "must be at least 1")),
        Some(n) => n,
        None if unbounded => u64::MAX,
        None => 10,
    };
    let block = match pick!(block_size) {
        Some(b) => parse_size(&b).map_err(|m| err(key("block_size"), m))?,
        None => 64 << 10,
    };
    if block == 0 || block % PAGE_SIZE != 0 {
        return Err(err(key("block_size"), "must be a positive multiple of 4k"));
    }
    if block > 1 << 30 {
        return Err(err(key("block_size"), "is larger than 1G"));
    }
    let think_ns = think_ns(pick!(think), &key)?;
    let object = pick!(file).unwrap_or_else(|| name.to_string());
    if object.is_empty() {
        return Err(err(key("file"), "the tree's name is empty"));
    }
    Ok(Phase {
        kind: Kind::Search,
        object,
        // Not an object's size: the tree's files are declared one by one (crate::gen).
        object_pages: 1,
        block_pages: block / PAGE_SIZE,
        distribution: Distribution::Sequential,
        // Bounded by the passes (crate::gen counts them); `ops` stops sooner.
        ops: pick!(ops).unwrap_or(u64::MAX),
        read_ratio: 1.0,
        advice: pick!(fadvise).unwrap_or_default(),
        scatter: false,
        prefill: false,
        think_ns,
        trace: None,
        search: Some(SearchSpec { files, sizes, passes }),
        lsm: None,
    })
}

/// A phase's `think` (CPU time between operations), 0 when absent.
fn think_ns(think: Option<String>, key: &impl Fn(&str) -> String) -> Result<u64, SpecError> {
    think.map_or(Ok(0), |t| parse_duration_ns(&t).map_err(|m| err(key("think"), m)))
}

/// The keys a phase of `kind` takes none of, set in `p` or `d`: the first such key.
fn first_inapplicable(d: &PhaseToml, p: &PhaseToml, keys: &[&'static str]) -> Option<&'static str> {
    let set = |k: &str| -> bool {
        let f = |t: &PhaseToml| match k {
            "file_size" => t.file_size.is_some() || t.size.is_some(),
            "read_ratio" => t.read_ratio.is_some(),
            "madvise" => t.madvise.is_some(),
            "trace" => t.trace.is_some(),
            "trace_format" => t.trace_format.is_some(),
            "pace" => t.pace.is_some(),
            "prefill" => t.prefill.is_some(),
            "scatter" => t.scatter.is_some(),
            "block_size" => t.block_size.is_some(),
            "files" => t.files.is_some(),
            "file_sizes" => t.file_sizes.is_some(),
            "passes" => t.passes.is_some(),
            _ => false,
        };
        f(p) || f(d)
    };
    keys.iter().copied().find(|k| set(k))
}

/// A `kind = "lsm"` phase (crate::lsm): a LevelDB-like store under a YCSB mix.
fn resolve_lsm(d: &PhaseToml, p: &PhaseToml, name: &str, prefix: &str, unbounded: bool) -> Result<Phase, SpecError> {
    macro_rules! pick {
        ($f:ident) => {
            p.$f.clone().or_else(|| d.$f.clone())
        };
    }
    let key = |k: &str| format!("{prefix}{k}");
    let keys = ["file_size", "read_ratio", "madvise", "trace", "trace_format", "pace", "prefill", "scatter", "block_size", "files", "file_sizes", "passes"];
    if let Some(k) = first_inapplicable(d, p, &keys) {
        let why = match k {
            "file_size" => "an lsm store's files take their sizes from `lsm.db_size` and `lsm.table_size`",
            "read_ratio" => "an lsm store's mix is `lsm.ycsb`",
            _ => "does not apply to kind = \"lsm\"",
        };
        return Err(err(key(k), why));
    }
    let t = pick!(lsm).ok_or_else(|| err(key("lsm"), "missing: the store, e.g. lsm = { db_size = \"100G\", ycsb = \"c\" }"))?;
    let spec = t.resolve().map_err(|(k, m)| err(key(&format!("lsm.{k}")), m))?;
    let layout = Layout::new(&spec);
    let text = pick!(distribution).unwrap_or_else(|| spec.default_distribution().to_string());
    let distribution = Distribution::parse(&text).map_err(|m| err(key("distribution"), m))?;
    let ops = match pick!(ops) {
        Some(n) => n,
        None if unbounded => u64::MAX,
        None => return Err(err(key("ops"), "missing: how many YCSB operations? (or give the workload a `runtime`)")),
    };
    let think_ns = think_ns(pick!(think), &key)?;
    let object = pick!(file).unwrap_or_else(|| name.to_string());
    if object.is_empty() {
        return Err(err(key("file"), "the store's name is empty"));
    }
    Ok(Phase {
        kind: Kind::Lsm,
        object,
        // Not an object's size: the tables are declared one by one (crate::gen).
        object_pages: 1,
        // The largest read or write: an index block, a 64 KiB write of a table.
        block_pages: layout.largest_io(),
        distribution,
        ops,
        read_ratio: 1.0,
        advice: pick!(fadvise).unwrap_or_default(),
        scatter: false,
        prefill: false,
        think_ns,
        trace: None,
        search: None,
        lsm: Some(spec),
    })
}
