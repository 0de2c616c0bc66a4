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
    /// The kernel's own allocations (since 2026-11-29): per slab cache of [`SAMPLED_SLABS`]
    /// that `/proc/slabinfo` lists, its active objects and the pages its slabs hold.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub slab: BTreeMap<String, SlabCache>,
    /// The `/proc/meminfo` lines of [`SAMPLED_MEMINFO`], in kB (since 2026-11-29).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub meminfo: BTreeMap<String, u64>,
    /// Per zone: its pageblocks by migratetype and the free pages on its reclaimable lists,
    /// from `/proc/pagetypeinfo` (since 2026-11-29).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pageblocks: Vec<ZoneBlocks>,
    /// `/sys/kernel/debug/lru_gen` as the kernel prints it (since 2026-11-29, MGLRU runs):
    /// each lruvec's generations, their ages and sizes, over the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lru_gen: Option<String>,
    /// What the frames of each zone's non-movable pageblocks hold, by their kpageflags
    /// (since 2026-11-30; only with a `kpageflags` file beside the scenario).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<crate::frames::FrameCensus>,
}

/// One slab cache's line of `/proc/slabinfo`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlabCache {
    /// `<active_objs>`.
    pub objects: u64,
    /// `<num_slabs>` × `<pagesperslab>`.
    pub pages: u64,
    /// `<pagesperslab>`: the order of the cache's slab allocations is its log2.
    pub pages_per_slab: u64,
}

/// One zone's pageblocks by migratetype (`/proc/pagetypeinfo`'s "Number of blocks type"),
/// and the free pages on its reclaimable lists alone.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneBlocks {
    pub zone: String,
    pub unmovable: u64,
    pub movable: u64,
    pub reclaimable: u64,
    pub reclaimable_free: u64,
}

/// The slab caches a [`Sample`] keeps: the page cache's xarray nodes, ext4's inodes, buffer
/// heads, dentries, and the slabs of the anonymous memory's metadata.
pub const SAMPLED_SLABS: &[&str] =
    &["radix_tree_node", "ext4_inode_cache", "buffer_head", "dentry", "inode_cache", "ext4_extent_status", "vm_area_struct", "anon_vma", "anon_vma_chain"];

/// The `/proc/meminfo` lines a [`Sample`] keeps.
pub const SAMPLED_MEMINFO: &[&str] = &["SReclaimable", "SUnreclaim", "PageTables", "KernelStack"];

/// The caches of `names` that `/proc/slabinfo` lists (`name active_objs num_objs objsize
/// objperslab pagesperslab : tunables ... : slabdata active_slabs num_slabs sharedavail`).
/// A cache merged into another (SLUB's aliases) is not listed under its own name.
pub fn parse_slabinfo(text: &str, names: &[&str]) -> BTreeMap<String, SlabCache> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let Some(name) = w.first().filter(|n| names.contains(n)) else { continue };
        let num = |i: usize| w.get(i).and_then(|x| x.parse::<u64>().ok());
        // Fields 1..=5, then ": tunables" and three, then ": slabdata" and three.
        let Some(pos) = w.iter().position(|x| *x == "slabdata") else { continue };
        let (Some(objects), Some(per_slab), Some(slabs)) = (num(1), num(5), num(pos + 2)) else { continue };
        out.insert(name.to_string(), SlabCache { objects, pages: slabs * per_slab, pages_per_slab: per_slab });
    }
    out
}

/// Each zone's pageblocks by migratetype and its reclaimable free pages, from
/// `/proc/pagetypeinfo`. The block table's columns are named by its header line (a kernel
/// with CMA has one more).
pub fn parse_pageblocks(text: &str) -> Vec<ZoneBlocks> {
    let mut out: Vec<ZoneBlocks> = Vec::new();
    let mut header: Vec<&str> = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if let Some(rest) = line.strip_prefix("Number of blocks type") {
            header = rest.split_whitespace().collect();
            continue;
        }
        if let [_, _, "zone", zone, "type", "Reclaimable", counts @ ..] = w.as_slice() {
            let zone = zone.trim_end_matches(',');
            let pages: u64 = counts.iter().enumerate().filter_map(|(o, c)| Some(c.parse::<u64>().ok()? << o)).sum();
            zone_entry(&mut out, zone).reclaimable_free = pages;
            continue;
        }
        if header.is_empty() {
            continue;
        }
        if let ["Node", _, "zone", zone, counts @ ..] = w.as_slice() {
            let e = zone_entry(&mut out, zone);
            for (name, c) in header.iter().zip(counts) {
                let Ok(n) = c.parse::<u64>() else { continue };
                match *name {
                    "Unmovable" => e.unmovable = n,
                    "Movable" => e.movable = n,
                    "Reclaimable" => e.reclaimable = n,
                    _ => {}
                }
            }
        }
    }
    out
}

