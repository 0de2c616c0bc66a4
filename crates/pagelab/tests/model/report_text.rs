//! The text table `pagelab run` prints: the kernel's names with the units they hide, and
//! memory.stat's reclaim events.

use std::collections::BTreeMap;

use pagelab::Scenario;

const SCENARIO: &str = r#"
[machine]
memory = "64M"
# 6.12's classic reclaim reads LRU sizes the periodic rstat flush publishes: flush within
# this short run, so it deactivates.
rstat_flush = "200ms"
swap = { device = "zram", size = "64M" }
[[cgroup]]
path = "/a"
max = "12M"
[[workload]]
name = "files"
cgroup = "/a"
kind = "file-read"
file_size = "40M"
distribution = "zipf:0.7"
ops = 60000
[[workload]]
name = "heap"
cgroup = "/a"
kind = "anon-rw"
size = "8M"
distribution = "uniform"
ops = 8000
hold = true
"#;

/// The `name value [unit]` lines of the table's block headed `head`.
fn block(table: &str, head: &str) -> BTreeMap<String, (u64, String)> {
    let mut lines = table.lines().skip_while(|l| *l != head).skip(1);
    let mut out = BTreeMap::new();
    for l in lines.by_ref().take_while(|l| l.starts_with("  ")) {
        let mut w = l.split_whitespace();
        let name = w.next().unwrap().to_string();
        let value = w.next().unwrap().replace(',', "").parse().unwrap_or_else(|e| panic!("{l}: {e}"));
        out.insert(name, (value, w.collect::<Vec<_>>().join(" ")));
    }
    assert!(!out.is_empty(), "no block `{head}` in:\n{table}");
    out
}

#[test]
fn the_text_table_shows_the_units_the_kernel_names_hide() {
    for kernel in ["6.1", "6.12"] {
        let s = Scenario::parse(SCENARIO, "test.toml", "test", &[format!("machine.kernel={kernel}")]).unwrap();
        let r = pagelab::run(&s, |_, _| {}).unwrap();
        let t = r.table();
        let v = block(&t, "/proc/vmstat");
        assert_eq!(v["pgpgin"].1, "KiB", "{kernel}:\n{t}");
        assert_eq!(v["pgpgout"].1, "KiB");
        for k in ["nr_free_pages", "nr_inactive_file", "nr_active_anon", "nr_dirty", "pgscan_kswapd", "pgsteal_file", "pswpout", "workingset_refault_file"] {
            assert_eq!(v[k].1, "pages", "{kernel} {k}");
        }
        assert_eq!(v["workingset_nodes"].1, "nodes");
        assert_eq!(v["pgfault"].1, "", "a count of faults has no unit");
        for (k, (val, _)) in &v {
            assert_eq!(*val, r.vmstat[k], "{kernel}: the table prints the report's {k}");
        }
        let m = block(&t, "memory.stat /a");
        for k in ["memory.current", "anon", "file", "inactive_file", "active_anon"] {
            assert_eq!(m[k].1, "bytes", "{kernel} {k}");
        }
        assert_eq!(m["pgscan"].1, "pages");
        assert_eq!(m["memory.events.max"].1, "");
        // memory.stat's memcg_vm_event_stat[] entries (mm/memcontrol.c, 6.1 and 6.12).
        for k in ["pgrefill", "pgactivate", "pgdeactivate", "pgfault", "pgmajfault"] {
            assert!(m.contains_key(k), "{kernel}: memory.stat lacks {k}:\n{t}");
        }
        for (k, (val, _)) in &m {
            assert_eq!(*val, r.memcg["/a"][k], "{kernel}: the table prints the report's memcg /a {k}");
        }
        assert!(m["pgrefill"].0 > 0 && m["pgdeactivate"].0 > 0, "{kernel}: limit reclaim refilled the inactive lists:\n{t}");
        // The JSON keeps the kernel's bare names: no unit sneaks into a key.
        let json = serde_json::to_value(&r).unwrap();
        for (k, _) in json["vmstat"].as_object().unwrap() {
            assert!(k.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'), "{k}");
        }
    }
}

/// Per-memcg reclaim events sum to the machine-wide ones under global reclaim (no limit
/// reclaim, whose events /proc/vmstat leaves out): memory.stat of the root counts every
/// pgrefill, pgactivate and pgdeactivate /proc/vmstat counts.
#[test]
fn memcg_reclaim_events_add_up_to_the_global_ones() {
    for kernel in ["6.1", "6.12"] {
        for policy in ["classic", "mglru"] {
            let text = SCENARIO.replace("max = \"12M\"\n", "").replace("memory = \"64M\"", "memory = \"24M\"");
            let s = Scenario::parse(&text, "test.toml", "test", &[format!("machine.kernel={kernel}"), format!("machine.policy={policy}")]).unwrap();
            let r = pagelab::run(&s, |_, _| {}).unwrap();
            for k in ["pgrefill", "pgactivate", "pgdeactivate"] {
                assert_eq!(r.memcg["/"][k], r.vmstat[k], "{kernel} {policy} {k}");
            }
            assert!(r.vmstat["pgrefill"] > 0 || policy == "mglru", "{kernel} {policy}: global reclaim ran");
        }
    }
}

/// The table prints /proc/pressure/memory and each cgroup's memory.pressure as the kernel's
/// psi_show() does: `some avg10=0.00 avg60=0.00 avg300=0.00 total=N`, then `full ...`,
/// with the report's values.
#[test]
fn the_text_table_prints_pressure_as_the_kernel_files() {
    let s = Scenario::parse(SCENARIO, "test.toml", "test", &[]).unwrap();
    let r = pagelab::run(&s, |_, _| {}).unwrap();
    let t = r.table();
    for (head, p) in [("/proc/pressure/memory", r.pressure["memory"]), ("memory.pressure /a", r.memory_pressure["/a"])] {
        let lines: Vec<&str> = t.lines().skip_while(|l| *l != head).skip(1).take(2).collect();
        let want = |name: &str, l: &pagelab::sched::psi::Line| {
            format!("  {name} avg10={:.2} avg60={:.2} avg300={:.2} total={}", l.avg10, l.avg60, l.avg300, l.total_us)
        };
        assert_eq!(lines, [want("some", &p.some), want("full", &p.full)], "{head}:\n{t}");
    }
    assert!(r.memory_pressure["/a"].some.total_us > 0, "limit reclaim stalls /a");
}
