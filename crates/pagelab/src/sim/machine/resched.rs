//! Reclaims that yield at the kernel's cond_resched() points (issue 42).
//!
//! A task's operation runs whole: its fault, the allocation, the direct or memcg limit
//! reclaim under them. With `machine.cpus` the kernel's other CPUs go on meanwhile, and
//! concurrent reclaimers take their batches of SWAP_CLUSTER_MAX from the same lists; a reclaim
//! that ran whole would do the first long trip round a list alone, in the others' future.
//! So in a run of several CPUs (and a policy whose reclaim may yield,
//! [`crate::mm::hooks::Caps::reclaim_yields`]) a task's reclaim stops at each
//! [`Mm::cond_resched`] point where another actor's clock is earlier than its own: it leaves
//! its CPU (the burst so far ends), and the machine runs the others, in the order of their
//! clocks as always, until the task's clock is the earliest again; then it asks for a CPU
//! and its reclaim goes on from where it stopped.
//!
//! # How a reclaim is suspended
//!
//! A reclaim is a call stack under the operation (`__alloc_pages_slowpath()` →
//! `do_try_to_free_pages()` → … → `shrink_lruvec()`), so a suspended one keeps its stack on
//! a host thread of its own, and another host thread (a *runner*) goes on with the event loop.
//! Exactly one host thread runs at any time: each hands over to the next by [`Slot`]s and
//! blocks until it is handed something back, so a run is as deterministic as with one thread
//! (the host threads are a stack-switching device, not parallelism). The thread that called
//! [`Machine::run`] is thread 0; it is the only one that ends the run, so a runner whose loop
//! ends hands over to it.
//!
//! The threads share the machine through its address (`Resched::ctx`), one at a time: a
//! suspended reclaim handed its `Mm` and its policy to [`Mm::cond_resched`], so nothing of
//! them is assumed unchanged across the call, and a runner uses them only while the reclaim
//! is blocked.

use std::any::Any;
use std::sync::{Arc, Condvar, Mutex};

use super::Machine;
use crate::mm::{Actor, Mm, Resched};
use crate::policy::Policy;
use crate::sched::Who;

/// What a host thread is handed.
enum Cmd {
    /// Run the event loop (a runner).
    Run,
    /// Go on with the suspended reclaim: the task has its CPU again.
    Resume,
    /// The run is over: leave.
    Exit,
    /// A runner panicked: panic here with its payload (thread 0).
    Panic(Box<dyn Any + Send>),
}

/// A host thread's mailbox.
#[derive(Default)]
pub(super) struct Slot {
    cmd: Mutex<Option<Cmd>>,
    cv: Condvar,
    exit: std::sync::atomic::AtomicBool,
}

