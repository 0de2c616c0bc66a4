//! pagelab-workload: the page-access streams pagelab replays.
//!
//! A scenario's `[[workload]]` tables become [`Workload`]s; each job of a workload is a
//! [`JobStream`], an iterator of [`Op`]s. The same code drives the simulator and the runner
//! that performs the accesses inside a real kernel, so both see the same pages in the same
//! order.

pub mod dist;
pub mod exact;
pub mod gen;
pub mod rng;
pub mod schema;
pub mod size;
pub mod spec;
pub mod ycsb;

pub use dist::{Distribution, Sampler};
pub use gen::{job_file_name, JobStream, ObjectDecl, Op};
pub use gen::{Due, TraceAccess, TraceAccesses, TraceKind};
pub use rng::Rng;
pub use size::{parse_duration_ns, parse_size, size_text, PAGE_SIZE};
pub use spec::{Access, Advice, CpuList, Kind, Lockstep, LockstepToml, Phase, PhaseToml, SpecError, TraceSpec, Workload, WorkloadToml};

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(toml_fields: impl FnOnce(&mut WorkloadToml)) -> Result<Workload, SpecError> {
        let mut t = WorkloadToml { cgroup: Some("/t".into()), ..Default::default() };
        t.defaults.kind = Some(Kind::FileRead);
        t.defaults.file_size = Some("1M".into());
        toml_fields(&mut t);
        t.resolve(0)
    }

    #[test]
    fn a_workload_without_cgroup_or_kind_is_refused_by_key() {
        let e = workload(|t| t.cgroup = None).unwrap_err();
        assert_eq!(e.key, "cgroup");
        let e = workload(|t| t.defaults.kind = None).unwrap_err();
        assert_eq!(e.key, "kind");
        let e = workload(|t| t.defaults.block_size = Some("3k".into())).unwrap_err();
        assert_eq!(e.key, "block_size");
    }

    #[test]
    fn block_size_sets_pages_per_op_and_aligns_offsets() {
        let w = workload(|t| {
            t.defaults.block_size = Some("16k".into());
            t.defaults.ops = Some(100);
        })
        .unwrap();
        let ops: Vec<Op> = JobStream::new(&w, 0).collect();
        assert_eq!(ops.len(), 100);
        assert!(ops.iter().all(|o| o.npages == 4 && o.page % 4 == 0 && o.page + 4 <= 256));
    }

    #[test]
    fn anon_prefill_touches_every_page_once_before_the_accesses() {
        let w = workload(|t| {
            t.defaults.kind = Some(Kind::AnonWrite);
            t.defaults.file_size = None;
            t.defaults.size = Some("40k".into());
            t.defaults.ops = Some(5);
        })
        .unwrap();
        let ops: Vec<Op> = JobStream::new(&w, 0).collect();
        assert_eq!(ops.len(), 15);
        let fills: Vec<u64> = ops.iter().take_while(|o| o.fill).map(|o| o.page).collect();
        assert_eq!(fills, (0..10).collect::<Vec<_>>());
        assert!(ops[10..].iter().all(|o| !o.fill && o.write && o.access == Access::Anon));
    }

    #[test]
    fn phases_run_in_order_and_share_objects_by_name() {
        let p1 = PhaseToml { kind: Some(Kind::AnonWrite), size: Some("8k".into()), file: Some("heap".into()), ops: Some(0), ..Default::default() };
        let mut p2 = p1.clone();
        p2.kind = Some(Kind::AnonRead);
        p2.ops = Some(3);
        let w = workload(|t| {
            t.defaults.kind = None;
            t.defaults.file_size = None;
            t.phase = vec![p1, p2];
        })
        .unwrap();
        let s = JobStream::new(&w, 0);
        assert_eq!(s.objects().len(), 1);
        let ops: Vec<Op> = s.collect();
        // Two fills (8k), then three reads; the second phase does not fill again.
        assert_eq!(ops.iter().filter(|o| o.fill).count(), 2);
        assert_eq!(ops.iter().filter(|o| !o.write).count(), 3);
    }

    #[test]
    fn jobs_get_their_own_files_and_streams() {
        let w = workload(|t| {
            t.jobs = Some(2);
            t.defaults.ops = Some(50);
        })
        .unwrap();
        let a = JobStream::new(&w, 0);
        let b = JobStream::new(&w, 1);
        assert_eq!(a.objects()[0].name, "workload0.0");
        assert_eq!(b.objects()[0].name, "workload0.1");
        let pa: Vec<u64> = a.map(|o| o.page).collect();
        let pb: Vec<u64> = b.map(|o| o.page).collect();
        assert_ne!(pa, pb);
    }

    #[test]
    fn same_seed_same_stream() {
        let w = workload(|t| {
            t.defaults.distribution = Some("zipf:0.9".into());
            t.defaults.ops = Some(1000);
        })
        .unwrap();
        let a: Vec<Op> = JobStream::new(&w, 0).collect();
        let b: Vec<Op> = JobStream::new(&w, 0).collect();
        assert_eq!(a, b);
    }
}
