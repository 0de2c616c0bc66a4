//! Python controllers: `pagelab.run(scenario, controllers=[...])` runs objects that watch the
//! cgroups and act on them while the workloads run, beside the scenario's `[[controller]]`s.
//! They follow the model's controller contract (pagelab::sim::controller); as Python sees it:
//!
//! * **Shape.** A controller is a class (instantiated once) or an object with an `interval`
//!   attribute (modeled seconds between ticks, a number or a duration string such as "1s",
//!   at least 1 ms) and a method `tick(self, now, cgroups)`. An optional `name` attribute
//!   names it in the report (default: its class's name).
//! * **Ticks at modeled times.** `tick` is called every `interval` of modeled time, first at
//!   one interval, with `now` in modeled seconds: the same scenario, seed and controller give
//!   the same calls on any host.
//! * **It reads a snapshot.** `cgroups` is a dict, by path, of every cgroup (the root `/`
//!   included) as `ControlCgroup`s read at `now`: `current`, `high` and `max` (bytes; `None`
//!   for "max"), `swap_current`, `stat` (memory.stat keys that need no walk over the pages:
//!   the LRU sizes in bytes, the workingset and reclaim events), `events` (memory.events),
//!   `pressure` (memory.pressure: `{"some": {"avg10", "avg60", "avg300", "total"}, "full":
//!   ...}`, averages in percent, totals in µs), `live_tasks`.
//! * **It acts by calling a cgroup's methods**, which queue the action: `reclaim(bytes,
//!   swappiness=None)` (memory.reclaim; `swappiness=` on 6.12 only), `set_high(bytes)` and
//!   `set_max(bytes)` (a number of bytes, or "max" / None), `kill()` (SIGKILL to every live
//!   task of the cgroup's subtree). Queued actions run when `tick` returns, in the order they
//!   were called, through the kernel paths a process's write takes; the next tick sees their
//!   effect. A method given what the kernel would refuse (fewer than 4096 bytes to reclaim,
//!   `swappiness=` on 6.1, a write to the root) raises ValueError at the call.
//! * **Every action is in the report's `controller_actions`** (time, controller, cgroup,
//!   action, value, bytes asked and reclaimed, tasks killed, outcome).
//! * **An exception ends the run**: the controller acts no more (what its failing tick
//!   queued is dropped), and `run` raises RuntimeError naming the controller, the method and
//!   the exception. Ctrl-C inside a tick interrupts the run.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use pagelab::mm::memcontrol::{MemcgId, WriteKind, PAGE_COUNTER_MAX};
use pagelab::sim::controller::{Act, Action, CgroupStats, Controller};

const PAGE: u64 = 4096;

/// A cgroup as a Python controller's tick reads it; its methods queue actions.
#[pyclass(name = "ControlCgroup", frozen)]
pub struct PyControlCgroup {
    #[pyo3(get)]
    path: String,
    #[pyo3(get)]
    current: u64,
    #[pyo3(get)]
    high: Option<u64>,
    #[pyo3(get)]
    max: Option<u64>,
    #[pyo3(get)]
    swap_current: u64,
    #[pyo3(get)]
    live_tasks: u64,
    stats: CgroupStats,
    memcg: MemcgId,
    takes_swappiness: bool,
    queue: Arc<Mutex<Vec<Act>>>,
}

/// A size for memory.high/memory.max: bytes (rounded down to pages, as the kernel's
/// page_counter_memparse() does), or "max" / None.
fn limit_pages(value: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<u64> {
    let Some(v) = value else { return Ok(PAGE_COUNTER_MAX) };
    if v.is_none() {
        return Ok(PAGE_COUNTER_MAX);
    }
    if let Ok(s) = v.extract::<String>() {
        return match s.as_str() {
            "max" => Ok(PAGE_COUNTER_MAX),
            _ => Err(PyValueError::new_err(format!("{what}: `{s}`: give a number of bytes or \"max\""))),
        };
    }
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyValueError::new_err(format!("{what}: {v} is a bool: give a number of bytes or \"max\"")));
    }
    let bytes: u64 = v.extract().map_err(|_| PyValueError::new_err(format!("{what}: {v}: give a number of bytes (0 or more) or \"max\"")))?;
    Ok((bytes / PAGE).min(PAGE_COUNTER_MAX))
}

