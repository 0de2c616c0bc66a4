//! Memory pressure stall information, as kernel/sched/psi.c (6.1, 6.12) computes it for
//! `/proc/pressure/memory` and each cgroup's `memory.pressure`.
//!
//! # Contract
//!
//! - **Who reports.** Every actor that runs on a CPU: each task, and kswapd (a kernel thread
//!   of the root cgroup, so of the system's group only). An actor says when it stops being
//!   idle and when it becomes idle again ([`Psi::set_idle`]), when it enters and leaves a
//!   memory stall ([`Psi::memstall_enter`], [`Psi::memstall_leave`]: psi_memstall_enter()
//!   and psi_memstall_leave(), nested sections counting once, as `current->in_memstall`
//!   does), when it sleeps inside an operation ([`Psi::sleep`]: an IO wait) and on which CPU
//!   it is ([`Psi::set_cpu`]). Each report carries the actor's own clock; an actor's reports
//!   come in the order of its clock.
//! - **What a CPU counts.** For each group and CPU, the tasks there that are non-idle, in a
//!   memory stall, and running without a stall (`NR_RUNNING` less `NR_MEMSTALL_RUNNING`):
//!   test_states() makes `some` the time with a stalled task, `full` the time with a stalled
//!   task and no productive one, `nonidle` the time with any non-idle task. A group holds the
//!   actors of its cgroup and of every descendant (psi_group_change() walks the ancestors);
//!   the root group is the system.
//! - **How CPUs add up.** Every PSI period (`PSI_FREQ`, 2 s and a jiffy, following the
//!   model's rstat flush period as the oracle scales it) collect_percpu_times() weighs each
//!   CPU's `some` and `full` by its non-idle time in whole jiffies and divides by the sum of
//!   those; the quotient is added to the group's total (ns, reported in µs), and
//!   update_averages()/calc_avgs() fold the period's share into avg10/avg60/avg300 with
//!   the kernel's fixed-point arithmetic (FSHIFT 11; the decay factors are computed as the
//!   kernel derived them, `FIXED_1 / e^(2 s / window)`).
//! - **Order and memory.** Reports of different actors arrive out of time order (tasks
//!   interleave by their clocks). A CPU of one actor counts its changes as they come
//!   (they come in order). A shared CPU keeps the changes not yet counted,
//!   sorted by time, and counts them up to the *frontier* ([`Psi::advance`]): the time the
//!   machine guarantees no later report will precede (the clock of the task it is about to
//!   run, after the events due by then). The result is exact and the same on every host;
//!   what is kept is the changes between the frontier and the actors' clocks, and two
//!   periods of sums, never a history.
//! - **CPUs.** Without `machine.cpus` every actor has a CPU of its own (so `full` equals
//!   `some`: the kernel's per-CPU rule with one task a CPU). With `machine.cpus = 1` all
//!   share CPU 0; with more, a task is on the CPU it was last granted.
//!
//! Not modeled: the averaging work stopping while a group is idle (the model folds every
//! period, idle or not, so an idle stretch decays the averages period by period where the
//! kernel decays them in one step with calc_load_n()), reads folding a partial period into
//! the total (a read here leaves the state alone), the poll triggers, and the stalls of
//! kernel threads other than kswapd (kcompactd, the flusher).

use std::collections::VecDeque;

use serde::Serialize;

/// CONFIG_HZ of the Debian kernels.
pub const HZ: u64 = 250;
/// FSHIFT and FIXED_1 of include/linux/sched/loadavg.h: the averages' fixed point.
const FSHIFT: u32 = 11;
const FIXED_1: u64 = 1 << FSHIFT;
/// The windows of avg10, avg60 and avg300, in seconds.
const WINDOWS_S: [f64; 3] = [10.0, 60.0, 300.0];
/// The count indices of a CPU: non-idle tasks, stalled tasks, running tasks not stalled.
const NONIDLE: usize = 0;
const MEMSTALL: usize = 1;
const PRODUCTIVE: usize = 2;
/// Changes a CPU keeps before it counts those up to the frontier.
const PENDING_MAX: usize = 64;

/// One line of a pressure file: the total stall time and the three running averages (in
/// percent, with the two decimals the kernel prints).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Line {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    pub total_us: u64,
}

/// A pressure file: its `some` and `full` lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Pressure {
    pub some: Line,
    pub full: Line,
}

