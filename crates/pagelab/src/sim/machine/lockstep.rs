//! Tasks that keep time with others or with their trace: `lockstep` pairs (a follower waits
//! for its leader's accesses, a leader for its followers' prefills: [`LockTask`]) and
//! `pace = "trace"` (each access issued at its trace's time: [`Pacing`]).

use std::collections::VecDeque;

use pagelab_workload::Due;

use super::{Machine, Task};
use crate::policy::Policy;
use crate::sim::scenario::Scenario;

/// How a task kept to its paced trace's times (`pace = "trace"`): each access is issued at
/// its due time (the phase's first access, plus its time in the trace after the first's) or,
/// when the task is behind, as soon as it can.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pacing {
    /// When the current paced phase's first access was issued.
    origin: u64,
    /// Paced accesses issued.
    pub accesses: u64,
    /// Accesses issued after their due time.
    pub late: u64,
    pub behind_max_ns: u64,
    pub behind_sum_ns: u128,
    /// How far behind the last paced access was issued.
    pub behind_last_ns: u64,
}

/// What a task of a `lockstep` pair waits for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Wait {
    #[default]
    Nothing,
    /// A leader: its followers' prefills.
    Prefill,
    /// A follower: the leader's access count to reach this.
    Leader(u64),
}

/// A task's part in `lockstep` pairs: as a follower (its leader and ratio) and as a leader
/// (its followers).
#[derive(Clone, Debug, Default)]
pub struct LockTask {
    /// The leader's task and the ratio R: before its access j the task waits until
    /// `leader_done × R ≥ j`.
    pub leader: Option<(usize, f64)>,
    pub followers: Vec<usize>,
    /// The task has fetched its first access (its prefill is over), and when.
    prefilled: bool,
    prefill_end: u64,
    /// A leader: its followers' prefills are over and its accesses began.
    started: bool,
    wait: Wait,
    /// A follower: (the leader's access count, when it reached it) for the leader's accesses
    /// that ended later than the follower's clock then.
    pending: VecDeque<(u64, u64)>,
    /// Times the task had to wait, and the modeled time it waited.
    pub waits: u64,
    pub wait_ns: u64,
}

/// The tasks' `lockstep` pairs: job j of a follower follows job j of its leader, or job 0
/// of a leader with one job. Empty when no workload has `lockstep`.
pub(super) fn lock_tasks(s: &Scenario, tasks: &[Task]) -> Vec<LockTask> {
    if s.workloads.iter().all(|w| w.lockstep.is_none()) {
        return Vec::new();
    }
    let task_of = |wi: usize, job: u32| tasks.iter().position(|t| t.workload == wi && t.job == job);
    let mut locks = vec![LockTask::default(); tasks.len()];
    for (t, task) in tasks.iter().enumerate() {
        let Some(l) = &s.workloads[task.workload].lockstep else { continue };
        let li = s.workloads.iter().position(|w| w.name == l.leader).expect("the scenario checked the leader");
        let job = if s.workloads[li].jobs == 1 { 0 } else { task.job };
        let leader = task_of(li, job).expect("the scenario checked the leader's jobs");
        locks[t].leader = Some((leader, l.ratio));
        locks[leader].followers.push(t);
    }
    locks
}

/// The fewest leader accesses `d` with `d × ratio ≥ j`; `u64::MAX` (never: the follower waits
/// for its leader's end) when that is beyond 2^53, where a tiny ratio such as 1e-20 would
/// overflow the count and step through 2^64 candidates.
fn leader_accesses_needed(j: u64, ratio: f64) -> u64 {
    let estimate = (j as f64 / ratio).ceil();
    if estimate >= (1u64 << 53) as f64 {
        return u64::MAX;
    }
    // Within 2^53 the estimate is off by floating-point rounding only: a step or two below.
    let mut d = estimate as u64;
    while d > 0 && (d - 1) as f64 * ratio >= j as f64 {
        d -= 1;
    }
    while (d as f64) * ratio < j as f64 {
        d += 1;
    }
    d
}

impl<P: Policy> Machine<P> {
    /// `pace = "trace"`: the task issues the access when it is due, or now if it is late.
    pub(super) fn pace(&mut self, t: usize, due: Due) {
        let clock = self.mm.tasks[t].clock;
        let p = self.tasks[t].pacing.get_or_insert_with(Default::default);
        if due.first {
            p.origin = clock;
        }
        let at = p.origin.saturating_add(due.after_ns);
        p.accesses += 1;
        if clock < at {
            self.mm.tasks[t].clock = at;
            p.behind_last_ns = 0;
        } else {
            let behind = clock - at;
            p.late += (behind > 0) as u64;
            p.behind_max_ns = p.behind_max_ns.max(behind);
            p.behind_sum_ns += behind as u128;
            p.behind_last_ns = behind;
        }
    }

