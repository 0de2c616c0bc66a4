//! Python bindings: run scenarios, trace replays, sweeps and comparisons from Python. Reports cross the
//! boundary as JSON text (the same documents `pagelab run --json` writes), which the Python
//! side turns into dicts.

// pyo3 0.22's #[pyfunction] expansion converts a PyResult's error into PyErr again, which
// clippy reports at every function returning PyResult (fixed in later pyo3 releases).
#![allow(clippy::useless_conversion)]

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

mod controller;

/// Runs `work` on a thread of its own while this (the interpreter's) thread waits without
/// the GIL, looking for signals every 50 ms: Ctrl-C stops the simulation (through its own
/// [`pagelab::interrupt::StopToken`], so runs of other Python threads go on) and raises
/// KeyboardInterrupt within a fraction of a second. A stopped run always raises, never
/// returns its partial report. A panic in `work` is a RuntimeError with its message, never
/// a PanicException.
fn interruptible<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    interruptible_ticking(py, work, &mut |_| Ok(()))
}

/// [`interruptible`], calling `tick` with the GIL every 50 ms while `work` runs (a progress
/// callback); an error from `tick` stops the run and is raised.
fn interruptible_ticking<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send, tick: &mut dyn FnMut(Python<'_>) -> PyResult<()>) -> PyResult<T> {
    let token = pagelab::interrupt::StopToken::new();
    let run_token = token.clone();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        scope.spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pagelab::interrupt::scope(Some(run_token), work)));
            let _ = tx.send(r);
        });
        let mut rx = rx;
        loop {
            // The receiver goes into the GIL-free closure and back (it is Send, not Sync).
            let (got, back) = py.allow_threads(move || (rx.recv_timeout(std::time::Duration::from_millis(50)), rx));
            rx = back;
            match got {
                Ok(Ok(_)) if token.stopped() => return Err(interrupted()),
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(panic)) => {
                    let msg = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                    return Err(PyRuntimeError::new_err(format!("pagelab failed (a bug; please report it): {msg}")));
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Err(PyRuntimeError::new_err("pagelab's worker thread ended without a result")),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals().and_then(|_| tick(py)) {
                        token.stop();
                        // The simulation stops at its next check; its result is dropped.
                        let _ = py.allow_threads(move || rx.recv());
                        return Err(e);
                    }
                }
            }
        }
    })
}

/// The error of a run that was stopped.
fn interrupted() -> PyErr {
    pyo3::exceptions::PyKeyboardInterrupt::new_err("the run was interrupted")
}

fn scenario(path: Option<&str>, text: Option<&str>, set: Vec<String>) -> PyResult<pagelab::Scenario> {
    match (path, text) {
        (Some(p), None) => pagelab::Scenario::load(std::path::Path::new(p), &set).map_err(|e| PyValueError::new_err(e.to_string())),
        (None, Some(t)) => pagelab::Scenario::parse(t, "<text>", "scenario", &set).map_err(|e| PyValueError::new_err(e.to_string())),
        _ => Err(PyValueError::new_err("give either a scenario path or its text")),
    }
}

