//! pagelab's integration tests, one binary: each module is a topic (the classic LRU's rules,
//! MGLRU's, memcg, the seeds' directions, ...). One binary rather than one per file, because
//! each test binary monomorphizes and optimizes the whole machine model again: thirteen
//! binaries took about 1,400 s of a 2-core release build, one takes a tenth of that.

mod common;

mod apps;
mod bounds;
mod cache_ext;
mod cgroup_events;
mod classic;
mod contention;
mod controllers;
mod held_out;
mod iodepth;
mod kernel_7_3;
mod kernel_slab;
mod large_folios;
mod latency;
mod layers;
mod lists;
mod locks;
mod memcg;
mod mglru;
mod mglru_fg;
mod miniature;
mod numa;
mod pace_lockstep;
mod properties;
mod psi;
mod reclaim_batch;
mod reclaim_yields;
mod refault_models;
mod report_text;
mod run_entry;
mod runs;
mod sched;
mod seam;
mod seam_defer;
mod seeds;
mod trace_workloads;
mod writeback;
