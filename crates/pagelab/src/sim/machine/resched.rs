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
//! `do_try_to_free_pages()` → … → `shrink_lruvec()`), so a suspended one keeps its stack: the
//! event loop of such a run runs in *flows*, stackful coroutines ([`corosensei`]) on the
//! thread that called [`Machine::run`], each on a stack of its own. `run` itself only
//! switches between them ([`Machine::run_flows`]): it resumes a flow, which runs the loop
//! (`step`, `keep_going`) until one of three things hands control back:
//!
//! - a cond_resched() point of task `t`'s reclaim ([`Out::Point`]). `run` decides, as the
//!   machine would: if no other actor comes first it resumes the same flow at once; else the
//!   task leaves its CPU, the flow is kept as task `t`'s, and a new flow goes on with the loop;
//! - the loop meets a suspended task as the earliest (`step` returns false with a hand-over):
//!   that flow ends, and once the task has its CPU again (`take_cpu`) its flow is resumed; its
//!   reclaim goes on, and after its operation it goes on with the loop;
//! - progress to report ([`Out::Report`]) or the end of the loop.
//!
//! So exactly one flow runs at any time, in the order the one loop would run them, and a run
//! is as deterministic as without flows. A switch costs nanoseconds (6 ns a suspend and resume
//! on the development host; the design before, a host thread per suspended reclaim, took two
//! futex hand-overs a yield). A flow that ends gives its stack back to a pool, so the stacks number one more
//! than the most reclaims suspended at once ([`STACK_BYTES`] each, of which only the pages a
//! flow touched are memory). A run that stops with reclaims suspended (a stop was asked for,
//! or the host ran out of frames) finishes each of them, in the order of their clocks and
//! without yields, so none is left half done and no flow outlives `run`. A panic in a flow
//! reaches the caller of `run`; the flows still suspended are unwound (their frames dropped)
//! on the way.
//!
//! The flows reach the machine only through the address `run` lends them each time it
//! resumes one, while `run` waits in the resume; a suspended reclaim handed its `Mm` and
//! its policy to [`Mm::cond_resched`], so nothing of them is assumed unchanged across the
//! call.

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::Machine;
use crate::mm::{Actor, Mm, Resched};
use crate::policy::Policy;
use crate::sched::Who;

/// What `run` hands a flow each time it resumes it: the machine's address, lent for the
/// time the flow runs.
type Lend = usize;

/// Why a flow hands control back to `run` before it ends.
enum Out {
    /// Task `t`'s reclaim is at a cond_resched() point.
    Point(usize),
    /// The loop has progress to report (`keep_going`).
    Report,
}

type Flow = Coroutine<Lend, Out, (), DefaultStack>;

/// A flow's stack: 2 MiB, what a Rust thread gets by default (the runs of a sweep run the
/// loop on such threads). It is reserved, not committed: a flow's stack holds the pages it
/// touched, at most 8 KiB in the release build on seed 004's fio at 36 CPUs and memcached at
/// 72 (2026-11-30, /proc/PID/smaps). Below it is a guard page: an overflow faults there and
/// the process dies of SIGSEGV (checked), with no message, where a thread's would print one.
const STACK_BYTES: usize = 2 << 20;

/// The state of the loop that passes from flow to flow.
#[derive(Default)]
pub(super) struct Relay {
    /// A suspended task is the earliest: the flow that found it ends, and `run` resumes the
    /// task's.
    handoff: Option<usize>,
    /// Operations since progress was last reported (`keep_going`).
    since_report: u64,
}

/// The flows of a run, kept by `run` ([`Machine::run_flows`]).
struct Flows {
    /// Per task, the flow suspended in its reclaim.
    parked: Vec<Option<Flow>>,
    /// The stacks of flows that ended, for the next ones.
    stacks: Vec<DefaultStack>,
}

impl Flows {
    /// A new flow that runs the loop of a machine of policy `P`, on a stack of the pool.
    fn start<P: Policy>(&mut self) -> Flow {
        let stack =
            self.stacks.pop().unwrap_or_else(|| DefaultStack::new(STACK_BYTES).unwrap_or_else(|e| panic!("cannot map a stack for a suspended reclaim: {e}")));
        Coroutine::with_stack(stack, flow::<P> as fn(&Yielder<Lend, Out>, Lend))
    }

    /// A flow that ended gives its stack back.
    fn recycle(&mut self, done: Flow) {
        self.stacks.push(done.into_stack());
    }
}

impl<P: Policy> Machine<P> {
    /// Whether `run`'s loop runs in flows: several CPUs, several tasks and a policy whose
    /// reclaim may yield make the machine's reclaims yield at cond_resched().
    pub(super) fn reclaims_yield(&self) -> bool {
        let several = self.mm.sched.as_ref().is_some_and(|s| s.cpus.len() >= 2);
        several && self.tasks.len() >= 2 && self.policy.caps().reclaim_yields
    }

