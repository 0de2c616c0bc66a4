//! Block devices' queues (the kernel's block/: blk-mq's hardware queues and their tags).
//!
//! # Contract
//!
//! - **A device has a queue depth** (`[time.storage] queue_depth`, `[time.swap]
//!   queue_depth`): at most that many requests are in flight at once, as a blk-mq device
//!   has that many tags (`nr_hw_queues` × `queue_depth` in its tag set; 6.1, 6.12:
//!   blk_mq_get_tag() sleeps when none is free). A request submitted with every tag taken
//!   waits for the first in-flight request to complete ([`Tags::admit`]).
//! - **Unset, the depth is unlimited**: every request's latency overlaps the others' and only
//!   their transfers follow each other (the device's bandwidth), the model's behaviour before
//!   queues existed.
//! - **Order.** Requests are admitted in the order the machine submits them (the order of
//!   its actors' clocks, an operation at a time), and a completion is known when its request
//!   is admitted, so the tags are a heap of completion times.
//! - **What it counts** ([`QueueStat`]): requests, those that waited for a tag, the time they
//!   waited, and the time the device had at least one request in flight (its utilization,
//!   as iostat's `%util` counts it).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A device's tags: the completion times of the requests in flight.
#[derive(Clone, Debug, Default)]
pub struct Tags {
    /// The depth; 0: unlimited.
    depth: u32,
    in_flight: BinaryHeap<Reverse<u64>>,
    /// The end of the last busy stretch counted in `stat.busy_ns`.
    busy_until: u64,
    pub stat: QueueStat,
}

/// What a device's queue saw.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct QueueStat {
    pub requests: u64,
    /// Requests that found every tag taken.
    pub waited: u64,
    pub wait_ns: u64,
    /// Time with at least one request in flight.
    pub busy_ns: u64,
}

impl Tags {
    pub fn new(depth: u32) -> Tags {
        Tags { depth, ..Tags::default() }
    }

    /// A request submitted at `at`: when it gets a tag (at `at` unless every tag is taken, then
    /// at the first completion).
    pub fn admit(&mut self, at: u64) -> u64 {
        self.stat.requests += 1;
        if self.depth == 0 {
            return at;
        }
        while self.in_flight.peek().is_some_and(|&Reverse(done)| done <= at) {
            self.in_flight.pop();
        }
        if self.in_flight.len() < self.depth as usize {
            return at;
        }
        let Reverse(first) = self.in_flight.pop().expect("every tag is taken");
        self.stat.waited += 1;
        self.stat.wait_ns += first - at;
        first
    }

    /// The request admitted at `start` completes at `done`: its tag is taken until then.
    pub fn complete_at(&mut self, start: u64, done: u64) {
        if self.depth > 0 {
            self.in_flight.push(Reverse(done));
        }
        // Utilization: the union of the requests' [start, done) stretches, in the order they
        // come (a stretch that begins before the last one's end extends it).
        let from = start.max(self.busy_until);
        if done > from {
            self.stat.busy_ns += done - from;
            self.busy_until = done;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_depth_no_request_waits() {
        let mut t = Tags::new(0);
        for _ in 0..100 {
            assert_eq!(t.admit(5), 5);
            t.complete_at(5, 1_000);
        }
        assert_eq!(t.stat.waited, 0);
    }

    #[test]
    fn a_full_queue_admits_the_next_request_at_the_first_completion() {
        let mut t = Tags::new(2);
        assert_eq!(t.admit(0), 0);
        t.complete_at(0, 100);
        assert_eq!(t.admit(0), 0);
        t.complete_at(0, 60);
        assert_eq!(t.admit(10), 60, "both tags taken: the one that frees first");
        t.complete_at(60, 160);
        assert_eq!(t.admit(100), 100, "the request of 0..100 has completed");
        assert_eq!((t.stat.waited, t.stat.wait_ns), (1, 50));
    }

    #[test]
    fn utilization_counts_the_time_any_request_is_in_flight() {
        let mut t = Tags::new(4);
        t.admit(0);
        t.complete_at(0, 100);
        t.admit(50);
        t.complete_at(50, 150);
        t.admit(300);
        t.complete_at(300, 400);
        assert_eq!(t.stat.busy_ns, 150 + 100);
    }
}
