//! `pagelab run --trace` for the access-stream formats (`text`, `lcs`, `csv:...`,
//! `blkparse`, `msr`; [`pagelab_trace::access`]): against a plain cache, the stream's pages;
//! against a kernel model, one task in the root cgroup that reads (`R`, plain accesses) and
//! writes (`W`, `T`) the pages of one file with single-page buffered `pread`/`pwrite`
//! without readahead (`POSIX_FADV_RANDOM`), as the oracleGeneral replay reads. The file has
//! the pages the trace touches: the trace is read once first to count them.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::error::{bail, Error, Result};
use pagelab_cachesim::PolicyKind as Plain;
use pagelab_trace::access::{AccessStream, Kind, Spec, StreamCounts};
use pagelab_trace::TraceError;
use pagelab_workload::{Access, Advice, Op, PAGE_SIZE};
use serde_json::{json, Value};

use crate::lab::replay::TraceRun;
use crate::sim::OpStream;

/// Maps each access of a stream to an operation: `read` for reads and plain accesses, the
/// same with `write` set for writes; first touches (`T`) are writes, and fills when `fill`
/// says so. A read error ends the operations and is kept in `error`.
pub struct AccessOps {
    stream: AccessStream,
    pages: Vec<u32>,
    kinds: Vec<Kind>,
    pos: usize,
    template: Op,
    plain_write: bool,
    touch_fills: bool,
    remaining: u64,
    /// The read error that ended the stream, if one did.
    pub error: Arc<Mutex<Option<TraceError>>>,
    /// What the stream read (kept up to date batch by batch).
    pub counts: Arc<Mutex<StreamCounts>>,
}

impl AccessOps {
    /// `template` gives every field but `page` and `write` (and `fill` for `T`);
    /// `plain_write`: plain accesses are writes; `touch_fills`: `T` accesses are fills;
    /// `remaining`: the accesses, if counted before.
    pub fn new(stream: AccessStream, template: Op, plain_write: bool, touch_fills: bool, remaining: u64) -> AccessOps {
        AccessOps {
            stream,
            pages: Vec::new(),
            kinds: Vec::new(),
            pos: 0,
            template,
            plain_write,
            touch_fills,
            remaining,
            error: Arc::default(),
            counts: Arc::default(),
        }
    }

    #[cold]
    fn refill(&mut self) -> bool {
        self.pages.clear();
        self.kinds.clear();
        self.pos = 0;
        match self.stream.next_accesses() {
            Ok(Some((p, k, _))) => {
                self.pages.extend_from_slice(p);
                self.kinds.extend_from_slice(k);
            }
            Ok(None) => {}
            Err(e) => *self.error.lock().expect("trace error") = Some(e),
        }
        *self.counts.lock().expect("trace counts") = self.stream.counts();
        !self.pages.is_empty()
    }
}

impl OpStream for AccessOps {
    #[inline]
    fn next_op(&mut self) -> Option<Op> {
        if self.pos == self.pages.len() && !self.refill() {
            return None;
        }
        let (page, kind) = (self.pages[self.pos] as u64, self.kinds[self.pos]);
        self.pos += 1;
        self.remaining = self.remaining.saturating_sub(1);
        let write = match kind {
            Kind::Read | Kind::Drop => false,
            Kind::Write | Kind::Touch => true,
            Kind::Plain => self.plain_write,
        };
        if kind == Kind::Drop {
            // The page leaves its file: truncate_inode_pages_range() on it.
            return Some(Op { page, write, access: Access::Truncate, think_ns: 0, ..self.template });
        }
        let fill = kind == Kind::Touch && self.touch_fills;
        Some(Op { page, write, fill, think_ns: if fill { 0 } else { self.template.think_ns }, ..self.template })
    }

    fn remaining(&self) -> u64 {
        self.remaining
    }
}

/// The trace's counts as the report gives them.
pub fn counts_json(c: &StreamCounts) -> Value {
    json!({"requests": c.requests, "accesses": c.accesses, "reads": c.reads, "writes": c.writes, "touches": c.touches, "drops": c.drops, "skipped": c.skipped})
}

