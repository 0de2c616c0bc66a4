//! What the guest prints: snapshots before and after the workload and every task's outcome.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The line before the report's JSON on the guest's result port.
pub const REPORT_BEGIN: &str = "=== PAGELAB-GUEST REPORT BEGIN";
/// The line after it.
pub const REPORT_END: &str = "=== PAGELAB-GUEST REPORT END";

/// The kernel's counters at one moment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub uptime_s: f64,
    /// `/proc/vmstat`.
    pub vmstat: BTreeMap<String, i64>,
    /// `/proc/meminfo`, in kB as the file gives them (`HugePages_*` in pages).
    pub meminfo: BTreeMap<String, u64>,
    /// Per cgroup path ("/" is the root): `memory.stat` keys, plus `memory.current`,
    /// `memory.swap.current` and `memory.events.<key>` where the files exist.
    pub memcg: BTreeMap<String, BTreeMap<String, i64>>,
    /// `/sys/kernel/debug/lru_gen` (MGLRU on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lru_gen: Option<String>,
    /// The zone lines of `/proc/zoneinfo` that matter for calibration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoneinfo: Option<String>,
    /// `/proc/sys/vm/min_free_kbytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_free_kbytes: Option<u64>,
    /// kswapd0's scheduling statistics (`/proc/PID/schedstat` and its context switches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kswapd: Option<SchedStat>,
    /// `/proc/stat`'s `cpu` line in milliseconds: `user`, `nice`, `system`, `idle`,
    /// `iowait`, `irq`, `softirq`, `steal`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cpu_ms: BTreeMap<String, u64>,
}

/// One thread's scheduling statistics, as the guest's kernel keeps them: `/proc/PID/schedstat`
/// (nanoseconds on the CPU, nanoseconds runnable but waiting for the CPU, timeslices run) and
/// `/proc/PID/status`'s context switches (voluntary: it blocked or slept; involuntary: it was
/// preempted while runnable). With the guest's one CPU, a task's wait is time another thread
/// (kswapd above all) had the CPU, and kswapd's involuntary switches are its preemptions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedStat {
    pub run_ns: u64,
    pub wait_ns: u64,
    pub slices: u64,
    pub voluntary: u64,
    pub involuntary: u64,
}

impl SchedStat {
    /// From the text of `/proc/PID/schedstat` ("run wait slices") and `/proc/PID/status`;
    /// None when schedstat is not three numbers (a kernel without CONFIG_SCHED_INFO).
    pub fn parse(schedstat: &str, status: &str) -> Option<SchedStat> {
        let v: Vec<u64> = schedstat.split_whitespace().map(|w| w.parse().ok()).collect::<Option<_>>()?;
        let [run_ns, wait_ns, slices] = v[..] else { return None };
        let switches =
            |key: &str| status.lines().find_map(|l| l.strip_prefix(key)).and_then(|rest| rest.trim_start_matches(':').trim().parse().ok()).unwrap_or(0);
        Some(SchedStat { run_ns, wait_ns, slices, voluntary: switches("voluntary_ctxt_switches"), involuntary: switches("nonvoluntary_ctxt_switches") })
    }

    /// What happened between `before` and `self`.
    pub fn since(self, before: SchedStat) -> SchedStat {
        SchedStat {
            run_ns: self.run_ns.saturating_sub(before.run_ns),
            wait_ns: self.wait_ns.saturating_sub(before.wait_ns),
            slices: self.slices.saturating_sub(before.slices),
            voluntary: self.voluntary.saturating_sub(before.voluntary),
            involuntary: self.involuntary.saturating_sub(before.involuntary),
        }
    }

    /// The five numbers of a task's result line, in field order.
    pub fn fields(self) -> [u64; 5] {
        [self.run_ns, self.wait_ns, self.slices, self.voluntary, self.involuntary]
    }

    pub fn from_fields(f: [u64; 5]) -> SchedStat {
        SchedStat { run_ns: f[0], wait_ns: f[1], slices: f[2], voluntary: f[3], involuntary: f[4] }
    }
}

