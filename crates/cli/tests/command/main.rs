//! The command line's integration tests, one binary (each test binary links the whole model
//! again): each module runs `pagelab` as a user would and reads what it prints and writes.

mod bad_input;
mod cli;
mod seeds_help;
mod tables;
mod trace;
mod trace_formats;