fn zone_entry<'a>(out: &'a mut Vec<ZoneBlocks>, zone: &str) -> &'a mut ZoneBlocks {
    let i = match out.iter().position(|z| z.zone == zone) {
        Some(i) => i,
        None => {
            out.push(ZoneBlocks { zone: zone.to_string(), ..Default::default() });
            out.len() - 1
        }
    };
    &mut out[i]
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
    // The kernel's own allocations and compaction (since 2026-11-29); /proc/vmstat names the
    // slab's counters without their `_B` and gives them in pages.
    "nr_slab_reclaimable",
    "nr_slab_unreclaimable",
    "nr_page_table_pages",
    "nr_file_pages",
    "workingset_nodes",
    "compact_migrate_scanned",
    "compact_isolated",
    "pgmigrate_success",
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

/// Whether more than 5% of MemTotal (`total`, in pages) sits on the per-CPU lists: more
/// than the oracle suites' runs leave there at their snapshot (at most 4.4%). The guest waits
/// for such lists to drain, and the oracle warns about a snapshot that still has them.
pub fn pcp_crowded(pcp: u64, total: u64) -> bool {
    total > 0 && pcp * 20 > total
}

/// Free pages on the per-CPU page lists: the sum of the `count:` lines of /proc/zoneinfo's
/// pagesets (free to the allocator, not in MemFree).
pub fn pcp_free_pages(zoneinfo: &str) -> u64 {
    zoneinfo.lines().filter_map(|l| l.trim_start().strip_prefix("count:")).filter_map(|v| v.trim().parse::<u64>().ok()).sum()
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

    #[test]
    fn slabinfo_gives_each_sampled_caches_objects_and_pages() {
        let text = "slabinfo - version: 2.1\n\
# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>\n\
radix_tree_node     1610   1652    576   14    2 : tunables    0    0    0 : slabdata    118    118      0\n\
dentry              9000   9261    192   21    1 : tunables    0    0    0 : slabdata    441    441      0\n\
kmalloc-64          3000   3072     64   64    1 : tunables    0    0    0 : slabdata     48     48      0\n\
buffer_head          bad\n";
        let s = parse_slabinfo(text, SAMPLED_SLABS);
        assert_eq!(s["radix_tree_node"], SlabCache { objects: 1610, pages: 236, pages_per_slab: 2 });
        assert_eq!(s["dentry"].pages, 441);
        // Caches not asked for, and lines that do not parse, are left out.
        assert_eq!(s.len(), 2);
        assert!(parse_slabinfo("", SAMPLED_SLABS).is_empty());
    }

    #[test]
    fn pagetypeinfo_gives_each_zones_pageblocks_by_type() {
        let text = "Free pages count per migrate type at order       0      1      2      3      4      5      6      7      8      9     10 \n\
Node    0, zone    DMA32, type    Unmovable      1      1      1      0      1      1      1      1      1      0      0 \n\
Node    0, zone    DMA32, type  Reclaimable      0      1      1      0      1      0      0      2      0      1      0 \n\
\n\
Number of blocks type     Unmovable      Movable  Reclaimable   HighAtomic      Isolate \n\
Node 0, zone      DMA            1            7            0            0            0 \n\
Node 0, zone    DMA32           12          106            2            0            0 \n";
        let b = parse_pageblocks(text);
        assert_eq!(b[0], ZoneBlocks { zone: "DMA32".into(), unmovable: 12, movable: 106, reclaimable: 2, reclaimable_free: 2 + 4 + 16 + 256 + 512 });
        assert_eq!(b[1], ZoneBlocks { zone: "DMA".into(), unmovable: 1, movable: 7, reclaimable: 0, reclaimable_free: 0 });
        // A CMA column moves the others: the header names them.
        let cma =
            "Number of blocks type     Unmovable      Movable  Reclaimable   CMA   HighAtomic      Isolate \nNode 0, zone    DMA32   3  100  4  9  0  0\n";
        assert_eq!(parse_pageblocks(cma)[0].reclaimable, 4);
        assert!(parse_pageblocks("").is_empty());
    }

    #[test]
    fn a_sample_saved_before_the_slab_fields_still_reads() {
        let old = r#"{"t_s":1.5,"zones":[["DMA32",500,300,400,500]],"vmstat":{"pgalloc_dma32":7},"nonmovable_free":[["DMA32",44]]}"#;
        let s: Sample = serde_json::from_str(old).unwrap();
        assert_eq!(s.nonmovable_free, vec![("DMA32".to_string(), 44)]);
        assert!(s.slab.is_empty() && s.meminfo.is_empty() && s.pageblocks.is_empty());
        assert_eq!(s.lru_gen, None);
    }

    #[test]
    fn a_sampled_lru_gen_survives_the_report() {
        let text = "memcg     1 /\n node     0\n          3       6048      0      57344 \n";
        let s = Sample { t_s: 0.1, lru_gen: Some(text.into()), ..Default::default() };
        let back: Sample = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back.lru_gen.as_deref(), Some(text));
    }

    #[test]
    fn the_per_cpu_lists_free_pages_are_the_pagesets_counts() {
        let z = "Node 0, zone      DMA\n  pages free     3808\n              count: 7\nNode 0, zone    DMA32\n  pages free     42226\n              count: 1500\n              count: 12";
        assert_eq!(pcp_free_pages(z), 1519);
        assert_eq!(pcp_free_pages("Node 0, zone DMA\n  pages free 3808"), 0);
    }
}
