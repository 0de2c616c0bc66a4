//! Where a task's operations come from: its workload's generator ([`OpSource::Job`]), a
//! trace's pages replayed from outside the scenario ([`PageOps`], which keeps the trace's
//! [`TraceStatus`]), a list of operations or a stream of them; and the machine's side of
//! them: fetching a task's next operation with its page state prefetched ([`Machine::next_op`]),
//! replacing a task's operations ([`Machine::set_ops`]), and growing a streamed trace's file.

use pagelab_trace::{PageSource, TraceError};
use pagelab_workload::{JobStream, Op};

use super::{Machine, LOOKAHEAD};
use crate::policy::Policy;

/// Where a task's operations come from: its workload's generator, or a trace's pages
/// replayed from outside the scenario ([`Machine::set_ops`]).
pub enum OpSource {
    Job(JobStream),
    Pages(PageOps),
    /// Operations given in full (a fio iolog's).
    List(std::vec::IntoIter<Op>),
    /// Operations streamed from elsewhere (a trace's accesses, read as they are needed).
    Stream(Box<dyn OpStream>),
}

/// A stream of operations from outside the workload generators (see [`OpSource::Stream`]).
pub trait OpStream: Send {
    fn next_op(&mut self) -> Option<Op>;
    /// Operations still to come, as far as known (for progress reports).
    fn remaining(&self) -> u64;
}

impl OpSource {
    /// Operations still to come (for progress reports).
    pub fn remaining(&self) -> u64 {
        match self {
            OpSource::Job(s) => s.remaining(),
            OpSource::Pages(p) => p.remaining,
            OpSource::List(l) => l.len() as u64,
            OpSource::Stream(s) => s.remaining(),
        }
    }
}

impl Iterator for OpSource {
    type Item = Op;

    #[inline]
    fn next(&mut self) -> Option<Op> {
        match self {
            OpSource::Job(s) => s.next(),
            OpSource::Pages(p) => p.next(),
            OpSource::List(l) => l.next(),
            OpSource::Stream(s) => s.next_op(),
        }
    }
}

/// What the caller learns of a replayed trace: its pages and zero-size records so far, and
/// the read error that ended it, if one did. The [`PageOps`] keep it; the run hands it back
/// ([`Machine::take_trace_status`], [`crate::run_with`]).
#[derive(Debug, Default)]
pub struct TraceStatus {
    pub pages_seen: u64,
    /// The trace's reads whose page was not in the page cache when the read began: the
    /// misses, counted where they happen (a page whose read is still in flight is a hit).
    pub misses: u64,
    pub zero_size_records: u64,
    pub error: Option<TraceError>,
}

/// A trace's page indices as operations: each a copy of one template operation with its
/// `page` set. The pages arrive in batches and each operation is built in place, with no
/// dynamic call per operation. A read error ends the operations and is kept in their
/// [`TraceStatus`] for the caller.
pub struct PageOps {
    src: Box<dyn PageSource>,
    buf: Vec<u32>,
    pos: usize,
    pub(super) op: Op,
    pub(super) remaining: u64,
    status: TraceStatus,
    /// The trace's file, for errors.
    path: std::path::PathBuf,
    /// Whether the trace's page count is known before it is read (else the file grows as
    /// the trace reveals pages).
    pub(super) sized: bool,
    /// Pages the trace has shown so far: every page in `buf` is below it.
    pub(super) pages_seen: u64,
}

impl PageOps {
    /// Counts a read of `vpn` as a miss if its page is not cached as the read begins.
    #[inline]
    pub(super) fn note_read(&mut self, space: &crate::mm::mapping::AddressSpace, vpn: crate::mm::mapping::Vpn) {
        self.status.misses += space.resident(vpn).is_none() as u64;
    }
}

