//! The scheduler's model (the kernel's kernel/sched): `machine.cpus = N` CPUs, N ≥ 2, shared
//! by the tasks and the kernel threads.
//!
//! # Contract
//!
//! - **Who asks.** An actor asks for a CPU each time it becomes runnable: a task before each
//!   operation (after its think time, which is a sleep), kswapd before each step of its
//!   node's balancing, the flusher before each run. It asks at its own clock, from its CPU
//!   set (a workload's `cpus`, or every CPU).
//! - **Where it runs: per-CPU run queues** ([`Cpus::acquire`]; models kernel/sched/fair.c:
//!   select_task_rq_fair() → select_idle_sibling() → select_idle_cpu(), and the pull of
//!   sched_balance_newidle() → load_balance(), 6.1, 6.12, 7.3). A CPU is *idle* at a time
//!   when the bursts granted on it (the one running and those queued) end by then.
//!   1. Its last CPU, if idle at its clock (select_idle_sibling()'s target = prev).
//!   2. Else the first idle CPU of its set in the last CPU's cache domain (`sd_llc`; in
//!      pagelab the last CPU's node), searched from the last CPU + 1 round to it, as
//!      select_idle_cpu()'s for_each_cpu_wrap(…, target + 1) searches.
//!   3. Else it waits on its last CPU's run queue: it starts when the bursts granted there
//!      end. A task that is preempted (it asks again without sleeping) stays there too, as
//!      the kernel keeps a runnable task on its run queue.
//!   4. Except: a CPU of that domain with at least two actors fewer than the last CPU
//!      (an actor of a CPU: one whose last CPU it is, runnable or asleep, until it exits)
//!      that frees before the last CPU's queue ends pulls it, when it frees. This stands for
//!      load_balance(), from newidle balance or the periodic one: it moves a task from the
//!      busiest run queue when that evens the load out (calculate_imbalance() between CPUs
//!      of equal capacity), never the running one.
//!
//!   A first placement (no last CPU) takes the CPU of the set with the fewest actors (ties:
//!   the one free first, then the lowest number), as fork balancing's
//!   sched_balance_find_dst_cpu() (find_idlest_cpu() in 6.1) takes the least loaded.
//!   Not modeled: wake_affine() (the waker's CPU as target: pagelab's tasks wake from their
//!   own timers and IO), `recent_used_cpu`, idle cores (no SMT), SIS_UTIL's cut of the idle
//!   search on a busy LLC, load by PELT (an actor counts 1 on its CPU, asleep or not),
//!   task_hot()'s refusal to move a task that ran within `sysctl_sched_migration_cost`
//!   (500 µs) until a balance has failed (in the kernel a few milliseconds' delay), the
//!   balance intervals, and balancing across nodes. A load that differs by one actor is
//!   left alone: three tasks on two CPUs share 1/2, 1/2 and 1 of a CPU, where the kernel's
//!   periodic balancing, once a balance has failed, moves a task every few milliseconds and
//!   evens the shares out over a longer run.
//!   Each change of CPU counts in the actor's `migrations` (schedstat's `nr_migrations`).
//!   Its clock to its start is its run-queue wait ([`Grant::wait`]).
//! - **What it holds.** The CPU, for the CPU time its work charges (`Mm::cpu`, the spinning on
//!   a contended lock included), as one burst from its start. Its IO waits are counted after
//!   the burst and leave the CPU to the others. This is pagelab's approximation, not a
//!   kernel rule: an operation's CPU work and its waits are not interleaved on the CPU.
//!   One exception: a task's direct or memcg reclaim ends its burst at a cond_resched()
//!   point when another actor's clock is earlier (`Mm::cond_resched`), and asks again for a
//!   CPU when its own clock is the earliest (sim/machine's `resched.rs`), so concurrent
//!   reclaimers share the lists batch by batch as the kernel's CPUs do.
//! - **In which order.** Actors ask in the order of their clocks: the machine steps the task
//!   whose clock is earliest and runs the kernel threads' events when they are due. A CPU's
//!   bursts are therefore only ever appended, and each CPU needs only the time it is free.
//! - **Sharing.** The tasks queued on a CPU take it in turn, an operation at a time, in the
//!   order they asked. With operations of equal cost each task of a run queue gets an
//!   equal share, as CFS (5.7, 6.1: `pick_next_entity()` runs the least virtual runtime)
//!   and EEVDF (6.12, 7.3: `pick_eevdf()`, the eligible entity with the earliest virtual
//!   deadline) give tasks of equal weight over a slice; tasks spread evenly over their CPUs
//!   (2 a CPU, as the seed's 72 jobs on 36) share every CPU equally. Not modeled: slices
//!   (a task with long operations gets more than its share), wake-up preemption, migration
//!   costs, nice levels.
//! - **Unset.** Without `machine.cpus` every task and kernel thread runs on a CPU of its own
//!   and none of this applies; `machine.cpus = 1` is the one-CPU model of
//!   [`crate::mm::time::OneCpu`] (kswapd and one task, with 6.12's EEVDF turns).
//!
//! What a CPU did is counted per CPU ([`CpuStat`]): busy time, and of it reclaim (direct
//! reclaim by tasks, and kswapd) and the time spent spinning on locks.

