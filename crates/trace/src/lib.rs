//! Trace readers (placeholder; see issue 5).