impl Pressure {
    /// The file's two lines as the kernel prints them (psi_show()).
    pub fn text(&self) -> String {
        let line = |name: &str, l: &Line| format!("{name} avg10={:.2} avg60={:.2} avg300={:.2} total={}", l.avg10, l.avg60, l.avg300, l.total_us);
        format!("{}\n{}", line("some", &self.some), line("full", &self.full))
    }
}

/// The decay factor of a window, `FIXED_1 / e^(2 s / window)` rounded, as EXP_10s, EXP_60s
/// and EXP_300s of kernel/sched/psi.c were derived (over the nominal 2 s of PSI_FREQ).
pub fn decay_factor(window_s: f64) -> u64 {
    (FIXED_1 as f64 * (-2.0 / window_s).exp()).round() as u64
}

/// Models include/linux/sched/loadavg.h: calc_load(): `load * e + active * (1 - e)` in fixed
/// point, rounded up while the load rises.
pub fn calc_load(load: u64, exp: u64, active: u64) -> u64 {
    let mut new = load * exp + active * (FIXED_1 - exp);
    if active >= load {
        new += FIXED_1 - 1;
    }
    new / FIXED_1
}

/// A fixed-point percentage as psi_show() prints it: LOAD_INT and LOAD_FRAC, two decimals.
fn percent(avg: u64) -> f64 {
    let int = avg >> FSHIFT;
    let frac = ((avg & (FIXED_1 - 1)) * 100) >> FSHIFT;
    int as f64 + frac as f64 / 100.0
}

/// One group's CPU (`struct psi_group_cpu`): its task counts as of `at` and the state times
/// of the period `at` is in, with the changes past `at` not yet counted.
#[derive(Debug)]
struct Slot {
    counts: [u32; 3],
    at: u64,
    /// The end of the period `at` is in (kept to spare a division per change).
    end: u64,
    /// some, full and non-idle time (ns) in the period of `at`.
    acc: [u64; 3],
    pending: VecDeque<(u64, [i8; 3])>,
}

/// A period's CPUs added up: Σ some·nonidle, Σ full·nonidle (nonidle in jiffies), Σ nonidle.
#[derive(Clone, Copy, Debug, Default)]
struct PeriodSum {
    some: u128,
    full: u128,
    nonidle: u64,
}

/// The timing every slot shares.
#[derive(Clone, Copy, Debug)]
struct Clock {
    period: u64,
    jiffy: u64,
}

/// Adds a CPU's times of period `w` (some, full, non-idle ns) to a group's sums, whose first
/// entry is period `first`: get_recent_times() + collect_percpu_times() weigh each CPU by
/// its non-idle time in whole jiffies.
fn add_period(sums: &mut VecDeque<PeriodSum>, first: u64, w: u64, acc: [u64; 3], jiffy: u64) {
    let nonidle = acc[2] / jiffy;
    if nonidle == 0 && acc[0] == 0 {
        return;
    }
    let i = (w - first) as usize;
    if sums.len() <= i {
        sums.resize(i + 1, PeriodSum::default());
    }
    let s = &mut sums[i];
    s.some += acc[0] as u128 * nonidle as u128;
    s.full += acc[1] as u128 * nonidle as u128;
    s.nonidle += nonidle;
}

impl Slot {
    fn new(at: u64) -> Slot {
        Slot { counts: [0; 3], at, end: 0, acc: [0; 3], pending: VecDeque::new() }
    }

    /// Counts the state from `at` up to `to`; each period it closes goes to `sink` (its
    /// index and times).
    #[inline]
    fn integrate(&mut self, to: u64, period: u64, sink: &mut impl FnMut(u64, [u64; 3])) {
        if to <= self.at {
            return;
        }
        if self.counts == [0; 3] && self.acc == [0; 3] {
            // Idle and nothing to close: jump.
            self.at = to;
            return;
        }
        if self.end <= self.at {
            self.end = (self.at / period + 1) * period;
        }
        while self.at < to {
            let end = self.end;
            let upto = to.min(end);
            let d = upto - self.at;
            if self.counts[NONIDLE] > 0 {
                self.acc[2] += d;
            }
            if self.counts[MEMSTALL] > 0 {
                self.acc[0] += d;
                if self.counts[PRODUCTIVE] == 0 {
                    self.acc[1] += d;
                }
            }
            self.at = upto;
            if upto == end {
                sink(end / period - 1, std::mem::take(&mut self.acc));
                self.end += period;
                if self.counts == [0; 3] {
                    self.at = to;
                    return;
                }
            }
        }
    }

