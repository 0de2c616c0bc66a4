//! LevelDB's flushes and compactions (LevelDB 1.23's db/db_impl.cc and db/version_set.cc),
//! in the writer's task or on its background thread (`compaction_thread`).
//!
//! **The contract.**
//! - A full memtable becomes an L0 table (CompactMemTable(), WriteLevel0Table()) and the
//!   log is replaced. Without the thread the writer that filled it flushes it, and L0 is
//!   compacted into L1 at four tables. With it the memtable waits for the thread
//!   (DBImpl::imm_), one at a time.
//! - A compaction reads its inputs in order through the table cache but not the block
//!   cache, deletes them and writes its outputs (DoCompactionWork()). L0's goes into every
//!   L1 table; a level's takes the table at its compaction pointer and the tables of the
//!   level below that overlap it. The bytes pushed into a level over its size are owed to
//!   the level below ([`LsmState::push_down`]), and a written key moves with its table
//!   (crate::lsm::Placement).
//! - The thread does one piece of work at a time ([`LsmState::background`]): a waiting
//!   flush first, then the size compaction of the level with the highest score
//!   ([`LsmState::pick_compaction`]), then the seek compaction of a table whose seeks ran
//!   out ([`LsmState::charge_seek`]).
//! - Writers are held back as MakeRoomForWrite() holds them ([`LsmState::write_slowed`],
//!   [`LsmState::write_stalled`]).

use std::collections::VecDeque;

use super::{LsmState, OpKind, Shape, L0_SLOWDOWN, L0_STOP, L0_TRIGGER, SLOWDOWN_NS, WRITE_PAGES};
use crate::gen::{Op, COMPACTOR_POLL_NS};
use crate::rng::Rng;
use crate::size::PAGE_SIZE;

/// What LevelDB's background compaction thread has to do (DBImpl::MaybeScheduleCompaction()
/// and BackgroundCompaction(), LevelDB 1.23), with `compaction_thread`.
#[derive(Clone, Debug, Default)]
pub struct Background {
    /// Full memtables waiting for their flush (DBImpl::imm_): one at most, since a writer
    /// that finds the next full waits for it ([`LsmState::write_stalled`]).
    pub flushes_waiting: u32,
    pub most_flushes_waiting: u32,
    /// The waits of writers for a flush or for L0 below [`L0_STOP`] tables, each counted
    /// once per poll of [`crate::gen::COMPACTOR_POLL_NS`].
    pub write_stalls: u64,
    /// The writes delayed by [`SLOWDOWN_NS`](super::SLOWDOWN_NS) at [`L0_SLOWDOWN`] L0 tables.
    pub write_slowdowns: u64,
    /// The table the seek accounting marked (Version::file_to_compact_) and its level's
    /// table index (`None`: an L0 table). Every flush or compaction installs a new version,
    /// whose mark is empty: a table past its allowed seeks is marked again by its next seek.
    file_to_compact: Option<(u32, Option<u64>)>,
    /// The client threads still running; the thread ends when none is and no work waits.
    pub clients: u32,
}

/// A client's operation to try, or to try again once the parts before it are done
/// ([`LsmState::client_operation`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    pub kind: OpKind,
    pub key: u64,
    /// It was delayed already ([`LsmState::write_slowed`]: once a write).
    pub delayed: bool,
}

