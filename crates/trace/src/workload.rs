//! Traces as scenario workloads replay them (`[[workload]] trace = "PATH"`), shared by the
//! simulator (pagelab's scenarios) and the oracle's guest runner, so that both read, size
//! and replay a trace the same way: each access of the trace is one operation of the phase
//! on its object, in order. A scenario reads each trace once when it is loaded, to size the
//! object when no `size`/`file_size` is given (one more than the largest page), to refuse a
//! page beyond a given size (naming both), to count the accesses (the phase's `ops`, which
//! can only shorten it), to check that a paced trace has times, and to report a malformed
//! record before the run starts. An iolog names its files: they become files of the
//! scenario, shared by name with the other workloads.

use std::path::{Path, PathBuf};

use crate::access::{AccessStream, Kind, Spec};
use crate::iolog::Iolog;
use pagelab_workload::{TraceAccess, TraceAccesses, TraceKind, TraceSpec, Workload};

/// The format of a phase's `trace_format`.
pub fn spec(format: &str) -> Result<Spec, String> {
    match Spec::parse(format) {
        Some(r) => r,
        None => Err(format!("`{format}` is not a trace format (use {})", Spec::NAMES)),
    }
}

/// The path a scenario's `trace = "..."` names: relative to the scenario file's directory.
pub fn resolve_path(scenario_file: &str, trace: &str) -> PathBuf {
    let p = Path::new(trace);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    match Path::new(scenario_file).parent() {
        Some(d) if !d.as_os_str().is_empty() => d.join(p),
        _ => p.to_path_buf(),
    }
}

/// Resolves and reads the traces of a scenario's workloads (see the module's doc); `file` is
/// the scenario's path, which relative trace paths start from; `err` makes an error of a key
/// (`workload[0].trace`) and a message.
pub fn size_traces<E>(workloads: &mut [Workload], file: &str, err: &dyn Fn(&str, String) -> E) -> Result<(), E> {
    for (i, w) in workloads.iter_mut().enumerate() {
        let single = w.phases.len() == 1;
        for (j, ph) in w.phases.iter_mut().enumerate() {
            let Some(t) = &mut ph.trace else { continue };
            let key = |k: &str| if single { format!("workload[{i}].{k}") } else { format!("workload[{i}].phase[{j}].{k}") };
            let spec = spec(&t.format).map_err(|m| err(&key("trace_format"), m))?;
            let path = resolve_path(file, &t.path);
            t.path = path.display().to_string();
            if t.pace && !spec.has_times() {
                let why = match spec {
                    Spec::Csv(_) => "this csv spec has no `time` column",
                    _ => "the format has no times",
                };
                return Err(err(&key("pace"), format!("\"trace\" needs a trace with times: {why} (leave out `pace`)")));
            }
            let (accesses, fills) = if spec == Spec::Iolog {
                let log = crate::iolog::read_iolog(&path).map_err(|e| err(&key("trace"), e.to_string()))?;
                if t.pace && log.version < 3 {
                    return Err(err(&key("pace"), format!("\"trace\" needs a trace with times: {} is a version 2 iolog, which has none", path.display())));
                }
                t.files = log.files.clone();
                for (name, pages) in &mut t.files {
                    if t.sized {
                        if *pages > ph.object_pages {
                            return Err(err(&key("trace"), beyond(&path, &format!("file `{name}`: "), *pages - 1, ph.object_pages)));
                        }
                        *pages = ph.object_pages;
                    }
                }
                (log.ops.len() as u64, 0)
            } else {
                let (counts, bound) = AccessStream::scan(&path, &spec).map_err(|e| err(&key("trace"), e.to_string()))?;
                if counts.drops > 0 && ph.kind.access() != pagelab_workload::Access::Buffered {
                    return Err(err(
                        &key("trace"),
                        format!("{}: `D` lines drop pages from a file read and written with read(2)/write(2): they need a `file-*` kind", path.display()),
                    ));
                }
                if t.pace && counts.timed < counts.accesses {
                    return Err(err(&key("pace"), format!("\"trace\" needs a trace with times: {} has accesses without one", path.display())));
                }
                if t.sized {
                    if bound > ph.object_pages {
                        return Err(err(&key("trace"), beyond(&path, "", bound - 1, ph.object_pages)));
                    }
                } else {
                    if bound > crate::access::MAX_PAGE_INDEX {
                        return Err(err(&key("trace"), format!("{}: {bound} pages is larger than pagelab's 8 TiB limit per object", path.display())));
                    }
                    ph.object_pages = bound.max(1);
                }
                (counts.accesses, if ph.kind.is_anon() { counts.touches } else { 0 })
            };
            ph.ops = ph.ops.min(accesses - fills);
        }
    }
    Ok(())
}

