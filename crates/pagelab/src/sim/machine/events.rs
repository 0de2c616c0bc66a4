//! The event loop: [`Machine::run`] and [`Machine::step`] choose the runnable task with the
//! earliest clock (`next_task`) and perform its next operation (`step_task`: limits,
//! lockstep, pacing, then `apply` between `begin_op` and `end_op`); before each operation the
//! timed events due by the task's clock run (`run_due_events`: IO completions, the rstat
//! flush, the writeback flusher, kswapd, vmstat_update, kcompactd and the samples, in
//! `Event` order). A machine whose one task replays a trace of reads runs the same calls
//! in a loop of its own (`run_trace_reads`).

use pagelab_workload::{Access, Op};

use super::{Machine, LOOKAHEAD};
use crate::mm::vmscan::{kswapd_due, kswapd_step};
use crate::mm::{Actor, Mm};
use crate::policy::Policy;
use crate::sim::scenario::Scenario;

use super::ops::OpSource;

/// The machine's timed events besides the tasks' operations. When two fall due at the same
/// time they run in this order (the derived `Ord`): IO completions first, so what they free
/// is seen by the periodic work after them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A page's writeback or swap-out IO completes (`folio_end_writeback()`).
    WritebackDone,
    /// The periodic rstat flush of memcg statistics (`flush_memcg_stats_dwork()`, every 2 s).
    RstatFlush,
    /// The writeback flusher's periodic run (`wb_workfn()`, every dirty_writeback_centisecs).
    Flusher,
    /// A node's kswapd's next step (`balance_pgdat()` of node `nid`); the nodes' kswapds due
    /// at one time run in node order.
    Kswapd(usize),
    /// The per-CPU vmstat refresh (`vmstat_update()`, every sysctl_stat_interval): on 6.12
    /// it decays the per-CPU free lists' `high` (decay_pcp_high()).
    VmstatUpdate,
    /// kcompactd's timeout (`HPAGE_FRAG_CHECK_INTERVAL_MSEC`, every 500 ms): a wake-up
    /// that found no zone suitable left it work to do then (machines with non-movable
    /// pageblocks only).
    Kcompactd,
    /// A scenario's `[[event]]`: a write to a cgroup's memory.reclaim, memory.high or
    /// memory.max (mm/memcontrol.c: memory_reclaim(), memory_high_write(),
    /// memory_max_write()), by a process outside the workloads.
    CgroupWrite,
    /// A controller's tick (`[[controller]]`, or the caller's): it reads the cgroups and
    /// acts on them as a process outside the workloads (`machine/control.rs`).
    Control,
    /// A sample of the counters for the run's series.
    Sample,
}

/// Machines with more tasks than this choose the next one from a heap, not by a scan.
pub(super) const TASK_SCAN_MAX: usize = 16;

/// The tasks as a min-heap of (clock, task). Clocks only grow, so an entry's clock is at most
/// its task's: an entry whose clock is behind is refreshed when it reaches the top, and one
/// of a task that is done or waiting is dropped (and pushed again when the task wakes).
pub(super) struct TaskQueue {
    pub(super) heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize)>>,
    pub(super) queued: Vec<bool>,
}

impl TaskQueue {
    pub(super) fn new(mm: &Mm) -> TaskQueue {
        TaskQueue { heap: mm.tasks.iter().enumerate().map(|(t, tm)| std::cmp::Reverse((tm.clock, t))).collect(), queued: vec![true; mm.tasks.len()] }
    }
}

/// sysctl_stat_interval (HZ): half FLUSH_TIME, so it follows the oracle's scaling of the
/// rstat flush period to the guest's clock.
pub(super) fn vmstat_interval(s: &Scenario) -> u64 {
    s.machine.rstat_flush_ns / 2
}