impl LsmState {
    /// Models LevelDB 1.23's seek accounting (db/version_set.cc: Version::Get() records the
    /// first table a get consulted once it consults a second; Version::UpdateStats() takes
    /// one from that table's allowed_seeks and, at zero, marks it for compaction;
    /// DBImpl::BackgroundCompaction() then compacts it, PickCompaction()'s seek branch, when
    /// no level is over its size): the get of `key` consulted `files` tables, the newest
    /// live L0 table first if it looked at one, else the L1 table of the key's range.
    /// An L0 table's compaction is L0's into L1 ([`LsmState::compact`]); an L`n` table's
    /// takes it and the tables of the level below its key range overlaps, and writes them
    /// anew (new files, with their own allowed_seeks), and the bytes cascade down
    /// ([`LsmState::push_down`]). Without `compaction_thread` the compaction's IO is queued
    /// after the get's, on the same thread, as the model's flushes are; with it the table is
    /// marked for the thread (one at a time, Version::file_to_compact_).
    pub(super) fn charge_seek(&mut self, key: u64, files: usize, out: &mut VecDeque<Op>) {
        if !self.spec.seek_compaction || files < 2 {
            return;
        }
        let (first, level) = if self.l0_live > 0 {
            (self.objects.l0[self.l0_live - 1], None)
        } else {
            let (table, _) = self.layout.table_and_block(key, 0);
            (self.objects.tables[0][table as usize], Some(table))
        };
        let left = &mut self.allowed_seeks[first as usize];
        *left = left.saturating_sub(1);
        if *left > 0 {
            return;
        }
        if let Some(bg) = self.bg.as_mut() {
            bg.file_to_compact.get_or_insert((first, level));
            return;
        }
        self.seek_compact(first, level, out);
    }

    /// The seek compaction of table `first` (`level`: its index in L1, `None` for an L0
    /// table), PickCompaction()'s seek branch: an L0 table's is L0's into L1.
    pub(super) fn seek_compact(&mut self, first: u32, level: Option<u64>, out: &mut VecDeque<Op>) {
        self.seek_compactions += 1;
        let Some(j) = level else {
            self.compact(out);
            return;
        };
        let shape = self.layout.shape();
        let here = self.layout.tables[0];
        let mut group = vec![(first, shape)];
        if let Some(&below) = self.layout.tables.get(1) {
            let lo = j * below / here;
            let hi = ((j + 1) * below).div_ceil(here).clamp(lo + 1, below);
            group.extend(self.objects.tables[1][lo as usize..hi as usize].iter().map(|&o| (o, shape)));
        }
        self.compaction(&group, &group, out);
        self.placement.compact_table(0, j, &self.layout);
        // The table's bytes are L2's now: L2 is over its size and pushes them on down.
        self.push_down(1, 1, out);
    }

    /// One try of a client thread's YCSB operation `try_.kind` on `try_.key`: its parts
    /// into `out`, and the operation to try again once they are done, if any. With
    /// `compaction_thread` the writers are held back as LevelDB 1.23's MakeRoomForWrite()
    /// holds them:
    /// - an operation that reads before it writes (a read-modify-write, My-YCSB's update:
    ///   a Get, then a Put) does its read, and its write (`OpKind::Put`) is tried after it,
    ///   so that only the write waits;
    /// - a write is first delayed [`SLOWDOWN_NS`](super::SLOWDOWN_NS), once, when L0 is long
    ///   ([`LsmState::write_slowed`]);
    /// - then it sleeps [`COMPACTOR_POLL_NS`] at a time while it must wait
    ///   ([`LsmState::write_stalled`]; LevelDB wakes it with a signal).
    ///
    /// A sleep touches the memtable, as the idle thread's look for work does.
    pub fn client_operation(&mut self, try_: Retry, rng: &mut Rng, out: &mut VecDeque<Op>) -> Option<Retry> {
        let Retry { kind, key, delayed } = try_;
        let reads_first = kind == OpKind::ReadModifyWrite || (kind == OpKind::Update && self.spec.update_reads);
        if reads_first && self.bg.is_some() {
            self.get(key, out);
            return Some(Retry { kind: OpKind::Put, key, delayed: false });
        }
        let writes = matches!(kind, OpKind::Update | OpKind::Insert | OpKind::ReadModifyWrite | OpKind::Put);
        let sleep = if !writes {
            None
        } else if !delayed && self.write_slowed() {
            Some((SLOWDOWN_NS, true))
        } else if self.write_stalled() {
            Some((COMPACTOR_POLL_NS, false))
        } else {
            None
        };
        if let Some((ns, slowed)) = sleep {
            self.count_stall(slowed);
            out.push_back(Op { think_ns: ns, ..self.idle_op() });
            return Some(Retry { delayed: true, ..try_ });
        }
        self.operation(kind, key, rng, out);
        None
    }

