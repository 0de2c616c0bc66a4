//! The file pages a scenario's workload reads, as a `text` trace (`R PAGE`, a line a page)
//! for `pagelab trace-stats --trace-format text`: its top-10% share and reuse distances are
//! the page-level skew the page cache is given (examples/cache_ext/tables.py `fig6-skew`).
//!
//!     cargo run --release -p pagelab --example page_reads -- SCENARIO WORKLOAD [--set K=V]... > reads.txt
//!
//! The stream is the workload generator's, before the page cache: each buffered read of a
//! file (a get's table open, index and data block preads, a scan's, a compaction's) gives
//! the pages it spans, in order; writes, deletions and anonymous memory (an lsm store's
//! block and table caches) are left out. The pages of every file are numbered densely in the
//! order of their first read. A workload of several jobs is drawn as one job of all their
//! operations (`jobs = 1`, `ops` times the jobs): a store's client threads draw their keys
//! from the same distribution, and one thread draws them in a fixed order where the
//! simulator interleaves the threads by their modeled time. The stream depends on no
//! policy: readahead is the kernel's, not here.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::Path;

use pagelab::Scenario;
use pagelab_workload::{Access, JobStream};

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: page_reads SCENARIO WORKLOAD [--set KEY=VALUE]...";
    let [path, name, rest @ ..] = args.as_slice() else { return Err(usage.into()) };
    let mut sets = rest
        .chunks(2)
        .map(|c| match c {
            [flag, v] if flag == "--set" => Ok(v.clone()),
            _ => Err(usage.to_string()),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let load = |sets: &[String]| Scenario::load(Path::new(path), sets).map_err(|e| e.to_string());
    let find = |s: &Scenario| s.workloads.iter().find(|w| w.name == *name).cloned().ok_or(format!("{path}: no workload `{name}`"));
    let mut w = find(&load(&sets)?)?;
    if w.jobs > 1 {
        let ops: u64 = w.phases.iter().map(|p| p.ops).sum();
        sets.extend([format!("workload.{name}.jobs=1"), format!("workload.{name}.ops={}", ops * w.jobs as u64)]);
        w = find(&load(&sets)?)?;
    }
    let mut st = JobStream::new(&w, 0);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let files: Vec<bool> = st.objects().iter().map(|o| !o.anon).collect();
    let mut ids: HashMap<(u32, u64), u64> = HashMap::new();
    for op in st.by_ref().filter(|op| op.access == Access::Buffered && !op.write && files[op.object as usize]) {
        for p in op.page..op.page + op.npages.max(1) as u64 {
            let n = ids.len() as u64;
            let id = *ids.entry((op.object, p)).or_insert(n);
            writeln!(out, "R {id}").map_err(|e| e.to_string())?;
        }
    }
    out.flush().map_err(|e| e.to_string())
}
