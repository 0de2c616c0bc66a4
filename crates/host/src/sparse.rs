//! A table indexed like a flat array whose memory grows with the entries written, not with
//! its length: a file of many TiB costs what its touched pages cost.
//!
//! Entries live in chunks of `1 << CHUNK_SHIFT`. An index table maps each chunk of the
//! logical range to its place in one pool; chunk 0 of the pool is shared by every chunk never
//! written and holds only the default value, so a read is two loads and no branch, and the
//! first write to a chunk gives it a pool chunk of its own. The index costs 4 bytes per
//! chunk of the logical range (1 MiB for 256 Mi entries). [`Table`] keeps small tables flat
//! and uses [`Sparse`] for large ones.

use std::ops::{Index, IndexMut};

/// Entries per chunk: 1024 (8 KiB of u64 entries).
pub const CHUNK_SHIFT: u32 = 10;
const CHUNK: usize = 1 << CHUNK_SHIFT;
const MASK: usize = CHUNK - 1;

/// A `len`-entry table of `T`, every entry `default` until written.
#[derive(Clone, Debug)]
pub struct Sparse<T: Copy> {
    /// Per chunk of the logical range: its chunk number in `pool` (0: never written).
    index: Vec<u32>,
    /// Chunk k holds entries `k << CHUNK_SHIFT ..`; chunk 0 stays all `default`.
    pool: Vec<T>,
    default: T,
    len: usize,
}

impl<T: Copy + Default> Default for Sparse<T> {
    fn default() -> Self {
        Sparse::new(0, T::default())
    }
}

impl<T: Copy> Sparse<T> {
    /// A table of `len` entries, all `default`; nothing but the index is allocated.
    pub fn new(len: usize, default: T) -> Sparse<T> {
        let mut s = Sparse { index: Vec::new(), pool: vec![default; CHUNK], default, len: 0 };
        s.grow(len);
        s
    }

    /// Extends the table to `len` entries (never shrinks); the new ones are `default`.
    pub fn grow(&mut self, len: usize) {
        if len > self.len {
            self.len = len;
            self.index.resize(len.div_ceil(CHUNK), 0);
        }
    }

    /// [`Sparse::grow`], but an index the host cannot allocate is an error naming `what`.
    pub fn try_grow(&mut self, len: usize, what: &str) -> Result<(), String> {
        let chunks = len.div_ceil(CHUNK);
        if chunks > self.index.len() {
            self.index.try_reserve_exact(chunks - self.index.len()).map_err(|_| format!("{what}: cannot allocate the index of {chunks} chunks"))?;
        }
        self.grow(len);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where entry `i` lives in the pool (the shared default chunk if never written). The
    /// index lookup is bounds-checked (an `i` past the table panics, as a `Vec` would); the
    /// slot it yields is always inside the pool: every index value names a chunk the pool
    /// holds (`materialize` pushes the chunk before it stores its number).
    #[inline(always)]
    fn slot(&self, i: usize) -> usize {
        let s = ((self.index[i >> CHUNK_SHIFT] as usize) << CHUNK_SHIFT) | (i & MASK);
        debug_assert!(s < self.pool.len());
        s
    }

    /// Entry `i`'s value.
    #[inline(always)]
    pub fn get(&self, i: usize) -> T {
        *self.get_ref(i)
    }

    /// A reference to entry `i`, for prefetching or reading in place.
    #[inline(always)]
    pub fn get_ref(&self, i: usize) -> &T {
        let s = self.slot(i);
        // SAFETY: `slot` is inside the pool (see there).
        unsafe { self.pool.get_unchecked(s) }
    }

    /// Entry `i`, writable: its chunk gets pool memory of its own on the first write.
    #[inline(always)]
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        let c = i >> CHUNK_SHIFT;
        if self.index[c] == 0 {
            self.materialize(c);
        }
        let s = self.slot(i);
        // SAFETY: `slot` is inside the pool (see there).
        unsafe { self.pool.get_unchecked_mut(s) }
    }

    /// Sets entry `i` to `v`.
    #[inline(always)]
    pub fn set(&mut self, i: usize, v: T) {
        *self.get_mut(i) = v;
    }

    /// The first index at or after `i` whose chunk was ever written (`len` if none): every
    /// entry before it is `default`. A walk over a range skips the chunks never written.
    pub fn next_written(&self, i: usize) -> usize {
        let first = i >> CHUNK_SHIFT;
        if first >= self.index.len() {
            return self.len.max(i);
        }
        if self.index[first] != 0 {
            return i;
        }
        match self.index[first..].iter().position(|&k| k != 0) {
            Some(c) => (first + c) << CHUNK_SHIFT,
            None => self.len,
        }
    }