    /// Whether a write must wait now (LevelDB 1.23's MakeRoomForWrite(): the memtable is
    /// full and the last full one still waits for its flush, `imm_`, or L0 holds
    /// [`L0_STOP`] tables, so the writer waits on `background_work_finished_signal_`, and
    /// the writers queued behind it with it).
    pub(super) fn write_stalled(&self) -> bool {
        let waits = self.bg.as_ref().is_some_and(|bg| bg.flushes_waiting > 0 || self.l0_live >= L0_STOP);
        waits && self.unflushed >= self.spec.write_buffer_bytes
    }

    /// Whether a write is delayed by [`SLOWDOWN_NS`](super::SLOWDOWN_NS) first
    /// (MakeRoomForWrite(): L0 holds [`L0_SLOWDOWN`] tables or more; once a write).
    pub(super) fn write_slowed(&self) -> bool {
        self.bg.is_some() && self.l0_live >= L0_SLOWDOWN
    }

    /// The size compactions owed ([`LsmState::push_down`]), all levels together.
    pub fn compactions_owed(&self) -> u64 {
        self.owed.iter().sum()
    }

    /// A writer waited for the thread ([`LsmState::write_stalled`]; `slowed`: it was delayed,
    /// [`LsmState::write_slowed`]).
    fn count_stall(&mut self, slowed: bool) {
        if let Some(bg) = self.bg.as_mut() {
            match slowed {
                true => bg.write_slowdowns += 1,
                false => bg.write_stalls += 1,
            }
        }
    }

    /// The log is replaced by a new one (the old deleted) and the memtable starts empty.
    pub(super) fn new_log(&mut self, out: &mut VecDeque<Op>) {
        out.push_back(Self::truncate(self.objects.wal, self.spec.write_buffer_bytes / PAGE_SIZE));
        self.unflushed = 0;
        self.generation += 1;
    }

    /// LevelDB's background compaction thread's next piece of work, its operations put in
    /// `out` (DBImpl::BackgroundCompaction(), LevelDB 1.23): a waiting memtable's flush
    /// (CompactMemTable()), else the size compaction of the level with the highest score
    /// ([`LsmState::pick_compaction`]: L0's into L1, or one a level owes the level below),
    /// else the seek compaction of the marked table. A flush goes first, as
    /// DoCompactionWork() flushes a waiting memtable before it goes on with a compaction; a
    /// piece of work is one compaction. False: nothing to do.
    pub fn background(&mut self, out: &mut VecDeque<Op>) -> bool {
        let pick = self.pick_compaction();
        let Some(bg) = self.bg.as_mut() else { return false };
        if bg.flushes_waiting > 0 || pick.is_some() {
            // Every flush or compaction installs a new version, whose mark is empty.
            bg.file_to_compact = None;
        }
        if bg.flushes_waiting > 0 {
            bg.flushes_waiting -= 1;
            self.write_level0(out);
            return true;
        }
        match pick {
            Some(None) => self.compact(out),
            Some(Some(level)) => self.compact_level(level, out),
            None => {
                let Some((first, level)) = bg.file_to_compact.take() else { return false };
                self.seek_compact(first, level, out);
            }
        }
        true
    }

    /// What the idle compaction thread touches when it looks for work: the memtable's first
    /// page (the DB's mutex and state it reads are the process's memory).
    pub fn idle_op(&self) -> Op {
        Self::anon(self.objects.memtable, 0, 1, false)
    }

    /// The background thread's state, with `compaction_thread`.
    pub fn background_state(&self) -> Option<&Background> {
        self.bg.as_ref()
    }

    /// `clients` client threads run on the store (the compaction thread waits for them).
    pub fn set_clients(&mut self, clients: u32) {
        if let Some(bg) = self.bg.as_mut() {
            bg.clients = clients;
        }
    }

    /// A client thread has done its operations.
    pub fn client_done(&mut self) {
        if let Some(bg) = self.bg.as_mut() {
            bg.clients = bg.clients.saturating_sub(1);
        }
    }