pub mod psi;

use serde::Serialize;

/// The most CPUs a machine can have (`machine.cpus`).
pub const MAX_CPUS: u32 = 1024;

/// A set of CPUs, as a workload's `cpus` gives it: `"0-35"`, `"0,2,4-7"`, or a count N (the
/// first N CPUs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuSet {
    /// Its runs of consecutive CPUs, ascending and apart (`"0,2,4-7"` is (0, 0), (2, 2),
    /// (4, 7)), shared by the tasks of a workload (a machine of 1,024 CPUs and thousands of
    /// tasks holds one list a workload). [`Cpus::acquire`] searches each run as a whole.
    runs: std::sync::Arc<[(u32, u32)]>,
}

impl CpuSet {
    /// Every CPU of a machine of `n`.
    pub fn all(n: u32) -> CpuSet {
        CpuSet { runs: [(0, n - 1)].into() }
    }

    /// Parses a CPU list (the kernel's cpulist format, as `taskset -c` and fio's
    /// `cpus_allowed` take it) for a machine of `n` CPUs.
    pub fn parse(text: &str, n: u32) -> Result<CpuSet, String> {
        let mut runs = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (cpu_number(a, n)?, cpu_number(b, n)?),
                None => {
                    let c = cpu_number(part, n)?;
                    (c, c)
                }
            };
            if lo > hi {
                return Err(format!("`{part}` runs backwards: write the lower CPU first"));
            }
            runs.push((lo, hi));
        }
        runs.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(runs.len());
        for (lo, hi) in runs {
            match merged.last_mut() {
                Some(last) if lo <= last.1 + 1 => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        Ok(CpuSet { runs: merged.into() })
    }

    /// The first `count` CPUs of a machine of `n`.
    pub fn first(count: u32, n: u32) -> Result<CpuSet, String> {
        if count == 0 || count > n {
            return Err(format!("{count} CPUs: the machine has {n} (machine.cpus); give 1 to {n}"));
        }
        Ok(CpuSet::all(count))
    }

    pub fn len(&self) -> usize {
        self.runs.iter().map(|&(lo, hi)| (hi - lo + 1) as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs.iter().flat_map(|&(lo, hi)| lo..=hi)
    }
}

fn cpu_number(s: &str, n: u32) -> Result<u32, String> {
    let c: u32 = s.trim().parse().map_err(|_| format!("`{}` is not a CPU number", s.trim()))?;
    if c >= n {
        return Err(format!("CPU {c} does not exist: the machine has CPUs 0 to {} (machine.cpus = {n})", n - 1));
    }
    Ok(c)
}

/// What one CPU did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CpuStat {
    /// Time running anything.
    pub busy_ns: u64,
    /// Of it, reclaim: tasks' direct and memcg reclaim, and kswapd.
    pub reclaim_ns: u64,
    /// Of it, spinning on contended locks.
    pub lock_spin_ns: u64,
    /// Bursts run (task operations, kernel-thread steps).
    pub runs: u64,
}

