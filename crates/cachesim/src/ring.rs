//! A ring of pages: the queue under FIFO and CLOCK.

/// A queue of pages in a ring: while full, the front leaves and a new page takes its slot at
/// the back in one store (the trace replays' cache is always full once warm); below that it
/// grows like a `Vec` (the machine's cache has no fixed size).
#[derive(Default)]
pub(crate) struct Ring {
    pub(crate) buf: Vec<u32>,
    pub(crate) head: usize,
    pub(crate) len: usize,
}

impl Ring {
    pub(crate) fn with_capacity(n: usize) -> Ring {
        Ring { buf: Vec::with_capacity(n), head: 0, len: 0 }
    }

    #[inline(always)]
    pub(crate) fn next(&self, i: usize) -> usize {
        if i + 1 == self.buf.len() {
            0
        } else {
            i + 1
        }
    }

    #[inline(always)]
    pub(crate) fn push_back(&mut self, x: u32) {
        if self.len == self.buf.len() {
            if self.head != 0 {
                self.buf.rotate_left(self.head);
                self.head = 0;
            }
            self.buf.push(x);
        } else {
            let i = (self.head + self.len) % self.buf.len();
            self.buf[i] = x;
        }
        self.len += 1;
    }

    #[inline(always)]
    pub(crate) fn front(&self) -> Option<u32> {
        (self.len > 0).then(|| self.buf[self.head])
    }

    #[inline(always)]
    pub(crate) fn pop_front(&mut self) -> Option<u32> {
        let x = self.front()?;
        self.head = self.next(self.head);
        self.len -= 1;
        Some(x)
    }

    /// Moves the front page to the back.
    #[inline(always)]
    pub(crate) fn rotate(&mut self) {
        if self.len == self.buf.len() {
            self.head = self.next(self.head);
        } else if let Some(x) = self.pop_front() {
            self.push_back(x);
        }
    }

    /// The front page leaves and `x` enters at the back (a full ring: one store).
    #[inline(always)]
    pub(crate) fn replace_front(&mut self, x: u32) -> u32 {
        if self.len < self.buf.len() {
            let v = self.pop_front().expect("a page to replace");
            self.push_back(x);
            return v;
        }
        let v = std::mem::replace(&mut self.buf[self.head], x);
        self.head = self.next(self.head);
        v
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len).map(|k| self.buf[(self.head + k) % self.buf.len()])
    }

    pub(crate) fn capacity(&self) -> usize {
        self.buf.capacity()
    }
}
