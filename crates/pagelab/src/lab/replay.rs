//! A page-access trace replayed against a plain cache (`lru`, `fifo`, `clock`, `opt`,
//! `sieve`, `s3fifo`, `arc`) or against a kernel model (`classic`, `mglru`) as buffered reads
//! of the 4 KiB pages of one file, one page per trace object: what `pagelab run --trace` and
//! the Python package's `run_trace` do.

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use crate::error::{bail, Context, Error, Result};
use pagelab_cachesim::PolicyKind as Plain;
use pagelab_trace::Format;
use pagelab_workload::{Access, Advice, Op, PAGE_SIZE};
use serde_json::{json, Value};

use crate::report::thousands as th;

/// A run's JSON report and its text table.
type Outcome = Result<(Value, String)>;

/// The options of a trace run.
pub struct TraceRun<'a> {
    pub path: &'a Path,
    pub format: &'a str,
    pub policy: &'a str,
    pub memory: &'a str,
    pub kernel: &'a str,
    pub set: &'a [String],
}

/// The trace as the runs read it: an oracleGeneral trace that is read more than once (by
/// several memory sizes) is converted to the dense format once, into a temporary file; a
/// single run streams it.
struct Input<'a> {
    path: &'a Path,
    format: Format,
    convert_s: f64,
    zero_size_records: Option<u64>,
}

/// A temporary file, removed when dropped.
struct TempFile(std::path::PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs the trace; returns the JSON report and a short text table. Several memory sizes
/// (`--memory 40M,400M`) run in parallel, each streaming the trace itself, and give a JSON
/// array in their order; the results do not depend on the number of cores.
pub fn run(o: &TraceRun) -> Result<(Value, String)> {
    let kernel_model = crate::policy::registry::kernel_lru(o.policy).is_some();
    if !kernel_model && Plain::parse(o.policy).is_none() {
        bail!("unknown policy `{}` (expected {})", o.policy, crate::policy::registry::names(|p| p.runs.on_trace()));
    }
    let sizes: Vec<&str> = o.memory.split(',').map(str::trim).collect();
    // oracleGeneral, dense and fio's iolog keep their own replays (streamed, converted once
    // for several sizes, keyed); the other formats are read as access streams.
    let legacy = o.format.parse::<Format>().is_ok() || matches!(o.format, "fio-iolog" | "iolog");
    if let (false, Some(spec)) = (legacy, pagelab_trace::access::Spec::parse(o.format)) {
        let spec = spec.map_err(|e| Error::Msg(format!("--trace-format {}: {e}", o.format)))?;
        return crate::lab::replay_access::run(o, &spec, &sizes, kernel_model);
    }
    if matches!(o.format, "fio-iolog" | "iolog") {
        if !kernel_model {
            // A plain cache sees the log's pages: each file's after the files named before it.
            return crate::lab::replay_access::run(o, &pagelab_trace::access::Spec::Iolog, &sizes, false);
        }
        let log = pagelab_trace::iolog::read_iolog(o.path)?;
        if log.ops.is_empty() {
            bail!("{}: the iolog has no read or write to replay", o.path.display());
        }
        return for_each_size(o, &sizes, |o| run_iolog(o, &log));
    }
    let Ok(format) = o.format.parse::<Format>() else {
        bail!("unknown trace format `{}` (expected {})", o.format, pagelab_trace::access::Spec::NAMES);
    };
    let _tmp;
    // `lru`, `fifo` and `clock` stream an oracleGeneral trace themselves (keyed by object
    // id, no id map).
    let keyed = Plain::parse(o.policy).is_some_and(pagelab_cachesim::keyed::handles) && format == Format::OracleGeneral;
    let input = if format == Format::OracleGeneral && sizes.len() > 1 && !keyed {
        let start = Instant::now();
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        _tmp = TempFile(std::env::temp_dir().join(format!("pagelab-{}-{nanos}.dense", std::process::id())));
        let st = pagelab_trace::convert(o.path, &_tmp.0)?;
        Input { path: &_tmp.0, format: Format::Dense, convert_s: start.elapsed().as_secs_f64(), zero_size_records: Some(st.zero_size_records) }
    } else {
        Input { path: o.path, format, convert_s: 0.0, zero_size_records: None }
    };
    for_each_size(o, &sizes, |o| run_one(o, &input))
}

/// Runs `one` for every memory size, in parallel, and gathers the reports in their order
/// (one report, not an array, for a single size).
pub(crate) fn for_each_size(o: &TraceRun, sizes: &[&str], one: impl Fn(&TraceRun) -> Result<(Value, String)> + Sync) -> Result<(Value, String)> {
    if sizes.len() == 1 {
        return one(o);
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(sizes.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Outcome>>> = sizes.iter().map(|_| Mutex::new(None)).collect();
    let stop = crate::interrupt::current();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                crate::interrupt::scope(stop.clone(), || loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(memory) = sizes.get(i) else { break };
                    let r = one(&TraceRun { memory, ..*o });
                    *results[i].lock().expect("result slot") = Some(r);
                })
            });
        }
    });
    let (mut all, mut table) = (Vec::new(), String::new());
    for (r, memory) in results.into_iter().zip(sizes) {
        let (v, t) = r.into_inner().expect("result slot").expect("every size ran").with_context(|| format!("--memory {memory}"))?;
        all.push(v);
        table += &format!("--memory {memory}: {t}");
    }
    Ok((Value::Array(all), table))
}