/// A CPU handed to an actor: which, and from when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    pub cpu: u32,
    pub start: u64,
    /// The time runnable without a CPU.
    pub wait: u64,
}

/// What an actor did in its burst: the CPU time it charged, and of it reclaim and spinning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Burst {
    pub cpu_ns: u64,
    pub reclaim_ns: u64,
    pub lock_spin_ns: u64,
}

/// An actor's CPU and reclaim time so far: what [`Sched::begin`] and [`Sched::end`] take the
/// difference of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub cpu_ns: u64,
    pub reclaim_ns: u64,
}

/// The machine's CPUs.
#[derive(Clone, Debug)]
pub struct Cpus {
    /// When each CPU is free, as a tournament tree: leaf `leaves + c` holds the [`key`] of
    /// (the time CPU c is free, c), each inner node `i` the least of its children `2i` and
    /// `2i + 1`, the root at 1. The padding leaves past the last CPU hold `u128::MAX` and
    /// never win. [`Cpus::acquire`] finds the lowest CPU of a run idle at a time in
    /// O(log n), not by a scan.
    tree: Vec<u128>,
    /// The number of leaves: the CPUs, rounded up to a power of two.
    leaves: usize,
    n: u32,
    /// The CPUs that share a last-level cache (the kernel's `sd_llc` domain; in pagelab a
    /// node's CPUs), and each CPU's index in it.
    llcs: Vec<CpuSet>,
    llc_of: Vec<u32>,
    /// Each CPU's actors: those whose last CPU it is, runnable or asleep (a task leaves at its
    /// exit), the model's stand-in for a run queue's load; and how many CPUs have each count.
    homed: Vec<u32>,
    by_homed: Vec<u32>,
    pub stats: Vec<CpuStat>,
}

impl Cpus {
    /// `n` CPUs sharing one last-level cache.
    pub fn new(n: u32) -> Cpus {
        Cpus::with_llcs(n, vec![CpuSet::all(n)])
    }

    /// `n` CPUs, each sharing a cache with those of its set in `llcs` (a CPU in several: the
    /// last; in none: the first).
    pub fn with_llcs(n: u32, llcs: Vec<CpuSet>) -> Cpus {
        let mut llc_of = vec![0; n as usize];
        for (i, set) in llcs.iter().enumerate() {
            set.iter().for_each(|c| llc_of[c as usize] = i as u32);
        }
        let leaves = (n as usize).next_power_of_two();
        let mut tree = vec![u128::MAX; 2 * leaves];
        for c in 0..n {
            tree[leaves + c as usize] = key(0, c);
        }
        for i in (1..leaves).rev() {
            tree[i] = tree[2 * i].min(tree[2 * i + 1]);
        }
        let (homed, by_homed) = (vec![0; n as usize], vec![n]);
        Cpus { tree, leaves, n, llcs, llc_of, homed, by_homed, stats: vec![CpuStat::default(); n as usize] }
    }

    pub fn len(&self) -> u32 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// An actor runnable at `at` asks for a CPU of `set`, having last run on `last` (the
    /// rules of the contract, [`crate::sched`]): `last` if it is idle; else the first idle
    /// CPU of the set in `last`'s cache domain, searched from `last + 1` round; else
    /// `last`'s run queue, unless a CPU of that domain with at least two actors fewer frees
    /// before, which pulls it. A first placement (`last` unset) takes the CPU of the set
    /// with the fewest actors (ties: the one free first, then the lowest).
    pub fn acquire(&self, set: &CpuSet, last: Option<u32>, at: u64) -> Grant {
        let Some(l) = last else { return self.idlest(set, at) };
        let queued = self.free_at(l);
        if queued <= at {
            return Grant { cpu: l, start: at, wait: 0 };
        }
        let domain = || intersect(&set.runs, &self.llcs[self.llc_of[l as usize] as usize].runs);
        let after = domain().filter_map(|(lo, hi)| self.lowest_free_within(lo.max(l + 1), hi, at)).next();
        if let Some(cpu) = after.or_else(|| domain().filter_map(|(lo, hi)| self.lowest_free_within(lo, hi.min(l), at)).next()) {
            return Grant { cpu, start: at, wait: 0 };
        }
        let most = self.homed[l as usize].checked_sub(2);
        if let Some(most) = most.filter(|&m| self.by_homed[..=m as usize].iter().any(|&n| n > 0)) {
            let lighter = domain().flat_map(|(lo, hi)| lo..=hi).filter(|&c| self.homed[c as usize] <= most);
            if let Some((start, cpu)) = lighter.map(|c| (self.free_at(c).max(at), c)).min().filter(|&(start, _)| start < queued) {
                return Grant { cpu, start, wait: start - at };
            }
        }
        Grant { cpu: l, start: queued, wait: queued - at }
    }