/// kcompactd's timeout, HPAGE_FRAG_CHECK_INTERVAL_MSEC (500 ms): a quarter of FLUSH_TIME, so
/// it follows the oracle's scaling of the rstat flush period to the guest's clock.
pub(super) fn kcompactd_interval(rstat_flush_ns: u64) -> u64 {
    rstat_flush_ns / 4
}

impl<P: Policy> Machine<P> {
    /// Runs every task to completion; `progress` is called now and then with the operations
    /// done so far.
    pub fn run(&mut self, mut progress: impl FnMut(u64)) {
        if let Some(read) = self.single_trace_of_reads() {
            self.run_trace_reads(read, &mut progress);
        } else if self.reclaims_yield() {
            self.run_flows(&mut progress);
        } else {
            let mut since_report = 0u64;
            while self.step() {
                if !self.keep_going(&mut since_report, &mut progress) {
                    break;
                }
            }
        }
        self.finish();
        progress(self.done_ops);
    }

    /// After an operation: every 4,096 of them, reports progress and says whether the run
    /// goes on (false: a stop was asked for, or the host cannot hold more frames).
    #[inline(always)]
    pub(super) fn keep_going(&self, since_report: &mut u64, progress: &mut impl FnMut(u64)) -> bool {
        *since_report += 1;
        if *since_report < 4096 {
            return true;
        }
        progress(self.done_ops);
        *since_report = 0;
        !pagelab_host::interrupt::requested() && self.mm.folios.failure().is_none()
    }

    /// The operation template of a machine whose one task replays a trace as one-page
    /// buffered reads (`pagelab run --trace` with a kernel model), with no time limit, rate
    /// or process lifetime: the case [`Machine::run_trace_reads`] runs.
    fn single_trace_of_reads(&self) -> Option<Op> {
        let [task] = &self.tasks[..] else { return None };
        let OpSource::Pages(p) = &task.stream else { return None };
        let w = &self.workloads[task.workload];
        let op = p.op;
        let plain_read = op.access == Access::Buffered && !op.write && op.npages == 1 && !op.fill;
        (plain_read && !task.done && w.runtime.is_none() && w.op_interval == 0 && w.lifetime_ops == 0).then_some(op)
    }

    /// What `while self.step() {}` does for a single task replaying a trace of one-page
    /// buffered reads, call for call (`next_op()`, the events due, `filemap_read()`, the
    /// memory.high and writeback checks), without choosing a task, testing limits that are
    /// not set and dispatching on the operation's kind for every access; a test holds the
    /// two loops' reports equal.
    fn run_trace_reads(&mut self, read: Op, progress: &mut impl FnMut(u64)) {
        const T: usize = 0;
        let object = read.object as usize;
        let mut file = self.tasks[T].objects[object].file;
        // The file's read state is the loop's own until it ends (nothing else reads it).
        let mut ra = std::mem::take(&mut self.tasks[T].ra[object]);
        ra.random = read.advice == pagelab_workload::Advice::Random;
        let mut since_report = 0u64;
        loop {
            // next_op(): the page, the file grown to cover it, the coming pages prefetched.
            let OpSource::Pages(pages) = &mut self.tasks[T].stream else { unreachable!("a trace of reads") };
            let Some(page) = pages.next_page() else { break };
            if pages.pages_seen > file.pages {
                let seen = pages.pages_seen;
                if !self.grow_trace_file(T, object, seen) {
                    break;
                }
                file = self.tasks[T].objects[object].file;
            } else {
                if let Some(next) = pages.peek(0) {
                    if let Some(pfn) = self.mm.space.resident(file.base + next) {
                        self.mm.folios.prefetch(pfn);
                    }
                }
                if let Some(ahead) = pages.peek(LOOKAHEAD - 1) {
                    self.mm.space.prefetch(file.base + ahead);
                }
            }
            if self.mm.tasks[T].killed {
                break;
            }
            self.begin_op(T, read.think_ns);
            if self.mm.tasks[T].killed {
                self.end_op(T, false);
                break;
            }
            let OpSource::Pages(pages) = &mut self.tasks[T].stream else { unreachable!("a trace of reads") };
            pages.note_read(&self.mm.space, file.base + page as crate::mm::mapping::Vpn);
            let ok = crate::mm::filemap::filemap_read(&mut self.mm, &mut self.policy, file, &mut ra, page, 1);
            if !self.end_op(T, ok) {
                break;
            }
            self.tasks[T].ops += 1;
            self.tasks[T].steps += 1;
            if !self.keep_going(&mut since_report, progress) {
                break;
            }
        }
        self.tasks[T].ra[object] = ra;
        self.finish_task(T);
    }

