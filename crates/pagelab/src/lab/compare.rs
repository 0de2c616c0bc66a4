//! Side-by-side comparison of runs in the style of mmtests' compare-kernels, the tables
//! kernel developers post with reclaim patches: one column per run, each row a counter or a
//! derived figure, the relative change against the first column in parentheses.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// What a comparison needs from a run's JSON report.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub label: String,
    pub vmstat: BTreeMap<String, f64>,
    pub elapsed_s: f64,
    pub throughput: f64,
    /// The model's own figures (rstat flushes, stale refault decisions, kswapd CPU).
    pub model: BTreeMap<String, f64>,
}

/// The report's top-level numbers a comparison shows besides vmstat.
const MODEL_FIELDS: [&str; 4] = ["rstat_flushes", "rstat_flushed_memcgs", "stale_refault_decisions", "kswapd_cpu_s"];

impl Run {
    /// Reads a report written by `pagelab run --json`.
    pub fn load(path: &Path) -> Result<Run, String> {
        let name = path.display();
        let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{name}:{}:{}: not a JSON report: {e}", e.line(), e.column()))?;
        let vm =
            v.get("vmstat").and_then(|x| x.as_object()).ok_or_else(|| format!("{name}: no \"vmstat\" object (is it the output of `pagelab run --json`?)"))?;
        let mut vmstat = BTreeMap::new();
        for (k, x) in vm {
            let n = x.as_f64().ok_or_else(|| format!("{name}: vmstat.{k} is not a number"))?;
            vmstat.insert(k.clone(), n);
        }
        let num = |k: &str| v.get(k).and_then(|x| x.as_f64()).unwrap_or(0.0);
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let label = match (v.get("scenario").and_then(|x| x.as_str()), v.get("kernel").and_then(|x| x.as_str()), v.get("policy").and_then(|x| x.as_str())) {
            (Some(s), Some(k), Some(p)) => format!("{s}/{k}-{p}"),
            _ => stem,
        };
        let model = MODEL_FIELDS.iter().map(|&k| (k.to_string(), num(k))).collect();
        Ok(Run { label, vmstat, elapsed_s: num("elapsed_s"), throughput: num("throughput_ops_s"), model })
    }