impl PageOps {
    pub fn new(src: Box<dyn PageSource>, op: Op, path: &std::path::Path) -> PageOps {
        let remaining = src.len_hint().unwrap_or(0);
        let sized = src.pages().is_some();
        let pages_seen = src.pages().unwrap_or(0);
        PageOps { src, buf: Vec::new(), pos: 0, op, remaining, status: TraceStatus::default(), path: path.to_path_buf(), sized, pages_seen }
    }

    /// Ends the operations with an error about the trace.
    pub(super) fn fail(&mut self, msg: String) {
        self.status.error = Some(TraceError { path: self.path.clone(), offset: None, msg });
        self.buf.clear();
        self.pos = 0;
        self.remaining = 0;
    }

    #[inline]
    fn next(&mut self) -> Option<Op> {
        let page = self.next_page()?;
        Some(Op { page, ..self.op })
    }

    /// The next page of the trace.
    #[inline]
    pub(super) fn next_page(&mut self) -> Option<u64> {
        if self.pos == self.buf.len() && !self.refill() {
            return None;
        }
        let page = self.buf[self.pos] as u64;
        self.pos += 1;
        self.remaining = self.remaining.saturating_sub(1);
        Some(page)
    }

    /// The page `k` operations after the one `next` returned last, if it is in this batch.
    #[inline]
    pub(super) fn peek(&self, k: usize) -> Option<u32> {
        self.buf.get(self.pos + k).copied()
    }

    /// The next batch of pages; false at the end of the trace or at a read error.
    #[cold]
    fn refill(&mut self) -> bool {
        self.buf.clear();
        self.pos = 0;
        let read = self.src.next_batch();
        match read {
            Ok(Some(b)) => self.buf.extend_from_slice(b),
            Ok(None) => {}
            Err(e) => self.status.error = Some(e),
        }
        self.pages_seen = self.pages_seen.max(self.src.pages_seen());
        self.status.pages_seen = self.pages_seen;
        self.status.zero_size_records = self.src.zero_size_records();
        !self.buf.is_empty()
    }
}

impl<P: Policy> Machine<P> {
    /// Replaces task `t`'s operations with `ops`, e.g. a trace's accesses: the task's
    /// objects stay those its workload declared.
    pub fn set_ops(&mut self, t: usize, ops: OpSource) -> Result<(), String> {
        if self.locks.get(t).is_some_and(|l| l.leader.is_some() || !l.followers.is_empty()) {
            return Err("a task in lockstep replays its own workload's operations".into());
        }
        if let OpSource::Pages(p) = &ops {
            let file = self.tasks[t].objects.get(p.op.object as usize).ok_or("the trace's object is not one of the task's")?.file;
            let id = self.mm.space.object_of(file.base);
            if !p.sized && id + 1 != self.mm.space.objects.len() {
                return Err(format!(
                    "a trace of unknown size needs its file `{}` last in the address space (read it in two passes)",
                    self.mm.space.objects[id].name
                ));
            }
        }
        let n = ops.remaining();
        let old = std::mem::replace(&mut self.tasks[t].stream, ops);
        self.total_ops = self.total_ops.saturating_sub(old.remaining()).saturating_add(n);
        Ok(())
    }

    /// What task `t`'s replayed trace showed ([`TraceStatus`]: its pages, its zero-size
    /// records, the read error that ended it), taken from it; `None` when the task replays
    /// no trace's pages ([`OpSource::Pages`]).
    pub fn take_trace_status(&mut self, t: usize) -> Option<TraceStatus> {
        match &mut self.tasks.get_mut(t)?.stream {
            OpSource::Pages(p) => Some(std::mem::take(&mut p.status)),
            _ => None,
        }
    }

    /// The error that ended a trace a workload replays, if one did (the first task's of
    /// several), taken from its stream: the run reports it.
    pub fn take_trace_error(&mut self) -> Option<String> {
        self.tasks.iter_mut().find_map(|t| match &mut t.stream {
            OpSource::Job(st) => st.take_trace_error(),
            _ => None,
        })
    }