    /// Whether a client thread still runs.
    pub fn clients_running(&self) -> bool {
        self.bg.as_ref().is_some_and(|bg| bg.clients > 0)
    }

    pub(super) fn truncate(object: u32, pages: u64) -> Op {
        Op::truncate(object, 0, pages as u32)
    }

    /// Writes a whole table, 64 KiB at a time, and opens it (LevelDB verifies every table it
    /// builds through the table cache: BuildTable(), FinishCompactionOutputFile()).
    pub(super) fn write_table(&mut self, object: u32, shape: Shape, out: &mut VecDeque<Op>) {
        if self.spec.seek_compaction {
            self.allowed_seeks[object as usize] = shape.allowed_seeks(self.spec.allowed_seeks_min);
        }
        let pages = shape.pages();
        for page in (0..pages).step_by(WRITE_PAGES as usize) {
            out.push_back(Op { write: true, ..self.read(object, page, WRITE_PAGES.min(pages - page)) });
        }
        self.open_table(object, shape, out);
    }

    /// Deletes a table: its pages leave the page cache, its cache entries are never found again.
    pub(super) fn delete_table(&mut self, object: u32, shape: Shape, out: &mut VecDeque<Op>) {
        out.push_back(Self::truncate(object, shape.pages()));
        self.file_number[object as usize] = self.next_file_number;
        self.next_file_number += 1;
    }

    /// The memtable becomes an L0 table (DBImpl::CompactMemTable(), WriteLevel0Table()); the
    /// log is replaced by a new one (the old deleted) and the memtable starts empty. Four L0
    /// tables are compacted.
    pub(super) fn flush(&mut self, out: &mut VecDeque<Op>) {
        let object = self.objects.l0[self.l0_live];
        let shape = self.layout.l0;
        self.write_table(object, shape, out);
        self.new_log(out);
        self.count_level0(out);
    }

    /// The background thread's flush: the waiting memtable becomes an L0 table (its log was
    /// replaced when the writer filled it).
    pub(super) fn write_level0(&mut self, out: &mut VecDeque<Op>) {
        if self.l0_live == self.objects.l0.len() {
            // Not reached: the writers stop at L0_STOP tables, the files there are.
            self.compact(out);
        }
        let object = self.objects.l0[self.l0_live];
        self.write_table(object, self.layout.l0, out);
        self.count_level0(out);
    }

    /// A new L0 table: without `compaction_thread` four are compacted at once; with it the
    /// thread compacts L0 when L0's score is the highest ([`LsmState::pick_compaction`]).
    pub(super) fn count_level0(&mut self, out: &mut VecDeque<Op>) {
        self.l0_live += 1;
        self.flushes += 1;
        if self.l0_live == L0_TRIGGER && self.bg.is_none() {
            self.compact(out);
        }
    }

    /// One compaction (DBImpl::DoCompactionWork()): every input table read in order through
    /// the table cache but not the block cache (`fill_cache = false`), the inputs deleted
    /// (DeleteObsoleteFiles()), the outputs written. The model's outputs are the tables of
    /// the fixed layout that the key range maps to, so an output reuses its input's file once
    /// the input is deleted.
    pub(super) fn compaction(&mut self, inputs: &[(u32, Shape)], outputs: &[(u32, Shape)], out: &mut VecDeque<Op>) {
        for &(object, shape) in inputs {
            self.open_table(object, shape, out);
            for block in 0..shape.data_blocks {
                let (page, n) = shape.data_span(block);
                out.push_back(self.read(object, page, n));
            }
        }
        for &(object, shape) in inputs {
            self.delete_table(object, shape, out);
        }
        for &(object, shape) in outputs {
            self.write_table(object, shape, out);
        }
        self.compactions += 1;
    }

