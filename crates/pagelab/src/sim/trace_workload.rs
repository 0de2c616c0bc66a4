//! Workloads driven by a trace (`[[workload]] trace = "PATH"`): pagelab-trace's
//! [`pagelab_trace::workload`] reads, sizes and replays them, for the simulator as for the
//! oracle's guest runner.

pub use pagelab_trace::workload::{open, resolve_path, spec};

use crate::sim::scenario::{Scenario, ScenarioError};

/// Resolves and reads the traces of the scenario's workloads
/// ([`pagelab_trace::workload::size_traces`]); `file` is the scenario's path, which relative
/// trace paths start from.
pub fn size_traces(mut s: Scenario, file: &str, err: &dyn Fn(&str, String) -> ScenarioError) -> Result<Scenario, ScenarioError> {
    pagelab_trace::workload::size_traces(&mut s.workloads, file, err)?;
    Ok(s)
}