    /// Chooses the next task from a heap (`true`) or by a scan, whatever the number of tasks
    /// (for tests: the two choose alike).
    #[doc(hidden)]
    pub fn choose_tasks_by_heap(&mut self, heap: bool) {
        self.queue = heap.then(|| TaskQueue::new(&self.mm));
    }

    /// Performs one operation of the task whose clock is earliest; false when all are done.
    pub fn step(&mut self) -> bool {
        match self.next_task() {
            Some(t) if self.tasks[t].parked => self.hand_over(t),
            Some(t) => {
                self.step_task(t);
                true
            }
            None => match self.tasks.iter().position(|task| !task.done && task.waiting) {
                // Nothing can run and a task still waits (its partner is gone): it ends.
                Some(t) => {
                    self.tasks[t].waiting = false;
                    self.finish_task(t);
                    true
                }
                None => false,
            },
        }
    }

    /// After the last operation: run the events up to the end and take the last sample.
    pub fn finish(&mut self) {
        let end = self.elapsed_ns();
        self.run_events_until(end);
        self.sample(end, true);
        self.pressure = self.mm.psi.read_all(end);
    }

    /// The runnable task with the earliest clock (ties: the first).
    ///
    /// With more than [`TASK_SCAN_MAX`] tasks, from the heap: the first valid entry at its top
    /// is the least (clock, task) pair, the one the scan finds, since every runnable task
    /// has an entry whose clock is at most its own.
    pub(super) fn next_task(&mut self) -> Option<usize> {
        if let Some(q) = self.queue.as_mut() {
            while let Some(&std::cmp::Reverse((at, t))) = q.heap.peek() {
                if self.tasks[t].done || self.tasks[t].waiting {
                    q.heap.pop();
                    q.queued[t] = false;
                    continue;
                }
                let clock = self.mm.tasks[t].clock;
                if clock != at {
                    q.heap.pop();
                    q.heap.push(std::cmp::Reverse((clock, t)));
                    continue;
                }
                return Some(t);
            }
            return None;
        }
        let mut best: Option<(u64, usize)> = None;
        for (t, task) in self.tasks.iter().enumerate() {
            if task.done || task.waiting {
                continue;
            }
            let c = self.mm.tasks[t].clock;
            if best.is_none_or(|(bc, _)| c < bc) {
                best = Some((c, t));
            }
        }
        best.map(|(_, t)| t)
    }

    /// Whether any event is due by `now`: the test every operation makes first, so it is
    /// kept to a few comparisons (most operations find nothing due).
    #[inline(always)]
    pub(super) fn event_due(&self, now: u64) -> bool {
        self.next_flush <= now
            || self.next_wb <= now
            || self.next_sample <= now
            || self.next_timer <= now
            || kswapd_due(&self.mm).is_some_and(|(k, _)| k <= now)
            || self.mm.writeback.peek().is_some_and(|std::cmp::Reverse(w)| w.at <= now)
    }

    /// Runs kswapd, the flushers, IO completions and samples due by `now`, in time order.
    #[inline(always)]
    fn run_events_until(&mut self, now: u64) {
        if self.event_due(now) {
            self.run_due_events(now);
        }
    }