/// Runs a scenario and returns its report as JSON text.
#[pyfunction]
#[pyo3(signature = (path=None, text=None, set=Vec::new()))]
fn run_json(py: Python<'_>, path: Option<&str>, text: Option<&str>, set: Vec<String>) -> PyResult<String> {
    let s = scenario(path, text, set)?;
    let report = interruptible(py, || pagelab::run(&s, |_, _| {}))?.map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    serde_json::to_string(&report).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Runs every combination of `vary` (a list of (key, [values])) and returns a JSON array of
/// {"point": {...}, "report": {...}} in point order.
#[pyfunction]
#[pyo3(signature = (text, vary, set=Vec::new(), threads=0, progress=None))]
fn sweep_json(py: Python<'_>, text: &str, vary: Vec<(String, Vec<String>)>, set: Vec<String>, threads: usize, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let axes: Vec<pagelab::sweep::Axis> = vary.into_iter().map(|(key, values)| pagelab::sweep::Axis { key, values }).collect();
    let total: usize = axes.iter().map(|a| a.values.len()).product();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let mut told = usize::MAX;
    // `progress(done, total)` on the interpreter's thread whenever a point has finished.
    let mut tick = |py: Python<'_>| -> PyResult<()> {
        let now = done.load(std::sync::atomic::Ordering::Relaxed);
        if let (Some(p), true) = (&progress, now != told) {
            told = now;
            p.bind(py).call1((now, total))?;
        }
        Ok(())
    };
    let bump = || {
        done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    };
    let results = interruptible_ticking(py, || pagelab::sweep::run(text, "<text>", "scenario", &set, &axes, threads, &bump), &mut tick)?
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    tick(py)?;
    let v: Vec<serde_json::Value> = results
        .into_iter()
        .map(|(p, r)| {
            let point: serde_json::Map<String, serde_json::Value> = p.overrides.into_iter().map(|(k, v)| (k, serde_json::Value::String(v))).collect();
            match r {
                Ok(r) => serde_json::json!({"point": point, "report": r}),
                Err(e) => serde_json::json!({"point": point, "error": e}),
            }
        })
        .collect();
    serde_json::to_string(&v).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Replays a page-access trace (`pagelab run --trace`): against a kernel model (`classic`,
/// `mglru`) or a plain cache (`lru`, `fifo`, `clock`, `opt`, `sieve`, `s3fifo`, `arc`); returns
/// the JSON report (an array for several comma-separated memory sizes).
#[pyfunction]
#[pyo3(signature = (path, policy, memory, format="oracleGeneral", kernel="6.1", set=Vec::new()))]
fn run_trace_json(py: Python<'_>, path: &str, policy: &str, memory: &str, format: &str, kernel: &str, set: Vec<String>) -> PyResult<String> {
    let path = std::path::Path::new(path);
    let o = pagelab::replay::TraceRun { path, format, policy, memory, kernel, set: &set };
    let (report, _) = interruptible(py, || pagelab::replay::run(&o))?.map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
    serde_json::to_string(&report).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// A sizing curve of a trace (`pagelab curve`) as JSON: `points` (what `pagelab curve
/// --json` writes), `table` (its columns, [`pagelab::tables::Table::to_json`]), `reports`
/// (each point's: the full replay's report, or with a sample the two seeds' miniature
/// runs' as a list), `sample` (null, or `rate`, `pages` kept by each seed and each point's
/// scaled `memory`) and `warnings` ([memory, text] of the points a sample may distort).
#[pyfunction]
#[pyo3(signature = (path, policy, memory, format="oracleGeneral", kernel="6.1", sample=None, counters=Vec::new(), set=Vec::new(), progress=None))]
#[allow(clippy::too_many_arguments, reason = "the keyword arguments of pagelab.curve, one to one")]
fn curve_json(
    py: Python<'_>,
    path: &str,
    policy: &str,
    memory: &str,
    format: &str,
    kernel: &str,
    sample: Option<f64>,
    counters: Vec<String>,
    set: Vec<String>,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    let c = pagelab::curve::Curve { path: std::path::Path::new(path), format, policy, kernel, set: &set, memory, sample, counters: &counters };
    let points = with_curve_progress(py, progress, |p| pagelab::curve::run_with_progress(&c, p))?.map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
    curve_points_json(&points)
}

/// Runs a curve's `work` as [`interruptible_ticking`] does a sweep: `progress(done, total)`
/// (runs done, of all) on the interpreter's thread whenever a run has ended.
fn with_curve_progress<T: Send>(py: Python<'_>, progress: Option<Py<PyAny>>, work: impl FnOnce(pagelab::curve::Progress) -> T + Send) -> PyResult<T> {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let (done, total) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let mut told = (0, 0);
    let mut tick = |py: Python<'_>| -> PyResult<()> {
        let now = (done.load(Relaxed), total.load(Relaxed));
        if let (Some(p), true) = (&progress, now != told) {
            told = now;
            p.bind(py).call1(now)?;
        }
        Ok(())
    };
    let report = |d: usize, t: usize| {
        total.store(t, Relaxed);
        done.fetch_max(d, Relaxed);
    };
    let out = interruptible_ticking(py, || work(&report), &mut tick)?;
    tick(py)?;
    Ok(out)
}

/// A curve's points as the Python side reads them: `points`, `table`, `reports` (each
/// point's: the full run's, or with a sample the two seeds' miniature runs' as a list),
/// `sample` (null, or `rate`, `pages` kept by each seed and each point's scaled `memory`) and
/// `warnings` ([memory, text] of the points a sample may distort).
fn curve_points_json(points: &pagelab::curve::Points) -> PyResult<String> {
    let reports: Vec<serde_json::Value> =
        points.points.iter().map(|p| if points.sample.is_some() { serde_json::Value::from(p.reports.clone()) } else { p.reports[0].clone() }).collect();
    let sample = points
        .sample
        .map(|(rate, pages)| serde_json::json!({"rate": rate, "pages": pages, "memory": points.points.iter().map(|p| p.sample_memory).collect::<Vec<_>>()}));
    let warnings: Vec<serde_json::Value> = points.points.iter().filter_map(|p| p.warning.as_ref().map(|w| serde_json::json!([p.memory, w]))).collect();
    let v = serde_json::json!({"points": points.to_json(), "table": points.table().to_json(), "reports": reports, "sample": sample, "warnings": warnings});
    serde_json::to_string(&v).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// A scenario's curve (`pagelab curve SCENARIO --vary KEY=SIZES [--sample R]`): its points,
/// its table, each point's report (with a sample, the two seeds' miniature runs' as a list),
/// `sample` and `warnings` as [`curve_json`] gives them.
#[pyfunction]
#[pyo3(signature = (path, vary, counters, set, threads=0, sample=None, progress=None))]
#[allow(clippy::too_many_arguments, reason = "the keyword arguments of pagelab.curve, one to one")]
fn scenario_curve_json(
    py: Python<'_>,
    path: &str,
    vary: &str,
    counters: Vec<String>,
    set: Vec<String>,
    threads: usize,
    sample: Option<f64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    let c = pagelab::curve::ScenarioCurve { path: std::path::Path::new(path), set: &set, vary, counters: &counters, threads, sample };
    let points =
        with_curve_progress(py, progress, |p| pagelab::curve::run_scenario_with_progress(&c, p))?.map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
    curve_points_json(&points)
}

/// A sweep's table (`pagelab sweep --parquet`'s columns) from `sweep_json`'s array: the
/// varied `keys` in order, then the run's totals and counters.
#[pyfunction]
fn sweep_table_json(keys: Vec<String>, results: &str) -> PyResult<String> {
    let results: Vec<serde_json::Value> = serde_json::from_str(results).map_err(|e| PyValueError::new_err(format!("sweep results: {e}")))?;
    Ok(pagelab::tables::Table::sweep(&keys, &results).to_json().to_string())
}

/// A report's series as a table (`pagelab run --parquet`'s columns).
#[pyfunction]
fn series_table_json(report: &str) -> PyResult<String> {
    let report: serde_json::Value = serde_json::from_str(report).map_err(|e| PyValueError::new_err(format!("the report: {e}")))?;
    Ok(pagelab::tables::Table::series(&report).map_err(PyValueError::new_err)?.to_json().to_string())
}

/// A trace's statistics (`pagelab trace-stats`) as JSON, with the access heatmap if asked.
#[pyfunction]
#[pyo3(signature = (path, format="oracleGeneral", heatmap=false))]
fn trace_stats_json(py: Python<'_>, path: &str, format: &str, heatmap: bool) -> PyResult<String> {
    let path = std::path::Path::new(path);
    let (v, _) = py.allow_threads(|| pagelab::trace_stats::trace_stats(path, format, heatmap)).map_err(PyValueError::new_err)?;
    serde_json::to_string(&v).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The mmtests-style comparison table of reports given as JSON files.
#[pyfunction]
#[pyo3(signature = (paths, labels=None))]
fn compare_table(paths: Vec<String>, labels: Option<Vec<String>>) -> PyResult<String> {
    if paths.is_empty() {
        return Err(PyValueError::new_err("compare needs at least one report (the first is the baseline)"));
    }
    if let Some(l) = labels.as_ref().filter(|l| l.len() != paths.len()) {
        return Err(PyValueError::new_err(format!("{} labels for {} reports", l.len(), paths.len())));
    }
    let mut runs = paths.iter().map(|p| pagelab::compare::Run::load(std::path::Path::new(p))).collect::<Result<Vec<_>, _>>().map_err(PyValueError::new_err)?;
    if let Some(labels) = labels {
        for (r, l) in runs.iter_mut().zip(labels) {
            r.label = l;
        }
    }
    Ok(pagelab::compare::table(&runs, &pagelab::compare::default_rows()))
}

/// The `pagelab` command line, run in this process on `argv` (program name first); returns
/// its exit status. The wheel's `pagelab` console script (`pagelab._cli`) calls it.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.allow_threads(|| pagelab_cli::main_from(argv))
}

#[pymodule]
fn _pagelab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_json, m)?)?;
    m.add_function(wrap_pyfunction!(compare_table, m)?)?;
    m.add_function(wrap_pyfunction!(run_trace_json, m)?)?;
    m.add_function(wrap_pyfunction!(curve_json, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_table_json, m)?)?;
    m.add_function(wrap_pyfunction!(series_table_json, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_curve_json, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats_json, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    add_seam(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

// ---- Python policies behind the eviction seam ----------------------------------------------

use pagelab::policy::seam::lists::{Iter as ListIter, IterEnd, IterateOpts, ListId, Lists, Place};
use pagelab::policy::seam::{Access, Cgroup as SeamCgroup, EvictionPolicy, Folio as SeamFolio, FolioId, Freeable, Removal, NO_TASK};

/// A folio as a Python policy sees it. `id` is stable while the folio is resident (the
/// candidate `evict_folios` returns); `key` names the page across residencies.
#[pyclass(name = "Folio", frozen, get_all)]
struct PyFolio {
    id: u32,
    key: u32,
    file: bool,
    anon: bool,
    /// The file (or anonymous region) index and the page's index in it.
    object: u32,
    index: u64,
    /// The cgroup's path.
    cgroup: String,
    dirty: bool,
    mapped: bool,
    referenced: bool,
    refault: bool,
    workingset: bool,
    putback: bool,
    /// The task that touched the folio (an index into `Cgroup.tasks`), None if unknown: in
    /// folio_accessed("read" / "write") the reader or writer, elsewhere the task that brought
    /// the page in (the reader whose read or readahead inserted it).
    task: Option<u32>,
    /// For folio_accessed: "read", "write" or "reclaim_referenced"; for folio_removed:
    /// "evicted" or "freed"; else None.
    how: Option<&'static str>,
}

#[pymethods]
impl PyFolio {
    fn __repr__(&self) -> String {
        format!("Folio(id={}, {} {}:{}, cgroup={})", self.id, if self.anon { "anon" } else { "file" }, self.object, self.index, self.cgroup)
    }
}

/// A cgroup as a Python policy's `init` and `evict_folios` see it.
#[pyclass(name = "Cgroup", frozen, get_all)]
struct PyCgroup {
    id: u16,
    path: String,
    /// The effective memory.max in pages: the smallest of the cgroup's and its ancestors',
    /// at most the machine's memory.
    max: u64,
    /// The machine's task names by `Folio.task` (a workload's name, `name.N` for its job N).
    tasks: Vec<String>,
}

#[pymethods]
impl PyCgroup {
    /// During this cgroup's `evict_folios` only: whether the kernel could free the folio (a
    /// Folio or its id) now, as the seam's `Freeable` says (its read done, on the LRU, clean,
    /// not under writeback): the state cache_ext's score functions test. Elsewhere a
    /// RuntimeError: the answer is the folio's state at the request.
    fn freeable(&self, folio: &Bound<'_, PyAny>) -> PyResult<bool> {
        let id = folio_id(folio)?;
        let answer = REQUEST.with(|r| match r.get() {
            // SAFETY: `InRequest` sets the pointer from a live `&Freeable` and clears it when
            // dropped, before that borrow ends; this thread holds it throughout.
            Some((cg, f)) if cg == self.id => Some(unsafe { &*f }.now(id)),
            _ => None,
        });
        answer.ok_or_else(|| PyRuntimeError::new_err(format!("Cgroup.freeable() answers during the evict_folios of cgroup {} only", self.path)))
    }
}

thread_local! {
    /// The eviction request in progress on this thread (its cgroup and the kernel's
    /// `Freeable`), for the length of a Python `evict_folios` call.
    static REQUEST: std::cell::Cell<Option<(u16, *const Freeable<'static>)>> = const { std::cell::Cell::new(None) };
}

/// The scope of one `evict_folios` call: `Cgroup.freeable()` answers while it lives.
struct InRequest(Option<(u16, *const Freeable<'static>)>);

impl InRequest {
    fn enter(cgroup: u16, freeable: &Freeable<'_>) -> InRequest {
        let ptr = std::ptr::from_ref(freeable).cast::<Freeable<'static>>();
        InRequest(REQUEST.with(|r| r.replace(Some((cgroup, ptr)))))
    }
}

impl Drop for InRequest {
    fn drop(&mut self) {
        REQUEST.with(|r| r.set(self.0));
    }
}

/// A Python object with the five hooks, behind the seam. The first exception a hook raises
/// stops the policy and ends the run with it.
struct PyPolicy {
    obj: Py<PyAny>,
    cgroup: Option<Py<PyCgroup>>,
    path: String,
    failure: Option<String>,
    /// The object has `admit_folio` (the optional sixth hook); looked up once, at `init`.
    admits: bool,
}

impl PyPolicy {
    fn folio(&self, py: Python<'_>, f: &SeamFolio, how: Option<&'static str>) -> PyResult<Py<PyFolio>> {
        MAX_FOLIO_ID.fetch_max(f.id, std::sync::atomic::Ordering::Relaxed);
        Py::new(
            py,
            PyFolio {
                id: f.id,
                key: f.key,
                file: !f.anon,
                anon: f.anon,
                object: f.object,
                index: f.index,
                cgroup: self.path.clone(),
                dirty: f.dirty,
                mapped: f.mapped,
                referenced: f.referenced,
                refault: f.refault,
                workingset: f.workingset,
                putback: f.putback,
                task: (f.task != NO_TASK).then_some(f.task),
                how,
            },
        )
    }

    fn fail(&mut self, py: Python<'_>, method: &str, e: PyErr) {
        if self.failure.is_some() {
            return;
        }
        if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
            // Ctrl-C arrived while the policy's Python code ran: stop the run and say so.
            pagelab::interrupt::request();
        }
        let class = self.obj.bind(py).get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "policy".into());
        let tb = e.traceback_bound(py).and_then(|t| t.format().ok()).unwrap_or_default();
        self.failure = Some(format!("the policy of cgroup {}: {class}.{method}() raised {e}\n{tb}", self.path));
    }

    fn call(&mut self, method: &'static str, f: &SeamFolio, how: Option<&'static str>) {
        if self.failure.is_some() {
            return;
        }
        Python::with_gil(|py| {
            let r = self.folio(py, f, how).and_then(|folio| self.obj.bind(py).call_method1(method, (folio,)).map(|_| ()));
            if let Err(e) = r {
                self.fail(py, method, e);
            }
        });
    }
}

impl EvictionPolicy for PyPolicy {
    fn init(&mut self, cgroup: &SeamCgroup) {
        self.path = cgroup.path.clone();
        Python::with_gil(|py| {
            self.admits = self.obj.bind(py).hasattr("admit_folio").unwrap_or(false);
            let r = Py::new(py, PyCgroup { id: cgroup.id, path: cgroup.path.clone(), max: cgroup.max, tasks: cgroup.tasks.clone() }).and_then(|c| {
                self.cgroup = Some(c.clone_ref(py));
                self.obj.bind(py).call_method1("init", (c,)).map(|_| ())
            });
            if let Err(e) = r {
                self.fail(py, "init", e);
            }
        });
    }
    /// The optional class attribute `defers_eviction = True`: the cgroup keeps the kernel's
    /// classic LRU and the policy only hears the hooks (cache_ext's no-op policy; see
    /// docs/policies.md, "Deferring to the kernel").
    fn defers_eviction(&self) -> bool {
        Python::with_gil(|py| self.obj.bind(py).getattr("defers_eviction").ok().and_then(|v| v.is_truthy().ok()).unwrap_or(false))
    }
    /// The optional `admit_folio(folio)`: a false result (any falsy value) means the folio
    /// is not kept after its read.
    fn admit_folio(&mut self, folio: &SeamFolio) -> bool {
        if !self.admits || self.failure.is_some() {
            return true;
        }
        Python::with_gil(|py| {
            let r = self.folio(py, folio, None).and_then(|f| self.obj.bind(py).call_method1("admit_folio", (f,))?.is_truthy());
            r.unwrap_or_else(|e| {
                self.fail(py, "admit_folio", e);
                true
            })
        })
    }
    fn folio_added(&mut self, folio: &SeamFolio) {
        self.call("folio_added", folio, None);
    }
    fn folio_accessed(&mut self, folio: &SeamFolio, how: Access) {
        let how = match how {
            Access::Read => "read",
            Access::Write => "write",
            Access::ReclaimReferenced => "reclaim_referenced",
        };
        self.call("folio_accessed", folio, Some(how));
    }
    fn folio_removed(&mut self, folio: &SeamFolio, why: Removal) {
        let why = match why {
            Removal::Evicted => "evicted",
            Removal::Freed => "freed",
        };
        self.call("folio_removed", folio, Some(why));
    }
    /// `cgroup.freeable(folio)` answers during the call (the seam's `Freeable`).
    fn evict_folios(&mut self, cgroup: u16, nr: usize, freeable: &Freeable, out: &mut Vec<FolioId>) {
        if self.failure.is_some() {
            return;
        }
        let _request = InRequest::enter(cgroup, freeable);
        Python::with_gil(|py| {
            let r = (|| -> PyResult<()> {
                let cg = self.cgroup.as_ref().map(|c| c.clone_ref(py).into_any()).unwrap_or_else(|| py.None());
                let got = self.obj.bind(py).call_method1("evict_folios", (cg, nr))?;
                if got.is_none() {
                    return Ok(());
                }
                // Only what was asked for is looked at, and one more to tell the seam that the
                // policy returned too many (counted as invalid): a policy returning 100,000
                // ids a call costs no more than one returning `nr`.
                for (i, item) in got.iter()?.take(nr + 1).enumerate() {
                    out.push(candidate_id(&item?, i)?);
                }
                Ok(())
            })();
            if let Err(e) = r {
                self.fail(py, "evict_folios", e);
            }
        });
    }
    /// The policy's optional `state()` method, whose result (anything `json.dumps` takes)
    /// goes into the report's `policy_state` for this cgroup. A `state()` that raises or
    /// returns something JSON cannot hold shows as `{"error": ...}` there: the run's
    /// counters do not depend on it.
    fn state(&self) -> Option<serde_json::Value> {
        Python::with_gil(|py| {
            let obj = self.obj.bind(py);
            if !obj.hasattr("state").unwrap_or(false) {
                return None;
            }
            let text = obj.call_method0("state").and_then(|v| py.import_bound("json")?.call_method1("dumps", (v,))?.extract::<String>());
            Some(match text {
                Ok(t) => serde_json::from_str(&t).unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() })),
                Err(e) => serde_json::json!({ "error": format!("state() raised {e}") }),
            })
        })
    }
    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }
}

/// A candidate `evict_folios` returned at position `i`: a Folio or its id, else a TypeError
/// or ValueError saying what was expected.
fn candidate_id(item: &Bound<'_, PyAny>, i: usize) -> PyResult<FolioId> {
    if item.is_instance_of::<pyo3::types::PyBool>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!("item {i} is a bool ({item}): expected a Folio or its id (an int)")));
    }
    if item.is_instance_of::<pyo3::types::PyInt>() {
        return item.extract::<u32>().map_err(|_| PyValueError::new_err(format!("item {i} is {item}: a folio id is an int from 0 to {}", u32::MAX)));
    }
    match item.getattr("id") {
        Ok(id) => id.extract::<u32>().map_err(|_| PyValueError::new_err(format!("item {i}'s id is {id}: a folio id is an int from 0 to {}", u32::MAX))),
        Err(_) => {
            let ty = item.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            Err(pyo3::exceptions::PyTypeError::new_err(format!("item {i} is a {ty} ({item}): expected a Folio or its id (an int)")))
        }
    }
}