    /// Counts the state up to `t`, then applies the change `d`.
    #[inline]
    fn apply(&mut self, t: u64, d: [i8; 3], period: u64, sink: &mut impl FnMut(u64, [u64; 3])) {
        self.integrate(t, period, sink);
        for (n, d) in self.counts.iter_mut().zip(d) {
            *n = n.wrapping_add_signed(d as i32);
        }
    }

    /// Counts the pending changes up to `to`, then the state up to `to`.
    fn process(&mut self, to: u64, period: u64, sink: &mut impl FnMut(u64, [u64; 3])) {
        while let Some(&(t, d)) = self.pending.front() {
            if t > to {
                break;
            }
            self.pending.pop_front();
            self.apply(t, d, period, sink);
        }
        self.integrate(to, period, sink);
    }

    /// Adds a change at `t`, after the changes at or before `t` already pending.
    fn push(&mut self, t: u64, d: [i8; 3]) {
        // The changes are in time order: most come last; the others' place is found by
        // bisection (after the last at or before `t`, as a scan from the back finds it).
        if self.pending.back().is_none_or(|&(p, _)| p <= t) {
            self.pending.push_back((t, d));
        } else {
            let i = self.pending.partition_point(|&(p, _)| p <= t);
            self.pending.insert(i, (t, d));
        }
    }
}

/// A cgroup's pressure state (`struct psi_group`).
#[derive(Debug, Default)]
struct Group {
    slots: Vec<Slot>,
    /// The slot of each CPU the group has seen, by CPU number (`u32::MAX`: none yet).
    slot_of: Vec<u32>,
    /// The sums of the periods from `first` on that CPUs have closed.
    sums: VecDeque<PeriodSum>,
    first: u64,
    /// Totals (ns) of some and full, and what the averages have taken of them.
    total: [u64; 2],
    avg_total: [u64; 2],
    /// avg10, avg60, avg300 of some and full, fixed point percent.
    avg: [[u64; 3]; 2],
}

impl Group {
    fn slot(&mut self, cpu: u32, at: u64) -> u32 {
        let c = cpu as usize;
        if let Some(&s) = self.slot_of.get(c).filter(|&&s| s != u32::MAX) {
            return s;
        }
        let s = self.slots.len() as u32;
        self.slots.push(Slot::new(at));
        if self.slot_of.len() <= c {
            self.slot_of.resize(c + 1, u32::MAX);
        }
        self.slot_of[c] = s;
        s
    }

    /// collect_percpu_times() over the period ending at `end` and update_averages() at `end`.
    fn close(&mut self, end: u64, c: Clock, exp: &[u64; 3]) {
        self.process(end, c);
        let s = self.sums.pop_front().unwrap_or_default();
        self.first += 1;
        let nonidle = s.nonidle.max(1) as u128;
        self.total[0] += (s.some / nonidle) as u64;
        self.total[1] += (s.full / nonidle) as u64;
        for k in 0..2 {
            let sample = (self.total[k] - self.avg_total[k]).min(c.period);
            self.avg_total[k] += sample;
            let pct = sample * 100 / c.period * FIXED_1;
            for (a, &e) in self.avg[k].iter_mut().zip(exp) {
                *a = calc_load(*a, e, pct);
            }
        }
    }

    /// Counts its shared CPUs up to `to`.
    fn process(&mut self, to: u64, c: Clock) {
        let (sums, first) = (&mut self.sums, self.first);
        for slot in &mut self.slots {
            slot.process(to, c.period, &mut |w, acc| add_period(sums, first, w, acc, c.jiffy));
        }
    }

    /// The group as a read shows it (its CPUs counted up to the read, those of a CPU of its
    /// own actor's in `own`): the totals with the open period's share, the averages of the
    /// periods closed.
    fn read(&self, c: Clock, own: &[&Slot]) -> Pressure {
        // Periods some CPUs have closed and the group has not (a CPU of its own counts its
        // changes at once, and may be ahead of the others).
        let mut closed = [0u64; 2];
        for s in &self.sums {
            let n = s.nonidle.max(1) as u128;
            closed[0] += (s.some / n) as u64;
            closed[1] += (s.full / n) as u64;
        }
        let mut s = PeriodSum::default();
        for slot in self.slots.iter().chain(own.iter().copied()) {
            let nonidle = slot.acc[2] / c.jiffy;
            s.some += slot.acc[0] as u128 * nonidle as u128;
            s.full += slot.acc[1] as u128 * nonidle as u128;
            s.nonidle += nonidle;
        }
        let n = s.nonidle.max(1) as u128;
        let line = |k: usize, part: u128| Line {
            avg10: percent(self.avg[k][0]),
            avg60: percent(self.avg[k][1]),
            avg300: percent(self.avg[k][2]),
            total_us: (self.total[k] + closed[k] + (part / n) as u64) / 1000,
        };
        Pressure { some: line(0, s.some), full: line(1, s.full) }
    }
}

