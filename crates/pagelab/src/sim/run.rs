//! Running a scenario: the machine is built with the policy the scenario resolved (or the
//! caller's seam policies), runs to completion, and its counters become a [`Report`].
//! [`run_with`] is the one entry point; [`run`] is its common case.

use crate::error::RunError;
use crate::mm::Mm;
use crate::policy::classic::Classic;
use crate::policy::lru_gen::LruGen;
use crate::policy::registry::{Factory, MachinePolicy};
use crate::policy::Policy;
use crate::sim::{Machine, OpSource, TraceStatus};
use crate::{Report, Scenario};

/// What a run does besides running the scenario as it is written.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Operations the scenario's first task performs instead of its workload's own: a trace
    /// replayed against the model (`pagelab run --trace`).
    pub ops: Option<OpSource>,
    /// The caller's own seam policies (Python's): the policy of the cgroup at a path (None:
    /// the scenario's choice, or the classic LRU), and the name the report gives them.
    pub policies: Option<(Factory<'a>, &'static str)>,
    /// Called now and then with (operations done, operations in total).
    pub progress: Option<&'a mut dyn FnMut(u64, u64)>,
    /// The caller's own controllers (Python's), ticking beside the scenario's
    /// `[[controller]]`s ([`crate::sim::controller`]).
    pub controllers: Vec<Box<dyn crate::sim::controller::Controller>>,
}

/// What a run produced.
#[derive(Debug)]
pub struct Outcome {
    pub report: Report,
    /// When [`RunOptions::ops`] are a trace's pages ([`OpSource::Pages`]), what the trace
    /// showed: its pages, its zero-size records and the read error that ended it, if one did.
    pub trace: Option<TraceStatus>,
}

/// Runs a scenario to completion and returns its report. `progress` is called now and then
/// with (operations done, operations in total). [`run_with`] with only `progress` set.
pub fn run(s: &Scenario, mut progress: impl FnMut(u64, u64)) -> Result<Report, RunError> {
    run_with(s, RunOptions { progress: Some(&mut progress), ..RunOptions::default() }).map(|o| o.report)
}

/// Runs a scenario as `o` asks: the machine's policy is the one the scenario resolved
/// ([`MachinePolicy`]), or a seam host of the caller's policies.
pub fn run_with(s: &Scenario, o: RunOptions) -> Result<Outcome, RunError> {
    let RunOptions { ops, policies, progress, controllers } = o;
    let mut none = |_, _| {};
    let progress = progress.unwrap_or(&mut none);
    // The eviction seam's lists are per memcg (cache_ext's), not per (memcg, node) lruvec.
    if s.machine.nodes.len() > 1 && (matches!(s.machine.policy, MachinePolicy::Seam(_)) || policies.is_some()) {
        return Err(RunError::Scenario(format!(
            "policy: a seam policy is modeled on a machine of one node only (its lists are per memcg, not per node); this one has {} ([[machine.node]])",
            s.machine.nodes.len()
        )));
    }
    match (&s.machine.policy, policies) {
        (MachinePolicy::Mglru, Some(_)) => Err(RunError::Policy("seam policies run under the classic LRU as the machine policy, not MGLRU".into())),
        (MachinePolicy::Mglru, None) => finish(s, |mm| LruGen::new(mm, &s.mglru), ops, controllers, progress),
        (MachinePolicy::Classic, None) => finish(s, |mm| Classic::new(mm.memcgs.cg.len()).with_nodes(mm.nodes.len()), ops, controllers, progress),
        (policy @ MachinePolicy::Seam(_), None) => finish(s, |mm| policy.seam_host(mm, None), ops, controllers, progress),
        (policy, extra @ Some(_)) => finish(s, |mm| policy.seam_host(mm, extra), ops, controllers, progress),
    }
}

fn finish<P: Policy>(
    s: &Scenario,
    make: impl FnOnce(&Mm) -> P,
    ops: Option<OpSource>,
    controllers: Vec<Box<dyn crate::sim::controller::Controller>>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Outcome, RunError> {
    let mut m = Machine::new(s, make).map_err(RunError::Scenario)?;
    if !controllers.is_empty() {
        m.add_controllers(controllers);
    }
    let replays = ops.is_some();
    if let Some(ops) = ops {
        if m.tasks.is_empty() {
            return Err(RunError::Scenario("the scenario has no task to replay the operations".into()));
        }
        m.set_ops(0, ops).map_err(RunError::Scenario)?;
    }
    let total = m.total_ops();
    m.run(|done| progress(done, total));
    if let Some(e) = m.take_trace_error() {
        return Err(RunError::Trace(e));
    }
    if let Some(e) = m.policy.failure() {
        return Err(RunError::Policy(e));
    }
    if let Some(e) = m.controller_failure() {
        return Err(RunError::Controller(e));
    }
    if let Some(e) = m.mm.folios.failure() {
        return Err(RunError::HostLimit { scenario: s.name.clone(), message: e.to_string() });
    }
    if pagelab_host::interrupt::requested() {
        return Err(RunError::Interrupted);
    }
    let report = Report::collect(s, &m);
    let trace = if replays { m.take_trace_status(0) } else { None };
    Ok(Outcome { report, trace })
}