/// A plain cache's replay as JSON, one shape for page traces and access streams: the policy,
/// `trace` (what the reader saw), the cache's size and the hits, misses and evictions.
pub(crate) fn plain_json(o: &TraceRun, st: &pagelab_cachesim::Stats, trace: Value, memory: u64, wall: f64) -> Value {
    json!({
        "provenance": crate::report::plain_provenance(o.set),
        "policy": st.policy,
        "trace": trace,
        "memory": memory,
        "capacity_pages": memory / PAGE_SIZE,
        "ops": st.ops,
        "hits": st.hits,
        "misses": st.misses,
        "miss_ratio": st.miss_ratio(),
        "evictions": st.evictions,
        "state_bytes": st.state_bytes,
        "wall_s": wall,
        "accesses_per_s": st.ops as f64 / wall,
    })
}

fn run_one(o: &TraceRun, input: &Input) -> Result<(Value, String)> {
    let memory = pagelab_workload::parse_size(o.memory).map_err(|e| Error::Msg(format!("--memory {}: {e}", o.memory)))?;
    let trace_json = |records: u64, pages: Option<u64>, zero: Option<u64>| json!({"path": o.path.display().to_string(), "format": o.format, "records": records, "pages": pages, "zero_size_records": zero});
    if let Some(policy) = Plain::parse(o.policy) {
        if !o.set.is_empty() {
            bail!("--set applies to the kernel models (classic, mglru), not to `{}`", o.policy);
        }
        let capacity = memory / PAGE_SIZE;
        let start = Instant::now();
        let keyed = input.format == Format::OracleGeneral && pagelab_cachesim::keyed::handles(policy);
        let keyed = if keyed { pagelab_cachesim::keyed::run(input.path, policy, capacity) } else { None };
        let (st, zero) = match keyed {
            Some(r) => r?,
            None => {
                let mut src = pagelab_trace::open(input.path, input.format, false, policy.needs_future())?;
                let st = pagelab_cachesim::run(src.as_mut(), policy, capacity)?;
                (st, src.zero_size_records())
            }
        };
        let wall = start.elapsed().as_secs_f64();
        if st.ops == 0 {
            bail!("{}: the trace has no accesses", o.path.display());
        }
        let mut v = plain_json(o, &st, trace_json(st.ops, st.pages, input.zero_size_records.or(Some(zero))), memory, wall);
        v["convert_s"] = json!(input.convert_s);
        let table = format!(
            "{} {} pages: {} accesses, {} misses, miss ratio {:.6}, {:.1} M accesses/s\n",
            st.policy,
            th(capacity),
            th(st.ops),
            th(st.misses),
            st.miss_ratio(),
            st.ops as f64 / wall / 1e6
        );
        return Ok((v, table));
    }
    // A dense trace carries its page count; an oracleGeneral one is mapped as it streams and
    // the model's file grows as its pages appear, unless a shared-memory object (added after
    // the file) pins the file's size: then the trace is read once first to count them.
    let name = o.path.file_name().map_or("trace".into(), |n| n.to_string_lossy().into_owned());
    let scenario = |pages: u64| {
        let mut w = trace_workload("trace", "file-read");
        w.insert("file_size".into(), format!("{}p", pages.max(1)).into());
        w.insert("fadvise".into(), "random".into());
        crate::Scenario::from_table(trace_scenario(o, w), &format!("{} (trace scenario)", o.path.display()), &name, o.set).map_err(Error::from)
    };
    let mut src = pagelab_trace::open(input.path, input.format, false, false)?;
    let mut s = scenario(src.pages().unwrap_or(1))?;
    if src.pages().is_none() && s.machine.shmem_pages > 0 {
        src = pagelab_trace::open(input.path, input.format, true, false)?;
        s = scenario(src.pages().expect("known after the first pass"))?;
    }
    // Every access a buffered single-page read of object 0, the trace's file.
    let read =
        Op { object: 0, page: 0, npages: 1, write: false, access: Access::Buffered, advice: Advice::Random, fill: false, think_ns: 0, due: None, more: false };
    let ops = crate::sim::OpSource::Pages(crate::sim::PageOps::new(src, read, o.path));
    let start = Instant::now();
    let crate::Outcome { report, trace: status } = crate::run_with(&s, crate::RunOptions { ops: Some(ops), ..Default::default() })?;
    let wall = start.elapsed().as_secs_f64();
    let mut status = status.ok_or_else(|| Error::Msg(format!("{}: the replay kept no trace status", o.path.display())))?;
    if let Some(e) = status.error.take() {
        return Err(e.into());
    }
    if report.ops == 0 {
        bail!("{}: the trace has no accesses", o.path.display());
    }
    let zero = input.zero_size_records.or((input.format == Format::OracleGeneral).then_some(status.zero_size_records));
    let table = report.table();
    let mut v = serde_json::to_value(&report)?;
    // The machine and task built for the trace are an implementation detail (a streamed
    // trace's file grows as it is read): the replay's provenance is the versions and --set.
    v["provenance"] = crate::report::plain_provenance(o.set);
    let misses = status.misses;
    let ops_done = report.ops;
    let m = v.as_object_mut().expect("a report is an object");
    m.insert("trace".into(), trace_json(ops_done, Some(status.pages_seen), zero));
    // The plain caches' keys, so one reader takes both: what the machine was given, the
    // hits, and the pages reclaim freed (pgsteal) as the evictions.
    m.insert("memory".into(), (s.machine.memory_pages * PAGE_SIZE).into());
    m.insert("capacity_pages".into(), s.machine.memory_pages.into());
    m.insert("hits".into(), (ops_done - misses).into());
    let evictions = ["pgsteal_anon", "pgsteal_file"].iter().map(|k| report.vmstat.get(*k).copied().unwrap_or(0)).sum::<u64>();
    m.insert("evictions".into(), evictions.into());
    m.insert("misses".into(), misses.into());
    m.insert("miss_ratio".into(), (if ops_done == 0 { 0.0 } else { misses as f64 / ops_done as f64 }).into());
    m.insert("convert_s".into(), input.convert_s.into());
    m.insert("wall_s".into(), wall.into());
    m.insert("accesses_per_s".into(), (ops_done as f64 / wall).into());
    let table = format!(
        "{table}trace: {} accesses, {} misses, miss ratio {:.6}, {:.2} M accesses/s\n",
        th(ops_done),
        th(misses),
        misses as f64 / ops_done.max(1) as f64,
        ops_done as f64 / wall / 1e6
    );
    Ok((v, table))
}

