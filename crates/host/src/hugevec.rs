//! Large per-page tables backed by transparent huge pages where the host allows it.
//!
//! The simulators' tables (the kernel model's address-space entries, frames, shadow nodes
//! and swap slots; the plain caches' links; the trace id map) are indexed at random, one
//! entry per simulated access; with 4 KiB host pages most of those
//! accesses also miss the TLB. Asking for huge pages (`madvise(MADV_HUGEPAGE)`, which works
//! under the common `transparent_hugepage=madvise` setting) before the table is first
//! written lets the host back it with 2 MiB pages. A host that refuses changes nothing but
//! speed: results never depend on it.

/// Tables smaller than this stay on ordinary pages.
const HUGE: usize = 2 << 20;

/// A vector of `n` copies of `value`, its memory advised for huge pages before it is filled.
pub fn filled<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v = Vec::new();
    grow(&mut v, n, value);
    v
}

/// Grows `v` to `n` elements of `value` (never shrinks), advising the new memory for huge
/// pages before it is written. A vector that grows again at least doubles its room, so
/// growing by many small steps (a scenario's thousands of files, a streamed trace's file)
/// copies it a logarithmic number of times, not once a step; the first growth is exact.
pub fn grow<T: Clone>(v: &mut Vec<T>, n: usize, value: T) {
    if n <= v.len() {
        return;
    }
    if n > v.capacity() {
        let doubled = v.capacity().saturating_mul(2);
        v.reserve_exact(doubled.max(n) - v.len());
    }
    advise(v);
    v.resize(n, value);
}

/// [`grow`], but a table the host cannot hold is an error naming `what` and the size asked
/// for, instead of an abort: the address space is reserved first (which fails for more than
/// the host could ever back), and room larger than the memory the host has available now
/// (`MemAvailable` in /proc/meminfo) is refused before it is written. The host is asked only
/// when the vector needs more room: growing within the room an earlier call reserved (and
/// checked) reads nothing, so a scenario's 51,200 tables do not read /proc/meminfo 51,200
/// times (12% of a 100 GiB LSM run's time, issue 43).
pub fn try_grow<T: Clone>(v: &mut Vec<T>, n: usize, value: T, what: &str) -> Result<(), String> {
    if n <= v.len() {
        return Ok(());
    }
    let size = std::mem::size_of::<T>() as u128;
    let bytes = (n - v.len()) as u128 * size;
    let gib = |b: u128| b as f64 / (1u64 << 30) as f64;
    if n > v.capacity() {
        let avail = available_bytes();
        if let Some(avail) = avail {
            if bytes > avail as u128 {
                return Err(format!("{what} needs {:.1} GiB of host memory, more than the {:.1} GiB available", gib(bytes), gib(avail as u128)));
            }
        }
        // Double the room when the host has it, so that many small steps copy the vector a
        // logarithmic number of times; else exactly what is asked for.
        let doubled = v.capacity().saturating_mul(2);
        let doubled_fits = avail.is_none_or(|a| (doubled.saturating_sub(v.len()) as u128) * size <= a as u128);
        if doubled <= n || !doubled_fits || v.try_reserve_exact(doubled - v.len()).is_err() {
            v.try_reserve_exact(n - v.len()).map_err(|_| format!("{what}: cannot allocate {:.1} GiB of host memory", gib(bytes)))?;
        }
    }
    advise(v);
    v.resize(n, value);
    Ok(())
}

/// The host's available memory (`MemAvailable`), if it says.
pub fn available_bytes() -> Option<u64> {
    #[cfg(test)]
    HOST_ASKED.with(|c| c.set(c.get() + 1));
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
thread_local! {
    /// The calls of [`available_bytes`] on this thread (a test's, whatever the others do).
    static HOST_ASKED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Reserves room for `n` more elements in `v`, the new memory advised for huge pages before
/// it is first written (the elements are pushed later).
pub fn reserve<T>(v: &mut Vec<T>, n: usize) {
    v.reserve_exact(n);
    advise(v);
}

/// Marks the whole 2 MiB-aligned part of `v`'s allocation for huge pages.
fn advise<T>(v: &Vec<T>) {
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < HUGE {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = v.as_ptr() as usize;
        let first = start.next_multiple_of(HUGE);
        let end = (start + bytes) / HUGE * HUGE;
        if end > first {
            // SAFETY: the range lies inside `v`'s allocation; MADV_HUGEPAGE changes how the
            // host backs it, never its contents. Failure (no THP) is harmless and ignored.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn growing_by_small_steps_doubles_the_room() {
        let mut v = super::filled(1000, 0u8);
        assert_eq!(v.capacity(), 1000, "the first growth is exact");
        let mut reallocs = 0;
        for n in (1001..=100_000).step_by(100) {
            let cap = v.capacity();
            super::try_grow(&mut v, n, 1, "test").unwrap();
            reallocs += (v.capacity() != cap) as u32;
            assert!(v.capacity() <= 2 * n, "{} for {n}", v.capacity());
        }
        assert!(reallocs <= 8, "{reallocs} reallocations growing 1000 -> 100,000 in steps of 100");
        assert_eq!((v[999], v[1000], v.len()), (0, 1, 99_901));
    }

    #[test]
    fn growing_within_the_room_asks_the_host_nothing() {
        // 10,000 steps of 100 elements (an address space's 51,200 tables): /proc/meminfo is
        // read once a reallocation, not once a step.
        let asked = || super::HOST_ASKED.with(|c| c.get());
        let mut v: Vec<u32> = Vec::new();
        let before = asked();
        for n in (100..=1_000_000).step_by(100) {
            super::try_grow(&mut v, n, 0, "test").unwrap();
        }
        assert!(asked() - before <= 16, "{} reads of /proc/meminfo for 10,000 steps", asked() - before);
        assert_eq!(v.len(), 1_000_000);
        // A table larger than any host is still refused, before it is written.
        let mut big: Vec<u64> = Vec::new();
        assert!(super::try_grow(&mut big, usize::MAX / 16, 0, "huge").is_err());
        assert!(big.is_empty());
    }

    #[test]
    fn filled_and_grown_tables_hold_their_values() {
        let mut v = super::filled(1 << 20, 7u64);
        assert!(v.iter().all(|&x| x == 7));
        super::grow(&mut v, (1 << 20) + 3, 9);
        assert_eq!((v.len(), v[1 << 20], v[(1 << 20) - 1]), ((1 << 20) + 3, 9, 7));
        super::grow(&mut v, 5, 1);
        assert_eq!(v.len(), (1 << 20) + 3, "grow never shrinks");
    }
}
