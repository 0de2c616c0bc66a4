//! The real kernel as judge (placeholder; see issue 4).