impl Slot {
    fn give(&self, cmd: Cmd) {
        if matches!(cmd, Cmd::Exit) {
            self.exit.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        *self.cmd.lock().unwrap_or_else(|e| e.into_inner()) = Some(cmd);
        self.cv.notify_one();
    }

    fn wait(&self) -> Cmd {
        let mut g = self.cmd.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(c) = g.take() {
                return c;
            }
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn exiting(&self) -> bool {
        self.exit.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The host threads of a run whose reclaims yield.
pub(super) struct Coop {
    /// Each thread's mailbox; thread 0 is the one that called `run`.
    slots: Vec<Arc<Slot>>,
    /// The threads spawned (thread `i + 1`'s handle at `i`).
    handles: Vec<Option<std::thread::JoinHandle<()>>>,
    /// Runners waiting to be handed the loop.
    idle: Vec<usize>,
    /// The thread running now.
    cur: usize,
    /// No more yields: the run is stopping.
    off: bool,
    /// Reclaims suspended so far.
    pub(super) yields: u64,
    /// The entry point of a runner thread of this machine's policy type.
    runner: fn(usize, Arc<Slot>),
}

/// A host thread's stack: reclaim under a fault is a deep call chain.
const STACK_BYTES: usize = 64 << 20;

impl<P: Policy> Machine<P> {
    /// Before the loop of `run`: several CPUs, several tasks and a policy whose reclaim may
    /// yield make the machine's reclaims yield at cond_resched().
    pub(super) fn coop_begin(&mut self) {
        let several = self.mm.sched.as_ref().is_some_and(|s| s.cpus.len() >= 2);
        if !several || self.tasks.len() < 2 || !self.policy.caps().reclaim_yields {
            return;
        }
        self.coop = Some(Box::new(Coop {
            slots: vec![Arc::new(Slot::default())],
            handles: Vec::new(),
            idle: Vec::new(),
            cur: 0,
            off: false,
            yields: 0,
            runner: runner::<P>,
        }));
        self.mm.resched = Some(Resched { ctx: self as *mut Self as usize, yield_now: yield_now::<P> });
    }

    /// After the loop of `run` (on thread 0): the idle runners leave. A reclaim still
    /// suspended (the run was stopped) keeps its thread, blocked for good.
    pub(super) fn coop_end(&mut self) {
        self.mm.resched = None;
        let Some(mut coop) = self.coop.take() else { return };
        coop.idle.retain(|&i| i != 0);
        for &i in &coop.idle {
            coop.slots[i].give(Cmd::Exit);
        }
        for &i in &coop.idle {
            if let Some(h) = coop.handles[i - 1].take() {
                let _ = h.join();
            }
        }
        self.reclaim_yields += coop.yields;
    }

    /// Hands the host to thread `to` with `cmd` and blocks until this thread is handed
    /// something.
    fn pass(&mut self, to: usize, cmd: Cmd) -> Cmd {
        let coop = self.coop.as_mut().expect("a run whose reclaims yield");
        let mine = coop.slots[coop.cur].clone();
        let theirs = coop.slots[to].clone();
        coop.cur = to;
        theirs.give(cmd);
        mine.wait()
    }

    /// A runner to hand the loop to: an idle one, or a new thread.
    fn runner_thread(&mut self) -> usize {
        let ctx = self as *mut Self as usize;
        let coop = self.coop.as_mut().expect("a run whose reclaims yield");
        if let Some(i) = coop.idle.pop() {
            return i;
        }
        let slot = Arc::new(Slot::default());
        coop.slots.push(slot.clone());
        let entry = coop.runner;
        let h = std::thread::Builder::new()
            .name(format!("pagelab-reclaim-{}", coop.slots.len() - 1))
            .stack_size(STACK_BYTES)
            .spawn(move || entry(ctx, slot))
            .unwrap_or_else(|e| panic!("cannot start a host thread for a suspended reclaim: {e}"));
        coop.handles.push(Some(h));
        coop.slots.len() - 1
    }

    /// Whether an actor other than task `t` comes before it: an event due by its clock, or
    /// another runnable task that `next_task` would choose first (an earlier clock; ties: the
    /// lower number). `t` itself is runnable, so the choice is `t` exactly when none does.
    fn someone_before(&mut self, t: usize) -> bool {
        self.event_due(self.mm.tasks[t].clock) || self.next_task().is_some_and(|u| u != t)
    }

    /// cond_resched() in task `t`'s reclaim: when another actor comes first, the task leaves
    /// its CPU and the loop goes on elsewhere until the task is resumed (`resume`).
    fn resched_point(&mut self) {
        let Actor::Task(t) = self.mm.actor else { return };
        if self.coop.as_ref().is_none_or(|c| c.off) || !self.someone_before(t) {
            return;
        }
        let usage = self.mm.usage(Who::Task(t));
        if let Some(sched) = self.mm.sched.as_mut() {
            sched.end(usage);
        }
        let coop = self.coop.as_mut().expect("a run whose reclaims yield");
        coop.yields += 1;
        self.tasks[t].parked = Some(coop.cur);
        let runner = self.runner_thread();
        match self.pass(runner, Cmd::Run) {
            Cmd::Resume => {}
            Cmd::Panic(payload) => std::panic::resume_unwind(payload),
            Cmd::Run | Cmd::Exit => unreachable!("a suspended reclaim is only resumed"),
        }
    }

    /// Task `t`, suspended in a reclaim, is the actor whose clock is earliest: it asks for a
    /// CPU (the events due meanwhile run first), and its thread goes on with the reclaim while
    /// this one waits, idle. Returns false when the run is over for this thread (it is told
    /// to leave).
    pub(super) fn resume(&mut self, t: usize) -> bool {
        let th = self.tasks[t].parked.take().expect("a suspended task");
        self.take_cpu(t);
        let coop = self.coop.as_mut().expect("a run whose reclaims yield");
        let me = coop.cur;
        coop.idle.push(me);
        match self.pass(th, Cmd::Resume) {
            Cmd::Run => true,
            Cmd::Exit => false,
            Cmd::Panic(payload) => std::panic::resume_unwind(payload),
            Cmd::Resume => unreachable!("an idle runner is handed the loop"),
        }
    }

    /// A runner's loop ended (`panic`: with a panic): thread 0 takes over, to end the run or
    /// panic. It waits either idle (in `resume`) or in a suspended reclaim, which then goes on
    /// with yields off.
    fn hand_to_main(&mut self, panic: Option<Box<dyn Any + Send>>) {
        let coop = self.coop.as_mut().expect("a run whose reclaims yield");
        coop.off = true;
        if let Some(payload) = panic {
            self.pass(0, Cmd::Panic(payload));
            return;
        }
        if let Some(t) = self.tasks.iter().position(|task| task.parked == Some(0)) {
            self.tasks[t].parked = None;
            self.take_cpu(t);
            let coop = self.coop.as_mut().expect("a run whose reclaims yield");
            let me = coop.cur;
            coop.idle.push(me);
            self.pass(0, Cmd::Resume);
        } else {
            let coop = self.coop.as_mut().expect("a run whose reclaims yield");
            let me = coop.cur;
            // Thread 0 waits idle: it leaves the idle runners to take the loop.
            coop.idle.retain(|&i| i != 0);
            coop.idle.push(me);
            self.pass(0, Cmd::Run);
        }
    }
}

/// [`Resched::yield_now`] of a machine of policy `P`.
fn yield_now<P: Policy>(ctx: usize, mm: &mut Mm, p: *mut ()) {
    // The reclaim's `Mm` and policy are the machine's own; handing them here keeps the
    // caller from assuming them unchanged across the call.
    std::hint::black_box((mm as *mut Mm, p));
    // SAFETY: `ctx` is the address of the machine whose `run` installed the hook and is
    // still running (it removes the hook before returning); only this thread runs, and the
    // caller's references to the machine's `Mm` and policy are not used until this returns.
    let m = unsafe { &mut *(ctx as *mut Machine<P>) };
    m.resched_point();
}

/// A runner thread of a machine of policy `P`: it waits to be handed the loop, runs it, and
/// hands over to thread 0 when the loop ends.
fn runner<P: Policy>(ctx: usize, slot: Arc<Slot>) {
    if let Cmd::Exit = slot.wait() {
        return;
    }
    // SAFETY: as in `yield_now`: the machine outlives its run's threads' use of it, and only
    // the thread that was handed the loop uses it.
    let m = unsafe { &mut *(ctx as *mut Machine<P>) };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut since = 0u64;
        while m.step() {
            if !m.keep_going(&mut since, &mut |_| {}) {
                break;
            }
        }
    }));
    if slot.exiting() {
        return;
    }
    m.hand_to_main(r.err());
    // Told to leave when the run ends.
    while !slot.exiting() {
        if let Cmd::Exit = slot.wait() {
            return;
        }
    }
}