impl PyControlCgroup {
    fn push(&self, action: Action, what: &str) -> PyResult<()> {
        if self.path == "/" {
            return Err(PyValueError::new_err(format!("{what}: the root cgroup has no memory.reclaim/high/max in the model (act on a declared cgroup)")));
        }
        self.queue.lock().expect("one thread").push(Act { memcg: self.memcg, action, note: String::new() });
        Ok(())
    }
}

#[pymethods]
impl PyControlCgroup {
    /// memory.stat's keys that need no walk over the pages, as a dict.
    #[getter]
    fn stat<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new_bound(py);
        for (k, v) in &self.stats.stat {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// memory.events: low, high, max, oom, oom_kill.
    #[getter]
    fn events<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new_bound(py);
        for (k, v) in &self.stats.events {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// memory.pressure: {"some": {"avg10", "avg60", "avg300", "total"}, "full": {...}}.
    #[getter]
    fn pressure<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new_bound(py);
        for (name, l) in [("some", &self.stats.pressure.some), ("full", &self.stats.pressure.full)] {
            let line = PyDict::new_bound(py);
            line.set_item("avg10", l.avg10)?;
            line.set_item("avg60", l.avg60)?;
            line.set_item("avg300", l.avg300)?;
            line.set_item("total", l.total_us)?;
            d.set_item(name, line)?;
        }
        Ok(d)
    }

    /// Queues a write of `bytes` to memory.reclaim (with `swappiness=` on 6.12).
    #[pyo3(signature = (bytes, swappiness=None))]
    fn reclaim(&self, bytes: &Bound<'_, PyAny>, swappiness: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        if bytes.is_instance_of::<pyo3::types::PyBool>() {
            return Err(PyValueError::new_err(format!("reclaim: {bytes} is a bool: give a number of bytes")));
        }
        let b: u64 = bytes.extract().map_err(|_| PyValueError::new_err(format!("reclaim: {bytes}: give a number of bytes, at least 4096")))?;
        if b < PAGE {
            return Err(PyValueError::new_err(format!("reclaim: {b} bytes is less than a page: memory.reclaim takes at least 4096")));
        }
        let swappiness = match swappiness {
            None => None,
            Some(s) if s.is_none() => None,
            Some(_) if !self.takes_swappiness => {
                return Err(PyValueError::new_err("reclaim: this kernel's memory.reclaim takes a byte count only (6.12's parses swappiness=)"))
            }
            Some(s) => match s.extract::<u32>() {
                Ok(v @ 0..=200) => Some(v),
                _ => return Err(PyValueError::new_err(format!("reclaim: swappiness={s}: memory.reclaim takes 0 to 200"))),
            },
        };
        self.push(Action::Write(WriteKind::Reclaim { pages: b / PAGE, swappiness }), "reclaim")
    }

    /// Queues a write to memory.high: bytes, or "max" / None.
    #[pyo3(signature = (bytes=None))]
    fn set_high(&self, bytes: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let pages = limit_pages(bytes, "set_high")?;
        self.push(Action::Write(WriteKind::High(pages)), "set_high")
    }

    /// Queues a write to memory.max: bytes, or "max" / None.
    #[pyo3(signature = (bytes=None))]
    fn set_max(&self, bytes: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let pages = limit_pages(bytes, "set_max")?;
        self.push(Action::Write(WriteKind::Max(pages)), "set_max")
    }

