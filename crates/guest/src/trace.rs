//! Traces in the guest (`[[workload]] trace = "PATH"`): pagelab-trace's
//! [`pagelab_trace::workload`] sizes and reads them, as it does for the simulator, so that
//! both sides replay the same operations.
//!
//! The guest reads each trace whole into memory before the workload, packed eight bytes an
//! access, where the runner's other tables live: read during the run, the trace's own pages
//! would sit in the page cache beside the workload's, which the model does not have.
//!
//! What it replays: access streams of one object (the text, lcs, csv, blkparse and msr
//! formats), uncompressed or gzip. It refuses what it cannot replay as the model does:
//! an iolog (it names several files, the guest's data disk holds the scenario's own),
//! `pace = "trace"` (times run on the guest's clock, 20–100× slower under emulation) and
//! zstd (the static runner is built without zstd's C library).

use std::sync::Arc;

use pagelab_trace::workload::{open, spec};
use pagelab_workload::{TraceAccess, TraceAccesses, TraceKind, TraceSpec, Workload};

/// Bits of a packed access that hold its page; the kind is in the bits above.
const PAGE_BITS: u32 = 60;

/// A trace's accesses, packed (`page | kind << PAGE_BITS`), shared by every job that
/// replays it.
#[derive(Clone)]
pub struct Packed(Arc<Vec<u64>>);

impl std::fmt::Debug for Packed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Packed({} accesses)", self.0.len())
    }
}

impl Packed {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The accesses from the first on, as a phase replays them.
    pub fn replay(&self) -> Box<dyn TraceAccesses> {
        Box::new(Replay { accesses: self.0.clone(), pos: 0 })
    }
}

fn kind_code(k: TraceKind) -> u64 {
    match k {
        TraceKind::Read => 0,
        TraceKind::Write => 1,
        TraceKind::Touch => 2,
        TraceKind::Plain => 3,
        TraceKind::Drop => 4,
    }
}

fn code_kind(c: u64) -> TraceKind {
    match c {
        0 => TraceKind::Read,
        1 => TraceKind::Write,
        2 => TraceKind::Touch,
        3 => TraceKind::Plain,
        _ => TraceKind::Drop,
    }
}

/// Why the guest cannot replay the phase's trace `t`, if it cannot (see the module's doc).
pub fn refusal(t: &TraceSpec) -> Option<String> {
    match spec(&t.format) {
        Err(e) => Some(e),
        Ok(pagelab_trace::access::Spec::Iolog) => {
            Some("the oracle's guest does not replay iologs, which name files of their own (convert it to a text trace of one file)".into())
        }
        Ok(_) if t.pace => {
            Some("the oracle's guest does not pace traces (`pace = \"trace\"`): under emulation its clock runs 20-100x slower than the trace's".into())
        }
        Ok(_) => None,
    }
}

/// Reads the whole trace of a phase whose object has `object_pages` pages, as the
/// simulator's replay would give it.
pub fn preload(t: &TraceSpec, object_pages: u64) -> Result<Packed, String> {
    // Sized once, from a count of the accesses, and never copied: a large buffer freed just
    // before the workload would sit on the kernel's per-CPU lists (6.12's auto-tuned
    // pcp->high) and raise their high mark for the run.
    let spec = spec(&t.format)?;
    let (counts, _) = pagelab_trace::access::AccessStream::scan(std::path::Path::new(&t.path), &spec).map_err(|e| e.to_string())?;
    let mut src = open(t, object_pages)?;
    let mut out = Vec::with_capacity(counts.accesses as usize);
    while let Some(a) = src.next_access() {
        if a.object != 0 || a.npages != 1 || a.page >= 1 << PAGE_BITS {
            return Err(format!("{}: access {} (object {}, page {}, {} pages) cannot be replayed by the guest", t.path, out.len(), a.object, a.page, a.npages));
        }
        out.push(a.page | kind_code(a.kind) << PAGE_BITS);
    }
    if let Some(e) = src.take_error() {
        return Err(e);
    }
    Ok(Packed(Arc::new(out)))
}

/// The trace of one phase of a workload, read whole.
#[derive(Clone, Debug)]
pub struct PhaseTrace {
    pub workload: usize,
    pub phase: usize,
    pub accesses: Packed,
}

/// The traces of the workloads' phases, in phase order, for [`crate::Plan`]; an error is
/// the key of the phase's trace and what is wrong.
pub fn preload_all(workloads: &[Workload]) -> Result<Vec<PhaseTrace>, (String, String)> {
    let mut out = Vec::new();
    for (i, w) in workloads.iter().enumerate() {
        for (j, ph) in w.phases.iter().enumerate() {
            let Some(t) = &ph.trace else { continue };
            let key = if w.phases.len() == 1 { format!("workload[{i}].trace") } else { format!("workload[{i}].phase[{j}].trace") };
            if let Some(why) = refusal(t) {
                return Err((key, why));
            }
            out.push(PhaseTrace { workload: i, phase: j, accesses: preload(t, ph.object_pages).map_err(|e| (key, e))? });
        }
    }
    Ok(out)
}