/// A fio iolog against a kernel model: one task in the root cgroup issues the log's reads
/// and writes back to back, each a buffered read(2) or write(2) of the pages its byte range
/// covers (normal readahead), on files sized to the pages the log touches.
fn run_iolog(o: &TraceRun, log: &pagelab_trace::iolog::Iolog) -> Result<(Value, String)> {
    let mut w = trace_workload("iolog", "file-read");
    let phases: Vec<toml::Value> = log
        .files
        .iter()
        .map(|(name, pages)| {
            toml::Value::Table(toml::Table::from_iter([("file".to_string(), name.clone().into()), ("file_size".to_string(), format!("{pages}p").into())]))
        })
        .collect();
    w.insert("phase".into(), toml::Value::Array(phases));
    let name = o.path.file_name().map_or("iolog".into(), |n| n.to_string_lossy().into_owned());
    let s = crate::Scenario::from_table(trace_scenario(o, w), &format!("{} (iolog scenario)", o.path.display()), &name, o.set).map_err(Error::from)?;
    let ops: Vec<Op> = log
        .ops
        .iter()
        .map(|op| Op {
            object: op.file,
            page: op.first_page,
            npages: op.npages,
            write: op.write,
            access: Access::Buffered,
            advice: Advice::Normal,
            fill: false,
            think_ns: 0,
            due: None,
            more: false,
        })
        .collect();
    let start = Instant::now();
    let report = crate::run_with(&s, crate::RunOptions { ops: Some(crate::sim::OpSource::List(ops.into_iter())), ..Default::default() })?.report;
    let wall = start.elapsed().as_secs_f64();
    let table = report.table();
    let mut v = serde_json::to_value(&report)?;
    // The machine and task built for the trace are an implementation detail (a streamed
    // trace's file grows as it is read): the replay's provenance is the versions and --set.
    v["provenance"] = crate::report::plain_provenance(o.set);
    let m = v.as_object_mut().expect("a report is an object");
    let reads = log.ops.iter().filter(|op| !op.write).count();
    m.insert(
        "trace".into(),
        json!({
            "path": o.path.display().to_string(), "format": "fio-iolog", "version": log.version,
            "files": log.files.len(), "reads": reads, "writes": log.ops.len() - reads,
            "not_replayed": {"trim": log.trims, "sync": log.syncs, "wait": log.waits},
        }),
    );
    m.insert("wall_s".into(), wall.into());
    let table = format!(
        "{table}iolog: {} reads, {} writes on {} files ({} trims, {} syncs, {} waits not replayed)\n",
        reads,
        log.ops.len() - reads,
        log.files.len(),
        log.trims,
        log.syncs,
        log.waits
    );
    Ok((v, table))
}

/// The scenario of a trace replay, as a table: the machine of `--memory`, `--kernel` and
/// `--policy`, and the one workload `w` that replays the trace.
pub(crate) fn trace_scenario(o: &TraceRun, w: toml::Table) -> toml::Table {
    let machine = toml::Table::from_iter([
        ("memory".to_string(), toml::Value::from(o.memory)),
        ("kernel".to_string(), o.kernel.into()),
        ("policy".to_string(), o.policy.into()),
    ]);
    toml::Table::from_iter([("machine".to_string(), toml::Value::Table(machine)), ("workload".to_string(), toml::Value::Array(vec![toml::Value::Table(w)]))])
}

/// A trace replay's workload: one task of `kind` in the root cgroup whose operations come
/// from the trace (`ops = 0`: the stream is set afterwards).
pub(crate) fn trace_workload(name: &str, kind: &str) -> toml::Table {
    toml::Table::from_iter([
        ("name".to_string(), toml::Value::from(name)),
        ("cgroup".to_string(), "/".into()),
        ("kind".to_string(), kind.into()),
        ("ops".to_string(), 0.into()),
    ])
}