/// A policy object from what the caller gave: a class is instantiated (one instance per
/// cgroup), anything else is used as it is.
fn instantiate(py: Python<'_>, spec: &Py<PyAny>) -> PyResult<Py<PyAny>> {
    let b = spec.bind(py);
    if b.is_instance_of::<pyo3::types::PyType>() {
        Ok(b.call0()?.unbind())
    } else {
        Ok(spec.clone_ref(py))
    }
}

/// Runs a scenario with Python eviction policies: `policy` for every cgroup (the root too),
/// `policies` [(cgroup path, policy)] for single cgroups; a class is instantiated once per
/// cgroup; and with Python `controllers` (crate::controller). The GIL is held throughout:
/// the hooks and ticks are Python calls.
#[pyfunction]
#[pyo3(signature = (path=None, text=None, set=Vec::new(), policy=None, policies=Vec::new(), controllers=Vec::new()))]
fn run_policies_json(
    py: Python<'_>,
    path: Option<&str>,
    text: Option<&str>,
    set: Vec<String>,
    policy: Option<Py<PyAny>>,
    policies: Vec<(String, Py<PyAny>)>,
    controllers: Vec<Py<PyAny>>,
) -> PyResult<String> {
    let s = scenario(path, text, set)?;
    let takes_swappiness = s.machine.kernel.memory_reclaim_takes_swappiness();
    let mut ctls: Vec<Box<dyn pagelab::sim::controller::Controller>> = Vec::new();
    for c in &controllers {
        ctls.push(Box::new(controller::PyController::new(py, c, takes_swappiness)?));
    }
    let with_policies = policy.is_some() || !policies.is_empty();
    for (p, _) in &policies {
        if p != "/" && !s.cgroups.iter().any(|c| &c.path == p) {
            return Err(PyValueError::new_err(format!("policies: cgroup `{p}` is not declared in the scenario")));
        }
    }
    let made = std::cell::RefCell::new(None::<PyErr>);
    let make = |cg: &str| -> Option<Box<dyn EvictionPolicy>> {
        let spec = policies.iter().find(|(p, _)| p == cg).map(|(_, o)| o).or(policy.as_ref())?;
        match instantiate(py, spec) {
            Ok(obj) => Some(Box::new(PyPolicy { obj, cgroup: None, path: cg.to_string(), failure: None, admits: false })),
            Err(e) => {
                made.borrow_mut().get_or_insert(e);
                None
            }
        }
    };
    // This run's own stop token: a hook that sees Ctrl-C stops this run only.
    let token = pagelab::interrupt::StopToken::new();
    let report = pagelab::interrupt::scope(Some(token.clone()), || {
        let factory: pagelab::policy::registry::Factory = &make;
        let policies = with_policies.then_some((factory, "python"));
        pagelab::run_with(&s, pagelab::RunOptions { policies, controllers: ctls, ..Default::default() })
    });
    if let Some(e) = made.into_inner() {
        return Err(e);
    }
    if token.stopped() {
        return Err(interrupted());
    }
    let report = report.map_err(|e| PyRuntimeError::new_err(e.to_string()))?.report;
    serde_json::to_string(&report).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The policy registry: (name, where it runs, description, parameters) per policy.
#[pyfunction]
fn policy_list() -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
    pagelab::policy::registry::POLICIES.iter().map(|p| (p.name, p.runs.name(), p.description, p.params)).collect()
}