/// An actor's state (`task->psi_flags`, `in_memstall`) and where it counts.
#[derive(Debug)]
struct ActorState {
    idle: bool,
    sleeping: bool,
    memstall: bool,
    cpu: u32,
    /// The end of its last operation.
    ran_until: u64,
    /// Its time in memory stalls so far, and when the present one began.
    stalled_ns: u64,
    stall_since: u64,
    /// Its group and the groups above it, and its slot in each for `cpu`.
    groups: Box<[u16]>,
    slots: Box<[u32]>,
}

impl ActorState {
    fn counts(&self) -> [i8; 3] {
        let nonidle = !self.idle || self.memstall;
        [nonidle as i8, self.memstall as i8, (!self.idle && !self.sleeping && !self.memstall) as i8]
    }
}

/// The pressure of every group: see the module's contract.
#[derive(Debug)]
pub struct Psi {
    actors: Vec<ActorState>,
    groups: Vec<Group>,
    clock: Clock,
    exp: [u64; 3],
    frontier: u64,
    next_close: u64,
    /// Whether actors share CPUs (sleeps inside an operation matter only then).
    shared: bool,
    /// Unshared: each actor's CPU, counted once for all its groups.
    own: Vec<Slot>,
}

impl Psi {
    /// A machine of `nr_groups` cgroups (group 0 the root) and actors, each given by its
    /// group chain (its own first, the root last) and its first CPU; `period` is PSI_FREQ in
    /// the model's time, `jiffy` the model's jiffy.
    pub fn new(nr_groups: usize, actors: Vec<(Vec<u16>, u32)>, shared: bool, period: u64, jiffy: u64) -> Psi {
        let mut groups: Vec<Group> = (0..nr_groups).map(|_| Group::default()).collect();
        let actors: Vec<ActorState> = actors
            .into_iter()
            .map(|(chain, cpu)| {
                let slots = if shared { chain.iter().map(|&g| groups[g as usize].slot(cpu, 0)).collect() } else { Box::default() };
                ActorState { idle: true, sleeping: false, memstall: false, cpu, ran_until: 0, stalled_ns: 0, stall_since: 0, groups: chain.into(), slots }
            })
            .collect();
        let clock = Clock { period: period.max(1), jiffy: jiffy.max(1) };
        let own = if shared { Vec::new() } else { (0..actors.len()).map(|_| Slot::new(0)).collect() };
        Psi { actors, groups, clock, exp: WINDOWS_S.map(decay_factor), frontier: 0, next_close: clock.period, shared, own }
    }

    /// The PSI period for a model whose rstat flush period (FLUSH_TIME, 2·HZ jiffies) is
    /// `flush_ns`: PSI_FREQ is 2·HZ + 1 jiffies.
    pub fn period_for(flush_ns: u64) -> (u64, u64) {
        let jiffy = flush_ns / (2 * HZ);
        (jiffy * (2 * HZ + 1), jiffy)
    }

    /// Posts actor `a`'s change of counts at `at` (`before` → its state now).
    fn post(&mut self, a: usize, at: u64, before: [i8; 3]) {
        let after = self.actors[a].counts();
        if after != before {
            self.post_delta(a, at, [after[0] - before[0], after[1] - before[1], after[2] - before[2]]);
        }
    }