    /// A run from a report in memory.
    pub fn from_report(label: &str, r: &crate::Report) -> Run {
        Run {
            label: label.to_string(),
            vmstat: r.vmstat.iter().map(|(k, &v)| (k.clone(), v as f64)).collect(),
            elapsed_s: r.elapsed_s,
            throughput: r.throughput_ops_s,
            model: [
                ("rstat_flushes", r.rstat_flushes as f64),
                ("rstat_flushed_memcgs", r.rstat_flushed_memcgs as f64),
                ("stale_refault_decisions", r.stale_refault_decisions as f64),
                ("kswapd_cpu_s", r.kswapd_cpu_s),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        }
    }

    fn model(&self, k: &str) -> f64 {
        self.model.get(k).copied().unwrap_or(0.0)
    }

    fn get(&self, k: &str) -> f64 {
        self.vmstat.get(k).copied().unwrap_or(0.0)
    }
}

/// A row of the table: its label and how to compute it from a run.
pub struct Row {
    pub label: &'static str,
    pub value: fn(&Run) -> f64,
}

fn scanned(r: &Run) -> f64 {
    r.get("pgscan_anon") + r.get("pgscan_file")
}
fn reclaimed(r: &Run) -> f64 {
    r.get("pgsteal_anon") + r.get("pgsteal_file")
}
fn refaults(r: &Run) -> f64 {
    r.get("workingset_refault_anon") + r.get("workingset_refault_file")
}

/// The rows of Johannes Weiner's 2020 LRU balancing series' tables, then time,
/// throughput and the mmtests vmstat summary rows.
pub fn default_rows() -> Vec<Row> {
    vec![
        Row { label: "Scanned", value: scanned },
        Row { label: "Reclaimed", value: reclaimed },
        Row { label: "Reclaim efficiency %", value: |r| if scanned(r) > 0.0 { reclaimed(r) * 100.0 / scanned(r) } else { 0.0 } },
        Row { label: "Scanned file", value: |r| r.get("pgscan_file") },
        Row { label: "Scanned anon", value: |r| r.get("pgscan_anon") },
        Row { label: "Swapouts", value: |r| r.get("pswpout") },
        Row { label: "Swapins", value: |r| r.get("pswpin") },
        // The read-back IO beside the refaults: the two LRUs count workingset_refault_*
        // under different rules (docs/architecture.md, "What a refault is under each LRU"),
        // pages read do not depend on them.
        Row { label: "Pages read (pgpgin/4)", value: |r| r.get("pgpgin") / 4.0 },
        Row { label: "Refaults", value: refaults },
        Row { label: "Refaults anon", value: |r| r.get("workingset_refault_anon") },
        Row { label: "Refaults file", value: |r| r.get("workingset_refault_file") },
        Row { label: "Restore refaults", value: |r| r.get("workingset_restore_anon") + r.get("workingset_restore_file") },
        Row { label: "Total paging IO", value: |r| r.get("pswpout") + r.get("pswpin") + refaults(r) },
        Row { label: "Elapsed (modeled s)", value: |r| r.elapsed_s },
        Row { label: "Throughput ops/s", value: |r| r.throughput },
        Row { label: "Major Faults", value: |r| r.get("pgmajfault") },
        Row { label: "Kswapd pages scanned", value: |r| r.get("pgscan_kswapd") },
        Row { label: "Kswapd pages reclaimed", value: |r| r.get("pgsteal_kswapd") },
        Row { label: "Direct pages scanned", value: |r| r.get("pgscan_direct") },
        Row { label: "Direct pages reclaimed", value: |r| r.get("pgsteal_direct") },
        Row {
            label: "Kswapd efficiency %",
            value: |r| if r.get("pgscan_kswapd") > 0.0 { r.get("pgsteal_kswapd") * 100.0 / r.get("pgscan_kswapd") } else { 0.0 },
        },
        Row { label: "Scan velocity (pages/s)", value: |r| if r.elapsed_s > 0.0 { scanned(r) / r.elapsed_s } else { 0.0 } },
        Row { label: "Refaults activated", value: |r| r.get("workingset_activate_anon") + r.get("workingset_activate_file") },
        Row { label: "Pages activated", value: |r| r.get("pgactivate") },
        Row { label: "Pages deactivated", value: |r| r.get("pgdeactivate") },
        Row { label: "Direct reclaim stalls", value: |r| r.get("allocstall") },
        Row { label: "Kswapd CPU (modeled s)", value: |r| r.model("kswapd_cpu_s") },
        Row { label: "rstat flushes", value: |r| r.model("rstat_flushes") },
        Row { label: "rstat memcgs flushed", value: |r| r.model("rstat_flushed_memcgs") },
        Row { label: "Stale refault decisions", value: |r| r.model("stale_refault_decisions") },
    ]
}

/// The rows of a timed experiment: pagelab's own speed (wall clock, not the modeled time).
pub fn timing_rows() -> Vec<Row> {
    vec![
        Row { label: "pagelab wall s", value: |r| r.model("pagelab_wall_s") },
        Row { label: "pagelab M acc/s (wall)", value: |r| r.model("pagelab_macc_per_s") },
    ]
}

/// The relative change of `v` against `base`, as the seeds print it: `( +12.34%)`, or blank
/// parentheses when the base is zero and the value is not.
pub fn change(base: f64, v: f64) -> String {
    if base == 0.0 {
        return if v == 0.0 { "( +0.00%)".into() } else { "(        )".into() };
    }
    let pct = (v - base) / base * 100.0;
    format!("({}{:.2}%)", if pct >= 0.0 { " +" } else { " " }, pct)
}

/// Decimals a row's cells print with: 2 for ratios, times and rates (`%`, `s`, `/s` in the
/// label), 0 for counts.
fn decimals(label: &str) -> usize {
    if label.ends_with('%') || label.ends_with(" s") || label.contains(" s)") || label.contains("/s") {
        2
    } else {
        0
    }
}

/// The comparison table of `runs` (the first is the baseline; no runs, no table).
pub fn table(runs: &[Run], rows: &[Row]) -> String {
    let lines: Vec<(&str, Vec<f64>, usize)> = rows.iter().map(|row| (row.label, runs.iter().map(|r| (row.value)(r)).collect(), decimals(row.label))).collect();
    grid(runs, &lines)
}

/// Every vmstat counter whose value is not the same in all `runs`, one row each in the
/// table's format (the first run the baseline): what changed, counter by counter.
pub fn changed_counters(runs: &[Run]) -> String {
    if runs.is_empty() {
        return String::new();
    }
    let keys: std::collections::BTreeSet<&String> = runs.iter().flat_map(|r| r.vmstat.keys()).collect();
    let changed: Vec<&String> = keys.into_iter().filter(|k| runs.iter().any(|r| r.get(k) != runs[0].get(k))).collect();
    if changed.is_empty() {
        return "every vmstat counter is the same in all runs\n".into();
    }
    let lines: Vec<(&str, Vec<f64>, usize)> = changed.iter().map(|k| (k.as_str(), runs.iter().map(|r| r.get(k)).collect(), 0)).collect();
    grid(runs, &lines)
}

/// The table's text: a header of the runs' labels, then a line per (label, a value per run,
/// decimals), each cell the value and its change against the first run's.
fn grid(runs: &[Run], lines: &[(&str, Vec<f64>, usize)]) -> String {
    if runs.is_empty() {
        return String::new();
    }
    let label_w = lines.iter().map(|l| l.0.len()).max().unwrap_or(10).max(10);
    let col_w = runs.iter().map(|r| r.label.len()).max().unwrap_or(10).max(25);
    let mut out = String::new();
    let _ = write!(out, "{:label_w$}", "");
    for r in runs {
        let _ = write!(out, " {:>col_w$}", r.label);
    }
    out.push('\n');
    for (label, values, decimals) in lines {
        let _ = write!(out, "{label:<label_w$}");
        for &v in values {
            let cell = format!("{} {:>10}", crate::report::thousands_f64(v, *decimals), change(values[0], v));
            let _ = write!(out, " {cell:>col_w$}");
        }
        out.push('\n');
    }
    out
}

/// The rules (kernel.rs predicates, [`crate::kernel::PREDICATES`]) that differ between each
/// pair of `kernels`, with each one's answer: the list is generated from the predicates, so
/// a new version rule appears here without being written twice.
pub fn differing_rules(kernels: &[crate::kernel::Kernel]) -> String {
    let mut out = String::new();
    // Neighbours first (6.1 -> 6.12, 6.12 -> 7.3), then the wider steps (6.1 -> 7.3).
    for gap in 1..kernels.len() {
        for (&a, &b) in kernels.iter().zip(&kernels[gap..]) {
            let d = a.differing_rules(b);
            let _ = writeln!(
                out,
                "{} -> {}: {} rule{} differ{}",
                a.name(),
                b.name(),
                d.len(),
                if d.len() == 1 { "" } else { "s" },
                if d.len() == 1 { "s" } else { "" }
            );
            for (name, x, y) in d {
                let _ = writeln!(out, "  {name:<48} {x:>5} -> {y}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(label: &str, kv: &[(&str, f64)]) -> Run {
        Run { label: label.into(), vmstat: kv.iter().map(|&(k, v)| (k.to_string(), v)).collect(), elapsed_s: 10.0, throughput: 100.0, model: BTreeMap::new() }
    }

    #[test]
    fn changes_print_like_the_seed_tables() {
        assert_eq!(change(417719308.0, 64091155.0), "( -84.66%)");
        assert_eq!(change(100.0, 112.5), "( +12.50%)");
        assert_eq!(change(0.0, 0.0), "( +0.00%)");
        assert_eq!(change(0.0, 4880037.0), "(        )");
    }

    #[test]
    fn derived_rows_follow_seed_001() {
        // Test 2 of seed 001 (kernel build, 5.7-rc5-mm): the total is swapouts + swapins + refaults.
        let r = run(
            "5.7",
            &[("pswpout", 185920.0), ("pswpin", 34583.0), ("workingset_refault_file", 212664.0), ("pgscan_file", 354682.0), ("pgscan_anon", 465381.0)],
        );
        let rows = default_rows();
        let get = |l: &str| (rows.iter().find(|x| x.label == l).unwrap().value)(&r);
        assert_eq!(get("Total paging IO"), 433167.0);
        assert_eq!(get("Scanned"), 354682.0 + 465381.0);
        let t = table(&[r.clone(), r.clone()], &rows);
        assert!(t.contains("Total paging IO") && t.contains("433,167 "), "{t}");
        // Issue 40 #17: counts print as whole numbers with separators, times with decimals.
        let swapins = t.lines().find(|l| l.starts_with("Swapins")).unwrap();
        assert!(swapins.contains("34,583  ( +0.00%)") && !swapins.contains("34583.00"), "{swapins}");
        let elapsed = t.lines().find(|l| l.starts_with("Elapsed")).unwrap();
        assert!(elapsed.contains("10.00  ( +0.00%)"), "{elapsed}");
        assert_eq!(decimals("Swapins"), 0);
        assert_eq!(decimals("Direct reclaim stalls"), 0);
        assert_eq!(decimals("Elapsed (modeled s)"), 2);
        assert_eq!(decimals("Reclaim efficiency %"), 2);
        assert_eq!(decimals("Throughput ops/s"), 2);
        assert_eq!(get("Pages read (pgpgin/4)"), 0.0);
    }

    #[test]
    fn changed_counters_lists_only_what_differs() {
        let a = run("6.12", &[("pgscan_kswapd", 100.0), ("pswpin", 5.0)]);
        let b = run("7.3", &[("pgscan_kswapd", 150.0), ("pswpin", 5.0)]);
        let t = changed_counters(&[a.clone(), b]);
        assert!(t.contains("pgscan_kswapd") && t.contains("( +50.00%)"), "{t}");
        assert!(!t.contains("pswpin"), "{t}");
        assert!(changed_counters(&[a.clone(), a]).starts_with("every vmstat counter is the same"));
    }

    #[test]
    fn differing_rules_names_the_predicates_of_each_pair() {
        use crate::kernel::Kernel;
        let t = differing_rules(&[Kernel::V6_12, Kernel::V7_3]);
        let differ = Kernel::V6_12.differing_rules(Kernel::V7_3).len();
        assert!(differ >= 5, "7.3 has at least the five rules of its first round");
        assert!(t.starts_with(&format!("6.12 -> 7.3: {differ} rules differ\n")), "{t}");
        assert_eq!(t.lines().filter(|l| l.ends_with("false -> true") || l.ends_with("true -> false")).count(), differ, "{t}");
        assert!(t.contains("sync_swapin_through_swap_cache") && t.contains("false -> true"), "{t}");
        assert!(!t.contains("partial_memcg_walk"), "{t}");
        let t = differing_rules(&[Kernel::V6_1, Kernel::V6_12, Kernel::V7_3]);
        assert!(t.contains("6.1 -> 6.12:") && t.contains("6.1 -> 7.3:") && t.contains("partial_memcg_walk"), "{t}");
    }
}