    /// The CPU of `set` with the fewest actors (ties: the one free first from `at`, then the
    /// lowest), and when.
    fn idlest(&self, set: &CpuSet, at: u64) -> Grant {
        let (_, start, cpu) = set.iter().map(|c| (self.homed[c as usize], self.free_at(c).max(at), c)).min().expect("a CPU set has a CPU");
        Grant { cpu, start, wait: start - at }
    }

    /// An actor that ran on `from` (none: a first placement) runs on `to` now.
    pub fn rehome(&mut self, from: Option<u32>, to: u32) {
        if from == Some(to) {
            return;
        }
        if let Some(c) = from {
            self.leave(c);
        }
        let n = &mut self.homed[to as usize];
        self.by_homed[*n as usize] -= 1;
        *n += 1;
        if self.by_homed.len() <= *n as usize {
            self.by_homed.push(0);
        }
        self.by_homed[*n as usize] += 1;
    }

    /// An actor whose last CPU is `c` exits.
    pub fn leave(&mut self, c: u32) {
        let n = &mut self.homed[c as usize];
        self.by_homed[*n as usize] -= 1;
        *n -= 1;
        self.by_homed[*n as usize] += 1;
    }

    /// The lowest CPU of `lo..=hi` idle at `at` (none when the range is empty).
    fn lowest_free_within(&self, lo: u32, hi: u32, at: u64) -> Option<u32> {
        (lo <= hi).then(|| self.lowest_free(1, 0, self.leaves, (lo as usize, hi as usize + 1), at)).flatten()
    }

    /// The lowest CPU of `run` (lo..hi) free by `at`, under node `i`, which covers the CPUs
    /// `from..from + width`: a subtree whose least is not free by `at` has none.
    fn lowest_free(&self, i: usize, from: usize, width: usize, run: (usize, usize), at: u64) -> Option<u32> {
        if from >= run.1 || from + width <= run.0 || free_time(self.tree[i]) > at {
            return None;
        }
        if width == 1 {
            return Some(from as u32);
        }
        let half = width / 2;
        self.lowest_free(2 * i, from, half, run, at).or_else(|| self.lowest_free(2 * i + 1, from + half, half, run, at))
    }

    /// The burst of the actor granted `g` ended: its CPU is busy until `g.start` plus the CPU
    /// time it charged.
    pub fn release(&mut self, g: Grant, b: Burst) {
        let c = g.cpu as usize;
        let mut i = self.leaves + c;
        self.tree[i] = key(g.start + b.cpu_ns, g.cpu);
        while i > 1 {
            i /= 2;
            self.tree[i] = self.tree[2 * i].min(self.tree[2 * i + 1]);
        }
        let s = &mut self.stats[c];
        s.busy_ns += b.cpu_ns;
        s.reclaim_ns += b.reclaim_ns;
        s.lock_spin_ns += b.lock_spin_ns;
        s.runs += 1;
    }

    /// When CPU `c` is free.
    pub fn free_at(&self, c: u32) -> u64 {
        free_time(self.tree[self.leaves + c as usize])
    }
}

/// The runs of CPUs in both `a` and `b` (each ascending and apart), ascending.
fn intersect<'a>(a: &'a [(u32, u32)], b: &'a [(u32, u32)]) -> impl Iterator<Item = (u32, u32)> + 'a {
    a.iter().flat_map(move |&(lo, hi)| b.iter().map(move |&(l, h)| (lo.max(l), hi.min(h))).filter(|&(lo, hi)| lo <= hi))
}

