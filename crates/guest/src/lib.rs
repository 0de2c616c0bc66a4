//! pagelab-guest: the in-guest half of `pagelab oracle`.
//!
//! The binary (`src/main.rs`) runs inside the oracle's virtual machine. It reads the same
//! scenario TOML the model reads, sets the kernel knobs the scenario names (sysctls, the
//! MGLRU switch, readahead, swap, cgroup v2 limits), and performs every task's
//! [`JobStream`](pagelab_workload::JobStream) with real system calls: `pread`/`pwrite` for
//! buffered file IO, loads and stores through `mmap` for mapped files, and touches of private
//! anonymous memory. It snapshots `/proc/vmstat`, `/proc/meminfo`, every cgroup's
//! `memory.stat` and the `lru_gen` debugfs file before and after, and prints a
//! [`GuestReport`] as JSON.
//!
//! This library holds the parts the host shares: the [`Plan`] (what a scenario asks of the
//! guest: files to create, cgroups, tasks, knobs), the access-sequence checksum both sides
//! compute, and the report format.

pub mod frames;
pub mod plan;
pub mod report;
pub mod trace;

pub use plan::{Cgroup, FileDecl, MachinePlan, Plan, PlanError, PolicyChoice, Setting, SwapKind, TaskPlan};
pub use report::{GuestReport, Snapshot, TaskResult, REPORT_BEGIN, REPORT_END};

use pagelab_workload::Op;

/// FNV-1a over the fields of each operation that decide which pages are touched and how; the
/// guest reports it for every task and the host computes it from the same stream, so a run
/// proves both sides saw the same accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpChecksum {
    pub ops: u64,
    pub fill_ops: u64,
    pub hash: u64,
}

impl Default for OpChecksum {
    fn default() -> Self {
        OpChecksum { ops: 0, fill_ops: 0, hash: 0xcbf2_9ce4_8422_2325 }
    }
}

impl OpChecksum {
    #[inline]
    pub fn add(&mut self, op: &Op) {
        let mut h = self.hash;
        let mut eat = |bytes: &[u8]| {
            for &b in bytes {
                h ^= b as u64;
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        eat(&op.object.to_le_bytes());
        eat(&op.page.to_le_bytes());
        eat(&op.npages.to_le_bytes());
        eat(&[op.write as u8, op.fill as u8]);
        // A truncation (a trace's `D` line) differs from a read of the same page; the other
        // operations hash as they always have, so saved guest runs still match.
        if op.access == pagelab_workload::Access::Truncate {
            eat(b"D");
        }
        self.hash = h;
        if op.fill {
            self.fill_ops += 1;
        } else {
            self.ops += 1;
        }
    }

    pub fn hex(&self) -> String {
        format!("{:016x}", self.hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pagelab_workload::{Access, Advice};

    fn op(page: u64, write: bool) -> Op {
        Op { object: 0, page, npages: 1, write, access: Access::Buffered, advice: Advice::Normal, fill: false, think_ns: 0, due: None, more: false }
    }

    #[test]
    fn checksum_depends_on_pages_order_and_direction() {
        let sum = |ops: &[Op]| {
            let mut c = OpChecksum::default();
            ops.iter().for_each(|o| c.add(o));
            c
        };
        let a = sum(&[op(1, false), op(2, false)]);
        assert_eq!(a.ops, 2);
        assert_ne!(a.hash, sum(&[op(2, false), op(1, false)]).hash);
        assert_ne!(a.hash, sum(&[op(1, true), op(2, false)]).hash);
        assert_eq!(a, sum(&[op(1, false), op(2, false)]));
        let drop = Op { access: Access::Truncate, ..op(1, false) };
        assert_ne!(sum(&[drop, op(2, false)]).hash, a.hash, "a truncation is not a read");
    }
}
