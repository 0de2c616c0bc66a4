//! Dirty throttling and writeback: the global domain and a cgroup's own domain (cgroup
//! writeback, mm/page-writeback.c: balance_dirty_pages(), wb_over_bg_thresh()).

use crate::common::*;
use pagelab::mm::memcontrol::StatItem;
use pagelab::mm::vmstat::Ev;

/// One task writing a 48 MiB file once, in order, in cgroup `cgroup` (a 64 MiB one, `/w`,
/// or the root) of a 1 GiB machine: far below the global domain's thresholds (10 % and
/// 20 % of about 1 GiB), far above a 64 MiB cgroup's.
fn writer(kernel: &str, cgroup: &str, think: &str) -> String {
    format!(
        r#"
[machine]
memory = "1G"
kernel = "{kernel}"
[[cgroup]]
path = "/w"
max = "64M"
[[workload]]
name = "w"
cgroup = "{cgroup}"
kind = "file-write"
file_size = "48M"
distribution = "seq"
think = "{think}"
ops = 12288
"#
    )
}

/// Runs the writer; returns (pages written back, the most pages the cgroup had dirty).
fn run(kernel: &str, cgroup: &str, think: &str) -> (u64, u64) {
    let mut m = classic(&writer(kernel, cgroup, think));
    let id = m.mm.memcgs.find(cgroup).unwrap();
    let mut peak = 0;
    while m.step() {
        peak = peak.max(m.mm.memcgs.exact_state(id, StatItem::FileDirty));
    }
    m.finish();
    m.check().unwrap();
    (ev(&m, Ev::PgpgOut) / 4, peak)
}

#[test]
fn balance_dirty_pages_writes_a_cgroups_pages_over_its_own_freerun_ceiling() {
    // 6.1: mem_cgroup_wb_stats() flushes by threshold, so the cgroup's domain sees its dirty
    // pages at once. Its dirtyable memory is about its 16,384 pages (file pages plus
    // headroom), so the writer runs free to about 15 % of it and is throttled there.
    let (written, peak) = run("6.1", "/w", "0");
    assert!(written > 6_000, "the cgroup's writeback wrote {written} pages");
    assert!(peak < 3_500, "the cgroup's dirty pages peaked at {peak}");
}

#[test]
fn the_root_cgroups_writeback_has_only_the_global_domain() {
    let (written, peak) = run("6.1", "/", "0");
    assert_eq!(written, 0, "12,288 dirty pages are under the global background threshold");
    assert_eq!(peak, 12_288);
}

#[test]
fn on_6_12_the_cgroup_domain_reads_the_stats_of_the_last_flush() {
    // 6.12: mem_cgroup_flush_stats_ratelimited(): a run over before the first periodic rstat
    // flush (2 s) sees no dirty page in the cgroup; the same writes spread over 6 s do.
    let (written, peak) = run("6.12", "/w", "0");
    assert_eq!((written, peak), (0, 12_288));
    let (written, peak) = run("6.12", "/w", "500us");
    assert!(written > 6_000, "{written}");
    assert!(peak < 12_288, "{peak}");
}