/// A CPU's place in [`Cpus`]' tree: its free time above its number, so that keys order as
/// the pairs (free time, CPU) do.
fn key(free: u64, cpu: u32) -> u128 {
    ((free as u128) << 32) | cpu as u128
}

/// The free time of a [`key`].
fn free_time(key: u128) -> u64 {
    (key >> 32) as u64
}

/// An actor's place in the scheduler: its CPU set, the CPU it last ran on, and its waits.
#[derive(Clone, Debug)]
pub struct Entity {
    pub set: CpuSet,
    pub last: Option<u32>,
    /// Runnable without a CPU (schedstat's run-queue wait).
    pub runq_wait_ns: u64,
    /// Spinning on contended locks (part of its CPU time).
    pub lock_spin_ns: u64,
    /// Bursts that waited for a CPU.
    pub waits: u64,
    /// Bursts on another CPU than the one before (schedstat's `nr_migrations`; the first
    /// placement is not one).
    pub migrations: u64,
    /// A task that exited (no longer one of its CPU's actors).
    pub exited: bool,
}

impl Entity {
    pub fn new(set: CpuSet) -> Entity {
        Entity { set, last: None, runq_wait_ns: 0, lock_spin_ns: 0, waits: 0, migrations: 0, exited: false }
    }
}

/// Which actor a burst belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    Task(usize),
    /// The kswapd of node `nid`.
    Kswapd(usize),
}

/// The scheduler of a machine of several CPUs: the CPUs, the tasks' and kswapds' places, and
/// the burst in progress (one at a time: the machine runs one actor's work at once).
#[derive(Clone, Debug)]
pub struct Sched {
    pub cpus: Cpus,
    pub tasks: Vec<Entity>,
    /// Each node's kswapd, on its node's CPUs (kswapd() of 6.1/6.12 binds itself to
    /// cpumask_of_node() of its pgdat).
    pub kswapd: Vec<Entity>,
    /// The burst in progress: whose, its grant, and the actor's usage and lock spin at its
    /// start.
    current: Option<(Who, Grant, Usage, u64)>,
    /// No actor asks for anything before this time any more: the latest request time of a
    /// task's burst (tasks begin in the order of their clocks, kswapd's steps due by then
    /// have run). A lock forgets the sections that end before it.
    pub horizon: u64,
    /// The most busy spans each lock's calendar keeps ([`crate::locking::CALENDAR`]; tests
    /// make it small to see a calendar overflow).
    pub calendar: usize,
    /// The furthest a lock request was ahead of the horizon: how far the actors' clocks
    /// spread (one long operation runs whole ahead of the others).
    pub horizon_lag_max_ns: u64,
    /// Times a task's reclaim left its CPU at a cond_resched() point because another
    /// actor's clock was earlier (`sim/machine/resched.rs`).
    pub reclaim_yields: u64,
}

impl Sched {
    /// `n` CPUs of one node; its kswapd may run on any.
    pub fn new(n: u32, tasks: Vec<Entity>) -> Sched {
        Sched::with_nodes(n, tasks, vec![CpuSet::all(n)])
    }

    /// `n` CPUs, one kswapd for each node's CPU set of `nodes`.
    pub fn with_nodes(n: u32, tasks: Vec<Entity>, nodes: Vec<CpuSet>) -> Sched {
        Sched {
            cpus: Cpus::with_llcs(n, nodes.clone()),
            tasks,
            kswapd: nodes.into_iter().map(Entity::new).collect(),
            current: None,
            horizon: 0,
            calendar: crate::locking::CALENDAR,
            horizon_lag_max_ns: 0,
            reclaim_yields: 0,
        }
    }

    fn entity(&mut self, who: Who) -> &mut Entity {
        match who {
            Who::Task(t) => &mut self.tasks[t],
            Who::Kswapd(nid) => &mut self.kswapd[nid],
        }
    }