    #[inline(never)]
    fn run_due_events(&mut self, now: u64) {
        while let Some((at, event)) = self.next_due_event(now) {
            match event {
                Event::WritebackDone => crate::mm::page_writeback::complete_writeback(&mut self.mm, &mut self.policy, at),
                Event::RstatFlush => {
                    self.mm.memcgs.periodic_flush(at);
                    self.next_flush += self.mm.memcgs.flush_period_ns;
                }
                Event::Flusher => {
                    self.with_kernel_clock(at, |m| crate::mm::page_writeback::flusher_run(&mut m.mm, &mut m.policy, true));
                    self.next_wb += self.mm.cfg.tunables.dirty_writeback_ns;
                }
                Event::Kswapd(nid) => {
                    self.kswapd_takes_cpu(nid);
                    let before = self.mm.nodes[nid].kswapd_clock;
                    let cpu_before = self.mm.nodes[nid].kswapd_cpu_ns;
                    kswapd_step(&mut self.mm, &mut self.policy, nid);
                    let usage = self.mm.usage(crate::sched::Who::Kswapd(nid));
                    if let Some(sched) = self.mm.sched.as_mut() {
                        sched.end(usage);
                    }
                    self.share_the_cpu(nid, before, cpu_before, now);
                    if self.mm.nodes[nid].reclaim.kswapd.is_none() {
                        if let Some(e) = self.mm.one_cpu.as_mut().and_then(|c| c.eevdf()) {
                            e.kswapd_sleeps();
                        }
                    }
                    // Every step costs at least a microsecond, so kswapd cannot stall time.
                    if self.mm.nodes[nid].kswapd_clock == before {
                        self.mm.nodes[nid].kswapd_clock += 1_000;
                    }
                }
                Event::VmstatUpdate => {
                    crate::mm::page_alloc::decay_pcp_high(&mut self.mm);
                    self.next_vmstat += self.mm.memcgs.flush_period_ns / 2;
                    self.next_timer = self.timers_min();
                }
                Event::Kcompactd => {
                    self.with_kernel_clock(at, |m| crate::mm::compaction::kcompactd_timeout(&mut m.mm));
                    self.next_kcompactd += kcompactd_interval(self.mm.memcgs.flush_period_ns);
                    self.next_timer = self.timers_min();
                }
                Event::CgroupWrite => {
                    self.cgroup_write(at);
                    self.next_timer = self.timers_min();
                }
                Event::Control => {
                    self.control(at);
                    self.next_timer = self.timers_min();
                }
                Event::Sample => {
                    self.sample(at, false);
                    // The next multiple of the interval (which `sample` may have doubled).
                    self.next_sample = (at / self.interval).saturating_add(1).saturating_mul(self.interval);
                }
            }
        }
    }

    /// The earliest event due by `now`, ties broken in [`Event`]'s order (a time of
    /// `u64::MAX` means never).
    // Every kswapd step passes through here: the candidates are visited in `Event` order and
    // only a strictly earlier time replaces the best, which gives the least (time, event)
    // pair without building an iterator chain.
    fn next_due_event(&self, now: u64) -> Option<(u64, Event)> {
        let mut best: Option<(u64, Event)> = None;
        let mut consider = |at: u64, event: Event| {
            if at <= now && at != u64::MAX && best.is_none_or(|(b, _)| at < b) {
                best = Some((at, event));
            }
        };
        if let Some(std::cmp::Reverse(w)) = self.mm.writeback.peek() {
            consider(w.at, Event::WritebackDone);
        }
        consider(self.next_flush, Event::RstatFlush);
        consider(self.next_wb, Event::Flusher);
        if let Some((k, nid)) = kswapd_due(&self.mm) {
            consider(k, Event::Kswapd(nid));
        }
        consider(self.next_vmstat, Event::VmstatUpdate);
        consider(self.next_kcompactd, Event::Kcompactd);
        consider(self.next_write_at, Event::CgroupWrite);
        consider(self.next_control_at, Event::Control);
        consider(self.next_sample, Event::Sample);
        best
    }

