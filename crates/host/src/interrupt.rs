//! A process-wide request to stop: set when the user interrupts a run (Ctrl-C in Python,
//! where the interpreter, not the process, receives the signal), read by the trace readers
//! at every batch and by the simulation loops every few thousand operations, which then end
//! the run early. The caller that set it turns the early end into its own error.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks every running simulation to stop.
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Clears a request (at the start of a new run).
pub fn clear() {
    REQUESTED.store(false, Ordering::Relaxed);
}

/// Whether a stop was requested.
#[inline]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}