    /// `who`, runnable at `at`, asks for a CPU: the grant (see [`Cpus::acquire`]). The burst
    /// begins when [`Sched::begin`] is called with it.
    pub fn acquire(&self, who: Who, at: u64) -> Grant {
        let e = match who {
            Who::Task(t) => &self.tasks[t],
            Who::Kswapd(nid) => &self.kswapd[nid],
        };
        self.cpus.acquire(&e.set, e.last, at)
    }

    /// The burst of `who` under grant `g` begins, the actor's usage so far `at_start` (its
    /// lock spin is the scheduler's own count).
    pub fn begin(&mut self, who: Who, g: Grant, at_start: Usage) {
        if let Who::Task(_) = who {
            // Tasks begin in the order of their clocks, after the events due by then.
            self.horizon = self.horizon.max(g.start - g.wait);
        }
        let e = self.entity(who);
        e.runq_wait_ns += g.wait;
        e.waits += (g.wait > 0) as u64;
        e.migrations += e.last.is_some_and(|l| l != g.cpu) as u64;
        let from = e.last.replace(g.cpu);
        let spin = e.lock_spin_ns;
        self.cpus.rehome(from, g.cpu);
        self.current = Some((who, g, at_start, spin));
    }

    /// Task `t` exits: it leaves its CPU's actors.
    pub fn exit(&mut self, t: usize) {
        if let Some(c) = self.tasks[t].last {
            if !std::mem::replace(&mut self.tasks[t].exited, true) {
                self.cpus.leave(c);
            }
        }
    }

    /// The burst in progress ends, the actor's usage now `at_end`: its CPU is busy for the
    /// difference.
    pub fn end(&mut self, at_end: Usage) {
        let Some((who, g, start, spin_start)) = self.current.take() else { return };
        let cpu_ns = at_end.cpu_ns - start.cpu_ns;
        let b = Burst { cpu_ns, reclaim_ns: (at_end.reclaim_ns - start.reclaim_ns).min(cpu_ns), lock_spin_ns: self.entity(who).lock_spin_ns - spin_start };
        self.cpus.release(g, b);
    }

    /// The CPU of the burst in progress.
    pub fn current_cpu(&self) -> Option<u32> {
        self.current.map(|(_, g, ..)| g.cpu)
    }