    /// The earliest of the timers `next_timer` stands for.
    fn timers_min(&self) -> u64 {
        self.next_vmstat.min(self.next_kcompactd).min(self.next_write_at).min(self.next_control_at)
    }

    /// Several CPUs: node `nid`'s kswapd, due to run a step of balancing, waits for a CPU of
    /// its node.
    fn kswapd_takes_cpu(&mut self, nid: usize) {
        use crate::sched::Who;
        // Not balancing (`kswapd` is `None`): the nap's end is a timer, not CPU work.
        if self.mm.nodes[nid].reclaim.kswapd.is_none() {
            return;
        }
        let usage = self.mm.usage(Who::Kswapd(nid));
        let Some(sched) = self.mm.sched.as_mut() else { return };
        let g = sched.acquire(Who::Kswapd(nid), self.mm.nodes[nid].kswapd_clock);
        self.mm.psi.set_cpu(self.mm.tasks.len() + nid, self.mm.nodes[nid].kswapd_clock, g.cpu);
        self.mm.nodes[nid].kswapd_clock = g.start;
        sched.begin(Who::Kswapd(nid), g, usage);
        crate::mm::swap::this_cpu(&mut self.mm, g.cpu);
    }

    /// `machine.cpus = 1`: the step of node `nid`'s kswapd (one CPU is one node's) that began
    /// at `start` takes its CPU time from the task's waits first, then half of the CPU from
    /// the task's present `now` on.
    fn share_the_cpu(&mut self, nid: usize, start: u64, cpu_before: u64, now: u64) {
        let Some(cpu) = self.mm.one_cpu.as_mut() else { return };
        let cpu_ns = self.mm.nodes[nid].kswapd_cpu_ns - cpu_before;
        let waited = (self.mm.nodes[nid].kswapd_clock - start).saturating_sub(cpu_ns);
        let (end, lost) = cpu.kswapd_step(start, cpu_ns, now);
        self.mm.nodes[nid].kswapd_clock = self.mm.nodes[nid].kswapd_clock.max(end + waited);
        if lost > 0 {
            for (t, task) in self.tasks.iter().enumerate() {
                if !task.done && self.mm.tasks[t].clock <= end {
                    self.mm.tasks[t].clock += lost;
                    self.mm.tasks[t].cpu_wait_ns += lost;
                    // Runnable, waiting for the CPU: not idle.
                    self.mm.psi.runnable_for(t, lost);
                }
            }
        }
    }

    /// The `[[event]]` due at `at`: the write runs on a clock of its own from `at` (the
    /// writer is a process outside the workloads: its reclaim counts as direct reclaim's, its
    /// CPU as no task's and not kswapd's), and its outcome is kept for the report.
    #[cold]
    fn cgroup_write(&mut self, at: u64) {
        let w = self.writes[self.next_write];
        self.next_write += 1;
        self.next_write_at = self.writes.get(self.next_write).map_or(u64::MAX, |n| n.at_ns);
        let (cpu_before, profile_before) = (self.mm.nodes[0].kswapd_cpu_ns, self.mm.profile.kswapd);
        let mut result = crate::mm::memcontrol::WriteResult::default();
        let mut end = at;
        self.with_kernel_clock(at, |m| {
            result = crate::mm::memcontrol::cgroup_write(&mut m.mm, &mut m.policy, w.memcg, w.kind);
            end = m.mm.nodes[0].kswapd_clock;
        });
        self.mm.nodes[0].kswapd_cpu_ns = cpu_before;
        self.mm.profile.kswapd = profile_before;
        self.write_outcomes.push(super::WriteOutcome { at_ns: w.at_ns, memcg: w.memcg, kind: w.kind, result, taken_ns: end - at });
    }

