//! The lru_gen debugfs view (mm/vmscan.c: lru_gen_seq_show(), lru_gen_seq_show_full()),
//! and the same state as JSON for reports.

use std::fmt::Write as _;

use super::gen::gen_of;
use super::{LruGen, MAX_NR_GENS, MAX_NR_TIERS};
use crate::mm::Mm;

impl LruGen {
    /// `/sys/kernel/debug/lru_gen` (or `lru_gen_full` with `full`): per memcg and node, a
    /// line per generation (sequence number, age in ms, anon and file pages); the full view
    /// adds per-tier refaulted/evicted/protected counters and the page-table walk stats.
    pub fn lru_gen_debugfs(&self, mm: &Mm, full: bool) -> String {
        let mut out = String::new();
        let now = mm.now();
        for &memcg in &mm.memcgs.preorder {
            let lv = &self.lv[memcg as usize];
            let path = &mm.memcgs.get(memcg).path;
            let _ = writeln!(out, "memcg {:5} {}", memcg + 1, path);
            let _ = writeln!(out, " node {:5}", 0);
            let first = if full { lv.max_seq.saturating_sub(MAX_NR_GENS as u64 - 1) } else { lv.min_seq[0] };
            for seq in first..=lv.max_seq {
                let gen = gen_of(seq);
                let age_ms = now.saturating_sub(lv.timestamps[gen]) / 1_000_000;
                let _ = write!(out, " {:10} {:10}", seq, age_ms);
                for ty in 0..2 {
                    let n = if seq < lv.min_seq[ty] { 0 } else { lv.nr_pages[gen][ty].max(0) };
                    let mark = if full && seq < lv.min_seq[ty] { 'x' } else { ' ' };
                    let _ = write!(out, " {:10}{}", n, mark);
                }
                out.push('\n');
                if full {
                    self.show_full(&mut out, memcg, seq);
                }
            }
        }
        out
    }

    fn show_full(&self, out: &mut String, memcg: u16, seq: u64) {
        let lv = &self.lv[memcg as usize];
        for tier in 0..MAX_NR_TIERS {
            let _ = write!(out, "            {:10}", tier);
            for ty in 0..2 {
                let (s, n): (&[u8; 3], [u64; 3]) = if seq == lv.max_seq {
                    (b"RT ", [lv.avg_refaulted[ty][tier], lv.avg_total[ty][tier], 0])
                } else if seq == lv.min_seq[ty] {
                    let p = if tier > 0 { lv.protected[ty][tier - 1] } else { 0 };
                    (b"rep", [lv.refaulted[ty][tier], lv.evicted[ty][tier], p])
                } else {
                    (b"   ", [0, 0, 0])
                };
                for i in 0..3 {
                    let _ = write!(out, " {:10}{}", n[i], s[i] as char);
                }
            }
            out.push('\n');
        }
        out.push_str("                      ");
        for (i, c) in "LOYNFA".chars().enumerate() {
            let (n, c) = if seq == lv.max_seq { (lv.mm_stats[i], c) } else { (0, ' ') };
            let _ = write!(out, " {:10}{}", n, c);
        }
        out.push('\n');
    }

    /// The generations of every memcg as JSON: sequence numbers, ages, sizes per type, and
    /// the controller's tier counters.
    pub fn lru_gen_json(&self, mm: &Mm) -> serde_json::Value {
        let now = mm.now();
        let lruvecs: Vec<serde_json::Value> = mm
            .memcgs
            .preorder
            .iter()
            .map(|&memcg| {
                let lv = &self.lv[memcg as usize];
                let gens: Vec<serde_json::Value> = (lv.min_seq[0].min(lv.min_seq[1])..=lv.max_seq)
                    .map(|seq| {
                        let g = gen_of(seq);
                        let size = |ty: usize| if seq < lv.min_seq[ty] { 0 } else { lv.nr_pages[g][ty].max(0) };
                        serde_json::json!({
                            "seq": seq,
                            "age_ms": now.saturating_sub(lv.timestamps[g]) / 1_000_000,
                            "anon": size(0),
                            "file": size(1),
                        })
                    })
                    .collect();
                serde_json::json!({
                    "memcg": mm.memcgs.get(memcg).path,
                    "max_seq": lv.max_seq,
                    "min_seq": lv.min_seq,
                    "generations": gens,
                    "tiers": {
                        "refaulted": lv.refaulted, "evicted": lv.evicted, "protected": lv.protected,
                        "avg_refaulted": lv.avg_refaulted, "avg_total": lv.avg_total,
                    },
                })
            })
            .collect();
        serde_json::Value::Array(lruvecs)
    }
}
