//! Locks as contended resources (the kernel's kernel/locking), for a machine of several CPUs
//! (`machine.cpus` ≥ 2).
//!
//! # Contract
//!
//! - **A lock lives in what it guards** (the lruvec's `lru_lock` in the lruvec). Only the
//!   machine's CPU model ([`crate::sched`]) makes one contended: without it no lock is taken.
//! - **A critical section** is asked for at the actor's clock with its hold time, the cost of
//!   the work it does under the lock (in proportion to its batch: `folio_batch` of 15 or 31,
//!   isolation of 32). It gets the lock at the first moment from its request on when the lock
//!   is free for the whole hold ([`SpinLock::lock`]).
//! - **Waiters are served in the order they ask**, as a queued spinlock
//!   (kernel/locking/qspinlock.c, 6.1 and 6.12: `queued_spin_lock_slowpath()` queues each
//!   waiter on its own MCS node and hands the lock to the next in line) serves them. A waiter
//!   that gets the lock from another holder pays a handoff, the cache line's transfer to its
//!   CPU ([`crate::mm::time::CpuCosts::lock_handoff_ns`]).
//! - **A waiter spins**: its wait is CPU time of its own CPU (spin_lock_irq() neither sleeps
//!   nor yields), charged before its hold.
//! - **Order.** Actors run in the order of their clocks, but an operation runs whole (a
//!   task's reclaim yields only at its cond_resched() points), so a section asked for later in the machine's order may have an earlier time than one already
//!   granted. The lock keeps its sections on a calendar and fits such a request into the
//!   first gap from its time on where the hold fits, so the requests' times, not their
//!   processing order, decide. It forgets the sections that end before the **horizon**, the
//!   time before which no actor asks any more ([`crate::sched::Sched::horizon`]), so the
//!   calendar holds only the sections between the slowest and the fastest actor. Sections
//!   that touch (one begins where the other ends: a saturated lock's back-to-back holds) are
//!   kept as one busy span, which places every request exactly as the separate sections
//!   would (no hold fits into a gap of zero), and a section of no hold occupies nothing.
//!   Should the spans still exceed the calendar's size ([`CALENDAR`], or the machine's
//!   [`crate::sched::Sched::calendar`]), the oldest are forgotten and a request older than
//!   what is kept waits for its end: counted as `forgotten` in [`LockStat`] and named in the
//!   report's `warnings`, never silently.
//!
//! What a lock saw is counted in [`LockStat`]: acquisitions, contended ones, the wait
//! (total, and its median and 99th percentile from a log-linear histogram) and the hold, and
//! the same split by the kernel function that took the lock ([`SpinLock::lock_by`]).

use serde::Serialize;

use crate::hist::Histogram;

/// The most busy spans a lock remembers after the horizon (a bound on its memory: about
/// 40 MiB). An operation runs whole between its reclaim's cond_resched() points, so one long
/// stretch of work adds its sections before the other tasks' requests of the same span are
/// placed among them.
pub const CALENDAR: usize = 1 << 20;

/// A section granted: it waited from the request until `start` (spinning), and holds the
/// lock until `end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    pub start: u64,
    pub end: u64,
    /// The time spun before holding it: the wait and, if contended, the handoff.
    pub spin: u64,
}

/// A queued spinlock with the time it is held.
#[derive(Clone, Debug, Default)]
pub struct SpinLock {
    /// The sections after the horizon, start → end, in time order and not overlapping.
    busy: std::collections::BTreeMap<u64, Span>,
    /// The sections the spans of `busy` hold.
    sections: u64,
    /// No section can start before this: the end of the sections forgotten.
    floor: u64,
    /// The end of the last span of `busy` (0 when it is empty): a request at or after it
    /// fits after every span without a search.
    last_end: u64,
    /// Search the calendar for every section (the tests' reference for the common case).
    #[cfg(test)]
    search_always: bool,
    pub stat: LockStat,
}

impl SpinLock {
    /// Takes the lock at `at` for `hold` ns; a waiter (the lock busy at `at`) pays `handoff`
    /// before its hold. Models queued_spin_lock() and queued_spin_unlock() as the contract
    /// above states them.
    pub fn lock(&mut self, at: u64, hold: u64, handoff: u64, horizon: u64) -> Section {
        self.lock_within(at, hold, handoff, horizon, CALENDAR)
    }