    /// A trace read as it streams (an oracleGeneral trace mapped on the fly) reveals its
    /// file's size only at its end, so the file, the last object of the address space, grows
    /// as new pages appear: to at least `pages`, at least doubling so the copies stay linear.
    /// Nothing in the model reads beyond the pages the trace has touched (the reads are
    /// single pages without readahead), so the counters equal those of a file sized for the
    /// whole trace from the start; a test compares the two.
    #[cold]
    #[inline(never)]
    pub(super) fn grow_trace_file(&mut self, t: usize, object: usize, pages: u64) -> bool {
        let file = self.tasks[t].objects[object].file;
        let id = self.mm.space.object_of(file.base);
        let want = pages.max(file.pages.saturating_mul(2)).min(u32::MAX as u64 - 1 - file.base as u64);
        let grown = if want < pages {
            Err(format!("the trace has {pages} distinct pages, more than pagelab's 16 TiB address space holds"))
        } else {
            self.mm.space.grow_last_object(id, want as u32)
        };
        if let Err(e) = grown {
            if let OpSource::Pages(p) = &mut self.tasks[t].stream {
                p.fail(e);
            }
            return false;
        }
        self.mm.file_nodes.grow(self.mm.space.nodes());
        self.mm.pmd_young.resize(self.mm.space.len().div_ceil(512 * 64), 0);
        for o in self.tasks.iter_mut().flat_map(|task| task.objects.iter_mut()).filter(|o| o.file.base == file.base) {
            o.file.pages = want;
        }
        true
    }

    /// The task's next operation. The ones after it are fetched ahead (a trace's are read
    /// in its buffer) and their page state prefetched in two stages (the page-cache entry
    /// LOOKAHEAD operations ahead, the frame one ahead), so the memory the simulator is about
    /// to touch is in cache when it gets there.
    #[inline]
    pub(super) fn next_op(&mut self, t: usize) -> Option<Op> {
        let task = &mut self.tasks[t];
        if let OpSource::Pages(pages) = &mut task.stream {
            // A trace's operations are already in a buffer: look ahead in it, no queue.
            let op = pages.next()?;
            let (seen, file) = (pages.pages_seen, task.objects[op.object as usize].file);
            if seen > file.pages && !self.grow_trace_file(t, op.object as usize, seen) {
                return None;
            }
            let task = &mut self.tasks[t];
            let OpSource::Pages(pages) = &mut task.stream else { unreachable!("matched above") };
            let base = file.base;
            if let Some(page) = pages.peek(0) {
                if let Some(pfn) = self.mm.space.resident(base + page) {
                    self.mm.folios.prefetch(pfn);
                }
            }
            if let Some(page) = pages.peek(LOOKAHEAD - 1) {
                self.mm.space.prefetch(base + page);
            }
            return Some(op);
        }
        while task.ahead.len() <= LOOKAHEAD {
            match task.stream.next() {
                Some(op) if task.samples.is_empty() => task.ahead.push_back(op),
                // A miniature scenario: the operation on the sampled pages, if it has any.
                Some(op) => match task.samples[op.object as usize].as_ref().and_then(|s| s.map(op)) {
                    Some(op) => task.ahead.push_back(op),
                    None => {
                        task.dropped_ops += !op.fill as u64;
                        // The last part of an operation ends it, sampled or not.
                        task.steps += (!op.fill && !op.more) as u64;
                    }
                },
                None => break,
            }
        }
        let op = task.ahead.pop_front()?;
        let vpn_of = |o: &Op| task.objects[o.object as usize].file.base + o.page as u32;
        if let Some(o) = task.ahead.front() {
            if let Some(pfn) = self.mm.space.resident(vpn_of(o)) {
                self.mm.folios.prefetch(pfn);
            }
        }
        if let Some(o) = task.ahead.get(LOOKAHEAD - 1) {
            self.mm.space.prefetch(vpn_of(o));
        }
        Some(op)
    }
}