    /// `run`'s loop in flows (see the module's text); `progress` is called as `keep_going`
    /// asks. A panic in a flow unwinds the flows still suspended, then goes on to the caller.
    pub(super) fn run_flows(&mut self, progress: &mut impl FnMut(u64)) {
        let mut flows = Flows { parked: (0..self.tasks.len()).map(|_| None).collect(), stacks: Vec::new() };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.switch_flows(&mut flows, progress);
            self.finish_suspended(&mut flows);
        }));
        self.mm.resched = None;
        drop(flows);
        if let Err(payload) = r {
            std::panic::resume_unwind(payload);
        }
    }

    /// Resumes flows until the loop ends.
    fn switch_flows(&mut self, flows: &mut Flows, progress: &mut impl FnMut(u64)) {
        let mut flow = flows.start::<P>();
        loop {
            match flow.resume(self as *mut Self as Lend) {
                CoroutineResult::Yield(Out::Report) => progress(self.done_ops),
                CoroutineResult::Yield(Out::Point(t)) => {
                    if self.someone_before(t) {
                        self.leave_cpu(t);
                        if let Some(sched) = self.mm.sched.as_mut() {
                            sched.reclaim_yields += 1;
                        }
                        self.tasks[t].parked = true;
                        let next = flows.start::<P>();
                        flows.parked[t] = Some(std::mem::replace(&mut flow, next));
                    }
                }
                CoroutineResult::Return(()) => {
                    let Some(t) = self.relay.handoff.take() else { return flows.recycle(flow) };
                    let next = self.unpark(flows, t);
                    flows.recycle(std::mem::replace(&mut flow, next));
                }
            }
        }
    }

    /// After the loop (a stopped run): each reclaim still suspended finishes, the earliest
    /// clock first, without yields, and its flow ends after its operation.
    fn finish_suspended(&mut self, flows: &mut Flows) {
        self.mm.resched = None;
        while let Some(t) = (0..self.tasks.len()).filter(|&t| self.tasks[t].parked).min_by_key(|&t| (self.mm.tasks[t].clock, t)) {
            let mut flow = self.unpark(flows, t);
            flow.resume(self as *mut Self as Lend);
            flows.recycle(flow);
        }
    }

    /// Whether an actor other than task `t` comes before it: an event due by its clock, or
    /// another runnable task that `next_task` would choose first (an earlier clock; ties: the
    /// lower number). `t` itself is runnable, so the choice is `t` exactly when none does.
    fn someone_before(&mut self, t: usize) -> bool {
        self.event_due(self.mm.tasks[t].clock) || self.next_task().is_some_and(|u| u != t)
    }

    /// Task `t`'s reclaim is suspended: the CPU burst so far ends.
    fn leave_cpu(&mut self, t: usize) {
        let usage = self.mm.usage(Who::Task(t));
        if let Some(sched) = self.mm.sched.as_mut() {
            sched.end(usage);
        }
    }

    /// Task `t`, suspended in a reclaim, is the earliest: `step` hands over to `run`, which
    /// resumes the task's flow. Returns what `step` returns: false, this flow ends.
    pub(super) fn hand_over(&mut self, t: usize) -> bool {
        self.relay.handoff = Some(t);
        false
    }

    /// Task `t`'s suspended reclaim goes on: it asks for a CPU (the events due meanwhile run
    /// first); its flow, to resume.
    fn unpark(&mut self, flows: &mut Flows, t: usize) -> Flow {
        self.tasks[t].parked = false;
        self.take_cpu(t);
        flows.parked[t].take().expect("a suspended task has a flow")
    }

    /// A flow's loop: `step` and `keep_going`, until the loop ends, hands over to a suspended
    /// task, or (after a stopped run) a finished reclaim's operation returns.
    fn flow_loop(&mut self, y: &Yielder<Lend, Out>) {
        self.mm.resched = Some(Resched { ctx: y as *const Yielder<Lend, Out> as usize, yield_now });
        while self.step() && self.mm.resched.is_some() {
            // `run` reports the progress while this flow waits; nothing of the machine
            // changes meanwhile.
            let mut since = self.relay.since_report;
            let go = self.keep_going(&mut since, &mut |_| {
                y.suspend(Out::Report);
            });
            self.relay.since_report = since;
            if !go {
                return;
            }
        }
    }
}

/// A flow of a machine of policy `P`: the loop, on the machine `run` lends it.
fn flow<P: Policy>(y: &Yielder<Lend, Out>, lend: Lend) {
    // SAFETY: `lend` is the address of the machine whose `run_flows` resumed this flow and
    // waits in that resume: the machine is alive, and nothing else uses it until this flow
    // suspends or ends. A flow suspended in a reclaim keeps references into the machine in
    // its frames while others run; each such frame handed the references it keeps (the
    // machine, its `Mm` and policy) down the calls to `Mm::cond_resched`, whose hook is an
    // opaque call, so the compiler assumes what they point to changed across it.
    let m = unsafe { &mut *(lend as *mut Machine<P>) };
    m.flow_loop(y);
}

/// [`Resched::yield_now`]: a cond_resched() point of the running task's reclaim; `ctx` is
/// the address of the running flow's yielder. `run` decides whether the task goes on at once
/// or leaves its CPU until it is the earliest again.
fn yield_now(ctx: usize, mm: &mut Mm, p: *mut ()) {
    let Actor::Task(t) = mm.actor else { return };
    // The reclaim's `Mm` and policy are the machine's own; handing them here keeps the
    // caller from assuming them unchanged across the call.
    std::hint::black_box((mm as *mut Mm, p));
    // SAFETY: `ctx` was set by the flow that runs now (`flow_loop`, or below when this flow
    // was resumed), from its own yielder, which lives at the base of its stack for as long
    // as the flow does; a flow only runs while it is not ended.
    let y = unsafe { &*(ctx as *const Yielder<Lend, Out>) };
    y.suspend(Out::Point(t));
    // Other flows ran meanwhile and pointed the hook at their yielders: this one runs now.
    if let Some(r) = mm.resched.as_mut() {
        r.ctx = ctx;
    }
}
