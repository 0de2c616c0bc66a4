//! Where the newest version of a written key lies, as LevelDB 1.23 moves it, and so where a
//! get finds it.
//!
//! **The contract.**
//! - A write puts the key's newest version in the memtable of the moment, its *generation*
//!   (DBImpl::Write(), MemTable::Add()): a get then finds it in memory, in the memtable or
//!   in a full memtable waiting for its flush (DBImpl::Get() looks at `mem_`, then `imm_`).
//! - The memtable's flush makes it an L0 table's (WriteLevel0Table()): a get finds it in
//!   that table, after the newer L0 tables (Version::Get() searches L0 newest first).
//! - L0's compaction carries it into L1, and each compaction of the table that holds it
//!   carries it one level down (DoCompactionWork() keeps each key's newest version): a get
//!   finds it at that level, after the levels above.
//! - It is followed until it reaches its own level ([`Layout::level_of`], where the loaded
//!   version lies): from there a get finds it where it found the loaded key.
//! - A key written again is where its latest write put it; the earlier entries are stale.
//!
//! **Memory**: an entry per key written and not yet at its own level, nothing per record.

use std::collections::{HashMap, VecDeque};

use super::Layout;

/// Where a get finds a key ([`Placement::find`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// In the memtable or a full memtable not yet flushed.
    Memory,
    /// In the live L0 table of this index (oldest first).
    L0(usize),
    /// In this level (0-based from L1), above its own.
    Level(usize),
    /// At its own level: never written, or carried down to it.
    Home,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Generation(u64),
    Level(usize),
}

/// The written keys' places ([module docs](self)).
#[derive(Clone, Debug, Default)]
pub struct Placement {
    place: HashMap<u64, Place>,
    /// The keys each generation took, from `first_generation` on (stale entries included).
    generations: VecDeque<Vec<u64>>,
    /// The oldest generation not yet compacted into L1: the first live L0 table's.
    first_generation: u64,
    /// Each level's keys, by the table whose range holds them (stale entries included).
    levels: Vec<HashMap<u64, Vec<u64>>>,
}

impl Placement {
    /// A write of `key` into the memtable of generation `generation`.
    pub fn write(&mut self, key: u64, generation: u64) {
        let at = (generation - self.first_generation) as usize;
        if self.generations.len() <= at {
            self.generations.resize_with(at + 1, Vec::new);
        }
        self.generations[at].push(key);
        self.place.insert(key, Place::Generation(generation));
    }

    /// Where a get finds `key`, with `l0_live` L0 tables holding the generations from the
    /// first not yet compacted on.
    pub fn find(&self, key: u64, l0_live: usize) -> Found {
        match self.place.get(&key) {
            None => Found::Home,
            Some(&Place::Level(level)) => Found::Level(level),
            Some(&Place::Generation(g)) => match (g - self.first_generation) as usize {
                i if i < l0_live => Found::L0(i),
                _ => Found::Memory,
            },
        }
    }

    /// L0's compaction into L1: the keys of the first `tables` generations (the live L0
    /// tables) are L1's now.
    pub fn compact_level0(&mut self, tables: usize, layout: &Layout) {
        for _ in 0..tables {
            let g = self.first_generation;
            self.first_generation += 1;
            for key in self.generations.pop_front().unwrap_or_default() {
                if self.place.get(&key) == Some(&Place::Generation(g)) {
                    self.settle(key, 0, layout);
                }
            }
        }
    }

    /// Table `table` of `level` was compacted into the level below: its keys are there now.
    pub fn compact_table(&mut self, level: usize, table: u64, layout: &Layout) {
        let Some(keys) = self.levels.get_mut(level).and_then(|l| l.remove(&table)) else { return };
        for key in keys {
            if self.place.get(&key) == Some(&Place::Level(level)) {
                self.settle(key, level + 1, layout);
            }
        }
    }

    /// `key`'s newest version arrived in `level`: followed there, or no more once it is
    /// the key's own level.
    fn settle(&mut self, key: u64, level: usize, layout: &Layout) {
        if layout.level_of(key) <= level {
            self.place.remove(&key);
            return;
        }
        if self.levels.len() <= level {
            self.levels.resize_with(level + 1, HashMap::new);
        }
        let (table, _) = layout.table_and_block(key, level);
        self.levels[level].entry(table).or_default().push(key);
        self.place.insert(key, Place::Level(level));
    }

    /// Keys followed (what the tests look at).
    #[cfg(test)]
    fn followed(&self) -> usize {
        self.place.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsm::LsmToml;

    fn layout() -> Layout {
        let spec = LsmToml { db_size: Some("1G".into()), ycsb: Some("a".into()), ..Default::default() }.resolve().unwrap();
        Layout::new(&spec)
    }

    /// A key whose own level is `level` or below (0-based from L1).
    fn key_below(l: &Layout, level: usize) -> u64 {
        (0..l.records).find(|&k| l.level_of(k) > level).unwrap()
    }

    #[test]
    fn a_key_written_since_the_last_flush_is_found_in_memory() {
        let l = layout();
        let (mut p, key) = (Placement::default(), key_below(&l, 1));
        assert_eq!(p.find(key, 0), Found::Home, "never written");
        p.write(key, 0);
        assert_eq!(p.find(key, 0), Found::Memory, "in the memtable");
        p.write(key + 1, 1);
        assert_eq!(p.find(key, 0), Found::Memory, "in the full memtable waiting for its flush");
    }

    #[test]
    fn a_flushed_key_is_found_in_its_l0_table_until_l0_is_compacted() {
        let l = layout();
        let mut p = Placement::default();
        let (a, b) = (key_below(&l, 1), key_below(&l, 1) + 1);
        p.write(a, 0);
        p.write(b, 2);
        assert_eq!((p.find(a, 3), p.find(b, 3)), (Found::L0(0), Found::L0(2)), "the tables of their memtables");
        assert_eq!(p.find(b, 2), Found::Memory, "its memtable not yet flushed");
        p.compact_level0(3, &l);
        assert_eq!(p.find(a, 0), Found::Level(0), "in L1 after L0's compaction");
    }

    #[test]
    fn each_compaction_of_its_table_carries_a_key_a_level_down_until_its_own() {
        let l = layout();
        let key = (0..l.records).find(|&k| l.level_of(k) == 2).unwrap();
        let mut p = Placement::default();
        p.write(key, 0);
        p.compact_level0(1, &l);
        let table = |level| l.table_and_block(key, level).0;
        p.compact_table(0, table(0) + 1, &l);
        assert_eq!(p.find(key, 0), Found::Level(0), "another table's compaction leaves it");
        p.compact_table(0, table(0), &l);
        assert_eq!(p.find(key, 0), Found::Level(1));
        p.compact_table(1, table(1), &l);
        assert_eq!((p.find(key, 0), p.followed()), (Found::Home, 0), "at its own level it is no longer followed");
    }

    #[test]
    fn a_key_written_again_is_where_its_last_write_put_it() {
        let l = layout();
        let key = key_below(&l, 1);
        let mut p = Placement::default();
        p.write(key, 0);
        p.compact_level0(1, &l);
        p.write(key, 1);
        p.compact_table(0, l.table_and_block(key, 0).0, &l);
        assert_eq!(p.find(key, 0), Found::Memory, "its stale L1 entry does not move it");
        p.write(key, 1);
        p.compact_level0(1, &l);
        assert_eq!(p.find(key, 0), Found::Level(0), "written twice into one memtable, carried once");
        assert_eq!(p.followed(), 1);
    }
}