    /// Runs `f` as a kernel thread at time `at` (the flusher), on node 0's kswapd's clock.
    pub(super) fn with_kernel_clock(&mut self, at: u64, f: impl FnOnce(&mut Self)) {
        let saved = (self.mm.actor, self.mm.nodes[0].kswapd_clock);
        self.mm.actor = Actor::Kswapd(0);
        self.mm.nodes[0].kswapd_clock = at;
        f(self);
        self.mm.actor = saved.0;
        self.mm.nodes[0].kswapd_clock = saved.1;
    }

    /// Performs the next operation of task `t`.
    fn step_task(&mut self, t: usize) {
        let w = &self.workloads[self.tasks[t].workload];
        if w.runtime.is_some_and(|r| self.mm.tasks[t].clock >= self.tasks[t].start_ns + r) {
            return self.finish_task(t);
        }
        if w.op_interval > 0 {
            // rate_iops: the next operation starts no earlier than its slot.
            let n = self.tasks[t].ops + self.tasks[t].fill_ops;
            let slot = self.tasks[t].start_ns + n * w.op_interval;
            let c = &mut self.mm.tasks[t].clock;
            *c = (*c).max(slot);
        }
        let op = match self.next_op(t) {
            Some(op) if !self.mm.tasks[t].killed => op,
            _ => return self.finish_task(t),
        };
        if !self.locks.is_empty() && !op.fill && !self.lockstep_admits(t) {
            // It waits (or ended with its leader): the access stays next. A wait for the
            // leader is a sleep outside an operation.
            self.mm.psi.op_ends_idle(t);
            self.tasks[t].ahead.push_front(op);
            return;
        }
        if let Some(due) = op.due {
            self.pace(t, due);
        }
        let lifetime = self.workloads[self.tasks[t].workload].lifetime_ops;
        if lifetime > 0 && !op.fill && self.tasks[t].ops == lifetime * (self.tasks[t].respawns + 1) {
            self.respawn(t);
        }
        self.apply(t, op);
    }

    /// Before an operation of task `t`: the events due by its clock run, then the task
    /// thinks for `think_ns` (a sleep), gets a CPU ([`Machine::take_cpu`], with several) and
    /// runs.
    #[inline(always)]
    pub(super) fn begin_op(&mut self, t: usize, think_ns: u64) {
        let now = self.mm.tasks[t].clock;
        // The task was idle since its last operation if time passed (its think time, a rate
        // or pace slot): said before the events due run, so a sample among them sees it.
        self.mm.psi.op_begins(t, now + think_ns);
        self.run_events_until(now);
        // Nothing reported from now on precedes the clock of the task with the earliest.
        self.mm.psi.advance(now);
        self.mm.actor = Actor::Task(t);
        let task = &mut self.mm.tasks[t];
        if let Some(cpu) = self.mm.one_cpu.as_mut() {
            cpu.task_waits(task.clock, task.clock + think_ns);
        }
        task.clock += think_ns;
        self.tasks[t].op_start = task.clock;
        if self.mm.sched.is_some() {
            self.take_cpu(t);
        }
        let op_ns = self.mm.cfg.costs.op_ns;
        self.mm.cpu_in(crate::mm::profile::Func::User, op_ns);
        self.mm.tasks[t].ran = true;
        let process = self.mm.tasks[t].process;
        self.mm.tasks[process].ran = true;
    }

    /// Several CPUs: task `t`, runnable at its clock, waits for a CPU of its set. The events
    /// due meanwhile (kswapd's steps among them, which take CPUs too) run before it asks again.
    #[inline(never)]
    pub(super) fn take_cpu(&mut self, t: usize) {
        use crate::sched::Who;
        loop {
            let at = self.mm.tasks[t].clock;
            self.run_events_until(at);
            self.mm.actor = Actor::Task(t);
            let g = self.mm.sched.as_ref().expect("several CPUs").acquire(Who::Task(t), at);
            self.mm.tasks[t].clock = g.start;
            if g.wait > 0 && self.event_due(g.start) {
                // Events fell due while it waited: they run, and it asks again.
                self.mm.sched.as_mut().expect("several CPUs").tasks[t].runq_wait_ns += g.wait;
                continue;
            }
            self.mm.psi.set_cpu(t, at, g.cpu);
            let usage = self.mm.usage(Who::Task(t));
            self.mm.sched.as_mut().expect("several CPUs").begin(Who::Task(t), g, usage);
            crate::mm::swap::this_cpu(&mut self.mm, g.cpu);
            return;
        }
    }