/// Registers the seam's functions and classes (called from the module init).
fn add_seam(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_policies_json, m)?)?;
    m.add_function(wrap_pyfunction!(policy_list, m)?)?;
    m.add_class::<PyFolio>()?;
    m.add_class::<PyCgroup>()?;
    m.add_class::<PyLists>()?;
    m.add_class::<controller::PyControlCgroup>()?;
    Ok(())
}

// ---- cache_ext's list helpers for Python policies -------------------------------------------

/// The largest folio id handed to a Python policy so far: a list's memory grows with the
/// largest id it holds, so ids far beyond the machine's frames are refused.
static MAX_FOLIO_ID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Ids below this are always accepted (lists used outside a run, in tests and notebooks).
const FREE_IDS: u32 = 1 << 16;

/// A folio argument: a Folio (its `id`) or the id itself, at most the largest folio id a
/// run has given (or below 65,536).
fn folio_id(f: &Bound<'_, PyAny>) -> PyResult<FolioId> {
    let id = match f.extract::<u32>() {
        Ok(id) => id,
        Err(_) => f
            .getattr("id")
            .and_then(|id| id.extract::<u32>())
            .map_err(|_| pyo3::exceptions::PyTypeError::new_err(format!("expected a Folio or its id (an int from 0 to {}), got {f}", u32::MAX)))?,
    };
    let max = MAX_FOLIO_ID.load(std::sync::atomic::Ordering::Relaxed);
    if id >= FREE_IDS && id > max {
        return Err(PyValueError::new_err(format!("folio id {id} is not a folio of this machine (the largest id given to a policy is {max})")));
    }
    Ok(id)
}

