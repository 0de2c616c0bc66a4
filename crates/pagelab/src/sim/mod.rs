//! The simulation around the kernel model: a scenario's schema ([`scenario`]), the operation
//! sources (workload generators, [`trace_workload`] and trace replays), the [`Machine`] with
//! its event loop ([`machine`]), a miniature scenario's sampled objects ([`sample`]), and running
//! a scenario to its report ([`run`]).

pub mod controller;
pub mod machine;
pub mod run;
pub mod sample;
pub mod scenario;
pub mod trace_workload;

pub use machine::*;