    /// After an operation of task `t` (`ok`: it completed): memory.high throttling on the
    /// way back to user space and the dirty-page flusher's wake-up. Returns whether the task
    /// goes on (it failed or was killed otherwise).
    #[inline(always)]
    pub(super) fn end_op(&mut self, t: usize, ok: bool) -> bool {
        if self.mm.tasks[t].nr_pages_over_high > 0 {
            crate::mm::memcontrol::mem_cgroup_handle_over_high(&mut self.mm, &mut self.policy, t);
        }
        if self.mm.wb_pending_all || self.mm.wb_pending_background || !self.mm.wb_pending_memcgs.is_empty() {
            crate::mm::page_writeback::flusher_run(&mut self.mm, &mut self.policy, false);
        }
        let usage = self.mm.usage(crate::sched::Who::Task(t));
        if let Some(sched) = self.mm.sched.as_mut() {
            sched.end(usage);
        }
        let latency = self.mm.tasks[t].clock.saturating_sub(self.tasks[t].op_start);
        self.tasks[t].latency.record(latency);
        self.latency.record(latency);
        self.done_ops += 1;
        self.mm.psi.op_ends(t, self.mm.tasks[t].clock);
        ok && !self.mm.tasks[t].killed
    }

    /// Performs `op` for task `t` now, outside its stream (tests and trace replay use this);
    /// events due by the task's clock run first.
    pub fn apply(&mut self, t: usize, op: Op) {
        self.begin_op(t, op.think_ns);
        if self.mm.tasks[t].killed {
            // An event due before the operation began killed the task: the operation never
            // runs, and the task's exit already freed its memory.
            self.end_op(t, false);
            return self.finish_task(t);
        }
        let obj = self.tasks[t].objects[op.object as usize];
        if let (OpSource::Pages(pages), Access::Buffered, false) = (&mut self.tasks[t].stream, op.access, op.write) {
            pages.note_read(&self.mm.space, obj.file.base + op.page as crate::mm::mapping::Vpn);
        }
        if op.npages > 1 && op.page < obj.file.pages {
            let n = (op.npages as u64).min(obj.file.pages - op.page);
            self.mm.prefetch_frames(obj.file.base + op.page as crate::mm::mapping::Vpn, n);
        }
        let ok = match op.access {
            Access::Buffered => {
                let bdi_ra_pages = self.mm.cfg.tunables.ra_pages;
                let ra = &mut self.tasks[t].ra[op.object as usize];
                fadvise(ra, op.advice, bdi_ra_pages);
                if op.write {
                    crate::mm::filemap::filemap_write(&mut self.mm, &mut self.policy, obj.file, op.page, op.npages as u64)
                } else {
                    crate::mm::filemap::filemap_read(&mut self.mm, &mut self.policy, obj.file, ra, op.page, op.npages as u64)
                }
            }
            Access::Mmap => {
                let mut ok = true;
                for i in 0..op.npages as u64 {
                    let ra = &mut self.tasks[t].ra[op.object as usize];
                    ok &= crate::mm::memory::file_mmap_access(&mut self.mm, &mut self.policy, t, obj.file, ra, op.page + i, op.write, op.advice);
                }
                ok
            }
            Access::Anon => {
                let mut ok = true;
                for i in 0..op.npages as u64 {
                    let vpn = obj.file.base + (op.page + i) as u32;
                    ok &= crate::mm::memory::anon_access(&mut self.mm, &mut self.policy, t, vpn, op.write, op.advice);
                }
                ok
            }
            Access::Truncate => {
                crate::mm::filemap::truncate_inode_pages_range(&mut self.mm, &mut self.policy, obj.file, op.page, op.page + op.npages as u64);
                true
            }
        };
        if !self.end_op(t, ok) {
            return self.finish_task(t);
        }
        if op.fill {
            self.tasks[t].fill_ops += 1;
        } else {
            self.tasks[t].ops += 1;
            if !op.more {
                self.tasks[t].steps += 1;
                if !self.locks.is_empty() && !self.locks[t].followers.is_empty() {
                    self.leader_did(t);
                }
            }
        }
    }