fn place(name: &str) -> PyResult<Place> {
    match name {
        "stay" => Ok(Place::Stay),
        "head" => Ok(Place::Head),
        "tail" => Ok(Place::Tail),
        _ => Err(PyValueError::new_err(format!("a place is \"stay\", \"head\" or \"tail\", not {name:?}"))),
    }
}

/// cache_ext's eviction lists for one cgroup's policy (`pagelab.Lists`; the contract is
/// `pagelab::policy::seam::lists`): `create()` a list, `add` / `add_tail` / `move` / `delete`
/// folios (a Folio or its id), `iterate` with a callback, `sample` and `lowest` with a
/// score. The walks return folio ids, ready to be `evict_folios`'s result. A folio is on
/// at most one list; the calls that change a list return False where cache_ext's return an
/// error.
#[pyclass(name = "Lists", module = "pagelab")]
struct PyLists {
    lists: Lists,
    /// Scores kept here (`set_score` / `add_score`), used by `sample` and `lowest` when no
    /// score function is given: no Python call per scored folio. Unset: i64::MAX.
    scores: Vec<i64>,
}

impl PyLists {
    /// The stored score of `id` (i64::MAX when unset, as cache_ext's score for a folio
    /// without metadata).
    fn stored(&self, id: FolioId) -> i64 {
        self.scores.get(id as usize).copied().unwrap_or(i64::MAX)
    }
    fn score_slot(&mut self, id: FolioId) -> &mut i64 {
        let i = id as usize;
        if i >= self.scores.len() {
            self.scores.resize((i + 1).max(self.scores.len() * 2), i64::MAX);
        }
        &mut self.scores[i]
    }
    /// Runs a batch-scoring walk with `score` (a function of the folio id) or, if None, the
    /// stored scores.
    fn scored(&mut self, score: Option<&Bound<'_, PyAny>>, walk: impl FnOnce(&mut Lists, &mut dyn FnMut(FolioId) -> i64)) -> PyResult<()> {
        let mut lists = std::mem::take(&mut self.lists);
        let mut err = None;
        match score {
            Some(f) => walk(&mut lists, &mut |id| score_of(f, id, &mut err)),
            None => {
                let scores = &self.scores;
                walk(&mut lists, &mut |id| scores.get(id as usize).copied().unwrap_or(i64::MAX))
            }
        }
        self.lists = lists;
        err.map_or(Ok(()), Err)
    }
}