    /// [`SpinLock::lock_within`] on behalf of the kernel function `by` (`"rmqueue_bulk"`): its
    /// section is also counted under that name ([`LockStat::by_function`]).
    pub fn lock_by(&mut self, by: &'static str, at: u64, hold: u64, handoff: u64, horizon: u64, calendar: usize) -> Section {
        let section = self.lock_within(at, hold, handoff, horizon, calendar);
        self.stat.by_function(by).count(section.spin, hold);
        section
    }

    /// [`SpinLock::lock`] with a calendar of at most `calendar` busy spans.
    pub fn lock_within(&mut self, at: u64, hold: u64, handoff: u64, horizon: u64, calendar: usize) -> Section {
        while self.busy.first_key_value().is_some_and(|(_, sp)| sp.end <= horizon) {
            self.pop_oldest();
        }
        let t = at.max(self.floor);
        let (t, contended) = if self.after_all(t) { (t, t > at) } else { self.first_gap(at, t, hold, handoff) };
        let begin = t + if contended { handoff } else { 0 };
        let end = begin + hold;
        if end > t {
            if self.after_all(t) {
                self.append(t, end);
            } else {
                self.occupy(t, end);
            }
        }
        while self.busy.len() > calendar {
            let sp = self.pop_oldest();
            self.floor = self.floor.max(sp.end);
            self.stat.forgotten += 1;
        }
        self.stat.calendar_peak = self.stat.calendar_peak.max(self.busy.len() as u64);
        self.stat.sections_peak = self.stat.sections_peak.max(self.sections);
        self.stat.count(begin - at, hold);
        Section { start: begin, end, spin: begin - at }
    }

    /// Whether a section from `t` on comes after every busy span: then nothing can hold it
    /// back and it can touch only the last span, so neither the gap nor the neighbours need a
    /// search of the calendar.
    fn after_all(&self, t: u64) -> bool {
        #[cfg(test)]
        if self.search_always {
            return false;
        }
        self.last_end <= t
    }

    /// The first moment from `t` (not before the request `at`) when the lock is free for the
    /// hold, its handoff included if it waited, and whether it waited: the search of the
    /// calendar for a gap that fits, the section that may hold the lock at `t` (the last to
    /// start by then), then the later ones in order.
    fn first_gap(&self, at: u64, mut t: u64, hold: u64, handoff: u64) -> (u64, bool) {
        let mut contended = t > at;
        let before = self.busy.range(..=t).next_back().map(|(&s, sp)| (s, sp.end));
        for (s, e) in before.into_iter().chain(self.busy.range(t + 1..).map(|(&s, sp)| (s, sp.end))) {
            if e <= t {
                continue;
            }
            let need = hold + if contended { handoff } else { 0 };
            if t + need <= s {
                break;
            }
            t = t.max(e);
            contended = true;
        }
        (t, contended)
    }
}

impl SpinLock {
    /// Drops the oldest busy span from the calendar (it is not empty).
    fn pop_oldest(&mut self) -> Span {
        let (_, sp) = self.busy.pop_first().expect("the calendar is not empty");
        self.sections -= sp.sections;
        if self.busy.is_empty() {
            self.last_end = 0;
        }
        sp
    }

    /// [`SpinLock::occupy`] for a section from `from` on, at or after the end of every span:
    /// it can only touch the last span, and nothing begins at its end.
    fn append(&mut self, from: u64, to: u64) {
        match self.busy.last_entry() {
            Some(mut last) if last.get().end == from => {
                let span = last.get_mut();
                span.end = to;
                span.sections += 1;
            }
            _ => {
                self.busy.insert(from, Span { end: to, sections: 1 });
            }
        }
        self.sections += 1;
        self.last_end = to;
    }

    /// Marks `from..to` busy (a gap of the calendar, from its start): one span with the span
    /// that ends at `from` and the one that begins at `to`, if they touch it.
    fn occupy(&mut self, from: u64, to: u64) {
        let mut span = Span { end: to, sections: 1 };
        let mut start = from;
        if let Some((&s, before)) = self.busy.range(..from).next_back() {
            if before.end == from {
                start = s;
                span.sections += before.sections;
            }
        }
        if let Some(after) = self.busy.remove(&to) {
            span.end = after.end;
            span.sections += after.sections;
        }
        self.last_end = self.last_end.max(span.end);
        self.busy.insert(start, span);
        self.sections += 1;
    }

    /// The busy spans kept (for tests).
    pub fn spans(&self) -> usize {
        self.busy.len()
    }
}