    /// Adds `d` to the counts of actor `a`'s CPU in each of its groups at `at`.
    fn post_delta(&mut self, a: usize, at: u64, d: [i8; 3]) {
        let (frontier, c) = (self.frontier, self.clock);
        let actor = &self.actors[a];
        if !self.shared {
            // A CPU of its own: its changes come in order and are counted at once, and what
            // it counts goes to each of the actor's groups.
            let groups = &mut self.groups;
            let slot = &mut self.own[a];
            slot.apply(at.max(slot.at), d, c.period, &mut |w, acc| {
                for &g in actor.groups.iter() {
                    let g = &mut groups[g as usize];
                    add_period(&mut g.sums, g.first, w, acc, c.jiffy);
                }
            });
            return;
        }
        for (&g, &s) in actor.groups.iter().zip(actor.slots.iter()) {
            let group = &mut self.groups[g as usize];
            let slot = &mut group.slots[s as usize];
            slot.push(at.max(slot.at), d);
            if slot.pending.len() > PENDING_MAX {
                let (sums, first) = (&mut group.sums, group.first);
                slot.process(frontier, c.period, &mut |w, acc| add_period(sums, first, w, acc, c.jiffy));
            }
        }
    }

    /// Actor `a` becomes idle (`true`: it sleeps outside an operation, or ended) or runnable
    /// at `at`.
    pub fn set_idle(&mut self, a: usize, at: u64, idle: bool) {
        if self.actors[a].idle == idle {
            return;
        }
        let before = self.actors[a].counts();
        self.actors[a].idle = idle;
        self.post(a, at, before);
    }

    /// Actor `a` ended an operation at `at`; it stays non-idle until its next one begins
    /// later than that (or it waits, or ends).
    #[inline]
    pub fn op_ends(&mut self, a: usize, at: u64) {
        self.actors[a].ran_until = at;
    }

    /// Actor `a`, between operations, waited `ns` for a CPU (runnable, so not idle).
    pub fn runnable_for(&mut self, a: usize, ns: u64) {
        self.actors[a].ran_until += ns;
    }

    /// Actor `a` begins an operation, running from `start`: idle from the end of its last
    /// one if time passed in between.
    #[inline]
    pub fn op_begins(&mut self, a: usize, start: u64) {
        let actor = &self.actors[a];
        if actor.idle {
            self.set_idle(a, start, false);
        } else if start > actor.ran_until {
            let from = actor.ran_until;
            self.set_idle(a, from, true);
            self.set_idle(a, start, false);
        }
    }

    /// Actor `a` sleeps from the end of its last operation (it waits for another, or ended).
    pub fn op_ends_idle(&mut self, a: usize) {
        let at = self.actors[a].ran_until;
        self.set_idle(a, at, true);
    }

    /// Whether actor `a` is idle.
    pub fn is_idle(&self, a: usize) -> bool {
        self.actors[a].idle
    }

    /// psi_memstall_enter() for actor `a` at `at`; returns the flag to hand back to
    /// [`Psi::memstall_leave`] (true: it was already stalled, and the inner section changes
    /// nothing).
    pub fn memstall_enter(&mut self, a: usize, at: u64) -> bool {
        if self.actors[a].memstall {
            return true;
        }
        let before = self.actors[a].counts();
        self.actors[a].memstall = true;
        self.actors[a].stall_since = at;
        self.post(a, at, before);
        false
    }

    /// psi_memstall_leave() for actor `a` at `at`, with the flag its enter returned.
    pub fn memstall_leave(&mut self, a: usize, at: u64, nested: bool) {
        if nested || !self.actors[a].memstall {
            return;
        }
        let before = self.actors[a].counts();
        let actor = &mut self.actors[a];
        actor.memstall = false;
        actor.stalled_ns += at.saturating_sub(actor.stall_since);
        self.post(a, at, before);
    }

    /// Actor `a`'s time in memory stalls so far (the sections it has left): each task's own
    /// share of the pressure, for tests and reports.
    pub fn stalled_ns(&self, a: usize) -> u64 {
        self.actors[a].stalled_ns
    }

    /// Actor `a` sleeps inside an operation from `from` to `to` (an IO wait: TSK_IOWAIT, or
    /// a sleep in a stall), off the CPU but not idle. Only CPUs shared by several actors can
    /// tell this from running.
    pub fn sleep(&mut self, a: usize, from: u64, to: u64) {
        if !self.shared || to <= from || self.actors[a].idle {
            return;
        }
        let before = self.actors[a].counts();
        self.actors[a].sleeping = true;
        self.post(a, from, before);
        let before = self.actors[a].counts();
        self.actors[a].sleeping = false;
        self.post(a, to, before);
    }