/// A callback's answer: CONTINUE (0 or None), STOP (1) or EVICT (2), cache_ext's codes.
fn verdict(v: &Bound<'_, PyAny>) -> PyResult<ListIter> {
    if v.is_none() {
        return Ok(ListIter::Continue);
    }
    match v.extract::<i64>() {
        Ok(0) => Ok(ListIter::Continue),
        Ok(1) => Ok(ListIter::Stop),
        Ok(2) => Ok(ListIter::Evict),
        _ => Err(PyValueError::new_err(format!("an iterate callback returns Lists.CONTINUE (0), STOP (1) or EVICT (2), not {v}"))),
    }
}

#[pymethods]
impl PyLists {
    #[classattr]
    const CONTINUE: i64 = 0;
    #[classattr]
    const STOP: i64 = 1;
    #[classattr]
    const EVICT: i64 = 2;

    #[new]
    fn new() -> Self {
        PyLists { lists: Lists::new(), scores: Vec::new() }
    }
    /// A new empty list; returns its handle.
    fn create(&mut self) -> ListId {
        self.lists.create()
    }
    /// Puts the folio at the head of `list`; False if it is on a list already.
    fn add(&mut self, list: ListId, folio: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.lists.add(list, folio_id(folio)?))
    }
    /// Puts the folio at the tail of `list`; False if it is on a list already.
    fn add_tail(&mut self, list: ListId, folio: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.lists.add_tail(list, folio_id(folio)?))
    }
    /// Moves a listed folio to the head (or the tail) of `list`; False if it is on no list.
    #[pyo3(name = "move", signature = (list, folio, tail=false))]
    fn move_to(&mut self, list: ListId, folio: &Bound<'_, PyAny>, tail: bool) -> PyResult<bool> {
        Ok(self.lists.move_to(list, folio_id(folio)?, tail))
    }
    /// Takes the folio off its list (cache_ext's list_del); False if it was on none.
    fn delete(&mut self, folio: &Bound<'_, PyAny>) -> PyResult<bool> {
        let id = folio_id(folio)?;
        if let Some(s) = self.scores.get_mut(id as usize) {
            *s = i64::MAX;
        }
        Ok(self.lists.del(id))
    }
    /// Stores the folio's score, which `sample` and `lowest` use when called without a score
    /// function (no Python call per scored folio); `delete` clears it.
    fn set_score(&mut self, folio: &Bound<'_, PyAny>, score: i64) -> PyResult<()> {
        *self.score_slot(folio_id(folio)?) = score;
        Ok(())
    }
    /// Adds `delta` to the folio's stored score (an unset score counts as 0).
    #[pyo3(signature = (folio, delta=1))]
    fn add_score(&mut self, folio: &Bound<'_, PyAny>, delta: i64) -> PyResult<()> {
        let slot = self.score_slot(folio_id(folio)?);
        *slot = if *slot == i64::MAX { delta } else { slot.saturating_add(delta) };
        Ok(())
    }
    /// The folio's stored score, None if unset.
    fn score(&self, folio: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
        let s = self.stored(folio_id(folio)?);
        Ok((s != i64::MAX).then_some(s))
    }
    /// The list the folio is on, or None.
    fn list_of(&self, folio: &Bound<'_, PyAny>) -> PyResult<Option<ListId>> {
        Ok(self.lists.list_of(folio_id(folio)?))
    }
    /// The folios on `list`.
    fn len(&self, list: ListId) -> usize {
        self.lists.len(list)
    }
    /// The folio ids of `list`, head first.
    fn ids(&self, list: ListId) -> Vec<FolioId> {
        self.lists.iter(list).collect()
    }
    /// Walks `list` from its head calling `fn(index, folio_id)` (cache_ext's
    /// list_iterate / list_iterate_extended): EVICT takes the folio (at most `nr`), STOP
    /// ends the walk; at most 4,097 folios are visited (handed-over ones count, without a
    /// call). `continue_to` / `evict_to` (a list, default this one) with `continue_place` /
    /// `evict_place` ("stay", "head", "tail") move each folio after its callback. Returns the chosen ids.
    #[pyo3(signature = (list, nr, r#fn, continue_to=None, continue_place="stay", evict_to=None, evict_place="stay"))]
    #[allow(clippy::too_many_arguments)] // cache_ext's iterate options, one keyword each
    fn iterate(
        &mut self,
        list: ListId,
        nr: usize,
        r#fn: &Bound<'_, PyAny>,
        continue_to: Option<ListId>,
        continue_place: &str,
        evict_to: Option<ListId>,
        evict_place: &str,
    ) -> PyResult<Vec<FolioId>> {
        let opts = IterateOpts { continue_list: continue_to, continue_place: place(continue_place)?, evict_list: evict_to, evict_place: place(evict_place)? };
        let mut out = Vec::new();
        let mut err = None;
        let _: IterEnd = self.lists.iterate_extended(list, opts, nr, &mut out, |i, id| match r#fn.call1((i, id)).and_then(|v| verdict(&v)) {
            Ok(v) => v,
            Err(e) => {
                err.get_or_insert(e);
                ListIter::Stop
            }
        });
        match err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }
    /// cache_ext's list_sample: of the first `sample_size * nr` folios of `list` (moved to
    /// its tail), the lowest `score(folio_id)` of each run of `sample_size` (without `score`,
    /// the stored scores). Returns the chosen ids.
    #[pyo3(signature = (list, sample_size, nr, score=None))]
    fn sample(&mut self, list: ListId, sample_size: usize, nr: usize, score: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<FolioId>> {
        let mut out = Vec::new();
        self.scored(score, |l, f| {
            l.sample(list, sample_size, nr, &mut out, f);
        })?;
        Ok(out)
    }
    /// Batch scoring of a window: the `nr` lowest `score(folio_id)` of the first `scan`
    /// folios of `list`, lowest first. Returns the chosen ids.
    #[pyo3(signature = (list, scan, nr, score=None))]
    fn lowest(&mut self, list: ListId, scan: usize, nr: usize, score: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<FolioId>> {
        let mut out = Vec::new();
        self.scored(score, |l, f| {
            l.lowest(list, scan, nr, &mut out, f);
        })?;
        Ok(out)
    }
}

/// `score(id)` as an int (clamped to 64 bits), the first error kept and the rest skipped.
fn score_of(score: &Bound<'_, PyAny>, id: FolioId, err: &mut Option<PyErr>) -> i64 {
    if err.is_some() {
        return i64::MAX;
    }
    let as_int = |v: Bound<'_, PyAny>| {
        v.extract::<i64>().or_else(|_| v.extract::<f64>().map(|f| if f.is_nan() { i64::MAX } else { f.clamp(i64::MIN as f64, i64::MAX as f64) as i64 }))
    };
    match score.call1((id,)).and_then(as_int) {
        Ok(s) => s,
        Err(e) => {
            *err = Some(e);
            i64::MAX
        }
    }
}
