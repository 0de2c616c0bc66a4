//! The controllers' ticks as a timed event of the machine (`Event::Control`): each due
//! controller reads a snapshot of the cgroups ([`crate::sim::controller::cgroup_stats`]) and
//! its actions run through the kernel paths an `[[event]]`'s write takes, or kill a
//! cgroup's tasks; the outcomes are kept for the report. The contract is
//! [`crate::sim::controller`]'s.

use super::Machine;
use crate::mm::memcontrol::{MemcgId, WriteResult};
use crate::policy::Policy;
use crate::sim::controller::{cgroup_stats, Act, ActOutcome, Action, CgroupStats, Controller};

/// The most controller actions a report keeps (a controller ticking for days of modeled
/// time must not grow the run's memory with it): later ones are counted, not kept.
pub const MAX_CONTROL_RECORDS: usize = 4096;

/// A controller and the time of its next tick.
pub(super) struct Slot {
    pub(super) ctl: Box<dyn Controller>,
    pub(super) next_at: u64,
}

impl<P: Policy> Machine<P> {
    /// Adds controllers (the caller's own: Python's) to those the scenario declared.
    pub fn add_controllers(&mut self, controllers: Vec<Box<dyn Controller>>) {
        for ctl in controllers {
            let next_at = ctl.interval_ns().max(1_000_000);
            self.controllers.push(Slot { ctl, next_at });
        }
        self.next_control_at = self.controllers.iter().map(|s| s.next_at).min().unwrap_or(u64::MAX);
        self.next_timer = self.next_timer.min(self.next_control_at);
    }

    /// Why a controller stopped, the first that did.
    pub fn controller_failure(&self) -> Option<String> {
        self.controllers.iter().find_map(|s| s.ctl.failure())
    }

    /// The controllers due at `at` tick, in their order, each reading the cgroups as the
    /// actions of those before it left them.
    #[cold]
    pub(super) fn control(&mut self, at: u64) {
        for i in 0..self.controllers.len() {
            if self.controllers[i].next_at != at {
                continue;
            }
            let interval = self.controllers[i].ctl.interval_ns().max(1_000_000);
            self.controllers[i].next_at = at.saturating_add(interval);
            if self.controllers[i].ctl.failure().is_some() {
                continue;
            }
            let stats = self.cgroup_snapshot(at);
            let acts = self.controllers[i].ctl.tick(at, &stats);
            let name = if acts.is_empty() { String::new() } else { self.controllers[i].ctl.name() };
            for act in acts {
                let outcome = self.perform(at, &name, act);
                if self.control_outcomes.len() < MAX_CONTROL_RECORDS {
                    self.control_outcomes.push(outcome);
                } else {
                    self.control_left_out += 1;
                }
            }
        }
        self.next_control_at = self.controllers.iter().map(|s| s.next_at).min().unwrap_or(u64::MAX);
    }

    /// Every cgroup (the root first) as a controller reads it at `at`.
    fn cgroup_snapshot(&mut self, at: u64) -> Vec<CgroupStats> {
        let pressure = self.mm.psi.read_all(at);
        (0..self.mm.memcgs.cg.len())
            .map(|i| {
                let id = self.mm.memcgs.cg[i].id;
                cgroup_stats(&self.mm, id, pressure.get(id as usize).copied().unwrap_or_default(), self.live_tasks(id).count() as u64)
            })
            .collect()
    }

    /// The tasks of `memcg`'s subtree that live: not killed, not exited (a task done with
    /// `hold` keeps its memory: its process lives on).
    fn live_tasks(&self, memcg: MemcgId) -> impl Iterator<Item = usize> + '_ {
        (0..self.tasks.len()).filter(move |&t| {
            let tm = &self.mm.tasks[t];
            !tm.killed && (!self.tasks[t].done || self.hold[t]) && self.mm.memcgs.is_descendant(tm.memcg, memcg)
        })
    }

    /// Performs one action at `at`: a write on a clock of its own (as an `[[event]]`'s), or
    /// the kill of the cgroup's live tasks.
    fn perform(&mut self, at: u64, controller: &str, act: Act) -> ActOutcome {
        let mut out =
            ActOutcome { at_ns: at, controller: controller.to_string(), act, result: WriteResult::default(), killed_tasks: 0, freed_pages: 0, taken_ns: 0 };
        match out.act.action {
            Action::Write(kind) => {
                let memcg = out.act.memcg;
                let (cpu_before, profile_before) = (self.mm.nodes[0].kswapd_cpu_ns, self.mm.profile.kswapd);
                let mut end = at;
                let mut result = WriteResult::default();
                self.with_kernel_clock(at, |m| {
                    result = crate::mm::memcontrol::cgroup_write(&mut m.mm, &mut m.policy, memcg, kind);
                    end = m.mm.nodes[0].kswapd_clock;
                });
                self.mm.nodes[0].kswapd_cpu_ns = cpu_before;
                self.mm.profile.kswapd = profile_before;
                out.result = result;
                out.taken_ns = end - at;
            }
            Action::Kill => {
                let victims: Vec<usize> = self.live_tasks(out.act.memcg).collect();
                let actor = self.mm.actor;
                for t in victims {
                    self.mm.actor = crate::mm::Actor::Task(t);
                    out.freed_pages += crate::mm::oom_kill::kill_task(&mut self.mm, &mut self.policy, t);
                    out.killed_tasks += 1;
                }
                self.mm.actor = actor;
            }
            Action::Hold => {}
        }
        out
    }
}
