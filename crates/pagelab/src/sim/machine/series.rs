//! The run's series: a [`Sample`] of the counters at the end of each report interval,
//! at most [`SERIES_POINTS`] of them (idle intervals left out, neighbours merged beyond that).

use std::collections::BTreeMap;

use super::Machine;
use crate::mm::vmstat::Events;
use crate::policy::Policy;

/// One report interval of the counters.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub t_ns: u64,
    pub events: Events,
    pub gauges: BTreeMap<&'static str, u64>,
    pub ops: u64,
    /// Each task's operations so far, in task order.
    pub task_ops: Vec<u64>,
    /// Each task's workload operations so far (`Task::steps`), in task order.
    pub task_steps: Vec<u64>,
    /// The policy's own state (MGLRU: the generations).
    pub policy: Option<serde_json::Value>,
    /// Every operation's latency so far (the machine's histogram): unchanged when the
    /// operations are, so it takes no part in telling an idle interval.
    pub latency: crate::hist::Histogram,
    /// Memory pressure of every cgroup at the sample (index = memcg id, 0 the system). Not
    /// compared when an interval is tested for change: the averages decay in idle time.
    pub pressure: Vec<crate::sched::psi::Pressure>,
    /// Every cgroup's memory.current at the sample, pages (index = memcg id).
    pub current: Vec<u64>,
}

/// The most points a run's series keeps before neighbours merge ([`Machine::sample`]): an
/// hour at the default interval of 1 s.
pub const SERIES_POINTS: usize = 4096;

impl<P: Policy> Machine<P> {
    /// Takes the sample that ends a report interval at `at`, keeping the series bounded by
    /// two rules that no bundled scenario reaches (pagelab's own, not the kernel's):
    ///
    /// - An interval in which nothing changed (the same counters, gauges, operations and
    ///   policy state as the last point) is left out; a run of such intervals is kept as one
    ///   point at its end, with every delta zero, so the point after it covers one interval
    ///   again. Idle modeled time costs no memory.
    /// - When the series holds [`SERIES_POINTS`] points and another one is due, every pair of
    ///   neighbouring points merges into one (the later's time, gauges and policy state; the
    ///   deltas add up, since a sample holds running totals) and the interval doubles.
    ///
    /// The last sample (`last`, at the end of the run) is always kept.
    pub(super) fn sample(&mut self, at: u64, last: bool) {
        if self.samples.last().is_some_and(|s| s.t_ns >= at) {
            return;
        }
        let task_ops: Vec<u64> = self.tasks.iter().map(|t| t.ops).collect();
        let task_steps: Vec<u64> = self.tasks.iter().map(|t| t.steps).collect();
        let gauges = crate::mm::vmstat::gauges(&self.mm);
        let policy = self.policy.state(&self.mm);
        let unchanged = |s: &Sample| s.events == self.mm.events && s.task_ops == task_ops && s.gauges == gauges && s.policy == policy;
        if !last && self.samples.last().is_some_and(unchanged) {
            self.idle_until = Some(at);
            return;
        }
        if let Some(idle) = self.idle_until.take() {
            let mut gap_end = self.samples.last().expect("an idle interval follows a point").clone();
            gap_end.t_ns = idle;
            self.push_sample(gap_end);
        }
        let ops = task_ops.iter().sum();
        let pressure = self.mm.psi.read_all(at);
        let current = self.mm.memcgs.cg.iter().map(|c| c.usage).collect();
        self.push_sample(Sample {
            t_ns: at,
            events: self.mm.events.clone(),
            gauges,
            ops,
            task_ops,
            task_steps,
            policy,
            latency: self.latency.clone(),
            pressure,
            current,
        });
    }

    fn push_sample(&mut self, s: Sample) {
        if self.samples.len() >= SERIES_POINTS {
            let mut i = 0;
            self.samples.retain(|_| {
                i += 1;
                i % 2 == 0
            });
            self.interval = self.interval.saturating_mul(2);
        }
        self.samples.push(s);
    }
}
