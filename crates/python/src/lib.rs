//! Python bindings: run scenarios, trace replays, sweeps and comparisons from Python. Reports cross the
//! boundary as JSON text (the same documents `pagelab run --json` writes), which the Python
//! side turns into dicts.

// pyo3 0.22's #[pyfunction] expansion converts a PyResult's error into PyErr again, which
// clippy reports at every function returning PyResult (fixed in later pyo3 releases).
#![allow(clippy::useless_conversion)]

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

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
    let report = py.allow_threads(|| pagelab::run(&s, |_, _| {})).map_err(PyRuntimeError::new_err)?;
    serde_json::to_string(&report).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Runs every combination of `vary` (a list of (key, [values])) and returns a JSON array of
/// {"point": {...}, "report": {...}} in point order.
#[pyfunction]
#[pyo3(signature = (text, vary, set=Vec::new(), threads=0))]
fn sweep_json(py: Python<'_>, text: &str, vary: Vec<(String, Vec<String>)>, set: Vec<String>, threads: usize) -> PyResult<String> {
    let axes: Vec<pagelab::sweep::Axis> = vary.into_iter().map(|(key, values)| pagelab::sweep::Axis { key, values }).collect();
    let results =
        py.allow_threads(|| pagelab::sweep::run(text, "<text>", "scenario", &set, &axes, threads, &|| {})).map_err(|e| PyValueError::new_err(e.to_string()))?;
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
    let (report, _) = py.allow_threads(|| pagelab::replay::run(&o)).map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
    serde_json::to_string(&report).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The mmtests-style comparison table of reports given as JSON files.
#[pyfunction]
#[pyo3(signature = (paths, labels=None))]
fn compare_table(paths: Vec<String>, labels: Option<Vec<String>>) -> PyResult<String> {
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
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
