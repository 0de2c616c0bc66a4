//! Workloads driven by a trace (`[[workload]] trace = "PATH"`): each access of the trace is
//! one operation of the phase on its object, in order. The scenario reads each trace once
//! when it is loaded, to size the object when no `size`/`file_size` is given (one more than
//! the largest page), to refuse a page beyond a given size (naming both), to count the
//! accesses (the phase's `ops`, which can only shorten it) and to report a malformed record
//! before the run starts.

use std::path::Path;
use std::sync::{Arc, Mutex};

use pagelab_trace::access::{AccessStream, Kind, Spec};
use pagelab_workload::{TraceAccesses, TraceKind, TraceSpec};

use crate::scenario::{Scenario, ScenarioError};

/// The format of a phase's `trace_format`.
pub fn spec(format: &str) -> Result<Spec, String> {
    match Spec::parse(format) {
        Some(r) => r,
        None => Err(format!("`{format}` is not a trace format a workload replays (use {})", Spec::NAMES)),
    }
}

/// Resolves and reads the traces of the scenario's workloads (see the module's doc);
/// `file` is the scenario's path, which relative trace paths start from.
pub fn size_traces(mut s: Scenario, file: &str, err: &dyn Fn(&str, String) -> ScenarioError) -> Result<Scenario, ScenarioError> {
    for (i, w) in s.workloads.iter_mut().enumerate() {
        let single = w.phases.len() == 1;
        for (j, ph) in w.phases.iter_mut().enumerate() {
            let Some(t) = &mut ph.trace else { continue };
            let key = |k: &str| if single { format!("workload[{i}].{k}") } else { format!("workload[{i}].phase[{j}].{k}") };
            let spec = spec(&t.format).map_err(|m| err(&key("trace_format"), m))?;
            let path = crate::replay_access::resolve_path(file, &t.path);
            t.path = path.display().to_string();
            let (counts, bound) = AccessStream::scan(&path, &spec).map_err(|e| err(&key("trace"), e.to_string()))?;
            if t.sized {
                if bound > ph.object_pages {
                    return Err(err(
                        &key("trace"),
                        format!(
                            "{}: page {} is beyond the object's {} pages (its size); size it larger or leave the size out",
                            path.display(),
                            bound - 1,
                            ph.object_pages
                        ),
                    ));
                }
            } else {
                if bound > pagelab_trace::access::MAX_PAGE_INDEX {
                    return Err(err(&key("trace"), format!("{}: {bound} pages is larger than pagelab's 8 TiB limit per object", path.display())));
                }
                ph.object_pages = bound.max(1);
            }
            let fills = if ph.kind.is_anon() { counts.touches } else { 0 };
            ph.ops = ph.ops.min(counts.accesses - fills);
        }
    }
    Ok(s)
}

/// A trace's accesses for a phase: a read error or a page beyond the object (the file
/// changed since the scenario read it) ends them, and the first such error is kept in
/// `error` for the run to report.
struct Feed {
    stream: AccessStream,
    pages: Vec<u32>,
    kinds: Vec<Kind>,
    pos: usize,
    object_pages: u64,
    error: Arc<Mutex<Option<String>>>,
    done: bool,
}

impl Feed {
    fn fail(&mut self, msg: String) {
        let mut e = self.error.lock().unwrap_or_else(|e| e.into_inner());
        e.get_or_insert(msg);
        self.done = true;
    }
}

impl TraceAccesses for Feed {
    fn next_access(&mut self) -> Option<(u64, TraceKind)> {
        if self.pos == self.pages.len() {
            if self.done {
                return None;
            }
            self.pages.clear();
            self.kinds.clear();
            self.pos = 0;
            match self.stream.next_accesses() {
                Ok(Some((p, k, _))) => {
                    self.pages.extend_from_slice(p);
                    self.kinds.extend_from_slice(k);
                }
                Ok(None) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.fail(e.to_string());
                    return None;
                }
            }
        }
        let (page, kind) = (self.pages[self.pos] as u64, self.kinds[self.pos]);
        self.pos += 1;
        if page >= self.object_pages {
            let msg = format!(
                "{}: page {page} is beyond the object's {} pages (the trace changed since the scenario was loaded?)",
                self.stream.path().display(),
                self.object_pages
            );
            self.fail(msg);
            self.pages.clear();
            self.pos = 0;
            return None;
        }
        let kind = match kind {
            Kind::Read => TraceKind::Read,
            Kind::Write => TraceKind::Write,
            Kind::Touch => TraceKind::Touch,
            Kind::Plain => TraceKind::Plain,
        };
        Some((page, kind))
    }
}

/// Opens the traces of a machine's workloads; errors while they are read go to `error`.
pub fn open(error: &Arc<Mutex<Option<String>>>, t: &TraceSpec, object_pages: u64) -> Result<Box<dyn TraceAccesses>, String> {
    let spec = spec(&t.format)?;
    let stream = AccessStream::open(Path::new(&t.path), &spec).map_err(|e| e.to_string())?;
    Ok(Box::new(Feed { stream, pages: Vec::new(), kinds: Vec::new(), pos: 0, object_pages, error: error.clone(), done: false }))
}