/// A busy span of the calendar: its end, and how many sections it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    end: u64,
    sections: u64,
}

/// What one lock (or a class of locks, summed) saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockStat {
    /// Its sections: acquisitions, contended ones, their wait and hold.
    pub total: TakerStat,
    /// Sections dropped from a full calendar before the horizon passed them.
    pub forgotten: u64,
    /// The most busy spans the calendar kept at once (its memory; the most of any one lock
    /// of a class).
    pub calendar_peak: u64,
    /// The most sections those spans held at once: what a calendar of one entry a section
    /// would have kept.
    pub sections_peak: u64,
    /// The waits ([`crate::hist`]).
    waits: Histogram,
    /// The same counts by the kernel function that took the lock, in the order first seen.
    by_function: Vec<(&'static str, TakerStat)>,
}

/// What sections of a lock (or a class of locks) saw, all of them ([`LockStat::total`]) or one
/// kernel function's: a section is contended when it waited (spun) before its hold, which
/// [`SpinLock::lock_within`] makes the same as a wait that is not zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TakerStat {
    pub acquisitions: u64,
    pub contended: u64,
    pub wait_ns: u64,
    pub hold_ns: u64,
}

impl TakerStat {
    fn count(&mut self, wait: u64, hold: u64) {
        self.acquisitions += 1;
        self.contended += (wait > 0) as u64;
        self.wait_ns += wait;
        self.hold_ns += hold;
    }

    fn merge(&mut self, o: &TakerStat) {
        self.acquisitions += o.acquisitions;
        self.contended += o.contended;
        self.wait_ns += o.wait_ns;
        self.hold_ns += o.hold_ns;
    }
}

impl LockStat {
    fn count(&mut self, wait: u64, hold: u64) {
        self.total.count(wait, hold);
        self.waits.record(wait);
    }

    /// Adds another lock's counts (a class of locks: every lruvec's lru_lock).
    pub fn merge(&mut self, o: &LockStat) {
        self.total.merge(&o.total);
        self.forgotten += o.forgotten;
        self.calendar_peak = self.calendar_peak.max(o.calendar_peak);
        self.sections_peak = self.sections_peak.max(o.sections_peak);
        self.waits.merge(&o.waits);
        for (by, t) in &o.by_function {
            self.by_function(by).merge(t);
        }
    }

    /// The counts of the sections taken by `by`.
    fn by_function(&mut self, by: &'static str) -> &mut TakerStat {
        let i = match self.by_function.iter().position(|(f, _)| *f == by) {
            Some(i) => i,
            None => {
                self.by_function.push((by, TakerStat::default()));
                self.by_function.len() - 1
            }
        };
        &mut self.by_function[i].1
    }

    /// The wait at quantile `q` (0..1): the upper bound of its bucket (within 1/8 of it).
    pub fn wait_quantile(&self, q: f64) -> u64 {
        self.waits.quantile(q)
    }

    /// The report's figures.
    pub fn summary(&self) -> LockSummary {
        LockSummary {
            acquisitions: self.total.acquisitions,
            contended: self.total.contended,
            wait_ns: self.total.wait_ns,
            wait_p50_ns: self.wait_quantile(0.5),
            wait_p99_ns: self.wait_quantile(0.99),
            hold_ns: self.total.hold_ns,
            forgotten: self.forgotten,
            calendar_peak: self.calendar_peak,
            by_function: self.by_function.iter().map(|(f, t)| (f.to_string(), *t)).collect(),
        }
    }
}