/// The error of a page beyond the size the scenario gives an object.
fn beyond(path: &Path, what: &str, page: u64, pages: u64) -> String {
    format!(
        "{}: {what}page {page} is beyond the object's size, {pages} pages ({} bytes): size it larger or leave the size out",
        path.display(),
        pages * pagelab_workload::PAGE_SIZE
    )
}

/// A trace's accesses for a phase: a read error or a page beyond its object (the file
/// changed since the scenario read it) ends them, and the error is kept in `error` until the
/// run takes it (`TraceAccesses::take_error`) to report it.
struct Feed {
    source: Source,
    error: Option<String>,
    done: bool,
}

enum Source {
    /// One object: an access stream's pages.
    Stream { stream: Box<AccessStream>, pages: Vec<u32>, kinds: Vec<Kind>, times: Vec<u64>, pos: usize, object_pages: u64 },
    /// An iolog's operations on its files.
    Iolog { log: Iolog, next: usize, path: PathBuf, file_pages: Vec<u64> },
}

impl Feed {
    fn fail(&mut self, msg: String) -> Option<TraceAccess> {
        self.error.get_or_insert(msg);
        self.done = true;
        None
    }
}

fn kind(k: Kind) -> TraceKind {
    match k {
        Kind::Read => TraceKind::Read,
        Kind::Write => TraceKind::Write,
        Kind::Touch => TraceKind::Touch,
        Kind::Plain => TraceKind::Plain,
        Kind::Drop => TraceKind::Drop,
    }
}

impl TraceAccesses for Feed {
    fn take_error(&mut self) -> Option<String> {
        self.error.take()
    }

    fn next_access(&mut self) -> Option<TraceAccess> {
        if self.done {
            return None;
        }
        match &mut self.source {
            Source::Stream { stream, pages, kinds, times, pos, object_pages } => {
                if *pos == pages.len() {
                    pages.clear();
                    kinds.clear();
                    times.clear();
                    *pos = 0;
                    let timed = stream.counts().timed;
                    match stream.next_accesses() {
                        Ok(Some((p, k, t))) => {
                            pages.extend_from_slice(p);
                            kinds.extend_from_slice(k);
                            times.extend_from_slice(t);
                            // Times only where the trace has them (a stream gives 0 elsewhere).
                            if stream.counts().timed - timed != pages.len() as u64 {
                                times.clear();
                            }
                        }
                        Ok(None) => {
                            self.done = true;
                            return None;
                        }
                        Err(e) => return self.fail(e.to_string()),
                    }
                }
                let i = *pos;
                *pos += 1;
                let page = pages[i] as u64;
                if page >= *object_pages {
                    let msg = format!(
                        "{}: page {page} is beyond the object's {object_pages} pages (the trace changed since the scenario was loaded?)",
                        stream.path().display()
                    );
                    return self.fail(msg);
                }
                Some(TraceAccess { object: 0, page, npages: 1, kind: kind(kinds[i]), time_ns: times.get(i).copied() })
            }
            Source::Iolog { log, next, path, file_pages } => {
                let i = *next;
                let op = *log.ops.get(i)?;
                *next += 1;
                if op.first_page + op.npages as u64 > file_pages[op.file as usize] {
                    let msg = format!(
                        "{}: `{}` pages {}..{} are beyond its {} pages (the trace changed since the scenario was loaded?)",
                        path.display(),
                        log.files[op.file as usize].0,
                        op.first_page,
                        op.first_page + op.npages as u64,
                        file_pages[op.file as usize]
                    );
                    return self.fail(msg);
                }
                let kind = if op.write { TraceKind::Write } else { TraceKind::Read };
                Some(TraceAccess {
                    object: op.file,
                    page: op.first_page,
                    npages: op.npages,
                    kind,
                    time_ns: log.times_us.get(i).map(|t| t.saturating_mul(1000)),
                })
            }
        }
    }
}

/// Opens the trace of a machine's workload; an error while it is read ends its accesses and
/// is kept for the run (`JobStream::take_trace_error`).
pub fn open(t: &TraceSpec, object_pages: u64) -> Result<Box<dyn TraceAccesses>, String> {
    let spec = spec(&t.format)?;
    let source = if spec == Spec::Iolog {
        let path = PathBuf::from(&t.path);
        let log = crate::iolog::read_iolog(&path).map_err(|e| e.to_string())?;
        let file_pages = if t.files.is_empty() { log.files.iter().map(|f| f.1).collect() } else { t.files.iter().map(|f| f.1).collect() };
        Source::Iolog { log, next: 0, path, file_pages }
    } else {
        let stream = Box::new(AccessStream::open(Path::new(&t.path), &spec).map_err(|e| e.to_string())?);
        Source::Stream { stream, pages: Vec::new(), kinds: Vec::new(), times: Vec::new(), pos: 0, object_pages }
    };
    Ok(Box::new(Feed { source, error: None, done: false }))
}
