//! What users do with runs: named experiments, side-by-side comparisons, sweeps over a
//! parameter, sizing curves (exact or by miniature simulation), trace replays through plain
//! caches or the kernel model, and trace statistics.

pub mod compare;
pub mod curve;
pub mod experiments;
pub mod replay;
pub mod replay_access;
pub mod size;
pub mod sweep;
pub mod tables;
pub mod trace_stats;