/// A lock's figures in a report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LockSummary {
    pub acquisitions: u64,
    pub contended: u64,
    pub wait_ns: u64,
    pub wait_p50_ns: u64,
    pub wait_p99_ns: u64,
    pub hold_ns: u64,
    /// Sections a full calendar dropped (see the contract's "Order"): 0 unless the actors'
    /// clocks drift apart by more than [`CALENDAR`] busy spans (the report warns of it).
    pub forgotten: u64,
    /// The most busy spans one lock's calendar kept at once.
    pub calendar_peak: u64,
    /// The same figures by the kernel function that took the lock (`rmqueue_bulk`,
    /// `drain_all_pages`, `evict_folios`, …); absent when no section was taken.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub by_function: std::collections::BTreeMap<String, TakerStat>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_lock_is_taken_at_once_without_a_handoff() {
        let mut l = SpinLock::default();
        let s = l.lock(100, 50, 7, 0);
        assert_eq!(s, Section { start: 100, end: 150, spin: 0 });
        assert_eq!((l.stat.total.acquisitions, l.stat.total.contended), (1, 0));
    }

    #[test]
    fn waiters_are_served_in_the_order_they_ask_with_a_handoff_each() {
        let mut l = SpinLock::default();
        l.lock(0, 100, 10, 0);
        let a = l.lock(20, 100, 10, 0);
        let b = l.lock(30, 100, 10, 0);
        assert_eq!((a.start, a.end), (110, 210), "the first waiter gets it at the holder's release, after the handoff");
        assert_eq!((b.start, b.end), (220, 320), "the second after the first");
        assert_eq!(b.spin, 190);
        assert_eq!(l.stat.total.contended, 2);
        assert_eq!(l.stat.total.wait_ns, 90 + 190);
    }

    #[test]
    fn a_section_after_every_span_is_placed_as_the_calendar_search_places_it() {
        // The common case without a search (queued_spin_lock() finding the lock free, or
        // queueing behind the last holder) against the search of the calendar, on random
        // requests: mostly in time order, some processed late, holds of zero, handoffs, a
        // rising horizon and small calendars that forget. Times from few values, so that
        // sections touching the last span are common.
        let mut rng = pagelab_workload::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut next = |m: u64| rng.below(m);
        let mut after_all = 0;
        for calendar in [1, 2, 3, CALENDAR] {
            let mut fast = SpinLock::default();
            let mut search = SpinLock { search_always: true, ..SpinLock::default() };
            let (mut clock, mut horizon) = (0, 0);
            for round in 0..20_000 {
                clock += 10 * next(6);
                let at = if next(4) == 0 { clock.saturating_sub(10 * next(20)) } else { clock };
                if next(8) == 0 {
                    horizon = horizon.max(clock.saturating_sub(10 * next(30)));
                }
                let (hold, handoff) = (10 * next(3), 5 * next(2));
                after_all += fast.after_all(at.max(fast.floor)) as u64;
                let want = search.lock_within(at, hold, handoff, horizon, calendar);
                let got = fast.lock_within(at, hold, handoff, horizon, calendar);
                assert_eq!(got, want, "calendar {calendar}, round {round}");
                assert!(fast.busy.iter().eq(search.busy.iter()), "calendar {calendar}, round {round}");
                assert_eq!((fast.sections, fast.floor, fast.last_end), (search.sections, search.floor, search.last_end));
                assert_eq!(fast.last_end, fast.busy.last_key_value().map_or(0, |(_, sp)| sp.end));
            }
            assert_eq!(fast.stat, search.stat, "calendar {calendar}");
        }
        assert!((20_000..70_000).contains(&after_all), "both paths taken: {after_all} of 80,000 without a search");
    }

    #[test]
    fn a_request_processed_late_fits_into_the_gap_before_a_later_section() {
        let mut l = SpinLock::default();
        // Processed first, but at 1000: the lock is free before it.
        l.lock(1000, 100, 10, 0);
        let early = l.lock(200, 100, 10, 0);
        assert_eq!((early.start, early.spin), (200, 0), "the request at 200 is not queued behind one at 1000");
        // One that does not fit before it waits for it.
        let clash = l.lock(950, 100, 10, 0);
        assert_eq!(clash.start, 1110);
    }

    #[test]
    fn the_hold_is_the_sections_and_scales_with_its_batch() {
        let mut l = SpinLock::default();
        let per_folio = 40;
        let small = l.lock(0, 15 * per_folio, 0, 0);
        let large = l.lock(10_000, 31 * per_folio, 0, 0);
        assert_eq!(small.end - small.start, 600);
        assert_eq!(large.end - large.start, 1240);
        assert_eq!(l.stat.total.hold_ns, 1840);
    }

    #[test]
    fn a_forgotten_section_still_holds_back_older_requests() {
        let mut l = SpinLock::default();
        for i in 0..(CALENDAR as u64 + 5) {
            l.lock(i * 1000, 10, 0, 0);
        }
        let old = l.lock(0, 10, 0, 0);
        assert!(old.start >= 4 * 1000 + 10, "a request older than the calendar waits past what it forgot: {old:?}");
        assert_eq!(l.stat.forgotten, 6);
    }

    #[test]
    fn back_to_back_sections_are_one_span_and_a_small_calendar_places_them_exactly() {
        // A saturated lock: 1,000 requests at once, each served after the one before. Kept as
        // separate sections they overflowed any calendar of fewer (the 72-CPU memcached).
        let mut wide = SpinLock::default();
        let mut narrow = SpinLock::default();
        let mut last = 0;
        for i in 0..1000u64 {
            let a = wide.lock(i % 7, 100, 10, 0);
            let b = narrow.lock_within(i % 7, 100, 10, 0, 2);
            assert_eq!(a, b, "request {i}");
            last = b.end;
        }
        assert_eq!(last, 100 + 999 * 110, "each after the one before, with a handoff");
        assert_eq!(narrow.spans(), 1, "one busy span from the first hold to the last");
        assert_eq!(narrow.stat.sections_peak, 1000, "holding the 1,000 sections");
        assert_eq!(narrow.stat.forgotten, 0);
        assert_eq!(narrow.stat, wide.stat);
        // One asked inside the span waits for its end, as for the last of its sections.
        let inside = narrow.lock_within(5_000, 100, 10, 0, 2);
        assert_eq!(inside.start, last + 10, "after the last of the 1,000 sections and a handoff");
    }

    #[test]
    fn a_section_of_no_hold_occupies_nothing_and_erases_no_section() {
        let mut l = SpinLock::default();
        l.lock(0, 100, 0, 0);
        let b = l.lock(50, 100, 0, 0);
        assert_eq!((b.start, b.end), (100, 200));
        // An empty putback at the two sections' meeting point (before this fix it replaced
        // the second section in the calendar, which then let a request hold the lock
        // inside it).
        let empty = l.lock(100, 0, 0, 0);
        assert_eq!(empty.end, 200, "it waits for the holder, holding nothing");
        assert_eq!(l.lock(120, 10, 0, 0).start, 200, "the second section still holds the lock until 200");
        // Nor does an empty section push a later-processed request that spans its time.
        l.lock(1_000, 0, 0, 0);
        assert_eq!(l.lock(950, 100, 0, 0).start, 950);
    }

    #[test]
    fn sections_before_the_horizon_are_forgotten_and_later_gaps_still_fit() {
        let mut l = SpinLock::default();
        for i in 0..100u64 {
            l.lock(i * 1000, 10, 0, 0);
        }
        // Nothing asks before 50,000 any more: what ended before is dropped, nothing forgotten.
        let s = l.lock(60_500, 10, 0, 50_000);
        assert_eq!((s.start, s.spin), (60_500, 0), "the gap after the section at 60,000 fits");
        assert_eq!(l.busy.len(), 50 + 1);
        assert_eq!(l.stat.forgotten, 0);
    }

    #[test]
    fn sections_are_counted_by_the_function_that_took_the_lock_and_summed_over_a_class() {
        let mut a = SpinLock::default();
        a.lock_by("rmqueue_bulk", 0, 100, 10, 0, CALENDAR);
        a.lock_by("drain_all_pages", 50, 200, 10, 0, CALENDAR);
        a.lock_by("rmqueue_bulk", 1_000, 100, 10, 0, CALENDAR);
        let mut b = SpinLock::default();
        b.lock_by("drain_all_pages", 0, 300, 10, 0, CALENDAR);
        let mut class = LockStat::default();
        class.merge(&a.stat);
        class.merge(&b.stat);
        let s = class.summary();
        let refill = s.by_function["rmqueue_bulk"];
        let drain = s.by_function["drain_all_pages"];
        assert_eq!(refill, TakerStat { acquisitions: 2, contended: 0, wait_ns: 0, hold_ns: 200 });
        assert_eq!(drain, TakerStat { acquisitions: 2, contended: 1, wait_ns: 60, hold_ns: 500 }, "the drain at 50 waited for the refill and a handoff");
        assert_eq!(
            (refill.acquisitions + drain.acquisitions, refill.wait_ns + drain.wait_ns),
            (s.acquisitions, s.wait_ns),
            "the split sums to the lock's figures"
        );
    }

    #[test]
    fn wait_quantiles_come_within_an_eighth_of_the_waits() {
        let mut s = LockStat::default();
        for w in 1..=1000u64 {
            s.count(w * 100, 1);
        }
        let p50 = s.wait_quantile(0.5);
        let p99 = s.wait_quantile(0.99);
        assert!((50_000..=50_000 * 9 / 8).contains(&p50), "{p50}");
        assert!((99_000..=99_000 * 9 / 8).contains(&p99), "{p99}");
    }
}