/// `/proc/stat`'s first line (the CPUs together) in milliseconds, given the clock tick
/// (USER_HZ, 100 on x86-64). Empty when the line is missing.
pub fn parse_cpu_line(stat: &str, ticks_per_s: u64) -> BTreeMap<String, u64> {
    const NAMES: [&str; 8] = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"];
    let Some(line) = stat.lines().find(|l| l.starts_with("cpu ")) else { return BTreeMap::new() };
    let tick_ms = 1000 / ticks_per_s.max(1);
    NAMES.iter().zip(line.split_whitespace().skip(1)).filter_map(|(n, v)| Some((n.to_string(), v.parse::<u64>().ok()? * tick_ms))).collect()
}

/// One task's outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    pub name: String,
    pub cgroup: String,
    /// Operations performed, fills excluded.
    pub ops: u64,
    pub fill_ops: u64,
    /// [`crate::OpChecksum::hex`] of the operations performed.
    pub checksum: String,
    pub elapsed_s: f64,
    /// "ok", "killed by signal N" (an OOM kill is signal 9), or the task's own error.
    pub status: String,
    /// The task's own scheduling statistics over its run (read by the task at its end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched: Option<SchedStat>,
}

/// Everything one guest run reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GuestReport {
    /// `uname -r`.
    pub kernel: String,
    /// `/sys/kernel/mm/lru_gen/enabled` after the scenario's policy was applied.
    pub lru_gen_enabled: Option<String>,
    /// Knobs written (path = value).
    pub applied: Vec<String>,
    pub before: Snapshot,
    pub after: Snapshot,
    pub tasks: Vec<TaskResult>,
    /// Wall time of the workload (guest clock).
    pub wall_s: f64,
    pub warnings: Vec<String>,
    /// Samples taken during the workload, when the tools disk asks for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Sample>,
    /// The page allocator's histograms over the workload (`mm_page_alloc` by migratetype and
    /// order, `mm_page_alloc_extfrag`'s fallbacks), as the kernel prints them, keyed by
    /// event, when the tools disk asks for them; and, in every run, `/proc/pagetypeinfo`
    /// before and after the workload (keys `pagetypeinfo_before`, `pagetypeinfo_after`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub alloc_hists: BTreeMap<String, String>,
}

/// The zones and a few reclaim counters at one moment of the workload (the time series an
/// experiment asks for with a `sample_ms` file beside the scenario on the tools disk).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the workload started.
    pub t_s: f64,
    /// Per zone with managed pages: name, free pages, and its min, low and high watermarks
    /// as `/proc/zoneinfo` prints them (watermark boost included).
    pub zones: Vec<(String, u64, u64, u64, u64)>,
    /// The `/proc/vmstat` counters of [`SAMPLED_VMSTAT`].
    pub vmstat: BTreeMap<String, i64>,
    /// Per zone: free pages on the unmovable and reclaimable lists (`/proc/pagetypeinfo`),
    /// which movable allocations reach only by falling back (since 2026-11-28).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nonmovable_free: Vec<(String, u64)>,
}

/// Free pages on the unmovable and reclaimable lists of each zone, from `/proc/pagetypeinfo`
/// (each order's count times its pages).
pub fn parse_nonmovable_free(text: &str) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if let [_, _, "zone", zone, "type", "Unmovable" | "Reclaimable", counts @ ..] = w.as_slice() {
            let zone = zone.trim_end_matches(',');
            let pages: u64 = counts.iter().enumerate().filter_map(|(o, c)| Some(c.parse::<u64>().ok()? << o)).sum();
            match out.iter_mut().find(|(z, _)| z == zone) {
                Some((_, n)) => *n += pages,
                None => out.push((zone.to_string(), pages)),
            }
        }
    }
    out
}

