//! The library's error for the paths that gather other errors (trace replays, curves): a
//! typed value the binaries wrap with `anyhow` and the Python bindings turn into exceptions.
//! Each variant's message is complete on its own (file, line or offset, key, what is wrong).

use std::fmt::Display;

/// An error of a trace replay or a curve.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the trace failed (names the file and the offset or line).
    #[error(transparent)]
    Trace(#[from] pagelab_trace::TraceError),
    /// The scenario built for the replay was refused (names the key).
    #[error(transparent)]
    Scenario(#[from] crate::ScenarioError),
    /// A run of the model failed ([`RunError`]).
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Anything else, with its message.
    #[error("{0}")]
    Msg(String),
}

/// Why [`crate::run`] returned no report. Every message is complete on its own and is the
/// text the CLI and the Python package print.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The machine the scenario describes could not be laid out (its zones, cgroups,
    /// workloads or trace files); names the key or file. A scenario's own keys are refused
    /// earlier, as a [`crate::ScenarioError`], when it is parsed.
    #[error("{0}")]
    Scenario(String),
    /// The policy failed: a seam policy raised or returned something that is not a folio
    /// of its cgroup, or the caller's policies do not fit the machine's.
    #[error("{0}")]
    Policy(String),
    /// A controller failed: a Python controller raised, or asked for what its cgroup
    /// cannot take ([`crate::sim::controller`]).
    #[error("{0}")]
    Controller(String),
    /// The host could not hold what the run touched (the frame table's
    /// [`failure`](crate::mm::folio::Folios::failure)).
    #[error("scenario {scenario}: {message}")]
    HostLimit { scenario: String, message: String },
    /// The run was stopped ([`crate::interrupt`]) before it finished.
    #[error("the run was interrupted")]
    Interrupted,
    /// A workload's trace could not be read to its end; names the file and the offset or
    /// line.
    #[error("{0}")]
    Trace(String),
}

impl From<String> for Error {
    fn from(m: String) -> Error {
        Error::Msg(m)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Prefixes an error with what was being done (`--memory 64M: ...`).
pub trait Context<T> {
    fn with_context<C: Display>(self, f: impl FnOnce() -> C) -> Result<T>;
}

impl<T, E: Display> Context<T> for std::result::Result<T, E> {
    fn with_context<C: Display>(self, f: impl FnOnce() -> C) -> Result<T> {
        self.map_err(|e| Error::Msg(format!("{}: {e}", f())))
    }
}

/// Returns early with an [`Error::Msg`] formatted like `format!`.
macro_rules! bail {
    ($($t:tt)*) => {
        return Err($crate::error::Error::Msg(format!($($t)*)))
    };
}
pub(crate) use bail;
