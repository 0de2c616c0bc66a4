//! Running a scenario: the machine is built with the scenario's policy (or the caller's seam
//! policies), runs to completion, and its counters become a [`Report`].

use crate::mm::Mm;
use crate::policy::classic::Classic;
use crate::policy::{self, Policy};
use crate::sim::{Machine, OpSource, TraceStatus};
use crate::{PolicyKind, Report, Scenario};

/// Runs a scenario to completion and returns its report. `progress` is called now and then
/// with (operations done, operations in total).
pub fn run(s: &Scenario, mut progress: impl FnMut(u64, u64)) -> Result<Report, String> {
    match s.machine.policy {
        PolicyKind::Classic if !s.seam.is_empty() => run_with(s, |mm| seam_host(mm, s, None), &mut progress),
        PolicyKind::Classic => run_with(s, |mm| Classic::new(mm.memcgs.cg.len()), &mut progress),
        PolicyKind::Mglru => run_with(s, |mm| policy::lru_gen::LruGen::new(mm, &s.mglru), &mut progress),
    }
}

/// Runs a scenario with the caller's own seam policies: `policies` gives the policy of the
/// cgroup at a path (None: the scenario's choice, or the classic LRU).
pub fn run_with_policies(s: &Scenario, policies: policy::registry::Factory, name: &'static str, mut progress: impl FnMut(u64, u64)) -> Result<Report, String> {
    if s.machine.policy != PolicyKind::Classic {
        return Err("seam policies run under the classic LRU as the machine policy, not MGLRU".into());
    }
    run_with(s, |mm| policy::registry::build_ext(mm, &s.seam, Some(policies), name), &mut progress)
}

fn seam_host(mm: &Mm, s: &Scenario, extra: Option<policy::registry::Factory>) -> policy::seam::Ext {
    policy::registry::build_ext(mm, &s.seam, extra, policy::registry::machine_name(&s.seam))
}

/// Runs a scenario whose first task performs `ops` instead of its workload's own
/// operations: a trace replayed against the model (`pagelab run --trace`). Returns the
/// report and, when `ops` are a trace's pages ([`OpSource::Pages`]), what the trace showed:
/// its pages, its zero-size records and the read error that ended it, if one did.
pub fn run_ops(s: &Scenario, ops: OpSource, mut progress: impl FnMut(u64, u64)) -> Result<(Report, Option<TraceStatus>), String> {
    match s.machine.policy {
        PolicyKind::Classic if !s.seam.is_empty() => run_ops_with(s, |mm| seam_host(mm, s, None), ops, &mut progress),
        PolicyKind::Classic => run_ops_with(s, |mm| Classic::new(mm.memcgs.cg.len()), ops, &mut progress),
        PolicyKind::Mglru => run_ops_with(s, |mm| policy::lru_gen::LruGen::new(mm, &s.mglru), ops, &mut progress),
    }
}

fn run_ops_with<P: Policy>(
    s: &Scenario,
    make: impl FnOnce(&Mm) -> P,
    ops: OpSource,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(Report, Option<TraceStatus>), String> {
    let mut m = Machine::new(s, make)?;
    if m.tasks.is_empty() {
        return Err("the scenario has no task to replay the operations".into());
    }
    m.set_ops(0, ops)?;
    let total = m.total_ops();
    m.run(|done| progress(done, total));
    if let Some(e) = m.take_trace_error() {
        return Err(e);
    }
    if let Some(e) = m.policy.failure() {
        return Err(e);
    }
    if let Some(e) = m.mm.folios.failure() {
        return Err(format!("scenario {}: {e}", s.name));
    }
    Ok((Report::collect(s, &m), m.take_trace_status(0)))
}

fn run_with<P: Policy>(s: &Scenario, make: impl FnOnce(&Mm) -> P, progress: &mut dyn FnMut(u64, u64)) -> Result<Report, String> {
    let mut m = Machine::new(s, make)?;
    let total = m.total_ops();
    m.run(|done| progress(done, total));
    if let Some(e) = m.take_trace_error() {
        return Err(e);
    }
    if let Some(e) = m.policy.failure() {
        return Err(e);
    }
    if let Some(e) = m.mm.folios.failure() {
        return Err(format!("scenario {}: {e}", s.name));
    }
    Ok(Report::collect(s, &m))
}