/// The counters a [`Sample`] keeps.
pub const SAMPLED_VMSTAT: &[&str] = &[
    "pgalloc_dma",
    "pgalloc_dma32",
    "pgalloc_normal",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgskip_dma32",
    "pageoutrun",
    "allocstall_normal",
    "allocstall_movable",
    "kswapd_low_wmark_hit_quickly",
    "kswapd_high_wmark_hit_quickly",
];

/// Parses the zones of `/proc/zoneinfo` that have managed pages: (name, free, min, low, high).
pub fn parse_zones(text: &str) -> Vec<(String, u64, u64, u64, u64)> {
    let mut out = Vec::new();
    let mut cur: Option<(String, [u64; 5])> = None;
    let mut flush = |cur: &mut Option<(String, [u64; 5])>| {
        if let Some((name, v)) = cur.take() {
            if v[4] > 0 {
                out.push((name, v[0], v[1], v[2], v[3]));
            }
        }
    };
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("Node ") {
            flush(&mut cur);
            let name = rest.rsplit("zone").next().unwrap_or("").trim().to_string();
            cur = Some((name, [0; 5]));
            continue;
        }
        let Some((_, v)) = cur.as_mut() else { continue };
        let t = l.trim_start();
        for (i, key) in ["pages free", "min", "low", "high", "managed"].iter().enumerate() {
            if let Some(rest) = t.strip_prefix(key) {
                if rest.starts_with(' ') {
                    if let Some(n) = rest.split_whitespace().next().and_then(|x| x.parse().ok()) {
                        v[i] = n;
                    }
                }
            }
        }
    }
    flush(&mut cur);
    out
}

impl GuestReport {
    /// Finds the report in the text of the guest's result port.
    pub fn extract(text: &str) -> Result<GuestReport, String> {
        let start = text.find(REPORT_BEGIN).ok_or("the guest printed no report")?;
        let body = &text[start + REPORT_BEGIN.len()..];
        let end = body.find(REPORT_END).ok_or("the guest's report is cut short")?;
        serde_json::from_str(body[..end].trim()).map_err(|e| format!("the guest's report is not valid JSON: {e}"))
    }
}

/// Parses `key value` lines (`/proc/vmstat`, `memory.stat`, `memory.events`).
pub fn parse_key_values(text: &str) -> BTreeMap<String, i64> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let k = it.next()?;
            let v = it.next()?.parse().ok()?;
            Some((k.to_string(), v))
        })
        .collect()
}

/// Parses a pressure file (`/proc/pressure/memory`, a cgroup's `memory.pressure`: lines
/// `some avg10=0.00 avg60=0.00 avg300=0.00 total=123`) into its totals, µs stalled, as
/// `memory.pressure.some_total_us` and `memory.pressure.full_total_us`: running totals, so a
/// run's stall is the difference of two snapshots. Lines without a total are left out.
pub fn parse_pressure(text: &str) -> BTreeMap<String, i64> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let line = it.next().filter(|w| *w == "some" || *w == "full")?;
            let total = it.find_map(|w| w.strip_prefix("total="))?.parse().ok()?;
            Some((format!("memory.pressure.{line}_total_us"), total))
        })
        .collect()
}