struct Replay {
    accesses: Arc<Vec<u64>>,
    pos: usize,
}

impl TraceAccesses for Replay {
    fn next_access(&mut self) -> Option<TraceAccess> {
        let a = *self.accesses.get(self.pos)?;
        self.pos += 1;
        Some(TraceAccess { object: 0, page: a & ((1 << PAGE_BITS) - 1), npages: 1, kind: code_kind(a >> PAGE_BITS), time_ns: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{OpChecksum, Plan};
    use pagelab_workload::{Access, JobStream};

    fn scenario(dir: &std::path::Path, trace: &str, extra: &str) -> (String, String) {
        std::fs::write(dir.join("t.txt"), trace).unwrap();
        let file = dir.join("s.toml").display().to_string();
        let text = format!("[machine]\nmemory = \"64M\"\n\n[[workload]]\nname = \"db\"\ncgroup = \"/\"\nkind = \"file-read\"\ntrace = \"t.txt\"\ntrace_format = \"text\"\n{extra}");
        (text, file)
    }

    /// The simulator's stream of task 0: its traces opened from the file, as pagelab's
    /// machine opens them.
    fn simulator_ops(p: &Plan) -> Vec<pagelab_workload::Op> {
        JobStream::with_traces(&p.workloads[0], 0, &|t, _, pages| open(t, pages)).unwrap().collect()
    }

    #[test]
    fn the_guest_replays_a_trace_as_the_simulator_does() {
        let dir = tempfile::tempdir().unwrap();
        let (text, file) = scenario(dir.path(), "R 3\nW 9\nR 3\nD 9\nR 0\n", "");
        let p = Plan::parse(&text, &file).unwrap();
        assert_eq!(p.files, vec![crate::FileDecl { name: "db".into(), pages: 10 }], "sized to the trace: one past its largest page");
        assert_eq!(p.trace_accesses(), 5);
        let guest: Vec<_> = p.stream(0).collect();
        assert_eq!(guest, simulator_ops(&p));
        let pages: Vec<(u64, bool, bool)> = guest.iter().map(|o| (o.page, o.write, o.access == Access::Truncate)).collect();
        assert_eq!(pages, [(3, false, false), (9, true, false), (3, false, false), (9, false, true), (0, false, false)]);
        // The checksum the host compares the guest's against.
        let (mut a, mut b) = (OpChecksum::default(), OpChecksum::default());
        guest.iter().for_each(|o| a.add(o));
        simulator_ops(&p).iter().for_each(|o| b.add(o));
        assert_eq!(a, b);
    }

    #[test]
    fn the_guest_reads_a_gzip_trace_and_every_job_replays_it_whole() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let (text, file) = scenario(dir.path(), "", "jobs = 2\n");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"R 1\nR 2\nR 1\n").unwrap();
        std::fs::write(dir.path().join("t.txt"), gz.finish().unwrap()).unwrap();
        let p = Plan::parse(&text, &file).unwrap();
        for t in 0..2 {
            let pages: Vec<u64> = p.stream(t).map(|o| o.page).collect();
            assert_eq!(pages, [1, 2, 1], "job {t}");
        }
    }

    #[test]
    fn the_guest_refuses_iologs_paced_traces_and_zstd() {
        let dir = tempfile::tempdir().unwrap();
        let (text, file) = scenario(dir.path(), "R 1\n", "");
        let e = Plan::parse(&text.replace("\"text\"", "\"iolog\""), &file).unwrap_err();
        assert_eq!(e.key, "workload[0].trace", "{e}");
        let e = Plan::parse(&format!("{text}pace = \"trace\"\n"), &file).unwrap_err();
        assert!(e.message.contains("pace"), "{e}");
        // zstd's frame magic, then anything: the runner has no zstd to read it with.
        std::fs::write(dir.path().join("t.txt"), [0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0]).unwrap();
        let e = Plan::parse(&text, &file).unwrap_err();
        assert!(e.message.contains("zstd"), "{e}");
    }

    #[test]
    fn a_malformed_trace_is_an_error_naming_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let (text, file) = scenario(dir.path(), "R 1\nX 2\n", "");
        let e = Plan::parse(&text, &file).unwrap_err();
        assert_eq!(e.key, "workload[0].trace");
        assert!(e.message.contains("t.txt") && e.message.contains('2'), "{e}");
    }
}