    /// `lockstep`, before task `t`'s next access (not a fill): the task's prefill is over;
    /// a leader waits until its followers' prefills are; a follower waits, before its access
    /// j, until its leader has done `d` accesses with `d × ratio ≥ j` (from the time the
    /// leader's access `d` ended), and ends when its leader ended without them. Returns
    /// whether the access goes ahead now.
    pub(super) fn lockstep_admits(&mut self, t: usize) -> bool {
        if !self.locks[t].prefilled {
            self.prefill_over(t);
        }
        if !self.locks[t].started && !self.locks[t].followers.is_empty() {
            if self.locks[t].followers.iter().any(|&f| !self.locks[f].prefilled) {
                self.lock_wait(t, Wait::Prefill);
                return false;
            }
            self.start_leader(t);
        }
        let Some((leader, ratio)) = self.locks[t].leader else { return true };
        let need = leader_accesses_needed(self.tasks[t].steps, ratio);
        if self.tasks[leader].steps >= need {
            // When the leader's access `need` ended (no entry: by the follower's clock).
            let pending = &mut self.locks[t].pending;
            while pending.front().is_some_and(|&(n, _)| n < need) {
                pending.pop_front();
            }
            if let Some(&(n, at)) = pending.front() {
                if n == need {
                    self.lock_until(t, at);
                }
            }
            true
        } else if self.tasks[leader].done {
            let end = self.tasks[leader].end_ns;
            self.lock_until(t, end);
            self.finish_task(t);
            false
        } else {
            self.lock_wait(t, Wait::Leader(need));
            false
        }
    }

    /// Task `t` waits (is not runnable) for `w`.
    fn lock_wait(&mut self, t: usize, w: Wait) {
        self.locks[t].wait = w;
        self.tasks[t].waiting = true;
    }

    /// Task `t` stops waiting at `at` (its clock moves there if behind).
    fn lock_until(&mut self, t: usize, at: u64) {
        let clock = &mut self.mm.tasks[t].clock;
        if at > *clock {
            let l = &mut self.locks[t];
            l.waits += 1;
            l.wait_ns += at - *clock;
            *clock = at;
        }
    }

    fn lock_wake(&mut self, t: usize, at: u64) {
        self.locks[t].wait = Wait::Nothing;
        self.tasks[t].waiting = false;
        self.lock_until(t, at);
        if let Some(q) = self.queue.as_mut().filter(|q| !q.queued[t]) {
            q.queued[t] = true;
            q.heap.push(std::cmp::Reverse((self.mm.tasks[t].clock, t)));
        }
    }

    /// Task `t` fetched its first access (or ended): its leader may begin.
    fn prefill_over(&mut self, t: usize) {
        self.locks[t].prefilled = true;
        self.locks[t].prefill_end = self.mm.tasks[t].clock;
        if let Some((leader, _)) = self.locks[t].leader {
            if self.locks[leader].wait == Wait::Prefill && self.locks[leader].followers.iter().all(|&f| self.locks[f].prefilled) {
                self.start_leader(leader);
            }
        }
    }

    /// A leader begins its accesses when the last of its followers' prefills ended.
    fn start_leader(&mut self, l: usize) {
        let at = self.locks[l].followers.iter().map(|&f| self.locks[f].prefill_end).max().unwrap_or(0);
        self.locks[l].started = true;
        self.lock_wake(l, at);
    }

    /// Leader `l` finished an access: followers waiting for it go on from now; the others
    /// keep when it ended, if that is later than their clock.
    pub(super) fn leader_did(&mut self, l: usize) {
        let (n, at) = (self.tasks[l].steps, self.mm.tasks[l].clock);
        for i in 0..self.locks[l].followers.len() {
            let f = self.locks[l].followers[i];
            match self.locks[f].wait {
                Wait::Leader(need) if n >= need => self.lock_wake(f, at),
                _ if !self.tasks[f].done && self.mm.tasks[f].clock < at => self.locks[f].pending.push_back((n, at)),
                _ => {}
            }
        }
    }

    /// Task `t` ended: a leader waiting for its prefill may begin, and its followers waiting
    /// for an access it will not do end with it.
    pub(super) fn lockstep_ended(&mut self, t: usize) {
        if !self.locks[t].prefilled {
            self.prefill_over(t);
        }
        let end = self.tasks[t].end_ns;
        for i in 0..self.locks[t].followers.len() {
            let f = self.locks[t].followers[i];
            if matches!(self.locks[f].wait, Wait::Leader(_)) && !self.tasks[f].done {
                self.locks[f].wait = Wait::Nothing;
                self.tasks[f].waiting = false;
                self.lock_until(f, end);
                self.finish_task(f);
            }
        }
    }
}