    /// The actor of the burst in progress spun `ns` on a contended lock.
    pub fn spun(&mut self, ns: u64) {
        if let Some((who, ..)) = self.current {
            self.entity(who).lock_spin_ns += ns;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn burst(ns: u64) -> Burst {
        Burst { cpu_ns: ns, ..Burst::default() }
    }

    #[test]
    fn an_actor_gets_the_cpu_free_first_and_waits_for_it() {
        let mut c = Cpus::new(2);
        let all = CpuSet::all(2);
        let a = c.acquire(&all, None, 0);
        c.release(a, burst(100));
        let b = c.acquire(&all, None, 0);
        assert_eq!((b.cpu, b.start, b.wait), (1, 0, 0), "the other CPU is idle");
        c.release(b, burst(50));
        let x = c.acquire(&all, None, 10);
        assert_eq!((x.cpu, x.start, x.wait), (1, 50, 40), "CPU 1 frees first");
    }

    /// Cpus busy until the times `free` gives (one a CPU), each by a burst from 0.
    fn busy(free: &[u64], llcs: Vec<CpuSet>) -> Cpus {
        let mut c = Cpus::with_llcs(free.len() as u32, llcs);
        for (cpu, &f) in free.iter().enumerate() {
            c.release(Grant { cpu: cpu as u32, start: 0, wait: 0 }, burst(f));
        }
        c
    }

    #[test]
    fn a_woken_task_runs_on_its_previous_cpu_when_idle() {
        let c = Cpus::new(4);
        let g = c.acquire(&CpuSet::all(4), Some(3), 7);
        assert_eq!((g.cpu, g.start), (3, 7));
    }

    #[test]
    fn select_idle_cpu_searches_from_the_previous_cpu_on_and_wraps() {
        // CPUs 2 and 7 idle at 100; the task last ran on 5.
        let c = busy(&[900, 900, 0, 900, 900, 900, 900, 0], vec![CpuSet::all(8)]);
        assert_eq!(c.acquire(&CpuSet::all(8), Some(5), 100), Grant { cpu: 7, start: 100, wait: 0 });
        assert_eq!(c.acquire(&CpuSet::parse("0-6", 8).unwrap(), Some(5), 100), Grant { cpu: 2, start: 100, wait: 0 }, "round to 2");
    }

    #[test]
    fn the_idle_search_stays_in_the_previous_cpus_cache_domain() {
        let c = busy(&[900, 900, 0, 0], vec![CpuSet::parse("0-1", 4).unwrap(), CpuSet::parse("2-3", 4).unwrap()]);
        assert_eq!(c.acquire(&CpuSet::all(4), Some(0), 100), Grant { cpu: 0, start: 900, wait: 800 }, "2 and 3 are another node's");
    }

    /// `n[c]` actors on each CPU c.
    fn homed(c: &mut Cpus, n: &[u32]) {
        for (cpu, &k) in n.iter().enumerate() {
            (0..k).for_each(|_| c.rehome(None, cpu as u32));
        }
    }

    #[test]
    fn a_preempted_task_waits_on_its_own_run_queue() {
        // CPU 1 frees first, but it has as many actors as CPU 0: the task stays queued on 0.
        let mut c = busy(&[20_000, 10_000], vec![CpuSet::all(2)]);
        homed(&mut c, &[2, 2]);
        assert_eq!(c.acquire(&CpuSet::all(2), Some(0), 5_000), Grant { cpu: 0, start: 20_000, wait: 15_000 });
    }

    #[test]
    fn an_idle_cpu_pulls_a_queued_task() {
        // CPU 1, with two actors fewer, goes idle at 10 µs and pulls the task queued on CPU 0.
        let mut c = busy(&[20_000, 10_000], vec![CpuSet::all(2)]);
        homed(&mut c, &[3, 1]);
        assert_eq!(c.acquire(&CpuSet::all(2), Some(0), 5_000), Grant { cpu: 1, start: 10_000, wait: 5_000 });
        c.leave(0);
        assert_eq!(c.acquire(&CpuSet::all(2), Some(0), 5_000).cpu, 0, "2 against 1: left alone");
    }

    #[test]
    fn fork_balancing_places_a_new_task_on_the_cpu_with_the_fewest() {
        let mut c = busy(&[0, 10_000, 10_000], vec![CpuSet::all(3)]);
        homed(&mut c, &[2, 1, 1]);
        assert_eq!(c.acquire(&CpuSet::all(3), None, 0), Grant { cpu: 1, start: 10_000, wait: 10_000 }, "not the idle CPU 0");
    }

    #[test]
    fn tasks_that_outnumber_the_cpus_share_them_equally() {
        // Four tasks of equal operations on two CPUs, stepped in the order of their clocks
        // as the machine steps them: each runs half the time.
        let mut c = Cpus::new(2);
        let all = CpuSet::all(2);
        let mut clock = [0u64; 4];
        let mut last = [None; 4];
        let mut ops = [0u64; 4];
        for _ in 0..4000 {
            let t = (0..4).min_by_key(|&t| (clock[t], t)).unwrap();
            let g = c.acquire(&all, last[t], clock[t]);
            c.release(g, burst(10));
            clock[t] = g.start + 10;
            last[t] = Some(g.cpu);
            ops[t] += 1;
        }
        assert!(ops.iter().all(|&n| n == 1000), "{ops:?}");
        let end = *clock.iter().max().unwrap();
        assert_eq!(end, 4000 * 10 / 2, "two CPUs, no idle time");
    }

    #[test]
    fn a_cpu_set_confines_its_tasks() {
        let mut c = Cpus::new(4);
        let one = CpuSet::parse("2", 4).unwrap();
        let a = c.acquire(&one, None, 0);
        c.release(a, burst(30));
        let b = c.acquire(&one, None, 0);
        assert_eq!((a.cpu, b.cpu, b.start), (2, 2, 30), "CPUs 0, 1 and 3 idle, but not in the set");
    }

    #[test]
    fn cpu_lists_parse_as_the_kernel_writes_them() {
        assert_eq!(CpuSet::parse("0-3,6, 8-9", 16).unwrap().iter().collect::<Vec<_>>(), [0, 1, 2, 3, 6, 8, 9]);
        assert!(CpuSet::parse("3-1", 4).unwrap_err().contains("backwards"));
        assert!(CpuSet::parse("0-4", 4).unwrap_err().contains("CPUs 0 to 3"));
        assert!(CpuSet::parse("x", 4).unwrap_err().contains("not a CPU number"));
        assert!(CpuSet::first(5, 4).is_err());
        assert_eq!(CpuSet::first(2, 4).unwrap(), CpuSet::parse("0-1", 4).unwrap());
        assert_eq!(CpuSet::parse("4-5,0-3,2,7", 8).unwrap(), CpuSet::parse("0-5,7", 8).unwrap(), "runs merge");
    }

    #[test]
    fn the_placement_is_the_one_a_scan_of_the_run_queues_finds() {
        // The tree's answer against a scan of the rules: the fewest actors for a first
        // placement; the last CPU if idle; the first idle CPU of set ∩ its node from last + 1
        // round; a pull by the CPU of set ∩ node with two actors fewer free first, if before
        // the last CPU's queue ends; else that queue. Free times from a few values, so that
        // ties are common.
        let sets = ["0-36", "0", "36", "1-3,7,9-20,30-35", "5,10,15,20,25,30,35", "0-17", "18-36"];
        let nodes = vec![CpuSet::parse("0-17", 37).unwrap(), CpuSet::parse("18-36", 37).unwrap()];
        let mut c = Cpus::with_llcs(37, nodes.clone());
        let mut rng = pagelab_workload::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut next = |m: u64| rng.below(m);
        let mut n = [0u32; 37];
        for round in 0..20_000 {
            let set = CpuSet::parse(sets[round % sets.len()], 37).unwrap();
            // An actor of the CPU drawn, if it has one.
            let last = (round % 3 > 0).then(|| set.iter().nth(next(set.len() as u64) as usize).unwrap()).filter(|&l| n[l as usize] > 0);
            let at = 10 * next(8);
            let first = |cpus: &mut dyn Iterator<Item = u32>| cpus.map(|cpu| (c.free_at(cpu).max(at), cpu)).min().unwrap();
            let want = match last {
                None => set.iter().map(|x| (n[x as usize], c.free_at(x).max(at), x)).min().map(|(_, s, x)| (s, x)).unwrap(),
                Some(l) if c.free_at(l) <= at => (at, l),
                Some(l) => {
                    let node = &nodes[(l >= 18) as usize];
                    let domain: Vec<u32> = set.iter().filter(|&x| node.iter().any(|y| y == x)).collect();
                    let idle = domain.iter().copied().filter(|&x| c.free_at(x) <= at).min_by_key(|&x| (x <= l, x));
                    let mut lighter = domain.iter().copied().filter(|&x| n[x as usize] + 2 <= n[l as usize]).peekable();
                    match (idle, lighter.peek().is_some().then(|| first(&mut lighter))) {
                        (Some(x), _) => (at, x),
                        (None, Some((start, x))) if start < c.free_at(l) => (start, x),
                        _ => (c.free_at(l), l),
                    }
                }
            };
            let g = c.acquire(&set, last, at);
            assert_eq!((g.start, g.cpu, g.wait), (want.0, want.1, want.0 - at), "round {round}");
            c.release(Grant { start: 10 * next(8), ..g }, burst(10 * next(4)));
            c.rehome(last, g.cpu);
            n[g.cpu as usize] += (last != Some(g.cpu)) as u32;
            if let Some(l) = last.filter(|&l| l != g.cpu) {
                n[l as usize] -= 1;
            }
            if next(4) == 0 {
                // An actor exits.
                if let Some(x) = (0..37).find(|&x| n[x as usize] > 0 && next(2) == 0) {
                    c.leave(x);
                    n[x as usize] -= 1;
                }
            }
        }
    }
}