    /// Actor `a` is on `cpu` from `at` (a migration moves its counts).
    pub fn set_cpu(&mut self, a: usize, at: u64, cpu: u32) {
        if !self.shared || self.actors[a].cpu == cpu {
            return;
        }
        let counts = self.actors[a].counts();
        if counts != [0; 3] {
            self.post_delta(a, at, counts.map(|x| -x));
        }
        let actor = &mut self.actors[a];
        actor.cpu = cpu;
        for (i, &g) in actor.groups.iter().enumerate() {
            actor.slots[i] = self.groups[g as usize].slot(cpu, at);
        }
        if counts != [0; 3] {
            self.post_delta(a, at, counts);
        }
    }

    /// The machine's frontier moves to `now`: no report will come for a time before it.
    /// Closes the periods it passes.
    pub fn advance(&mut self, now: u64) {
        if now <= self.frontier {
            return;
        }
        self.frontier = now;
        while self.next_close <= self.frontier {
            let end = self.next_close;
            self.process_own(end);
            for g in &mut self.groups {
                g.close(end, self.clock, &self.exp);
            }
            self.next_close += self.clock.period;
        }
    }

    /// Counts the actors' own CPUs up to `to`.
    fn process_own(&mut self, to: u64) {
        let c = self.clock;
        for (slot, actor) in self.own.iter_mut().zip(&self.actors) {
            let groups = &mut self.groups;
            slot.integrate(to, c.period, &mut |w, acc| {
                for &g in actor.groups.iter() {
                    let g = &mut groups[g as usize];
                    add_period(&mut g.sums, g.first, w, acc, c.jiffy);
                }
            });
        }
    }

    /// Every group's pressure as a read at `at` shows it (`at` becomes the frontier).
    pub fn read_all(&mut self, at: u64) -> Vec<Pressure> {
        self.advance(at);
        let (c, frontier) = (self.clock, self.frontier);
        self.process_own(frontier);
        for g in &mut self.groups {
            g.process(frontier, c);
        }
        (0..self.groups.len())
            .map(|g| {
                let own: Vec<&Slot> = self.own.iter().zip(&self.actors).filter(|(_, a)| a.groups.contains(&(g as u16))).map(|(s, _)| s).collect();
                self.groups[g].read(c, &own)
            })
            .collect()
    }

    /// Bytes held: the actors, the groups' CPUs and their pending changes.
    pub fn state_bytes(&self) -> usize {
        let slots: usize = self.groups.iter().map(|g| g.slots.iter().map(|s| std::mem::size_of::<Slot>() + s.pending.capacity() * 32).sum::<usize>()).sum();
        slots + self.actors.len() * std::mem::size_of::<ActorState>() + self.own.len() * std::mem::size_of::<Slot>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_factors_are_the_kernels() {
        // EXP_10s, EXP_60s, EXP_300s of kernel/sched/psi.c.
        assert_eq!(WINDOWS_S.map(decay_factor), [1677, 1981, 2034]);
    }

    #[test]
    fn percent_prints_two_decimals_of_the_fixed_point() {
        assert_eq!(percent(FIXED_1 * 12 + FIXED_1 / 2), 12.5);
        assert_eq!(percent(0), 0.0);
    }

    fn one_group(shared: bool, actors: usize, cpus: &[u32]) -> Psi {
        Psi::new(1, (0..actors).map(|a| (vec![0], cpus[a])).collect(), shared, 2_004_000_000, 4_000_000)
    }

    #[test]
    fn reports_out_of_order_across_actors_count_as_in_order() {
        // Two actors on one CPU: a stalls over [1 s, 1.5 s), b runs over [0, 1.2 s).
        let mut in_order = one_group(true, 2, &[0, 0]);
        in_order.set_idle(1, 0, false);
        in_order.set_idle(0, 1_000_000_000, false);
        let f = in_order.memstall_enter(0, 1_000_000_000);
        in_order.set_idle(1, 1_200_000_000, true);
        in_order.memstall_leave(0, 1_500_000_000, f);
        let mut reversed = one_group(true, 2, &[0, 0]);
        reversed.set_idle(0, 1_000_000_000, false);
        let f = reversed.memstall_enter(0, 1_000_000_000);
        reversed.memstall_leave(0, 1_500_000_000, f);
        reversed.set_idle(1, 0, false);
        reversed.set_idle(1, 1_200_000_000, true);
        let a = in_order.read_all(3_000_000_000);
        let b = reversed.read_all(3_000_000_000);
        assert_eq!(a, b);
        // some: 0.5 s; full: from 1.2 s (b idle) to 1.5 s.
        assert_eq!(a[0].some.total_us, 500_000);
        assert_eq!(a[0].full.total_us, 300_000);
    }
}