    /// L0 into L1 (every L1 table overlaps L0's range), then the same bytes pushed down each
    /// level, one table and its overlapping tables of the level below at a time, round-robin
    /// over the level (VersionSet::PickCompaction(), `compact_pointer_`): the steady state of
    /// a store whose levels keep their sizes.
    pub(super) fn compact(&mut self, out: &mut VecDeque<Op>) {
        let (l0, shape) = (self.layout.l0, self.layout.shape());
        let l1: Vec<(u32, Shape)> = self.objects.tables[0].iter().map(|&o| (o, shape)).collect();
        let inputs: Vec<(u32, Shape)> = self.objects.l0[..self.l0_live].iter().map(|&o| (o, l0)).chain(l1.iter().copied()).collect();
        self.compaction(&inputs, &l1, out);
        // The bytes L0's tables brought down, pushed on down each level: four tables' after
        // a flush, fewer after a seek compaction of L0.
        let moved = (self.l0_live as u64 * l0.data_blocks).div_ceil(shape.data_blocks);
        self.placement.compact_level0(self.l0_live, &self.layout);
        self.l0_live = 0;
        self.push_down(0, moved, out);
    }

    /// `moved` tables' bytes arrived in level `from` (0-based from L1): each level from
    /// there over its size compacts as many of its tables, round-robin, into the level
    /// below (PickCompaction()'s size branch, one after another: DBImpl's
    /// MaybeScheduleCompaction() after each compaction), down to the last level. The
    /// compactions are owed ([`LsmState::owed`]) and, without `compaction_thread`, done at
    /// once; with it the thread does them one at a time ([`LsmState::background`]).
    pub(super) fn push_down(&mut self, from: usize, moved: u64, out: &mut VecDeque<Op>) {
        if from + 1 < self.layout.tables.len() {
            self.owed[from] += moved;
        }
        if self.bg.is_none() {
            while self.compact_owed(out) {}
        }
    }

    /// One owed compaction, of the highest level that owes one: its table at the level's
    /// compaction pointer and the tables of the level below that overlap it, whose level
    /// then owes one more (down to the last level). False: none is owed.
    pub(super) fn compact_owed(&mut self, out: &mut VecDeque<Op>) -> bool {
        let Some(level) = self.owed.iter().position(|&n| n > 0) else { return false };
        self.compact_level(level, out);
        true
    }

    /// One size compaction of `level`, which owes one: its table at the level's compaction
    /// pointer and the tables of the level below that overlap it.
    pub(super) fn compact_level(&mut self, level: usize, out: &mut VecDeque<Op>) {
        self.owed[level] -= 1;
        let (here, below) = (self.layout.tables[level], self.layout.tables[level + 1]);
        let j = self.cursor[level];
        self.cursor[level] = (j + 1) % here;
        let lo = j * below / here;
        let hi = ((j + 1) * below).div_ceil(here).clamp(lo + 1, below);
        let shape = self.layout.shape();
        let group: Vec<(u32, Shape)> = std::iter::once(self.objects.tables[level][j as usize])
            .chain(self.objects.tables[level + 1][lo as usize..hi as usize].iter().copied())
            .map(|o| (o, shape))
            .collect();
        self.compaction(&group, &group, out);
        self.placement.compact_table(level, j, &self.layout);
        if level + 2 < self.layout.tables.len() {
            self.owed[level + 1] += 1;
        }
    }

    /// The size compaction LevelDB 1.23's thread picks (VersionSet::Finalize(), then
    /// PickCompaction()'s size branch): the level with the highest score, if it is 1 or
    /// more, the first on a tie. L0's score is its tables over four (kL0_CompactionTrigger);
    /// a level's, its bytes over its size: its tables and those it owes the level below,
    /// over its tables. `Some(None)`: L0's compaction; `Some(Some(level))`: that level's.
    pub(super) fn pick_compaction(&self) -> Option<Option<usize>> {
        let mut best = (self.l0_live as f64 / L0_TRIGGER as f64, None);
        for (level, &owed) in self.owed.iter().enumerate() {
            let tables = self.layout.tables[level] as f64;
            let score = (tables + owed as f64) / tables;
            if owed > 0 && score > best.0 {
                best = (score, Some(level));
            }
        }
        (best.0 >= 1.0).then_some(best.1)
    }
}