    /// Queues a SIGKILL to every live task of the cgroup's subtree.
    fn kill(&self) -> PyResult<()> {
        self.push(Action::Kill, "kill")
    }

    fn __repr__(&self) -> String {
        format!("ControlCgroup({}, current={}, live_tasks={})", self.path, self.current, self.live_tasks)
    }
}

/// A Python object with `interval` and `tick(now, cgroups)`, as a model controller.
pub struct PyController {
    obj: Py<PyAny>,
    name: String,
    interval_ns: u64,
    takes_swappiness: bool,
    failure: Option<String>,
}

impl PyController {
    /// The controller of `spec` (a class is instantiated): its `interval` read once.
    pub fn new(py: Python<'_>, spec: &Py<PyAny>, takes_swappiness: bool) -> PyResult<PyController> {
        let b = spec.bind(py);
        let obj = if b.is_instance_of::<pyo3::types::PyType>() { b.call0()?.unbind() } else { spec.clone_ref(py) };
        let o = obj.bind(py);
        let class = o.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "controller".into());
        let name = match o.getattr("name") {
            Ok(n) if !n.is_none() => n.str()?.to_string(),
            _ => class.clone(),
        };
        if !o.hasattr("tick")? {
            return Err(PyValueError::new_err(format!("controller {name}: has no tick(self, now, cgroups) method")));
        }
        let interval = o.getattr("interval").map_err(|_| {
            PyValueError::new_err(format!("controller {name}: has no `interval` (modeled seconds between ticks, e.g. interval = 1.0 or \"1s\")"))
        })?;
        let interval_ns = if let Ok(s) = interval.extract::<String>() {
            pagelab::sim::controller::parse_duration_ns(&s).map_err(|e| PyValueError::new_err(format!("controller {name}: interval: {e}")))?
        } else {
            match interval.extract::<f64>() {
                Ok(s) if (0.0..=1e10).contains(&s) => (s * 1e9).round() as u64,
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "controller {name}: interval = {interval}: modeled seconds, a number or a duration such as \"1s\""
                    )))
                }
            }
        };
        if interval_ns < 1_000_000 {
            return Err(PyValueError::new_err(format!("controller {name}: interval = {interval}: at least 1 ms (0.001)")));
        }
        Ok(PyController { obj, name, interval_ns, takes_swappiness, failure: None })
    }
}

impl Controller for PyController {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn interval_ns(&self) -> u64 {
        self.interval_ns
    }
    fn tick(&mut self, now_ns: u64, cgroups: &[CgroupStats]) -> Vec<Act> {
        if self.failure.is_some() {
            return Vec::new();
        }
        let queue = Arc::new(Mutex::new(Vec::new()));
        Python::with_gil(|py| {
            let r = (|| -> PyResult<()> {
                let d = PyDict::new_bound(py);
                for c in cgroups {
                    let cg = PyControlCgroup {
                        path: c.path.clone(),
                        current: c.current,
                        high: c.high,
                        max: c.max,
                        swap_current: c.swap_current,
                        live_tasks: c.live_tasks,
                        stats: c.clone(),
                        memcg: c.memcg,
                        takes_swappiness: self.takes_swappiness,
                        queue: queue.clone(),
                    };
                    d.set_item(&c.path, Py::new(py, cg)?)?;
                }
                self.obj.bind(py).call_method1("tick", (now_ns as f64 / 1e9, d))?;
                Ok(())
            })();
            if let Err(e) = r {
                if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                    pagelab::interrupt::request();
                }
                let tb = e.traceback_bound(py).and_then(|t| t.format().ok()).unwrap_or_default();
                self.failure = Some(format!("the controller {}: tick() at {:.3} s raised {e}\n{tb}", self.name, now_ns as f64 / 1e9));
            }
        });
        if self.failure.is_some() {
            return Vec::new();
        }
        let mut queued = queue.lock().expect("one thread");
        std::mem::take(&mut *queued)
    }
    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }
}