/// Parses `/proc/meminfo` (`Key:   123 kB`).
pub fn parse_meminfo(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, rest) = l.split_once(':')?;
            let v = rest.split_whitespace().next()?.parse().ok()?;
            Some((k.trim().to_string(), v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_and_context_switches_parse_and_subtract() {
        let status = "Name:\tkswapd0\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n";
        let before = SchedStat::parse("1000 200 30\n", status).unwrap();
        assert_eq!(before, SchedStat { run_ns: 1000, wait_ns: 200, slices: 30, voluntary: 120, involuntary: 7 });
        let after = SchedStat::parse("5000 260 41", "voluntary_ctxt_switches: 125\nnonvoluntary_ctxt_switches: 19").unwrap();
        assert_eq!(after.since(before), SchedStat { run_ns: 4000, wait_ns: 60, slices: 11, voluntary: 5, involuntary: 12 });
        assert_eq!(SchedStat::from_fields(after.fields()), after);
        // A kernel without CONFIG_SCHED_INFO has no schedstat file: nothing, not zeros.
        assert_eq!(SchedStat::parse("", status), None);
        assert_eq!(SchedStat::parse("1 2", status), None);
    }

    #[test]
    fn the_cpu_line_of_proc_stat_reads_in_milliseconds() {
        let stat = "cpu  10 0 25 400 30 1 2 0 0 0\ncpu0 10 0 25 400 30 1 2 0 0 0\nintr 1\n";
        let m = parse_cpu_line(stat, 100);
        assert_eq!(m["user"], 100);
        assert_eq!(m["system"], 250);
        assert_eq!(m["iowait"], 300);
        assert_eq!(m.len(), 8);
        assert!(parse_cpu_line("intr 1\n", 100).is_empty());
    }

    #[test]
    fn report_roundtrips_through_the_result_port_text() {
        let mut r = GuestReport { kernel: "6.1.0-56-amd64".into(), ..Default::default() };
        r.after.vmstat.insert("pgsteal_file".into(), 11644);
        let text = format!("noise\n{REPORT_BEGIN}\n{}\n{REPORT_END}\nmore", serde_json::to_string(&r).unwrap());
        assert_eq!(GuestReport::extract(&text).unwrap(), r);
        assert!(GuestReport::extract("nothing").unwrap_err().contains("no report"));
        assert!(GuestReport::extract(&format!("{REPORT_BEGIN}\n{{")).unwrap_err().contains("cut short"));
    }

    #[test]
    fn zoneinfo_parses_to_the_zones_with_managed_pages() {
        let z = "Node 0, zone      DMA\n  per-node stats\n  pages free     3808\n        min      33\n        low      41\n        high     49\n        managed  3840\n\
                 Node 0, zone   Normal\n  pages free     0\n        min      0\n        managed  0\n";
        assert_eq!(parse_zones(z), vec![("DMA".to_string(), 3808, 33, 41, 49)]);
    }

    #[test]
    fn proc_files_parse() {
        let v = parse_key_values("nr_free_pages 43762\npgscan_file 34695\nbad\n");
        assert_eq!(v["pgscan_file"], 34695);
        assert_eq!(v.len(), 2);
        let m = parse_meminfo("MemTotal:         208708 kB\nHugePages_Total:       0\n");
        assert_eq!(m["MemTotal"], 208708);
        assert_eq!(m["HugePages_Total"], 0);
    }

    #[test]
    fn pressure_files_give_their_totals_in_microseconds() {
        let text = "some avg10=1.52 avg60=0.31 avg300=0.07 total=4066126\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=1234\n";
        let p = parse_pressure(text);
        assert_eq!(p["memory.pressure.some_total_us"], 4066126);
        assert_eq!(p["memory.pressure.full_total_us"], 1234);
        assert_eq!(p.len(), 2);
        // A kernel without PSI (psi=0) refuses the read: nothing, not zeros.
        assert!(parse_pressure("").is_empty());
        assert!(parse_pressure("some avg10=x\n").is_empty());
    }
    #[test]
    fn pagetypeinfo_gives_each_zones_free_pages_off_the_movable_lists() {
        let text = "Free pages count per migrate type at order       0      1      2      3      4      5      6      7      8      9     10 \n\
Node    0, zone      DMA, type    Unmovable      2      1      0      1      1      0      1      1      0      0      0 \n\
Node    0, zone      DMA, type      Movable     17      0      4      0      0      0      0      0      0      0      0 \n\
Node    0, zone    DMA32, type  Reclaimable      0      1      1      0      0      1      0      0      0      0      0 \n\
Node    0, zone    DMA32, type    Unmovable      0      0      0      0      0      0      0      0      0      0      0 \n";
        // DMA: 2 + 2 + 8 + 16 + 64 + 128; DMA32: 2 + 4 + 32.
        assert_eq!(parse_nonmovable_free(text), vec![("DMA".to_string(), 220), ("DMA32".to_string(), 38)]);
    }
}
