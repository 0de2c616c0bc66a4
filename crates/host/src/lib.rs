//! What pagelab takes from the host, kept apart from the simulators that use it:
//!
//! - [`hugevec`]: the big flat tables (page frames, address spaces, id maps) backed by
//!   transparent huge pages, and their fallible growth, checked against the host's available
//!   memory, so a size the host cannot back is an error rather than an abort;
//! - [`sparse`]: tables indexed like flat arrays whose memory grows with the entries written
//!   (a file of many TiB costs what its touched pages cost);
//! - [`xorshift`]: the one small seeded generator of test data, benchmarks and the `random`
//!   seam policy;
//! - [`interrupt`]: the flag a Ctrl-C sets and long runs poll, so the Python bindings can
//!   raise `KeyboardInterrupt` instead of leaving a run going;
//! - [`prefetch`]: the one cache hint the simulators give the CPU ahead of a load.

pub mod hugevec;
pub mod interrupt;
pub mod sparse;
pub mod xorshift;

/// Prefetches `p` into the cache (no effect on results).
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching has no observable effect, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch(p as *const i8, core::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
