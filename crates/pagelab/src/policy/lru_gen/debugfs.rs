//! The lru_gen debugfs view (mm/vmscan.c: lru_gen_seq_show(), lru_gen_seq_show_full()),
//! and the same state as JSON for reports.

use std::fmt::Write as _;

use super::gen::gen_of;
use super::{LruGen, LvId, MAX_NR_GENS, MAX_NR_TIERS};
use crate::mm::Mm;

/// One jiffy at CONFIG_HZ = 250 (both Debian kernels), in ns.
const JIFFY_NS: u64 = 4_000_000;

/// `jiffies_to_msecs(jiffies - birth)` for times kept in ns.
fn age_ms(now: u64, birth: u64) -> u64 {
    (now / JIFFY_NS).saturating_sub(birth / JIFFY_NS) * (JIFFY_NS / 1_000_000)
}

impl LruGen {
    /// Models mm/vmscan.c: lru_gen_seq_show() (6.1/6.12/7.3): `/sys/kernel/debug/lru_gen` (or
    /// `lru_gen_full` with `full`), every memcg in pre-order, and under it a `node N` block per
    /// node (its lruvec on that node): a line per generation with its sequence number, age in
    /// ms and anon and file pages. The plain view
    /// starts at anon's min_seq; the full view shows the last four sequence numbers ('x' marks
    /// one below a type's min_seq) and adds the controller's per-tier counters and the
    /// page-table walk statistics, spelled as each version spells them.
    pub fn lru_gen_debugfs(&self, mm: &Mm, full: bool) -> String {
        let mut out = String::new();
        let now = mm.now();
        for &memcg in &mm.memcgs.preorder {
            // mem_cgroup_id(): the root is 1, the others count up in creation order.
            let _ = writeln!(out, "memcg {:5} {}", memcg + 1, mm.memcgs.get(memcg).path);
            for nid in 0..self.nr_nodes() {
                let k = LvId::new(memcg, nid);
                let lv = self.lrugen(k);
                let _ = writeln!(out, " node {:5}", nid);
                let first = if !full { lv.min_seq[0] } else { lv.max_seq.saturating_sub(MAX_NR_GENS as u64 - 1) };
                for seq in first..=lv.max_seq {
                    let gen = gen_of(seq);
                    let _ = write!(out, " {:10} {:10}", seq, age_ms(now, lv.timestamps[gen]));
                    for ty in 0..2 {
                        let mark = if full && seq < lv.min_seq[ty] { 'x' } else { ' ' };
                        let _ = write!(out, " {:10}{}", lv.nr_pages[gen][ty].max(0), mark);
                    }
                    out.push('\n');
                    if full {
                        self.show_full(&mut out, k, seq);
                    }
                }
            }
        }
        out
    }

    /// Models mm/vmscan.c: lru_gen_seq_show_full() with NR_HIST_GENS = 1: the averages at
    /// max_seq (R, T), the current counters at each type's min_seq (r, e, p); 6.1 prints six
    /// walk statistics (LOYNFA) and blanks, 6.12 four (TYFA) and 'x' for no value.
    fn show_full(&self, out: &mut String, k: LvId, seq: u64) {
        let lv = self.lrugen(k);
        let v612 = self.kernel.lru_gen_debugfs_four_walk_stats();
        let blank = if v612 { b"xxx" } else { b"   " };
        let averages = if v612 { b"RTx" } else { b"RT " };
        for tier in 0..MAX_NR_TIERS {
            let _ = write!(out, "            {:10}", tier);
            for ty in 0..2 {
                let (s, n): (&[u8; 3], [u64; 3]) = if seq == lv.max_seq {
                    (averages, [lv.avg_refaulted[ty][tier], lv.avg_total[ty][tier], 0])
                } else if seq == lv.min_seq[ty] {
                    let p = lv.protected_in(ty, tier);
                    (b"rep", [lv.refaulted[ty][tier], lv.evicted[ty][tier], p])
                } else {
                    (blank, [0, 0, 0])
                };
                for i in 0..3 {
                    let _ = write!(out, " {:10}{}", n[i], s[i] as char);
                }
            }
            out.push('\n');
        }
        out.push_str("                      ");
        // mm_stats: leaf total, leaf old, leaf young, non-leaf total, found, added; 6.12
        // dropped the old and non-leaf totals.
        let (names, shown): (&str, &[usize]) = if v612 { ("TYFA", &[0, 2, 4, 5]) } else { ("LOYNFA", &[0, 1, 2, 3, 4, 5]) };
        for (c, &i) in names.chars().zip(shown) {
            let (n, c) = if seq == lv.max_seq { (lv.mm_stats[i], c) } else { (0, if v612 { 'x' } else { ' ' }) };
            let _ = write!(out, " {:10}{}", n, c);
        }
        out.push('\n');
    }

    /// The generations of every lruvec as JSON, memcg by memcg in pre-order and node by node
    /// within a memcg: sequence numbers, ages, sizes per type, and the controller's tier
    /// counters. A machine of several nodes names each entry's `node`.
    pub fn lru_gen_json(&self, mm: &Mm) -> serde_json::Value {
        let now = mm.now();
        let nodes = self.nr_nodes();
        let lruvecs: Vec<serde_json::Value> = mm
            .memcgs
            .preorder
            .iter()
            .flat_map(|&memcg| (0..nodes).map(move |nid| LvId::new(memcg, nid)))
            .map(|k| {
                let memcg = k.memcg;
                let lv = self.lrugen(k);
                let gens: Vec<serde_json::Value> = (lv.min_seq[0].min(lv.min_seq[1])..=lv.max_seq)
                    .map(|seq| {
                        let g = gen_of(seq);
                        let size = |ty: usize| if seq < lv.min_seq[ty] { 0 } else { lv.nr_pages[g][ty].max(0) };
                        serde_json::json!({
                            "seq": seq,
                            "age_ms": age_ms(now, lv.timestamps[g]),
                            "anon": size(0),
                            "file": size(1),
                        })
                    })
                    .collect();
                let mut entry = serde_json::json!({
                    "memcg": mm.memcgs.get(memcg).path,
                    "max_seq": lv.max_seq,
                    "min_seq": lv.min_seq,
                    "generations": gens,
                    "tiers": {
                        "refaulted": lv.refaulted, "evicted": lv.evicted, "protected": lv.protected,
                        "avg_refaulted": lv.avg_refaulted, "avg_total": lv.avg_total,
                    },
                });
                if nodes > 1 {
                    entry["node"] = serde_json::json!(k.nid);
                }
                entry
            })
            .collect();
        serde_json::Value::Array(lruvecs)
    }
}

#[cfg(test)]
mod tests {
    use super::age_ms;

    #[test]
    fn ages_count_whole_jiffies() {
        assert_eq!(age_ms(9_000_000, 0), 8);
        assert_eq!(age_ms(9_000_000, 3_999_999), 8);
        assert_eq!(age_ms(9_000_000, 4_000_000), 4);
    }
}