    #[inline(never)]
    fn materialize(&mut self, chunk: usize) {
        let k = self.pool.len() / CHUNK;
        assert!(k <= u32::MAX as usize, "more than 4 Gi chunks of a sparse table");
        if self.pool.len() == self.pool.capacity() {
            let more = self.pool.len();
            crate::hugevec::reserve(&mut self.pool, more);
        }
        self.pool.extend(std::iter::repeat_n(self.default, CHUNK));
        self.index[chunk] = k as u32;
    }

    /// Bytes held: the index and the chunks written.
    pub fn state_bytes(&self) -> u64 {
        (self.index.capacity() * 4 + self.pool.capacity() * std::mem::size_of::<T>()) as u64
    }
}

impl<T: Copy> Index<usize> for Sparse<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        self.get_ref(i)
    }
}

/// Writing through `[]` gives the entry's chunk memory of its own (see [`Sparse::get_mut`]).
impl<T: Copy> IndexMut<usize> for Sparse<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        self.get_mut(i)
    }
}

/// Tables up to this size stay flat ([`Table::Flat`]).
pub const FLAT_LIMIT_BYTES: usize = 256 << 20;

/// A per-page table that is flat (one load an entry, huge pages: the fastest) while it is no
/// larger than [`FLAT_LIMIT_BYTES`], and [`Sparse`] beyond, where a flat table would cost
/// memory in proportion to its declared length rather than to the entries written. The
/// choice never changes a value read, only what the host spends.
///
/// Once sparse, the flat vector is empty, so an access tests one bound, the one a flat
/// vector's index tests anyway, and only an access that fails it asks which kind the
/// table is.
#[derive(Clone, Debug)]
pub struct Table<T: Copy> {
    flat: Vec<T>,
    default: T,
    sparse: Option<Box<Sparse<T>>>,
}

impl<T: Copy + Default> Default for Table<T> {
    fn default() -> Self {
        Table { flat: Vec::new(), default: T::default(), sparse: None }
    }
}

impl<T: Copy> Table<T> {
    /// A table of `len` entries, all `default`.
    pub fn new(len: usize, default: T) -> Table<T> {
        let mut t = Table { flat: Vec::new(), default, sparse: None };
        t.grow(len);
        t
    }

    fn flat_fits(len: usize) -> bool {
        len.saturating_mul(std::mem::size_of::<T>()) <= FLAT_LIMIT_BYTES
    }

    /// Extends the table to `len` entries (never shrinks), turning sparse when it outgrows
    /// the flat limit.
    pub fn grow(&mut self, len: usize) {
        if let Some(s) = &mut self.sparse {
            s.grow(len);
        } else if Self::flat_fits(len) {
            crate::hugevec::grow(&mut self.flat, len, self.default);
        } else {
            let mut s = Sparse::new(len, self.default);
            for (i, x) in self.flat.iter().enumerate() {
                s.set(i, *x);
            }
            self.flat = Vec::new();
            self.sparse = Some(Box::new(s));
        }
    }

    /// [`Table::grow`], but memory the host cannot give is an error naming `what`.
    pub fn try_grow(&mut self, len: usize, what: &str) -> Result<(), String> {
        match &mut self.sparse {
            Some(s) => s.try_grow(len, what),
            None if Self::flat_fits(len) => crate::hugevec::try_grow(&mut self.flat, len, self.default, what),
            None => {
                self.grow(len);
                Ok(())
            }
        }
    }

    pub fn len(&self) -> usize {
        match &self.sparse {
            Some(s) => s.len(),
            None => self.flat.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline(always)]
    pub fn get(&self, i: usize) -> T {
        *self.get_ref(i)
    }

    #[inline(always)]
    pub fn get_ref(&self, i: usize) -> &T {
        match self.flat.get(i) {
            Some(x) => x,
            None => self.sparse_ref(i),
        }
    }

    #[inline(always)]
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        if i < self.flat.len() {
            return &mut self.flat[i];
        }
        self.sparse_mut(i)
    }

    /// Entry `i`, or None past the table's end.
    #[inline(always)]
    pub fn try_ref(&self, i: usize) -> Option<&T> {
        match self.flat.get(i) {
            Some(x) => Some(x),
            None => self.sparse.as_ref().filter(|s| i < s.len()).map(|s| s.get_ref(i)),
        }
    }

    /// Entry `i` of a sparse table (an index past a flat table's end panics here).
    #[inline(never)]
    fn sparse_ref(&self, i: usize) -> &T {
        match &self.sparse {
            Some(s) => s.get_ref(i),
            None => panic!("index {i} out of a table of {} entries", self.flat.len()),
        }
    }

    #[inline(never)]
    fn sparse_mut(&mut self, i: usize) -> &mut T {
        let len = self.flat.len();
        match &mut self.sparse {
            Some(s) => s.get_mut(i),
            None => panic!("index {i} out of a table of {len} entries"),
        }
    }

    #[inline(always)]
    pub fn set(&mut self, i: usize, v: T) {
        *self.get_mut(i) = v;
    }

