//! Reference cache policies (placeholder; see issue 5).