    /// `lifetime_ops`: before its next operation, the task's process exits (exit_mmap() frees
    /// its anonymous memory and swap; the page cache it read stays) and a new one, in the same
    /// memcg, carries on with the job's operations from an empty address space, as the
    /// processes of a build do.
    #[cold]
    fn respawn(&mut self, t: usize) {
        self.mm.actor = Actor::Task(t);
        crate::mm::oom_kill::exit_mmap(&mut self.mm, &mut self.policy, t);
        self.tasks[t].respawns += 1;
    }

    /// A task is done: it exits, and its anonymous memory goes with it (exit_mmap()).
    pub(super) fn finish_task(&mut self, t: usize) {
        // fio reaps the reads still in flight before the job ends (`iodepth` > 1).
        if !self.mm.tasks[t].in_flight.is_empty() {
            self.mm.actor = Actor::Task(t);
            self.mm.reap_reads();
        }
        let task = &mut self.tasks[t];
        task.done = true;
        task.end_ns = self.mm.tasks[t].clock;
        if let Some(sched) = self.mm.sched.as_mut() {
            sched.exit(t);
        }
        self.mm.psi.op_ends_idle(t);
        self.mm.actor = Actor::Task(t);
        // The threads of a process (tasks that share an application cache) exit one by one;
        // the process's memory, which its first task owns, goes with the last, as mmput()
        // (kernel/fork.c, 6.1, 6.12) calls exit_mmap() when the mm's last user drops it.
        let process = self.mm.tasks[t].process;
        let others_run = |m: &Self| (0..m.tasks.len()).any(|u| u != t && m.mm.tasks[u].process == process && !m.tasks[u].done && !m.mm.tasks[u].killed);
        if !self.mm.tasks[t].killed && !self.hold[t] && (t != process || !others_run(self)) {
            crate::mm::oom_kill::exit_mmap(&mut self.mm, &mut self.policy, t);
        }
        if t != process && self.tasks[process].done && !self.mm.tasks[process].killed && !self.hold[process] && !others_run(self) {
            crate::mm::oom_kill::exit_mmap(&mut self.mm, &mut self.policy, process);
        }
        if !self.locks.is_empty() {
            self.lockstep_ended(t);
        }
    }
}

/// Models mm/fadvise.c: generic_fadvise() (6.1, 6.12) on the file a buffered access reads:
/// POSIX_FADV_RANDOM sets FMODE_RANDOM (no readahead); POSIX_FADV_SEQUENTIAL clears it and
/// sets the file's window to twice the device's (`bdi->ra_pages * 2`); POSIX_FADV_NORMAL
/// clears it and restores the device's window.
fn fadvise(ra: &mut crate::mm::readahead::RaState, advice: pagelab_workload::Advice, bdi_ra_pages: u64) {
    use pagelab_workload::Advice;
    match advice {
        Advice::Random => ra.random = true,
        Advice::Sequential => {
            ra.random = false;
            ra.ra_pages = 2 * bdi_ra_pages;
        }
        Advice::Normal => {
            ra.random = false;
            ra.ra_pages = bdi_ra_pages;
        }
    }
}