    pub fn is_sparse(&self) -> bool {
        self.sparse.is_some()
    }

    /// The first index at or after `i` that may hold a value other than `default`
    /// ([`Sparse::next_written`]; `i` itself for a flat table).
    pub fn next_written(&self, i: usize) -> usize {
        match &self.sparse {
            Some(s) => s.next_written(i),
            None => i,
        }
    }

    /// Bytes held.
    pub fn state_bytes(&self) -> u64 {
        match &self.sparse {
            Some(s) => s.state_bytes(),
            None => (self.flat.capacity() * std::mem::size_of::<T>()) as u64,
        }
    }
}

impl<T: Copy> Index<usize> for Table<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        self.get_ref(i)
    }
}

impl<T: Copy> IndexMut<usize> for Table<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        self.get_mut(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritten_entries_read_as_the_default_and_cost_no_chunk() {
        // 4 Gi entries: pagelab's whole 16 TiB address space, 32 GiB as a flat table.
        let s = Sparse::new(1 << 32, 7u64);
        assert_eq!((s.get(0), s.get((1 << 32) - 1), s[12345]), (7, 7, 7));
        assert!(s.state_bytes() <= (16 << 20) + 8 * CHUNK as u64, "the index and the default chunk only: {} bytes", s.state_bytes());
        assert_eq!(s.pool.len(), CHUNK, "only the shared default chunk");
    }

    #[test]
    fn writes_land_in_their_own_chunk_and_leave_the_default_chunk_alone() {
        let mut s = Sparse::new(10 * CHUNK, 0u64);
        s.set(3, 30);
        s[5 * CHUNK + 1] = 51;
        s[5 * CHUNK + 2] += 2;
        assert_eq!((s.get(3), s.get(4), s.get(5 * CHUNK + 1), s.get(5 * CHUNK + 2)), (30, 0, 51, 2));
        assert_eq!((s.get(CHUNK + 3), s.get(9 * CHUNK + 1)), (0, 0), "other chunks still read the default");
        assert_eq!(s.pool.len(), 3 * CHUNK, "the default chunk and two written ones");
        s.grow(20 * CHUNK);
        assert_eq!((s.len(), s.get(19 * CHUNK), s.get(3)), (20 * CHUNK, 0, 30));
        s.grow(5);
        assert_eq!(s.len(), 20 * CHUNK, "grow never shrinks");
    }

    #[test]
    fn matches_a_flat_vector_under_random_writes() {
        let n = 50 * CHUNK + 17;
        let mut flat = vec![0u32; n];
        let mut s = Sparse::new(n, 0u32);
        let mut rng = crate::xorshift::XorShift64::new(0x9E37_79B9_7F4A_7C15);
        for step in 0..20_000u32 {
            let x = rng.next_u64();
            let i = (x % n as u64) as usize;
            flat[i] = step;
            s[i] = step;
        }
        assert!((0..n).all(|i| s.get(i) == flat[i]));
    }

    #[test]
    fn a_table_is_flat_while_small_and_turns_sparse_keeping_its_values() {
        let mut t = Table::new(1000, 0u64);
        t[7] = 70;
        assert!(!t.is_sparse());
        t.grow(FLAT_LIMIT_BYTES / 8);
        assert!(!t.is_sparse(), "exactly at the limit it stays flat");
        t[FLAT_LIMIT_BYTES / 8 - 1] = 9;
        t.grow(FLAT_LIMIT_BYTES / 8 + 1);
        assert!(t.is_sparse());
        assert_eq!((t.get(7), t.get(8), t.get(FLAT_LIMIT_BYTES / 8 - 1), t.get(FLAT_LIMIT_BYTES / 8)), (70, 0, 9, 0));
        let big = Table::new(1 << 32, 0u64);
        assert!(big.is_sparse() && big.state_bytes() < 32 << 20, "a 16 TiB space costs its index: {}", big.state_bytes());
    }

    #[test]
    fn try_ref_ends_at_the_tables_end_flat_or_sparse() {
        let mut flat = Table::new(10, 5u64);
        flat[9] = 90;
        assert_eq!((flat.try_ref(9), flat.try_ref(10)), (Some(&90), None));
        let mut sparse = Table::new(FLAT_LIMIT_BYTES / 8 + 1, 5u64);
        sparse[FLAT_LIMIT_BYTES / 8] = 7;
        assert!(sparse.is_sparse());
        assert_eq!((sparse.try_ref(3), sparse.try_ref(FLAT_LIMIT_BYTES / 8), sparse.try_ref(FLAT_LIMIT_BYTES / 8 + 1)), (Some(&5), Some(&7), None));
    }

    #[test]
    #[should_panic(expected = "index 10 out of a table of 10 entries")]
    fn an_index_past_a_flat_tables_end_panics() {
        let t = Table::new(10, 0u64);
        t.get(10);
    }
}