/// Replays `spec` on every memory size (see [`crate::lab::replay::run`]).
pub fn run(o: &TraceRun, spec: &Spec, sizes: &[&str], kernel_model: bool) -> Result<(Value, String)> {
    if !kernel_model && !o.set.is_empty() {
        bail!("--set applies to the kernel models (classic, mglru), not to `{}`", o.policy);
    }
    // A kernel model needs the file's size first: count the pages once.
    let scanned = if kernel_model { Some(AccessStream::scan(o.path, spec)?) } else { None };
    crate::lab::replay::for_each_size(o, sizes, |o: &TraceRun| if kernel_model { run_kernel(o, spec, scanned.expect("scanned")) } else { run_plain(o, spec) })
}

fn trace_json(o: &TraceRun, c: &StreamCounts, pages: u64) -> Value {
    json!({"path": o.path.display().to_string(), "format": o.format, "records": c.accesses, "pages": pages, "counts": counts_json(c)})
}

fn run_plain(o: &TraceRun, spec: &Spec) -> Result<(Value, String)> {
    let memory = pagelab_workload::parse_size(o.memory).map_err(|e| Error::Msg(format!("--memory {}: {e}", o.memory)))?;
    let Some(policy) = Plain::parse(o.policy) else { bail!("unknown policy `{}`", o.policy) };
    let capacity = memory / PAGE_SIZE;
    let start = Instant::now();
    let mut src = AccessStream::open(o.path, spec)?;
    let st = pagelab_cachesim::run(&mut src, policy, capacity)?;
    let wall = start.elapsed().as_secs_f64();
    let v = crate::lab::replay::plain_json(o, &st, trace_json(o, &src.counts(), src.bound()), memory, wall);
    let th = crate::report::thousands;
    let table = format!("{} {} pages: {} accesses, {} misses, miss ratio {:.6}\n", st.policy, th(capacity), th(st.ops), th(st.misses), st.miss_ratio());
    Ok((v, table))
}

fn run_kernel(o: &TraceRun, spec: &Spec, (counts, pages): (StreamCounts, u64)) -> Result<(Value, String)> {
    let name = o.path.file_name().map_or("trace".into(), |n| n.to_string_lossy().into_owned());
    let mut w = crate::lab::replay::trace_workload("trace", "file-rw");
    w.insert("file_size".into(), format!("{}p", pages.max(1)).into());
    w.insert("fadvise".into(), "random".into());
    let s = crate::Scenario::from_table(crate::lab::replay::trace_scenario(o, w), &format!("{} (trace scenario)", o.path.display()), &name, o.set)
        .map_err(Error::from)?;
    let template =
        Op { object: 0, page: 0, npages: 1, write: false, access: Access::Buffered, advice: Advice::Random, fill: false, think_ns: 0, due: None, more: false };
    let ops = AccessOps::new(AccessStream::open(o.path, spec)?, template, false, false, counts.accesses);
    let (error, seen) = (ops.error.clone(), ops.counts.clone());
    let start = Instant::now();
    let report = crate::run_with(&s, crate::RunOptions { ops: Some(crate::sim::OpSource::Stream(Box::new(ops))), ..Default::default() })?.report;
    let wall = start.elapsed().as_secs_f64();
    if let Some(e) = error.lock().expect("trace error").take() {
        return Err(e.into());
    }
    let seen = *seen.lock().expect("trace counts");
    let table = report.table();
    let mut v = serde_json::to_value(&report)?;
    // The machine and task built for the trace are an implementation detail (a streamed
    // trace's file grows as it is read): the replay's provenance is the versions and --set.
    v["provenance"] = crate::report::plain_provenance(o.set);
    let m = v.as_object_mut().expect("a report is an object");
    m.insert("trace".into(), trace_json(o, &seen, pages));
    m.insert("wall_s".into(), wall.into());
    let drops = if seen.drops > 0 { format!(", {} pages dropped", seen.drops) } else { String::new() };
    let table = format!("{table}trace: {} accesses ({} reads, {} writes{drops}) over {pages} pages\n", seen.accesses, seen.reads, seen.writes + seen.touches);
    Ok((v, table))
}
